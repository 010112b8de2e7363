import { AutoRigError } from '../errors.js';

/**
 * Random poses for the deformation error: per joint a rotation with Euler XYZ angles drawn uniformly in ±maxDegrees.
 *
 * Every angle is a pure function of (seed, pose, joint, axis): a counter-based hash, no generator state. So pose i of
 * joint j is the same whatever `count` and `jointCount` are, and whichever skeleton uses it: the eval draws poses for
 * the 23 template joints (MIXAMO_JOINTS order) and every method, peer and skeleton picks its rows by template index
 * (posesForJoints), so they all bend the same joints by the same amounts. With one seed, the ±45° poses are the ±10°
 * poses scaled by 4.5 (same uniform draws): pass another seed for draws independent of each other.
 */

/** One round of the 32-bit integer finaliser: an avalanche so that neighbouring counters give unrelated bits. */
function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Uniform number in [0, 1) from a seed and three counters. */
function uniformAt(seed: number, pose: number, joint: number, axis: number): number {
  let h = mix32(seed ^ 0x3c6ef372);
  h = mix32((h + Math.imul(pose + 1, 0x9e3779b1)) >>> 0);
  h = mix32((h + Math.imul(joint + 1, 0x85ebca77)) >>> 0);
  h = mix32((h + Math.imul(axis + 1, 0xc2b2ae3d)) >>> 0);
  return h / 4294967296;
}

/**
 * Rotation matrix of Euler XYZ angles: turn about X first, then Y, then Z (world axes), R = Rz(z) · Ry(y) · Rx(x).
 * x, y, z: radians, out: Float64Array to write 9 numbers into (row-major), at offset
 */
export function eulerXYZToMatrix(x: number, y: number, z: number, out: Float64Array = new Float64Array(9), offset = 0): Float64Array {
  const cx = Math.cos(x), sx = Math.sin(x), cy = Math.cos(y), sy = Math.sin(y), cz = Math.cos(z), sz = Math.sin(z);
  out[offset] = cz * cy;
  out[offset + 1] = cz * sy * sx - sz * cx;
  out[offset + 2] = cz * sy * cx + sz * sx;
  out[offset + 3] = sz * cy;
  out[offset + 4] = sz * sy * sx + cz * cx;
  out[offset + 5] = sz * sy * cx - cz * sx;
  out[offset + 6] = -sy;
  out[offset + 7] = cy * sx;
  out[offset + 8] = cy * cx;
  return out;
}

/**
 * `count` random poses for `jointCount` joints (normally the 23 template joints), deterministic for a seed.
 * seed: integer (taken modulo 2^32), count: poses, jointCount: joints, maxDegrees: per-axis bound ≥ 0
 * → Float64Array[] of length count, each #jointCount*9 (row-major rotation per joint, world axes, relative to rest)
 */
export function randomPoses(seed: number, count: number, jointCount: number, maxDegrees: number): Float64Array[] {
  if (!Number.isInteger(seed) || !Number.isInteger(count) || count < 0 || !Number.isInteger(jointCount) || jointCount < 0) {
    throw new AutoRigError('BAD_NUMBER', `randomPoses: seed, count and jointCount must be integers (count, jointCount ≥ 0), got ${seed}, ${count}, ${jointCount}`);
  }
  if (!(maxDegrees >= 0) || !Number.isFinite(maxDegrees)) throw new AutoRigError('BAD_NUMBER', `randomPoses: maxDegrees must be a finite number ≥ 0, got ${maxDegrees}`);
  const seed32 = seed >>> 0;
  const maxRadians = (maxDegrees * Math.PI) / 180;
  const poses: Float64Array[] = [];
  for (let i = 0; i < count; i++) {
    const pose = new Float64Array(jointCount * 9);
    for (let j = 0; j < jointCount; j++) {
      const [x, y, z] = [0, 1, 2].map((axis) => (2 * uniformAt(seed32, i, j, axis) - 1) * maxRadians);
      eulerXYZToMatrix(x, y, z, pose, j * 9);
    }
    poses.push(pose);
  }
  return poses;
}

/**
 * The rows of a template pose that a skeleton's joints take: joint j turns like template joint templateIndex[j], or
 * not at all (identity, so it just follows its parent) where templateIndex[j] is -1.
 * pose: Float64Array #T*9, templateIndex: ArrayLike<number> #J (-1 or 0..T-1) → Float64Array #J*9
 */
export function posesForJoints(pose: Float64Array, templateIndex: ArrayLike<number>): Float64Array {
  const templateCount = pose.length / 9;
  const out = new Float64Array(templateIndex.length * 9);
  for (let j = 0; j < templateIndex.length; j++) {
    const t = templateIndex[j];
    if (t === -1) {
      out[j * 9] = 1;
      out[j * 9 + 4] = 1;
      out[j * 9 + 8] = 1;
      continue;
    }
    if (!Number.isInteger(t) || t < 0 || t >= templateCount) throw new AutoRigError('BAD_INDEX', `joint ${j} maps to template joint ${t} of ${templateCount}`);
    out.set(pose.subarray(t * 9, t * 9 + 9), j * 9);
  }
  return out;
}
