/**
 * Which onnxruntime execution provider the learned models run on, chosen once per sidecar.
 *
 * onnxruntime-node does not fall back by itself: asking for a provider whose libraries or device are missing (cuda
 * without the CUDA libraries, webgpu without an adapter) THROWS when a session is created. So the providers are
 * probed in order, in a child process (providerProbe.ts: a crashing or hanging GPU driver takes only the probe down),
 * and the first that creates and runs the probe model is remembered; the ones that failed are reported with the
 * first line of their error (hello.providerFallback, the eval report).
 *
 * The order: AUTORIG_PROVIDER (one name or a comma list, e.g. `cuda`, `webgpu,cpu`), else cuda → webgpu → cpu.
 * cpu is always tried last even when not asked for, so that a request for a missing GPU still runs, on cpu.
 *
 * Once chosen, the answer is published in the environment (AUTORIG_PROVIDER_SELECTED, JSON of ProviderSelection):
 * worker threads started afterwards (one per job) and child processes adopt it instead of probing again.
 * That variable is the sidecar's own hand-off, not a setting.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What was chosen, and why. */
export interface ProviderSelection {
  /** the provider the models run on ('cpu', 'cuda', 'webgpu', 'tensorrt', ...); 'none' when not even cpu works */
  name: string;
  /** the providers tried before it that failed, in order, each `name: first line of its error` */
  fallbackFrom: string[];
  /** the order asked for: AUTORIG_PROVIDER's names, or DEFAULT_PROVIDER_ORDER */
  requested: string[];
}

/** One provider tried by the probe process (one stdout line). */
export interface ProbeAttempt {
  provider: string;
  ok: boolean;
  /** the error onnxruntime threw (or why the answer was wrong) when !ok */
  error?: string;
  /** milliseconds to create the session and run it once */
  ms: number;
}

/** A line of the probe's stdout: an attempt, or why onnxruntime could not be loaded at all. */
export type ProbeLine = ProbeAttempt | { fatal: string };

/** How one probe process ended. */
export interface ProbeRun {
  stdout: string;
  stderr: string;
  /** exit code, null when killed by a signal or not started */
  status: number | null;
  signal: string | null;
  timedOut: boolean;
  /** set when the process could not be started at all */
  spawnError?: string;
}

export const DEFAULT_PROVIDER_ORDER: readonly string[] = ['cuda', 'webgpu', 'cpu'];

/** The environment variable through which a chosen provider reaches worker threads and child processes. */
export const PROVIDER_HANDOFF_ENV = 'AUTORIG_PROVIDER_SELECTED';

/**
 * How long one probe process may take. A first CUDA context with a kernel JIT can take seconds; a driver that hangs
 * must not keep the sidecar from starting, so past this the provider being tried counts as failed.
 */
export const PROBE_TIMEOUT_MS = 60_000;

/** Names onnxruntime-node knows look like this; anything else is refused before probing. */
const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/** Longest error line kept per failed provider. */
const MAX_REASON_CHARS = 300;

/** The order asked for: AUTORIG_PROVIDER split at commas (trimmed, lower-cased, empty parts dropped), or the default. */
export function requestedProviders(env: NodeJS.ProcessEnv = process.env): string[] {
  const names = (env.AUTORIG_PROVIDER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name.length > 0);
  return names.length > 0 ? [...new Set(names)] : [...DEFAULT_PROVIDER_ORDER];
}

/**
 * The first line of an onnxruntime error, without the source location and the condition of an ORT_ENFORCE
 * ("…/webgpu_context.cc:136 …::Initialize() … was false. Failed to get a WebGPU adapter: …" → "Failed to get …"),
 * at most MAX_REASON_CHARS characters.
 */
export function conciseError(text: string): string {
  const first = text.split('\n').map((line) => line.trim()).find((line) => line.length > 0) ?? 'unknown error';
  const enforced = /^\S+\.(?:cc|cpp|h):\d+ .* was false\. (.+)$/.exec(first);
  const line = enforced ? enforced[1] : first;
  return line.length > MAX_REASON_CHARS ? `${line.slice(0, MAX_REASON_CHARS - 1)}…` : line;
}

