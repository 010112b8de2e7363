/**
 * The correctives eval's measures on analytic shapes with known answers: volumes of a sphere and a cylinder, the
 * volume of a ball ∩ cylinder, Chamfer between concentric spheres, nearest-surface distances against brute force,
 * the candy-wrapper cross-section of a cylinder twisted by linear blend skinning (cos²(θ/2) at a 50/50 blend) and by
 * dual quaternions (kept), and the key poses' angles.
 */
import { describe, expect, it } from 'vitest';
import { dualQuaternionSkinning } from '../sidecar/deform/dualQuaternionSkinning.js';
import { linearBlendSkinning, poseTransforms } from '../sidecar/deform/linearBlendSkinning.js';
import { crossSectionArea } from '../sidecar/eval/correctives/crossSection.js';
import { KEY_POSES, keyPoseRotations } from '../sidecar/eval/correctives/keyPoses.js';
import { signedVolume, volumeInBall, volumeLoss } from '../sidecar/eval/correctives/meshVolume.js';
import { chamferDistance, meanPointToSurface, trianglesNear } from '../sidecar/eval/correctives/surfaceDistance.js';
import { buildTriangleGrid, surfaceDistances } from '../sidecar/eval/correctives/triangleGrid.js';
import { pointTriangleDistanceSquared } from '../sidecar/geometry/pointTriangleDistance.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';

interface Mesh { positions: Float32Array; triangles: Uint32Array }

/** A closed cylinder along x from x0 to x1, radius r, `around` segments and `along` rings, wound outwards. */
function cylinder(r: number, x0: number, x1: number, around = 64, along = 40, cy = 0): Mesh {
  const p: number[] = [];
  const t: number[] = [];
  for (let i = 0; i <= along; i++) {
    const x = x0 + ((x1 - x0) * i) / along;
    for (let k = 0; k < around; k++) {
      const a = (2 * Math.PI * k) / around;
      p.push(x, cy + r * Math.cos(a), r * Math.sin(a));
    }
  }
  const ring = (i: number, k: number) => i * around + (k % around);
  for (let i = 0; i < along; i++) {
    for (let k = 0; k < around; k++) {
      t.push(ring(i, k), ring(i, k + 1), ring(i + 1, k + 1), ring(i, k), ring(i + 1, k + 1), ring(i + 1, k));
    }
  }
  const c0 = p.length / 3; p.push(x0, cy, 0);
  const c1 = p.length / 3; p.push(x1, cy, 0);
  for (let k = 0; k < around; k++) {
    t.push(c0, ring(0, k + 1), ring(0, k));
    t.push(c1, ring(along, k), ring(along, k + 1));
  }
  return { positions: Float32Array.from(p), triangles: Uint32Array.from(t) };
}

/** A UV sphere of radius r about the origin, wound outwards. */
function sphere(r: number, rings = 48, around = 96): Mesh {
  const p: number[] = [0, r, 0];
  for (let i = 1; i < rings; i++) {
    const th = (Math.PI * i) / rings;
    for (let k = 0; k < around; k++) {
      const ph = (2 * Math.PI * k) / around;
      p.push(r * Math.sin(th) * Math.cos(ph), r * Math.cos(th), r * Math.sin(th) * Math.sin(ph));
    }
  }
  p.push(0, -r, 0);
  const bottom = p.length / 3 - 1;
  const at = (i: number, k: number) => 1 + (i - 1) * around + (k % around);
  const t: number[] = [];
  for (let k = 0; k < around; k++) t.push(0, at(1, k + 1), at(1, k));
  for (let i = 1; i < rings - 1; i++) {
    for (let k = 0; k < around; k++) t.push(at(i, k), at(i, k + 1), at(i + 1, k + 1), at(i, k), at(i + 1, k + 1), at(i + 1, k));
  }
  for (let k = 0; k < around; k++) t.push(bottom, at(rings - 1, k), at(rings - 1, k + 1));
  return { positions: Float32Array.from(p), triangles: Uint32Array.from(t) };
}

/** A regular n-gon's area for circumradius r: what a cylinder of n segments has in place of πr². */
const polygonArea = (r: number, n: number) => (n / 2) * r * r * Math.sin((2 * Math.PI) / n);

/**
 * A cylinder along x (0 … 2L) skinned to two joints, the root at 0 and the child at L, its weights blending linearly
 * over ±b about L; the child turned by `rotation` (3x3 row-major, world axes) → the LBS and DQS meshes.
 */
