import { fillInterior, gridOverBox, rasterizeTriangles } from '../geometry/voxelGrid.js';
import { cross, scale, withoutNegativeZero } from '../geometry/vec3.js';
import type { Frame, Vec3 } from '../types.js';

/**
 * The character's own frame and the similarity that takes input space into the canonical box:
 * canonical = scale * R * (p - center), with x = the character's left, y = up, z = forward, longest side 1
 * (the [-0.5, 0.5] box of HumanRig).
 */
export interface CanonicalFrame {
  frame: Frame;
  center: Vec3;
  scale: number;
  /** how each decision was taken, for logs and tests */
  evidence: { lateralSymmetry: number; upScore: number; forwardScore: number; upByConvention: boolean; forwardByConvention: boolean };
}

const AXES: Vec3[] = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];

/** Bounding box of the vertices that triangles use: → [min, max]. */
export function usedBounds(positions: Float32Array, triangles: Uint32Array): [Vec3, Vec3] {
  const min: Vec3 = [Infinity, Infinity, Infinity];
  const max: Vec3 = [-Infinity, -Infinity, -Infinity];
  for (let t = 0; t < triangles.length; t++) {
    const o = triangles[t] * 3;
    for (let a = 0; a < 3; a++) {
      const x = positions[o + a];
      if (x < min[a]) min[a] = x;
      if (x > max[a]) max[a] = x;
    }
  }
  return [min, max];
}

/**
 * Finds up, forward and left from the geometry alone, for a humanoid standing along one of the input's axes
 * (lying down and upside down included):
 * - depth (front-back) is the thinnest side of the box;
 * - of the other two, left-right is the one the body is mirror-symmetric across;
 * - up points to the end whose middle column is filled (the head), away from the end with a gap (between the feet);
 * - forward is where the feet stick out from the shins.
 * A cue that does not decide falls back to the file conventions (glTF: +Y up, +Z forward; Blender: +Z up, -Y forward).
 * positions: Float32Array #V*3, triangles: Uint32Array #T*3 → CanonicalFrame
 */
export function findCanonicalFrame(positions: Float32Array, triangles: Uint32Array): CanonicalFrame {
  const [min, max] = usedBounds(positions, triangles);
  const ext = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
  const center: Vec3 = [(min[0] + max[0]) / 2, (min[1] + max[1]) / 2, (min[2] + max[2]) / 2];
  const g = gridOverBox(min, max, 64, 1);
  const surface = rasterizeTriangles(positions, triangles, g);
  const solid = fillInterior(surface, g);
  const [nx, ny, nz] = g.dims;
  const at = (c: number[]) => solid[(c[2] * ny + c[1]) * nx + c[0]];

  // Left-right is the axis the body is most mirror-symmetric across; boxy bodies that are symmetric both ways
  // (a blocky character) take the wider of the tied axes as left-right.
  const sym = [0, 1, 2].map((a) => mirrorIoU(solid, g.dims, a));
  const best = Math.max(...sym);
  const tied = [0, 1, 2].filter((a) => sym[a] >= best - 0.03);
  const lateralAxis = tied.reduce((a, b) => (ext[b] > ext[a] ? b : a));
  const rest = [0, 1, 2].filter((a) => a !== lateralAxis);
  const upAxis = ext[rest[0]] >= ext[rest[1]] ? rest[0] : rest[1];
  const depthAxis = rest[0] === upAxis ? rest[1] : rest[0];

  // Up sign: fraction of the middle column filled in the band at each end of the up axis.
  const n = g.dims;
  const bandUp = Math.max(1, Math.round(n[upAxis] * 0.08));
  const strip = Math.max(1, Math.round(ext[upAxis] / g.size * 0.03));
  const midLat = Math.floor(n[lateralAxis] / 2);
  const columnFill = (fromTop: boolean) => {
    let filled = 0, total = 0;
    const c = [0, 0, 0];
    for (let s = 0; s < bandUp; s++) {
      c[upAxis] = fromTop ? n[upAxis] - 2 - s : 1 + s;
      for (let l = midLat - strip; l <= midLat + strip; l++) {
        c[lateralAxis] = l;
        let any = 0;
        for (let d = 0; d < n[depthAxis] && !any; d++) { c[depthAxis] = d; any = at(c); }
        filled += any; total++;
      }
    }
    return filled / Math.max(1, total);
  };
  const upScore = columnFill(true) - columnFill(false);
  let upSign: number;
  let upByConvention = false;
  if (Math.abs(upScore) >= 0.15) upSign = upScore > 0 ? 1 : -1;
  else { upByConvention = true; upSign = 1; }

  // Forward sign: the feet reach further forward than the shins.
  const heightVox = n[upAxis] - 2;
  const bandCentroid = (f0: number, f1: number) => {
    let sum = 0, cnt = 0;
    const c = [0, 0, 0];
    for (let s = Math.floor(f0 * heightVox); s <= Math.ceil(f1 * heightVox); s++) {
      c[upAxis] = upSign > 0 ? 1 + s : n[upAxis] - 2 - s;
      for (let l = 0; l < n[lateralAxis]; l++) {
        c[lateralAxis] = l;
        for (let d = 0; d < n[depthAxis]; d++) { c[depthAxis] = d; if (at(c)) { sum += d; cnt++; } }
      }
    }
    return cnt ? sum / cnt : NaN;
  };
  const feet = bandCentroid(0, 0.04);
  const shins = bandCentroid(0.1, 0.25);
  const forwardScore = (feet - shins) * g.size / Math.max(ext[upAxis], 1e-12);
  let fwdSign: number;
  let forwardByConvention = false;
  if (Number.isFinite(forwardScore) && Math.abs(forwardScore) >= 0.006) fwdSign = forwardScore > 0 ? 1 : -1;
  else {
    forwardByConvention = true;
    // glTF stores Y-up characters facing +Z; Blender shows Z-up characters facing -Y.
    fwdSign = upAxis === 2 && depthAxis === 1 ? -1 : 1;
  }
  if (upByConvention) {
    // Prefer +Y (glTF), then +Z (Blender): the conventions of the two places our meshes come from.
    upSign = 1;
  }

  const up = withoutNegativeZero(scale(AXES[upAxis], upSign));
  const forward = withoutNegativeZero(scale(AXES[depthAxis], fwdSign));
  const left = withoutNegativeZero(cross(up, forward));
  return {
    frame: { up, forward, left },
    center,
    scale: 1 / Math.max(ext[0], ext[1], ext[2], 1e-12),
    evidence: { lateralSymmetry: best, upScore, forwardScore, upByConvention, forwardByConvention },
  };
}

