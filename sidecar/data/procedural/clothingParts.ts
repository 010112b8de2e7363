/**
 * Clothing and accessories of a procedural humanoid, each a list of shapes fitted to the body (solid volumes that
 * overlap the body, as AI generators make separate parts) and a rule for its skinning weights: the weights of the
 * body under it restricted to the bones it follows (skirt and coat: hips, spine and legs; sleeves: the arm; cape:
 * the spine; shoes: the foot), or rigid to one bone (hair, hat, eyes, teeth: Head; a held prop: the hand).
 * Thin things (cape, brim, blade) are kept at least a few grid cells thick so the mesher can see them.
 */
import type { Vec3 } from '../../types.js';
import { add, cross, normalize, scale } from '../../geometry/vec3.js';
import { JOINT, type ArmFrame, type BodyCore } from './bodyCapsules.js';
import type { HumanoidParams } from './humanoidParams.js';
import { box, capsule, cone, type Shape } from './sdfShapes.js';
import type { ShapeField } from './shapeField.js';

/** How a clothing item is weighted: rigidly to one bone, or like the body under it over a set of bones. */
export type WeightRule = { kind: 'rigid'; bone: number } | { kind: 'bones'; bones: number[]; sideMargin: number };

export interface ClothingItem {
  /** the part's name (a Blender object name) */
  name: string;
  shapes: Shape[];
  /** cut at the floor (shoes, long skirts) */
  floor: boolean;
  weights: WeightRule;
  /** a separate part is meshed with grid cells no larger than this (m): thin and small things need finer cells */
  maxCell: number;
}

const bones = (...names: (keyof typeof JOINT)[]) => names.map((n) => JOINT[n]);

/**
 * buildTrunkClothing: the items that do not depend on the arms (skirt, coat, cape, hair, hat, shoes, eyes, teeth).
 * core: the body, bodyField: its field (to find the face's surface), cell: the expected grid cell (m) → items
 */
