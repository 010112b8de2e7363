/**
 * A skirt or robe that is one mesh with the body: inside it the voxel solid is filled from hip to hem, so the
 * geodesic distance from a shin to the hem runs straight through the cloth's interior, and the hem follows the
 * calves: a knee bend tears the robe at knee height (procedural test identity 9 100 009, a fused robe down to
 * 10 % of its height: a knee bend through our weights erred 2.9 % of height there, where the truth moves 0.02 %).
 * Skirts are weighted to the hips and thighs (the generator's rule, and the usual artist's one), so in the height
 * layers where one solid skirt spans both legs, the weight our skinning gave a bone below the knee goes to the
 * thigh of its side.
 * A layer is a skirt's when, in its voxel slice, the segment between the two legs' bone points is solid and the solid
 * at its midpoint is at least SKIRT_MIDDLE_DEPTH times as deep (front to back) as at either leg: legs that merely
 * touch (at the knees, or thick thighs) meet in a contact narrower than a leg, and a cape fused behind the legs
 * leaves the gap between them empty. Only the skirt's own cross-section in such a layer counts (a hand or a staff
 * beside it is apart from it there), and only its outer surface (legs modelled under a separate skirt keep their
 * knees). On the skirt, a bone other than the legs' and their ancestors keeps its weight only as far from it as its
 * own surface off the skirt lies (its reach: ownReachOffSkirt), or within its own length where that surface cannot
 * be read (9 100 009's staff, held in the left hand, touches the hem: through it the geodesic weights gave the hem's
 * corner half of its weight from the hand; and its hand rests against the robe: the learned weights gave the robe
 * around it up to all of its weight from the hand, out to 0.8 of the hand's length from its bone, where the hand's own
 * surface lies within 0.31).
 */
import type { VoxelGrid } from '../geometry/voxelGrid.js';
import { bindWholly, pointSegmentDistanceSquared } from './shellBones.js';
import type { SkinBone } from './voxelBoneWeights.js';

/** One leg's bones: the thigh, and every bone from the knee down (the shin and its descendants). */
export interface LegChain {
  thigh: number;
  belowKnee: number[];
}

/** The midpoint's depth relative to the deeper leg's, at least (an elliptical skirt is deepest at its middle). */
export const SKIRT_MIDDLE_DEPTH = 0.95;

/**
 * legChains: bones (their parents), nameOf: (bone index) → its Mixamo template name, or null for a bone that is not a
 * Mixamo joint → the left and right legs' chains, or [] when the skeleton lacks a thigh or shin on either side.
 */
export function legChains(bones: Pick<SkinBone, 'parent'>[], nameOf: (bone: number) => string | null): LegChain[] {
  const chains: LegChain[] = [];
  for (const side of ['Left', 'Right']) {
    const thigh = boneNamed(bones.length, nameOf, `${side}UpLeg`), shin = boneNamed(bones.length, nameOf, `${side}Leg`);
    if (thigh < 0 || shin < 0 || bones[shin].parent !== thigh) return [];
    const belowKnee = [shin];
    for (let b = 0; b < bones.length; b++) {
      for (let a = bones[b].parent; a >= 0; a = bones[a].parent) {
        if (a === shin) { belowKnee.push(b); break; }
      }
    }
    chains.push({ thigh, belowKnee });
  }
  return chains;
}

/** The first of `count` bones whose nameOf is `name`, or -1. */
function boneNamed(count: number, nameOf: (bone: number) => string | null, name: string): number {
  for (let b = 0; b < count; b++) if (nameOf(b) === name) return b;
  return -1;
}

/**
 * skirtVoxels: the solid voxels (Uint8Array #voxels, grid g, canonical: x left, y up, z forward), the bones, the two
 * legs → Uint8Array #voxels, 1 for the voxels of a skirt's cross-section: in each height layer that a skirt spans (see
 * the module comment), the solid connected, within the layer, to the middle between the legs. A hand or a staff
 * hanging beside the skirt is apart from it in the layer, and is not marked.
 */
