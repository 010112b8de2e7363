/**
 * The field of a list of shapes, smooth-unioned in order, evaluated at single points (vertex projection, weights,
 * visibility). Shapes are bucketed on a coarse grid by their boxes expanded by the band, so a point only folds the few
 * shapes that can change its value: a shape further than the band from a point leaves a value below band − blend
 * unchanged, and values that far from the surface are never read.
 */
import type { Vec3 } from '../../types.js';
import { shapeDistance, smoothUnion, type Shape } from './sdfShapes.js';

/** Buckets along the longest side of the shapes' box. */
const BUCKETS_ALONG_LONGEST = 40;

export class ShapeField {
  readonly shapes: Shape[];
  /** values start at this "far" level; shapes are folded in only within this distance of their boxes */
  readonly band: number;
  /** cut everything below y = 0 (flat soles on the floor) */
  readonly floor: boolean;
  private readonly origin: Vec3;
  private readonly size: number;
  private readonly dims: [number, number, number];
  private readonly start: Int32Array;
  private readonly members: Int32Array;

  /**
   * shapes: in fold order, band: far level and culling distance (m, > every blend plus a few cells), floor: cut at
   * y = 0, reach: culling distance of the buckets (≥ band; the weights look further than the surface does)
   */
  constructor(shapes: Shape[], band: number, floor: boolean, reach = band) {
    this.shapes = shapes;
    this.band = band;
    this.floor = floor;
    const lo: Vec3 = [Infinity, Infinity, Infinity], hi: Vec3 = [-Infinity, -Infinity, -Infinity];
    for (const s of shapes) {
      for (let a = 0; a < 3; a++) {
        lo[a] = Math.min(lo[a], s.box[a] - reach * s.stretch);
        hi[a] = Math.max(hi[a], s.box[3 + a] + reach * s.stretch);
      }
    }
    if (!shapes.length) { lo.fill(0); hi.fill(1); }
    this.origin = lo;
    this.size = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) / BUCKETS_ALONG_LONGEST;
    this.dims = [0, 1, 2].map((a) => Math.max(1, Math.ceil((hi[a] - lo[a]) / this.size))) as [number, number, number];
    const [nx, ny, nz] = this.dims;
    const counts = new Int32Array(nx * ny * nz + 1);
    const ranges = shapes.map((s) => this.bucketRange(s, reach));
    for (const r of ranges) this.forBuckets(r, (b) => { counts[b + 1]++; });
    for (let b = 0; b < nx * ny * nz; b++) counts[b + 1] += counts[b];
    this.start = counts.slice();
    this.members = new Int32Array(counts[nx * ny * nz]);
    const fill = counts.slice(0, nx * ny * nz);
    ranges.forEach((r, s) => this.forBuckets(r, (b) => { this.members[fill[b]++] = s; }));
  }

  private bucketRange(s: Shape, reach: number): number[] {
    const r: number[] = [];
    for (let a = 0; a < 3; a++) {
      r.push(Math.max(0, Math.floor((s.box[a] - reach * s.stretch - this.origin[a]) / this.size)));
      r.push(Math.min(this.dims[a] - 1, Math.floor((s.box[3 + a] + reach * s.stretch - this.origin[a]) / this.size)));
    }
    return r;
  }

  private forBuckets(r: number[], visit: (bucket: number) => void): void {
    const [nx, ny] = this.dims;
    for (let k = r[4]; k <= r[5]; k++) for (let j = r[2]; j <= r[3]; j++) for (let i = r[0]; i <= r[1]; i++) visit(i + nx * (j + ny * k));
  }

  /** bucketOf: the bucket holding (x, y, z), or -1 outside the grid; its shapes are bucketShapes[bucketStart[b] ..]. */
  bucketOf(x: number, y: number, z: number): number {
    const i = Math.floor((x - this.origin[0]) / this.size);
    const j = Math.floor((y - this.origin[1]) / this.size);
    const k = Math.floor((z - this.origin[2]) / this.size);
    const dims = this.dims;
    if (i < 0 || j < 0 || k < 0 || i >= dims[0] || j >= dims[1] || k >= dims[2]) return -1;
    return i + dims[0] * (j + dims[1] * k);
  }

  /**
   * The shapes within `reach` of the points of bucket b (possibly a few more), ascending (fold order):
   * bucketShapes[bucketStart[b]] … bucketShapes[bucketStart[b + 1] - 1].
   */
  get bucketStart(): Int32Array { return this.start; }
  get bucketShapes(): Int32Array { return this.members; }

  /** value: the field at (x, y, z) (m, negative inside; `band` far from every shape). */
  value(x: number, y: number, z: number): number {
    const b = this.bucketOf(x, y, z);
    let f = this.band;
    if (b >= 0) {
      const shapes = this.shapes, members = this.members;
      for (let n = this.start[b], end = this.start[b + 1]; n < end; n++) {
        const s = shapes[members[n]];
        f = smoothUnion(f, shapeDistance(s, x, y, z), s.blend);
      }
    }
    return this.floor && -y > f ? -y : f;
  }

  /** gradient: forward differences with step h from the value f at (x, y, z), into out → out */
  gradient(x: number, y: number, z: number, f: number, h: number, out: Vec3): Vec3 {
    out[0] = (this.value(x + h, y, z) - f) / h;
    out[1] = (this.value(x, y + h, z) - f) / h;
    out[2] = (this.value(x, y, z + h) - f) / h;
    return out;
  }
}
