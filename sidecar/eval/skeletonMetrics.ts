import { AutoRigError } from '../errors.js';
import { MIXAMO_PREFIX } from '../skeleton/mixamoTemplate.js';
import type { Vec3 } from '../types.js';

/**
 * Skeleton-to-skeleton distances of RigNet (Xu et al. 2020), on normalised coordinates (sidecar/eval/normalise.ts):
 * CD-J2J between joints, CD-J2B between joints and bones, CD-B2B between points sampled densely on the bones;
 * each the mean of the two one-sided mean nearest distances. Plus per-joint errors where joints correspond by name.
 */

/** A bone as a segment between two joint positions (normally parent head → child head). */
export type Bone = [Vec3, Vec3];

function distance(a: Vec3, b: Vec3): number {
  return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}

/** Distance from p to the segment a–b (to a when the segment has no length). */
export function pointSegmentDistance(p: Vec3, a: Vec3, b: Vec3): number {
  const abx = b[0] - a[0], aby = b[1] - a[1], abz = b[2] - a[2];
  const lengthSq = abx * abx + aby * aby + abz * abz;
  let t = lengthSq > 0 ? ((p[0] - a[0]) * abx + (p[1] - a[1]) * aby + (p[2] - a[2]) * abz) / lengthSq : 0;
  t = Math.min(1, Math.max(0, t));
  return Math.hypot(p[0] - a[0] - t * abx, p[1] - a[1] - t * aby, p[2] - a[2] - t * abz);
}

function nonEmpty(what: string, n: number): void {
  if (n === 0) throw new AutoRigError('BAD_SKELETON', `${what} is empty: no distance to measure`);
}

/** mean over p ∈ from of min over q ∈ to of |p − q| */
function meanNearestPoint(from: Vec3[], to: Vec3[]): number {
  let total = 0;
  for (const p of from) {
    let best = Infinity;
    for (const q of to) best = Math.min(best, distance(p, q));
    total += best;
  }
  return total / from.length;
}

/** mean over p ∈ from of min over bones of the distance from p to the bone */
function meanNearestBone(from: Vec3[], bones: Bone[]): number {
  let total = 0;
  for (const p of from) {
    let best = Infinity;
    for (const [a, b] of bones) best = Math.min(best, pointSegmentDistance(p, a, b));
    total += best;
  }
  return total / from.length;
}

/**
 * The bones of a skeleton: one segment from each joint's parent to the joint, roots give none.
 * heads: Vec3[] #J, parents: #J (-1 root) → Bone[] (#J − roots)
 */
export function bonesOf(heads: Vec3[], parents: ArrayLike<number>): Bone[] {
  const bones: Bone[] = [];
  for (let j = 0; j < heads.length; j++) {
    const p = parents[j];
    if (p >= 0) bones.push([heads[p], heads[j]]);
  }
  return bones;
}

/**
 * CD-J2J: ½ (mean_{p∈a} min_{q∈b} |p−q| + mean_{q∈b} min_{p∈a} |p−q|). Throws BAD_SKELETON on an empty set.
 * a: Vec3[] #A, b: Vec3[] #B → distance
 */
export function chamferJointToJoint(a: Vec3[], b: Vec3[]): number {
  nonEmpty('joint set a', a.length);
  nonEmpty('joint set b', b.length);
  return (meanNearestPoint(a, b) + meanNearestPoint(b, a)) / 2;
}

/**
 * CD-J2B: ½ (mean over a's joints of the distance to b's nearest bone + mean over b's joints of the distance to a's
 * nearest bone). A joint lying anywhere on the other skeleton's bones scores 0, so a joint slid along its bone costs
 * nothing here but does in CD-J2J. Throws BAD_SKELETON on an empty set.
 * aJoints: Vec3[], aBones: Bone[], bJoints: Vec3[], bBones: Bone[] → distance
 */
export function chamferJointToBone(aJoints: Vec3[], aBones: Bone[], bJoints: Vec3[], bBones: Bone[]): number {
  nonEmpty('joint set a', aJoints.length);
  nonEmpty('joint set b', bJoints.length);
  nonEmpty('bone set a', aBones.length);
  nonEmpty('bone set b', bBones.length);
  return (meanNearestBone(aJoints, bBones) + meanNearestBone(bJoints, aBones)) / 2;
}

/**
 * Points along the bones, no farther apart than `spacing`, both ends included (shared ends appear once per bone).
 * bones: Bone[], spacing > 0 → Vec3[]
 */
export function sampleBones(bones: Bone[], spacing: number): Vec3[] {
  if (!(spacing > 0)) throw new AutoRigError('BAD_NUMBER', `bone sample spacing must be > 0, got ${spacing}`);
  const points: Vec3[] = [];
  for (const [a, b] of bones) {
    const steps = Math.max(1, Math.ceil(distance(a, b) / spacing));
    for (let i = 0; i <= steps; i++) {
      const t = i / steps;
      points.push([a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])]);
    }
  }
  return points;
}