export function skirtVoxels(solid: Uint8Array, g: VoxelGrid, bones: SkinBone[], legs: LegChain[]): Uint8Array {
  const marked = new Uint8Array(solid.length);
  if (legs.length !== 2) return marked;
  const layers = new SkirtCrossSections(solid, g.dims, marked);
  for (let j = 0; j < layers.ny; j++) {
    const y = g.origin[1] + (j + 0.5) * g.size;
    const l = legPointAtHeight(bones, legs[0], y), r = legPointAtHeight(bones, legs[1], y);
    if (l === null || r === null) continue;
    const li = voxelCell(g, l[0], 0), lk = voxelCell(g, l[1], 2), ri = voxelCell(g, r[0], 0), rk = voxelCell(g, r[1], 2);
    const steps = Math.max(Math.abs(li - ri), Math.abs(lk - rk), 1) * 2;
    let joined = true;
    for (let s = 0; s <= steps && joined; s++) {
      const t = s / steps;
      joined = layers.at(Math.round(li + (ri - li) * t), j, Math.round(lk + (rk - lk) * t));
    }
    if (!joined) continue;
    const mi = Math.round((li + ri) / 2), mk = Math.round((lk + rk) / 2);
    if (layers.depth(mi, j, mk) < SKIRT_MIDDLE_DEPTH * Math.max(layers.depth(li, j, lk), layers.depth(ri, j, rk))) continue;
    layers.markFrom(mi, j, mk);
  }
  return marked;
}

// skirtVoxels' steps are a class and module functions, not closures made per call: V8 compiles a closure's code again
// for each new closure (each apply of a pose recompiled skirtVoxels and its closures, --trace-opt).

/** The voxel (i, or k for a = 2) along axis a of grid g that holds coordinate x; may lie outside the grid. */
export function voxelCell(g: VoxelGrid, x: number, a: 0 | 2): number {
  return Math.floor((x - g.origin[a]) / g.size);
}

/**
 * The solid (Uint8Array #voxels, dims [nx, ny, nz]) read layer by layer, and skirtVoxels' marks (Uint8Array #voxels,
 * filled in place by markFrom). i and k may lie outside the grid (then empty); j must lie inside.
 */
class SkirtCrossSections {
  readonly nx: number;
  readonly ny: number;
  readonly nz: number;
  private readonly solid: Uint8Array;
  private readonly marked: Uint8Array;
  /** markFrom's pending cells, (i, k) pairs; empty between calls */
  private readonly stack: number[] = [];

  constructor(solid: Uint8Array, dims: [number, number, number], marked: Uint8Array) {
    this.nx = dims[0];
    this.ny = dims[1];
    this.nz = dims[2];
    this.solid = solid;
    this.marked = marked;
  }

  /** Linear index of voxel (i, j, k). */
  index(i: number, j: number, k: number): number {
    return (k * this.ny + j) * this.nx + i;
  }

  /** Whether voxel (i, j, k) is inside the grid and solid. */
  at(i: number, j: number, k: number): boolean {
    return i >= 0 && i < this.nx && k >= 0 && k < this.nz && this.solid[this.index(i, j, k)] === 1;
  }

  /** Solid voxels in a row along z through (i, j, k), k included; 0 when (i, j, k) is empty. */
  depth(i: number, j: number, k: number): number {
    if (!this.at(i, j, k)) return 0;
    let d = 1;
    for (let q = k + 1; this.at(i, j, q); q++) d++;
    for (let q = k - 1; this.at(i, j, q); q--) d++;
    return d;
  }

  /** Marks (i0, j, k0), and the layer's solid it reaches, 4-connected within layer j. */
  markFrom(i0: number, j: number, k0: number): void {
    const stack = this.stack;
    this.marked[this.index(i0, j, k0)] = 1;
    stack.push(i0, k0);
    while (stack.length > 0) {
      const k = stack.pop()!, i = stack.pop()!;
      this.reach(i + 1, j, k);
      this.reach(i - 1, j, k);
      this.reach(i, j, k + 1);
      this.reach(i, j, k - 1);
    }
  }

