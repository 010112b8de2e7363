import { fillInterior, gridOverBox, rasterizeTriangles, type VoxelGrid } from '../geometry/voxelGrid.js';
import type { Vec3 } from '../types.js';

/** Voxels along the box's longest side when the frame is read. */
export const FRAME_RESOLUTION = 64;

/**
 * The depth (front-back) axis is the thinnest side of the box when it is at most this fraction of the next side:
 * a body is two to four times wider than deep. Mirror symmetry alone cannot tell depth from left-right on a thin body:
 * a flat slab mirrors onto itself across its thin axis better than an asymmetric pose or a prop lets it mirror across
 * the wide one (skirts and long coats made it pick the side view).
 */
export const THIN_DEPTH = 0.8;

/**
 * Solid runs along the depth axis shorter than this (voxels) are sheets seen edge-on: a cape, a coat's back panel, a
 * staff. They are left out of the up and forward cues, which read the legs and feet: a cape hanging behind the feet
 * filled the gap between them (upside down) and pulled the feet back behind the shins (facing backwards).
 */
export const SHEET_RUN = 3;

/**
 * Slices across up whose area (without sheets) is under this fraction of the median slice's, or under SHEET_RUN²
 * voxels, are thin ends. The up cue reads the body's own ends past a staff's knob above the head or a hat's point; the
 * forward cue reads the feet above what is left of a cape's hem, with a much smaller fraction: a big body (a long
 * coat, a large head) stands on small feet, which must stay.
 */
export const THIN_END = { up: 0.35, feet: 0.02 };

/**
 * Depth by thinness gives way to plain mirror symmetry when the left-right axis it implies is less symmetric than the
 * most symmetric axis by more than this (IoU): something long and thick, a sword held forward, made the box deep.
 */
export const SYMMETRY_SLACK = 0.25;

/**
 * Where the depth is clearly the thinnest side, the two other sides' mirror symmetries within `symmetryTie` (IoU) of
 * each other and one side at least `ratio` times the other: the longer is up. A humanoid's left-right is otherwise
 * by far its more symmetric axis (the artists' ten: 0.41–0.70 above head-to-feet). With one arm raised or held out and
 * the other hanging, or a staff held out to one side, left-right loses its symmetry: on 27 of 800 procedural
 * humanoids with arms posed apart (11 000 000–199, 12 000 000–199, 13 000 000–199, 14 000 000–199) the frame was
 * misread, on most of them with left-right and head-to-feet within 0.22 of each other, either one ahead; left-right
 * was taken for up or for depth, the body read lying on its side or seen from the side, and rigging refused it as
 * leaning or deeper than wide. Those bodies are 1.18–2.1 times taller than wide. The rule fixes 24 of the 27 (the other misreads there: one by the feet cue, two facing);
 * on 800 mirrored ones (200–399 and 11 000 000–199, as made and turned 35° about up) and the artists' ten no frame
 * moves. Not where the thinnest side is itself a near-perfect mirror plane (`depthSymmetry`): that is no body's front
 * and back (the misread humanoids' depth mirrored at most 0.84) but a four-legged animal's left and right (0.996) or a
 * flat cactus's front and back (0.998), which then kept their reading and their refusal.
 */
export const UP_BY_LENGTH = { symmetryTie: 0.3, ratio: 1.15, depthSymmetry: 0.9 };

/**
 * The up cue's body ends (bodyEnds) straddle the left-right mirror plane: at least this share of an end slice's area
 * lies on each side of it. A hand or a sword raised above the head on one side is no end of the body: procedural
 * 15 000 052 raises a sword in its left hand above its head, the top band of the up cue then held two rows of the head's
 * five, the middle column read emptier there than between the feet, and the body was turned upside down. The head
 * straddles the plane, and so do the two feet.
 */
export const END_BALANCE = 0.2;

/**
 * Mirror IoUs this close leave left-right to the feet (bodyAxesWithFeet). The two are each axis's best plane
 * (bestMirrorPlane): procedural 13 000 122, a chibi with one arm held out, mirrors 0.835 left-right across its centroid
 * and 0.911 across its own middle, against 0.736 front to back; within the tie, the feet took front-to-back for
 * left-right and the body was read from the side.
 */
export const FEET_TIE = 0.1;

/** The solid body on a grid over its box: solid Uint8Array #voxels (1 = surface or inside), grid, box min and max. */
export interface SolidBody {
  solid: Uint8Array;
  grid: VoxelGrid;
  min: Vec3;
  max: Vec3;
}

/** Up, depth and left-right as input axes (0 x, 1 y, 2 z), the signs of up and forward, and how they were decided. */
export interface AxisAlignedReading {
  upAxis: number;
  depthAxis: number;
  lateralAxis: number;
  upSign: number;
  forwardSign: number;
  /**
   * lateralSymmetry: left-right's IoU across its best plane (bestMirrorPlane), which findCanonicalFrame compares
   * between the grid's reading and a turned one: across the box's middle or the centroid, arms posed apart read less
   * symmetric on the grid than they are, and a turn that read more was taken (procedural 14 000 061: 0.43 on the grid,
   * 0.70 across its own plane; a 13° turn about up read 0.47, was taken, and the body faced 13° off)
   */
  evidence: { lateralSymmetry: number; upScore: number; forwardScore: number; upByConvention: boolean; forwardByConvention: boolean };
}

