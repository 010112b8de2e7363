/**
 * A one-shot command's model thread (sidecar/cli/modelThread.ts): while it is open this thread's loadModel/runModel go
 * to it and give what a session of our own gives; closed, they run here again.
 */
import { describe, expect, it } from 'vitest';
import { modelPath } from '../sidecar/learned/modelFiles.js';
import { loadModel, runModel } from '../sidecar/learned/onnxSession.js';
import { startModelThread } from '../sidecar/cli/modelThread.js';

/** A fixed joints2d input: a filled ellipse in the silhouette channel. */
function fixedImage(size = 128): Float32Array {
  const x = new Float32Array(5 * size * size);
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      const u = (c - size / 2) / (size / 5), v = (r - size / 2) / (size / 2.3);
      x[r * size + c] = u * u + v * v < 1 ? 1 : 0;
    }
  }
  return x;
}

describe('startModelThread', { timeout: 60_000 }, () => {
  it('loads the models it is given on its thread, runs this thread\'s models there with the same outputs, and hands them back when closed', async () => {
    const feeds = { image: { data: fixedImage(), dims: [1, 5, 128, 128] } };
    const thread = await startModelThread(['joints2d']);
    let hosted;
    try {
      hosted = await runModel(await loadModel(modelPath('joints2d')), feeds);
      // the load started by startModelThread and this one are the thread's one session; the run was its
      expect(await thread.stats()).toEqual({ loads: 1, runs: 1 });
      thread.warm(['latentPoseEncoder']);
      await loadModel(modelPath('latentPoseEncoder'));
      expect((await thread.stats()).loads).toBe(2);
    } finally {
      await thread.close();
    }
    const local = await runModel(await loadModel(modelPath('joints2d')), feeds);
    expect(local.coords.dims).toEqual([1, 23, 2]);
    expect(Array.from(hosted.coords.data as Float32Array)).toEqual(Array.from(local.coords.data as Float32Array));
    // closed: asking it is an error, not a hang
    await expect(thread.stats()).rejects.toThrow();
  });
});
