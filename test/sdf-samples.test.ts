import { describe, expect, it } from 'vitest';
import { AutoRigError } from '../sidecar/errors.js';
import { sdfHelperThreadId, sdfSamplesBeside } from '../sidecar/pose/sdfSamplesBeside.js';
import { DEFAULT_NEAR_SIGMA, sdfSamples, signedDistances } from '../sidecar/pose/sdfSamples.js';
import { icosphere, type Soup } from './fixtures/icosphere.js';

/** An open tube (no caps) around the y axis: radius R, y from −h to h, n sides, normals away from the axis. */
function openTube(R: number, h: number, n: number): Soup {
  const positions: number[] = [];
  const triangles: number[] = [];
  for (let i = 0; i < n; i++) {
    const u = (2 * Math.PI * i) / n;
    positions.push(R * Math.cos(u), -h, R * Math.sin(u), R * Math.cos(u), h, R * Math.sin(u));
    // (bottom i, top i, top i+1) turns counter-clockwise seen from outside
    triangles.push(2 * i, 2 * i + 1, 2 * ((i + 1) % n) + 1, 2 * i, 2 * ((i + 1) % n) + 1, 2 * ((i + 1) % n));
  }
  return { positions: Float32Array.from(positions), triangles: Uint32Array.from(triangles) };
}

/** Several soups as one (vertex indices shifted), as merged parts are. */
function merge(...soups: Soup[]): Soup {
  const positions = new Float32Array(soups.reduce((n, s) => n + s.positions.length, 0));
  const triangles = new Uint32Array(soups.reduce((n, s) => n + s.triangles.length, 0));
  let p = 0, t = 0;
  for (const s of soups) {
    positions.set(s.positions, p);
    triangles.set(s.triangles.map((v) => v + p / 3), t);
    p += s.positions.length;
    t += s.triangles.length;
  }
  return { positions, triangles };
}

/** The triangles with every corner order reversed (normals flipped). */
function flipped(soup: Soup): Soup {
  const triangles = soup.triangles.slice();
  for (let t = 0; t < triangles.length; t += 3) [triangles[t + 1], triangles[t + 2]] = [triangles[t + 2], triangles[t + 1]];
  return { positions: soup.positions, triangles };
}

/** How far the flat triangles of a unit-sphere mesh sink below the sphere at most: 1 − the nearest plane's distance. */
function chordError(soup: Soup): number {
  let worst = 0;
  const p = soup.positions;
  for (let t = 0; t < soup.triangles.length; t += 3) {
    const [a, b, c] = [0, 1, 2].map((k) => soup.triangles[t + k] * 3);
    const u = [0, 1, 2].map((k) => p[b + k] - p[a + k]), v = [0, 1, 2].map((k) => p[c + k] - p[a + k]);
    const n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    const planeDistance = Math.abs(n[0] * p[a] + n[1] * p[a + 1] + n[2] * p[a + 2]) / Math.hypot(n[0], n[1], n[2]);
    worst = Math.max(worst, 1 - planeDistance);
  }
  return worst;
}

const points = (...xyz: number[][]) => Float32Array.from(xyz.flat());