export function buildTrunkClothing(params: HumanoidParams, core: BodyCore, bodyField: ShapeField, cell: number): ClothingItem[] {
  const c = params.clothing;
  const items: ClothingItem[] = [];
  const thin = (t: number) => Math.max(t, 2.2 * cell);
  const torsoLength = core.yNeck - core.yHip;
  const [legL] = core.legs;
  // a separate skirt's front blends from one thigh to the other across the whole gap between them; fused into the
  // body, its hem must take the legs' own weights where the legs come out of it
  const midlineRamp = params.fused ? 0 : legL.hip[0];

  const lowerCone = (hem: number, flare: number, topY: number, topRadius: number): Shape => {
    const hemY = Math.max(core.yHip * (1 - hem), 0.02 * core.height);
    // the hem must clear the legs there, the hips at their height
    const legT = (core.yHip - hemY) / Math.max(core.yHip - legL.knee[1], 1e-6);
    const legX = Math.abs(legL.hip[0] + (legL.knee[0] - legL.hip[0]) * Math.min(legT, 1)) + legL.thighRadius * (legT < 1 ? 1 - 0.38 * legT : 0.62);
    const slope = (core.hipHalfWidth * 1.1 - topRadius) / Math.max(topY - core.yHip, 1e-6);
    const hemRadius = Math.max(legX * 1.15, topRadius + slope * (topY - hemY)) * flare;
    return cone([0, hemY, 0], [0, topY, 0], hemRadius, topRadius, Math.min(thin(0.01 * core.height), topRadius * 0.5), { depthScale: 0.78 });
  };

  if (c.skirt) {
    const topY = core.yHip + torsoLength * 0.3;
    items.push({
      name: 'skirt', shapes: [lowerCone(c.skirt.hem, c.skirt.flare, topY, core.waistHalfWidth * 1.12)], floor: true,
      weights: { kind: 'bones', bones: bones('Hips', 'Spine', 'LeftUpLeg', 'RightUpLeg'), sideMargin: midlineRamp }, maxCell: Infinity,
    });
  }
  if (c.coat) {
    const r = core.chestHalfWidth * 1.1;
    const shoulderR = Math.min(core.chestHalfWidth * 0.5, (core.yNeck - core.yShoulder) + core.arms[0].upperRadius);
    items.push({
      name: 'coat',
      shapes: [
        lowerCone(c.coat.hem, c.coat.flare, core.yHip + torsoLength * 0.35, core.waistHalfWidth * 1.15),
        capsule([0, core.yHip + torsoLength * 0.25, 0], [0, core.yNeck - r, 0], Math.max(core.waistHalfWidth, core.hipHalfWidth) * 1.1, r,
          { depthScale: (core.chestHalfDepth * 1.12) / r, blend: 0.02 * core.height }),
        capsule([-(core.shoulderHalfWidth - shoulderR * 0.5), core.yShoulder + shoulderR * 0.3, -core.chestHalfDepth * 0.05],
          [core.shoulderHalfWidth - shoulderR * 0.5, core.yShoulder + shoulderR * 0.3, -core.chestHalfDepth * 0.05], shoulderR, shoulderR,
          { depthScale: (core.chestHalfDepth * 1.05) / shoulderR, blend: 0.02 * core.height }),
      ],
      floor: true,
      weights: { kind: 'bones', bones: bones('Hips', 'Spine', 'Spine1', 'Spine2', 'Neck', 'LeftShoulder', 'RightShoulder', 'LeftUpLeg', 'RightUpLeg', 'LeftLeg', 'RightLeg'), sideMargin: midlineRamp },
      maxCell: Infinity,
    });
  }
  if (c.cape) {
    const thickness = thin(0.008 * core.height);
    const top = core.yShoulder + (core.yNeck - core.yShoulder) * 0.4;
    const hemY = Math.max(core.yHip * (1 - c.cape.hem), 0.03 * core.height);
    const back = Math.max(core.chestHalfDepth, core.hipHalfDepth, core.waistHalfDepth) + thickness * 0.5 + 0.012 * core.height;
    const ra = core.shoulderHalfWidth * 0.95, rb = core.shoulderHalfWidth * 1.25 * c.cape.width;
    // the hem swings back over the calves and heels
    const hemBack = back + Math.max(legL.footLength * 0.3, 0.04 * core.height);
    items.push({
      name: 'cape',
      shapes: [cone([0, hemY, -hemBack], [0, top, -core.chestHalfDepth * 0.75], rb, ra, Math.min(ra, rb) * 0.1, { depthScale: thickness / (2 * ra) })],
      // cut at the floor, as a cape fused into the body already was: squashed front to back, the cone's hem end stands
      // upright, a rounded edge that reaches under hemY by up to its radius, and a long cape's went through the floor
      // (22 000 058's 0.22 of the height under the soles, where the forward cue took it for the feet)
      floor: true,
      weights: { kind: 'bones', bones: bones('Hips', 'Spine', 'Spine1', 'Spine2', 'Neck'), sideMargin: 0 },
      maxCell: thickness / 2.2,
    });
  }
  if (c.hair) {
    const h = c.hair;
    const r = core.headHalfWidth * h.volume;
    const centre: Vec3 = [0, core.headCentre[1] + core.headHalfWidth * (h.volume - 1) * 0.9, core.headCentre[2] - core.headHalfDepth * 0.18];
    // a cap over the skull, cut along a hairline that runs above the eyes and behind the cheeks
    const hairline: Vec3 = [0, core.eyeY + core.headHalfWidth * 0.3, core.headCentre[2] + core.headHalfDepth * 0.5];
    const shapes: Shape[] = [capsule(centre, [0, core.headCentre[1] - core.headHalfWidth * 0.35, centre[2] - core.headHalfDepth * 0.1], r, r * 0.9,
      { depthScale: (core.headHalfDepth * h.volume) / r, cut: { normal: normalize([0, -0.45, 1]), point: hairline } })];
    if (h.long) {
      const lengthDown = torsoLength * h.length;
      // hanging clear of the back (a fused surface would glue Head-weighted hair to the spine)
      const behind = -Math.max(core.chestHalfDepth, core.waistHalfDepth, core.neckRadius * 1.2) - 0.015 * core.height - 2 * cell;
      const width = core.headHalfWidth * 0.85;
      const depth = Math.max(core.headHalfDepth * 0.3, 2.5 * cell);
      shapes.push(cone([0, core.yNeck - lengthDown, behind - depth], [0, core.eyeY, centre[2] - core.headHalfDepth * 0.45], width * 0.85, width,
        Math.min(width * 0.2, depth * 0.6), { depthScale: depth / width, blend: core.headHalfWidth * 0.3 }));
    }
    // hair moves with the head, and where it reaches down the nape with the neck
    items.push({ name: 'hair', shapes, floor: false, weights: { kind: 'bones', bones: bones('Head', 'Neck'), sideMargin: 0 }, maxCell: Infinity });
  }
  if (c.hat) {
    const r = core.headHalfWidth * c.hat.size * (c.hair ? c.hair.volume : 1);
    const baseY = core.headCentre[1] + core.headHalfWidth * 0.3;
    const hz = core.headCentre[2] - core.headHalfDepth * 0.05;
    const shapes: Shape[] = [];
    const brimThickness = thin(0.05 * r);
    if (c.hat.style === 'brim') {
      shapes.push(cone([0, baseY, hz], [0, baseY + brimThickness, hz], r * 1.75, r * 1.75, brimThickness * 0.45));
      shapes.push(cone([0, baseY, hz], [0, baseY + r * 1.1, hz], r * 1.08, r * 0.98, r * 0.15, { blend: r * 0.1 }));
    } else if (c.hat.style === 'cone') {
      shapes.push(cone([0, baseY, hz], [0, baseY + brimThickness, hz], r * 1.5, r * 1.5, brimThickness * 0.45));
      shapes.push(cone([0, baseY, hz], [0, baseY + r * 2.6, hz - r * 0.3], r * 1.05, Math.max(r * 0.12, 2 * cell), Math.max(r * 0.08, cell), { blend: r * 0.1 }));
    } else {
      shapes.push(capsule([0, baseY + r * 0.05, hz], [0, baseY + r * 0.2, hz], r * 1.08, r * 1.05, { depthScale: core.headHalfDepth / core.headHalfWidth }));
      const visorZ = hz + core.headHalfDepth * 1.05;
      shapes.push(box([0, baseY + r * 0.05, visorZ], [1, 0, 0], [0, 1, 0.25], [r * 0.8, brimThickness / 2, r * 0.45], brimThickness * 0.45, { blend: r * 0.05 }));
    }
    items.push({ name: 'hat', shapes, floor: false, weights: { kind: 'rigid', bone: JOINT.Head }, maxCell: brimThickness / 2.2 });
  }
  if (c.shoes) {
    const s = c.shoes;
    const shapes: Shape[] = [];
    for (const leg of core.legs) {
      // never across the midline: the two shoes (and boot shafts) stay apart, so left and right do not fuse
      const room = (x: number) => Math.abs(x) - 0.012 * core.height - 1.5 * cell;
      const footR = Math.min(leg.footHalfWidth * s.bulk, room(leg.ankle[0]));
      const heelZ = leg.heel[2] - leg.footLength * 0.06;
      const toeZ = leg.toeTip[2] + leg.footLength * 0.06;
      const height = Math.max(leg.ankle[1] * 0.8, leg.heel[1] * 2) * s.bulk;
      shapes.push(box([(leg.ankle[0] + leg.toeTip[0]) / 2, height / 2, (heelZ + toeZ) / 2], [0, 0, 1], [0, 1, 0], [(toeZ - heelZ) / 2, height / 2 + 0.005 * core.height, footR],
        Math.min(height / 2, footR) * 0.85));
      const top = s.boots ? leg.ankle[1] + (leg.knee[1] - leg.ankle[1]) * 0.6 : leg.ankle[1] * 1.1;
      const shin: Vec3 = [leg.ankle[0] + (leg.knee[0] - leg.ankle[0]) * 0.6, top, leg.ankle[2] + (leg.knee[2] - leg.ankle[2]) * 0.6];
      const shaftBottom = Math.min(leg.ankleRadius * 1.35 * s.bulk, room(leg.ankle[0]));
      const shaftTop = Math.min((s.boots ? leg.kneeRadius * 1.15 : leg.ankleRadius * 1.3) * s.bulk, room(shin[0]));
      shapes.push(cone([leg.ankle[0], height * 0.3, leg.ankle[2] - leg.ankleRadius * 0.3], shin, Math.max(shaftBottom, leg.ankleRadius * 1.05),
        Math.max(shaftTop, leg.ankleRadius * 1.05), leg.ankleRadius * 0.3, { blend: leg.ankleRadius * 0.5 }));
    }
    items.push({
      name: s.boots ? 'boots' : 'shoes', shapes, floor: true,
      weights: { kind: 'bones', bones: bones('LeftLeg', 'LeftFoot', 'LeftToeBase', 'RightLeg', 'RightFoot', 'RightToeBase'), sideMargin: 0 },
      maxCell: Infinity,
    });
  }
  if (c.eyes) {
    const r = core.headHalfWidth * 0.13 * c.eyes.size * (1.6 - 0.6 * core.realism);
    for (const sx of [1, -1]) {
      const x = sx * core.headHalfWidth * 0.36;
      const z = surfaceAlongZ(bodyField, x, core.eyeY, core.headCentre[2], core.headCentre[2] + core.headHalfDepth * 2);
      items.push({
        name: sx > 0 ? 'eye_L' : 'eye_R', shapes: [capsule([x, core.eyeY, z - r * 0.45], [x, core.eyeY, z - r * 0.45], r, r)], floor: false,
        weights: { kind: 'rigid', bone: JOINT.Head }, maxCell: r / 3,
      });
    }
  }
  if (c.teeth) {
    const half = core.headHalfWidth * 0.2 * c.teeth.size;
    const r = Math.max(core.headHalfWidth * 0.055 * c.teeth.size, 1.5 * cell);
    const z = surfaceAlongZ(bodyField, 0, core.mouthY, core.headCentre[2], core.headCentre[2] + core.headHalfDepth * 2);
    items.push({
      name: 'teeth', shapes: [capsule([-half, core.mouthY, z - r * 1.1], [half, core.mouthY, z - r * 1.1], r, r, { depthScale: 0.7 })], floor: false,
      weights: { kind: 'rigid', bone: JOINT.Head }, maxCell: r / 1.5,
    });
  }
  return items;
}

