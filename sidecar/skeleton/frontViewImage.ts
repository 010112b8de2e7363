import type { FrontView } from './frontView.js';

/** Channels of the network's front-view image, in order. */
export const FRONT_IMAGE_CHANNELS = ['silhouette', 'frontDepth', 'backDepth', 'normalX', 'normalY'] as const;

/**
 * The learned 2D joint predictor's input, made from the same front view the geometric landmarks read (so training
 * samples and the sidecar see identical pixels): the view averaged down to `size` pixels per side, five channels
 * (FRONT_IMAGE_CHANNELS): coverage in [0, 1]; front and back depth (canonical z, 0 where empty); the front surface's
 * normal x and y from the front depth's gradient (HumanRig's normal render, read off the depth we already have).
 * view: FrontView with view.res a multiple of size, size: pixels per side →
 * Float32Array, channels-first 5*size*size, row 0 = the TOP of the picture (image convention, unlike FrontView's rows)
 */
export function frontViewImage(view: FrontView, size: number): Float32Array {
  const f = view.res / size;
  if (!Number.isInteger(f) || f < 1) throw new Error(`front view of ${view.res} px cannot be averaged to ${size} px`);
  const n = size * size;
  const out = new Float32Array(5 * n);
  for (let r = 0; r < size; r++) {
    const jy = size - 1 - r; // image row r is view row block jy (view rows count from the bottom)
    for (let c = 0; c < size; c++) {
      let covered = 0, zf = 0, zb = 0;
      for (let dj = 0; dj < f; dj++) {
        for (let di = 0; di < f; di++) {
          const p = (jy * f + dj) * view.res + (c * f + di);
          if (!view.mask[p]) continue;
          covered++;
          zf += view.zFront[p];
          zb += view.zBack[p];
        }
      }
      const q = r * size + c;
      out[q] = covered / (f * f);
      if (covered) { out[n + q] = zf / covered; out[2 * n + q] = zb / covered; }
    }
  }
  // Normals from central differences of the front depth, only between covered pixels (silhouette edges stay flat).
  const pixel = 1 / size;
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      const q = r * size + c;
      if (out[q] === 0) continue;
      const dzdx = (coveredDepth(out, size, q, r, c + 1) - coveredDepth(out, size, q, r, c - 1)) / (2 * pixel);
      // image rows grow downwards, canonical y upwards
      const dzdy = (coveredDepth(out, size, q, r - 1, c) - coveredDepth(out, size, q, r + 1, c)) / (2 * pixel);
      const len = Math.hypot(dzdx, dzdy, 1);
      out[3 * n + q] = -dzdx / len;
      out[4 * n + q] = -dzdy / len;
    }
  }
  return out;
}

// coveredDepth is a module function, not a closure made per covered pixel: the closure and its context were allocated
// for each one (frontViewImage 0.94 → 0.10 MB per apply, sampling heap profile).

/**
 * The front depth of frontViewImage's image at (row rr, column cc) where that pixel is inside the image and covered,
 * else the depth at pixel q (the pixel whose normal is being read), so that a silhouette edge reads flat.
 * out: the image being made, Float32Array 5*size*size channels-first (coverage, then front depth), size: pixels per
 * side → canonical depth
 */
function coveredDepth(out: Float32Array, size: number, q: number, rr: number, cc: number): number {
  const n = size * size;
  return rr >= 0 && cc >= 0 && rr < size && cc < size && out[rr * size + cc] > 0 ? out[n + rr * size + cc] : out[n + q];
}

/**
 * Canonical (x, y) → image (column, row) of frontViewImage at `size` px: continuous pixel coordinates with pixel
 * centres at integers (column 0 left, row 0 top). Inverse: imageToCanonical.
 */
export function canonicalToImage(x: number, y: number, size: number): [number, number] {
  return [(x + 0.5) * size - 0.5, (0.5 - y) * size - 0.5];
}

/** Image (column, row) of frontViewImage at `size` px → canonical (x, y). */
export function imageToCanonical(col: number, row: number, size: number): [number, number] {
  return [(col + 0.5) / size - 0.5, 0.5 - (row + 0.5) / size];
}
