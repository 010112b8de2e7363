import { AutoRigError } from '../errors.js';
import type { FrontView } from './frontView.js';
import { insideDistance, nearestCoveredPixel, shortestPathsFrom, tracePath } from './imageFields.js';

/** A 2D joint in front-view pixels (i: column, j: row from the bottom), fractional. */
export type Pixel = [number, number];

export interface SideLandmarks {
  shoulder: Pixel; arm: Pixel; foreArm: Pixel; hand: Pixel; handTip: Pixel;
  upLeg: Pixel; leg: Pixel; foot: Pixel;
  /** whether the arm was traced to a standing rod it holds (gripOnRod): its hand tip is the grip, on the rod's middle */
  gripsRod: boolean;
  /**
   * whether the depth along the arm read something the hand holds across its forearm instead of a palm (heldAcrossWrist):
   * the rules' wrist then stands where that begins, not at the hand
   */
  wristReadAcrossHeld: boolean;
  /**
   * whether the arm was traced held out from the base of the neck (neither hanging from an armpit nor laid along the
   * body): its upper-arm joint then stands where the centre line leaves the waist's width, which measures the waist, not
   * the shoulder (estimateSkeleton's HELD_OUT_ARM_MIN_CONFIDENCE)
   */
  armHeldOut: boolean;
}

/** The front-view joint prior of HumanRig's skeleton estimator, found from the silhouette. */
export interface Landmarks2D {
  hips: Pixel; spine: Pixel; spine1: Pixel; spine2: Pixel; neck: Pixel; head: Pixel; headTop: Pixel;
  left: SideLandmarks; right: SideLandmarks;
  /** rows (pixels) of the feet's soles, the crotch and the shoulders */
  soleRow: number; crotchRow: number; shoulderRow: number;
  /**
   * false where the silhouette shows no gap between the legs (they touch, or a robe or a cape to the floor covers
   * them): crotchRow is then a share of the silhouette's height
   */
  legsSeen: boolean;
  /**
   * whether the width profile showed no neck, so that shoulderRow is a share of the height above the crotch: a head far
   * wider than the shoulders (a chibi two heads tall) narrows into the shoulders with no neck between. The rules'
   * shoulder and upper-arm joints then stand on a guessed row (estimateSkeleton's HELD_OUT_ARM_MIN_CONFIDENCE)
   */
  shouldersFromProportions: boolean;
  /** how the layout was read, for logs */
  notes: string[];
  /**
   * the sides whose arm the silhouette does not show at all, laid along the body in the template's proportions only
   * because the caller vouched for them (findLandmarks2D's armsSeenElsewhere)
   */
  unseenArms: ('Left' | 'Right')[];
}

/**
 * The share of the body's height, from the soles up, whose mean column is the legs' middle (the midline's check: low
 * enough that hanging hands stay out of it), and how near (share of the height) the top of the silhouette must come
 * to it to be the head. Measured as the distance between the top's mean column and the lower body's: within 0.03 on
 * the ten artists' characters and 80 generated humanoids, 0.065–0.38 on the ten of 80 generated with arms posed apart
 * whose raised hand is the top. As checked (a covered pixel of the top band within reach), it fires on none of the
 * artists' characters or of 250 generated mirrored ones, and on 3 of 120 with arms posed apart. Where the top reaches
 * the legs' middle, the runs of the top band that come within that reach of it are the head's (runsCentroid).
 */
const LEGS_SHARE = 0.15;
const TOP_OFF_LEGS = 0.05;

// Proportions of the Mixamo template (measured on artist rigs), used where the silhouette has no cue.
/** Hips, Spine, Spine1, Spine2 as fractions of the way from the crotch up to the base of the neck */
export const TRUNK_FRACTIONS = [0.28, 0.43, 0.6, 0.79];
const ELBOW_ALONG_ARM = 0.4;
const WRIST_ALONG_ARM = 0.75;
/**
 * How far along the hand, from the wrist, a fist grips what it holds (the procedural generator's fist: 0.42 of the
 * hand's length). An arm traced to a held rod's middle ends there, not at the finger tips: its joints' shares of the
 * arm are WRIST_ALONG_ARM's and ELBOW_ALONG_ARM's over the share of the whole arm the grip stands at.
 */
const GRIP_ALONG_HAND = 0.42;
/** the hip joints above the crotch (share of the body's height) */
export const HIP_ABOVE_CROTCH = 0.08;
const ANKLE_ABOVE_SOLE = 0.07;
const KNEE_ALONG_LEG = 0.47;
/** the body's core, from which hand tips are ranked: upper-body pixels at least this fraction of the thickest one's inside distance */
const CORE_DEPTH = 0.6;
/** an arm glued to the body: its top under the base of the neck, its length and its centre's inset from the body's edge (fractions of the height) */
const GLUED_ARM_TOP = 0.04;
const GLUED_ARM_LENGTH = 0.4;
const GLUED_ARM_INSET = 0.035;
/** the body's edge stepping inwards by more than this (fraction of the height) from one row to the next: the arm left it */
const GLUED_ARM_STEP = 0.03;
/** a hand tip at least this far (fraction of the height) below the shoulder, and not far out, hangs down */
const HANGING_DROP = 0.12;
/** the shoulder joint of a hanging arm, as a fraction of the way from the armpit up to the base of the neck */
const ARM_JOINT_ABOVE_ARMPIT = 0.6;

