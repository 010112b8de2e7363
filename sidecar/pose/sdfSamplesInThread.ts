/**
 * sdfSamples on a worker thread of its own: the same samples (a pure function of mesh, count and seed), computed
 * beside whatever the calling thread does meanwhile. Apply Latent Pose runs the auto-rig and the SDF sampling, its two
 * costliest stages, side by side this way.
 */
import { Worker } from 'node:worker_threads';
import { AutoRigError, type ErrorCode } from '../errors.js';
import type { SdfThreadInput, SdfThreadOutput } from '../server/sdfSamplesWorker.js';
import { workerEntry } from '../server/workerEntry.js';
import type { SdfSampleOptions, SdfSamples } from './sdfSamples.js';

/**
 * sdfSamplesInThread: positions Float32Array #V*3, triangles Uint32Array #T*3, options, signal (optional: aborting it
 * stops the thread) → Promise<SdfSamples>, exactly what sdfSamples answers. The arrays are copied to the thread (the
 * caller keeps using its own). Rejects with what sdfSamples throws (an AutoRigError with its code), CANCELLED when
 * aborted, INTERNAL when the thread dies without an answer.
 */
export function sdfSamplesInThread(
  positions: Float32Array, triangles: Uint32Array, options: SdfSampleOptions, signal?: AbortSignal,
): Promise<SdfSamples> {
  const entry = workerEntry('sdfSamplesWorker');
  const input: SdfThreadInput = { positions, triangles, options };
  return new Promise((resolve, reject) => {
    if (signal?.aborted) { reject(new AutoRigError('CANCELLED', 'the SDF sampling was cancelled')); return; }
    const worker = new Worker(entry.url, { workerData: input, execArgv: entry.execArgv });
    let answered = false;
    const abort = () => {
      if (answered) return;
      answered = true;
      reject(new AutoRigError('CANCELLED', 'the SDF sampling was cancelled'));
      void worker.terminate();
    };
    signal?.addEventListener('abort', abort, { once: true });
    worker.once('message', (message: SdfThreadOutput) => {
      if (answered) return;
      answered = true;
      if (message.type === 'result') resolve({ points: message.points, sdf: message.sdf, nearCount: message.nearCount });
      else reject(message.code ? new AutoRigError(message.code as ErrorCode, message.message) : new Error(message.message));
    });
    worker.once('error', (err) => { if (!answered) { answered = true; reject(err); } });
    worker.once('exit', (code) => {
      signal?.removeEventListener('abort', abort);
      if (!answered) reject(new AutoRigError('INTERNAL', `the SDF sampling thread ended (exit code ${code}) without an answer`));
    });
  });
}
