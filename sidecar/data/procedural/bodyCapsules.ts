/**
 * The body of a procedural humanoid: where the 23 Mixamo joints go and the shapes (tapered capsules, rounded boxes)
 * whose smooth union is the skin, each owned by the bone it moves with. Y up, facing +Z, its left on +X, feet on y = 0.
 * Built in two steps because the arms' pose depends on what they must clear (hips, skirt, coat): buildBodyCore makes
 * trunk, head, legs and feet (and every joint but the arm chains), buildArm one arm for a given angle.
 * Joints sit where a Mixamo rig puts them: Hips at the centre between the hip balls (slightly above), three spine
 * joints up the torso, Neck at the base of the neck, Head at the base of the skull, HeadTop_End on the top of the head,
 * Shoulder at the clavicle's inner end, Arm at the shoulder ball, ForeArm at the elbow, Hand at the wrist, UpLeg at the
 * hip ball, Leg at the knee, Foot at the ankle, ToeBase at the ball of the foot: all on the axes of the shapes around
 * them, so inside the skin (HeadTop_End excepted).
 */
import { MIXAMO_JOINTS, type MixamoJointName } from '../../skeleton/mixamoTemplate.js';
import { add, cross, normalize, scale, sub } from '../../geometry/vec3.js';
import type { Vec3 } from '../../types.js';
import type { Build, HumanoidParams, SideParams } from './humanoidParams.js';
import { box, capsule, type Shape } from './sdfShapes.js';

export const JOINT: Record<MixamoJointName, number> = Object.fromEntries(MIXAMO_JOINTS.map((n, i) => [n, i])) as Record<MixamoJointName, number>;

/** Radius and width multipliers per build (thin, heavy, muscular, child) on top of the drawn proportions. */
const BUILD_SHAPE: Record<Build, { arms: number; legs: number; chest: number; waist: number; hips: number; shoulders: number; neck: number; depth: number }> = {
  average: { arms: 1, legs: 1, chest: 1, waist: 1, hips: 1, shoulders: 1, neck: 1, depth: 1 },
  thin: { arms: 0.76, legs: 0.78, chest: 0.86, waist: 0.82, hips: 0.88, shoulders: 0.95, neck: 0.85, depth: 0.9 },
  heavy: { arms: 1.3, legs: 1.3, chest: 1.22, waist: 1.45, hips: 1.3, shoulders: 1.08, neck: 1.25, depth: 1.15 },
  muscular: { arms: 1.3, legs: 1.18, chest: 1.2, waist: 0.98, hips: 1.0, shoulders: 1.15, neck: 1.25, depth: 1.05 },
  child: { arms: 1.02, legs: 1.02, chest: 0.92, waist: 1.0, hips: 0.92, shoulders: 0.88, neck: 0.9, depth: 1.05 },
};

/** One leg's landmarks, in world space (the right leg mirrored to x < 0). */
export interface LegFrame {
  hip: Vec3;
  knee: Vec3;
  ankle: Vec3;
  ball: Vec3;
  toeTip: Vec3;
  heel: Vec3;
  thighRadius: number;
  kneeRadius: number;
  ankleRadius: number;
  footHalfWidth: number;
  footLength: number;
}

/** One arm's landmarks, in world space. */
export interface ArmFrame {
  shoulderBall: Vec3;
  elbow: Vec3;
  wrist: Vec3;
  /** hand direction (wrist → fingertips) and palm normal, unit */
  handDir: Vec3;
  palmNormal: Vec3;
  /** the fist's centre (where a held prop's grip passes) */
  grip: Vec3;
  handLength: number;
  upperRadius: number;
  elbowRadius: number;
  wristRadius: number;
}

/** Trunk, head and legs: everything the arms and clothes are fitted to. */
export interface BodyCore {
  height: number;
  headHeight: number;
  /** chin → floor */
  below: number;
  /** 0 for 2 heads tall … 1 for 9 */
  realism: number;
  joints: Vec3[];
  /** trunk, neck, head, clavicles, legs, feet (in fold order) */
  shapes: Shape[];
  yHip: number;
  yNeck: number;
  yChin: number;
  yShoulder: number;
  /** head: centre of the cranium, half width (x), half depth (z), front of the face (z) */
  headCentre: Vec3;
  headHalfWidth: number;
  headHalfDepth: number;
  faceZ: number;
  eyeY: number;
  mouthY: number;
  neckRadius: number;
  chestHalfWidth: number;
  chestHalfDepth: number;
  waistHalfWidth: number;
  waistHalfDepth: number;
  hipHalfWidth: number;
  hipHalfDepth: number;
  shoulderHalfWidth: number;
  /** legs: [left, right], right already mirrored to x < 0 */
  legs: [LegFrame, LegFrame];
  /** arm lengths and radii per side (the arm is placed later by buildArm) */
  arms: [ArmDims, ArmDims];
}

