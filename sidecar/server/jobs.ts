/**
 * Each rig/skin/pose.apply/correctives job runs on a worker thread of its own. Cancelling terminates the thread, which
 * stops even a tight loop at once. A thread that has answered is kept, idle, for the next job (KEEP_THREAD_MAX_VERTICES,
 * IDLE_THREAD_MS): a new thread compiles the pipeline's code afresh, which costs a sub-second job (Apply Latent Pose
 * on 42k vertices through the sidecar: ~1.1 s in a new thread, ~0.3 s in a kept one) more than the work itself. The
 * pipeline is pure functions; what a thread keeps between jobs is compiled code and read-only caches (the pose
 * library): about 85–120 MB of resident memory per idle thread here (after a 72k and a 286k rig: 84 and 100 MB;
 * test/load.test.ts's sidecar with its 2 threads kept: 412 MiB after 100 small rigs, against 176 MiB when every job
 * had a new thread, and 0.13 s per rig against 0.89 s).
 * Jobs wait in a JobQueue for one of a few thread slots: a client that sends hundreds of requests at once (or
 * cancels them as fast) gets them run a few at a time, instead of one thread each sharing the cores (every job
 * slow) and all of their meshes' working memory held at once (a cancel storm of 60 small rigs peaked at 460 MiB).
 * A job that runs a model gets a port to the sidecar's model host (modelHost.ts), which holds the onnxruntime sessions
 * for all jobs: a job's thread loads no model of its own.
 */
import { availableParallelism } from 'node:os';
import { SHARE_ENV, Worker, type MessagePort } from 'node:worker_threads';
import type { ErrorCode } from '../errors.js';
import { modelsRunBy, modelsRunByCorrectives, modelsRunByPose } from '../methods.js';
import type { ModelName } from '../learned/modelFiles.js';
import { transferables, type JobInput, type JobMessage, type JobOutput, type JobResult, type JobThreadData } from './jobMessages.js';
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
 * A job's thread is kept for the next job only when its mesh had at most this many vertices (all objects): a small
 * job is where a warm thread saves the most (compiling its code is a large share of it); a large one gains little.
 */
export const KEEP_THREAD_MAX_VERTICES = 300_000;
/** A kept thread that has had no job for this long ends, giving its memory back. */
export const IDLE_THREAD_MS = 300_000;

/**
 * One job thread: a worker that runs the jobs it is given one after another (jobWorker.ts). Between jobs it is idle
 * and does not keep the process alive. Cancelling a job terminates the thread, which stops even a tight loop at once.
 */
class JobThread {
  private readonly worker: Worker;
  private job: { settled: boolean; keep: boolean; listener: JobListener; progress: ReturnType<typeof throttleProgress>; done: (thread: JobThread | null) => void } | null = null;
  private alive = true;
  private idleTimer: NodeJS.Timeout | null = null;

  /**
   * onIdleEnd: called when the thread ends while it has no job (its idle time ran out, or it crashed idle);
   * idleMs: how long it waits for another job once kept; modelsThroughHost: the queue has a model host, so the thread
   * never loads a session of its own (onnxSession.refuseLocalSessions).
   */
  constructor(private readonly onIdleEnd: (thread: JobThread) => void, private readonly idleMs: number, modelsThroughHost: boolean) {
    const entry = workerEntry('jobWorker');
    const workerData: JobThreadData = { modelsThroughHost };
    // SHARE_ENV: a kept thread reads the server's environment as it is now (AUTORIG_MODELS), not as it was at its start
    this.worker = new Worker(entry.url, { execArgv: entry.execArgv, env: SHARE_ENV, stdout: true, stderr: true, workerData });
    // stdout belongs to the ready line (a parent reads it); anything a pipeline stage prints goes to stderr instead.
    // Forwarded chunk by chunk rather than piped: a pipe would add listeners to process.stderr for every thread.
    const forward = (chunk: Buffer) => process.stderr.write(chunk);
    this.worker.stdout.on('data', forward);
    this.worker.stderr.on('data', forward);
    this.worker.on('message', (message: JobOutput) => this.hear(message));
    // Thrown outside the job's try (e.g. a module that fails to load) or out of memory.
    this.worker.on('error', (err) => {
      // the thread is ending: its job is answered now, and it is not kept
      this.alive = false;
      this.settle((l) => l.onError('INTERNAL', `the job's worker failed: ${err.message}`));
    });
    this.worker.on('exit', (code) => {
      this.alive = false;
      if (this.idleTimer) clearTimeout(this.idleTimer);
      const job = this.job;
      this.job = null;
      if (!job) { this.onIdleEnd(this); return; }
      if (!job.settled) {
        job.settled = true;
        job.progress.drop();
        job.listener.onError('INTERNAL', `the job's worker stopped without an answer (exit code ${code})`);
      }
      job.done(null);
    });
  }

  /**
   * Run one job here. `done(thread)` is called once, when the job has ended: with this thread when it is kept for
   * another job (it has answered; its slot is free), with null once the thread has ended (after a cancel, a crash,
   * or because it was not kept: `keep` false).
   */
  run(input: JobInput, listener: JobListener, keep: boolean, done: (thread: JobThread | null) => void, models?: MessagePort): RunningJob {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    this.worker.postMessage(
      { type: 'job', input, ...(models ? { models } : {}) } satisfies JobMessage,
      [...transferables(jobArrays(input)), ...(models ? [models] : [])],
    );
    // only once the job has reached the thread (a message that cannot be sent throws, and leaves no job here)
    const job = { settled: false, listener, progress: throttleProgress(listener), done, keep };
    this.job = job;
    this.worker.ref();
    return {
      cancel: () => {
        if (this.job !== job) return;
        job.settled = true;
        job.progress.drop();
        void this.worker.terminate();
      },
    };
  }

