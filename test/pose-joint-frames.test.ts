/**
 * The joint frames of Apply Latent Pose's rig-structured decoder (sidecar/pose/jointFrames.ts): the contract that the
 * Python training shares (e1 along the bone, e2 forward made orthogonal, e3 = e1 × e2) and the turn of a local
 * rotation vector into a world rotation, checked on a hand-made T-pose whose answers are known.
 */
import { describe, expect, it } from 'vitest';
import { posedHeads, poseTransforms } from '../sidecar/deform/linearBlendSkinning.js';
import { jointFrames, localToWorldRotations } from '../sidecar/pose/jointFrames.js';
import { MIXAMO_JOINTS, MIXAMO_PARENT_INDICES, MIXAMO_TAIL_CHILD_INDICES, type MixamoJointName } from '../sidecar/skeleton/mixamoTemplate.js';

const J = MIXAMO_JOINTS.length;
const slot = (name: MixamoJointName) => MIXAMO_JOINTS.indexOf(name);

/** A T-pose in the canonical frame (x the character's left, y up, z forward), longest side about 1. */
function tPose(): Float64Array {
  const at: Record<MixamoJointName, [number, number, number]> = {
    Hips: [0, 0, 0], Spine: [0, 0.1, 0.005], Spine1: [0, 0.2, 0.01], Spine2: [0, 0.3, 0.01], Neck: [0, 0.4, 0], Head: [0, 0.45, 0.01],
    HeadTop_End: [0, 0.55, 0.01],
    LeftShoulder: [0.03, 0.38, 0], LeftArm: [0.1, 0.38, 0], LeftForeArm: [0.25, 0.38, 0], LeftHand: [0.38, 0.38, 0],
    RightShoulder: [-0.03, 0.38, 0], RightArm: [-0.1, 0.38, 0], RightForeArm: [-0.25, 0.38, 0], RightHand: [-0.38, 0.38, 0],
    LeftUpLeg: [0.06, -0.02, 0], LeftLeg: [0.06, -0.25, 0.01], LeftFoot: [0.06, -0.47, -0.01], LeftToeBase: [0.06, -0.5, 0.08],
    RightUpLeg: [-0.06, -0.02, 0], RightLeg: [-0.06, -0.25, 0.01], RightFoot: [-0.06, -0.47, -0.01], RightToeBase: [-0.06, -0.5, 0.08],
  };
  return Float64Array.from(MIXAMO_JOINTS.flatMap((name) => at[name]));
}

/** Column c (0 = e1, 1 = e2, 2 = e3) of joint j's frame. */
const column = (frames: Float64Array, j: number, c: number) => [frames[9 * j + c], frames[9 * j + 3 + c], frames[9 * j + 6 + c]];
const dot = (a: number[], b: number[]) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a: number[], b: number[]) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const head = (heads: Float64Array, j: number) => [heads[3 * j], heads[3 * j + 1], heads[3 * j + 2]];

/** got ≈ want; 7 digits by default: the local rotations are float32, as the decoder answers them. */
function expectVector(got: number[], want: number[], digits = 7): void {
  got.forEach((x, a) => expect(x, `axis ${a}: ${got} vs ${want}`).toBeCloseTo(want[a], digits));
}

