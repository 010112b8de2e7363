import type { CanonicalFrame } from '../mesh/canonicalFrame.js';
import { fromCanonical } from '../mesh/canonicalFrame.js';
import type { Skeleton, Vec3 } from '../types.js';
import { pixelToCanonical, renderFrontView, type FrontView } from './frontView.js';
import { checkHumanoidShape } from './humanoidShape.js';
import type { Landmarks2D, Pixel } from './landmarks2d.js';
import { findLandmarks2D } from './landmarks2d.js';
import { liftJointsByFrontPiece, type FrontPieceLift } from './liftJoints.js';
import { crotchThroughClothing } from './crotchThroughClothing.js';
import { meshShells } from '../mesh/meshShells.js';
import { withoutPropRods } from './propRods.js';
import { armsPosedApart, frontDepthAt, MIRROR_ON_BODY_TOLERANCE, silhouetteNear } from './armsPosedApart.js';
import type { MixamoJointName } from './mixamoTemplate.js';
import { buildMixamoSkeleton, MIXAMO_JOINTS } from './mixamoTemplate.js';
import {
  armDepthsOfEqualLength, armJointsInsideWhatWrapsThem, armJointsOnTheirOwnStretch, armJointsOnTheirParentsPiece,
  armJointsWhoseRayMissedTheLimb, elbowsBehindTheirArm, forearmsOfEqualLength, inArmProportion, OWN_POSE_JOINTS, symmetrise,
  wristsBehindWhatTheyHold,
} from './armDepths.js';
import { networkJoint, type Joints2DPrediction, type JointSource, type Named2D } from './joints2d.js';
import {
  HIP_JOINTS, hipJointUnderHips, hipsAboveHipJoints, hipsFarOverNetworkHipJoints, hipsOverNetworkSpine, hipsOverTheCrotch,
  rulesHipJointsUnderNetwork, THIGH_OVER_SHIN_MIN, thighsShorterThanShins,
} from './hipsUnderClothes.js';

export const FRONT_VIEW_RESOLUTION = 256;

export interface SkeletonEstimate {
  skeleton: Skeleton;
  /** joint heads in canonical space, by Mixamo name */
  canonical: Record<MixamoJointName, Vec3>;
  /** the geometric landmarks, when they were read (not for method 'learned') */
  landmarks: Landmarks2D | null;
  /** where each 2D joint came from: 'learned' or 'geometric' */
  sources: Record<string, 'learned' | 'geometric'>;
  /** the front view without its standing rods (withoutPropRods): the body the rules read; the view itself when it has none */
  silhouette: FrontView;
  /** whether the arms were read as posed apart (armsPosedApart): each side's elbow, wrist and hand tip kept its own depth */
  armsPosedApart: boolean;
  /** the sides whose wrist was read across something its hand holds and stands behind it (wristsBehindWhatTheyHold) */
  wristsBehindHeld: ('Left' | 'Right')[];
}

export const HYBRID_MIN_CONFIDENCE = 0.5;

/**
 * The hybrid takes the network's wrist over the rules' from this confidence, lower than HYBRID_MIN_CONFIDENCE, where
 * the rules' wrist is still there after mirroredUnsureSide (which gives a pair with one sure side the network's side
 * mirrored: on mirrored poses that is the nearer, 11 000 043's hands 0.9 and 0.3 % of the height off, and taking the
 * unsure side's own reading instead put both at 2.7 and 2.2 % once the pair was averaged). A hand holding a sword or a
 * staff, or in a wide sleeve, is where the network is least sure of a wrist and where the rules trace the arm into the
 * prop or the cloth. On 400 procedural humanoids (11 000 040–119, 12 000 000–079,
 * 13 000 000–079, 15 000 000–079 with arms posed apart, 11 000 040–119 mirrored) the hybrid left ten wrists to the rules
 * with the network at 0.43–0.49: the network's was the nearer on six (front view, in units of the height: 0.032–0.127
 * against 0.000–0.015), about as near on four, never farther. The elbows too from 0.4 moved the held-out mixamo_ely
 * (CD-J2J 0.0210 → 0.0232) and robot_expressive (0.0309 → 0.0329); the wrists alone move no artist's joint. Where the
 * rules' wrist was read across a sword's blade (landmarks2d heldAcrossWrist) the network's is taken at any confidence.
 */
export const HYBRID_MIN_HAND_CONFIDENCE = 0.4;

/**
 * The rules' upper-arm joint of an arm held out (landmarks2d armHeldOut: T or A, neither hanging from an armpit nor laid
 * along the body) stands where the arm's centre line leaves the waist's width: a measure of the waist, not of the
 * shoulder, so broad shoulders over a narrow waist put it inside the chest. Over 495 arms held out (438 rigs of
 * 15–17 000 000, both arm modes) it stood 3.8 % of the canonical box off in the front view on average, the network's
 * 0.7, which was the nearer on 459. The hybrid keeps it only where the network is unsure of it (under 0.5) and no sure
 * other side was mirrored onto it (mirroredUnsureSide): 4 of 6 240 procedural rigs, all unsure of both sides at
 * 0.44–0.50 (28 000 033, T-posed: its upper-arm joints 10 % of the height inside its shoulders). From this confidence
 * the network's stands in there. robot_expressive's arms, which the network reads an arm's thickness above its
 * shoulders at 0.17 and 0.34, keep the rules' (taken at any confidence: CD-J2J 0.0303 → 0.0393). docs/EVAL.md,
 * sixty-fifth session. The same holds for any rules' upper-arm joint where the width profile showed no neck (landmarks2d
 * shouldersFromProportions): the shoulder row is then a share of the height above the crotch. Over 380 such arms (193
 * of 5 280 rigs, 15–47 000 000 in both arm modes, mostly chibis under three heads tall) the rules' joint stood 23.5 %
 * of the canonical box off in the front view on average, the network's 0.75 (the nearer on 374); the hybrid had taken
 * the network's on all of them. 48 000 059 (two heads tall, one arm held out) was unsure of both at 0.47 and 0.49: its
 * upper-arm joints stood inside its head, 40.9 % of the height off (1.5 with the network's; sixty-sixth session).
 */
export const HELD_OUT_ARM_MIN_CONFIDENCE = 0.4;

/** The arm joints whose mean confidence tells whether the network saw arms (networkSawArms). */
const ARM_JOINTS: readonly MixamoJointName[] = ['LeftArm', 'LeftForeArm', 'LeftHand', 'RightArm', 'RightForeArm', 'RightHand'];

/**
 * Whether the network saw both arms: the mean confidence of its six arm joints is at least HYBRID_MIN_CONFIDENCE. The
 * hybrid then lets the rules lay arms they cannot see along the body's sides (a cape that hides the arms hanging inside
 * it and the legs) instead of refusing the shape. Measured: 0.61 and 0.69 on the two such procedural humanoids of
 * 9 800 000–079 that were refused, 0.68 and 0.70 on two caped ones that were rigged (9 200 007, 9 400 059); 0.01–0.15
 * on a column, a bottle, a lamp and a snowman (the rules refuse the column and the bottle, and still rig the lamp and
 * the snowman).
 * prediction: the network's 2D joints → boolean
 */
export function networkSawArms(prediction: Joints2DPrediction): boolean {
  return meanJointConfidence(prediction, ARM_JOINTS) >= HYBRID_MIN_CONFIDENCE;
}

/**
 * The network's mean confidence over `joints` (default: every template joint, how sure it is that the front view shows
 * a humanoid at all; checkHumanoidShape's MIN_NETWORK_CONFIDENCE and VOUCHED_NETWORK_CONFIDENCE hold the measured
 * ranges). prediction: the network's 2D joints, joints: template joint names → number in [0, 1]
 */
export function meanJointConfidence(prediction: Joints2DPrediction, joints: readonly MixamoJointName[] = MIXAMO_JOINTS): number {
  let sum = 0;
  for (const joint of joints) sum += prediction.confidence[MIXAMO_JOINTS.indexOf(joint)];
  return sum / joints.length;
}

