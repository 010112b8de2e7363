import { beforeAll, describe, expect, it } from 'vitest';
import type { RiggedCharacter } from '../sidecar/data/trainingSample.js';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { posedHeads, poseTransforms } from '../sidecar/deform/linearBlendSkinning.js';
import { posedCharacterStates, type PosedCharacterStates } from '../sidecar/pose/posedStates.js';
import {
  COMBO_POSE_NAMES, GENERATOR_FRAME, isPoseName, poseComponents, poseJoints, POSE_NAMES, poseRotations, SINGLE_POSE_NAMES,
  type PoseName,
} from '../sidecar/pose/poseVocabulary.js';
import { MIXAMO_JOINTS, MIXAMO_PARENTS, type MixamoJointName } from '../sidecar/skeleton/mixamoTemplate.js';

type Vec3 = [number, number, number];
const J = MIXAMO_JOINTS.length;
const PARENTS = new Int32Array(MIXAMO_JOINTS.map((n) => (MIXAMO_PARENTS[n] ? MIXAMO_JOINTS.indexOf(MIXAMO_PARENTS[n]!) : -1)));
const idx = (name: MixamoJointName) => MIXAMO_JOINTS.indexOf(name);
const UP: Vec3 = [0, 1, 0];
const FORWARD: Vec3 = [0, 0, 1];
const LEFT: Vec3 = [1, 0, 0];
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const sub = (a: ArrayLike<number>, b: ArrayLike<number>): Vec3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const norm = (a: ArrayLike<number>) => Math.hypot(a[0], a[1], a[2]);
const degreesBetween = (a: ArrayLike<number>, b: ArrayLike<number>) => (Math.acos(Math.min(1, Math.max(-1, dot(a, b) / (norm(a) * norm(b))))) * 180) / Math.PI;
const head = (heads: ArrayLike<number>, name: MixamoJointName): Vec3 => {
  const j = idx(name) * 3;
  return [heads[j], heads[j + 1], heads[j + 2]];
};
/** Rotation angle of row-major 3x3 rotation j of a #J*9 array, in degrees. */
const rotationDegrees = (rotations: Float64Array, j: number) =>
  (Math.acos(Math.min(1, Math.max(-1, (rotations[j * 9] + rotations[j * 9 + 4] + rotations[j * 9 + 8] - 1) / 2))) * 180) / Math.PI;
const isIdentityRow = (rotations: Float64Array, j: number) => [1, 0, 0, 0, 1, 0, 0, 0, 1].every((e, i) => rotations[j * 9 + i] === e);
/** Where joint j's transform takes point p. */
function transformPoint(transforms: Float64Array, j: number, p: Vec3): Vec3 {
  const t = transforms.subarray(j * 12, j * 12 + 12);
  return [0, 1, 2].map((r) => t[r * 4] * p[0] + t[r * 4 + 1] * p[1] + t[r * 4 + 2] * p[2] + t[r * 4 + 3]) as Vec3;
}