/**
 * Finds the 2D joints of a humanoid in T-pose, A-pose or arms-down from its front view:
 * feet and crotch from the gap between the legs, neck and shoulders from the width profile under the head,
 * hands as the farthest tips of the arms (geodesic distance from the neck) or, for arms hanging beside the torso, as the
 * lowest point of the arm followed down from the armpit; elbows and wrists along the arm's centre line, the head joint
 * at the base of the skull (the bottom of the neck's narrowest stretch).
 * Arms glued to the body along their whole length are laid along its sides when the legs are apart.
 * Throws NOT_HUMANOID when no head, no torso, or neither arms nor legs can be read, unless armsSeenElsewhere: the
 * caller has another reading that saw both arms (the hybrid's network, confident: arms hanging inside a cape that also
 * hides the legs leave neither in the silhouette), and the arms without a tip are laid along the body's sides.
 * view: FrontView, armsSeenElsewhere (default false) → Landmarks2D (pixels)
 */
export function findLandmarks2D(view: FrontView, armsSeenElsewhere = false): Landmarks2D {
  const { res, mask } = view;
  const notes: string[] = [];

  let jBot = -1, jTop = -1;
  for (let j = 0; j < res && jBot < 0; j++) for (let i = 0; i < res; i++) if (mask[j * res + i]) { jBot = j; break; }
  for (let j = res - 1; j >= 0 && jTop < 0; j--) for (let i = 0; i < res; i++) if (mask[j * res + i]) { jTop = j; break; }
  if (jBot < 0) throw new AutoRigError('EMPTY_MESH', 'the front view is empty');
  let H = jTop - jBot + 1;
  if (H < res * 0.3) throw new AutoRigError('NOT_HUMANOID', 'the shape is not taller than it is deep: not a standing humanoid');

  // Midline: the centre of the top of the head. A hand raised above the head is the top of the silhouette, off to one
  // side of the body that stands on the legs: the head is then the highest run over the legs' middle.
  const topBand = () => jTop - Math.max(1, Math.round(0.04 * H));
  const legsMiddle = rowsCentroid(mask, res, jBot, jBot + Math.round(LEGS_SHARE * H));
  // a hand raised to the head's height beside it is in the top band too, apart from the head: left out, it would pull the
  // midline, and every joint mirrored about it, towards that side (procedural 22 000 031, a staff raised: 11 %)
  const headRuns = runsCentroid(mask, res, legsMiddle, TOP_OFF_LEGS * H, topBand(), jTop);
  let xc = Number.isNaN(headRuns) ? rowsCentroid(mask, res, topBand(), jTop) : headRuns;
  if (!coveredNear(mask, res, legsMiddle, TOP_OFF_LEGS * H, topBand(), jTop)) {
    const headTop = highestRowOver(mask, res, Math.round(legsMiddle), jTop);
    if (headTop >= 0) {
      notes.push(`the top of the silhouette is off the body's middle (a raised hand): the head is the highest run over the legs (row ${headTop})`);
      jTop = headTop;
      H = jTop - jBot + 1;
      const column = Math.round(legsMiddle), overLegs = runsCentroid(mask, res, column, 0, topBand(), jTop);
      xc = Number.isNaN(overLegs) ? column : overLegs;
    }
  }
  const cm = Math.round(xc);

  // Crotch: the top of the gap between the legs.
  let crotch = -1;
  let gapSeen = 0;
  for (let j = jBot; j < jBot + 0.65 * H; j++) {
    if (!centreFilled(mask, res, cm, j)) { gapSeen++; continue; }
    if (gapSeen >= Math.max(2, 0.03 * H)) {
      let solid = true;
      for (let k = 1; k <= 3; k++) if (!centreFilled(mask, res, cm, j + k)) solid = false;
      if (solid) { crotch = j; break; }
    }
  }
  const legsSeen = crotch >= 0;
  if (crotch < 0) {
    crotch = Math.round(jBot + 0.45 * H);
    notes.push('legs touch or are covered: crotch from proportions');
  }

  // Legs: what hangs below the crotch and reaches the floor.
  const legMask = trackLegs(mask, res, jBot, crotch, xc);
  // Upper body: the rest.
  const upper = new Uint8Array(mask.length);
  for (let p = 0; p < mask.length; p++) upper[p] = mask[p] && !legMask[p] ? 1 : 0;

  // Neck and shoulders: the width of the run through the midline, from the top down.
  let headMax = 0, neckMin = Infinity, neckRow = -1, shoulderRow = -1;
  const searchTo = jTop - 0.6 * (jTop - crotch);
  for (let j = jTop; j > searchTo; j--) {
    const w = midlineRunWidth(mask, res, cm, j);
    if (w === 0) continue;
    if (neckRow < 0 && w > 1.45 * headMax && jTop - j > 0.06 * H) { neckRow = j + 1; shoulderRow = j; break; }
    if (neckRow < 0 && w >= headMax) { headMax = w; neckMin = Infinity; continue; }
    if (w < neckMin) { neckMin = w; neckRow = j; }
    if (w > 1.45 * neckMin && jTop - j > 0.06 * H) { shoulderRow = j; break; }
  }
  const shouldersFromProportions = shoulderRow < 0;
  if (shouldersFromProportions) {
    shoulderRow = Math.round(jTop - 0.2 * (jTop - crotch));
    neckRow = Math.round(jTop - 0.15 * (jTop - crotch));
    neckMin = Infinity;
    notes.push('no neck found in the width profile: shoulders from proportions');
  }
  const headHalf = Math.max(2, headMax / 2);

  // Hands: the farthest tips of the upper body from the base of the neck, one on each side.
  const seedRow = Math.max(crotch + 1, shoulderRow - 1);
  const seed = nearestCoveredPixel(upper, res, cm, seedRow);
  if (seed < 0) throw new AutoRigError('NOT_HUMANOID', 'no torso under the head');
  const geo = shortestPathsFrom(upper, res, seed);
  const depth = insideDistance(mask, res);
  const centerCost = new Float32Array(mask.length);
  for (let p = 0; p < mask.length; p++) centerCost[p] = mask[p] ? 1 / Math.max(0.5, depth[p]) ** 2 : 0;
  const centreLine = shortestPathsFrom(mask, res, seed, centerCost);

  // A hand ends a limb that reaches far from the thick of the body; a coat's hem or a hip corner is a dead end too, but
  // close to it. Tips are ranked by their distance from that core (the upper body's thickest pixels).
  let thickest = 0;
  for (let p = 0; p < mask.length; p++) if (upper[p] && Math.floor(p / res) > crotch) thickest = Math.max(thickest, depth[p]);
  const core: number[] = [];
  for (let p = 0; p < mask.length; p++) if (upper[p] && Math.floor(p / res) > crotch && depth[p] >= CORE_DEPTH * thickest) core.push(p);
  const fromCore = core.length ? shortestPathsFrom(upper, res, core).dist : geo.dist;
  const tipScene: HandTipScene = { res, upper, legMask, geoDist: geo.dist, fromCore, xc, H, crotch, shoulderRow, headHalf };
  const tips = { left: handTip(tipScene, 1, false), right: handTip(tipScene, -1, false) };
  const unseenArms: ('Left' | 'Right')[] = [];
  // A side with no tip is searched again past the pixels the paths never reach: fingertips the raster cut off beside a
  // hand had hidden its tip (seven caped procedural development humanoids of 160 were refused; an arm raised above the
  // shoulder, its hand's scraps cut off, was laid down the body's side). Only for a side with no tip: elsewhere such
  // scraps keep a dead end in long hair from passing for a hand (mixamo_ely's right hand went to the side of her head
  // with them skipped everywhere).
  for (const [key, side] of [['left', 1], ['right', -1]] as const) {
    if (tips[key] >= 0) continue;
    tips[key] = handTip(tipScene, side, true);
    if (tips[key] >= 0) notes.push(`${key} hand found past pixels out of the paths' reach`);
  }
  // Arms glued to the body along their whole length (common in generated meshes) leave no tip in the silhouette; with
  // legs to stand on, such a body still gets arms, laid along its sides in the template's proportions.
  if ((tips.left < 0 || tips.right < 0) && !legsSeen) {
    if (tips.left < 0) unseenArms.push('Left');
    if (tips.right < 0) unseenArms.push('Right');
    if (unseenArms.length > 0 && !armsSeenElsewhere) throw new AutoRigError('NOT_HUMANOID', 'two arms were not found');
    if (unseenArms.length > 0) notes.push('arms not in the silhouette but seen by the network');
  }

  // Waist half-width: the narrowest midline run between crotch and shoulders (arms that touch the body only widen it).
  let waistHalf = Infinity;
  for (let j = Math.round(crotch + 0.2 * (shoulderRow - crotch)); j <= crotch + 0.7 * (shoulderRow - crotch); j++) {
    const w = midlineRunWidth(mask, res, cm, j);
    if (w > 0) waistHalf = Math.min(waistHalf, w / 2);
  }
  if (!Number.isFinite(waistHalf)) waistHalf = headHalf * 1.5;

  const neck: Pixel = [xc, shoulderRow];
  const headTop: Pixel = [xc, jTop];
  const head: Pixel = [xc, baseOfSkullRow(mask, res, cm, shoulderRow, neckRow, neckMin) ?? shoulderRow + 0.3 * (jTop - shoulderRow)];
  // The trunk joints divide the torso from the crotch to the base of the neck in the template's proportions: measured on
  // the torso's span, not the body's height, as heads and legs vary most between styles (big-headed cartoons).

  const scene: SideScene = { view, depth, legMask, centreLinePrev: centreLine.prev, notes, cm, xc, jBot, H, crotch, shoulderRow, waistHalf, neck };
  return {
    hips: [xc, crotch + TRUNK_FRACTIONS[0] * (shoulderRow - crotch)], spine: [xc, crotch + TRUNK_FRACTIONS[1] * (shoulderRow - crotch)], spine1: [xc, crotch + TRUNK_FRACTIONS[2] * (shoulderRow - crotch)],
    spine2: [xc, crotch + TRUNK_FRACTIONS[3] * (shoulderRow - crotch)],
    neck, head, headTop,
    left: sideLandmarks(scene, 1, tips.left),
    right: sideLandmarks(scene, -1, tips.right),
    soleRow: jBot, crotchRow: crotch, shoulderRow, legsSeen, shouldersFromProportions, notes, unseenArms,
  };
}

