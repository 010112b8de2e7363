/**
 * Skinning weights carried from one mesh to another by closest point: what a remeshed character's "artist weights"
 * are in the eval (the remesh has other vertices, so the artist's weights are read off the surface it came from).
 */
import { Vector3 } from 'three';
import type { HitPointInfo } from 'three-mesh-bvh';
import { AutoRigError } from '../errors.js';
import { barycentric } from '../geometry/barycentric.js';
import { closestSurface } from '../geometry/closestSurface.js';
import { mergeParts } from '../mesh/mergeParts.js';
import type { MeshPart, PartWeights } from '../types.js';

/** Influences per vertex of the transferred weights (glTF JOINTS_0/WEIGHTS_0). */
const INFLUENCES = 4;

export interface TransferredWeights {
  /** indices: Uint16Array, #V*4, into the source's shared bone list (unused slots: bone 0 with weight 0) */
  indices: Uint16Array;
  /** weights: Float32Array, #V*4, heaviest first, rows sum to 1 */
  weights: Float32Array;
}

/**
 * transferWeightsByClosestPoint: source { parts: MeshPart[], weights: PartWeights[] (one per part, same order: top-k
 * indices #V_p*k into a bone list shared by all parts + values #V_p*k) }, target: Float32Array #V*3 (same space) →
 * TransferredWeights (top-4 indices #V*4 + values #V*4).
 * Each target vertex takes the point of the source surface closest to it, blends the weights of that triangle's three
 * corners by the point's barycentric coordinates, keeps the four heaviest bones and renormalises them to sum 1.
 * Source vertices without any weight (rows summing to 0: parts no bone moves) do not count: triangles with no weighted
 * corner are left out of the search, and within a triangle only weighted corners share the blend.
 * Throws BAD_REQUEST when the weights do not match the parts or nothing in the source is weighted.
 */
export function transferWeightsByClosestPoint(source: { parts: MeshPart[]; weights: PartWeights[] }, target: Float32Array): TransferredWeights {
  const { parts, weights } = source;
  if (weights.length !== parts.length) {
    throw new AutoRigError('BAD_REQUEST', `transferWeightsByClosestPoint: one weight table per part expected, got ${weights.length} for ${parts.length} parts`);
  }
  const mesh = mergeParts(parts);
  const vertexCount = mesh.positions.length / 3;
  // per source vertex: where its row starts in its part's table, and the table
  const rowOf = new Uint32Array(vertexCount);
  const tableOf = new Uint16Array(vertexCount);
  const weighted = new Uint8Array(vertexCount);
  parts.forEach((part, p) => {
    const count = part.positions.length / 3;
    const w = weights[p];
    if (!(w.influences > 0) || w.indices.length !== count * w.influences || w.weights.length !== count * w.influences) {
      throw new AutoRigError('BAD_REQUEST', `transferWeightsByClosestPoint: the weights of part "${part.name}" do not hold ${w.influences} influences for its ${count} vertices`);
    }
    for (let v = 0; v < count; v++) {
      const at = mesh.partOffsets[p] + v;
      rowOf[at] = v * w.influences;
      tableOf[at] = p;
      let sum = 0;
      for (let s = 0; s < w.influences; s++) sum += Math.max(w.weights[v * w.influences + s], 0);
      weighted[at] = sum > 0 ? 1 : 0;
    }
  });

  const kept: number[] = [];
  for (let t = 0; t < mesh.triangles.length; t += 3) {
    if (weighted[mesh.triangles[t]] || weighted[mesh.triangles[t + 1]] || weighted[mesh.triangles[t + 2]]) kept.push(mesh.triangles[t], mesh.triangles[t + 1], mesh.triangles[t + 2]);
  }
  if (kept.length === 0) throw new AutoRigError('BAD_REQUEST', 'transferWeightsByClosestPoint: no source vertex carries a weight');
  // the BVH reorders its index: corners are read from it, not from `kept`
  const { bvh, geometry, corners } = closestSurface(mesh.positions, Uint32Array.from(kept));

  const targetCount = target.length / 3;
  const indices = new Uint16Array(targetCount * INFLUENCES);
  const result = new Float32Array(targetCount * INFLUENCES);
  const point = new Vector3();
  const hit = { point: new Vector3(), distance: 0, faceIndex: 0 } as HitPointInfo;
  const bary = [0, 0, 0];
  const triangle = new Uint32Array(3);
  // the blend of up to three rows: bone → weight, as parallel arrays (at most 3 × the widest row)
  const maxInfluences = Math.max(...weights.map((w) => w.influences));
  const bones = new Int32Array(3 * maxInfluences);
  const amounts = new Float64Array(3 * maxInfluences);
  for (let v = 0; v < targetCount; v++) {
    point.set(target[v * 3], target[v * 3 + 1], target[v * 3 + 2]);
    if (!bvh.closestPointToPoint(point, hit)) continue;
    const a = corners[hit.faceIndex * 3], b = corners[hit.faceIndex * 3 + 1], c = corners[hit.faceIndex * 3 + 2];
    triangle[0] = a; triangle[1] = b; triangle[2] = c;
    barycentric(mesh.positions, a, b, c, hit.point, bary);
    let share = 0;
    for (let k = 0; k < 3; k++) {
      if (!weighted[triangle[k]]) bary[k] = 0;
      share += bary[k];
    }
    // the closest point sits on an unweighted corner: its weighted neighbours in the triangle share equally
    if (share <= 0) for (let k = 0; k < 3; k++) { bary[k] = weighted[triangle[k]]; share += bary[k]; }
    let used = 0;
    for (let k = 0; k < 3; k++) {
      if (bary[k] <= 0) continue;
      const vertex = triangle[k];
      const table = weights[tableOf[vertex]];
      const row = rowOf[vertex];
      let rowSum = 0;
      for (let s = 0; s < table.influences; s++) rowSum += Math.max(table.weights[row + s], 0);
      for (let s = 0; s < table.influences; s++) {
        const w = table.weights[row + s];
        if (!(w > 0)) continue;
        const bone = table.indices[row + s];
        let slot = 0;
        while (slot < used && bones[slot] !== bone) slot++;
        if (slot === used) { bones[used] = bone; amounts[used++] = 0; }
        amounts[slot] += ((bary[k] / share) * w) / rowSum;
      }
    }
    keepHeaviest(bones, amounts, used, indices, result, v * INFLUENCES);
  }
  geometry.dispose();
  return { indices, weights: result };
}

/** Writes the four heaviest of `used` (bone, amount) pairs at `at`, heaviest first, renormalised to sum 1. */
function keepHeaviest(bones: Int32Array, amounts: Float64Array, used: number, indices: Uint16Array, weights: Float32Array, at: number): void {
  let total = 0;
  for (let slot = 0; slot < INFLUENCES; slot++) {
    let best = -1;
    for (let k = 0; k < used; k++) if (amounts[k] > 0 && (best < 0 || amounts[k] > amounts[best])) best = k;
    if (best < 0) break;
    indices[at + slot] = bones[best];
    weights[at + slot] = amounts[best];
    total += amounts[best];
    amounts[best] = -1;
  }
  if (total > 0) for (let slot = 0; slot < INFLUENCES; slot++) weights[at + slot] /= total;
}
