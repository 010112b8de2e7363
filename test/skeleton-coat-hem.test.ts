/**
 * A long coat or a skirt (sidecar/skeleton/estimateSkeleton.ts hipJointUnderHips): the rules find the crotch as the top
 * of the gap between the legs, which under a coat is its hem, and put the upper-leg joints just above it, down the
 * thighs (procedural development humanoids 9 200 027 and 9 200 063: 12.3 % and 8.4 % of the height from the
 * generator's, 0.64 and 0.47 of the way from the Hips to the knee). Such a joint gives way to the network's, or to one
 * just under the Hips. The rules' Hips, read from that hem up, can sit under the hip joints: the network's Hips stands
 * in (9 200 064: 8.8 % of the height off). A trunk or leg joint the hybrid left to the rules between two of the
 * network's (rulesJointsBetweenNetworkJoints) stood on the same misread trunk or leg: 9 200 035's Spine above its
 * Spine1, 9 700 029's knees down at its coat's hem.
 */
import { describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { rigCharacterAsync } from '../sidecar/pipeline.js';
import { MIXAMO_JOINTS, type MixamoJointName } from '../sidecar/skeleton/mixamoTemplate.js';
import { rulesJointsBetweenNetworkJoints } from '../sidecar/skeleton/estimateSkeleton.js';
import {
  HIP_JOINTS_NETWORK_MIN_CONFIDENCE, HIP_JOINTS_UNDER_NETWORK, HIPS_OVER_NETWORK_HIP_JOINTS, hipsFarOverNetworkHipJoints, hipsOverNetworkSpine,
  rulesHipJointsUnderNetwork, thighsShorterThanShins, THIGH_OVER_SHIN_MIN, UPLEG_MAX_DROP,
} from '../sidecar/skeleton/hipsUnderClothes.js';
import { crotchThroughClothing } from '../sidecar/skeleton/crotchThroughClothing.js';
import { meshShells } from '../sidecar/mesh/meshShells.js';
import type { Vec3 } from '../sidecar/types.js';
import { rigJointErrors, SCORED_JOINTS } from './fixtures/riggedProcedural.js';
import { addBox } from './fixtures/boxMesh.js';

/** A procedural coat wearer rigged (hybrid): its generator joints, height, our joints' heads and the height along up. */
async function rigCoatWearer(seed: number) {
  const character = generateProceduralHumanoid(seed, { targetVertices: 20_000 });
  expect(character.meta.clothing as string[]).toContain('long coat');
  const rig = await rigCharacterAsync(character.parts);
  const head = (name: string) => rig.skeleton.joints.find((j) => j.name === `mixamorig:${name}`)!.head;
  const up = rig.frame.up;
  const along = (p: ArrayLike<number>) => p[0] * up[0] + p[1] * up[1] + p[2] * up[2];
  /** the distance of our joint from the generator's, over the height */
  const error = (name: string) => {
    const k = MIXAMO_JOINTS.indexOf(name as never);
    return Math.hypot(...head(name).map((x, i) => x - character.joints[3 * k + i])) / (character.meta.heightMetres as number);
  };
  return { head, along, error };
}

describe('an upper-leg joint under a coat', () => {
  it.each([9_200_027, 9_200_063])('puts procedural humanoid %i\'s hip joints under its Hips, not at its coat\'s hem', async (seed) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000 });
    const clothing = character.meta.clothing as string[], height = character.meta.heightMetres as number;
    expect(clothing.some((c) => c === 'long coat' || c === 'skirt')).toBe(true);
    const rig = await rigCharacterAsync(character.parts);
    const head = (name: string) => rig.skeleton.joints.find((j) => j.name === `mixamorig:${name}`)!.head;
    const up = rig.frame.up;
    const along = (p: ArrayLike<number>) => p[0] * up[0] + p[1] * up[1] + p[2] * up[2];
    for (const side of ['Left', 'Right']) {
      const k = MIXAMO_JOINTS.indexOf(`${side}UpLeg` as never);
      const error = Math.hypot(...head(`${side}UpLeg`).map((x, i) => x - character.joints[3 * k + i])) / height;
      // measured 0.96 / 0.92 % (9 200 027) and 1.0 / 0.92 % (9 200 063); before, 12.3 % and 8.4 %
      expect(error, side).toBeLessThan(0.025);
      const share = (along(head('Hips')) - along(head(`${side}UpLeg`))) / (along(head('Hips')) - along(head(`${side}Leg`)));
      expect(share, side).toBeLessThanOrEqual(UPLEG_MAX_DROP);
    }
  }, 60_000);
});

