import { AutoRigError } from '../errors.js';
import { axisAngleMatrix } from '../geometry/axisAngleMatrix.js';
import { cross, dot, normalize, scale, sub } from '../geometry/vec3.js';
import { MIXAMO_JOINTS, type MixamoJointName } from '../skeleton/mixamoTemplate.js';
import { poseRotations, type PoseFrame, type SinglePoseName } from '../pose/poseVocabulary.js';
import type { Skeleton, Vec3 } from '../types.js';
import { boneRestFrame } from './boneRestFrame.js';

/**
 * The key poses of Pose Correctives: one bone turned by a fixed angle about an axis read from the character's own
 * rest skeleton, the axes of Apply Latent Pose's vocabulary (sidecar/pose/poseVocabulary.ts), so "elbow bend" bends
 * a human elbow on any proportions and rest arm angle. A corrective shape key is baked at each key pose and a driver
 * scales it by the bone's rotation about the key's axis.
 *
 * | pose            | bone (per side) | angle | vocabulary axis of |
 * |-----------------|-----------------|-------|--------------------|
 * | elbowBend       | ForeArm         |  90°  | elbowBent          |
 * | kneeBend        | Leg             |  90°  | kneeBent           |
 * | shoulderRaise   | Arm             |  60°  | shoulderRaise      |
 * | shoulderForward | Arm             |  60°  | armForward         |
 * | hipFlex         | UpLeg           |  90°  | hipFlex            |
 * | wristBend       | Hand            |  60°  | wristBend          |
 * | spineTwist      | Spine1 (one)    |  45°  | spineTwistLf       |
 *
 * The vocabulary spreads a spine twist over three joints; a key turns one bone (its driver reads one bone), so the
 * whole 45° goes to Spine1, towards the character's left (a twist to the right gets no key: the driver clamps at 0).
 */

/** The key pose families, in the order keys are made. */
export const KEY_POSE_NAMES = ['elbowBend', 'kneeBend', 'shoulderRaise', 'shoulderForward', 'hipFlex', 'wristBend', 'spineTwist'] as const;
export type KeyPoseName = (typeof KEY_POSE_NAMES)[number];

/** One key pose on a skeleton. */
export interface KeyPose {
  /** `<bone>_<pose>`, the shape key's name */
  name: string;
  /** the bone's name in the skeleton (with its prefix, e.g. mixamorig:LeftForeArm) */
  bone: string;
  /** index of the bone in Skeleton.joints */
  joint: number;
  pose: KeyPoseName;
  /** unit rotation axis in the bone's rest frame (x from the roll, y along the bone, z = x × y: Blender's bone axes) */
  axis: Vec3;
  /** the same axis in world space (the skeleton's space) */
  worldAxis: Vec3;
  /** the key angle, radians (> 0: the rotation turns by +angle about axis) */
  angle: number;
}

interface KeyPoseSpec {
  segment: string;
  sided: boolean;
  degrees: number;
  /** the vocabulary pose whose axis the key uses, without its side */
  vocabulary: string;
}

const KEY_POSE_SPECS: Record<KeyPoseName, KeyPoseSpec> = {
  elbowBend: { segment: 'ForeArm', sided: true, degrees: 90, vocabulary: 'elbowBent' },
  kneeBend: { segment: 'Leg', sided: true, degrees: 90, vocabulary: 'kneeBent' },
  shoulderRaise: { segment: 'Arm', sided: true, degrees: 60, vocabulary: 'shoulderRaise' },
  shoulderForward: { segment: 'Arm', sided: true, degrees: 60, vocabulary: 'armForward' },
  hipFlex: { segment: 'UpLeg', sided: true, degrees: 90, vocabulary: 'hipFlex' },
  wristBend: { segment: 'Hand', sided: true, degrees: 60, vocabulary: 'wristBend' },
  spineTwist: { segment: 'Spine1', sided: false, degrees: 45, vocabulary: 'spineTwist' },
};

/** Whether a string names a key pose family. */
export function isKeyPoseName(name: unknown): name is KeyPoseName {
  return typeof name === 'string' && (KEY_POSE_NAMES as readonly string[]).includes(name);
}

/**
 * Where each Mixamo template joint is in a skeleton: its joint named exactly so, or with any prefix ending in ':'
 * (mixamorig:, mixamorig1:…). Extra joints (fingers, eyes) are ignored.
 * skeleton → index per MIXAMO_JOINTS name. Throws BAD_SKELETON naming the template joints it lacks.
 */
export function mixamoJointIndices(skeleton: Skeleton): Record<MixamoJointName, number> {
  const byName = new Map<string, number>();
  skeleton.joints.forEach((joint, j) => {
    const bare = joint.name.slice(joint.name.lastIndexOf(':') + 1);
    if (!byName.has(bare)) byName.set(bare, j);
  });
  const missing = MIXAMO_JOINTS.filter((name) => !byName.has(name));
  if (missing.length > 0) {
    throw new AutoRigError('BAD_SKELETON', `pose correctives need the Mixamo skeleton Auto Rig makes; this one lacks ${missing.join(', ')}`);
  }
  return Object.fromEntries(MIXAMO_JOINTS.map((name) => [name, byName.get(name)!])) as Record<MixamoJointName, number>;
}

