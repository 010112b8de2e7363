import { fillInterior, gridOverBox, rasterizeTriangles } from '../geometry/voxelGrid.js';
import { usedBounds } from '../mesh/canonicalFrame.js';
import { hangingBoneSets, meshShells, restrictToShellBones, shellBoneSets } from './shellBones.js';
import { holdPropsInHands } from './heldPropWeights.js';
import { behindLegsVoxels, hangBehindLegsFromHips } from './sheetBehindLegs.js';
import { keepSkirtOnThighs, skirtVoxels, type LegChain } from './skirtOnThighs.js';
import type { SkinBone } from './voxelBoneWeights.js';
import { voxelBoneWeights } from './voxelBoneWeights.js';
import { voxelWeightsToVertices } from './voxelWeightsToVertices.js';

/** Voxels along the character's longest side: thin limbs stay a few voxels thick, and the cost stays flat in #V. */
export const SKIN_VOXEL_RESOLUTION = 112;

/**
 * Skinning that never fails: a solid voxelisation of the whole character (every part together), geodesic bone weights
 * inside it, then carried to every vertex; closed pieces of the mesh then keep only the bones that run through them.
 * canonical: Float32Array #V*3, triangles: Uint32Array #T*3, bones: SkinBone[] (canonical space), k: influences,
 * resolution: voxels along the longest side (default SKIN_VOXEL_RESOLUTION), legs: the two legs' bones (legChains; [] when
 * the skeleton's names are not Mixamo's: then a skirt is not looked for), props: the hand bones and each vertex's rod
 * piece (heldPropWeights.propRodPieces; absent: a held staff is not looked for) →
 *   top-k indices Uint16Array #V*k + values Float32Array #V*k
 */
export function skinInVoxels(
  canonical: Float32Array, triangles: Uint32Array, bones: SkinBone[], k: number,
  onProgress: (fraction: number) => void = () => {}, resolution = SKIN_VOXEL_RESOLUTION, legs: LegChain[] = [], props?: { hands: number[]; pieceOf: Int32Array },
): { indices: Uint16Array; weights: Float32Array } {
  const [min, max] = usedBounds(canonical, triangles);
  const g = gridOverBox(min, max, resolution, 2);
  const solid = fillInterior(rasterizeTriangles(canonical, triangles, g), g);
  onProgress(0.1);
  const vw = voxelBoneWeights(solid, g, bones, k, (done, total) => onProgress(0.1 + 0.75 * (done / total)));
  const out = voxelWeightsToVertices(canonical, g, vw, bones.length);
  // a skirt or robe spanning both legs stays on the hips and thighs (skirtOnThighs.ts)
  if (legs.length === 2) {
    keepSkirtOnThighs(canonical, g, solid, skirtVoxels(solid, g, bones, legs), bones, legs, k, out.indices, out.weights);
    // and a cape or tail fused to the body behind the legs hangs from the hips (sheetBehindLegs.ts)
    hangBehindLegsFromHips(canonical, g, solid, behindLegsVoxels(solid, g, bones, legs), bones, legs, k, out.indices, out.weights);
  }
  // Separate closed pieces keep to the bones that run through them (shellBones.ts).
  const shells = meshShells(canonical, triangles);
  if (shells.count > 1) {
    const closed = new Uint8Array(shells.count);
    const sets = shellBoneSets(canonical, triangles, shells, bones, g.size, closed);
    // closed pieces no bone runs through follow what they hang from (a cape: the upper back, not the calves)
    hangingBoneSets(canonical, shells, sets, closed, bones, k, out.indices, out.weights, 2 * g.size);
    restrictToShellBones(canonical, shells.shellOf, sets, bones, k, out.indices, out.weights);
  }
  // a staff standing beside the body moves with the hand that holds it (heldPropWeights.ts)
  if (props) holdPropsInHands(canonical, props.pieceOf, bones, props.hands, k, out.indices, out.weights);
  onProgress(1);
  return out;
}