describe('the Hips under a coat', () => {
  it('puts procedural humanoid 9 200 064\'s Hips above its hip joints, where the generator put it', async () => {
    const { head, along, error } = await rigCoatWearer(9_200_064);
    // measured 1.7 %; before, 8.8 %, under the hip joints
    expect(error('Hips')).toBeLessThan(0.025);
    expect(along(head('Hips'))).toBeGreaterThan(0.5 * (along(head('LeftUpLeg')) + along(head('RightUpLeg'))));
  }, 60_000);

  it('is the network\'s where the rules\' stands over the network\'s Spine and the network\'s own stands between it and the hip joints', () => {
    const L = 'learned' as const, G = 'geometric' as const;
    // procedural 27 000 050's 2D joints (canonical)
    const points = { Hips: [-0.004, -0.065], Spine: [-0.004, -0.085], LeftUpLeg: [0.032, -0.136], RightUpLeg: [-0.04, -0.136] } as Record<string, [number, number]>;
    const sources = { Hips: G, Spine: L };
    expect(hipsOverNetworkSpine(points, sources, [-0.004, -0.133])).toBe(true);
    // the rules' Hips under the Spine, or the Spine the rules' too: the trunk does not fold there
    expect(hipsOverNetworkSpine({ ...points, Hips: [-0.004, -0.1] }, sources, [-0.004, -0.133])).toBe(false);
    expect(hipsOverNetworkSpine(points, { Hips: G, Spine: G }, [-0.004, -0.133])).toBe(false);
    // the Hips the network's already, or the network's own over its Spine or under the hip joints: nothing better
    expect(hipsOverNetworkSpine(points, { Hips: L, Spine: L }, [-0.004, -0.133])).toBe(false);
    expect(hipsOverNetworkSpine(points, sources, [-0.004, -0.08])).toBe(false);
    expect(hipsOverNetworkSpine(points, sources, [-0.004, -0.14])).toBe(false);
  });

  // 27 000 050 (mirrored) wears a skirt and a cone hat; the network was unsure of its Hips (confidence 0.49), and the
  // rules', read from a crotch too high, stood over the network's Spine: the trunk folded back down at the Hips
  it('puts procedural humanoid 27 000 050\'s Hips under its Spine, where the generator put it', async () => {
    const character = generateProceduralHumanoid(27_000_050, { targetVertices: 20_000 });
    expect(character.meta.clothing as string[]).toContain('skirt');
    const errors = await rigJointErrors(character);
    // measured 0.3 %; before, 8.6 %
    expect(errors[SCORED_JOINTS.indexOf('Hips')]).toBeLessThan(0.02);
  }, 60_000);
});

