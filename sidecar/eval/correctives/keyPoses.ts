/**
 * The key poses of issue 7, per joint of the character's left side (and the spine): elbow and knee bend, shoulder
 * raise and forward, hip flex, wrist bend, spine twist, plus a wrist twist (the hand rolled about the forearm, where
 * the candy-wrapper defect lives). Each is turned to an exact angle (45° and 90° in the eval). Axes come from the
 * character's own rest skeleton: the vocabulary's (pose/poseVocabulary.ts poseRotations), scaled to the angle, except
 * the wrist twist, which the vocabulary lacks and which is built here from the ForeArm → Hand direction.
 */
import { AutoRigError } from '../../errors.js';
import { axisAngleMatrix } from '../../geometry/axisAngleMatrix.js';
import { GENERATOR_FRAME, poseRotations, type PoseFrame, type SinglePoseName } from '../../pose/poseVocabulary.js';
import { MIXAMO_JOINTS, type MixamoJointName } from '../../skeleton/mixamoTemplate.js';
import type { Vec3 } from '../../types.js';

/** One key pose: its label, how it is made, the joint whose neighbourhood is measured and its cross-section joints. */
export interface KeyPose {
  /** short id (command line) and label (tables) */
  id: string;
  name: string;
  /** the vocabulary pose it scales, or 'wristTwistLf' (built here) */
  source: SinglePoseName | 'wristTwistLf';
  /** the vocabulary's angle at strength 1 (degrees; the angle split over its joints); 0 for the wrist twist */
  vocabularyDegrees: number;
  /** the joint whose neighbourhood's volume is measured (its rest head, posed) */
  joint: MixamoJointName;
  /** joints whose limb cross-section is the candy-wrapper measure (elbows, wrists, knees); may be empty */
  sections: MixamoJointName[];
}

export const KEY_POSES: readonly KeyPose[] = [
  { id: 'elbow', name: 'elbow bend', source: 'elbowBentLf', vocabularyDegrees: 90, joint: 'LeftForeArm', sections: ['LeftForeArm'] },
  { id: 'knee', name: 'knee bend', source: 'kneeBentLf', vocabularyDegrees: 90, joint: 'LeftLeg', sections: ['LeftLeg'] },
  { id: 'shoulderRaise', name: 'shoulder raise', source: 'shoulderRaiseLf', vocabularyDegrees: 60, joint: 'LeftArm', sections: [] },
  { id: 'shoulderForward', name: 'shoulder forward', source: 'armForwardLf', vocabularyDegrees: 70, joint: 'LeftArm', sections: [] },
  { id: 'hipFlex', name: 'hip flex', source: 'hipFlexLf', vocabularyDegrees: 60, joint: 'LeftUpLeg', sections: [] },
  { id: 'wristBend', name: 'wrist bend', source: 'wristBendLf', vocabularyDegrees: 60, joint: 'LeftHand', sections: ['LeftHand'] },
  { id: 'wristTwist', name: 'wrist twist', source: 'wristTwistLf', vocabularyDegrees: 0, joint: 'LeftHand', sections: ['LeftHand'] },
  { id: 'spineTwist', name: 'spine twist', source: 'spineTwistLf', vocabularyDegrees: 45, joint: 'Spine1', sections: [] },
];

export const KEY_POSE_DEGREES: readonly number[] = [45, 90];

const J = MIXAMO_JOINTS.length;
const IDENTITY = [1, 0, 0, 0, 1, 0, 0, 0, 1];

/**
 * keyPoseRotations: a key pose at `degrees` on a character → per-joint rotations #23*9 (poseTransforms' convention:
 * world axes, relative to rest, about each joint's rest head). heads: #23*3 rest heads (MIXAMO_JOINTS order), frame:
 * the character's up and forward. A vocabulary pose beyond its largest strength is its half-angle rotation composed
 * with itself (the same axis, so the angles add). Throws what poseRotations throws (BAD_SKELETON for a bone of no
 * length, BAD_ARRAY for heads of the wrong length).
 */
export function keyPoseRotations(pose: KeyPose, heads: ArrayLike<number>, degrees: number, frame: PoseFrame = GENERATOR_FRAME): Float64Array {
  if (!Number.isFinite(degrees) || degrees < 0 || degrees > 180) throw new AutoRigError('BAD_REQUEST', `key pose angle must be in [0°, 180°], got ${degrees}`);
  if (pose.source === 'wristTwistLf') return wristTwist(heads, degrees);
  const strength = degrees / pose.vocabularyDegrees;
  const half = strength > 1.5;
  const r = poseRotations(pose.source, heads, frame, half ? strength / 2 : strength);
  if (!half) return r;
  const out = new Float64Array(J * 9);
  for (let j = 0; j < J; j++) {
    for (let a = 0; a < 3; a++) {
      for (let b = 0; b < 3; b++) {
        let s = 0;
        for (let k = 0; k < 3; k++) s += r[j * 9 + a * 3 + k] * r[j * 9 + k * 3 + b];
        out[j * 9 + a * 3 + b] = s;
      }
    }
  }
  return out;
}

/** The left hand rolled by `degrees` about the rest ForeArm → Hand direction (thumb side forward for a positive turn). */
function wristTwist(heads: ArrayLike<number>, degrees: number): Float64Array {
  if (heads.length !== J * 3) throw new AutoRigError('BAD_ARRAY', `key pose: ${J} joints need ${J * 3} head numbers, got ${heads.length}`);
  const f = MIXAMO_JOINTS.indexOf('LeftForeArm') * 3, h = MIXAMO_JOINTS.indexOf('LeftHand') * 3;
  const axis = [heads[h] - heads[f], heads[h + 1] - heads[f + 1], heads[h + 2] - heads[f + 2]];
  const length = Math.hypot(axis[0], axis[1], axis[2]);
  if (!(length > 0)) throw new AutoRigError('BAD_SKELETON', 'key pose: the left forearm has no length');
  const out = new Float64Array(J * 9);
  for (let j = 0; j < J; j++) out.set(IDENTITY, j * 9);
  axisAngleMatrix(axis.map((v) => v / length) as Vec3, (degrees * Math.PI) / 180, out, h * 3);
  return out;
}