/**
 * buildArmClothing: the items placed on the posed arms (wide sleeves, a held sword or staff).
 * arms: [left, right] frames from buildArm → items
 */
export function buildArmClothing(params: HumanoidParams, core: BodyCore, arms: [ArmFrame, ArmFrame], cell: number): ClothingItem[] {
  const c = params.clothing;
  const items: ClothingItem[] = [];
  const thin = (t: number) => Math.max(t, 2.2 * cell);
  if (c.sleeves) {
    const shapes: Shape[] = [];
    for (const a of arms) shapes.push(...sleeveShapes(a, c.sleeves.flare));
    items.push({
      name: 'sleeves', shapes, floor: false,
      weights: { kind: 'bones', bones: bones('LeftShoulder', 'LeftArm', 'LeftForeArm', 'LeftHand', 'RightShoulder', 'RightArm', 'RightForeArm', 'RightHand', 'Spine2'), sideMargin: 0 },
      maxCell: Infinity,
    });
  }
  if (c.prop) {
    const side = c.prop.hand === 'left' ? 0 : 1;
    const a = arms[side];
    const sx = side === 0 ? 1 : -1;
    const unit = core.height / 1.75;
    const handBone = JOINT[side === 0 ? 'LeftHand' : 'RightHand'];
    const shapes: Shape[] = [];
    const gripR = Math.max(0.016 * unit, 1.2 * cell);
    let maxCell = gripR / 1.2;
    if (c.prop.kind === 'sword') {
      // the grip runs across the fist; the blade points forward out of it
      const across = normalize(cross(a.handDir, a.palmNormal));
      const forward: Vec3 = across[2] < 0 ? scale(across, -1) : across;
      const pommel = add(a.grip, scale(forward, -0.1 * unit));
      const guard = add(a.grip, scale(forward, 0.07 * unit));
      const bladeLength = 0.75 * unit * c.prop.length;
      shapes.push(capsule(pommel, guard, gripR, gripR));
      shapes.push(capsule(pommel, pommel, gripR * 1.7, gripR * 1.7, { blend: gripR * 0.5 }));
      shapes.push(box(guard, forward, [0, 1, 0], [thin(0.012 * unit), 0.09 * unit, thin(0.012 * unit)], thin(0.012 * unit) * 0.45, { blend: gripR * 0.3 }));
      const bladeHalf: Vec3 = [bladeLength / 2, thin(0.022 * unit), thin(0.006 * unit)];
      shapes.push(box(add(guard, scale(forward, bladeLength / 2)), forward, [0, 1, 0], bladeHalf, Math.min(bladeHalf[2], bladeHalf[1]) * 0.9, { blend: gripR * 0.3 }));
      maxCell = Math.min(maxCell, bladeHalf[2] / 1.1);
    } else {
      const r = Math.max(0.017 * unit, 1.3 * cell);
      const foot: Vec3 = [a.grip[0] + sx * 0.07 * unit, 0.01 * unit + r, a.grip[2] + 0.09 * unit];
      const up = normalize([a.grip[0] - foot[0], a.grip[1] - foot[1], a.grip[2] - foot[2]]);
      const topPoint = add(a.grip, scale(up, Math.max(0.35 * core.height * c.prop.length, 0.25)));
      shapes.push(capsule(foot, topPoint, r, r * 1.15));
      shapes.push(capsule(topPoint, topPoint, r * 2.4, r * 2.4, { blend: r }));
      maxCell = r / 1.2;
    }
    items.push({ name: c.prop.kind, shapes, floor: false, weights: { kind: 'rigid', bone: handBone }, maxCell });
  }
  return items;
}

