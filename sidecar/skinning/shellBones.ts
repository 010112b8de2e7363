/**
 * Anti-bleed between separate pieces of a character. Inside the one solid that skinning works in, pieces that touch
 * (a robot's box head on its box torso, a helmet on a head, a blocky arm against the body) exchange weights across
 * the seam, and a rigid piece starts to bend with its neighbour. An artist binds such a piece to the bones that run
 * through it, so we do the same: each closed shell of the mesh keeps only the bones that mostly lie inside it.
 */
import { fillInterior, gridOverBox, rasterizeTriangles, type VoxelGrid } from '../geometry/voxelGrid.js';
import { usedBounds } from '../mesh/canonicalFrame.js';
import type { SkinBone } from './voxelBoneWeights.js';

/** A bone belongs to a shell when at least this fraction of its length lies inside the shell's solid. */
const INSIDE_FRACTION = 0.3;
/** Samples along each bone for the inside test. */
const BONE_SAMPLES = 24;
/** A shell whose voxelised inside is less than this share of its solid is open (or paper thin): no inside to test. */
const MIN_INTERIOR_SHARE = 0.2;
/** Shells with fewer vertices are trimmings (eyes, buttons): they keep the weights of what they sit on. */
const MIN_SHELL_VERTICES = 24;
/**
 * Voxels that all shells' own grids may hold together (about ten skinning grids): each shell is voxelised alone over
 * its own box, so thousands of large overlapping shells (an onion of layers) would otherwise cost thousands of grids.
 * Shells are taken largest first; one that no longer fits keeps its weights unrestricted.
 */
export const SHELL_VOXEL_BUDGET = 16_000_000;

/**
 * shellBoneSets: for each shell, the deforming bones with at least INSIDE_FRACTION of their length inside the shell's
 * own solid (voxelised alone, at `voxelSize`); an empty list (open shells, trimmings, a single shell, shells beyond
 * SHELL_VOXEL_BUDGET) leaves the shell unrestricted.
 * positions: Float32Array #V*3, triangles: Uint32Array #T*3, shells (from meshShells), bones (same space),
 * closed (optional, Uint8Array #shells, written): 1 for each shell that was found closed (it has an inside to test) →
 * number[][] #shells
 */
export function shellBoneSets(
  positions: Float32Array, triangles: Uint32Array, shells: { shellOf: Int32Array; count: number }, bones: SkinBone[], voxelSize: number,
  closed?: Uint8Array,
): number[][] {
  const { shellOf, count } = shells;
  const vertexCount = new Int32Array(count);
  for (let v = 0; v < shellOf.length; v++) if (shellOf[v] >= 0) vertexCount[shellOf[v]]++;
  const triangleCount = new Int32Array(count);
  for (let t = 0; t < triangles.length; t += 3) triangleCount[shellOf[triangles[t]]]++;
  const triangleStart = new Int32Array(count + 1);
  for (let s = 0; s < count; s++) triangleStart[s + 1] = triangleStart[s] + triangleCount[s];
  const byShell = new Uint32Array(triangles.length);
  const fill = triangleStart.slice(0, count);
  for (let t = 0; t < triangles.length; t += 3) {
    const o = fill[shellOf[triangles[t]]]++ * 3;
    byShell[o] = triangles[t];
    byShell[o + 1] = triangles[t + 1];
    byShell[o + 2] = triangles[t + 2];
  }
  const sets: number[][] = [];
  for (let s = 0; s < count; s++) sets.push([]);
  if (count === 1) return sets;
  // Each shell's own grid, then the shells that fit in the budget, largest first.
  const grids: (VoxelGrid | null)[] = [];
  for (let s = 0; s < count; s++) {
    if (vertexCount[s] < MIN_SHELL_VERTICES) { grids.push(null); continue; }
    const tris = byShell.subarray(triangleStart[s] * 3, triangleStart[s + 1] * 3);
    const [min, max] = usedBounds(positions, tris);
    const longest = Math.max(max[0] - min[0], max[1] - min[1], max[2] - min[2]);
    grids.push(gridOverBox(min, max, Math.max(2, Math.ceil(longest / voxelSize)), 2));
  }
  const order = largestGridsFirst(grids);
  let budget = SHELL_VOXEL_BUDGET;
  for (let o = 0; o < order.length; o++) {
    const s = order[o];
    const g = grids[s]!;
    if (gridVoxels(g) > budget) continue;
    budget -= gridVoxels(g);
    const tris = byShell.subarray(triangleStart[s] * 3, triangleStart[s + 1] * 3);
    const surface = rasterizeTriangles(positions, tris, g);
    const solid = fillInterior(surface, g);
    // An open shell (a body with holes where the head and hands attach) floods and has no inside to test against.
    let surfaceVoxels = 0, interiorVoxels = 0;
    for (let v = 0; v < solid.length; v++) {
      if (surface[v]) surfaceVoxels++;
      else if (solid[v]) interiorVoxels++;
    }
    if (interiorVoxels < MIN_INTERIOR_SHARE * (surfaceVoxels + interiorVoxels)) continue;
    if (closed) closed[s] = 1;
    sets[s] = bonesInsideSolid(bones, g, solid);
  }
  return sets;
}