  /** markFrom's step to a neighbour (a, j, c): marked and stacked when solid and not yet marked. */
  private reach(a: number, j: number, c: number): void {
    if (this.at(a, j, c) && this.marked[this.index(a, j, c)] === 0) {
      this.marked[this.index(a, j, c)] = 1;
      this.stack.push(a, c);
    }
  }
}

/**
 * Where a leg's bone line (thigh head → shin head → shin tail) crosses height y: its (x, z), or null when the leg
 * does not reach that height (above the hip joint or below the ankle).
 */
export function legPointAtHeight(bones: SkinBone[], leg: LegChain, y: number): [number, number] | null {
  const shin = bones[leg.belowKnee[0]];
  const path = [bones[leg.thigh].head, shin.head, shin.tail];
  for (let s = 0; s + 1 < path.length; s++) {
    const a = path[s], b = path[s + 1];
    const lo = Math.min(a[1], b[1]), hi = Math.max(a[1], b[1]);
    if (y < lo || y > hi || hi - lo < 1e-12) continue;
    const t = (y - a[1]) / (b[1] - a[1]);
    return [a[0] + (b[0] - a[0]) * t, a[2] + (b[2] - a[2]) * t];
  }
  return null;
}

/**
 * keepSkirtOnThighs: for the vertices on a skirt (on the solid's outer surface, next to a voxel of skirtVoxels), in
 * place: the weight of every bone below a knee moves to that leg's thigh, and a bone other than the legs and their
 * ancestors keeps its weight only within its reach (ownReachOffSkirt; where that is unknown, its own length) of its
 * bone, and at least two voxels (a hand holding a staff that touches the hem reaches the hem through the staff, and a
 * hand resting on a robe reaches the robe around it, but neither moves the robe in the artist's rig). positions: canonical Float32Array
 * #V*3, the grid, its solid and skirt voxels (Uint8Array #voxels each), bones, the legs; top-k indices Uint16Array
 * #V*k + values Float32Array #V*k (rows keep summing to one; a slot emptied is index 0, weight 0) → the number of
 * vertices changed.
 */
export function keepSkirtOnThighs(
  positions: Float32Array, g: VoxelGrid, solid: Uint8Array, skirt: Uint8Array, bones: SkinBone[], legs: LegChain[],
  k: number, indices: Uint16Array, weights: Float32Array,
): number {
  // most characters wear no skirt, and a skirt spans few layers: only vertices in its layers need their neighbourhood read
  const layers = markedLayers(skirt, g);
  if (!layers.includes(1)) return 0;
  const thighOf = new Map<number, number>();
  for (const leg of legs) for (const b of leg.belowKnee) thighOf.set(b, leg.thigh);
  const ownBones = new Set<number>();
  for (const leg of legs) for (let b = leg.thigh; b >= 0; b = bones[b].parent) ownBones.add(b);
  const nv = positions.length / 3;
  // legs modelled under a separate skirt lie inside the filled solid: they keep their knees
  const onSkirt = new Uint8Array(nv);
  for (let v = 0; v < nv; v++) {
    const j = Math.floor((positions[3 * v + 1] - g.origin[1]) / g.size);
    if (j >= 0 && j < layers.length && layers[j] === 1 && onSkirtSurface(positions, v, g, solid, skirt)) onSkirt[v] = 1;
  }
  // only the bones the rule may cut on the skirt need their reach read
  const cut = new Uint8Array(bones.length);
  for (let v = 0; v < nv; v++) {
    if (onSkirt[v] === 0) continue;
    for (let q = 0; q < k; q++) {
      const b = indices[v * k + q];
      if (weights[v * k + q] > 0 && !ownBones.has(b) && !thighOf.has(b)) cut[b] = 1;
    }
  }
  const reach = ownReachOffSkirt(positions, bones, onSkirt, k, indices, weights, cut);
  let changed = 0;
  for (let v = 0; v < nv; v++) {
    if (onSkirt[v] === 0) continue;
    let moved = false;
    for (let q = 0; q < k; q++) {
      const slot = v * k + q, b = indices[slot], w = weights[slot];
      if (w <= 0 || ownBones.has(b)) continue;
      const thigh = thighOf.get(b);
      if (thigh === undefined) {
        const own = Number.isNaN(reach[b]) ? segmentLength(bones[b]) : reach[b];
        if (Math.sqrt(pointSegmentDistanceSquared(positions, v, bones[b].head, bones[b].tail)) > Math.max(own, 2 * g.size)) {
          weights[slot] = 0;
          indices[slot] = 0;
          moved = true;
        }
        continue;
      }
      moved = true;
      moveSlotWeight(v, q, thigh, k, indices, weights);
    }
    if (!moved) continue;
    changed++;
    let sum = 0;
    for (let q = 0; q < k; q++) sum += weights[v * k + q];
    if (sum > 0) {
      for (let q = 0; q < k; q++) weights[v * k + q] /= sum;
      continue;
    }
    // nothing of its own left: the nearer thigh
    const a = distanceToBone(positions, v, bones[legs[0].thigh]), b = distanceToBone(positions, v, bones[legs[1].thigh]);
    bindWholly(v, legs[a <= b ? 0 : 1].thigh, k, indices, weights);
  }
  return changed;
}

