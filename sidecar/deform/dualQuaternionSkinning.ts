import { AutoRigError } from '../errors.js';
import { checkSkinningArrays, UNWEIGHTED_SUM } from './linearBlendSkinning.js';

/**
 * Dual-quaternion skinning (Kavan, Collins, Žára, O'Sullivan 2007): each vertex goes by the normalised weighted sum of
 * its joints' rigid transforms written as unit dual quaternions. Blending rotations instead of matrices keeps a bent
 * joint's cross-section round, where linear blend skinning pulls it towards the bend axis (the "candy wrapper" and
 * collapsing elbow). Issue 6 uses it as the better deformation whose difference from LBS is the corrective.
 *
 * A unit dual quaternion is 8 numbers [rw rx ry rz | dw dx dy dz]: the rotation r and the dual part d = ½·(0, t)·r.
 */

/**
 * The unit dual quaternion of every joint transform. The 3x3 part is read as a rotation (transforms from poseTransforms
 * are rigid; a scale or shear would be lost, which is why DQS only takes rigid rigs).
 * transforms: Float64Array #J*12 (row-major 3x4, poseTransforms) → Float64Array #J*8 ([rw rx ry rz dw dx dy dz])
 */
export function jointDualQuaternions(transforms: Float64Array): Float64Array {
  if (transforms.length % 12 !== 0) throw new AutoRigError('BAD_ARRAY', `jointDualQuaternions: ${transforms.length} numbers are not whole 3x4 transforms`);
  const jointCount = transforms.length / 12;
  const out = new Float64Array(jointCount * 8);
  for (let j = 0; j < jointCount; j++) {
    const t = j * 12;
    const [w, x, y, z] = rotationQuaternion(
      transforms[t], transforms[t + 1], transforms[t + 2],
      transforms[t + 4], transforms[t + 5], transforms[t + 6],
      transforms[t + 8], transforms[t + 9], transforms[t + 10],
    );
    const tx = transforms[t + 3], ty = transforms[t + 7], tz = transforms[t + 11];
    const o = j * 8;
    out[o] = w; out[o + 1] = x; out[o + 2] = y; out[o + 3] = z;
    // d = ½·(0, t)·r: real part −½ t·v, vector part ½ (w t + t × v)
    out[o + 4] = -0.5 * (tx * x + ty * y + tz * z);
    out[o + 5] = 0.5 * (w * tx + ty * z - tz * y);
    out[o + 6] = 0.5 * (w * ty + tz * x - tx * z);
    out[o + 7] = 0.5 * (w * tz + tx * y - ty * x);
  }
  return out;
}

/**
 * Unit quaternion of a rotation matrix (Shepperd's method: divide by the largest of the four squared components, so
 * no rotation loses precision). m: the matrix's rows → [w, x, y, z], w ≥ 0 where w is the largest component.
 */
