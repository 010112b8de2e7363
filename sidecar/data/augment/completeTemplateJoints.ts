/**
 * The 23 template joints of an artist's rig that lacks some of them (no shoulder bones, no neck, a hip-less rig, one
 * bone per limb): the missing ones are put where a Mixamo rig has them, relative to the joints the rig does have, so
 * that every training character carries all 23 ground-truth joints. Joints missing between two present ones of a chain
 * are spread evenly on the segment between them, and missing chain ends along the last present bone, so that a chain
 * stays straight where the artist had one bone (the re-proportioning relies on it: see reproportionSkeleton.ts).
 */
import { add, distance, scale, sub } from '../../geometry/vec3.js';
import { MIXAMO_JOINTS, type MixamoJointName } from '../../skeleton/mixamoTemplate.js';
import type { Skeleton, Vec3 } from '../../types.js';

/** The chain child of each template joint (the joint at the end of its bone), as in templateMapping. */
export const CHAIN_CHILD: Partial<Record<MixamoJointName, MixamoJointName>> = {
  Hips: 'Spine', Spine: 'Spine1', Spine1: 'Spine2', Spine2: 'Neck', Neck: 'Head', Head: 'HeadTop_End',
  LeftShoulder: 'LeftArm', LeftArm: 'LeftForeArm', LeftForeArm: 'LeftHand',
  RightShoulder: 'RightArm', RightArm: 'RightForeArm', RightForeArm: 'RightHand',
  LeftUpLeg: 'LeftLeg', LeftLeg: 'LeftFoot', LeftFoot: 'LeftToeBase',
  RightUpLeg: 'RightLeg', RightLeg: 'RightFoot', RightFoot: 'RightToeBase',
};

/** The template chains, root side first: trunk and head, then each arm and leg. */
const TRUNK: MixamoJointName[] = ['Hips', 'Spine', 'Spine1', 'Spine2', 'Neck', 'Head', 'HeadTop_End'];
const limb = (side: 'Left' | 'Right', roles: string[]) => roles.map((r) => `${side}${r}` as MixamoJointName);
const ARMS = [limb('Left', ['Shoulder', 'Arm', 'ForeArm', 'Hand']), limb('Right', ['Shoulder', 'Arm', 'ForeArm', 'Hand'])];
const LEGS = [limb('Left', ['UpLeg', 'Leg', 'Foot', 'ToeBase']), limb('Right', ['UpLeg', 'Leg', 'Foot', 'ToeBase'])];

/**
 * Where a missing shoulder joint goes: this share of the way from the neck's head to the arm's (the dev rigs with
 * clavicles have theirs at 0.08–0.17; Mixamo's sits near the base of the neck).
 */
const SHOULDER_SHARE = 0.2;
/** Where missing arm joints go along the last present arm bone (head → its tail at the fingertips), by how many are present. */
const ARM_END_SHARES: Record<number, number[]> = { 1: [0.37, 0.74], 2: [0.59] };
/** Where missing leg joints go along the last present leg bone (head → its tail at the sole). */
const LEG_END_SHARES: Record<number, number[]> = { 1: [0.48, 0.95], 2: [0.92] };
/** A missing toe joint sits this share of the way from the ankle to the tip of the foot (the ball of the foot). */
const TOE_SHARE = 0.65;
/** A foot without any foot bone reaches forward this share of the shin's length (toe joint), then as far again to its tip. */
const FOOT_REACH = 0.22;

export interface CompletedJoints {
  /** heads: #23 joint positions, MIXAMO_JOINTS order, in the rig's space */
  heads: Vec3[];
  /** mapped: #23, true where the artist's rig has the joint (false: placed here) */
  mapped: boolean[];
  /**
   * tails: #23, the end of each template joint's bone: its chain child's head, or for the chain ends (hands, toes) the
   * tip the mapping found; HeadTop_End's is its own head
   */
  tails: Vec3[];
}

/**
 * completeTemplateJoints: the mapped template skeleton → all 23 joints.
 * template: templateSkeleton's result (skeleton joints with head and tail, templateIndex: their MIXAMO_JOINTS index;
 * must hold Head, both Arms and UpLegs, and Hips or a spine joint, as mapRigToTemplate guarantees), forward: unit
 * vector, the character's forward (only used for a leg without a foot bone), headTop: where the top of the head is
 * (headTopAbove), or null → CompletedJoints.
 * Rules: HeadTop_End missing → headTop, else the Head bone's tail. Hips missing → halfway from the middle of the
 * two UpLeg heads to the lowest spine joint. Spine/Spine1/Spine2/Neck missing → evenly between the present neighbours
 * of the trunk chain. Shoulder missing → SHOULDER_SHARE from Neck to Arm. Missing limb joints between two present ones →
 * evenly between them; missing at the end of a limb → at fixed shares along the last present bone (ARM_END_SHARES,
 * LEG_END_SHARES, TOE_SHARE); a leg without a foot bone gets its toe FOOT_REACH shin lengths forward of the ankle.
 */