export interface ArmDims {
  shoulderBall: Vec3;
  upperLength: number;
  foreLength: number;
  handLength: number;
  upperRadius: number;
  elbowRadius: number;
  wristRadius: number;
  /** typical blend radius of the arm's shapes (the gap it needs to stay apart from the body) */
  blend: number;
}

/** Upper arm radius per metre of body below the chin (before build and proportion multipliers). */
const UPPER_ARM_RADIUS = 0.031;

const lerp = (a: number, b: number, t: number) => a + (b - a) * t;
const rad = (deg: number) => (deg * Math.PI) / 180;

/**
 * buildBodyCore: params → BodyCore (joints #23 Vec3 with the arm chains' Arm/ForeArm/Hand left at the shoulder ball
 * until buildArm places them).
 */
export function buildBodyCore(params: HumanoidParams): BodyCore {
  const p = params.proportions;
  const b = BUILD_SHAPE[params.build];
  const H = params.heightMetres;
  const hHead = H / params.headsTall;
  const below = H - hHead;
  const t = Math.max(0, Math.min(1, (params.headsTall - 2) / 7));
  const chunky = lerp(1.3, 1, t); // chibi limbs are stubby and thick

  // vertical layout
  const neckLength = below * lerp(0.03, 0.062, t) * p.neck;
  const torsoLength = below * lerp(0.44, 0.37, t) * p.torso;
  const yHip = below - neckLength - torsoLength;
  const yNeck = yHip + torsoLength;
  const yChin = yNeck + neckLength;
  const yShoulder = yNeck - torsoLength * lerp(0.08, 0.12, t);

  // widths
  const chestHalfWidth = below * lerp(0.16, 0.105, t) * p.chest * b.chest;
  const chestHalfDepth = chestHalfWidth * 0.66 * b.depth;
  const waistHalfWidth = chestHalfWidth * 0.8 * p.waist * b.waist / b.chest;
  const waistHalfDepth = waistHalfWidth * 0.72 * b.depth * (1 + 0.25 * p.belly);
  const hipHalfWidth = chestHalfWidth * 0.95 * p.hips * b.hips / b.chest;
  const hipHalfDepth = hipHalfWidth * 0.66;
  // the shoulder balls sit about an arm's thickness out from the ribs, so a hanging arm brushes past the chest
  const typicalUpperRadius = below * UPPER_ARM_RADIUS * p.limbs * b.arms * chunky;
  const shoulderHalfWidth = (chestHalfWidth + 0.8 * typicalUpperRadius) * p.shoulders * b.shoulders;
  const headHalfWidth = hHead * lerp(0.47, 0.37, t) * p.headWidth;
  const headHalfDepth = headHalfWidth * lerp(1.0, 1.12, t) * p.headDepth;
  const neckRadius = Math.min(headHalfWidth * lerp(0.36, 0.62, t) * b.neck, chestHalfWidth * 0.55);

  const shapes: Shape[] = [];
  const joints: Vec3[] = MIXAMO_JOINTS.map(() => [0, 0, 0] as Vec3);
  const set = (name: MixamoJointName, v: Vec3) => { joints[JOINT[name]] = v; };

  // trunk: a vertical core per spine bone (elliptic, deeper for heavy builds), a pelvis across the hips, a chest
  // across the ribs, each blended into the next
  const ySpine = yHip + torsoLength * 0.2;
  const ySpine1 = yHip + torsoLength * 0.42;
  const ySpine2 = yHip + torsoLength * 0.66;
  const trunkBlend = chestHalfWidth * 0.3;
  set('Hips', [0, yHip + torsoLength * 0.04, 0]);
  set('Spine', [0, ySpine, 0]);
  set('Spine1', [0, ySpine1, 0]);
  set('Spine2', [0, ySpine2, 0]);
  const pelvisRadius = Math.min(hipHalfWidth * 0.7, torsoLength * 0.3);
  shapes.push(capsule([-(hipHalfWidth - pelvisRadius), yHip + pelvisRadius * 0.2, 0], [hipHalfWidth - pelvisRadius, yHip + pelvisRadius * 0.2, 0],
    pelvisRadius, pelvisRadius, { bone: JOINT.Hips, depthScale: hipHalfDepth / pelvisRadius }));
  shapes.push(capsule([0, yHip + pelvisRadius * 0.3, 0], [0, ySpine, 0], hipHalfWidth * 0.85, waistHalfWidth,
    { bone: JOINT.Hips, depthScale: hipHalfDepth / (hipHalfWidth * 0.85), blend: trunkBlend }));
  shapes.push(capsule([0, ySpine, 0], [0, ySpine1, 0], waistHalfWidth, chestHalfWidth * 0.9,
    { bone: JOINT.Spine, depthScale: waistHalfDepth / waistHalfWidth, blend: trunkBlend }));
  if (p.belly > 0.15) {
    const r = waistHalfWidth * (0.55 + 0.35 * p.belly);
    shapes.push(capsule([0, (ySpine + ySpine1) / 2, waistHalfDepth - r * 0.75], [0, ySpine, waistHalfDepth - r * 0.8], r, r * 0.9,
      { bone: JOINT.Spine, blend: trunkBlend }));
  }
  shapes.push(capsule([0, ySpine1, 0], [0, ySpine2, 0], chestHalfWidth * 0.9, chestHalfWidth,
    { bone: JOINT.Spine1, depthScale: chestHalfDepth / chestHalfWidth, blend: trunkBlend }));
  const ribRadius = Math.min(chestHalfWidth * 0.62, (yNeck - ySpine2) * 0.9);
  const yRibs = yNeck - ribRadius * 0.95;
  shapes.push(capsule([-(chestHalfWidth - ribRadius), yRibs, 0], [chestHalfWidth - ribRadius, yRibs, 0], ribRadius, ribRadius,
    { bone: JOINT.Spine2, depthScale: chestHalfDepth / ribRadius, blend: trunkBlend }));
  shapes.push(capsule([0, ySpine2, 0], [0, yRibs, 0], chestHalfWidth, chestHalfWidth * 0.9,
    { bone: JOINT.Spine2, depthScale: chestHalfDepth / chestHalfWidth, blend: trunkBlend }));

  // neck and head: the neck leans forward a little; the cranium is an elliptic capsule, the jaw a smaller one in front
  const headCentre: Vec3 = [0, H - headHalfWidth * 1.02, hHead * 0.04];
  const craniumBottom: Vec3 = [0, Math.max(yChin + hHead * 0.45, headCentre[1] - (hHead - 2 * headHalfWidth) * 0.6), headCentre[2]];
  if (craniumBottom[1] > headCentre[1]) craniumBottom[1] = headCentre[1];
  const jawRadius = headHalfWidth * lerp(0.72, 0.62, t);
  const jawTop: Vec3 = [0, craniumBottom[1], headCentre[2] + headHalfDepth * 0.1];
  const jawBottom: Vec3 = [0, yChin + jawRadius, headCentre[2] + headHalfDepth * 0.28];
  set('Neck', [0, yNeck, -neckRadius * 0.15]);
  set('Head', [0, yChin + hHead * 0.24, headCentre[2] - headHalfDepth * 0.12]);
  set('HeadTop_End', [0, H, headCentre[2]]);
  shapes.push(capsule([0, yNeck - neckRadius, -neckRadius * 0.2], [0, yChin + hHead * 0.06, headCentre[2] - headHalfDepth * 0.3],
    neckRadius * 1.1, neckRadius, { bone: JOINT.Neck, blend: neckRadius * 0.8 }));
  shapes.push(capsule(headCentre, craniumBottom, headHalfWidth, headHalfWidth * 0.97,
    { bone: JOINT.Head, depthScale: headHalfDepth / headHalfWidth, blend: neckRadius * 0.5 }));
  shapes.push(capsule(jawTop, jawBottom, jawRadius, jawRadius * 0.8,
    { bone: JOINT.Head, depthScale: (headHalfDepth * 0.8) / jawRadius, blend: headHalfWidth * 0.3 }));
  const faceZ = headCentre[2] + headHalfDepth;
  const eyeY = lerp(headCentre[1] - headHalfWidth * 0.45, headCentre[1] - headHalfWidth * 0.15, t);
  const mouthY = lerp(yChin + hHead * 0.2, yChin + hHead * 0.22, t);
  const noseR = headHalfWidth * 0.1;
  const noseY = (eyeY + mouthY) / 2;
  shapes.push(capsule([0, eyeY - noseR, faceZ - noseR * 2.5], [0, noseY, faceZ - noseR * 0.3], noseR * 0.7, noseR,
    { bone: JOINT.Head, blend: noseR * 0.8 }));
  for (const sx of [1, -1]) {
    const earR = headHalfWidth * 0.16;
    shapes.push(capsule([sx * headHalfWidth * 0.95, eyeY + earR, headCentre[2] - headHalfDepth * 0.1], [sx * headHalfWidth * 0.97, eyeY - earR * 1.2, headCentre[2] - headHalfDepth * 0.12],
      earR, earR * 0.7, { bone: JOINT.Head, depthScale: 0.5, blend: earR * 0.6 }));
  }

  // clavicles: from beside the neck out to the shoulder ball (the arm is added by buildArm)
  const sides: [SideParams, SideParams] = [params.left, params.right];
  const arms = sides.map((side, s) => {
    const sx = s === 0 ? 1 : -1;
    const armLength = below * lerp(0.34, 0.385, t) * p.arms * side.lengthScale;
    const limb = p.limbs * side.limbScale * b.arms * chunky;
    const upperRadius = below * UPPER_ARM_RADIUS * limb;
    const shoulderBall: Vec3 = [sx * shoulderHalfWidth, yShoulder, -chestHalfDepth * 0.08];
    const inner: Vec3 = [sx * neckRadius * 0.9, yShoulder + (yNeck - yShoulder) * 0.55, -chestHalfDepth * 0.05];
    set(s === 0 ? 'LeftShoulder' : 'RightShoulder', [sx * neckRadius * 1.05, yShoulder + (yNeck - yShoulder) * 0.5, chestHalfDepth * 0.12]);
    const clavicleR = Math.min(upperRadius * 1.1, (yNeck - yShoulder) * 0.9 + upperRadius * 0.5);
    shapes.push(capsule(inner, shoulderBall, neckRadius * 0.9, clavicleR,
      { bone: JOINT[s === 0 ? 'LeftShoulder' : 'RightShoulder'], depthScale: 0.9, blend: neckRadius * 0.6 }));
    const dims: ArmDims = {
      shoulderBall,
      upperLength: armLength * 0.53,
      foreLength: armLength * 0.47,
      handLength: below * lerp(0.14, 0.12, t) * p.hands,
      upperRadius,
      elbowRadius: upperRadius * 0.78,
      wristRadius: upperRadius * 0.58,
      blend: upperRadius * 0.35,
    };
    return dims;
  }) as [ArmDims, ArmDims];

  // legs: the knee bends forward keeping hip and ankle where they are
  const legs = sides.map((side, s) => {
    const sx = s === 0 ? 1 : -1;
    const limb = p.limbs * side.limbScale * b.legs * chunky;
    const thighRadius = Math.min(below * 0.055 * limb, hipHalfWidth * 0.62);
    const kneeRadius = thighRadius * 0.62;
    const ankleRadius = thighRadius * 0.42;
    const ankleY = yHip * lerp(0.1, 0.085, t);
    const hipBall: Vec3 = [hipHalfWidth * 0.52, yHip, 0];
    const drop = yHip - ankleY;
    const ankle: Vec3 = [hipBall[0] + drop * Math.tan(rad(side.legSpreadDegrees)), ankleY, -ankleRadius * 0.2];
    const half = Math.hypot(ankle[0] - hipBall[0], ankle[1] - hipBall[1], ankle[2] - hipBall[2]) / 2;
    const bendOut = half * Math.tan(rad(side.kneeDegrees) / 2);
    const knee: Vec3 = [(hipBall[0] + ankle[0]) / 2, (hipBall[1] + ankle[1]) / 2, (hipBall[2] + ankle[2]) / 2 + bendOut];
    const footLength = below * lerp(0.15, 0.165, t) * p.feet * (params.build === 'child' ? 1.05 : 1);
    const footHalfWidth = Math.max(footLength * 0.19, ankleRadius * 1.1);
    const ball: Vec3 = [ankle[0] + footLength * 0.03, Math.min(ankleY * 0.42, footHalfWidth * 0.8), ankle[2] + footLength * 0.55];
    const toeTip: Vec3 = [ankle[0] + footLength * 0.05, ball[1] * 0.85, ankle[2] + footLength * 0.77];
    const heel: Vec3 = [ankle[0], ankleY * 0.45, ankle[2] - footLength * 0.16];
    const frame: LegFrame = { hip: hipBall, knee, ankle, ball, toeTip, heel, thighRadius, kneeRadius, ankleRadius, footHalfWidth, footLength };
    const mirror = (v: Vec3): Vec3 => [sx * v[0], v[1], v[2]];
    const name = (n: string) => JOINT[((s === 0 ? 'Left' : 'Right') + n) as MixamoJointName];
    joints[name('UpLeg')] = mirror(hipBall);
    joints[name('Leg')] = mirror(knee);
    joints[name('Foot')] = mirror(ankle);
    joints[name('ToeBase')] = mirror(ball);
    // thigh from inside the pelvis, a calf bulge behind the shin
    const thighTop: Vec3 = [hipBall[0] * 0.9, hipBall[1] + thighRadius * 0.35, hipBall[2]];
    shapes.push(capsule(mirror(thighTop), mirror(knee), thighRadius, kneeRadius, { bone: name('UpLeg'), blend: thighRadius * 0.45 }));
    shapes.push(capsule(mirror(knee), mirror(ankle), kneeRadius, ankleRadius, { bone: name('Leg'), blend: kneeRadius * 0.3 }));
    const calf: Vec3 = [knee[0] * 0.7 + ankle[0] * 0.3, knee[1] * 0.7 + ankle[1] * 0.3, knee[2] * 0.7 + ankle[2] * 0.3 - kneeRadius * 0.3];
    const calfLow: Vec3 = [knee[0] * 0.35 + ankle[0] * 0.65, knee[1] * 0.35 + ankle[1] * 0.65, knee[2] * 0.35 + ankle[2] * 0.65 - kneeRadius * 0.1];
    shapes.push(capsule(mirror(calf), mirror(calfLow), kneeRadius * 1.08, ankleRadius * 1.1, { bone: name('Leg'), blend: kneeRadius * 0.4 }));
    // foot: ankle down to the heel, a flat box to the ball, the toes a thinner box (soles cut flat by the floor)
    const heelR = Math.min(heel[1] * 1.1, ankleRadius);
    shapes.push(capsule(mirror(ankle), mirror(heel), ankleRadius, heelR, { bone: name('Foot'), blend: ankleRadius * 0.4 }));
    const footMid: Vec3 = [(heel[0] + ball[0]) / 2, Math.max(heelR, ball[1]) * 0.9, (heel[2] + ball[2]) / 2];
    const footHalfLength = (ball[2] - heel[2]) / 2 + heelR * 0.6;
    const footHalfHeight = Math.max(heelR, ball[1] * 1.15);
    shapes.push(box(mirror(footMid), [0, 0, 1], [0, 1, 0], [footHalfLength, footHalfHeight, footHalfWidth], Math.min(footHalfHeight, footHalfWidth) * 0.9,
      { bone: name('Foot'), blend: ankleRadius * 0.5 }));
    const toeMid: Vec3 = [(ball[0] + toeTip[0]) / 2, ball[1] * 0.85, (ball[2] + toeTip[2]) / 2];
    const toeHalf: Vec3 = [(toeTip[2] - ball[2]) / 2 + footHalfHeight * 0.3, ball[1] * 0.95, footHalfWidth * 0.95];
    shapes.push(box(mirror(toeMid), [0, 0, 1], [0, 1, 0], toeHalf, Math.min(toeHalf[1], toeHalf[2]) * 0.9, { bone: name('ToeBase'), blend: footHalfHeight * 0.4 }));
    return { ...frame, hip: mirror(hipBall), knee: mirror(knee), ankle: mirror(ankle), ball: mirror(ball), toeTip: mirror(toeTip), heel: mirror(heel) };
  }) as [LegFrame, LegFrame];

  // the arm chains wait at the shoulder ball for buildArm
  for (const [s, sideName] of [[0, 'Left'], [1, 'Right']] as const) {
    for (const n of ['Arm', 'ForeArm', 'Hand']) set(`${sideName}${n}` as MixamoJointName, [...arms[s].shoulderBall] as Vec3);
  }

  return {
    height: H, headHeight: hHead, below, realism: t, joints, shapes, yHip, yNeck, yChin, yShoulder,
    headCentre, headHalfWidth, headHalfDepth, faceZ, eyeY, mouthY, neckRadius,
    chestHalfWidth, chestHalfDepth, waistHalfWidth, waistHalfDepth, hipHalfWidth, hipHalfDepth, shoulderHalfWidth, legs, arms,
  };
}