describe('a rules\' Hips far over the network\'s hip joints', () => {
  it('gives way to the network\'s where that stands nearer its hip joints', () => {
    const L = 'learned' as const, G = 'geometric' as const;
    // procedural 19 000 001's 2D joints (canonical): the rules' Hips 0.26 of the way down to the knees over the hip joints
    const points = {
      Hips: [0, 0.07], LeftUpLeg: [0.049, -0.01], RightUpLeg: [-0.05, -0.012], LeftLeg: [0.06, -0.245], RightLeg: [-0.06, -0.245],
    } as Record<string, [number, number]>;
    const sources = { Hips: G, LeftUpLeg: L, RightUpLeg: L };
    expect(hipsFarOverNetworkHipJoints(points, sources, [0, 0.009])).toBe(true);
    // just under the share, or the hip joints the rules' too (read from the same crotch): the rules' Hips stands
    const under = -0.011 + 0.99 * (HIPS_OVER_NETWORK_HIP_JOINTS / (1 - HIPS_OVER_NETWORK_HIP_JOINTS)) * (-0.011 + 0.245);
    expect(hipsFarOverNetworkHipJoints({ ...points, Hips: [0, under] }, sources, [0, 0.009])).toBe(false);
    expect(hipsFarOverNetworkHipJoints(points, { Hips: G, LeftUpLeg: G, RightUpLeg: L }, [0, 0.009])).toBe(false);
    // the network's own as high, or under its hip joints: nothing better
    expect(hipsFarOverNetworkHipJoints(points, sources, [0, 0.065])).toBe(false);
    expect(hipsFarOverNetworkHipJoints(points, sources, [0, -0.02])).toBe(false);
  });

  // 19 000 001 (mirrored) wears a long coat under a cape: the network, unsure of the Hips (0.49), was sure of the hip
  // joints; the rules' Hips, divided from the coat's hem, stood 0.08 of the canonical height over them, and their Spine
  // between it and the network's Spine1
  it('puts procedural humanoid 19 000 001\'s Hips and Spine where the generator put them, under its coat and cape', async () => {
    const character = generateProceduralHumanoid(19_000_001, { targetVertices: 20_000 });
    expect(character.meta.clothing as string[]).toContain('cape');
    const errors = await rigJointErrors(character);
    // measured 2.3 / 1.6 %; before, 8.4 / 8.9 %
    for (const name of ['Hips', 'Spine']) expect(errors[SCORED_JOINTS.indexOf(name as never)], name).toBeLessThan(0.035);
  }, 60_000);
});

describe('the spine over a coat\'s hidden crotch', () => {
  // 29 000 042 and 28 000 062 (mirrored) wear long coats of their own piece; the network, unsure of the Hips (0.49),
  // read the Spine and Spine1. hipsOverTheCrotch moved the rules' Hips, read at the hem, up over the body's pelvis, and
  // the network's Spine with it in proportion, as if divided from that hem: 6.9 and 6.5 % of the height high. Only
  // joints of the Hips' own reading move with it now
  it.each([29_000_042, 28_000_062])('keeps procedural humanoid %i\'s Spine and Spine1 where the network read them', async (seed) => {
    const { error } = await rigCoatWearer(seed);
    // measured 0.8 / 0.3 % (29 000 042) and 1.0 / 0.7 % (28 000 062); before, 6.9 / 4.1 and 6.5 / 3.6 %
    for (const name of ['Spine', 'Spine1']) expect(error(name), name).toBeLessThan(0.02);
  }, 60_000);
});

describe('a trunk or leg joint between two of the network\'s', () => {
  it('is taken from the network where the rules read it and both its neighbours on the chain came from the network', () => {
    const L = 'learned', G = 'geometric';
    expect(rulesJointsBetweenNetworkJoints({ Hips: L, Spine: G, Spine1: L, Spine2: L, Neck: L })).toEqual(['Spine']);
    expect(rulesJointsBetweenNetworkJoints({ Hips: L, Spine: G, Spine1: G, Spine2: L, Neck: L })).toEqual([]);
    expect(rulesJointsBetweenNetworkJoints({ Hips: G, Spine: G, Spine1: L, Spine2: G, Neck: L })).toEqual(['Spine2']);
    expect(rulesJointsBetweenNetworkJoints({ Hips: G, Spine: L, Spine1: L, Spine2: L, Neck: L })).toEqual([]);
    expect(rulesJointsBetweenNetworkJoints({ Hips: L, LeftUpLeg: L, LeftLeg: G, LeftFoot: L, RightUpLeg: G, RightLeg: G, RightFoot: L }))
      .toEqual(['LeftLeg']);
    // not the arms (the artists' mixamo_ely: the network's elbows and shoulders are the farther)
    expect(rulesJointsBetweenNetworkJoints({ Spine2: L, LeftShoulder: L, LeftArm: L, LeftForeArm: G, LeftHand: L })).toEqual([]);
  });

  it('puts procedural humanoid 9 700 029\'s knees where the generator put them, not down at its long coat\'s hem', async () => {
    const { error } = await rigCoatWearer(9_700_029);
    // measured 0.5 % both; before, 12.6 %
    for (const side of ['Left', 'Right']) expect(error(`${side}Leg`), side).toBeLessThan(0.025);
  }, 60_000);

  it('keeps procedural humanoid 9 200 035\'s spine in order up its coat, its Spine where the generator put it', async () => {
    const { head, along, error } = await rigCoatWearer(9_200_035);
    const chain = ['Hips', 'Spine', 'Spine1', 'Spine2', 'Neck'].map((name) => along(head(name)));
    for (let k = 1; k < chain.length; k++) expect(chain[k], `joint ${k} of the chain`).toBeGreaterThan(chain[k - 1]);
    // measured 3.1 %; before, 7.6 %, above the Spine1
    expect(error('Spine')).toBeLessThan(0.04);
  }, 60_000);
});

