/**
 * Area-uniform random points on a triangle mesh: what the refinement and skinning network trains on
 * (data/trainingSample.ts) and what the sidecar shows it at inference (learnedSkinning.ts), made by one function so
 * that the two cannot drift apart.
 */
import { SeededRandom } from '../data/seededRandom.js';
import { hypot3 } from '../geometry/hypot3.js';

export interface SurfaceSamples {
  /** the points: Float32Array #P*3 */
  points: Float32Array;
  /** unit face normal of each point's triangle (zero for a degenerate one): Float32Array #P*3 */
  normals: Float32Array;
  /** the triangle each point lies on: Uint32Array #P (index into triangles / 3) */
  triangle: Uint32Array;
  /** barycentric coordinates of each point on its triangle's corners, in the triangle's corner order: Float64Array #P*3 */
  bary: Float64Array;
  /** total area of the triangles */
  area: number;
}

/**
 * sampleSurface: `count` points uniform over the surface area (a triangle picked with probability ∝ its area, then a
 * uniform point on it), a pure function of the seed. Every draw and every rounding is fixed (training samples written
 * before this function existed are reproduced bit for bit): per point one draw picks the triangle, two more the point.
 * positions: Float32Array #V*3, triangles: Uint32Array #T*3 (#T ≥ 1), count: P, seed → SurfaceSamples
 */
export function sampleSurface(positions: Float32Array, triangles: Uint32Array, count: number, seed: number): SurfaceSamples {
  const nt = triangles.length / 3;
  if (nt === 0) throw new Error('sampleSurface: the mesh has no triangles');
  const cumulative = new Float64Array(nt);
  let total = 0;
  for (let t = 0; t < nt; t++) {
    total += triangleArea(positions, triangles[3 * t], triangles[3 * t + 1], triangles[3 * t + 2]);
    cumulative[t] = total;
  }
  const points = new Float32Array(count * 3);
  const normals = new Float32Array(count * 3);
  const triangle = new Uint32Array(count);
  const bary = new Float64Array(count * 3);
  const rng = new SeededRandom(seed);
  for (let s = 0; s < count; s++) {
    const r = rng.next() * total;
    let lo = 0, hi = nt - 1;
    while (lo < hi) { const m = (lo + hi) >> 1; if (cumulative[m] < r) lo = m + 1; else hi = m; }
    let u = rng.next(), v = rng.next();
    if (u + v > 1) { u = 1 - u; v = 1 - v; }
    triangle[s] = lo;
    bary[3 * s] = 1 - u - v;
    bary[3 * s + 1] = u;
    bary[3 * s + 2] = v;
    // Accumulated corner by corner in float32, the way the training samples always were.
    for (let c = 0; c < 3; c++) {
      const vtx = triangles[3 * lo + c];
      for (let a = 0; a < 3; a++) points[3 * s + a] += bary[3 * s + c] * positions[3 * vtx + a];
    }
    const n = triangleNormal(positions, triangles[3 * lo], triangles[3 * lo + 1], triangles[3 * lo + 2]);
    normals[3 * s] = n[0];
    normals[3 * s + 1] = n[1];
    normals[3 * s + 2] = n[2];
  }
  return { points, normals, triangle, bary, area: total };
}

/** Area of triangle (a, b, c) of positions #V*3. */
export function triangleArea(p: Float32Array, a: number, b: number, c: number): number {
  const n = triangleNormalRaw(p, a, b, c);
  return 0.5 * hypot3(n[0], n[1], n[2]);
}

/** Unit normal of triangle (a, b, c) (right-handed), zero when it has no area. */
export function triangleNormal(p: Float32Array, a: number, b: number, c: number): [number, number, number] {
  const n = triangleNormalRaw(p, a, b, c);
  const len = hypot3(n[0], n[1], n[2]) || 1;
  return [n[0] / len, n[1] / len, n[2] / len];
}

function triangleNormalRaw(p: Float32Array, a: number, b: number, c: number): [number, number, number] {
  const ux = p[3 * b] - p[3 * a], uy = p[3 * b + 1] - p[3 * a + 1], uz = p[3 * b + 2] - p[3 * a + 2];
  const vx = p[3 * c] - p[3 * a], vy = p[3 * c + 1] - p[3 * a + 1], vz = p[3 * c + 2] - p[3 * a + 2];
  return [uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx];
}
