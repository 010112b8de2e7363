/**
 * Surface nets over the field of a shape list, evaluated only where it matters: each shape is sampled only at the grid
 * points within the band of its box, and the grid is swept one z layer at a time (two layers of values and two slabs
 * of vertex ids alive), so memory follows the surface and time follows the shapes' boxes, not the whole grid.
 * One vertex per cell the surface crosses (the mean of its edge crossings, then pulled onto the surface by a Newton
 * step on the exact field), one quad per grid edge the surface crosses, split into two triangles.
 * Optionally "chaotic", like the marching-cubes output of AI 3D generators: random quad diagonals and a random slide
 * of each vertex in its tangent plane.
 */
import type { Vec3 } from '../../types.js';
import { shapeDistance, smoothUnion, type Shape } from './sdfShapes.js';
import type { ShapeField } from './shapeField.js';

export interface MeshShapesOptions {
  /** grid cell edge (m) */
  cell: number;
  /** null: shortest diagonals, no jitter; otherwise a uniform [0, 1) source for diagonals and tangent slides */
  random: (() => number) | null;
  /** largest tangent slide, in cells (with random) */
  jitter?: number;
}

/**
 * meshShapes: the zero set of a ShapeField → { positions Float32Array #V*3, triangles Uint32Array #T*3 wound
 * outwards (the side where the field grows) }. Empty arrays when the field has no surface.
 */
