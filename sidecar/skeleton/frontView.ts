/**
 * Orthographic front view of a canonical mesh (x left, y up, z forward, inside [-0.5, 0.5]^3), seen from +z.
 * Pixel (i, j) has its centre at x = -0.5 + (i + 0.5) / res, y = -0.5 + (j + 0.5) / res (j = 0 is the bottom row).
 */
export interface FrontView {
  res: number;
  /** silhouette: Uint8Array, res*res (1 = covered) */
  mask: Uint8Array;
  /** depth of the first hit seen from the front (largest z): Float32Array, res*res (-Infinity where empty) */
  zFront: Float32Array;
  /** depth of the last hit (smallest z): Float32Array, res*res (+Infinity where empty) */
  zBack: Float32Array;
  /**
   * on a view whose standing rods were taken out (skeleton/propRods withoutPropRods): for each pixel taken out, the rod
   * it belonged to (1, 2, …), 0 elsewhere; Uint8Array res*res
   */
  rodOf?: Uint8Array;
}

/**
 * Rasterises every triangle into the silhouette and the front/back depth buffers (the rasterised form of casting
 * one ray per pixel through the mesh).
 * positions: Float32Array #V*3 (canonical), triangles: Uint32Array #T*3, res: pixels per side → FrontView
 */
export function renderFrontView(positions: Float32Array, triangles: Uint32Array, res: number): FrontView {
  const n = res * res;
  const mask = new Uint8Array(n), zFront = new Float32Array(n).fill(-Infinity), zBack = new Float32Array(n).fill(Infinity);
  const span = new Float64Array(2);
  for (let t = 0; t < triangles.length; t += 3) {
    const a = triangles[t] * 3, b = triangles[t + 1] * 3, c = triangles[t + 2] * 3;
    const x0 = toPixel(positions[a], res), y0 = toPixel(positions[a + 1], res), z0 = positions[a + 2];
    const x1 = toPixel(positions[b], res), y1 = toPixel(positions[b + 1], res), z1 = positions[b + 2];
    const x2 = toPixel(positions[c], res), y2 = toPixel(positions[c + 1], res), z2 = positions[c + 2];
    const minX = Math.max(0, Math.ceil(Math.min(x0, x1, x2))), maxX = Math.min(res - 1, Math.floor(Math.max(x0, x1, x2)));
    const minY = Math.max(0, Math.ceil(Math.min(y0, y1, y2))), maxY = Math.min(res - 1, Math.floor(Math.max(y0, y1, y2)));
    const area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
    if (Math.abs(area) > 1e-12) {
      for (let j = minY; j <= maxY; j++) {
        // Only the columns where the row can be inside (a long thin triangle across the view covers few of its box's).
        rowSpan(x0, y0, x1, y1, x2, y2, area, j, span);
        for (let i = Math.max(minX, span[0]); i <= Math.min(maxX, span[1]); i++) {
          const w0 = ((x1 - i) * (y2 - j) - (x2 - i) * (y1 - j)) / area;
          const w1 = ((x2 - i) * (y0 - j) - (x0 - i) * (y2 - j)) / area;
          const w2 = 1 - w0 - w1;
          if (w0 < -1e-9 || w1 < -1e-9 || w2 < -1e-9) continue;
          const z = w0 * z0 + w1 * z1 + w2 * z2, p = j * res + i;
          mask[p] = 1;
          if (z > zFront[p]) zFront[p] = z;
          if (z < zBack[p]) zBack[p] = z;
        }
      }
    }
    // Triangles smaller than a pixel (dense meshes) may cover no pixel centre: their corners still count.
    // (three calls, not a loop over [x, y, z] arrays: four arrays a triangle cost a tenth of the render at 100k)
    putCorner(mask, zFront, zBack, res, x0, y0, z0);
    putCorner(mask, zFront, zBack, res, x1, y1, z1);
    putCorner(mask, zFront, zBack, res, x2, y2, z2);
  }
  return { res, mask, zFront, zBack };
}

// The render's steps are module functions, not closures made per render: a closure made per call is a new function
// each time, and the optimised code that inlined the last one (its loop compiled on the stack) is thrown away and
// compiled again on every render (V8 --trace-opt: each apply of a pose recompiled it and its closures).

/** x (or y) of the canonical box → pixel units (pixel i's centre at i). */
function toPixel(x: number, res: number): number {
  return (x + 0.5) * res - 0.5;
}

/** a corner at (x, y) pixel units and depth z into the silhouette and the depth buffers, when inside the view */
function putCorner(mask: Uint8Array, zFront: Float32Array, zBack: Float32Array, res: number, x: number, y: number, z: number): void {
  const i = Math.round(x), j = Math.round(y);
  if (i < 0 || j < 0 || i >= res || j >= res) return;
  const p = j * res + i;
  mask[p] = 1;
  if (z > zFront[p]) zFront[p] = z;
  if (z < zBack[p]) zBack[p] = z;
}

/**
 * The columns of row j that can pass the inside test of the triangle (x0, y0), (x1, y1), (x2, y2) (pixel units, signed
 * double area `area`): each barycentric weight is linear along the row, so each bounds the row on one side. The span is
 * widened by a column on each side, so that rounding never drops a pixel that the exact test keeps.
 * Writes [first, last] columns into `span` (first > last when the row misses the triangle).
 */
function rowSpan(x0: number, y0: number, x1: number, y1: number, x2: number, y2: number, area: number, j: number, span: Float64Array): void {
  // weight k at column i is (a_k + b_k·i) / area; the inside test keeps weight ≥ -1e-9; weight 2 = 1 - w0 - w1.
  const a0 = x1 * (y2 - j) - x2 * (y1 - j), b0 = y1 - y2;
  const a1 = x2 * (y0 - j) - x0 * (y2 - j), b1 = y2 - y0;
  span[0] = -Infinity;
  span[1] = Infinity;
  narrowSpan(a0 / area, b0 / area, span);
  narrowSpan(a1 / area, b1 / area, span);
  narrowSpan((area - a0 - a1) / area, (-b0 - b1) / area, span);
  if (!(span[0] <= span[1])) { span[0] = 1; span[1] = 0; return; }
  span[0] = Math.floor(span[0]) - 1;
  span[1] = Math.ceil(span[1]) + 1;
}

/** Narrows span [lo, hi] to the columns i where a + b·i ≥ -1e-9. */
function narrowSpan(a: number, b: number, span: Float64Array): void {
  if (b === 0) {
    if (a < -1e-9) { span[0] = Infinity; span[1] = -Infinity; }
    return;
  }
  const edge = (-1e-9 - a) / b;
  if (b > 0) { if (edge > span[0]) span[0] = edge; } else if (edge < span[1]) span[1] = edge;
}

/** Canonical x or y of a pixel column or row. */
export function pixelToCanonical(p: number, res: number): number {
  return -0.5 + (p + 0.5) / res;
}
