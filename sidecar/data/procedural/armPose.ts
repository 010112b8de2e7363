/**
 * The arm angle of a pose: as drawn, unless the arm would then run into the body (hips, belly, skirt, coat), in which
 * case it is raised until the arm and hand keep the wanted gap; or, for a "touching" arms-down pose, lowered until
 * they just touch. Gaps are measured from the arm's axis: the obstacle field minus the arm's radius there.
 */
import type { Vec3 } from '../../types.js';
import { buildArm, type ArmFrame, type BodyCore } from './bodyCapsules.js';
import type { HumanoidParams, SideParams } from './humanoidParams.js';
import type { Shape } from './sdfShapes.js';
import type { ShapeField } from './shapeField.js';

/**
 * The part of a hanging upper arm next to the shoulder may touch the ribs (the armpit): its gap is measured beyond this
 * share of the first shape (the upper arm, or the upper sleeve). A raised arm's upper part meets the ribs only at the
 * armpit, so there only the forearm, hand and cuff are measured (what could run into the hips or a skirt).
 */
export const FREE_UPPER_ARM_HANGING = 0.6;
export const FREE_UPPER_ARM_RAISED = 1;
/** Samples per arm shape axis. */
const SAMPLES = 7;

/** What else moves with the arm and must clear the body too (wide sleeves): shapes for a posed arm, upper one first. */
export type ArmAttachments = (frame: ArmFrame) => Shape[];

/**
 * armClearance: the smallest gap (m) between the arm at `degrees` (upper arm beyond the share freeUpperArm, forearm,
 * hand, attachments) and the obstacles; negative where they overlap.
 */
export function armClearance(core: BodyCore, obstacles: ShapeField, side: 0 | 1, sideParams: SideParams, degrees: number, freeUpperArm: number, attachments?: ArmAttachments): number {
  const arm = buildArm(core, sideParams, side, degrees);
  let clearance = Infinity;
  const measure = (shapes: Shape[]) => shapes.forEach((s, n) => {
    for (let i = 0; i < SAMPLES; i++) {
      const f = i / (SAMPLES - 1);
      if (n === 0 && f < freeUpperArm) continue;
      const [p, r] = axisSample(s, f);
      clearance = Math.min(clearance, obstacles.value(p[0], p[1], p[2]) - r);
    }
  });
  measure(arm.shapes);
  if (attachments) measure(attachments(arm.frame));
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

/** Angle steps of the coarse scan before bisection (degrees). */
const SCAN_STEP = 5;

/**
 * solveArmDegrees: the angle below horizontal (degrees) to build the arm at. wanted: the drawn angle, gap: the gap to
 * keep (m; negative: touch, the surfaces overlapping by that much), freeUpperArm: see armClearance, attachments:
 * shapes moving with the arm → degrees in [-10, 95]: the wanted angle when it keeps the gap; otherwise the highest
 * angle below it that does (for a touching arm: the lowest angle at which the arm reaches the body), found by a scan
 * in SCAN_STEP steps then bisection; when no angle keeps the gap, the one with the most clearance.
 */
export function solveArmDegrees(core: BodyCore, obstacles: ShapeField, side: 0 | 1, sideParams: SideParams, wanted: number, gap: number, freeUpperArm: number, attachments?: ArmAttachments): number {
  const clearance = (deg: number) => armClearance(core, obstacles, side, sideParams, deg, freeUpperArm, attachments);
  const ok = (deg: number) => clearance(deg) >= gap;
  // touching arms swing in from the wanted angle until they meet the body; the others rise until they clear it
  const [from, to] = gap < 0 ? [Math.min(wanted, 40), 95] : [wanted, -10];
  if (gap >= 0 && ok(wanted)) return wanted;
  const step = Math.sign(to - from) * SCAN_STEP;
  let best = from, bestClearance = -Infinity;
  let inside = from, outside = NaN;
  for (let deg = from; (to - deg) * Math.sign(step) >= 0; deg += step) {
    const c = clearance(deg);
    if (c > bestClearance) { best = deg; bestClearance = c; }
    // hanging arms: the first angle that keeps the gap; touching arms: the last one before they overlap
    if (gap >= 0 ? c >= gap : c < gap) { outside = deg; break; }
    inside = deg;
  }
  if (Number.isNaN(outside)) return gap >= 0 ? best : to;
  let good = gap >= 0 ? outside : inside, bad = gap >= 0 ? inside : outside;
  if (gap >= 0 && outside === from) return from;
  for (let it = 0; it < 16; it++) {
    const mid = (good + bad) / 2;
    if (ok(mid)) good = mid;
    else bad = mid;
  }
  return good;
}

/** Both arms placed: joints (Arm, ForeArm, Hand per side), shapes, frames and the angles used. */
export interface PosedArms {
  /** [left, right], each [Arm, ForeArm, Hand] joint heads */
  joints: [Vec3, Vec3, Vec3][];
  shapes: Shape[];
  frames: [ArmFrame, ArmFrame];
  degrees: [number, number];
}

/**
 * poseArms: params, the body core, the obstacles the arms must clear (trunk, legs, what hangs around the hips), the
 * grid cell expected (m; a gap must be a cell and a half wide to survive meshing), attachments (wide sleeves) →
 * PosedArms: each arm at its drawn angle, raised as little as needed to keep the drawn gap (or lowered onto the body
 * for a touching pose).
 */
export function poseArms(params: HumanoidParams, core: BodyCore, obstacles: ShapeField, cell: number, attachments?: ArmAttachments): PosedArms {
  const H = params.heightMetres;
  const joints: [Vec3, Vec3, Vec3][] = [];
  const shapes: Shape[] = [];
  const frames: ArmFrame[] = [];
  const degrees: number[] = [];
  for (const side of [0, 1] as const) {
    const sideParams = side === 0 ? params.left : params.right;
    const free = (sideParams.armPose ?? params.pose) === 'down' ? FREE_UPPER_ARM_HANGING : FREE_UPPER_ARM_RAISED;
    // a gap narrower than the arm's blend (or a cell) would be bridged by the union or the mesher
    const gap = params.armGap >= 0 ? Math.max(params.armGap * H, core.arms[side].blend / 2 + 1.5 * cell) : params.armGap * H;
    const angle = solveArmDegrees(core, obstacles, side, sideParams, sideParams.armDegrees, gap, free, attachments);
    const arm = buildArm(core, sideParams, side, angle);
    joints.push(arm.joints);
    shapes.push(...arm.shapes);
    frames.push(arm.frame);
    degrees.push(angle);
  }
  return { joints, shapes, frames: frames as [ArmFrame, ArmFrame], degrees: degrees as [number, number] };
}
