/**
 * The hybrid skeleton (Auto Rig's default method, and Apply Latent Pose's auto-rig) places its trunk and leg joints
 * at the refinement network's depth (skeleton/refinedSkeleton withRefinedDepth): the front view fixes a joint's x and
 * y, while the midpoint of a ray's first and last hit is pulled off the body's middle by what hangs behind it.
 */
import { describe, expect, it } from 'vitest';
import { modelPath } from '../sidecar/learned/modelFiles.js';
import { loadModel } from '../sidecar/learned/onnxSession.js';
import { ownRig, proceduralIdentity } from '../sidecar/eval/poses/testIdentities.js';
import { latentPoseAutoRig } from '../sidecar/pose/applyLatentPose.js';
import { prepareMesh, rigCharacterAsync } from '../sidecar/pipeline.js';
import { estimateSkeleton, FRONT_VIEW_RESOLUTION } from '../sidecar/skeleton/estimateSkeleton.js';
import { renderFrontView } from '../sidecar/skeleton/frontView.js';
import { predictJoints2D } from '../sidecar/skeleton/learnedJoints2d.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';
import { ARM_DEPTH_OFF_LIMB, CHEST_MIN_STRETCH, CHEST_RAY_GAP, HAND_FORWARD_OF_RAY, HEAD_TIPPED_BACK, insideAStretch, ownStretchBeforeGap, RAY_DEPTH_JOINTS, withRefinedDepth } from '../sidecar/skeleton/refinedSkeleton.js';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { rigJointErrors, SCORED_JOINTS } from './fixtures/riggedProcedural.js';
import type { MeshPart, Skeleton, Vec3 } from '../sidecar/types.js';