describe('signedDistances', () => {
  const sphere = icosphere(5); // 20,480 triangles

  it('match |x| − 1 on a unit sphere within the chord error, inside and out', () => {
    const tolerance = chordError(sphere) + 1e-5;
    expect(tolerance).toBeLessThan(0.01); // the mesh is fine enough for the 1% the sphere test asks
    const queries: number[][] = [];
    for (let i = 0; i < 400; i++) {
      // a spiral of directions at radii from 0.05 to 2.5
      const z = 1 - (2 * (i + 0.5)) / 400, phi = i * 2.399963, r = 0.05 + (2.45 * ((i * 37) % 400)) / 400;
      queries.push([r * Math.sqrt(1 - z * z) * Math.cos(phi), r * Math.sqrt(1 - z * z) * Math.sin(phi), r * z]);
    }
    const sdf = signedDistances(sphere.positions, sphere.triangles, points(...queries));
    let worst = 0, inside = 0;
    queries.forEach((q, i) => {
      worst = Math.max(worst, Math.abs(sdf[i] - (Math.hypot(q[0], q[1], q[2]) - 1)));
      if (sdf[i] < 0) inside++;
    });
    expect(worst).toBeLessThan(tolerance);
    expect(inside).toBeGreaterThan(100);
    expect(inside).toBeLessThan(300);
  });

  it('stay negative inside a sphere with a hole, away from the hole', () => {
    const open = icosphere(4);
    // drop the cap above y = 0.9 (a hole of ~5% of the sphere's view from its centre)
    const kept: number[] = [];
    for (let t = 0; t < open.triangles.length; t += 3) {
      const y = [0, 1, 2].reduce((s, k) => s + open.positions[open.triangles[t + k] * 3 + 1], 0) / 3;
      if (y <= 0.9) kept.push(open.triangles[t], open.triangles[t + 1], open.triangles[t + 2]);
    }
    expect(kept.length).toBeLessThan(open.triangles.length);
    const sdf = signedDistances(open.positions, Uint32Array.from(kept), points([0, 0, 0], [0, -0.8, 0], [0.7, 0.3, 0], [0, 0.5, -0.5], [1.3, 0, 0], [0, 1.5, 0]));
    expect(Array.from(sdf.subarray(0, 4)).every((d) => d < 0)).toBe(true);
    expect(sdf[0]).toBeCloseTo(-1, 2);
    expect(sdf[4]).toBeGreaterThan(0);
    expect(sdf[5]).toBeGreaterThan(0);
  });

  it('read two overlapping spheres merged into one soup as their union', () => {
    const soup = merge(icosphere(4, 1, [-0.5, 0, 0]), icosphere(4, 1, [0.5, 0, 0]));
    const sdf = signedDistances(soup.positions, soup.triangles, points([0, 0, 0], [-1.2, 0, 0], [1.2, 0.2, 0], [0, 1.2, 0], [0, 0, -2]));
    // in both: inside, 0.5 from the nearer (buried) wall of either sphere
    expect(sdf[0]).toBeCloseTo(-0.5, 2);
    expect(sdf[1]).toBeLessThan(0);
    expect(sdf[2]).toBeLessThan(0);
    // in neither
    expect(sdf[3]).toBeGreaterThan(0);
    expect(sdf[4]).toBeGreaterThan(0);
  });

  it('turn the inside positive when the normals are flipped (orientation matters), and leave the outside as it was', () => {
    const queries = points([0, 0, 0], [0.3, -0.4, 0.2], [2, 0, 0], [0, 0, 1.5]);
    const right = signedDistances(sphere.positions, sphere.triangles, queries);
    const inverted = signedDistances(sphere.positions, flipped(sphere).triangles, queries);
    expect(right[0]).toBeLessThan(0);
    expect(right[1]).toBeLessThan(0);
    expect(inverted[0]).toBeCloseTo(-right[0], 6);
    expect(inverted[1]).toBeCloseTo(-right[1], 6);
    expect(inverted[2]).toBeCloseTo(right[2], 6);
    expect(inverted[3]).toBeCloseTo(right[3], 6);
  });

  it('read a body in an open skirt as the winding number says: a long skirt encloses its gap, a short frill does not', () => {
    const body = icosphere(3, 0.4);
    const queries = points([0, 0, 0], [0.25, 0.1, 0], [0.65, 0, 0], [1.2, 0, 0], [0, 2.5, 0]);
    // long: R = 1, y in [−1.5, 1.5] (w ≈ 0.85 in the gap)
    const long = merge(body, openTube(1, 1.5, 96));
    const inLong = signedDistances(long.positions, long.triangles, queries);
    expect(inLong[0]).toBeLessThan(0); // body
    expect(inLong[1]).toBeLessThan(0); // body
    expect(inLong[2]).toBeLessThan(0); // gap between body and skirt: inside the bell
    expect(inLong[2]).toBeCloseTo(-0.25, 2); // and the distance is to the nearer wall (the body, 0.25 away)
    expect(inLong[3]).toBeGreaterThan(0); // outside the skirt
    expect(inLong[4]).toBeGreaterThan(0); // beyond the hem opening
    // short: y in [−0.2, 0.2] (w ≈ 0.28 in the gap, > 0.5 only within ~0.07 behind the sheet)
    const short = merge(body, openTube(1, 0.2, 96));
    const inShort = signedDistances(short.positions, short.triangles, points([0, 0, 0], [0.65, 0, 0], [0.97, 0, 0], [1.03, 0, 0]));
    expect(inShort[0]).toBeLessThan(0);
    expect(inShort[1]).toBeGreaterThan(0); // the gap is outside
    expect(inShort[2]).toBeLessThan(0); // the thin lens right behind the frill
    expect(inShort[3]).toBeGreaterThan(0); // in front of it
  });

  it('leave the caller\'s arrays as they were (the tree orders only its own copy)', () => {
    const soup = icosphere(2);
    const before = soup.triangles.slice(), positionsBefore = soup.positions.slice();
    signedDistances(soup.positions, soup.triangles, points([0, 0, 0], [2, 0, 0]));
    expect(soup.triangles).toEqual(before);
    expect(soup.positions).toEqual(positionsBefore);
  });
});

