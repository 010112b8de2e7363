/**
 * The input of the pose-dependent weight field (issue 7, VINECS, skeleton-relative): per vertex, its four static
 * influence slots, each described in the frame of the slot's own bone, so that the field learns "a point this far along
 * and around a bone that turns like this" and transfers between characters of any proportions and rest arm angle.
 *
 * Per slot k = 0..3 (joint j, static weight s), 7 numbers (the ONE definition; Python only reads them):
 *   f[0..2] = B_jᵀ (p − head_j) / size   the point in the bone's rest frame B_j = [x y z] (boneRestFrame), in heights
 *   f[3]    = s
 *   f[4..6] = axis·angle (radians) of B_jᵀ R_j B_j: the joint's local turn in its bone's axes; zero for Hips, whose turn
 *             is the whole body's orientation (masked as VINECS masks global translation and yaw)
 * A padded slot (s = 0) is all zeros. size = the spread of the joint heads along the skeleton's up (Hips → Neck).
 */
import { AutoRigError } from '../errors.js';
import { dot, normalize, sub } from '../geometry/vec3.js';
import type { Skeleton, Vec3 } from '../types.js';
import { boneRestFrame } from './boneRestFrame.js';
import { mixamoJointIndices } from './keyPoses.js';

/** Numbers per slot in the features. */
export const FEATURES_PER_SLOT = 7;
/** Influence slots per vertex (the static top-4). */
export const SLOTS = 4;

/**
 * The slot order of a vertex: its slots by static weight, descending (ties keep their order), zero-weight slots last.
 * weights: the vertex's SLOTS weights at `offset` → slot numbers #SLOTS
 */
function slotOrder(weights: ArrayLike<number>, offset: number, count: number): number[] {
  return Array.from({ length: count }, (_, k) => k).sort((a, b) => weights[offset + b] - weights[offset + a] || a - b);
}

/**
 * topFourSlots: any top-k skinning weights → the field's four slots per vertex: the SLOTS largest weights by weight,
 * descending, renormalised to sum to 1; slots beyond a vertex's nonzero weights are padded with index 0, weight 0.
 * A vertex with no positive weight keeps all slots padded (its row sums to 0).
 * indices: Uint16Array #V*influences, weights: Float32Array #V*influences, influences: k ≥ 1
 * → { indices: Uint16Array #V*4, weights: Float32Array #V*4 }. Throws BAD_ARRAY for mismatched lengths.
 */
export function topFourSlots(indices: Uint16Array, weights: Float32Array, influences: number): { indices: Uint16Array; weights: Float32Array } {
  if (!(influences >= 1) || indices.length !== weights.length || indices.length % influences !== 0) {
    throw new AutoRigError('BAD_ARRAY', `top-four slots: ${indices.length} indices and ${weights.length} weights do not make rows of ${influences}`);
  }
  const V = indices.length / influences;
  const outIndices = new Uint16Array(V * SLOTS);
  const outWeights = new Float32Array(V * SLOTS);
  for (let v = 0; v < V; v++) {
    const order = slotOrder(weights, v * influences, influences).slice(0, SLOTS).filter((k) => weights[v * influences + k] > 0);
    const sum = order.reduce((s, k) => s + weights[v * influences + k], 0);
    order.forEach((k, slot) => {
      outIndices[v * SLOTS + slot] = indices[v * influences + k];
      outWeights[v * SLOTS + slot] = weights[v * influences + k] / sum;
    });
  }
  return { indices: outIndices, weights: outWeights };
}

/**
 * The height the features are measured in: max − min of the joint heads projected on the unit vector from the Hips
 * head to the Neck head. skeleton (with the Mixamo template's joints, any order, extra joints allowed) → its units
 * (> 0). Throws BAD_SKELETON when the template joints are missing or hips and neck coincide.
 */
export function skeletonHeight(skeleton: Skeleton): number {
  const template = mixamoJointIndices(skeleton);
  const upward = sub(skeleton.joints[template.Neck].head, skeleton.joints[template.Hips].head);
  if (!(Math.hypot(...upward) > 0)) throw new AutoRigError('BAD_SKELETON', 'pose features: the hips and the neck coincide, the skeleton has no up');
  const up = normalize(upward);
  const along = skeleton.joints.map((j) => dot(j.head, up));
  return Math.max(...along) - Math.min(...along);
}

/**
 * The axis·angle vector of a rotation matrix (row-major 3x3 at offset): angle in [0, π] times the unit axis. Exact
 * zero for the identity; near 180°, where the skew part vanishes, the axis comes from the symmetric part
 * (R + Rᵀ)/2 = cos θ I + (1 − cos θ) a aᵀ, its sign from the skew part.
 * r: Float64Array (or any array), offset → Vec3
 */
