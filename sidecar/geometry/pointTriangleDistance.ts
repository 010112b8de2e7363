/**
 * The distance from a point to a triangle, by the Voronoi region of the triangle the point projects into (vertex,
 * edge or face; Ericson, Real-Time Collision Detection §5.1.5).
 */

/**
 * Squared distance from point p to triangle abc: the closest point found by which feature's region p projects into.
 * Its regions are undefined for a triangle of no area (the answer may be NaN or wrong): a caller that may meet one
 * tests for it first.
 */
export function pointTriangleDistanceSquared(
  px: number, py: number, pz: number,
  ax: number, ay: number, az: number,
  bx: number, by: number, bz: number,
  cx: number, cy: number, cz: number,
): number {
  const abx = bx - ax, aby = by - ay, abz = bz - az;
  const acx = cx - ax, acy = cy - ay, acz = cz - az;
  const apx = px - ax, apy = py - ay, apz = pz - az;
  const d1 = abx * apx + aby * apy + abz * apz;
  const d2 = acx * apx + acy * apy + acz * apz;
  if (d1 <= 0 && d2 <= 0) return apx * apx + apy * apy + apz * apz;
  const bpx = px - bx, bpy = py - by, bpz = pz - bz;
  const d3 = abx * bpx + aby * bpy + abz * bpz;
  const d4 = acx * bpx + acy * bpy + acz * bpz;
  if (d3 >= 0 && d4 <= d3) return bpx * bpx + bpy * bpy + bpz * bpz;
  const cpx = px - cx, cpy = py - cy, cpz = pz - cz;
  const d5 = abx * cpx + aby * cpy + abz * cpz;
  const d6 = acx * cpx + acy * cpy + acz * cpz;
  if (d6 >= 0 && d5 <= d6) return cpx * cpx + cpy * cpy + cpz * cpz;
  const vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    const s = d1 / (d1 - d3);
    return squared(apx - s * abx, apy - s * aby, apz - s * abz);
  }
  const vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    const s = d2 / (d2 - d6);
    return squared(apx - s * acx, apy - s * acy, apz - s * acz);
  }
  const va = d3 * d6 - d5 * d4;
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
    const s = (d4 - d3) / (d4 - d3 + (d5 - d6));
    return squared(bpx - s * (cx - bx), bpy - s * (cy - by), bpz - s * (cz - bz));
  }
  const sum = va + vb + vc;
  const s = vb / sum, r = vc / sum;
  return squared(apx - s * abx - r * acx, apy - s * aby - r * acy, apz - s * abz - r * acz);
}

function squared(x: number, y: number, z: number): number {
  return x * x + y * y + z * z;
}
