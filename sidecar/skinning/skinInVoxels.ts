import { applySkinningRules, planSkinningRules, type HeldProps } from './skinningRules.js';
import { solidVoxelisation } from './solidVoxelisation.js';
import type { LegChain } from './skirtOnThighs.js';
import type { SkinBone } from './voxelBoneWeights.js';
import { voxelBoneWeights } from './voxelBoneWeights.js';
import { voxelWeightsToVertices } from './voxelWeightsToVertices.js';

/** Voxels along the character's longest side: thin limbs stay a few voxels thick, and the cost stays flat in #V. */
export const SKIN_VOXEL_RESOLUTION = 112;

/**
 * Skinning that never fails: a solid voxelisation of the whole character (every part together), geodesic bone weights
 * inside it, then carried to every vertex; then the rules for clothes, closed pieces and held props
 * (skinningRules.applySkinningRules) on the same solid.
 * canonical: Float32Array #V*3, triangles: Uint32Array #T*3, bones: SkinBone[] (canonical space), k: influences,
 * resolution: voxels along the longest side (default SKIN_VOXEL_RESOLUTION), legs: the two legs' bones (legChains; [] when
 * the skeleton's names are not Mixamo's: then a skirt is not looked for), props: the hand bones and each vertex's rod
 * piece (heldPropWeights.propRodPieces; absent: a held staff is not looked for), shells: the mesh's pieces when the
 * caller has them (meshShells), midline: the x of the body's midplane (voxelBoneWeights; default 0) →
 *   top-k indices Uint16Array #V*k + values Float32Array #V*k
 */
export function skinInVoxels(
  canonical: Float32Array, triangles: Uint32Array, bones: SkinBone[], k: number,
  onProgress: (fraction: number) => void = () => {}, resolution = SKIN_VOXEL_RESOLUTION, legs: LegChain[] = [], props?: HeldProps,
  shells?: { shellOf: Int32Array; count: number }, midline = 0,
): { indices: Uint16Array; weights: Float32Array } {
  const { grid: g, solid } = solidVoxelisation(canonical, triangles, resolution);
  onProgress(0.1);
  const vw = voxelBoneWeights(solid, g, bones, k, (done, total) => onProgress(0.1 + 0.75 * (done / total)), midline);
  const out = voxelWeightsToVertices(canonical, g, vw, bones.length);
  applySkinningRules(canonical, g, solid, bones, k, out, planSkinningRules(canonical, triangles, g, solid, bones, legs, shells), props);
  onProgress(1);
  return out;
}