// The per-pixel scans are module functions, not closures made per call: V8 compiles a closure's loop again for each
// new closure (each front view), and on 2 cores that recompiling cost more than the scans (docs/EVAL.md, twenty-ninth
// session).

/** mask at pixel (i, j), 0 outside the view */
function maskAt(mask: Uint8Array, res: number, i: number, j: number): number {
  return i >= 0 && j >= 0 && i < res && j < res ? mask[j * res + i] : 0;
}

/** whether row j is covered at the midline column cm or beside it */
function centreFilled(mask: Uint8Array, res: number, cm: number, j: number): number {
  return maskAt(mask, res, cm - 1, j) || maskAt(mask, res, cm, j) || maskAt(mask, res, cm + 1, j);
}

/** the width of row j's run through column cm (0 when cm is empty there) */
function midlineRunWidth(mask: Uint8Array, res: number, cm: number, j: number): number {
  if (!maskAt(mask, res, cm, j)) return 0;
  let a = cm, b = cm;
  while (maskAt(mask, res, a - 1, j)) a--;
  while (maskAt(mask, res, b + 1, j)) b++;
  return b - a + 1;
}

/** What handTip reads of findLandmarks2D's work. */
interface HandTipScene {
  res: number;
  /** the upper body (the mask less the legs), the legs: Uint8Array res*res */
  upper: Uint8Array;
  legMask: Uint8Array;
  /** geodesic distance from the base of the neck, and from the thick of the body, through the upper body */
  geoDist: Float64Array;
  fromCore: Float64Array;
  /** the midline's column, the body's height in rows, the crotch's and the shoulders' rows, half the head's width */
  xc: number;
  H: number;
  crotch: number;
  shoulderRow: number;
  headHalf: number;
}

