import { describe, expect, it } from 'vitest';
import { Triangle, Vector3 } from 'three';
import { buildWindingNumberTree, closestDistances, exactWindingNumbers, triangleDistance2, triangleSolidAngle, windingNumbers } from '../sidecar/geometry/windingNumber.js';
import { SeededRandom } from '../sidecar/data/seededRandom.js';
import { icosphere, type Soup } from './fixtures/icosphere.js';


/** Turns every triangle so that its normal points away from `inward(centroid)` (a point on its inside). */
function orientOutward(positions: number[], triangles: number[], inward: (c: number[]) => number[]): Soup {
  for (let t = 0; t < triangles.length; t += 3) {
    const [a, b, c] = [triangles[t], triangles[t + 1], triangles[t + 2]].map((v) => positions.slice(v * 3, v * 3 + 3));
    const u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]], v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    const n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    const centroid = [0, 1, 2].map((k) => (a[k] + b[k] + c[k]) / 3);
    const inside = inward(centroid);
    const out = [0, 1, 2].map((k) => centroid[k] - inside[k]);
    if (n[0] * out[0] + n[1] * out[1] + n[2] * out[2] < 0) [triangles[t + 1], triangles[t + 2]] = [triangles[t + 2], triangles[t + 1]];
  }
  return { positions: Float32Array.from(positions), triangles: Uint32Array.from(triangles) };
}

/** A torus around the y axis: ring radius R, tube radius r, nu × nv quads, outward. */
function torus(R: number, r: number, nu: number, nv: number): Soup {
  const positions: number[] = [];
  const triangles: number[] = [];
  for (let i = 0; i < nu; i++) {
    for (let j = 0; j < nv; j++) {
      const u = (2 * Math.PI * i) / nu, v = (2 * Math.PI * j) / nv;
      positions.push((R + r * Math.cos(v)) * Math.cos(u), r * Math.sin(v), (R + r * Math.cos(v)) * Math.sin(u));
      const a = i * nv + j, b = ((i + 1) % nu) * nv + j, c = ((i + 1) % nu) * nv + ((j + 1) % nv), d = i * nv + ((j + 1) % nv);
      triangles.push(a, b, c, a, c, d);
    }
  }
  return orientOutward(positions, triangles, (c) => { const l = Math.hypot(c[0], c[2]); return [(R * c[0]) / l, 0, (R * c[2]) / l]; });
}

/** An open tube (no caps) around the y axis: radius R, from y = −h to y = h, n sides, normals pointing away from the axis. */
function openTube(R: number, h: number, n: number): Soup {
  const positions: number[] = [];
  const triangles: number[] = [];
  for (let i = 0; i < n; i++) {
    const u = (2 * Math.PI * i) / n;
    positions.push(R * Math.cos(u), -h, R * Math.sin(u), R * Math.cos(u), h, R * Math.sin(u));
    const a = 2 * i, b = 2 * i + 1, c = 2 * ((i + 1) % n) + 1, d = 2 * ((i + 1) % n);
    triangles.push(a, b, c, a, c, d);
  }
  return orientOutward(positions, triangles, (c) => [0, c[1], 0]);
}

/** count random points, uniform in the cube [−extent, extent]³: Float32Array #count*3. */
function randomQueries(count: number, extent: number, seed: number): Float32Array {
  const random = new SeededRandom(seed);
  const queries = new Float32Array(count * 3);
  for (let i = 0; i < count * 3; i++) queries[i] = random.range(-extent, extent);
  return queries;
}

/** Queries close to the triangles: random triangle centroids pushed off by up to `offset` along a random direction. */
function nearSurfaceQueries(soup: Soup, count: number, offset: number, seed: number): Float32Array {
  const random = new SeededRandom(seed);
  const queries = new Float32Array(count * 3);
  const triangleCount = soup.triangles.length / 3;
  for (let i = 0; i < count; i++) {
    const t = random.int(0, triangleCount - 1);
    for (let k = 0; k < 3; k++) {
      let c = 0;
      for (let corner = 0; corner < 3; corner++) c += soup.positions[soup.triangles[t * 3 + corner] * 3 + k] / 3;
      queries[i * 3 + k] = c + random.range(-offset, offset);
    }
  }
  return queries;
}

