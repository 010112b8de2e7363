/**
 * One rig/skin/pose.apply/correctives job = one worker thread. Cancelling terminates the thread, which stops even a tight loop at once;
 * a finished thread exits by itself, so no pipeline state outlives its job.
 * Jobs wait in a JobQueue for one of a few thread slots: a client that sends hundreds of requests at once (or
 * cancels them as fast) gets them run a few at a time, instead of one thread each sharing the cores (every job
 * slow) and all of their meshes' working memory held at once (a cancel storm of 60 small rigs peaked at 460 MiB).
 * A job that runs a model gets a port to the sidecar's model host (modelHost.ts), which holds the onnxruntime sessions
 * for all jobs: a job's thread loads no model of its own.
 */
import { availableParallelism } from 'node:os';
import { Worker, type MessagePort } from 'node:worker_threads';
import type { ErrorCode } from '../errors.js';
import { modelsRunBy, modelsRunByCorrectives, modelsRunByPose } from '../methods.js';
import type { ModelName } from '../learned/modelFiles.js';
import { transferables, type JobInput, type JobOutput, type JobResult } from './jobMessages.js';
import type { ModelHost } from './modelHost.js';
import { workerEntry } from './workerEntry.js';

/** What a job reports; exactly one of onResult/onError is called, once, unless the job is cancelled first. */
export interface JobListener {
  onProgress(stage: string, fraction: number): void;
  onResult(result: JobResult): void;
  onError(code: ErrorCode, message: string): void;
}

export interface RunningJob {
  /** Stop the worker at once. No listener call follows. */
  cancel(): void;
}

/** Progress is forwarded at most this often (ms): a client redraws a bar, it does not need every step. */
export const PROGRESS_INTERVAL_MS = 100;

/**
 * Start a job in a new worker thread. The mesh's typed arrays are transferred (they are unusable here afterwards).
 * `onThreadExit` is called once when the thread has ended (after its answer, or after a cancel), whatever happened.
 * `models`: the port to the model host, for a job that runs a model (without one, the thread loads its own sessions).
 * Returns a handle to cancel it.
 */
export function startJob(input: JobInput, listener: JobListener, onThreadExit: () => void = () => {}, models?: MessagePort): RunningJob {
  const entry = workerEntry('jobWorker');
  const arrays = [
    ...input.objects.flatMap((part) => [part.positions, part.triangles]),
    ...(input.request === 'skin' ? input.locked.map((group) => group.weights) : []),
    ...(input.request === 'correctives' || input.request === 'correctives.preview' ? input.weights.flatMap((entry) => [entry.indices, entry.weights]) : []),
    ...(input.request === 'correctives.preview' ? [input.rotations] : []),
    ...(input.request === 'correctives'
      ? input.examples.flatMap((example) => [example.rotations, ...example.objects.flatMap((part) => [part.positions, part.triangles])])
      : []),
    ...(input.request === 'pose' && input.rig ? input.rig.objects.flatMap((entry) => [entry.indices, entry.weights]) : []),
  ];
  const worker = new Worker(entry.url, {
    workerData: models ? { ...input, models } : input,
    transferList: [...transferables(arrays), ...(models ? [models] : [])],
    execArgv: entry.execArgv,
    stdout: true,
    stderr: true,
  });
  // stdout belongs to the ready line (a parent reads it); anything a pipeline stage prints goes to stderr instead.
  // Forwarded chunk by chunk rather than piped: a pipe would add listeners to process.stderr for every running job.
  const forward = (chunk: Buffer) => process.stderr.write(chunk);
  worker.stdout.on('data', forward);
  worker.stderr.on('data', forward);
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
  worker.on('exit', (code) => {
    settle(() => listener.onError('INTERNAL', `the job's worker stopped without an answer (exit code ${code})`));
    onThreadExit();
  });

  return {
    cancel() {
      settled = true;
      progress.drop();
      void worker.terminate();
    },
  };
}

/** Thread slots by default: one per core, at most 4 (each running job holds its mesh's working memory). */
export function defaultJobSlots(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

/**
 * Runs jobs at most `slots` at a time, first come first served. A slot is taken when a job's thread starts and given
 * back when the thread has exited, so at most `slots` pipeline threads (and their memory) exist at any moment.
 * A queued job has started nothing: cancelling it just takes it out of the line (its listener hears nothing, as for
 * a running job that is cancelled).
 */
export class JobQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  /** models: the sidecar's model host, which jobs that run a model use (without one, each job loads its own). */
  constructor(readonly slots: number = defaultJobSlots(), private readonly models?: ModelHost) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`a job queue needs at least one slot, got ${slots}`);
  }

  /** Jobs whose thread is alive, and jobs waiting for a slot. */
  get counts(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /** Queue a job; it starts as soon as a slot is free (at once when one is). Returns a handle to cancel it. */
  submit(input: JobInput, listener: JobListener): RunningJob {
    let job: RunningJob | null = null;
    let cancelled = false;
    const start = () => {
      this.running++;
      try {
        const usesModels = modelsOfJob(input).length > 0;
        job = startJob(input, listener, () => this.release(), usesModels ? this.models?.connect() : undefined);
      } catch (err) {
        // No thread, so no exit to wait for: the slot is free again at once.
        this.release();
        listener.onError('INTERNAL', `the job's worker could not start: ${err instanceof Error ? err.message : String(err)}`);
      }
    };
    this.waiting.push(start);
    this.startWaiting();
    return {
      cancel: () => {
        if (cancelled) return;
        cancelled = true;
        if (job) {
          job.cancel();
          return;
        }
        const at = this.waiting.indexOf(start);
        if (at >= 0) this.waiting.splice(at, 1);
      },
    };
  }

  private release(): void {
    this.running--;
    this.startWaiting();
  }

  private startWaiting(): void {
    while (this.running < this.slots && this.waiting.length > 0) this.waiting.shift()!();
  }
}

/**
 * The models a job runs: those of its rig/skin method, Apply Latent Pose's, or the pose-dependent weight field for
 * correctives with method 'poseDependent' (dual-quaternion correctives run none).
 */
export function modelsOfJob(input: JobInput): ModelName[] {
  if (input.request === 'correctives' || input.request === 'correctives.preview') return modelsRunByCorrectives(input.options.method);
  return input.request === 'pose' ? modelsRunByPose(input.rig !== undefined) : modelsRunBy(input.request, input.options.method);
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
