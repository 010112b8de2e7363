/**
 * `autorig eval poses` as the CLI runs it: parse, measure, print the bar and where the outputs went. sidecar/cli/main.ts
 * hands it the arguments after `eval poses`, its output streams, the package version and its UsageError.
 */
import { parsePoseEvalArguments } from './poseEvalArguments.js';
import type { PoseEvalReport } from './poseEvalTypes.js';
import { runPoseEval } from './runPoseEval.js';

interface Writer {
  write(text: string): unknown;
}

/**
 * poseEvalCommand: args (after `eval poses`), io: stdout (summary) and stderr (progress), version: autorig's,
 * usageError: the error for a bad command line → exit code 0. Throws the usage error, or what runPoseEval throws
 * (BAD_REQUEST for a bad folder or name, MODEL_MISSING for --write-marks without the models).
 */
export async function poseEvalCommand(
  args: string[], io: { stdout: Writer; stderr: Writer }, version: string, usageError: (message: string) => Error,
): Promise<number> {
  const parsed = parsePoseEvalArguments(args, usageError);
  const report = await runPoseEval({ ...parsed, version, log: (line) => io.stderr.write(`${line}\n`) });
  io.stdout.write(`${poseEvalSummary(report)}\n`);
  if (parsed.json) io.stdout.write(`results: ${parsed.json}\n`);
  if (parsed.report) io.stdout.write(`report:  ${parsed.report}\n`);
  return 0;
}

/** One paragraph for the terminal: identities measured, the bar, and the latent path against the baselines. */
export function poseEvalSummary(report: PoseEvalReport): string {
  const ok = report.identities.filter((i) => i.status === 'ok').length;
  const failed = report.identities.filter((i) => i.status === 'failed').length;
  const lines = [`eval poses: ${ok} test identities measured${failed ? `, ${failed} failed` : ''}, ${report.skipped.length} skipped (frame misread), ${report.poses.length} poses`];
  if (!report.latent.measured) lines.push(`latent path not measured: ${report.latent.note}`);
  else {
    lines.push(`latent path posed through each identity's ${(report.settings.latentRig ?? 'auto') === 'own' ? 'own rig' : 'auto-rig'}`);
    lines.push(`bar (latent below (c) on the pose, below (b) on the corrective alone): ${report.bar.passed} of ${report.bar.measured} poses pass`);
  }
  const mean = (key: 'latent' | 'noMotion' | 'rig' | 'nearestOffsets') => {
    const values = report.poses.map((p) => p.variants.skinningCorrective.error[key]).filter((x): x is number => x !== null);
    return values.length ? `${((100 * values.reduce((a, b) => a + b, 0)) / values.length).toFixed(3)}%` : '—';
  };
  lines.push(`mean vertex error over poses (% of height): latent ${mean('latent')}, (a) no motion ${mean('noMotion')}, (b) rig ${mean('rig')}, (c) nearest offsets ${mean('nearestOffsets')}`);
  return lines.join('\n');
}
