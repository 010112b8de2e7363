import type { FrontView } from './frontView.js';
import { insideDistance } from './imageFields.js';

/**
 * A staff or a spear standing on the floor beside the body, seen from the front. The body's landmarks are read from
 * the silhouette's outline (its top is the head, its farthest tips the hands, what reaches the floor the legs), and a
 * rod that runs from the floor to above the head takes their places. Such a rod is told from limbs by rising straight
 * up from the floor as a thin piece: measured on the 256-pixel front views of the 10 dev characters and of procedural
 * seeds 9 100 000–9 100 029 meshed at 20,000 and at 6,000 vertices, with the opening at ROD_HALF_WIDTH:
 * - the generator's staffs are 5–9 pixels across (thicker when meshed coarsely); their thin pieces start 0–3 pixels
 *   above the soles, lean 3–9° off the vertical and run 0.53–1 of the height up (to the hand that holds them, or past;
 *   0.31 where the frame of seed 9 100 016 at 6,000 vertices is misread and the staff is seen from the side; 0.094
 *   for 9 100 009's, whose robe hides all of it above its foot up to its hand);
 * - no thin piece of a body starts closer than 12 pixels (0.047 of the height) above the soles; the nearest, a thin
 *   character's shins, are at most 0.18 of the height long; the longest, thin arms in T-pose (0.4 of the height), and
 *   hat brims are far off the floor.
 */

/** Half the width (fraction of the height) up to which a piece of the silhouette is thin enough to be a rod. */
export const ROD_HALF_WIDTH = 0.022;
/** A rod's lowest pixel is at most this far above the soles (fraction of the height). */
export const ROD_FLOOR = 0.02;
/**
 * Its foot (its part up to ROD_BASE above its lowest pixel) runs straight for ROD_MIN_BASE (of the height). A robe can
 * hide all of a staff but its top and its foot: procedural identity 9 100 009's shows 0.094 of the height below its
 * robe. Lowering this from 0.25 to 0.06 finds that staff and nothing else on the front views of the 10 dev characters
 * and of procedural seeds 9 100 000–9 100 029 at 20,000 and 6,000 vertices (the rods of 9 100 004, 9 100 007 and
 * 9 100 016 are the same pixels): no body's thin piece starts near the floor (ROD_FLOOR), whatever its length.
 */
export const ROD_BASE = 0.3;
export const ROD_MIN_BASE = 0.06;
/** The foot leans at most this far from the vertical (degrees). */
export const ROD_MAX_TILT_DEGREES = 15;
/** The foot's pixels over its length: at least this many across on average (the ragged rim of an edge is less). */
const ROD_MIN_MEAN_WIDTH = 3;
/** The rod is what is thin within half its foot's width plus this (pixels) of its foot's line. */
const ROD_BAND_SLACK = 1.5;
/** What removing the rods cuts off from the body, up to this share of the silhouette (a staff's knob), goes too. */
const CUT_OFF_SHARE = 0.05;

/** A straight line through a set of pixels: centroid, unit direction, extent along it and spread across it (pixels). */
interface PixelLine {
  ci: number; cj: number; di: number; dj: number;
  length: number;
  /** root mean square distance of the pixels from the line */
  spread: number;
}

/**
 * Rods standing on the floor in a silhouette: the pieces that an opening (erosion, then dilation) by a disc of `radius`
 * pixels removes are thin; a thin piece whose lowest pixel is within ROD_FLOOR of the soles and whose foot (its part up
 * to ROD_BASE above that) runs straight up (principal axis at least ROD_MIN_BASE long, within ROD_MAX_TILT_DEGREES of
 * the vertical, pixels within `radius` of it, ROD_MIN_MEAN_WIDTH or more pixels across) is a rod's foot; the rod is
 * every thin pixel along the foot's line, within half its width and ROD_BAND_SLACK of it (where it passes a hand the
 * opening keeps the hand, so a rod comes in several pieces). A thin piece that stands on the floor where the body's
 * feet do (the innermost contact with the floor on its side of the midline: innermostFloorContacts) is a bare shin,
 * not a rod.
 * mask: Uint8Array res*res, radius: pixels, soleRow: the lowest covered row, height: the silhouette's height (pixels) →
 * Uint8Array res*res (for each pixel of a rod, which rod: 1, 2, …; 0 elsewhere)
 */