// shellBoneSets' steps are module functions and plain loops, not closures made per call: a closure made per call is a
// new function each time, and the optimised code that inlined the last one is thrown away and compiled again (V8
// --trace-opt: each apply of a pose recompiled shellBoneSets, on the stack too, for "wrong call target", and for
// "wrong map" where the array Array.prototype.map had made came back with another hidden class).

/** Voxels of a grid: dims[0] * dims[1] * dims[2]. */
function gridVoxels(g: VoxelGrid): number {
  const d = g.dims;
  return d[0] * d[1] * d[2];
}

/** The shells that have a grid (grids #shells, null: none), most voxels first, ties by shell index → number[]. */
function largestGridsFirst(grids: (VoxelGrid | null)[]): number[] {
  const order: number[] = [];
  for (let s = 0; s < grids.length; s++) if (grids[s]) order.push(s);
  return order.sort((a, b) => gridVoxels(grids[b]!) - gridVoxels(grids[a]!) || a - b);
}

/**
 * The deforming bones (indices into bones, ascending) with at least INSIDE_FRACTION of their BONE_SAMPLES samples in
 * the solid: g its grid, solid Uint8Array #voxels (1 = surface or inside) → number[].
 */
function bonesInsideSolid(bones: SkinBone[], g: VoxelGrid, solid: Uint8Array): number[] {
  const own: number[] = [];
  for (let n = 0; n < bones.length; n++) {
    const b = bones[n];
    if (!b.deform) continue;
    let hits = 0;
    for (let q = 0; q < BONE_SAMPLES; q++) {
      const f = (q + 0.5) / BONE_SAMPLES;
      if (insideSolid(g, solid, b.head[0] + f * (b.tail[0] - b.head[0]), b.head[1] + f * (b.tail[1] - b.head[1]), b.head[2] + f * (b.tail[2] - b.head[2]))) hits++;
    }
    if (hits >= INSIDE_FRACTION * BONE_SAMPLES) own.push(n);
  }
  return own;
}

/** Whether the point (x, y, z) lies in a solid voxel of grid g (solid Uint8Array #voxels); false outside the grid. */
function insideSolid(g: VoxelGrid, solid: Uint8Array, x: number, y: number, z: number): boolean {
  const [nx, ny, nz] = g.dims;
  const i = Math.floor((x - g.origin[0]) / g.size), j = Math.floor((y - g.origin[1]) / g.size), k = Math.floor((z - g.origin[2]) / g.size);
  return i >= 0 && j >= 0 && k >= 0 && i < nx && j < ny && k < nz && solid[(k * ny + j) * nx + i] === 1;
}

/** Contacts this far below a boneless piece's highest contact still count as where it hangs from (canonical units, height ~1). */
const HANGING_BAND = 0.05;
/** A bone is one the piece hangs from when it carries at least this share of the weight at the hanging contacts. */
const HANGING_SHARE = 0.1;

