import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../sidecar/data/seededRandom.js';
import type { VoxelGrid } from '../sidecar/geometry/voxelGrid.js';
import { GEODESIC_UNIT, voxelGeodesicDistance } from '../sidecar/skinning/voxelGeodesic.js';

const UNREACHED = 0xffffffff;

/** The textbook Dijkstra (linear scan for the nearest open voxel) the fast bucket queue must agree with exactly. */
function referenceDistances(solid: Uint8Array, dims: [number, number, number], sources: number[]): Uint32Array {
  const [nx, ny, nz] = dims;
  const dist = new Float64Array(solid.length).fill(Infinity);
  const done = new Uint8Array(solid.length);
  for (const s of sources) dist[s] = 0;
  for (;;) {
    let v = -1;
    for (let q = 0; q < solid.length; q++) if (!done[q] && dist[q] < Infinity && (v < 0 || dist[q] < dist[v])) v = q;
    if (v < 0) break;
    done[v] = 1;
    const i = v % nx, j = Math.floor(v / nx) % ny, k = Math.floor(v / (nx * ny));
    for (let dz = -1; dz <= 1; dz++) for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) {
      const steps = Math.abs(dx) + Math.abs(dy) + Math.abs(dz);
      if (steps === 0) continue;
      const a = i + dx, b = j + dy, c = k + dz;
      if (a < 0 || b < 0 || c < 0 || a >= nx || b >= ny || c >= nz) continue;
      const q = (c * ny + b) * nx + a;
      if (!solid[q]) continue;
      const w = steps === 1 ? 10 : steps === 2 ? 14 : 17;
      if (dist[v] + w < dist[q]) dist[q] = dist[v] + w;
    }
  }
  return Uint32Array.from(dist, (d) => (Number.isFinite(d) ? d : UNREACHED));
}

function grid(dims: [number, number, number]): VoxelGrid {
  return { origin: [0, 0, 0], size: 1, dims };
}

describe('voxelGeodesicDistance', () => {
  it('equals plain Dijkstra on random solids, voxels on the grid faces included', () => {
    const random = new SeededRandom(7);
    for (const dims of [[9, 7, 6], [12, 5, 8]] as [number, number, number][]) {
      const count = dims[0] * dims[1] * dims[2];
      // ~70% solid, touching every face of the grid, so the bounds-checked path runs as well as the interior one
      const solid = Uint8Array.from({ length: count }, () => (random.next() < 0.7 ? 1 : 0));
      const sources = [0, 1, 2].map(() => Math.floor(random.next() * count)).filter((v) => solid[v]);
      expect(sources.length).toBeGreaterThan(0);
      const fast = voxelGeodesicDistance(solid, grid(dims), sources, new Uint32Array(count));
      expect(Array.from(fast)).toEqual(Array.from(referenceDistances(solid, dims, sources)));
      // something was reached beyond the sources, and empty voxels never are
      expect(fast.filter((d) => d !== UNREACHED && d > 0).length).toBeGreaterThan(count / 4);
      fast.forEach((d, v) => { if (!solid[v]) expect(d).toBe(UNREACHED); });
    }
  });

  it('measures a straight run in tenths of a voxel and never crosses a gap', () => {
    const dims: [number, number, number] = [20, 3, 3];
    const solid = new Uint8Array(20 * 9);
    for (let i = 0; i < 20; i++) if (i !== 12) solid[(1 * 3 + 1) * 20 + i] = 1; // a rod along x with a gap at 12
    const out = voxelGeodesicDistance(solid, grid(dims), [(1 * 3 + 1) * 20 + 2], new Uint32Array(solid.length));
    expect(out[(1 * 3 + 1) * 20 + 11]).toBe(9 * GEODESIC_UNIT);
    expect(out[(1 * 3 + 1) * 20 + 13]).toBe(UNREACHED);
  });
});
