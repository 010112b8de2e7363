import type { VoxelGrid } from '../geometry/voxelGrid.js';

/**
 * solidComponents: the connected pieces of a solid voxelisation, 26-connected like the geodesic paths of the voxel
 * skinning (voxelGeodesic.ts): two voxels share a label exactly when a path through the solid joins them, so parts
 * with a gap of a voxel or more between them (a floating hat, eyes, a prop) get labels of their own.
 * solid: Uint8Array #voxels (1 = surface or interior), g → { label: Int32Array #voxels (-1 outside the solid), count }
 */
export function solidComponents(solid: Uint8Array, g: VoxelGrid): { label: Int32Array; count: number } {
  const [nx, ny, nz] = g.dims;
  const label = new Int32Array(solid.length).fill(-1);
  const stack = new Int32Array(solid.length);
  let count = 0;
  for (let v0 = 0; v0 < solid.length; v0++) {
    if (!solid[v0] || label[v0] >= 0) continue;
    let top = 0;
    label[v0] = count;
    stack[top++] = v0;
    while (top > 0) {
      const v = stack[--top];
      const i = v % nx, j = Math.floor(v / nx) % ny, k = Math.floor(v / (nx * ny));
      for (let dz = -1; dz <= 1; dz++) {
        const c = k + dz;
        if (c < 0 || c >= nz) continue;
        for (let dy = -1; dy <= 1; dy++) {
          const b = j + dy;
          if (b < 0 || b >= ny) continue;
          for (let dx = -1; dx <= 1; dx++) {
            const a = i + dx;
            if (a < 0 || a >= nx) continue;
            const q = (c * ny + b) * nx + a;
            if (solid[q] && label[q] < 0) { label[q] = count; stack[top++] = q; }
          }
        }
      }
    }
    count++;
  }
  return { label, count };
}
