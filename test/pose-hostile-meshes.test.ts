/**
 * Apply Latent Pose and its read ahead (pose.prepare) on the meshes that hostile-meshes.test.ts gives the rig: what the
 * rig refuses they refuse with the same code, before any model runs; a messy or moved humanoid still poses, the pose
 * moving with the mesh. The committed models (models/latent_pose_*, the auto-rig's) pose these: they are always there.
 */
import { describe, expect, it } from 'vitest';
import { applyLatentPose, prepareLatentPose } from '../sidecar/pose/applyLatentPose.js';
import type { MeshPart } from '../sidecar/types.js';
import { notHumanoidShapes, refusedMeshes } from './fixtures/hostileCases.js';
import {
  IDENTITY, applySimilarity, axisRotation, transformParts, triangleSoup, withDuplicateVertices, withShiftedCopy, type Similarity,
} from './fixtures/hostileMeshes.js';
import { makeHumanoid } from './fixtures/humanoid.js';

const HEIGHT = 1.8;
const POSE = 'elbowBentLf';

/** The error an apply or a prepare of `parts` rejects with: { code, message }, or code 'none' when it succeeds. */
async function failure(run: () => Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await run();
  } catch (err) {
    return { code: (err as { code?: string }).code ?? `not an AutoRigError: ${String(err)}`, message: (err as Error).message };
  }
  return { code: 'none', message: '' };
}

/**
 * How far the left hand's end (+x, the humanoid's own left) and the rest of the body (right arm and legs: x < 0.2,
 * everything below the shoulders) moved at most, as a fraction of `scale` × HEIGHT. rest and posed: vertices #V*3.
 */
function motions(rest: Float32Array, posed: Float32Array, t: Similarity = IDENTITY): { leftHand: number; still: number } {
  let leftHand = 0, still = 0;
  for (let v = 0; v < rest.length / 3; v++) {
    // the vertex's place in the humanoid's own frame: undo the similarity's translation, rotation and scale
    const d = [0, 1, 2].map((k) => (rest[3 * v + k] - t.translation[k]) / t.scale);
    const own = [0, 1, 2].map((k) => t.rotation[k] * d[0] + t.rotation[3 + k] * d[1] + t.rotation[6 + k] * d[2]);
    const moved = Math.hypot(posed[3 * v] - rest[3 * v], posed[3 * v + 1] - rest[3 * v + 1], posed[3 * v + 2] - rest[3 * v + 2]) / (t.scale * HEIGHT);
    if (own[0] > 0.75) leftHand = Math.max(leftHand, moved);
    else if (own[0] < 0.2 && own[2] < 1.3) still = Math.max(still, moved);
  }
  return { leftHand, still };
}

describe('Apply Latent Pose refuses what the rig refuses, with the same codes', { timeout: 120_000 }, () => {
  it('the meshes no job can read: the same code from the apply and the read ahead', async () => {
    for (const [name, make, code] of refusedMeshes()) {
      expect((await failure(() => applyLatentPose(make(), { pose: POSE }))).code, name).toBe(code);
      expect((await failure(() => prepareLatentPose(make()))).code, `${name} (prepare)`).toBe(code);
    }
  });

  it('shapes that are no standing humanoid: NOT_HUMANOID, saying why', async () => {
    for (const [name, make, why] of notHumanoidShapes()) {
      const { code, message } = await failure(() => applyLatentPose(make(), { pose: POSE }));
      expect(code, name).toBe('NOT_HUMANOID');
      expect(message, name).toMatch(why);
    }
  });
});

describe('Apply Latent Pose on a messy or moved humanoid', { timeout: 120_000 }, () => {
  const humanoid = makeHumanoid();
  let clean: Float32Array;

  it('poses the clean humanoid: the left hand moves, the right arm and the legs stay', async () => {
    clean = (await applyLatentPose(humanoid, { pose: POSE })).objects[0].positions;
    const { leftHand, still } = motions(humanoid[0].positions, clean);
    expect(leftHand).toBeGreaterThan(0.1);
    expect(still).toBeLessThan(0.005);
  });

  it('turned, lying, scaled or far away: the pose turns, scales and moves with the mesh', async () => {
    // [name, similarity, largest distance from the clean pose carried by the similarity, as a fraction of the height]
    // Quarter turns are exact. Scalings by 1e±3 are not exact in binary (measured 6e-6 and 1e-5); 10 km from the
    // origin float32 coordinates are 1 mm apart and the frame's pixel decisions move a little (measured 1.1e-2).
    const cases: [string, Similarity, number][] = [
      ['lying on its back (90° about x)', { ...IDENTITY, rotation: axisRotation(0, 90) }, 0],
      ['lying on its side (90° about y)', { ...IDENTITY, rotation: axisRotation(1, 90) }, 0],
      ['upside down (180° about y)', { ...IDENTITY, rotation: axisRotation(1, 180) }, 0],
      ['scaled by 1e-3 (millimetres read as metres)', { ...IDENTITY, scale: 1e-3 }, 1e-4],
      ['scaled by 1e3', { ...IDENTITY, scale: 1e3 }, 1e-4],
      ['10 km from the origin', { ...IDENTITY, translation: [1e4, 1e4, 1e4] }, 0.02],
    ];
    for (const [name, t, tolerance] of cases) {
      const moved = transformParts(humanoid, t);
      const posed = (await applyLatentPose(moved, { pose: POSE })).objects[0].positions;
      let worst = 0;
      for (let v = 0; v < posed.length / 3; v++) {
        const expected = applySimilarity(clean.subarray(3 * v, 3 * v + 3), t);
        worst = Math.max(worst, Math.hypot(posed[3 * v] - expected[0], posed[3 * v + 1] - expected[1], posed[3 * v + 2] - expected[2]));
      }
      expect(worst / (t.scale * HEIGHT), name).toBeLessThanOrEqual(tolerance);
      expect(motions(moved[0].positions, posed, t).leftHand, name).toBeGreaterThan(0.1);
    }
  });

  it('duplicate vertices, a triangle soup, a self-intersecting copy: the left hand moves as much as the clean one\'s, the rest stays', async () => {
    const reference = motions(humanoid[0].positions, clean).leftHand;
    const cases: [string, MeshPart[]][] = [
      ['duplicate vertices (every other triangle on a copy)', [withDuplicateVertices(humanoid[0])]],
      ['a triangle soup (no vertex shared)', [triangleSoup(humanoid[0])]],
      ['self-intersecting (the body crossed by a copy shifted by 1 cm)', withShiftedCopy(humanoid, [0.01, 0.012, 0.008])],
    ];
    for (const [name, parts] of cases) {
      const posed = (await applyLatentPose(parts, { pose: POSE })).objects;
      expect(posed.map((o) => o.positions.length), name).toEqual(parts.map((p) => p.positions.length));
      const each = parts.map((p, k) => motions(p.positions, posed[k].positions));
      const leftHand = Math.max(...each.map((m) => m.leftHand)), still = Math.max(...each.map((m) => m.still));
      expect(Math.abs(leftHand - reference) / reference, name).toBeLessThan(0.05);
      expect(still, name).toBeLessThan(0.005);
    }
  });
});