/**
 * How far (share of the body's height) above the silhouette's crotch the crotch read through the clothes
 * (crotchThroughClothing) must lie to be read: where nothing hides the legs the two agree within 0.016 on 69 of 76
 * procedural humanoids; a hem lies 0.05–0.3 under the body's crotch. At 0.02, procedural humanoid 16 000 060 (nothing
 * on, its crotch 0.023 over the silhouette's and 0.15 under its hip joints, deeper than any of the 76) had its right
 * hip joints moved 6.7 % off.
 */
export const CROTCH_THROUGH_CLOTHES_MARGIN = 0.05;

/** The joints the rules read from the shoulders' row down to the crotch, which upperTrunkOverNetwork's remedy replaces. */
const UPPER_TRUNK_JOINTS = ['Spine', 'Spine1', 'Spine2', 'LeftShoulder', 'RightShoulder'] as const;

/** The trunk's joints up to the head, in order: one the rules read over one the network read further up folds it. */
const TRUNK_UP = ['Spine', 'Spine1', 'Spine2', 'Neck', 'Head'] as const;

/**
 * Whether the rules read the shoulders in something over the body: one of their Spine joints stands over a trunk joint
 * the network read further up (TRUNK_UP), or one of their shoulders over the network's Head, the network's joint sure
 * (the hybrid took it), in the front view. 9 900 062's cone hat's brim: its Spine2 stood 44 % of the height off over
 * the network's Neck; 17 000 051's long hair, wider than its shoulders under a big head: the shoulders 45 %. Of 880
 * procedural humanoids (the eleven runs of EVAL.md's forty-ninth session) and the ten artists' characters, it changed
 * those two only. 29 000 010, a chibi under a cone hat over half as tall as its body, whose brim the rules read as its
 * shoulders: on its first look (skeleton/bodyCrop) the network took its Spine2, Neck and Head, and the rules' Spine1
 * stood 0.26 of the canonical height over that Spine2 (53 % of the height off).
 * points, sources: the 2D joints (canonical x, y) and where each came from, by name → boolean
 */
export function upperTrunkOverNetwork(points: Partial<Record<Named2D, [number, number]>>, sources: Record<string, 'learned' | 'geometric'>): boolean {
  const over = (joint: Named2D, network: Named2D) => {
    const p = points[joint], q = points[network];
    return !!p && !!q && sources[joint] === 'geometric' && sources[network] === 'learned' && p[1] > q[1];
  };
  const spineOverNetwork = TRUNK_UP.some((joint, k) => joint.startsWith('Spine') && TRUNK_UP.slice(k + 1).some((above) => over(joint, above)));
  return spineOverNetwork || over('LeftShoulder', 'Head') || over('RightShoulder', 'Head');
}

/**
 * Whether the rules' wrist on one side stands over the elbow the hybrid took from the network, where the network's own
 * wrist hangs under that elbow by over half the upper arm's length (HANGING_FOREARM_DROP): the network reads the
 * forearm hanging, the rules traced it up. Procedural 31 000 039 (arms posed apart) hangs its right arm down behind a
 * staff leaning across it; the rules stopped tracing the arm where the staff crosses it and read the wrist there, 0.025
 * of the canonical height over the network's elbow; the network's wrist, unsure (0.36), hung 0.126 under it. The
 * forearm, far shorter than the other, was then lengthened upwards: the wrist 27.7 % of the height off.
 * points, sources: the 2D joints (canonical x, y) and where each came from, by name; network: the network's wrist on
 * that side (canonical x, y); side → boolean
 */
export function rulesWristOverHangingForearm(
  points: Partial<Record<Named2D, [number, number]>>, sources: Record<string, 'learned' | 'geometric'>, network: [number, number],
  side: 'Left' | 'Right',
): boolean {
  const shoulder = points[`${side}Arm`], elbow = points[`${side}ForeArm`], wrist = points[`${side}Hand`];
  if (!shoulder || !elbow || !wrist || sources[`${side}Hand`] !== 'geometric' || sources[`${side}ForeArm`] !== 'learned') return false;
  const upper = Math.hypot(elbow[0] - shoulder[0], elbow[1] - shoulder[1]);
  return wrist[1] > elbow[1] && elbow[1] - network[1] > HANGING_FOREARM_DROP * upper;
}

/** How far under its elbow, as a share of the upper arm's length, the network's wrist hangs for rulesWristOverHangingForearm. */
export const HANGING_FOREARM_DROP = 0.5;

/**
 * Whether the rules' upper-arm joint on one side stands over the network's Head (which the hybrid took, sure of it) in
 * the front view, the network's upper-arm joint sure too: the rules traced that arm in something over the body (17 000
 * 051's long hair, wider than its shoulders under a big head: its elbows and wrists 10–26 % of the height off).
 * rules: the rules' 2D joints, points, sources: the hybrid's and where each came from, by name; side → boolean
 */
export function rulesArmOverNetworkHead(
  rules: Partial<Record<Named2D, [number, number]>>, points: Partial<Record<Named2D, [number, number]>>,
  sources: Record<string, 'learned' | 'geometric'>, side: 'Left' | 'Right', height: number,
): boolean {
  const arm = rules[`${side}Arm`], head = points.Head;
  return !!arm && !!head && sources.Head === 'learned' && sources[`${side}Arm`] === 'learned' && arm[1] > head[1] + ARM_OVER_HEAD * height;
}

/**
 * How far (share of the body's height) over the network's Head the rules' upper-arm joint must stand for
 * rulesArmOverNetworkHead: no shoulder joint stands over the head, whatever the arm's pose, so the margin is the front
 * view's noise. 17 000 051's long hair stood 0.245 over it; 25 000 005's cone hat, whose brim the rules read as
 * shoulders held out level over arms hanging straight down, 0.133 and 0.137 (its hands 54 % of the height off). Before,
 * 0.15: on procedural humanoids 17 000 000–079 with arms posed apart a raised arm's stood up to 0.121 over it, its elbow
 * and wrist the network's already. The artists' ten all stand under the network's Head (0.019 under at the nearest).
 */
export const ARM_OVER_HEAD = 0.05;

/**
 * HumanRig's prior-guided skeleton estimator: front view → 2D joints (geometric rules, the learned predictor, or
 * both) → 3D by the ray midpoint, left/right made symmetric, feet and toes from the foot geometry, then the Mixamo
 * skeleton in input space.
 * Throws NOT_HUMANOID when the shape is no standing humanoid (humanoidShape.ts, landmarks2d.ts).
 * canonical: Float32Array #V*3 (positions in the canonical frame), triangles: Uint32Array #T*3 (the body's: vertices no
 * triangle uses are not read), view: the front view of those (renderFrontView at FRONT_VIEW_RESOLUTION), shells: the
 * mesh's pieces (meshShells: shellOf #V; of these triangles or of the whole mesh they belong to), source → SkeletonEstimate
 */
