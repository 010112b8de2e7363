import type { CanonicalFrame } from '../mesh/canonicalFrame.js';
import { fromCanonical } from '../mesh/canonicalFrame.js';
import type { Skeleton, Vec3 } from '../types.js';
import type { SkeletonEstimate } from './estimateSkeleton.js';
import type { FrontPieceLift } from './liftJoints.js';
import type { MixamoJointName } from './mixamoTemplate.js';
import { buildMixamoSkeleton, MIXAMO_JOINTS } from './mixamoTemplate.js';

/** The leaf bones whose tails the estimate found from the geometry (finger tips, toe tips) rather than from a child. */
const LEAF_ENDS: MixamoJointName[] = ['LeftHand', 'RightHand', 'LeftToeBase', 'RightToeBase'];
/**
 * Joints that keep the estimate's position: the toe bases, read from the foot's own geometry (sole, heel and toe tip),
 * are off by 0.9 % of the canonical box on unseen procedural humanoids, the refined ones by 2.1 % (18-minute dev
 * model, 10 characters, geometric estimates as input); every other joint moved by under a percent either way, with
 * HeadTop_End and the feet better. To be measured again with each model that ships.
 */
const KEEP_ESTIMATE: MixamoJointName[] = ['LeftToeBase', 'RightToeBase'];

/**
 * refinedSkeleton: the Mixamo skeleton on joint heads the refinement network moved (except KEEP_ESTIMATE's). Each
 * leaf bone's tail (finger tips, toe tips) moves with its head, so the bone keeps the length and direction the
 * geometry gave it; every other tail is its child's head, rolls as buildMixamoSkeleton sets them.
 * estimate: the coarse skeleton (estimateSkeleton, its skeleton in MIXAMO_JOINTS order), refined: Float32Array #23*3
 * (canonical, MIXAMO_JOINTS order), cf: the canonical frame, prefix: `mixamorig:` names → Skeleton (input space)
 */
export function refinedSkeleton(estimate: SkeletonEstimate, refined: Float32Array, cf: CanonicalFrame, prefix: boolean): Skeleton {
  const heads = {} as Record<MixamoJointName, Vec3>;
  MIXAMO_JOINTS.forEach((name, j) => {
    heads[name] = KEEP_ESTIMATE.includes(name) ? [...estimate.skeleton.joints[j].head] : fromCanonical(refined.subarray(3 * j, 3 * j + 3), cf);
  });
  const ends: Partial<Record<MixamoJointName, Vec3>> = {};
  for (const name of LEAF_ENDS) {
    const coarse = estimate.skeleton.joints[MIXAMO_JOINTS.indexOf(name)];
    const h = heads[name];
    ends[name] = [coarse.tail[0] + h[0] - coarse.head[0], coarse.tail[1] + h[1] - coarse.head[1], coarse.tail[2] + h[2] - coarse.head[2]];
  }
  return buildMixamoSkeleton(heads, ends, cf.frame, prefix);
}

/**
 * Joints whose depth stays the ray's midpoint under withRefinedDepth: an arm's cross-section is round and nothing hangs
 * behind it, so the midpoint of its ray is already its middle, and the network's depth added error on the held-out
 * artists (rig requests: mixamo_ely's forearms 0.007 → 0.013 and 0.006 → 0.017 of the height; with the arms kept,
 * CD-J2J clonk_farmer / mixamo_ely / robot_expressive 0.0221 / 0.0229 / 0.0293 → 0.0219 / 0.0220 / 0.0292), while on
 * the procedural development humanoids the apply path's error did not move (0.1596 → 0.1590 % of height): docs/EVAL.md,
 * twenty-sixth session. The shoulders (clavicles) sit in the trunk, behind which a cape or hair hangs: they take it.
 */
export const RAY_DEPTH_JOINTS: readonly MixamoJointName[] = ['LeftArm', 'LeftForeArm', 'LeftHand', 'RightArm', 'RightForeArm', 'RightHand'];

/**
 * Each joint's ray along z: its first (front) and last (back) hit, NaN where it misses, and (optional) the stretches of
 * it inside the surface, front first (liftJointsByFrontPiece's).
 */
export type JointRaySpans = Pick<FrontPieceLift, 'front' | 'back'> & Partial<Pick<FrontPieceLift, 'stretches'>>;