function rotationQuaternion(
  m00: number, m01: number, m02: number, m10: number, m11: number, m12: number, m20: number, m21: number, m22: number,
): [number, number, number, number] {
  const trace = m00 + m11 + m22;
  let q: [number, number, number, number];
  if (trace >= m00 && trace >= m11 && trace >= m22) {
    const s = 2 * Math.sqrt(Math.max(1 + trace, 0));
    q = [s / 4, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s];
  } else if (m00 >= m11 && m00 >= m22) {
    const s = 2 * Math.sqrt(Math.max(1 + m00 - m11 - m22, 0));
    q = [(m21 - m12) / s, s / 4, (m01 + m10) / s, (m02 + m20) / s];
  } else if (m11 >= m22) {
    const s = 2 * Math.sqrt(Math.max(1 + m11 - m00 - m22, 0));
    q = [(m02 - m20) / s, (m01 + m10) / s, s / 4, (m12 + m21) / s];
  } else {
    const s = 2 * Math.sqrt(Math.max(1 + m22 - m00 - m11, 0));
    q = [(m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, s / 4];
  }
  // a matrix that is only nearly orthonormal (float rounding down a long chain) gives a nearly unit quaternion
  const n = Math.hypot(q[0], q[1], q[2], q[3]) || 1;
  return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
}

/**
 * Dual-quaternion skinning with the inputs of linearBlendSkinning. Per vertex, every joint's dual quaternion is first
 * flipped to the hemisphere of the row's strongest influence (q and −q are the same transform; without the flip a
 * blend of nearly opposite signs would turn the long way round), then blended with the weights and divided by the
 * blend's rotation norm. A row whose weights sum below UNWEIGHTED_SUM stays where it is (as in LBS); slots with weight
 * 0 are skipped whatever their index. A row with one joint moves exactly rigidly, as in LBS.
 * Throws BAD_INDEX on a weighted index outside the transforms, BAD_ARRAY on arrays that do not hold whole rows.
 * positions: Float32Array #V*3, indices: Uint16Array #V*k, weights: Float32Array #V*k, influences: k,
 * transforms: Float64Array #J*12 (poseTransforms, rigid), out: optional Float32Array #V*3 to write into (may not alias
 * positions) → the posed positions, Float32Array #V*3 (out when given)
 */
export function dualQuaternionSkinning(
  positions: Float32Array, indices: Uint16Array, weights: Float32Array, influences: number, transforms: Float64Array,
  out: Float32Array = new Float32Array(positions.length),
): Float32Array {
  const vertexCount = checkSkinningArrays('dualQuaternionSkinning', positions, indices, weights, influences, out);
  const k = influences;
  const dq = jointDualQuaternions(transforms);
  const jointCount = transforms.length / 12;
  for (let v = 0; v < vertexCount; v++) {
    const x = positions[v * 3], y = positions[v * 3 + 1], z = positions[v * 3 + 2];
    let sum = 0, strongest = -1, strongestWeight = 0;
    for (let i = v * k; i < v * k + k; i++) {
      const w = weights[i];
      sum += w;
      if (w === 0) continue;
      if (indices[i] >= jointCount) throw new AutoRigError('BAD_INDEX', `vertex ${v} is weighted to joint ${indices[i]} of ${jointCount}`);
      if (w > strongestWeight) { strongestWeight = w; strongest = indices[i]; }
    }
    if (!(sum >= UNWEIGHTED_SUM) || strongest < 0) {
      out[v * 3] = x;
      out[v * 3 + 1] = y;
      out[v * 3 + 2] = z;
      continue;
    }
    const p = strongest * 8;
    const pw = dq[p], px = dq[p + 1], py = dq[p + 2], pz = dq[p + 3];
    let rw = 0, rx = 0, ry = 0, rz = 0, dw = 0, dx = 0, dy = 0, dz = 0;
    for (let i = v * k; i < v * k + k; i++) {
      let w = weights[i];
      if (w === 0) continue;
      const b = indices[i] * 8;
      if (dq[b] * pw + dq[b + 1] * px + dq[b + 2] * py + dq[b + 3] * pz < 0) w = -w;
      rw += w * dq[b]; rx += w * dq[b + 1]; ry += w * dq[b + 2]; rz += w * dq[b + 3];
      dw += w * dq[b + 4]; dx += w * dq[b + 5]; dy += w * dq[b + 6]; dz += w * dq[b + 7];
    }
    // every flipped rotation lies within 90° of the strongest one, so the blend's rotation norm is at least its weight
    const n = Math.hypot(rw, rx, ry, rz);
    rw /= n; rx /= n; ry /= n; rz /= n;
    dw /= n; dx /= n; dy /= n; dz /= n;
    // rotate: p + 2 r_v × (r_v × p + r_w p)
    const cx = ry * z - rz * y + rw * x, cy = rz * x - rx * z + rw * y, cz = rx * y - ry * x + rw * z;
    const qx = x + 2 * (ry * cz - rz * cy), qy = y + 2 * (rz * cx - rx * cz), qz = z + 2 * (rx * cy - ry * cx);
    // translate: t = 2 (r_w d_v − d_w r_v + r_v × d_v)
    out[v * 3] = qx + 2 * (rw * dx - dw * rx + ry * dz - rz * dy);
    out[v * 3 + 1] = qy + 2 * (rw * dy - dw * ry + rz * dx - rx * dz);
    out[v * 3 + 2] = qz + 2 * (rw * dz - dw * rz + rx * dy - ry * dx);
  }
  return out;
}
