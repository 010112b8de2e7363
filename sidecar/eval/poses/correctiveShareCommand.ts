/**
 * `autorig eval corrective-share` as the CLI runs it: parse, fit on the development identities, print the shares
 * below 1. sidecar/cli/main.ts hands it the arguments after `eval corrective-share`, its output streams and its
 * UsageError.
 */
import { parseCorrectiveShareArguments } from './correctiveShareArguments.js';
import { correctiveShareSummary, fitCorrectiveShares } from './fitCorrectiveShare.js';

interface Writer {
  write(text: string): unknown;
}

/**
 * correctiveShareCommand: args (after `eval corrective-share`), io: stdout (summary) and stderr (progress),
 * usageError: the error for a bad command line → exit code 0. Throws the usage error, or what fitCorrectiveShares
 * throws (BAD_REQUEST for a folder that cannot be read or no identity measured, MODEL_MISSING without the models).
 */
export async function correctiveShareCommand(args: string[], io: { stdout: Writer; stderr: Writer }, usageError: (message: string) => Error): Promise<number> {
  const parsed = parseCorrectiveShareArguments(args, usageError);
  const fit = await fitCorrectiveShares({
    ...parsed, command: ['autorig', 'eval', 'corrective-share', ...args].join(' '),
    log: (line) => io.stderr.write(`${line}\n`),
  });
  io.stdout.write(`${correctiveShareSummary(fit)}\n`);
  return 0;
}
