/**
 * The learned pose-dependent weight field (issue 7; VINECS's f(x, pose), made generic with skeleton-relative inputs):
 * for a pose, new weights over each vertex's four static influences, from models/pose_weights.onnx (card
 * models/pose_weights.md). The model gives the static weights back at rest by construction (it subtracts its own rest
 * answer inside the softmax), and its softmax keeps every row a partition of unity.
 */
import { dualQuaternionSkinning } from '../deform/dualQuaternionSkinning.js';
import { linearBlendSkinning } from '../deform/linearBlendSkinning.js';
import { AutoRigError } from '../errors.js';
import { runModel, type ModelSession } from '../learned/onnxSession.js';
import type { Skeleton } from '../types.js';
import { FEATURES_PER_SLOT, poseFeatures, SLOTS } from './poseFeatures.js';

/** A vertex's static influences as the field reads them: top-4 by weight, renormalised (poseFeatures.topFourSlots). */
export interface StaticSlots {
  /** Uint16Array #V*4, joint indices into the skeleton */
  indices: Uint16Array;
  /** Float32Array #V*4, rows sum to 1 (padded slots 0) */
  weights: Float32Array;
}

/**
 * poseDependentWeights: the field's weights at a pose.
 * session: models/pose_weights.onnx, rest: Float32Array #V*3 (the skeleton's space), slots: StaticSlots,
 * skeleton: Auto Rig's 23-joint skeleton (MIXAMO_JOINTS order), rotations: Float64Array #23*9 (poseTransforms'
 * convention) → Float32Array #V*4 over the same slots, rows sum to 1.
 * Throws MODEL_FAILED when the model answers the wrong shape or non-finite values.
 */
export async function poseDependentWeights(
  session: ModelSession, rest: Float32Array, slots: StaticSlots, skeleton: Skeleton, rotations: Float64Array,
): Promise<Float32Array> {
  const vertexCount = rest.length / 3;
  const features = poseFeatures(rest, slots.indices, slots.weights, skeleton, rotations);
  const out = await runModel(session, { features: { data: features, dims: [vertexCount, SLOTS * FEATURES_PER_SLOT] } });
  const weights = out.weights;
  if (!weights || weights.dims.length !== 2 || weights.dims[0] !== vertexCount || weights.dims[1] !== SLOTS) {
    throw new AutoRigError('MODEL_FAILED', `pose_weights answered ${weights ? `weights [${weights.dims.join(', ')}]` : 'no weights'}; expected [${vertexCount}, ${SLOTS}]`);
  }
  const values = Float32Array.from(weights.data as Float32Array);
  if (!values.every(Number.isFinite)) throw new AutoRigError('MODEL_FAILED', 'pose_weights answered NaN or infinite weights');
  return values;
}

/** How the field's weights pose the vertices: linear blend skinning (VINECS) or dual-quaternion skinning. */
export type FieldBlend = 'linear' | 'dualQuaternion';

/**
 * poseDependentDeformation: the field's weights at the pose, blended as `blend` says (the pose-dependent
 * deformation). session, rest, slots, skeleton, rotations as poseDependentWeights; transforms: Float64Array #23*12 of
 * the same pose (poseTransforms), blend → posed positions Float32Array #V*3. Dual quaternions keep hinges and twists
 * from collapsing while the field moves weight where the ball joints need it.
 */
export async function poseDependentDeformation(
  session: ModelSession, rest: Float32Array, slots: StaticSlots, skeleton: Skeleton, rotations: Float64Array, transforms: Float64Array,
  blend: FieldBlend,
): Promise<Float32Array> {
  const weights = await poseDependentWeights(session, rest, slots, skeleton, rotations);
  const skin = blend === 'linear' ? linearBlendSkinning : dualQuaternionSkinning;
  return skin(rest, slots.indices, weights, SLOTS, transforms);
}
