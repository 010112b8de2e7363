/**
 * The fixed half of Apply Latent Pose's rig-structured decoder (issue 6, v2): the decoder's local joint rotations
 * applied to the character's own auto-rig. The pair kind picks the blend, as in training (the slice's contract):
 *   skinning           → linear blend skinning (LBS) of the rest mesh
 *   skinningCorrective → dual-quaternion skinning (DQS) with the same rotations (the data's "better deformation")
 *   corrective         → rest + (DQS − LBS): the corrective alone, zero at rest
 * A corrective share s < 1 (pose/correctiveShare) takes that part of the corrective: LBS + s·(DQS − LBS), and
 * rest + s·(DQS − LBS) alone.
 */
import type { PoseVariant } from '../data/poses/poseSample.js';
import { dualQuaternionSkinning } from '../deform/dualQuaternionSkinning.js';
import { linearBlendSkinning, poseTransforms, type TopKWeights } from '../deform/linearBlendSkinning.js';
import { AutoRigError } from '../errors.js';
import { MIXAMO_PARENT_INDICES } from '../skeleton/mixamoTemplate.js';
import { jointFrames, localToWorldRotations } from './jointFrames.js';

/**
 * posedByRig: the rest mesh posed by local joint rotations through its rig, in the variant's blend.
 * rest: Float32Array #V*3 (canonical frame), weights: #V*k over MIXAMO_JOINTS slots (templateRig), heads: Float64Array
 * #23*3 (canonical, MIXAMO_JOINTS order), local: Float32Array #23*3 (radians in the joint frames of jointFrames),
 * strength: scales every joint's angle, variant, share: the corrective's share in [0, 1] (default 1, plain DQS)
 * → Float32Array #V*3, the posed mesh (canonical frame).
 * Throws BAD_ARRAY / BAD_INDEX on arrays that do not fit, BAD_REQUEST on an unknown variant or a share outside [0, 1].
 */
export function posedByRig(
  rest: Float32Array, weights: TopKWeights, heads: Float64Array, local: Float32Array, strength: number, variant: PoseVariant,
  share = 1,
): Float32Array {
  if (!(share >= 0 && share <= 1)) throw new AutoRigError('BAD_REQUEST', `the corrective share must be from 0 to 1, got ${String(share)}`);
  const rotations = localToWorldRotations(jointFrames(heads), local, strength);
  const transforms = poseTransforms(heads, MIXAMO_PARENT_INDICES, rotations);
  const { indices, weights: values, influences } = weights;
  if (variant === 'skinning') return linearBlendSkinning(rest, indices, values, influences, transforms);
  if (variant !== 'skinningCorrective' && variant !== 'corrective') throw new AutoRigError('BAD_REQUEST', `unknown variant "${String(variant)}"`);
  const better = dualQuaternionSkinning(rest, indices, values, influences, transforms);
  if (variant === 'skinningCorrective' && share === 1) return better;
  const linear = linearBlendSkinning(rest, indices, values, influences, transforms);
  const base = variant === 'corrective' ? rest : linear;
  const blended = new Float32Array(better.length);
  for (let i = 0; i < better.length; i++) blended[i] = base[i] + share * (better[i] - linear[i]);
  return blended;
}