/**
 * sleeveShapes: one wide sleeve around a posed arm: a cone over the upper arm, one flaring from the elbow to the cuff
 * just short of the wrist. arm: the arm's frame, flare: cuff radius over 1.5 wrist radii → [upper, lower] shapes
 */
export function sleeveShapes(a: ArmFrame, flare: number): Shape[] {
  const dirUpper = normalize([a.elbow[0] - a.shoulderBall[0], a.elbow[1] - a.shoulderBall[1], a.elbow[2] - a.shoulderBall[2]]);
  const start = add(a.shoulderBall, scale(dirUpper, a.upperRadius * 0.3));
  const cuff = add(a.wrist, scale(normalize([a.wrist[0] - a.elbow[0], a.wrist[1] - a.elbow[1], a.wrist[2] - a.elbow[2]]), -a.wristRadius * 0.5));
  return [
    cone(start, a.elbow, a.upperRadius * 1.25, a.elbowRadius * 1.4, a.elbowRadius * 0.3),
    cone(a.elbow, cuff, a.elbowRadius * 1.4, a.wristRadius * 1.5 * flare, a.wristRadius * 0.3, { blend: a.elbowRadius * 0.3 }),
  ];
}

/**
 * The z where the field crosses zero going from inside at zInside towards zOutside, along the line (x, y):
 * zOutside if it never does.
 */
function surfaceAlongZ(field: ShapeField, x: number, y: number, zInside: number, zOutside: number): number {
  const steps = 64;
  let prev = zInside;
  for (let i = 1; i <= steps; i++) {
    const z = zInside + ((zOutside - zInside) * i) / steps;
    if (field.value(x, y, z) >= 0) {
      let lo = prev, hi = z;
      for (let it = 0; it < 30; it++) {
        const mid = (lo + hi) / 2;
        if (field.value(x, y, mid) >= 0) hi = mid;
        else lo = mid;
      }
      return (lo + hi) / 2;
    }
    prev = z;
  }
  return zOutside;
}
