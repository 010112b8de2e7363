/**
 * limbJointBands: the blend between a forearm and its hand (and an upper arm and its forearm) stays in a band around
 * the joint between them; what it takes from one bone goes to the other, and every row still sums to one.
 */
import { describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { skinCharacterAsync } from '../sidecar/pipeline.js';
import { latentPoseAutoRig } from '../sidecar/pose/applyLatentPose.js';
import { LIMB_BAND_HALF_WIDTH, limbJointBands } from '../sidecar/skinning/limbJointBands.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';
import type { MeshPart, PartWeights, Skeleton } from '../sidecar/types.js';
import { jointIndex, jointWeightRows, weightOfJoint, type JointWeightRows } from './fixtures/jointWeightRows.js';

const J = jointIndex;

/** A left arm along +x (shoulder 0, elbow 1, wrist 2, all at height 1), the right one mirrored, the rest on the spine. */
function armJoints(): Float32Array {
  const joints = new Float32Array(MIXAMO_JOINTS.length * 3);
  MIXAMO_JOINTS.forEach((_, j) => joints.set([0, j * 0.01, 0], 3 * j));
  const set = (name: string, x: number): void => joints.set([x, 1, 0], 3 * J(name));
  set('LeftArm', 0.2); set('LeftForeArm', 1.2); set('LeftHand', 2.2);
  set('RightArm', -0.2); set('RightForeArm', -1.2); set('RightHand', -2.2);
  // a left leg down from height 0.5: knee at 0, ankle at -0.5, toes forward
  joints.set([0.1, 0.5, 0], 3 * J('LeftUpLeg')); joints.set([0.1, 0, 0], 3 * J('LeftLeg'));
  joints.set([0.1, -0.5, 0], 3 * J('LeftFoot')); joints.set([0.1, -0.55, 0.15], 3 * J('LeftToeBase'));
  return joints;
}

/** One vertex per row of `rows`, at x (height 1, 0.05 off the bone), its weights by joint name; k = 4. */
function vertices(rows: { x: number; w: Record<string, number> }[]): JointWeightRows {
  return jointWeightRows(rows.map(({ x, w }) => ({ at: [x, 1.05, 0], w })));
}

const weightOf = weightOfJoint;

describe('limbJointBands', () => {
  it('takes the hand off the forearm before the band, caps it in the band, and leaves a blend at the wrist alone', () => {
    // forearm from x 1.2 to the wrist at 2.2 (length 1); h = 0.15: the band starts at s = 0.7 (x 1.9)
    const { positions, weights } = vertices([
      { x: 1.7, w: { LeftHand: 0.6, LeftForeArm: 0.4 } }, // s 0.5: no hand
      { x: 2.15, w: { LeftHand: 0.9, LeftForeArm: 0.1 } }, // s 0.95: the hand at most (0.95 − 0.7) / 0.6
      { x: 2.18, w: { LeftHand: 0.3, LeftForeArm: 0.7 } }, // s 0.98: under the cap, unchanged
      { x: 1.5, w: { LeftHand: 0.7, Spine: 0.2, Head: 0.1 } }, // no forearm in the row: the hand's slot becomes it
      { x: 2.25, w: { LeftForeArm: 0.8, LeftHand: 0.2 } }, // 0.05 past the wrist: the forearm at most (0.3 − 0.05) / 0.6
      { x: 2.6, w: { LeftForeArm: 0.5, LeftHand: 0.5 } }, // 0.4 past the wrist: no forearm
      { x: -1.7, w: { RightHand: 0.6, RightForeArm: 0.4 } }, // the right arm alike
    ]);
    limbJointBands(positions, armJoints(), weights, 4, 0.15);
    expect(weightOf(weights, 0, 'LeftHand')).toBe(0);
    expect(weightOf(weights, 0, 'LeftForeArm')).toBeCloseTo(1, 6);
    expect(weightOf(weights, 1, 'LeftHand')).toBeCloseTo(0.25 / 0.6, 5);
    expect(weightOf(weights, 1, 'LeftForeArm')).toBeCloseTo(1 - 0.25 / 0.6, 5);
    expect(weightOf(weights, 2, 'LeftHand')).toBeCloseTo(0.3, 6);
    expect(weightOf(weights, 3, 'LeftHand')).toBe(0);
    expect(weightOf(weights, 3, 'LeftForeArm')).toBeCloseTo(0.7, 6);
    expect(weightOf(weights, 3, 'Spine')).toBeCloseTo(0.2, 6);
    expect(weightOf(weights, 4, 'LeftForeArm')).toBeCloseTo(0.25 / 0.6, 4);
    expect(weightOf(weights, 4, 'LeftHand')).toBeCloseTo(1 - 0.25 / 0.6, 4);
    expect(weightOf(weights, 5, 'LeftForeArm')).toBe(0);
    expect(weightOf(weights, 5, 'LeftHand')).toBeCloseTo(1, 6);
    expect(weightOf(weights, 6, 'RightHand')).toBe(0);
    for (let v = 0; v < 7; v++) expect(weights.weights.subarray(4 * v, 4 * v + 4).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
  });

  it('keeps the elbow\'s and the knee\'s blends to their bands too, and leaves weights off the limbs as they are', () => {
    const { positions, weights } = vertices([
      { x: 0.6, w: { LeftForeArm: 0.5, LeftArm: 0.5 } }, // upper arm at s 0.4: no forearm
      { x: 1.2, w: { LeftForeArm: 0.5, LeftArm: 0.5 } }, // at the elbow: a half each, unchanged
      { x: 0, w: { Spine2: 0.6, LeftShoulder: 0.4 } }, // no limb bone: unchanged
      { x: 0, w: { LeftLeg: 0.6, LeftUpLeg: 0.4 } }, // thigh at s 0.4 (placed below): no shin
    ]);
    positions.set([0, 0.5, 0], 6);
    positions.set([0.15, 0.3, 0], 9);
    limbJointBands(positions, armJoints(), weights, 4, 0.15);
    expect(weightOf(weights, 0, 'LeftForeArm')).toBe(0);
    expect(weightOf(weights, 0, 'LeftArm')).toBeCloseTo(1, 6);
    expect(weightOf(weights, 1, 'LeftForeArm')).toBeCloseTo(0.5, 6);
    expect(weightOf(weights, 2, 'Spine2')).toBeCloseTo(0.6, 6);
    expect(weightOf(weights, 2, 'LeftShoulder')).toBeCloseTo(0.4, 6);
    expect(weightOf(weights, 3, 'LeftLeg')).toBe(0);
    expect(weightOf(weights, 3, 'LeftUpLeg')).toBeCloseTo(1, 6);
  });
});

/**
 * The hand's weight on the upper part of each forearm (s < 1 − 2h along elbow → wrist, nearer the forearm than the
 * hand's direction past the wrist), summed, and how many such vertices there are.
 */
function handOnUpperForearms(parts: MeshPart[], skeleton: Skeleton, objects: PartWeights[]): { vertices: number; hand: number } {
  const at = (name: string) => skeleton.joints.findIndex((j) => j.name.replace('mixamorig:', '') === name);
  let vertices = 0, hand = 0;
  for (const side of ['Left', 'Right']) {
    const e = skeleton.joints[at(`${side}ForeArm`)].head, w = skeleton.joints[at(`${side}Hand`)].head, h = at(`${side}Hand`);
    const d = [w[0] - e[0], w[1] - e[1], w[2] - e[2]], lengthSq = d[0] ** 2 + d[1] ** 2 + d[2] ** 2;
    parts.forEach((part, k) => {
      const { indices, weights, influences } = objects[k];
      for (let v = 0; v < part.positions.length / 3; v++) {
        const r = [part.positions[3 * v] - e[0], part.positions[3 * v + 1] - e[1], part.positions[3 * v + 2] - e[2]];
        const s = (r[0] * d[0] + r[1] * d[1] + r[2] * d[2]) / lengthSq;
        const across = Math.hypot(r[0] - s * d[0], r[1] - s * d[1], r[2] - s * d[2]);
        // on the forearm's upper part and close to its bone (a forearm is thinner than a third of its length)
        if (s < 0.1 || s >= 1 - 2 * LIMB_BAND_HALF_WIDTH || across > Math.sqrt(lengthSq) / 3) continue;
        vertices++;
        for (let q = 0; q < influences; q++) if (indices[v * influences + q] === h) hand += weights[v * influences + q];
      }
    });
  }
  return { vertices, hand };
}

describe('the learned weights keep to the limb bands', () => {
  // procedural identity 9 100 003, whose learned weights (unbanded) give the hand 0.3–0.6 of the forearm from 60 % of
  // the way to the wrist on
  const character = generateProceduralHumanoid(9_100_003, { targetVertices: 20_000 });

  it('Apply Latent Pose\'s auto-rig and a learned re-skin of its skeleton give no hand weight on the upper forearms', async () => {
    const rig = await latentPoseAutoRig(character.parts);
    const posed = handOnUpperForearms(character.parts, rig.skeleton, rig.objects);
    expect(posed.vertices).toBeGreaterThan(100);
    expect(posed.hand).toBe(0);
    const skin = await skinCharacterAsync(character.parts, rig.skeleton, [], { method: 'learned' });
    const skinned = handOnUpperForearms(character.parts, skin.skeleton, skin.objects);
    expect(skinned.vertices).toBe(posed.vertices);
    expect(skinned.hand).toBe(0);
  }, 60_000);
});