export function estimateSkeleton(
  canonical: Float32Array, triangles: Uint32Array, cf: CanonicalFrame, prefix: boolean,
  source: JointSource = { method: 'geometric' }, view: FrontView = renderFrontView(canonical, triangles, FRONT_VIEW_RESOLUTION),
  shells: { shellOf: Int32Array } = meshShells(canonical, triangles),
): SkeletonEstimate {
  // The rules read the body's silhouette: a staff standing beside it would take the place of a head, a hand or a leg.
  const body = withoutPropRods(view);
  // A shape that is no standing humanoid is refused before landmarks are read into it; the network, where it runs, has
  // its say on the whole shape first.
  checkHumanoidShape(canonical, triangles, body, source.method === 'geometric' ? null : meanJointConfidence(source.prediction));
  const res = view.res;
  let lm: Landmarks2D | null = null;
  // hybrid reads the rules' landmarks too, and refuses what they refuse (NOT_HUMANOID): the network answers joints for
  // any picture, a chair included, so it only moves joints of a shape the rules accept.
  if (source.method === 'geometric' || source.method === 'hybrid') lm = findLandmarks2D(body, source.method === 'hybrid' && networkSawArms(source.prediction));
  const toXY = (p: Pixel): [number, number] => [pixelToCanonical(p[0], res), pixelToCanonical(p[1], res)];
  const geometric: Partial<Record<Named2D, [number, number]>> = {};
  if (lm) {
    const g: [Named2D, Pixel][] = [
      ['Hips', lm.hips], ['Spine', lm.spine], ['Spine1', lm.spine1], ['Spine2', lm.spine2], ['Neck', lm.neck], ['Head', lm.head],
      ['HeadTop', lm.headTop],
      ['LeftShoulder', lm.left.shoulder], ['LeftArm', lm.left.arm], ['LeftForeArm', lm.left.foreArm], ['LeftHand', lm.left.hand],
      ['LeftHandTip', lm.left.handTip],
      ['RightShoulder', lm.right.shoulder], ['RightArm', lm.right.arm], ['RightForeArm', lm.right.foreArm], ['RightHand', lm.right.hand],
      ['RightHandTip', lm.right.handTip],
      ['LeftUpLeg', lm.left.upLeg], ['LeftLeg', lm.left.leg], ['LeftFoot', lm.left.foot],
      ['RightUpLeg', lm.right.upLeg], ['RightLeg', lm.right.leg], ['RightFoot', lm.right.foot],
    ];
    // An arm the silhouette does not show was laid in the template's proportions on the network's word: the rules have
    // no reading of its joints, so the hybrid takes the network's whatever their confidence (a rules' elbow from
    // proportions was 15 % of the height off); the hand's traced tip stays, as for any hand
    const unseen = new Set(lm.unseenArms.flatMap((side) => [`${side}Arm`, `${side}ForeArm`, `${side}Hand`]));
    for (const [name, p] of g) if (!unseen.has(name)) geometric[name] = toXY(p);
  }
  const points: Partial<Record<Named2D, [number, number]>> = { ...geometric };
  const sources: Record<string, 'learned' | 'geometric'> = {};
  for (const name of Object.keys(geometric)) sources[name] = 'geometric';
  const prediction = source.method === 'geometric' ? null : source.prediction;
  /** the network's 2D joint stands in for the rules' (the hybrid's rules that find the rules' reading wrong) */
  const takeNetworkJoint = (joint: Extract<Named2D, MixamoJointName>) => {
    points[joint] = networkJoint(prediction!, joint);
    sources[joint] = 'learned';
  };
  /**
   * the network's Hips and hip joints stand in (only those still the rules' where onlyRules), then the rules' joints left
   * between two of the network's on their chain (the knees between its hip joints and feet): the remedies that find the
   * rules' crotch misread
   */
  const takeNetworkHips = (onlyRules = false) => {
    for (const joint of HIP_JOINTS) if (!onlyRules || sources[joint] === 'geometric') takeNetworkJoint(joint);
    for (const joint of rulesJointsBetweenNetworkJoints(sources)) takeNetworkJoint(joint);
  };
  // the body's height in the front view (canonical units), which the rules below measure by
  const bodyHeight = lm ? (lm.headTop[1] - lm.soleRow + 1) / res : Number.NaN;
  if (source.method !== 'geometric') {
    const { xy, confidence } = source.prediction;
    MIXAMO_JOINTS.forEach((joint, k) => {
      if (joint.endsWith('ToeBase')) return;
      const name = (joint === 'HeadTop_End' ? 'HeadTop' : joint) as Named2D;
      if (source.method === 'hybrid' && geometric[name] && confidence[k] < HYBRID_MIN_CONFIDENCE) return;
      points[name] = [xy[2 * k], xy[2 * k + 1]];
      sources[name] = 'learned';
    });
    // A pair whose one side the network saw (confident) and whose other side it left to the rules takes the network's
    // side mirrored: where the two disagree, the rules' side was the one misread (mirroredUnsureSide).
    if (source.method === 'hybrid') mirroredUnsureSide(points, sources, body);
    // The rules' upper-arm joint of an arm held out stands where its centre line leaves the waist's width, and any rules'
    // upper-arm joint on a shoulder row the width profile did not show stands on a guess (HELD_OUT_ARM_MIN_CONFIDENCE):
    // one still the rules' after the mirroring takes the network's from confidence 0.4
    if (source.method === 'hybrid' && lm) {
      for (const side of ['Left', 'Right'] as const) {
        if (sources[`${side}Arm`] !== 'geometric' || !(lm.shouldersFromProportions || lm[side === 'Left' ? 'left' : 'right'].armHeldOut)) continue;
        if (source.prediction.confidence[MIXAMO_JOINTS.indexOf(`${side}Arm`)] >= HELD_OUT_ARM_MIN_CONFIDENCE) takeNetworkJoint(`${side}Arm`);
      }
    }
    // A wrist still the rules' after that (no sure other side to mirror, or the arms posed apart) is the network's
    // where it is nearly sure of it (HYBRID_MIN_HAND_CONFIDENCE), and however unsure where the rules' wrist was read
    // across a sword's blade (wristReadAcrossHeld: HELD_ACROSS_WRIST_RATIO)
    if (source.method === 'hybrid') {
      for (const side of ['Left', 'Right'] as const) {
        const hand = `${side}Hand` as const;
        if (sources[hand] !== 'geometric') continue;
        const acrossHeld = lm?.[side === 'Left' ? 'left' : 'right'].wristReadAcrossHeld ?? false;
        if (!acrossHeld && source.prediction.confidence[MIXAMO_JOINTS.indexOf(hand)] < HYBRID_MIN_HAND_CONFIDENCE) continue;
        takeNetworkJoint(hand);
      }
    }
    // A rules' Neck over the network's Head, the network sure of the chest: the rules read the neck inside a big head; the
    // network's Neck stands in, and with it (headOffItsNeck, next) its Head
    if (source.method === 'hybrid' && rulesNeckOverNetworkHead(points, sources, networkJoint(source.prediction, 'Head'), bodyHeight)) takeNetworkJoint('Neck');
    // The rules read the Head from their own Neck: where the network's Neck stands far from that, so does its Head; where
    // the rules' Head stands just over the Neck, a big head hid the neck from them
    if (source.method === 'hybrid' && headOffItsNeck(points, sources, geometric, networkJoint(source.prediction, 'Head'))) takeNetworkJoint('Head');
    // A rules' elbow between the network's upper-arm joint and wrist that cannot be this arm's (rulesElbowOffItsArm): the
    // network's elbow stands in where that one reads as an arm; so it does where the rules placed theirs along an arm
    // traced from their own upper-arm joint, far from the network's (rulesElbowOfAnotherArmJoint)
    if (source.method === 'hybrid') {
      for (const side of ['Left', 'Right'] as const) {
        if (rulesElbowOffItsArm(points, sources, source.prediction, side) || rulesElbowOfAnotherArmJoint(geometric, points, sources, side, bodyHeight)) {
          takeNetworkJoint(`${side}ForeArm`);
        }
      }
    }
    // The network has no finger tips to look at: the rules' traced tip is kept (hybrid); without one (learned) the hand
    // ends a palm's length beyond the wrist.
    for (const side of ['Left', 'Right'] as const) {
      if (sources[`${side}HandTip`] === 'geometric') continue;
      points[`${side}HandTip`] = palmBeyondWrist(points[`${side}ForeArm`]!, points[`${side}Hand`]!);
      sources[`${side}HandTip`] = 'learned';
    }
  }
  // A traced tip can belong to something else (a robe the arm lies along, the rules' wrist where the network moved it):
  // a hand that turns back up the forearm, or is far longer or shorter than a hand, ends a palm's length beyond the wrist.
  for (const side of ['Left', 'Right'] as const) {
    const hand = points[`${side}Hand`], fore = points[`${side}ForeArm`], tip = points[`${side}HandTip`];
    if (!hand || !fore || !tip || plausibleHandTip(fore, hand, tip)) continue;
    points[`${side}HandTip`] = palmBeyondWrist(fore, hand);
  }
  // The rules' hip joints far under the network's, which it was nearly sure of, are a hem fused to the body read as the
  // crotch (nothing shows the legs through it): the network's Hips and hip joints stand in, and knees left between its
  // hip joints and feet
  if (source.method === 'hybrid' && rulesHipJointsUnderNetwork(points, sources, source.prediction)) takeNetworkHips();
  // An upper-leg joint far down the thigh is the rules' reading of a coat's or a skirt's hem as the crotch (the gap
  // between the legs starts there); the network's joint stands in, or a joint just under the Hips.
  for (const side of ['Left', 'Right'] as const) {
    const at = hipJointUnderHips(points.Hips, points[`${side}UpLeg`], points[`${side}Leg`], source, side);
    if (at) { points[`${side}UpLeg`] = at.point; sources[`${side}UpLeg`] = at.source; }
  }
  // The rules' Hips under the hip joints is, too, a coat's hem read as the crotch (the trunk joints divide the torso
  // from there up): the network's Hips stands in, or one just above the hip joints.
  const hips = hipsAboveHipJoints(points, sources, source);
  if (hips) { points.Hips = hips.point; sources.Hips = hips.source; }
  // A rules' Hips over the network's Spine folds the trunk back down, and one far over the network's hip joints stands
  // apart from them: the rules divided the trunk from a hem read as the crotch
  const networkHips = source.method !== 'geometric' ? networkJoint(source.prediction, 'Hips') : null;
  if (networkHips && (hipsOverNetworkSpine(points, sources, networkHips) || hipsFarOverNetworkHipJoints(points, sources, networkHips))) {
    points.Hips = networkHips;
    sources.Hips = 'learned';
  }
  // The rules read each joint along their own limb or trunk (a coat's hem as the crotch, the knees spaced from there): one
  // left between two of the network's on its chain stands on another reading, and can fold the chain back on itself
  if (source.method === 'hybrid') {
    for (const joint of rulesJointsBetweenNetworkJoints(sources)) takeNetworkJoint(joint);
  }
  // Clothes that hide the crotch (the silhouette's gap between the legs starts at a hem, or nowhere): the body's own
  // piece shows it, and the hip joints and the Hips stand where it puts them
  if (lm && points.Hips && points.Spine2) {
    const through = crotchThroughClothing(canonical, triangles, shells.shellOf, points.Hips[0], Math.round((points.Spine2[1] + 0.5) * res - 0.5), lm.soleRow, res, bodyHeight * res);
    const margin = CROTCH_THROUGH_CLOTHES_MARGIN * bodyHeight * res;
    // Legs the silhouette never shows apart (a cape or a robe to the floor) have a crotch the rules put at a share of
    // the silhouette's height, a hat's crown included: the body's, where clothes of their own cover it, stands in,
    // above it or under it, and the clothes hide the knees
    const unseen = !lm.legsSeen && through.covered && Math.abs(through.row - lm.crotchRow) > margin;
    if (through.row > lm.crotchRow + margin || unseen) {
      // HIP_ABOVE_PELVIS was measured against the height to the top of the head, not to a hat's crown
      const headHeight = points.HeadTop ? Math.min(bodyHeight, points.HeadTop[1] - pixelToCanonical(lm.soleRow - 0.5, res)) : bodyHeight;
      hipsOverTheCrotch(points, sources, pixelToCanonical(through.pelvisRow, res), bodyHeight, pixelToCanonical(lm.legsSeen ? lm.crotchRow : lm.soleRow, res), through.coveredInFront, headHeight);
    }
  }
  // A thigh far shorter than the shin is a skirt's hem, fused to the body, read as the crotch: the network's Hips and
  // hip joints stand in where they give a thigh in proportion
  if (source.method === 'hybrid' && thighsShorterThanShins(points, THIGH_OVER_SHIN_MIN)) {
    const network: Partial<Record<Named2D, [number, number]>> = { ...points };
    for (const joint of HIP_JOINTS) network[joint] = networkJoint(source.prediction, joint);
    if (!thighsShorterThanShins(network, THIGH_OVER_SHIN_MIN)) takeNetworkHips();
  }
  // A rules' Spine joint over one the network read further up, or a rules' shoulder over its Head: the rules took
  // something above the body (a hat's brim, long hair) for the shoulders, and divided the trunk up to there; the
  // network's trunk and shoulders stand in. A rules' Hips then left over the network's Spine was divided from there too
  // (the hip joints placed under it): the network's Hips and hip joints stand in, and the knees between its hip joints
  // and feet (29 000 010 on the network's first look: Hips 24 → 7 % of the height off, its hip joints 23 → 11 %).
  if (source.method === 'hybrid' && upperTrunkOverNetwork(points, sources)) {
    for (const joint of UPPER_TRUNK_JOINTS) if (sources[joint] === 'geometric') takeNetworkJoint(joint);
    if (sources.Hips === 'geometric' && points.Hips && points.Spine && points.Hips[1] > points.Spine[1]) takeNetworkHips(true);
  }
  // The rules read the elbow and the wrist along the arm they traced from their upper-arm joint: one standing over the
  // network's Head traced something else (long hair), and that side's elbow and wrist are the network's, however unsure.
  // A rules' wrist over the network's elbow where the network reads that forearm hanging: the rules stopped tracing the
  // arm where something crossed it (a staff leaning across a hanging arm), and the network's wrist stands in. Either way
  // a traced hand tip goes with the rules' wrist
  if (source.method === 'hybrid') {
    for (const side of ['Left', 'Right'] as const) {
      const misread = lm && rulesArmOverNetworkHead(geometric, points, sources, side, bodyHeight) ? [`${side}ForeArm`, `${side}Hand`] as const
        : rulesWristOverHangingForearm(points, sources, networkJoint(source.prediction, `${side}Hand`), side) ? [`${side}Hand`] as const : [];
      if (misread.length === 0) continue;
      for (const joint of misread) if (sources[joint] === 'geometric') takeNetworkJoint(joint);
      if (sources[`${side}HandTip`] === 'geometric') points[`${side}HandTip`] = palmBeyondWrist(points[`${side}ForeArm`]!, points[`${side}Hand`]!);
    }
  }
  // Arms posed differently keep their own joints: averaging a raised arm with a hanging one puts both half-way
  const posedApart = points.Hips !== undefined && armsPosedApart(points, points.Hips[0], view, source.method === 'geometric' ? null : sureJoints(source.prediction));
  const named2D = Object.entries(points) as [Named2D, [number, number]][];
  // each ankle's depth is read up its shin (ANKLE_DEPTH_UP_SHIN): one more ray per leg, in the same pass
  const shins = (['Left', 'Right'] as const).flatMap((side) => {
    const foot = points[`${side}Foot`], knee = points[`${side}Leg`];
    return foot && knee ? [{ side, at: upTheShin(foot, knee) }] : [];
  });
  const flat = new Float64Array((named2D.length + shins.length) * 2);
  named2D.forEach(([, p], k) => { flat[2 * k] = p[0]; flat[2 * k + 1] = p[1]; });
  shins.forEach(({ at }, k) => flat.set(at, 2 * (named2D.length + k)));
  const lift = liftJointsByFrontPiece(canonical, triangles, shells.shellOf, flat, view);
  const c: Record<string, Vec3> = {};
  const readSpans: Record<string, number> = {};
  named2D.forEach(([name], k) => { c[name] = [flat[2 * k], flat[2 * k + 1], lift.z[k]]; readSpans[name] = lift.span[k]; });
  const piecesRead = Object.fromEntries(named2D.map(([name], k) => [name, { piece: lift.piece[k], closed: lift.closedPieces[k] }]));
  armJointsInsideWhatWrapsThem(c, readSpans, piecesRead);
  armJointsWhoseRayMissedTheLimb(c, readSpans, piecesRead);
  armJointsOnTheirParentsPiece(c, readSpans, piecesRead, !posedApart);
  armJointsOnTheirOwnStretch(c, readSpans, Object.fromEntries(named2D.map(([name], k) => [name, lift.stretches[k]])));
  shins.forEach(({ side }, k) => { c[`${side}Foot`][2] = lift.z[named2D.length + k]; readSpans[`${side}Foot`] = lift.span[named2D.length + k]; });
  const head = named2D.findIndex(([name]) => name === 'Head');
  if (head >= 0) headAtNeckDepth(c, lift, head);
  // HeadTop_End sits on the top of the head, at the head's depth (a ray through the very top hits little). The top of
  // the silhouette bounds it from below: the network can put it just above the Head joint (mixamo_ely: 2 mm, a head
  // bone that then holds no weight).
  const silhouetteTop = lm ? pixelToCanonical(lm.headTop[1] + 0.5, res) : -Infinity;
  c.HeadTop_End = [c.HeadTop[0], sources.HeadTop === 'geometric' ? silhouetteTop : Math.max(c.HeadTop[1], silhouetteTop), c.Head[2]];

  const soleY = pixelToCanonical((lm ? lm.soleRow : lowestCoveredRow(view)) - 0.5, res);
  const toeTips: Record<string, Vec3> = {};
  const used = usedVertices(canonical.length / 3, triangles);
  for (const side of ['Left', 'Right'] as const) {
    const foot = c[`${side}Foot`];
    const extent = footExtent(canonical, triangles, used, shells.shellOf, foot, soleY, side === 'Left' ? 1 : -1, c.Hips[0]);
    const { heelZ, tipZ } = extent;
    const toeY = extent.soleY + 0.25 * (foot[1] - extent.soleY);
    c[`${side}ToeBase`] = [foot[0], toeY, heelZ + 0.72 * (tipZ - heelZ)];
    toeTips[side] = [foot[0], toeY, tipZ];
  }

  // a rules' hand traced to the staff it holds (gripsRod) stands by the staff, at the depth its ray read
  const held = lm ? (['Left', 'Right'] as const).filter((side) => lm![side === 'Left' ? 'left' : 'right'].gripsRod && sources[`${side}Hand`] === 'geometric').flatMap((side) => [`${side}Hand`, `${side}HandTip`]) : [];
  symmetrise(c, readSpans, posedApart ? OWN_POSE_JOINTS : [], piecesRead, held);
  // a wrist whose ray crossed a sword's grip and guard read their midpoint: it stands at the end of that span nearer its
  // elbow, before the arms' lengths are compared
  const wristsBehindHeld = posedApart ? wristsBehindWhatTheyHold(c, readSpans, held) : [];
  if (posedApart) armDepthsOfEqualLength(c, held, readSpans, piecesRead);
  // a wrist read far up its forearm (inside a sleeve and a blade's outline) leaves the forearm far shorter than the other
  if (posedApart) forearmsOfEqualLength(c);
  // an elbow read far behind both its upper-arm joint and its wrist read something behind the arm (long hair)
  elbowsBehindTheirArm(c);
  const heads = {} as Record<MixamoJointName, Vec3>;
  const canonicalHeads = {} as Record<MixamoJointName, Vec3>;
  for (const name of Object.keys(c)) {
    if (name.endsWith('Tip') || name === 'HeadTop') continue;
    canonicalHeads[name as MixamoJointName] = c[name];
    heads[name as MixamoJointName] = fromCanonical(c[name], cf);
  }
  const ends: Partial<Record<MixamoJointName, Vec3>> = {
    LeftHand: fromCanonical(c.LeftHandTip, cf), RightHand: fromCanonical(c.RightHandTip, cf),
    LeftToeBase: fromCanonical(toeTips.Left, cf), RightToeBase: fromCanonical(toeTips.Right, cf),
  };
  const skeleton = buildMixamoSkeleton(heads, ends, cf.frame, prefix);
  return { skeleton, canonical: canonicalHeads, landmarks: lm, sources, silhouette: body, armsPosedApart: posedApart, wristsBehindHeld };
}

