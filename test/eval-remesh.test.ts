import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import { remeshVolume } from '../sidecar/eval/remeshVolume.js';
import { transferWeightsByClosestPoint } from '../sidecar/eval/transferWeights.js';
import { surfaceNets } from '../sidecar/cli/surfaceNets.js';
import { loadCharacter } from '../sidecar/io/character.js';
import type { MeshPart, PartWeights } from '../sidecar/types.js';
import { boxMesh } from './fixtures/boxMesh.js';

/** A closed UV sphere wound outwards: positions #V*3, triangles #T*3. */
function uvSphere(radius: number, rings: number, segments: number): MeshPart {
  const positions: number[] = [0, 0, radius];
  for (let r = 1; r < rings; r++) {
    const theta = (Math.PI * r) / rings;
    for (let s = 0; s < segments; s++) {
      const phi = (2 * Math.PI * s) / segments;
      positions.push(radius * Math.sin(theta) * Math.cos(phi), radius * Math.sin(theta) * Math.sin(phi), radius * Math.cos(theta));
    }
  }
  positions.push(0, 0, -radius);
  const south = positions.length / 3 - 1;
  const ring = (r: number, s: number) => 1 + (r - 1) * segments + (s % segments);
  const triangles: number[] = [];
  for (let s = 0; s < segments; s++) {
    triangles.push(0, ring(1, s), ring(1, s + 1));
    triangles.push(south, ring(rings - 1, s + 1), ring(rings - 1, s));
    for (let r = 1; r < rings - 1; r++) {
      triangles.push(ring(r, s), ring(r + 1, s), ring(r + 1, s + 1), ring(r, s), ring(r + 1, s + 1), ring(r, s + 1));
    }
  }
  return { name: 'sphere', positions: Float32Array.from(positions), triangles: Uint32Array.from(triangles) };
}

/** Number of triangles on each undirected edge, and whether every directed edge appears once (consistent winding). */
function edgeUse(triangles: Uint32Array): { counts: number[]; consistent: boolean } {
  const undirected = new Map<string, number>();
  const directed = new Set<string>();
  let consistent = true;
  for (let t = 0; t < triangles.length; t += 3) {
    for (let e = 0; e < 3; e++) {
      const a = triangles[t + e], b = triangles[t + ((e + 1) % 3)];
      const key = a < b ? `${a},${b}` : `${b},${a}`;
      undirected.set(key, (undirected.get(key) ?? 0) + 1);
      if (directed.has(`${a},${b}`)) consistent = false;
      directed.add(`${a},${b}`);
    }
  }
  return { counts: [...undirected.values()], consistent };
}

function signedVolume(positions: Float32Array, triangles: Uint32Array): number {
  let volume = 0;
  for (let t = 0; t < triangles.length; t += 3) {
    const [a, b, c] = [triangles[t] * 3, triangles[t + 1] * 3, triangles[t + 2] * 3];
    volume += (positions[a] * (positions[b + 1] * positions[c + 2] - positions[b + 2] * positions[c + 1])
      - positions[a + 1] * (positions[b] * positions[c + 2] - positions[b + 2] * positions[c])
      + positions[a + 2] * (positions[b] * positions[c + 1] - positions[b + 1] * positions[c])) / 6;
  }
  return volume;
}

function triangleAreas(positions: Float32Array | number[], triangles: Uint32Array | number[]): number[] {
  const areas: number[] = [];
  for (let t = 0; t < triangles.length; t += 3) {
    const [a, b, c] = [triangles[t] * 3, triangles[t + 1] * 3, triangles[t + 2] * 3];
    const u = [0, 1, 2].map((x) => positions[b + x] - positions[a + x]);
    const v = [0, 1, 2].map((x) => positions[c + x] - positions[a + x]);
    areas.push(Math.hypot(u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]) / 2);
  }
  return areas;
}

