import { BufferAttribute, BufferGeometry } from 'three';
import { MeshBVH } from 'three-mesh-bvh';

/** A triangle mesh with a three-mesh-bvh tree for closest-point queries. */
export interface ClosestSurface {
  bvh: MeshBVH;
  /** the positions it was built over (the caller's array, not copied: refit the tree after moving them) */
  positions: Float32Array;
  /** the triangles in the tree's order (a hit's faceIndex reads its corners here), Uint32Array #T*3 */
  corners: Uint32Array;
  /** the three geometry the tree belongs to (dispose it when done) */
  geometry: BufferGeometry;
}

/**
 * closestSurface: positions Float32Array #V*3, triangles Uint32Array #T*3 → ClosestSurface. The triangles are copied,
 * since the tree reorders the index it is built over.
 */
export function closestSurface(positions: Float32Array, triangles: Uint32Array): ClosestSurface {
  const geometry = new BufferGeometry();
  geometry.setAttribute('position', new BufferAttribute(positions, 3));
  geometry.setIndex(new BufferAttribute(triangles.slice(), 1));
  const bvh = new MeshBVH(geometry);
  return { bvh, positions, corners: geometry.index!.array as Uint32Array, geometry };
}
