/**
 * A session runs once as it loads, at the sizes of the path that runs it most (MODEL_FIRST_RUN_SIZES), so that a
 * request's first run is not onnxruntime's slow first one: the sizes are the apply path's, every named dimension of
 * those models is covered (else the run would be skipped), and the run leaves the session's answers unchanged.
 */
import ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { POSE_SDF_SAMPLES } from '../sidecar/data/poses/poseSample.js';
import { MODEL_FILES, MODEL_FIRST_RUN_SIZES, modelNameOfFile, modelPath, type ModelName } from '../sidecar/learned/modelFiles.js';
import { loadModel, runModel, runOnceAtSizes, sessionOptions } from '../sidecar/learned/onnxSession.js';
import { POSE_SKIN_STAGE } from '../sidecar/pose/applyLatentPose.js';
import { POINT_RIG_POINTS } from '../sidecar/skinning/learnedSkinning.js';

describe('a model\'s first run at load', () => {
  it('is sized as Apply Latent Pose runs the models: one cloud of POINT_RIG_POINTS, POSE_SDF_SAMPLES samples', () => {
    expect(MODEL_FIRST_RUN_SIZES.pointRig).toEqual({ batch: POSE_SKIN_STAGE.clouds, points: POINT_RIG_POINTS });
    expect(MODEL_FIRST_RUN_SIZES.latentPoseEncoder).toEqual({ batch: 1, samples: POSE_SDF_SAMPLES });
    expect(modelNameOfFile(MODEL_FILES.pointRig)).toBe('pointRig');
    expect(modelNameOfFile('something.onnx')).toBeNull();
  });

  it('covers every named dimension of the committed models it sizes, so that each of them runs at load', async () => {
    for (const [name, sizes] of Object.entries(MODEL_FIRST_RUN_SIZES) as [ModelName, Record<string, number>][]) {
      const session = await ort.InferenceSession.create(modelPath(name));
      let runs = 0;
      const counting = { inputMetadata: session.inputMetadata, run: (feeds: Parameters<typeof session.run>[0]) => { runs++; return session.run(feeds); } };
      expect(await runOnceAtSizes(counting, ort, sizes), name).toBe(true);
      expect(runs, name).toBe(1);
      // a dimension the sizes lack: no run (a stand-in model of other inputs loads as before)
      const partial = Object.fromEntries(Object.entries(sizes).slice(1));
      const named = session.inputMetadata.some((m) => m.isTensor && m.shape.some((d) => d === Object.keys(sizes)[0]));
      expect(await runOnceAtSizes(counting, ort, partial), name).toBe(!named);
      await session.release();
    }
    expect(await runOnceAtSizes({ inputMetadata: [], run: () => Promise.reject(new Error('never')) }, ort, undefined)).toBe(false);
  });

  it('creates sessions whose waiting threads sleep (no spinning) and plan no memory pattern, options onnxruntime-node takes', async () => {
    const options = sessionOptions('cpu');
    expect(options.executionProviders).toEqual(['cpu']);
    expect(options.enableMemPattern).toBe(false);
    expect(options.extra).toEqual({ session: { intra_op: { allow_spinning: '0' } } });
    // the binding rejects a config entry that is not a string, so a typo in the shape fails here, not at a user's
    await expect(ort.InferenceSession.create(modelPath('latentPoseDecoder'), { ...options, extra: { session: { intra_op: { allow_spinning: 0 } } } })).rejects.toThrow(/string/);
    const session = await ort.InferenceSession.create(modelPath('latentPoseDecoder'), options);
    expect(session.inputNames.length).toBeGreaterThan(0);
    await session.release();
  });

  it('leaves the answers as they are: point_rig after its first run answers as a session that never ran', async () => {
    // a plain session (onnxruntime's defaults, spinning threads) against ours (sessionOptions, then the first run)
    const fresh = await ort.InferenceSession.create(modelPath('pointRig'));
    const N = 512;
    const points = Float32Array.from({ length: N * 3 }, (_, i) => Math.cos(i * 0.37) * 0.4);
    const normals = Float32Array.from({ length: N * 3 }, (_, i) => Math.sin(i * 0.91));
    const joints = Float32Array.from({ length: 69 }, (_, i) => Math.cos(i) * 0.3);
    const expected = await fresh.run({
      points: new ort.Tensor(points, [1, N, 3]), normals: new ort.Tensor(normals, [1, N, 3]), joints: new ort.Tensor(joints, [1, 23, 3]),
    });
    const loaded = await loadModel(modelPath('pointRig'));
    const got = await runModel(loaded, {
      points: { data: points, dims: [1, N, 3] }, normals: { data: normals, dims: [1, N, 3] }, joints: { data: joints, dims: [1, 23, 3] },
    });
    expect(Object.keys(got).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, tensor] of Object.entries(expected)) {
      expect(Array.from(got[name].data as Float32Array), name).toEqual(Array.from(tensor.data as Float32Array));
    }
    await fresh.release();
  });
});