/**
 * How far up the shin, from the ankle towards the knee, the ankle's depth is read. At the ankle's own height the ray
 * crosses the top of the foot, which reaches far forward of the ankle: our ankles were 2.3 % of the height in front of
 * the artists' on the dev set, 1.5 % in front of the generator's on the 30 first procedural training identities. The
 * shin's ray midpoint continues the leg's axis down, read like the Neck's on the piece the ray meets first (a cape or
 * a coat hanging behind the calves is another piece). Mean |Δz| of the ankle (canonical ×100; dev / procedural
 * training): at the ankle 2.30 / 1.51; the whole ray's midpoint read 0.15 of the way up 1.20 / 0.36, 0.25: 1.15 / 0.47,
 * 0.3: 1.07 / 0.46, 0.35: 1.02 / 0.47, 0.5: 1.22 / 0.54; its front piece's, 0.3 of the way up: 1.11 / 0.16; at a fixed
 * share of heel → toe tip (0.25) 0.99 / 0.89.
 */
export const ANKLE_DEPTH_UP_SHIN = 0.3;

/** The front-view point ANKLE_DEPTH_UP_SHIN of the way from the ankle to the knee: canonical (x, y) each → (x, y). */
function upTheShin(ankle: [number, number], knee: [number, number]): [number, number] {
  return [ankle[0] + ANKLE_DEPTH_UP_SHIN * (knee[0] - ankle[0]), ankle[1] + ANKLE_DEPTH_UP_SHIN * (knee[1] - ankle[1])];
}

