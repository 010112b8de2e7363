import type { VoxelGrid } from '../geometry/voxelGrid.js';
import { holdPropsInHands } from './heldPropWeights.js';
import { behindLegsVoxels, hangBehindLegsFromHips } from './sheetBehindLegs.js';
import { hangingBoneSets, meshShells, restrictToShellBones, rigidShells, shellBoneSets } from './shellBones.js';
import { keepSkirtOnThighs, skirtVoxels, type LegChain } from './skirtOnThighs.js';
import type { SkinBone } from './voxelBoneWeights.js';

/** The hand bones and each vertex's standing-rod piece (heldPropWeights.propRodPieces): where a held staff is looked for. */
export interface HeldProps {
  hands: number[];
  pieceOf: Int32Array;
}

/**
 * applySkinningRules: what an animator expects of clothes and props, whatever gave the weights (the voxel geodesics
 * or the learned network's points), applied in place in this order:
 * - a skirt or robe spanning both legs stays on the hips and thighs (skirtOnThighs.ts), and a cape or tail fused to
 *   the body behind the legs hangs from the hips (sheetBehindLegs.ts), when the two legs are known;
 * - separate closed pieces keep to the bones that run through them, and those no bone runs through follow what they
 *   hang from; then a separate piece with no joint inside it moves rigidly with the bone it lies along (shellBones.ts);
 * - a staff standing beside the body moves with the hand that holds it (heldPropWeights.ts), when props are given.
 * canonical: Float32Array #V*3, triangles: Uint32Array #T*3, g + solid: the solid voxelisation of the whole mesh
 * (Uint8Array #voxels), bones: SkinBone[] (canonical), k: influences, weights: top-k indices Uint16Array #V*k + values
 * Float32Array #V*k (rows sum to 1, in and out), legs: legChains (two, or none), props: HeldProps or undefined
 */
export function applySkinningRules(
  canonical: Float32Array, triangles: Uint32Array, g: VoxelGrid, solid: Uint8Array, bones: SkinBone[], k: number,
  weights: { indices: Uint16Array; weights: Float32Array }, legs: LegChain[] = [], props?: HeldProps,
): void {
  const { indices, weights: values } = weights;
  if (legs.length === 2) {
    keepSkirtOnThighs(canonical, g, solid, skirtVoxels(solid, g, bones, legs), bones, legs, k, indices, values);
    hangBehindLegsFromHips(canonical, g, solid, behindLegsVoxels(solid, g, bones, legs), bones, legs, k, indices, values);
  }
  const shells = meshShells(canonical, triangles);
  if (shells.count > 1) {
    const closed = new Uint8Array(shells.count);
    const sets = shellBoneSets(canonical, triangles, shells, bones, g.size, closed);
    // closed pieces no bone runs through follow what they hang from (a cape: the upper back, not the calves)
    hangingBoneSets(canonical, shells, sets, closed, bones, k, indices, values, 2 * g.size);
    restrictToShellBones(canonical, shells.shellOf, sets, bones, k, indices, values);
    // and a piece with no joint inside it moves rigidly with the bone it lies along (a robot's plates, a hat)
    rigidShells(canonical, shells, bones, k, indices, values);
  }
  if (props) holdPropsInHands(canonical, props.pieceOf, bones, props.hands, k, indices, values);
}