/**
 * The triangles voxelised solid over the box [min, max], FRAME_RESOLUTION voxels along its longest side, one empty
 * voxel around. positions: Float32Array #V*3, triangles: Uint32Array #T*3, min/max: the used vertices' box → SolidBody
 */
export function solidBody(positions: Float32Array, triangles: Uint32Array, min: Vec3, max: Vec3): SolidBody {
  const grid = gridOverBox(min, max, FRAME_RESOLUTION, 1);
  const surface = rasterizeTriangles(positions, triangles, grid);
  return { solid: fillInterior(surface, grid), grid, min, max };
}

/**
 * Reads up, forward and left-right of a humanoid standing along the grid's axes (lying down and upside down included):
 * - depth is the thinnest side of the bulk's box (when clearly thinnest), left-right the more mirror-symmetric of the
 *   other two; a body about as deep as wide takes the most symmetric axis (the wider of tied ones) as left-right, up
 *   the longer rest, and where the two horizontal axes nearly tie, the axis the feet stand apart along (bodyAxesWithFeet);
 * - up points to the end whose middle column (on the left-right plane that mirrors the body best, bestMirrorPlane) is
 *   filled (the head), away from the end with a gap (between the feet), the ends being slices that straddle that plane;
 * - forward is where the feet stick out from the shins.
 * The up and forward cues read the solid without sheets across depth (capes, staffs) and past thin ends (THIN_END).
 * A cue that does not decide falls back to the file conventions (glTF: +Y up, +Z forward; Blender: +Z up, -Y forward).
 * body: SolidBody → AxisAlignedReading
 */
export function readAxisAlignedFrame(body: SolidBody): AxisAlignedReading {
  const { min, max } = body;
  const ext = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
  const dims = body.grid.dims;
  const planes = [0, 1, 2].map((a) => mirrorPlanes(body.solid, dims, a));
  // the symmetries the axes are weighed by (mirrorPlane), and how well the body mirrors at all (bestMirrorPlane)
  const sym = planes.map((p) => p.gridOrCentroid.iou), bestSym = planes.map((p) => p.best.iou);
  const sheetlessAlong = [0, 1, 2].map((a) => withoutSheets(body.solid, dims, a));
  const { lateralAxis, upAxis, depthAxis } = bodyAxesWithFeet(body, sym, bestSym, bulkSides(sheetlessAlong, body.grid, ext));
  const sheetless = sheetlessAlong[depthAxis];
  // the ends that straddle the left-right mirror plane (the head, the feet): a hand or a sword raised above the head
  // on one side is no end of the body
  const midLat = planes[lateralAxis].best.at;
  const upEnds = bodyEnds(sheetless, dims, upAxis, THIN_END.up, { axis: lateralAxis, at: midLat });
  const upScore = upEndScore(sheetless, body.grid, upEnds, upAxis, lateralAxis, depthAxis, ext[upAxis], midLat);
  let upSign: number;
  let upByConvention = false;
  if (Math.abs(upScore) >= 0.15) upSign = upScore > 0 ? 1 : -1;
  else { upByConvention = true; upSign = 1; }

  const feet = feetForwardScores(sheetless, body.grid, bodyEnds(sheetless, dims, upAxis, THIN_END.feet), upAxis, upSign, lateralAxis, depthAxis, ext[upAxis]);
  // the centroids first; where they do not decide (small feet, or feet as deep as the shins), the columns' median.
  // Bands read whole (no foot told apart: a hem lies in them) decide only from FORWARD_DECIDES_WHOLE_BANDS
  const centroidsDecide = decidesForward(feet.centroids, feet.feetApart ? FORWARD_DECIDES : FORWARD_DECIDES_WHOLE_BANDS);
  const columnsDecide = !centroidsDecide && decidesForward(feet.columns);
  const forwardScore = columnsDecide ? feet.columns : feet.centroids;
  let forwardSign: number;
  let forwardByConvention = false;
  if (centroidsDecide || columnsDecide) forwardSign = forwardScore > 0 ? 1 : -1;
  else {
    forwardByConvention = true;
    // glTF stores Y-up characters facing +Z; Blender shows Z-up characters facing -Y.
    forwardSign = upAxis === 2 && depthAxis === 1 ? -1 : 1;
  }
  // Prefer +Y (glTF), then +Z (Blender): the conventions of the two places our meshes come from.
  if (upByConvention) upSign = 1;
  return {
    upAxis, depthAxis, lateralAxis, upSign, forwardSign,
    evidence: { lateralSymmetry: bestSym[lateralAxis], upScore, forwardScore, upByConvention, forwardByConvention },
  };
}

/**
 * Layers across an axis, at either end of the bulk, that hold under this share of the fullest layer's bulk voxels are
 * left out of the bulk's side along it. A rod held forward whose blade is a few voxels wide is bulk by bulkSides' own
 * test (a sheet along one axis only), but it is a handful of voxels in each layer it crosses: procedural 10 000 026's
 * sword, 0.65 m ahead of the chest, held 5–9 bulk voxels in each layer against 1,173 in the fullest (0.4–0.8 %), and made
 * the box deeper than wide, so that the thinness rule took left-right for depth. A body's own end layers hold more:
 * a T-pose's hands about 1.5 %, which only trims the arm span, never the thinnest side.
 */
