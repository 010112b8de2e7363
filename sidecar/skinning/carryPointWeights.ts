/**
 * From weights at surface sample points (the learned skinning network's output) to top-k weights at every vertex,
 * with the rules the voxel skinning keeps (voxelBoneWeights.ts): a part never takes weight across a gap, and a bone of
 * one side of the body never weighs the other side.
 */
import type { VoxelGrid } from '../geometry/voxelGrid.js';
import { SKIN_VOXEL_RESOLUTION } from './skinInVoxels.js';
import { solidComponents } from './solidComponents.js';
import { solidVoxelisation } from './solidVoxelisation.js';
import { NO_BONE, writeTopK, type VoxelWeights } from './voxelBoneWeights.js';

/** Dense weights at sample points on the surface. */
export interface PointWeights {
  /** the points: Float32Array #S*3, in the mesh's space */
  points: Float32Array;
  /** their weights: Float32Array #S*J, rows sum to 1 */
  weights: Float32Array;
  /** J: joints per row */
  joints: number;
  /** the typical distance between neighbouring points (sqrt(area / #S) for area-uniform points) */
  spacing: number;
}

export interface CarryOptions {
  /** k: influences kept per vertex */
  influences: number;
  /** sample points blended per vertex (default CARRY_NEIGHBOURS) */
  neighbours?: number;
  /** per joint: 1 when it lies on the +x side of the body (the character's left), -1 on the −x side, 0 both: Int8Array #J */
  jointSide?: Int8Array;
  /** x of the body's midplane (default 0, the canonical frame's) */
  midline?: number;
  /** joints that never take weight (HeadTop_End) */
  noWeight?: readonly number[];
  /**
   * the solid voxelisation of the mesh to test segments in, when the caller has made one (skinningRules needs it too):
   * default, one on SKIN_VOXEL_RESOLUTION voxels along the longest side
   */
  solid?: { grid: VoxelGrid; solid: Uint8Array };
  /** a joint with less than this share of a vertex's weight is dropped (default MIN_WEIGHT) */
  minWeight?: number;
  onProgress?: (fraction: number) => void;
}

/** Sample points blended into each vertex: enough to smooth the network's per-point noise, few enough to stay local. */
export const CARRY_NEIGHBOURS = 8;
/**
 * Share of a vertex's weight below which a joint is dropped: the network's softmax leaves a little weight on every
 * joint, which would paint stray vertex groups. On bcn_epileptic (`autorig eval`'s re-skinning, 18-minute dev model)
 * 0.02 lifts the influence precision from 0.34 to 0.61 for the same recall (1.00), with weight L1 (0.333 → 0.315) and
 * the 45° deformation error (0.0137 → 0.0130) a little better.
 */
export const MIN_WEIGHT = 0.02;
/** A vertex farther than this from the midplane (canonical units, as voxelBoneWeights') is on one side. */
export const SIDE_MARGIN = 0.01;
/** Candidates (nearest of the vertex's piece) whose segments to the vertex are tested, per neighbour wanted. */
const CANDIDATES_PER_NEIGHBOUR = 2;
/**
 * Points of the piece kept per voxel, per neighbour wanted: the vertices of one voxel pick their candidates among the
 * points nearest to its centre (one search per voxel, not per vertex: a million vertices share about 10^5 voxels).
 * A vertex lies within 0.9 voxel of the centre, under a spacing of points, so its nearest points are among these.
 */
const VOXEL_POINTS_PER_NEIGHBOUR = 3;
/** Rings of hash cells searched for candidates: a vertex with none this near takes its nearest point through the solid. */
const CANDIDATE_RINGS = 3;
/** Longest side of the sample hash in cells at most: keeps the hash small for meshes of tiny area in a large box. */
const MAX_HASH_CELLS_PER_SIDE = 100;
const PROGRESS_EVERY = 1 << 16;

/**
 * carryPointWeights: each vertex blends, by inverse squared distance, the weights of its nearest sample points among
 * those it may take weight from:
 * - only points whose straight segment to the vertex stays inside the solid voxelisation (on the voxel skinning's
 *   grid), so that two legs that nearly touch, a hand over a hip, or a floating hat do not trade weights across the
 *   air between them (of the vertex's 2·neighbours nearest points of its piece, the nearest that pass; those are
 *   looked for among the 3·neighbours nearest to the centre of the vertex's voxel); when none passes, the vertex
 *   takes the point nearest to it along paths through the solid (never leaving its 26-connected piece,
 *   solidComponents.ts);
 * - a piece that no sample point landed on (eyes, a button) follows, as one rigid piece, the sample nearest to it
 *   (by steps through the grid, gaps included); so does a vertex that no triangle uses;
 * - on a side of the midplane (|x − midline| > SIDE_MARGIN) the other side's joints are dropped (unless nothing would
 *   be left).
 * Then joints under minWeight of the row dropped (the largest kept), the k largest kept, renormalised to 1; joints in
 * noWeight get none. Memory O(#V·k + #S·J + voxels): no #V×J array.
 * positions: Float32Array #V*3 (canonical), triangles: Uint32Array #T*3, samples: PointWeights (same space), options →
 *   top-k indices Uint16Array #V*k (unused slots 0 with weight 0) + values Float32Array #V*k, rows sum to 1
 */
