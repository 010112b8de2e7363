/**
 * The blend between a limb bone and the next one down the limb, kept to a band around the joint between them. An
 * artist centres that blend on the joint (on the artist dev set the hand's weight along the forearm is 0.05 at 70 % of
 * the way to the wrist, 0.7 at the wrist); the learned skinning can start it well before the joint (mixamo_ely: the
 * hand already holds half of the forearm's weight at 60 %), and a wrist bend then moves the whole forearm. Every
 * learned skinning takes the bands (pipeline: Apply Latent Pose's auto-rig, the learned rig and the learned re-skin):
 * on the artist dev set, `autorig eval --method learned` (the artists' skeletons re-skinned) L1 0.3635 → 0.3550,
 * ±45° 0.00844 → 0.00831, precision 0.820 → 0.825, recall 0.879 unchanged; the learned pipeline's ±45° 0.0380 either way.
 */
import { add, scale, sub } from '../geometry/vec3.js';
import { MIXAMO_JOINTS } from '../skeleton/mixamoTemplate.js';
import type { Vec3 } from '../types.js';

/** Bone chains along the limbs: each [a, b, c] is a parent bone a→b, the joint b, and its child bone b→c. */
export const LIMB_JOINT_CHAINS: readonly (readonly [string, string, string | null])[] = [
  ['LeftArm', 'LeftForeArm', 'LeftHand'], ['LeftForeArm', 'LeftHand', null],
  ['RightArm', 'RightForeArm', 'RightHand'], ['RightForeArm', 'RightHand', null],
  ['LeftUpLeg', 'LeftLeg', 'LeftFoot'], ['LeftLeg', 'LeftFoot', 'LeftToeBase'],
  ['RightUpLeg', 'RightLeg', 'RightFoot'], ['RightLeg', 'RightFoot', 'RightToeBase'],
];

/**
 * The band's half width, as a fraction of the parent bone's length. Chosen on the artist dev set: the apply path's
 * weights against the artists' (weight L1 by bone name, mean over the 10 characters) are 0.4669 without the bands;
 * with the arms' bands 0.4578 at 0.1, 0.4569 at 0.15, 0.4568 at 0.2, 0.4571 at 0.25, 0.4576 at 0.3; with the legs'
 * too, at 0.2, 0.4476 (clonk worse by its ankles, 0.133 → 0.213; robot_expressive better, 0.933 → 0.810).
 */
export const LIMB_BAND_HALF_WIDTH = 0.2;

/**
 * A bone with no joint after it in the template (the hand; the toe) is taken this fraction of the bone before it long.
 */
export const END_BONE_LENGTH = 0.4;

/**
 * limbJointBands: caps the child bone's weight on the parent bone and the parent's on the child, by how far the
 * vertex lies from the joint along the limb; what a cap removes goes to the other bone of the pair. Along the parent
 * (s: the vertex's projection on a→b, 1 at the joint b) the child may hold at most clamp((s − 1 + 2h) / 4h, 0, 1):
 * nothing before 1 − 2h, a half at the joint; past the joint (u: the distance beyond b along b→c, in parent
 * lengths) the parent may hold at most clamp((2h − u) / 4h, 0, 1). A vertex counts as on the parent when it projects
 * inside a→b and lies nearer to a→b than to b→c, on the child when it projects beyond b and lies nearer to b→c.
 * positions: Float32Array #V*3; joints: joint heads, Float32Array #23*3 in MIXAMO_JOINTS order, same space;
 * weights: top-k indices into MIXAMO_JOINTS #V*k + values #V*k, rows summing to 1, modified in place (rows still
 * sum to 1); k: influences; halfWidth: h, a fraction of the parent bone's length (LIMB_BAND_HALF_WIDTH).
 */
