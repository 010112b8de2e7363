/**
 * Pose Correctives, sidecar side (issue 7): the key poses read from a skeleton, the rest-space offsets
 * o = A⁻¹ (DQS − LBS), and the bake over a real dev character. Outcomes: LBS of the rest mesh plus the offsets lands on
 * dual-quaternion skinning at the key pose; vertices a single bone moves get no offset; on a dev character the elbow
 * key corrects the elbow and leaves the other arm and the legs alone; bad input is refused with its code.
 */
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bakeCorrectives, previewCorrectives, type CorrectiveKey } from '../sidecar/correctives/bakeCorrectives.js';
import { boneRestFrame } from '../sidecar/correctives/boneRestFrame.js';
import { correctiveOffsets } from '../sidecar/correctives/correctiveOffsets.js';
import { keyPoseRotations, keyPoses, KEY_POSE_NAMES } from '../sidecar/correctives/keyPoses.js';
import { dualQuaternionSkinning } from '../sidecar/deform/dualQuaternionSkinning.js';
import { linearBlendSkinning, poseTransforms, restSkeleton } from '../sidecar/deform/linearBlendSkinning.js';
import { AutoRigError } from '../sidecar/errors.js';
import { loadCharacter, type Character } from '../sidecar/io/character.js';
import { rigWeights, skeletonFromRig } from '../sidecar/io/rigSkeleton.js';
import { rollTowards } from '../sidecar/skeleton/boneRoll.js';
import type { PartWeights, Skeleton, Vec3 } from '../sidecar/types.js';

const DEV_CHARACTER = resolve(import.meta.dirname, '../../shared/data/characters/mixamo_ely.glb');

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (err instanceof AutoRigError) return err.code;
    throw err;
  }
  return 'NO ERROR';
}

/** The code of the AutoRigError `run`'s promise rejects with (or it throws). */
async function codeOfAsync(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (err) {
    if (err instanceof AutoRigError) return err.code;
    throw err;
  }
  return 'NO ERROR';
}

/** Largest per-vertex distance between two #V*3 arrays. */
function maxDistance(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let v = 0; v < a.length / 3; v++) {
    worst = Math.max(worst, Math.hypot(a[3 * v] - b[3 * v], a[3 * v + 1] - b[3 * v + 1], a[3 * v + 2] - b[3 * v + 2]));
  }
  return worst;
}

/** A cylinder along +x from 0 to 2 (radius 0.25), weighted to bone 0 below x = 0.7, bone 1 above 1.3, blended between. */
function bentCylinder(): { positions: Float32Array; indices: Uint16Array; weights: Float32Array; heads: Float64Array; parents: Int32Array } {
  const rings = 41, around = 24;
  const positions = new Float32Array(rings * around * 3);
  const indices = new Uint16Array(rings * around * 2);
  const weights = new Float32Array(rings * around * 2);
  for (let r = 0; r < rings; r++) {
    const x = (2 * r) / (rings - 1);
    const t = Math.min(1, Math.max(0, (x - 0.7) / 0.6));
    const w1 = t * t * (3 - 2 * t);
    for (let a = 0; a < around; a++) {
      const v = r * around + a;
      const angle = (2 * Math.PI * a) / around;
      positions.set([x, 0.25 * Math.cos(angle), 0.25 * Math.sin(angle)], v * 3);
      indices.set([0, 1], v * 2);
      weights.set([1 - w1, w1], v * 2);
    }
  }
  return { positions, indices, weights, heads: Float64Array.of(0, 0, 0, 1, 0, 0), parents: Int32Array.of(-1, 0) };
}

/** Rotation by `degrees` about the unit axis, row-major. */
function turn(axis: Vec3, degrees: number): number[] {
  const [x, y, z] = axis;
  const r = (degrees * Math.PI) / 180, c = Math.cos(r), s = Math.sin(r), t = 1 - c;
  return [c + t * x * x, t * x * y - s * z, t * x * z + s * y, t * x * y + s * z, c + t * y * y, t * y * z - s * x, t * x * z - s * y, t * y * z + s * x, c + t * z * z];
}