export function carryPointWeights(
  positions: Float32Array, triangles: Uint32Array, samples: PointWeights, options: CarryOptions,
): { indices: Uint16Array; weights: Float32Array } {
  const k = options.influences;
  const nv = positions.length / 3;
  const carrier = new PointCarrier(positions, triangles, samples, options);
  const blender = new RowBlender(samples, options);
  const from = new SampleBlend();
  const indices = new Uint16Array(nv * k);
  const weights = new Float32Array(nv * k);
  for (let v = 0; v < nv; v++) {
    from.clear();
    carrier.gatherAt(positions[3 * v], positions[3 * v + 1], positions[3 * v + 2], voxelAt(positions, v, carrier.grid), clampedVoxelAt(positions, v, carrier.grid), from);
    blender.blend(from.samples, from.factors, 0, from.count, positions[3 * v], indices, weights, v * k);
    if ((v + 1) % PROGRESS_EVERY === 0) options.onProgress?.((v + 1) / nv);
  }
  options.onProgress?.(1);
  return { indices, weights };
}

/**
 * Where carryPointWeightsToVoxels' blend takes each voxel's weights from, before any weights are known: it reads the
 * points and the solid only, so a caller can make it while the network that weighs the points runs (on the model
 * host's thread). Voxel m of `voxels` blends sample rows samples[offsets[m] .. offsets[m + 1]) with those factors.
 */
export interface CarryStencil {
  /** the sample points it was made for (the same array: applyCarryStencil's weights must be of these points), #S*3 */
  points: Float32Array;
  /** the sample points blended per voxel at most (CarryOptions.neighbours) */
  neighbours: number;
  grid: VoxelGrid;
  solid: Uint8Array;
  /** the voxels carried to, in the order first met around the vertices: Int32Array #M */
  voxels: Int32Array;
  /** Int32Array #M+1 */
  offsets: Int32Array;
  /** sample indices, Int32Array #offsets[M]; their blend factors (inverse squared distance, or 1), Float64Array */
  samples: Int32Array;
  factors: Float64Array;
}

/**
 * carryStencilToVoxels: the part of carryPointWeightsToVoxels that needs no weights, for the solid voxels around the
 * vertices (the 8 whose centres surround each vertex, as voxelWeightsToVertices reads them).
 * positions: Float32Array #V*3 (canonical), triangles: Uint32Array #T*3, cloud: the sample points #S*3 and their
 * spacing, options: neighbours and solid as CarryOptions' (the rest is read when the stencil is applied) → CarryStencil
 */
export function carryStencilToVoxels(
  positions: Float32Array, triangles: Uint32Array, cloud: { points: Float32Array; spacing: number },
  options: Pick<CarryOptions, 'neighbours' | 'solid'> = {},
): CarryStencil {
  const carrier = new PointCarrier(positions, triangles, cloud, options);
  const { grid: g, solid } = carrier;
  const [nx, ny, nz] = g.dims;
  const weighted = new Uint8Array(solid.length);
  const nv = positions.length / 3;
  const inv = 1 / g.size;
  let marked = new Int32Array(Math.min(solid.length, 8 * nv));
  let count = 0;
  for (let p = 0; p < nv; p++) {
    const i0 = Math.floor((positions[3 * p] - g.origin[0]) * inv - 0.5);
    const j0 = Math.floor((positions[3 * p + 1] - g.origin[1]) * inv - 0.5);
    const k0 = Math.floor((positions[3 * p + 2] - g.origin[2]) * inv - 0.5);
    for (let c = 0; c < 8; c++) {
      const i = i0 + (c & 1), j = j0 + ((c >> 1) & 1), kk = k0 + ((c >> 2) & 1);
      if (i < 0 || j < 0 || kk < 0 || i >= nx || j >= ny || kk >= nz) continue;
      const v = (kk * ny + j) * nx + i;
      if (solid[v] && !weighted[v]) { weighted[v] = 1; marked[count++] = v; }
    }
  }
  marked = marked.slice(0, count);
  const offsets = new Int32Array(count + 1);
  const from = new SampleBlend(count * carrier.neighbours);
  for (let m = 0; m < count; m++) {
    const v = marked[m];
    // voxelCentre, without an array per voxel
    const i = v % nx, j = Math.floor(v / nx) % ny, kk = Math.floor(v / (nx * ny));
    carrier.gatherAt(g.origin[0] + (i + 0.5) * g.size, g.origin[1] + (j + 0.5) * g.size, g.origin[2] + (kk + 0.5) * g.size, v, v, from, true);
    offsets[m + 1] = from.count;
  }
  return {
    points: cloud.points, neighbours: carrier.neighbours, grid: g, solid, voxels: marked, offsets,
    samples: from.samples.slice(0, from.count), factors: from.factors.slice(0, from.count),
  };
}

/**
 * applyCarryStencil: the stencil's blend of the points' weights at each of its voxels, then the rows kept as
 * carryPointWeights keeps them (noWeight, the other side's joints, minWeight, top-k).
 * stencil: carryStencilToVoxels of these points, samples: PointWeights (the stencil's points), options: CarryOptions
 * (its neighbours the stencil's; its solid is not read, the stencil's grid and solid are) → VoxelWeights on the
 * stencil's grid (weighted: its voxels; rows sum to 1). Throws when the stencil was made for other points or another
 * neighbour count.
 */