describe('withRefinedDepth', () => {
  const J = MIXAMO_JOINTS.length;
  const coarse = Float32Array.from({ length: J * 3 }, (_, i) => (i % 3 === 2 ? -0.05 : 0.01 * i));
  const refined = Float32Array.from({ length: J * 3 }, (_, i) => (i % 3 === 2 ? 0.02 : 0.3));
  const z = (joints: Float32Array, name: string) => joints[3 * MIXAMO_JOINTS.indexOf(name as never) + 2];

  it('keeps the coarse joints\' x and y and takes the refined z, except on the arms, leaving its inputs alone', () => {
    const out = withRefinedDepth(coarse, refined);
    for (let j = 0; j < J; j++) {
      expect(out[3 * j]).toBe(coarse[3 * j]);
      expect(out[3 * j + 1]).toBe(coarse[3 * j + 1]);
      expect(out[3 * j + 2], MIXAMO_JOINTS[j]).toBeCloseTo(RAY_DEPTH_JOINTS.includes(MIXAMO_JOINTS[j]) ? -0.05 : 0.02, 6);
    }
    expect(RAY_DEPTH_JOINTS).toEqual(expect.arrayContaining(['LeftForeArm', 'RightHand']));
    expect(RAY_DEPTH_JOINTS).not.toContain('LeftShoulder');
    expect(coarse[2]).toBeCloseTo(-0.05, 6);
    expect(() => withRefinedDepth(coarse, refined.subarray(3))).toThrow(/69 and 66/);
  });

  it('keeps the coarse depth where the refined one leaves the joint\'s ray span; a ray that misses takes the refined', () => {
    const front = new Float64Array(J).fill(0.1), back = new Float64Array(J).fill(-0.1);
    front[MIXAMO_JOINTS.indexOf('Head')] = 0.0; // the network's 0.02 lies in front of the Head's first hit
    back[MIXAMO_JOINTS.indexOf('Hips')] = 0.03; // and behind the Hips' last hit
    front[MIXAMO_JOINTS.indexOf('Spine')] = Number.NaN;
    back[MIXAMO_JOINTS.indexOf('Spine')] = Number.NaN;
    const out = withRefinedDepth(coarse, refined, { front, back });
    expect(z(out, 'Head')).toBeCloseTo(-0.05, 6);
    expect(z(out, 'Hips')).toBeCloseTo(-0.05, 6);
    expect(z(out, 'Spine')).toBeCloseTo(0.02, 6);
    expect(z(out, 'Neck')).toBeCloseTo(0.02, 6);
    expect(() => withRefinedDepth(coarse, refined, { front: front.subarray(1), back })).toThrow(/ray spans/);
  });

  it('reads a chest with something hanging apart behind it at its own stretch\'s middle, and only the chest', () => {
    const pairs = (...z: number[]) => Float64Array.from(z);
    // long hair behind the chest, a gap of twice CHEST_RAY_GAP between
    const hair = pairs(0.04, -0.04, -0.04 - 2 * CHEST_RAY_GAP, -0.12);
    expect(ownStretchBeforeGap(hair, CHEST_RAY_GAP, CHEST_MIN_STRETCH)).toBeCloseTo(0, 9);
    expect(ownStretchBeforeGap(pairs(0.04, -0.04, -0.04 - 0.5 * CHEST_RAY_GAP, -0.12), CHEST_RAY_GAP, CHEST_MIN_STRETCH)).toBeNaN(); // fused
    expect(ownStretchBeforeGap(pairs(0.04, 0.04 - 0.5 * CHEST_MIN_STRETCH, 0, -0.04), CHEST_RAY_GAP, CHEST_MIN_STRETCH)).toBeNaN(); // a plate in front
    expect(ownStretchBeforeGap(pairs(0.04, -0.12), CHEST_RAY_GAP, CHEST_MIN_STRETCH)).toBeNaN();
    expect(ownStretchBeforeGap(undefined, CHEST_RAY_GAP, CHEST_MIN_STRETCH)).toBeNaN();
    const front = new Float64Array(J).fill(0.04), back = new Float64Array(J).fill(-0.12);
    const stretches = Array.from({ length: J }, () => hair);
    const out = withRefinedDepth(coarse, refined, { front, back, stretches });
    expect(z(out, 'Spine2')).toBeCloseTo(0, 6);
    // every other trunk joint keeps the network's depth, whatever its stretches
    for (const name of ['Hips', 'Spine', 'Spine1', 'Neck', 'LeftShoulder']) expect(z(out, name), name).toBeCloseTo(0.02, 6);
    // without the stretches (or with the chest fused to what hangs behind), the network's
    expect(z(withRefinedDepth(coarse, refined, { front, back }), 'Spine2')).toBeCloseTo(0.02, 6);
  });

  it('gives a hand of arms posed apart the network\'s depth where that lies clearly in front of the ray\'s, inside its span', () => {
    const hand = 3 * MIXAMO_JOINTS.indexOf('LeftHand') + 2;
    const at = (coarseZ: number, refinedZ: number, front = 0.2, back = -0.2, posedApart = true, behindHeld: ('Left' | 'Right')[] = []) => {
      const c = Float32Array.from(coarse), r = Float32Array.from(refined);
      c[hand] = coarseZ;
      r[hand] = refinedZ;
      const spans = { front: new Float64Array(J).fill(front), back: new Float64Array(J).fill(back) };
      return z(withRefinedDepth(c, r, spans, [], posedApart, behindHeld), 'LeftHand');
    };
    // mirrored arms: the pair's rules settled the hands' shared depth
    expect(at(0.0, HAND_FORWARD_OF_RAY + 0.005, 0.2, -0.2, false)).toBeCloseTo(0.0, 6);
    // the arms' lengths pulled a hand reaching forward back to its elbow's depth: the network's, in front, stands
    expect(at(0.0, HAND_FORWARD_OF_RAY + 0.005)).toBeCloseTo(HAND_FORWARD_OF_RAY + 0.005, 6);
    // within the margin, or behind, the ray's stays (both read hands back where they err)
    expect(at(0.0, HAND_FORWARD_OF_RAY - 0.005)).toBeCloseTo(0.0, 6);
    expect(at(0.0, -0.05)).toBeCloseTo(0.0, 6);
    // a network depth in front of the ray's first hit would leave the hand outside the body
    expect(at(0.0, 0.05, 0.04)).toBeCloseTo(0.0, 6);
    // a wrist the rules stood behind what its hand holds keeps that depth: the network's was misled by the same guard;
    // the other hand's list does not hold this one
    expect(at(0.0, HAND_FORWARD_OF_RAY + 0.005, 0.2, -0.2, true, ['Left'])).toBeCloseTo(0.0, 6);
    expect(at(0.0, HAND_FORWARD_OF_RAY + 0.005, 0.2, -0.2, true, ['Right'])).toBeCloseTo(HAND_FORWARD_OF_RAY + 0.005, 6);
  });

  it('keeps a hand\'s ray depth where the network\'s lies between the stretches inside the surface along its ray', () => {
    const hand = MIXAMO_JOINTS.indexOf('LeftHand');
    // the fist from -0.02 to -0.06, a guard apart in front of it from 0.05 to 0.02 (procedural 24 000 008's, rounded)
    const fistAndGuard = new Float64Array([0.05, 0.02, -0.02, -0.06]);
    const at = (refinedZ: number, stretches: Float64Array) => {
      const c = Float32Array.from(coarse), r = Float32Array.from(refined);
      c[3 * hand + 2] = -0.04;
      r[3 * hand + 2] = refinedZ;
      const spans = { front: new Float64Array(J).fill(0.05), back: new Float64Array(J).fill(-0.06), stretches: Array.from({ length: J }, () => stretches) };
      return z(withRefinedDepth(c, r, spans, [], true), 'LeftHand');
    };
    // in the gap between the fist and the guard: outside the body, drawn forward by the guard
    expect(at(0.0, fistAndGuard)).toBeCloseTo(-0.04, 6);
    // on the fist's own stretch, clearly in front of the ray's depth: taken
    expect(at(-0.021, fistAndGuard)).toBeCloseTo(-0.021, 6);
    // one stretch (the fist and guard fused), or a ray that met nothing, leaves the span the only bound
    expect(at(0.0, new Float64Array([0.05, -0.06]))).toBeCloseTo(0.0, 6);
    expect(at(0.0, new Float64Array(0))).toBeCloseTo(0.0, 6);
    expect(insideAStretch(fistAndGuard, 0.03)).toBe(true);
    expect(insideAStretch(fistAndGuard, 0.0)).toBe(false);
    expect(insideAStretch(undefined, 0.0)).toBe(true);
  });

  it('gives an upper-arm joint far behind its limb (long hair fused to its back) the network\'s depth, and only that one', () => {
    const far = Float32Array.from(coarse), near = Float32Array.from(coarse);
    // shoulder 0.02 (the network's), elbow -0.05 (the ray's): the limb's mean depth is -0.015
    far[3 * MIXAMO_JOINTS.indexOf('LeftArm') + 2] = -0.015 - ARM_DEPTH_OFF_LIMB - 0.01;
    near[3 * MIXAMO_JOINTS.indexOf('LeftArm') + 2] = -0.015 - ARM_DEPTH_OFF_LIMB + 0.01;
    expect(z(withRefinedDepth(far, refined), 'LeftArm')).toBeCloseTo(0.02, 6);
    expect(z(withRefinedDepth(far, refined), 'RightArm')).toBeCloseTo(-0.05, 6);
    expect(z(withRefinedDepth(near, refined), 'LeftArm')).toBeCloseTo(-0.015 - ARM_DEPTH_OFF_LIMB + 0.01, 6);
  });

  it('gives the arm joints of a side the front view does not show (inside a cape) the network\'s depth, as the trunk\'s', () => {
    const out = withRefinedDepth(coarse, refined, undefined, ['Right']);
    for (const joint of ['RightArm', 'RightForeArm', 'RightHand']) expect(z(out, joint), joint).toBeCloseTo(0.02, 6);
    for (const joint of ['LeftArm', 'LeftForeArm', 'LeftHand']) expect(z(out, joint), joint).toBeCloseTo(-0.05, 6);
    // and, as the trunk's, only inside the joint's ray span
    const front = new Float64Array(J).fill(0.1), back = new Float64Array(J).fill(-0.1);
    front[MIXAMO_JOINTS.indexOf('RightHand')] = 0.0;
    expect(z(withRefinedDepth(coarse, refined, { front, back }, ['Right']), 'RightHand')).toBeCloseTo(-0.05, 6);
  });

  it('stands a Head the network tipped back behind its own Neck at the network\'s Neck depth, inside the Head\'s ray', () => {
    const head = MIXAMO_JOINTS.indexOf('Head'), neck = MIXAMO_JOINTS.indexOf('Neck');
    const at = (headZ: number, front = 0.2, back = -0.16) => {
      const r = Float32Array.from(refined);
      r[3 * neck + 2] = 0.02;
      r[3 * head + 2] = headZ;
      const spans = { front: new Float64Array(J).fill(0.3), back: new Float64Array(J).fill(-0.3) };
      spans.front[head] = front;
      spans.back[head] = back;
      return z(withRefinedDepth(coarse, r, spans), 'Head');
    };
    // hair round the skull: the network's Head 0.03 behind its Neck
    expect(at(-0.01)).toBeCloseTo(0.02, 6);
    // within the margin the network's Head stands
    expect(at(0.02 - HEAD_TIPPED_BACK + 0.002)).toBeCloseTo(0.02 - HEAD_TIPPED_BACK + 0.002, 6);
    // the Neck's depth in front of the Head ray's first hit would leave the joint outside the head
    expect(at(-0.01, 0.015, -0.16)).toBeCloseTo(-0.01, 6);
    // a Head ray that missed the surface bounds nothing
    expect(at(-0.01, Number.NaN, Number.NaN)).toBeCloseTo(0.02, 6);
    // without ray spans too; a Head in front of its Neck keeps the network's depth
    expect(z(withRefinedDepth(coarse, refined), 'Head')).toBeCloseTo(0.02, 6);
  });

  it('keeps such an arm joint inside its ray\'s span: a network depth in front of the first hit is brought to it', () => {
    const far = Float32Array.from(coarse);
    far[3 * MIXAMO_JOINTS.indexOf('LeftArm') + 2] = -0.015 - ARM_DEPTH_OFF_LIMB - 0.01;
    const front = new Float64Array(J).fill(0.1), back = new Float64Array(J).fill(-0.1);
    front[MIXAMO_JOINTS.indexOf('LeftArm')] = 0.005; // the network's 0.02 lies in front of the arm's surface
    expect(z(withRefinedDepth(far, refined, { front, back }), 'LeftArm')).toBeCloseTo(0.005, 6);
    back[MIXAMO_JOINTS.indexOf('LeftArm')] = 0.03; // and behind it, were the arm's span all in front
    front[MIXAMO_JOINTS.indexOf('LeftArm')] = 0.06;
    expect(z(withRefinedDepth(far, refined, { front, back }), 'LeftArm')).toBeCloseTo(0.03, 6);
    // inside the span, or where the ray misses, the network's depth itself
    front[MIXAMO_JOINTS.indexOf('LeftArm')] = 0.1;
    back[MIXAMO_JOINTS.indexOf('LeftArm')] = -0.1;
    expect(z(withRefinedDepth(far, refined, { front, back }), 'LeftArm')).toBeCloseTo(0.02, 6);
    front[MIXAMO_JOINTS.indexOf('LeftArm')] = Number.NaN;
    back[MIXAMO_JOINTS.indexOf('LeftArm')] = Number.NaN;
    expect(z(withRefinedDepth(far, refined, { front, back }), 'LeftArm')).toBeCloseTo(0.02, 6);
  });
});

