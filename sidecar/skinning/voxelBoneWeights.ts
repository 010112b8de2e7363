import type { VoxelGrid } from '../geometry/voxelGrid.js';
import type { Vec3 } from '../types.js';
import { GEODESIC_UNIT, boneSourceVoxels, voxelGeodesicDistance } from './voxelGeodesic.js';

/** A bone as the skinning sees it: a segment in grid space and its place in the hierarchy. */
export interface SkinBone {
  head: Vec3;
  tail: Vec3;
  parent: number;
  /** false for bones that carry no weight (HeadTop_End and other *_End leaves) */
  deform: boolean;
}

/** Per-voxel weights: top-k bone indices #voxels*k (0xffff = none) + values #voxels*k, rows sum to 1 where reached. */
export interface VoxelWeights {
  k: number;
  bones: Uint16Array;
  values: Float32Array;
  /** 1 where the voxel carries weights */
  weighted: Uint8Array;
}

/** How fast a bone's influence falls with geodesic distance: w = (1 / (1 + d / voxel))^FALLOFF. */
const FALLOFF = 12;
/**
 * Beyond the nearest bone, each bone's weight is damped by exp(−(d − d_nearest) / FAR_BLEND_VOXELS voxels): the power
 * falloff alone lets a bone two voxels further away keep most of its weight wherever all bones are far (a staff's tip,
 * a long sleeve's cuff), so far parts blended their bones when they should follow the nearest one. Near a joint, where
 * two bones are about equally near, the damping is close to 1 and the blend is the falloff's.
 */
export const FAR_BLEND_VOXELS = 2;
/** Bones lying wholly on one side of the body give no weight this far (canonical units) over on the other side. */
const SIDE_MARGIN = 0.01;
export const NO_BONE = 0xffff;

/**
 * Geodesic voxel binding: each voxel is weighted by the bones nearest to it through the solid, with three rules that
 * keep weights where an animator expects them:
 * - only the nearest bone and its hierarchy neighbours (parent, children, siblings that are not its mirror image)
 *   weigh a voxel, so a hand resting on a thigh is not taken by the leg;
 * - a bone of one side never weighs voxels on the other side of the body's midplane (x = midline in canonical space:
 *   the Hips', as the caller knows it; the canonical box's centre, x = 0, lies off the body's midline when the arms are
 *   posed apart, by up to 0.14 of the height on procedural humanoids with one arm raised and one hanging);
 * - parts that no path through the solid reaches (a loose hat, eyes) follow, rigidly, the weights of the nearest
 *   reached voxel.
 * solid: Uint8Array #voxels, bones: SkinBone[] (canonical grid space, x = the character's left), k: influences, midline:
 * the x of the body's midplane (default 0) → VoxelWeights
 */
export function voxelBoneWeights(
  solid: Uint8Array, g: VoxelGrid, bones: SkinBone[], k: number, onBone?: (done: number, total: number) => void, midline = 0,
): VoxelWeights {
  const nVox = solid.length;
  const deforming = bones.map((b, i) => (b.deform ? i : -1)).filter((i) => i >= 0);
  const dists = deforming.map(() => new Uint32Array(nVox));
  deforming.forEach((b, n) => {
    voxelGeodesicDistance(solid, g, boneSourceVoxels(bones[b].head, bones[b].tail, solid, g), dists[n]);
    onBone?.(n + 1, deforming.length);
  });

  const allowed = hierarchyNeighbours(bones, midline);
  const side = bones.map((b) => {
    const head = b.head[0] - midline, tail = b.tail[0] - midline;
    if (head > SIDE_MARGIN && tail > SIDE_MARGIN) return 1;
    if (head < -SIDE_MARGIN && tail < -SIDE_MARGIN) return -1;
    return 0;
  });
  const nx = g.dims[0];
  const bonesOut = new Uint16Array(nVox * k).fill(NO_BONE);
  const values = new Float32Array(nVox * k);
  const weighted = new Uint8Array(nVox);
  const row = new Float64Array(deforming.length);
  for (let v = 0; v < nVox; v++) {
    if (!solid[v]) continue;
    let nearest = -1, nearestD = 0xffffffff;
    for (let n = 0; n < deforming.length; n++) if (dists[n][v] < nearestD) { nearestD = dists[n][v]; nearest = n; }
    if (nearest < 0) continue;
    const x = g.origin[0] + ((v % nx) + 0.5) * g.size - midline;
    const ok = allowed[deforming[nearest]];
    let sum = 0;
    for (let n = 0; n < deforming.length; n++) {
      const b = deforming[n];
      row[n] = 0;
      if (!ok.has(b) || dists[n][v] === 0xffffffff) continue;
      if (side[b] !== 0 && x * side[b] < -SIDE_MARGIN) continue;
      row[n] = (GEODESIC_UNIT / (GEODESIC_UNIT + dists[n][v])) ** FALLOFF *
        Math.exp(-(dists[n][v] - nearestD) / (FAR_BLEND_VOXELS * GEODESIC_UNIT));
      sum += row[n];
    }
    if (sum <= 0) { row[nearest] = 1; sum = 1; }
    writeTopK(row, deforming, k, bonesOut, values, v * k);
    weighted[v] = 1;
  }
  attachUnreachedParts(solid, g, k, bonesOut, values, weighted);
  return { k, bones: bonesOut, values, weighted };
}