/**
 * The character's up and forward read from its skeleton alone (a correctives request carries no frame): up from the
 * hips to the neck, its own left from the right shoulder and hip to the left ones, forward = left × up.
 * skeleton, indices (mixamoJointIndices) → PoseFrame. Throws BAD_SKELETON when the joints give no frame.
 */
export function skeletonPoseFrame(skeleton: Skeleton, indices: Record<MixamoJointName, number>): PoseFrame {
  const head = (name: MixamoJointName) => skeleton.joints[indices[name]].head;
  const upward = sub(head('Neck'), head('Hips'));
  const leftward: Vec3 = [0, 1, 2].map((a) => head('LeftArm')[a] - head('RightArm')[a] + head('LeftUpLeg')[a] - head('RightUpLeg')[a]) as Vec3;
  const forward = cross(leftward, upward);
  const size = Math.hypot(...upward) * Math.hypot(...leftward);
  if (!(Math.hypot(...forward) > 1e-3 * size) || !(size > 0)) {
    throw new AutoRigError('BAD_SKELETON', 'the skeleton has no frame: its hips and neck, or its left and right joints, coincide or line up');
  }
  return { up: normalize(upward), forward: normalize(forward) };
}

/**
 * The key poses of a skeleton: every family of `poses` (default all, KEY_POSE_NAMES order), both sides where sided
 * (left first). skeleton: Auto Rig's Mixamo skeleton (prefixed or not; extra joints allowed), poses: key pose names.
 * → KeyPose[]. Throws BAD_REQUEST for an unknown pose name, BAD_SKELETON for a skeleton without the template joints,
 * without a frame, or with a zero-length bone.
 */
export function keyPoses(skeleton: Skeleton, poses: readonly string[] = KEY_POSE_NAMES): KeyPose[] {
  for (const pose of poses) {
    if (!isKeyPoseName(pose)) throw new AutoRigError('BAD_REQUEST', `unknown corrective pose '${String(pose)}' (known: ${KEY_POSE_NAMES.join(', ')})`);
  }
  const indices = mixamoJointIndices(skeleton);
  const frame = skeletonPoseFrame(skeleton, indices);
  const heads = new Float64Array(MIXAMO_JOINTS.length * 3);
  MIXAMO_JOINTS.forEach((name, j) => heads.set(skeleton.joints[indices[name]].head, j * 3));
  const keys: KeyPose[] = [];
  for (const pose of KEY_POSE_NAMES.filter((p) => poses.includes(p))) {
    const spec = KEY_POSE_SPECS[pose];
    for (const side of spec.sided ? ['Left', 'Right'] : ['']) {
      const template = `${side}${spec.segment}` as MixamoJointName;
      const vocabulary = `${spec.vocabulary}${side === 'Left' ? 'Lf' : side === 'Right' ? 'Rt' : 'Lf'}` as SinglePoseName;
      const worldAxis = rotationAxis(poseRotations(vocabulary, heads, frame, 1), MIXAMO_JOINTS.indexOf(template) * 9);
      const joint = indices[template];
      const bone = skeleton.joints[joint];
      const rest = boneRestFrame(bone.head, bone.tail, bone.roll);
      const axis = normalize([dot(worldAxis, rest.x), dot(worldAxis, rest.y), dot(worldAxis, rest.z)]);
      keys.push({ name: `${bone.name}_${pose}`, bone: bone.name, joint, pose, axis, worldAxis, angle: (spec.degrees * Math.PI) / 180 });
    }
  }
  return keys;
}

/**
 * The unit axis of the rotation matrix at `offset` of `rotations` (row-major 3x3), from its skew part; the vocabulary's
 * turns are between 15° and 90°, far from the 0° and 180° where the skew part vanishes.
 */
function rotationAxis(rotations: Float64Array, offset: number): Vec3 {
  const r = (row: number, col: number) => rotations[offset + row * 3 + col];
  const skew: Vec3 = [r(2, 1) - r(1, 2), r(0, 2) - r(2, 0), r(1, 0) - r(0, 1)];
  const length = Math.hypot(...skew);
  if (!(length > 1e-9)) throw new AutoRigError('INTERNAL', 'a vocabulary pose does not turn the joint its key expects');
  return scale(skew, 1 / length);
}

/**
 * The joint rotations of a key pose in poseTransforms' convention (world axes, relative to rest, about each joint's own
 * rest head): identity but for the key's bone, turned by `fraction` × its angle about its world axis.
 * key, jointCount: #J of the skeleton, fraction: 1 = the key pose → Float64Array #J*9 (row-major 3x3 per joint)
 */
export function keyPoseRotations(key: KeyPose, jointCount: number, fraction = 1): Float64Array {
  const out = new Float64Array(jointCount * 9);
  for (let j = 0; j < jointCount; j++) out[j * 9] = out[j * 9 + 4] = out[j * 9 + 8] = 1;
  axisAngleMatrix(key.worldAxis, key.angle * fraction, out, key.joint * 9);
  return out;
}
