/**
 * Entry of the helper thread that draws meshes' SDF samples (pose/sdfSamplesBeside.ts), so that Apply Latent Pose
 * reads a mesh's shape on a second core while its own thread runs the auto-rig. It answers each request, with the
 * samples or the error, and stays for the next one: kept, its compiled code stays warm.
 */
import { parentPort } from 'node:worker_threads';
import { AutoRigError } from '../errors.js';
import { sdfSamples, type SdfSampleOptions } from '../pose/sdfSamples.js';

export interface SdfThreadInput {
  id: number;
  positions: Float32Array;
  triangles: Uint32Array;
  options: SdfSampleOptions;
}

export type SdfThreadOutput =
  | { id: number; type: 'result'; points: Float32Array; sdf: Float32Array; nearCount: number }
  | { id: number; type: 'error'; code: string | null; message: string };

function main(): void {
  const port = parentPort;
  if (!port) throw new Error('sdfSamplesWorker.ts runs only as a worker thread');
  port.on('message', ({ id, positions, triangles, options }: SdfThreadInput) => {
    try {
      const { points, sdf, nearCount } = sdfSamples(positions, triangles, options);
      const message: SdfThreadOutput = { id, type: 'result', points, sdf, nearCount };
      port.postMessage(message, [points.buffer as ArrayBuffer, sdf.buffer as ArrayBuffer]);
    } catch (err) {
      const message: SdfThreadOutput = { id, type: 'error', code: err instanceof AutoRigError ? err.code : null, message: (err as Error).message };
      port.postMessage(message);
    }
  });
}

main();