describe('correctiveOffsets on a bent cylinder with two bones', () => {
  const cylinder = bentCylinder();
  for (const degrees of [45, 90, 135]) {
    it(`makes LBS(rest + offset) equal DQS at a ${degrees}° bend, and is zero where one bone has all the weight`, () => {
      const { positions, indices, weights, heads, parents } = cylinder;
      const transforms = poseTransforms(heads, parents, Float64Array.from([...turn([1, 0, 0], 0), ...turn([0, 0, 1], degrees)]));
      const dqs = dualQuaternionSkinning(positions, indices, weights, 2, transforms);
      const offsets = correctiveOffsets(positions, indices, weights, 2, transforms, dqs);
      const corrected = linearBlendSkinning(positions.map((p, i) => p + offsets[i]), indices, weights, 2, transforms);
      expect(maxDistance(corrected, dqs)).toBeLessThan(1e-5);
      // the static LBS is really off (the collapsing elbow), so the offsets do something
      const lbs = linearBlendSkinning(positions, indices, weights, 2, transforms);
      expect(maxDistance(lbs, dqs)).toBeGreaterThan(0.01);
      let blended = 0, single = 0;
      for (let v = 0; v < positions.length / 3; v++) {
        const size = Math.hypot(offsets[3 * v], offsets[3 * v + 1], offsets[3 * v + 2]);
        if (weights[2 * v] === 1 || weights[2 * v + 1] === 1) single = Math.max(single, size);
        else blended = Math.max(blended, size);
      }
      expect(single).toBeLessThan(1e-6);
      expect(blended).toBeGreaterThan(0.01);
    });
  }

  it('stays finite and bounded where the blend is near singular (two bones half and half, 178° apart)', () => {
    const { positions, indices, heads, parents } = cylinder;
    const half = new Float32Array(indices.length).fill(0.5);
    const transforms = poseTransforms(heads, parents, Float64Array.from([...turn([1, 0, 0], 0), ...turn([0, 0, 1], 178)]));
    const dqs = dualQuaternionSkinning(positions, indices, half, 2, transforms);
    const offsets = correctiveOffsets(positions, indices, half, 2, transforms, dqs);
    expect(offsets.every(Number.isFinite)).toBe(true);
    // the exact inverse would scale the difference by up to 1/cos(89°) ≈ 57; the damped solve keeps it near the difference
    const lbs = linearBlendSkinning(positions, indices, half, 2, transforms);
    expect(maxDistance(offsets, new Float32Array(offsets.length))).toBeLessThan(10 * maxDistance(lbs, dqs));
  });

  it('refuses arrays that do not fit', () => {
    const { positions, indices, weights, heads, parents } = cylinder;
    const transforms = poseTransforms(heads, parents, Float64Array.from([...turn([1, 0, 0], 0), ...turn([0, 0, 1], 90)]));
    expect(codeOf(() => correctiveOffsets(positions, indices, weights, 2, transforms, new Float32Array(3)))).toBe('BAD_ARRAY');
    expect(codeOf(() => correctiveOffsets(positions, indices.subarray(2), weights, 2, transforms, positions))).toBe('BAD_ARRAY');
  });
});

describe('boneRestFrame: Blender bone axes', () => {
  it('matches Blender for a bone along +Y and along +Z, and is right-handed', () => {
    const along = boneRestFrame([0, 0, 0], [0, 2, 0], 0);
    expect(along.x.map((c) => c + 0)).toEqual([1, 0, 0]);
    expect(along.z.map((c) => c + 0)).toEqual([0, 0, 1]);
    const up = boneRestFrame([0, 0, 0], [0, 0, 1], 0);
    for (const [got, want] of [[up.x, [1, 0, 0]], [up.y, [0, 0, 1]], [up.z, [0, -1, 0]]] as const) {
      got.forEach((c, i) => expect(c).toBeCloseTo(want[i], 12));
    }
  });

  it('turns z where boneRoll.rollTowards says the roll turns it', () => {
    const head: Vec3 = [0.1, 0.2, 1.4], tail: Vec3 = [0.5, 0.15, 1.35];
    const wanted: Vec3 = [0.2, -1, 0.3];
    const frame = boneRestFrame(head, tail, rollTowards(head, tail, wanted));
    const along = frame.y;
    const d = wanted[0] * along[0] + wanted[1] * along[1] + wanted[2] * along[2];
    const projected = wanted.map((c, i) => c - d * along[i]);
    const n = Math.hypot(...projected);
    frame.z.forEach((c, i) => expect(c).toBeCloseTo(projected[i] / n, 9));
    const cross = [
      frame.y[1] * frame.z[2] - frame.y[2] * frame.z[1], frame.y[2] * frame.z[0] - frame.y[0] * frame.z[2], frame.y[0] * frame.z[1] - frame.y[1] * frame.z[0],
    ];
    cross.forEach((c, i) => expect(c).toBeCloseTo(frame.x[i], 12));
  });
});

