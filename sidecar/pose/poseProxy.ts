/**
 * The reduced copy of a large mesh that Apply Latent Pose reads its shape from and auto-rigs (mesh/vertexClustering):
 * the frame, the skeleton, the solid and the SDF samples cost in proportion to the triangles, and a character's shape
 * and joints do not need 50 000 vertices to be found. The copy has about POSE_PROXY_VERTICES vertices, the size of
 * `autorig eval poses`' procedural test identities, where the apply path was measured; the weights found on it are
 * carried back to every vertex (skinning/carryClusterWeights), and the pose is applied to the mesh itself.
 * Vertices merge only within one part, one piece of the surface (meshShells) and one facing (the axis their normal
 * leans to most), so that a cape does not merge with the legs behind it, nor a palm with the thigh it rests on.
 */
import { triangleArea2, type MergedMesh } from '../mesh/mergeParts.js';
import { firstVertexAtSamePosition, meshShells } from '../mesh/meshShells.js';
import { clusterVertices, type ClusteredMesh, type ClusterGrid } from '../mesh/vertexClustering.js';
import { carryClusterWeights } from '../skinning/carryClusterWeights.js';
import type { MeshPart, PartWeights, RigResult } from '../types.js';

/** The vertices the reduced copy aims at: the procedural test identities' count (eval poses, PROCEDURAL_TEST_VERTICES). */
export const POSE_PROXY_VERTICES = 20_000;
/**
 * Meshes with more vertices than this are read through a reduced copy; smaller ones as they are. Where the copy
 * starts to pay (warm applies in one process, interleaved, medians: 42k and 50k even, 305 against 300 ms and 315
 * against 318; 75k 322 against 368; 98k 322 against 382; docs/EVAL.md, thirty-second session): below it, making the
 * copy and carrying the weights back cost what the copy saves, and a sidecar's first applies of a 50k mesh were slower.
 */
export const POSE_PROXY_ABOVE = 60_000;
/**
 * Clusters per (area / cell²) that the facing-split clustering gives on a character's surface (measured on the 42k
 * and 50k bench meshes and two 50k procedural humanoids: 1.13-1.15), to pick the cell for POSE_PROXY_VERTICES in one pass.
 */
const CLUSTERS_PER_CELL_AREA = 1.15;

/** A mesh's reduced copy and what carries results back to the mesh. */
export interface PoseProxy {
  /** the copy, one part per input part, in order (a part may lose all its triangles, never its place) */
  parts: MeshPart[];
  /** the input merged (mergeParts): the mesh the pose is applied to */
  merged: MergedMesh;
  grid: ClusterGrid;
  /** each merged vertex's group (part, piece, facing): Int32Array #V */
  groupOf: Int32Array;
  clustered: ClusteredMesh;
}

/**
 * poseProxyOf: parts (MeshPart[]) and their merge (mergeParts(parts), already checked) → the reduced copy, or null
 * when the mesh has POSE_PROXY_ABOVE vertices or fewer, or when clustering would not reduce it by a fifth (a mesh of
 * many tiny pieces).
 */
export function poseProxyOf(parts: MeshPart[], merged: MergedMesh, target = POSE_PROXY_VERTICES): PoseProxy | null {
  const { positions, triangles, partOffsets } = merged;
  const nv = positions.length / 3;
  if (nv <= POSE_PROXY_ABOVE) return null;
  const groupOf = clusterGroups(merged);
  const origin: [number, number, number] = [Infinity, Infinity, Infinity];
  for (let v = 0; v < nv; v++) for (let a = 0; a < 3; a++) origin[a] = Math.min(origin[a], positions[3 * v + a]);
  let cell = Math.sqrt(CLUSTERS_PER_CELL_AREA * surfaceArea(positions, triangles) / target);
  if (!(cell > 0)) return null;
  let grid: ClusterGrid = { origin, cell };
  let clustered = clusterVertices(positions, triangles, grid, groupOf);
  const count = () => clustered.positions.length / 3;
  // one correction where the surface clustered far from the rule's count (pieces much smaller than a cell)
  if (count() > 1.5 * target) {
    grid = { origin, cell: cell *= Math.sqrt(count() / target) };
    clustered = clusterVertices(positions, triangles, grid, groupOf);
  }
  if (count() > 0.8 * nv) return null;
  return { parts: proxyParts(parts, partOffsets, clustered), merged, grid, groupOf, clustered };
}

/**
 * rigCarriedToMesh: a rig of the proxy's parts (skeleton + one PartWeights per proxy part) → the same skeleton with
 * one PartWeights per input part, each vertex's weights blended from the clusters around it (carryClusterWeights).
 */
export function rigCarriedToMesh(rig: Pick<RigResult, 'skeleton' | 'objects'>, proxy: PoseProxy): Pick<RigResult, 'skeleton' | 'objects'> {
  const k = rig.objects[0].influences;
  const clusters = proxy.clustered.positions.length / 3;
  const indices = new Uint16Array(clusters * k);
  const weights = new Float32Array(clusters * k);
  let at = 0;
  for (const part of rig.objects) {
    if (part.influences !== k) throw new Error(`the proxy's parts were skinned with ${part.influences} and ${k} influences`);
    indices.set(part.indices, at);
    weights.set(part.weights, at);
    at += part.indices.length;
  }
  const carried = carryClusterWeights(proxy.merged.positions, proxy.groupOf, proxy.grid, proxy.clustered, { indices, weights }, k, rig.skeleton.joints.length);
  const offsets = proxy.merged.partOffsets;
  const objects: PartWeights[] = rig.objects.map((part, p) => ({
    name: part.name, influences: k,
    indices: carried.indices.slice(offsets[p] * k, offsets[p + 1] * k),
    weights: carried.weights.slice(offsets[p] * k, offsets[p + 1] * k),
  }));
  return { ...rig, objects };
}