export const ROD_LAYER_SHARE = 0.02;

/**
 * Layers bulkSides' fullest layer is read over (fullestLayer). Procedural 23 000 012, a chibi under a brim hat 1.9 m
 * across on a 1.8 m body: the brim's one layer across up held 2,676 bulk voxels, the head's under it about 1,070, the
 * legs' 18–44, under ROD_LAYER_SHARE of the brim's; the legs were left out of the height, which then read shorter
 * than the brim's width, and the body was taken to lie on its back (refused NOT_HUMANOID).
 */
export const FULLEST_LAYER_SPAN = 5;

/**
 * The sides of the box of the body's bulk: the voxels that are no sheet along at least two axes, which leaves out
 * rods (a sword held forward, a staff) and keeps slabs (a cape, the torso), less the end layers along each axis that
 * hold under ROD_LAYER_SHARE of its fullest layer's bulk (fullestLayer; a wide blade). sheetlessAlong: withoutSheets
 * along x, y, z (#3 of #voxels), ext: the whole box's sides #3 (kept when there is no bulk) → sides #3 (input units).
 */
export function bulkSides(sheetlessAlong: Uint8Array[], g: VoxelGrid, ext: number[]): number[] {
  const [nx, ny, nz] = g.dims;
  // bulk voxels in each layer across x, y and z
  const layers = [new Float64Array(nx), new Float64Array(ny), new Float64Array(nz)];
  const [sx, sy, sz] = sheetlessAlong;
  let any = false;
  for (let k = 0, v = 0; k < nz; k++) for (let j = 0; j < ny; j++) for (let i = 0; i < nx; i++, v++) {
    if (sx[v] + sy[v] + sz[v] < 2) continue;
    layers[0][i]++;
    layers[1][j]++;
    layers[2][k]++;
    any = true;
  }
  if (!any) return ext;
  return layers.map((counts) => {
    const floor = ROD_LAYER_SHARE * fullestLayer(counts);
    let lo = 0, hi = counts.length - 1;
    while (counts[lo] < floor) lo++;
    while (counts[hi] < floor) hi--;
    return (hi - lo + 1) * g.size;
  });
}

/**
 * The bulk voxels of the fullest layer across an axis, each layer counted as the median of itself and the two layers
 * on either side (FULLEST_LAYER_SPAN): a brim or a plate one or two voxels thick is no layer of the body's bulk.
 * counts: bulk voxels per layer (#layers) → count
 */
export function fullestLayer(counts: Float64Array): number {
  const half = FULLEST_LAYER_SPAN >> 1;
  const window: number[] = [];
  let fullest = 0;
  for (let i = 0; i < counts.length; i++) {
    window.length = 0;
    for (let k = Math.max(0, i - half); k <= Math.min(counts.length - 1, i + half); k++) window.push(counts[k]);
    window.sort((a, b) => a - b);
    fullest = Math.max(fullest, window[window.length >> 1]);
  }
  return fullest;
}

/**
 * Which input axis is left-right, up and depth, from the mirror symmetry across each axis (sym #3, IoU) and the box's
 * sides (ext #3). See THIN_DEPTH.
 */
export function bodyAxes(sym: number[], ext: number[]): { lateralAxis: number; upAxis: number; depthAxis: number; byThinness: boolean } {
  const bySize = [0, 1, 2].sort((a, b) => ext[a] - ext[b]);
  if (ext[bySize[0]] <= THIN_DEPTH * ext[bySize[1]]) {
    const depthAxis = bySize[0];
    const [a, b] = [0, 1, 2].filter((x) => x !== depthAxis);
    // arms posed apart (or a prop held out) leave left-right little more symmetric than head-to-feet: the length decides
    if (sym[depthAxis] < UP_BY_LENGTH.depthSymmetry && Math.abs(sym[a] - sym[b]) < UP_BY_LENGTH.symmetryTie &&
      Math.max(ext[a], ext[b]) >= UP_BY_LENGTH.ratio * Math.min(ext[a], ext[b])) {
      const upAxis = ext[a] >= ext[b] ? a : b;
      return { lateralAxis: upAxis === a ? b : a, upAxis, depthAxis, byThinness: true };
    }
    const lateralAxis = sym[a] >= sym[b] ? a : b;
    if (sym[lateralAxis] >= Math.max(...sym) - SYMMETRY_SLACK) return { lateralAxis, upAxis: lateralAxis === a ? b : a, depthAxis, byThinness: true };
  }
  // Boxy bodies that are symmetric both ways (a blocky character) take the wider of the tied axes as left-right.
  const best = Math.max(...sym);
  const tied = [0, 1, 2].filter((a) => sym[a] >= best - 0.03);
  const lateralAxis = tied.reduce((a, b) => (ext[b] > ext[a] ? b : a));
  const rest = [0, 1, 2].filter((a) => a !== lateralAxis);
  const upAxis = ext[rest[0]] >= ext[rest[1]] ? rest[0] : rest[1];
  return { lateralAxis, upAxis, depthAxis: rest[0] === upAxis ? rest[1] : rest[0], byThinness: false };
}

