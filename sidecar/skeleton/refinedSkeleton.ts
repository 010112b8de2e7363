import type { CanonicalFrame } from '../mesh/canonicalFrame.js';
import { fromCanonical } from '../mesh/canonicalFrame.js';
import type { Skeleton, Vec3 } from '../types.js';
import type { SkeletonEstimate } from './estimateSkeleton.js';
import type { MixamoJointName } from './mixamoTemplate.js';
import { buildMixamoSkeleton, MIXAMO_JOINTS } from './mixamoTemplate.js';

/** The leaf bones whose tails the estimate found from the geometry (finger tips, toe tips) rather than from a child. */
const LEAF_ENDS: MixamoJointName[] = ['LeftHand', 'RightHand', 'LeftToeBase', 'RightToeBase'];
/**
 * Joints that keep the estimate's position: the toe bases, read from the foot's own geometry (sole, heel and toe tip),
 * are off by 0.9 % of the canonical box on unseen procedural humanoids, the refined ones by 2.1 % (18-minute dev
 * model, 10 characters, geometric estimates as input); every other joint moved by under a percent either way, with
 * HeadTop_End and the feet better. To be measured again with each model that ships.
 */
const KEEP_ESTIMATE: MixamoJointName[] = ['LeftToeBase', 'RightToeBase'];

/**
 * refinedSkeleton: the Mixamo skeleton on joint heads the refinement network moved (except KEEP_ESTIMATE's). Each
 * leaf bone's tail (finger tips, toe tips) moves with its head, so the bone keeps the length and direction the
 * geometry gave it; every other tail is its child's head, rolls as buildMixamoSkeleton sets them.
 * estimate: the coarse skeleton (estimateSkeleton, its skeleton in MIXAMO_JOINTS order), refined: Float32Array #23*3
 * (canonical, MIXAMO_JOINTS order), cf: the canonical frame, prefix: `mixamorig:` names → Skeleton (input space)
 */
export function refinedSkeleton(estimate: SkeletonEstimate, refined: Float32Array, cf: CanonicalFrame, prefix: boolean): Skeleton {
  const heads = {} as Record<MixamoJointName, Vec3>;
  MIXAMO_JOINTS.forEach((name, j) => {
    heads[name] = KEEP_ESTIMATE.includes(name) ? [...estimate.skeleton.joints[j].head] : fromCanonical(refined.subarray(3 * j, 3 * j + 3), cf);
  });
  const ends: Partial<Record<MixamoJointName, Vec3>> = {};
  for (const name of LEAF_ENDS) {
    const coarse = estimate.skeleton.joints[MIXAMO_JOINTS.indexOf(name)];
    const h = heads[name];
    ends[name] = [coarse.tail[0] + h[0] - coarse.head[0], coarse.tail[1] + h[1] - coarse.head[1], coarse.tail[2] + h[2] - coarse.head[2]];
  }
  return buildMixamoSkeleton(heads, ends, cf.frame, prefix);
}

/**
 * withRefinedDepth: coarse joints with the refinement network's depth. The front view fixes a joint's x (across) and
 * y (up) well; its depth, the midpoint of the first and last hit of a ray through the body, sits behind the joints on
 * the trunk and legs where something hangs behind the body (on 9 procedural humanoids that neither trained nor test
 * the network, Hips 1.0 cm and knees 2.0 cm behind on average, most of it on the two with a fused cape). Apply Latent
 * Pose's auto-rig takes it: docs/EVAL.md, twenty-fifth session.
 * coarse, refined: Float32Array #23*3 (canonical: x left, y up, z forward; MIXAMO_JOINTS order) → Float32Array #23*3,
 * coarse's x and y with refined's z.
 */
export function withRefinedDepth(coarse: Float32Array, refined: Float32Array): Float32Array {
  if (coarse.length !== refined.length || coarse.length % 3 !== 0) {
    throw new Error(`withRefinedDepth: joint arrays of ${coarse.length} and ${refined.length} numbers`);
  }
  const out = Float32Array.from(coarse);
  for (let j = 2; j < out.length; j += 3) out[j] = refined[j];
  return out;
}
