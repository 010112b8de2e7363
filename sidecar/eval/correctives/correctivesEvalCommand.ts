/**
 * `autorig eval correctives` as the CLI runs it: parse, measure, print the table (or the JSON) and write the report.
 * sidecar/cli/main.ts hands it the arguments after `eval correctives`, its output streams and its UsageError.
 */
import { writeFileSync } from 'node:fs';
import { loadModel } from '../../learned/onnxSession.js';
import { modelPath } from '../../learned/modelFiles.js';
import { correctivesMarkdown } from './correctivesReport.js';
import { BASELINE_METHODS, fieldMethod, fittedMethod, type DeformationMethod } from './deformationMethods.js';
import { parseCorrectivesEvalArguments } from './correctivesEvalArguments.js';
import { runCorrectivesEval } from './runCorrectivesEval.js';

interface Writer {
  write(text: string): unknown;
}

/**
 * correctivesEvalCommand: args (after `eval correctives`), io: stdout (table or JSON) and stderr (progress),
 * usageError: the error for a bad command line → exit code 0. Throws the usage error or what runCorrectivesEval throws.
 */
export async function correctivesEvalCommand(args: string[], io: { stdout: Writer; stderr: Writer }, usageError: (message: string) => Error): Promise<number> {
  const { json, report: reportPath, field, fitBlend, ...options } = parseCorrectivesEvalArguments(args, usageError);
  if (fitBlend && !options.exampleDegrees) throw usageError('--fit-blend needs --fit-examples');
  const session = field ? await loadModel(modelPath('poseWeights')) : null;
  const methods: DeformationMethod[] = session ? [...BASELINE_METHODS, fieldMethod(session, 'linear'), fieldMethod(session, 'dualQuaternion')] : [...BASELINE_METHODS];
  if (options.exampleDegrees) methods.push(fittedMethod(session, fitBlend === 'linear' ? 'linear' : 'dualQuaternion'));
  const report = await runCorrectivesEval({ ...options, methods, log: (line) => io.stderr.write(`${line}\n`) });
  const markdown = correctivesMarkdown(report);
  io.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : markdown);
  if (reportPath) {
    writeFileSync(reportPath, markdown);
    if (!json) io.stdout.write(`report: ${reportPath}\n`);
  }
  return 0;
}
