/**
 * The primitives the procedural humanoids are modelled from, as signed distance functions (negative inside, metres):
 * tapered capsules (limbs, trunk, head), flat-capped tapered cones (skirts, sleeves, hat crowns, boots) and rounded
 * oriented boxes (palms, blades). A shape may be squashed front-to-back (depthScale < 1: an elliptic cross-section,
 * the torso's), and carries what owns it: a bone of MIXAMO_JOINTS for the body, a clothing item otherwise.
 * The values are distance bounds rather than exact distances where the shape is tapered or squashed; what matters
 * here is that the value grows with the distance and is never below the distance to the shape's bounding box, so that
 * a shape can be skipped outside its box expanded by a band (see meshShapes).
 */
import type { Vec3 } from '../../types.js';

export type ShapeKind = 'capsule' | 'cone' | 'box';

/** One primitive, with what the evaluator needs precomputed. Build with capsule(), cone() or box(). */
export interface Shape {
  kind: ShapeKind;
  /** axis start (capsule, cone) or centre (box), in the squashed space (z scaled about zc by 1/depthScale) */
  a: Vec3;
  /** axis end (capsule, cone); for a box: the half extents along its axes u, v, w */
  b: Vec3;
  /** radius at a and at b (capsule, cone); box: ra is the rounding radius */
  ra: number;
  rb: number;
  /** cone: rounding radius of the cap edges */
  rounding: number;
  /** capsule, cone: b - a (squashed space), its length and 1 / length² (0 for a sphere) */
  ab: Vec3;
  length: number;
  invLength2: number;
  /** box axes (orthonormal), unused for the others */
  u: Vec3;
  v: Vec3;
  w: Vec3;
  /** front-to-back squash: the shape's z extent is depthScale times its x/y extent; about z = zc */
  depthScale: number;
  zc: number;
  /** smooth-union radius with the shapes before it in its list */
  blend: number;
  /** the bone that owns it (index into MIXAMO_JOINTS), or -1 for a clothing/accessory shape */
  bone: number;
  /** optional cut: only the part with dot(cutNormal, p) ≤ cutOffset is kept (a hairline, an open face) */
  cutNormal: Vec3 | null;
  cutOffset: number;
  /** world-space bounding box [minx, miny, minz, maxx, maxy, maxz] */
  box: Float64Array;
  /**
   * The value is at least (distance to the box) / stretch outside the box: 1, or depthScale for a shape deeper than
   * wide (its z distances are measured shrunk). A field evaluator may skip the shape beyond band·stretch of its box.
   */
  stretch: number;
}

/** Options every constructor takes. */
export interface ShapeOptions {
  blend?: number;
  bone?: number;
  depthScale?: number;
  /** keep only the half space {p : dot(cut.normal, p) ≤ dot(cut.normal, cut.point)} (normal: unit) */
  cut?: { normal: Vec3; point: Vec3 };
}

/**
 * capsule: a tapered capsule, the hull of a sphere of radius ra at a and one of radius rb at b.
 * a, b: world points, ra, rb: radii (m) → Shape
 */
export function capsule(a: Vec3, b: Vec3, ra: number, rb: number, options: ShapeOptions = {}): Shape {
  return finish({ kind: 'capsule', a, b, ra, rb, rounding: 0 }, options);
}

/**
 * cone: a solid frustum from a (radius ra) to b (radius rb), flat caps whose rims are rounded by `rounding`.
 * a, b: cap centres, ra, rb: cap radii, rounding: edge radius (< the smaller radius and half the length) → Shape
 */
export function cone(a: Vec3, b: Vec3, ra: number, rb: number, rounding: number, options: ShapeOptions = {}): Shape {
  return finish({ kind: 'cone', a, b, ra, rb, rounding }, options);
}

/**
 * box: an oriented box with rounded edges. centre: world point, axes: u, v (w = u × v), half: half extents along
 * u, v, w (m), rounding: edge radius (≤ the smallest half extent) → Shape (depthScale is ignored)
 */
export function box(centre: Vec3, u: Vec3, v: Vec3, half: Vec3, rounding: number, options: ShapeOptions = {}): Shape {
  const uu = unit(u);
  const vv = unit(sub3(v, scale3(uu, dot3(v, uu))));
  const ww: Vec3 = [uu[1] * vv[2] - uu[2] * vv[1], uu[2] * vv[0] - uu[0] * vv[2], uu[0] * vv[1] - uu[1] * vv[0]];
  return finish({ kind: 'box', a: centre, b: half, ra: rounding, rb: rounding, rounding, u: uu, v: vv, w: ww }, { ...options, depthScale: 1 });
}