export function applyCarryStencil(stencil: CarryStencil, samples: PointWeights, options: CarryOptions): VoxelWeights {
  if (stencil.points !== samples.points) throw new Error('applyCarryStencil: the stencil was made for other sample points');
  if (stencil.neighbours !== Math.max(1, options.neighbours ?? CARRY_NEIGHBOURS)) throw new Error('applyCarryStencil: the stencil blends another number of neighbours');
  const k = options.influences;
  const { grid: g, solid, voxels: marked, offsets } = stencil;
  const nx = g.dims[0];
  const weighted = new Uint8Array(solid.length);
  const bones = new Uint16Array(solid.length * k).fill(NO_BONE);
  const values = new Float32Array(solid.length * k);
  const slotIndices = new Uint16Array(k), slotWeights = new Float32Array(k);
  const blender = new RowBlender(samples, options);
  for (let m = 0; m < marked.length; m++) {
    const v = marked[m];
    weighted[v] = 1;
    slotWeights.fill(0);
    blender.blend(stencil.samples, stencil.factors, offsets[m], offsets[m + 1], g.origin[0] + ((v % nx) + 0.5) * g.size, slotIndices, slotWeights, 0);
    for (let s = 0; s < k && slotWeights[s] > 0; s++) {
      bones[v * k + s] = slotIndices[s];
      values[v * k + s] = slotWeights[s];
    }
    if ((m + 1) % PROGRESS_EVERY === 0) options.onProgress?.((m + 1) / marked.length);
  }
  options.onProgress?.(1);
  return { k, bones, values, weighted };
}

/**
 * carryPointWeightsToVoxels: carryPointWeights' blend, made at the centres of the solid voxels around the vertices
 * (the 8 whose centres surround each vertex, as voxelWeightsToVertices reads them) instead of at every vertex, so its
 * cost follows the surface's voxels, not the vertex count; voxelWeightsToVertices then carries them to the vertices,
 * the same way as the voxel skinning's. The blend at a voxel's centre follows the same rules as at a vertex: the
 * segments to its points stay in the solid, the points are of its own piece, the other side's joints dropped.
 * carryStencilToVoxels, then applyCarryStencil.
 * positions: Float32Array #V*3 (canonical), triangles: Uint32Array #T*3, samples: PointWeights (same space), options
 * (options.solid: the grid to carry on; default SKIN_VOXEL_RESOLUTION) → VoxelWeights on that grid (weighted: the
 * voxels carried to; rows sum to 1) + the grid and solid
 */
export function carryPointWeightsToVoxels(
  positions: Float32Array, triangles: Uint32Array, samples: PointWeights, options: CarryOptions,
): { voxels: VoxelWeights; grid: VoxelGrid; solid: Uint8Array } {
  const stencil = carryStencilToVoxels(positions, triangles, samples, options);
  return { voxels: applyCarryStencil(stencil, samples, options), grid: stencil.grid, solid: stencil.solid };
}

/** A growing list of (sample, factor) pairs: the rows one point blends, in the order they are added. */
class SampleBlend {
  samples: Int32Array;
  factors: Float64Array;
  count = 0;
  constructor(capacity = 16) {
    this.samples = new Int32Array(Math.max(1, capacity));
    this.factors = new Float64Array(Math.max(1, capacity));
  }
  clear(): void { this.count = 0; }
  add(s: number, f: number): void {
    if (this.count === this.samples.length) {
      const samples = new Int32Array(2 * this.count), factors = new Float64Array(2 * this.count);
      samples.set(this.samples);
      factors.set(this.factors);
      this.samples = samples;
      this.factors = factors;
    }
    this.samples[this.count] = s;
    this.factors[this.count++] = f;
  }
}

// The carry's steps are classes, not closures made per call: V8 compiles a closure's code again for each new closure
// (each carry), and on 2 cores that recompiling, every apply, cost more than the search itself (docs/EVAL.md,
// twenty-ninth session).

/**
 * What carryPointWeights and carryStencilToVoxels share, none of it reading weights: the solid, its pieces, the
 * samples' voxels and hash, and gatherAt, which adds to `into` the samples (and their factors) whose rows the blend at
 * a point (x, y, z) lying in `voxel` (-1: outside the grid; `clamped`: the grid's voxel nearest to it) takes.
 */
class PointCarrier {
  readonly grid: VoxelGrid;
  readonly solid: Uint8Array;
  /** sample points blended per point at most */
  readonly neighbours: number;
  private readonly points: Float32Array;
  private readonly label: Int32Array;
  private readonly voxelOfSample: Int32Array;
  private readonly samplesInPiece: Int32Array;
  private readonly search: NearSampleSearch;
  private readonly anchorOfPiece: Int32Array;
  // Nearest sample per voxel through the solid, and through the whole grid: each made once, when first needed.
  private ownerThroughSolid: Int32Array | undefined;
  private ownerAnywhere: Int32Array | undefined;
  private readonly near: Neighbours;
  private readonly candidates: Neighbours;
  private readonly aroundCentre: Neighbours;
  private readonly pointsOfVoxel = new Map<number, Int32Array>();
  private readonly eps2: number;

