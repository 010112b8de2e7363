/**
 * Surface nets: a triangle mesh of the zero set of a signed distance function sampled on a regular grid.
 * One vertex per grid cell the surface crosses (the mean of its edge crossings, then pulled onto the surface along the
 * gradient), one quad per grid edge the surface crosses (joining the four cells around that edge). Unlike marching
 * cubes it needs no case tables. Negative values are inside; the outward side of every triangle is where f grows.
 */
import { projectOntoField } from '../geometry/projectOntoField.js';
import type { Vec3 } from '../types.js';

export type DistanceField = (x: number, y: number, z: number) => number;

export interface SurfaceNetsGrid {
  /** lower corner of the grid; the field must be positive on the grid's boundary */
  min: Vec3;
  /** cell edge length */
  cell: number;
  /** number of cells along x, y, z */
  cells: [number, number, number];
}

/** surfaceNets: f, grid → positions #V*3 (ordered by cell, x fastest) and triangles #T*3 facing outwards. */
export function surfaceNets(f: DistanceField, grid: SurfaceNetsGrid): { positions: Float32Array; triangles: Uint32Array } {
  const [nx, ny, nz] = grid.cells;
  const { min, cell } = grid;
  const px = nx + 1;
  const py = ny + 1;
  const pz = nz + 1;
  const values = new Float64Array(px * py * pz);
  const at = (i: number, j: number, k: number) => i + px * (j + py * k);
  for (let k = 0; k < pz; k++) for (let j = 0; j < py; j++) for (let i = 0; i < px; i++) values[at(i, j, k)] = f(min[0] + i * cell, min[1] + j * cell, min[2] + k * cell);

  const vertexOfCell = new Int32Array(nx * ny * nz).fill(-1);
  const cellIndex = (i: number, j: number, k: number) => i + nx * (j + ny * k);
  const positions: number[] = [];
  const corners: Vec3[] = [];
  for (let c = 0; c < 8; c++) corners.push([c & 1, (c >> 1) & 1, (c >> 2) & 1]);
  const edges: [number, number][] = [];
  for (let a = 0; a < 8; a++) for (let b = a + 1; b < 8; b++) if ([0, 1, 2].filter((d) => corners[a][d] !== corners[b][d]).length === 1) edges.push([a, b]);

  const v = new Float64Array(8);
  for (let k = 0; k < nz; k++) {
    for (let j = 0; j < ny; j++) {
      for (let i = 0; i < nx; i++) {
        let inside = 0;
        for (let c = 0; c < 8; c++) {
          v[c] = values[at(i + corners[c][0], j + corners[c][1], k + corners[c][2])];
          if (v[c] < 0) inside++;
        }
        if (inside === 0 || inside === 8) continue;
        let sx = 0, sy = 0, sz = 0, n = 0;
        for (const [a, b] of edges) {
          if (v[a] < 0 === v[b] < 0) continue;
          const t = v[a] / (v[a] - v[b]);
          sx += corners[a][0] + t * (corners[b][0] - corners[a][0]);
          sy += corners[a][1] + t * (corners[b][1] - corners[a][1]);
          sz += corners[a][2] + t * (corners[b][2] - corners[a][2]);
          n++;
        }
        const p = projectOntoField(f, [min[0] + (i + sx / n) * cell, min[1] + (j + sy / n) * cell, min[2] + (k + sz / n) * cell], cell);
        vertexOfCell[cellIndex(i, j, k)] = positions.length / 3;
        positions.push(...p);
      }
    }
  }

  const triangles: number[] = [];
  type Quad = [number, number, number, number];
  const emitQuad = (q: Quad, outwardPositive: boolean) => {
    const [a, b, c, d] = outwardPositive ? q : [q[3], q[2], q[1], q[0]];
    // Split along the shorter diagonal: fewer slivers.
    const ac = distance2(positions, a, c);
    const bd = distance2(positions, b, d);
    if (ac <= bd) triangles.push(a, b, c, a, c, d);
    else triangles.push(a, b, d, b, c, d);
  };
  for (let k = 0; k < pz; k++) {
    for (let j = 0; j < py; j++) {
      for (let i = 0; i < px; i++) {
        const here = values[at(i, j, k)] < 0;
        // edge along x: the four cells around it vary in (j, k); quad order y then z has normal +x
        if (i < nx && j > 0 && k > 0 && j < ny && k < nz && here !== values[at(i + 1, j, k)] < 0) {
          emitQuad([cellIndex(i, j - 1, k - 1), cellIndex(i, j, k - 1), cellIndex(i, j, k), cellIndex(i, j - 1, k)].map((c) => vertexOfCell[c]) as Quad, here);
        }
        // edge along y: cells vary in (k, i); order z then x has normal +y
        if (j < ny && i > 0 && k > 0 && i < nx && k < nz && here !== values[at(i, j + 1, k)] < 0) {
          emitQuad([cellIndex(i - 1, j, k - 1), cellIndex(i - 1, j, k), cellIndex(i, j, k), cellIndex(i, j, k - 1)].map((c) => vertexOfCell[c]) as Quad, here);
        }
        // edge along z: cells vary in (i, j); order x then y has normal +z
        if (k < nz && i > 0 && j > 0 && i < nx && j < ny && here !== values[at(i, j, k + 1)] < 0) {
          emitQuad([cellIndex(i - 1, j - 1, k), cellIndex(i, j - 1, k), cellIndex(i, j, k), cellIndex(i - 1, j, k)].map((c) => vertexOfCell[c]) as Quad, here);
        }
      }
    }
  }
  return { positions: Float32Array.from(positions), triangles: Uint32Array.from(triangles) };
}

function distance2(positions: number[], a: number, b: number): number {
  const dx = positions[a * 3] - positions[b * 3];
  const dy = positions[a * 3 + 1] - positions[b * 3 + 1];
  const dz = positions[a * 3 + 2] - positions[b * 3 + 2];
  return dx * dx + dy * dy + dz * dz;
}