describe('the hybrid skeleton on a chibi character with long hair down its back', () => {
  it('puts the arm joints at the shoulders, not in the hair behind them (9 200 017)', async () => {
    const identity = proceduralIdentity(9_200_017);
    const height = identity.character.meta.heightMetres as number;
    const rig = await rigCharacterAsync(identity.character.parts);
    for (const side of ['Left', 'Right']) {
      const k = MIXAMO_JOINTS.indexOf(`${side}Arm` as never);
      const head = rig.skeleton.joints.find((j) => j.name === `mixamorig:${side}Arm`)!.head;
      const error = Math.hypot(...head.map((x, i) => x - identity.character.joints[3 * k + i])) / height;
      // measured 2.6 / 3.2 % (what is left is across, the network's 2D); before, 9.6 % both, 0.09 of the height behind
      expect(error, side).toBeLessThan(0.04);
    }
  }, 60_000);
});

describe('the hybrid skeleton on humanoids with long hair down their backs', () => {
  // the network put these heads behind their necks, misled by the hair round the skull (16 000 013 both arm poses)
  it.each([
    [16_000_013, true], [16_000_013, false], [11_000_061, true],
  ] as const)('puts procedural humanoid %i\'s Head in the head, not toward the hair behind it (arms posed apart: %s)', async (seed, asymmetricArms) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms });
    expect(character.meta.clothing).toContain('long hair');
    const errors = await rigJointErrors(character);
    // measured 2.0 / 2.2 / 1.5 % of the height; before, 6.5 / 6.6 / 4.3 %, the Head 0.04–0.065 behind
    expect(errors[SCORED_JOINTS.indexOf('Head')]).toBeLessThan(0.03);
  }, 60_000);
});

