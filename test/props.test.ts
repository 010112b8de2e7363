/**
 * Humanoids that hold props (procedural test identities, sidecar/eval/poses/testIdentities.ts, meshed coarsely here to
 * keep the file fast): a sword held pointing forward made the shape deeper than wide, and a staff standing from the
 * floor to above the head took the head's and a hand's places in the front view. Each must rig, with the joints on the
 * body the generator built (its ground-truth joints), and the prop weighted to the hand that holds it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import type { RiggedCharacter } from '../sidecar/data/trainingSample.js';
import { bodyTriangles } from '../sidecar/mesh/debris.js';
import { findCanonicalFrame, toCanonical } from '../sidecar/mesh/canonicalFrame.js';
import { mergeParts } from '../sidecar/mesh/mergeParts.js';
import { rigCharacter } from '../sidecar/pipeline.js';
import { latentPoseAutoRig } from '../sidecar/pose/applyLatentPose.js';
import { FRONT_VIEW_RESOLUTION } from '../sidecar/skeleton/estimateSkeleton.js';
import { renderFrontView, type FrontView } from '../sidecar/skeleton/frontView.js';
import { humanoidShapeCues } from '../sidecar/skeleton/humanoidShape.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';
import { withoutPropRods } from '../sidecar/skeleton/propRods.js';
import type { RigResult, Vec3 } from '../sidecar/types.js';

/** Arms down, a sword in the right hand pointing forward (a third of the height out in front at hip height). */
const SWORD = 9_100_000;
/** T-pose in a long cape, legs hidden, a staff in the right hand from the floor to above the hat. */
const STAFF = 9_100_007;
/** T-pose, thin build: forearms as thin as a staff, no prop. */
const THIN_ARMS = 9_100_005;
/** Arms down in a robe, a staff in the left hand fused into the mesh: the robe hides all of it but its top and its foot. */
const ROBED_STAFF = 9_100_009;
const VERTICES = 6000;
const TIMEOUT = 30_000;

const characters = new Map<number, RiggedCharacter>();
beforeAll(() => {
  for (const seed of [SWORD, STAFF, THIN_ARMS, ROBED_STAFF]) characters.set(seed, generateProceduralHumanoid(seed, { targetVertices: VERTICES }));
}, TIMEOUT);
const rigs = new Map<number, RigResult>();
/** The geometric rig of a character, made once (a refusal fails each test that needs it). */
const rigOf = (seed: number): RigResult => {
  if (!rigs.has(seed)) rigs.set(seed, rigCharacter(characters.get(seed)!.parts));
  return rigs.get(seed)!;
};

const heightOf = (seed: number) => characters.get(seed)!.meta.heightMetres as number;
const truth = (seed: number, joint: string): Vec3 => {
  const k = MIXAMO_JOINTS.indexOf(joint as (typeof MIXAMO_JOINTS)[number]);
  return Array.from(characters.get(seed)!.joints.subarray(3 * k, 3 * k + 3)) as Vec3;
};
const rigged = (seed: number, joint: string): Vec3 => rigOf(seed).skeleton.joints.find((j) => j.name === `mixamorig:${joint}`)!.head;
/** Distance from a rigged joint to the generator's, as a fraction of the height. */
const missBy = (seed: number, joint: string) => {
  const a = rigged(seed, joint), b = truth(seed, joint);
  return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]) / heightOf(seed);
};

/** The front view the skeleton is read from (the pipeline's canonical frame and resolution). */
function frontViewOf(seed: number): { view: FrontView; canonical: Float32Array; body: Uint32Array } {
  const mesh = mergeParts(characters.get(seed)!.parts);
  const body = bodyTriangles(mesh.positions, mesh.triangles);
  const canonical = toCanonical(mesh.positions, findCanonicalFrame(mesh.positions, body));
  return { view: renderFrontView(canonical, body, FRONT_VIEW_RESOLUTION), canonical, body };
}