  constructor(positions: Float32Array, triangles: Uint32Array, cloud: { points: Float32Array; spacing: number }, options: Pick<CarryOptions, 'neighbours' | 'solid'>) {
    const K = Math.max(1, options.neighbours ?? CARRY_NEIGHBOURS);
    const points = cloud.points;
    const ns = points.length / 3;
    if (ns === 0) throw new Error('carryPointWeights: no sample points');
    const { grid: g, solid } = options.solid ?? solidVoxelisation(positions, triangles, SKIN_VOXEL_RESOLUTION);
    const { label, count: pieces } = solidComponents(solid, g);
    const voxelOfSample = new Int32Array(ns);
    const pieceOfSample = new Int32Array(ns);
    const samplesInPiece = new Int32Array(pieces);
    for (let s = 0; s < ns; s++) {
      voxelOfSample[s] = solidVoxelNear(points, s, g, solid);
      pieceOfSample[s] = voxelOfSample[s] >= 0 ? label[voxelOfSample[s]] : -1;
      if (pieceOfSample[s] >= 0) samplesInPiece[pieceOfSample[s]]++;
    }
    this.grid = g;
    this.solid = solid;
    this.neighbours = K;
    this.points = points;
    this.label = label;
    this.voxelOfSample = voxelOfSample;
    this.samplesInPiece = samplesInPiece;
    this.search = new NearSampleSearch(sampleHash(points, cloud.spacing), points, pieceOfSample);
    this.anchorOfPiece = new Int32Array(pieces).fill(-1);
    this.near = new Neighbours(K);
    this.candidates = new Neighbours(CANDIDATES_PER_NEIGHBOUR * K);
    this.aroundCentre = new Neighbours(VOXEL_POINTS_PER_NEIGHBOUR * K);
    // Half a spacing keeps a vertex on a sample point from taking that point alone; the floor keeps the blend finite
    // when the points have no spacing at all (a surface without area).
    this.eps2 = Math.max((0.5 * cloud.spacing) ** 2, 1e-12);
  }

  private nearestAnywhere(clamped: number): number {
    this.ownerAnywhere ??= nearestSampleByVoxelSteps(new Uint8Array(this.solid.length).fill(1), this.grid, this.voxelOfSample);
    const s = this.ownerAnywhere[clamped];
    return s >= 0 ? s : 0; // -1 only when no sample touches the solid at all
  }

  gatherAt(x: number, y: number, z: number, voxel: number, clamped: number, into: SampleBlend, atCentre = false): void {
    const { label, samplesInPiece, anchorOfPiece, near, candidates, points, solid, grid: g } = this;
    const piece = voxel >= 0 ? label[voxel] : -1;
    near.clear();
    if (piece < 0) {
      into.add(this.nearestAnywhere(clamped), 1);
    } else if (samplesInPiece[piece] === 0) {
      if (anchorOfPiece[piece] < 0) anchorOfPiece[piece] = this.nearestAnywhere(clamped);
      into.add(anchorOfPiece[piece], 1);
    } else {
      candidates.clear();
      if (atCentre) {
        // the point is its voxel's centre: its candidates are the points nearest to it, found at once
        this.search.nearest(x, y, z, candidates, piece, CANDIDATE_RINGS);
      } else {
        let around = this.pointsOfVoxel.get(voxel);
        if (!around) {
          const aroundCentre = this.aroundCentre;
          aroundCentre.clear();
          const [cx, cy, cz] = voxelCentre(voxel, g);
          this.search.nearest(cx, cy, cz, aroundCentre, piece, CANDIDATE_RINGS);
          around = aroundCentre.index.slice(0, aroundCentre.count);
          this.pointsOfVoxel.set(voxel, around);
        }
        for (const s of around) {
          const d2 = (points[3 * s] - x) ** 2 + (points[3 * s + 1] - y) ** 2 + (points[3 * s + 2] - z) ** 2;
          if (d2 < candidates.bar()) candidates.insert(s, d2);
        }
      }
      for (let n = 0; n < candidates.count && near.count < this.neighbours; n++) {
        if (segmentInSolid(x, y, z, points, candidates.index[n], solid, g)) near.insert(candidates.index[n], candidates.d2[n]);
      }
      if (near.count > 0) {
        for (let n = 0; n < near.count; n++) into.add(near.index[n], 1 / (near.d2[n] + this.eps2));
      } else {
        this.ownerThroughSolid ??= nearestSampleByVoxelSteps(solid, g, this.voxelOfSample);
        into.add(this.ownerThroughSolid[voxel], 1);
      }
    }
  }
}

/**
 * The blend of one point's gathered rows, kept as the carry keeps them: blend(samples, factors, from, to, x, indices,
 * weights, offset) sums factors[i] · weights of samples[i] for i in [from, to), drops noWeight joints, the other
 * side's joints when x is off the midplane (unless nothing would be left), and joints under minWeight of the row
 * (the largest kept), then writes the top k, renormalised, into indices/weights at offset.
 */
class RowBlender {
  private readonly k: number;
  private readonly J: number;
  private readonly weights: Float32Array;
  private readonly side: Int8Array;
  private readonly midline: number;
  private readonly minWeight: number;
  private readonly noWeight: Uint8Array;
  private readonly ids: number[];
  private readonly row: Float64Array;
  private readonly kept: Float64Array;