describe('the crotch read through the clothes', () => {
  /**
   * A body of one piece (a torso from y -0.1 up, two legs down to the soles, welded at the torso's outer corners), and
   * what it wears, each a piece of its own. Rows of a 256-row front view over [-0.5, 0.5]: the chest at row 179, the
   * soles at row 0, and the first row over the torso's bottom (y -0.1) is 102.
   */
  function crotchOf(wears: [Vec3, Vec3][], body = true) {
    const positions: number[] = [], triangles: number[] = [];
    if (body) {
      addBox(positions, triangles, [-0.1, -0.1, -0.05], [0.1, 0.3, 0.05]);
      addBox(positions, triangles, [0.03, -0.5, -0.05], [0.1, -0.1, 0.05]);
      addBox(positions, triangles, [-0.1, -0.5, -0.05], [-0.03, -0.1, 0.05]);
    }
    for (const [min, max] of wears) addBox(positions, triangles, min, max);
    const p = new Float32Array(positions), t = new Uint32Array(triangles);
    return crotchThroughClothing(p, t, meshShells(p, t).shellOf, 0, 179, 0, 256, 205);
  }
  const crotchRowOf = (wears: [Vec3, Vec3][], body = true) => crotchOf(wears, body).row;

  it('finds where the body\'s legs part on the midline, under a coat, with a jacket or a cape behind, or with nothing on', () => {
    expect(crotchRowOf([])).toBe(102);
    // a coat around the body down to y -0.35: crossed lower down the midline than the body, its hem is not the crotch
    expect(crotchRowOf([[[-0.12, -0.35, -0.07], [0.12, 0.28, 0.07]]])).toBe(102);
    // a cape behind the body down to the floor
    expect(crotchRowOf([[[-0.15, -0.5, -0.09], [0.15, 0.28, -0.07]]])).toBe(102);
    // a jacket ending above the crotch does not reach the legs, and is no body
    expect(crotchRowOf([[[-0.12, 0.0, -0.07], [0.12, 0.28, 0.07]]])).toBe(102);
    // with no piece reaching the legs crossed at the chest (a torso alone), there is no reading
    const positions: number[] = [], triangles: number[] = [];
    addBox(positions, triangles, [-0.1, -0.1, -0.05], [0.1, 0.3, 0.05]);
    const p = new Float32Array(positions), t = new Uint32Array(triangles);
    expect(crotchThroughClothing(p, t, meshShells(p, t).shellOf, 0, 179, 0, 256, 205)).toEqual({ row: -1, covered: false, coveredInFront: false, pelvisRow: -1 });
  });

  it('reads the pelvis where the body grows half as thick down the midline as over its crotch, over thighs that touch', () => {
    // the box body's torso is as thick from its bottom up: the pelvis's row is the crotch's
    expect(crotchOf([]).pelvisRow).toBe(102);
    // thighs touching on the midline for 0.1 under the torso, 0.02 thick against its 0.1: the midline leaves the body
    // at row 77, and the pelvis (half the torso's thickness or more) starts at the torso's bottom again
    const positions: number[] = [], triangles: number[] = [];
    addBox(positions, triangles, [-0.1, -0.1, -0.05], [0.1, 0.3, 0.05]);
    addBox(positions, triangles, [0.03, -0.5, -0.05], [0.1, -0.1, 0.05]);
    addBox(positions, triangles, [-0.1, -0.5, -0.05], [-0.03, -0.1, 0.05]);
    addBox(positions, triangles, [-0.04, -0.2, -0.01], [0.04, -0.099, 0.01]);
    const p = new Float32Array(positions), t = new Uint32Array(triangles);
    const through = crotchThroughClothing(p, t, new Int32Array(p.length / 3), 0, 179, 0, 256, 205);
    expect(through.row).toBe(77);
    expect(through.pelvisRow).toBe(102);
  });

  it('tells whether a piece of its own covers the body\'s crotch, and in front: a coat does, a cape behind only, a jacket not', () => {
    expect(crotchOf([])).toMatchObject({ covered: false, coveredInFront: false });
    // the coat wraps the body: in front of its back
    expect(crotchOf([[[-0.12, -0.35, -0.07], [0.12, 0.28, 0.07]]])).toMatchObject({ covered: true, coveredInFront: true });
    // the cape lies behind the body's back (z -0.05): the front view still shows the legs
    expect(crotchOf([[[-0.15, -0.5, -0.09], [0.15, 0.28, -0.07]]])).toMatchObject({ covered: true, coveredInFront: false });
    expect(crotchOf([[[-0.12, 0.0, -0.07], [0.12, 0.28, 0.07]]])).toMatchObject({ covered: false, coveredInFront: false });
  });
});