function skinnedCylinder(rotation: number[], r = 0.05, L = 0.5, b = 0.1): { rest: Mesh; lbs: Float32Array; dqs: Float32Array } {
  const rest = cylinder(r, 0, 2 * L, 64, 80);
  const V = rest.positions.length / 3;
  const indices = new Uint16Array(V * 2);
  const weights = new Float32Array(V * 2);
  for (let v = 0; v < V; v++) {
    const w = Math.min(1, Math.max(0, (rest.positions[3 * v] - (L - b)) / (2 * b)));
    indices[2 * v] = 0; indices[2 * v + 1] = 1;
    weights[2 * v] = 1 - w; weights[2 * v + 1] = w;
  }
  const transforms = poseTransforms(new Float64Array([0, 0, 0, L, 0, 0]), new Int32Array([-1, 0]), new Float64Array([1, 0, 0, 0, 1, 0, 0, 0, 1, ...rotation]));
  return {
    rest,
    lbs: linearBlendSkinning(rest.positions, indices, weights, 2, transforms),
    dqs: dualQuaternionSkinning(rest.positions, indices, weights, 2, transforms),
  };
}

const twistX = (deg: number) => { const a = (deg * Math.PI) / 180, c = Math.cos(a), s = Math.sin(a); return [1, 0, 0, 0, c, -s, 0, s, c]; };
const bendZ = (deg: number) => { const a = (deg * Math.PI) / 180, c = Math.cos(a), s = Math.sin(a); return [c, -s, 0, s, c, 0, 0, 0, 1]; };

