import { describe, expect, it } from 'vitest';
import { normalisation, normalisePoint, normalisePositions } from '../sidecar/eval/normalise.js';
import { eulerXYZToMatrix, posesForJoints, randomPoses } from '../sidecar/eval/randomPoses.js';
import {
  bonesOf, chamferBoneToBone, chamferJointToBone, chamferJointToJoint, perJointErrors, pointSegmentDistance, sampleBones,
  templateLimb, wrongLimbJoints,
} from '../sidecar/eval/skeletonMetrics.js';
import type { Bone } from '../sidecar/eval/skeletonMetrics.js';
import { deformationError, influencePrecisionRecall, unweightedCount, weightL1 } from '../sidecar/eval/skinningMetrics.js';
import { MIXAMO_JOINTS, MIXAMO_PARENTS } from '../sidecar/skeleton/mixamoTemplate.js';
import type { Vec3 } from '../sidecar/types.js';

const IDENTITY = [1, 0, 0, 0, 1, 0, 0, 0, 1];
const ROT_Z90 = [0, -1, 0, 1, 0, 0, 0, 0, 1];

/** Deterministic numbers for test data (not the module under test's generator). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

describe('normalisation', () => {
  it('centres the box of the triangles\' vertices and scales its longest side to 1, ignoring loose vertices', () => {
    const parts = [
      { name: 'a', positions: new Float32Array([-1, 0, 2, 3, 0, 2, 3, 2, 2, 100, 100, 100]), triangles: new Uint32Array([0, 1, 2]) },
      { name: 'b', positions: new Float32Array([0, 0, 3, 1, 0, 3, 0, 1, 3]), triangles: new Uint32Array([0, 1, 2]) },
    ];
    const n = normalisation(parts);
    expect(n.centre).toEqual([1, 1, 2.5]);
    expect(n.scale).toBe(0.25);
    expect(normalisePoint([3, 2, 3], n)).toEqual([0.5, 0.25, 0.125]);
    expect(Array.from(normalisePositions(parts[0].positions, n).subarray(0, 9))).toEqual([-0.5, -0.25, -0.125, 0.5, -0.25, -0.125, 0.5, 0.25, -0.125]);
  });

  it('refuses a mesh with no triangles or no extent', () => {
    expect(() => normalisation([{ name: 'a', positions: new Float32Array([0, 0, 0]), triangles: new Uint32Array(0) }]))
      .toThrow(expect.objectContaining({ code: 'EMPTY_MESH' }));
    expect(() => normalisation([{ name: 'a', positions: new Float32Array([1, 1, 1]), triangles: new Uint32Array([0, 0, 0]) }]))
      .toThrow(expect.objectContaining({ code: 'EMPTY_MESH' }));
  });
});

/** A T-shaped skeleton in the z = 0 plane: joints at least 1 apart. */
const T_JOINTS: Vec3[] = [[0, 0, 0], [0, 1, 0], [1, 1, 0], [-1, 1, 0], [0, 2, 0]];
const T_PARENTS = [-1, 0, 1, 1, 1];
const shift = (joints: Vec3[], d: Vec3): Vec3[] => joints.map((p) => [p[0] + d[0], p[1] + d[1], p[2] + d[2]]);