/** The joints each pose family turns (the prefix Left/Right is the side's). */
const TURNED: Record<string, string[]> = {
  elbowBent: ['ForeArm'], elbowSuperBent: ['ForeArm'], kneeBent: ['Leg'], clavicleDownward: ['Shoulder'], shoulderRaise: ['Arm'],
  armForward: ['Arm'], wristBend: ['Hand'], hipFlex: ['UpLeg'], spineTwist: ['=Spine', '=Spine1', '=Spine2'], neckTurn: ['=Neck', '=Head'],
  spineBendForward: ['=Spine', '=Spine1', '=Spine2'], headNodDown: ['=Neck', '=Head'],
};
function expectedTurned(single: string): MixamoJointName[] {
  const side = single.endsWith('Lf') ? 'Left' : single.endsWith('Rt') ? 'Right' : '';
  const family = side ? single.slice(0, -2) : single;
  return TURNED[family].map((s) => (s.startsWith('=') ? s.slice(1) : side + s) as MixamoJointName);
}
/** The turned joints and all their descendants: the joints whose transform is not the identity. */
function movingSet(turned: MixamoJointName[]): Set<number> {
  const moving = new Set(turned.map(idx));
  for (let j = 0; j < J; j++) if (PARENTS[j] >= 0 && moving.has(PARENTS[j])) moving.add(j);
  return moving;
}
/** Per vertex of part p: the weight it puts on a set of joints. */
function weightOn(c: RiggedCharacter, p: number, joints: Set<number>): Float64Array {
  const { indices, weights } = c.weights[p];
  const V = c.parts[p].positions.length / 3;
  const k = indices.length / V;
  const out = new Float64Array(V);
  for (let v = 0; v < V; v++) for (let i = v * k; i < v * k + k; i++) if (joints.has(indices[i])) out[v] += weights[i];
  return out;
}
/** Per vertex of part p: how far a variant moved it from rest. */
function displacement(c: RiggedCharacter, p: number, posed: Float32Array): Float64Array {
  const rest = c.parts[p].positions;
  const out = new Float64Array(rest.length / 3);
  for (let v = 0; v < out.length; v++) out[v] = Math.hypot(posed[3 * v] - rest[3 * v], posed[3 * v + 1] - rest[3 * v + 1], posed[3 * v + 2] - rest[3 * v + 2]);
  return out;
}
/** Displacements of the vertices (all parts) whose weight on `joints` passes `select`, by variant. */
function displacementsWhere(c: RiggedCharacter, s: PosedCharacterStates, joints: Set<number>, select: (w: number) => boolean, variant: 'skinning' | 'skinningCorrective' | 'corrective' = 'skinning'): number[] {
  const out: number[] = [];
  c.parts.forEach((_, p) => {
    const w = weightOn(c, p, joints);
    const d = displacement(c, p, s.parts[p][variant]);
    w.forEach((x, v) => { if (select(x)) out.push(d[v]); });
  });
  return out;
}
const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / a.length;

/** Left↔Right name swap of a joint or pose component. */
const mirrorJoint = (name: string) => (name.startsWith('Left') ? 'Right' + name.slice(4) : name.startsWith('Right') ? 'Left' + name.slice(5) : name) as MixamoJointName;
function mirrorPose(name: PoseName): PoseName {
  const mirrored = poseComponents(name).map((c) => (c.endsWith('Lf') ? c.slice(0, -2) + 'Rt' : c.endsWith('Rt') ? c.slice(0, -2) + 'Lf' : c)).sort().join('+');
  const found = POSE_NAMES.find((n) => poseComponents(n).slice().sort().join('+') === mirrored);
  if (!found) throw new Error(`no mirror of ${name} in the vocabulary`);
  return found;
}

let character: RiggedCharacter;
let rest: Float64Array;

beforeAll(() => {
  character = generateProceduralHumanoid(7, { targetVertices: 20000 });
  rest = Float64Array.from(character.joints);
});