/** The hybrid skeleton before the network's depth: the 2D joints lifted by the ray midpoints alone (input space). */
async function rayMidpointSkeleton(parts: MeshPart[]): Promise<Skeleton> {
  const { body, cf, canonical, shells } = prepareMesh(parts);
  const view = renderFrontView(canonical, body, FRONT_VIEW_RESOLUTION);
  const prediction = await predictJoints2D(await loadModel(modelPath('joints2d')), view);
  return estimateSkeleton(canonical, body, cf, true, { method: 'hybrid', prediction }, view, shells).skeleton;
}

describe('the hybrid skeleton on a caped humanoid', () => {
  // procedural 9 300 004 (neither point_rig's training nor a test identity): a cape fused to its back puts the last
  // hit of every ray through the trunk behind the body
  const identity = proceduralIdentity(9_300_004);
  const TRUNK = ['Hips', 'Spine', 'Spine1', 'Spine2', 'LeftUpLeg', 'RightUpLeg', 'LeftLeg', 'RightLeg'];
  const head = (s: Skeleton, name: string): Vec3 => s.joints.find((j) => j.name.replace('mixamorig:', '') === name)!.head;

  it('puts the trunk and leg joints at the generator\'s depth, where the ray midpoints sit behind it; Auto Rig and Apply Latent Pose agree', async () => {
    const parts = identity.character.parts;
    const requested = await rigCharacterAsync(parts);
    const apply = await latentPoseAutoRig(parts);
    const midpoints = await rayMidpointSkeleton(parts);
    const truth = ownRig(identity.character).skeleton;
    const { forward, up, left } = requested.frame;
    const dot = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    const height = Math.max(...parts[0].positions.filter((_, i) => i % 3 === 1)) - Math.min(...parts[0].positions.filter((_, i) => i % 3 === 1));
    let requestError = 0, midpointError = 0, behind = 0;
    for (const name of TRUNK) {
      const t = head(truth, name), r = head(requested.skeleton, name), m = head(midpoints, name);
      requestError += Math.abs(dot(r, forward) - dot(t, forward)) / TRUNK.length;
      midpointError += Math.abs(dot(m, forward) - dot(t, forward)) / TRUNK.length;
      if (dot(m, forward) < dot(t, forward)) behind++;
      // only the depth moved: across and up are the front view's
      expect(dot(r, up)).toBeCloseTo(dot(m, up), 5);
      expect(dot(r, left)).toBeCloseTo(dot(m, left), 5);
    }
    expect(behind).toBe(TRUNK.length);
    // the arms keep the ray's depth: their joints are the ray midpoints' own
    for (const name of RAY_DEPTH_JOINTS) {
      const r = head(requested.skeleton, name), m = head(midpoints, name);
      for (let k = 0; k < 3; k++) expect(r[k], name).toBeCloseTo(m[k], 5);
    }
    expect(midpointError / height).toBeGreaterThan(0.01);
    expect(requestError).toBeLessThan(0.25 * midpointError);
    // the same mesh gets the same skeleton from the rig request and from the pose path's auto-rig
    for (let j = 0; j < requested.skeleton.joints.length; j++) {
      const a = requested.skeleton.joints[j], b = apply.skeleton.joints[j];
      expect(b.name).toBe(a.name);
      for (let k = 0; k < 3; k++) {
        expect(b.head[k]).toBeCloseTo(a.head[k], 5);
        expect(b.tail[k]).toBeCloseTo(a.tail[k], 5);
      }
    }
  }, 60_000);
});

