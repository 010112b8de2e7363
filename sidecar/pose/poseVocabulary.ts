import { AutoRigError } from '../errors.js';
import { axisAngleMatrix } from '../geometry/axisAngleMatrix.js';
import { cross, dot, normalize, scale, sub } from '../geometry/vec3.js';
import { MIXAMO_JOINTS, type MixamoJointName } from '../skeleton/mixamoTemplate.js';
import type { Vec3 } from '../types.js';

/**
 * The semantic poses of issue 6 ("Apply Latent Pose") on the 23-joint Mixamo template: what the user picks, and what
 * the training data poses every identity in. A pose is a few joint rotations whose axes come from the character's own
 * rest skeleton and frame, so that "elbowBentLf" bends the left elbow like a human elbow on any proportions and any
 * rest arm angle (T-pose, A-pose, arms down).
 *
 * Single poses, the angle at strength 1 and the joints that turn (sided poses: Lf and Rt, the character's own left
 * and right; angles shared between joints are split evenly):
 *
 * | pose             | angle | joints turned                    | motion                                                |
 * |------------------|-------|----------------------------------|-------------------------------------------------------|
 * | elbowBent        |  90°  | ForeArm                          | forearm swings forward (towards the chest) about the  |
 * |                  |       |                                  | hinge ⟂ to the upper arm and to forward               |
 * | elbowSuperBent   | 140°  | ForeArm                          | the same hinge, nearly closed (human limit ~145°)     |
 * | kneeBent         |  90°  | Leg                              | the shin swings backward about the hinge ⟂ to the     |
 * |                  |       |                                  | thigh and to forward                                  |
 * | clavicleDownward |  15°  | Shoulder                         | the clavicle drops (shoulder depression)              |
 * | shoulderRaise    |  60°  | Arm                              | the arm lifts sideways and up (abduction, about       |
 * |                  |       |                                  | forward)                                              |
 * | armForward       |  70°  | Arm                              | the arm swings forward (flexion)                      |
 * | wristBend        |  60°  | Hand                             | the hand bends towards the palm (palm-down flexion)   |
 * | hipFlex          |  60°  | UpLeg                            | the thigh swings forward                              |
 * | spineTwist       |  45°  | Spine, Spine1, Spine2 (15° each) | the upper body turns about the spine (Spine → Neck);  |
 * |                  |       |                                  | Lf: its front turns towards the character's left      |
 * | neckTurn         |  60°  | Neck, Head (30° each)            | the head turns about the neck (Neck → HeadTop_End);   |
 * |                  |       |                                  | Lf: towards the character's left                      |
 * | spineBendForward |  45°  | Spine, Spine1, Spine2 (15° each) | the spine bends forward (central, no side)            |
 * | headNodDown      |  40°  | Neck, Head (20° each)            | the head nods forward and down (central, no side)     |
 *
 * Where the palm faces: the template's rest hand lies in the plane of the arm and up (the Mixamo T-pose, palms down,
 * lowered sideways for an A-pose), so the palm is the direction ⟂ to the hand in the plane ⟂ to forward, facing down
 * (and in, for hanging arms). The hand's direction is the forearm's (ForeArm → Hand): the template has no hand tail.
 *
 * Combinations of two (COMBO_POSE_NAMES) turn disjoint joints, so they are simply both components' rotations. The
 * list is closed under left/right mirroring, and mixes arm and leg, left and right, and two joints of one limb.
 *
 * Rotations follow poseTransforms (deform/linearBlendSkinning.ts): per joint a 3x3 rotation in world axes relative to
 * the rest pose about the joint's own rest head. Since a joint's rotation is applied before its parents', an axis
 * read from the rest skeleton is the right axis whatever the parents do.
 */

/** The character's up and forward (need not be exactly perpendicular; forward is taken ⟂ to up). */
export interface PoseFrame {
  up: Vec3;
  forward: Vec3;
}

/** The frame generator characters are made in (sidecar/data/procedural): up +Y, facing +Z, their left on +X. */
export const GENERATOR_FRAME: PoseFrame = { up: [0, 1, 0], forward: [0, 0, 1] };

export const SINGLE_POSE_NAMES = [
  'elbowBentLf', 'elbowBentRt', 'elbowSuperBentLf', 'elbowSuperBentRt', 'kneeBentLf', 'kneeBentRt',
  'clavicleDownwardLf', 'clavicleDownwardRt', 'shoulderRaiseLf', 'shoulderRaiseRt', 'armForwardLf', 'armForwardRt',
  'wristBendLf', 'wristBendRt', 'hipFlexLf', 'hipFlexRt', 'spineTwistLf', 'spineTwistRt', 'neckTurnLf', 'neckTurnRt',
  'spineBendForward', 'headNodDown',
] as const;

