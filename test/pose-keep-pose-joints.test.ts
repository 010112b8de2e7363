/**
 * keepPoseJoints (sidecar/pose/keepPoseJoints.ts): the apply path turns only the joints its pose names, whatever the
 * decoder answers for the others.
 */
import { describe, expect, it } from 'vitest';
import { keepPoseJoints } from '../sidecar/pose/keepPoseJoints.js';
import { POSE_NAMES, poseJoints } from '../sidecar/pose/poseVocabulary.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';

const J = MIXAMO_JOINTS.length;
/** A decoder's answer with every joint turned a little, joint j by (j + 1) / 100 about each axis. */
const everyJointTurned = () => Float32Array.from({ length: J * 3 }, (_, i) => (Math.floor(i / 3) + 1) / 100 * (1 + (i % 3)));

describe('keepPoseJoints', () => {
  it('keeps the rotations of the pose\'s joints as they are and sets every other joint to rest', () => {
    const local = everyJointTurned();
    for (const [pose, joints] of [
      ['elbowBentLf', ['LeftForeArm']],
      ['elbowBentLf+kneeBentRt', ['LeftForeArm', 'RightLeg']],
      ['spineTwistRt', ['Spine', 'Spine1', 'Spine2']],
      ['headNodDown', ['Neck', 'Head']],
    ] as const) {
      const kept = keepPoseJoints(local, pose);
      MIXAMO_JOINTS.forEach((name, j) => {
        const row = Array.from(kept.subarray(3 * j, 3 * j + 3));
        if ((joints as readonly string[]).includes(name)) expect(row, `${pose}: ${name}`).toEqual(Array.from(local.subarray(3 * j, 3 * j + 3)));
        else expect(row, `${pose}: ${name}`).toEqual([0, 0, 0]);
      });
    }
  });

  it('keeps exactly poseJoints for every pose of the vocabulary, and leaves its input unchanged', () => {
    const local = everyJointTurned();
    const before = Array.from(local);
    for (const pose of POSE_NAMES) {
      const kept = keepPoseJoints(local, pose);
      const moving = MIXAMO_JOINTS.filter((_, j) => kept[3 * j] !== 0 || kept[3 * j + 1] !== 0 || kept[3 * j + 2] !== 0);
      expect(moving, pose).toEqual(poseJoints(pose));
    }
    expect(Array.from(local)).toEqual(before);
  });

  it('refuses rotations that are not 23 joints (BAD_ARRAY) and an unknown pose (BAD_REQUEST)', () => {
    expect(() => keepPoseJoints(new Float32Array(J * 3 - 3), 'elbowBentLf')).toThrow(expect.objectContaining({ code: 'BAD_ARRAY' }));
    expect(() => keepPoseJoints(everyJointTurned(), 'moonwalk')).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
  });
});
