/**
 * The Hips and the hip joints where clothes hide the crotch: the rules read the crotch where the silhouette's legs part,
 * which a coat's or a skirt's hem fused to the body moves down (and the network guesses it from the clothes' outline).
 * Each rule finds one reading of the hips wrong and says what stands in: the network's joints (hipsOverNetworkSpine,
 * hipsFarOverNetworkHipJoints, rulesHipJointsUnderNetwork, thighsShorterThanShins), the body's own pelvis read through
 * the clothes (hipsOverTheCrotch), or the network's joint where it lies within reach and the generator's proportions
 * where it does not (hipsAboveHipJoints, hipJointUnderHips).
 * estimateSkeleton calls them in order on the 2D joints (canonical x, y) and where each came from.
 */
import { networkJoint, type Joints2DPrediction, type JointSource, type Named2D } from './joints2d.js';
import { TRUNK_FRACTIONS } from './landmarks2d.js';
import type { MixamoJointName } from './mixamoTemplate.js';
import { MIXAMO_JOINTS } from './mixamoTemplate.js';

/**
 * The least a thigh (hip joint to knee, along the front view's up) may measure over its shin (knee to ankle) before
 * thighsShorterThanShins calls it misread: the hybrid's own at that step lay within 0.76–1.41 on 479 procedural
 * humanoids (11 000 040–119, 15 000 000–079 and 16 000 000–079, posed apart and mirrored) and 0.69–1.32 on the ten
 * artists' characters (mrfixit, redeclipse_male); the rules' reading of a skirt fused to the body (16 000 076, its hem
 * 0.1 of the height over the soles) gave 0.25–0.28.
 */
export const THIGH_OVER_SHIN_MIN = 0.5;

/** The Hips and the hip joints, which thighsShorterThanShins's remedy takes from the network together. */
export const HIP_JOINTS = ['Hips', 'LeftUpLeg', 'RightUpLeg'] as const;

/**
 * Whether both legs' thighs (UpLeg → Leg) measure less than `least` times their shins (Leg → Foot) along the view's
 * up: a crotch read far down the legs. points: the 2D joints by name (canonical x, y); least: the share → boolean
 * (false where a leg's joints are missing or its shin does not run down)
 */
export function thighsShorterThanShins(points: Partial<Record<Named2D, [number, number]>>, least: number): boolean {
  return (['Left', 'Right'] as const).every((side) => {
    const hip = points[`${side}UpLeg`], knee = points[`${side}Leg`], ankle = points[`${side}Foot`];
    if (!hip || !knee || !ankle || !(knee[1] > ankle[1])) return false;
    return hip[1] - knee[1] < least * (knee[1] - ankle[1]);
  });
}

/**
 * How high over the pelvis's row read through the clothes (crotchThroughClothing's pelvisRow) the hip joints stand, as
 * a share of the height from the soles to the top of the head under any hat (the silhouette's height counts a cone
 * hat's crown, 0.14 of it on 15 000 061): the mean over 95 procedural humanoids in clothes of their own piece,
 * 0.034–0.076 (PELVIS_THICKNESS_SHARE). The network, guessing them from the clothes' outline, stood 0.0128 off on
 * average (0.042 at most); the crotch itself, 0.019 (its typical 0.08 over it, 0.034 at most).
 */
export const HIP_ABOVE_PELVIS = 0.054;