function maxDifference(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

function concat(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

describe('triangleSolidAngle', () => {
  it('gives an octant (π/2) for the triangle cutting the positive axes seen from the origin, with the sign of its side', () => {
    const corners = new Float64Array([1, 0, 0, 0, 1, 0, 0, 0, 1]);
    expect(triangleSolidAngle(corners, 0, 0, 0, 0)).toBeCloseTo(Math.PI / 2, 12);
    const flipped = new Float64Array([1, 0, 0, 0, 0, 1, 0, 1, 0]);
    expect(triangleSolidAngle(flipped, 0, 0, 0, 0)).toBeCloseTo(-Math.PI / 2, 12);
  });
});

describe('exact winding numbers', () => {
  it('are 1 inside a closed outward sphere and 0 outside', () => {
    const sphere = icosphere(2);
    const w = exactWindingNumbers(sphere.positions, sphere.triangles, new Float32Array([0, 0, 0, 0.5, -0.3, 0.2, 2, 0, 0, 0, -1.5, 1]));
    expect(w[0]).toBeCloseTo(1, 6);
    expect(w[1]).toBeCloseTo(1, 6);
    expect(w[2]).toBeCloseTo(0, 6);
    expect(w[3]).toBeCloseTo(0, 6);
  });

  it('give an open tube its share of the view: h/√(h²+R²) at its centre', () => {
    for (const [R, h] of [[1, 1.5], [1, 0.2]]) {
      const tube = openTube(R, h, 128);
      const [w] = exactWindingNumbers(tube.positions, tube.triangles, new Float32Array([0, 0, 0]));
      // the polygon (128 sides) falls short of the circle by a relative ~(π/128)²/2 in the caps it leaves open
      expect(w).toBeCloseTo(h / Math.hypot(h, R), 3);
    }
  });
});

describe('fast winding numbers (tree)', () => {
  const cases: [string, Soup, number][] = [
    ['a closed icosphere', icosphere(3), 1.6],
    ['a torus', torus(1, 0.35, 64, 24), 1.6],
  ];
  for (const [name, soup, extent] of cases) {
    it(`agree with the exact sum within 0.02 on random queries around ${name}`, () => {
      const queries = concat(randomQueries(1500, extent, 11), nearSurfaceQueries(soup, 1500, 0.05, 12));
      const exact = exactWindingNumbers(soup.positions, soup.triangles, queries);
      const tree = buildWindingNumberTree(soup.positions, soup.triangles);
      const fast = windingNumbers(tree, queries);
      expect(maxDifference(fast, exact)).toBeLessThan(0.02);
      // the test is not vacuous: both sides of the surface are queried
      const inside = Array.from(exact).filter((w) => w > 0.5).length;
      expect(inside).toBeGreaterThan(200);
      expect(queries.length / 3 - inside).toBeGreaterThan(200);
    });
  }

  it('read ≈1 inside and ≈0 outside a sphere, −1 inside the same sphere turned inside out', () => {
    const sphere = icosphere(3);
    const queries = new Float32Array([0, 0, 0, 0.9, 0, 0, 0, -0.6, 0.6, 1.1, 0, 0, 3, 3, 3, 0, 0, -1.05]);
    const w = windingNumbers(buildWindingNumberTree(sphere.positions, sphere.triangles), queries);
    expect(Array.from(w.subarray(0, 3)).every((x) => Math.abs(x - 1) < 0.01)).toBe(true);
    expect(Array.from(w.subarray(3)).every((x) => Math.abs(x) < 0.01)).toBe(true);
    const flipped = sphere.triangles.slice();
    for (let t = 0; t < flipped.length; t += 3) [flipped[t + 1], flipped[t + 2]] = [flipped[t + 2], flipped[t + 1]];
    const inverted = windingNumbers(buildWindingNumberTree(sphere.positions, flipped), queries);
    for (let i = 0; i < w.length; i++) expect(inverted[i]).toBeCloseTo(-w[i], 5);
  });

  it('add over overlapping shells: 2 where two spheres overlap, 1 in one, 0 in neither', () => {
    const a = icosphere(3, 1, [-0.5, 0, 0]), b = icosphere(3, 1, [0.5, 0, 0]);
    const positions = concat(a.positions, b.positions);
    const triangles = new Uint32Array(a.triangles.length + b.triangles.length);
    triangles.set(a.triangles);
    triangles.set(b.triangles.map((v) => v + a.positions.length / 3), a.triangles.length);
    const w = windingNumbers(buildWindingNumberTree(positions, triangles), new Float32Array([0, 0, 0, 1.2, 0, 0, 0, 1.2, 0]));
    expect(w[0]).toBeCloseTo(2, 2);
    expect(w[1]).toBeCloseTo(1, 2);
    expect(w[2]).toBeCloseTo(0, 2);
  });

  it('stay exact where the tree cannot split by space: stacked copies of one triangle, a lopsided strip', () => {
    // 100 copies of one triangle: every centroid coincides
    const copies = { positions: new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]), triangles: new Uint32Array(300).map((_, i) => i % 3) };
    // triangles at x = 2^k: the middle split peels one off per level (53 levels for 60 triangles), so below level 40
    // the tree splits at the median instead
    const strip: number[] = [], stripTriangles: number[] = [];
    for (let k = 0; k < 60; k++) {
      const x = 2 ** k;
      stripTriangles.push(stripTriangles.length, stripTriangles.length + 1, stripTriangles.length + 2);
      strip.push(x, 0, 0, x, 1, 0, x, 0, 1);
    }
    for (const soup of [copies, { positions: Float32Array.from(strip), triangles: Uint32Array.from(stripTriangles) }]) {
      const queries = randomQueries(300, 3, 5);
      const tree = buildWindingNumberTree(soup.positions, soup.triangles);
      expect(tree.depth).toBeLessThan(50);
      expect(maxDifference(windingNumbers(tree, queries), exactWindingNumbers(soup.positions, soup.triangles, queries))).toBeLessThan(0.02);
    }
  });

  it("give every node the radius of its farthest corner, as a sweep of all its triangles' corners finds it", () => {
    // the radius is found by branch and bound over the children's boxes: it must equal the brute-force maximum exactly
    const random = new SeededRandom(3);
    const scattered: number[] = [];
    // soups large enough for a deep tree at 32 triangles a leaf
    for (let i = 0; i < 3 * 4000; i++) scattered.push(random.next() * 4 - 2, random.next() * 0.5, random.next() - 0.5);
    for (const soup of [torus(1, 0.35, 128, 48), { positions: Float32Array.from(scattered), triangles: Uint32Array.from(scattered.slice(0, 3 * 4000), (_, i) => i) }]) {
      const tree = buildWindingNumberTree(soup.positions, soup.triangles);
      const nodes = tree.right.length;
      expect(nodes).toBeGreaterThan(100);
      // each node's triangles: its subtree's leaves, which are contiguous in tree order
      const lastTriangle = new Int32Array(nodes);
      for (let node = nodes - 1; node >= 0; node--) lastTriangle[node] = tree.count[node] > 0 ? tree.first[node] + tree.count[node] : lastTriangle[tree.right[node]];
      const firstTriangle = (node: number): number => (tree.count[node] > 0 ? tree.first[node] : firstTriangle(node + 1));
      for (let node = 0; node < nodes; node++) {
        const o = node * 37;
        let farthest = 0;
        for (let c = firstTriangle(node) * 9; c < lastTriangle[node] * 9; c += 3) {
          const ex = tree.corners[c] - tree.nodes[o], ey = tree.corners[c + 1] - tree.nodes[o + 1], ez = tree.corners[c + 2] - tree.nodes[o + 2];
          farthest = Math.max(farthest, ex * ex + ey * ey + ez * ez);
        }
        expect(tree.nodes[o + 3]).toBe(Math.sqrt(farthest));
      }
    }
  });

  it('are 0 everywhere for an empty soup, and refuse an index out of range', () => {
    const empty = buildWindingNumberTree(new Float32Array(0), new Uint32Array(0));
    expect(Array.from(windingNumbers(empty, new Float32Array([0, 0, 0, 1, 2, 3])))).toEqual([0, 0]);
    expect(() => buildWindingNumberTree(new Float32Array(9), new Uint32Array([0, 1, 3]))).toThrow(expect.objectContaining({ code: 'BAD_INDEX' }));
  });
});

