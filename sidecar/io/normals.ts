/** Vertex normals for meshes that arrive without any (OBJ without vn, procedural parts). */

/**
 * vertexNormals: area-weighted average of the faces around each vertex.
 * positions: Float32Array, #V*3; triangles: Uint32Array, #T*3 → Float32Array, #V*3 unit vectors
 * (a vertex no triangle uses gets +Y: glTF requires unit normals).
 */
export function vertexNormals(positions: Float32Array, triangles: Uint32Array): Float32Array {
  const normals = new Float32Array(positions.length);
  for (let f = 0; f < triangles.length; f += 3) {
    const a = triangles[f] * 3;
    const b = triangles[f + 1] * 3;
    const c = triangles[f + 2] * 3;
    const ux = positions[b] - positions[a], uy = positions[b + 1] - positions[a + 1], uz = positions[b + 2] - positions[a + 2];
    const vx = positions[c] - positions[a], vy = positions[c + 1] - positions[a + 1], vz = positions[c + 2] - positions[a + 2];
    // The cross product's length is twice the triangle's area: summing it unnormalised is the area weighting.
    const nx = uy * vz - uz * vy;
    const ny = uz * vx - ux * vz;
    const nz = ux * vy - uy * vx;
    for (const o of [a, b, c]) {
      normals[o] += nx;
      normals[o + 1] += ny;
      normals[o + 2] += nz;
    }
  }
  for (let i = 0; i < normals.length; i += 3) {
    const length = Math.hypot(normals[i], normals[i + 1], normals[i + 2]);
    if (length > 0) for (let k = 0; k < 3; k++) normals[i + k] /= length;
    else normals[i + 1] = 1;
  }
  return normals;
}
