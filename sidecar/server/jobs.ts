/**
 * One rig/skin job = one worker thread. Cancelling terminates the thread, which stops even a tight loop at once;
 * a finished thread exits by itself, so no pipeline state outlives its job.
 *
 * Where the worker's code comes from: built, this module is dist/sidecar/server/jobs.js and starts jobWorker.js
 * beside it. Run from sources (vitest imports .ts files), it starts jobWorker.ts with devTsLoader.mjs registered in
 * the thread, so tests always exercise the current sources, never a stale dist/.
 */
import { Worker } from 'node:worker_threads';
import type { ErrorCode } from '../errors.js';
import type { RigResult, SkinResult } from '../types.js';
import { transferables, type JobInput, type JobOutput } from './jobMessages.js';

/** What a job reports; exactly one of onResult/onError is called, once, unless the job is cancelled first. */
export interface JobListener {
  onProgress(stage: string, fraction: number): void;
  onResult(result: RigResult | SkinResult): void;
  onError(code: ErrorCode, message: string): void;
}

export interface RunningJob {
  /** Stop the worker at once. No listener call follows. */
  cancel(): void;
}

/** Progress is forwarded at most this often (ms): a client redraws a bar, it does not need every step. */
export const PROGRESS_INTERVAL_MS = 100;

const runningFromSources = import.meta.url.endsWith('.ts');

/** The worker's entry module and the Node options that let it load. */
function workerEntry(): { url: URL; execArgv?: string[] } {
  if (!runningFromSources) return { url: new URL('./jobWorker.js', import.meta.url) };
  // Only the loader: the parent's own options (vitest's, or `--input-type` of `node -e`) may not be valid in a worker.
  const register = new URL('./devTsRegister.mjs', import.meta.url).href;
  return { url: new URL('./jobWorker.ts', import.meta.url), execArgv: ['--import', register] };
}

/**
 * Start a job in a new worker thread. The mesh's typed arrays are transferred (they are unusable here afterwards).
 * Returns a handle to cancel it.
 */
export function startJob(input: JobInput, listener: JobListener): RunningJob {
  const entry = workerEntry();
  const arrays = [
    ...input.objects.flatMap((part) => [part.positions, part.triangles]),
    ...(input.request === 'skin' ? input.locked.map((group) => group.weights) : []),
  ];
  const worker = new Worker(entry.url, {
    workerData: input,
    transferList: transferables(arrays),
    execArgv: entry.execArgv,
    stdout: true,
    stderr: true,
  });
  // stdout belongs to the ready line (a parent reads it); anything a pipeline stage prints goes to stderr instead.
  worker.stdout.pipe(process.stderr, { end: false });
  worker.stderr.pipe(process.stderr, { end: false });
  let settled = false;
  const progress = throttleProgress(listener);

  const settle = (report: () => void) => {
    if (settled) return;
    settled = true;
    progress.drop();
    report();
  };
  worker.on('message', (message: JobOutput) => {
    if (settled) return;
    switch (message.type) {
      case 'progress':
        if (Number.isFinite(message.fraction)) progress.report(String(message.stage), Math.min(1, Math.max(0, message.fraction)));
        return;
      case 'result':
        settle(() => listener.onResult(message.result));
        return;
      case 'error':
        settle(() => listener.onError(message.code, message.message));
        return;
    }
  });
  // Thrown outside the job's try (e.g. a module that fails to load) or out of memory.
  worker.on('error', (err) => settle(() => listener.onError('INTERNAL', `the job's worker failed: ${err.message}`)));
  worker.on('exit', (code) => settle(() => listener.onError('INTERNAL', `the job's worker stopped without an answer (exit code ${code})`)));

  return {
    cancel() {
      settled = true;
      progress.drop();
      void worker.terminate();
    },
  };
}

/**
 * Forward progress at most every PROGRESS_INTERVAL_MS. A report inside the interval is held back and sent when the
 * interval ends, replaced by any newer one meanwhile: the client always learns the latest stage, within 100 ms.
 * `drop` forgets a held report (the job ended: its result or error follows instead).
 */
function throttleProgress(listener: JobListener): { report(stage: string, fraction: number): void; drop(): void } {
  let lastSent = Number.NEGATIVE_INFINITY;
  let held: { stage: string; fraction: number } | null = null;
  let timer: NodeJS.Timeout | null = null;
  const sendHeld = () => {
    timer = null;
    if (!held) return;
    lastSent = performance.now();
    const { stage, fraction } = held;
    held = null;
    listener.onProgress(stage, fraction);
  };
  return {
    report(stage, fraction) {
      held = { stage, fraction };
      const wait = lastSent + PROGRESS_INTERVAL_MS - performance.now();
      if (wait <= 0) sendHeld();
      else timer ??= setTimeout(sendHeld, wait);
    },
    drop() {
      held = null;
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