/** A bone's reach is read from at least this many of its own vertices off the skirt. */
export const REACH_MIN_VERTICES = 8;
/** The quantile of their distances to the bone that is its reach: a stray vertex does not widen it. */
export const REACH_QUANTILE = 0.95;
/** And times this: a hand is wider than it is deep, and its free side may show only its depth. */
export const REACH_MARGIN = 1.5;

/**
 * ownReachOffSkirt: how far each bone's own surface lies from it, read where the skirt does not touch it: over the
 * vertices off the skirt whose largest weight is the bone's and that lie alongside it (their closest point on the bone
 * is not an end), the REACH_QUANTILE of their distances to the bone, × REACH_MARGIN. A hand resting on a robe is
 * fused with it there, and its own surface on the free side says how far the hand goes.
 * positions: Float32Array #V*3, bones, onSkirt: Uint8Array #V (1 on the skirt), top-k indices Uint16Array #V*k +
 * values Float32Array #V*k, wanted: Uint8Array #bones (1 for the bones to read; default all) → Float64Array #bones:
 * the reach (positions' units), NaN for a bone not wanted or with fewer than REACH_MIN_VERTICES such vertices
 */
export function ownReachOffSkirt(
  positions: Float32Array, bones: SkinBone[], onSkirt: Uint8Array, k: number, indices: Uint16Array, weights: Float32Array,
  wanted: Uint8Array = new Uint8Array(bones.length).fill(1),
): Float64Array {
  // (loops, not bones.map and Float64Array.from with closures made per call: V8 recompiled this every apply)
  const distances: number[][] = [];
  for (let b = 0; b < bones.length; b++) distances.push([]);
  const nv = positions.length / 3;
  for (let v = 0; v < nv; v++) {
    if (onSkirt[v] === 1) continue;
    let best = 0;
    for (let q = 1; q < k; q++) if (weights[v * k + q] > weights[v * k + best]) best = q;
    if (!(weights[v * k + best] > 0) || wanted[indices[v * k + best]] === 0) continue;
    const bone = bones[indices[v * k + best]];
    const dx = bone.tail[0] - bone.head[0], dy = bone.tail[1] - bone.head[1], dz = bone.tail[2] - bone.head[2];
    const length2 = dx * dx + dy * dy + dz * dz;
    if (length2 <= 0) continue;
    const px = positions[3 * v] - bone.head[0], py = positions[3 * v + 1] - bone.head[1], pz = positions[3 * v + 2] - bone.head[2];
    const t = (px * dx + py * dy + pz * dz) / length2;
    if (t <= 0 || t >= 1) continue;
    distances[indices[v * k + best]].push(Math.hypot(px - t * dx, py - t * dy, pz - t * dz));
  }
  const reach = new Float64Array(bones.length);
  for (let b = 0; b < bones.length; b++) reach[b] = reachOf(distances[b]);
  return reach;
}