describe('a sword held pointing forward', () => {
  it('leaves the shape wider than deep: the blade is a few pixels seen from the front', () => {
    const { view, canonical, body } = frontViewOf(SWORD);
    // Measured 0.80 by the bounding box (the blade's tip to the heels), 2.05 with the 5% of pixels that reach furthest
    // forward and back left out.
    expect(humanoidShapeCues(canonical, body, view).widthOverDepth).toBeGreaterThan(1.5);
  });

  it('rigs, the hands and the head where the generator put them', () => {
    expect(() => rigOf(SWORD)).not.toThrow();
    // Measured: hands 0.022 and 0.026 of the height off, head 0.037 (its base of the skull read a little low).
    expect(missBy(SWORD, 'LeftHand')).toBeLessThan(0.05);
    expect(missBy(SWORD, 'RightHand')).toBeLessThan(0.05);
    expect(missBy(SWORD, 'Head')).toBeLessThan(0.06);
  }, TIMEOUT);

  it('points the hands down out of the wide sleeves, not into the thighs, and gives them no trunk or thigh', () => {
    // The arms merge with the body in the silhouette (wide sleeves down to the hips) and are laid along its side; the
    // hands hang below the cuffs beside the thighs. Measured: the hand bones run 0.114 of the height down and 0.014 out
    // (0.128 in, into the thighs, when the arm's path followed the thigh's edge down to the tip's row).
    const H = heightOf(SWORD);
    for (const [joint, side] of [['LeftHand', 1], ['RightHand', -1]] as const) {
      const bone = rigOf(SWORD).skeleton.joints.find((j) => j.name === `mixamorig:${joint}`)!;
      expect((bone.head[1] - bone.tail[1]) / H).toBeGreaterThan(0.08);
      expect(((bone.tail[0] - bone.head[0]) * side) / H).toBeGreaterThan(-0.03);
    }
    // Vertices the generator gave to the spine, the hips or a thigh that the rig gives mostly to a hand (measured 1 of
    // 6000; 283 before).
    const rig = rigOf(SWORD), character = characters.get(SWORD)!;
    const trunk = new Set(['Hips', 'Spine', 'Spine1', 'Spine2', 'LeftUpLeg', 'RightUpLeg'].map((n) => MIXAMO_JOINTS.indexOf(n as (typeof MIXAMO_JOINTS)[number])));
    let handOnTrunk = 0;
    rig.objects.forEach((o, pi) => {
      const truthWeights = character.weights[pi];
      const nv = character.parts[pi].positions.length / 3, k = truthWeights.indices.length / nv;
      for (let v = 0; v < nv; v++) {
        let best = 0, truthBest = 0;
        for (let s = 1; s < 4; s++) if (o.weights[4 * v + s] > o.weights[4 * v + best]) best = s;
        for (let s = 1; s < k; s++) if (truthWeights.weights[k * v + s] > truthWeights.weights[k * v + truthBest]) truthBest = s;
        const ours = rig.skeleton.joints[o.indices[4 * v + best]].name;
        if (/Hand$/.test(ours) && trunk.has(truthWeights.indices[k * v + truthBest])) handOnTrunk++;
      }
    });
    expect(handOnTrunk).toBeLessThan(30);
  }, TIMEOUT);
});