/**
 * The hip joints, the knees and the Hips set over the body's pelvis read through the clothes:
 * - each hip joint stands HIP_ABOVE_PELVIS over it, its column kept: the rules put theirs over the hem (on 18 000 046,
 *   a long coat of its own piece, 0.016 over the body's crotch), the network guessed its from the clothes' outline.
 *   Not where both are the network's and what covers the crotch lies behind the body only (inFront false: a cape
 *   fills the gap between the legs, whose outline the network saw; its hip joints stood 0.2–0.7 % of the height off
 *   on 15 000 006, 019, 024, 073 and 19 000 065, and 1.1–2.3 % over the pelvis);
 * - a knee the clothes hide (the hem, the silhouette's crotch, under it or less than KNEE_OVER_HEM_SLACK over it)
 *   stands halfway from its hip joint down to its ankle: nothing was read there (the rules placed it up from the hem,
 *   the network guessed it from the outline), and the generator's thigh and shin drop alike (hip joint to knee over
 *   knee to ankle, in height: 1.00 on 231 procedural humanoids; the rules' own knee, landmarks2d's KNEE_ALONG_LEG,
 *   stands 0.47 of the way up from an ankle 0.07 of the height over the sole);
 * - the Hips, where the network read it with both hip joints, moves with them, the Spine and Spine1 in proportion to
 *   their distance from the Spine2, which the clothes do not hide; any other Hips stands UPLEG_TYPICAL_DROP of the leg
 *   over them (as hipsAboveHipJoints puts it): the rules divide the trunk from the crotch they read, the hem (on
 *   15 000 033, moved with its hip joints, 7.3 % of the height high). Only a Spine or Spine1 of the Hips' own reading
 *   (the same source) moves with it: the network's, beside the rules' Hips, were read from the trunk itself (29 000 042
 *   and 28 000 062, long coats: moved with the rules' Hips, 6.9 and 6.5 % high). Where the Spine or the Spine1 then
 *   stand out of order up the trunk, the two divide the way from the Hips to the Spine2 in the rules' proportions
 *   (TRUNK_FRACTIONS).
 * points, sources: the 2D joints (canonical x, y) and where each came from, by name, modified in place; pelvis: the
 * pelvis's row's height (canonical y); height: the body's height (canonical); hem: the silhouette's crotch (canonical
 * y), the soles' where the silhouette shows no gap between the legs; inFront: whether the clothes cover the crotch in
 * front (crotchThroughClothing's coveredInFront); headHeight: the height from the soles to the HeadTop, the top of the
 * head under a hat (canonical), which HIP_ABOVE_PELVIS is a share of
 */
export function hipsOverTheCrotch(
  points: Partial<Record<Named2D, [number, number]>>, sources: Record<string, 'learned' | 'geometric'>, pelvis: number, height: number, hem: number,
  inFront: boolean, headHeight: number,
): void {
  const at = pelvis + HIP_ABOVE_PELVIS * headHeight;
  const hips = points.Hips, left = points.LeftUpLeg, right = points.RightUpLeg, chest = points.Spine2;
  if (!left || !right) return;
  // the network saw the legs where what covers the crotch lies behind them only (a cape): its hip joints stand
  const move = inFront || sources.LeftUpLeg !== 'learned' || sources.RightUpLeg !== 'learned';
  const together = sources.Hips === 'learned' && sources.LeftUpLeg === 'learned' && sources.RightUpLeg === 'learned';
  const shift = at - 0.5 * (left[1] + right[1]);
  if (move) {
    points.LeftUpLeg = [left[0], at];
    points.RightUpLeg = [right[0], at];
    sources.LeftUpLeg = sources.RightUpLeg = 'geometric';
  }
  for (const side of ['Left', 'Right'] as const) {
    const upLeg = points[`${side}UpLeg`]!, knee = points[`${side}Leg`], ankle = points[`${side}Foot`];
    if (!knee || !ankle) continue;
    const halfway = 0.5 * (upLeg[1] + ankle[1]);
    if (hem > halfway + KNEE_OVER_HEM_SLACK * height) continue;
    points[`${side}Leg`] = [knee[0], halfway];
    sources[`${side}Leg`] = 'geometric';
  }
  if (!move || !hips || !chest) return;
  const y = together ? hips[1] + shift : at + hipsRiseOverHipJoints(points, at);
  const trunk = chest[1] - hips[1];
  for (const name of ['Spine', 'Spine1'] as const) {
    const p = points[name];
    if (p && trunk > 0 && sources[name] === sources.Hips) points[name] = [p[0], p[1] + (y - hips[1]) * Math.min(1, Math.max(0, (chest[1] - p[1]) / trunk))];
  }
  points.Hips = [hips[0], y];
  sources.Hips = 'geometric';
  // a Spine left under the new Hips would fold the trunk (the old Hips, the rules' over a crotch of proportions, stood
  // over the network's Spine2, and nothing moved with it): Spine and Spine1 divide the Hips to the Spine2 instead
  const spine = points.Spine, spine1 = points.Spine1;
  if (spine && spine1 && !(y < spine[1] && spine[1] < spine1[1] && spine1[1] < chest[1])) {
    const share = (k: number) => (TRUNK_FRACTIONS[k] - TRUNK_FRACTIONS[0]) / (TRUNK_FRACTIONS[3] - TRUNK_FRACTIONS[0]);
    points.Spine = [spine[0], y + share(1) * (chest[1] - y)];
    points.Spine1 = [spine1[0], y + share(2) * (chest[1] - y)];
    sources.Spine = sources.Spine1 = 'geometric';
  }
}

