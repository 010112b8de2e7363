/**
 * `npm run fuzz -- [--cases N] [--seed S] [--json out.json]`: fuzz the built sidecar (dist/) and print a summary.
 * Exit code 0 when nothing crashed and every case got its answer, 1 otherwise, 64 for bad usage.
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { runFuzz, type FuzzReport } from './runner.js';

export const DEFAULT_CASES = 10_000;
export const DEFAULT_SEED = 1;

const usage = 'usage: npm run fuzz -- [--cases N] [--seed S] [--json out.json]';

export interface FuzzArguments {
  cases: number;
  seed: number;
  json: string | null;
}

/** Parse the command line (after `--`). Throws an Error with the usage on anything unknown. */
export function parseFuzzArguments(args: string[]): FuzzArguments {
  const parsed: FuzzArguments = { cases: DEFAULT_CASES, seed: DEFAULT_SEED, json: null };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].split('=', 2) as [string, string | undefined];
    const value = inline ?? args[++i];
    if (value === undefined) throw new Error(`${flag} needs a value\n${usage}`);
    if (flag === '--cases' || flag === '--seed') {
      if (!/^\d+$/.test(value)) throw new Error(`${flag} needs a non-negative integer\n${usage}`);
      parsed[flag === '--cases' ? 'cases' : 'seed'] = Number(value);
    } else if (flag === '--json') {
      parsed.json = value;
    } else {
      throw new Error(`unknown argument '${args[i]}'\n${usage}`);
    }
  }
  return parsed;
}

/** Rows of `counts`, largest first, as "name n". */
function countLines(counts: Record<string, number>): string[] {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([name, n]) => `    ${name.padEnd(28)} ${n}`);
}

/** The report as text for a terminal or a CI log. */
export function formatReport(report: FuzzReport): string {
  const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;
  const lines = [
    `fuzz: ${report.cases} cases, seed ${report.seed}, ${report.seconds.toFixed(1)} s`,
    `  crashes: ${report.crashes.length}; failures: ${report.failures.length}; answered: ${report.answered}/${report.cases}`,
    `  final request served: ${report.finalRequestServed ? 'yes' : 'NO'}; clean shutdown: ${report.cleanShutdown ? 'yes' : 'NO'}`,
    `  token seen in output: ${report.tokenSightings.output}, in replies: ${report.tokenSightings.replies}`,
    `  pose requests held while another job read their mesh: ${report.heldRequests}`,
    `  reply latency: p50 ${report.latencyMs.p50.toFixed(2)} ms, p99 ${report.latencyMs.p99.toFixed(2)} ms, max ${report.latencyMs.max.toFixed(1)} ms`,
    report.memory
      ? `  sidecar RSS: ${mib(report.memory.startKiB)} at start, ${mib(report.memory.endKiB)} at the end, peak ${mib(report.memory.peakKiB)}; every 1000 cases: ${report.memory.samplesKiB.map((k) => (k / 1024).toFixed(0)).join(' ')} MiB`
      : '  sidecar RSS: not available (no /proc)',
    '  cases by layer:',
    ...countLines(report.byLayer),
    `  replies: ${report.results} results; errors by code:`,
    ...countLines(report.errors),
    '  connections closed by cases (close code, eof, client-reset):',
    ...countLines(report.closes),
    '  HTTP answers to broken upgrades:',
    ...countLines(report.http),
    `  pongs: ${report.pongs}`,
    '  cases by generator:',
    ...countLines(report.byGenerator),
  ];
  for (const crash of report.crashes) {
    lines.push(`  CRASH at case ${crash.index} (${crash.layer}/${crash.name}): ${JSON.stringify(crash.exit)}`, crash.stderrTail.split('\n').slice(-20).map((l) => `    | ${l}`).join('\n'));
  }
  for (const failure of report.failures.slice(0, 30)) lines.push(`  FAIL case ${failure.index} (${failure.layer}/${failure.name}): ${failure.problem}`);
  if (report.failures.length > 30) lines.push(`  … and ${report.failures.length - 30} more failures`);
  return lines.join('\n');
}

/** True when the run found nothing wrong. */
export function fuzzPassed(report: FuzzReport): boolean {
  return (
    report.crashes.length === 0 &&
    report.failures.length === 0 &&
    report.answered === report.cases &&
    report.finalRequestServed &&
    report.tokenSightings.output === 0 &&
    report.tokenSightings.replies === 0 &&
    (report.errors.INTERNAL ?? 0) === 0
  );
}

async function main(argv: string[]): Promise<number> {
  let args: FuzzArguments;
  try {
    args = parseFuzzArguments(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 64;
  }
  const report = await runFuzz({ cases: args.cases, seed: args.seed, log: (line) => process.stderr.write(`fuzz: ${line}\n`) });
  process.stdout.write(`${formatReport(report)}\n`);
  if (args.json) writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
  return fuzzPassed(report) ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err) => {
      process.stderr.write(`fuzz: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