export function meshShapes(field: ShapeField, options: MeshShapesOptions): { positions: Float32Array; triangles: Uint32Array } {
  const { cell, random } = options;
  const shapes = field.shapes;
  const band = field.band;
  if (!shapes.length) return { positions: new Float32Array(0), triangles: new Uint32Array(0) };
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  let maxBlend = 0;
  for (const s of shapes) {
    for (let a = 0; a < 3; a++) { lo[a] = Math.min(lo[a], s.box[a]); hi[a] = Math.max(hi[a], s.box[3 + a]); }
    maxBlend = Math.max(maxBlend, s.blend);
  }
  // a smooth union bulges at most blend/4 past its shapes; below the floor everything is outside
  const pad = 2 * cell + maxBlend / 4;
  if (field.floor) lo[1] = Math.max(lo[1], -cell);
  const origin = lo.map((x) => x - pad);
  const nx = Math.ceil((hi[0] + pad - origin[0]) / cell), ny = Math.ceil((hi[1] + pad - origin[1]) / cell), nz = Math.ceil((hi[2] + pad - origin[2]) / cell);
  const px = nx + 1, py = ny + 1;

  // per shape, the grid points it is sampled at: within its blend radius and a few cells of its box (beyond that it
  // cannot change a value near the surface)
  const ranges = shapes.map((s) => {
    const r = Math.min(band, s.blend + 4 * cell) * s.stretch;
    const first = (a: number) => Math.max(0, Math.ceil((s.box[a] - r - origin[a]) / cell));
    const last = (a: number, n: number) => Math.min(n, Math.floor((s.box[3 + a] + r - origin[a]) / cell));
    return [first(0), last(0, nx), first(1), last(1, ny), first(2), last(2, nz)];
  });
  const layerValues = (k: number, out: Float32Array) => {
    out.fill(band);
    const z = origin[2] + k * cell;
    for (let n = 0; n < shapes.length; n++) {
      const r = ranges[n];
      if (k < r[4] || k > r[5]) continue;
      const s = shapes[n];
      if (s.kind === 'capsule' && s.cutNormal === null) {
        capsuleLayer(s, out, px, r, origin, cell, z);
        continue;
      }
      for (let j = r[2]; j <= r[3]; j++) {
        const y = origin[1] + j * cell;
        for (let i = r[0]; i <= r[1]; i++) {
          const idx = i + px * j;
          out[idx] = smoothUnion(out[idx], shapeDistance(s, origin[0] + i * cell, y, z), s.blend);
        }
      }
    }
    if (field.floor) {
      for (let j = 0; j < py; j++) {
        const below = -(origin[1] + j * cell);
        for (let i = 0; i < px; i++) if (below > out[i + px * j]) out[i + px * j] = below;
      }
    }
  };

  let lower = new Float32Array(px * py), upper = new Float32Array(px * py);
  let prevIds = new Int32Array(nx * ny).fill(-1), ids = new Int32Array(nx * ny).fill(-1);
  const positions = new GrowableF32();
  const triangles = new GrowableU32();
  const corner = new Float64Array(8);
  const emit = (a: number, b: number, c: number, d: number, flip: boolean) => {
    if (flip) { const t = a; a = d; d = t; const u = b; b = c; c = u; }
    let first: boolean;
    if (random) first = random() < 0.5;
    else first = distance2(positions.data, a, c) <= distance2(positions.data, b, d);
    if (first) triangles.push3(a, b, c), triangles.push3(a, c, d);
    else triangles.push3(a, b, d), triangles.push3(b, c, d);
  };

  layerValues(0, lower);
  for (let k = 0; k < nz; k++) {
    layerValues(k + 1, upper);
    ids.fill(-1);
    for (let j = 0; j < ny; j++) {
      for (let i = 0; i < nx; i++) {
        const p = i + px * j;
        const mask = (lower[p] < 0 ? 1 : 0) | (lower[p + 1] < 0 ? 2 : 0) | (lower[p + px] < 0 ? 4 : 0) | (lower[p + px + 1] < 0 ? 8 : 0)
          | (upper[p] < 0 ? 16 : 0) | (upper[p + 1] < 0 ? 32 : 0) | (upper[p + px] < 0 ? 64 : 0) | (upper[p + px + 1] < 0 ? 128 : 0);
        if (mask === 0 || mask === 255) continue;
        corner[0] = lower[p]; corner[1] = lower[p + 1]; corner[2] = lower[p + px]; corner[3] = lower[p + px + 1];
        corner[4] = upper[p]; corner[5] = upper[p + 1]; corner[6] = upper[p + px]; corner[7] = upper[p + px + 1];
        // mean of the crossings on the cell's 12 edges (corner c sits at offset (c & 1, c >> 1 & 1, c >> 2 & 1))
        let sx = 0, sy = 0, sz = 0, count = 0;
        for (let e = 0; e < 12; e++) {
          const ca = EDGE_A[e], cb = EDGE_B[e];
          if ((mask >> ca & 1) === (mask >> cb & 1)) continue;
          const t = corner[ca] / (corner[ca] - corner[cb]);
          sx += (ca & 1) + t * ((cb & 1) - (ca & 1));
          sy += (ca >> 1 & 1) + t * ((cb >> 1 & 1) - (ca >> 1 & 1));
          sz += (ca >> 2 & 1) + t * ((cb >> 2 & 1) - (ca >> 2 & 1));
          count++;
        }
        ids[i + nx * j] = positions.length / 3;
        positions.push3(origin[0] + (i + sx / count) * cell, origin[1] + (j + sy / count) * cell, origin[2] + (k + sz / count) * cell);
      }
    }
    // edges along z between layers k and k+1: the four cells around one lie in this slab
    for (let j = 1; j < ny; j++) {
      for (let i = 1; i < nx; i++) {
        const p = i + px * j;
        const inside = lower[p] < 0;
        if (inside === upper[p] < 0) continue;
        emit(ids[i - 1 + nx * (j - 1)], ids[i + nx * (j - 1)], ids[i + nx * j], ids[i - 1 + nx * j], !inside);
      }
    }
    // edges along x and y in layer k: cells in slabs k-1 and k
    if (k > 0) {
      for (let j = 0; j < ny; j++) {
        for (let i = 0; i < nx; i++) {
          const p = i + px * j;
          const inside = lower[p] < 0;
          if (j > 0 && inside !== lower[p + 1] < 0) {
            emit(prevIds[i + nx * (j - 1)], prevIds[i + nx * j], ids[i + nx * j], ids[i + nx * (j - 1)], !inside);
          }
          if (i > 0 && inside !== lower[p + px] < 0) {
            emit(prevIds[i - 1 + nx * j], ids[i - 1 + nx * j], ids[i + nx * j], prevIds[i + nx * j], !inside);
          }
        }
      }
    }
    [lower, upper] = [upper, lower];
    [prevIds, ids] = [ids, prevIds];
  }

  const out = positions.data.slice(0, positions.length);
  refineVertices(field, out, cell, random, options.jitter ?? 0);
  return { positions: out, triangles: triangles.data.slice(0, triangles.length) };
}

/**
 * Folds one capsule into a layer of grid values (the hot loop of meshShapes: shapeDistance and smoothUnion written out
 * with the capsule's constants hoisted). r: the shape's grid range [i0, i1, j0, j1, k0, k1], z: the layer's height.
 */