describe('skeleton metrics', () => {
  it('scores identical skeletons 0', () => {
    const bones = bonesOf(T_JOINTS, T_PARENTS);
    expect(bones).toHaveLength(4);
    expect(chamferJointToJoint(T_JOINTS, T_JOINTS)).toBe(0);
    expect(chamferJointToBone(T_JOINTS, bones, T_JOINTS, bones)).toBe(0);
    expect(chamferBoneToBone(bones, bones)).toBe(0);
  });

  it('measures a skeleton shifted by d at d', () => {
    const d = 0.1;
    const across = shift(T_JOINTS, [0, 0, d]); // out of the skeleton's plane: every measure is exactly d
    expect(chamferJointToJoint(T_JOINTS, across)).toBeCloseTo(d, 12);
    expect(chamferJointToBone(T_JOINTS, bonesOf(T_JOINTS, T_PARENTS), across, bonesOf(across, T_PARENTS))).toBeCloseTo(d, 12);
    expect(chamferBoneToBone(bonesOf(T_JOINTS, T_PARENTS), bonesOf(across, T_PARENTS))).toBeCloseTo(d, 12);
    const along = shift(T_JOINTS, [d, 0, 0]); // in the plane: joints slide along the arm bones, J2B can only be smaller
    expect(chamferJointToJoint(T_JOINTS, along)).toBeCloseTo(d, 12);
    const j2b = chamferJointToBone(T_JOINTS, bonesOf(T_JOINTS, T_PARENTS), along, bonesOf(along, T_PARENTS));
    expect(j2b).toBeLessThan(d);
    expect(j2b).toBeGreaterThan(0);
  });

  it('computes J2J and J2B by hand for one bone against one bone', () => {
    const aJoints: Vec3[] = [[0, 0, 0], [2, 0, 0]];
    const bJoints: Vec3[] = [[1, 1, 0], [1, 3, 0]];
    const aBones: Bone[] = [[aJoints[0], aJoints[1]]];
    const bBones: Bone[] = [[bJoints[0], bJoints[1]]];
    // a's joints are √2 from b's bone (its end (1,1,0)); b's joints are 1 and 3 from a's bone.
    expect(chamferJointToBone(aJoints, aBones, bJoints, bBones)).toBeCloseTo((Math.SQRT2 + 2) / 2, 12);
    expect(chamferJointToJoint(aJoints, bJoints)).toBeCloseTo((Math.SQRT2 + (Math.SQRT2 + Math.sqrt(10)) / 2) / 2, 12);
    expect(pointSegmentDistance([5, 1, 0], [0, 0, 0], [2, 0, 0])).toBeCloseTo(Math.sqrt(10), 12);
    expect(pointSegmentDistance([1, 1, 0], [0, 0, 0], [0, 0, 0])).toBeCloseTo(Math.SQRT2, 12);
  });

  it('samples bones no farther apart than the spacing, ends included', () => {
    const points = sampleBones([[[0, 0, 0], [1, 0, 0]]], 0.3);
    expect(points.map((p) => p[0])).toEqual([0, 0.25, 0.5, 0.75, 1]);
    // Two parallel unit bones 0.3 apart: every sample's nearest is its twin.
    expect(chamferBoneToBone([[[0, 0, 0], [1, 0, 0]]], [[[0, 0.3, 0], [1, 0.3, 0]]])).toBeCloseTo(0.3, 12);
    // A bone against half of itself: the uncovered half's samples (x in (0.5, 1], spacing 0.005) cost their distance to x = 0.5.
    const half = chamferBoneToBone([[[0, 0, 0], [1, 0, 0]]], [[[0, 0, 0], [0.5, 0, 0]]]);
    const expected = (Array.from({ length: 100 }, (_, i) => (i + 1) * 0.005).reduce((s, x) => s + x, 0) / 201) / 2;
    expect(half).toBeCloseTo(expected, 9);
  });

  it('gives per-joint errors over the joints both skeletons have', () => {
    const result = perJointErrors([[0, 0, 0], [1, 0, 0], null], [[0, 0, 0.2], [1, 0.5, 0], [3, 3, 3]], ['Hips', 'Spine', 'Head']);
    expect(Object.keys(result.perJoint)).toEqual(['Hips', 'Spine']);
    expect(result.perJoint.Hips).toBeCloseTo(0.2, 12);
    expect(result.mean).toBeCloseTo(0.35, 12);
    expect(result.max).toBeCloseTo(0.5, 12);
    expect(result.maxJoint).toBe('Spine');
    expect(() => perJointErrors([null], [[0, 0, 0]], ['Hips'])).toThrow(expect.objectContaining({ code: 'BAD_SKELETON' }));
  });

  it('flags joints that landed nearer another limb than their own', () => {
    const names = ['Hips', 'LeftHand', 'RightHand', 'LeftFoot'];
    const artist: Vec3[] = [[0, 0, 0], [1, 1, 0], [-1, 1, 0], [0.2, -1, 0]];
    const ours: Vec3[] = [
      [0, 0.01, 0], // on its own joint
      [-0.9, 1, 0], // the left hand on the right hand's side
      [-1.04, 1, 0], // within tolerance
      [0.2, -0.6, 0], // 0.4 off, but still nearest its own foot (hips are 0.63 away)
    ];
    expect(wrongLimbJoints(ours, artist, names, templateLimb)).toEqual(['LeftHand']);
    ours[3] = [0.05, -0.3, 0]; // 0.71 from its foot, 0.30 from the hips
    expect(wrongLimbJoints(ours, artist, names, templateLimb)).toEqual(['LeftHand', 'LeftFoot']);
  });

  it('knows the template\'s limb groups', () => {
    expect(templateLimb('mixamorig:LeftShoulder')).toBe('leftArm');
    expect(templateLimb('HeadTop_End')).toBe('trunk');
    expect(templateLimb('RightToeBase')).toBe('rightLeg');
    expect(new Set(MIXAMO_JOINTS.map(templateLimb)).size).toBe(5);
    expect(() => templateLimb('Tail')).toThrow(expect.objectContaining({ code: 'BAD_SKELETON' }));
  });
});