/**
 * writeHeaviestTouched: the k heaviest bones of a dense row whose non-zero entries are listed in touched[0..count)
 * (writeTopK's choice and ties: the lower bone index first), renormalised to 1, at out[offset..offset+k); the row is
 * cleared back to zeros for the next use. An insertion sort of touched: a handful of bones, sorted once per row.
 * row: Float64Array #bones, touched: Int32Array (reordered), outBones Uint16Array, outValues Float32Array.
 */
export function writeHeaviestTouched(
  row: Float64Array, touched: Int32Array, count: number, k: number, outBones: Uint16Array, outValues: Float32Array, offset: number,
): void {
  for (let i = 1; i < count; i++) {
    const b = touched[i];
    let j = i - 1;
    while (j >= 0 && (row[touched[j]] < row[b] || (row[touched[j]] === row[b] && touched[j] > b))) { touched[j + 1] = touched[j]; j--; }
    touched[j + 1] = b;
  }
  let sum = 0, kept = 0;
  for (; kept < k && kept < count && row[touched[kept]] > 0; kept++) sum += row[touched[kept]];
  for (let s = 0; s < kept; s++) {
    outBones[offset + s] = touched[s];
    outValues[offset + s] = row[touched[s]] / sum;
  }
  for (let i = 0; i < count; i++) row[touched[i]] = 0;
}

/** Keeps the k largest entries of a dense row (over `ids`), renormalised to 1, at out[offset..offset+k). */
export function writeTopK(row: Float64Array, ids: number[], k: number, outBones: Uint16Array, outValues: Float32Array, offset: number): void {
  // runs once per solid voxel: the picks live in a reused scratch array, not a new one each call
  if (pickScratch.length < k) pickScratch = new Int32Array(k);
  const pick = pickScratch;
  let picked = 0;
  for (let s = 0; s < k; s++) {
    let best = -1;
    for (let n = 0; n < row.length; n++) {
      if (!(row[n] > 0) || (best >= 0 && !(row[n] > row[best]))) continue;
      let taken = false;
      for (let q = 0; q < picked && !taken; q++) taken = pick[q] === n;
      if (!taken) best = n;
    }
    if (best < 0) break;
    pick[picked++] = best;
  }
  let sum = 0;
  for (let q = 0; q < picked; q++) sum += row[pick[q]];
  for (let q = 0; q < picked; q++) {
    outBones[offset + q] = ids[pick[q]];
    outValues[offset + q] = row[pick[q]] / sum;
  }
}
let pickScratch = new Int32Array(8);

/** For each bone, the bones allowed to share a voxel with it when it is the nearest one (midline: the midplane's x). */
function hierarchyNeighbours(bones: SkinBone[], midline: number): Set<number>[] {
  const children = bones.map(() => [] as number[]);
  bones.forEach((b, i) => { if (b.parent >= 0) children[b.parent].push(i); });
  const xa = (a: number) => bones[a].head[0] - midline;
  const mirrored = (a: number, b: number) => xa(a) * xa(b) < 0 && Math.abs(xa(a)) > SIDE_MARGIN && Math.abs(xa(b)) > SIDE_MARGIN;
  return bones.map((b, i) => {
    const s = new Set<number>([i, ...children[i]]);
    if (b.parent >= 0) {
      s.add(b.parent);
      for (const sib of children[b.parent]) if (!mirrored(i, sib)) s.add(sib);
    }
    return s;
  });
}

