/**
 * The 2D joints the front view is read into before they are lifted: their names (the template's joints plus the hands'
 * tips), the learned predictor's reading of them, and how a skeleton estimate chooses between that and the rules'
 * (estimateSkeleton's JointSource).
 */
import type { MixamoJointName } from './mixamoTemplate.js';
import { MIXAMO_JOINTS } from './mixamoTemplate.js';

/** 2D joints from the learned predictor (skeleton/learnedJoints2d.ts), in MIXAMO_JOINTS order. */
export interface Joints2DPrediction {
  /** canonical (x, y) of each joint head: Float64Array #23*2 */
  xy: Float64Array;
  /** the predictor's confidence per joint in [0, 1]: Float32Array #23 */
  confidence: Float32Array;
}

/**
 * How the 2D joints are found: 'geometric' reads them from the silhouette (landmarks2d.ts); 'learned' takes the
 * network's; 'hybrid' takes the network's where its confidence reaches estimateSkeleton's HYBRID_MIN_CONFIDENCE and
 * the silhouette's elsewhere (a shape the rules cannot read is refused, as with 'geometric').
 */
export type JointSource = { method: 'geometric' } | { method: 'learned' | 'hybrid'; prediction: Joints2DPrediction };

/** The network's 2D point of one template joint, whatever its confidence: prediction, joint → canonical (x, y). */
export function networkJoint(prediction: Joints2DPrediction, joint: MixamoJointName): [number, number] {
  const k = MIXAMO_JOINTS.indexOf(joint);
  return [prediction.xy[2 * k], prediction.xy[2 * k + 1]];
}

/** The 2D points that are lifted: the template joints whose depth comes from the ray midpoint, plus tips. */
export type Named2D = 'Hips' | 'Spine' | 'Spine1' | 'Spine2' | 'Neck' | 'Head' | 'HeadTop'
  | `${'Left' | 'Right'}${'Shoulder' | 'Arm' | 'ForeArm' | 'Hand' | 'HandTip' | 'UpLeg' | 'Leg' | 'Foot'}`;