  constructor(samples: PointWeights, options: CarryOptions) {
    this.k = options.influences;
    const J = (this.J = samples.joints);
    this.weights = samples.weights;
    this.side = options.jointSide ?? new Int8Array(J);
    this.midline = options.midline ?? 0;
    this.minWeight = options.minWeight ?? MIN_WEIGHT;
    this.noWeight = new Uint8Array(J);
    for (const j of options.noWeight ?? []) this.noWeight[j] = 1;
    this.ids = Array.from({ length: J }, (_, j) => j);
    this.row = new Float64Array(J);
    this.kept = new Float64Array(J);
  }

  blend(from: Int32Array, factors: Float64Array, start: number, end: number, x: number, indices: Uint16Array, weights: Float32Array, offset: number): void {
    const { J, row, kept, noWeight, side, midline, minWeight } = this;
    row.fill(0);
    for (let i = start; i < end; i++) addRow(row, this.weights, from[i], J, factors[i]);
    for (let j = 0; j < J; j++) if (noWeight[j]) row[j] = 0;
    const onSide = x - midline > SIDE_MARGIN ? 1 : x - midline < -SIDE_MARGIN ? -1 : 0;
    let keptSum = 0;
    for (let j = 0; j < J; j++) {
      kept[j] = onSide !== 0 && side[j] === -onSide ? 0 : row[j];
      keptSum += kept[j];
    }
    const chosen = keptSum > 0 ? kept : row;
    let sum = 0, best = 0;
    for (let j = 0; j < J; j++) { sum += chosen[j]; if (chosen[j] > chosen[best]) best = j; }
    for (let j = 0; j < J; j++) if (j !== best && chosen[j] < minWeight * sum) chosen[j] = 0;
    writeTopK(chosen, this.ids, this.k, indices, weights, offset);
  }
}

/** row += f · weights[s, :] */
function addRow(row: Float64Array, weights: Float32Array, s: number, J: number, f: number): void {
  for (let j = 0; j < J; j++) row[j] += f * weights[s * J + j];
}

/** The voxel holding point i of `points`, found exactly as rasterizeTriangles marks it; -1 outside the grid. */
function voxelAt(points: Float32Array, i: number, g: VoxelGrid): number {
  const [nx, ny, nz] = g.dims;
  const inv = 1 / g.size;
  const a = Math.floor((points[3 * i] - g.origin[0]) * inv), b = Math.floor((points[3 * i + 1] - g.origin[1]) * inv), c = Math.floor((points[3 * i + 2] - g.origin[2]) * inv);
  return a >= 0 && b >= 0 && c >= 0 && a < nx && b < ny && c < nz ? (c * ny + b) * nx + a : -1;
}

/**
 * For every voxel of `passable`, the sample point nearest to it in steps through passable voxels (a multi-source
 * breadth-first search over the 26-neighbourhood from each sample's voxel): with the solid as passable, never one of
 * another piece. -1 where none is reached.
 * passable: Uint8Array #voxels, g, voxelOfSample #S (solidVoxelNear; -1: the point is left out) → Int32Array #voxels
 */
function nearestSampleByVoxelSteps(passable: Uint8Array, g: VoxelGrid, voxelOfSample: Int32Array): Int32Array {
  const [nx, ny, nz] = g.dims;
  const owner = new Int32Array(passable.length).fill(-1);
  const queue = new Int32Array(passable.length);
  let head = 0, tail = 0;
  voxelOfSample.forEach((v, s) => { if (v >= 0 && owner[v] < 0) { owner[v] = s; queue[tail++] = v; } });
  while (head < tail) {
    const v = queue[head++];
    const i0 = v % nx, j0 = Math.floor(v / nx) % ny, k0 = Math.floor(v / (nx * ny));
    for (let dz = -1; dz <= 1; dz++) for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) {
      const i = i0 + dx, j = j0 + dy, k = k0 + dz;
      if (i < 0 || j < 0 || k < 0 || i >= nx || j >= ny || k >= nz) continue;
      const q = (k * ny + j) * nx + i;
      if (passable[q] && owner[q] < 0) { owner[q] = owner[v]; queue[tail++] = q; }
    }
  }
  return owner;
}

/** The centre of voxel v. */
function voxelCentre(v: number, g: VoxelGrid): [number, number, number] {
  const [nx, ny] = g.dims;
  const i = v % nx, j = Math.floor(v / nx) % ny, k = Math.floor(v / (nx * ny));
  return [g.origin[0] + (i + 0.5) * g.size, g.origin[1] + (j + 0.5) * g.size, g.origin[2] + (k + 0.5) * g.size];
}

/** The voxel nearest to point i of `points` (its own when inside the grid). */
function clampedVoxelAt(points: Float32Array, i: number, g: VoxelGrid): number {
  const [nx, ny, nz] = g.dims;
  const inv = 1 / g.size;
  const clamp = (c: number, n: number) => (c < 0 ? 0 : c >= n ? n - 1 : c);
  const a = clamp(Math.floor((points[3 * i] - g.origin[0]) * inv), nx);
  const b = clamp(Math.floor((points[3 * i + 1] - g.origin[1]) * inv), ny);
  const c = clamp(Math.floor((points[3 * i + 2] - g.origin[2]) * inv), nz);
  return (c * ny + b) * nx + a;
}