/**
 * hangingBoneSets: a closed piece that no bone runs through (a cape, a backpack, a scabbard, a helmet) is bound by an
 * artist to what it hangs from, not to whatever it brushes against lower down (a cape's hem behind the calves must
 * not swing with the legs). For each such shell (closed[s] and sets[s] empty), its contacts are its vertices within
 * `contact` of a vertex of a shell that is not such a piece itself (the body, a piece with bones); those within HANGING_BAND of the highest contact (y is up: the canonical
 * frame) are where it hangs from, and the bones that carry at least HANGING_SHARE of its weights there, with their
 * ancestors, become its set (for restrictToShellBones). A shell with no contact stays unrestricted.
 * positions #V*3 (canonical), shells (meshShells), sets (shellBoneSets, filled in place), closed #shells, bones,
 * top-k indices #V*k + values #V*k (the unrestricted weights), contact: distance (canonical units)
 */
export function hangingBoneSets(
  positions: Float32Array, shells: { shellOf: Int32Array; count: number }, sets: number[][], closed: Uint8Array, bones: SkinBone[],
  k: number, indices: Uint16Array, weights: Float32Array, contact: number,
): void {
  const { shellOf, count } = shells;
  const boneless: number[] = [];
  for (let s = 0; s < count; s++) if (closed[s] && sets[s].length === 0) boneless.push(s);
  if (boneless.length === 0) return;
  const wanted = new Set(boneless);
  // the other pieces' vertices around those shells (their box grown by `contact`) in a hash of contact-sized cells:
  // one pass over the mesh, numeric keys; a boneless piece's own vertices (most of the box) are never looked through
  const nv = positions.length / 3;
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (let v = 0; v < nv; v++) {
    if (!wanted.has(shellOf[v])) continue;
    for (let a = 0; a < 3; a++) {
      lo[a] = Math.min(lo[a], positions[v * 3 + a] - contact);
      hi[a] = Math.max(hi[a], positions[v * 3 + a] + contact);
    }
  }
  const dims = [0, 1, 2].map((a) => Math.floor((hi[a] - lo[a]) / contact) + 1);
  const cell = (v: number, a: number) => Math.floor((positions[v * 3 + a] - lo[a]) / contact);
  const inBox = (v: number) => {
    for (let a = 0; a < 3; a++) if (!(positions[v * 3 + a] >= lo[a] && positions[v * 3 + a] <= hi[a])) return false;
    return true;
  };
  const cells = new Map<number, number[]>();
  for (let v = 0; v < nv; v++) {
    if (shellOf[v] < 0 || wanted.has(shellOf[v]) || !inBox(v)) continue;
    const id = (cell(v, 0) * dims[1] + cell(v, 1)) * dims[2] + cell(v, 2);
    let list = cells.get(id);
    if (!list) cells.set(id, (list = []));
    list.push(v);
  }
  const contact2 = contact * contact;
  const touches = (v: number): boolean => {
    const i = cell(v, 0), j = cell(v, 1), l = cell(v, 2);
    for (let di = -1; di <= 1; di++) for (let dj = -1; dj <= 1; dj++) for (let dl = -1; dl <= 1; dl++) {
      const a = i + di, b = j + dj, c = l + dl;
      if (a < 0 || b < 0 || c < 0 || a >= dims[0] || b >= dims[1] || c >= dims[2]) continue;
      for (const u of cells.get((a * dims[1] + b) * dims[2] + c) ?? []) {
        const dx = positions[u * 3] - positions[v * 3], dy = positions[u * 3 + 1] - positions[v * 3 + 1], dz = positions[u * 3 + 2] - positions[v * 3 + 2];
        if (dx * dx + dy * dy + dz * dz <= contact2) return true;
      }
    }
    return false;
  };
  const contacts = new Map<number, number[]>(boneless.map((s) => [s, []]));
  for (let v = 0; v < nv; v++) if (wanted.has(shellOf[v]) && touches(v)) contacts.get(shellOf[v])!.push(v);
  for (const s of boneless) {
    const touching = contacts.get(s)!;
    if (touching.length === 0) continue;
    let top = -Infinity;
    for (const v of touching) top = Math.max(top, positions[v * 3 + 1]);
    const share = new Map<number, number>();
    let total = 0;
    for (const v of touching) {
      if (positions[v * 3 + 1] < top - HANGING_BAND) continue;
      for (let q = 0; q < k; q++) {
        const w = weights[v * k + q];
        if (w <= 0) continue;
        share.set(indices[v * k + q], (share.get(indices[v * k + q]) ?? 0) + w);
        total += w;
      }
    }
    // and the bones between them and the root: a cape hanging from the chest still moves with the hips at its hem
    const kept = new Set<number>();
    for (const [bone, w] of share) {
      if (w < HANGING_SHARE * total) continue;
      for (let b = bone; b >= 0 && !kept.has(b); b = bones[b].parent) if (bones[b].deform) kept.add(b);
    }
    sets[s] = [...kept].sort((a, b) => a - b);
  }
}

