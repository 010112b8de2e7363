import { fillInterior, gridOverBox, rasterizeTriangles, type VoxelGrid } from '../geometry/voxelGrid.js';
import { usedBounds } from '../mesh/canonicalFrame.js';

/**
 * solidVoxelisation: the mesh's used box on `resolution` voxels along its longest side (2 voxels of margin), its
 * surface rasterised and its inside filled. positions: Float32Array #V*3, triangles: Uint32Array #T*3 →
 * grid + solid Uint8Array #voxels
 */
export function solidVoxelisation(positions: Float32Array, triangles: Uint32Array, resolution: number): { grid: VoxelGrid; solid: Uint8Array } {
  const [min, max] = usedBounds(positions, triangles);
  const grid = gridOverBox(min, max, resolution, 2);
  return { grid, solid: fillInterior(rasterizeTriangles(positions, triangles, grid), grid) };
}
