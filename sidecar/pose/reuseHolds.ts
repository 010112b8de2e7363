/**
 * Whether what is known of a mesh (an apply's or a prepare's LatentPoseReuse) holds all a pose.prepare asks for. Its
 * own module, with a type-only import, so that the server's thread (connection.ts) can ask without loading the apply's
 * code.
 */
import type { LatentPoseReuse } from './applyLatentPose.js';

/**
 * reuseHolds: reuse (or undefined) + autoRig (whether the auto-rig is asked for) → whether it holds μ and the canonical
 * frame, and the auto-rig unless autoRig is false.
 */
export function reuseHolds(reuse: LatentPoseReuse | undefined, autoRig: boolean): boolean {
  return reuse !== undefined && reuse.frame !== undefined && (!autoRig || reuse.autoRig !== undefined);
}
