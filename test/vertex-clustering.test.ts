/**
 * The reduced copy by vertex clustering (sidecar/mesh/vertexClustering.ts) and the carry of weights back from it
 * (sidecar/skinning/carryClusterWeights.ts).
 */
import { describe, expect, it } from 'vitest';
import { clusterVertices, type ClusterGrid } from '../sidecar/mesh/vertexClustering.js';
import { carryClusterWeights } from '../sidecar/skinning/carryClusterWeights.js';

/** A flat sheet of n×n quads over [0, 1]² at height z, two triangles each: positions #(n+1)²*3, triangles #2n²*3 */
function sheet(n: number, z = 0, flip = false): { positions: Float32Array; triangles: Uint32Array } {
  const positions = new Float32Array((n + 1) * (n + 1) * 3);
  for (let j = 0; j <= n; j++) for (let i = 0; i <= n; i++) positions.set([i / n, j / n, z], 3 * (j * (n + 1) + i));
  const triangles: number[] = [];
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < n; i++) {
      const a = j * (n + 1) + i, b = a + 1, c = a + n + 1, d = c + 1;
      if (flip) triangles.push(a, c, b, b, c, d);
      else triangles.push(a, b, c, b, d, c);
    }
  }
  return { positions, triangles: Uint32Array.from(triangles) };
}

/** Two sheets as one mesh: the second's vertices after the first's. */
function joined(a: ReturnType<typeof sheet>, b: ReturnType<typeof sheet>): ReturnType<typeof sheet> {
  const nv = a.positions.length / 3;
  const positions = new Float32Array(a.positions.length + b.positions.length);
  positions.set(a.positions);
  positions.set(b.positions, a.positions.length);
  const triangles = new Uint32Array(a.triangles.length + b.triangles.length);
  triangles.set(a.triangles);
  triangles.set(b.triangles.map((v) => v + nv), a.triangles.length);
  return { positions, triangles };
}

const GRID: ClusterGrid = { origin: [-0.001, -0.001, -0.001], cell: 0.1 };

describe('clusterVertices', () => {
  it('merges a fine sheet into one vertex per cell at its vertices\' mean, and keeps a sheet of triangles over them', () => {
    const { positions, triangles } = sheet(60);
    const c = clusterVertices(positions, triangles, GRID, new Int32Array(positions.length / 3));
    // 61 vertices along a side fall into 11 cells (the last row of vertices, at 1.0, into the 11th)
    expect(c.positions.length / 3).toBe(11 * 11);
    for (let v = 0; v < positions.length / 3; v++) {
      const k = c.clusterOf[v];
      // every vertex's cluster lies in its own cell
      for (let a = 0; a < 2; a++) {
        const cellOf = (x: number) => Math.floor((x - GRID.origin[a]) / GRID.cell);
        expect(cellOf(c.positions[3 * k + a])).toBe(cellOf(positions[3 * v + a]));
      }
    }
    // no triangle is collapsed or repeated, and every cluster is used
    const seen = new Set<string>();
    const used = new Set<number>();
    for (let t = 0; t < c.triangles.length; t += 3) {
      const [a, b, d] = c.triangles.subarray(t, t + 3);
      expect(a !== b && b !== d && a !== d).toBe(true);
      const key = [a, b, d].join(',');
      expect(seen.has(key)).toBe(false);
      seen.add(key);
      used.add(a).add(b).add(d);
    }
    expect(used.size).toBe(11 * 11);
    // the copy covers the sheet: its triangles' area is the sheet's but for the half cells at its border
    let area = 0;
    for (let t = 0; t < c.triangles.length; t += 3) {
      const [a, b, d] = [c.triangles[t], c.triangles[t + 1], c.triangles[t + 2]].map((i) => c.positions.subarray(3 * i, 3 * i + 3));
      area += Math.abs((b[0] - a[0]) * (d[1] - a[1]) - (b[1] - a[1]) * (d[0] - a[0])) / 2;
    }
    expect(area).toBeGreaterThan(0.8);
    expect(area).toBeLessThan(1.01);
  });

  it('never merges vertices of different groups, even in one cell: two sheets 1 mm apart stay two', () => {
    const both = joined(sheet(30, 0.5), sheet(30, 0.501, true));
    const nv = both.positions.length / 3;
    const one = clusterVertices(both.positions, both.triangles, GRID, new Int32Array(nv));
    const groups = new Int32Array(nv);
    groups.fill(1, nv / 2);
    const two = clusterVertices(both.positions, both.triangles, GRID, groups);
    expect(one.positions.length / 3).toBe(11 * 11);
    expect(two.positions.length / 3).toBe(2 * 11 * 11);
    for (let v = 0; v < nv; v++) expect(two.groupOfCluster[two.clusterOf[v]]).toBe(groups[v]);
    // merged into one group, the sheets' opposite windings both stay (two sides); same windings are kept once
    expect(one.triangles.length).toBe(two.triangles.length);
  });
});

