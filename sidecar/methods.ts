/**
 * The pipeline's methods and the models each runs: what the server needs to know about a job before it starts one
 * (without loading the pipeline itself in the server's thread).
 */
import type { ModelName } from './learned/modelFiles.js';

/**
 * The pipeline variants: `geometric` (silhouette rules, voxel skinning), `learned` (HumanRig's networks: 2D joints,
 * joint refinement and skinning weights), `hybrid` (2D joints from the network where it is confident and from the
 * rules elsewhere, voxel skinning).
 */
export const METHODS = ['geometric', 'learned', 'hybrid'] as const;
export type Method = (typeof METHODS)[number];
/**
 * What rigCharacterAsync (the server, `autorig rig`, eval) uses when the request names no method: docs/EVAL.md has the
 * comparison on the held-out characters that chose it. rigCharacter (synchronous) is always the geometric pipeline, and
 * skinning without a method is the voxel skinning.
 */
export const DEFAULT_METHOD: Method = 'hybrid';

/**
 * The models a rig or skin request with `method` (undefined: the request's default) runs, in the order it loads them.
 * An unknown method runs none (the pipeline answers it with BAD_REQUEST).
 */
export function modelsRunBy(request: 'rig' | 'skin', method: string | undefined): ModelName[] {
  const chosen = method ?? (request === 'rig' ? DEFAULT_METHOD : 'geometric');
  if (chosen === 'learned') return request === 'rig' ? ['joints2d', 'pointRig'] : ['pointRig'];
  if (chosen === 'hybrid' && request === 'rig') return ['joints2d', 'pointRig'];
  return [];
}

/**
 * The models a pose.apply job loads (Apply Latent Pose, sidecar/pose/applyLatentPose.ts), in order: the SDF encoder,
 * the rig decoder, then those of the auto-rig it poses through (the default method's skeleton with the learned
 * skinning's weights: the rig request's models and point_rig), none of which when the request brings the mesh's own
 * rig (`rigGiven`). All are loaded for every pose and strength: a missing one is MODEL_MISSING even at strength 0.
 */
export function modelsRunByPose(rigGiven = false): ModelName[] {
  if (rigGiven) return ['latentPoseEncoder', 'latentPoseDecoder'];
  const rig = modelsRunBy('rig', undefined);
  return ['latentPoseEncoder', 'latentPoseDecoder', ...rig, ...(rig.includes('pointRig') ? [] : ['pointRig' as const])];
}

/**
 * The models a correctives or correctives.preview job with `method` (undefined: the default,
 * 'poseDependentDualQuaternion') loads: the learned weight field, except for plain 'dualQuaternion'.
 */
export function modelsRunByCorrectives(method: string | undefined): ModelName[] {
  return method === 'dualQuaternion' ? [] : ['poseWeights'];
}
