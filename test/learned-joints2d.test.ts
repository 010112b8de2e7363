/**
 * The learned 2D joint predictor (models/joints2d.onnx) in the sidecar: the network's input image, the committed model
 * against PyTorch's stored output (models/joints2d.check.json, written by models/training/train_joints2d.py), and the
 * hybrid method on procedural characters the model never trained on (seeds outside the training set's),
 * whose true joints are known.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { makeTrainingSample } from '../sidecar/data/trainingSample.js';
import { findCanonicalFrame, toCanonical } from '../sidecar/mesh/canonicalFrame.js';
import { bodyTriangles } from '../sidecar/mesh/debris.js';
import { mergeParts } from '../sidecar/mesh/mergeParts.js';
import { FRONT_VIEW_RESOLUTION } from '../sidecar/skeleton/estimateSkeleton.js';
import { renderFrontView } from '../sidecar/skeleton/frontView.js';
import { predictJoints2D } from '../sidecar/skeleton/learnedJoints2d.js';
import { modelPath } from '../sidecar/learned/modelFiles.js';
import { loadModel, runModel } from '../sidecar/learned/onnxSession.js';
import { rigCharacter, rigCharacterAsync } from '../sidecar/pipeline.js';
import type { FrontView } from '../sidecar/skeleton/frontView.js';
import { canonicalToImage, frontViewImage, imageToCanonical } from '../sidecar/skeleton/frontViewImage.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';

const MODEL = modelPath('joints2d');
const CHECK = MODEL.replace(/\.onnx$/, '.check.json');

/** check_input() of models/training/train_joints2d.py, computed the same way (float64, then float32). */
function checkInput(size = 128): Float32Array {
  const x = new Float32Array(5 * size * size);
  const n = size * size;
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      const u = (c - size / 2) / (size / 4), v = (r - size / 2) / (size / 2.2);
      const inside = u * u + v * v < 1 ? 1 : 0;
      const q = r * size + c;
      x[q] = inside;
      x[n + q] = inside * (0.1 * Math.cos(0.05 * c) * Math.cos(0.03 * r));
      x[2 * n + q] = inside * (-0.1 + 0.02 * Math.sin(0.07 * r + 0.01 * c));
      x[3 * n + q] = inside * 0.3 * Math.sin(0.11 * c);
      x[4 * n + q] = inside * 0.3 * Math.cos(0.13 * r);
    }
  }
  return x;
}

describe('front view image', () => {
  it('averages the view down, flips rows to image order and keeps depth where covered', () => {
    const res = 4;
    const mask = new Uint8Array(res * res);
    const zFront = new Float32Array(res * res).fill(-Infinity);
    const zBack = new Float32Array(res * res).fill(Infinity);
    // cover the bottom-left 2x2 block (view rows count from the bottom) with front 0.2, back -0.1
    for (const p of [0, 1, 4, 5]) { mask[p] = 1; zFront[p] = 0.2; zBack[p] = -0.1; }
    mask[15] = 1; zFront[15] = 0.4; zBack[15] = 0.0; // one pixel of the top-right block
    const view: FrontView = { res, mask, zFront, zBack };
    const img = frontViewImage(view, 2);
    const n = 4;
    // image row 0 is the top: top-right block is image (row 0, col 1), bottom-left is (row 1, col 0)
    expect(Array.from(img.subarray(0, n))).toEqual([0, 0.25, 1, 0]);
    expect(img[n + 2]).toBeCloseTo(0.2, 6);
    expect(img[2 * n + 2]).toBeCloseTo(-0.1, 6);
    expect(img[n + 1]).toBeCloseTo(0.4, 6);
    expect(img[n + 0]).toBe(0);
    expect(() => frontViewImage(view, 3)).toThrow(/cannot be averaged/);
  });

  it('maps canonical points to image pixels and back', () => {
    for (const [x, y] of [[-0.5, 0.5], [0, 0], [0.31, -0.27]] as const) {
      const [c, r] = canonicalToImage(x, y, 128);
      const [x2, y2] = imageToCanonical(c, r, 128);
      expect(x2).toBeCloseTo(x, 12);
      expect(y2).toBeCloseTo(y, 12);
    }
    // the top-left pixel centre of the image is the top-left of the canonical box plus half a pixel
    expect(imageToCanonical(0, 0, 128)).toEqual([-0.5 + 0.5 / 128, 0.5 - 0.5 / 128]);
  });
});

