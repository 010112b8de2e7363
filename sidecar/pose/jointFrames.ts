/**
 * The joint frames of Apply Latent Pose's rig-structured decoder (issue 6, v2): the decoder answers each template
 * joint's rotation in the joint's own bone frame, so that "bend the elbow" is the same three numbers on a tall and a
 * short character, an A-pose and a T-pose. The frames MUST be computed exactly as the training does
 * (models/training/latent_pose/, the slice's contract): e1 along the joint's frame bone (FRAME_BONES), e2 the forward
 * direction made orthogonal to it (up instead for a bone that points nearly forward), e3 = e1 × e2.
 */
import { AutoRigError } from '../errors.js';
import { axisAngleMatrix } from '../geometry/axisAngleMatrix.js';
import { MIXAMO_JOINTS, MIXAMO_PARENT_INDICES, MIXAMO_TAIL_CHILD_INDICES, type MixamoJointName } from '../skeleton/mixamoTemplate.js';

const J = MIXAMO_JOINTS.length;

/**
 * The joints whose e1 is not their own bone but the bone their poses' axes are read from (poseVocabulary.ts): the
 * elbow's hinge is square to the upper arm, the knee's to the thigh, the spine turns about Spine → Neck and the head
 * about Neck → HeadTop_End; the hand, a leaf, keeps the forearm's own bone (ForeArm → Hand), which the wrist bends
 * about, where it would otherwise inherit the forearm's new frame. In these frames every pose of the vocabulary is one local rotation on every skeleton: on
 * the sidecar's auto-rig, whose elbow is rarely on the line of shoulder and wrist, the frame of the forearm's own bone
 * put a twist of up to 24° into "bend the elbow" (mixamo_ely), which the decoder, trained on straight arms, never gives.
 * Must equal models/training/latent_pose/rig.py _FRAME_BONE_NAMES.
 */
export const FRAME_BONES: Readonly<Partial<Record<MixamoJointName, readonly [MixamoJointName, MixamoJointName]>>> = {
  LeftForeArm: ['LeftArm', 'LeftForeArm'], RightForeArm: ['RightArm', 'RightForeArm'],
  LeftHand: ['LeftForeArm', 'LeftHand'], RightHand: ['RightForeArm', 'RightHand'],
  LeftLeg: ['LeftUpLeg', 'LeftLeg'], RightLeg: ['RightUpLeg', 'RightLeg'],
  Spine: ['Spine', 'Neck'], Spine1: ['Spine', 'Neck'], Spine2: ['Spine', 'Neck'],
  Neck: ['Neck', 'HeadTop_End'], Head: ['Neck', 'HeadTop_End'],
};

/**
 * The joints whose frame takes forward itself as e2 and the bone made square to forward as e1 (forward first, where the
 * others take the bone first): the upper arms, whose shoulderRaise turns about forward whatever the arm's tilt, so
 * that an arm held a little forward or back at rest still raises by one local rotation. Their swing towards forward
 * (armForward) stays e3 either way. Must equal rig.py _FORWARD_FIRST_NAMES.
 */
export const FORWARD_FIRST_JOINTS: readonly MixamoJointName[] = ['LeftArm', 'RightArm'];
const FORWARD_FIRST: boolean[] = MIXAMO_JOINTS.map((name) => FORWARD_FIRST_JOINTS.includes(name));

/** Each joint's frame bone as MIXAMO_JOINTS indices [from, to]: FRAME_BONES, else joint → tail child; null for a leaf. */
const FRAME_BONE_INDICES: ([number, number] | null)[] = MIXAMO_JOINTS.map((name, j) => {
  const listed = FRAME_BONES[name];
  if (listed) return [MIXAMO_JOINTS.indexOf(listed[0]), MIXAMO_JOINTS.indexOf(listed[1])];
  return MIXAMO_TAIL_CHILD_INDICES[j] >= 0 ? [j, MIXAMO_TAIL_CHILD_INDICES[j]] : null;
});

/** A tail child this close to its joint (canonical units: the character's longest side is 1) gives no direction. */
export const COINCIDENT_TAIL = 1e-6;
/** Below this length of forward's part orthogonal to the bone, the bone points nearly forward: use up instead. */
export const FORWARD_TOO_ALIGNED = 0.2;
/** A rotation vector shorter than this is the identity. */
export const ZERO_ROTATION = 1e-12;

