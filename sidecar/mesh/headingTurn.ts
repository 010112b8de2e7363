import type { SolidBody } from './axisAlignedFrame.js';
import type { Vec3 } from '../types.js';

/** Solid voxels the mirror sweep tests at most (an even subsample of the solid): the sweep's cost stays flat. */
export const SWEEP_SAMPLES = 2500;

/** Angles between mirror planes tried first, and the finer step around the best of them (degrees). */
export const SWEEP_STEP = { coarse: 6, fine: 1 };

/** A body whose best mirror plane lies within this angle of a grid plane counts as standing along the grid (degrees). */
export const TURN_MIN_DEGREES = 8;

/** The turned mirror plane must match the body better than any grid plane by this much (IoU) to be believed. */
export const TURN_GAIN = 0.025;

/**
 * A turn about one grid axis: `axis` (0 x, 1 y, 2 z), `degrees` (right-handed about +axis, in (-45, 45]) that takes
 * the body's best mirror plane from the grid's axes to where it lies; `symmetry`: that plane's mirror IoU,
 * `gridSymmetry`: the best grid plane's (same measure).
 */
export interface HeadingTurn {
  axis: number;
  degrees: number;
  symmetry: number;
  gridSymmetry: number;
}

/**
 * Finds whether the body stands turned about one of the grid's axes (a character turned 35° about up): the mirror
 * plane the body is most symmetric across, searched over planes that contain a grid axis, all headings about it.
 * Planes through the solid's centroid, scored by the solid voxels whose mirror image is solid (an IoU).
 * body: SolidBody → HeadingTurn, or null when the best plane is a grid plane (or not clearly better than one).
 */
export function findHeadingTurn(body: SolidBody): HeadingTurn | null {
  const samples = solidSamples(body);
  const count = samples.length / 3;
  if (count < 8) return null;
  let best = { axis: 0, degrees: 0, symmetry: -1 };
  let gridSymmetry = -1;
  for (let axis = 0; axis < 3; axis++) {
    for (let deg = 0; deg < 180; deg += SWEEP_STEP.coarse) {
      const s = mirrorSymmetryAbout(body, samples, axis, deg);
      if (deg % 90 === 0 && s > gridSymmetry) gridSymmetry = s;
      if (s > best.symmetry) best = { axis, degrees: deg, symmetry: s };
    }
  }
  for (let deg = best.degrees - SWEEP_STEP.coarse + SWEEP_STEP.fine; deg < best.degrees + SWEEP_STEP.coarse; deg += SWEEP_STEP.fine) {
    const s = mirrorSymmetryAbout(body, samples, best.axis, deg);
    if (s > best.symmetry) best = { axis: best.axis, degrees: deg, symmetry: s };
  }
  // The plane's normal at `degrees` from the first in-plane axis; the turn that brings the nearest grid plane there.
  let degrees = best.degrees - 90 * Math.round(best.degrees / 90);
  if (degrees <= -45) degrees += 90;
  if (Math.abs(degrees) < TURN_MIN_DEGREES || best.symmetry < gridSymmetry + TURN_GAIN) return null;
  return { axis: best.axis, degrees, symmetry: best.symmetry, gridSymmetry };
}

/** Centres of an even subsample of the solid voxels, in voxel units: Float64Array #S*3 (S ≤ SWEEP_SAMPLES). */
function solidSamples(body: SolidBody): Float64Array {
  const { solid, grid } = body;
  const [nx, ny] = grid.dims;
  let total = 0;
  for (let v = 0; v < solid.length; v++) total += solid[v];
  const every = Math.max(1, ceilDivide(total, SWEEP_SAMPLES));
  const out = new Float64Array(3 * ceilDivide(total, every));
  let seen = 0, n = 0;
  for (let v = 0; v < solid.length; v++) {
    if (!solid[v]) continue;
    if (seen++ % every) continue;
    const i = v % nx, j = ((v - i) / nx) % ny, k = Math.floor(v / (nx * ny));
    out[n++] = i + 0.5;
    out[n++] = j + 0.5;
    out[n++] = k + 0.5;
  }
  return out.subarray(0, n);
}

/**
 * ⌈a / b⌉ for integers a ≥ 0, b ≥ 1, as Math.ceil(a / b) gives it, by a division that is always exact: V8 compiled
 * `Math.ceil(total / every)` as an integer division while its calls had divided evenly, and threw that code away
 * ('lost precision', --trace-deopt) at the first that did not.
 */
function ceilDivide(a: number, b: number): number {
  const r = a % b;
  return (a - r) / b + (r > 0 ? 1 : 0);
}

/**
 * Mirror IoU of the sampled solid across the plane through the samples' centroid that contains grid axis `axis` and
 * whose normal lies at `degrees` from axis (axis+1)%3 towards (axis+2)%3. samples: voxel-unit centres #S*3 → [0, 1].
 */
export function mirrorSymmetryAbout(body: SolidBody, samples: Float64Array, axis: number, degrees: number): number {
  const { solid, grid } = body;
  const [nx, ny, nz] = grid.dims;
  const a = (axis + 1) % 3, b = (axis + 2) % 3;
  const count = samples.length / 3;
  let ca = 0, cb = 0;
  for (let s = 0; s < count; s++) { ca += samples[3 * s + a]; cb += samples[3 * s + b]; }
  ca /= count;
  cb /= count;
  const na = Math.cos(degrees * Math.PI / 180), nb = Math.sin(degrees * Math.PI / 180);
  const m = [0, 0, 0];
  let hits = 0;
  for (let s = 0; s < count; s++) {
    const pa = samples[3 * s + a], pb = samples[3 * s + b];
    const t = 2 * ((pa - ca) * na + (pb - cb) * nb);
    m[axis] = samples[3 * s + axis];
    m[a] = pa - t * na;
    m[b] = pb - t * nb;
    const i = Math.floor(m[0]), j = Math.floor(m[1]), k = Math.floor(m[2]);
    if (i < 0 || j < 0 || k < 0 || i >= nx || j >= ny || k >= nz) continue;
    hits += solid[(k * ny + j) * nx + i];
  }
  return hits / Math.max(1, 2 * count - hits);
}

/** Points turned by `degrees` right-handed about grid axis `axis`: Float32Array #V*3 → Float32Array #V*3. */
export function turnPoints(positions: Float32Array, axis: number, degrees: number): Float32Array {
  const a = (axis + 1) % 3, b = (axis + 2) % 3;
  const c = Math.cos(degrees * Math.PI / 180), s = Math.sin(degrees * Math.PI / 180);
  const out = new Float32Array(positions.length);
  for (let i = 0; i < positions.length; i += 3) {
    const pa = positions[i + a], pb = positions[i + b];
    out[i + axis] = positions[i + axis];
    out[i + a] = c * pa - s * pb;
    out[i + b] = s * pa + c * pb;
  }
  return out;
}

/** One vector turned by `degrees` right-handed about grid axis `axis` (components under 1e-12 written as 0). */
export function turnVector(p: Vec3, axis: number, degrees: number): Vec3 {
  const a = (axis + 1) % 3, b = (axis + 2) % 3;
  const c = Math.cos(degrees * Math.PI / 180), s = Math.sin(degrees * Math.PI / 180);
  const out: Vec3 = [0, 0, 0];
  out[axis] = p[axis];
  out[a] = c * p[a] - s * p[b];
  out[b] = s * p[a] + c * p[b];
  return out.map((x) => (Math.abs(x) < 1e-12 ? 0 : x)) as Vec3;
}