/**
 * The least gap, behind the chest's own stretch along the Spine2 joint's ray, across which something hangs that is not
 * the chest (long hair, a cape): withRefinedDepth then reads the Spine2 joint at that stretch's midpoint, not at the
 * network's depth, which such hair drew back (procedural 29 000 010 and 37 000 013: 0.023 and 0.028 of the canonical
 * height behind the generator's). Over 480 procedural humanoids (29, 37 and 39 000 000, both arm modes) the chest's
 * stretch moved 65 Spine2 joints, 32 of them nearer by 0.003 or more and none farther (the sum of their errors 0.358 →
 * 0.034; from a gap of 0.01, 55 moved). The same rule moved 2 of 24 Spine1 joints farther (a coat's front before the
 * belly) and 69 of 85 shoulders (whose joint sits where the arm meets the trunk); a Neck's ray crossed such a gap on 11
 * rigs only, all narrower than 0.008: docs/EVAL.md, fifty-ninth session.
 */
export const CHEST_RAY_GAP = 0.005;

/** The least length of the chest's own stretch that CHEST_RAY_GAP's rule reads the Spine2 joint on (a chest, no plate). */
export const CHEST_MIN_STRETCH = 0.02;

/**
 * withRefinedDepth: coarse joints with the refinement network's depth. The front view fixes a joint's x (across) and
 * y (up) well; its depth, the midpoint of the first and last hit of a ray through the body, sits behind the joints on
 * the trunk and legs where something hangs behind the body (on 9 procedural humanoids that neither trained nor test
 * the network, Hips 1.0 cm and knees 2.0 cm behind on average, most of it on the two with a fused cape). The hybrid
 * skeleton (Auto Rig and Apply Latent Pose's auto-rig) takes it: docs/EVAL.md, twenty-fifth and twenty-sixth sessions.
 * The arms keep the ray's depth (RAY_DEPTH_JOINTS), but for an upper-arm joint far off its limb (ARM_DEPTH_OFF_LIMB).
 * A joint stays inside the body: where its ray meets the surface and
 * the network's depth lies outside that ray's first and last hit, the coarse depth stays (mixamo_ely's mesh ends below
 * her crown, only hair behind: the network puts her Head 3 % of the height in front of it, where no voxel of her holds
 * it and the head bone would move nothing).
 * coarse, refined: Float32Array #23*3 (canonical: x left, y up, z forward; MIXAMO_JOINTS order); spans (optional):
 * each coarse joint's ray along z, its first (front) and last (back) hit, NaN where it misses the surface, Float64Array
 * #23 each, and its stretches inside the surface (#23 Float64Array pairs, front first; liftJointsByFrontPiece's), where
 * a Spine2 joint with hair or a cape apart behind its chest takes its own stretch's middle (CHEST_RAY_GAP);
 * unseenArms (optional): the sides whose arm the front view does not show (Landmarks2D's unseenArms: arms hanging
 * inside a cape), whose arm joints take the refined depth as the trunk's do;
 * armsPosedApart (SkeletonEstimate's): each hand's depth is its own, and may take the network's (HAND_FORWARD_OF_RAY,
 * inside one of the hand's stretches where they are given);
 * wristsBehindHeld (SkeletonEstimate's): the sides whose wrist the rules stood behind what the hand holds, which keep it
 * → Float32Array #23*3: coarse's x and y, refined's z where it is taken (a Head the network tipped back behind its
 * Neck takes the network's Neck depth instead: HEAD_TIPPED_BACK).
 */