/**
 * How far (share of the body's height) over a knee halfway down its leg the hem may lie and still hide it
 * (hipsOverTheCrotch): a knee is about that thick, so a hem higher up leaves its outline to read below.
 */
export const KNEE_OVER_HEM_SLACK = 0.03;

/**
 * The Hips moved up where the rules put it below the mean height of the two upper-leg joints (a Mixamo Hips sits above
 * them: the generator's by 0.009–0.015 of the height): the network's Hips where that lies above them, else the Hips
 * column UPLEG_TYPICAL_DROP of the way from the hip joints down to the knees above them. Only the rules' Hips is moved.
 * On the procedural humanoids 9 200 000–079 and 9 400 000–079 the hybrid skeleton's Hips was under its hip joints on
 * two, both in long coats with the network unsure of its Hips (confidence 0.49 and 0.45): 8.8 and 5.6 % of the height
 * off, the network's 1.7 and 1.7 %.
 * points, sources: the 2D joints (canonical x, y) and where each came from, by name; source: the joint source (its
 * prediction is read) → the new Hips and its source, or null to keep it.
 */
export function hipsAboveHipJoints(
  points: Partial<Record<Named2D, [number, number]>>, sources: Record<string, 'learned' | 'geometric'>, source: JointSource,
): { point: [number, number]; source: 'learned' | 'geometric' } | null {
  const hips = points.Hips, left = points.LeftUpLeg, right = points.RightUpLeg;
  if (!hips || !left || !right || sources.Hips !== 'geometric') return null;
  const hipJoints = 0.5 * (left[1] + right[1]);
  if (hips[1] >= hipJoints) return null;
  if (source.method !== 'geometric') {
    const net = networkJoint(source.prediction, 'Hips');
    if (net[1] > hipJoints) return { point: net, source: 'learned' };
  }
  return { point: [hips[0], hipJoints + hipsRiseOverHipJoints(points, hipJoints)], source: 'geometric' };
}

/**
 * Whether the rules' Hips stands over the Spine the hybrid took from the network (the trunk folds back down at it) and
 * the network's own Hips stands under that Spine and over the hip joints: the rules divided the trunk from a crotch
 * read too high, the network's Hips stands in. Procedural 27 000 050 (mirrored: a skirt, a cone hat), the network unsure
 * of its Hips (confidence 0.49): the rules' stood 0.02 of the canonical height over the network's Spine, 8.6 % of the
 * height off; the network's 0.4 %.
 * points, sources: the 2D joints (canonical x, y) and where each came from, by name; network: the network's Hips
 * (canonical x, y) → boolean
 */