type ShapeCore = Pick<Shape, 'kind' | 'a' | 'b' | 'ra' | 'rb' | 'rounding'> & Partial<Pick<Shape, 'u' | 'v' | 'w'>>;

function finish(core: ShapeCore, options: ShapeOptions): Shape {
  const depthScale = options.depthScale ?? 1;
  const zc = core.a[2];
  const squash = (p: Vec3): Vec3 => [p[0], p[1], zc + (p[2] - zc) / depthScale];
  const a = core.kind === 'box' ? core.a : squash(core.a);
  const b = core.kind === 'box' ? core.b : squash(core.b);
  const ab: Vec3 = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
  const length2 = dot3(ab, ab);
  const shape: Shape = {
    kind: core.kind,
    a,
    b,
    ab,
    length: Math.sqrt(length2),
    invLength2: length2 > 0 ? 1 / length2 : 0,
    ra: core.ra,
    rb: core.rb,
    rounding: core.rounding,
    u: core.u ?? [1, 0, 0],
    v: core.v ?? [0, 1, 0],
    w: core.w ?? [0, 0, 1],
    depthScale,
    zc,
    blend: options.blend ?? 0,
    bone: options.bone ?? -1,
    cutNormal: options.cut ? options.cut.normal : null,
    cutOffset: options.cut ? dot3(options.cut.normal, options.cut.point) : 0,
    box: new Float64Array(6),
    stretch: Math.max(1, depthScale),
  };
  shape.box.set(worldBox(shape));
  return shape;
}

function worldBox(s: Shape): number[] {
  if (s.kind === 'box') {
    const lo = [0, 0, 0], hi = [0, 0, 0];
    for (let a = 0; a < 3; a++) {
      const r = Math.abs(s.u[a]) * s.b[0] + Math.abs(s.v[a]) * s.b[1] + Math.abs(s.w[a]) * s.b[2];
      lo[a] = s.a[a] - r;
      hi[a] = s.a[a] + r;
    }
    return [...lo, ...hi];
  }
  const r = Math.max(s.ra, s.rb);
  const za = s.zc + (s.a[2] - s.zc) * s.depthScale, zb = s.zc + (s.b[2] - s.zc) * s.depthScale;
  const rz = r * s.depthScale;
  return [
    Math.min(s.a[0] - s.ra, s.b[0] - s.rb), Math.min(s.a[1] - s.ra, s.b[1] - s.rb), Math.min(za, zb) - rz,
    Math.max(s.a[0] + s.ra, s.b[0] + s.rb), Math.max(s.a[1] + s.ra, s.b[1] + s.rb), Math.max(za, zb) + rz,
  ];
}

/**
 * shapeDistance: the signed distance bound of one shape at world point (x, y, z) (m, negative inside).
 */
export function shapeDistance(s: Shape, x: number, y: number, z: number): number {
  // one small function per kind, so that the hot callers can inline the one they meet
  const d = s.kind === 'capsule' ? capsuleDistance(s, x, y, z) : s.kind === 'cone' ? coneDistance(s, x, y, z) : boxDistance(s, x, y, z);
  if (s.cutNormal === null) return d;
  const plane = s.cutNormal[0] * x + s.cutNormal[1] * y + s.cutNormal[2] * z - s.cutOffset;
  return plane > d ? plane : d;
}

function capsuleDistance(s: Shape, x: number, y: number, z: number): number {
  const px = x - s.a[0], py = y - s.a[1], pz = (s.depthScale === 1 ? z : s.zc + (z - s.zc) / s.depthScale) - s.a[2];
  const ab = s.ab;
  let t = (px * ab[0] + py * ab[1] + pz * ab[2]) * s.invLength2;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  const dx = px - t * ab[0], dy = py - t * ab[1], dz = pz - t * ab[2];
  return Math.sqrt(dx * dx + dy * dy + dz * dz) - (s.ra + t * (s.rb - s.ra));
}

/** The 2D distance in the (radial, axial) half plane to the frustum shrunk by the rounding, minus the rounding. */
function coneDistance(s: Shape, x: number, y: number, z: number): number {
  const px = x - s.a[0], py = y - s.a[1], pz = (s.depthScale === 1 ? z : s.zc + (z - s.zc) / s.depthScale) - s.a[2];
  const ab = s.ab;
  const len = s.length;
  const h = (px * ab[0] + py * ab[1] + pz * ab[2]) / len;
  const rx = px - (h * ab[0]) / len, ry = py - (h * ab[1]) / len, rz = pz - (h * ab[2]) / len;
  const q = Math.sqrt(rx * rx + ry * ry + rz * rz);
  const r = s.rounding;
  return trapezoidDistance(q, h, r, len - r, s.ra - r, s.rb - r) - r;
}

