/**
 * How a dev character is re-proportioned: length and thickness factors per body region, drawn from a seed, and the
 * per-bone factors they give. Lengths scale a bone along itself, thickness across it; the head, hands and feet scale
 * as a whole (the same factor both ways), so a bigger head stays a head (the "chibi" draws).
 */
import { MIXAMO_JOINTS, type MixamoJointName } from '../../skeleton/mixamoTemplate.js';
import type { SeededRandom } from '../seededRandom.js';

/** Region lengths (legs, arms, spine, neck, head) are drawn in this range. */
export const LENGTH_RANGE: [number, number] = [0.75, 1.35];
/**
 * Build: the trunk's thickness, and what the limbs' thickness follows (a thin trunk under thick limbs reads as
 * deformed, and thick thighs on a narrow pelvis grow into each other).
 */
export const BUILD_RANGE: [number, number] = [0.8, 1.3];
/** Arm and leg thickness relative to the build, and the range it is kept in. */
export const LIMB_BUILD_RANGE: [number, number] = [0.8, 1.2];
export const LIMB_THICKNESS_RANGE: [number, number] = [0.7, 1.5];
/** Neck thickness. */
export const NECK_THICKNESS_RANGE: [number, number] = [0.8, 1.3];
/** Hands and feet, scaled as a whole. */
export const EXTREMITY_RANGE: [number, number] = [0.85, 1.2];
/** The share of characters drawn with a big head, and its range. */
export const CHIBI_CHANCE = 0.15;
export const CHIBI_HEAD_RANGE: [number, number] = [1.4, 1.9];
/** The share of characters whose left and right limbs differ a little, and by how much at most (relative). */
export const ASYMMETRY_CHANCE = 0.25;
export const ASYMMETRY = 0.06;
/** Upper and lower segments of a limb differ by at most this much (relative) from the limb's factor. */
export const SEGMENT_JITTER = 0.04;

/** The drawn numbers, by region (kept in the sample's meta). */
export interface ProportionRegions {
  spine: number;
  neck: number;
  head: number;
  chibi: boolean;
  leftArm: number;
  rightArm: number;
  leftLeg: number;
  rightLeg: number;
  /** upper-arm/forearm and thigh/shin length relative to their limb's factor */
  upperArm: number;
  foreArm: number;
  upperLeg: number;
  lowerLeg: number;
  leftArmThickness: number;
  rightArmThickness: number;
  leftLegThickness: number;
  rightLegThickness: number;
  trunkThickness: number;
  neckThickness: number;
  hands: number;
  feet: number;
}

export interface ProportionFactors {
  regions: ProportionRegions;
  /** length: #23 (MIXAMO_JOINTS order), each joint's bone scales by this along itself (HeadTop_End: 1, no bone) */
  length: number[];
  /** thickness: #23, and by this across itself */
  thickness: number[];
}

/**
 * drawProportionFactors: one draw of every region's factors (a fixed number of draws from rng, in a fixed order) →
 * ProportionFactors. Left and right are the same unless the draw is asymmetric (ASYMMETRY_CHANCE); the trunk is as
 * thick as the build, the limbs the build times LIMB_BUILD_RANGE (within LIMB_THICKNESS_RANGE).
 */
