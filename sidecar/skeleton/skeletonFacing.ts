/**
 * Which way a request that brings a skeleton takes the character to face (Apply Latent Pose through the user's rig,
 * skin for the user's armature). Apply Latent Pose's rotations are read in bone frames built on the canonical frame's
 * forward (pose/jointFrames): a frame read backwards bends an elbow behind the back and lifts the wrong side; the
 * skinning's rules for capes and skirts read what lies behind the legs, and the learned weights see the character
 * from its front. A Mixamo-named skeleton names its sides, so its left and right decide; without one, the caller's
 * facing hint does (the user's Facing setting), else the shape (mesh/canonicalFrame).
 */
import { normalize, withoutNegativeZero } from '../geometry/vec3.js';
import { facingSource, type FacingHint } from '../mesh/facingHint.js';
import type { CanonicalFrame } from '../mesh/canonicalFrame.js';
import { skeletonForward } from './skeletonForward.js';
import type { SkeletonFacingSource, Skeleton, Vec3 } from '../types.js';

/**
 * facingHintOf: skeleton (the rig the request brings, or undefined) + facing (the caller's hint, or undefined)
 * → FacingHint, or null when neither gives a direction (the shape decides). The rig wins over the hint: its names
 * say which side is left, and a frame turned against them would bend each joint the wrong way. A skeleton whose sides
 * cannot be told apart (skeletonForward null) leaves the choice to the hint. The direction is made unit length, so
 * that one direction is one hint whatever its length (what the server keys a mesh's reading by: server/poseReuseCache).
 */
export function facingHintOf(skeleton: Skeleton | undefined, facing: Vec3 | undefined): FacingHint | null {
  const fromRig = skeleton ? skeletonForward(skeleton) : null;
  if (fromRig) return { direction: unitDirection(fromRig), source: 'rig' };
  return facing ? { direction: unitDirection(facing), source: 'option' } : null;
}

/** v at unit length without negative zeros, or v as it is when it has no direction (zero, not finite). */
function unitDirection(v: Vec3): Vec3 {
  const length = Math.hypot(v[0], v[1], v[2]);
  return length > 0 && Number.isFinite(length) ? withoutNegativeZero(normalize(v)) : v;
}

/** sameFacingHint: whether two hints' directions (or their absence) are the same, component for component. */
export function sameFacingHint(a: Vec3 | undefined, b: Vec3 | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2];
}

/** hintedFacingSource: how an apply's frame faces, given the hint that turned it (or null) → SkeletonFacingSource. */
export function hintedFacingSource(cf: CanonicalFrame, hint: FacingHint | null): SkeletonFacingSource {
  return hint ? hint.source : facingSource(cf);
}