/** Why a probe process stopped before reporting on the provider it was trying. */
function probeDeath(run: ProbeRun): string {
  if (run.spawnError) return `the probe process could not start: ${conciseError(run.spawnError)}`;
  if (run.timedOut) return `the probe did not finish within ${PROBE_TIMEOUT_MS / 1000} s`;
  if (run.signal) return `the probe process was killed by ${run.signal}`;
  const lastWords = run.stderr.trim().split('\n').pop()?.trim();
  return `the probe process exited with code ${run.status}${lastWords ? `: ${conciseError(lastWords)}` : ''}`;
}

/** The probe's stdout as lines; a line that is not JSON (a library writing to stdout) is skipped. */
function probeLines(stdout: string): ProbeLine[] {
  const lines: ProbeLine[] = [];
  for (const text of stdout.split('\n')) {
    if (!text.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(text) as ProbeLine);
    } catch {
      // not one of ours
    }
  }
  return lines;
}

/**
 * Read one probe process's run over `order`.
 * Returns chosen: the provider that worked, or null; failures: `name: reason` for each that failed (the one being
 * tried when the process crashed, hung or could not start included); rest: the providers still to try in a new
 * process (empty once one worked, or when onnxruntime itself cannot be loaded).
 */
export function readProbeRun(order: string[], run: ProbeRun): { chosen: string | null; failures: string[]; rest: string[] } {
  const failures: string[] = [];
  let tried = 0;
  for (const line of probeLines(run.stdout)) {
    if ('fatal' in line) {
      const reason = conciseError(String(line.fatal));
      return { chosen: null, failures: [...failures, ...order.slice(tried).map((name) => `${name}: ${reason}`)], rest: [] };
    }
    if (tried >= order.length || line.provider !== order[tried]) continue;
    tried++;
    if (line.ok) return { chosen: line.provider, failures, rest: [] };
    failures.push(`${line.provider}: ${conciseError(String(line.error ?? 'failed'))}`);
  }
  if (tried === order.length) return { chosen: null, failures, rest: [] };
  const reason = probeDeath(run);
  if (run.spawnError) return { chosen: null, failures: [...failures, ...order.slice(tried).map((name) => `${name}: ${reason}`)], rest: [] };
  failures.push(`${order[tried]}: ${reason}`);
  return { chosen: null, failures, rest: order.slice(tried + 1) };
}

/** Names to probe, in order: the requested ones that look like provider names, then cpu if it was not among them. */
function probeOrder(requested: string[]): { order: string[]; refused: string[] } {
  const order = requested.filter((name) => PROVIDER_NAME.test(name));
  const refused = requested.filter((name) => !PROVIDER_NAME.test(name)).map((name) => `${name.slice(0, 40)}: not a provider name`);
  if (!order.includes('cpu')) order.push('cpu');
  return { order, refused };
}

const runningFromSources = import.meta.url.endsWith('.ts');

/** Node arguments that run the probe over `order`: the built .js, or the .ts source with the dev loader (tests). */
function probeArguments(order: string[]): string[] {
  if (!runningFromSources) return [fileURLToPath(new URL('./providerProbe.js', import.meta.url)), ...order];
  const register = new URL('../server/devTsRegister.mjs', import.meta.url).href;
  return ['--import', register, fileURLToPath(new URL('./providerProbe.ts', import.meta.url)), ...order];
}

/** The probe's environment: ours, without a hand-off (the probe decides nothing from it, but keep it clean). */
function probeEnvironment(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env[PROVIDER_HANDOFF_ENV];
  return env;
}