describe('skinning metrics', () => {
  it('computes the L1 of two known rows', () => {
    const oursIdx = new Uint16Array([0, 1, 0, 0, 2, 0]);
    const oursW = new Float32Array([0.7, 0.3, 0, 1, 0, 0]);
    const artistIdx = new Uint16Array([1, 2, 0, 0, 2, 0]);
    const artistW = new Float32Array([0.5, 0.5, 0, 1, 0, 0]);
    // Vertex 0: |0.7| + |0.3 − 0.5| + |0.5| = 1.4. Vertex 1: the same bone → 0.
    expect(weightL1(oursIdx, oursW, artistIdx, artistW, 3, 3)).toBeCloseTo(0.7, 6);
    // An unweighted row against a weighted one costs 1; disjoint bones cost 2.
    expect(weightL1(new Uint16Array([0]), new Float32Array([0]), new Uint16Array([1]), new Float32Array([1]), 1, 2)).toBeCloseTo(1, 12);
    expect(weightL1(new Uint16Array([0]), new Float32Array([1]), new Uint16Array([1]), new Float32Array([1]), 1, 2)).toBeCloseTo(2, 12);
    expect(() => weightL1(new Uint16Array([5]), new Float32Array([1]), new Uint16Array([1]), new Float32Array([1]), 1, 2))
      .toThrow(expect.objectContaining({ code: 'BAD_INDEX' }));
  });

  it('computes precision and recall of influence sets on hand-made rows', () => {
    const oursIdx = new Uint16Array([0, 1, 0, 3, 0, 0]);
    const oursW = new Float32Array([0.5, 0.5, 0.9995, 0.0005, 0, 0]);
    const artistIdx = new Uint16Array([1, 2, 0, 3, 4, 0]);
    const artistW = new Float32Array([0.5, 0.5, 0.5, 0.5, 1, 0]);
    // Vertex 0: O {0,1}, A {1,2} → ½, ½. Vertex 1: O {0} (bone 3 under the threshold), A {0,3} → 1, ½.
    // Vertex 2: we left it unweighted → no precision, recall 0.
    const { precision, recall } = influencePrecisionRecall(oursIdx, oursW, artistIdx, artistW, 2);
    expect(precision).toBeCloseTo(0.75, 12);
    expect(recall).toBeCloseTo(1 / 3, 12);
    // A bone listed in two slots counts once.
    const twice = influencePrecisionRecall(new Uint16Array([2, 2]), new Float32Array([0.5, 0.5]), new Uint16Array([2, 0]), new Float32Array([1, 0]), 2);
    expect(twice).toEqual({ precision: 1, recall: 1 });
  });

  it('counts unweighted vertices', () => {
    expect(unweightedCount(new Float32Array([1, 0, 0, 0, 0.5, 0.5, 1e-7, 0]), 2)).toBe(2);
  });

  const barPositions = new Float32Array([0, 0, 0, 0.5, 0, 0, 1, 0, 0, 1.5, 0, 0, 2, 0, 0]);
  const bar = { heads: new Float64Array([0, 0, 0, 1, 0, 0]), parents: new Int32Array([-1, 0]) };
  const rigid = { indices: new Uint16Array([0, 1, 0, 1, 0, 1, 1, 0, 1, 0]), weights: new Float32Array([1, 0, 1, 0, 0.5, 0.5, 1, 0, 1, 0]) };
  const linear = { indices: new Uint16Array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1]), weights: new Float32Array([1, 0, 0.75, 0.25, 0.5, 0.5, 0.25, 0.75, 0, 1]) };

  it('gives the exact deformation error between two weight sets on the bent bar', () => {
    // Posed rigid: (0.5,0,0) and (1,0.5,0); posed linear: (0.625,−0.125,0) and (1.125,0.375,0): 0.125√2 apart each,
    // the three other vertices agree → mean 0.05√2. The rest pose adds 0 to the average over poses.
    const bend = new Float64Array([...IDENTITY, ...ROT_Z90]);
    const rest = new Float64Array([...IDENTITY, ...IDENTITY]);
    expect(deformationError(barPositions, rigid, bar, linear, bar, [bend])).toBeCloseTo(0.05 * Math.SQRT2, 6);
    expect(deformationError(barPositions, rigid, bar, linear, bar, [bend, rest])).toBeCloseTo(0.025 * Math.SQRT2, 6);
    expect(deformationError(barPositions, rigid, bar, rigid, bar, [bend])).toBe(0);
  });

  it('poses two different skeletons alike through their template indices', () => {
    // B has an extra joint at x = 1.5 that no template joint drives: it follows its parent, so moving the bar's end
    // onto it changes nothing. A's joints are template rows 0 and 1 (implicit); the pose has a third row B ignores.
    const pose = new Float64Array([...IDENTITY, ...ROT_Z90, ...ROT_Z90]);
    const a = { heads: bar.heads, parents: bar.parents, templateIndex: new Int32Array([0, 1]) };
    const b = { heads: new Float64Array([0, 0, 0, 1, 0, 0, 1.5, 0, 0]), parents: new Int32Array([-1, 0, 1]), templateIndex: new Int32Array([0, 1, -1]) };
    const rigidOnB = { indices: new Uint16Array([0, 1, 0, 1, 0, 1, 2, 0, 2, 0]), weights: rigid.weights };
    expect(deformationError(barPositions, rigid, a, rigidOnB, b, [pose])).toBeCloseTo(0, 6);
    // Driving B's extra joint by the third row bends the end further: (2,0,0) → about (1.5,0,0) → (1.5,0.5,0), then
    // about (1,0,0) → (0.5,0.5,0), √½ from A's (1,1,0); the other vertices agree.
    const driven = { ...b, templateIndex: new Int32Array([0, 1, 2]) };
    expect(deformationError(barPositions, rigid, a, rigidOnB, driven, [pose])).toBeCloseTo(Math.SQRT1_2 / 5, 6);
    // Without template indices the pose must fit the skeleton.
    expect(() => deformationError(barPositions, rigid, bar, rigid, bar, [pose])).toThrow(expect.objectContaining({ code: 'BAD_ARRAY' }));
  });

  it('gives 0 for identical weights under any pose (200k vertices × 20 poses)', () => {
    const templateParents = MIXAMO_JOINTS.map((n) => (MIXAMO_PARENTS[n] ? MIXAMO_JOINTS.indexOf(MIXAMO_PARENTS[n]!) : -1));
    const random = lcg(7);
    const heads = new Float64Array(MIXAMO_JOINTS.length * 3).map(() => random() - 0.5);
    const skeleton = { heads, parents: Int32Array.from(templateParents) };
    const vertexCount = 200_000;
    const positions = new Float32Array(vertexCount * 3).map(() => random() - 0.5);
    const indices = new Uint16Array(vertexCount * 4).map(() => Math.floor(random() * MIXAMO_JOINTS.length));
    const weights = new Float32Array(vertexCount * 4).map(() => random());
    const poses = randomPoses(11, 20, MIXAMO_JOINTS.length, 45);
    const same = deformationError(positions, { indices, weights }, skeleton, { indices, weights: weights.slice() }, skeleton, poses);
    expect(same).toBe(0);
    // ... and a different weight set moves the mesh.
    const other = new Float32Array(weights).reverse();
    expect(deformationError(positions, { indices, weights }, skeleton, { indices, weights: other }, skeleton, poses.slice(0, 2))).toBeGreaterThan(0.01);
  });
});

