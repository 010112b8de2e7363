/**
 * The deformations the correctives eval compares against the exact posed surface, behind one interface so that the
 * pose-dependent skinning is one more DeformationMethod: (i) static linear blend skinning with our weights, (ii)
 * dual-quaternion skinning with the same weights, (iii) the learned pose-dependent weight field (issue 7's VINECS).
 */
import { poseDependentDeformation, type FieldBlend } from '../../correctives/poseDependentWeights.js';
import { topFourSlots } from '../../correctives/poseFeatures.js';
import { dualQuaternionSkinning } from '../../deform/dualQuaternionSkinning.js';
import { linearBlendSkinning } from '../../deform/linearBlendSkinning.js';
import type { ModelSession } from '../../learned/onnxSession.js';
import type { Skeleton } from '../../types.js';
import type { KeyPose } from './keyPoses.js';

/** Everything a method may use to pose one character (the whole character merged into one mesh). */
export interface PoseQuery {
  /** rest positions, Float32Array #V*3 (all parts, part order) */
  rest: Float32Array;
  /** triangles, Uint32Array #T*3 */
  triangles: Uint32Array;
  /** our static weights: top-k rows #V*k into the skeleton's 23 joints (MIXAMO_JOINTS order) */
  indices: Uint16Array;
  weights: Float32Array;
  influences: number;
  /** the character's true skeleton (23 joints, MIXAMO_JOINTS order: heads, tails, rolls) */
  skeleton: Skeleton;
  /** rest joint heads, Float64Array #23*3, and parents, Int32Array #23 */
  heads: Float64Array;
  parents: Int32Array;
  /** the pose: per-joint rotations #23*9 (world axes, relative to rest) and their joint transforms #23*12 */
  rotations: Float64Array;
  transforms: Float64Array;
  /** the key pose and angle (null and 0 at rest) */
  pose: KeyPose | null;
  degrees: number;
}

/** A way to pose a skinned mesh: deform → posed positions, Float32Array #V*3 (the rest's vertex order). */
export interface DeformationMethod {
  /** short id for the JSON (e.g. 'lbs') */
  id: string;
  /** label for the table */
  label: string;
  deform(query: PoseQuery): Float32Array | Promise<Float32Array>;
}

/** (i) static linear blend skinning with our weights. */
export const STATIC_LBS: DeformationMethod = {
  id: 'lbs',
  label: 'static LBS',
  deform: (q) => linearBlendSkinning(q.rest, q.indices, q.weights, q.influences, q.transforms),
};

/** (ii) dual-quaternion skinning with the same weights. */
export const DUAL_QUATERNION: DeformationMethod = {
  id: 'dqs',
  label: 'DQS',
  deform: (q) => dualQuaternionSkinning(q.rest, q.indices, q.weights, q.influences, q.transforms),
};

/**
 * (iii) and (iv): the learned pose-dependent weight field (models/pose_weights.onnx) over each vertex's top-4 static
 * influences, blended linearly ('field', VINECS) or as dual quaternions ('fieldDqs', Pose Correctives' default).
 * session: the loaded model, blend → DeformationMethod
 */
export function fieldMethod(session: ModelSession, blend: FieldBlend): DeformationMethod {
  return {
    id: blend === 'linear' ? 'field' : 'fieldDqs',
    label: blend === 'linear' ? 'pose-dependent' : 'pose-dependent + DQS',
    deform: (q) => {
      const slots = topFourSlots(q.indices, q.weights, q.influences);
      return poseDependentDeformation(session, q.rest, slots, q.skeleton, q.rotations, q.transforms, blend);
    },
  };
}

/** The methods measured by default (the pose-dependent field is added by `--field`). */
export const BASELINE_METHODS: readonly DeformationMethod[] = [STATIC_LBS, DUAL_QUATERNION];