/**
 * Each merged vertex's clustering group: one per (part, piece of the surface, facing). Seam copies of a vertex
 * (bit-identical positions) share their piece and take their normal from all their triangles, so that a seam never
 * splits the copy into two pieces. merged → Int32Array #V
 */
function clusterGroups(merged: MergedMesh): Int32Array {
  const { positions, triangles, partOffsets } = merged;
  const nv = positions.length / 3;
  const { shellOf, count } = meshShells(positions, triangles);
  const first = firstVertexAtSamePosition(positions);
  const normals = new Float64Array(nv * 3);
  for (let t = 0; t < triangles.length; t += 3) {
    const a = 3 * triangles[t], b = 3 * triangles[t + 1], c = 3 * triangles[t + 2];
    const ux = positions[b] - positions[a], uy = positions[b + 1] - positions[a + 1], uz = positions[b + 2] - positions[a + 2];
    const vx = positions[c] - positions[a], vy = positions[c + 1] - positions[a + 1], vz = positions[c + 2] - positions[a + 2];
    const nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
    for (let corner = 0; corner < 3; corner++) {
      const o = 3 * first[triangles[t + corner]];
      normals[o] += nx;
      normals[o + 1] += ny;
      normals[o + 2] += nz;
    }
  }
  const groupOf = new Int32Array(nv);
  // a piece lies within one part, but for seams welded across parts: those meshes key their groups by part too
  const partOfShell = new Int32Array(count).fill(-1);
  let shared = false;
  let part = 0;
  for (let v = 0; v < nv; v++) {
    while (v >= partOffsets[part + 1]) part++;
    const shell = shellOf[v];
    const o = 3 * first[v];
    const ax = Math.abs(normals[o]), ay = Math.abs(normals[o + 1]), az = Math.abs(normals[o + 2]);
    const axis = ax >= ay && ax >= az ? 0 : ay >= az ? 1 : 2;
    const facing = 2 * axis + (normals[o + axis] < 0 ? 1 : 0);
    if (shell >= 0) {
      if (partOfShell[shell] < 0) partOfShell[shell] = part;
      else if (partOfShell[shell] !== part) shared = true;
      groupOf[v] = 6 * shell + facing;
    } else {
      // a vertex no triangle uses: alone with its part's others of that kind
      groupOf[v] = 6 * count + part;
    }
  }
  if (shared) {
    const ids = new Map<string, number>();
    part = 0;
    for (let v = 0; v < nv; v++) {
      while (v >= partOffsets[part + 1]) part++;
      const key = `${part},${groupOf[v]}`;
      let id = ids.get(key);
      if (id === undefined) ids.set(key, (id = ids.size));
      groupOf[v] = id;
    }
  }
  return groupOf;
}

/** The area of a mesh's surface: positions #V*3, triangles #T*3 → number */
function surfaceArea(positions: Float32Array, triangles: Uint32Array): number {
  let area = 0;
  for (let t = 0; t < triangles.length; t += 3) area += 0.5 * triangleArea2(positions, triangles[t], triangles[t + 1], triangles[t + 2]);
  return area;
}

/**
 * The clusters split back into the input's parts: a group holds one part's vertices, and clusters are numbered in
 * vertex order, so each part's clusters are one run and its triangles stay within it. → MeshPart[] (the input's names)
 */
function proxyParts(parts: MeshPart[], partOffsets: Uint32Array, clustered: ClusteredMesh): MeshPart[] {
  const { clusterOf, positions, triangles } = clustered;
  const clusters = positions.length / 3;
  const starts = parts.map((_, p) => (partOffsets[p] < partOffsets[p + 1] ? clusterOf[partOffsets[p]] : -1));
  // a part's clusters run from its first vertex's cluster to the next part's first
  const ends = parts.map(() => -1);
  for (let p = 0; p < parts.length; p++) {
    if (starts[p] < 0) continue;
    let next = clusters;
    for (let q = p + 1; q < parts.length; q++) if (starts[q] >= 0) { next = starts[q]; break; }
    ends[p] = next;
  }
  const partOfCluster = new Int32Array(clusters);
  parts.forEach((_, p) => { if (starts[p] >= 0) partOfCluster.fill(p, starts[p], ends[p]); });
  const sizes = new Int32Array(parts.length);
  for (let t = 0; t < triangles.length; t += 3) sizes[partOfCluster[triangles[t]]] += 3;
  const byPart = parts.map((_, p) => new Uint32Array(sizes[p]));
  const filled = new Int32Array(parts.length);
  for (let t = 0; t < triangles.length; t += 3) {
    const p = partOfCluster[triangles[t]];
    const o = filled[p];
    byPart[p][o] = triangles[t] - starts[p];
    byPart[p][o + 1] = triangles[t + 1] - starts[p];
    byPart[p][o + 2] = triangles[t + 2] - starts[p];
    filled[p] = o + 3;
  }
  return parts.map((part, p) => ({
    name: part.name,
    positions: starts[p] >= 0 ? positions.slice(3 * starts[p], 3 * ends[p]) : new Float32Array(0),
    triangles: byPart[p],
  }));
}
