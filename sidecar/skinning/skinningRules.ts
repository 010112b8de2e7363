import type { VoxelGrid } from '../geometry/voxelGrid.js';
import { holdPropsInHands } from './heldPropWeights.js';
import { behindLegsVoxels, hangBehindLegsFromHips } from './sheetBehindLegs.js';
import { meshShells } from '../mesh/meshShells.js';
import { hangingBoneSets, restrictToShellBones, rigidShells, shellBoneSets } from './shellBones.js';
import { keepSkirtOnThighs, skirtVoxels, type LegChain } from './skirtOnThighs.js';
import type { SkinBone } from './voxelBoneWeights.js';

/** The hand bones and each vertex's standing-rod piece (heldPropWeights.propRodPieces): where a held staff is looked for. */
export interface HeldProps {
  hands: number[];
  pieceOf: Int32Array;
}

/** What the rules read from the shape and the skeleton alone, before any weights (planSkinningRules). */
export interface SkinningRulesPlan {
  /** the two legs (legChains), or none: then no skirt or cape is looked for */
  legs: LegChain[];
  /** voxels of a skirt spanning both legs (skirtVoxels) and of solid hanging behind them (behindLegsVoxels), #voxels */
  skirt?: Uint8Array;
  behindLegs?: Uint8Array;
  /** the mesh's pieces (meshShells), each piece's own bones (shellBoneSets) and whether it is closed (#shells) */
  shells: { shellOf: Int32Array; count: number };
  sets: number[][];
  closed: Uint8Array;
}

/**
 * planSkinningRules: the part of applySkinningRules that needs no weights, so that a caller waiting for weights (the
 * learned network on the model host) can make it meanwhile.
 * canonical: Float32Array #V*3, triangles: Uint32Array #T*3, g + solid: the solid voxelisation of the whole mesh
 * (Uint8Array #voxels), bones: SkinBone[] (canonical), legs: legChains (two, or none), shells: the mesh's pieces when
 * the caller has them (PreparedMesh.shells) → SkinningRulesPlan
 */
export function planSkinningRules(
  canonical: Float32Array, triangles: Uint32Array, g: VoxelGrid, solid: Uint8Array, bones: SkinBone[], legs: LegChain[] = [],
  shells: { shellOf: Int32Array; count: number } = meshShells(canonical, triangles),
): SkinningRulesPlan {
  const closed = new Uint8Array(shells.count);
  const sets = shells.count > 1 ? shellBoneSets(canonical, triangles, shells, bones, g.size, closed) : [[]];
  if (legs.length !== 2) return { legs, shells, sets, closed };
  return { legs, skirt: skirtVoxels(solid, g, bones, legs), behindLegs: behindLegsVoxels(solid, g, bones, legs), shells, sets, closed };
}

/**
 * applySkinningRules: what an animator expects of clothes and props, whatever gave the weights (the voxel geodesics
 * or the learned network's points), applied in place in this order:
 * - a skirt or robe spanning both legs stays on the hips and thighs (skirtOnThighs.ts), and a cape or tail fused to
 *   the body behind the legs hangs from the hips (sheetBehindLegs.ts), when the two legs are known;
 * - separate closed pieces keep to the bones that run through them, and those no bone runs through follow what they
 *   hang from; then a separate piece with no joint inside it moves rigidly with the bone it lies along (shellBones.ts);
 * - a staff standing beside the body moves with the hand that holds it (heldPropWeights.ts), when props are given.
 * canonical: Float32Array #V*3, g + solid: the solid voxelisation of the whole mesh (Uint8Array #voxels), bones:
 * SkinBone[] (canonical), k: influences, weights: top-k indices Uint16Array #V*k + values Float32Array #V*k (rows sum
 * to 1, in and out), plan: planSkinningRules of the same mesh, solid and bones (the legs are read from it), props:
 * HeldProps or undefined
 */
export function applySkinningRules(
  canonical: Float32Array, g: VoxelGrid, solid: Uint8Array, bones: SkinBone[], k: number,
  weights: { indices: Uint16Array; weights: Float32Array }, plan: SkinningRulesPlan, props?: HeldProps,
): void {
  const { indices, weights: values } = weights;
  if (plan.skirt && plan.behindLegs) {
    keepSkirtOnThighs(canonical, g, solid, plan.skirt, bones, plan.legs, k, indices, values);
    hangBehindLegsFromHips(canonical, g, solid, plan.behindLegs, bones, plan.legs, k, indices, values);
  }
  const { shells, closed } = plan;
  if (shells.count > 1) {
    // hangingBoneSets fills the boneless closed pieces' sets in place: a copy, so that a plan serves one call
    const sets = plan.sets.map((s) => [...s]);
    // closed pieces no bone runs through follow what they hang from (a cape: the upper back, not the calves)
    hangingBoneSets(canonical, shells, sets, closed, bones, k, indices, values, 2 * g.size);
    restrictToShellBones(canonical, shells.shellOf, sets, bones, k, indices, values);
    // and a piece with no joint inside it moves rigidly with the bone it lies along (a robot's plates, a hat)
    rigidShells(canonical, shells, bones, k, indices, values);
  }
  if (props) holdPropsInHands(canonical, props.pieceOf, bones, props.hands, k, indices, values);
}