export function rotationVector(r: ArrayLike<number>, offset = 0): Vec3 {
  const m = (row: number, col: number) => r[offset + row * 3 + col];
  const skew: Vec3 = [m(2, 1) - m(1, 2), m(0, 2) - m(2, 0), m(1, 0) - m(0, 1)];
  const sin2 = Math.hypot(...skew); // 2 sin θ
  const cos = Math.min(1, Math.max(-1, (m(0, 0) + m(1, 1) + m(2, 2) - 1) / 2));
  const angle = Math.atan2(sin2 / 2, cos);
  if (!(angle > 1e-12)) return [0, 0, 0];
  if (cos > -0.9) return [skew[0] / sin2 * angle, skew[1] / sin2 * angle, skew[2] / sin2 * angle];
  // a aᵀ = (sym − cos I) / (1 − cos): its column of largest diagonal is the best-conditioned multiple of a
  const outer = (i: number, k: number) => ((m(i, k) + m(k, i)) / 2 - (i === k ? cos : 0)) / (1 - cos);
  const i = [0, 1, 2].reduce((best, k) => (outer(k, k) > outer(best, best) ? k : best), 0);
  let axis = normalize([outer(0, i), outer(1, i), outer(2, i)]);
  if (dot(axis, skew) < 0) axis = [-axis[0], -axis[1], -axis[2]];
  return [axis[0] * angle, axis[1] * angle, axis[2] * angle];
}

/**
 * poseFeatures: the field's features of every vertex at a pose (definition above).
 * rest: Float32Array #V*3 (rest positions, the skeleton's space), indices: Uint16Array #V*4 and weights: Float32Array
 * #V*4 (the static slots, topFourSlots' output: slots are taken in order of weight, descending, as topFourSlots writes
 * them; weights are used as given), skeleton: J joints holding the Mixamo template's (any order, prefixed or not;
 * extra joints such as fingers get features from their own bones), rotations: Float64Array #J*9 (each joint's local
 * turn in world axes relative to rest, row-major: poseTransforms' convention)
 * → Float32Array #V*28 (SLOTS × FEATURES_PER_SLOT per vertex). Throws BAD_ARRAY for mismatched lengths or a slot index
 * outside the skeleton, BAD_SKELETON for a skeleton without the template's joints or with a zero-length bone.
 */
export function poseFeatures(rest: Float32Array, indices: Uint16Array, weights: Float32Array, skeleton: Skeleton, rotations: Float64Array): Float32Array {
  const J = skeleton.joints.length;
  const V = rest.length / 3;
  const hips = mixamoJointIndices(skeleton).Hips;
  if (rest.length % 3 !== 0 || indices.length !== V * SLOTS || weights.length !== V * SLOTS) {
    throw new AutoRigError('BAD_ARRAY', `pose features: ${rest.length / 3} vertices with ${indices.length} indices and ${weights.length} weights (want ${SLOTS} each)`);
  }
  if (rotations.length !== J * 9) throw new AutoRigError('BAD_ARRAY', `pose features: rotations want ${J * 9} numbers, got ${rotations.length}`);
  const size = skeletonHeight(skeleton);
  // per joint: the bone frame as rows (Bᵀ), its head, and the turn in its own axes
  const frames = skeleton.joints.map((joint) => { const f = boneRestFrame(joint.head, joint.tail, joint.roll); return [f.x, f.y, f.z]; });
  const turns = frames.map((B, j) => {
    if (j === hips) return [0, 0, 0] as Vec3;
    // (Bᵀ R B)[a][b] = B_aᵀ R B_b with B_a the a-th axis
    const local = new Float64Array(9);
    for (let a = 0; a < 3; a++) {
      for (let b = 0; b < 3; b++) {
        let sum = 0;
        for (let row = 0; row < 3; row++) for (let col = 0; col < 3; col++) sum += B[a][row] * rotations[j * 9 + row * 3 + col] * B[b][col];
        local[a * 3 + b] = sum;
      }
    }
    return rotationVector(local);
  });
  const out = new Float32Array(V * SLOTS * FEATURES_PER_SLOT);
  for (let v = 0; v < V; v++) {
    const p: Vec3 = [rest[3 * v], rest[3 * v + 1], rest[3 * v + 2]];
    slotOrder(weights, v * SLOTS, SLOTS).forEach((k, slot) => {
      const s = weights[v * SLOTS + k];
      if (!(s > 0)) return;
      const j = indices[v * SLOTS + k];
      if (j >= J) throw new AutoRigError('BAD_ARRAY', `pose features: vertex ${v} names joint ${j}, the skeleton has ${J}`);
      const d = sub(p, skeleton.joints[j].head);
      const o = (v * SLOTS + slot) * FEATURES_PER_SLOT;
      out[o] = dot(frames[j][0], d) / size;
      out[o + 1] = dot(frames[j][1], d) / size;
      out[o + 2] = dot(frames[j][2], d) / size;
      out[o + 3] = s;
      out.set(turns[j], o + 4);
    });
  }
  return out;
}