/**
 * A hand's tip on one side (1: +x, the character's left): the upper body's pixel farthest from the core among the local
 * maxima of the distance from the neck, off the head, not a leg's cut corner, beside the legs below the crotch; -1 when
 * none. pastUnreached: the local maxima leave out the pixels the paths never reach (else they count as farther).
 */
function handTip(scene: HandTipScene, side: 1 | -1, pastUnreached: boolean): number {
  const { res, upper, legMask, geoDist, fromCore, xc, H, crotch, shoulderRow, headHalf } = scene;
  const r = Math.max(2, Math.round(0.025 * H));
  let best = -1, bestD = -1;
  for (let p = 0; p < upper.length; p++) {
    if (!upper[p] || !Number.isFinite(geoDist[p]) || fromCore[p] <= bestD) continue;
    const i = p % res, j = (p - i) / res;
    if ((i - xc) * side < 2 || (j > shoulderRow && Math.abs(i - xc) <= headHalf + 1)) continue;
    if (!isLocalMax(geoDist, upper, res, i, j, r, pastUnreached)) continue;
    // The corners where the legs were cut off are dead ends too, but no hands.
    if (Math.abs(j - crotch) <= 2 && j > 0 && (legMask[(j - 1) * res + i] || legMask[(j - 1) * res + Math.max(0, i - 1)] || legMask[(j - 1) * res + Math.min(res - 1, i + 1)])) continue;
    // Below the crotch a hand hangs beside the thigh, never inside the legs' span (scraps of an inner thigh are no hand).
    if (j < crotch && (i - xc) * side <= legReach(legMask, res, xc, j, side)) continue;
    best = p; bestD = fromCore[p];
  }
  return best;
}

/** how far row j's leg pixels reach to one side of the midline xc (−Infinity when the row has none) */
function legReach(legMask: Uint8Array, res: number, xc: number, j: number, side: 1 | -1): number {
  let reach = -Infinity;
  for (let i = 0; i < res; i++) if (legMask[j * res + i]) reach = Math.max(reach, (i - xc) * side);
  return reach;
}

/** What sideLandmarks reads of findLandmarks2D's work. */
interface SideScene {
  view: FrontView;
  /** distance to the silhouette's edge, per pixel */
  depth: Float32Array;
  /** the legs' pixels: Uint8Array res*res */
  legMask: Uint8Array;
  /** the centre line's shortest-path tree from the base of the neck (shortestPathsFrom's prev) */
  centreLinePrev: Int32Array;
  /** findLandmarks2D's notes, added to */
  notes: string[];
  cm: number;
  xc: number;
  jBot: number;
  H: number;
  crotch: number;
  shoulderRow: number;
  waistHalf: number;
  neck: Pixel;
}