/**
 * jointFrames: every template joint's rest bone frame in the canonical frame (x the character's left, y up,
 * z forward). e1 = unit(head[to] − head[from]) of the joint's frame bone (FRAME_BONE_INDICES: its own bone to its tail
 * child, or FRAME_BONES) or, for a leaf or a frame bone within COINCIDENT_TAIL, the parent's e1 (a Hips with no usable
 * Spine takes up); e2 = unit(f − (f·e1) e1) with f = forward (0, 0, 1), or up (0, 1, 0) when that
 * is shorter than FORWARD_TOO_ALIGNED; e3 = e1 × e2. FORWARD_FIRST_JOINTS, where forward is not too aligned, take
 * e2 = f and e1 = unit(e1 − (e1·f) f) instead.
 * heads: Float64Array #23*3 (MIXAMO_JOINTS order, canonical) → Float64Array #23*9, per joint a row-major 3x3 E_j
 * whose COLUMNS are e1, e2, e3 (E_j[3r + c] = e_c[r]). Throws BAD_ARRAY on a wrong length.
 */
export function jointFrames(heads: Float64Array): Float64Array {
  if (heads.length !== J * 3) throw new AutoRigError('BAD_ARRAY', `jointFrames: ${J} joints need ${J * 3} head numbers, got ${heads.length}`);
  const out = new Float64Array(J * 9);
  const along = new Float64Array(J * 3);
  for (let j = 0; j < J; j++) {
    const bone = FRAME_BONE_INDICES[j];
    let dx = 0, dy = 0, dz = 0, length = 0;
    if (bone) {
      const [from, to] = bone;
      dx = heads[3 * to] - heads[3 * from];
      dy = heads[3 * to + 1] - heads[3 * from + 1];
      dz = heads[3 * to + 2] - heads[3 * from + 2];
      length = Math.hypot(dx, dy, dz);
    }
    if (length >= COINCIDENT_TAIL) {
      along[3 * j] = dx / length;
      along[3 * j + 1] = dy / length;
      along[3 * j + 2] = dz / length;
    } else {
      // parents precede children: the parent's direction is already known
      const parent = MIXAMO_PARENT_INDICES[j];
      if (parent >= 0) along.set(along.subarray(3 * parent, 3 * parent + 3), 3 * j);
      else along.set([0, 1, 0], 3 * j);
    }
    let e1x = along[3 * j], e1y = along[3 * j + 1], e1z = along[3 * j + 2];
    // g = f − (f·e1) e1 for f = forward (0, 0, 1), else up (0, 1, 0)
    let gx = -e1z * e1x, gy = -e1z * e1y, gz = 1 - e1z * e1z;
    let g = Math.hypot(gx, gy, gz);
    if (g < FORWARD_TOO_ALIGNED) {
      gx = -e1y * e1x; gy = 1 - e1y * e1y; gz = -e1y * e1z;
      g = Math.hypot(gx, gy, gz);
    } else if (FORWARD_FIRST[j]) {
      // e2 forward itself, e1 the bone square to it: |bone ⟂ forward| = g here
      const flat = Math.hypot(e1x, e1y);
      e1x /= flat; e1y /= flat; e1z = 0;
      gx = 0; gy = 0; gz = 1; g = 1;
    }
    const e2x = gx / g, e2y = gy / g, e2z = gz / g;
    const e3x = e1y * e2z - e1z * e2y, e3y = e1z * e2x - e1x * e2z, e3z = e1x * e2y - e1y * e2x;
    out.set([e1x, e2x, e3x, e1y, e2y, e3y, e1z, e2z, e3z], 9 * j);
  }
  return out;
}

/**
 * localToWorldRotations: the decoder's local rotation vectors as world rotations relative to rest, the layout
 * poseTransforms takes. Joint j turns by ω = strength · E_j ω_local: the angle |ω| about ω/|ω| (Rodrigues, right-handed;
 * the identity below ZERO_ROTATION), so the strength scales every joint's angle, exact at 0 and 1.
 * frames: Float64Array #23*9 (jointFrames), local: Float32Array #23*3 (radians, joint frames), strength: number
 * → Float64Array #23*9 (row-major 3x3 per joint). Throws BAD_ARRAY on wrong lengths.
 */
export function localToWorldRotations(frames: Float64Array, local: Float32Array, strength: number): Float64Array {
  if (frames.length !== J * 9 || local.length !== J * 3) {
    throw new AutoRigError('BAD_ARRAY', `localToWorldRotations: ${J} joints need ${J * 9} frame and ${J * 3} rotation numbers, got ${frames.length} and ${local.length}`);
  }
  const out = new Float64Array(J * 9);
  for (let j = 0; j < J; j++) {
    const e = 9 * j;
    const a = strength * local[3 * j], b = strength * local[3 * j + 1], c = strength * local[3 * j + 2];
    const wx = frames[e] * a + frames[e + 1] * b + frames[e + 2] * c;
    const wy = frames[e + 3] * a + frames[e + 4] * b + frames[e + 5] * c;
    const wz = frames[e + 6] * a + frames[e + 7] * b + frames[e + 8] * c;
    const angle = Math.hypot(wx, wy, wz);
    if (angle < ZERO_ROTATION) out.set([1, 0, 0, 0, 1, 0, 0, 0, 1], e);
    else axisAngleMatrix([wx / angle, wy / angle, wz / angle], angle, out, e);
  }
  return out;
}
