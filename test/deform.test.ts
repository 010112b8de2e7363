import { describe, expect, it } from 'vitest';
import { linearBlendSkinning, posedHeads, poseTransforms, restSkeleton } from '../sidecar/deform/linearBlendSkinning.js';

const IDENTITY = [1, 0, 0, 0, 1, 0, 0, 0, 1];
/** 90° about +Z: x → y, y → −x. */
const ROT_Z90 = [0, -1, 0, 1, 0, 0, 0, 0, 1];
/** 90° about +X: y → z, z → −y. */
const ROT_X90 = [1, 0, 0, 0, 0, -1, 0, 1, 0];

function applyTransform(transforms: Float64Array, joint: number, p: number[]): number[] {
  const t = transforms.subarray(joint * 12, joint * 12 + 12);
  return [0, 1, 2].map((r) => t[r * 4] * p[0] + t[r * 4 + 1] * p[1] + t[r * 4 + 2] * p[2] + t[r * 4 + 3]);
}

function expectClose(actual: ArrayLike<number>, expected: number[], digits = 6): void {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => expect(actual[i]).toBeCloseTo(e, digits));
}

/** The two-bone bar: joint 0 at the origin, joint 1 at x = 1 (its child); vertices at x = 0, 0.5, 1, 1.5, 2. */
const BAR_HEADS = new Float64Array([0, 0, 0, 1, 0, 0]);
const BAR_PARENTS = new Int32Array([-1, 0]);
const BAR_POSITIONS = new Float32Array([0, 0, 0, 0.5, 0, 0, 1, 0, 0, 1.5, 0, 0, 2, 0, 0]);

describe('poseTransforms', () => {
  it('leaves the rest pose in place', () => {
    const transforms = poseTransforms(BAR_HEADS, BAR_PARENTS, new Float64Array([...IDENTITY, ...IDENTITY]));
    expectClose(transforms, [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]);
  });

  it('turns a joint about its own head', () => {
    const transforms = poseTransforms(BAR_HEADS, BAR_PARENTS, new Float64Array([...IDENTITY, ...ROT_Z90]));
    expectClose(applyTransform(transforms, 1, [1, 0, 0]), [1, 0, 0]);
    expectClose(applyTransform(transforms, 1, [2, 0, 0]), [1, 1, 0]);
    expectClose(applyTransform(transforms, 0, [2, 0, 0]), [2, 0, 0]);
  });

  it('composes parent rotations down a chain: a point on the child bone is turned by both', () => {
    const heads = new Float64Array([0, 0, 0, 1, 0, 0, 2, 0, 0]);
    const parents = new Int32Array([-1, 0, 1]);
    const transforms = poseTransforms(heads, parents, new Float64Array([...ROT_Z90, ...ROT_Z90, ...IDENTITY]));
    // (1.5,0,0) about (1,0,0) by 90° → (1,0.5,0), then about the origin → (−0.5,1,0).
    expectClose(applyTransform(transforms, 1, [1.5, 0, 0]), [-0.5, 1, 0]);
    // The unrotated grandchild follows its parent: (3,0,0) → (1,2,0) → (−2,1,0).
    expectClose(applyTransform(transforms, 2, [3, 0, 0]), [-2, 1, 0]);
    expectClose(posedHeads(heads, transforms), [0, 0, 0, 0, 1, 0, -1, 1, 0]);
  });

  it('reads rotations in world axes, whatever the parent did', () => {
    const transforms = poseTransforms(BAR_HEADS, BAR_PARENTS, new Float64Array([...ROT_Z90, ...ROT_X90]));
    // (1,1,0): about the world X axis through (1,0,0) → (1,0,1); then about Z through the origin → (0,1,1).
    expectClose(applyTransform(transforms, 1, [1, 1, 0]), [0, 1, 1]);
  });

  it('rejects a child listed before its parent', () => {
    expect(() => poseTransforms(BAR_HEADS, new Int32Array([1, -1]), new Float64Array([...IDENTITY, ...IDENTITY])))
      .toThrow(expect.objectContaining({ code: 'BAD_SKELETON' }));
    expect(() => restSkeleton([[0, 0, 0]], [0])).toThrow(expect.objectContaining({ code: 'BAD_SKELETON' }));
  });

  it('builds a rest skeleton from joint positions', () => {
    const rest = restSkeleton([[0, 0, 0], [1, 2, 3]], [-1, 0]);
    expect(Array.from(rest.heads)).toEqual([0, 0, 0, 1, 2, 3]);
    expect(Array.from(rest.parents)).toEqual([-1, 0]);
  });
});

describe('linearBlendSkinning', () => {
  const bend = poseTransforms(BAR_HEADS, BAR_PARENTS, new Float64Array([...IDENTITY, ...ROT_Z90]));

  it('bends the two-bone bar 90° at the middle joint with rigid weights', () => {
    const indices = new Uint16Array([0, 1, 0, 1, 0, 1, 1, 0, 1, 0]);
    const weights = new Float32Array([1, 0, 1, 0, 0.5, 0.5, 1, 0, 1, 0]);
    const posed = linearBlendSkinning(BAR_POSITIONS, indices, weights, 2, bend);
    expectClose(posed, [0, 0, 0, 0.5, 0, 0, 1, 0, 0, 1, 0.5, 0, 1, 1, 0]);
  });

  it('blends the two bones with linear weights', () => {
    // w1 = x / 2: (0.5,0,0) → 0.75·(0.5,0,0) + 0.25·(1,−0.5,0); (1.5,0,0) → 0.25·(1.5,0,0) + 0.75·(1,0.5,0).
    const indices = new Uint16Array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
    const weights = new Float32Array([1, 0, 0.75, 0.25, 0.5, 0.5, 0.25, 0.75, 0, 1]);
    const posed = linearBlendSkinning(BAR_POSITIONS, indices, weights, 2, bend);
    expectClose(posed, [0, 0, 0, 0.625, -0.125, 0, 1, 0, 0, 1.125, 0.375, 0, 1, 1, 0]);
  });

  it('leaves unweighted rows in place and divides other rows by their sum', () => {
    const positions = new Float32Array([2, 0, 0, 2, 0, 0]);
    const indices = new Uint16Array([1, 0, 1, 0]);
    const weights = new Float32Array([0, 0, 2, 0]);
    const posed = linearBlendSkinning(positions, indices, weights, 2, bend);
    expectClose(posed, [2, 0, 0, 1, 1, 0]);
  });

  it('writes into the given output', () => {
    const out = new Float32Array(3);
    const result = linearBlendSkinning(new Float32Array([2, 0, 0]), new Uint16Array([1]), new Float32Array([1]), 1, bend, out);
    expect(result).toBe(out);
    expectClose(out, [1, 1, 0]);
  });

  it('rejects a weighted joint index outside the skeleton, but not a zero-weight padding index', () => {
    expect(() => linearBlendSkinning(new Float32Array([0, 0, 0]), new Uint16Array([5]), new Float32Array([1]), 1, bend))
      .toThrow(expect.objectContaining({ code: 'BAD_INDEX' }));
    expectClose(linearBlendSkinning(new Float32Array([2, 0, 0]), new Uint16Array([1, 9]), new Float32Array([1, 0]), 2, bend), [1, 1, 0]);
  });

  it('rejects arrays that do not hold whole rows', () => {
    expect(() => linearBlendSkinning(BAR_POSITIONS, new Uint16Array(4), new Float32Array(4), 2, bend))
      .toThrow(expect.objectContaining({ code: 'BAD_ARRAY' }));
  });
});
