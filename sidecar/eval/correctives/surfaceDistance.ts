/**
 * How far a deformed mesh lies from a ground-truth surface that shares none of its vertices: distances from
 * area-uniform samples of one surface to the other surface (not to its samples), so neither mesh's vertex density
 * biases the figure.
 */
import { sampleSurface } from '../../skinning/surfaceSamples.js';
import { buildTriangleGrid, surfaceDistances, type TriangleGrid } from './triangleGrid.js';

/** A triangle mesh: positions Float32Array #V*3, triangles Uint32Array #T*3. */
export interface TriangleMesh {
  positions: Float32Array;
  triangles: Uint32Array;
}

/** Samples per surface by default: the mean distance is then stable to well under a percent. */
export const DEFAULT_SURFACE_SAMPLES = 20_000;

/**
 * meanPointToSurface: the mean distance from `count` area-uniform samples of `from` to the surface `to` (one-sided).
 * from: TriangleMesh, to: TriangleMesh or a TriangleGrid already built over it, count: samples, seed → metres
 */
export function meanPointToSurface(from: TriangleMesh, to: TriangleMesh | TriangleGrid, count = DEFAULT_SURFACE_SAMPLES, seed = 1): number {
  const grid = 'members' in to ? to : buildTriangleGrid(to.positions, to.triangles);
  const samples = sampleSurface(from.positions, from.triangles, count, seed);
  const d = surfaceDistances(grid, samples.points);
  let sum = 0;
  for (let i = 0; i < d.length; i++) sum += d[i];
  return sum / d.length;
}

/**
 * chamferDistance: the symmetric Chamfer distance between two surfaces, ½ (mean d(a → B) + mean d(b → A)) over
 * area-uniform samples a of A and b of B, each distance to the other surface. a, b: TriangleMesh (or b's grid
 * prebuilt with bGrid), count: samples per surface, seed → metres. 0 for identical surfaces.
 */
export function chamferDistance(a: TriangleMesh, b: TriangleMesh, count = DEFAULT_SURFACE_SAMPLES, seed = 1, bGrid?: TriangleGrid): number {
  const toB = meanPointToSurface(a, bGrid ?? b, count, seed);
  const toA = meanPointToSurface(b, a, count, seed + 1);
  return (toA + toB) / 2;
}

/**
 * trianglesNear: the triangles whose centroid lies within `radius` of `centre` (a region of a surface to sample, e.g.
 * about a posed joint). positions Float32Array #V*3, triangles Uint32Array #T*3, centre [x, y, z], radius (m)
 * → Uint32Array #T'*3 (indices into the same positions)
 */
export function trianglesNear(positions: Float32Array, triangles: Uint32Array, centre: ArrayLike<number>, radius: number): Uint32Array {
  const kept: number[] = [];
  const r2 = radius * radius * 9;
  for (let t = 0; t < triangles.length; t += 3) {
    const a = triangles[t] * 3, b = triangles[t + 1] * 3, c = triangles[t + 2] * 3;
    const dx = positions[a] + positions[b] + positions[c] - 3 * centre[0];
    const dy = positions[a + 1] + positions[b + 1] + positions[c + 1] - 3 * centre[1];
    const dz = positions[a + 2] + positions[b + 2] + positions[c + 2] - 3 * centre[2];
    if (dx * dx + dy * dy + dz * dz <= r2) kept.push(triangles[t], triangles[t + 1], triangles[t + 2]);
  }
  return Uint32Array.from(kept);
}
