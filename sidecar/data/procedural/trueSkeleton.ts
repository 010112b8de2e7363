/**
 * The skeleton a procedural humanoid was built on, as Auto Rig's Skeleton: what its weights, its posed surface and the
 * correctives' evaluation and training data are all measured against.
 */
import { GENERATOR_FRAME } from '../../pose/poseVocabulary.js';
import { buildMixamoSkeleton, MIXAMO_JOINTS, type MixamoJointName } from '../../skeleton/mixamoTemplate.js';
import type { Skeleton, Vec3 } from '../../types.js';
import type { ProceduralPlan } from './proceduralHumanoid.js';

/**
 * trueSkeleton: a character's plan → its construction skeleton (23 joints in MIXAMO_JOINTS order, mixamorig: names):
 * heads at the plan's joints, hand and toe tips from the construction (the hand's end, the toe tip), Mixamo rolls in
 * the generator's frame (Y up, facing +Z).
 */
export function trueSkeleton(plan: ProceduralPlan): Skeleton {
  const heads = Object.fromEntries(MIXAMO_JOINTS.map((n, i) => [n, plan.joints[i]])) as Record<MixamoJointName, Vec3>;
  const ends: Partial<Record<MixamoJointName, Vec3>> = {};
  plan.arms.frames.forEach((f, side) => {
    ends[side === 0 ? 'LeftHand' : 'RightHand'] = [0, 1, 2].map((a) => f.wrist[a] + f.handDir[a] * f.handLength) as Vec3;
  });
  plan.core.legs.forEach((leg, side) => { ends[side === 0 ? 'LeftToeBase' : 'RightToeBase'] = leg.toeTip; });
  return buildMixamoSkeleton(heads, ends, GENERATOR_FRAME, true);
}
