/**
 * A reduced copy of a mesh by vertex clustering: the vertices that share a cell of a regular grid, and a group (the
 * caller's: part, piece and facing), become one vertex at their mean; triangles whose corners fall into fewer than
 * three clusters vanish. No cracks can open (every triangle that stays keeps its neighbours' clusters), and each
 * vertex of the mesh knows its cluster, so what is computed on the copy can be carried back
 * (skinning/carryClusterWeights).
 */

/** The clustering grid: cubic cells of side `cell` from `origin` (any point at or below the mesh's minimum). */
export interface ClusterGrid {
  origin: [number, number, number];
  cell: number;
}

/** Which cluster holds a (group, cell): an open-addressing table over the clusters' keys. */
export interface ClusterTable {
  /** table slots: a power of two */
  size: number;
  /** per slot, the key (group, i, j, k): Int32Array #size*4 (unused slots hold group -1) */
  keys: Int32Array;
  /** per slot, the cluster: Int32Array #size */
  ids: Int32Array;
}

export interface ClusteredMesh {
  /** each cluster's mean position: Float32Array #C*3 */
  positions: Float32Array;
  /** the triangles that still span three clusters, each (group, winding) once: Uint32Array #T'*3 indexing clusters */
  triangles: Uint32Array;
  /** each vertex's cluster: Int32Array #V */
  clusterOf: Int32Array;
  /** each cluster's group: Int32Array #C */
  groupOfCluster: Int32Array;
  table: ClusterTable;
}

/**
 * clusterVertices: positions Float32Array #V*3, triangles Uint32Array #T*3, grid, groupOf Int32Array #V (≥ 0;
 * vertices of different groups never merge) → ClusteredMesh. Clusters are numbered in the order of their first
 * vertex, so the clusters of a run of vertices (a part, with its group) follow each other.
 */
export function clusterVertices(positions: Float32Array, triangles: Uint32Array, grid: ClusterGrid, groupOf: Int32Array): ClusteredMesh {
  const nv = positions.length / 3;
  let size = 1;
  while (size < 2 * nv) size <<= 1;
  const table: ClusterTable = { size, keys: new Int32Array(size * 4).fill(-1), ids: new Int32Array(size).fill(-1) };
  const clusterOf = new Int32Array(nv);
  const sums = new Float64Array(nv * 3);
  const counts = new Int32Array(nv);
  const groups = new Int32Array(nv);
  let clusters = 0;
  const inv = 1 / grid.cell;
  for (let v = 0; v < nv; v++) {
    const i = Math.floor((positions[3 * v] - grid.origin[0]) * inv);
    const j = Math.floor((positions[3 * v + 1] - grid.origin[1]) * inv);
    const k = Math.floor((positions[3 * v + 2] - grid.origin[2]) * inv);
    const slot = findSlot(table, groupOf[v], i, j, k);
    let c = table.ids[slot];
    if (c < 0) {
      c = clusters++;
      table.ids[slot] = c;
      table.keys[4 * slot] = groupOf[v];
      table.keys[4 * slot + 1] = i;
      table.keys[4 * slot + 2] = j;
      table.keys[4 * slot + 3] = k;
      groups[c] = groupOf[v];
    }
    clusterOf[v] = c;
    sums[3 * c] += positions[3 * v];
    sums[3 * c + 1] += positions[3 * v + 1];
    sums[3 * c + 2] += positions[3 * v + 2];
    counts[c]++;
  }
  const out = new Float32Array(clusters * 3);
  for (let c = 0; c < clusters; c++) for (let a = 0; a < 3; a++) out[3 * c + a] = sums[3 * c + a] / counts[c];
  return { positions: out, triangles: collapsedTriangles(triangles, clusterOf), clusterOf, groupOfCluster: groups.slice(0, clusters), table };
}

/**
 * The triangles over clusters: collapsed ones (two corners in one cluster) dropped, and of those that land on the same
 * three clusters with the same winding only the first kept (opposite windings both stay: the two sides of a sheet
 * folded flat). triangles Uint32Array #T*3, clusterOf Int32Array #V → Uint32Array #T'*3
 */
function collapsedTriangles(triangles: Uint32Array, clusterOf: Int32Array): Uint32Array {
  const out = new Uint32Array(triangles.length);
  let size = 1;
  while (size < triangles.length) size <<= 1;
  // an open-addressing set of the oriented triangles kept so far: out's triangle index per slot
  const slots = new Int32Array(size).fill(-1);
  let n = 0;
  for (let t = 0; t < triangles.length; t += 3) {
    let a = clusterOf[triangles[t]], b = clusterOf[triangles[t + 1]], c = clusterOf[triangles[t + 2]];
    if (a === b || b === c || a === c) continue;
    // rotated so that the smallest comes first, the winding kept: one key per oriented triangle
    if (b < a && b < c) [a, b, c] = [b, c, a];
    else if (c < a && c < b) [a, b, c] = [c, a, b];
    let h = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b) ^ Math.imul(c, 0xc2b2ae35)) >>> 0;
    h = (h ^ (h >>> 15)) & (size - 1);
    let seen = false;
    for (;;) {
      const u = slots[h];
      if (u < 0) break;
      if (out[u] === a && out[u + 1] === b && out[u + 2] === c) { seen = true; break; }
      h = (h + 1) & (size - 1);
    }
    if (seen) continue;
    slots[h] = n;
    out[n++] = a;
    out[n++] = b;
    out[n++] = c;
  }
  return out.slice(0, n);
}

/** The slot of (group, i, j, k) in the table: the key's own, or the empty slot where it would go. */
function findSlot(table: ClusterTable, group: number, i: number, j: number, k: number): number {
  const mask = table.size - 1;
  let h = Math.imul(group, 0x27d4eb2d) ^ Math.imul(i, 0x9e3779b1) ^ Math.imul(j, 0x85ebca6b) ^ Math.imul(k, 0xc2b2ae35);
  h = (h ^ (h >>> 15)) & mask;
  const keys = table.keys;
  for (;;) {
    const s = 4 * h;
    if (keys[s] === -1) return h;
    if (keys[s] === group && keys[s + 1] === i && keys[s + 2] === j && keys[s + 3] === k) return h;
    h = (h + 1) & mask;
  }
}

/** The cluster at (group, i, j, k), or -1 where no vertex of that group fell into that cell. */
export function clusterAt(table: ClusterTable, group: number, i: number, j: number, k: number): number {
  return table.ids[findSlot(table, group, i, j, k)];
}