describe('jointFrames', () => {
  it('takes each bone towards the contract\'s tail child: the first child in template order', () => {
    const tails = Object.fromEntries(MIXAMO_JOINTS.map((name, j) => [name, MIXAMO_TAIL_CHILD_INDICES[j] >= 0 ? MIXAMO_JOINTS[MIXAMO_TAIL_CHILD_INDICES[j]] : null]));
    expect(tails).toEqual({
      Hips: 'Spine', Spine: 'Spine1', Spine1: 'Spine2', Spine2: 'Neck', Neck: 'Head', Head: 'HeadTop_End', HeadTop_End: null,
      LeftShoulder: 'LeftArm', LeftArm: 'LeftForeArm', LeftForeArm: 'LeftHand', LeftHand: null,
      RightShoulder: 'RightArm', RightArm: 'RightForeArm', RightForeArm: 'RightHand', RightHand: null,
      LeftUpLeg: 'LeftLeg', LeftLeg: 'LeftFoot', LeftFoot: 'LeftToeBase', LeftToeBase: null,
      RightUpLeg: 'RightLeg', RightLeg: 'RightFoot', RightFoot: 'RightToeBase', RightToeBase: null,
    });
    expect(Array.from(MIXAMO_PARENT_INDICES).slice(0, 3)).toEqual([-1, 0, 1]);
  });

  it('gives orthonormal right-handed frames whose e1 points along the bone', () => {
    const heads = tPose();
    const frames = jointFrames(heads);
    for (let j = 0; j < J; j++) {
      const [e1, e2, e3] = [0, 1, 2].map((c) => column(frames, j, c));
      for (const e of [e1, e2, e3]) expect(dot(e, e)).toBeCloseTo(1, 12);
      expect(dot(e1, e2)).toBeCloseTo(0, 12);
      expect(dot(e1, e3)).toBeCloseTo(0, 12);
      expect(dot(e2, e3)).toBeCloseTo(0, 12);
      expect(dot(cross(e1, e2), e3), MIXAMO_JOINTS[j]).toBeCloseTo(1, 12);
      const tail = MIXAMO_TAIL_CHILD_INDICES[j];
      if (tail < 0) continue;
      const bone = head(heads, tail).map((x, a) => x - head(heads, j)[a]);
      expectVector(e1, bone.map((x) => x / Math.hypot(...bone)), 12);
    }
    // leaves continue their parent's bone: the hand its forearm, the toe its foot
    for (const [leaf, parent] of [['LeftHand', 'LeftForeArm'], ['RightToeBase', 'RightFoot'], ['HeadTop_End', 'Head']] as const) {
      expectVector(column(frames, slot(leaf), 0), column(frames, slot(parent), 0), 12);
    }
  });

  it('follows the contract on known bones: e2 forward, or up for a bone that points forward', () => {
    const heads = tPose();
    const frames = jointFrames(heads);
    // the left forearm lies along +x: e2 = forward, e3 = x × z = −y
    const forearm = slot('LeftForeArm');
    expectVector(column(frames, forearm, 0), [1, 0, 0]);
    expectVector(column(frames, forearm, 1), [0, 0, 1]);
    expectVector(column(frames, forearm, 2), [0, -1, 0]);
    // a toe bone straight forward: forward's orthogonal part vanishes, e2 is up
    const toes = Float64Array.from(heads);
    toes.set([0.06, -0.5, -0.01], 3 * slot('LeftFoot'));
    const toeFrames = jointFrames(toes);
    expectVector(column(toeFrames, slot('LeftFoot'), 0), [0, 0, 1]);
    expectVector(column(toeFrames, slot('LeftFoot'), 1), [0, 1, 0]);
    // the threshold is on |g| = sin(angle to forward): a foot 10° from forward (sin 10° < 0.2) takes up, 20° keeps forward
    const turnedFoot = (degrees: number) => {
      const turnedHeads = Float64Array.from(heads);
      const b = (degrees * Math.PI) / 180;
      turnedHeads.set(head(heads, slot('LeftFoot')).map((x, a) => x + 0.1 * [Math.sin(b), 0, Math.cos(b)][a]), 3 * slot('LeftToeBase'));
      return column(jointFrames(turnedHeads), slot('LeftFoot'), 1);
    };
    expectVector(turnedFoot(10), [0, 1, 0]);
    const b20 = (20 * Math.PI) / 180;
    expectVector(turnedFoot(20), [-Math.cos(b20), 0, Math.sin(b20)]);
  });

  it('takes the parent\'s direction when a tail child coincides with its joint', () => {
    const heads = tPose();
    const shrunk = Float64Array.from(heads);
    shrunk.set(head(heads, slot('LeftForeArm')).map((x, a) => x + [5e-7, 0, 0][a]), 3 * slot('LeftHand'));
    const frames = jointFrames(shrunk);
    const arm = column(frames, slot('LeftArm'), 0);
    expectVector(column(frames, slot('LeftForeArm'), 0), arm, 12);
    expectVector(column(frames, slot('LeftHand'), 0), arm, 12);
    expect(() => jointFrames(new Float64Array(3 * J - 3))).toThrow(expect.objectContaining({ code: 'BAD_ARRAY' }));
  });
});