describe('a staff standing from the floor to above the head', () => {
  it('is taken out of the silhouette, knob included, and nothing of the body with it', () => {
    const { view } = frontViewOf(STAFF);
    const body = withoutPropRods(view);
    const { res } = view;
    // The staff stands at the right hand, at the silhouette's right edge (canonical x < 0 is the character's right).
    let staffLeft = res, staffRight = -1, removed = 0, covered = 0, top = -1;
    for (let p = 0; p < view.mask.length; p++) {
      covered += view.mask[p];
      if (body.mask[p]) top = Math.max(top, Math.floor(p / res));
      if (!view.mask[p] || body.mask[p]) continue;
      removed++;
      staffLeft = Math.min(staffLeft, p % res);
      staffRight = Math.max(staffRight, p % res);
    }
    // Measured 12% of the silhouette: a staff as tall as the body and a tenth of its width.
    expect(removed / covered).toBeGreaterThan(0.05);
    // A band about the staff's width (its knob at the top is the widest), far out at the right hand.
    expect(staffRight - staffLeft).toBeLessThan(0.1 * res);
    expect(staffRight).toBeLessThan(0.15 * res);
    // The body's top is now the hat's tip, under the knob that topped the view.
    let viewTop = -1;
    for (let p = 0; p < view.mask.length; p++) if (view.mask[p]) viewTop = Math.max(viewTop, Math.floor(p / res));
    expect(top).toBeLessThan(viewTop - 2);
  });

  it('rigs, the head on the body and the hands at the hands', () => {
    const H = heightOf(STAFF);
    // Before, the head was read at the staff's top (0.47 of the height to the right) and the hands along the staff.
    for (const joint of ['Head', 'HeadTop_End', 'Neck']) expect(Math.abs(rigged(STAFF, joint)[0] - truth(STAFF, 'Head')[0]) / H).toBeLessThan(0.03);
    // Measured 0.031 and 0.040 of the height off.
    expect(missBy(STAFF, 'LeftHand')).toBeLessThan(0.06);
    expect(missBy(STAFF, 'RightHand')).toBeLessThan(0.06);
  }, TIMEOUT);

  it('weights the staff below the hips to the hand that holds it', () => {
    const rig = rigOf(STAFF);
    const hand = truth(STAFF, 'RightHand'), hips = truth(STAFF, 'Hips');
    const names: string[] = [];
    rig.objects.forEach((o, pi) => {
      const P = characters.get(STAFF)!.parts[pi].positions;
      for (let v = 0; v < P.length / 3; v++) {
        // Beyond the hand and below the hips there is nothing but the staff.
        if (!(P[3 * v] < hand[0] + 0.03 && P[3 * v + 1] < hips[1])) continue;
        let best = 0;
        for (let s = 1; s < 4; s++) if (o.weights[4 * v + s] > o.weights[4 * v + best]) best = s;
        names.push(rig.skeleton.joints[o.indices[4 * v + best]].name);
      }
    });
    expect(names.length).toBeGreaterThan(50);
    expect(names.filter((n) => n === 'mixamorig:RightHand').length / names.length).toBeGreaterThan(0.9);
  }, TIMEOUT);
});

/** The weight the generator gives vertex v of part pi on a template joint (MIXAMO_JOINTS index). */
const truthWeightOn = (character: RiggedCharacter, pi: number, v: number, joint: number): number => {
  const w = character.weights[pi], k = w.indices.length / (character.parts[pi].positions.length / 3);
  let sum = 0;
  for (let s = 0; s < k; s++) if (w.indices[k * v + s] === joint) sum += w.weights[k * v + s];
  return sum;
};
/** The weight a rig gives vertex v of part pi on the joint named `name`. */
const rigWeightOn = (rig: Pick<RigResult, 'skeleton' | 'objects'>, pi: number, v: number, name: string): number => {
  const o = rig.objects[pi];
  let sum = 0;
  for (let s = 0; s < o.influences; s++) if (rig.skeleton.joints[o.indices[o.influences * v + s]].name === name) sum += o.weights[o.influences * v + s];
  return sum;
};

