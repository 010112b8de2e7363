/**
 * The arm angle of a pose: as drawn, unless the arm would then run into the body (hips, belly, skirt, coat), in which
 * case it is raised until the arm and hand keep the wanted gap; or, for a "touching" arms-down pose, lowered until
 * they just touch. Gaps are measured from the arm's axis: the obstacle field minus the arm's radius there.
 */
import { buildArm, type BodyCore } from './bodyCapsules.js';
import type { SideParams } from './humanoidParams.js';
import type { Shape } from './sdfShapes.js';
import type { ShapeField } from './shapeField.js';

/** The part of the upper arm next to the shoulder may touch the ribs (the armpit): gaps are measured beyond this share. */
const FREE_UPPER_ARM = 0.75;
/** Samples per arm shape axis. */
const SAMPLES = 7;

/**
 * armClearance: the smallest gap (m) between the arm at `degrees` (upper arm beyond FREE_UPPER_ARM, forearm, hand) and
 * the obstacles; negative where they overlap.
 */
export function armClearance(core: BodyCore, obstacles: ShapeField, side: 0 | 1, sideParams: SideParams, degrees: number): number {
  const arm = buildArm(core, sideParams, side, degrees);
  let clearance = Infinity;
  arm.shapes.forEach((s, n) => {
    for (let i = 0; i < SAMPLES; i++) {
      const f = i / (SAMPLES - 1);
      if (n === 0 && f < FREE_UPPER_ARM) continue;
      const [p, r] = axisSample(s, f);
      clearance = Math.min(clearance, obstacles.value(p[0], p[1], p[2]) - r);
    }
  });
  return clearance;
}

/** A point at fraction f along a shape's axis and the shape's half thickness there. */
function axisSample(s: Shape, f: number): [[number, number, number], number] {
  if (s.kind === 'box') {
    const along = (2 * f - 1) * s.b[0];
    return [[s.a[0] + along * s.u[0], s.a[1] + along * s.u[1], s.a[2] + along * s.u[2]], s.b[1]];
  }
  // a and b live in the shape's squashed space: bring z back to the world
  const z = s.a[2] + f * (s.b[2] - s.a[2]);
  return [[s.a[0] + f * (s.b[0] - s.a[0]), s.a[1] + f * (s.b[1] - s.a[1]), s.zc + (z - s.zc) * s.depthScale], s.ra + f * (s.rb - s.ra)];
}

/**
 * solveArmDegrees: the angle below horizontal (degrees) to build the arm at. wanted: the drawn angle, gap: the gap to
 * keep (m; negative: touch, the surfaces overlapping by that much) → degrees in [-10, 95].
 */
export function solveArmDegrees(core: BodyCore, obstacles: ShapeField, side: 0 | 1, sideParams: SideParams, wanted: number, gap: number): number {
  const ok = (deg: number) => armClearance(core, obstacles, side, sideParams, deg) >= gap;
  let lo: number, hi: number;
  if (gap < 0) {
    // touching: the highest angle at which the arm still "clears" by the negative gap, i.e. overlaps that much
    lo = Math.min(wanted, 40);
    hi = 95;
    if (ok(hi)) return hi;
    if (!ok(lo)) return lo;
  } else {
    if (ok(wanted)) return wanted;
    lo = -10;
    hi = wanted;
    if (!ok(lo)) return lo;
  }
  for (let it = 0; it < 22; it++) {
    const mid = (lo + hi) / 2;
    if (ok(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}