/**
 * bodyAxes, where a body about as deep as wide whose two most symmetric axes nearly tie (within FEET_TIE: a wide
 * skirt is round) takes left-right from the feet (feetApartAxis) when they tell.
 */
function bodyAxesWithFeet(body: SolidBody, sym: number[], bestSym: number[], sides: number[]): { lateralAxis: number; upAxis: number; depthAxis: number } {
  const axes = bodyAxes(sym, sides);
  if (axes.byThinness || Math.abs(bestSym[axes.lateralAxis] - bestSym[axes.depthAxis]) >= FEET_TIE) return axes;
  const apart = feetApartAxis(body.solid, body.grid.dims, axes.upAxis, [axes.lateralAxis, axes.depthAxis]);
  if (apart < 0 || apart === axes.lateralAxis) return axes;
  return { lateralAxis: apart, upAxis: axes.upAxis, depthAxis: axes.lateralAxis };
}

/**
 * Of two axes across `upAxis`, the one the feet stand apart along: at an end of the body (the bottom 8% or the top
 * 8%), the solid's footprint, without the pieces wider than HEM_SPAN of it along one axis (footPieces: a hem lying
 * behind the feet), shows a gap between two feet along that axis, and along the other, none. A cape's hem on the floor
 * behind the feet of a chibi with an arm held out (procedural 19 000 065) filled the gap between the feet seen from
 * the front and stood apart from the heels seen from the side: the body was read from the side, and refused.
 * solid #voxels, dims #3, across: the two axes → one of them, or -1 when the ends do not tell.
 */
export function feetApartAxis(solid: Uint8Array, dims: number[], upAxis: number, across: [number, number]): number {
  const band = Math.max(1, Math.round(dims[upAxis] * 0.08));
  const gapAlong = (h: number, fromTop: boolean) => {
    const other = across[0] === h ? across[1] : across[0];
    const footprint = new Float64Array(dims[h] * dims[other]);
    const c = [0, 0, 0];
    for (let s = 0; s < band; s++) {
      c[upAxis] = fromTop ? dims[upAxis] - 2 - s : 1 + s;
      for (c[h] = 0; c[h] < dims[h]; c[h]++) for (c[other] = 0; c[other] < dims[other]; c[other]++) {
        if (solid[(c[2] * dims[1] + c[1]) * dims[0] + c[0]]) footprint[c[h] * dims[other] + c[other]] = 1;
      }
    }
    const feet = footPieces(footprint, dims[h], dims[other]);
    if (!feet) return false;
    const occupied = new Uint8Array(dims[h]);
    for (let i = 0; i < feet.length; i++) if (feet[i]) occupied[Math.floor(i / dims[other])] = 1;
    const first = occupied.indexOf(1), last = occupied.lastIndexOf(1);
    for (let i = first; i >= 0 && i <= last; i++) if (!occupied[i]) return true;
    return false;
  };
  for (const fromTop of [false, true]) {
    const a = gapAlong(across[0], fromTop), b = gapAlong(across[1], fromTop);
    if (a !== b) return a ? across[0] : across[1];
  }
  return -1;
}

/**
 * The plane normal to `axis` that mirrors the solid better of the box's middle plane and the plane through the solid's
 * centroid (to the half voxel, as the heading sweep of headingTurn.ts mirrors), and the solid's intersection over union
 * with its mirror image across it. The box's middle alone moves off the body's when one arm is held out and the other
 * down (a capsule humanoid's left-right IoU fell from 0.99 to 0.38 with one arm lowered 30°, and the frame took its
 * left-right for up); the centroid alone moves off it towards a heavy prop (a staff beside a thin body: 0.88 → 0.51).
 * solid #voxels, dims #3 → { at: the plane's position along axis in voxel units (cell i spans [i, i + 1)), iou }
 *
 * These are the symmetries bodyAxes weighs the axes by; not the best plane of all (bestMirrorPlane), which finds more
 * symmetry than a body has where two parts mirror each other off its middle: a long-legged animal's front legs onto its
 * hind legs (0.62 → 0.77 head-to-tail), near enough to its left-right (0.998) that it was read as a humanoid seen from
 * the front, its length as left-right, and rigged.
 */
export function mirrorPlane(solid: Uint8Array, dims: number[], axis: number): { at: number; iou: number } {
  return mirrorPlanes(solid, dims, axis).gridOrCentroid;
}

/**
 * Of every plane normal to `axis` on the half-voxel grid, the one that mirrors the solid best (ties: the nearest the
 * box's middle), and its IoU. solid #voxels, dims #3 → { at: voxel units (cell i spans [i, i + 1)), iou }
 *
 * The body's own midline, for the up cue: the box's middle and the solid's centroid (mirrorPlane) both miss it where
 * one side carries more than the other. Procedural 15 000 052 raises a sword in its left hand; the centroid's plane (IoU
 * 0.23) stood on the left leg, three voxels off the body's (0.66), and the up cue read the middle column between the
 * feet as filled.
 */