/**
 * restrictToShellBones: drops, in place, the weight a vertex takes from bones that do not belong to its shell and
 * renormalises; a row left with (almost) nothing goes wholly to the shell's bone nearest the vertex.
 * positions #V*3, shellOf #V, sets (from shellBoneSets), bones, top-k indices #V*k + values #V*k (modified in place)
 */
export function restrictToShellBones(
  positions: Float32Array, shellOf: Int32Array, sets: number[][], bones: SkinBone[], k: number, indices: Uint16Array, weights: Float32Array,
): void {
  const allowed: Set<number>[] = [];
  for (let s = 0; s < sets.length; s++) allowed.push(new Set(sets[s]));
  const nv = positions.length / 3;
  for (let v = 0; v < nv; v++) {
    const s = shellOf[v];
    if (s < 0 || allowed[s].size === 0) continue;
    let kept = 0;
    for (let q = 0; q < k; q++) {
      if (weights[v * k + q] > 0 && !allowed[s].has(indices[v * k + q])) weights[v * k + q] = 0;
      kept += weights[v * k + q];
    }
    if (kept > 0.05) {
      for (let q = 0; q < k; q++) weights[v * k + q] /= kept;
      continue;
    }
    let best = -1, bestD = Infinity;
    for (const n of sets[s]) {
      const d = pointSegmentDistanceSquared(positions, v, bones[n].head, bones[n].tail);
      if (d < bestD) { bestD = d; best = n; }
    }
    bindWholly(v, best, k, indices, weights);
  }
}

/** Binds vertex v wholly to `bone`: its first slot holds the bone at weight 1, the other k − 1 slots nothing. */
export function bindWholly(v: number, bone: number, k: number, indices: Uint16Array, weights: Float32Array): void {
  for (let q = 0; q < k; q++) { indices[v * k + q] = q === 0 ? bone : 0; weights[v * k + q] = q === 0 ? 1 : 0; }
}

/** Squared distance from vertex v (positions #V*3) to the segment a–b. */
export function pointSegmentDistanceSquared(positions: Float32Array, v: number, a: ArrayLike<number>, b: ArrayLike<number>): number {
  const px = positions[v * 3] - a[0], py = positions[v * 3 + 1] - a[1], pz = positions[v * 3 + 2] - a[2];
  const dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
  const len2 = dx * dx + dy * dy + dz * dz;
  const t = len2 > 0 ? Math.min(1, Math.max(0, (px * dx + py * dy + pz * dz) / len2)) : 0;
  return (px - t * dx) ** 2 + (py - t * dy) ** 2 + (pz - t * dz) ** 2;
}

/** A joint this far (share of the piece's box on each axis) inside a piece's box counts as inside it: one at the box's end is where the piece meets the next. */
const JOINT_INSIDE_MARGIN = 0.1;
/**
 * A jointless piece goes rigid only to a bone that already holds at least this share of its weight. On the artist dev
 * set (`autorig eval`) 0.1, 0.25 and 0.4 score the same (L1 0.354); requiring the bone to hold the most weight as well
 * (at least 0.5) left clonk_farmer's hat, which its weights lean on the neck, blended (L1 0.369).
 */
const RIGID_MIN_SHARE = 0.25;