describe('the hips over the crotch read through a coat', () => {
  // Coats of their own piece, the body whole beneath. The network guessed the hip joints from the coat's outline (6.6 %
  // of the height too high on 11 000 064 and 13 000 005, arms posed apart); on 15 000 033 both it and the rules' hem
  // put them low (18 %). Now the hip joints stand over the body's pelvis, seen down the midline through the coat
  // (crotchThroughClothing, hipsOverTheCrotch)
  it.each([11_000_064, 13_000_005, 15_000_033])('puts procedural humanoid %i\'s hip joints and Hips over its own crotch', async (seed) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    expect(character.meta.clothing as string[]).toContain('long coat');
    const errors = await rigJointErrors(character);
    const at = (name: string) => errors[SCORED_JOINTS.indexOf(name as never)];
    // measured, % of the height (LeftUpLeg / RightUpLeg / Hips / Spine): 1.07 / 0.94 / 1.02 / 0.46 (11 000 064),
    // 0.61 / 0.67 / 0.35 / 0.27, 1.92 / 1.97 / 1.06 / 2.36; over the crotch (the band of 0.03–0.12 of the height),
    // 2.70 / 2.65 / 2.25 / 1.95, 1.09 / 1.11 / 1.91 / 1.37 and 2.35 / 2.39 / 0.81 / 1.20; before either, 6.6 / 6.6 /
    // 6.5 / 5.1, 6.6 / 6.6 / 6.1 / 4.7 and 18.0 / 18.0 / 11.1 / 5.3
    for (const name of ['LeftUpLeg', 'RightUpLeg', 'Hips', 'Spine']) expect(at(name), name).toBeLessThan(0.03);
  }, 60_000);

  // 18 000 046 wears a long coat of its own piece down to its shins. The rules read its hem as the crotch and put their
  // hip joints 0.016 of the height over the body's crotch, which hipsOverTheCrotch kept at the band's edge; their knees
  // then stood under the network's (0.53 sure, 3.7 % high), and the thighs so short against the shins
  // (thighsShorterThanShins) that the network's Hips and hip joints, 7 % high, stood in. Now the hip joints stand over
  // the body's pelvis, and a knee the coat hides halfway down its leg. 15 000 033's knees, hidden by its coat, stood 5 %
  // of the height low
  it.each([
    [18_000_046, { Hips: 0.015, LeftUpLeg: 0.04, RightUpLeg: 0.04, LeftLeg: 0.02, RightLeg: 0.02 }],
    [15_000_033, { LeftLeg: 0.02, RightLeg: 0.02 }],
  ] as const)('puts procedural humanoid %i\'s hip joints over its own crotch and its knees halfway down its hidden legs', async (seed, bounds) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    expect(character.meta.clothing as string[]).toContain('long coat');
    const errors = await rigJointErrors(character);
    // measured (18 000 046) Hips 1.0 %, hip joints 2.8 % (the rules' x, across the coat), knees 0.7 %; before, 6.7,
    // 7.0 and 3.8 %. 15 000 033's knees 0.3 and 0.6 %; before, 5.0 %
    for (const [name, bound] of Object.entries(bounds)) expect(errors[SCORED_JOINTS.indexOf(name as never)], name).toBeLessThan(bound);
  }, 60_000);

  // Skirts and long coats of their own piece: the network guessed the hip joints from their outline, and they stood
  // inside the band of heights over the crotch it was checked against (0.03–0.12 of the height) but 3–9 % off. The
  // body's crotch lies 0.04–0.17 under its hip joints (thighs that touch under the pelvis take the midline down with
  // them); the row where the body grows half as thick down the midline as over its pelvis lies 0.034–0.076 under them.
  // Now every hip joint stands HIP_ABOVE_PELVIS over that row (crotchThroughClothing's pelvisRow). 19 000 054 is from
  // seeds not looked at when the rule was made
  it.each([15_000_039, 18_000_058, 18_000_076, 19_000_054])('puts procedural humanoid %i\'s hip joints and Hips over its own pelvis', async (seed) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    expect((character.meta.clothing as string[]).some((c) => c === 'skirt' || c === 'long coat')).toBe(true);
    const errors = await rigJointErrors(character);
    const at = (name: string) => errors[SCORED_JOINTS.indexOf(name as never)];
    // measured, % of the height (LeftUpLeg / RightUpLeg / Hips): 1.1 / 1.1 / 0.7 (15 000 039), 1.2 / 1.2 / 0.8,
    // 0.6 / 0.7 / 0.7 and 3.1 / 3.1 / 2.9 (19 000 054, its pelvis's row 0.085 under its hip joints, the most seen);
    // before, 4.0 / 4.0 / 3.6, 4.3 / 4.2 / 3.9, 3.4 / 3.4 / 3.7 and 8.7 / 8.7 / 8.8
    for (const name of ['LeftUpLeg', 'RightUpLeg', 'Hips']) expect(at(name), name).toBeLessThan(seed === 19_000_054 ? 0.04 : 0.02);
  }, 60_000);

  // Nothing hides 16 000 060's legs: its body's crotch on the midline lies 0.023 of the height over the silhouette's and
  // 0.15 under its hip joints, deeper than on any of 76 humanoids surveyed. Read as a crotch through clothes, it
  // moved the network's hip joints 6.7 % off; the crotch through clothes must lie 0.05 over the silhouette's
  // (CROTCH_THROUGH_CLOTHES_MARGIN), as a hem does
  it('leaves procedural humanoid 16 000 060\'s hip joints, with nothing on, where the network read them', async () => {
    const character = generateProceduralHumanoid(16_000_060, { targetVertices: 20_000 });
    expect((character.meta.clothing as string[]).some((c) => /coat|skirt|robe|cape/.test(c))).toBe(false);
    const errors = await rigJointErrors(character);
    // measured 0.29 % each, and the Hips 0.29 %; at a 0.02 margin, 6.7 and 7.0 %
    for (const name of ['LeftUpLeg', 'RightUpLeg', 'Hips']) expect(errors[SCORED_JOINTS.indexOf(name as never)], name).toBeLessThan(0.015);
  }, 60_000);
});