describe('localToWorldRotations', () => {
  const heads = tPose();
  const frames = jointFrames(heads);
  const parents = MIXAMO_PARENT_INDICES;
  /** Each joint's head after turning joint `name` by `local` (radians, its frame) at `strength`. */
  const turned = (name: MixamoJointName, local: [number, number, number], strength = 1) => {
    const rotations = new Float32Array(J * 3);
    rotations.set(local, 3 * slot(name));
    return posedHeads(heads, poseTransforms(heads, parents, localToWorldRotations(frames, rotations, strength)));
  };

  it('bends a T-pose forearm where its frame says: about e2 (forward) up, about e3 (down) forward', () => {
    const elbow = head(heads, slot('LeftForeArm'));
    const length = 0.13;
    const up = turned('LeftForeArm', [0, Math.PI / 2, 0]);
    expectVector(head(up, slot('LeftHand')), [elbow[0], elbow[1] + length, elbow[2]]);
    const forward = turned('LeftForeArm', [0, 0, Math.PI / 2]);
    expectVector(head(forward, slot('LeftHand')), [elbow[0], elbow[1], elbow[2] + length]);
    // a turn about e1 spins the forearm on itself: the hand's head stays
    expectVector(head(turned('LeftForeArm', [1, 0, 0]), slot('LeftHand')), head(heads, slot('LeftHand')));
    // nothing else moves: the upper arm, the right arm, the legs
    for (const still of ['LeftForeArm', 'LeftArm', 'RightHand', 'RightForeArm', 'LeftFoot', 'Head'] as const) {
      expectVector(head(forward, slot(still)), head(heads, slot(still)));
    }
  });

  it('scales every angle by the strength: the identity at 0, half the angle at 0.5', () => {
    const local = Float32Array.from({ length: J * 3 }, (_, i) => 0.3 * Math.sin(i + 1));
    const zero = localToWorldRotations(frames, local, 0);
    for (let j = 0; j < J; j++) expect(Array.from(zero.subarray(9 * j, 9 * j + 9))).toEqual([1, 0, 0, 0, 1, 0, 0, 0, 1]);
    const angleOf = (r: Float64Array, j: number) => Math.acos(Math.min(1, (r[9 * j] + r[9 * j + 4] + r[9 * j + 8] - 1) / 2));
    const full = localToWorldRotations(frames, local, 1);
    const half = localToWorldRotations(frames, local, 0.5);
    for (let j = 0; j < J; j++) {
      const want = Math.hypot(local[3 * j], local[3 * j + 1], local[3 * j + 2]);
      expect(angleOf(full, j)).toBeCloseTo(want, 6);
      expect(angleOf(half, j)).toBeCloseTo(want / 2, 6);
    }
    // a half-strength 90° elbow: the hand on the 45° chord
    const elbow = head(heads, slot('LeftForeArm'));
    const hand = head(turned('LeftForeArm', [0, 0, Math.PI / 2], 0.5), slot('LeftHand'));
    expectVector(hand, [elbow[0] + 0.13 * Math.SQRT1_2, elbow[1], elbow[2] + 0.13 * Math.SQRT1_2]);
    expect(() => localToWorldRotations(frames, new Float32Array(3), 1)).toThrow(expect.objectContaining({ code: 'BAD_ARRAY' }));
  });
});
