/**
 * Pieces of a surface wound inside out, turned right side out. A file's winding is not always the surface's: a Blender
 * object mirrored by a negative scale reaches the sidecar wound the other way in world space, and some exporters wind
 * every triangle clockwise (0ad_male_tunic: both its pieces). What reads the winding would then read another
 * character: the SDF samples' sign (the generalised winding number counts an inward shell −1 inside, so its inside
 * reads as outside) and the face normals the learned skinning's network takes. Apply Latent Pose on the held-out dev
 * characters with every triangle turned moved vertices by up to 3.4–10.5 % of their size before this (0.6 % on
 * robot_expressive).
 * A piece's own winding is otherwise kept as the artist made it: where a few of its triangles disagree with their
 * neighbours (clonk_farmer's collar: 56 triangles, 14 edges) nothing is turned (docs/EVAL.md, thirty-fourth session).
 * Every piece is taken for a solid, nested ones too: a character's pieces inside others are garments over a body, not
 * cavities (a cavity wound inward on purpose would be turned as well). The procedural humanoids' few pieces turned
 * this way are fragments of 10–12 vertices outside the rest of the surface (winding number 0 there), wound inward.
 */
import { meshShells } from './meshShells.js';

/**
 * A piece is turned over only when its signed volume (about its own centre) is below −INWARD_SHARE of its unsigned
 * volume: a closed piece wound inward reads −1, one wound outward +1, an open sheet (a cape, hair cards) near 0 either
 * way, which says nothing: those keep the winding they have.
 */
export const INWARD_SHARE = 0.2;

/**
 * orientPiecesOutward: the triangles with each piece of the surface that is wound inside out turned. Pieces are
 * meshShells' (connected through shared vertices, seams welded); a piece is inside out when its signed volume about
 * the mean of its triangles' corners is below −INWARD_SHARE of its unsigned volume.
 * positions: Float32Array #V*3, triangles: Uint32Array #T*3, shells: their meshShells when the caller has them →
 * triangles: the same array when no piece is inside out (a surface wound outward is left bit for bit), else a copy with
 * the second and third corners of each triangle of those pieces swapped (the order of the triangles is kept). Turning
 * every triangle of a surface and orienting it gives back the surface as it was.
 */
export function orientPiecesOutward(
  positions: Float32Array, triangles: Uint32Array, shells: { shellOf: Int32Array; count: number } = meshShells(positions, triangles),
): Uint32Array {
  if (triangles.length === 0) return triangles;
  const { shellOf, count } = shells;
  const inward = inwardPieces(positions, triangles, shellOf, count);
  if (!inward.includes(1)) return triangles;
  const out = triangles.slice();
  for (let t = 0; t < triangles.length; t += 3) {
    if (!inward[shellOf[triangles[t]]]) continue;
    out[t + 1] = triangles[t + 2];
    out[t + 2] = triangles[t + 1];
  }
  return out;
}

/**
 * inwardPieces: per piece, 1 when its signed volume, taken about the mean of its triangles' corners, is below
 * −INWARD_SHARE times its unsigned volume. shellOf: Int32Array #V (meshShells), pieces: their count → Uint8Array #pieces
 */
function inwardPieces(positions: Float32Array, triangles: Uint32Array, shellOf: Int32Array, pieces: number): Uint8Array {
  const centre = new Float64Array(pieces * 4);
  for (let t = 0; t < triangles.length; t += 3) {
    const p = 4 * shellOf[triangles[t]];
    for (let k = 0; k < 3; k++) {
      const v = 3 * triangles[t + k];
      centre[p] += positions[v];
      centre[p + 1] += positions[v + 1];
      centre[p + 2] += positions[v + 2];
    }
    centre[p + 3] += 3;
  }
  const signed = new Float64Array(pieces), unsigned = new Float64Array(pieces);
  for (let t = 0; t < triangles.length; t += 3) {
    const piece = shellOf[triangles[t]], p = 4 * piece;
    const ox = centre[p] / centre[p + 3], oy = centre[p + 1] / centre[p + 3], oz = centre[p + 2] / centre[p + 3];
    const a = 3 * triangles[t], b = 3 * triangles[t + 1], c = 3 * triangles[t + 2];
    const ax = positions[a] - ox, ay = positions[a + 1] - oy, az = positions[a + 2] - oz;
    const bx = positions[b] - ox, by = positions[b + 1] - oy, bz = positions[b + 2] - oz;
    const cx = positions[c] - ox, cy = positions[c + 1] - oy, cz = positions[c + 2] - oz;
    const det = ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx);
    signed[piece] += det;
    unsigned[piece] += Math.abs(det);
  }
  const inward = new Uint8Array(pieces);
  for (let s = 0; s < pieces; s++) inward[s] = signed[s] < -INWARD_SHARE * unsigned[s] ? 1 : 0;
  return inward;
}