export function bestMirrorPlane(solid: Uint8Array, dims: number[], axis: number): { at: number; iou: number } {
  return mirrorPlanes(solid, dims, axis).best;
}

/**
 * mirrorPlane's and bestMirrorPlane's planes along `axis`, from one count of every plane's overlap (mirrorOverlaps).
 * solid #voxels, dims #3 → { gridOrCentroid, best: { at: voxel units, iou } each }
 */
export function mirrorPlanes(solid: Uint8Array, dims: number[], axis: number): { gridOrCentroid: { at: number; iou: number }; best: { at: number; iou: number } } {
  const n = dims[axis];
  const { count, inter, centroid } = mirrorOverlaps(solid, dims, axis);
  if (!count) return { gridOrCentroid: { at: n / 2, iou: 0 }, best: { at: n / 2, iou: 0 } };
  // cell c mirrors to cell last - c: the plane at (last + 1) / 2; the box's middle is last = n - 1
  const middle = { at: n / 2, iou: overlapIoU(inter, count, n - 1) };
  const last = Math.round(2 * centroid) - 1;
  const atCentroid = last !== n - 1 && last >= 0 && last <= 2 * n - 2 ? overlapIoU(inter, count, last) : 0;
  const gridOrCentroid = atCentroid > middle.iou ? { at: (last + 1) / 2, iou: atCentroid } : middle;
  let best = n - 1, bestIoU = middle.iou;
  for (let off = 1; off <= n - 1; off++) {
    for (let side = -1; side <= 1; side += 2) {
      const at = n - 1 + side * off, iou = overlapIoU(inter, count, at);
      if (iou > bestIoU) { best = at; bestIoU = iou; }
    }
  }
  return { gridOrCentroid, best: { at: (best + 1) / 2, iou: bestIoU } };
}

/** The IoU of a solid of `count` voxels with its mirror image under plane `last` (mirrorOverlaps' inter) → [0, 1]. */
function overlapIoU(inter: Float64Array, count: number, last: number): number {
  return inter[last] / (2 * count - inter[last]);
}

/**
 * The solid's voxel count and, for each mirror plane along `axis` (cell c to cell last − c, last 0 … 2·(n − 1)), how
 * many solid voxels mirror onto solid ones. Each line along the axis is read as runs of solid cells; a pair of runs
 * [a, b] and [c, d] overlaps under `last` in a count that is piecewise linear in last (rising from a + c − 1, level,
 * falling to b + d + 1), so every plane is counted in one pass over the grid and the runs' pairs, not one pass a plane.
 * solid #voxels, dims #3 → { count, inter: Float64Array #(2n − 1), centroid: the mean of the solid's cell centres
 * along the axis (voxel units; NaN for an empty solid) }
 */
function mirrorOverlaps(solid: Uint8Array, dims: number[], axis: number): { count: number; inter: Float64Array; centroid: number } {
  const n = dims[axis];
  const stride = axis === 0 ? 1 : axis === 1 ? dims[0] : dims[0] * dims[1];
  const [u, w] = [0, 1, 2].filter((a) => a !== axis);
  // slope changes of the overlap as a function of last, at knots q = −1 … 2n − 1 (index q + 1)
  const knots = new Float64Array(2 * n + 2);
  // each line's runs as [start, end] pairs: at most one run per two cells
  const runs = new Int32Array(n + 2);
  const c = [0, 0, 0];
  let count = 0, sum = 0;
  for (c[u] = 0; c[u] < dims[u]; c[u]++) for (c[w] = 0; c[w] < dims[w]; c[w]++) {
    c[axis] = 0;
    const base = (c[2] * dims[1] + c[1]) * dims[0] + c[0];
    let ends = 0, start = -1;
    for (let i = 0; i <= n; i++) {
      const on = i < n && solid[base + i * stride];
      if (on && start < 0) start = i;
      if (!on && start >= 0) {
        runs[ends++] = start; runs[ends++] = i - 1;
        count += i - start;
        sum += ((i - start) * (start + i)) / 2; // the run's cell centres start + 0.5 … i − 0.5
        start = -1;
      }
    }
    for (let r = 0; r < ends; r += 2) for (let t = 0; t < ends; t += 2) {
      const a = runs[r], b = runs[r + 1], cc = runs[t], d = runs[t + 1];
      knots[a + cc] += 1; // q = a + c − 1
      knots[a + d + 1] -= 1;
      knots[b + cc + 1] -= 1;
      knots[b + d + 2] += 1; // q = b + d + 1
    }
  }
  const inter = new Float64Array(2 * n - 1);
  let slope = knots[0], value = 0;
  for (let last = 0; last < 2 * n - 1; last++) {
    value += slope;
    inter[last] = value;
    slope += knots[last + 1];
  }
  return { count, inter, centroid: count ? sum / count : Number.NaN };
}

