/**
 * A character's mesh in new proportions: its own skinning (the artist's weights, merged onto the template) applied to
 * the re-proportioning transforms of reproportionSkeleton.ts. Weights blend the transforms, so the mesh stays whole
 * where bones meet; every part keeps its vertices, triangles and order.
 */
import { linearBlendSkinning } from '../../deform/linearBlendSkinning.js';
import type { MeshPart } from '../../types.js';

/**
 * reproportionParts: parts (#P, positions #V_p*3), weights (#P, top-k indices #V_p*k into the transforms' joints +
 * values #V_p*k), transforms (Float64Array #J*12, row-major 3x4 per joint) → new parts (same names and triangles,
 * new positions). Throws BAD_ARRAY/BAD_INDEX like linearBlendSkinning.
 */
export function reproportionParts(
  parts: MeshPart[],
  weights: { indices: Uint16Array; weights: Float32Array }[],
  transforms: Float64Array,
): MeshPart[] {
  return parts.map((part, p) => {
    const k = weights[p].indices.length / (part.positions.length / 3);
    return {
      name: part.name,
      positions: linearBlendSkinning(part.positions, weights[p].indices, weights[p].weights, k, transforms),
      triangles: part.triangles,
    };
  });
}