function boxDistance(s: Shape, x: number, y: number, z: number): number {
  const px = x - s.a[0], py = y - s.a[1], pz = z - s.a[2];
  const r = s.rounding;
  const qx = Math.abs(px * s.u[0] + py * s.u[1] + pz * s.u[2]) - (s.b[0] - r);
  const qy = Math.abs(px * s.v[0] + py * s.v[1] + pz * s.v[2]) - (s.b[1] - r);
  const qz = Math.abs(px * s.w[0] + py * s.w[1] + pz * s.w[2]) - (s.b[2] - r);
  const ox = qx > 0 ? qx : 0, oy = qy > 0 ? qy : 0, oz = qz > 0 ? qz : 0;
  const inner = Math.max(qx, qy, qz);
  return Math.sqrt(ox * ox + oy * oy + oz * oz) + (inner < 0 ? inner : 0) - r;
}

/**
 * Signed distance in 2D from (q, h), q ≥ 0, to the region {h0 ≤ h ≤ h1, 0 ≤ q ≤ radius(h)} whose radius goes
 * linearly from r0 at h0 to r1 at h1 (half the section of a frustum through its axis).
 */
function trapezoidDistance(q: number, h: number, h0: number, h1: number, r0: number, r1: number): number {
  const t = (h - h0) / (h1 - h0);
  const inside = h >= h0 && h <= h1 && q <= r0 + t * (r1 - r0);
  // distances to the bottom cap, the top cap and the slanted side
  const q0 = q > r0 ? q - r0 : 0, d0 = Math.sqrt(q0 * q0 + (h - h0) * (h - h0));
  const q1 = q > r1 ? q - r1 : 0, d1 = Math.sqrt(q1 * q1 + (h - h1) * (h - h1));
  const ex = r1 - r0, ey = h1 - h0;
  const wx = q - r0, wy = h - h0;
  const s = Math.max(0, Math.min(1, (wx * ex + wy * ey) / (ex * ex + ey * ey)));
  const sx = wx - s * ex, sy = wy - s * ey;
  const d = Math.min(d0, d1, Math.sqrt(sx * sx + sy * sy));
  return inside ? -d : d;
}

/**
 * The point of a shape's core (its axis segment; a box's midplane across its thinnest axis, w) nearest to p, in world
 * space: where a bone's "inside" is, for checking that a vertex sees it through the body. Written into out → out.
 */
export function shapeCorePoint(s: Shape, p: Vec3, out: Vec3 = [0, 0, 0]): Vec3 {
  if (s.kind === 'box') {
    const dx = p[0] - s.a[0], dy = p[1] - s.a[1], dz = p[2] - s.a[2];
    const cu = Math.max(-s.b[0], Math.min(s.b[0], dx * s.u[0] + dy * s.u[1] + dz * s.u[2]));
    const cv = Math.max(-s.b[1], Math.min(s.b[1], dx * s.v[0] + dy * s.v[1] + dz * s.v[2]));
    for (let a = 0; a < 3; a++) out[a] = s.a[a] + cu * s.u[a] + cv * s.v[a];
    return out;
  }
  const pz = s.depthScale === 1 ? p[2] : s.zc + (p[2] - s.zc) / s.depthScale;
  const bx = s.b[0] - s.a[0], by = s.b[1] - s.a[1], bz = s.b[2] - s.a[2];
  const len2 = bx * bx + by * by + bz * bz;
  const t = len2 > 0 ? Math.max(0, Math.min(1, ((p[0] - s.a[0]) * bx + (p[1] - s.a[1]) * by + (pz - s.a[2]) * bz) / len2)) : 0;
  const z = s.a[2] + t * bz;
  out[0] = s.a[0] + t * bx;
  out[1] = s.a[1] + t * by;
  out[2] = s.zc + (z - s.zc) * s.depthScale;
  return out;
}

/** Polynomial smooth minimum of a and b over a width k (k = 0: plain min). Symmetric in a and b. */
export function smoothUnion(a: number, b: number, k: number): number {
  if (k <= 0) return a < b ? a : b;
  const h = Math.max(0, Math.min(1, 0.5 + (0.5 * (b - a)) / k));
  return b + (a - b) * h - k * h * (1 - h);
}

function sub3(a: Vec3, b: Vec3): Vec3 { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }
function scale3(a: Vec3, s: number): Vec3 { return [a[0] * s, a[1] * s, a[2] * s]; }
function dot3(a: Vec3, b: Vec3): number { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
function unit(a: Vec3): Vec3 {
  const l = Math.hypot(a[0], a[1], a[2]) || 1;
  return [a[0] / l, a[1] / l, a[2] / l];
}