describe('closest distances (the same tree)', () => {
  /** three.js's own closest point on a triangle: an implementation independent of ours. */
  const threeDistance = (c: Float64Array, at: number, q: number[]) => {
    const v = (i: number) => new Vector3(c[at + i], c[at + i + 1], c[at + i + 2]);
    const p = new Triangle(v(0), v(3), v(6)).closestPointToPoint(new Vector3(q[0], q[1], q[2]), new Vector3());
    return Math.hypot(p.x - q[0], p.y - q[1], p.z - q[2]);
  };

  it('give a point-to-triangle distance equal to three.js\'s for points in every region, and a sliver its edges', () => {
    const random = new SeededRandom(11);
    for (let n = 0; n < 2000; n++) {
      const c = Float64Array.from({ length: 9 }, () => random.range(-1, 1));
      const q = [random.range(-2, 2), random.range(-2, 2), random.range(-2, 2)];
      expect(Math.sqrt(triangleDistance2(c, 0, q[0], q[1], q[2]))).toBeCloseTo(threeDistance(c, 0, q), 9);
    }
    // a triangle of no area (three points on the x axis): the distance to the segment [0, 2] of that axis
    const flat = Float64Array.of(0, 0, 0, 2, 0, 0, 1, 0, 0);
    expect(Math.sqrt(triangleDistance2(flat, 0, 1, 3, 4))).toBeCloseTo(5, 12);
    expect(Math.sqrt(triangleDistance2(flat, 0, -3, 0, 4))).toBeCloseTo(5, 12);
    const point = Float64Array.of(1, 1, 1, 1, 1, 1, 1, 1, 1);
    expect(Math.sqrt(triangleDistance2(point, 0, 1, 1, 3))).toBeCloseTo(2, 12);
  });

  it('equal the nearest of all triangles (brute force) for a sphere, a soup of scattered triangles, and far points', () => {
    const random = new SeededRandom(5);
    const sphere = icosphere(3, 0.7, [0.2, 0.1, -0.3]);
    const scattered: number[] = [];
    for (let i = 0; i < 600 * 3; i++) scattered.push(random.range(-1, 1), random.range(-1, 1), random.range(-1, 1));
    const soups: Soup[] = [sphere, { positions: Float32Array.from(scattered), triangles: Uint32Array.from({ length: 600 * 3 }, (_, i) => i) }];
    for (const soup of soups) {
      const queries = Float32Array.from({ length: 300 * 3 }, (_, i) => random.range(-3, 3) * (i < 450 ? 0.4 : 1));
      const fast = closestDistances(buildWindingNumberTree(soup.positions, soup.triangles), queries);
      const corners = new Float64Array(9);
      for (let q = 0; q < 300; q++) {
        let best = Infinity;
        for (let t = 0; t < soup.triangles.length / 3; t++) {
          for (let k = 0; k < 9; k++) corners[k] = soup.positions[soup.triangles[t * 3 + Math.floor(k / 3)] * 3 + (k % 3)];
          best = Math.min(best, threeDistance(corners, 0, [queries[q * 3], queries[q * 3 + 1], queries[q * 3 + 2]]));
        }
        expect(fast[q]).toBeCloseTo(best, 5);
      }
    }
    // on the sphere: |x − centre| − r within the chord error for points well off it
    expect(closestDistances(buildWindingNumberTree(sphere.positions, sphere.triangles), Float32Array.of(0.2, 0.1, 1.7))[0]).toBeCloseTo(1.3, 2);
    // no triangles: nothing is near
    expect(closestDistances(buildWindingNumberTree(new Float32Array(0), new Uint32Array(0)), Float32Array.of(0, 0, 0))[0]).toBe(Infinity);
  });
});
