/**
 * Entry of the worker thread that draws one mesh's SDF samples (pose/sdfSamplesInThread.ts), so that Apply Latent Pose
 * reads the mesh's shape on a second core while its own thread runs the auto-rig. It answers one message, with the
 * samples or the error, and ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AutoRigError } from '../errors.js';
import { sdfSamples, type SdfSampleOptions } from '../pose/sdfSamples.js';

export interface SdfThreadInput {
  positions: Float32Array;
  triangles: Uint32Array;
  options: SdfSampleOptions;
}

export type SdfThreadOutput =
  | { type: 'result'; points: Float32Array; sdf: Float32Array; nearCount: number }
  | { type: 'error'; code: string | null; message: string };

function main(): void {
  const port = parentPort;
  if (!port) throw new Error('sdfSamplesWorker.ts runs only as a worker thread');
  const { positions, triangles, options } = workerData as SdfThreadInput;
  let message: SdfThreadOutput;
  try {
    const { points, sdf, nearCount } = sdfSamples(positions, triangles, options);
    message = { type: 'result', points, sdf, nearCount };
    port.postMessage(message, [points.buffer as ArrayBuffer, sdf.buffer as ArrayBuffer]);
  } catch (err) {
    message = { type: 'error', code: err instanceof AutoRigError ? err.code : null, message: (err as Error).message };
    port.postMessage(message);
  }
}

main();