describe('the rules\' hip joints far under the network\'s', () => {
  /** procedural 34 000 050's (mirrored) network joints, canonical, at the given confidence of its hip joints */
  const prediction = (hipConfidence: number) => {
    const xy = new Float64Array(2 * MIXAMO_JOINTS.length), confidence = new Float32Array(MIXAMO_JOINTS.length).fill(0.6);
    const put = (joint: MixamoJointName, x: number, y: number) => { const k = MIXAMO_JOINTS.indexOf(joint); xy[2 * k] = x; xy[2 * k + 1] = y; };
    put('LeftUpLeg', 0.048, 0.002); put('RightUpLeg', -0.05, 0.002); put('LeftLeg', 0.063, -0.238); put('RightLeg', -0.063, -0.238);
    confidence[MIXAMO_JOINTS.indexOf('LeftUpLeg')] = hipConfidence; confidence[MIXAMO_JOINTS.indexOf('RightUpLeg')] = hipConfidence;
    return { xy, confidence };
  };
  const G = 'geometric' as const, L = 'learned' as const;

  it('gives way to the network\'s where they stand far enough under, and the network is sure enough of its own', () => {
    // the rules' read from the coat's hem: 0.143 under the network's, 0.6 of its drop to the knees
    const points = { LeftUpLeg: [0.064, -0.141], RightUpLeg: [-0.064, -0.141] } as Record<string, [number, number]>;
    expect(rulesHipJointsUnderNetwork(points, { LeftUpLeg: G, RightUpLeg: G }, prediction(0.47))).toBe(true);
    // under the confidence, the network's own already taken, or the rules' just within the share: the rules' stand
    expect(rulesHipJointsUnderNetwork(points, { LeftUpLeg: G, RightUpLeg: G }, prediction(HIP_JOINTS_NETWORK_MIN_CONFIDENCE - 0.01))).toBe(false);
    expect(rulesHipJointsUnderNetwork(points, { LeftUpLeg: G, RightUpLeg: L }, prediction(0.47))).toBe(false);
    const within = 0.002 - 0.99 * HIP_JOINTS_UNDER_NETWORK * 0.24;
    expect(rulesHipJointsUnderNetwork({ LeftUpLeg: [0.064, within], RightUpLeg: [-0.064, within] }, { LeftUpLeg: G, RightUpLeg: G }, prediction(0.47))).toBe(false);
    // over the network's (a reading the other way): not this remedy's
    expect(rulesHipJointsUnderNetwork({ LeftUpLeg: [0.064, 0.1], RightUpLeg: [-0.064, 0.1] }, { LeftUpLeg: G, RightUpLeg: G }, prediction(0.47))).toBe(false);
  });

  // Each wears a long coat fused to the body: the rules read its hem as the crotch, and the network, right, was just
  // under the hybrid's confidence (0.43–0.49) in one arm mode and over it in the other
  it.each([[34_000_050, false], [33_000_018, true]])('puts procedural humanoid %i\'s Hips, hip joints and knees at its own, not its coat\'s hem (arms apart: %s)', async (seed, asymmetricArms) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms });
    expect(character.meta.clothing as string[]).toContain('long coat');
    const errors = await rigJointErrors(character);
    // measured 1.9 / 2.2 / 2.5 % (34 000 050) and 1.3 / 1.3 / 1.0 % (33 000 018); before, 9.1 / 16.5 / 7.8 and 9.4 / 9.2 / 6.4
    for (const name of ['Hips', 'LeftUpLeg', 'RightUpLeg', 'LeftLeg', 'RightLeg']) expect(errors[SCORED_JOINTS.indexOf(name as never)], name).toBeLessThan(0.035);
  }, 60_000);
});