describe('correctives metrics on analytic shapes', () => {
  it('signed volume: a sphere, a cylinder, and a flipped one negative; volume loss is 1 − posed/rest', () => {
    const s = sphere(0.3);
    expect(signedVolume(s.positions, s.triangles) / ((4 / 3) * Math.PI * 0.3 ** 3)).toBeCloseTo(1, 2);
    const c = cylinder(0.1, -0.5, 0.5);
    const exact = polygonArea(0.1, 64) * 1;
    expect(signedVolume(c.positions, c.triangles)).toBeCloseTo(exact, 6);
    const flipped = Uint32Array.from(c.triangles, (_, i) => c.triangles[i - (i % 3) + 2 - (i % 3)]);
    expect(signedVolume(c.positions, flipped)).toBeCloseTo(-exact, 6);
    expect(volumeLoss(0.9, 1)).toBeCloseTo(0.1, 12);
    expect(volumeLoss(1.2, 1)).toBeCloseTo(-0.2, 12);
  });

  it('volume in a ball: a whole sphere inside it, and a ball ∩ cylinder = 4π/3 (R³ − (R² − r²)^3/2)', () => {
    const s = sphere(0.2);
    expect(volumeInBall(s.positions, s.triangles, [0, 0, 0], 0.3, 48) / ((4 / 3) * Math.PI * 0.2 ** 3)).toBeCloseTo(1, 1);
    const r = 0.1, R = 0.2;
    const c = cylinder(r, -1, 1, 128, 40);
    const exact = ((4 * Math.PI) / 3) * (R ** 3 - (R * R - r * r) ** 1.5);
    const measured = volumeInBall(c.positions, c.triangles, [0.05, 0, 0], R, 48);
    expect(Math.abs(measured / exact - 1)).toBeLessThan(0.03);
    // off the cylinder the ball holds nothing
    expect(volumeInBall(c.positions, c.triangles, [0, 0.5, 0], R, 24)).toBe(0);
  });

  it('nearest-surface distances match brute force, inside, outside and far from the mesh', () => {
    const c = cylinder(0.1, -0.5, 0.5, 24, 10);
    const grid = buildTriangleGrid(c.positions, c.triangles);
    const queries = new Float32Array([0, 0, 0, 0.3, 0.05, 0, -0.7, 0.2, 0.1, 5, -3, 2, 0.02, 0.099, 0.001, -0.5, 0, 0]);
    const d = surfaceDistances(grid, queries);
    for (let q = 0; q < queries.length / 3; q++) {
      let best = Infinity;
      for (let t = 0; t < c.triangles.length; t += 3) {
        const [a, b, e] = [c.triangles[t] * 3, c.triangles[t + 1] * 3, c.triangles[t + 2] * 3];
        const p = c.positions;
        best = Math.min(best, pointTriangleDistanceSquared(queries[3 * q], queries[3 * q + 1], queries[3 * q + 2], p[a], p[a + 1], p[a + 2], p[b], p[b + 1], p[b + 2], p[e], p[e + 1], p[e + 2]));
      }
      expect(d[q]).toBeCloseTo(Math.sqrt(best), 6);
    }
  });

  it('Chamfer: 0 for a surface against itself, the gap between concentric spheres, and one-sided distances', () => {
    const a = sphere(0.3), b = sphere(0.32);
    expect(chamferDistance(a, a, 4000)).toBeLessThan(1e-6);
    expect(chamferDistance(a, b, 4000)).toBeCloseTo(0.02, 3);
    expect(meanPointToSurface(a, b, 4000)).toBeCloseTo(0.02, 3);
    // a sphere with a bump: only the bump's samples are off, so the one-sided distance from the sphere is smaller
    const bumped = { positions: a.positions.slice(), triangles: a.triangles };
    bumped.positions[1] += 0.1; // the north pole raised by 0.1
    const fromBumped = meanPointToSurface(bumped, a, 20000);
    expect(fromBumped).toBeGreaterThan(1e-5);
    expect(fromBumped).toBeLessThan(0.005);
    // a region about the pole holds the bump: its distance is far larger than the whole surface's
    const pole = { positions: bumped.positions, triangles: trianglesNear(bumped.positions, bumped.triangles, [0, 0.35, 0], 0.1) };
    expect(pole.triangles.length).toBeGreaterThan(0);
    expect(meanPointToSurface(pole, a, 4000)).toBeGreaterThan(5 * fromBumped);
  });

  it('cross-section: a cylinder\'s is its polygon, the nearest of two limbs is taken, a miss is 0', () => {
    const c = cylinder(0.05, 0, 1, 64, 20);
    expect(crossSectionArea(c.positions, c.triangles, [0.43, 0, 0], [1, 0, 0]) / polygonArea(0.05, 64)).toBeCloseTo(1, 4);
    // tilted 45°: the ellipse is 1/cos 45° larger
    expect(crossSectionArea(c.positions, c.triangles, [0.5, 0, 0], [1, 1, 0]) / polygonArea(0.05, 64)).toBeCloseTo(Math.SQRT2, 2);
    const other = cylinder(0.08, 0, 1, 64, 20, 0.3);
    const both = {
      positions: Float32Array.from([...c.positions, ...other.positions]),
      triangles: Uint32Array.from([...c.triangles, ...Array.from(other.triangles, (i) => i + c.positions.length / 3)]),
    };
    expect(crossSectionArea(both.positions, both.triangles, [0.5, 0, 0], [1, 0, 0]) / polygonArea(0.05, 64)).toBeCloseTo(1, 4);
    expect(crossSectionArea(both.positions, both.triangles, [0.5, 0.3, 0], [1, 0, 0]) / polygonArea(0.08, 64)).toBeCloseTo(1, 4);
    expect(crossSectionArea(c.positions, c.triangles, [2, 0, 0], [1, 0, 0])).toBe(0);
  });

  it('candy wrapper: LBS pinches a 90° twist to cos²(45°) of the section at the 50/50 blend, DQS keeps it', () => {
    const { rest, lbs, dqs } = skinnedCylinder(twistX(90));
    const section = (p: Float32Array) => crossSectionArea(p, rest.triangles, [0.5, 0, 0], [1, 0, 0]);
    const restArea = section(rest.positions);
    expect(section(lbs) / restArea).toBeCloseTo(0.5, 2);
    expect(section(dqs) / restArea).toBeCloseTo(1, 2);
    // and the volume about the joint follows: LBS loses a lot, DQS almost nothing
    const restBall = volumeInBall(rest.positions, rest.triangles, [0.5, 0, 0], 0.1, 32);
    const lbsLoss = volumeLoss(volumeInBall(lbs, rest.triangles, [0.5, 0, 0], 0.1, 32), restBall);
    const dqsLoss = volumeLoss(volumeInBall(dqs, rest.triangles, [0.5, 0, 0], 0.1, 32), restBall);
    expect(lbsLoss).toBeGreaterThan(0.15);
    expect(Math.abs(dqsLoss)).toBeLessThan(0.03);
    expect(volumeLoss(signedVolume(lbs, rest.triangles), signedVolume(rest.positions, rest.triangles))).toBeGreaterThan(0.01);
  });

  it('a 90° bend: LBS collapses the joint\'s section and volume more than DQS does', () => {
    const { rest, lbs, dqs } = skinnedCylinder(bendZ(90));
    // the bisector plane of a 90° bend about z at (L, 0, 0): normal (1, 1, 0)
    const section = (p: Float32Array) => crossSectionArea(p, rest.triangles, [0.5, 0, 0], [1, 1, 0]);
    const restSection = crossSectionArea(rest.positions, rest.triangles, [0.5, 0, 0], [1, 0, 0]);
    expect(section(lbs) / restSection).toBeLessThan(section(dqs) / restSection - 0.1);
    const restBall = volumeInBall(rest.positions, rest.triangles, [0.5, 0, 0], 0.1, 32);
    const loss = (p: Float32Array) => volumeLoss(volumeInBall(p, rest.triangles, [0.5, 0, 0], 0.1, 32), restBall);
    expect(loss(lbs)).toBeGreaterThan(loss(dqs) + 0.05);
  });
});