export function limbJointBands(
  positions: Float32Array, joints: Float32Array, weights: { indices: Uint16Array | Uint32Array | Int32Array; weights: Float32Array },
  k: number, halfWidth = LIMB_BAND_HALF_WIDTH,
): void {
  const count = positions.length / 3;
  // the bones each vertex has weight on, as bits (MIXAMO_JOINTS has 23): most vertices are on no limb pair
  const bonesOf = new Int32Array(count);
  for (let v = 0; v < count; v++) {
    let bits = 0;
    for (let q = 0; q < k; q++) if (weights.weights[v * k + q] > 0) bits |= 1 << weights.indices[v * k + q];
    bonesOf[v] = bits;
  }
  for (const [parentName, jointName, childName] of LIMB_JOINT_CHAINS) {
    const parent = MIXAMO_JOINTS.indexOf(parentName as never), child = MIXAMO_JOINTS.indexOf(jointName as never);
    const a = head(joints, parent), b = head(joints, child);
    const along = sub(b, a), length = Math.hypot(...along);
    if (length < 1e-9) continue;
    const c = childName === null ? add(b, scale(along, END_BONE_LENGTH)) : head(joints, MIXAMO_JOINTS.indexOf(childName as never));
    const down = sub(c, b), downLength = Math.hypot(...down);
    if (downLength < 1e-9) continue;
    const lengthSq = length * length, downSq = downLength * downLength;
    const pair = (1 << parent) | (1 << child);
    for (let v = 0; v < count; v++) {
      if ((bonesOf[v] & pair) === 0) continue;
      let pSlot = -1, cSlot = -1;
      for (let q = 0; q < k; q++) {
        const bone = weights.indices[v * k + q];
        if (weights.weights[v * k + q] <= 0) continue;
        if (bone === parent) pSlot = q;
        else if (bone === child) cSlot = q;
      }
      if (pSlot < 0 && cSlot < 0) continue;
      // s along a→b (1 at the joint), t along b→c (0 at the joint), and the distances to both segments
      const ax = positions[3 * v] - a[0], ay = positions[3 * v + 1] - a[1], az = positions[3 * v + 2] - a[2];
      const bx = positions[3 * v] - b[0], by = positions[3 * v + 1] - b[1], bz = positions[3 * v + 2] - b[2];
      const s = (ax * along[0] + ay * along[1] + az * along[2]) / lengthSq;
      const t = (bx * down[0] + by * down[1] + bz * down[2]) / downSq;
      // squared distances to the two segments (only compared)
      const fs = s < 0 ? 0 : s > 1 ? 1 : s, ft = t < 0 ? 0 : t > 1 ? 1 : t;
      const px = ax - fs * along[0], py = ay - fs * along[1], pz = az - fs * along[2];
      const cx = bx - ft * down[0], cy = by - ft * down[1], cz = bz - ft * down[2];
      const toParent = px * px + py * py + pz * pz, toChild = cx * cx + cy * cy + cz * cz;
      if (cSlot >= 0 && s >= 0 && s < 1 && toParent <= toChild) {
        const cap = clamp01((s - 1 + 2 * halfWidth) / (4 * halfWidth));
        moveExcess(weights, k, v, cSlot, cap, parent);
        bonesOf[v] |= 1 << parent;
      } else if (pSlot >= 0 && t > 0 && toChild < toParent) {
        const cap = clamp01((2 * halfWidth - (t * downLength) / length) / (4 * halfWidth));
        moveExcess(weights, k, v, pSlot, cap, child);
        bonesOf[v] |= 1 << child;
      }
    }
  }
}

/**
 * Lowers the weight in `slot` of vertex v to `cap` and gives what it loses to bone `to`: to its slot when the row
 * has it, else to the row's weakest other slot, whose own weight goes to `to` too.
 */
function moveExcess(
  weights: { indices: Uint16Array | Uint32Array | Int32Array; weights: Float32Array }, k: number, v: number, slot: number, cap: number, to: number,
): void {
  const excess = weights.weights[v * k + slot] - cap;
  if (excess <= 0) return;
  weights.weights[v * k + slot] = cap;
  let target = -1, weakest = -1;
  for (let q = 0; q < k; q++) {
    if (q === slot) continue;
    if (weights.indices[v * k + q] === to && weights.weights[v * k + q] > 0) target = q;
    if (weakest < 0 || weights.weights[v * k + q] < weights.weights[v * k + weakest]) weakest = q;
  }
  if (target < 0 && cap === 0) target = slot;
  if (target < 0) target = weakest;
  if (target < 0) { weights.weights[v * k + slot] += excess; return; }
  weights.indices[v * k + target] = to;
  weights.weights[v * k + target] += excess;
}

const head = (joints: Float32Array, j: number): Vec3 => [joints[3 * j], joints[3 * j + 1], joints[3 * j + 2]];
const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));