describe('a skirt fused to the body', () => {
  it('is told by a thigh far shorter than its shin', () => {
    const legs = (hip: number) => ({ LeftUpLeg: [0.1, hip], LeftLeg: [0.1, -0.2], LeftFoot: [0.1, -0.45], RightUpLeg: [-0.1, hip], RightLeg: [-0.1, -0.2], RightFoot: [-0.1, -0.45] } as Record<string, [number, number]>);
    // a shin of 0.25: thighs of 0.25 (in proportion) and 0.1 (a hem's)
    expect(thighsShorterThanShins(legs(0.05), THIGH_OVER_SHIN_MIN)).toBe(false);
    expect(thighsShorterThanShins(legs(-0.1), THIGH_OVER_SHIN_MIN)).toBe(true);
    // one leg in proportion is enough to keep the reading
    expect(thighsShorterThanShins({ ...legs(-0.1), LeftUpLeg: [0.1, 0.05] }, THIGH_OVER_SHIN_MIN)).toBe(false);
    // a leg without its knee says nothing
    const kneeless = legs(-0.1);
    delete kneeless.LeftLeg;
    expect(thighsShorterThanShins(kneeless, THIGH_OVER_SHIN_MIN)).toBe(false);
  });

  // 16 000 076 wears a skirt whose hem, 0.1 of the height over the soles, is fused to its legs, and a cape: the rules
  // read the hem as the crotch, and the thighs they gave measured 0.25 of the shins. The network was right there, but
  // under the hybrid's confidence (0.32–0.48); its Hips and hip joints now stand in
  it.each([true, false])('puts procedural humanoid 16 000 076\'s Hips and hip joints at its hips, not its hem (arms apart: %s)', async (asymmetricArms) => {
    const character = generateProceduralHumanoid(16_000_076, { targetVertices: 20_000, asymmetricArms });
    expect(character.meta.clothing as string[]).toContain('skirt');
    const errors = await rigJointErrors(character);
    // measured 1.9 / 2.6 / 2.7 % (arms apart) and 2.6 / 2.5 / 2.5 % (mirrored); before, 22.8 / 20.3 / 20.3 and 22.6 / 20.0 / 20.0
    for (const name of ['Hips', 'LeftUpLeg', 'RightUpLeg']) expect(errors[SCORED_JOINTS.indexOf(name as never)], name).toBeLessThan(0.035);
  }, 60_000);
});

