import { describe, expect, it } from 'vitest';
import { dualQuaternionSkinning, jointDualQuaternions } from '../sidecar/deform/dualQuaternionSkinning.js';
import { linearBlendSkinning, poseTransforms } from '../sidecar/deform/linearBlendSkinning.js';
import { eulerXYZToMatrix, randomPoses } from '../sidecar/eval/randomPoses.js';

const IDENTITY = [1, 0, 0, 0, 1, 0, 0, 0, 1];

/** Rotation about +Z by `degrees`. */
function rotZ(degrees: number): number[] {
  return Array.from(eulerXYZToMatrix(0, 0, (degrees * Math.PI) / 180));
}

/** The two-bone bar: joint 0 at the origin, joint 1 at x = 1 (its child). */
const BAR_HEADS = new Float64Array([0, 0, 0, 1, 0, 0]);
const BAR_PARENTS = new Int32Array([-1, 0]);

function distanceTo(posed: Float32Array, v: number, c: number[]): number {
  return Math.hypot(posed[v * 3] - c[0], posed[v * 3 + 1] - c[1], posed[v * 3 + 2] - c[2]);
}

describe('dualQuaternionSkinning', () => {
  it('moves a row with one joint exactly by that joint\'s rigid transform, like LBS', () => {
    // a three-joint chain in a random pose: every vertex rigidly bound to one joint
    const heads = new Float64Array([0, 0, 0, 0.3, 0.1, 0, 0.7, -0.2, 0.1]);
    const parents = new Int32Array([-1, 0, 1]);
    const [pose] = randomPoses(11, 1, 3, 80);
    const transforms = poseTransforms(heads, parents, pose);
    const positions = new Float32Array([0.1, 0.2, 0.3, -0.4, 0.5, 0.2, 0.9, -0.1, 0.4, 1.2, 0.3, -0.6]);
    const indices = new Uint16Array([0, 1, 2, 2]);
    const weights = new Float32Array([1, 1, 1, 1]);
    const dqs = dualQuaternionSkinning(positions, indices, weights, 1, transforms);
    const lbs = linearBlendSkinning(positions, indices, weights, 1, transforms);
    const moved = Array.from(dqs).some((x, i) => Math.abs(x - positions[i]) > 0.05);
    expect(moved).toBe(true);
    for (let i = 0; i < dqs.length; i++) expect(dqs[i]).toBeCloseTo(lbs[i], 5);
  });

  it('returns the input for the identity pose, whatever the weights', () => {
    const transforms = poseTransforms(BAR_HEADS, BAR_PARENTS, new Float64Array([...IDENTITY, ...IDENTITY]));
    const positions = new Float32Array([0.2, 0.3, -0.1, 1.5, -0.25, 0.4, 3, 2, 1]);
    const indices = new Uint16Array([0, 1, 1, 0, 0, 1]);
    const weights = new Float32Array([0.3, 0.7, 1, 0, 0.5, 0.5]);
    const posed = dualQuaternionSkinning(positions, indices, weights, 2, transforms);
    for (let i = 0; i < positions.length; i++) expect(posed[i]).toBeCloseTo(positions[i], 6);
  });

  it('keeps a 50/50 ring at a 90° bend at its rest radius, where LBS shrinks it', () => {
    // the ring of radius r round the bar at joint 1, in the bend plane: outside (+y) and inside (−y) of the bend
    const r = 0.2;
    const positions = new Float32Array([1, r, 0, 1, -r, 0]);
    const indices = new Uint16Array([0, 1, 0, 1]);
    const weights = new Float32Array([0.5, 0.5, 0.5, 0.5]);
    const transforms = poseTransforms(BAR_HEADS, BAR_PARENTS, new Float64Array([...IDENTITY, ...rotZ(90)]));
    const dqs = dualQuaternionSkinning(positions, indices, weights, 2, transforms);
    const lbs = linearBlendSkinning(positions, indices, weights, 2, transforms);
    for (const v of [0, 1]) {
      const dqsRadius = distanceTo(dqs, v, [1, 0, 0]);
      const lbsRadius = distanceTo(lbs, v, [1, 0, 0]);
      expect(Math.abs(dqsRadius - r) / r).toBeLessThan(0.01);
      expect(lbsRadius).toBeLessThan(0.8 * r);
    }
    // and the DQS ring point turned halfway: (1,r,0) about (1,0,0) by 45°
    expect(dqs[0]).toBeCloseTo(1 - r * Math.SQRT1_2, 5);
    expect(dqs[1]).toBeCloseTo(r * Math.SQRT1_2, 5);
  });

  it('blends the short way round, whichever sign each joint\'s quaternion comes out with', () => {
    // −100° and +60° about z come out of the matrix-to-quaternion step in opposite hemispheres; halfway the short way
    // is −20° (the long way, +160°). ±170° likewise meet at 180°, not at the rest.
    const heads = new Float64Array(9);
    const parents = new Int32Array([-1, 0, 0]);
    const halfway = (a: number, b: number) => {
      const transforms = poseTransforms(heads, parents, new Float64Array([...IDENTITY, ...rotZ(a), ...rotZ(b)]));
      const dq = jointDualQuaternions(transforms);
      for (const j of [1, 2]) expect(Math.hypot(dq[j * 8], dq[j * 8 + 1], dq[j * 8 + 2], dq[j * 8 + 3])).toBeCloseTo(1, 12);
      return dualQuaternionSkinning(new Float32Array([1, 0, 0]), new Uint16Array([1, 2]), new Float32Array([0.5, 0.5]), 2, transforms);
    };
    const short = halfway(-100, 60);
    expect(short[0]).toBeCloseTo(Math.cos((-20 * Math.PI) / 180), 5);
    expect(short[1]).toBeCloseTo(Math.sin((-20 * Math.PI) / 180), 5);
    const half = halfway(170, -170);
    expect(half[0]).toBeCloseTo(-1, 5);
    expect(half[1]).toBeCloseTo(0, 5);
  });

  it('carries translation: a joint moved by its parent takes its vertices along', () => {
    // joint 0 turns 90° about z at the origin, joint 1 only follows: (2,0,0) on joint 1 → (0,2,0); a 30/70 row
    const transforms = poseTransforms(BAR_HEADS, BAR_PARENTS, new Float64Array([...rotZ(90), ...IDENTITY]));
    const posed = dualQuaternionSkinning(new Float32Array([2, 0, 0]), new Uint16Array([0, 1]), new Float32Array([0.3, 0.7]), 2, transforms);
    expect(posed[0]).toBeCloseTo(0, 5);
    expect(posed[1]).toBeCloseTo(2, 5);
  });

  it('leaves unweighted rows in place, skips zero-weight padding, rejects a weighted index outside the skeleton', () => {
    const transforms = poseTransforms(BAR_HEADS, BAR_PARENTS, new Float64Array([...IDENTITY, ...rotZ(90)]));
    const posed = dualQuaternionSkinning(new Float32Array([2, 0, 0, 2, 0, 0]), new Uint16Array([1, 0, 1, 9]), new Float32Array([0, 0, 1, 0]), 2, transforms);
    expect(Array.from(posed.subarray(0, 3))).toEqual([2, 0, 0]);
    expect(posed[3]).toBeCloseTo(1, 6);
    expect(posed[4]).toBeCloseTo(1, 6);
    expect(() => dualQuaternionSkinning(new Float32Array([0, 0, 0]), new Uint16Array([5]), new Float32Array([1]), 1, transforms))
      .toThrow(expect.objectContaining({ code: 'BAD_INDEX' }));
    expect(() => dualQuaternionSkinning(new Float32Array([0, 0, 0]), new Uint16Array(2), new Float32Array(1), 2, transforms))
      .toThrow(expect.objectContaining({ code: 'BAD_ARRAY' }));
  });

  it('writes into the given output', () => {
    const transforms = poseTransforms(BAR_HEADS, BAR_PARENTS, new Float64Array([...IDENTITY, ...rotZ(90)]));
    const out = new Float32Array(3);
    expect(dualQuaternionSkinning(new Float32Array([2, 0, 0]), new Uint16Array([1]), new Float32Array([1]), 1, transforms, out)).toBe(out);
    expect(out[0]).toBeCloseTo(1, 6);
    expect(out[1]).toBeCloseTo(1, 6);
  });
});
