/**
 * barycentric: the barycentric coordinates of point p (on or near triangle abc, e.g. a closest point) into out #3,
 * clamped to the triangle and summing to 1; a sliver gives all to its corner nearest p.
 * positions: Float32Array #V*3, a, b, c: vertex indices, p: { x, y, z }, out: number[3] (written).
 */
export function barycentric(positions: Float32Array, a: number, b: number, c: number, p: { x: number; y: number; z: number }, out: number[]): void {
  const ux = positions[b * 3] - positions[a * 3], uy = positions[b * 3 + 1] - positions[a * 3 + 1], uz = positions[b * 3 + 2] - positions[a * 3 + 2];
  const vx = positions[c * 3] - positions[a * 3], vy = positions[c * 3 + 1] - positions[a * 3 + 1], vz = positions[c * 3 + 2] - positions[a * 3 + 2];
  const wx = p.x - positions[a * 3], wy = p.y - positions[a * 3 + 1], wz = p.z - positions[a * 3 + 2];
  const uu = ux * ux + uy * uy + uz * uz, uv = ux * vx + uy * vy + uz * vz, vv = vx * vx + vy * vy + vz * vz;
  const wu = wx * ux + wy * uy + wz * uz, wv = wx * vx + wy * vy + wz * vz;
  const det = uu * vv - uv * uv;
  if (!(det > 1e-30 * uu * vv) || !(det > 0)) {
    // a sliver: the nearest corner takes it all
    const d = [0, 1, 2].map((k) => { const q = [a, b, c][k] * 3; return (positions[q] - p.x) ** 2 + (positions[q + 1] - p.y) ** 2 + (positions[q + 2] - p.z) ** 2; });
    const nearest = d.indexOf(Math.min(...d));
    for (let k = 0; k < 3; k++) out[k] = k === nearest ? 1 : 0;
    return;
  }
  const s = (vv * wu - uv * wv) / det, t = (uu * wv - uv * wu) / det;
  out[0] = Math.max(1 - s - t, 0);
  out[1] = Math.max(s, 0);
  out[2] = Math.max(t, 0);
  const sum = out[0] + out[1] + out[2];
  for (let k = 0; k < 3; k++) out[k] /= sum;
}
