/**
 * sdfSamples on a helper thread beside the calling one: the same samples (a pure function of mesh, count and seed),
 * computed while the caller does something else. Apply Latent Pose draws them there while it runs the auto-rig, its
 * other costly stage. The helper is started on first use and kept for the calling thread's life (idle, it does not
 * keep the process alive): a new thread compiles its code afresh, which cost more than the overlap saved on 2 cores
 * when each apply started one (42k vertices: 0.72–0.92 s against 0.50–0.57 s in line, warm). A job thread of the
 * server is kept between jobs (server/jobs.ts), and its helper with it; terminating the job thread ends its helper.
 */
import { Worker } from 'node:worker_threads';
import { AutoRigError, type ErrorCode } from '../errors.js';
import type { SdfThreadInput, SdfThreadOutput } from '../server/sdfSamplesWorker.js';
import { workerEntry } from '../server/workerEntry.js';
import type { SdfSampleOptions, SdfSamples } from './sdfSamples.js';

interface Helper {
  worker: Worker;
  waiting: Map<number, { resolve: (samples: SdfSamples) => void; reject: (err: Error) => void }>;
}

let helper: Helper | null = null;
let nextId = 1;

/** The helper thread, started when there is none (or the last one ended). */
function helperThread(): Helper {
  if (helper) return helper;
  const entry = workerEntry('sdfSamplesWorker');
  const worker = new Worker(entry.url, { execArgv: entry.execArgv });
  const started: Helper = { worker, waiting: new Map() };
  worker.on('message', (message: SdfThreadOutput) => {
    const waiter = started.waiting.get(message.id);
    if (!waiter) return;
    started.waiting.delete(message.id);
    if (started.waiting.size === 0) worker.unref();
    if (message.type === 'result') waiter.resolve({ points: message.points, sdf: message.sdf, nearCount: message.nearCount });
    else waiter.reject(message.code ? new AutoRigError(message.code as ErrorCode, message.message) : new Error(message.message));
  });
  const fail = (err: Error) => {
    if (helper === started) helper = null;
    for (const waiter of started.waiting.values()) waiter.reject(err);
    started.waiting.clear();
  };
  worker.on('error', (err) => fail(new AutoRigError('INTERNAL', `the SDF sampling thread failed: ${err.message}`)));
  worker.on('exit', (code) => fail(new AutoRigError('INTERNAL', `the SDF sampling thread ended (exit code ${code}) without an answer`)));
  worker.unref();
  helper = started;
  return started;
}

/**
 * sdfSamplesBeside: positions Float32Array #V*3, triangles Uint32Array #T*3, options → Promise<SdfSamples>, exactly
 * what sdfSamples answers. The arrays are copied to the helper (the caller keeps using its own). Rejects with what
 * sdfSamples throws (an AutoRigError with its code), INTERNAL when the helper dies without an answer.
 */
export function sdfSamplesBeside(positions: Float32Array, triangles: Uint32Array, options: SdfSampleOptions): Promise<SdfSamples> {
  const thread = helperThread();
  const id = nextId++;
  return new Promise<SdfSamples>((resolve, reject) => {
    thread.waiting.set(id, { resolve, reject });
    thread.worker.ref();
    thread.worker.postMessage({ id, positions, triangles, options } satisfies SdfThreadInput);
  });
}

/** The helper's thread id, null when none is running (tests check that consecutive calls share one thread). */
export function sdfHelperThreadId(): number | null {
  return helper ? helper.worker.threadId : null;
}