export const COMBO_POSE_NAMES = [
  'elbowBentLf+kneeBentRt', 'elbowBentRt+kneeBentLf',
  'elbowBentLf+elbowBentRt', 'kneeBentLf+kneeBentRt',
  'shoulderRaiseLf+hipFlexRt', 'shoulderRaiseRt+hipFlexLf',
  'hipFlexLf+kneeBentLf', 'hipFlexRt+kneeBentRt',
  'armForwardLf+elbowBentLf', 'armForwardRt+elbowBentRt',
  'spineTwistLf+elbowBentRt', 'spineTwistRt+elbowBentLf',
] as const;

export type SinglePoseName = (typeof SINGLE_POSE_NAMES)[number];
export type ComboPoseName = (typeof COMBO_POSE_NAMES)[number];
export type PoseName = SinglePoseName | ComboPoseName;

/** Every pose, singles then combinations, in a stable order (dataset files and the UI list index by it). */
export const POSE_NAMES: readonly PoseName[] = [...SINGLE_POSE_NAMES, ...COMBO_POSE_NAMES];

/** The largest strength a pose may be applied with (1 = the angle in the table, 0 = rest). */
export const MAX_POSE_STRENGTH = 1.5;

/** A pose family without its side, with its angle at strength 1 (degrees): the table above. */
const POSE_DEGREES = {
  elbowBent: 90, elbowSuperBent: 140, kneeBent: 90, clavicleDownward: 15, shoulderRaise: 60, armForward: 70,
  wristBend: 60, hipFlex: 60, spineTwist: 45, neckTurn: 60, spineBendForward: 45, headNodDown: 40,
} as const;
type PoseFamily = keyof typeof POSE_DEGREES;

/**
 * How a pose family turns a skeleton: which joints (for one side; central families ignore it) and about which unit
 * axis (world), the angle split evenly between the joints.
 */
interface PoseTurn {
  joints: (side: Side) => MixamoJointName[];
  axis: (s: PoseSkeleton, side: Side) => Vec3;
}

/** The rest skeleton and frame that pose axes are read from; left = up × forward. */
interface PoseSkeleton {
  head: (joint: MixamoJointName) => Vec3;
  up: Vec3;
  forward: Vec3;
  left: Vec3;
}

/** +1: the character's left (Left* joints), −1: its right. */
type Side = 1 | -1;

const SPINE: MixamoJointName[] = ['Spine', 'Spine1', 'Spine2'];
const NECK: MixamoJointName[] = ['Neck', 'Head'];

/** The elbow's hinge: ⟂ to the upper arm and to forward, so the forearm swings forward (up, for an arm held forward). */
const ELBOW: PoseTurn = {
  joints: (side) => [limb(side, 'ForeArm')],
  axis: (s, side) => swingAxis(bone(s, limb(side, 'Arm'), limb(side, 'ForeArm')), s.forward, s.up),
};

const POSE_TURNS: Record<PoseFamily, PoseTurn> = {
  elbowBent: ELBOW,
  elbowSuperBent: ELBOW,
  kneeBent: {
    joints: (side) => [limb(side, 'Leg')],
    // a thigh already pointing backward (kneeling rest pose) swings its shin down instead
    axis: (s, side) => swingAxis(bone(s, limb(side, 'UpLeg'), limb(side, 'Leg')), scale(s.forward, -1), scale(s.up, -1)),
  },
  clavicleDownward: {
    joints: (side) => [limb(side, 'Shoulder')],
    axis: (s, side) => swingAxis(bone(s, limb(side, 'Shoulder'), limb(side, 'Arm')), scale(s.up, -1), scale(s.forward, -1)),
  },
  shoulderRaise: {
    joints: (side) => [limb(side, 'Arm')],
    // abduction turns the arm in the plane of up and its side, whatever the rest arm angle (hanging arms included)
    axis: (s, side) => {
      bone(s, limb(side, 'Arm'), limb(side, 'ForeArm'));
      return swingAxis(scale(s.up, -1), scale(s.left, side), s.forward);
    },
  },
  armForward: {
    joints: (side) => [limb(side, 'Arm')],
    axis: (s, side) => swingAxis(bone(s, limb(side, 'Arm'), limb(side, 'ForeArm')), s.forward, s.up),
  },
  wristBend: {
    joints: (side) => [limb(side, 'Hand')],
    axis: (s, side) => {
      const hand = bone(s, limb(side, 'ForeArm'), limb(side, 'Hand'));
      return swingAxis(hand, palmDirection(s, side, hand), scale(s.up, -1));
    },
  },
  hipFlex: {
    joints: (side) => [limb(side, 'UpLeg')],
    axis: (s, side) => swingAxis(bone(s, limb(side, 'UpLeg'), limb(side, 'Leg')), s.forward, s.up),
  },
  spineTwist: { joints: () => SPINE, axis: (s, side) => scale(twistAxis(s, bone(s, 'Spine', 'Neck')), side) },
  neckTurn: { joints: () => NECK, axis: (s, side) => scale(twistAxis(s, bone(s, 'Neck', 'HeadTop_End')), side) },
  spineBendForward: { joints: () => SPINE, axis: (s) => swingAxis(bone(s, 'Spine', 'Neck'), s.forward, scale(s.up, -1)) },
  headNodDown: { joints: () => NECK, axis: (s) => swingAxis(bone(s, 'Neck', 'HeadTop_End'), s.forward, scale(s.up, -1)) },
};