export function completeTemplateJoints(template: { skeleton: Skeleton; templateIndex: number[] }, forward: Vec3, headTop: Vec3 | null): CompletedJoints {
  const J = MIXAMO_JOINTS.length;
  const index = (n: MixamoJointName) => MIXAMO_JOINTS.indexOf(n);
  const heads: (Vec3 | null)[] = new Array(J).fill(null);
  const tails: (Vec3 | null)[] = new Array(J).fill(null);
  template.templateIndex.forEach((t, s) => {
    heads[t] = [...template.skeleton.joints[s].head];
    tails[t] = [...template.skeleton.joints[s].tail];
  });
  const mapped = heads.map((h) => h !== null);
  const head = (n: MixamoJointName) => heads[index(n)];
  const set = (n: MixamoJointName, p: Vec3) => (heads[index(n)] = p);

  if (!head('HeadTop_End')) set('HeadTop_End', headTop ? [...headTop] : tails[index('Head')]!);
  if (!head('Hips')) {
    const lowestSpine = (['Spine', 'Spine1', 'Spine2'] as MixamoJointName[]).map(head).find((h) => h)!;
    const between = lerp3(head('LeftUpLeg')!, head('RightUpLeg')!, 0.5);
    set('Hips', lerp3(between, lowestSpine, 0.5));
  }
  fillBetween(TRUNK, head, set);
  for (const [shoulder, arm, foreArm, hand] of ARMS) {
    if (!head(shoulder)) set(shoulder, lerp3(head('Neck')!, head(arm)!, SHOULDER_SHARE));
    fillEnd([arm, foreArm, hand], head, set, (n) => tails[index(n)], ARM_END_SHARES);
    fillBetween([shoulder, arm, foreArm, hand], head, set);
    if (!tails[index(hand)]) tails[index(hand)] = lastTail([arm, foreArm, hand], (n) => tails[index(n)]);
  }
  for (const [upLeg, leg, foot, toe] of LEGS) {
    const footless = !head(foot);
    fillEnd([upLeg, leg, foot], head, set, (n) => tails[index(n)], LEG_END_SHARES);
    fillBetween([upLeg, leg, foot], head, set);
    if (!head(toe)) {
      if (footless) {
        const shin = distance(head(leg)!, head(foot)!);
        set(toe, add(head(foot)!, scale(forward, FOOT_REACH * shin)));
        tails[index(toe)] = add(head(foot)!, scale(forward, 2 * FOOT_REACH * shin));
      } else {
        const tip = tails[index(foot)]!;
        set(toe, lerp3(head(foot)!, tip, TOE_SHARE));
        tails[index(toe)] = tip;
      }
    }
  }

  const done = heads as Vec3[];
  const boneTails = MIXAMO_JOINTS.map((n, t) => {
    const child = CHAIN_CHILD[n];
    if (child) return [...done[index(child)]] as Vec3;
    return tails[t] ? ([...tails[t]!] as Vec3) : ([...done[t]] as Vec3);
  });
  return { heads: done, mapped, tails: boneTails };
}

/**
 * headTopAbove: where Mixamo puts HeadTop_End, straight above the head joint at the height of the head's highest
 * vertex (a head bone's tail from the mapping may point at a snout or a hat brim instead).
 * head: the Head joint, up: unit vector, points: the vertices the head bone carries (weight ≥ 0.5 on Head) → the
 * point, or null when there are none above the joint.
 */
export function headTopAbove(head: Vec3, up: Vec3, points: Vec3[]): Vec3 | null {
  let reach = 0;
  for (const p of points) reach = Math.max(reach, (p[0] - head[0]) * up[0] + (p[1] - head[1]) * up[1] + (p[2] - head[2]) * up[2]);
  return reach > 0 ? add(head, scale(up, reach)) : null;
}

/** Missing joints strictly between two present ones of a chain: evenly spaced on the segment between those two. */
function fillBetween(chain: MixamoJointName[], head: (n: MixamoJointName) => Vec3 | null, set: (n: MixamoJointName, p: Vec3) => void): void {
  let last = -1;
  chain.forEach((n, i) => {
    if (!head(n)) return;
    if (last >= 0 && i - last > 1) {
      const a = head(chain[last])!, b = head(n)!;
      for (let k = last + 1; k < i; k++) set(chain[k], lerp3(a, b, (k - last) / (i - last)));
    }
    last = i;
  });
}

/**
 * Missing joints after the last present one of a chain: at shares[present count] along the last present bone, from
 * its head to its tail.
 */
function fillEnd(
  chain: MixamoJointName[],
  head: (n: MixamoJointName) => Vec3 | null,
  set: (n: MixamoJointName, p: Vec3) => void,
  tail: (n: MixamoJointName) => Vec3 | null,
  shares: Record<number, number[]>,
): void {
  let last = -1;
  chain.forEach((n, i) => head(n) && (last = i));
  if (last < 0 || last === chain.length - 1) return;
  const end = tail(chain[last]);
  if (!end) return;
  const along = shares[last + 1];
  const from = head(chain[last])!;
  for (let k = last + 1; k < chain.length; k++) set(chain[k], lerp3(from, end, along[k - last - 1]));
}

/** The tail of the last present bone of a chain (the fingertips when the hand bone is missing). */
function lastTail(chain: MixamoJointName[], tail: (n: MixamoJointName) => Vec3 | null): Vec3 {
  for (let k = chain.length - 1; k >= 0; k--) {
    const t = tail(chain[k]);
    if (t) return [...t];
  }
  return [0, 0, 0];
}

/** The point a share t of the way from a to b. */
function lerp3(a: Vec3, b: Vec3, t: number): Vec3 {
  return add(a, scale(sub(b, a), t));
}
