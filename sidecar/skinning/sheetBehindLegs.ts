/**
 * A cape, a coat's tails or a tail that is one mesh with the body and hangs behind the legs: it joins the body at the
 * buttocks, so every geodesic path to it passes there, where the thighs are as near as the hips, and the whole sheet
 * followed a thigh: a hip flex swung the cape forward with the leg (procedural test identity 9 100 007, whose cape is
 * fused to its back: in its corrective alone, the thighs' weight on the cape's 6,300 vertices doubled the truth's error
 * there). It hangs from the back, and artists weight it to the hips and spine (so does the generator), so in each
 * height layer between the hip joints and the ankles, the solid that is apart from both legs within the layer and
 * lies behind them gives the weight of the leg bones to the hips.
 * Apart within the layer: a skirt that spans the legs (skirtOnThighs) is one piece with them and is left to its own
 * rule; a hand hanging beside a thigh is beside the legs, not behind them.
 */
import type { VoxelGrid } from '../geometry/voxelGrid.js';
import { legPointAtHeight, markedLayers, moveSlotWeight, voxelCell, type LegChain } from './skirtOnThighs.js';
import type { SkinBone } from './voxelBoneWeights.js';

/**
 * A sheet hangs over at least this share of the legs' height (hip joint to ankle): a buttock's crease or a tunic's
 * back edge, cut apart from the thigh in a few layers, is not one.
 */
export const MIN_SHEET_SPAN = 0.25;

/**
 * behindLegsVoxels: the solid voxels (Uint8Array #voxels, grid g, canonical: x left, y up, z forward), the bones, the
 * two legs → Uint8Array #voxels, 1 for the voxels of a sheet behind the legs: in each height layer that both legs'
 * bone lines cross, the pieces of the layer's solid (8-connected within the layer) that hold neither leg's bone
 * point, whose centre lies behind both bone points and, sideways, no further out than the legs (by half their
 * spacing, at least 3 voxels).
 */
export function behindLegsVoxels(solid: Uint8Array, g: VoxelGrid, bones: SkinBone[], legs: LegChain[]): Uint8Array {
  const marked = new Uint8Array(solid.length);
  if (legs.length !== 2) return marked;
  const layer = new LayerPieces(solid, g.dims);
  const { nx, nz, piece } = layer;
  for (let j = 0; j < layer.ny; j++) {
    const y = g.origin[1] + (j + 0.5) * g.size;
    const l = legPointAtHeight(bones, legs[0], y), r = legPointAtHeight(bones, legs[1], y);
    if (l === null || r === null) continue;
    piece.fill(-1);
    const legsFound = layer.floodLeg(g, j, l) + layer.floodLeg(g, j, r);
    // a leg whose bone point misses its own solid by more than 2 voxels: this layer cannot be read
    if (legsFound === 0) continue;
    const spread = Math.max(Math.abs(l[0] - r[0]) / 2, 3 * g.size);
    const xLo = Math.min(l[0], r[0]) - spread, xHi = Math.max(l[0], r[0]) + spread;
    const zBack = Math.min(l[1], r[1]);
    // a piece wholly behind zBack has all its cells' far sides behind it: it starts (and ends) below this k
    const kEnd = Math.min(nz, Math.floor((zBack - g.origin[2]) / g.size));
    let next = 1;
    for (let k0 = 0; k0 < kEnd; k0++) {
      for (let i0 = 0; i0 < nx; i0++) {
        if (piece[k0 * nx + i0] >= 0 || solid[layer.index(i0, j, k0)] === 0) continue;
        const id = next++;
        layer.flood(j, i0, k0, id);
        const x = g.origin[0] + (layer.sumI / layer.count + 0.5) * g.size, z = g.origin[2] + (layer.front + 1) * g.size;
        if (z >= zBack || x < xLo || x > xHi) continue;
        layer.markPiece(id, j, marked);
      }
    }
  }
  const legHeight = Math.max(legLength(bones, legs[0]), legLength(bones, legs[1]));
  keepTallComponents(marked, g, Math.max(MIN_SHEET_SPAN * legHeight, g.size));
  return marked;
}

// behindLegsVoxels' flood is a class, not a closure made per call: V8 compiles a closure's code again for each new
// closure (each apply of a pose recompiled behindLegsVoxels and its flood, --trace-opt).

