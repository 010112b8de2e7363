/**
 * The child process that scores one test identity of `autorig eval poses` (runPoseEval forks it once per identity),
 * so that a crash or a runaway costs one identity, not the run, and each identity's memory is given back.
 * Input: the IPC message PoseIdentityJob; output: the IPC message { result } or { error }, then exit.
 */
import { evaluatePoseIdentity, type PoseIdentityJob } from './evaluatePoseIdentity.js';

process.once('message', (job: PoseIdentityJob) => {
  const log = (line: string) => process.stderr.write(`  ${line}\n`);
  evaluatePoseIdentity(job, log)
    .then((result) => process.send!({ result }, () => process.exit(0)))
    .catch((err: unknown) => {
      const error = err instanceof Error ? { message: err.message, code: (err as { code?: string }).code, stack: err.stack } : { message: String(err) };
      process.send!({ error }, () => process.exit(1));
    });
});