/** One bone's distances (number[], sorted in place) → REACH_MARGIN × their REACH_QUANTILE, NaN under REACH_MIN_VERTICES. */
function reachOf(d: number[]): number {
  if (d.length < REACH_MIN_VERTICES) return Number.NaN;
  d.sort(ascending);
  return REACH_MARGIN * d[Math.floor(REACH_QUANTILE * (d.length - 1))];
}

/** Array.prototype.sort's comparator for numbers in ascending order. */
function ascending(a: number, b: number): number {
  return a - b;
}

/**
 * moveSlotWeight: in place, slot q of vertex v gives its weight to bone `to`: added to the slot that already holds `to`
 * (then emptied: index 0, weight 0), or the slot itself renamed. Top-k indices Uint16Array #V*k + values #V*k; the
 * row's sum is unchanged.
 */
export function moveSlotWeight(v: number, q: number, to: number, k: number, indices: Uint16Array, weights: Float32Array): void {
  const slot = v * k + q;
  let into = -1;
  for (let p = 0; p < k; p++) if (p !== q && indices[v * k + p] === to && weights[v * k + p] > 0) into = p;
  if (into >= 0) {
    weights[v * k + into] += weights[slot];
    indices[slot] = 0;
    weights[slot] = 0;
  } else indices[slot] = to;
}

/** markedLayers: voxel marks (Uint8Array #voxels) on grid g → Uint8Array #layers (ny), 1 where a layer has a mark. */
export function markedLayers(marks: Uint8Array, g: VoxelGrid): Uint8Array {
  const [nx, ny] = g.dims;
  const layers = new Uint8Array(ny);
  for (let v = 0; v < marks.length; v++) if (marks[v] === 1) layers[Math.floor(v / nx) % ny] = 1;
  return layers;
}

/** Whether vertex v is on a skirt: a voxel within one of its own is empty (outside) and one is a skirt voxel. */
function onSkirtSurface(positions: Float32Array, v: number, g: VoxelGrid, solid: Uint8Array, skirt: Uint8Array): boolean {
  const [nx, ny, nz] = g.dims;
  const i = Math.floor((positions[3 * v] - g.origin[0]) / g.size);
  const j = Math.floor((positions[3 * v + 1] - g.origin[1]) / g.size);
  const k = Math.floor((positions[3 * v + 2] - g.origin[2]) / g.size);
  let outside = false, onSkirt = false;
  for (let c = k - 1; c <= k + 1; c++) {
    for (let b = j - 1; b <= j + 1; b++) {
      for (let a = i - 1; a <= i + 1; a++) {
        if (a < 0 || b < 0 || c < 0 || a >= nx || b >= ny || c >= nz) { outside = true; continue; }
        const at = (c * ny + b) * nx + a;
        if (solid[at] === 0) outside = true;
        else if (b === j && skirt[at] === 1) onSkirt = true;
      }
    }
  }
  return outside && onSkirt;
}

function segmentLength(bone: SkinBone): number {
  return Math.hypot(bone.tail[0] - bone.head[0], bone.tail[1] - bone.head[1], bone.tail[2] - bone.head[2]);
}

/** The distance from vertex v (positions: Float32Array #V*3) to a bone's segment, head to tail. */
function distanceToBone(positions: Float32Array, v: number, bone: SkinBone): number {
  return Math.sqrt(pointSegmentDistanceSquared(positions, v, bone.head, bone.tail));
}