/** Standard deviation over mean of the triangles' edge lengths (each edge once per triangle). */
function edgeLengthVariation(positions: Float32Array | number[], triangles: Uint32Array | number[]): number {
  let sum = 0, sum2 = 0, n = 0;
  for (let t = 0; t < triangles.length; t += 3) {
    for (let e = 0; e < 3; e++) {
      const a = triangles[t + e] * 3, b = triangles[t + ((e + 1) % 3)] * 3;
      const l = Math.hypot(positions[a] - positions[b], positions[a + 1] - positions[b + 1], positions[a + 2] - positions[b + 2]);
      sum += l; sum2 += l * l; n++;
    }
  }
  const mean = sum / n;
  return Math.sqrt(sum2 / n - mean * mean) / mean;
}

/** Distance from p to the surface of the box [lo, hi]. */
function distanceToBoxSurface(p: number[], lo: number[], hi: number[]): number {
  const outside = Math.hypot(...[0, 1, 2].map((a) => Math.max(lo[a] - p[a], 0, p[a] - hi[a])));
  if (outside > 0) return outside;
  return Math.min(...[0, 1, 2].map((a) => Math.min(p[a] - lo[a], hi[a] - p[a])));
}

describe('remeshVolume', () => {
  const sphere = uvSphere(1, 96, 192);
  const remeshed = remeshVolume([sphere], 20000, 7);

  it('lands within 15% of the requested vertex count', () => {
    const vertices = remeshed.positions.length / 3;
    expect(Math.abs(vertices - 20000) / 20000).toBeLessThan(0.15);
  });

  it('gives a closed surface wound outwards around the sphere’s volume', () => {
    const { counts, consistent } = edgeUse(remeshed.triangles);
    expect(counts.every((c) => c === 2)).toBe(true);
    expect(consistent).toBe(true);
    const volume = signedVolume(remeshed.positions, remeshed.triangles);
    // the surface sits under a voxel outside the source: at most (1 + h)³ of the ball's volume
    expect(volume).toBeGreaterThan((4 / 3) * Math.PI);
    expect(volume).toBeLessThan((4 / 3) * Math.PI * (1 + remeshed.voxelSize) ** 3);
    expect(Math.min(...triangleAreas(remeshed.positions, remeshed.triangles))).toBeGreaterThan(1e-4 * remeshed.voxelSize ** 2);
  });

  it('keeps every vertex within one voxel of the source surface', () => {
    let worst = 0;
    for (let v = 0; v < remeshed.positions.length; v += 3) {
      worst = Math.max(worst, Math.abs(Math.hypot(remeshed.positions[v], remeshed.positions[v + 1], remeshed.positions[v + 2]) - 1));
    }
    expect(remeshed.voxelSize).toBeGreaterThan(0.01);
    expect(remeshed.voxelSize).toBeLessThan(0.1);
    expect(worst).toBeLessThan(remeshed.voxelSize);
  });

  it('is deterministic for a seed and differs for another', () => {
    const again = remeshVolume([sphere], 20000, 7);
    expect(again.positions).toEqual(remeshed.positions);
    expect(again.triangles).toEqual(remeshed.triangles);
    const other = remeshVolume([sphere], 20000, 8);
    const same = other.positions.length === remeshed.positions.length && other.positions.every((x, i) => x === remeshed.positions[i]);
    expect(same).toBe(false);
  });

  it('triangulates more irregularly than plain surface nets at the same voxel size', () => {
    const h = remeshed.voxelSize;
    const cells = Math.ceil(2.4 / h);
    const plain = surfaceNets((x, y, z) => Math.hypot(x, y, z) - 1, { min: [-1.2, -1.2, -1.2], cell: h, cells: [cells, cells, cells] });
    const plainVariation = edgeLengthVariation(plain.positions, plain.triangles);
    const ourVariation = edgeLengthVariation(remeshed.positions, remeshed.triangles);
    // measured: 0.39 against 0.25 (seeds 7, 8, 9)
    expect(ourVariation).toBeGreaterThan(plainVariation * 1.4);
  });

  it('remeshes a box made of triangles, and an open box as a closed shell', () => {
    const lo = [-0.5, -0.3, -0.2], hi = [0.5, 0.3, 0.2];
    for (const openTop of [false, true]) {
      const box = remeshVolume([boxMesh('box', lo, hi, 6, openTop)], 20000, 3);
      const vertices = box.positions.length / 3;
      expect(Math.abs(vertices - 20000) / 20000).toBeLessThan(0.15);
      const { counts, consistent } = edgeUse(box.triangles);
      expect(counts.every((c) => c === 2)).toBe(true);
      expect(consistent).toBe(true);
      let worst = 0;
      for (let v = 0; v < box.positions.length; v += 3) worst = Math.max(worst, distanceToBoxSurface([box.positions[v], box.positions[v + 1], box.positions[v + 2]], lo, hi));
      // surface nets rounds the open box's inner (concave) corners, which pushes a few vertices past one voxel there
      expect(worst).toBeLessThan((openTop ? 1.5 : 1) * box.voxelSize);
      const volume = signedVolume(box.positions, box.triangles);
      if (!openTop) {
        // at most the box grown by a voxel on every side
        const h = box.voxelSize;
        expect(volume).toBeGreaterThan(0.24);
        expect(volume).toBeLessThan((1 + 2 * h) * (0.6 + 2 * h) * (0.4 + 2 * h));
      } else {
        // the open box is a thin shell around its five walls: positive, far smaller than the box
        expect(volume).toBeGreaterThan(0);
        expect(volume).toBeLessThan(0.24 * 0.5);
      }
    }
  });

  it('refuses a target below 100 vertices', () => {
    expect(() => remeshVolume([sphere], 50, 1)).toThrow(/target vertex count/);
  });
});