/** One side's arm and leg joints (side 1: +x, the character's left), from its hand tip (-1: none found). */
function sideLandmarks(scene: SideScene, side: 1 | -1, tip: number): SideLandmarks {
  const { view, depth, legMask, centreLinePrev, notes, cm, xc, jBot, H, crotch, shoulderRow, waistHalf, neck } = scene;
  const { res, mask } = view;
  // Arms that hang down: followed from the armpit, the shoulder joint placed under the top of the shoulder.
  // An "armpit" under a hand tip that is higher up (a T-pose over a coat whose skirt stands apart) is no armpit.
  const tracked = tip < 0 ? null : trackHangingArm(mask, res, side, cm, shoulderRow, jBot, H);
  const hanging = tracked && Math.floor(tip / res) <= tracked.armpitRow ? tracked : null;
  // A tip straight below the shoulder with no armpit above it: an arm hanging down glued to the body (a blocky
  // character's box arm); the centre line from the neck would run through the torso, so follow the body's side.
  const glued = tip < 0 || (!hanging && hangsBelowShoulder(mask, res, side, cm, shoulderRow, tip, H));
  let path: Pixel[], k0: number;
  if (glued) {
    notes.push(`${side > 0 ? 'left' : 'right'} arm not separable from the body: laid along its side${tip < 0 ? ' from proportions' : ' down to its tip'}`);
    path = gluedArmPath(mask, res, side, cm, shoulderRow, crotch, H, tip < 0 ? undefined : tip);
    k0 = 0;
  } else if (hanging) {
    notes.push(`${side > 0 ? 'left' : 'right'} arm hangs down: followed from the armpit (row ${hanging.armpitRow})`);
    const jointRow = Math.round(hanging.armpitRow + ARM_JOINT_ABOVE_ARMPIT * (shoulderRow - hanging.armpitRow));
    const edge = outerEdge(mask, res, jointRow, cm, side);
    path = [[edge - side * hanging.width / 2, jointRow], ...hanging.centreLine];
    k0 = 0;
  } else {
    path = tracePath(centreLinePrev, tip).map((p) => [p % res, Math.floor(p / res)] as Pixel);
    // The shoulder joint: where the arm's centre line leaves the torso's width.
    k0 = path.findIndex(([i]) => (i - xc) * side >= waistHalf * 1.0);
    if (k0 < 0) k0 = Math.floor(path.length * 0.25);
  }
  // A hand holding a standing rod (a staff) ends, in the silhouette the rods were taken out of, at the rod's edge: the
  // fist is round the rod, its fingers behind it. The arm runs on to the rod's middle, the grip (gripOnRod).
  const grip = glued ? null : gripOnRod(view, path[path.length - 1], side);
  if (grip) path = [...path, grip];
  const along = arcLengths(path);
  const armLen = along[along.length - 1] - along[k0];
  const gripShare = grip ? 1 / (WRIST_ALONG_ARM + GRIP_ALONG_HAND * (1 - WRIST_ALONG_ARM)) : 1;
  const at = (f: number) => pointAlong(path, along, along[k0] + Math.min(1, f * gripShare) * armLen);
  // The wrist: on an arm held out, where a palm that is wider in depth than the forearm begins; else (a hanging arm
  // shows its palm to the front) the thinnest place in the silhouette near where the hand begins.
  const byDepth = hanging || glued || grip ? null : wristByDepth(view, path, along, k0, armLen);
  let wristF = byDepth?.wristF ?? null;
  if (wristF === null && glued) wristF = WRIST_ALONG_ARM;
  if (wristF === null) {
    let thinnest = Infinity;
    wristF = WRIST_ALONG_ARM;
    for (let f = WRIST_ALONG_ARM - 0.1; f <= WRIST_ALONG_ARM + 0.08; f += 0.01) {
      const [i, j] = at(f);
      const d = depth[Math.round(j) * res + Math.round(i)];
      if (d < thinnest - 0.25) { thinnest = d; wristF = f; }
    }
  }
  const arm = path[k0];
  const shoulder: Pixel = [xc + 0.3 * (arm[0] - xc), arm[1] + 0.3 * (neck[1] - arm[1])];

  // Legs: centroids of this side's leg pixels at heights along the leg.
  const legX = (j: number) => sideRowCentroid(legMask, res, Math.round(j), xc, side) ?? sideRowCentroid(mask, res, Math.round(j), xc, side) ?? xc + side * waistHalf * 0.5;
  const hipRow = crotch + HIP_ABOVE_CROTCH * H;
  const ankleRow = jBot + ANKLE_ABOVE_SOLE * H;
  const kneeRow = ankleRow + KNEE_ALONG_LEG * (hipRow - ankleRow);
  return {
    shoulder,
    arm,
    foreArm: at(ELBOW_ALONG_ARM),
    hand: at(wristF),
    handTip: path[path.length - 1],
    gripsRod: grip !== null,
    wristReadAcrossHeld: byDepth?.heldAcross ?? false,
    armHeldOut: !glued && !hanging,
    upLeg: [legX(crotch - 0.03 * H), hipRow],
    leg: [legX(kneeRow), kneeRow],
    foot: [legX(ankleRow), ankleRow],
  };
}

/** The view's depth (front − back) at fraction f of the arm from path[k0] (0 off the silhouette). */
function armThickness(view: FrontView, path: Pixel[], along: number[], k0: number, armLen: number, f: number): number {
  const [i, j] = pointAlong(path, along, along[k0] + f * armLen);
  const p = Math.round(j) * view.res + Math.round(i);
  return view.mask[p] ? view.zFront[p] - view.zBack[p] : 0;
}

/**
 * The head joint's row: the base of the skull, where the neck's narrowest stretch (widths within 15% of the narrowest)
 * begins, seen from the base of the neck upwards. Null when the width profile shows no neck (the head sits straight on
 * the shoulders).
 * runWidth: width of the midline run of a row (pixels), neckBaseRow: base of the neck, narrowestRow and narrowestWidth:
 * the neck's narrowest row and its width (Infinity when none) → row | null
 */
function baseOfSkullRow(mask: Uint8Array, res: number, cm: number, neckBaseRow: number, narrowestRow: number, narrowestWidth: number): number | null {
  if (!Number.isFinite(narrowestWidth)) return null;
  for (let j = neckBaseRow + 1; j <= narrowestRow; j++) if (midlineRunWidth(mask, res, cm, j) <= 1.15 * narrowestWidth) return j;
  return null;
}