describe('randomPoses', () => {
  /** Euler XYZ angles (R = Rz·Ry·Rx) of a rotation matrix, radians. */
  const eulerOf = (m: ArrayLike<number>, o: number): number[] =>
    [Math.atan2(m[o + 7], m[o + 8]), -Math.asin(m[o + 6]), Math.atan2(m[o + 3], m[o])];

  it('is deterministic for a seed, and differs between seeds', () => {
    const a = randomPoses(42, 10, 23, 45);
    const b = randomPoses(42, 10, 23, 45);
    expect(a).toHaveLength(10);
    expect(a.map((p) => Array.from(p))).toEqual(b.map((p) => Array.from(p)));
    expect(Array.from(randomPoses(43, 1, 23, 45)[0])).not.toEqual(Array.from(a[0]));
    expect(Array.from(a[1])).not.toEqual(Array.from(a[0]));
  });

  it('gives a joint the same rotation whatever the number of poses and joints', () => {
    const few = randomPoses(5, 3, 23, 10);
    const many = randomPoses(5, 6, 40, 10);
    for (let i = 0; i < 3; i++) expect(Array.from(many[i].subarray(0, 23 * 9))).toEqual(Array.from(few[i]));
  });

  it('draws Euler angles uniformly within ±max degrees', () => {
    for (const max of [10, 45]) {
      const angles = randomPoses(1, 20, 23, max).flatMap((pose) => Array.from({ length: 23 }, (_, j) => eulerOf(pose, j * 9)).flat());
      const degrees = angles.map((a) => (a * 180) / Math.PI);
      expect(Math.max(...degrees.map(Math.abs))).toBeLessThanOrEqual(max + 1e-9);
      // 1380 uniform draws: the extremes come near the bounds and the mean near 0.
      expect(Math.max(...degrees)).toBeGreaterThan(0.98 * max);
      expect(Math.min(...degrees)).toBeLessThan(-0.98 * max);
      expect(Math.abs(degrees.reduce((s, d) => s + d, 0) / degrees.length)).toBeLessThan(0.05 * max);
      const inner = degrees.filter((d) => Math.abs(d) < max / 2).length / degrees.length;
      expect(inner).toBeGreaterThan(0.45);
      expect(inner).toBeLessThan(0.55);
    }
  });

  it('builds rotation matrices of Euler XYZ angles', () => {
    const m = eulerXYZToMatrix(0.3, -0.2, 0.1);
    const [x, y, z] = eulerOf(m, 0);
    expect([x, y, z].map((a) => Number(a.toFixed(12)))).toEqual([0.3, -0.2, 0.1]);
    // X first: eulerXYZToMatrix(π/2, 0, π/2) sends y → z (about X) → z (about Z).
    const r = eulerXYZToMatrix(Math.PI / 2, 0, Math.PI / 2);
    expect([r[2], r[5], r[8]].map((v) => Math.round(v) + 0)).toEqual([1, 0, 0]);
    expect([r[1], r[4], r[7]].map((v) => Math.round(v) + 0)).toEqual([0, 0, 1]);
  });

  it('picks template rows for a skeleton, identity where it has none', () => {
    const pose = randomPoses(3, 1, 23, 45)[0];
    const picked = posesForJoints(pose, [4, -1]);
    expect(Array.from(picked.subarray(0, 9))).toEqual(Array.from(pose.subarray(36, 45)));
    expect(Array.from(picked.subarray(9, 18))).toEqual(IDENTITY);
    expect(() => posesForJoints(pose, [23])).toThrow(expect.objectContaining({ code: 'BAD_INDEX' }));
  });
});