export function hipsOverNetworkSpine(
  points: Partial<Record<Named2D, [number, number]>>, sources: Record<string, 'learned' | 'geometric'>, network: [number, number],
): boolean {
  const hips = points.Hips, spine = points.Spine, left = points.LeftUpLeg, right = points.RightUpLeg;
  if (!hips || !spine || !left || !right || sources.Hips !== 'geometric' || sources.Spine !== 'learned' || hips[1] <= spine[1]) return false;
  return network[1] < spine[1] && network[1] > 0.5 * (left[1] + right[1]);
}

/**
 * How far over the hip joints the rules' Hips may stand, as a share of the way from it down to the knees, where the
 * hip joints are the network's (hipsFarOverNetworkHipJoints): the generator's stand 0.06–0.08 of it (UPLEG_TYPICAL_DROP's
 * measure), the artists' up to 0.30. On procedural humanoids 18 000 000–024 and 19 000 000–079 (mirrored) the rules'
 * Hips stood 0.05–0.08 over their own hip joints (20 rigs); the one left over the network's, 19 000 001's, 0.26, its
 * coat's hem read as the crotch under a cape (8.4 % of the height off).
 */
export const HIPS_OVER_NETWORK_HIP_JOINTS = 0.2;

/**
 * Whether the rules' Hips stands HIPS_OVER_NETWORK_HIP_JOINTS or more of the way down to the knees over hip joints
 * the hybrid took from the network, and the network's own Hips stands over those hip joints by less: the rules read
 * the crotch too high (a coat's hem under a cape), and the network's Hips stands in. 19 000 001 (mirrored): the rules'
 * Hips 8.4 % of the height off, the network's 2.3 %.
 * points, sources: the 2D joints (canonical x, y) and where each came from, by name; network: the network's Hips
 * (canonical x, y) → boolean
 */
export function hipsFarOverNetworkHipJoints(
  points: Partial<Record<Named2D, [number, number]>>, sources: Record<string, 'learned' | 'geometric'>, network: [number, number],
): boolean {
  const hips = points.Hips, left = points.LeftUpLeg, right = points.RightUpLeg, leftKnee = points.LeftLeg, rightKnee = points.RightLeg;
  if (!hips || !left || !right || !leftKnee || !rightKnee || sources.Hips !== 'geometric') return false;
  if (sources.LeftUpLeg !== 'learned' || sources.RightUpLeg !== 'learned') return false;
  const hipJoints = 0.5 * (left[1] + right[1]), knees = 0.5 * (leftKnee[1] + rightKnee[1]);
  const share = (y: number) => (y - hipJoints) / (y - knees);
  return share(hips[1]) > HIPS_OVER_NETWORK_HIP_JOINTS && network[1] > hipJoints && share(network[1]) < HIPS_OVER_NETWORK_HIP_JOINTS;
}

/**
 * How far under the network's hip joints the rules' may stand, as a share of the network's way from them down to its
 * knees, before the network's stand in (rulesHipJointsUnderNetwork); and how unsure of them the network may then be.
 * The rules' stood 0.6 (34 000 050, mirrored) and 1.0 (33 000 018, posed apart) of it under, each under a long coat fused
 * to the body whose hem they read as the crotch, where the network, sure of them at 0.43–0.49, stood within 2 % of the
 * height (the same characters in the other arm mode: the network's over HYBRID_MIN_CONFIDENCE and taken).
 */
export const HIP_JOINTS_UNDER_NETWORK = 0.4;
export const HIP_JOINTS_NETWORK_MIN_CONFIDENCE = 0.4;

/**
 * Whether both hip joints are the rules', the network is sure of its own to HIP_JOINTS_NETWORK_MIN_CONFIDENCE, and the
 * rules' mean stands HIP_JOINTS_UNDER_NETWORK or more of the network's way from its hip joints down to its knees under
 * the network's: a hem fused to the body, read as the crotch (the rules place the hip joints from the crotch up).
 * points, sources: the 2D joints (canonical x, y) and where each came from, by name; prediction: the network's joints
 * → boolean
 */
