/**
 * The fixed half of Apply Latent Pose v2 without any model: the demo character's auto-rig in template form
 * (sidecar/pose/templateRig.ts) and a hand-made set of local rotations skinned through it (sidecar/pose/posedByRig.ts),
 * in each variant's blend.
 */
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { posedHeads, poseTransforms } from '../sidecar/deform/linearBlendSkinning.js';
import { loadCharacter } from '../sidecar/io/character.js';
import { findCanonicalFrame, pointToCanonical, toCanonical, type CanonicalFrame } from '../sidecar/mesh/canonicalFrame.js';
import { bodyTriangles } from '../sidecar/mesh/debris.js';
import { mergeParts, type MergedMesh } from '../sidecar/mesh/mergeParts.js';
import { rigCharacter } from '../sidecar/pipeline.js';
import { jointFrames, localToWorldRotations } from '../sidecar/pose/jointFrames.js';
import { posedByRig } from '../sidecar/pose/posedByRig.js';
import { templateRig, type TemplateRig } from '../sidecar/pose/templateRig.js';
import { MIXAMO_JOINTS, MIXAMO_PARENT_INDICES, templateIndexOf, type MixamoJointName } from '../sidecar/skeleton/mixamoTemplate.js';
import type { RigResult } from '../sidecar/types.js';

const ROOT = resolve(import.meta.dirname, '..');
const DEMO = resolve(ROOT, 'assets/demo/demo_character.obj');
const J = MIXAMO_JOINTS.length;
const slot = (name: MixamoJointName) => MIXAMO_JOINTS.indexOf(name);

let rig: RigResult;
let mesh: MergedMesh;
let cf: CanonicalFrame;
let rest: Float32Array;
let template: TemplateRig;

beforeAll(async () => {
  const character = await loadCharacter(DEMO);
  rig = rigCharacter(character.parts);
  mesh = mergeParts(character.parts);
  cf = findCanonicalFrame(mesh.positions, bodyTriangles(mesh.positions, mesh.triangles));
  rest = toCanonical(mesh.positions, cf);
  template = templateRig(rig, cf, mesh.partOffsets);
}, 60_000);

/** Per vertex: its displacement length between two #V*3 arrays. */
function motion(a: Float32Array, b: Float32Array): Float64Array {
  return Float64Array.from({ length: a.length / 3 }, (_, v) => Math.hypot(b[3 * v] - a[3 * v], b[3 * v + 1] - a[3 * v + 1], b[3 * v + 2] - a[3 * v + 2]));
}

/** The template slot of vertex v's largest weight. */
function dominantJoint(weights: TemplateRig['weights'], v: number): number {
  const k = weights.influences;
  let best = v * k;
  for (let i = v * k + 1; i < v * k + k; i++) if (weights.weights[i] > weights.weights[best]) best = i;
  return weights.indices[best];
}

/** The template slots vertex v is weighted to (weight > 0). */
function jointsOf(weights: TemplateRig['weights'], v: number): number[] {
  const k = weights.influences;
  return Array.from({ length: k }, (_, s) => v * k + s).filter((i) => weights.weights[i] > 0).map((i) => weights.indices[i]);
}