export function withRefinedDepth(
  coarse: Float32Array, refined: Float32Array, spans?: JointRaySpans, unseenArms: readonly ('Left' | 'Right')[] = [],
  armsPosedApart = false, wristsBehindHeld: readonly ('Left' | 'Right')[] = [],
): Float32Array {
  const J = MIXAMO_JOINTS.length;
  if (coarse.length !== J * 3 || refined.length !== J * 3) {
    throw new Error(`withRefinedDepth: joint arrays of ${coarse.length} and ${refined.length} numbers, expected ${J * 3}`);
  }
  if (spans && (spans.front.length !== J || spans.back.length !== J)) {
    throw new Error(`withRefinedDepth: ${spans.front.length} and ${spans.back.length} ray spans for ${J} joints`);
  }
  const out = Float32Array.from(coarse);
  // an arm the front view does not show (inside a cape) has no round cross-section of its own on its ray
  const rayDepth = RAY_DEPTH_JOINTS.filter((name) => !unseenArms.some((side) => name.startsWith(side)));
  // a network depth is taken only inside the joint's ray span, where the ray met the surface at all
  const insideRay = (j: number, z: number) => !spans || Number.isNaN(spans.front[j]) || (z <= spans.front[j] && z >= spans.back[j]);
  for (let j = 0; j < J; j++) {
    if (rayDepth.includes(MIXAMO_JOINTS[j])) continue;
    const z = refined[3 * j + 2];
    if (insideRay(j, z)) out[3 * j + 2] = z;
  }
  // A chest with hair or a cape hanging behind it, apart: its own stretch of the ray holds the Spine2 joint
  const chest = MIXAMO_JOINTS.indexOf('Spine2');
  const chestZ = spans?.stretches ? ownStretchBeforeGap(spans.stretches[chest], CHEST_RAY_GAP, CHEST_MIN_STRETCH) : Number.NaN;
  if (!Number.isNaN(chestZ)) out[3 * chest + 2] = chestZ;
  // A head the network tipped back behind its own neck read the hair around the skull; a standing neck is upright
  const head = MIXAMO_JOINTS.indexOf('Head'), neck = MIXAMO_JOINTS.indexOf('Neck');
  const neckZ = refined[3 * neck + 2];
  if (refined[3 * head + 2] - neckZ < -HEAD_TIPPED_BACK && neckZ > out[3 * head + 2] && insideRay(head, neckZ)) out[3 * head + 2] = neckZ;
  // A hand the network puts clearly in front of the coarse one was read, or set by the arms' lengths, behind it; arms
  // the front view reads as mirrored share their hands' depth, which the pair's rules settled (symmetrise)
  // (a wrist the rules stood behind what its hand holds is not: the network's, misled by the same guard, lies in front;
  // nor one whose network depth lies outside the surface along its ray, between the fist and a guard or blade apart in
  // front of it, which drew it forward: HAND_FORWARD_OF_RAY)
  for (const side of armsPosedApart ? ['Left', 'Right'] as const : []) {
    if (wristsBehindHeld.includes(side)) continue;
    const hand = MIXAMO_JOINTS.indexOf(`${side}Hand`);
    if (!rayDepth.includes(MIXAMO_JOINTS[hand])) continue;
    const z = refined[3 * hand + 2];
    if (z - out[3 * hand + 2] > HAND_FORWARD_OF_RAY && insideRay(hand, z) && insideAStretch(spans?.stretches?.[hand], z)) out[3 * hand + 2] = z;
  }
  // An upper arm's ray that crossed long hair fused to the shoulders read the joint inside the hair
  for (const side of ['Left', 'Right'] as const) {
    const arm = MIXAMO_JOINTS.indexOf(`${side}Arm`), shoulder = MIXAMO_JOINTS.indexOf(`${side}Shoulder`), fore = MIXAMO_JOINTS.indexOf(`${side}ForeArm`);
    const between = 0.5 * (out[3 * shoulder + 2] + out[3 * fore + 2]);
    if (Math.abs(out[3 * arm + 2] - between) <= ARM_DEPTH_OFF_LIMB) continue;
    // the coarse depth is the one in doubt here, so a network depth outside the ray's span is brought to its nearer end
    // rather than refused: the joint stays inside the body, as the loop above keeps it
    const front = spans ? spans.front[arm] : Number.NaN, back = spans ? spans.back[arm] : Number.NaN;
    const z = refined[3 * arm + 2];
    out[3 * arm + 2] = Number.isNaN(front) ? z : Math.min(front, Math.max(back, z));
  }
  return out;
}

/**
 * Whether depth z lies inside the surface along a ray: within one of its stretches (insideStretches), or anywhere where
 * the ray's stretches are unknown or it met nothing (a 2D joint beside the limb).
 * stretches: front, back pairs along the ray, front first (optional), z: depth (canonical)
 */
export function insideAStretch(stretches: Float64Array | undefined, z: number): boolean {
  if (!stretches || stretches.length === 0) return true;
  for (let s = 0; s + 1 < stretches.length; s += 2) if (z <= stretches[s] && z >= stretches[s + 1]) return true;
  return false;
}

/**
 * ownStretchBeforeGap: the midpoint of a ray's front stretch inside the surface where it is at least `least` long and
 * a gap of at least `gap` follows it before the next stretch; NaN otherwise (one stretch, a thin front one, a narrow gap).
 * stretches: front, back pairs along the ray, front first (insideStretches) → depth (canonical z)
 */
