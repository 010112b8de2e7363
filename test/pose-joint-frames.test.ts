/**
 * The joint frames of Apply Latent Pose's rig-structured decoder (sidecar/pose/jointFrames.ts): the contract that the
 * Python training shares (e1 along the bone, e2 forward made orthogonal, e3 = e1 × e2) and the turn of a local
 * rotation vector into a world rotation, checked on a hand-made T-pose whose answers are known.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rotationVector } from '../sidecar/correctives/poseFeatures.js';
import { posedHeads, poseTransforms } from '../sidecar/deform/linearBlendSkinning.js';
import { FRAME_BONES, jointFrames, localToWorldRotations } from '../sidecar/pose/jointFrames.js';
import { GENERATOR_FRAME, POSE_NAMES, poseJoints, poseRotations } from '../sidecar/pose/poseVocabulary.js';
import { MIXAMO_JOINTS, MIXAMO_PARENT_INDICES, MIXAMO_TAIL_CHILD_INDICES, type MixamoJointName } from '../sidecar/skeleton/mixamoTemplate.js';

const J = MIXAMO_JOINTS.length;
const ROOT = resolve(import.meta.dirname, '..');
const ON_CI = process.env.CI === 'true';
const PYTHON = '/usr/bin/python3';
const torchReady = spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;
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

/** tPose with what an auto-rig gives: elbows off the arm's line, a knee forward, a curved spine, a tilted head. */
function bentPose(): Float64Array {
  const heads = tPose();
  const set = (name: MixamoJointName, at: [number, number, number]) => heads.set(at, 3 * slot(name));
  set('LeftForeArm', [0.25, 0.36, -0.023]);
  set('RightForeArm', [-0.24, 0.39, 0.015]);
  set('LeftLeg', [0.07, -0.25, 0.03]);
  set('RightLeg', [-0.05, -0.24, 0.02]);
  set('Spine1', [0, 0.2, 0.03]);
  set('Head', [0.005, 0.45, 0.03]);
  set('HeadTop_End', [0.01, 0.55, 0.02]);
  return heads;
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

  it('gives orthonormal right-handed frames whose e1 points along the frame bone', () => {
    const heads = tPose();
    const frames = jointFrames(heads);
    for (let j = 0; j < J; j++) {
      const [e1, e2, e3] = [0, 1, 2].map((c) => column(frames, j, c));
      for (const e of [e1, e2, e3]) expect(dot(e, e)).toBeCloseTo(1, 12);
      expect(dot(e1, e2)).toBeCloseTo(0, 12);
      expect(dot(e1, e3)).toBeCloseTo(0, 12);
      expect(dot(e2, e3)).toBeCloseTo(0, 12);
      expect(dot(cross(e1, e2), e3), MIXAMO_JOINTS[j]).toBeCloseTo(1, 12);
      const listed = FRAME_BONES[MIXAMO_JOINTS[j]];
      const [from, to] = listed ? listed.map(slot) : [j, MIXAMO_TAIL_CHILD_INDICES[j]];
      if (to < 0) continue;
      const bone = head(heads, to).map((x, a) => x - head(heads, from)[a]);
      expectVector(e1, bone.map((x) => x / Math.hypot(...bone)), 12);
    }
    // leaves continue their parent's bone: the toe its foot, the head's end the head
    for (const [leaf, parent] of [['RightToeBase', 'RightFoot'], ['HeadTop_End', 'Head']] as const) {
      expectVector(column(frames, slot(leaf), 0), column(frames, slot(parent), 0), 12);
    }
  });

  it('reads the elbow and knee from the upper limb, the spine and neck from their chains, the hand from the forearm', () => {
    // a bent rest skeleton: elbow off the line of shoulder and wrist, knee forward, a curved spine and a tilted head
    const heads = bentPose();
    const frames = jointFrames(heads);
    const unit = (from: MixamoJointName, to: MixamoJointName) => {
      const v = head(heads, slot(to)).map((x, a) => x - head(heads, slot(from))[a]);
      return v.map((x) => x / Math.hypot(...v));
    };
    expectVector(column(frames, slot('LeftForeArm'), 0), unit('LeftArm', 'LeftForeArm'), 12);
    expectVector(column(frames, slot('LeftHand'), 0), unit('LeftForeArm', 'LeftHand'), 12);
    expectVector(column(frames, slot('RightLeg'), 0), unit('RightUpLeg', 'RightLeg'), 12);
    for (const j of ['Spine', 'Spine1', 'Spine2'] as const) expectVector(column(frames, slot(j), 0), unit('Spine', 'Neck'), 12);
    for (const j of ['Neck', 'Head'] as const) expectVector(column(frames, slot(j), 0), unit('Neck', 'HeadTop_End'), 12);
    // the others keep their own bone
    expectVector(column(frames, slot('LeftFoot'), 0), unit('LeftFoot', 'LeftToeBase'), 12);
    expectVector(column(frames, slot('LeftShoulder'), 0), unit('LeftShoulder', 'LeftArm'), 12);
    // the upper arms are forward first: e2 is forward, e1 the upper arm made square to it (this one leans back 8.6°)
    for (const side of ['Left', 'Right'] as const) {
      const arm = unit(`${side}Arm`, `${side}ForeArm`);
      const flat = [arm[0], arm[1], 0].map((x) => x / Math.hypot(arm[0], arm[1]));
      expectVector(column(frames, slot(`${side}Arm`), 0), flat, 12);
      expectVector(column(frames, slot(`${side}Arm`), 1), [0, 0, 1], 12);
    }
    expect(Math.abs(unit('LeftArm', 'LeftForeArm')[2])).toBeGreaterThan(0.1);
  });

  it('makes a pose one local rotation on every skeleton: a T-pose and a bent one turn their joints by the same numbers', () => {
    // the decoder answers local rotations and learned them on the training identities' true rigs; at apply time the
    // frames are the auto-rig's, whose elbows, knees and spines are never quite straight
    const localOf = (heads: Float64Array, pose: string) => {
      const frames = jointFrames(heads);
      const world = poseRotations(pose, heads, GENERATOR_FRAME, 1);
      return poseJoints(pose).map((name) => {
        const j = slot(name);
        const w = rotationVector(world, 9 * j);
        return [0, 1, 2].map((c) => frames[9 * j + c] * w[0] + frames[9 * j + 3 + c] * w[1] + frames[9 * j + 6 + c] * w[2]);
      });
    };
    for (const pose of POSE_NAMES) {
      const straight = localOf(tPose(), pose);
      const bent = localOf(bentPose(), pose);
      straight.forEach((v, k) => expectVector(bent[k], v, 9));
    }
    // the same poses in the frames of each joint's own bone differ on the bent skeleton: the elbow by a twist
    const ownBone = (heads: Float64Array, from: MixamoJointName, to: MixamoJointName, w: number[]) => {
      const e1 = head(heads, slot(to)).map((x, a) => x - head(heads, slot(from))[a]);
      const n = Math.hypot(...e1);
      return dot(w, e1) / n;
    };
    const bent = bentPose();
    const elbowWorld = rotationVector(poseRotations('elbowBentLf', bent, GENERATOR_FRAME, 1), 9 * slot('LeftForeArm'));
    expect(Math.abs(ownBone(bent, 'LeftForeArm', 'LeftHand', elbowWorld))).toBeGreaterThan(0.05);
    expect(Math.abs(ownBone(bent, 'LeftArm', 'LeftForeArm', elbowWorld))).toBeLessThan(1e-9);
  });

  it('follows the contract on known bones: e2 forward, or up for a bone that points forward', () => {
    const heads = tPose();
    const frames = jointFrames(heads);
    // the left forearm lies along +x: e2 = forward, e3 = x × z = −y
    const forearm = slot('LeftForeArm');
    expectVector(column(frames, forearm, 0), [1, 0, 0]);
    expectVector(column(frames, forearm, 1), [0, 0, 1]);
    expectVector(column(frames, forearm, 2), [0, -1, 0]);
    // an upper arm held straight forward keeps its own bone as e1 and takes up as e2, forward first or not
    const armsForward = Float64Array.from(heads);
    armsForward.set([0.1, 0.38, 0.15], 3 * slot('LeftForeArm'));
    expectVector(column(jointFrames(armsForward), slot('LeftArm'), 0), [0, 0, 1]);
    expectVector(column(jointFrames(armsForward), slot('LeftArm'), 1), [0, 1, 0]);
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

  it('takes the parent\'s direction when a frame bone\'s ends coincide', () => {
    const heads = tPose();
    const shrunk = Float64Array.from(heads);
    shrunk.set(head(heads, slot('LeftForeArm')).map((x, a) => x + [5e-7, 0, 0][a]), 3 * slot('LeftHand'));
    const frames = jointFrames(shrunk);
    // the hand's frame bone (ForeArm → Hand) has no length: it takes the forearm's, the upper arm
    expectVector(column(frames, slot('LeftHand'), 0), column(frames, slot('LeftForeArm'), 0), 12);
    expectVector(column(frames, slot('LeftHand'), 0), column(frames, slot('LeftArm'), 0), 12);
    // an upper arm of no length: the arm and the forearm (whose frame bone it is) take the shoulder's direction
    const noUpperArm = Float64Array.from(heads);
    noUpperArm.set(head(heads, slot('LeftArm')).map((x, a) => x + [5e-7, 0, 0][a]), 3 * slot('LeftForeArm'));
    const f = jointFrames(noUpperArm);
    const shoulder = column(f, slot('LeftShoulder'), 0);
    expectVector(column(f, slot('LeftArm'), 0), shoulder, 12);
    expectVector(column(f, slot('LeftForeArm'), 0), shoulder, 12);
    expect(() => jointFrames(new Float64Array(3 * J - 3))).toThrow(expect.objectContaining({ code: 'BAD_ARRAY' }));
  });
});

describe('jointFrames against the training\'s joint_frames (models/training/latent_pose/rig.py)', () => {
  // the decoder's rotations mean something only in the frames it was trained in: both sides must build the same ones
  it.skipIf(!torchReady && !ON_CI)('gives the same frames as PyTorch on a T-pose, a bent skeleton and an arbitrary one', () => {
    expect(torchReady, `${PYTHON} cannot import torch (apt-get install python3-torch)`).toBe(true);
    const skeletons = [tPose(), bentPose(), Float64Array.from({ length: 3 * J }, (_, i) => 0.3 * Math.sin(1.7 * i))];
    const script = [
      'import json, sys, torch',
      "sys.path.insert(0, 'models/training')",
      'from latent_pose.rig import joint_frames',
      'heads = torch.tensor(json.loads(sys.stdin.read()), dtype=torch.float64).reshape(-1, 23, 3)',
      'print(json.dumps(joint_frames(heads).reshape(heads.shape[0], -1).tolist()))',
    ].join('\n');
    const run = spawnSync(PYTHON, ['-c', script], { cwd: ROOT, input: JSON.stringify(skeletons.map((h) => Array.from(h))), encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const python = JSON.parse(run.stdout) as number[][];
    skeletons.forEach((heads, b) => {
      const ours = jointFrames(heads);
      // rig.py's (J, 3, 3) with columns e1 e2 e3 flattens row-major exactly as jointFrames' E_j[3r + c]
      ours.forEach((x, i) => expect(Math.abs(x - python[b][i]), `skeleton ${b}, entry ${i}`).toBeLessThan(1e-12));
    });
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