describe('carryClusterWeights', () => {
  it('carries a smooth field back smoothly: a weight ramp across the sheet, rows summing to one', () => {
    const { positions, triangles } = sheet(60);
    const nv = positions.length / 3;
    const groups = new Int32Array(nv);
    const c = clusterVertices(positions, triangles, GRID, groups);
    const clusters = c.positions.length / 3;
    // bone 1's weight rises with x across the sheet, bone 0 takes the rest: computed at the clusters
    const ramp = (x: number) => Math.min(1, Math.max(0, x));
    const k = 2;
    const indices = new Uint16Array(clusters * k);
    const weights = new Float32Array(clusters * k);
    for (let i = 0; i < clusters; i++) {
      indices.set([0, 1], k * i);
      weights.set([1 - ramp(c.positions[3 * i]), ramp(c.positions[3 * i])], k * i);
    }
    const carried = carryClusterWeights(positions, groups, GRID, c, { indices, weights }, k, 2);
    let worst = 0, worstStep = 0;
    for (let v = 0; v < nv; v++) {
      let w1 = 0, sum = 0;
      for (let m = 0; m < k; m++) {
        sum += carried.weights[k * v + m];
        if (carried.indices[k * v + m] === 1) w1 += carried.weights[k * v + m];
      }
      expect(sum).toBeCloseTo(1, 5);
      const x = positions[3 * v];
      // inside the sheet (half a cell from its border, where the cell centres run out), the carry follows the ramp
      if (x > 0.05 && x < 0.95) worst = Math.max(worst, Math.abs(w1 - ramp(x)));
      // and the step between neighbouring vertices stays a fraction of a cell's change (0.1)
      if (v % 61 !== 60) {
        const next = carried.indices[k * (v + 1)] === 1 ? carried.weights[k * (v + 1)] : carried.weights[k * (v + 1) + 1];
        worstStep = Math.max(worstStep, Math.abs(next - w1));
      }
    }
    // the cell-constant carry (each vertex its cluster's weights) errs up to half a cell's change, 0.05, in steps of 0.1
    expect(worst).toBeLessThan(0.02);
    expect(worstStep).toBeLessThan(0.04);
  });

  it('blends only clusters of the vertex\'s own group', () => {
    const both = joined(sheet(30, 0.5), sheet(30, 0.501, true));
    const nv = both.positions.length / 3;
    const groups = new Int32Array(nv);
    groups.fill(1, nv / 2);
    const c = clusterVertices(both.positions, both.triangles, GRID, groups);
    const clusters = c.positions.length / 3;
    // each group's clusters weigh their own bone alone: 0 for the lower sheet, 1 for the upper
    const indices = new Uint16Array(clusters);
    const weights = new Float32Array(clusters).fill(1);
    for (let i = 0; i < clusters; i++) indices[i] = c.groupOfCluster[i];
    const carried = carryClusterWeights(both.positions, groups, GRID, c, { indices, weights }, 1, 2);
    for (let v = 0; v < nv; v++) {
      expect(carried.indices[v]).toBe(groups[v]);
      expect(carried.weights[v]).toBe(1);
    }
  });
});