export function standingRods(mask: Uint8Array, res: number, radius: number, soleRow: number, height: number): Uint8Array {
  const thin = thinPixels(mask, res, radius);
  const rods = new Uint8Array(mask.length);
  let count = 0;
  let feet: FloorContacts | undefined;
  for (const piece of pieces8(thin, res)) {
    let low = res;
    for (const p of piece) low = Math.min(low, Math.floor(p / res));
    if (low - soleRow > ROD_FLOOR * height) continue;
    const foot = piece.filter((p) => Math.floor(p / res) <= low + ROD_BASE * height);
    const line = pixelLine(foot, res);
    const width = foot.length / line.length;
    const tilt = (Math.acos(Math.min(1, Math.abs(line.dj))) * 180) / Math.PI;
    if (line.length < ROD_MIN_BASE * height || tilt > ROD_MAX_TILT_DEGREES || line.spread > radius || width < ROD_MIN_MEAN_WIDTH) continue;
    feet ??= innermostFloorContacts(mask, res, soleRow, height);
    if (standsOnAFoot(piece, low, res, line.ci, feet)) continue;
    if (count === 255) break;
    const band = width / 2 + ROD_BAND_SLACK;
    count++;
    for (let p = 0; p < mask.length; p++) {
      if (!thin[p] || rods[p]) continue;
      const x = (p % res) - line.ci, y = Math.floor(p / res) - line.cj;
      if (Math.abs(x * line.dj - y * line.di) <= band) rods[p] = count;
    }
  }
  return rods;
}

/**
 * The front view without standing rods (standingRods at ROD_HALF_WIDTH of the silhouette's height) and without the
 * small pieces their removal cuts off the body (up to CUT_OFF_SHARE of the silhouette: a staff's knob): the body's
 * silhouette, which the shape checks and the landmarks read. The depth buffers are kept (only pixels of the mask are
 * read), and `rodOf` says which rod each removed pixel belonged to (a cut-off piece: a rod it touches), so that the
 * pieces a robe or a hand cuts a staff into stay one staff. Returns the view itself when it holds no rod.
 * view: FrontView → FrontView
 */
export function withoutPropRods(view: FrontView): FrontView {
  const { res, mask } = view;
  let jBot = -1, jTop = -1, covered = 0;
  for (let p = 0; p < mask.length; p++) {
    if (!mask[p]) continue;
    const j = (p - (p % res)) / res;
    if (jBot < 0) jBot = j;
    jTop = j;
    covered++;
  }
  if (jBot < 0) return view;
  const height = jTop - jBot + 1;
  const rods = standingRods(mask, res, ROD_HALF_WIDTH * height, jBot, height);
  if (!rods.some((rod) => rod > 0)) return view;
  const body = new Uint8Array(mask.length);
  for (let p = 0; p < mask.length; p++) body[p] = mask[p] && !rods[p] ? 1 : 0;
  const rodOf = Uint8Array.from(rods);
  for (const piece of pieces8(body, res)) {
    if (piece.length > CUT_OFF_SHARE * covered) continue;
    let rod = 0;
    for (const p of piece) if ((rod = touchedRod(rods, res, p)) > 0) break;
    if (rod === 0) continue;
    for (const p of piece) { body[p] = 0; rodOf[p] = rod; }
  }
  return { ...view, mask: body, rodOf };
}

/**
 * The pixels of a silhouette that an opening by a disc of `radius` pixels removes: no disc inside the mask covers them
 * (a disc fits where the nearest uncovered pixel is farther than its radius).
 * mask: Uint8Array res*res, radius: pixels → Uint8Array res*res (1 = thin)
 */
function thinPixels(mask: Uint8Array, res: number, radius: number): Uint8Array {
  const depth = insideDistance(mask, res);
  const thin = Uint8Array.from(mask);
  const r = Math.ceil(radius);
  for (let p = 0; p < mask.length; p++) {
    if (depth[p] <= radius) continue;
    const i = p % res, j = (p - i) / res;
    for (let b = Math.max(0, j - r); b <= Math.min(res - 1, j + r); b++) {
      for (let a = Math.max(0, i - r); a <= Math.min(res - 1, i + r); a++) {
        if ((a - i) ** 2 + (b - j) ** 2 <= radius * radius) thin[b * res + a] = 0;
      }
    }
  }
  return thin;
}

/**
 * Where the body stands, seen from the front: the runs of columns whose pixels touch the floor (a covered pixel within
 * ROD_FLOOR of the soles), and of these the innermost on each side of the body's midline: the feet, or a robe or a
 * cape that hides them. A staff stands beside them, farther out. Procedural humanoids with bare feet and thin shins
 * (development seeds 9 200 013, 9 200 016, 9 200 053, 9 300 002, 9 300 034, 9 300 037, 9 400 014) had their shins
 * taken for staffs, one leg or both: their soles went up to the knee, and the toe bases with them (9 200 016's 9.4 %
 * of the height off). Their shins' feet lie 0.04–0.08 of the height from the midline, the generator's staffs' 0.17 or
 * more, each on its own patch of floor.
 */
interface FloorContacts {
  /** run id (0, 1, …) of each column that touches the floor, −1 for none: Int32Array #res */
  runOf: Int32Array;
  /** the body's midline (column) and the innermost run on each side of it (−1 where there is none) */
  midline: number;
  left: number;
  right: number;
}