/** The solid without its runs along `axis` shorter than SHEET_RUN voxels: solid #voxels → #voxels. */
export function withoutSheets(solid: Uint8Array, dims: number[], axis: number): Uint8Array {
  const out = new Uint8Array(solid.length);
  const stride = axis === 0 ? 1 : axis === 1 ? dims[0] : dims[0] * dims[1];
  const n = dims[axis];
  const c = [0, 0, 0];
  const [u, w] = [0, 1, 2].filter((a) => a !== axis);
  for (c[u] = 0; c[u] < dims[u]; c[u]++) for (c[w] = 0; c[w] < dims[w]; c[w]++) {
    c[axis] = 0;
    const base = (c[2] * dims[1] + c[1]) * dims[0] + c[0];
    let start = -1;
    for (let i = 0; i <= n; i++) {
      const on = i < n && solid[base + i * stride];
      if (on && start < 0) start = i;
      if (!on && start >= 0) {
        if (i - start >= SHEET_RUN) for (let k = start; k < i; k++) out[base + k * stride] = 1;
        start = -1;
      }
    }
  }
  return out;
}

/**
 * The first and last slice across `axis` whose solid area is at least `thinEnd` of the median occupied slice's (and
 * SHEET_RUN² voxels): [lo, hi]
 * (grid indices; [1, dims-2] on the padded grid of a solid that reaches its box). On the solid without sheets, a
 * staff's shaft is gone already; its knob and a hat's point are trimmed here. balancedAcross: a plane across another
 * axis (at: voxel units) that an end slice must straddle, at least END_BALANCE of its area on each side (any slice
 * when absent).
 */
export function bodyEnds(
  solid: Uint8Array, dims: number[], axis: number, thinEnd: number, balancedAcross?: { axis: number; at: number },
): [number, number] {
  const area = new Float64Array(dims[axis]);
  // with balancedAcross: each slice's area on the far side of the plane (cell centres past `at`), and on the near side
  const far = new Float64Array(balancedAcross ? dims[axis] : 0), near = new Float64Array(far.length);
  const c = [0, 0, 0];
  for (c[2] = 0; c[2] < dims[2]; c[2]++) for (c[1] = 0; c[1] < dims[1]; c[1]++) for (c[0] = 0; c[0] < dims[0]; c[0]++) {
    if (!solid[(c[2] * dims[1] + c[1]) * dims[0] + c[0]]) continue;
    area[c[axis]]++;
    if (!balancedAcross) continue;
    const centre = c[balancedAcross.axis] + 0.5;
    if (centre > balancedAcross.at) far[c[axis]]++;
    else if (centre < balancedAcross.at) near[c[axis]]++;
  }
  const occupied = Array.from(area).filter((x) => x > 0).sort((x, y) => x - y);
  const least = Math.max(SHEET_RUN * SHEET_RUN, occupied.length ? thinEnd * occupied[occupied.length >> 1] : 0);
  const isEnd = (i: number) => area[i] >= least && (!balancedAcross || Math.min(far[i], near[i]) >= END_BALANCE * area[i]);
  let lo = 1, hi = dims[axis] - 2;
  while (lo < hi && !isEnd(lo)) lo++;
  while (hi > lo && !isEnd(hi)) hi--;
  return [lo, hi];
}

/**
 * Up sign cue: the fraction of the middle column (a strip across left-right, seen along depth) filled in the band at
 * the top end minus at the bottom end, ends [lo, hi] along up. Positive: the head is at the + end. Range [-1, 1].
 */
function upEndScore(solid: Uint8Array, g: VoxelGrid, ends: [number, number], upAxis: number, lateralAxis: number, depthAxis: number, height: number, mirrorAt: number): number {
  const n = g.dims;
  const bandUp = Math.max(1, Math.round(n[upAxis] * 0.08));
  const strip = Math.max(1, Math.round(height / g.size * 0.03));
  // the body's mirror plane (bestMirrorPlane), not always the box's middle: an arm held out on one side only moves the box's
  // middle off the head and the gap between the feet
  const midLat = Math.min(n[lateralAxis] - 1, Math.floor(mirrorAt));
  const top = middleColumnFill(solid, n, ends, true, bandUp, midLat, strip, upAxis, lateralAxis, depthAxis);
  return top - middleColumnFill(solid, n, ends, false, bandUp, midLat, strip, upAxis, lateralAxis, depthAxis);
}

// The cues' steps are module functions, not closures made per reading: a closure made per call is a new function each
// time, and the optimised code that inlined the last one (its loop compiled on the stack) is thrown away and compiled
// again on every reading (V8 --trace-opt: each apply of a pose recompiled them, "wrong call target").

/** The solid's voxel at grid cell c (#3: x, y, z) of a grid of dims n (#3): 0 or 1. */
function solidAt(solid: Uint8Array, n: number[], c: number[]): number {
  return solid[(c[2] * n[1] + c[1]) * n[0] + c[0]];
}

/**
 * upEndScore's fill of the middle column at one end: over the `bandUp` slices across up inward from the top end
 * (ends[1]) or the bottom one (ends[0]), the share of the lateral cells midLat ± strip with any solid along depth.
 * solid #voxels, n: grid dims #3, ends [lo, hi] along up → [0, 1]
 */
