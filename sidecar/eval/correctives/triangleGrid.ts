/**
 * Nearest-surface distances to a triangle mesh by a uniform hash grid over the triangles' boxes: each triangle is
 * listed in every cell its box touches, and a query visits cells in rings of growing Chebyshev radius until the best
 * distance found is shorter than the next ring's inner wall. Distances to a surface, not to its vertices, so a coarse
 * mesh is not penalised for where its vertices happen to sit.
 */
import { pointTriangleDistanceSquared } from '../../geometry/pointTriangleDistance.js';

/** A triangle mesh bucketed on a grid (build with buildTriangleGrid; plain arrays, read-only once built). */
export interface TriangleGrid {
  positions: Float32Array;
  triangles: Uint32Array;
  /** lower corner of the grid */
  origin: [number, number, number];
  cell: number;
  dims: [number, number, number];
  /** cell c holds triangles members[start[c]] … members[start[c + 1] − 1]; #cells + 1 */
  start: Int32Array;
  members: Int32Array;
}

/** Cells per mean triangle edge: a few triangles per cell keep both the lists and the ring searches short. */
const CELL_PER_EDGE = 2;
/** Never more cells than this per triangle (a mesh of a few huge triangles), nor along one axis than MAX_DIM. */
const MAX_DIM = 512;

/**
 * buildTriangleGrid: positions Float32Array #V*3, triangles Uint32Array #T*3 (#T ≥ 1) → TriangleGrid.
 */
export function buildTriangleGrid(positions: Float32Array, triangles: Uint32Array): TriangleGrid {
  const T = triangles.length / 3;
  if (T < 1) throw new Error('buildTriangleGrid: the mesh has no triangles');
  const lo: [number, number, number] = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  let edgeSum = 0;
  for (let t = 0; t < T; t++) {
    for (let c = 0; c < 3; c++) {
      const v = triangles[3 * t + c] * 3, w = triangles[3 * t + ((c + 1) % 3)] * 3;
      for (let a = 0; a < 3; a++) { lo[a] = Math.min(lo[a], positions[v + a]); hi[a] = Math.max(hi[a], positions[v + a]); }
      edgeSum += Math.hypot(positions[v] - positions[w], positions[v + 1] - positions[w + 1], positions[v + 2] - positions[w + 2]);
    }
  }
  const extent = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e-9);
  const cell = Math.max(CELL_PER_EDGE * (edgeSum / (3 * T)), extent / MAX_DIM, 1e-9);
  const dims = [0, 1, 2].map((a) => Math.max(1, Math.floor((hi[a] - lo[a]) / cell) + 1)) as [number, number, number];
  const cellRange = (t: number): number[] => {
    const r: number[] = [];
    for (let a = 0; a < 3; a++) {
      let mn = Infinity, mx = -Infinity;
      for (let c = 0; c < 3; c++) { const x = positions[triangles[3 * t + c] * 3 + a]; mn = Math.min(mn, x); mx = Math.max(mx, x); }
      r.push(Math.min(dims[a] - 1, Math.floor((mn - lo[a]) / cell)), Math.min(dims[a] - 1, Math.floor((mx - lo[a]) / cell)));
    }
    return r;
  };
  const cellCount = dims[0] * dims[1] * dims[2];
  const start = new Int32Array(cellCount + 1);
  const visit = (r: number[], f: (c: number) => void) => {
    for (let k = r[4]; k <= r[5]; k++) for (let j = r[2]; j <= r[3]; j++) for (let i = r[0]; i <= r[1]; i++) f(i + dims[0] * (j + dims[1] * k));
  };
  for (let t = 0; t < T; t++) visit(cellRange(t), (c) => { start[c + 1]++; });
  for (let c = 0; c < cellCount; c++) start[c + 1] += start[c];
  const fill = start.slice(0, cellCount);
  const members = new Int32Array(start[cellCount]);
  for (let t = 0; t < T; t++) visit(cellRange(t), (c) => { members[fill[c]++] = t; });
  return { positions, triangles, origin: lo, cell, dims, start, members };
}

/**
 * surfaceDistances: the distance from each query point to the nearest point of the grid's triangles.
 * grid: TriangleGrid, queries: Float32Array #Q*3 → Float64Array #Q (m)
 */
export function surfaceDistances(grid: TriangleGrid, queries: Float32Array): Float64Array {
  const { positions: p, triangles: tri, origin, cell, dims, start, members } = grid;
  const Q = queries.length / 3;
  const out = new Float64Array(Q);
  // a triangle listed in several cells is tested once per query
  const seen = new Int32Array(tri.length / 3).fill(-1);
  const maxRing = Math.max(dims[0], dims[1], dims[2]);
  const [nx, ny, nz] = dims;
  for (let q = 0; q < Q; q++) {
    const x = queries[3 * q], y = queries[3 * q + 1], z = queries[3 * q + 2];
    const fx = Math.floor((x - origin[0]) / cell), fy = Math.floor((y - origin[1]) / cell), fz = Math.floor((z - origin[2]) / cell);
    // rings are centred on the query's cell clamped into the grid (a query outside is only further from ring r's cells)
    const ci = Math.min(nx - 1, Math.max(0, fx)), cj = Math.min(ny - 1, Math.max(0, fy)), ck = Math.min(nz - 1, Math.max(0, fz));
    let best = Infinity;
    for (let r = 0; r <= maxRing + 1; r++) {
      // every point of ring r is at least (r − 1)·cell away; once best is nearer, stop
      if (best < Infinity && r > 1 && ((r - 1) * cell) ** 2 > best) break;
      for (let dk = -r; dk <= r; dk++) {
        const k = ck + dk;
        if (k < 0 || k >= nz) continue;
        for (let dj = -r; dj <= r; dj++) {
          const j = cj + dj;
          if (j < 0 || j >= ny) continue;
          const onShell = dk === r || dk === -r || dj === r || dj === -r;
          const step = onShell || r === 0 ? 1 : 2 * r;
          for (let di = -r; di <= r; di += step) {
            const i = ci + di;
            if (i < 0 || i >= nx) continue;
            const cellId = i + nx * (j + ny * k);
            for (let m = start[cellId], end = start[cellId + 1]; m < end; m++) {
              const t = members[m];
              if (seen[t] === q) continue;
              seen[t] = q;
              const a = tri[3 * t] * 3, b = tri[3 * t + 1] * 3, e = tri[3 * t + 2] * 3;
              const d2 = pointTriangleDistanceSquared(x, y, z, p[a], p[a + 1], p[a + 2], p[b], p[b + 1], p[b + 2], p[e], p[e + 1], p[e + 2]);
              if (d2 < best) best = d2;
            }
          }
        }
      }
    }
    out[q] = Math.sqrt(best);
  }
  return out;
}