describe('Apply Latent Pose\'s skinning rules on a caped humanoid', () => {
  // procedural 9 300 006 (neither point_rig's training nor a test identity): a cape fused behind its legs. Read off the
  // front view's skeleton, whose leg bones the ray midpoints put inside the cape, the skirt rule took a third of its
  // calves for a skirt and gave them to the thighs (measured 254 of 377): the knee bent nothing below it
  it('reads the final skeleton: the calves its own rig gives to a Leg bone bend with that knee', async () => {
    const identity = proceduralIdentity(9_300_006);
    const own = ownRig(identity.character);
    const rig = await latentPoseAutoRig(identity.character.parts);
    let calves = 0, bent = 0;
    identity.character.parts.forEach((part, k) => {
      const o = own.objects[k], a = rig.objects[k];
      for (let v = 0; v < part.positions.length / 3; v++) {
        for (const side of ['Left', 'Right']) {
          let calf = 0, lower = 0;
          for (let q = 0; q < o.influences; q++) if (own.skeleton.joints[o.indices[v * o.influences + q]].name === `mixamorig:${side}Leg`) calf += o.weights[v * o.influences + q];
          if (calf < 0.7) continue;
          for (let q = 0; q < a.influences; q++) {
            const name = rig.skeleton.joints[a.indices[v * a.influences + q]].name;
            if (name === `mixamorig:${side}Leg` || name === `mixamorig:${side}Foot`) lower += a.weights[v * a.influences + q];
          }
          calves++;
          if (lower > 0.5) bent++;
        }
      }
    });
    expect(calves).toBeGreaterThan(300);
    expect(bent / calves).toBeGreaterThan(0.95);
  }, 60_000);
});