describe('templateRig', () => {
  it('takes the rig\'s joints to template slots in the canonical frame, and its weights merged in part order', () => {
    expect(rig.skeleton.joints[0].name).toBe('mixamorig:Hips');
    rig.skeleton.joints.forEach((joint) => {
      const t = templateIndexOf(joint.name);
      expect(t, joint.name).toBeGreaterThanOrEqual(0);
      const want = pointToCanonical(joint.head, cf);
      for (let a = 0; a < 3; a++) expect(template.heads[3 * t + a]).toBeCloseTo(want[a], 6);
    });
    expect(template.heads[3 * slot('LeftHand')]).toBeGreaterThan(0.2); // the character's left is +x
    const k = template.weights.influences;
    expect(template.weights.weights.length).toBe((rest.length / 3) * k);
    rig.objects.forEach((part, p) => {
      const v = mesh.partOffsets[p] + Math.floor((mesh.partOffsets[p + 1] - mesh.partOffsets[p]) / 2);
      const local = v - mesh.partOffsets[p];
      const own = Array.from({ length: part.influences }, (_, s) => local * part.influences + s).filter((i) => part.weights[i] > 0);
      expect(jointsOf(template.weights, v).sort()).toEqual(own.map((i) => templateIndexOf(rig.skeleton.joints[part.indices[i]].name)).sort());
    });
    for (let v = 0; v < rest.length / 3; v++) {
      let sum = 0;
      for (let s = 0; s < k; s++) sum += template.weights.weights[v * k + s];
      expect(sum).toBeCloseTo(1, 5);
    }
  });

  it('refuses a rig without a template joint (BAD_SKELETON) and weights that do not fit the parts (BAD_ARRAY)', () => {
    const renamed = { ...rig, skeleton: { joints: rig.skeleton.joints.map((j) => (j.name === 'mixamorig:LeftHand' ? { ...j, name: 'mixamorig:LeftPaw' } : j)) } };
    expect(() => templateRig(renamed, cf, mesh.partOffsets)).toThrow(expect.objectContaining({ code: 'BAD_SKELETON' }));
    expect(() => templateRig({ ...rig, objects: rig.objects.slice(1) }, cf, mesh.partOffsets)).toThrow(expect.objectContaining({ code: 'BAD_ARRAY' }));
  });

  it('gives a weight on a joint outside the template to its nearest template ancestor', () => {
    // a twist bone under LeftForeArm that takes the first part's first vertex entirely
    const joints = [...rig.skeleton.joints, { ...rig.skeleton.joints[slot('LeftForeArm')], name: 'LeftForeArmTwist', parent: slot('LeftForeArm') }];
    const objects = rig.objects.map((part, p) => {
      if (p !== 0) return part;
      const indices = Uint16Array.from(part.indices);
      const weights = Float32Array.from(part.weights);
      indices.fill(0, 0, part.influences);
      weights.fill(0, 0, part.influences);
      indices[0] = joints.length - 1;
      weights[0] = 1;
      return { ...part, indices, weights };
    });
    const twisted = templateRig({ skeleton: { joints }, objects }, cf, mesh.partOffsets);
    expect(jointsOf(twisted.weights, 0)).toEqual([slot('LeftForeArm')]);
  });
});