describe('pose vocabulary', () => {
  it('lists the singles (10 sided families × Lf/Rt, then 2 central) and then the combinations, all distinct', () => {
    expect(POSE_NAMES.length).toBe(SINGLE_POSE_NAMES.length + COMBO_POSE_NAMES.length);
    expect(SINGLE_POSE_NAMES.length).toBe(22);
    expect(COMBO_POSE_NAMES.length).toBeGreaterThanOrEqual(10);
    expect(new Set(POSE_NAMES).size).toBe(POSE_NAMES.length);
    expect(POSE_NAMES.slice(0, 22)).toEqual([...SINGLE_POSE_NAMES]);
    expect(POSE_NAMES.slice(0, 4)).toEqual(['elbowBentLf', 'elbowBentRt', 'elbowSuperBentLf', 'elbowSuperBentRt']);
    expect(POSE_NAMES.slice(20, 22)).toEqual(['spineBendForward', 'headNodDown']);
    expect(isPoseName('kneeBentRt')).toBe(true);
    expect(isPoseName('kneeBent')).toBe(false);
    expect(isPoseName(3)).toBe(false);
    expect(poseComponents('elbowBentLf')).toEqual(['elbowBentLf']);
    expect(poseComponents('elbowBentLf+kneeBentRt')).toEqual(['elbowBentLf', 'kneeBentRt']);
  });

  it('combines two single poses that turn disjoint joints, mixing arms and legs, left and right; closed under mirroring', () => {
    const families = (n: string) => poseComponents(n).map((c) => c.replace(/(Lf|Rt)$/, ''));
    for (const combo of COMBO_POSE_NAMES) {
      const [a, b] = poseComponents(combo);
      expect(SINGLE_POSE_NAMES).toContain(a);
      expect(SINGLE_POSE_NAMES).toContain(b);
      const shared = poseJoints(a).filter((j) => poseJoints(b).includes(j));
      expect(shared, combo).toEqual([]);
      expect(poseJoints(combo).sort()).toEqual([...poseJoints(a), ...poseJoints(b)].sort());
      expect(COMBO_POSE_NAMES as readonly string[]).toContain(mirrorPose(combo));
    }
    const armLeg = COMBO_POSE_NAMES.filter((n) => families(n).some((f) => /elbow|shoulder|arm/i.test(f)) && families(n).some((f) => /knee|hip/.test(f)));
    const leftRight = COMBO_POSE_NAMES.filter((n) => n.includes('Lf') && n.includes('Rt'));
    expect(armLeg.length).toBeGreaterThanOrEqual(4);
    expect(leftRight.length).toBeGreaterThanOrEqual(4);
  });

  it('turns exactly the joints each single pose names, by a nonzero angle', () => {
    for (const name of SINGLE_POSE_NAMES) {
      const expected = expectedTurned(name);
      expect(poseJoints(name), name).toEqual(MIXAMO_JOINTS.filter((j) => expected.includes(j)));
      const rotations = poseRotations(name, rest, GENERATOR_FRAME, 1);
      const turned = MIXAMO_JOINTS.filter((_, j) => !isIdentityRow(rotations, j));
      expect(turned, name).toEqual(MIXAMO_JOINTS.filter((j) => expected.includes(j)));
      for (const j of expected) expect(rotationDegrees(rotations, idx(j)), `${name} ${j}`).toBeGreaterThan(4);
    }
  });

  it('uses the table\'s angles, split over the spine and neck joints, scaled by strength', () => {
    const angle = (name: string, joint: MixamoJointName, strength = 1) => rotationDegrees(poseRotations(name, rest, GENERATOR_FRAME, strength), idx(joint));
    expect(angle('elbowBentLf', 'LeftForeArm')).toBeCloseTo(90, 9);
    expect(angle('elbowSuperBentRt', 'RightForeArm')).toBeCloseTo(140, 9);
    expect(angle('kneeBentRt', 'RightLeg')).toBeCloseTo(90, 9);
    expect(angle('spineTwistLf', 'Spine1')).toBeCloseTo(15, 9);
    expect(angle('neckTurnRt', 'Head')).toBeCloseTo(30, 9);
    expect(angle('elbowBentLf', 'LeftForeArm', 0.5)).toBeCloseTo(45, 9);
    expect(angle('elbowBentLf', 'LeftForeArm', 1.5)).toBeCloseTo(135, 9);
  });

  it('mirrors: every pose on a left/right symmetric skeleton is the mirror image of its Lf↔Rt swapped pose', () => {
    // the character's left joints, mirrored to the right; midline joints on x = 0
    const symmetric = new Float64Array(J * 3);
    MIXAMO_JOINTS.forEach((name, j) => {
      if (name.startsWith('Right')) return;
      const [x, y, z] = head(rest, name);
      symmetric.set([name.startsWith('Left') ? x : 0, y, z], j * 3);
      if (name.startsWith('Left')) symmetric.set([-x, y, z], idx(mirrorJoint(name)) * 3);
    });
    const sign = [-1, 1, 1];
    for (const name of POSE_NAMES) {
      const mirrored = mirrorPose(name);
      const a = poseRotations(name, symmetric, GENERATOR_FRAME, 1);
      const b = poseRotations(mirrored, symmetric, GENERATOR_FRAME, 1);
      for (let j = 0; j < J; j++) {
        const m = idx(mirrorJoint(MIXAMO_JOINTS[j]));
        for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) {
          expect(b[m * 9 + r * 3 + c], `${name} vs ${mirrored}, joint ${MIXAMO_JOINTS[j]}`).toBeCloseTo(sign[r] * sign[c] * a[j * 9 + r * 3 + c], 12);
        }
      }
      const ha = posedHeads(symmetric, poseTransforms(symmetric, PARENTS, a));
      const hb = posedHeads(symmetric, poseTransforms(symmetric, PARENTS, b));
      for (let j = 0; j < J; j++) {
        const m = idx(mirrorJoint(MIXAMO_JOINTS[j]));
        for (let c = 0; c < 3; c++) expect(hb[m * 3 + c]).toBeCloseTo(sign[c] * ha[j * 3 + c], 12);
      }
    }
  });

  it('bends like a human on the generator character: elbows forward, knees back, hips forward, arms up and forward', () => {
    const transformsOf = (name: string) => poseTransforms(rest, PARENTS, poseRotations(name, rest, GENERATOR_FRAME, 1));
    const moved = (name: string, joint: MixamoJointName) => sub(head(posedHeads(rest, transformsOf(name)), joint), head(rest, joint));
    for (const [side, s] of [['Left', 'Lf'], ['Right', 'Rt']] as const) {
      const j = (n: string) => `${side}${n}` as MixamoJointName;
      const outward: Vec3 = side === 'Left' ? LEFT : [-1, 0, 0];
      const forearm = norm(sub(head(rest, j('Hand')), head(rest, j('ForeArm'))));
      const shin = norm(sub(head(rest, j('Foot')), head(rest, j('Leg'))));
      const thigh = norm(sub(head(rest, j('Leg')), head(rest, j('UpLeg'))));
      const arm = norm(sub(head(rest, j('ForeArm')), head(rest, j('Arm'))));
      // elbow: the hand swings forward (the rest forearm already points a little forward) and in, not back
      const hand = moved(`elbowBent${s}`, j('Hand'));
      expect(dot(hand, FORWARD)).toBeGreaterThan(0.3 * forearm);
      expect(dot(hand, outward)).toBeLessThan(-0.3 * forearm);
      // knee: the foot goes back and up by about a shin length (90°)
      const foot = moved(`kneeBent${s}`, j('Foot'));
      expect(dot(foot, FORWARD)).toBeLessThan(-0.6 * shin);
      expect(dot(foot, UP)).toBeGreaterThan(0.6 * shin);
      // hip flexion: the knee goes forward
      expect(dot(moved(`hipFlex${s}`, j('Leg')), FORWARD)).toBeGreaterThan(0.5 * thigh);
      // shoulder raise: the elbow goes up; arm forward: the elbow goes forward
      expect(dot(moved(`shoulderRaise${s}`, j('ForeArm')), UP)).toBeGreaterThan(0.5 * arm);
      expect(dot(moved(`armForward${s}`, j('ForeArm')), FORWARD)).toBeGreaterThan(0.5 * arm);
      // clavicle down: the shoulder joint drops
      expect(dot(moved(`clavicleDownward${s}`, j('Arm')), UP)).toBeLessThan(-0.01);
      // wrist: a fingertip beyond the hand bends down towards the palm (the rest arm is near horizontal here)
      const tipRest = (() => { const h = head(rest, j('Hand')); const d = sub(h, head(rest, j('ForeArm'))); return [h[0] + 0.5 * d[0], h[1] + 0.5 * d[1], h[2] + 0.5 * d[2]] as Vec3; })();
      const tip = sub(transformPoint(transformsOf(`wristBend${s}`), idx(j('Hand')), tipRest), tipRest);
      expect(dot(tip, UP)).toBeLessThan(-0.2 * forearm);
      // twist and turn towards the side: a point in front of the chest / face moves to that side
      const chest = head(rest, 'Spine2');
      const front: Vec3 = [chest[0], chest[1], chest[2] + 0.2];
      expect(dot(sub(transformPoint(transformsOf(`spineTwist${s}`), idx('Spine2'), front), front), outward)).toBeGreaterThan(0.05);
      const face = head(rest, 'Head');
      const nose: Vec3 = [face[0], face[1], face[2] + 0.1];
      expect(dot(sub(transformPoint(transformsOf(`neckTurn${s}`), idx('Head'), nose), nose), outward)).toBeGreaterThan(0.04);
    }
    // bending forward: the neck goes forward and down; nodding: the head top goes forward and down
    const neck = moved('spineBendForward', 'Neck');
    expect(dot(neck, FORWARD)).toBeGreaterThan(0.05);
    expect(dot(neck, UP)).toBeLessThan(-0.01);
    const top = moved('headNodDown', 'HeadTop_End');
    expect(dot(top, FORWARD)).toBeGreaterThan(0.05);
    expect(dot(top, UP)).toBeLessThan(-0.01);
  });

  it('reads the axes from the skeleton: hanging arms bend their elbows forward, raise sideways, bend the wrist inward', () => {
    // the character's arms turned down by 85° in the coronal plane, about each shoulder joint
    const hanging = Float64Array.from(rest);
    for (const [side, outward] of [['Left', 1], ['Right', -1]] as const) {
      const pivot = head(rest, `${side}Arm` as MixamoJointName);
      const a = (-85 * Math.PI) / 180 * outward;
      for (const seg of ['ForeArm', 'Hand'] as const) {
        const p = sub(head(rest, `${side}${seg}` as MixamoJointName), pivot);
        hanging.set([pivot[0] + Math.cos(a) * p[0] - Math.sin(a) * p[1], pivot[1] + Math.sin(a) * p[0] + Math.cos(a) * p[1], pivot[2] + p[2]], idx(`${side}${seg}` as MixamoJointName) * 3);
      }
      const handRest = head(hanging, `${side}Hand` as MixamoJointName);
      expect(handRest[1]).toBeLessThan(pivot[1] - 0.2);
      const posedHand = (name: string) => sub(head(posedHeads(hanging, poseTransforms(hanging, PARENTS, poseRotations(name, hanging, GENERATOR_FRAME, 1))), `${side}Hand` as MixamoJointName), handRest);
      const s = side === 'Left' ? 'Lf' : 'Rt';
      const forearm = norm(sub(handRest, head(hanging, `${side}ForeArm` as MixamoJointName)));
      const elbow = posedHand(`elbowBent${s}`);
      expect(dot(elbow, FORWARD)).toBeGreaterThan(0.3 * forearm);
      expect(dot(elbow, UP)).toBeGreaterThan(0.3 * forearm);
      const raise = posedHand(`shoulderRaise${s}`);
      expect(raise[0] * outward).toBeGreaterThan(0.1);
      expect(dot(raise, UP)).toBeGreaterThan(0.05);
      const forward = posedHand(`armForward${s}`);
      expect(dot(forward, FORWARD)).toBeGreaterThan(0.2);
      // the hanging palm faces the thigh: a fingertip bends in towards the body
      const fore = head(hanging, `${side}ForeArm` as MixamoJointName);
      const tipRest: Vec3 = [handRest[0] + 0.5 * (handRest[0] - fore[0]), handRest[1] + 0.5 * (handRest[1] - fore[1]), handRest[2] + 0.5 * (handRest[2] - fore[2])];
      const wrist = poseTransforms(hanging, PARENTS, poseRotations(`wristBend${s}`, hanging, GENERATOR_FRAME, 1));
      expect(sub(transformPoint(wrist, idx(`${side}Hand` as MixamoJointName), tipRest), tipRest)[0] * outward).toBeLessThan(-0.03);
    }
  });

  it('returns the identity at strength 0 and the composed rotations for a combination', () => {
    for (const name of POSE_NAMES) {
      const zero = poseRotations(name, rest, GENERATOR_FRAME, 0);
      for (let j = 0; j < J; j++) expect(isIdentityRow(zero, j), `${name} ${j}`).toBe(true);
    }
    for (const combo of COMBO_POSE_NAMES) {
      const [a, b] = poseComponents(combo).map((c) => poseRotations(c, rest, GENERATOR_FRAME, 0.8));
      const both = poseRotations(combo, rest, GENERATOR_FRAME, 0.8);
      for (let j = 0; j < J; j++) {
        const from = isIdentityRow(a, j) ? b : a;
        for (let i = 0; i < 9; i++) expect(both[j * 9 + i]).toBeCloseTo(from[j * 9 + i], 14);
      }
    }
  });

  it('rejects unknown poses, strengths outside [0, 1.5], bad frames and heads with error codes', () => {
    const code = (f: () => unknown) => { try { f(); return 'none'; } catch (e) { return (e as { code?: string }).code; } };
    expect(code(() => poseRotations('elbowBentUp', rest, GENERATOR_FRAME, 1))).toBe('BAD_REQUEST');
    expect(code(() => poseRotations('elbowBent', rest, GENERATOR_FRAME, 1))).toBe('BAD_REQUEST');
    expect(code(() => poseRotations('elbowBentLf+elbowBentLf', rest, GENERATOR_FRAME, 1))).toBe('BAD_REQUEST');
    expect(code(() => poseComponents('nope'))).toBe('BAD_REQUEST');
    for (const strength of [-0.01, 1.51, Number.NaN, Infinity]) expect(code(() => poseRotations('elbowBentLf', rest, GENERATOR_FRAME, strength))).toBe('BAD_REQUEST');
    expect(code(() => poseRotations('elbowBentLf', rest, GENERATOR_FRAME, 1.5))).toBe('none');
    expect(code(() => poseRotations('elbowBentLf', rest, { up: [0, 1, 0], forward: [0, 2, 0] }, 1))).toBe('BAD_REQUEST');
    expect(code(() => poseRotations('elbowBentLf', rest.subarray(3), GENERATOR_FRAME, 1))).toBe('BAD_ARRAY');
    const nan = Float64Array.from(rest); nan[5] = Number.NaN;
    expect(code(() => poseRotations('elbowBentLf', nan, GENERATOR_FRAME, 1))).toBe('BAD_NUMBER');
    const collapsed = Float64Array.from(rest); collapsed.set(head(rest, 'LeftArm'), idx('LeftForeArm') * 3);
    expect(code(() => poseRotations('elbowBentLf', collapsed, GENERATOR_FRAME, 1))).toBe('BAD_SKELETON');
    expect(code(() => posedCharacterStates(character, 'kneeBentMiddle' as PoseName))).toBe('BAD_REQUEST');
    expect(code(() => posedCharacterStates(character, 'kneeBentLf', 2))).toBe('BAD_REQUEST');
  });

  it('follows another frame: the same character turned to face +X bends its elbow towards +X', () => {
    // turn the skeleton 90° about up: (x, y, z) → (z, y, −x); forward +Z becomes +X
    const turned = new Float64Array(J * 3);
    for (let j = 0; j < J; j++) turned.set([rest[j * 3 + 2], rest[j * 3 + 1], -rest[j * 3]], j * 3);
    const frame = { up: [0, 1, 0] as Vec3, forward: [1, 0, 0] as Vec3 };
    const hand = (heads: Float64Array, f: typeof frame) => head(posedHeads(heads, poseTransforms(heads, PARENTS, poseRotations('elbowBentLf', heads, f, 1))), 'LeftHand');
    const a = hand(rest, GENERATOR_FRAME), b = hand(turned, frame);
    expect(b[0]).toBeCloseTo(a[2], 9);
    expect(b[1]).toBeCloseTo(a[1], 9);
    expect(b[2]).toBeCloseTo(-a[0], 9);
  });
});

