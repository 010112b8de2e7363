import { AutoRigError } from '../errors.js';
import type { FrontView } from './frontView.js';
import { insideDistance, nearestCoveredPixel, shortestPathsFrom, tracePath } from './imageFields.js';

/** A 2D joint in front-view pixels (i: column, j: row from the bottom), fractional. */
export type Pixel = [number, number];

export interface SideLandmarks {
  shoulder: Pixel; arm: Pixel; foreArm: Pixel; hand: Pixel; handTip: Pixel;
  upLeg: Pixel; leg: Pixel; foot: Pixel;
}

/** The front-view joint prior of HumanRig's skeleton estimator, found from the silhouette. */
export interface Landmarks2D {
  hips: Pixel; spine: Pixel; spine1: Pixel; spine2: Pixel; neck: Pixel; head: Pixel; headTop: Pixel;
  left: SideLandmarks; right: SideLandmarks;
  /** rows (pixels) of the feet's soles, the crotch and the shoulders */
  soleRow: number; crotchRow: number; shoulderRow: number;
  /** how the layout was read, for logs */
  notes: string[];
}

// Proportions of the Mixamo template (measured on artist rigs), used where the silhouette has no cue.
const SPINE_FRACTIONS = [0.21, 0.44, 0.71];
const ELBOW_ALONG_ARM = 0.4;
const WRIST_ALONG_ARM = 0.75;
const HIP_ABOVE_CROTCH = 0.08;
const ANKLE_ABOVE_SOLE = 0.07;
const KNEE_ALONG_LEG = 0.47;

/**
 * Finds the 2D joints of a humanoid in T-pose, A-pose or arms-down from its front view:
 * feet and crotch from the gap between the legs, neck and shoulders from the width profile under the head,
 * hands as the farthest tips of the arms (geodesic distance from the neck), elbows and wrists along the arm's centre line.
 * Throws NOT_HUMANOID when no head, two arms and legs can be read.
 * view: FrontView → Landmarks2D (pixels)
 */