export function drawProportionFactors(rng: SeededRandom): ProportionFactors {
  const length = () => rng.range(LENGTH_RANGE[0], LENGTH_RANGE[1]);
  const spine = length(), neck = length(), normalHead = length();
  const chibi = rng.chance(CHIBI_CHANCE);
  const bigHead = rng.range(CHIBI_HEAD_RANGE[0], CHIBI_HEAD_RANGE[1]);
  const arms = length(), legs = length();
  const build = rng.range(BUILD_RANGE[0], BUILD_RANGE[1]);
  const limbThickness = () => clamp(build * rng.range(LIMB_BUILD_RANGE[0], LIMB_BUILD_RANGE[1]), LIMB_THICKNESS_RANGE);
  const armThickness = limbThickness();
  const legThickness = limbThickness();
  const asymmetric = rng.chance(ASYMMETRY_CHANCE);
  const side = () => {
    const d = rng.range(-ASYMMETRY, ASYMMETRY);
    return asymmetric ? 1 + d : 1;
  };
  const [la, ra, ll, rl, lat, rat, llt, rlt] = [side(), side(), side(), side(), side(), side(), side(), side()];
  const segment = () => 1 + rng.range(-SEGMENT_JITTER, SEGMENT_JITTER);
  const regions: ProportionRegions = {
    spine,
    neck,
    head: chibi ? bigHead : normalHead,
    chibi,
    leftArm: arms * la,
    rightArm: arms * ra,
    leftLeg: legs * ll,
    rightLeg: legs * rl,
    upperArm: segment(),
    foreArm: segment(),
    upperLeg: segment(),
    lowerLeg: segment(),
    leftArmThickness: clamp(armThickness * lat, LIMB_THICKNESS_RANGE),
    rightArmThickness: clamp(armThickness * rat, LIMB_THICKNESS_RANGE),
    leftLegThickness: clamp(legThickness * llt, LIMB_THICKNESS_RANGE),
    rightLegThickness: clamp(legThickness * rlt, LIMB_THICKNESS_RANGE),
    trunkThickness: build,
    neckThickness: rng.range(NECK_THICKNESS_RANGE[0], NECK_THICKNESS_RANGE[1]),
    hands: rng.range(EXTREMITY_RANGE[0], EXTREMITY_RANGE[1]),
    feet: rng.range(EXTREMITY_RANGE[0], EXTREMITY_RANGE[1]),
  };
  return factorsOf(regions);
}

function clamp(x: number, [lo, hi]: [number, number]): number {
  return Math.min(hi, Math.max(lo, x));
}

/** unitProportionFactors: every factor 1 (the character as it is). */
export function unitProportionFactors(): ProportionFactors {
  return factorsOf({
    spine: 1, neck: 1, head: 1, chibi: false, leftArm: 1, rightArm: 1, leftLeg: 1, rightLeg: 1,
    upperArm: 1, foreArm: 1, upperLeg: 1, lowerLeg: 1,
    leftArmThickness: 1, rightArmThickness: 1, leftLegThickness: 1, rightLegThickness: 1,
    trunkThickness: 1, neckThickness: 1, hands: 1, feet: 1,
  });
}

/**
 * factorsOf: region factors → per-bone factors. Trunk bones (Hips…Spine2): spine along, trunk thickness across;
 * Neck: neck, neck thickness; Head: head both ways; shoulders: trunk thickness along (a broader trunk, broader
 * shoulders), the mean of trunk and arm thickness across; upper arm/forearm and thigh/shin: the side's limb length
 * times its segment's, the side's limb thickness; hands and feet (Foot, ToeBase): their factor both ways.
 */
export function factorsOf(r: ProportionRegions): ProportionFactors {
  const bone: Record<MixamoJointName, [number, number]> = {
    Hips: [r.spine, r.trunkThickness], Spine: [r.spine, r.trunkThickness], Spine1: [r.spine, r.trunkThickness], Spine2: [r.spine, r.trunkThickness],
    Neck: [r.neck, r.neckThickness], Head: [r.head, r.head], HeadTop_End: [1, 1],
    LeftShoulder: [r.trunkThickness, (r.trunkThickness + r.leftArmThickness) / 2],
    LeftArm: [r.leftArm * r.upperArm, r.leftArmThickness], LeftForeArm: [r.leftArm * r.foreArm, r.leftArmThickness], LeftHand: [r.hands, r.hands],
    RightShoulder: [r.trunkThickness, (r.trunkThickness + r.rightArmThickness) / 2],
    RightArm: [r.rightArm * r.upperArm, r.rightArmThickness], RightForeArm: [r.rightArm * r.foreArm, r.rightArmThickness], RightHand: [r.hands, r.hands],
    LeftUpLeg: [r.leftLeg * r.upperLeg, r.leftLegThickness], LeftLeg: [r.leftLeg * r.lowerLeg, r.leftLegThickness],
    LeftFoot: [r.feet, r.feet], LeftToeBase: [r.feet, r.feet],
    RightUpLeg: [r.rightLeg * r.upperLeg, r.rightLegThickness], RightLeg: [r.rightLeg * r.lowerLeg, r.rightLegThickness],
    RightFoot: [r.feet, r.feet], RightToeBase: [r.feet, r.feet],
  };
  return { regions: { ...r }, length: MIXAMO_JOINTS.map((n) => bone[n][0]), thickness: MIXAMO_JOINTS.map((n) => bone[n][1]) };
}