describe('posedCharacterStates on a procedural character', () => {
  it('elbowBentLf moves the left forearm and hand a lot, the right side and the legs not at all', () => {
    const s = posedCharacterStates(character, 'elbowBentLf');
    const forearmHand = new Set([idx('LeftForeArm'), idx('LeftHand')]);
    const forearm = norm(sub(head(rest, 'LeftHand'), head(rest, 'LeftForeArm')));
    const driven = displacementsWhere(character, s, forearmHand, (w) => w >= 0.9);
    expect(driven.length).toBeGreaterThan(50);
    expect(mean(driven)).toBeGreaterThan(0.4 * forearm);
    const rightAndLegs = new Set(MIXAMO_JOINTS.map((n, j) => (n.startsWith('Right') || /UpLeg|Leg|Foot|Toe/.test(n) ? j : -1)).filter((j) => j >= 0));
    for (const variant of ['skinning', 'skinningCorrective', 'corrective'] as const) {
      const still = displacementsWhere(character, s, rightAndLegs, (w) => w >= 0.5, variant);
      expect(still.length).toBeGreaterThan(1000);
      expect(Math.max(...still), variant).toBeLessThan(1e-6);
    }
    // the hand vertices end up in front of where they were, not behind
    const handForward: number[] = [];
    character.parts.forEach((part, p) => {
      const w = weightOn(character, p, new Set([idx('LeftHand')]));
      w.forEach((x, v) => { if (x >= 0.9) handForward.push(s.parts[p].skinning[3 * v + 2] - part.positions[3 * v + 2]); });
    });
    expect(handForward.length).toBeGreaterThan(10);
    expect(Math.min(...handForward)).toBeGreaterThan(0);
    expect(mean(handForward)).toBeGreaterThan(0.3 * forearm);
  });

  it('kneeBentRt moves the right foot backward and up', () => {
    const s = posedCharacterStates(character, 'kneeBentRt');
    const d = sub(head(s.joints, 'RightFoot'), head(rest, 'RightFoot'));
    const shin = norm(sub(head(rest, 'RightFoot'), head(rest, 'RightLeg')));
    expect(d[2]).toBeLessThan(-0.6 * shin);
    expect(d[1]).toBeGreaterThan(0.6 * shin);
    expect(norm(sub(head(s.joints, 'LeftFoot'), head(rest, 'LeftFoot')))).toBe(0);
  });

  it('is the rest at strength 0, in every variant', () => {
    const s = posedCharacterStates(character, 'elbowBentLf+kneeBentRt', 0);
    character.parts.forEach((part, p) => {
      for (const variant of ['skinning', 'skinningCorrective', 'corrective'] as const) {
        expect(Math.max(...displacement(character, p, s.parts[p][variant])), `${part.name} ${variant}`).toBeLessThan(1e-6);
      }
    });
    expect(Array.from(s.joints)).toEqual(Array.from(character.joints));
  });

  it('turns half the angle at strength 0.5: the forearm direction turns 45°', () => {
    const forearmAt = (strength: number) => {
      const s = posedCharacterStates(character, 'elbowBentLf', strength);
      return sub(head(s.joints, 'LeftHand'), head(s.joints, 'LeftForeArm'));
    };
    const restForearm = sub(head(rest, 'LeftHand'), head(rest, 'LeftForeArm'));
    expect(degreesBetween(restForearm, forearmAt(0.5))).toBeGreaterThan(43);
    expect(degreesBetween(restForearm, forearmAt(0.5))).toBeLessThan(45.01);
    expect(degreesBetween(restForearm, forearmAt(1))).toBeGreaterThan(86);
    expect(degreesBetween(restForearm, forearmAt(1))).toBeLessThan(90.01);
  });

  it('every single pose moves the joints it turns (and their children), and nothing else', () => {
    for (const name of SINGLE_POSE_NAMES) {
      const s = posedCharacterStates(character, name);
      const moving = movingSet(expectedTurned(name));
      for (let j = 0; j < J; j++) {
        if (!moving.has(j)) expect(norm(sub(head(s.joints, MIXAMO_JOINTS[j]), head(rest, MIXAMO_JOINTS[j]))), `${name} ${MIXAMO_JOINTS[j]}`).toBe(0);
      }
      const still = displacementsWhere(character, s, moving, (w) => w === 0);
      expect(Math.max(...still), name).toBe(0);
      const driven = displacementsWhere(character, s, moving, (w) => w >= 0.9);
      expect(driven.length, name).toBeGreaterThan(20);
      expect(mean(driven), name).toBeGreaterThan(0.01);
    }
  });

  it('a combination moves each vertex by the sum of its components\' motions', () => {
    for (const combo of COMBO_POSE_NAMES) {
      const [a, b] = poseComponents(combo);
      const setA = movingSet(expectedTurned(a)), setB = movingSet(expectedTurned(b));
      if ([...setA].some((j) => setB.has(j))) continue; // one limb's two joints: checked through the rotations above
      const [sa, sb, sc] = [a, b, combo].map((n) => posedCharacterStates(character, n as PoseName));
      let worst = 0, moved = 0;
      character.parts.forEach((part, p) => {
        const r = part.positions;
        for (let i = 0; i < r.length; i++) {
          const expected = sa.parts[p].skinning[i] - r[i] + (sb.parts[p].skinning[i] - r[i]);
          worst = Math.max(worst, Math.abs(sc.parts[p].skinning[i] - r[i] - expected));
          moved = Math.max(moved, Math.abs(expected));
        }
      });
      expect(worst, combo).toBeLessThan(1e-5);
      expect(moved, combo).toBeGreaterThan(0.05);
    }
  });

  it('the corrective is small next to the skinning motion, nonzero at the bent joint, zero on rigid rows', () => {
    for (const name of ['elbowBentLf', 'kneeBentRt', 'hipFlexLf', 'elbowBentLf+kneeBentRt'] as const) {
      const s = posedCharacterStates(character, name);
      const all = new Set(MIXAMO_JOINTS.map((_, j) => j));
      const skin = displacementsWhere(character, s, all, () => true, 'skinning');
      const corr = displacementsWhere(character, s, all, () => true, 'corrective');
      const movedIdx = skin.map((d, i) => (d > 1e-4 ? i : -1)).filter((i) => i >= 0);
      const meanSkin = mean(movedIdx.map((i) => skin[i]));
      const meanCorr = mean(movedIdx.map((i) => corr[i]));
      expect(meanCorr, name).toBeLessThan(0.2 * meanSkin);
      expect(Math.max(...corr), name).toBeGreaterThan(0.003);
      // corrective = rest + (DQS − LBS), exactly as defined; a row with one joint has none
      let definitionError = 0, rigidCorrective = 0, rigidRows = 0;
      character.parts.forEach((part, p) => {
        const { weights } = character.weights[p];
        const r = part.positions, { corrective, skinning, skinningCorrective } = s.parts[p];
        const k = weights.length / (r.length / 3);
        for (let v = 0; v < r.length / 3; v++) {
          let single = false;
          for (let i = v * k; i < v * k + k; i++) if (weights[i] === 1) single = true;
          for (let i = 3 * v; i < 3 * v + 3; i++) {
            definitionError = Math.max(definitionError, Math.abs(corrective[i] - r[i] - (skinningCorrective[i] - skinning[i])));
            if (single) rigidCorrective = Math.max(rigidCorrective, Math.abs(corrective[i] - r[i]));
          }
          if (single) rigidRows++;
        }
      });
      expect(definitionError).toBeLessThan(1e-6);
      expect(rigidRows).toBeGreaterThan(100);
      expect(rigidCorrective, name).toBeLessThan(1e-5);
    }
  });

  it('does not change the character and keeps every part\'s name and size', () => {
    const before = character.parts.map((p) => Float32Array.from(p.positions));
    const s = posedCharacterStates(character, 'spineTwistLf+elbowBentRt', 1.5);
    character.parts.forEach((p, i) => {
      expect(p.positions).toEqual(before[i]);
      expect(s.parts[i].name).toBe(p.name);
      for (const variant of ['skinning', 'skinningCorrective', 'corrective'] as const) expect(s.parts[i][variant].length).toBe(p.positions.length);
    });
    expect(s.pose).toBe('spineTwistLf+elbowBentRt');
    expect(s.strength).toBe(1.5);
  });
});
