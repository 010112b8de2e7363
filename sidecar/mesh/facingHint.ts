import { AutoRigError } from '../errors.js';
import { cross, withoutNegativeZero } from '../geometry/vec3.js';
import type { FacingSource, Vec3 } from '../types.js';
import type { CanonicalFrame } from './canonicalFrame.js';

/**
 * A facing hint at least this far from up (degrees) is read; nearer, it says nothing about which way the character
 * faces across the ground and is refused.
 */
export const FACING_MIN_DEGREES_FROM_UP = 30;

/** What turns a frame (frameFacing): a direction in the input's space and who gave it. */
export interface FacingHint {
  /**
   * the direction the character faces (frameFacing takes the nearest of the frame's four directions across up; its
   * length does not count); one with no direction (zero, not finite) is refused
   */
  direction: Vec3;
  /** 'option': the caller's facing (a rig's options.facing, the user's Facing); 'rig': a skeleton's sides (skeleton/skeletonForward) */
  source: 'option' | 'rig';
}

/** How `cf`'s forward was decided (its evidence). */
export function facingSource(cf: CanonicalFrame): FacingSource {
  if (cf.evidence.forwardByOption) return 'option';
  return cf.evidence.forwardByConvention ? 'convention' : 'shape';
}

/**
 * The frame turned about its up axis by a quarter turn, a half turn or none, so that the character faces the one of
 * its four horizontal directions (forward, left, back, right) nearest `facing`. For a character whose shape does not
 * tell which way it faces (feet hidden or front and back alike: the frame fell back to the file conventions) in a file
 * that breaks them, or one the cues misread: the user knows. Up, the box's center and its scale stay (a quarter turn
 * about up swaps the box's depth and width, its longest side is the same).
 * cf: CanonicalFrame, facing: Vec3 in input space (any length), source: who gave it (FacingHint) → CanonicalFrame
 * (evidence.forwardByOption true). Throws BAD_REQUEST when facing is not finite or zero, and when it is within
 * FACING_MIN_DEGREES_FROM_UP of up or down: BAD_REQUEST for the caller's option, BAD_SKELETON for a skeleton's (the
 * armature does not stand as the mesh does).
 */
export function frameFacing(cf: CanonicalFrame, facing: Vec3, source: FacingHint['source'] = 'option'): CanonicalFrame {
  const length = Math.hypot(facing[0], facing[1], facing[2]);
  if (!Number.isFinite(length) || length === 0) {
    throw new AutoRigError('BAD_REQUEST', `the facing hint must be a direction (a non-zero vector), not [${facing.join(', ')}]`);
  }
  const { up, forward, left } = cf.frame;
  const alongUp = (up[0] * facing[0] + up[1] * facing[1] + up[2] * facing[2]) / length;
  if (Math.abs(alongUp) > Math.cos(FACING_MIN_DEGREES_FROM_UP * Math.PI / 180)) {
    if (source === 'rig') {
      throw new AutoRigError('BAD_SKELETON', `the rig faces [${facing.map((x) => +x.toFixed(3)).join(', ')}] (its left × up), `
        + 'along the mesh\'s up: the armature does not stand as the mesh does');
    }
    throw new AutoRigError('BAD_REQUEST', `the facing hint [${facing.join(', ')}] points along the character's up `
      + `[${up.map((x) => +x.toFixed(3)).join(', ')}]: give the direction its front faces across the ground`);
  }
  const candidates: Vec3[] = [forward, left, [-forward[0], -forward[1], -forward[2]], [-left[0], -left[1], -left[2]]];
  let best = candidates[0], bestDot = -Infinity;
  for (const c of candidates) {
    const dot = c[0] * facing[0] + c[1] * facing[1] + c[2] * facing[2];
    if (dot > bestDot) { best = c; bestDot = dot; }
  }
  const evidence = { ...cf.evidence, forwardByOption: true };
  // no turn keeps the frame as found, bit for bit (its left is not recomputed): a hint that agrees with the shape
  // changes nothing downstream (a pose applied through a rig that faces as the shape does reads the same samples)
  if (best === candidates[0]) return { ...cf, evidence };
  // left × up = forward (x left, y up, z forward), so the new left is up × the new forward
  const newForward = withoutNegativeZero(best);
  return {
    ...cf,
    frame: { up, forward: newForward, left: withoutNegativeZero(cross(up, newForward)) },
    evidence,
  };
}