/**
 * The solid voxel of point i of `points`: its own voxel when solid, else the solid voxel nearest to it among the 26
 * around (a point inside a triangle may fall in a voxel the triangle only grazes, which rasterizeTriangles left
 * empty); -1 when there is none.
 */
function solidVoxelNear(points: Float32Array, i: number, g: VoxelGrid, solid: Uint8Array): number {
  const [nx, ny, nz] = g.dims;
  const inv = 1 / g.size;
  const x = points[3 * i], y = points[3 * i + 1], z = points[3 * i + 2];
  const a = Math.floor((x - g.origin[0]) * inv), b = Math.floor((y - g.origin[1]) * inv), c = Math.floor((z - g.origin[2]) * inv);
  let best = -1, bestD = Infinity;
  for (let dz = -1; dz <= 1; dz++) for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) {
    const p = a + dx, q = b + dy, r = c + dz;
    if (p < 0 || q < 0 || r < 0 || p >= nx || q >= ny || r >= nz) continue;
    const v = (r * ny + q) * nx + p;
    if (!solid[v]) continue;
    if (dx === 0 && dy === 0 && dz === 0) return v;
    const d = (g.origin[0] + (p + 0.5) * g.size - x) ** 2 + (g.origin[1] + (q + 0.5) * g.size - y) ** 2 + (g.origin[2] + (r + 0.5) * g.size - z) ** 2;
    if (d < bestD) { bestD = d; best = v; }
  }
  return best;
}

/**
 * Whether the straight segment from (x, y, z) to sample s stays inside the solid: its points half a voxel apart,
 * end points excepted (both lie on the surface), all fall in solid voxels.
 */
function segmentInSolid(x: number, y: number, z: number, points: Float32Array, s: number, solid: Uint8Array, g: VoxelGrid): boolean {
  const [nx, ny, nz] = g.dims;
  const inv = 1 / g.size;
  const dx = points[3 * s] - x, dy = points[3 * s + 1] - y, dz = points[3 * s + 2] - z;
  const steps = Math.ceil(Math.sqrt(dx * dx + dy * dy + dz * dz) * inv * 2);
  for (let q = 1; q < steps; q++) {
    const f = q / steps;
    const a = Math.floor((x + f * dx - g.origin[0]) * inv), b = Math.floor((y + f * dy - g.origin[1]) * inv), c = Math.floor((z + f * dz - g.origin[2]) * inv);
    if (a < 0 || b < 0 || c < 0 || a >= nx || b >= ny || c >= nz || !solid[(c * ny + b) * nx + a]) return false;
  }
  return true;
}

/** The K nearest accepted samples so far, nearest first. */
export class Neighbours {
  readonly index: Int32Array;
  readonly d2: Float64Array;
  count = 0;
  constructor(readonly capacity: number) {
    this.index = new Int32Array(capacity);
    this.d2 = new Float64Array(capacity);
  }
  clear(): void { this.count = 0; }
  /** the distance² a new sample must beat to enter */
  bar(): number { return this.count < this.capacity ? Infinity : this.d2[this.count - 1]; }
  insert(s: number, d2: number): void {
    let i = this.count < this.capacity ? this.count++ : this.capacity - 1;
    while (i > 0 && this.d2[i - 1] > d2) { this.d2[i] = this.d2[i - 1]; this.index[i] = this.index[i - 1]; i--; }
    this.d2[i] = d2;
    this.index[i] = s;
  }
}

/** Sample points bucketed in cubic cells (compressed: the samples of cell c are order[start[c] .. start[c + 1])). */
export interface SampleHash {
  origin: [number, number, number];
  cell: number;
  dims: [number, number, number];
  start: Int32Array;
  order: Int32Array;
}

/** The hash of the sample points, cells three spacings wide (a voxel's nearest points then lie within one ring). */
export function sampleHash(points: Float32Array, spacing: number): SampleHash {
  const ns = points.length / 3;
  const min = [Infinity, Infinity, Infinity], max = [-Infinity, -Infinity, -Infinity];
  for (let s = 0; s < ns; s++) {
    for (let a = 0; a < 3; a++) {
      min[a] = Math.min(min[a], points[3 * s + a]);
      max[a] = Math.max(max[a], points[3 * s + a]);
    }
  }
  const longest = Math.max(max[0] - min[0], max[1] - min[1], max[2] - min[2]);
  const cell = Math.max(3 * spacing, longest / MAX_HASH_CELLS_PER_SIDE, 1e-12);
  const dims: [number, number, number] = [0, 0, 0];
  for (let a = 0; a < 3; a++) dims[a] = Math.floor((max[a] - min[a]) / cell) + 1;
  const cellOf = (s: number) => {
    const i = Math.min(dims[0] - 1, Math.floor((points[3 * s] - min[0]) / cell));
    const j = Math.min(dims[1] - 1, Math.floor((points[3 * s + 1] - min[1]) / cell));
    const k = Math.min(dims[2] - 1, Math.floor((points[3 * s + 2] - min[2]) / cell));
    return (k * dims[1] + j) * dims[0] + i;
  };
  const start = new Int32Array(dims[0] * dims[1] * dims[2] + 1);
  for (let s = 0; s < ns; s++) start[cellOf(s) + 1]++;
  for (let c = 0; c + 1 < start.length; c++) start[c + 1] += start[c];
  const fill = start.slice(0, start.length - 1);
  const order = new Int32Array(ns);
  for (let s = 0; s < ns; s++) order[fill[cellOf(s)]++] = s;
  return { origin: [min[0], min[1], min[2]], cell, dims, start, order };
}

