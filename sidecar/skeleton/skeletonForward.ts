import { cross, sub } from '../geometry/vec3.js';
import type { Skeleton, Vec3 } from '../types.js';
import { MIXAMO_JOINTS, templateIndexOf, type MixamoJointName } from './mixamoTemplate.js';

/** The template's paired joints whose heads tell left from right: the shoulders, upper arms and thighs. */
const SIDE_PAIRS: readonly (readonly [MixamoJointName, MixamoJointName])[] = [
  ['LeftShoulder', 'RightShoulder'], ['LeftArm', 'RightArm'], ['LeftUpLeg', 'RightUpLeg'],
];

/**
 * Below this fraction of the skeleton's hips-to-head length, the left-right spread (or the hips-to-head rise) is no
 * direction: the joints of a side sit on the other side's, as in a skeleton collapsed to a point.
 */
export const SKELETON_FORWARD_MIN_SPREAD = 1e-3;

/**
 * skeletonForward: the direction a Mixamo-named skeleton faces, in its own space: left × up, with left the sum of
 * SIDE_PAIRS' left heads minus their right heads and up from Hips to Head (x left, y up, z forward, as the canonical
 * frame). A rig's names say which side is the character's left, so an armature tells which way its character faces
 * where the mesh's shape may not (front and back alike); the direction is not unit length and only its sense across
 * up counts. skeleton: Skeleton (names with or without the mixamorig: prefix) → Vec3, or null when a joint it reads is
 * missing or the spread or the rise is under SKELETON_FORWARD_MIN_SPREAD of the hips-to-head length.
 */
export function skeletonForward(skeleton: Skeleton): Vec3 | null {
  const heads = new Map<number, Vec3>();
  for (const joint of skeleton.joints) {
    const t = templateIndexOf(joint.name);
    if (t >= 0 && !heads.has(t)) heads.set(t, joint.head);
  }
  const head = (name: MixamoJointName): Vec3 | undefined => heads.get(MIXAMO_JOINTS.indexOf(name));
  const hips = head('Hips'), top = head('Head');
  if (!hips || !top) return null;
  const up = sub(top, hips);
  const rise = Math.hypot(up[0], up[1], up[2]);
  const left: Vec3 = [0, 0, 0];
  for (const [l, r] of SIDE_PAIRS) {
    const a = head(l), b = head(r);
    if (!a || !b) return null;
    for (let i = 0; i < 3; i++) left[i] += a[i] - b[i];
  }
  const spread = Math.hypot(left[0], left[1], left[2]);
  if (!(rise > 0) || spread < SKELETON_FORWARD_MIN_SPREAD * rise) return null;
  const forward = cross(left, up);
  // left and up along one line (a skeleton whose sides lie above each other) give no forward either
  if (Math.hypot(forward[0], forward[1], forward[2]) < SKELETON_FORWARD_MIN_SPREAD * spread * rise) return null;
  return forward;
}