/**
 * buildArm: one arm at a given angle below horizontal → its joints (Arm, ForeArm, Hand, world space), shapes (upper
 * arm, forearm, palm, fingers, thumb; owned by Arm, ForeArm, Hand) and frame. side: 0 left, 1 right.
 */
export function buildArm(core: BodyCore, sideParams: SideParams, side: 0 | 1, armDegrees: number): { joints: [Vec3, Vec3, Vec3]; shapes: Shape[]; frame: ArmFrame } {
  const d = core.arms[side];
  const sx = side === 0 ? 1 : -1;
  const mirror = (v: Vec3): Vec3 => [sx * v[0], v[1], v[2]];
  const name = (n: string) => JOINT[((side === 0 ? 'Left' : 'Right') + n) as MixamoJointName];
  // left-side coordinates: the arm points along +x, turned down by the arm angle and forward by the swing
  const th = rad(armDegrees), ph = rad(sideParams.armForwardDegrees);
  const upperDir: Vec3 = [Math.cos(th) * Math.cos(ph), -Math.sin(th), Math.cos(th) * Math.sin(ph)];
  const shoulder = mirror(d.shoulderBall);
  const elbow = add(shoulder, scale(upperDir, d.upperLength));
  // the elbow bends the forearm forward (towards +z, across the upper arm)
  const forward = normalize(sub([0, 0, 1], scale(upperDir, upperDir[2])));
  const be = rad(sideParams.elbowDegrees);
  const foreDir = normalize(add(scale(upperDir, Math.cos(be)), scale(forward, Math.sin(be))));
  const wrist = add(elbow, scale(foreDir, d.foreLength));
  const handDir = foreDir;
  const palmNormal = normalize(cross(handDir, [0, 0, 1]));
  const across = cross(handDir, palmNormal); // points backwards; the thumb is on the other side
  const L = d.handLength;
  const shapes: Shape[] = [];
  const upperStart = add(shoulder, scale(upperDir, -d.upperRadius * 0.2));
  shapes.push(capsule(mirror(upperStart), mirror(elbow), d.upperRadius * 1.08, d.elbowRadius, { bone: name('Arm'), blend: d.blend }));
  shapes.push(capsule(mirror(elbow), mirror(wrist), d.elbowRadius, d.wristRadius, { bone: name('ForeArm'), blend: d.elbowRadius * 0.3 }));
  const palmCentre = add(wrist, scale(handDir, L * 0.24));
  const palmHalf: Vec3 = [L * 0.24, L * 0.07, L * 0.21];
  shapes.push(box(mirror(palmCentre), mirror(handDir), mirror(palmNormal), palmHalf, L * 0.065, { bone: name('Hand'), blend: d.wristRadius * 0.5 }));
  const fingerR = L * 0.042;
  for (let f = 0; f < 4; f++) {
    const offset = (f - 1.5) * L * 0.105;
    const knuckle = add(add(wrist, scale(handDir, L * 0.46)), scale(across, offset));
    const length = L * (0.5 - Math.abs(f - 1.3) * 0.05);
    const tip = add(add(knuckle, scale(handDir, length * 0.95)), add(scale(palmNormal, length * 0.25), scale(across, offset * 0.15)));
    shapes.push(capsule(mirror(knuckle), mirror(tip), fingerR, fingerR * 0.85, { bone: name('Hand'), blend: fingerR * 0.5 }));
  }
  const thumbBase = add(add(wrist, scale(handDir, L * 0.12)), scale(across, -L * 0.12));
  const thumbTip = add(thumbBase, add(add(scale(handDir, L * 0.3), scale(across, -L * 0.2)), scale(palmNormal, L * 0.12)));
  shapes.push(capsule(mirror(thumbBase), mirror(thumbTip), fingerR * 1.25, fingerR * 1.0, { bone: name('Hand'), blend: fingerR * 0.6 }));
  const grip = add(add(wrist, scale(handDir, L * 0.42)), scale(palmNormal, L * 0.12));
  const frame: ArmFrame = {
    shoulderBall: mirror(shoulder), elbow: mirror(elbow), wrist: mirror(wrist), handDir: mirror(handDir), palmNormal: mirror(palmNormal),
    grip: mirror(grip), handLength: L, upperRadius: d.upperRadius, elbowRadius: d.elbowRadius, wristRadius: d.wristRadius,
  };
  return { joints: [mirror(shoulder), mirror(elbow), mirror(wrist)], shapes, frame };
}