describe('a staff that a robe hides but for its top and its foot', () => {
  it('is found by its short foot, and its foot and its top are one rod', () => {
    const { view } = frontViewOf(ROBED_STAFF);
    const body = withoutPropRods(view);
    expect(body).not.toBe(view);
    const { res } = view;
    // rows of each rod's removed pixels: the foot starts at the floor, the top is above the robe's shoulders
    const rows = new Map<number, number[]>();
    let bottom = res;
    for (let p = 0; p < view.mask.length; p++) if (view.mask[p]) bottom = Math.min(bottom, Math.floor(p / res));
    for (let p = 0; p < view.mask.length; p++) {
      if (!view.mask[p] || body.mask[p]) continue;
      const rod = body.rodOf![p];
      expect(rod).toBeGreaterThan(0);
      if (!rows.has(rod)) rows.set(rod, []);
      rows.get(rod)!.push(Math.floor(p / res) - bottom);
    }
    expect(rows.size).toBe(1);
    const [staff] = [...rows.values()];
    expect(Math.min(...staff)).toBeLessThanOrEqual(2);
    expect(Math.max(...staff)).toBeGreaterThan(0.55 * res);
  });

  it('weights the staff\'s top and its foot wholly to the left hand', () => {
    const character = characters.get(ROBED_STAFF)!;
    const rig = rigOf(ROBED_STAFF);
    const leftHand = MIXAMO_JOINTS.indexOf('LeftHand'), hand = truth(ROBED_STAFF, 'LeftHand'), H = heightOf(ROBED_STAFF);
    let top = 0, foot = 0, topOnHand = 0, footOnHand = 0, floor = Infinity;
    for (const part of character.parts) for (let v = 0; v < part.positions.length / 3; v++) floor = Math.min(floor, part.positions[3 * v + 1]);
    character.parts.forEach((part, pi) => {
      for (let v = 0; v < part.positions.length / 3; v++) {
        // the staff: what the generator binds wholly to the left hand; its top well above the hand, its foot below the
        // robe's hem (the front view sees 0.094 of the height of it); the middle, behind the robe, is not looked for
        const y = part.positions[3 * v + 1];
        if (truthWeightOn(character, pi, v, leftHand) < 0.99 || (y < hand[1] + 0.15 * H && y > floor + 0.08 * H)) continue;
        const ours = rigWeightOn(rig, pi, v, 'mixamorig:LeftHand');
        if (y > hand[1]) { top++; topOnHand += ours; } else { foot++; footOnHand += ours; }
      }
    });
    expect(top).toBeGreaterThan(20);
    expect(foot).toBeGreaterThan(20);
    expect(topOnHand / top).toBeGreaterThan(0.9);
    expect(footOnHand / foot).toBeGreaterThan(0.9);
  }, TIMEOUT);
});

describe('a hand resting on a robe', () => {
  it('leaves the robe around the left hand off the hand, on Apply Latent Pose\'s auto-rig', async () => {
    // 9 100 009's left hand rests against its robe, fused with it. The robe is the generator's hips' and thigh's; the
    // learned weights gave the robe around the hand much of the hand's weight, and an arm's bend then moved the robe.
    // The skirt rule lets the hand keep only the robe as near its bone as its own free surface lies (with a margin).
    // The robe here: the vertices within a tenth of the height of the hand that the generator gives none of it. Meshed
    // at the eval's 20,000 vertices: at 6,000 the skinning gave the robe none of the hand.
    const character = generateProceduralHumanoid(ROBED_STAFF, { targetVertices: 20_000 });
    const rig = await latentPoseAutoRig(character.parts);
    const leftHand = MIXAMO_JOINTS.indexOf('LeftHand'), H = character.meta.heightMetres as number;
    const hand = Array.from(character.joints.subarray(3 * leftHand, 3 * leftHand + 3));
    let robe = 0, robeOnHand = 0, own = 0, ownOnHand = 0;
    character.parts.forEach((part, pi) => {
      for (let v = 0; v < part.positions.length / 3; v++) {
        const p = part.positions;
        if (Math.hypot(p[3 * v] - hand[0], p[3 * v + 1] - hand[1], p[3 * v + 2] - hand[2]) > 0.1 * H) continue;
        const truthHand = truthWeightOn(character, pi, v, leftHand), ours = rigWeightOn(rig, pi, v, 'mixamorig:LeftHand');
        if (truthHand === 0) { robe++; robeOnHand += ours; } else if (truthHand > 0.9) { own++; ownOnHand += ours; }
      }
    });
    expect(robe).toBeGreaterThan(100);
    expect(own).toBeGreaterThan(50);
    // measured 3.9 of 237 robe vertices' weight (0.016); 29.3 (0.12) when the hand kept the robe within its bone's length
    expect(robeOnHand / robe, 'the hand\'s share of the robe around it').toBeLessThan(0.05);
    expect(ownOnHand / own, 'the hand\'s share of its own vertices').toBeGreaterThan(0.9);
  }, TIMEOUT);
});

describe('limbs as thin as a staff are no staff', () => {
  it('keeps the thin forearms of a character in T-pose (thin pieces as long as 0.4 of the height, off the floor)', () => {
    const { view } = frontViewOf(THIN_ARMS);
    expect(withoutPropRods(view)).toBe(view);
  });
});
