import { describe, expect, it } from 'vitest';
import { orientPiecesOutward } from '../sidecar/mesh/orientPieces.js';
import { icosphere, type Soup } from './fixtures/icosphere.js';

/** triangles with every `every`-th one (from `from`) turned: its second and third corners swapped */
function turned(triangles: Uint32Array, every = 1, from = 0): Uint32Array {
  const out = triangles.slice();
  for (let t = 3 * from; t < out.length; t += 3 * every) [out[t + 1], out[t + 2]] = [out[t + 2], out[t + 1]];
  return out;
}

/** Soups side by side in one (the second's indices shifted past the first's vertices). */
function together(a: Soup, b: Soup): Soup {
  const shift = a.positions.length / 3;
  return { positions: Float32Array.from([...a.positions, ...b.positions]), triangles: Uint32Array.from([...a.triangles, ...Array.from(b.triangles, (v) => v + shift)]) };
}

/** How many triangles face away from the point `centre` (their normal and the direction from it agree). */
function facingAway(soup: Soup, triangles: Uint32Array, centre: number[]): number {
  const p = soup.positions;
  let away = 0;
  for (let t = 0; t < triangles.length; t += 3) {
    const [a, b, c] = [0, 1, 2].map((k) => 3 * triangles[t + k]);
    const u = [0, 1, 2].map((k) => p[b + k] - p[a + k]), v = [0, 1, 2].map((k) => p[c + k] - p[a + k]);
    const n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    const d = [0, 1, 2].map((k) => p[a + k] - centre[k]);
    if (n[0] * d[0] + n[1] * d[1] + n[2] * d[2] > 0) away++;
  }
  return away;
}

/** A flat square sheet of n × n quads in the z = 0 plane: positions #V*3, triangles #T*3, all wound one way. */
function sheet(n: number): Soup {
  const positions: number[] = [];
  const triangles: number[] = [];
  for (let j = 0; j <= n; j++) for (let i = 0; i <= n; i++) positions.push(i / n, j / n, 0);
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < n; i++) {
      const a = j * (n + 1) + i, b = a + 1, c = a + n + 1, d = c + 1;
      triangles.push(a, b, d, a, d, c);
    }
  }
  return { positions: Float32Array.from(positions), triangles: Uint32Array.from(triangles) };
}

describe('orientPiecesOutward', () => {
  const sphere = icosphere(3);

  it('leaves a surface wound outward as it is: the same array', () => {
    expect(orientPiecesOutward(sphere.positions, sphere.triangles)).toBe(sphere.triangles);
  });

  it('turns a sphere wound inside out back exactly as it was', () => {
    const read = orientPiecesOutward(sphere.positions, turned(sphere.triangles));
    expect(Array.from(read)).toEqual(Array.from(sphere.triangles));
  });

  it('keeps a piece\'s own winding where its triangles disagree: nothing turns (the artist\'s local winding stands)', () => {
    for (const [every, from] of [[2, 0], [7, 3]]) {
      const patchy = turned(sphere.triangles, every, from);
      expect(orientPiecesOutward(sphere.positions, patchy), `every ${every} from ${from}`).toBe(patchy);
    }
  });

  it('winds each piece on its own: of two spheres, the one wound inward turns, the other stays', () => {
    const small = icosphere(2, 0.5, [3, 0, 0]);
    const soup = together(sphere, { ...small, triangles: turned(small.triangles) });
    const read = orientPiecesOutward(soup.positions, soup.triangles);
    const first = sphere.triangles.length;
    expect(Array.from(read.subarray(0, first))).toEqual(Array.from(sphere.triangles));
    expect(facingAway(soup, read.subarray(first), [3, 0, 0])).toBe(small.triangles.length / 3);
  });

  it('reads a piece across its seams: a sphere whose upper half has its own copies of the vertices, turned inside out, comes back whole', () => {
    // each triangle of the upper half gets its own copies of the vertices (bit-identical positions), as a UV seam makes
    const positions = Array.from(sphere.positions);
    const triangles = Array.from(sphere.triangles);
    for (let t = 0; t < triangles.length; t += 3) {
      const z = (sphere.positions[3 * triangles[t] + 2] + sphere.positions[3 * triangles[t + 1] + 2] + sphere.positions[3 * triangles[t + 2] + 2]) / 3;
      if (z <= 0) continue;
      for (let k = 0; k < 3; k++) {
        const v = triangles[t + k];
        positions.push(sphere.positions[3 * v], sphere.positions[3 * v + 1], sphere.positions[3 * v + 2]);
        triangles[t + k] = positions.length / 3 - 1;
      }
    }
    const seamed = { positions: Float32Array.from(positions), triangles: Uint32Array.from(triangles) };
    // the upper triangles share no vertex index with anything: only the welding makes one piece of them and the rest,
    // so that its volume is read (alone, each would be a flat triangle that says nothing)
    const read = orientPiecesOutward(seamed.positions, turned(seamed.triangles));
    expect(Array.from(read)).toEqual(Array.from(seamed.triangles));
  });

  it('leaves an open flat sheet wound as it came, either way (it encloses nothing to say which is out)', () => {
    const flat = sheet(6);
    expect(orientPiecesOutward(flat.positions, flat.triangles)).toBe(flat.triangles);
    const under = turned(flat.triangles);
    expect(orientPiecesOutward(flat.positions, under)).toBe(under);
  });
});