/**
 * The samples of one hash cell's first two rings (its own cell, then the 26 around it), in the order the ring walk
 * (searchSamples) meets them from any point of that cell: coordinates copied in that order, so that the many voxels of
 * one cell scan one contiguous list instead of walking 27 cells through the hash each.
 */
interface NearRings {
  /** sample indices, Int32Array #N; ring 0's are the first ring0 */
  samples: Int32Array;
  /** their coordinates, Float64Array #N*3 (the points' Float32 values) */
  xyz: Float64Array;
  /** their pieces (pieceOfSample; 0 without pieces), Int32Array #N */
  pieces: Int32Array;
  ring0: number;
}

/**
 * searchSamples with the first two rings of each cell gathered once (NearRings) and kept: the same samples, in the same
 * order, as searchSamples over the same hash, for less work. nearest(x, y, z, near, piece, maxRings) fills `near`.
 */
export class NearSampleSearch {
  private readonly lists = new Map<number, NearRings>();
  private readonly runs: RingRuns;
  // The last search through a cell's two rings from an empty list: where, for which piece and capacity, and its
  // farthest kept. The voxels come in surface order, so the next one is often in the same cell: within the same list
  // its k-th nearest is at most the last one's plus the step between them (triangle inequality), and the samples beyond
  // that bound, never among the k nearest, are left out instead of entering the list and being pushed out again (same
  // answer, in the same order: ties keep the walk's order). The bound's slack covers the distances' rounding (~1e-16).
  private lastCell = -1;
  private lastPiece = 0;
  private lastCapacity = 0;
  private lastX = 0;
  private lastY = 0;
  private lastZ = 0;
  private lastFarthest = Infinity;

  /** hash: sampleHash(points), points: #S*3, pieceOfSample: #S (null: any sample is taken) */
  constructor(private readonly hash: SampleHash, private readonly points: Float32Array, private readonly pieceOfSample: Int32Array | null) {
    this.runs = new RingRuns(hash);
  }

  nearest(x: number, y: number, z: number, near: Neighbours, piece: number, maxRings: number): void {
    if (maxRings < 0) return;
    const hash = this.hash;
    const [nx, ny, nz] = hash.dims;
    const ci = hashCell(x, hash.origin[0], hash.cell, nx), cj = hashCell(y, hash.origin[1], hash.cell, ny), ck = hashCell(z, hash.origin[2], hash.cell, nz);
    const lastRing = Math.max(ci, nx - 1 - ci, cj, ny - 1 - cj, ck, nz - 1 - ck);
    const cell = (ck * ny + cj) * nx + ci;
    const list = this.nearRingsOf(cell, ci, cj, ck);
    const whole = maxRings >= 1 && lastRing >= 1 && near.count === 0;
    let bound = Infinity;
    if (whole && cell === this.lastCell && piece === this.lastPiece && near.capacity === this.lastCapacity && this.lastFarthest < Infinity) {
      const step = Math.sqrt((x - this.lastX) ** 2 + (y - this.lastY) ** 2 + (z - this.lastZ) ** 2);
      bound = (this.lastFarthest + step) ** 2 * (1 + 1e-9) + 1e-300;
    }
    this.scan(list, 0, list.ring0, x, y, z, near, piece, bound);
    if (near.count === near.capacity && near.d2[near.count - 1] <= 0) return;
    if (lastRing < 1 || maxRings < 1) return;
    this.scan(list, list.ring0, list.samples.length, x, y, z, near, piece, bound);
    if (whole) {
      this.lastCell = cell; this.lastPiece = piece; this.lastCapacity = near.capacity;
      this.lastX = x; this.lastY = y; this.lastZ = z;
      this.lastFarthest = near.count === near.capacity ? Math.sqrt(near.d2[near.count - 1]) : Infinity;
    }
    const reach = hash.cell;
    if (near.count === near.capacity && near.d2[near.count - 1] <= reach * reach) return;
    searchSamples(hash, this.points, x, y, z, near, this.pieceOfSample, piece, maxRings, 2);
  }

  /** list entries [n0, n1) into `near`, as searchSamples' walk adds them; those farther than `bound` (d²) left out */
  private scan(list: NearRings, n0: number, n1: number, x: number, y: number, z: number, near: Neighbours, piece: number, bound: number): void {
    const { samples, xyz, pieces } = list;
    const anyPiece = this.pieceOfSample === null;
    let bar = near.bar();
    for (let n = n0; n < n1; n++) {
      const dx = xyz[3 * n] - x, dy = xyz[3 * n + 1] - y, dz = xyz[3 * n + 2] - z;
      const d2 = dx * dx + dy * dy + dz * dz;
      if (d2 >= bar || d2 > bound || (!anyPiece && pieces[n] !== piece)) continue;
      near.insert(samples[n], d2);
      bar = near.bar();
    }
  }