/** Whether rows j0..j1 hold a covered pixel within `reach` columns of column x. */
function coveredNear(mask: Uint8Array, res: number, x: number, reach: number, j0: number, j1: number): boolean {
  const i0 = Math.max(0, Math.ceil(x - reach)), i1 = Math.min(res - 1, Math.floor(x + reach));
  for (let j = Math.max(0, j0); j <= Math.min(res - 1, j1); j++) for (let i = i0; i <= i1; i++) if (mask[j * res + i]) return true;
  return false;
}

/** The highest row at or below jFrom in which column `column` is covered, or -1 when none is. */
function highestRowOver(mask: Uint8Array, res: number, column: number, jFrom: number): number {
  for (let j = jFrom; j >= 0; j--) if (maskAt(mask, res, column, j)) return j;
  return -1;
}

/**
 * The mean column of the runs (rowRuns) in rows j0..j1 that come within `reach` of column x (reach 0: the runs through
 * it; the head's over the legs' middle, a raised hand beside it being a run of its own), NaN where none does.
 */
function runsCentroid(mask: Uint8Array, res: number, x: number, reach: number, j0: number, j1: number): number {
  let s = 0, n = 0;
  for (let j = Math.max(0, j0); j <= Math.min(res - 1, j1); j++) {
    for (const [a, b] of rowRuns(mask, res, j)) {
      if (b < x - reach || a > x + reach) continue;
      s += ((a + b) / 2) * (b - a + 1);
      n += b - a + 1;
    }
  }
  return n ? s / n : Number.NaN;
}

function rowsCentroid(mask: Uint8Array, res: number, j0: number, j1: number): number {
  let s = 0, n = 0;
  for (let j = Math.max(0, j0); j <= Math.min(res - 1, j1); j++) for (let i = 0; i < res; i++) if (mask[j * res + i]) { s += i; n++; }
  return n ? s / n : res / 2;
}

function sideRowCentroid(mask: Uint8Array, res: number, j: number, xc: number, side: number): number | undefined {
  if (j < 0 || j >= res) return undefined;
  let s = 0, n = 0;
  for (let i = 0; i < res; i++) if (mask[j * res + i] && (i - xc) * side > 0) { s += i; n++; }
  return n ? s / n : undefined;
}

/**
 * The legs: followed up from the feet to the crotch, one covered interval per side and row, each edge allowed to move
 * outwards by half a pixel per row (legs taper slowly) so that a hand touching a thigh in the silhouette is not taken
 * for leg.
 */
function trackLegs(mask: Uint8Array, res: number, jBot: number, crotch: number, xc: number): Uint8Array {
  const out = new Uint8Array(mask.length);
  const GROWTH = 0.5;
  for (const side of [1, -1]) {
    let a = NaN, b = NaN;
    for (let j = jBot; j < crotch; j++) {
      let lo = -1, hi = -1;
      for (let i = 0; i < res; i++) {
        if (!mask[j * res + i] || (i - xc) * side <= 0) continue;
        if (!Number.isNaN(a) && (i < a - 1 || i > b + 1)) continue;
        if (lo < 0) lo = i;
        hi = i;
      }
      if (lo < 0) { if (!Number.isNaN(a)) break; continue; }
      if (Number.isNaN(a) || j < jBot + 3) { a = lo; b = hi; }
      else { a = Math.max(lo, a - GROWTH); b = Math.min(hi, b + GROWTH); }
      for (let i = Math.ceil(a - 1e-9); i <= Math.floor(b + 1e-9); i++) if (mask[j * res + i]) out[j * res + i] = 1;
    }
  }
  return out;
}

/**
 * An arm that hangs down beside the torso, seen from the front: below the shoulders a separate run of pixels appears
 * beside the torso's run (the armpit); it is followed down row by row, each edge moving at most GROWTH pixels per row,
 * so that where the hand touches a thigh or the hem of a coat the track keeps to the arm. Where the arm stays merged
 * with the body for several rows the track ends where the merging began (the hand tip is hidden there).
 * Returns null for arms held out (T-pose, A-pose): no armpit under the shoulders, or a track that runs outwards more
 * than it runs down.
 * mask: Uint8Array res*res, side: +1 left (larger columns), -1 right, cm: midline column, neckRow: base of the neck,
 * soleRow: lowest covered row, height: body height in pixels →
 *   { armpitRow, width: the arm's width below the armpit (pixels), centreLine: arm centre per row, top to bottom } | null
 */
