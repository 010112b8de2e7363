/**
 * separateLimbs: an arm never shares a vertex with a leg or with the other arm; the vertex keeps the limb whose bones
 * pass nearest, rows still sum to one, and blends the artists use (the two thighs, a limb and the torso) stay.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCharacter } from '../sidecar/io/character.js';
import { rigCharacterAsync } from '../sidecar/pipeline.js';
import { latentPoseAutoRig } from '../sidecar/pose/applyLatentPose.js';
import { separateLimbs, skeletonLimbs, templateLimbs } from '../sidecar/skinning/separateLimbs.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';
import type { PartWeights, Skeleton, Vec3 } from '../sidecar/types.js';
import { jointIndex, jointWeightRows, weightOfJoint } from './fixtures/jointWeightRows.js';

const J = jointIndex;
const vertices = jointWeightRows;
const weightOf = weightOfJoint;

/**
 * Arms hanging at the sides: the left hand (wrist at x 0.3, y 0.9) hangs beside the left thigh (hip x 0.1, y 1,
 * knee y 0.5); the right side mirrored. Other joints on the spine.
 */
function hangingJoints(): Float32Array {
  const joints = new Float32Array(MIXAMO_JOINTS.length * 3);
  MIXAMO_JOINTS.forEach((_, j) => joints.set([0, 1 + j * 0.01, 0], 3 * j));
  for (const [side, sx] of [['Left', 1], ['Right', -1]] as const) {
    joints.set([0.3 * sx, 1.5, 0], 3 * J(`${side}Arm`));
    joints.set([0.3 * sx, 1.2, 0], 3 * J(`${side}ForeArm`));
    joints.set([0.3 * sx, 0.9, 0], 3 * J(`${side}Hand`));
    joints.set([0.1 * sx, 1, 0], 3 * J(`${side}UpLeg`));
    joints.set([0.1 * sx, 0.5, 0], 3 * J(`${side}Leg`));
    joints.set([0.1 * sx, 0.05, 0], 3 * J(`${side}Foot`));
    joints.set([0.1 * sx, 0, 0.15], 3 * J(`${side}ToeBase`));
  }
  return joints;
}