describe('joints2d.onnx', () => {
  it('is committed with its model card and check file', () => {
    expect(existsSync(MODEL), MODEL).toBe(true);
    expect(existsSync(MODEL.replace(/\.onnx$/, '.md'))).toBe(true);
    expect(readFileSync(MODEL).byteLength).toBeLessThan(50e6);
  });

  it('reproduces the PyTorch output it was exported with within 1e-4', async () => {
    const check = JSON.parse(readFileSync(CHECK, 'utf8')) as { coords: number[]; confidence: number[] };
    const session = await loadModel(MODEL);
    const out = await runModel(session, { image: { data: checkInput(), dims: [1, 5, 128, 128] } });
    const coords = Array.from(out.coords.data as Float32Array);
    const confidence = Array.from(out.confidence.data as Float32Array);
    expect(out.coords.dims).toEqual([1, MIXAMO_JOINTS.length, 2]);
    expect(coords.length).toBe(check.coords.length);
    const worst = Math.max(...coords.map((v, i) => Math.abs(v - check.coords[i])), ...confidence.map((v, i) => Math.abs(v - check.confidence[i])));
    expect(worst).toBeLessThan(1e-4);
  });
});

describe('joints2d and the hybrid method on unseen procedural characters', () => {
  // Training data uses `npm run data` seeds; these come from a different stream (the generator's own seeds 9_000_00x).
  const seeds = [9_000_001, 9_000_002, 9_000_003];
  for (const seed of seeds) {
    it(`seed ${seed}: 2D joints and hybrid joints land near the truth, no farther than the geometric ones by much`, async () => {
      const character = generateProceduralHumanoid(seed, { targetVertices: 20_000 });
      const parts = character.parts.map((p) => ({ name: p.name, positions: p.positions, triangles: p.triangles }));
      // the network alone: its 2D joints against the true joints seen in the same canonical frame
      const sample = makeTrainingSample(character, 1);
      const mesh = mergeParts(parts);
      const body = bodyTriangles(mesh.positions, mesh.triangles);
      const cf = findCanonicalFrame(mesh.positions, body);
      const view = renderFrontView(toCanonical(mesh.positions, cf), body, FRONT_VIEW_RESOLUTION);
      const prediction = await predictJoints2D(await loadModel(MODEL), view);
      let error2d = 0;
      MIXAMO_JOINTS.forEach((_, j) => {
        error2d += Math.hypot(prediction.xy[2 * j] - sample.joints[3 * j], prediction.xy[2 * j + 1] - sample.joints[3 * j + 1]);
      });
      // mean 2D error under 2.5% of the canonical box (~3 px of 128; a joint on the wrong body part is ≥ 10%)
      expect(error2d / MIXAMO_JOINTS.length).toBeLessThan(0.025);

      // feet stand at y = 0, so the highest joint (HeadTop_End) gives the height
      const height = Math.max(...Array.from(character.joints).filter((_, i) => i % 3 === 1));
      const error = (heads: [number, number, number][]) => {
        let sum = 0;
        MIXAMO_JOINTS.forEach((_, j) => {
          const t = character.joints.subarray(3 * j, 3 * j + 3);
          sum += Math.hypot(heads[j][0] - t[0], heads[j][1] - t[1], heads[j][2] - t[2]);
        });
        return sum / MIXAMO_JOINTS.length / height;
      };
      const hybrid = await rigCharacterAsync(parts, { method: 'hybrid', prefix: false });
      expect(hybrid.method).toBe('hybrid');
      expect(hybrid.provider).toBe('cpu');
      expect(hybrid.skeleton.joints.map((j) => j.name)).toEqual([...MIXAMO_JOINTS]);
      const eHybrid = error(hybrid.skeleton.joints.map((j) => j.head));
      // mean joint error under 6% of the height (a wrong limb or a joint on the wrong body part is ~15–30%)
      expect(eHybrid).toBeLessThan(0.06);
      let eGeometric = Infinity;
      try { eGeometric = error(rigCharacter(parts, { prefix: false }).skeleton.joints.map((j) => j.head)); } catch { /* refused shapes count as failures */ }
      expect(eHybrid).toBeLessThan(eGeometric + 0.02);
      // hybrid weights come from the voxel skinning: rows sum to one
      for (const o of hybrid.objects) {
        for (let v = 0; v < o.weights.length / 4; v++) {
          const s = o.weights[4 * v] + o.weights[4 * v + 1] + o.weights[4 * v + 2] + o.weights[4 * v + 3];
          expect(Math.abs(s - 1)).toBeLessThan(1e-4);
        }
      }
    }, 60_000);
  }

  it('refuses unknown methods and learned skinning with BAD_REQUEST', async () => {
    const character = generateProceduralHumanoid(9_000_004, { targetVertices: 20_000 });
    await expect(rigCharacterAsync(character.parts, { method: 'magic' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect(() => rigCharacter(character.parts, { method: 'learned' })).toThrow(/rigCharacterAsync/);
  });

  it('answers MODEL_MISSING when the model folder lacks the model', async () => {
    const before = process.env.AUTORIG_MODELS;
    process.env.AUTORIG_MODELS = '/nonexistent-autorig-models';
    try {
      const character = generateProceduralHumanoid(9_000_005, { targetVertices: 20_000 });
      await expect(rigCharacterAsync(character.parts, { method: 'learned' })).rejects.toMatchObject({ code: 'MODEL_MISSING' });
    } finally {
      if (before === undefined) delete process.env.AUTORIG_MODELS; else process.env.AUTORIG_MODELS = before;
    }
  }, 60_000);
});
