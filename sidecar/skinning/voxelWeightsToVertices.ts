import type { VoxelGrid } from '../geometry/voxelGrid.js';
import type { VoxelWeights } from './voxelBoneWeights.js';
import { NO_BONE, nearestWeightedVoxel, writeHeaviestTouched } from './voxelBoneWeights.js';

/**
 * Carries voxel weights to the mesh: each vertex blends the weighted voxels among the 8 around it (trilinear), so
 * weights vary smoothly across voxel borders; a vertex with none of them weighted takes its nearest weighted voxel.
 * positions: Float32Array #V*3 (grid space), vw: VoxelWeights, nBones: joints in the skeleton →
 *   top-k indices Uint16Array #V*k (unused slots 0 with weight 0) + values Float32Array #V*k, rows sum to 1
 */
export function voxelWeightsToVertices(positions: Float32Array, g: VoxelGrid, vw: VoxelWeights, nBones: number): { indices: Uint16Array; weights: Float32Array } {
  const { k } = vw;
  const nv = positions.length / 3;
  const [nx, ny, nz] = g.dims;
  const indices = new Uint16Array(nv * k);
  const weights = new Float32Array(nv * k);
  const row = new Float64Array(nBones);
  // the bones of the row, in the order first touched (a typed list: a JS array emptied per vertex was reallocated)
  const touched = new Int32Array(nBones);
  let nearest: ReturnType<typeof nearestWeightedVoxel> | undefined;
  for (let p = 0; p < nv; p++) {
    let touchedCount = 0;
    const u = (positions[3 * p] - g.origin[0]) / g.size - 0.5;
    const w = (positions[3 * p + 1] - g.origin[1]) / g.size - 0.5;
    const t = (positions[3 * p + 2] - g.origin[2]) / g.size - 0.5;
    const i0 = Math.floor(u), j0 = Math.floor(w), k0 = Math.floor(t);
    const fu = u - i0, fw = w - j0, ft = t - k0;
    let total = 0;
    for (let c = 0; c < 8; c++) {
      const i = i0 + (c & 1), j = j0 + ((c >> 1) & 1), kk = k0 + ((c >> 2) & 1);
      if (i < 0 || j < 0 || kk < 0 || i >= nx || j >= ny || kk >= nz) continue;
      const v = (kk * ny + j) * nx + i;
      if (!vw.weighted[v]) continue;
      const f = ((c & 1) ? fu : 1 - fu) * (((c >> 1) & 1) ? fw : 1 - fw) * (((c >> 2) & 1) ? ft : 1 - ft);
      if (f <= 0) continue;
      touchedCount = addVoxelRow(vw, k, v, f, row, touched, touchedCount);
      total += f;
    }
    if (total <= 0) {
      nearest ??= nearestWeightedVoxel(vw.weighted, g);
      const i = clamp(Math.round(u), nx), j = clamp(Math.round(w), ny), kk = clamp(Math.round(t), nz);
      const src = nearest.origin[(kk * ny + j) * nx + i];
      if (src >= 0) touchedCount = addVoxelRow(vw, k, src, 1, row, touched, touchedCount);
    }
    writeHeaviestTouched(row, touched, touchedCount, k, indices, weights, p * k);
  }
  return { indices, weights };
}

/**
 * row += f · voxel v's weights, each bone first met appended to touched[count..]; → the new count. (A module
 * function, not a closure made per call, which V8 compiled again on every call.)
 */
function addVoxelRow(vw: VoxelWeights, k: number, v: number, f: number, row: Float64Array, touched: Int32Array, count: number): number {
  for (let s = 0; s < k; s++) {
    const b = vw.bones[v * k + s];
    if (b === NO_BONE) break;
    if (row[b] === 0) touched[count++] = b;
    row[b] += f * vw.values[v * k + s];
  }
  return count;
}

function clamp(i: number, n: number): number {
  return i < 0 ? 0 : i >= n ? n - 1 : i;
}