/**
 * CD-B2B: CD-J2J of points sampled densely on both skeletons' bones, which compares the bones' shapes, not only
 * their joints. Throws BAD_SKELETON on an empty bone set.
 * aBones: Bone[], bBones: Bone[], spacing: distance between samples (normalised units, default 0.005) → distance
 */
export function chamferBoneToBone(aBones: Bone[], bBones: Bone[], spacing = 0.005): number {
  nonEmpty('bone set a', aBones.length);
  nonEmpty('bone set b', bBones.length);
  return chamferJointToJoint(sampleBones(aBones, spacing), sampleBones(bBones, spacing));
}

export interface PerJointErrors {
  /** joint name → |ours − artist|, for the joints both skeletons have */
  perJoint: Record<string, number>;
  mean: number;
  max: number;
  /** the name of the joint with the largest error */
  maxJoint: string;
}

/**
 * Distance between corresponding joints, for the joints present (non-null) in both lists.
 * Throws BAD_SKELETON when no joint is present in both, or the lists differ in length.
 * ours, artist: (Vec3 | null)[] #J, names: string[] #J → PerJointErrors
 */
export function perJointErrors(ours: (Vec3 | null)[], artist: (Vec3 | null)[], names: string[]): PerJointErrors {
  if (ours.length !== names.length || artist.length !== names.length) {
    throw new AutoRigError('BAD_SKELETON', `perJointErrors: ${ours.length} and ${artist.length} joints for ${names.length} names`);
  }
  const perJoint: Record<string, number> = {};
  let total = 0, count = 0, max = -Infinity, maxJoint = '';
  for (let j = 0; j < names.length; j++) {
    const o = ours[j], a = artist[j];
    if (!o || !a) continue;
    const e = distance(o, a);
    perJoint[names[j]] = e;
    total += e;
    count++;
    if (e > max) { max = e; maxJoint = names[j]; }
  }
  if (count === 0) throw new AutoRigError('BAD_SKELETON', 'perJointErrors: no joint is present in both skeletons');
  return { perJoint, mean: total / count, max, maxJoint };
}

/** Body part a template joint belongs to: a joint placed in the wrong one is a qualitative failure. */
export type LimbGroup = 'trunk' | 'leftArm' | 'rightArm' | 'leftLeg' | 'rightLeg';

const LIMB_OF: Record<string, LimbGroup> = {
  Hips: 'trunk', Spine: 'trunk', Spine1: 'trunk', Spine2: 'trunk', Neck: 'trunk', Head: 'trunk', HeadTop_End: 'trunk',
  LeftShoulder: 'leftArm', LeftArm: 'leftArm', LeftForeArm: 'leftArm', LeftHand: 'leftArm',
  RightShoulder: 'rightArm', RightArm: 'rightArm', RightForeArm: 'rightArm', RightHand: 'rightArm',
  LeftUpLeg: 'leftLeg', LeftLeg: 'leftLeg', LeftFoot: 'leftLeg', LeftToeBase: 'leftLeg',
  RightUpLeg: 'rightLeg', RightLeg: 'rightLeg', RightFoot: 'rightLeg', RightToeBase: 'rightLeg',
};

/**
 * The limb group of a template joint, with or without the `mixamorig:` prefix. Throws BAD_SKELETON for a name
 * outside the template.
 */
export function templateLimb(name: string): LimbGroup {
  const bare = name.startsWith(MIXAMO_PREFIX) ? name.slice(MIXAMO_PREFIX.length) : name;
  const limb = LIMB_OF[bare];
  if (!limb) throw new AutoRigError('BAD_SKELETON', `"${name}" is not a template joint`);
  return limb;
}

/**
 * Our joints that landed on the wrong body part: joint j is flagged when it is farther than `tolerance` from the
 * artist's j and some artist joint of another limb group (the other side's arm, a leg for an arm, the trunk...) is
 * nearer to it than the artist's j. The tolerance keeps joints that sit where limbs meet (a shoulder near the
 * neck) from being flagged for being a hair nearer the neighbour.
 * ours, artist: (Vec3 | null)[] #J (null: absent), names: string[] #J, limbOf: name → group,
 * tolerance: normalised units (default 0.05) → the flagged joints' names, in list order
 */
export function wrongLimbJoints(
  ours: (Vec3 | null)[], artist: (Vec3 | null)[], names: string[], limbOf: (name: string) => string, tolerance = 0.05,
): string[] {
  if (ours.length !== names.length || artist.length !== names.length) {
    throw new AutoRigError('BAD_SKELETON', `wrongLimbJoints: ${ours.length} and ${artist.length} joints for ${names.length} names`);
  }
  const flagged: string[] = [];
  for (let j = 0; j < names.length; j++) {
    const o = ours[j], a = artist[j];
    if (!o || !a) continue;
    const own = distance(o, a);
    if (own <= tolerance) continue;
    const limb = limbOf(names[j]);
    for (let k = 0; k < names.length; k++) {
      const other = artist[k];
      if (!other || k === j || limbOf(names[k]) === limb) continue;
      if (distance(o, other) < own) {
        flagged.push(names[j]);
        break;
      }
    }
  }
  return flagged;
}