/** Intersection over union of the solid with its mirror image across the grid's middle plane normal to `axis`. */
function mirrorIoU(solid: Uint8Array, dims: number[], axis: number): number {
  const [nx, ny, nz] = dims;
  let inter = 0, union = 0;
  const c = [0, 0, 0];
  for (c[2] = 0; c[2] < nz; c[2]++) for (c[1] = 0; c[1] < ny; c[1]++) for (c[0] = 0; c[0] < nx; c[0]++) {
    const a = solid[(c[2] * ny + c[1]) * nx + c[0]];
    const m = [c[0], c[1], c[2]];
    m[axis] = dims[axis] - 1 - c[axis];
    const b = solid[(m[2] * ny + m[1]) * nx + m[0]];
    if (a && b) inter++;
    if (a || b) union++;
  }
  return union ? inter / union : 0;
}

/** positions in input space #V*3 → canonical positions #V*3 (x left, y up, z forward, longest side 1). */
export function toCanonical(positions: Float32Array, cf: CanonicalFrame): Float32Array {
  const out = new Float32Array(positions.length);
  const { left, up, forward } = cf.frame;
  const s = cf.scale;
  for (let i = 0; i < positions.length; i += 3) {
    const x = positions[i] - cf.center[0], y = positions[i + 1] - cf.center[1], z = positions[i + 2] - cf.center[2];
    out[i] = s * (left[0] * x + left[1] * y + left[2] * z);
    out[i + 1] = s * (up[0] * x + up[1] * y + up[2] * z);
    out[i + 2] = s * (forward[0] * x + forward[1] * y + forward[2] * z);
  }
  return out;
}

/** One canonical point back into input space. */
export function fromCanonical(p: ArrayLike<number>, cf: CanonicalFrame): Vec3 {
  const { left, up, forward } = cf.frame;
  const s = 1 / cf.scale;
  return [0, 1, 2].map((a) => cf.center[a] + s * (left[a] * p[0] + up[a] * p[1] + forward[a] * p[2])) as Vec3;
}

/** One input-space point into canonical space. */
export function pointToCanonical(p: ArrayLike<number>, cf: CanonicalFrame): Vec3 {
  const out = toCanonical(new Float32Array([p[0], p[1], p[2]]), cf);
  return [out[0], out[1], out[2]];
}