describe('sdfSamples', () => {
  const sphere = icosphere(4);

  it('are reproducible from the seed and differ between seeds', () => {
    const a = sdfSamples(sphere.positions, sphere.triangles, { count: 1000, seed: 7 });
    const b = sdfSamples(sphere.positions, sphere.triangles, { count: 1000, seed: 7 });
    const c = sdfSamples(sphere.positions, sphere.triangles, { count: 1000, seed: 8 });
    expect(a.points).toEqual(b.points);
    expect(a.sdf).toEqual(b.sdf);
    expect(a.points).not.toEqual(c.points);
  });

  it('hold the near fraction: near points hug the surface at two scales, the rest fill the box grown by 10%', () => {
    const count = 4000, nearFraction = 0.8;
    const { points: p, sdf, nearCount } = sdfSamples(sphere.positions, sphere.triangles, { count, nearFraction, seed: 3 });
    expect(nearCount).toBe(3200);
    expect(p.length).toBe(count * 3);
    expect(sdf.length).toBe(count);
    const sigma = DEFAULT_NEAR_SIGMA * Math.hypot(2, 2, 2); // the sphere's box is 2 × 2 × 2
    // a near point is within 6σ of the surface it was drawn from (|offset| ≥ its distance)
    let wide = 0, narrow = 0;
    for (let i = 0; i < nearCount; i++) {
      expect(Math.abs(sdf[i])).toBeLessThan(6 * sigma);
      if (i % 2 === 0) wide += Math.abs(sdf[i]); else narrow += Math.abs(sdf[i]);
    }
    // the two scales differ by √10 in standard deviation
    expect(wide / narrow).toBeGreaterThan(2.5);
    expect(wide / narrow).toBeLessThan(4);
    // uniform points: inside [−1.1, 1.1]³, reaching past the sphere's box, inside in ≈ the volume share (4π/3)/2.2³ = 0.39
    let inside = 0, beyondBox = 0;
    for (let i = nearCount; i < count; i++) {
      for (let k = 0; k < 3; k++) expect(Math.abs(p[i * 3 + k])).toBeLessThanOrEqual(1.1 + 1e-6);
      if (Math.max(Math.abs(p[i * 3]), Math.abs(p[i * 3 + 1]), Math.abs(p[i * 3 + 2])) > 1) beyondBox++;
      if (sdf[i] < 0) inside++;
    }
    expect(inside / (count - nearCount)).toBeGreaterThan(0.34);
    expect(inside / (count - nearCount)).toBeLessThan(0.44);
    expect(beyondBox).toBeGreaterThan(50);
    // every fraction is honoured, to the nearest sample
    for (const fraction of [0, 0.25, 1]) {
      expect(sdfSamples(sphere.positions, sphere.triangles, { count: 99, nearFraction: fraction, seed: 1 }).nearCount).toBe(Math.round(99 * fraction));
    }
  });

  it('sign the samples from the winding number: the near samples of a sphere split about evenly inside and out', () => {
    const { sdf, nearCount, points: p } = sdfSamples(sphere.positions, sphere.triangles, { count: 2000, seed: 5 });
    let inside = 0;
    for (let i = 0; i < nearCount; i++) {
      if (sdf[i] < 0) inside++;
      // the sign agrees with the sphere's own inside where the point is clearly off the surface
      const r = Math.hypot(p[i * 3], p[i * 3 + 1], p[i * 3 + 2]);
      if (Math.abs(r - 1) > 0.01) expect(sdf[i] < 0).toBe(r < 1);
    }
    expect(inside / nearCount).toBeGreaterThan(0.4);
    expect(inside / nearCount).toBeLessThan(0.6);
  });

  it('read the surface, not the file\'s winding: a sphere wound inward gives the outward sphere\'s samples bit for bit', () => {
    const outward = sdfSamples(sphere.positions, sphere.triangles, { count: 1000, seed: 9 });
    const turned = sphere.triangles.slice();
    for (let t = 0; t < turned.length; t += 3) [turned[t + 1], turned[t + 2]] = [turned[t + 2], turned[t + 1]];
    const read = sdfSamples(sphere.positions, turned, { count: 1000, seed: 9 });
    expect(read.points).toEqual(outward.points);
    expect(read.sdf).toEqual(outward.sdf);
    // two spheres in one soup, the second wound inward: its inside is inside too
    const other = icosphere(3, 0.5, [3, 0, 0]);
    const inward = other.triangles.map((v, i) => (i % 3 === 1 ? other.triangles[i + 1] : i % 3 === 2 ? other.triangles[i - 1] : v) + sphere.positions.length / 3);
    const positions = Float32Array.from([...sphere.positions, ...other.positions]);
    const triangles = Uint32Array.from([...sphere.triangles, ...inward]);
    const queries = Float32Array.of(3, 0, 0, 3.2, 0.1, 0, 0, 0, 0, 3, 0, 0.8);
    const before = signedDistances(positions, triangles, queries);
    expect(Array.from(before).map(Math.sign)).toEqual([1, 1, -1, 1]); // signedDistances alone reads the winding as given
    const { points, sdf } = sdfSamples(positions, triangles, { count: 3000, seed: 2 });
    let checked = 0;
    for (let i = 0; i < sdf.length; i++) {
      const r = Math.hypot(points[3 * i] - 3, points[3 * i + 1], points[3 * i + 2]);
      if (r < 0.45) { expect(sdf[i]).toBeLessThan(0); checked++; }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('refuse bad options and broken meshes with a code', () => {
    const expectCode = (f: () => unknown, code: string) => {
      try { f(); } catch (e) { expect(e).toBeInstanceOf(AutoRigError); expect((e as AutoRigError).code).toBe(code); return; }
      throw new Error(`expected ${code}`);
    };
    const { positions, triangles } = sphere;
    expectCode(() => sdfSamples(positions, triangles, { count: 0, seed: 1 }), 'BAD_REQUEST');
    expectCode(() => sdfSamples(positions, triangles, { count: 10, seed: 1.5 }), 'BAD_REQUEST');
    expectCode(() => sdfSamples(positions, triangles, { count: 10, seed: 1, nearFraction: 1.2 }), 'BAD_REQUEST');
    expectCode(() => sdfSamples(positions, triangles, { count: 10, seed: 1, nearSigma: 0 }), 'BAD_REQUEST');
    expectCode(() => sdfSamples(positions, new Uint32Array([0, 1, 100000]), { count: 10, seed: 1 }), 'BAD_INDEX');
    expectCode(() => sdfSamples(positions, new Uint32Array(0), { count: 10, seed: 1 }), 'EMPTY_MESH');
    expectCode(() => sdfSamples(new Float32Array(9), new Uint32Array([0, 1, 2]), { count: 10, seed: 1 }), 'EMPTY_MESH');
    expectCode(() => sdfSamples(new Float32Array([0, 0, 0, 1, 0, NaN, 0, 1, 0]), new Uint32Array([0, 1, 2]), { count: 10, seed: 1 }), 'BAD_NUMBER');
    expectCode(() => signedDistances(positions, triangles, new Float32Array(4)), 'BAD_ARRAY');
  });
});

describe('sdfSamplesBeside', () => {
  it('gives exactly the samples of sdfSamples on one kept helper thread, and the caller keeps its arrays', async () => {
    const sphere = icosphere(3, 0.8, [0.1, -0.2, 0.3]);
    const vertexFloats = sphere.positions.length, triangleIndices = sphere.triangles.length;
    let thread: number | null = null;
    for (const seed of [5, 6]) {
      const options = { count: 600, seed };
      const here = sdfSamples(sphere.positions, sphere.triangles, options);
      const there = await sdfSamplesBeside(sphere.positions, sphere.triangles, options);
      expect(there.nearCount).toBe(here.nearCount);
      expect(Array.from(there.points)).toEqual(Array.from(here.points));
      expect(Array.from(there.sdf)).toEqual(Array.from(here.sdf));
      // inside points are negative there too: a real answer, not zeros
      expect(there.sdf.some((d) => d < -0.1)).toBe(true);
      // the second call is answered by the thread that answered the first
      thread ??= sdfHelperThreadId();
      expect(sdfHelperThreadId()).toBe(thread);
    }
    expect(thread).toBeGreaterThan(0);
    // copied, not transferred: the caller's arrays are still whole
    expect(sphere.positions.length).toBe(vertexFloats);
    expect(sphere.triangles.length).toBe(triangleIndices);
  });

  it('answers the error code of sdfSamples for a bad mesh, and serves the next call', async () => {
    const sphere = icosphere(2);
    const bad = Uint32Array.from(sphere.triangles, (v, i) => (i === 4 ? 10_000 : v));
    await expect(sdfSamplesBeside(sphere.positions, bad, { count: 10, seed: 1 })).rejects.toMatchObject({ code: 'BAD_INDEX' });
    const next = await sdfSamplesBeside(sphere.positions, sphere.triangles, { count: 10, seed: 1 });
    expect(Array.from(next.sdf)).toEqual(Array.from(sdfSamples(sphere.positions, sphere.triangles, { count: 10, seed: 1 }).sdf));
  });
});
