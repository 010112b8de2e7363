/**
 * From the latent-pose decoder's displacements at its anchor points to every vertex of the mesh.
 */
import { nearestNeighbours } from '../geometry/nearestNeighbours.js';

/** Anchors blended per vertex. */
export const CARRY_ANCHORS = 6;
/**
 * An anchor whose normal is turned this far from the vertex's (cosine below it) gives it nothing: across a narrow gap
 * (an arm hanging against the ribs, two legs) the nearest surface faces the other way, and its motion is not ours.
 */
export const MIN_NORMAL_AGREEMENT = 0.2;

/**
 * carryDisplacements: each vertex moves by the blend of its CARRY_ANCHORS nearest anchors' displacements, weighted by
 * inverse squared distance times how much their normals agree; a vertex none of whose near anchors agrees (a thin
 * sheet's far side, a crease) takes its nearest anchor's motion.
 * positions: Float32Array #V*3, normals: Float32Array #V*3 (unit), anchors: Float32Array #A*3 (neutral),
 * anchorNormals: Float32Array #A*3, displacements: Float32Array #A*3 → Float32Array #V*3 (each vertex's displacement)
 */
export function carryDisplacements(
  positions: Float32Array, normals: Float32Array, anchors: Float32Array, anchorNormals: Float32Array, displacements: Float32Array,
): Float32Array {
  const V = positions.length / 3;
  const K = Math.min(CARRY_ANCHORS, anchors.length / 3);
  const out = new Float32Array(V * 3);
  if (K === 0) return out;
  const { indices, distances } = nearestNeighbours(anchors, positions, K);
  // distances below this count as this (an anchor that is the vertex itself would otherwise take all the weight, fine,
  // but a hair apart must not blow up)
  const floor = 1e-6;
  for (let v = 0; v < V; v++) {
    let wsum = 0, dx = 0, dy = 0, dz = 0;
    for (let j = 0; j < K; j++) {
      const a = indices[v * K + j];
      if (a < 0) continue;
      const agree = normals[3 * v] * anchorNormals[3 * a] + normals[3 * v + 1] * anchorNormals[3 * a + 1] + normals[3 * v + 2] * anchorNormals[3 * a + 2];
      if (agree < MIN_NORMAL_AGREEMENT) continue;
      const d = Math.max(distances[v * K + j], floor);
      const w = agree / (d * d);
      wsum += w;
      dx += w * displacements[3 * a];
      dy += w * displacements[3 * a + 1];
      dz += w * displacements[3 * a + 2];
    }
    if (wsum === 0) {
      const a = indices[v * K];
      out[3 * v] = displacements[3 * a];
      out[3 * v + 1] = displacements[3 * a + 1];
      out[3 * v + 2] = displacements[3 * a + 2];
    } else {
      out[3 * v] = dx / wsum;
      out[3 * v + 1] = dy / wsum;
      out[3 * v + 2] = dz / wsum;
    }
  }
  return out;
}
