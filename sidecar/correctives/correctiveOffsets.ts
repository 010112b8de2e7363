import { AutoRigError } from '../errors.js';
import { checkSkinningArrays, UNWEIGHTED_SUM } from '../deform/linearBlendSkinning.js';

/**
 * Below this determinant a vertex's blended linear part A_v is treated as near singular. A blend of rigid rotations
 * has det A = 1 when one bone moves it; two bones half and half turned θ apart give cos²(θ/2), so 1e-2 is reached only
 * past ~170° between the bones, where the exact inverse would throw the offset metres away.
 */
export const NEAR_SINGULAR_DETERMINANT = 1e-2;

/**
 * Damping of the least-squares solve for a near-singular A_v: o = (AᵀA + λ²I)⁻¹ Aᵀ d. λ = 0.1 keeps the offset within
 * ~5× the difference it should make, in the directions A_v squashes.
 */
const DAMPING = 0.1;

/**
 * Rest-space corrective offsets: the displacement o_v which, added to the rest vertex, makes linear blend skinning
 * land on the pose-dependent position: LBS_v(p_v + o_v) = target_v. LBS is affine in the rest position, so
 * LBS_v(p + o) = LBS_v(p) + A_v o with A_v = Σ w_b R_b (the weights normalised as linearBlendSkinning does), and
 *   o_v = A_v⁻¹ (target_v − LBS_v(p_v)).
 * That is the exact inverse of what Blender's armature modifier (Preserve Volume off) does to a shape key offset.
 * Where det A_v < NEAR_SINGULAR_DETERMINANT the damped least-squares solution is used instead (see DAMPING).
 * Unweighted rows (sum < UNWEIGHTED_SUM, which LBS leaves in place) get target − rest.
 * positions: Float32Array #V*3 (rest), indices: Uint16Array #V*k, weights: Float32Array #V*k, influences: k,
 * transforms: Float64Array #J*12 (poseTransforms), target: Float32Array #V*3 (the pose-dependent posed positions),
 * out: optional Float32Array #V*3 → the offsets, Float32Array #V*3 (out when given)
 * Throws BAD_ARRAY when the arrays do not fit one another, BAD_INDEX for a weighted joint outside the transforms.
 */
export function correctiveOffsets(
  positions: Float32Array, indices: Uint16Array, weights: Float32Array, influences: number, transforms: Float64Array,
  target: Float32Array, out: Float32Array = new Float32Array(positions.length),
): Float32Array {
  const vertexCount = checkSkinningArrays('correctiveOffsets', positions, indices, weights, influences, out);
  if (target.length !== positions.length) {
    throw new AutoRigError('BAD_ARRAY', `correctiveOffsets: ${vertexCount} vertices but ${target.length / 3} target positions`);
  }
  const k = influences;
  const jointCount = transforms.length / 12;
  const m = new Float64Array(12);
  for (let v = 0; v < vertexCount; v++) {
    const x = positions[v * 3], y = positions[v * 3 + 1], z = positions[v * 3 + 2];
    let sum = 0;
    for (let i = v * k; i < v * k + k; i++) sum += weights[i];
    if (!(sum >= UNWEIGHTED_SUM)) {
      out[v * 3] = target[v * 3] - x;
      out[v * 3 + 1] = target[v * 3 + 1] - y;
      out[v * 3 + 2] = target[v * 3 + 2] - z;
      continue;
    }
    // m: the blended affine map Σ w_b G_b / Σ w_b; its 3x3 part is A_v
    m.fill(0);
    for (let i = v * k; i < v * k + k; i++) {
      const w = weights[i];
      if (w === 0) continue;
      const b = indices[i];
      if (b >= jointCount) throw new AutoRigError('BAD_INDEX', `vertex ${v} is weighted to joint ${b} of ${jointCount}`);
      for (let e = 0; e < 12; e++) m[e] += (w / sum) * transforms[b * 12 + e];
    }
    const dx = target[v * 3] - (m[0] * x + m[1] * y + m[2] * z + m[3]);
    const dy = target[v * 3 + 1] - (m[4] * x + m[5] * y + m[6] * z + m[7]);
    const dz = target[v * 3 + 2] - (m[8] * x + m[9] * y + m[10] * z + m[11]);
    solveBlended(m[0], m[1], m[2], m[4], m[5], m[6], m[8], m[9], m[10], dx, dy, dz, out, v * 3);
  }
  return out;
}

/**
 * o = A⁻¹ d for A = [a b c; d e f; g h i] (rows), by the adjugate; damped least squares when det A is small.
 * Writes o into out at offset.
 */
function solveBlended(
  a: number, b: number, c: number, d: number, e: number, f: number, g: number, h: number, i: number,
  dx: number, dy: number, dz: number, out: Float32Array, offset: number,
): void {
  const det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
  if (det >= NEAR_SINGULAR_DETERMINANT) {
    out[offset] = ((e * i - f * h) * dx + (c * h - b * i) * dy + (b * f - c * e) * dz) / det;
    out[offset + 1] = ((f * g - d * i) * dx + (a * i - c * g) * dy + (c * d - a * f) * dz) / det;
    out[offset + 2] = ((d * h - e * g) * dx + (b * g - a * h) * dy + (a * e - b * d) * dz) / det;
    return;
  }
  // N = AᵀA + λ²I (symmetric, positive definite), r = Aᵀ d; o = N⁻¹ r
  const l2 = DAMPING * DAMPING;
  const n00 = a * a + d * d + g * g + l2, n01 = a * b + d * e + g * h, n02 = a * c + d * f + g * i;
  const n11 = b * b + e * e + h * h + l2, n12 = b * c + e * f + h * i, n22 = c * c + f * f + i * i + l2;
  const r0 = a * dx + d * dy + g * dz, r1 = b * dx + e * dy + h * dz, r2 = c * dx + f * dy + i * dz;
  const c00 = n11 * n22 - n12 * n12, c01 = n02 * n12 - n01 * n22, c02 = n01 * n12 - n02 * n11;
  const c11 = n00 * n22 - n02 * n02, c12 = n01 * n02 - n00 * n12, c22 = n00 * n11 - n01 * n01;
  const nDet = n00 * c00 + n01 * c01 + n02 * c02;
  out[offset] = (c00 * r0 + c01 * r1 + c02 * r2) / nDet;
  out[offset + 1] = (c01 * r0 + c11 * r1 + c12 * r2) / nDet;
  out[offset + 2] = (c02 * r0 + c12 * r1 + c22 * r2) / nDet;
}
