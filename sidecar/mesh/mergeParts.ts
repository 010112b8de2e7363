import protocol from '../../shared-schema/protocol.json' with { type: 'json' };
import { AutoRigError } from '../errors.js';
import type { MeshPart } from '../types.js';

/** The size limits of a character: the protocol's (the server refuses the same request with the same codes). */
export interface MeshLimits {
  maxVerticesTotal: number;
  maxTrianglesTotal: number;
  minVerticesTotal: number;
}

export const MESH_LIMITS: Readonly<MeshLimits> = Object.freeze({
  maxVerticesTotal: protocol.limits.maxVerticesTotal,
  maxTrianglesTotal: protocol.limits.maxTrianglesTotal,
  minVerticesTotal: protocol.limits.minVerticesTotal,
});

/** Several parts as one character: positions #V*3 and triangles #T*3 over the concatenated vertices. */
export interface MergedMesh {
  positions: Float32Array;
  triangles: Uint32Array;
  /** vertex offset of each part in `positions`, #parts+1 (the last entry is #V) */
  partOffsets: Uint32Array;
}

/**
 * Concatenates the parts (each keeps its own vertex order) and drops triangles that cannot carry geometry:
 * indices out of range, repeated corners, zero area. Throws BAD_NUMBER on NaN/Inf coordinates and EMPTY_MESH
 * when nothing is left. A mesh over the limits is refused (TOO_LARGE) before anything is allocated.
 * parts: MeshPart[] → MergedMesh
 */
export function mergeParts(parts: MeshPart[], limits: MeshLimits = MESH_LIMITS): MergedMesh {
  const { vertices: nv, triangles: nt } = checkMeshSize(parts, limits);
  const positions = new Float32Array(nv * 3);
  const triangles = new Uint32Array(nt * 3);
  const partOffsets = new Uint32Array(parts.length + 1);
  let vo = 0;
  let to = 0;
  parts.forEach((p, pi) => {
    partOffsets[pi] = vo;
    const pv = p.positions.length / 3;
    for (let i = 0; i < p.positions.length; i++) {
      const x = p.positions[i];
      if (!Number.isFinite(x)) throw new AutoRigError('BAD_NUMBER', `part "${p.name}": vertex ${Math.floor(i / 3)} has a NaN or infinite coordinate`);
      positions[vo * 3 + i] = x;
    }
    const t = p.triangles;
    for (let i = 0; i < t.length; i += 3) {
      const a = t[i], b = t[i + 1], c = t[i + 2];
      if (a >= pv || b >= pv || c >= pv) throw new AutoRigError('BAD_INDEX', `part "${p.name}": triangle ${i / 3} indexes a vertex out of range`);
      if (a === b || b === c || a === c) continue;
      if (triangleArea2(p.positions, a, b, c) <= 0) continue;
      triangles[to++] = a + vo;
      triangles[to++] = b + vo;
      triangles[to++] = c + vo;
    }
    vo += pv;
  });
  partOffsets[parts.length] = vo;
  if (to === 0) throw new AutoRigError('EMPTY_MESH', 'the mesh has no triangle with a non-zero area');
  return { positions, triangles: triangles.slice(0, to), partOffsets };
}

/**
 * Counts the vertices and triangles of all parts and holds them to the limits: whole triples (BAD_ARRAY), at most
 * maxVerticesTotal / maxTrianglesTotal (TOO_LARGE), at least minVerticesTotal vertices and one triangle (EMPTY_MESH).
 * Reads only the arrays' lengths, so a mesh far too large costs nothing to refuse.
 * parts: MeshPart[] → { vertices: #V, triangles: #T }
 */
export function checkMeshSize(parts: MeshPart[], limits: MeshLimits = MESH_LIMITS): { vertices: number; triangles: number } {
  let vertices = 0;
  let triangles = 0;
  for (const p of parts) {
    if (p.positions.length % 3 !== 0 || p.triangles.length % 3 !== 0) {
      throw new AutoRigError('BAD_ARRAY', `part "${p.name}": positions and triangles must hold whole triples`);
    }
    vertices += p.positions.length / 3;
    triangles += p.triangles.length / 3;
  }
  if (vertices > limits.maxVerticesTotal) {
    throw new AutoRigError('TOO_LARGE', `the mesh has ${vertices} vertices; the limit is ${limits.maxVerticesTotal} (decimate it first)`);
  }
  if (triangles > limits.maxTrianglesTotal) {
    throw new AutoRigError('TOO_LARGE', `the mesh has ${triangles} triangles; the limit is ${limits.maxTrianglesTotal} (decimate it first)`);
  }
  if (vertices < limits.minVerticesTotal || triangles === 0) {
    throw new AutoRigError('EMPTY_MESH', `too few to rig: ${vertices} vertices, ${triangles} triangles (at least ${limits.minVerticesTotal} vertices and one triangle)`);
  }
  return { vertices, triangles };
}

/** Twice the triangle's area (a, b, c index positions #V*3). */
export function triangleArea2(positions: Float32Array, a: number, b: number, c: number): number {
  const ax = positions[a * 3], ay = positions[a * 3 + 1], az = positions[a * 3 + 2];
  const ux = positions[b * 3] - ax, uy = positions[b * 3 + 1] - ay, uz = positions[b * 3 + 2] - az;
  const vx = positions[c * 3] - ax, vy = positions[c * 3 + 1] - ay, vz = positions[c * 3 + 2] - az;
  const cx = uy * vz - uz * vy, cy = uz * vx - ux * vz, cz = ux * vy - uy * vx;
  return Math.sqrt(cx * cx + cy * cy + cz * cz);
}