/**
 * rigidShells: a separate piece of the mesh with no joint inside it (no deforming bone's head within its box, shrunk by
 * JOINT_INSIDE_MARGIN on each side) cannot bend where an artist would bend it, so it is bound wholly to the bone it
 * lies nearest along (mean distance of its vertices to the bone's segment) when the weights already give that bone
 * at least RIGID_MIN_SHARE of it, as an artist binds the plates of a robot, a blocky character's
 * boxes, a hat or a helmet: the blend a skinning leaves on such a piece only bends what is meant to stay rigid. A
 * piece with a joint inside (a sleeve over the elbow, trousers, a boot over the ankle) keeps its blend; pieces under
 * MIN_SHELL_VERTICES (trimmings) are left as they are; a mesh of one piece is never touched.
 * positions: Float32Array #V*3, shells (meshShells), bones (same space), k: influences, top-k indices Uint16Array #V*k
 * + values Float32Array #V*k (modified in place). Memory O(#V + #bones), whatever the number of pieces.
 */
export function rigidShells(
  positions: Float32Array, shells: { shellOf: Int32Array; count: number }, bones: SkinBone[], k: number, indices: Uint16Array, weights: Float32Array,
): void {
  const { shellOf, count } = shells;
  if (count < 2) return;
  const nv = shellOf.length;
  const J = bones.length;
  // the vertices piece by piece (a counting sort), so that each piece is read with one row of J, never #pieces × J
  const start = new Int32Array(count + 1);
  for (let v = 0; v < nv; v++) if (shellOf[v] >= 0) start[shellOf[v] + 1]++;
  for (let s = 0; s < count; s++) start[s + 1] += start[s];
  const byShell = new Int32Array(start[count]);
  const fill = start.slice(0, count);
  for (let v = 0; v < nv; v++) if (shellOf[v] >= 0) byShell[fill[shellOf[v]]++] = v;
  const mass = new Float64Array(J);
  const distance = new Float64Array(J);
  const lo = [0, 0, 0], hi = [0, 0, 0];
  for (let s = 0; s < count; s++) {
    const n = start[s + 1] - start[s];
    if (n < MIN_SHELL_VERTICES) continue;
    const members = byShell.subarray(start[s], start[s + 1]);
    lo.fill(Infinity);
    hi.fill(-Infinity);
    mass.fill(0);
    for (const v of members) {
      for (let a = 0; a < 3; a++) {
        lo[a] = Math.min(lo[a], positions[3 * v + a]);
        hi[a] = Math.max(hi[a], positions[3 * v + a]);
      }
      for (let q = 0; q < k; q++) if (weights[v * k + q] > 0) mass[indices[v * k + q]] += weights[v * k + q];
    }
    if (jointInsideBox(bones, lo, hi)) continue;
    // the bone the piece lies along (nearest on average), when the weights already give it a fair share: a hat whose
    // weights lean on the neck below it still goes to the head it sits on
    distance.fill(0);
    for (const v of members) {
      for (let j = 0; j < J; j++) {
        const b = bones[j];
        if (b.deform) distance[j] += Math.sqrt(pointSegmentDistanceSquared(positions, v, b.head, b.tail));
      }
    }
    let owner = -1;
    for (let j = 0; j < J; j++) if (bones[j].deform && (owner < 0 || distance[j] < distance[owner])) owner = j;
    if (owner < 0 || mass[owner] < RIGID_MIN_SHARE * n) continue;
    for (const v of members) bindWholly(v, owner, k, indices, weights);
  }
}

/**
 * rigidShells' joint test, a module function rather than closures made per piece (see shellBoneSets' steps): whether
 * a deforming bone's head lies inside the box [lo, hi] (#3 each) shrunk by JOINT_INSIDE_MARGIN of its side on each
 * axis. bones: SkinBone[] → boolean
 */
function jointInsideBox(bones: SkinBone[], lo: number[], hi: number[]): boolean {
  for (let j = 0; j < bones.length; j++) {
    const b = bones[j];
    if (!b.deform) continue;
    let inside = true;
    for (let a = 0; a < 3 && inside; a++) {
      const margin = JOINT_INSIDE_MARGIN * (hi[a] - lo[a]);
      inside = b.head[a] > lo[a] + margin && b.head[a] < hi[a] - margin;
    }
    if (inside) return true;
  }
  return false;
}