/**
 * The Head joint at the Neck's depth: the neck stands upright in a standing character, and the Head's ray crosses the
 * whole skull, whose back reaches far behind the neck on a big-headed character (clonk_farmer: 6 % of the height
 * behind its artist's joint, its Neck → Head bone leaning 32° back). Chosen with the Neck read on its front piece, on
 * the 30 first procedural training identities (mean |Δz| in canonical units ×100, Neck / Head: 0.71 / 1.32 → 0.43 /
 * 0.37) and the artist dev set (1.38 / 2.27 → 1.57 / 1.41: redeclipse's collar is the piece its Neck ray meets first).
 * A joint stays inside the body: where the Neck's depth is outside the Head's own ray's span (mixamo_ely's mesh ends
 * below her crown, with only hair behind there), the Head keeps the midpoint of that ray.
 * c: lifted points by name (canonical), modified in place; lift: their liftJointsByFrontPiece; head: the Head's index in it
 */
function headAtNeckDepth(c: Record<string, Vec3>, lift: FrontPieceLift, head: number): void {
  if (!c.Neck || !c.Head) return;
  const depth = c.Neck[2], front = lift.front[head], back = lift.back[head];
  if (Number.isNaN(front)) return;
  c.Head[2] = depth <= front && depth >= back ? depth : 0.5 * (front + back);
}

/** A hand from wrist to finger tips is about this share of the forearm (adult proportions; only the bone's tail). */
const HAND_LENGTH_PER_FOREARM = 0.75;

/** The hand's tip where none was traced: a palm's length (HAND_LENGTH_PER_FOREARM) beyond the wrist, along the forearm. */
function palmBeyondWrist(fore: [number, number], hand: [number, number]): [number, number] {
  return [hand[0] + HAND_LENGTH_PER_FOREARM * (hand[0] - fore[0]), hand[1] + HAND_LENGTH_PER_FOREARM * (hand[1] - fore[1])];
}

/** A hand bone (front view) turns at most this far from the forearm's line: cos of the angle, at least. */
export const HAND_TIP_MIN_COS = 0.5;
/** A hand bone (front view) is this share of the forearm's length, at least and at most. */
export const HAND_TIP_LENGTH_RANGE: [number, number] = [0.1, 1.5];

/**
 * plausibleHandTip: front-view points (canonical x, y) of the elbow, the wrist and the hand's traced tip → whether the
 * wrist → tip bone continues the forearm (HAND_TIP_MIN_COS) with a hand's length (HAND_TIP_LENGTH_RANGE).
 */
export function plausibleHandTip(fore: [number, number], hand: [number, number], tip: [number, number]): boolean {
  const ax = hand[0] - fore[0], ay = hand[1] - fore[1], bx = tip[0] - hand[0], by = tip[1] - hand[1];
  const forearm = Math.hypot(ax, ay), length = Math.hypot(bx, by);
  if (!(forearm > 0) || !(length > 0)) return false;
  const ratio = length / forearm;
  return (ax * bx + ay * by) / (forearm * length) >= HAND_TIP_MIN_COS && ratio >= HAND_TIP_LENGTH_RANGE[0] && ratio <= HAND_TIP_LENGTH_RANGE[1];
}

