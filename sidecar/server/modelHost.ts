/**
 * The sidecar's model host: one long-lived worker thread that holds every onnxruntime session, so a model is loaded
 * once per sidecar rather than once per job (job threads live for one job: sidecar/server/jobs.ts). A job that runs
 * a model gets a MessagePort to the host (connect) and its thread sends its model runs there
 * (onnxSession.useModelHost). Loading both models costs ~0.6 s of a 30k-vertex learned rig here; paid once, at start-up
 * when the server warms the host, it is no longer part of any request.
 *
 * The thread starts on first use. If it dies (a crash in native code, out of memory) the jobs waiting on it get
 * MODEL_FAILED, and the next job starts a fresh one.
 */
import { resolve } from 'node:path';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { HostControl, HostReport } from './modelHostWorker.js';
import { workerEntry } from './workerEntry.js';

export interface ModelHostStats {
  /** models the host has loaded (each once) */
  loads: number;
  /** model runs it has answered */
  runs: number;
}

/**
 * How long close() waits for the host's loads and runs in progress before terminating it anyway: long enough for a
 * warm-up's loads on a busy machine (terminated under a load, the process aborts). With 2 s, a sidecar whose stdin
 * closed right after its ready line, the two cores busy with other work, aborted in 6 of 10 runs (SIGABRT,
 * "terminate called after throwing an instance of 'Napi::Error'"): its model host was still loading the models it
 * warms. With 30 s, 24 of 24 exited 0 (docs/RELIABILITY.md).
 */
const STOP_GRACE_MS = 30_000;

export class ModelHost {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (report: HostReport) => void; reject: (err: Error) => void }>();
  private closed = false;

  /** `log`: where to write a line when the host thread fails. */
  constructor(private readonly log: (line: string) => void = () => {}) {}

  /** A port for one job's thread (pass it to useModelHost there); starts the host thread if it is not running. */
  connect(): MessagePort {
    const { port1, port2 } = new MessageChannel();
    this.thread().postMessage({ type: 'connect', port: port1 } satisfies HostControl, [port1]);
    return port2;
  }

  /**
   * Load the models at `paths` now, so that the first request does not wait for them. Resolves with one line per
   * model that could not be loaded (missing, corrupt): the jobs that need it will get that error with its code.
   */
  async warm(paths: string[]): Promise<string[]> {
    const report = await this.ask({ type: 'warm', paths: paths.map((p) => resolve(p)) });
    return report.type === 'warmed' ? report.failures : [];
  }

  /** What the host has done so far (tests check that models are loaded once and run there). */
  async stats(): Promise<ModelHostStats> {
    const report = await this.ask({ type: 'stats' });
    return report.type === 'stats' ? { loads: report.loads, runs: report.runs } : { loads: 0, runs: 0 };
  }

  /** Whether the host thread is running (it starts on the first connect or warm). */
  get running(): boolean {
    return this.worker !== null;
  }

  /**
   * Stop the host thread; sessions are freed. Later calls start none. The thread ends itself once its loads and runs
   * in progress are done (terminating it under a pending onnxruntime load aborts the process); one that has not
   * ended after STOP_GRACE_MS is terminated.
   */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    const ended = new Promise<void>((done) => worker.once('exit', () => done()));
    worker.postMessage({ type: 'stop' } satisfies HostControl);
    const timer = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
    await ended;
    clearTimeout(timer);
  }

  private ask(message: { type: 'warm'; paths: string[] } | { type: 'stats' }): Promise<HostReport> {
    const id = this.nextId++;
    return new Promise<HostReport>((resolveReport, reject) => {
      const thread = this.thread();
      this.waiting.set(id, { resolve: resolveReport, reject });
      thread.postMessage({ ...message, id } satisfies HostControl);
    });
  }

  private thread(): Worker {
    if (this.closed) throw new Error('the model host is closed');
    if (this.worker) return this.worker;
    const entry = workerEntry('modelHostWorker');
    const worker = new Worker(entry.url, { execArgv: entry.execArgv, stdout: true, stderr: true });
    const forward = (chunk: Buffer) => process.stderr.write(chunk);
    worker.stdout.on('data', forward);
    worker.stderr.on('data', forward);
    worker.on('message', (report: HostReport) => {
      const waiter = this.waiting.get(report.id);
      if (!waiter) return;
      this.waiting.delete(report.id);
      waiter.resolve(report);
    });
    worker.on('error', (err) => this.log(`model host failed: ${err.message}`));
    worker.on('exit', (code) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error('the model host stopped before answering'));
      this.waiting.clear();
      if (this.worker === worker) {
        this.worker = null;
        if (!this.closed) this.log(`model host stopped (exit code ${code}); the next job that needs a model starts a new one`);
      }
    });
    // Idle, the host must not keep the sidecar's process alive; close() ends it.
    worker.unref();
    this.worker = worker;
    return worker;
  }
}
