/**
 * Apply Latent Pose's auto-rig places the hybrid skeleton's joints at the refinement network's depth
 * (skeleton/refinedSkeleton withRefinedDepth, pipeline SkinStage.refinedDepth): the front view fixes a joint's x and
 * y, while the midpoint of a ray's first and last hit is pulled off the body's middle by what hangs behind it.
 */
import { describe, expect, it } from 'vitest';
import { ownRig, proceduralIdentity } from '../sidecar/eval/poses/testIdentities.js';
import { latentPoseAutoRig } from '../sidecar/pose/applyLatentPose.js';
import { rigCharacterAsync } from '../sidecar/pipeline.js';
import { withRefinedDepth } from '../sidecar/skeleton/refinedSkeleton.js';
import type { Skeleton, Vec3 } from '../sidecar/types.js';

describe('withRefinedDepth', () => {
  it('keeps the coarse joints\' x and y and takes the refined z, leaving its inputs alone', () => {
    const coarse = Float32Array.from([0.1, 0.9, -0.05, -0.1, 0.5, -0.02]);
    const refined = Float32Array.from([0.3, 0.7, 0.01, -0.4, 0.6, 0.03]);
    const out = withRefinedDepth(coarse, refined);
    expect(Array.from(out)).toEqual(Array.from(Float32Array.from([0.1, 0.9, 0.01, -0.1, 0.5, 0.03])));
    expect(coarse[2]).toBeCloseTo(-0.05, 6);
    expect(() => withRefinedDepth(coarse, refined.subarray(3))).toThrow(/6 and 3/);
  });
});

describe('Apply Latent Pose\'s auto-rig on a caped humanoid', () => {
  // procedural 9 300 004 (neither point_rig's training nor a test identity): a cape fused to its back puts the last
  // hit of every ray through the trunk behind the body
  const identity = proceduralIdentity(9_300_004);
  const TRUNK = ['Hips', 'Spine', 'Spine1', 'Spine2', 'LeftUpLeg', 'RightUpLeg', 'LeftLeg', 'RightLeg'];
  const head = (s: Skeleton, name: string): Vec3 => s.joints.find((j) => j.name.replace('mixamorig:', '') === name)!.head;

  it('puts the trunk and leg joints at the generator\'s depth, where the rig request\'s sit behind it; x and y as the rig request\'s', async () => {
    const parts = identity.character.parts;
    const apply = await latentPoseAutoRig(parts);
    const requested = await rigCharacterAsync(parts);
    const truth = ownRig(identity.character).skeleton;
    const { forward, up } = requested.frame;
    const dot = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    const height = Math.max(...parts[0].positions.filter((_, i) => i % 3 === 1)) - Math.min(...parts[0].positions.filter((_, i) => i % 3 === 1));
    let applyError = 0, requestError = 0, behind = 0;
    for (const name of TRUNK) {
      const t = head(truth, name), a = head(apply.skeleton, name), r = head(requested.skeleton, name);
      applyError += Math.abs(dot(a, forward) - dot(t, forward)) / TRUNK.length;
      requestError += Math.abs(dot(r, forward) - dot(t, forward)) / TRUNK.length;
      if (dot(r, forward) < dot(t, forward)) behind++;
      expect(dot(a, up)).toBeCloseTo(dot(r, up), 5);
    }
    expect(behind).toBe(TRUNK.length);
    expect(requestError / height).toBeGreaterThan(0.01);
    expect(applyError).toBeLessThan(0.25 * requestError);
  }, 60_000);
});