/** The lowest view row with any covered pixel (the soles), 0 for an empty view. */
function lowestCoveredRow(view: FrontView): number {
  for (let j = 0; j < view.res; j++) {
    for (let i = 0; i < view.res; i++) if (view.mask[j * view.res + i]) return j;
  }
  return 0;
}

/** 1 for each vertex that a triangle uses: vertexCount, triangles #T*3 → Uint8Array #V */
function usedVertices(vertexCount: number, triangles: Uint32Array): Uint8Array {
  const used = new Uint8Array(vertexCount);
  for (let t = 0; t < triangles.length; t++) used[triangles[t]] = 1;
  return used;
}

/**
 * The foot's extent: heel and toe-tip depth and the sole's height, from the body's triangles (`used` vertices) below
 * the ankle on that side, on the pieces of the mesh (shellOf) that reach in front of the ankle there, and of these the
 * run of depths that holds the ankle (triangles' depth spans merged across gaps up to FOOT_DEPTH_GAP). A cape or a
 * coat that hangs behind the heels to the floor (or, as the generator's capes do, past it) is a piece of its own that
 * lies wholly behind the ankle, or, fused to the body, lies behind the heel past a gap: read with the foot, it put the
 * heel at the cape and the sole under the floor, and the toe base 3–8 % of the height back and down (procedural
 * development humanoids 9 200 023, 040, 058 with separate capes; 9 200 003, 018, 025 with fused ones).
 * canonical #V*3, triangles #T*3, used #V, shellOf #V (meshShells), ankle: canonical, soleY: the silhouette's lowest
 * height (bounds the box), side: +1 left, −1 right, midline: the body's midline x (the Hips': the canonical box's centre
 * x = 0 lies off it when the arms are posed apart, as far as one ankle's side: that foot lost its inner side or all
 * of it, and the pair's toe bases sat 0.6–3.6 % of the height off on most of the procedural humanoids 11 000 000–079
 * and 12 000 000–079 with arms posed apart, 8–13 % behind the feet on five with capes, whose hem that foot read)
 * → heelZ, tipZ, soleY (the lowest vertex of the run; the silhouette's where none)
 */
function footExtent(
  canonical: Float32Array, triangles: Uint32Array, used: Uint8Array, shellOf: Int32Array, ankle: Vec3, soleY: number, side: number,
  midline: number,
): { heelZ: number; tipZ: number; soleY: number } {
  const top = ankle[1] + 0.25 * (ankle[1] - soleY);
  // the vertices below the ankle on its side, and the pieces among theirs that reach in front of the ankle
  const onFoot = new Uint8Array(canonical.length / 3);
  const reachesFront = new Set<number>();
  for (let v = 0; v < onFoot.length; v++) {
    if (!used[v] || canonical[3 * v + 1] > top || (canonical[3 * v] - midline) * side <= 0 || Math.abs(canonical[3 * v] - ankle[0]) > 0.08) continue;
    onFoot[v] = 1;
    if (canonical[3 * v + 2] > ankle[2]) reachesFront.add(shellOf[v]);
  }
  if (reachesFront.size > 0) for (let v = 0; v < onFoot.length; v++) if (onFoot[v] && !reachesFront.has(shellOf[v])) onFoot[v] = 0;
  // the depth intervals of the triangles that touch the box, merged: the run that holds the ankle is the foot
  const spans: [number, number][] = [];
  for (let t = 0; t < triangles.length; t += 3) {
    let lo = Infinity, hi = -Infinity;
    for (let k = 0; k < 3; k++) {
      const v = triangles[t + k];
      if (onFoot[v]) { lo = Math.min(lo, canonical[3 * v + 2]); hi = Math.max(hi, canonical[3 * v + 2]); }
    }
    if (lo <= hi) spans.push([lo, hi]);
  }
  if (spans.length === 0) return { heelZ: ankle[2] - 0.01, tipZ: ankle[2] + 0.05, soleY };
  spans.sort((p, q) => p[0] - q[0]);
  const runs: [number, number][] = [];
  for (const [lo, hi] of spans) {
    const last = runs[runs.length - 1];
    if (last && lo <= last[1] + FOOT_DEPTH_GAP) last[1] = Math.max(last[1], hi); else runs.push([lo, hi]);
  }
  const distance = (r: [number, number]) => Math.max(0, r[0] - ankle[2], ankle[2] - r[1]);
  const foot = runs.reduce((best, r) => (distance(r) < distance(best) ? r : best));
  let lowest = Infinity;
  for (let v = 0; v < canonical.length / 3; v++) {
    const z = canonical[3 * v + 2];
    if (onFoot[v] && z >= foot[0] && z <= foot[1]) lowest = Math.min(lowest, canonical[3 * v + 1]);
  }
  return { heelZ: foot[0], tipZ: foot[1], soleY: Number.isFinite(lowest) ? lowest : soleY };
}

/** A gap in depth wider than this (canonical units) between what lies under the ankle parts the foot from a cape. */
const FOOT_DEPTH_GAP = 0.01;

/**
 * How far (canonical units, height ~1) the rules' Neck may lie from the network's before the rules' Head, which they
 * read from their Neck (the base of the skull above it), gives way to the network's, however unsure the network is of
 * its Head. On the procedural humanoids 9 200 000–079, 9 400 000–079 and 9 500 000–079 (231 rigged), the hybrid
 * skeleton took the rules' Head twice, both chibi characters whose heads are as wide as their bodies: the rules found
 * no neck and put theirs 0.33 and 0.35 above the network's, and the Head 0.25 and 0.28 above the generator's (24 and
 * 29 % of the height off); the network's Heads (confidence 0.45 and 0.39) were 0.002 and 0.005 off.
 */
export const HEAD_NECK_DISAGREEMENT = 0.05;

/**
 * The share of the network's neck (its Head over the Neck) under which the rules' Head, over the same Neck, stands too
 * low to be the base of the skull (headOffItsNeck): a big head hides the neck, and the rules read the narrowest rows
 * just over the shoulders (procedural humanoids 11 000 041, 12 000 065, 13 000 008: the rules' Head 0.026 over the
 * Neck, 10.5 % of the height under the generator's; the network's, at confidence 0.44–0.49, within 0.005).
 */
export const HEAD_ON_NECK_SHARE = 0.5;

/**
 * Whether the Head is the rules' while the Neck is the network's and the rules' own Neck lies more than
 * HEAD_NECK_DISAGREEMENT from it, or the rules' Head stands under HEAD_ON_NECK_SHARE of the network's neck over that
 * Neck. points, sources: the 2D joints and where each came from; geometric: the rules' 2D joints, by name;
 * networkHead: the network's Head (canonical x, y).
 */
function headOffItsNeck(
  points: Partial<Record<Named2D, [number, number]>>, sources: Record<string, 'learned' | 'geometric'>,
  geometric: Partial<Record<Named2D, [number, number]>>, networkHead: [number, number],
): boolean {
  const neck = points.Neck, rulesNeck = geometric.Neck, head = points.Head;
  if (!neck || !rulesNeck || !head || sources.Head !== 'geometric' || sources.Neck !== 'learned') return false;
  if (Math.hypot(neck[0] - rulesNeck[0], neck[1] - rulesNeck[1]) > HEAD_NECK_DISAGREEMENT) return true;
  return head[1] - neck[1] < HEAD_ON_NECK_SHARE * (networkHead[1] - neck[1]);
}

/**
 * How far (share of the body's height) the rules' Neck must stand over the network's Head for rulesNeckOverNetworkHead.
 * The network's Head, unsure, can stand low: on the artists' mixamo_ely (confidence 0.33) 0.085 of the height under
 * the artist's, and the rules' Neck, right there (0.5 % off), 0.036 over it.
 */
export const NECK_OVER_NETWORK_HEAD = 0.1;