function trackHangingArm(
  mask: Uint8Array, res: number, side: 1 | -1, cm: number, neckRow: number, soleRow: number, height: number,
): { armpitRow: number; width: number; centreLine: Pixel[] } | null {
  const GROWTH = 1.5;
  const MERGED_ROWS = 5;
  const runsOf = (j: number) => rowRuns(mask, res, j);
  // The armpit: the first of three rows under the neck where the arm's run stands apart from the torso's, close to it.
  const STREAK = 3;
  let armpitRow = -1, a = NaN, b = NaN, streak = 0;
  const maxGap = Math.max(3, 0.04 * height);
  for (let j = neckRow - 1; j > soleRow + 0.3 * height && streak < STREAK; j--) {
    const runs = runsOf(j);
    const torso = runs.find(([lo, hi]) => lo <= cm && cm <= hi);
    if (!torso) return null;
    const beside = side > 0 ? runs.find(([lo]) => lo > torso[1]) : [...runs].reverse().find(([, hi]) => hi < torso[0]);
    const gap = !beside ? Infinity : side > 0 ? beside[0] - torso[1] - 1 : torso[0] - beside[1] - 1;
    if (!beside || gap > maxGap) { streak = 0; continue; }
    if (streak++ === 0) { armpitRow = j; [a, b] = beside; }
  }
  if (streak < STREAK) return null;

  const centreLine: Pixel[] = [[(a + b) / 2, armpitRow]];
  const widths: number[] = [b - a + 1];
  let mergedSince = -1;
  for (let j = armpitRow - 1; j >= soleRow; j--) {
    let lo = Infinity, hi = -Infinity;
    for (const [r0, r1] of runsOf(j)) if (r1 >= a - 1 && r0 <= b + 1) { lo = Math.min(lo, r0); hi = Math.max(hi, r1); }
    if (!Number.isFinite(lo)) break;
    const na = Math.max(lo, a - GROWTH), nb = Math.min(hi, b + GROWTH);
    if (na > nb) break;
    const merged = lo < a - GROWTH - 2 || hi > b + GROWTH + 2;
    if (merged && mergedSince < 0) mergedSince = centreLine.length;
    if (!merged) mergedSince = -1;
    if (mergedSince >= 0 && centreLine.length - mergedSince >= MERGED_ROWS) break;
    a = na; b = nb;
    centreLine.push([(a + b) / 2, j]);
    widths.push(b - a + 1);
  }
  if (mergedSince >= 0) { centreLine.length = mergedSince; widths.length = mergedSince; }
  if (centreLine.length < 2) return null;
  const tip = centreLine[centreLine.length - 1];
  const drop = armpitRow - tip[1];
  if (drop < 0.12 * height || Math.abs(tip[0] - centreLine[0][0]) > drop) return null;
  const first = widths.slice(0, Math.max(1, Math.round(widths.length / 4))).sort((x, y) => x - y);
  return { armpitRow, width: first[Math.floor(first.length / 2)], centreLine };
}

/**
 * An arm that cannot be told apart from the body, laid down the body's side: from the shoulder joint (a little under the
 * base of the neck) down to the tip's row when the tip was seen, else GLUED_ARM_LENGTH of the body's height (not below
 * the crotch), GLUED_ARM_INSET inside the outer edge. Where the body's edge steps inwards by more than GLUED_ARM_STEP
 * above the tip's row, the arm has left the body (a hand hanging out of a wide sleeve beside the thigh): the path ends
 * at the tip there, instead of following the thigh's edge.
 * mask: Uint8Array res*res, side: +1 left, -1 right, cm: midline column, neckRow: base of the neck, crotch: crotch row,
 * height: body height (pixels), tip: pixel index of the hand tip when known → the arm's centre line, top to bottom (pixels)
 */
function gluedArmPath(
  mask: Uint8Array, res: number, side: 1 | -1, cm: number, neckRow: number, crotch: number, height: number, tip?: number,
): Pixel[] {
  const top = Math.round(neckRow - GLUED_ARM_TOP * height);
  const tipRow = tip === undefined ? undefined : Math.floor(tip / res);
  const bottom = tipRow ?? Math.max(crotch, Math.round(top - GLUED_ARM_LENGTH * height));
  const path: Pixel[] = [];
  let edgeAbove = NaN;
  for (let j = top; j >= bottom; j--) {
    const edge = outerEdge(mask, res, j, cm, side);
    if (tip !== undefined && (edgeAbove - edge) * side > GLUED_ARM_STEP * height) {
      path.push([tip % res, tipRow!]);
      break;
    }
    edgeAbove = edge;
    path.push([edge - side * GLUED_ARM_INSET * height, j]);
  }
  return path;
}

/**
 * Whether an arm's tip hangs straight below the shoulder: at least HANGING_DROP of the body's height under the shoulder
 * joint's row, and out from the body's outer edge there by less than half that drop (an A-pose arm runs out further).
 * tip: pixel index of the hand tip; other inputs as gluedArmPath → boolean
 */
function hangsBelowShoulder(mask: Uint8Array, res: number, side: 1 | -1, cm: number, neckRow: number, tip: number, height: number): boolean {
  const top = Math.round(neckRow - GLUED_ARM_TOP * height);
  const ti = tip % res, tj = Math.floor(tip / res);
  const drop = top - tj;
  return drop >= HANGING_DROP * height && Math.abs(ti - outerEdge(mask, res, top, cm, side)) < 0.5 * drop;
}

/**
 * The wrist of an arm held out with the palm down: the palm is wider than the wrist along the viewing direction, so the
 * front view's depth extent (zFront - zBack) along the arm peaks in the hand and dips at the wrist. Returns the dip's
 * place along the arm, or null when the hand is not clearly thicker than the wrist (palm seen edge-on, mitts), and
 * whether the peak is too deep for a palm (heldAcrossWrist).
 * view: FrontView, path: the arm's centre line (pixels), along: its arc lengths (arcLengths), k0: the shoulder joint's index
 * on it, armLen: arc length from there to the hand tip → { wristF: f of the wrist (0 shoulder joint, 1 hand tip) | null,
 * heldAcross } | null where the arm shows no depth at the wrist
 */