/**
 * One height layer's pieces at a time, of the solid (Uint8Array #voxels, dims [nx, ny, nz]): piece holds the layer's
 * labels (Int32Array #(nx*nz), cell k * nx + i; -1 unlabelled, the caller clears it per layer), and flood's last
 * piece its cell count, sum of i and frontmost k. The leg pieces are flooded first, then only the pieces that start
 * behind the legs, so the layers of a body without a sheet cost two small floods.
 */
class LayerPieces {
  readonly nx: number;
  readonly ny: number;
  readonly nz: number;
  readonly piece: Int32Array;
  /** the last flood's cell count, sum of i, and frontmost k */
  count = 0;
  sumI = 0;
  front = -1;
  private readonly solid: Uint8Array;
  private readonly stack: Int32Array;

  constructor(solid: Uint8Array, dims: [number, number, number]) {
    this.nx = dims[0];
    this.ny = dims[1];
    this.nz = dims[2];
    this.solid = solid;
    this.piece = new Int32Array(this.nx * this.nz);
    this.stack = new Int32Array(this.nx * this.nz);
  }

  /** Linear index of voxel (i, j, k). */
  index(i: number, j: number, k: number): number {
    return (k * this.ny + j) * this.nx + i;
  }

  /** 8-connected flood of layer j from cell (i0, k0) as piece `id` → count, sumI and front set. */
  flood(j: number, i0: number, k0: number, id: number): void {
    const { nx, nz, piece, stack, solid } = this;
    let top = 0, count = 0, sumI = 0, front = -1;
    piece[k0 * nx + i0] = id;
    stack[top++] = k0 * nx + i0;
    while (top > 0) {
      const c = stack[--top], i = c % nx, k = (c - i) / nx;
      count++;
      sumI += i;
      if (k > front) front = k;
      for (let dk = -1; dk <= 1; dk++) {
        for (let di = -1; di <= 1; di++) {
          const a = i + di, b = k + dk;
          if (a < 0 || b < 0 || a >= nx || b >= nz || piece[b * nx + a] >= 0 || solid[this.index(a, j, b)] === 0) continue;
          piece[b * nx + a] = id;
          stack[top++] = b * nx + a;
        }
      }
    }
    this.count = count;
    this.sumI = sumI;
    this.front = front;
  }

  /**
   * A leg's piece in layer j, from its bone point p ([x, z], grid g): flooded as piece 0 unless already (both legs in
   * one piece) → 1, or 0 when no solid cell lies within 2 of the point.
   */
  floodLeg(g: VoxelGrid, j: number, p: [number, number]): number {
    const c = nearestSolidCell(this.solid, g, j, voxelCell(g, p[0], 0), voxelCell(g, p[1], 2), 2);
    if (c < 0) return 0;
    if (this.piece[c] < 0) this.flood(j, c % this.nx, Math.floor(c / this.nx), 0);
    return 1;
  }

  /** Marks (in `marked`, Uint8Array #voxels) every cell of layer j labelled `id`. */
  markPiece(id: number, j: number, marked: Uint8Array): void {
    const { nx, nz, piece } = this;
    for (let c = 0; c < nx * nz; c++) if (piece[c] === id) marked[this.index(c % nx, j, Math.floor(c / nx))] = 1;
  }
}

/** A leg's height: its thigh's head above its shin's tail (canonical y). */
function legLength(bones: SkinBone[], leg: LegChain): number {
  return bones[leg.thigh].head[1] - bones[leg.belowKnee[0]].tail[1];
}

/** In place: clears the 26-connected components of `marked` whose height (y extent, in voxels' size) is under minSpan. */
function keepTallComponents(marked: Uint8Array, g: VoxelGrid, minSpan: number): void {
  const [nx, ny, nz] = g.dims;
  const seen = new Uint8Array(marked.length);
  const stack: number[] = [];
  for (let v0 = 0; v0 < marked.length; v0++) {
    if (marked[v0] === 0 || seen[v0] === 1) continue;
    const members: number[] = [];
    let lo = ny, hi = -1;
    seen[v0] = 1;
    stack.push(v0);
    while (stack.length > 0) {
      const v = stack.pop()!;
      members.push(v);
      const i = v % nx, j = Math.floor(v / nx) % ny, k = Math.floor(v / (nx * ny));
      lo = Math.min(lo, j);
      hi = Math.max(hi, j);
      for (let c = k - 1; c <= k + 1; c++) {
        for (let b = j - 1; b <= j + 1; b++) {
          for (let a = i - 1; a <= i + 1; a++) {
            if (a < 0 || b < 0 || c < 0 || a >= nx || b >= ny || c >= nz) continue;
            const q = (c * ny + b) * nx + a;
            if (marked[q] === 1 && seen[q] === 0) { seen[q] = 1; stack.push(q); }
          }
        }
      }
    }
    if ((hi - lo + 1) * g.size < minSpan) for (const v of members) marked[v] = 0;
  }
}