/**
 * innermostFloorContacts: mask Uint8Array res*res, soleRow: the lowest covered row, height: the silhouette's height
 * (pixels) → FloorContacts. The midline is the median column of the covered pixels in the middle fifth of the height,
 * where the trunk outweighs a staff's few pixels a row.
 */
function innermostFloorContacts(mask: Uint8Array, res: number, soleRow: number, height: number): FloorContacts {
  const perColumn = new Float64Array(res);
  let total = 0;
  for (let j = Math.round(soleRow + 0.4 * height); j <= Math.min(res - 1, soleRow + 0.6 * height); j++) {
    for (let i = 0; i < res; i++) if (mask[j * res + i]) { perColumn[i]++; total++; }
  }
  let midline = res / 2;
  for (let i = 0, seen = 0; i < res; i++) { seen += perColumn[i]; if (seen >= total / 2) { midline = i; break; } }
  const runOf = new Int32Array(res).fill(-1);
  const runs: [number, number][] = [];
  const top = Math.min(res - 1, Math.floor(soleRow + ROD_FLOOR * height));
  for (let i = 0; i < res; i++) {
    let touches = false;
    for (let j = soleRow; j <= top && !touches; j++) touches = mask[j * res + i] === 1;
    if (!touches) continue;
    if (i > 0 && runOf[i - 1] >= 0) { runOf[i] = runOf[i - 1]; runs[runOf[i]][1] = i; } else { runOf[i] = runs.length; runs.push([i, i]); }
  }
  let left = -1, right = -1;
  runs.forEach(([lo, hi], r) => {
    if (lo <= midline && (left < 0 || hi > runs[left][1])) left = r;
    if (hi >= midline && (right < 0 || lo < runs[right][0])) right = r;
  });
  return { runOf, midline, left, right };
}

/**
 * Whether a thin piece stands where the body's foot on its side does: its lowest pixels touch the floor in the
 * innermost run on the side of the midline its foot's line (centroid column `footColumn`) lies on.
 */
function standsOnAFoot(piece: number[], low: number, res: number, footColumn: number, feet: FloorContacts): boolean {
  const innermost = footColumn < feet.midline ? feet.left : feet.right;
  if (innermost < 0) return false;
  for (const p of piece) if (Math.floor(p / res) === low && feet.runOf[p % res] === innermost) return true;
  return false;
}

/** The 8-connected pieces of a mask: each its pixel indices. mask: Uint8Array res*res → number[][] */
export function pieces8(mask: Uint8Array, res: number): number[][] {
  const seen = new Uint8Array(mask.length);
  const pieces: number[][] = [];
  for (let p0 = 0; p0 < mask.length; p0++) {
    if (!mask[p0] || seen[p0]) continue;
    const piece = [p0];
    seen[p0] = 1;
    for (let k = 0; k < piece.length; k++) {
      const q = piece[k];
      const i = q % res, j = (q - i) / res;
      for (let b = Math.max(0, j - 1); b <= Math.min(res - 1, j + 1); b++) {
        for (let a = Math.max(0, i - 1); a <= Math.min(res - 1, i + 1); a++) {
          const s = b * res + a;
          if (mask[s] && !seen[s]) { seen[s] = 1; piece.push(s); }
        }
      }
    }
    pieces.push(piece);
  }
  return pieces;
}

/** The principal axis of a set of pixels, their extent along it and their spread across it. */
function pixelLine(pixels: number[], res: number): PixelLine {
  let si = 0, sj = 0;
  for (const p of pixels) { si += p % res; sj += Math.floor(p / res); }
  const ci = si / pixels.length, cj = sj / pixels.length;
  let sii = 0, sjj = 0, sij = 0;
  for (const p of pixels) {
    const x = (p % res) - ci, y = Math.floor(p / res) - cj;
    sii += x * x; sjj += y * y; sij += x * y;
  }
  const angle = 0.5 * Math.atan2(2 * sij, sii - sjj);
  const di = Math.cos(angle), dj = Math.sin(angle);
  let lo = Infinity, hi = -Infinity, across = 0;
  for (const p of pixels) {
    const x = (p % res) - ci, y = Math.floor(p / res) - cj;
    const t = x * di + y * dj;
    lo = Math.min(lo, t); hi = Math.max(hi, t);
    across += (x * dj - y * di) ** 2;
  }
  return { ci, cj, di, dj, length: hi - lo + 1, spread: Math.sqrt(across / pixels.length) };
}

/** The rod (standingRods' id) of an 8-neighbour of pixel p, 0 when none is a rod's. */
function touchedRod(rods: Uint8Array, res: number, p: number): number {
  const i = p % res, j = (p - i) / res;
  for (let b = Math.max(0, j - 1); b <= Math.min(res - 1, j + 1); b++) {
    for (let a = Math.max(0, i - 1); a <= Math.min(res - 1, i + 1); a++) if (rods[b * res + a]) return rods[b * res + a];
  }
  return 0;
}
