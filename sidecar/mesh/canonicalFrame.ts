import { cross, scale, withoutNegativeZero } from '../geometry/vec3.js';
import type { Frame, Vec3 } from '../types.js';
import { readAxisAlignedFrame, solidBody, type AxisAlignedReading, type SolidBody } from './axisAlignedFrame.js';
import { findHeadingTurn, turnPoints, turnVector, type HeadingTurn } from './headingTurn.js';

/**
 * The character's own frame and the similarity that takes input space into the canonical box:
 * canonical = scale * R * (p - center), with x = the character's left, y = up, z = forward, longest side 1
 * (the [-0.5, 0.5] box of HumanRig). R is a rotation: the frame's rows need not be input axes (a turned character).
 */
export interface CanonicalFrame {
  frame: Frame;
  center: Vec3;
  scale: number;
  /**
   * how each decision was taken, for logs and tests; turn: the turn about an input axis the cues were read after
   * (null: the body stands along the input axes and the frame is made of them)
   */
  evidence: {
    lateralSymmetry: number; upScore: number; forwardScore: number; upByConvention: boolean; forwardByConvention: boolean; turn?: HeadingTurn | null;
    /** forward was set by the caller's facing hint (mesh/facingHint frameFacing), whatever the cues said */
    forwardByOption?: boolean;
  };
}

const AXES: Vec3[] = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];

/**
 * Bounding box of the vertices that triangles use: → [min, max]. triangles may be any run of corner indices (a
 * shell's triangles: a subarray), so it allocates nothing and reads each corner once, in scalars.
 */
export function usedBounds(positions: Float32Array, triangles: Uint32Array): [Vec3, Vec3] {
  let x0 = Infinity, y0 = Infinity, z0 = Infinity, x1 = -Infinity, y1 = -Infinity, z1 = -Infinity;
  for (let c = 0; c < triangles.length; c++) {
    const o = triangles[c] * 3, x = positions[o], y = positions[o + 1], z = positions[o + 2];
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
    if (z < z0) z0 = z;
    if (z > z1) z1 = z;
  }
  return [[x0, y0, z0], [x1, y1, z1]];
}

/**
 * Finds up, forward and left from the geometry alone, for a humanoid standing along one of the input's axes (lying
 * down and upside down included) or turned about one of them (mesh/headingTurn): the cues are read on the solid body
 * in a frame whose axes match the body's (mesh/axisAlignedFrame), then taken back to input space. center and scale
 * are those of the box in that frame (for a body along the input axes: the input's box).
 * positions: Float32Array #V*3, triangles: Uint32Array #T*3 → CanonicalFrame
 */
export function findCanonicalFrame(positions: Float32Array, triangles: Uint32Array): CanonicalFrame {
  const [min, max] = usedBounds(positions, triangles);
  const body = solidBody(positions, triangles, min, max);
  const turn = findHeadingTurn(body);
  if (!turn) return frameAlongGrid(body, readAxisAlignedFrame(body), null);
  const turned = turnPoints(positions, turn.axis, -turn.degrees);
  const [tmin, tmax] = usedBounds(turned, triangles);
  const turnedBody = solidBody(turned, triangles, tmin, tmax);
  const turnedReading = readAxisAlignedFrame(turnedBody);
  // A real turn brings the body's mirror plane onto the grid, so left-right reads more symmetric after it. When it
  // reads less (a prop such as a held sword tipped the sweep: the turned reading then swaps axes), stand by the grid.
  const gridReading = readAxisAlignedFrame(body);
  if (turnedReading.evidence.lateralSymmetry < gridReading.evidence.lateralSymmetry) return frameAlongGrid(body, gridReading, null);
  const cf = frameAlongGrid(turnedBody, turnedReading, turn);
  const back = (v: Vec3) => asDoubles(withoutNegativeZero(turnVector(v, turn.axis, turn.degrees)));
  // written out in frameAlongGrid's order, not spread from it: one hidden class for every frame toCanonical reads
  return {
    frame: { up: back(cf.frame.up), forward: back(cf.frame.forward), left: back(cf.frame.left) },
    center: asDoubles(turnVector(cf.center, turn.axis, turn.degrees)),
    scale: cf.scale,
    evidence: cf.evidence,
  };
}

/** The canonical frame of a body read along its grid's axes (in the grid's space). */
function frameAlongGrid(body: SolidBody, reading: AxisAlignedReading, turn: HeadingTurn | null): CanonicalFrame {
  const { min, max } = body;
  const up = asDoubles(withoutNegativeZero(scale(AXES[reading.upAxis], reading.upSign)));
  const forward = asDoubles(withoutNegativeZero(scale(AXES[reading.depthAxis], reading.forwardSign)));
  const left = asDoubles(withoutNegativeZero(cross(up, forward)));
  const ext = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
  return {
    frame: { up, forward, left },
    center: asDoubles([(min[0] + max[0]) / 2, (min[1] + max[1]) / 2, (min[2] + max[2]) / 2]),
    scale: 1 / Math.max(ext[0], ext[1], ext[2], 1e-12),
    evidence: { ...reading.evidence, turn },
  };
}

/**
 * The same three numbers in an array V8 always stores as doubles. A frame's axes are 0 and ±1, which V8 keeps as small
 * integers or as doubles depending on how they were computed (and on the tier that ran), so toCanonical saw the frame's
 * arrays with different hidden classes from one apply of a pose to the next, and its optimised code was thrown away
 * ("wrong map"). a: Vec3 → a new Vec3, equal to a (-0 included).
 */
function asDoubles(a: Vec3): Vec3 {
  // a literal of non-integer constants is an array of doubles from the start; writing small integers keeps it so
  const out: Vec3 = [0.5, 0.5, 0.5];
  out[0] = a[0];
  out[1] = a[1];
  out[2] = a[2];
  return out;
}

/** positions in input space #V*3 → canonical positions #V*3 (x left, y up, z forward, longest side 1). */
export function toCanonical(positions: Float32Array, cf: CanonicalFrame): Float32Array {
  const out = new Float32Array(positions.length);
  const { left, up, forward } = cf.frame;
  const s = cf.scale;
  for (let i = 0; i < positions.length; i += 3) {
    const x = positions[i] - cf.center[0], y = positions[i + 1] - cf.center[1], z = positions[i + 2] - cf.center[2];
    out[i] = s * (left[0] * x + left[1] * y + left[2] * z);
    out[i + 1] = s * (up[0] * x + up[1] * y + up[2] * z);
    out[i + 2] = s * (forward[0] * x + forward[1] * y + forward[2] * z);
  }
  return out;
}

/** One canonical point back into input space. */
export function fromCanonical(p: ArrayLike<number>, cf: CanonicalFrame): Vec3 {
  const { left, up, forward } = cf.frame;
  const s = 1 / cf.scale;
  return [0, 1, 2].map((a) => cf.center[a] + s * (left[a] * p[0] + up[a] * p[1] + forward[a] * p[2])) as Vec3;
}

/** One input-space point into canonical space. */
export function pointToCanonical(p: ArrayLike<number>, cf: CanonicalFrame): Vec3 {
  const out = toCanonical(new Float32Array([p[0], p[1], p[2]]), cf);
  return [out[0], out[1], out[2]];
}