/** The solid cell of layer j at (i, k), or the first found within `reach` cells (rings outward): k * nx + i, or -1. */
function nearestSolidCell(solid: Uint8Array, g: VoxelGrid, j: number, i: number, k: number, reach: number): number {
  const [nx, ny, nz] = g.dims;
  for (let r = 0; r <= reach; r++) {
    for (let c = k - r; c <= k + r; c++) {
      for (let a = i - r; a <= i + r; a++) {
        if (Math.max(Math.abs(a - i), Math.abs(c - k)) !== r || a < 0 || c < 0 || a >= nx || c >= nz) continue;
        if (solid[(c * ny + j) * nx + a] === 1) return c * nx + a;
      }
    }
  }
  return -1;
}

/**
 * hangBehindLegsFromHips: for the vertices on a sheet behind the legs (the solid voxel of their own layer nearest to
 * them, within one voxel, is one of `behind`), in place: the weight of every leg bone (thighs and everything below the knees) moves to the bone the
 * thigh hangs from (the hips). positions: canonical Float32Array #V*3, the grid, its solid and behindLegsVoxels' marks
 * (Uint8Array #voxels each), bones, the legs; top-k indices Uint16Array #V*k + values Float32Array #V*k (rows keep summing
 * to one; a slot emptied is index 0, weight 0) → the number of vertices changed.
 */
export function hangBehindLegsFromHips(
  positions: Float32Array, g: VoxelGrid, solid: Uint8Array, behind: Uint8Array, bones: SkinBone[], legs: LegChain[],
  k: number, indices: Uint16Array, weights: Float32Array,
): number {
  // most characters have no sheet behind their legs: only vertices in a sheet's layers need their neighbourhood read
  const layers = markedLayers(behind, g);
  if (!layers.includes(1)) return 0;
  const hipOf = new Map<number, number>();
  for (const leg of legs) {
    const hip = bones[leg.thigh].parent;
    if (hip < 0) return 0;
    for (const b of [leg.thigh, ...leg.belowKnee]) hipOf.set(b, hip);
  }
  const [nx, ny, nz] = g.dims;
  let changed = 0;
  const nv = positions.length / 3;
  for (let v = 0; v < nv; v++) {
    const i = Math.floor((positions[3 * v] - g.origin[0]) / g.size);
    const j = Math.floor((positions[3 * v + 1] - g.origin[1]) / g.size);
    const kk = Math.floor((positions[3 * v + 2] - g.origin[2]) / g.size);
    if (j < 0 || j >= ny || layers[j] === 0) continue;
    // the solid voxel of its own layer nearest to it, within one: a leg's back next to the cape is the leg's
    let nearest = -1, nearestD = Infinity;
    for (let c = kk - 1; c <= kk + 1; c++) {
      for (let a = i - 1; a <= i + 1; a++) {
        if (a < 0 || c < 0 || a >= nx || c >= nz || solid[(c * ny + j) * nx + a] === 0) continue;
        const d = (g.origin[0] + (a + 0.5) * g.size - positions[3 * v]) ** 2 + (g.origin[2] + (c + 0.5) * g.size - positions[3 * v + 2]) ** 2;
        if (d < nearestD) { nearestD = d; nearest = (c * ny + j) * nx + a; }
      }
    }
    if (nearest < 0 || behind[nearest] === 0) continue;
    let moved = false;
    for (let q = 0; q < k; q++) {
      const slot = v * k + q, hip = hipOf.get(indices[slot]);
      if (hip === undefined || weights[slot] <= 0) continue;
      moved = true;
      moveSlotWeight(v, q, hip, k, indices, weights);
    }
    if (moved) changed++;
  }
  return changed;
}