function wristByDepth(view: FrontView, path: Pixel[], along: number[], k0: number, armLen: number): { wristF: number | null; heldAcross: boolean } | null {
  const PALM_OVER_WRIST = 1.3;
  let palmF = NaN, palm = -Infinity;
  for (let f = 0.6; f <= 1.0001; f += 0.01) { const t = armThickness(view, path, along, k0, armLen, f); if (t > palm) { palm = t; palmF = f; } }
  let wristF = NaN, wrist = Infinity;
  for (let f = palmF; f >= 0.4999; f -= 0.01) { const t = armThickness(view, path, along, k0, armLen, f); if (t < wrist) { wrist = t; wristF = f; } }
  if (!(wrist > 0)) return null;
  return { wristF: palm >= PALM_OVER_WRIST * wrist ? wristF : null, heldAcross: heldAcrossWrist(palm, wrist) };
}

/**
 * The least depth a hand's peak may read over its wrist's before it is something the hand holds across the forearm in
 * the front view, not a palm: a sword's blade pointing forward and in, whose projection runs back over the forearm
 * (the peak then lies where the blade's tip projects, short of the hand). On the 2 379 arms held out of 2 320 procedural
 * humanoids (11 000 000–39 000 079, arms posed apart), every hand holding no sword read 1.0–3.3 where its wrist read
 * HELD_ACROSS_MIN_WRIST or more (1 955 empty, 279 the other hand, 15 holding a staff); of the 126 holding one, the 58
 * whose blade crossed the forearm 5.0–22.1, the others 1.0–2.5.
 */
export const HELD_ACROSS_WRIST_RATIO = 5;

/**
 * The least wrist depth (canonical units) heldAcrossWrist reads a ratio from: below it the wrist's sample sat on the
 * silhouette's edge (four empty hands read 0.000–0.003 there, ratios of 12.6 to infinity; the sword holders'
 * wrists 0.023–0.075).
 */
export const HELD_ACROSS_MIN_WRIST = 0.01;

/**
 * Whether the depth along an arm held out reads something held across the forearm instead of a palm.
 * palm: the depth extent at the hand's peak, wrist: at the dip before it (canonical units) → boolean
 */
export function heldAcrossWrist(palm: number, wrist: number): boolean {
  return wrist >= HELD_ACROSS_MIN_WRIST && palm >= HELD_ACROSS_WRIST_RATIO * wrist;
}

/** The covered runs of one row: [first, last] column pairs, left to right. */
function rowRuns(mask: Uint8Array, res: number, j: number): [number, number][] {
  const runs: [number, number][] = [];
  let start = -1;
  for (let i = 0; i <= res; i++) {
    const covered = i < res && mask[j * res + i] === 1;
    if (covered && start < 0) start = i;
    if (!covered && start >= 0) { runs.push([start, i - 1]); start = -1; }
  }
  return runs;
}

/** The outermost column of the run through the midline in one row, on one side (the midline column when uncovered). */
function outerEdge(mask: Uint8Array, res: number, j: number, cm: number, side: 1 | -1): number {
  let i = cm;
  while (i + side >= 0 && i + side < res && mask[j * res + i + side]) i += side;
  return i;
}

/** whether no covered pixel within r (a square) of (i, j) has a larger dist; finiteOnly: unreached pixels left out */
function isLocalMax(dist: Float64Array, mask: Uint8Array, res: number, i: number, j: number, r: number, finiteOnly: boolean): boolean {
  const d = dist[j * res + i];
  for (let b = Math.max(0, j - r); b <= Math.min(res - 1, j + r); b++) {
    for (let a = Math.max(0, i - r); a <= Math.min(res - 1, i + r); a++) {
      const q = b * res + a;
      if (mask[q] && dist[q] > d && (!finiteOnly || Number.isFinite(dist[q]))) return false;
    }
  }
  return true;
}

/**
 * Where an arm's traced tip touches a standing rod taken out of the silhouette (FrontView.rodOf): the rod's middle on
 * the tip's row, on the far side of the tip from the body; null where no rod pixel lies within two pixels beyond it.
 * view: the silhouette without its rods, tip: the arm's last pixel, side: 1 (+x) or -1 → the grip's pixel or null
 */
function gripOnRod(view: FrontView, tip: Pixel, side: 1 | -1): Pixel | null {
  const { res, rodOf } = view;
  if (!rodOf) return null;
  const j = Math.round(tip[1]), i0 = Math.round(tip[0]);
  let first = -1;
  for (let d = 1; d <= 2 && first < 0; d++) {
    const i = i0 + side * d;
    if (i >= 0 && i < res && rodOf[j * res + i]) first = i;
  }
  if (first < 0) return null;
  let last = first;
  while (last + side >= 0 && last + side < res && rodOf[j * res + last + side]) last += side;
  return [0.5 * (first + last), tip[1]];
}

function arcLengths(path: Pixel[]): number[] {
  const out = [0];
  for (let k = 1; k < path.length; k++) out.push(out[k - 1] + Math.hypot(path[k][0] - path[k - 1][0], path[k][1] - path[k - 1][1]));
  return out;
}

function pointAlong(path: Pixel[], along: number[], s: number): Pixel {
  if (s <= 0) return path[0];
  for (let k = 1; k < path.length; k++) {
    if (along[k] >= s) {
      const f = (s - along[k - 1]) / Math.max(1e-9, along[k] - along[k - 1]);
      return [path[k - 1][0] + f * (path[k][0] - path[k - 1][0]), path[k - 1][1] + f * (path[k][1] - path[k - 1][1])];
    }
  }
  return path[path.length - 1];
}