function middleColumnFill(
  solid: Uint8Array, n: number[], ends: [number, number], fromTop: boolean, bandUp: number, midLat: number, strip: number,
  upAxis: number, lateralAxis: number, depthAxis: number,
): number {
  let filled = 0, total = 0;
  const c = [0, 0, 0];
  for (let s = 0; s < bandUp; s++) {
    c[upAxis] = fromTop ? ends[1] - s : ends[0] + s;
    for (let l = midLat - strip; l <= midLat + strip; l++) {
      c[lateralAxis] = l;
      let any = 0;
      for (let d = 0; d < n[depthAxis] && !any; d++) { c[depthAxis] = d; any = solidAt(solid, n, c); }
      filled += any; total++;
    }
  }
  return filled / Math.max(1, total);
}

/**
 * A piece of the feet's band (4-connected on its footprint across up) that spans more than this share of the band's
 * width is no foot but a hem lying behind or around them: a cape's, a long coat's. Feet stand apart, each well under
 * half the band's width; feet standing together, or hidden in a skirt down to the floor, are one piece as wide as the
 * band, and then no foot is told apart (footPieces).
 */
export const HEM_SPAN = 0.5;

/** The least forward cue score (over the body's height, either way) that decides the sign. */
export const FORWARD_DECIDES = 0.006;

/**
 * The least score of the centroids that decides the sign where no foot was told apart (footPieces) and the feet's and
 * shins' bands are read whole: a long coat's hem or a cape lying in them weighs on both centroids, and the feet's share
 * of the difference is small. Procedural humanoids 36 000 066 (a long coat under a cape, both arm modes) read −0.006 and
 * −0.007 so, backwards. Of the rest of 1 278 procedural characters (11 000 040–119, 12, 13, 15, 33–36 000 000, both
 * modes) only 36 000 004 was read so, 0.005 in both modes (undecided: the file's convention). Of the artists'
 * characters mrfixit reads whole bands, 0.072 (right), and minetest_character 0 (undecided).
 */
export const FORWARD_DECIDES_WHOLE_BANDS = 0.02;

/** Whether a forward cue's score decides the sign (finite, least — FORWARD_DECIDES unless said — or more either way). */
function decidesForward(score: number, least = FORWARD_DECIDES): boolean {
  return Number.isFinite(score) && Math.abs(score) >= least;
}

/**
 * Forward sign cues, over the body's height, positive where the feet stick out forward from the shins:
 * - centroids (feetForwardScore);
 * - columns: in each lateral column that holds solid in both the feet's band and the shins', the midpoint of its run
 *   along depth in the feet's band less the shins'; the median over those columns. Read where the centroids do not
 *   decide: small feet under wide shins (clonk, clonk_farmer: their centroids 0.001–0.006), or boots as deep as the
 *   legs. Measured where the centroids left it undecided: 3 of the 10 artists' characters (cesium_man, clonk,
 *   clonk_farmer: 0.0078 each, right) and 17 of 960 procedural ones (14 right, none wrong, 3 at 0). Alone it is
 *   worse than the centroids (9 of 960 wrong): a coat's hem in the shins' band moves every column's run. Only where
 *   feet were told apart (footPieces): a skirt to the floor over boots shows none, and its columns read backwards
 *   (procedural 9 300 068, −0.0078).
 * The bottom is the end away from up (upSign ±1 along upAxis). NaN where a band is empty; feetApart: whether footPieces
 * told feet apart (else both bands were read whole).
 */
function feetForwardScores(
  solid: Uint8Array, g: VoxelGrid, ends: [number, number], upAxis: number, upSign: number, lateralAxis: number, depthAxis: number, height: number,
): { centroids: number; columns: number; feetApart: boolean } {
  const n = g.dims;
  const lateral = n[lateralAxis], depth = n[depthAxis];
  const feet = bandFootprint(solid, n, ends, 0, 0.04, upAxis, upSign, lateralAxis, depthAxis);
  const shins = bandFootprint(solid, n, ends, 0.1, 0.25, upAxis, upSign, lateralAxis, depthAxis);
  const pieces = footPieces(feet, lateral, depth);
  const columns = pieces ? medianRunShift(feet, shins, lateral, depth) * g.size / Math.max(height, 1e-12) : Number.NaN;
  return { centroids: feetForwardScore(feet, pieces, shins, g, lateral, depth, height), columns, feetApart: pieces !== null };
}

/**
 * In each lateral column holding cells in both footprints (Float64Array #lateral*#depth, lateral-major), the midpoint
 * of its run along depth in `a` less that in `b`; the median over those columns (depth cells), NaN where none.
 */
function medianRunShift(a: Float64Array, b: Float64Array, lateral: number, depth: number): number {
  const shifts: number[] = [];
  for (let l = 0; l < lateral; l++) {
    const ra = depthRun(a, l, depth), rb = depthRun(b, l, depth);
    if (ra && rb) shifts.push((ra[0] + ra[1] - rb[0] - rb[1]) / 2);
  }
  if (!shifts.length) return NaN;
  shifts.sort((x, y) => x - y);
  const mid = shifts.length >> 1;
  return shifts.length % 2 ? shifts[mid] : (shifts[mid - 1] + shifts[mid]) / 2;
}

/** The first and last depth cell holding solid in lateral column l of a footprint; null where it holds none. */
function depthRun(footprint: Float64Array, l: number, depth: number): [number, number] | null {
  let first = -1, last = -1;
  for (let d = 0; d < depth; d++) if (footprint[l * depth + d]) { if (first < 0) first = d; last = d; }
  return first < 0 ? null : [first, last];
}