export function rulesHipJointsUnderNetwork(
  points: Partial<Record<Named2D, [number, number]>>, sources: Record<string, 'learned' | 'geometric'>, prediction: Joints2DPrediction,
): boolean {
  const left = points.LeftUpLeg, right = points.RightUpLeg;
  if (!left || !right || sources.LeftUpLeg !== 'geometric' || sources.RightUpLeg !== 'geometric') return false;
  const sure = (joint: MixamoJointName) => prediction.confidence[MIXAMO_JOINTS.indexOf(joint)] >= HIP_JOINTS_NETWORK_MIN_CONFIDENCE;
  if (!sure('LeftUpLeg') || !sure('RightUpLeg')) return false;
  const mean = (a: MixamoJointName, b: MixamoJointName) => 0.5 * (networkJoint(prediction, a)[1] + networkJoint(prediction, b)[1]);
  const hipJoints = mean('LeftUpLeg', 'RightUpLeg'), drop = hipJoints - mean('LeftLeg', 'RightLeg');
  return drop > 0 && hipJoints - 0.5 * (left[1] + right[1]) > HIP_JOINTS_UNDER_NETWORK * drop;
}

/**
 * How far the Hips stands over its hip joints as the generator puts it: UPLEG_TYPICAL_DROP of the leg (hip joints to
 * knees; none where the knees are missing). Read by hipsAboveHipJoints and hipsOverTheCrotch.
 * points: the 2D joints (canonical x, y; the knees are read), hipJoints: the hip joints' mean height → canonical units
 */
function hipsRiseOverHipJoints(points: Partial<Record<Named2D, [number, number]>>, hipJoints: number): number {
  const knees = points.LeftLeg && points.RightLeg ? 0.5 * (points.LeftLeg[1] + points.RightLeg[1]) : hipJoints;
  return UPLEG_TYPICAL_DROP * Math.max(0, hipJoints - knees);
}

/**
 * How far below the Hips an upper-leg joint may sit, as a share of the way from the Hips down to the knee. The artists'
 * rigs of the development set lie between −0.48 and 0.30 (bcn_epileptic), the generator's near 0.06; the hybrid
 * skeleton's on 74 procedural development humanoids at most 0.08 but for two in long coats, 0.64 and 0.47.
 */
export const UPLEG_MAX_DROP = 0.4;
/** Where an upper-leg joint goes when neither reading is plausible: the generator's median share (0.064). */
const UPLEG_TYPICAL_DROP = 0.064;

/**
 * The upper-leg joint of one side moved up under the Hips where it sits more than UPLEG_MAX_DROP of the way down to the
 * knee: the network's joint where it has one within that reach (above the Hips by no more), else the same column at
 * UPLEG_TYPICAL_DROP. hips, upLeg, knee: 2D points (canonical x, y; any missing: no change), source: the joint source
 * (its prediction is read), side → the new point and its source, or null to keep the joint.
 */
export function hipJointUnderHips(
  hips: [number, number] | undefined, upLeg: [number, number] | undefined, knee: [number, number] | undefined,
  source: JointSource, side: 'Left' | 'Right',
): { point: [number, number]; source: 'learned' | 'geometric' } | null {
  if (!hips || !upLeg || !knee) return null;
  const legDrop = hips[1] - knee[1];
  if (!(legDrop > 0)) return null;
  const share = (p: [number, number]) => (hips[1] - p[1]) / legDrop;
  if (share(upLeg) <= UPLEG_MAX_DROP) return null;
  if (source.method !== 'geometric') {
    const net = networkJoint(source.prediction, `${side}UpLeg`);
    if (Math.abs(share(net)) <= UPLEG_MAX_DROP) return { point: net, source: 'learned' };
  }
  return { point: [upLeg[0], hips[1] - UPLEG_TYPICAL_DROP * legDrop], source: 'geometric' };
}
