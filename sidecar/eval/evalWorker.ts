/**
 * The child process that evaluates one character (runEval forks it once per character and variant), so that a
 * character's peak memory is its own and a crash costs one row of the table, not the run.
 * Input: the IPC message { file, options }; output: the IPC message { result } or { error }, then exit.
 */
import { evaluateCharacter, type EvaluateOptions } from './evaluateCharacter.js';

interface Job {
  file: string;
  options: Omit<EvaluateOptions, 'log'>;
}

process.once('message', (job: Job) => {
  const log = (line: string) => process.stderr.write(`  ${line}\n`);
  evaluateCharacter(job.file, { ...job.options, log })
    .then((result) => process.send!({ result }, () => process.exit(0)))
    .catch((err: unknown) => {
      const error = err instanceof Error ? { name: err.name, message: err.message, code: (err as { code?: string }).code, stack: err.stack } : { message: String(err) };
      process.send!({ error }, () => process.exit(1));
    });
});
