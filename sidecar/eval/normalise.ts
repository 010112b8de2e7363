import { AutoRigError } from '../errors.js';
import type { MeshPart, Vec3 } from '../types.js';

/**
 * The similarity that puts a character in the eval's normalised units: p ↦ (p − centre) · scale.
 * Distances measured after it compare across characters of any size (RigNet measures in the same units).
 */
export interface Normalisation {
  /** centre of the bounding box of the vertices the triangles use, input space */
  centre: Vec3;
  /** 1 / longest side of that box */
  scale: number;
}

/**
 * The normalisation of a character: its bounding-box centre goes to the origin and the box's longest side to 1.
 * Only vertices that some triangle uses count: loose vertices (left-over points, empty slots) draw no surface
 * and must not change the units. Throws EMPTY_MESH when no triangle is left or the box has no size, BAD_INDEX on a
 * triangle index out of range, BAD_NUMBER on a NaN/Inf coordinate.
 * parts: MeshPart[] (positions #V*3, triangles #T*3 per part) → Normalisation
 */
export function normalisation(parts: MeshPart[]): Normalisation {
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  for (const part of parts) {
    const { positions, triangles } = part;
    const vertexCount = Math.floor(positions.length / 3);
    for (let t = 0; t < triangles.length; t++) {
      const v = triangles[t];
      if (v >= vertexCount) throw new AutoRigError('BAD_INDEX', `part "${part.name}": triangle corner ${t} points at vertex ${v} of ${vertexCount}`);
      for (let c = 0; c < 3; c++) {
        const x = positions[v * 3 + c];
        if (!Number.isFinite(x)) throw new AutoRigError('BAD_NUMBER', `part "${part.name}": vertex ${v} has a NaN or infinite coordinate`);
        if (x < lo[c]) lo[c] = x;
        if (x > hi[c]) hi[c] = x;
      }
    }
  }
  if (lo[0] === Infinity) throw new AutoRigError('EMPTY_MESH', 'no triangles: nothing to normalise');
  const longest = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
  if (!(longest > 0)) throw new AutoRigError('EMPTY_MESH', 'the mesh has no extent: every vertex is at one point');
  return {
    centre: [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2],
    scale: 1 / longest,
  };
}

/** p: Vec3 (input space), n: Normalisation → Vec3 in normalised units */
export function normalisePoint(p: Vec3, n: Normalisation): Vec3 {
  return [(p[0] - n.centre[0]) * n.scale, (p[1] - n.centre[1]) * n.scale, (p[2] - n.centre[2]) * n.scale];
}

/** positions: Float32Array #V*3 (input space), n: Normalisation → new Float32Array #V*3 in normalised units */
export function normalisePositions(positions: Float32Array, n: Normalisation): Float32Array {
  const out = new Float32Array(positions.length);
  const [cx, cy, cz] = n.centre;
  const s = n.scale;
  for (let i = 0; i + 2 < positions.length; i += 3) {
    out[i] = (positions[i] - cx) * s;
    out[i + 1] = (positions[i + 1] - cy) * s;
    out[i + 2] = (positions[i + 2] - cz) * s;
  }
  return out;
}