export function ownStretchBeforeGap(stretches: Float64Array | undefined, gap: number, least: number): number {
  if (!stretches || stretches.length < 4) return Number.NaN;
  const [front, back, next] = [stretches[0], stretches[1], stretches[2]];
  return front - back >= least && back - next >= gap ? 0.5 * (front + back) : Number.NaN;
}

/**
 * How far (canonical units, height ~1) the network's Head may lie behind its own Neck before withRefinedDepth reads
 * the head as tipped back and stands it over the network's Neck: a standing character's neck is upright (the
 * generator's Head lies within 0.005 of its Neck's depth), and the network, misled by long hair round the skull, put
 * the Head behind it. Chosen on 22 procedural humanoids of the runs 11 000 040, 12 000 000, 16 000 000, 17 000 000 and
 * 20 000 000 (arms posed apart): the seven heads 1.9–7.1 % of the height off, six with long hair, had the network's
 * Head 0.014–0.042 behind its Neck; fifteen others, from 0.002 behind to 0.011 in front. On the artists' ten the
 * network's Head lies from 0.004 behind its Neck (clonk_farmer) to 0.016 in front (mrfixit). Over eighteen eval
 * skeletons runs (1 440 rigs, 9 500 000's among them) it moved 25 Heads nearer and none farther (16 000 013's 6.5 →
 * 2.0 % of the height, 11 000 061's 4.3 → 1.5, 9 500 041's 5.5 → 2.8, 17 000 051's 7.1 → 5.4). The Head's own ray
 * midpoint in its place mends the long-haired heads further (the generator's hair rings the head) but sits far in
 * front of a chibi's Head, at the base of a big skull (9 500 047: 1.0 → 6.0 %).
 */
export const HEAD_TIPPED_BACK = 0.01;

/**
 * How far (canonical units, height ~1) in front of the coarse wrist the network's must lie for withRefinedDepth to take
 * it. Both readings of a hand err backwards where they err: the coarse one where the arms' lengths pulled a hand that
 * reaches forward back to its elbow's depth (armDepthsOfEqualLength, a forearm read too long across the view) or a
 * wrist's ray ran along a held sword's grip; the network's where a hand reaches forward (it sets hands near the body).
 * On 202 hands of procedural humanoids 12 000 000–079 (arms posed apart) and 11 000 040–060 (mirrored), taking the
 * network's where it lies this far in front moved 7 hands nearer the generator's (4 → 1 over 0.03 off) and none
 * farther by over 0.002; at 0.01, three farther. Only for arms posed apart: mirrored arms share one depth, which the
 * pair's rules settled, and there the network, pulled forward by a sword's guard, moved two hands of 16 000 000–079
 * 2 % of the height off (16 000 056, 16 000 062). Only where the network's depth lies inside the surface along the
 * hand's ray (insideAStretch): over the 28 runs posed apart (11 000 040–119, 12, 13, 15–39 000 000–079: 4 353 hands)
 * it was taken for 32 hands, and 8 of those, all holding a sword whose guard or blade stands apart in front of the
 * fist, lay in a gap between the ray's stretches, 0.002–0.027 outside the nearest; there the ray's depth was the nearer
 * on all 8 (the hands 1.7–4.0 % of the height off → 0.2–1.7 %). The 4 whose ray met nothing keep the network's, which
 * was the nearer on all 4: docs/EVAL.md, sixty-second session.
 */
export const HAND_FORWARD_OF_RAY = 0.015;

/**
 * An upper-arm joint whose ray depth lies farther than this (canonical units, height ~1) from the mean of its
 * shoulder's depth (the network's) and its elbow's (the ray's) takes the network's depth: the ray crossed something
 * fused to the arm behind it. Two chibi characters with long hair down their backs (procedural development humanoids
 * 9 200 008 and 9 200 017) had their arms 0.081 and 0.096 behind, and their arm joints 8.5 and 9.6 % of the height
 * off; every other arm of 9 200 000–079 and 9 400 000–079 lies within 0.026 of that mean. A network depth outside the
 * arm's ray span is brought to the span's nearer end (on those 160 humanoids it never was: their joints did not move).
 */
export const ARM_DEPTH_OFF_LIMB = 0.04;