describe('transferWeightsByClosestPoint', () => {
  // a bar along x from -1 to 1 in two parts; bone 0 on the left, bone 1 on the right, a linear blend over |x| < 0.2
  const blend = (x: number) => Math.min(Math.max((x + 0.2) / 0.4, 0), 1);
  const barPart = (name: string, x0: number, x1: number): MeshPart => {
    // vertices on the blend's kinks (x = ±0.2) so that interpolation within each triangle is exact
    const xs = [x0, -0.2, 0, 0.2, x1].filter((x, i, all) => x >= x0 && x <= x1 && all.indexOf(x) === i).sort((a, b) => a - b);
    const positions: number[] = [];
    const triangles: number[] = [];
    const ys = [-0.1, 0.1], zs = [-0.1, 0.1];
    for (const x of xs) for (const z of zs) for (const y of ys) positions.push(x, y, z);
    const at = (xi: number, yi: number, zi: number) => xi * 4 + zi * 2 + yi;
    const ring = [[0, 0], [1, 0], [1, 1], [0, 1]];
    for (let xi = 0; xi + 1 < xs.length; xi++) {
      for (let r = 0; r < 4; r++) {
        const [y0, z0] = ring[r], [y1, z1] = ring[(r + 1) % 4];
        triangles.push(at(xi, y0, z0), at(xi, y1, z1), at(xi + 1, y1, z1), at(xi, y0, z0), at(xi + 1, y1, z1), at(xi + 1, y0, z0));
      }
    }
    for (const xi of [0, xs.length - 1]) triangles.push(at(xi, 0, 0), at(xi, 1, 0), at(xi, 1, 1), at(xi, 0, 0), at(xi, 1, 1), at(xi, 0, 1));
    return { name, positions: Float32Array.from(positions), triangles: Uint32Array.from(triangles) };
  };
  const weightsOf = (part: MeshPart, rightFirst: boolean): PartWeights => {
    const count = part.positions.length / 3;
    const indices = new Uint16Array(count * 4);
    const weights = new Float32Array(count * 4);
    for (let v = 0; v < count; v++) {
      const right = blend(part.positions[v * 3]);
      // the two parts list their influences in different orders, with unused slots pointing at other bones
      if (rightFirst) { indices.set([1, 0, 2, 3], v * 4); weights.set([right, 1 - right, 0, 0], v * 4); }
      else { indices.set([0, 1, 3, 2], v * 4); weights.set([1 - right, right, 0, 0], v * 4); }
    }
    return { name: part.name, influences: 4, indices, weights };
  };
  const left = barPart('left', -1, 0);
  const right = barPart('right', 0, 1);
  const source = { parts: [left, right], weights: [weightsOf(left, false), weightsOf(right, true)] };

  it('interpolates the corner weights at the closest point', () => {
    const points = [
      [-0.9, 0.05, 0.3], // above the left end: all bone 0
      [-0.1, 0.3, 0.0], // beside the blend: 25% bone 1
      [0.05, -0.02, -0.4], // under the blend: 62.5% bone 1
      [0.15, 0.0, 0.0], // inside the bar, nearest the ±y/±z walls at x = 0.15: 87.5% bone 1
      [1.5, 0.2, 0.0], // past the right end: all bone 1
    ];
    const expected = [0, 0.25, 0.625, 0.875, 1];
    const result = transferWeightsByClosestPoint(source, Float32Array.from(points.flat()));
    expect(result.indices.length).toBe(points.length * 4);
    points.forEach((_, v) => {
      let bone1 = 0, total = 0;
      for (let s = 0; s < 4; s++) {
        const w = result.weights[v * 4 + s];
        total += w;
        if (result.indices[v * 4 + s] === 1) bone1 += w;
        else if (w > 0) expect(result.indices[v * 4 + s]).toBe(0);
      }
      expect(total).toBeCloseTo(1, 5);
      expect(Math.abs(bone1 - expected[v])).toBeLessThan(1e-3);
    });
  });

  it('refuses weights that do not match the parts', () => {
    expect(() => transferWeightsByClosestPoint({ parts: [left, right], weights: [weightsOf(left, false)] }, new Float32Array(3))).toThrow(/one weight table per part/);
  });
});