function capsuleLayer(s: Shape, out: Float32Array, px: number, r: number[], origin: number[], cell: number, z: number): void {
  const ax = s.a[0], ay = s.a[1], az = s.a[2];
  const bx = s.b[0] - ax, by = s.b[1] - ay, bz = s.b[2] - az;
  const len2 = bx * bx + by * by + bz * bz;
  const inv = len2 > 0 ? 1 / len2 : 0;
  const ra = s.ra, dr = s.rb - s.ra, k = s.blend;
  const pz = (s.depthScale === 1 ? z : s.zc + (z - s.zc) / s.depthScale) - az;
  for (let j = r[2]; j <= r[3]; j++) {
    const py = origin[1] + j * cell - ay;
    const partial = py * by + pz * bz;
    const row = px * j;
    for (let i = r[0]; i <= r[1]; i++) {
      const qx = origin[0] + i * cell - ax;
      let t = (qx * bx + partial) * inv;
      t = t < 0 ? 0 : t > 1 ? 1 : t;
      const dx = qx - t * bx, dy = py - t * by, dz = pz - t * bz;
      const d = Math.sqrt(dx * dx + dy * dy + dz * dz) - (ra + t * dr);
      const idx = row + i;
      const acc = out[idx];
      if (k <= 0) {
        if (d < acc) out[idx] = d;
        continue;
      }
      let h = 0.5 + (0.5 * (acc - d)) / k;
      h = h < 0 ? 0 : h > 1 ? 1 : h;
      // smoothUnion(acc, d, k) = d + (acc - d)·h' - k·h'(1 - h') with h' = clamp(0.5 + (d - acc)/(2k)) = 1 - h
      out[idx] = acc + (d - acc) * h - k * h * (1 - h);
    }
  }
}

/** The 12 edges of a cell as corner pairs. */
const EDGE_A: number[] = [];
const EDGE_B: number[] = [];
for (let a = 0; a < 8; a++) {
  for (let b = a + 1; b < 8; b++) {
    const diff = a ^ b;
    if (diff === 1 || diff === 2 || diff === 4) { EDGE_A.push(a); EDGE_B.push(b); }
  }
}

/**
 * One Newton step onto the exact field (clamped to half a cell, so a vertex stays near its cell), then, with a random
 * source, a slide in the tangent plane of up to `jitter` cells.
 */
function refineVertices(field: ShapeField, positions: Float32Array, cell: number, random: (() => number) | null, jitter: number): void {
  const g: Vec3 = [0, 0, 0];
  const h = cell * 0.05;
  for (let v = 0; v < positions.length; v += 3) {
    let x = positions[v], y = positions[v + 1], z = positions[v + 2];
    const f = field.value(x, y, z);
    field.gradient(x, y, z, f, h, g);
    const g2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
    if (g2 > 1e-12) {
      let s = f / g2;
      const move = Math.abs(s) * Math.sqrt(g2);
      if (move > cell / 2) s *= cell / 2 / move;
      x -= s * g[0]; y -= s * g[1]; z -= s * g[2];
      if (random && jitter > 0) {
        // a random unit vector, made tangent by removing its normal part
        const n = 1 / Math.sqrt(g2);
        const nx = g[0] * n, ny = g[1] * n, nz = g[2] * n;
        let rx = random() - 0.5, ry = random() - 0.5, rz = random() - 0.5;
        const along = rx * nx + ry * ny + rz * nz;
        rx -= along * nx; ry -= along * ny; rz -= along * nz;
        const rl = Math.sqrt(rx * rx + ry * ry + rz * rz);
        if (rl > 1e-9) {
          const amount = (jitter * cell * random()) / rl;
          x += rx * amount; y += ry * amount; z += rz * amount;
        }
      }
    }
    positions[v] = x; positions[v + 1] = y; positions[v + 2] = z;
  }
}

function distance2(p: Float32Array, a: number, b: number): number {
  const dx = p[3 * a] - p[3 * b], dy = p[3 * a + 1] - p[3 * b + 1], dz = p[3 * a + 2] - p[3 * b + 2];
  return dx * dx + dy * dy + dz * dz;
}

class GrowableF32 {
  data = new Float32Array(3 * 4096);
  length = 0;
  push3(a: number, b: number, c: number): void {
    if (this.length + 3 > this.data.length) { const d = new Float32Array(this.data.length * 2); d.set(this.data); this.data = d; }
    this.data[this.length++] = a; this.data[this.length++] = b; this.data[this.length++] = c;
  }
}

class GrowableU32 {
  data = new Uint32Array(3 * 8192);
  length = 0;
  push3(a: number, b: number, c: number): void {
    if (this.length + 3 > this.data.length) { const d = new Uint32Array(this.data.length * 2); d.set(this.data); this.data = d; }
    this.data[this.length++] = a; this.data[this.length++] = b; this.data[this.length++] = c;
  }
}