/**
 * Solid components that no bone reached take, as one rigid piece, the weights of the reached voxel nearest to them
 * (multi-source breadth-first search through the whole grid, gaps included).
 */
function attachUnreachedParts(solid: Uint8Array, g: VoxelGrid, k: number, bones: Uint16Array, values: Float32Array, weighted: Uint8Array): void {
  // most characters are one solid that every bone reaches: then there is nothing to attach and no search to run
  let unreached = false;
  for (let v = 0; v < solid.length && !unreached; v++) unreached = solid[v] !== 0 && weighted[v] === 0;
  if (!unreached) return;
  const nearest = nearestWeightedVoxel(weighted, g);
  const [nx, ny, nz] = g.dims;
  const seen = new Uint8Array(solid.length);
  const stack: number[] = [];
  for (let v0 = 0; v0 < solid.length; v0++) {
    if (!solid[v0] || weighted[v0] || seen[v0]) continue;
    // Gather the component (26-connected, like the geodesic paths) and find its voxel closest to a weighted one.
    const comp: number[] = [];
    seen[v0] = 1; stack.push(v0);
    let anchor = -1, anchorD = Infinity;
    while (stack.length) {
      const v = stack.pop()!;
      comp.push(v);
      if (nearest.dist[v] < anchorD) { anchorD = nearest.dist[v]; anchor = v; }
      const i = v % nx, j = Math.floor(v / nx) % ny, kk = Math.floor(v / (nx * ny));
      for (let dz = -1; dz <= 1; dz++) for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) {
        const a = i + dx, b = j + dy, c = kk + dz;
        if (a < 0 || b < 0 || c < 0 || a >= nx || b >= ny || c >= nz) continue;
        const q = (c * ny + b) * nx + a;
        if (solid[q] && !weighted[q] && !seen[q]) { seen[q] = 1; stack.push(q); }
      }
    }
    const src = anchor >= 0 ? nearest.origin[anchor] : -1;
    if (src < 0) continue;
    for (const v of comp) {
      for (let s = 0; s < k; s++) { bones[v * k + s] = bones[src * k + s]; values[v * k + s] = values[src * k + s]; }
    }
  }
  for (let v = 0; v < solid.length; v++) if (solid[v] && bones[v * k] !== NO_BONE) weighted[v] = 1;
}

/**
 * For every voxel, the nearest weighted voxel by a 6-connected breadth-first search through the whole grid.
 * weighted: Uint8Array #voxels → { origin: Int32Array #voxels (-1 when none), dist: Float32Array #voxels (steps) }
 */
export function nearestWeightedVoxel(weighted: Uint8Array, g: VoxelGrid): { origin: Int32Array; dist: Float32Array } {
  const [nx, ny, nz] = g.dims;
  const n = weighted.length;
  const origin = new Int32Array(n).fill(-1);
  const dist = new Float32Array(n).fill(Infinity);
  const queue = new Int32Array(n);
  let head = 0, tail = 0;
  for (let v = 0; v < n; v++) if (weighted[v]) { origin[v] = v; dist[v] = 0; queue[tail++] = v; }
  const sy = nx, sz = nx * ny;
  while (head < tail) {
    const v = queue[head++];
    const i = v % nx, j = Math.floor(v / nx) % ny, k = Math.floor(v / sz);
    const visit = (q: number) => { if (origin[q] < 0) { origin[q] = origin[v]; dist[q] = dist[v] + 1; queue[tail++] = q; } };
    if (i > 0) visit(v - 1);
    if (i < nx - 1) visit(v + 1);
    if (j > 0) visit(v - sy);
    if (j < ny - 1) visit(v + sy);
    if (k > 0) visit(v - sz);
    if (k < nz - 1) visit(v + sz);
  }
  return { origin, dist };
}