/**
 * Forward sign cue: how far the feet's depth centroid (the bottom 4% of the body) lies in front of the shins' (10-25%),
 * over the body's height. Where feet are told apart from hems (footPieces), the feet's band holds only them and the
 * shins are read in the lateral columns that hold them: a cape's thick hem lying behind the feet pulled their centroid
 * back (procedural 9 200 024, 9 500 050), and a blade hanging beside the legs, across the shins' band, pulled the
 * shins' forward (9 900 021, 10 200 052): each was read backwards. Where none is, the bands are read whole.
 * band, shinsBand: the feet's and the shins' footprints (bandFootprint, #lateral*#depth), pieces: footPieces of band
 * → score, NaN when one is empty
 */
function feetForwardScore(
  band: Float64Array, pieces: Float64Array | null, shinsBand: Float64Array, g: VoxelGrid, lateral: number, depth: number, height: number,
): number {
  const feet = pieces ?? band;
  const shins = pieces ? new Float64Array(shinsBand) : shinsBand;
  for (let l = 0; l < lateral && pieces; l++) {
    let feetHere = 0;
    for (let d = 0; d < depth; d++) feetHere += feet[l * depth + d];
    if (!feetHere) shins.fill(0, l * depth, (l + 1) * depth);
  }
  return (footprintDepthCentroid(feet, lateral, depth) - footprintDepthCentroid(shins, lateral, depth)) * g.size / Math.max(height, 1e-12);
}

/**
 * feetForwardScore's footprint of the band [f0, f1] of the body's height (ends [lo, hi] along up), counted from the
 * bottom (the end away from upSign): how many of the band's slices hold solid at each (lateral, depth) cell.
 * solid #voxels, n: grid dims #3 → Float64Array #lateral*#depth (lateral-major)
 */
function bandFootprint(
  solid: Uint8Array, n: number[], ends: [number, number], f0: number, f1: number,
  upAxis: number, upSign: number, lateralAxis: number, depthAxis: number,
): Float64Array {
  const heightVox = ends[1] - ends[0] + 1;
  const depth = n[depthAxis];
  const footprint = new Float64Array(n[lateralAxis] * depth);
  const c = [0, 0, 0];
  for (let s = Math.floor(f0 * heightVox); s <= Math.ceil(f1 * heightVox); s++) {
    c[upAxis] = upSign > 0 ? ends[0] + s : ends[1] - s;
    for (let l = 0; l < n[lateralAxis]; l++) {
      c[lateralAxis] = l;
      for (let d = 0; d < depth; d++) { c[depthAxis] = d; footprint[l * depth + d] += solidAt(solid, n, c); }
    }
  }
  return footprint;
}

/**
 * The feet's pieces of a footprint: its pieces (4-connected cells) that span at most HEM_SPAN of its lateral extent;
 * null when none does. footprint: Float64Array #lateral*#depth → a new one, or null
 */
export function footPieces(footprint: Float64Array, lateral: number, depth: number): Float64Array | null {
  let first = lateral, last = -1;
  for (let i = 0; i < footprint.length; i++) if (footprint[i]) { first = Math.min(first, Math.floor(i / depth)); last = Math.max(last, Math.floor(i / depth)); }
  const widest = HEM_SPAN * (last - first + 1);
  const seen = new Uint8Array(footprint.length);
  const kept = new Float64Array(footprint.length);
  let keptAny = false;
  const stack: number[] = [];
  const cells: number[] = [];
  for (let start = 0; start < footprint.length; start++) {
    if (!footprint[start] || seen[start]) continue;
    seen[start] = 1; stack.push(start); cells.length = 0;
    let lo = lateral, hi = -1;
    while (stack.length) {
      const cell = stack.pop()!;
      cells.push(cell);
      const l = Math.floor(cell / depth), d = cell - l * depth;
      lo = Math.min(lo, l); hi = Math.max(hi, l);
      if (l > 0) visitCell(footprint, seen, stack, cell - depth);
      if (l < lateral - 1) visitCell(footprint, seen, stack, cell + depth);
      if (d > 0) visitCell(footprint, seen, stack, cell - 1);
      if (d < depth - 1) visitCell(footprint, seen, stack, cell + 1);
    }
    if (hi - lo + 1 > widest) continue;
    keptAny = true;
    for (const cell of cells) kept[cell] = footprint[cell];
  }
  return keptAny ? kept : null;
}

/** footPieces' flood step: queues `cell` when it holds solid and was not reached yet. */
function visitCell(footprint: Float64Array, seen: Uint8Array, stack: number[], cell: number): void {
  if (footprint[cell] && !seen[cell]) { seen[cell] = 1; stack.push(cell); }
}

/** The mean depth index of a footprint (Float64Array #lateral*#depth, lateral-major) weighted by its counts; NaN when empty. */
function footprintDepthCentroid(footprint: Float64Array, lateral: number, depth: number): number {
  let sum = 0, count = 0;
  for (let l = 0; l < lateral; l++) for (let d = 0; d < depth; d++) { sum += d * footprint[l * depth + d]; count += footprint[l * depth + d]; }
  return count ? sum / count : NaN;
}