describe('posedByRig', () => {
  /** A 90° bend of the left elbow: the forearm turns about its e3, which takes it towards e2 (forward). */
  const elbowBend = () => {
    const local = new Float32Array(J * 3);
    local[3 * slot('LeftForeArm') + 2] = Math.PI / 2;
    return local;
  };

  it('bends the left elbow 90°: the forearm chain turns rigidly about the elbow, the right side stays', () => {
    const elbow = slot('LeftForeArm'), wrist = slot('LeftHand');
    const heads = template.heads;
    const forearm = Math.hypot(heads[3 * wrist] - heads[3 * elbow], heads[3 * wrist + 1] - heads[3 * elbow + 1], heads[3 * wrist + 2] - heads[3 * elbow + 2]);
    const frames = jointFrames(heads);
    const rotations = localToWorldRotations(frames, elbowBend(), 1);
    const wristPosed = posedHeads(heads, poseTransforms(heads, MIXAMO_PARENT_INDICES, rotations));
    // the hinge is e3 of the forearm's frame, square to the upper arm (jointFrames FRAME_BONES): the wrist goes along
    // the 90° chord of its circle about it, whose radius is the forearm's part square to the hinge, forward (+z)
    const hinge = [frames[9 * elbow + 2], frames[9 * elbow + 5], frames[9 * elbow + 8]];
    const bone = [0, 1, 2].map((a) => heads[3 * wrist + a] - heads[3 * elbow + a]);
    const along = bone[0] * hinge[0] + bone[1] * hinge[1] + bone[2] * hinge[2];
    const radius = Math.hypot(...bone.map((x, a) => x - along * hinge[a]));
    expect(radius).toBeGreaterThan(0.9 * forearm);
    expect(Math.hypot(wristPosed[3 * wrist] - heads[3 * wrist], wristPosed[3 * wrist + 1] - heads[3 * wrist + 1], wristPosed[3 * wrist + 2] - heads[3 * wrist + 2]))
      .toBeCloseTo(Math.SQRT2 * radius, 6);
    expect(wristPosed[3 * wrist + 2] - heads[3 * wrist + 2]).toBeGreaterThan(0.9 * forearm);
    for (const variant of ['skinning', 'skinningCorrective'] as const) {
      const posed = posedByRig(rest, template.weights, heads, elbowBend(), 1, variant);
      const moved = motion(rest, posed);
      const hand = Array.from(moved).filter((_, v) => dominantJoint(template.weights, v) === wrist);
      expect(hand.length).toBeGreaterThan(50);
      const mean = hand.reduce((a, b) => a + b, 0) / hand.length;
      // hand vertices lie a forearm or more from the elbow: each moves by √2 × its distance from the bend axis
      expect(mean, variant).toBeGreaterThan(forearm);
      expect(mean, variant).toBeLessThan(Math.SQRT2 * 2.5 * forearm);
      // the whole chain below the elbow (forearm and hand only) is rigid: distances to the elbow's head are kept
      let rigid = 0;
      for (let v = 0; v < moved.length; v++) {
        if (!jointsOf(template.weights, v).every((j) => j === elbow || j === wrist)) continue;
        rigid++;
        const before = Math.hypot(rest[3 * v] - heads[3 * elbow], rest[3 * v + 1] - heads[3 * elbow + 1], rest[3 * v + 2] - heads[3 * elbow + 2]);
        const after = Math.hypot(posed[3 * v] - heads[3 * elbow], posed[3 * v + 1] - heads[3 * elbow + 1], posed[3 * v + 2] - heads[3 * elbow + 2]);
        expect(after).toBeCloseTo(before, 5);
      }
      expect(rigid).toBeGreaterThan(50);
      const right = Array.from(moved).filter((_, v) => rest[3 * v] < -0.05);
      expect(right.length).toBeGreaterThan(1000);
      expect(Math.max(...right), variant).toBe(0);
    }
  });

  it('keeps the rest mesh at strength 0 in every variant, and the corrective alone is small and zero at rest', () => {
    for (const variant of ['skinning', 'skinningCorrective', 'corrective'] as const) {
      expect(Math.max(...motion(rest, posedByRig(rest, template.weights, template.heads, elbowBend(), 0, variant))), variant).toBe(0);
    }
    const better = motion(rest, posedByRig(rest, template.weights, template.heads, elbowBend(), 1, 'skinningCorrective'));
    const linear = posedByRig(rest, template.weights, template.heads, elbowBend(), 1, 'skinning');
    const corrective = posedByRig(rest, template.weights, template.heads, elbowBend(), 1, 'corrective');
    const alone = motion(rest, corrective);
    // the corrective is where DQS and LBS part (the blended elbow), a few % of the pose's motion; rigid parts get none
    expect(Math.max(...alone)).toBeGreaterThan(1e-3);
    expect(Math.max(...alone)).toBeLessThan(0.1 * Math.max(...better));
    const dqs = posedByRig(rest, template.weights, template.heads, elbowBend(), 1, 'skinningCorrective');
    for (let i = 0; i < rest.length; i++) expect(corrective[i]).toBeCloseTo(rest[i] + dqs[i] - linear[i], 6);
  });

  it('refuses local rotations that are not 23 joints', () => {
    expect(() => posedByRig(rest, template.weights, template.heads, new Float32Array(J * 3 - 3), 1, 'skinning')).toThrow(expect.objectContaining({ code: 'BAD_ARRAY' }));
  });
});