describe('key poses', () => {
  const heads = new Float64Array(MIXAMO_JOINTS.length * 3);
  // a T-posed stick figure: spine up y, left arm along +x, legs down
  const at: Record<string, [number, number, number]> = {
    Hips: [0, 1, 0], Spine: [0, 1.1, 0], Spine1: [0, 1.2, 0], Spine2: [0, 1.3, 0], Neck: [0, 1.5, 0], Head: [0, 1.6, 0], HeadTop_End: [0, 1.8, 0],
    LeftShoulder: [0.05, 1.45, 0], LeftArm: [0.2, 1.45, 0], LeftForeArm: [0.5, 1.45, 0], LeftHand: [0.75, 1.45, 0],
    RightShoulder: [-0.05, 1.45, 0], RightArm: [-0.2, 1.45, 0], RightForeArm: [-0.5, 1.45, 0], RightHand: [-0.75, 1.45, 0],
    LeftUpLeg: [0.1, 0.95, 0], LeftLeg: [0.1, 0.5, 0], LeftFoot: [0.1, 0.08, 0], LeftToeBase: [0.1, 0.02, 0.12],
    RightUpLeg: [-0.1, 0.95, 0], RightLeg: [-0.1, 0.5, 0], RightFoot: [-0.1, 0.08, 0], RightToeBase: [-0.1, 0.02, 0.12],
  };
  MIXAMO_JOINTS.forEach((n, i) => heads.set(at[n], 3 * i));
  const angleOf = (r: Float64Array, j: number) => (Math.acos(Math.max(-1, Math.min(1, (r[9 * j] + r[9 * j + 4] + r[9 * j + 8] - 1) / 2))) * 180) / Math.PI;
  const pose = (id: string) => KEY_POSES.find((p) => p.id === id)!;

  it('turn their joints by the asked angle, past the vocabulary\'s largest strength too (spine twist 90° = 3 × 30°)', () => {
    for (const p of KEY_POSES) {
      for (const deg of [45, 90]) {
        const r = keyPoseRotations(p, heads, deg);
        const turned = MIXAMO_JOINTS.map((_, j) => angleOf(r, j)).filter((a) => a > 1e-6);
        expect(turned.reduce((a, b) => a + b, 0), `${p.id} ${deg}°`).toBeCloseTo(deg, 6);
      }
    }
    const spine = keyPoseRotations(pose('spineTwist'), heads, 90);
    expect(['Spine', 'Spine1', 'Spine2'].map((n) => angleOf(spine, MIXAMO_JOINTS.indexOf(n as never)))).toEqual([30, 30, 30].map((a) => expect.closeTo(a, 6)));
  });

  it('the wrist twist turns the hand about the forearm: the forearm direction is fixed, the palm turns', () => {
    const r = keyPoseRotations(pose('wristTwist'), heads, 90);
    const h = MIXAMO_JOINTS.indexOf('LeftHand') * 9;
    // forearm along +x: x is kept, y goes to ±z
    expect([r[h], r[h + 3], r[h + 6]]).toEqual([1, 0, 0].map((v) => expect.closeTo(v, 9)));
    expect(Math.abs(r[h + 7])).toBeCloseTo(1, 9);
    expect(() => keyPoseRotations(pose('elbow'), heads, 200)).toThrow(/angle/);
  });
});
