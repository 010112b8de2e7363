import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../sidecar/data/seededRandom.js';
import { gridOverBox, rasterizeTriangles, type VoxelGrid } from '../sidecar/geometry/voxelGrid.js';

/**
 * The sampler rasterizeTriangles stands for, written out plainly: rows parallel to the longest edge, half a voxel
 * apart, each sampled every half voxel, every sample's voxel marked.
 */
function sampledVoxels(positions: Float32Array, triangles: Uint32Array, g: VoxelGrid): Uint8Array {
  const [nx, ny, nz] = g.dims;
  const occ = new Uint8Array(nx * ny * nz);
  const inv = 1 / g.size;
  const corner = (v: number) => [positions[3 * v], positions[3 * v + 1], positions[3 * v + 2]];
  const d2 = (p: number[], q: number[]) => (p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2;
  for (let t = 0; t < triangles.length; t += 3) {
    let [a, b, c] = [corner(triangles[t]), corner(triangles[t + 1]), corner(triangles[t + 2])];
    const ab = d2(a, b), bc = d2(b, c), ca = d2(c, a);
    if (!(ab >= bc && ab >= ca)) [a, b, c] = bc >= ca ? [b, c, a] : [c, a, b];
    const u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]], w = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    const cr = [u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]];
    const base = Math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    const height = base > 0 ? Math.sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]) / base : Math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    const rows = Math.max(1, Math.ceil(height * inv * 2));
    for (let q = 0; q <= rows; q++) {
      const f = q / rows;
      const p = [0, 1, 2].map((k) => a[k] + f * (c[k] - a[k])), r = [0, 1, 2].map((k) => b[k] + f * (c[k] - b[k]));
      const steps = Math.max(1, Math.ceil(Math.sqrt((r[0] - p[0]) ** 2 + (r[1] - p[1]) ** 2 + (r[2] - p[2]) ** 2) * inv * 2));
      for (let s = 0; s <= steps; s++) {
        const e = s / steps;
        const x = p[0] + e * (r[0] - p[0]), y = p[1] + e * (r[1] - p[1]), z = p[2] + e * (r[2] - p[2]);
        const i = Math.floor((x - g.origin[0]) * inv), j = Math.floor((y - g.origin[1]) * inv), k = Math.floor((z - g.origin[2]) * inv);
        if (i >= 0 && j >= 0 && k >= 0 && i < nx && j < ny && k < nz) occ[(k * ny + j) * nx + i] = 1;
      }
    }
  }
  return occ;
}

describe('rasterizeTriangles', () => {
  it('marks the voxels its samples fall in, no more and no fewer, with triangles inside one voxel and on its faces', () => {
    const random = new SeededRandom(4);
    const g = gridOverBox([0, 0, 0], [1, 1, 1], 40, 2);
    const positions: number[] = [];
    const triangles: number[] = [];
    const corner = (x: number, y: number, z: number) => { positions.push(x, y, z); return positions.length / 3 - 1; };
    let inOne = 0;
    for (let n = 0; n < 6000; n++) {
      // a centre, often snapped onto a voxel face or a hair beside it, and a triangle from a tenth of a voxel to three
      const centre = [random.next(), random.next(), random.next()].map((x) => {
        const r = random.next();
        const face = Math.round((x - g.origin[0]) / g.size) * g.size + g.origin[0];
        return r < 0.2 ? face : r < 0.3 ? face + (random.next() - 0.5) * 1e-7 : x;
      });
      const size = g.size * (0.1 + 3 * random.next() ** 3);
      const v = [0, 1, 2].map(() => corner(...(centre.map((x) => x + (random.next() - 0.5) * size) as [number, number, number])));
      triangles.push(...v);
      const cell = (k: number) => v.map((c) => Math.floor((positions[3 * c + k] - g.origin[k]) / g.size));
      if ([0, 1, 2].every((k) => new Set(cell(k)).size === 1)) inOne++;
    }
    const P = Float32Array.from(positions), T = Uint32Array.from(triangles);
    const marked = rasterizeTriangles(P, T, g);
    const reference = sampledVoxels(P, T, g);
    expect(inOne).toBeGreaterThan(500);
    let differ = 0;
    for (let v = 0; v < marked.length; v++) if (marked[v] !== reference[v]) differ++;
    expect(differ).toBe(0);
    expect(marked.reduce((s, x) => s + x, 0)).toBeGreaterThan(5000);
  });
});