  /** End the thread (an idle one: the server is stopping, or its idle time ran out). */
  end(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.alive) void this.worker.terminate();
  }

  private hear(message: JobOutput): void {
    const job = this.job;
    if (!job || job.settled) return;
    switch (message.type) {
      case 'progress':
        if (Number.isFinite(message.fraction)) job.progress.report(String(message.stage), Math.min(1, Math.max(0, message.fraction)));
        return;
      case 'result':
        this.settle((l) => l.onResult(message.result));
        return;
      case 'error':
        this.settle((l) => l.onError(message.code, message.message));
        return;
    }
  }

  /** The job's one answer; then the thread is kept idle for the next job, or ended. */
  private settle(report: (listener: JobListener) => void): void {
    const job = this.job;
    if (!job || job.settled) return;
    job.settled = true;
    job.progress.drop();
    report(job.listener);
    if (!job.keep || !this.alive) {
      // its slot is freed on exit, once its memory is
      void this.worker.terminate();
      return;
    }
    this.job = null;
    this.worker.unref();
    this.idleTimer = setTimeout(() => this.end(), this.idleMs);
    this.idleTimer.unref();
    job.done(this);
  }
}

/** A job's mesh arrays (and weights, examples, rotations), transferred to its thread rather than copied. */
function jobArrays(input: JobInput): ArrayBufferView[] {
  return [
    ...input.objects.flatMap((part) => [part.positions, part.triangles]),
    ...(input.request === 'skin' ? input.locked.map((group) => group.weights) : []),
    ...(input.request === 'correctives' || input.request === 'correctives.preview' ? input.weights.flatMap((entry) => [entry.indices, entry.weights]) : []),
    ...(input.request === 'correctives.preview' ? [input.rotations] : []),
    ...(input.request === 'correctives'
      ? input.examples.flatMap((example) => [example.rotations, ...example.objects.flatMap((part) => [part.positions, part.triangles])])
      : []),
    ...(input.request === 'pose' && input.rig ? input.rig.objects.flatMap((entry) => [entry.indices, entry.weights]) : []),
  ];
}

/** Whether a job's thread may be kept for the next job (KEEP_THREAD_MAX_VERTICES). */
function keepsThread(input: JobInput): boolean {
  let vertices = 0;
  for (const part of input.objects) vertices += part.positions.length / 3;
  return vertices <= KEEP_THREAD_MAX_VERTICES;
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
  /** threads whose job has ended, kept warm for the next one; with the running jobs' threads, never more than slots */
  private readonly idle: JobThread[] = [];
  private closed = false;
  private started = 0;

  /**
   * models: the sidecar's model host, which jobs that run a model use (without one, each job loads its own);
   * idleMs: how long a kept thread waits for another job (IDLE_THREAD_MS).
   */
  constructor(readonly slots: number = defaultJobSlots(), private readonly models?: ModelHost, private readonly idleMs = IDLE_THREAD_MS) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`a job queue needs at least one slot, got ${slots}`);
  }

  /** Jobs running, and jobs waiting for a slot. */
  get counts(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /** Queue a job; it starts as soon as a slot is free (at once when one is). Returns a handle to cancel it. */
  submit(input: JobInput, listener: JobListener): RunningJob {
    let job: RunningJob | null = null;
    let cancelled = false;
    const start = () => {
      this.running++;
      let thread: JobThread | undefined;
      try {
        const usesModels = modelsOfJob(input).length > 0;
        thread = this.idle.pop() ?? this.newThread();
        job = thread.run(input, listener, !this.closed && keepsThread(input), (kept) => this.release(kept), usesModels ? this.models?.connect() : undefined);
      } catch (err) {
        // The job never reached a thread, so no exit will free its slot: it is free again at once.
        thread?.end();
        this.release(null);
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

  /** Threads kept idle for the next job, and threads started so far (tests read them). */
  get threads(): { idle: number; started: number } {
    return { idle: this.idle.length, started: this.started };
  }

  private newThread(): JobThread {
    this.started++;
    return new JobThread((ended) => this.forget(ended), this.idleMs, this.models !== undefined);
  }

  /** End the idle threads, and keep no thread from now on (the server is stopping; running jobs are cancelled by their connections). */
  close(): void {
    this.closed = true;
    for (const thread of this.idle.splice(0)) thread.end();
  }

  /** A job's slot is free: its thread, when kept, waits for the next job. */
  private release(kept: JobThread | null): void {
    this.running--;
    if (kept) {
      if (this.closed) kept.end();
      else this.idle.push(kept);
    }
    this.startWaiting();
  }

  /** An idle thread ended (its idle time ran out, or it crashed between jobs). */
  private forget(thread: JobThread): void {
    const at = this.idle.indexOf(thread);
    if (at >= 0) this.idle.splice(at, 1);
  }

  private startWaiting(): void {
    while (this.running < this.slots && this.waiting.length > 0) this.waiting.shift()!();
  }
}

/**
 * The models a job runs: those of its rig/skin method, Apply Latent Pose's (a prepare's too), or the pose-dependent weight field for
 * correctives with method 'poseDependent' (dual-quaternion correctives run none).
 */
export function modelsOfJob(input: JobInput): ModelName[] {
  if (input.request === 'correctives' || input.request === 'correctives.preview') return modelsRunByCorrectives(input.options.method);
  if (input.request === 'pose.prepare') return modelsRunByPose(!input.autoRig);
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