const ELY = '../shared/data/characters/mixamo_ely.glb';

describe.skipIf(!existsSync(ELY))('a real character remeshed', () => {
  it('remeshes mixamo_ely to ~50k vertices and carries the artist weights over', async () => {
    const character = await loadCharacter(ELY);
    const remesh = remeshVolume(character.parts, 50000, 1);
    const vertices = remesh.positions.length / 3;
    expect(Math.abs(vertices - 50000) / 50000).toBeLessThan(0.15);
    const { counts, consistent } = edgeUse(remesh.triangles);
    expect(counts.filter((c) => c !== 2).length).toBe(0);
    expect(consistent).toBe(true);
    expect(signedVolume(remesh.positions, remesh.triangles)).toBeGreaterThan(0);
    const rig = character.rig!;
    const weights: PartWeights[] = character.parts.map((part, p) => {
      const skin = rig.skins[p];
      const count = part.positions.length / 3;
      return { name: part.name, influences: 4, indices: skin?.indices ?? new Uint16Array(count * 4), weights: skin?.weights ?? new Float32Array(count * 4) };
    });
    const transferred = transferWeightsByClosestPoint({ parts: character.parts, weights }, remesh.positions);
    for (let v = 0; v < vertices; v++) {
      const sum = transferred.weights[v * 4] + transferred.weights[v * 4 + 1] + transferred.weights[v * 4 + 2] + transferred.weights[v * 4 + 3];
      expect(Math.abs(sum - 1)).toBeLessThan(1e-5);
      for (let s = 0; s < 4; s++) expect(transferred.indices[v * 4 + s]).toBeLessThan(rig.joints.length);
    }
  }, 60000);
});