export function findLandmarks2D(view: FrontView): Landmarks2D {
  const { res, mask } = view;
  const notes: string[] = [];
  const at = (i: number, j: number) => (i >= 0 && j >= 0 && i < res && j < res ? mask[j * res + i] : 0);

  let jBot = -1, jTop = -1;
  for (let j = 0; j < res && jBot < 0; j++) for (let i = 0; i < res; i++) if (at(i, j)) { jBot = j; break; }
  for (let j = res - 1; j >= 0 && jTop < 0; j--) for (let i = 0; i < res; i++) if (at(i, j)) { jTop = j; break; }
  if (jBot < 0) throw new AutoRigError('EMPTY_MESH', 'the front view is empty');
  const H = jTop - jBot + 1;
  if (H < res * 0.3) throw new AutoRigError('NOT_HUMANOID', 'the shape is not taller than it is deep: not a standing humanoid');

  // Midline: the centre of the top of the head.
  const xc = rowsCentroid(mask, res, jTop - Math.max(1, Math.round(0.04 * H)), jTop);
  const cm = Math.round(xc);
  const centerFilled = (j: number) => at(cm - 1, j) || at(cm, j) || at(cm + 1, j);

  // Crotch: the top of the gap between the legs.
  let crotch = -1;
  let gapSeen = 0;
  for (let j = jBot; j < jBot + 0.65 * H; j++) {
    if (!centerFilled(j)) { gapSeen++; continue; }
    if (gapSeen >= Math.max(2, 0.03 * H)) {
      let solid = true;
      for (let k = 1; k <= 3; k++) if (!centerFilled(j + k)) solid = false;
      if (solid) { crotch = j; break; }
    }
  }
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
  const runWidth = (j: number) => {
    if (!at(cm, j)) return 0;
    let a = cm, b = cm;
    while (at(a - 1, j)) a--;
    while (at(b + 1, j)) b++;
    return b - a + 1;
  };
  let headMax = 0, neckMin = Infinity, neckRow = -1, shoulderRow = -1;
  const searchTo = jTop - 0.45 * (jTop - crotch);
  for (let j = jTop; j > searchTo; j--) {
    const w = runWidth(j);
    if (w === 0) continue;
    if (neckRow < 0 && w > 1.45 * headMax && jTop - j > 0.06 * H) { neckRow = j + 1; shoulderRow = j; break; }
    if (neckRow < 0 && w >= headMax) { headMax = w; neckMin = Infinity; continue; }
    if (w < neckMin) { neckMin = w; neckRow = j; }
    if (w > 1.45 * neckMin && jTop - j > 0.06 * H) { shoulderRow = j; break; }
  }
  if (shoulderRow < 0) {
    shoulderRow = Math.round(jTop - 0.2 * (jTop - crotch));
    neckRow = Math.round(jTop - 0.15 * (jTop - crotch));
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

  const isHead = (i: number, j: number) => j > shoulderRow && Math.abs(i - xc) <= headHalf + 1;
  const handTip = (side: 1 | -1): number => {
    const r = Math.max(2, Math.round(0.025 * H));
    let best = -1, bestD = -1;
    for (let p = 0; p < mask.length; p++) {
      if (!upper[p] || !Number.isFinite(geo.dist[p]) || geo.dist[p] <= bestD) continue;
      const i = p % res, j = (p - i) / res;
      if ((i - xc) * side < 2 || isHead(i, j)) continue;
      if (!isLocalMax(geo.dist, upper, res, i, j, r)) continue;
      // The corners where the legs were cut off are dead ends too, but no hands.
      if (Math.abs(j - crotch) <= 2 && j > 0 && (legMask[(j - 1) * res + i] || legMask[(j - 1) * res + Math.max(0, i - 1)] || legMask[(j - 1) * res + Math.min(res - 1, i + 1)])) continue;
      best = p; bestD = geo.dist[p];
    }
    return best;
  };
  const tips = { left: handTip(1), right: handTip(-1) };
  if (tips.left < 0 || tips.right < 0) throw new AutoRigError('NOT_HUMANOID', 'two arms were not found');

  // Waist half-width: the narrowest midline run between crotch and shoulders (arms that touch the body only widen it).
  let waistHalf = Infinity;
  for (let j = Math.round(crotch + 0.2 * (shoulderRow - crotch)); j <= crotch + 0.7 * (shoulderRow - crotch); j++) {
    const w = runWidth(j);
    if (w > 0) waistHalf = Math.min(waistHalf, w / 2);
  }
  if (!Number.isFinite(waistHalf)) waistHalf = headHalf * 1.5;

  const neck: Pixel = [xc, shoulderRow];
  const headTop: Pixel = [xc, jTop];
  const head: Pixel = [xc, shoulderRow + 0.3 * (jTop - shoulderRow)];
  // Hip joints sit ~8% of the height above the crotch, the pelvis joint a little higher (Mixamo template).
  const hipsRow = crotch + HIP_ABOVE_CROTCH * H + 0.035 * H;
  const hips: Pixel = [xc, hipsRow];
  const spineAt = (f: number): Pixel => [xc, hipsRow + f * (shoulderRow - hipsRow)];

  const sideLandmarks = (side: 1 | -1, tip: number): SideLandmarks => {
    const path = tracePath(centreLine.prev, tip).map((p) => [p % res, Math.floor(p / res)] as Pixel);
    const along = arcLengths(path);
    // The shoulder joint: where the arm's centre line leaves the torso's width.
    let k0 = path.findIndex(([i]) => (i - xc) * side >= waistHalf * 1.0);
    if (k0 < 0) k0 = Math.floor(path.length * 0.25);
    const armLen = along[along.length - 1] - along[k0];
    const at = (f: number) => pointAlong(path, along, along[k0] + f * armLen);
    // The wrist: the thinnest place near where the hand begins.
    let wristF = WRIST_ALONG_ARM, thinnest = Infinity;
    for (let f = WRIST_ALONG_ARM - 0.1; f <= WRIST_ALONG_ARM + 0.08; f += 0.01) {
      const [i, j] = at(f);
      const d = depth[Math.round(j) * res + Math.round(i)];
      if (d < thinnest - 0.25) { thinnest = d; wristF = f; }
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
      upLeg: [legX(crotch - 0.03 * H), hipRow],
      leg: [legX(kneeRow), kneeRow],
      foot: [legX(ankleRow), ankleRow],
    };
  };

  return {
    hips, spine: spineAt(SPINE_FRACTIONS[0]), spine1: spineAt(SPINE_FRACTIONS[1]), spine2: spineAt(SPINE_FRACTIONS[2]),
    neck, head, headTop,
    left: sideLandmarks(1, tips.left),
    right: sideLandmarks(-1, tips.right),
    soleRow: jBot, crotchRow: crotch, shoulderRow, notes,
  };
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

function isLocalMax(dist: Float64Array, mask: Uint8Array, res: number, i: number, j: number, r: number): boolean {
  const d = dist[j * res + i];
  for (let b = Math.max(0, j - r); b <= Math.min(res - 1, j + r); b++) {
    for (let a = Math.max(0, i - r); a <= Math.min(res - 1, i + r); a++) {
      const q = b * res + a;
      if (mask[q] && dist[q] > d) return false;
    }
  }
  return true;
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