describe('separateLimbs', () => {
  it('gives a hand resting on the thigh back to the hand, the thigh beside it back to the leg, and keeps allowed blends', () => {
    const { positions, weights } = vertices([
      { at: [0.27, 0.85, 0], w: { LeftHand: 0.45, LeftUpLeg: 0.55 } }, // in the hand (0.03 off its bone, 0.17 off the thigh's)
      { at: [0.16, 0.8, 0], w: { LeftHand: 0.3, LeftUpLeg: 0.6, Hips: 0.1 } }, // on the thigh (0.06 off its bone, 0.14 off the hand's)
      { at: [0, 0.9, 0], w: { LeftUpLeg: 0.5, RightUpLeg: 0.5 } }, // the crotch: two legs may blend
      { at: [0.25, 1.5, 0], w: { LeftArm: 0.6, Spine2: 0.4 } }, // an arm and the torso may blend
      { at: [-0.2, 0.88, 0], w: { LeftHand: 0.5, RightHand: 0.4, Spine: 0.1 } }, // both hands: 0.1 off the right hand's bone
      { at: [-0.27, 0.85, 0], w: { RightHand: 0.5, RightLeg: 0.2, LeftHand: 0.3 } }, // right hand: the leg and the other hand go
    ]);
    const changed = separateLimbs(positions, weights, 4, templateLimbs(hangingJoints()));
    expect(changed).toBe(4);
    expect(weightOf(weights, 0, 'LeftHand')).toBeCloseTo(1, 6);
    expect(weightOf(weights, 0, 'LeftUpLeg')).toBe(0);
    expect(weightOf(weights, 1, 'LeftHand')).toBe(0);
    expect(weightOf(weights, 1, 'LeftUpLeg')).toBeCloseTo(0.6 / 0.7, 6);
    expect(weightOf(weights, 1, 'Hips')).toBeCloseTo(0.1 / 0.7, 6);
    expect(weightOf(weights, 2, 'LeftUpLeg')).toBeCloseTo(0.5, 6);
    expect(weightOf(weights, 2, 'RightUpLeg')).toBeCloseTo(0.5, 6);
    expect(weightOf(weights, 3, 'LeftArm')).toBeCloseTo(0.6, 6);
    expect(weightOf(weights, 4, 'LeftHand')).toBe(0);
    expect(weightOf(weights, 4, 'RightHand')).toBeCloseTo(0.8, 6);
    expect(weightOf(weights, 4, 'Spine')).toBeCloseTo(0.2, 6);
    expect(weightOf(weights, 5, 'RightHand')).toBeCloseTo(1, 6);
    for (let v = 0; v < 6; v++) expect(weights.weights.subarray(4 * v, 4 * v + 4).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
  });

  it('reads the limbs of a skeleton by its bones\' template names, head to tail', () => {
    const joints = hangingJoints();
    const skeleton: Skeleton = {
      joints: MIXAMO_JOINTS.map((name, j) => ({
        name: `mixamorig:${name}`, parent: -1, roll: 0,
        head: [joints[3 * j], joints[3 * j + 1], joints[3 * j + 2]] as Vec3,
        tail: [joints[3 * j], joints[3 * j + 1] - 0.3, joints[3 * j + 2]] as Vec3,
      })),
    };
    const limbs = skeletonLimbs(skeleton.joints, (b) => skeleton.joints[b].name.replace('mixamorig:', ''));
    expect(limbs.map((l) => l.kind)).toEqual(['arm', 'arm', 'leg', 'leg']);
    expect(limbs[0].bones).toEqual([J('LeftArm'), J('LeftForeArm'), J('LeftHand')]);
    // the hand's segment: its head and its tail
    const hand = limbs[0].segments[2];
    [...hand.head, ...hand.tail].forEach((x, i) => expect(x).toBeCloseTo([0.3, 0.9, 0, 0.3, 0.6, 0][i], 6));
    // a skeleton without template names has no limbs, and nothing is separated
    expect(skeletonLimbs(skeleton.joints, () => null)).toEqual([]);
  });
});

/** Vertices holding weight (> 0.02) on an arm and on a leg or the other arm, over all parts. */
function mixedLimbVertices(skeleton: Skeleton, objects: PartWeights[]): number {
  const limb = (b: number): string | null => {
    const name = skeleton.joints[b].name.replace('mixamorig:', '');
    const side = name.startsWith('Left') ? 'L' : name.startsWith('Right') ? 'R' : null;
    if (!side || name.endsWith('Shoulder')) return null;
    return side + (/Leg|Foot|Toe/.test(name) ? 'leg' : 'arm');
  };
  let mixed = 0;
  for (const { indices, weights, influences } of objects) {
    for (let v = 0; v < weights.length / influences; v++) {
      const held = new Set<string>();
      for (let q = 0; q < influences; q++) {
        const l = weights[v * influences + q] > 0.02 ? limb(indices[v * influences + q]) : null;
        if (l) held.add(l);
      }
      const arms = [...held].filter((l) => l.endsWith('arm')).length;
      if (arms > 1 || (arms === 1 && held.size > 1)) mixed++;
    }
  }
  return mixed;
}

describe('the auto-rigs keep arms and legs apart', () => {
  const file = resolve(import.meta.dirname, '../../shared/data/characters/bcn_epileptic.glb');

  it('bcn_epileptic, whose hands rest on its thighs: no vertex blends a hand with a thigh, and the hands are weighted', async () => {
    expect(existsSync(file), `dev character expected at ${file}`).toBe(true);
    const { parts } = await loadCharacter(file);
    for (const rig of [await latentPoseAutoRig(parts), await rigCharacterAsync(parts, {})]) {
      expect(mixedLimbVertices(rig.skeleton, rig.objects)).toBe(0);
      // both hands still hold weight (the rule moved weight between limbs, it did not drop the hands)
      for (const side of ['Left', 'Right']) {
        const h = rig.skeleton.joints.findIndex((j) => j.name === `mixamorig:${side}Hand`);
        let hand = 0;
        for (const { indices, weights } of rig.objects) for (let i = 0; i < weights.length; i++) if (indices[i] === h) hand += weights[i];
        expect(hand).toBeGreaterThan(20);
      }
    }
  }, 90_000);
});
