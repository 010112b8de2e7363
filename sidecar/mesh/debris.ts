import { meshShells } from './meshShells.js';

/**
 * A closed or open piece of the mesh whose box diagonal is under this fraction of the largest piece's is debris for
 * finding the frame and the skeleton: dust, particles, sequins scattered on and around the body. Their specks fill the
 * gap between the legs and the armpits in the front view and pull the landmarks off (thousands of 1 cm fragments around
 * the procedural humanoid moved its hips by a quarter of its height). Eyes, buttons and teeth lie inside the silhouette
 * and change nothing when left out; fingers, hands and hair locks are larger than this.
 */
export const DEBRIS_FRACTION = 0.02;

/**
 * The triangles of the character's body: those of every piece (connected through shared vertices or bit-identical
 * positions) whose box diagonal is at least DEBRIS_FRACTION of the largest piece's. When no piece is debris the input
 * array itself is returned. Debris still gets skinned: only the frame and the skeleton are read without it.
 * positions: Float32Array #V*3, triangles: Uint32Array #T*3, shells: their meshShells when the caller has them →
 * Uint32Array #T'*3 (T' ≤ T, same order)
 */
export function bodyTriangles(
  positions: Float32Array, triangles: Uint32Array, shells: { shellOf: Int32Array; count: number } = meshShells(positions, triangles),
): Uint32Array {
  const { shellOf, count } = shells;
  if (count < 2) return triangles;
  const min = new Float64Array(count * 3).fill(Infinity);
  const max = new Float64Array(count * 3).fill(-Infinity);
  for (let t = 0; t < triangles.length; t++) {
    const v = triangles[t], s = shellOf[v];
    for (let a = 0; a < 3; a++) {
      const x = positions[v * 3 + a];
      if (x < min[s * 3 + a]) min[s * 3 + a] = x;
      if (x > max[s * 3 + a]) max[s * 3 + a] = x;
    }
  }
  const diagonal = new Float64Array(count);
  let largest = 0;
  for (let s = 0; s < count; s++) {
    diagonal[s] = Math.hypot(max[s * 3] - min[s * 3], max[s * 3 + 1] - min[s * 3 + 1], max[s * 3 + 2] - min[s * 3 + 2]);
    if (diagonal[s] > largest) largest = diagonal[s];
  }
  const kept = new Uint32Array(triangles.length);
  let n = 0;
  for (let t = 0; t < triangles.length; t += 3) {
    if (diagonal[shellOf[triangles[t]]] < DEBRIS_FRACTION * largest) continue;
    kept[n++] = triangles[t];
    kept[n++] = triangles[t + 1];
    kept[n++] = triangles[t + 2];
  }
  return n === triangles.length ? triangles : kept.slice(0, n);
}