/** Run one probe process over `order` and wait for it (blocks this thread). */
function runProbeSync(order: string[]): ProbeRun {
  const result = spawnSync(process.execPath, probeArguments(order), {
    encoding: 'utf8',
    env: probeEnvironment(),
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: PROBE_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    maxBuffer: 1 << 20,
  });
  const error = result.error as NodeJS.ErrnoException | undefined;
  const timedOut = error?.code === 'ETIMEDOUT';
  return {
    stdout: result.stdout ?? '',
    stderr: result.stderr ?? '',
    status: result.status,
    signal: timedOut ? null : result.signal,
    timedOut,
    spawnError: error && !timedOut ? error.message : undefined,
  };
}

/** Run one probe process over `order` without blocking. */
function runProbe(order: string[]): Promise<ProbeRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, probeArguments(order), { env: probeEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-8192)));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, PROBE_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, status: null, signal: null, timedOut: false, spawnError: err.message });
    });
    child.once('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, status, signal: timedOut ? null : signal, timedOut });
    });
  });
}

/**
 * Probe the providers of `requested` (plus cpu last) and return the first that works, blocking this thread until
 * it is known (about 0.3 s for cpu alone, ~1 s for cuda → webgpu → cpu on a machine without a GPU).
 * Does not remember the answer: selectedProvider() does.
 */
export function probeProviders(requested: string[]): ProviderSelection {
  const { order, refused } = probeOrder(requested);
  const fallbackFrom = [...refused];
  let rest = order;
  while (rest.length > 0) {
    const read = readProbeRun(rest, runProbeSync(rest));
    fallbackFrom.push(...read.failures);
    if (read.chosen) return { name: read.chosen, fallbackFrom, requested: [...requested] };
    rest = read.rest;
  }
  return { name: 'none', fallbackFrom, requested: [...requested] };
}

/** probeProviders without blocking this thread. */
export async function probeProvidersAsync(requested: string[]): Promise<ProviderSelection> {
  const { order, refused } = probeOrder(requested);
  const fallbackFrom = [...refused];
  let rest = order;
  while (rest.length > 0) {
    const read = readProbeRun(rest, await runProbe(rest));
    fallbackFrom.push(...read.failures);
    if (read.chosen) return { name: read.chosen, fallbackFrom, requested: [...requested] };
    rest = read.rest;
  }
  return { name: 'none', fallbackFrom, requested: [...requested] };
}

let chosen: ProviderSelection | undefined;
let choosing: Promise<ProviderSelection> | undefined;

/** A selection handed over by the thread or process that started this one, if it answers the same request. */
function handedOver(requested: string[]): ProviderSelection | undefined {
  const text = process.env[PROVIDER_HANDOFF_ENV];
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as Partial<ProviderSelection>;
    const strings = (list: unknown): list is string[] => Array.isArray(list) && list.every((item) => typeof item === 'string');
    if (typeof value.name !== 'string' || !strings(value.fallbackFrom) || !strings(value.requested)) return undefined;
    if (value.requested.join(',') !== requested.join(',')) return undefined;
    return { name: value.name, fallbackFrom: value.fallbackFrom, requested: value.requested };
  } catch {
    return undefined;
  }
}

/** Remember `selection` in this thread and hand it to threads and processes started from now on. */
function remember(selection: ProviderSelection): ProviderSelection {
  chosen ??= selection;
  process.env[PROVIDER_HANDOFF_ENV] = JSON.stringify(chosen);
  return chosen;
}

/**
 * The provider of this sidecar: chosen on the first call (handed over from the parent thread, else probed, which
 * blocks this thread once; see probeProviders), the same answer afterwards.
 * Call selectProvider() at start-up to choose without blocking; this then answers at once.
 */
export function selectedProvider(): ProviderSelection {
  if (chosen) return chosen;
  const requested = requestedProviders();
  return remember(handedOver(requested) ?? probeProviders(requested));
}

/** selectedProvider() without blocking: the probe runs in the background; concurrent callers share it. */
export function selectProvider(): Promise<ProviderSelection> {
  if (chosen) return Promise.resolve(chosen);
  choosing ??= (async () => {
    const requested = requestedProviders();
    return remember(handedOver(requested) ?? (await probeProvidersAsync(requested)));
  })();
  return choosing;
}