describe('legs a cape and a coat hide down to the floor', () => {
  // 19 000 017 wears a long coat and a cape to the floor, each a piece of its own: the silhouette shows no gap between
  // the legs, and the rules put the crotch at a share of its height, a brim hat's crown included, 0.10 of the height
  // over the body's own. The body's crotch was read through the clothes, but only where it lies over the silhouette's:
  // the rules' Hips stood 17.5 % of the height high, over the network's Spine2. Now the body's crotch stands in either
  // way where the legs show no gap (hipsOverTheCrotch), and the Spine and Spine1 divide the trunk in order over it
  it.each([true, false])('puts procedural humanoid 19 000 017\'s Hips and hip joints over its own crotch, the spine in order (arms apart: %s)', async (asymmetricArms) => {
    const character = generateProceduralHumanoid(19_000_017, { targetVertices: 20_000, asymmetricArms });
    expect(character.meta.clothing as string[]).toEqual(expect.arrayContaining(['long coat', 'cape', 'brim hat']));
    const height = character.meta.heightMetres as number;
    const rig = await rigCharacterAsync(character.parts);
    const head = (name: string) => rig.skeleton.joints.find((j) => j.name === `mixamorig:${name}`)!.head;
    const error = (name: string) => {
      const k = MIXAMO_JOINTS.indexOf(name as never);
      return Math.hypot(...head(name).map((x, i) => x - character.joints[3 * k + i])) / height;
    };
    // measured 1.5 / 1.6 / 1.6 % (Hips, hip joints) and Spine 1.4 % (arms apart; mirrored 1.5 / 1.7 / 1.6 and 1.4);
    // before, 17.5 / 15.5 / 15.5 and 3.4 (3.6 mirrored)
    for (const name of ['Hips', 'LeftUpLeg', 'RightUpLeg', 'Spine']) expect(error(name), name).toBeLessThan(0.03);
    const up = rig.frame.up;
    const along = (name: string) => head(name).reduce((sum, x, i) => sum + x * up[i], 0);
    expect(along('Hips')).toBeLessThan(along('Spine'));
    expect(along('Spine')).toBeLessThan(along('Spine1'));
    expect(along('Spine1')).toBeLessThan(along('Spine2'));
  }, 60_000);
});