/**
 * Whether the Neck is the rules' and stands over the network's Head in the front view by more than NECK_OVER_NETWORK_HEAD
 * of the body's height, while the network's Spine2 is the hybrid's (the network sure of the chest). Procedural 23 000
 * 028 (mirrored), a chibi in a cape and a long coat: the rules read the shoulders and the neck far up its head, the
 * Neck 0.39 of the height over the network's Spine2 (confidence 0.66) and 0.27 over its Head; the network was unsure of
 * its Neck and Head (0.46, 0.49), which were 2 % off, the rules' 39 and 29 %.
 * points, sources: the 2D joints and where each came from, by name; networkHead: the network's Head (canonical x, y);
 * height: the body's height in the front view (canonical units) → boolean
 */
export function rulesNeckOverNetworkHead(
  points: Partial<Record<Named2D, [number, number]>>, sources: Record<string, 'learned' | 'geometric'>, networkHead: [number, number], height: number,
): boolean {
  const neck = points.Neck;
  return !!neck && sources.Neck === 'geometric' && sources.Spine2 === 'learned' && neck[1] - networkHead[1] > NECK_OVER_NETWORK_HEAD * height;
}

/**
 * The Left/Right pairs of the front view's 2D joints that mirroredUnsureSide reads: where the network's side was the
 * better one in the mixed pairs measured (but for a few upper legs, by under 0.5 % of the height: below). On the
 * procedural development humanoids 9 200 000–079, 7 of 525 pairs were mixed, and in each the network's side was the
 * nearer to the generator's joint (0.4–5 % of the height against 3–31 %): two chibi characters whose heads are wider
 * than their shoulders had one shoulder joint read by the rules up in the head (9 200 008, 9 200 053: both arms 16.8 %
 * off after the average), a coat's hem misread one knee (9 200 064, 9 200 068), a held sword one wrist. On
 * 9 400 000–079 (untouched before), 4 of 539, the same way.
 * The elbows (ForeArm) stay averaged: on the artists' mixamo_ely the network's elbow lay 5 % of the height out along
 * her arm and the rules' 0.3 % in, and their mean was nearest (CD-J2J 0.0220; 0.0236 with the network's mirrored);
 * but a rules' elbow out of its upper arm's reach (elbowOutOfReach) is mirrored over as these are.
 * The upper legs (hip joints, which sit on the rigid pelvis, mirror images across the midline whatever the legs do):
 * over 4 640 procedural humanoids (11 000 040–119, 12, 13 and 15–41 000 000–079 with arms posed apart; 11 000 040–119
 * and 15–41 000 000–079 mirrored) mirroring the network's side moved the 3D estimate of 73, its joints 462 → 408 % of
 * the height in sum (19 nearer by over 0.3 %, 5 farther, at most 2.3 → 2.7 %: 24 000 070's Hips). 40 000 010 (a long
 * coat fused to the body, in both arm modes) had the rules' left hip joint read up from the hem beside the network's
 * right (sure of it at 0.51, of the left at 0.49), and the average put both hip joints and its Hips 9.2 % of the
 * height low (the rig's: → 2.0–2.3 %, its knees 4.7 → 2.0 %).
 * The ankles too (never mixed on 9 200 000–079 and 9 400 000–079): on those 4 640, one rig's were (26 000 050: the
 * rig's ankles 1.8 and 1.5 → 1.3 and 0.6 % of the height, their height now right). Not the shoulders: mixed on 6 of
 * those rigs, the network's side mirrored was the nearer on 4 (29 000 065's rig 2.7 → 0.6 %) and farther on 2 by
 * 0.1–0.2 %, but on the artists' mixamo_ely the rules' shoulder was the better (3.4 and 4.0 → 3.9 and 4.7 %; CD-J2J of
 * the ten 0.0231 → 0.0232).
 */
const MIRRORED_PAIRS = ['Arm', 'Hand', 'UpLeg', 'Leg', 'Foot'] as const;

/**
 * How far (canonical units, height ~1) behind the network's joint's first hit the surface the mirrored joint lands on
 * may lie (mirroredUnsureSide): a limb mirrored onto a limb meets the surface at about the same depth, one landing on
 * long hair behind a raised arm meets it far behind. On 4 560 procedural humanoids (11 000 000–119 and 15–39 000 000–079
 * with arms posed apart and mirrored, 12 and 13 000 000–079 posed apart, 9 500 000 and 9 900 000–079 mirrored) 222 of
 * the 223 mirrors taken lay at most 0.006 behind; 37 000 013's raised elbow, mirrored onto the hair hanging beside the
 * trunk, 0.117 (that elbow 18.3 % of the height off, 10.5 once refused). About the thickness of an arm.
 */
export const MIRROR_DEPTH_DROP = 0.03;

/**
 * An elbow farther from its own upper-arm joint than this many times the other side's upper arm (both in the front
 * view, where a bone can look shorter but never longer) was read on something else: on the procedural humanoids
 * (the mirrored 80 of `eval skeletons`, 9 200 000–079, 9 400 000–079, 9 900 000–079, 10 200 000–079,
 * 10 400 000–079, and the 80 with arms posed apart) the mixed elbow pairs measured 0.27–1.01 where the rules' elbow was
 * the better, 1.67 on a raised arm (the rules' elbow still the better), and 4.18 and 4.54 on two cone-hat chibis whose
 * rules' elbows stood in the hat's brim (9 900 021, a sword holder, and 9 900 062).
 */
export const ELBOW_REACH_SLACK = 2;

/**
 * Whether the `unsure` side's elbow (ForeArm) lies out of its upper arm's reach: farther from its own upper-arm joint
 * (Arm) than ELBOW_REACH_SLACK times the `seen` side's upper arm. points: 2D joints by name; seen, unsure: 'Left' or
 * 'Right' → true where the elbow was misread.
 */
function elbowOutOfReach(points: Partial<Record<Named2D, [number, number]>>, seen: string, unsure: string): boolean {
  const [sa, se, ua, ue] = [`${seen}Arm`, `${seen}ForeArm`, `${unsure}Arm`, `${unsure}ForeArm`].map((n) => points[n as Named2D]);
  if (!sa || !se || !ua || !ue) return false;
  const reach = Math.hypot(ue[0] - ua[0], ue[1] - ua[1]);
  return reach > ELBOW_REACH_SLACK * Math.hypot(se[0] - sa[0], se[1] - sa[1]);
}

/**
 * Whether an arm's elbow in the front view reads as an arm's: its forearm's length over its upper arm's within
 * ARM_PROPORTION_RANGE, and the forearm not turned back along the upper arm (the angle between them under 90°).
 * arm, elbow, hand: canonical (x, y) each → boolean
 */
export function elbowReadsAsArm(arm: [number, number], elbow: [number, number], hand: [number, number]): boolean {
  const ux = elbow[0] - arm[0], uy = elbow[1] - arm[1], vx = hand[0] - elbow[0], vy = hand[1] - elbow[1];
  const upper = Math.hypot(ux, uy), fore = Math.hypot(vx, vy);
  if (!(upper > 0 && fore > 0)) return false;
  return inArmProportion(fore / upper) && ux * vx + uy * vy > 0;
}

/**
 * Whether the hybrid's elbow on one side is the rules' (the network unsure), between the network's upper-arm joint and
 * wrist, and does not read as an arm's (elbowReadsAsArm) where the network's elbow does. Taking the network's elbow
 * wherever the rules' stands between two of its joints (as on the trunk and legs, JOINT_CHAINS) costs the artists'
 * mixamo_ely again (CD-J2J 0.0210 → 0.0232 with the three-network joints2d); this way no artist's joint moves. On the
 * procedural humanoids 11 000 040–119 and 12 000 000–079 with arms posed apart, and 11 000 040–119 mirrored, it moved
 * 8 elbows of 7 characters, each nearer the generator's (2.0–28.2 % of the height; the rules' elbows read in a cone
 * hat's brim, folded back down the arm, or at a wrist under a cape); 9 900 000–079 had no rules' elbow to look at.
 * points, sources: the 2D joints and where each came from, by name; prediction: the network's; side → boolean
 */
