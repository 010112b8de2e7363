/**
 * Weights computed on a reduced copy of a mesh (mesh/vertexClustering) carried back to the mesh's own vertices.
 */
import { clusterAt, type ClusteredMesh, type ClusterGrid } from '../mesh/vertexClustering.js';
import { writeHeaviestTouched } from './voxelBoneWeights.js';

/**
 * carryClusterWeights: top-k weights computed on the clusters → top-k weights of the mesh's vertices, each blended
 * trilinearly from the clusters of its group in the eight cells around it (cell centres as the clusters' places), so
 * that weights change smoothly across cells instead of in steps; a vertex keeps its own cluster's where it finds no
 * other. positions Float32Array #V*3 and groupOf Int32Array #V (clusterVertices' input), clustered: its output,
 * weights { indices Uint16Array #C*k, weights Float32Array #C*k }, k, bones (indices are below it)
 * → { indices Uint16Array #V*k, weights Float32Array #V*k }, rows summing to 1 (or all 0 where the cluster's were).
 */
export function carryClusterWeights(
  positions: Float32Array, groupOf: Int32Array, grid: ClusterGrid, clustered: ClusteredMesh,
  weights: { indices: Uint16Array; weights: Float32Array }, k: number, bones: number,
): { indices: Uint16Array; weights: Float32Array } {
  const nv = positions.length / 3;
  const outIndices = new Uint16Array(nv * k);
  const outWeights = new Float32Array(nv * k);
  const row = new Float64Array(bones);
  const touched = new Int32Array(bones);
  const inv = 1 / grid.cell;
  const corners = new Int32Array(8);
  let lastGroup = -1, lastI = 0, lastJ = 0, lastK = 0;
  const clusterIndices = weights.indices, clusterWeights = weights.weights;
  const ownCluster = clustered.clusterOf;
  for (let v = 0; v < nv; v++) {
    const u = (positions[3 * v] - grid.origin[0]) * inv - 0.5;
    const w = (positions[3 * v + 1] - grid.origin[1]) * inv - 0.5;
    const t = (positions[3 * v + 2] - grid.origin[2]) * inv - 0.5;
    const i0 = Math.floor(u), j0 = Math.floor(w), k0 = Math.floor(t);
    const fu = u - i0, fw = w - j0, ft = t - k0;
    const g = groupOf[v];
    // neighbouring vertices mostly share their eight cells: looked up again only when the cells change
    if (g !== lastGroup || i0 !== lastI || j0 !== lastJ || k0 !== lastK) {
      for (let corner = 0; corner < 8; corner++) {
        corners[corner] = clusterAt(clustered.table, g, i0 + (corner & 1), j0 + ((corner >> 1) & 1), k0 + ((corner >> 2) & 1));
      }
      lastGroup = g; lastI = i0; lastJ = j0; lastK = k0;
    }
    let count = 0;
    let total = 0;
    for (let corner = 0; corner < 8; corner++) {
      const f = ((corner & 1) ? fu : 1 - fu) * ((corner & 2) ? fw : 1 - fw) * ((corner & 4) ? ft : 1 - ft);
      if (f <= 0) continue;
      const c = corners[corner];
      if (c < 0) continue;
      count = addClusterRow(clusterIndices, clusterWeights, k, c, f, row, touched, count);
      total += f;
    }
    if (total <= 0) count = addClusterRow(clusterIndices, clusterWeights, k, ownCluster[v], 1, row, touched, count);
    writeHeaviestTouched(row, touched, count, k, outIndices, outWeights, v * k);
  }
  return { indices: outIndices, weights: outWeights };
}

/**
 * Adds f × a cluster's top-k row into a dense row (row: Float64Array #bones), listing each bone it touches first in
 * touched (Int32Array, count of them so far) → the new count.
 */
function addClusterRow(
  indices: Uint16Array, weights: Float32Array, k: number, c: number, f: number, row: Float64Array, touched: Int32Array, count: number,
): number {
  for (let m = 0; m < k; m++) {
    const w = weights[c * k + m];
    if (!(w > 0)) continue;
    const b = indices[c * k + m];
    if (row[b] === 0) touched[count++] = b;
    row[b] += f * w;
  }
  return count;
}