  private nearRingsOf(cell: number, ci: number, cj: number, ck: number): NearRings {
    const known = this.lists.get(cell);
    if (known) return known;
    const runs = this.runs;
    runs.walk(ci, cj, ck, 0);
    const first = runs.samples();
    runs.walk(ci, cj, ck, 1);
    const second = runs.samples();
    const total = first.length + second.length;
    const samples = new Int32Array(total);
    samples.set(first);
    samples.set(second, first.length);
    const xyz = new Float64Array(3 * total);
    const pieces = new Int32Array(total);
    const { points, pieceOfSample } = this;
    for (let m = 0; m < total; m++) {
      const s = samples[m];
      xyz[3 * m] = points[3 * s];
      xyz[3 * m + 1] = points[3 * s + 1];
      xyz[3 * m + 2] = points[3 * s + 2];
      pieces[m] = pieceOfSample === null ? 0 : pieceOfSample[s];
    }
    const list = { samples, xyz, pieces, ring0: first.length };
    this.lists.set(cell, list);
    return list;
  }
}

/** The hash cell of coordinate p along an axis (origin o, cells `cell` wide, n of them): the nearest one when outside. */
function hashCell(p: number, o: number, cell: number, n: number): number {
  return Math.max(0, Math.min(n - 1, Math.floor((p - o) / cell)));
}

/**
 * The cells at Chebyshev distance r from a hash cell, as runs of cells along x, in a fixed order (z, then y, then
 * x): walk() leaves `count` runs, run i's samples hash.order[bounds[2i] .. bounds[2i + 1]) (a run's samples lie
 * contiguous in `order`).
 */
class RingRuns {
  bounds = new Int32Array(64);
  count = 0;
  constructor(private readonly hash: SampleHash) {}

  walk(ci: number, cj: number, ck: number, r: number): void {
    const [nx, ny, nz] = this.hash.dims;
    this.count = 0;
    for (let k = ck - r; k <= ck + r; k++) {
      if (k < 0 || k >= nz) continue;
      const face = k === ck - r || k === ck + r;
      for (let j = cj - r; j <= cj + r; j++) {
        if (j < 0 || j >= ny) continue;
        if (face || j === cj - r || j === cj + r) {
          this.add(Math.max(0, ci - r), Math.min(nx - 1, ci + r), j, k);
        } else {
          if (ci - r >= 0) this.add(ci - r, ci - r, j, k);
          if (r > 0 && ci + r < nx) this.add(ci + r, ci + r, j, k);
        }
      }
    }
  }

  /** the samples of the runs walked, in walk order: Int32Array */
  samples(): Int32Array {
    let total = 0;
    for (let r = 0; r < this.count; r++) total += this.bounds[2 * r + 1] - this.bounds[2 * r];
    const out = new Int32Array(total);
    const order = this.hash.order;
    let n = 0;
    for (let r = 0; r < this.count; r++) for (let o = this.bounds[2 * r]; o < this.bounds[2 * r + 1]; o++) out[n++] = order[o];
    return out;
  }

  private add(i0: number, i1: number, j: number, k: number): void {
    const [nx, ny] = this.hash.dims;
    if (2 * this.count + 2 > this.bounds.length) {
      const grown = new Int32Array(2 * this.bounds.length);
      grown.set(this.bounds);
      this.bounds = grown;
    }
    const row = (k * ny + j) * nx;
    this.bounds[2 * this.count] = this.hash.start[row + i0];
    this.bounds[2 * this.count + 1] = this.hash.start[row + i1 + 1];
    this.count++;
  }
}

/**
 * Fills `near` with the nearest samples to (x, y, z) (only those with pieceOfSample = piece, when given), ring by
 * ring of cells around the point's cell: after ring r every sample not yet seen is at least r cells away, so the
 * search stops once `near` is full and its farthest is nearer than that, or after maxRings rings (Infinity: until the
 * hash is exhausted). fromRing: the rings before it were searched already (NearSampleSearch's lists).
 */
export function searchSamples(
  hash: SampleHash, points: Float32Array, x: number, y: number, z: number, near: Neighbours,
  pieceOfSample: Int32Array | null, piece: number, maxRings: number, fromRing = 0,
): void {
  const { order, cell } = hash;
  const [nx, ny, nz] = hash.dims;
  const ci = hashCell(x, hash.origin[0], cell, nx), cj = hashCell(y, hash.origin[1], cell, ny), ck = hashCell(z, hash.origin[2], cell, nz);
  const lastRing = Math.max(ci, nx - 1 - ci, cj, ny - 1 - cj, ck, nz - 1 - ck);
  const runs = new RingRuns(hash);
  for (let r = fromRing; r <= lastRing && r <= maxRings; r++) {
    runs.walk(ci, cj, ck, r);
    for (let run = 0; run < runs.count; run++) {
      let bar = near.bar();
      for (let o = runs.bounds[2 * run], end = runs.bounds[2 * run + 1]; o < end; o++) {
        const s = order[o];
        const dx = points[3 * s] - x, dy = points[3 * s + 1] - y, dz = points[3 * s + 2] - z;
        const d2 = dx * dx + dy * dy + dz * dz;
        if (d2 >= bar || (pieceOfSample !== null && pieceOfSample[s] !== piece)) continue;
        near.insert(s, d2);
        bar = near.bar();
      }
    }
    const reach = r * cell;
    if (near.count === near.capacity && near.d2[near.count - 1] <= reach * reach) return;
  }
}