/** The Left/Right joint of a limb segment. */
function limb(side: Side, segment: string): MixamoJointName {
  return `${side === 1 ? 'Left' : 'Right'}${segment}` as MixamoJointName;
}

/** Rest bone vector from one joint's head to another's; BAD_SKELETON when they coincide (no direction to bend). */
function bone(s: PoseSkeleton, from: MixamoJointName, to: MixamoJointName): Vec3 {
  const v = sub(s.head(to), s.head(from));
  if (!(Math.hypot(v[0], v[1], v[2]) > 0)) throw new AutoRigError('BAD_SKELETON', `pose: joints ${from} and ${to} coincide, so the bone between them has no direction`);
  return v;
}

/** Below this sine between a bone and where it should swing, the swing plane is ill-defined: use the fallback. */
const PARALLEL_SINE = 0.05;

/**
 * The unit axis that, turned by a positive angle, swings `bone`'s far end towards `toward` (the plane of the two);
 * towards `fallback` when bone and toward are (nearly) parallel.
 * bone, toward, fallback: Vec3 (any length) → unit Vec3
 */
function swingAxis(bone: Vec3, toward: Vec3, fallback: Vec3): Vec3 {
  for (const t of [toward, fallback]) {
    const c = cross(bone, t);
    const n = Math.hypot(c[0], c[1], c[2]);
    if (n > PARALLEL_SINE * Math.hypot(...bone) * Math.hypot(...t)) return scale(c, 1 / n);
  }
  throw new AutoRigError('BAD_SKELETON', 'pose: a bone lies along both directions it could swing towards');
}

/** A twist about a chain's direction, signed so that a positive turn brings the front towards the character's left. */
function twistAxis(s: PoseSkeleton, chain: Vec3): Vec3 {
  const axis = normalize(chain);
  return dot(cross(axis, s.forward), s.left) >= 0 ? axis : scale(axis, -1);
}

/**
 * Where the palm faces: ⟂ to the hand in the plane of the hand and up, pointing down (and, for a hanging arm, in
 * towards the body); for a hand pointing forward, down.
 */
function palmDirection(s: PoseSkeleton, side: Side, hand: Vec3): Vec3 {
  const c = cross(hand, s.forward);
  const n = Math.hypot(c[0], c[1], c[2]);
  if (n <= PARALLEL_SINE * Math.hypot(...hand)) return scale(s.up, -1);
  return scale(c, side / n);
}

/** Whether a string names a pose of the vocabulary. */
export function isPoseName(name: unknown): name is PoseName {
  return typeof name === 'string' && (POSE_NAMES as readonly string[]).includes(name);
}

/**
 * The single poses a pose is made of: itself for a single pose, its two parts for a combination.
 * name: a pose name → SinglePoseName[] (1 or 2). Throws BAD_REQUEST for a name outside the vocabulary.
 */
export function poseComponents(name: string): SinglePoseName[] {
  if (!isPoseName(name)) throw new AutoRigError('BAD_REQUEST', `unknown pose '${String(name)}' (known: ${POSE_NAMES.join(', ')})`);
  return name.split('+') as SinglePoseName[];
}

/** A single pose's family and side. */
function familyOf(name: SinglePoseName): [PoseFamily, Side] {
  if (name.endsWith('Lf')) return [name.slice(0, -2) as PoseFamily, 1];
  if (name.endsWith('Rt')) return [name.slice(0, -2) as PoseFamily, -1];
  return [name as PoseFamily, 1];
}

/**
 * The joints a pose turns (MIXAMO_JOINTS names, in template order): the ones whose rotation rows are not the identity
 * at a nonzero strength. name: a pose name → MixamoJointName[]. Throws BAD_REQUEST for an unknown name.
 */