describe('on a dev character (mixamo_ely.glb, its own rig and weights)', { timeout: 120_000 }, () => {
  let character: Character;
  let skeleton: Skeleton;
  let weights: PartWeights[];
  let keys: CorrectiveKey[];

  beforeAll(async () => {
    character = await loadCharacter(DEV_CHARACTER);
    skeleton = skeletonFromRig(character.rig!);
    weights = rigWeights(character).map((w) => w!);
    keys = (await bakeCorrectives(character.parts, skeleton, weights, { method: 'dualQuaternion' })).keys;
  });

  const jointIndex = (name: string) => skeleton.joints.findIndex((j) => j.name === `mixamorig:${name}`);

  it('has one key per pose family and side, named <bone>_<pose>, each axis unit in the bone\'s rest frame', () => {
    expect(keys.map((k) => k.name)).toEqual(KEY_POSE_NAMES.flatMap((pose) => (pose === 'spineTwist'
      ? ['mixamorig:Spine1_spineTwist']
      : ['Left', 'Right'].map((side) => {
        const segment = { elbowBend: 'ForeArm', kneeBend: 'Leg', shoulderRaise: 'Arm', shoulderForward: 'Arm', hipFlex: 'UpLeg', wristBend: 'Hand' }[pose];
        return `mixamorig:${side}${segment}_${pose}`;
      }))));
    const degrees = Object.fromEntries(keys.map((k) => [k.pose, Math.round((k.angle * 180) / Math.PI)]));
    expect(degrees).toEqual({ elbowBend: 90, kneeBend: 90, shoulderRaise: 60, shoulderForward: 60, hipFlex: 90, wristBend: 60, spineTwist: 45 });
    const poses = keyPoses(skeleton);
    for (const [n, key] of keys.entries()) {
      expect(Math.hypot(...key.axis)).toBeCloseTo(1, 9);
      // the bone axis back in world space is the key's world axis
      const bone = skeleton.joints[poses[n].joint];
      const frame = boneRestFrame(bone.head, bone.tail, bone.roll);
      const world = [0, 1, 2].map((i) => key.axis[0] * frame.x[i] + key.axis[1] * frame.y[i] + key.axis[2] * frame.z[i]);
      world.forEach((c, i) => expect(c).toBeCloseTo(poses[n].worldAxis[i], 9));
    }
    // an elbow hinges across its forearm, a spine twists along it
    const elbow = keys.find((k) => k.name === 'mixamorig:LeftForeArm_elbowBend')!;
    expect(Math.abs(elbow.axis[1])).toBeLessThan(0.2);
    expect(Math.abs(keys.find((k) => k.pose === 'spineTwist')!.axis[1])).toBeGreaterThan(0.9);
  });

  it('the elbow key: LBS(rest + offset) reaches DQS; offsets near the elbow, none on the other arm or the legs', () => {
    const part = character.parts[0];
    const w = weights[0];
    const key = keys.find((k) => k.name === 'mixamorig:LeftForeArm_elbowBend')!;
    const offsets = key.objects[0].offsets;
    expect(key.objects[0].name).toBe(part.name);
    expect(offsets.length).toBe(part.positions.length);
    const rest = restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
    const transforms = poseTransforms(rest.heads, rest.parents, keyPoseRotations(keyPoses(skeleton, ['elbowBend'])[0], skeleton.joints.length));
    const dqs = dualQuaternionSkinning(part.positions, w.indices, w.weights, w.influences, transforms);
    const corrected = linearBlendSkinning(part.positions.map((p, i) => p + offsets[i]), w.indices, w.weights, w.influences, transforms);
    const heights = part.positions.filter((_, i) => i % 3 === 1);
    const height = Math.max(...heights) - Math.min(...heights);
    expect(maxDistance(corrected, dqs)).toBeLessThan(1e-5 * height);

    const elbow = skeleton.joints[jointIndex('LeftForeArm')].head;
    const still = new Set(['RightShoulder', 'RightArm', 'RightForeArm', 'RightHand', 'LeftUpLeg', 'LeftLeg', 'LeftFoot', 'RightUpLeg', 'RightLeg', 'RightFoot', 'Hips'].map(jointIndex));
    skeleton.joints.forEach((j, i) => {
      if (/Right(Hand|Toe)|Left(Toe)/.test(j.name)) still.add(i);
    });
    let nearElbow = 0, elsewhere = 0, stillCount = 0;
    for (let v = 0; v < part.positions.length / 3; v++) {
      const size = Math.hypot(offsets[3 * v], offsets[3 * v + 1], offsets[3 * v + 2]);
      const p = [part.positions[3 * v], part.positions[3 * v + 1], part.positions[3 * v + 2]];
      if (Math.hypot(p[0] - elbow[0], p[1] - elbow[1], p[2] - elbow[2]) < 0.05 * height) nearElbow = Math.max(nearElbow, size);
      let onlyStill = true;
      for (let s = 0; s < w.influences; s++) {
        if (w.weights[v * w.influences + s] > 0 && !still.has(w.indices[v * w.influences + s])) onlyStill = false;
      }
      if (onlyStill) {
        stillCount++;
        elsewhere = Math.max(elsewhere, size);
      }
    }
    expect(stillCount).toBeGreaterThan(500);
    expect(elsewhere).toBeLessThan(1e-6 * height);
    expect(nearElbow).toBeGreaterThan(1e-3 * height);
  });

  it('previews the current pose: rest → no offsets; the elbow key pose → the elbow key\'s offsets', async () => {
    const J = skeleton.joints.length;
    const identity = keyPoseRotations(keyPoses(skeleton, ['elbowBend'])[0], J, 0);
    const atRest = await previewCorrectives(character.parts, skeleton, weights, Float32Array.from(identity), { method: 'dualQuaternion' });
    expect(Math.max(...atRest.objects[0].offsets.map(Math.abs))).toBeLessThan(1e-6);
    const bent = await previewCorrectives(character.parts, skeleton, weights, keyPoseRotations(keyPoses(skeleton, ['elbowBend'])[0], J), { method: 'dualQuaternion' });
    const baked = keys.find((k) => k.name === 'mixamorig:LeftForeArm_elbowBend')!.objects[0].offsets;
    expect(maxDistance(bent.objects[0].offsets, baked)).toBeLessThan(1e-6);
    expect(bent.method).toBe('dualQuaternion');
  });

  it('picks pose families with options.poses and refuses bad input with its code', async () => {
    const picked = await bakeCorrectives(character.parts, skeleton, weights, { poses: ['kneeBend'], method: 'dualQuaternion' });
    expect(picked.keys.map((k) => k.name)).toEqual(['mixamorig:LeftLeg_kneeBend', 'mixamorig:RightLeg_kneeBend']);
    const bake = (s: Skeleton, w: PartWeights[], options = {}) => () => bakeCorrectives(character.parts, s, w, options);
    expect(await codeOfAsync(bake(skeleton, weights, { poses: ['moonwalk'] }))).toBe('BAD_REQUEST');
    expect(await codeOfAsync(bake(skeleton, weights, { poses: [] }))).toBe('BAD_REQUEST');
    expect(await codeOfAsync(bake(skeleton, weights, { method: 'vinecs' }))).toBe('BAD_REQUEST');
    expect(await codeOfAsync(bake(skeleton, []))).toBe('BAD_ARRAY');
    expect(await codeOfAsync(bake(skeleton, [{ ...weights[0], weights: weights[0].weights.subarray(4) }]))).toBe('BAD_ARRAY');
    expect(await codeOfAsync(bake(skeleton, [{ ...weights[0], name: 'Other' }]))).toBe('BAD_REQUEST');
    const outside = Uint16Array.from(weights[0].indices);
    outside[weights[0].weights.findIndex((x) => x > 0)] = skeleton.joints.length;
    expect(await codeOfAsync(bake(skeleton, [{ ...weights[0], indices: outside }]))).toBe('BAD_INDEX');
    const noElbows = { joints: skeleton.joints.map((j) => (j.name.endsWith('ForeArm') ? { ...j, name: `${j.name}_x` } : j)) };
    expect(await codeOfAsync(bake(noElbows, weights))).toBe('BAD_SKELETON');
    const loop = { joints: skeleton.joints.map((j, i) => (i === 0 ? { ...j, parent: 3 } : j)) };
    expect(await codeOfAsync(bake(loop, weights))).toBe('BAD_SKELETON');
    expect(await codeOfAsync(bake({ joints: [] }, weights))).toBe('BAD_SKELETON');
    const J = skeleton.joints.length;
    expect(await codeOfAsync(() => previewCorrectives(character.parts, skeleton, weights, new Float32Array(J * 9 - 9)))).toBe('BAD_ARRAY');
    const scaled = keyPoseRotations(keyPoses(skeleton, ['elbowBend'])[0], J, 0).map((x) => 2 * x);
    expect(await codeOfAsync(() => previewCorrectives(character.parts, skeleton, weights, scaled))).toBe('BAD_REQUEST');
  });
});