function rulesElbowOffItsArm(
  points: Partial<Record<Named2D, [number, number]>>, sources: Record<string, 'learned' | 'geometric'>,
  prediction: Joints2DPrediction, side: 'Left' | 'Right',
): boolean {
  const arm = points[`${side}Arm`], elbow = points[`${side}ForeArm`], hand = points[`${side}Hand`];
  if (!arm || !elbow || !hand) return false;
  if (sources[`${side}ForeArm`] !== 'geometric' || sources[`${side}Arm`] !== 'learned' || sources[`${side}Hand`] !== 'learned') return false;
  return !elbowReadsAsArm(arm, elbow, hand) && elbowReadsAsArm(arm, networkJoint(prediction, `${side}ForeArm`), hand);
}

/**
 * Whether the hybrid's elbow on one side is the rules' (the network unsure) where its upper-arm joint is the network's,
 * ELBOW_ARM_JOINT_SHIFT or more from the rules' own: the rules placed their elbow along the arm they traced from their
 * upper-arm joint, so it stands short of, or off, the arm the network's joint begins. rules: the rules' 2D joints,
 * points, sources: the hybrid's and where each came from, by name; side; height: the body's (canonical) → boolean
 */
export function rulesElbowOfAnotherArmJoint(
  rules: Partial<Record<Named2D, [number, number]>>, points: Partial<Record<Named2D, [number, number]>>,
  sources: Record<string, 'learned' | 'geometric'>, side: 'Left' | 'Right', height: number,
): boolean {
  const theirs = rules[`${side}Arm`], ours = points[`${side}Arm`];
  if (!theirs || !ours || sources[`${side}Arm`] !== 'learned' || sources[`${side}ForeArm`] !== 'geometric') return false;
  return Math.hypot(ours[0] - theirs[0], ours[1] - theirs[1]) >= ELBOW_ARM_JOINT_SHIFT * height;
}

/**
 * How far (share of the body's height) the network's upper-arm joint must stand from the rules' for the rules' elbow on
 * that arm to give way to the network's (rulesElbowOfAnotherArmJoint). On 480 procedural humanoids with arms posed
 * apart (11 000 040–119 and 12, 13, 16, 17 and 18 000 000–079), the eight rules' elbows kept where the network's
 * upper-arm joint stood 0.032–0.25 from the rules' were 0.024–0.064 of the height off across the view, the network's
 * elbows there 0.002–0.010; of the five kept nearer (0.005–0.027), the network's was the better on three. On the
 * artists' ten, the one rules' elbow kept beside a network's upper-arm joint is mixamo_ely's right (0.020 apart), which
 * the rules read better.
 */
export const ELBOW_ARM_JOINT_SHIFT = 0.03;

/**
 * In place, for each Left/Right pair (MIRRORED_PAIRS) one of whose sides is the network's (confidence at least
 * HYBRID_MIN_CONFIDENCE) and the other the rules' (the network unsure there): the rules' side becomes the network's
 * side mirrored across the midline (x = the Hips'), and is marked learned; so does a mixed elbow pair's where the rules'
 * elbow lies out of its upper arm's reach (elbowOutOfReach). symmetrise averages the two sides, so a misread side
 * used to pull the good one half-way to it. Where the mirrored joint lands off the body's silhouette, the limbs are posed
 * apart and nothing is mirrored; a standing staff is no part of the body (16 000 040's left hand, mirrored onto the staff
 * held out in its right, stood 16.7 % of the height off), and neither is a surface far behind the seen joint
 * (MIRROR_DEPTH_DROP).
 * points, sources: the 2D joints (canonical x, y) and where each came from, by name; view: the silhouette without its
 * standing rods (withoutPropRods).
 */
function mirroredUnsureSide(points: Partial<Record<Named2D, [number, number]>>, sources: Record<string, 'learned' | 'geometric'>, view: FrontView): void {
  const mid = points.Hips?.[0];
  if (mid === undefined) return;
  for (const joint of [...MIRRORED_PAIRS, 'ForeArm'] as const) {
    const left = `Left${joint}` as Named2D, right = `Right${joint}` as Named2D;
    if (!points[left] || !points[right] || sources[left] === sources[right]) continue;
    const [seenSide, unsureSide] = sources[left] === 'learned' ? ['Left', 'Right'] : ['Right', 'Left'];
    const seen = `${seenSide}${joint}` as Named2D, unsure = `${unsureSide}${joint}` as Named2D;
    const mirrored: [number, number] = [2 * mid - points[seen]![0], points[seen]![1]];
    // where the mirror lands off the body, the limbs are posed apart and the rules' side is the one the view shows; so
    // they are where it lands only on something far behind the seen joint (long hair beside a raised arm)
    const seenFront = frontDepthAt(view, points[seen]![0], points[seen]![1]);
    const frontAtLeast = Number.isNaN(seenFront) ? -Infinity : seenFront - MIRROR_DEPTH_DROP;
    if (!silhouetteNear(view, mirrored[0], mirrored[1], MIRROR_ON_BODY_TOLERANCE, frontAtLeast)) continue;
    // an elbow pair stays averaged unless the rules' elbow lies out of its upper arm's reach
    if (joint === 'ForeArm' && !elbowOutOfReach(points, seenSide, unsureSide)) continue;
    points[unsure] = mirrored;
    sources[unsure] = 'learned';
  }
}

/** The network's 2D joints it is sure of (confidence at least HYBRID_MIN_CONFIDENCE), by name: canonical (x, y). */
function sureJoints(prediction: Joints2DPrediction): Partial<Record<string, [number, number]>> {
  const sure: Partial<Record<string, [number, number]>> = {};
  MIXAMO_JOINTS.forEach((joint, k) => {
    if (prediction.confidence[k] >= HYBRID_MIN_CONFIDENCE) sure[joint] = networkJoint(prediction, joint);
  });
  return sure;
}

/** A 2D joint that is a template joint (not a hand's tip). */
type ChainJoint = Extract<Named2D, MixamoJointName>;

/**
 * The 2D joints' chains, parent to child, that rulesJointsBetweenNetworkJoints reads: the trunk to the head, each leg
 * from the Hips. Not the arms: on the artists' mixamo_ely the network's elbows lie out along her arms (0.026 and 0.035
 * of the height off against the rules' 0.006 and 0.007) and its shoulders 0.054 and 0.058 off (the rules' 0.028 and
 * 0.031); with the arms' chains her CD-J2J went 0.0220 → 0.0246.
 */
const JOINT_CHAINS: readonly (readonly ChainJoint[])[] = [
  ['Hips', 'Spine', 'Spine1', 'Spine2', 'Neck', 'Head'],
  ['Hips', 'LeftUpLeg', 'LeftLeg', 'LeftFoot'],
  ['Hips', 'RightUpLeg', 'RightLeg', 'RightFoot'],
];

/**
 * The trunk and leg joints the hybrid left to the rules (the network unsure) whose parent and child on their chain
 * (JOINT_CHAINS) both came from the network: those take the network's point too. The rules place a joint from their
 * own reading of the trunk or leg (the spine divided from their crotch to their neck, a knee between their hip joint
 * and ankle); where the network replaced the ends, a joint between them belongs to another reading. On the procedural
 * humanoids 9 200 000–079, 9 400 000–079, 9 500 000–079 and 9 600 000–079 this happened at the trunk and legs at three
 * joints of three characters, and the network's point was the nearer each time (2D distance in units of the height,
 * rules → network): 9 200 035's Spine under a long coat, 0.074 → 0.031, above its Spine1; 9 400 034's Spine, 0.026 →
 * 0.017; 9 600 061's upper-leg joint under a skirt, 0.048 → 0.013. Then on 9 700 029, both knees under a long coat,
 * 0.126 → 0.004. The one Hips the hybrid left to the rules (9 400 007, under a skirt, the rules' 1.9 % against 3.4 %)
 * has no parent and stays.
 * sources: where each 2D joint came from, by name → the joints to take from the network, chain by chain
 */
export function rulesJointsBetweenNetworkJoints(sources: Record<string, 'learned' | 'geometric'>): ChainJoint[] {
  const out: ChainJoint[] = [];
  for (const chain of JOINT_CHAINS) {
    for (let k = 1; k < chain.length - 1; k++) {
      if (sources[chain[k]] === 'geometric' && sources[chain[k - 1]] === 'learned' && sources[chain[k + 1]] === 'learned') out.push(chain[k]);
    }
  }
  return out;
}