export function poseJoints(name: string): MixamoJointName[] {
  const turned = new Set<MixamoJointName>();
  for (const single of poseComponents(name)) {
    const [family, side] = familyOf(single);
    for (const joint of POSE_TURNS[family].joints(side)) turned.add(joint);
  }
  return MIXAMO_JOINTS.filter((j) => turned.has(j));
}

/**
 * The joint rotations of a pose on a character, in poseTransforms' convention (world axes, relative to rest, each
 * joint about its own rest head). Axes are read from the character's rest skeleton and frame (see the table above).
 * name: a pose name, heads: ArrayLike<number> #23*3 rest joint heads in MIXAMO_JOINTS order, frame: the character's
 * up and forward (GENERATOR_FRAME for generator characters), strength: in [0, MAX_POSE_STRENGTH], scales every angle
 * (0 = rest) → Float64Array #23*9, row-major 3x3 per joint, identity for the joints the pose does not turn.
 * Throws BAD_REQUEST for an unknown pose, a strength outside [0, 1.5] or not finite, or a degenerate frame (up and
 * forward parallel or zero); BAD_ARRAY for heads of the wrong length; BAD_NUMBER for non-finite heads; BAD_SKELETON
 * when a bone the pose turns has no length.
 */
export function poseRotations(name: string, heads: ArrayLike<number>, frame: PoseFrame, strength: number): Float64Array {
  const components = poseComponents(name);
  if (typeof strength !== 'number' || !Number.isFinite(strength) || strength < 0 || strength > MAX_POSE_STRENGTH) {
    throw new AutoRigError('BAD_REQUEST', `pose strength must be a finite number in [0, ${MAX_POSE_STRENGTH}], got ${strength}`);
  }
  const skeleton = poseSkeleton(heads, frame);
  const J = MIXAMO_JOINTS.length;
  const out = new Float64Array(J * 9);
  for (let j = 0; j < J; j++) { out[j * 9] = 1; out[j * 9 + 4] = 1; out[j * 9 + 8] = 1; }
  const turn = new Float64Array(9);
  for (const single of components) {
    const [family, side] = familyOf(single);
    const radians = (POSE_DEGREES[family] * strength * Math.PI) / 180;
    const { joints, axis } = POSE_TURNS[family];
    const turned = joints(side);
    axisAngleMatrix(axis(skeleton, side), radians / turned.length, turn, 0);
    for (const joint of turned) {
      // a combination's components turn disjoint joints, so composing is picking; composing keeps it right regardless
      const o = MIXAMO_JOINTS.indexOf(joint) * 9;
      const prior = out.slice(o, o + 9);
      for (let r = 0; r < 3; r++) {
        for (let c = 0; c < 3; c++) {
          out[o + r * 3 + c] = turn[r * 3] * prior[c] + turn[r * 3 + 1] * prior[3 + c] + turn[r * 3 + 2] * prior[6 + c];
        }
      }
    }
  }
  return out;
}

/** The rest skeleton and orthonormal frame poses read their axes from; validates heads and frame. */
function poseSkeleton(heads: ArrayLike<number>, frame: PoseFrame): PoseSkeleton {
  const J = MIXAMO_JOINTS.length;
  if (heads.length !== J * 3) throw new AutoRigError('BAD_ARRAY', `pose: ${J} joints need ${J * 3} head numbers, got ${heads.length}`);
  for (let i = 0; i < heads.length; i++) {
    if (!Number.isFinite(heads[i])) throw new AutoRigError('BAD_NUMBER', `pose: joint head number ${i} is ${heads[i]}`);
  }
  const finite = (v: Vec3 | undefined) => Array.isArray(v) && v.length === 3 && v.every(Number.isFinite);
  if (!frame || !finite(frame.up) || !finite(frame.forward)) throw new AutoRigError('BAD_REQUEST', 'pose: the frame needs finite up and forward vectors');
  const up = normalize(frame.up);
  const forwardAlong = sub(frame.forward, scale(up, dot(frame.forward, up)));
  const length = Math.hypot(...forwardAlong);
  if (!(length > 1e-6 * Math.hypot(...frame.forward)) || !(Math.hypot(...up) > 0)) {
    throw new AutoRigError('BAD_REQUEST', 'pose: the frame\'s up and forward must be nonzero and not parallel');
  }
  const forward = scale(forwardAlong, 1 / length);
  const index = new Map(MIXAMO_JOINTS.map((name, j) => [name, j]));
  return {
    head: (joint) => {
      const j = index.get(joint)! * 3;
      return [heads[j], heads[j + 1], heads[j + 2]];
    },
    up,
    forward,
    left: cross(up, forward),
  };
}
