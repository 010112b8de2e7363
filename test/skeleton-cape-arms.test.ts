/**
 * Arms over a cape that hides the legs (sidecar/skeleton/landmarks2d.ts handTip): with no gap between the legs in the
 * front view, the rules have no legs to stand a body on and need both hands' tips. A hand whose fingertips the raster
 * cuts off (a pixel or two beyond the hand, not touching it) hid its tip: the search for the farthest point from the
 * neck counted those unreachable pixels as farther, so no pixel of the hand was a local maximum; before refusing, the
 * search now runs again without them (only then: elsewhere they keep a dead end in long hair from passing for a
 * hand, as on the artists' mixamo_ely). Seven of 160
 * procedural development humanoids (9 200 000–079, 9 400 000–079), every one wearing a cape, were refused
 * NOT_HUMANOID "two arms were not found", arms held out or hanging down. Where a cape hides the arms hanging
 * inside it as well as the legs, the silhouette has neither; the hybrid's network, confident of both arms, vouches
 * for them and the rules lay them along the body's sides.
 */
import { describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { ARM_MIN_STRETCH, ARM_RAY_GAP, ARM_ROOT_RAY_GAP, armJointsOnTheirOwnStretch } from '../sidecar/skeleton/armDepths.js';
import { HYBRID_MIN_CONFIDENCE, networkSawArms } from '../sidecar/skeleton/estimateSkeleton.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';
import { rigJointErrors, SCORED_JOINTS } from './fixtures/riggedProcedural.js';

describe('whether the network saw both arms', () => {
  const prediction = (armConfidence: number) => {
    const confidence = new Float32Array(MIXAMO_JOINTS.length).fill(0.9);
    for (const side of ['Left', 'Right']) for (const joint of ['Arm', 'ForeArm', 'Hand']) confidence[MIXAMO_JOINTS.indexOf(`${side}${joint}` as never)] = armConfidence;
    return { xy: new Float64Array(2 * MIXAMO_JOINTS.length), confidence };
  };
  it('reads the mean confidence of the six arm joints against HYBRID_MIN_CONFIDENCE', () => {
    expect(networkSawArms(prediction(HYBRID_MIN_CONFIDENCE))).toBe(true);
    expect(networkSawArms(prediction(HYBRID_MIN_CONFIDENCE - 0.01))).toBe(false);
    const one = prediction(0.7);
    one.confidence[MIXAMO_JOINTS.indexOf('LeftForeArm')] = 0.2; // one unsure joint of six does not sink the mean
    expect(networkSawArms(one)).toBe(true);
  });
});

describe('a humanoid whose cape hides its legs', () => {
  // 9 200 007: arms down, the cape fused to the body; 9 200 021: A-pose, cape, long hair and a cap;
  // 9 200 059: T-pose, cape and long hair
  // 9 800 060, 9 800 067: arms down inside a cape that hides them and the legs (nothing of either in the silhouette):
  // the rules lay the arms along the sides because the network saw them (networkSawArms), and the hybrid takes the
  // network's arm joints, at its depth (the arm's ray crosses the cape behind it: 9 800 067's hands were 5.1 % off)
  it.each([9_200_007, 9_200_021, 9_200_059, 9_800_060, 9_800_067])('procedural humanoid %i is rigged, its joints where the generator put them', async (seed) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000 });
    expect(character.meta.clothing).toContain('cape');
    const errors = await rigJointErrors(character);
    // measured: mean 0.76 / 0.97 / 0.41 / 1.19 / 0.91 %, worst joint 1.2 / 2.6 / 1.2 / 2.3 / 1.8 % of the height;
    // before, refused
    expect(errors.reduce((a, b) => a + b, 0) / errors.length).toBeLessThan(0.015);
    expect(Math.max(...errors)).toBeLessThan(0.035);
  }, 60_000);
});

describe('hands hanging in front of a cape', () => {
  // 15 000 022 (mirrored) hangs its hands in front of a bell-shaped cape: each wrist's ray meets the hand, thin against
  // the ray's whole span through the cape behind (liftJoints MIN_FRONT_PIECE_SHARE, meant for a pendant), and read the
  // cape, 0.16 of the canonical height behind the hand. The hand's piece holds the elbow's depth, and lies wholly in
  // front of the cape: the wrist is read on it (armJointsOnTheirParentsPiece, inFrontOnly for mirrored arms)
  it('puts procedural humanoid 15 000 022\'s wrists in its hands, not in the cape behind them', async () => {
    const character = generateProceduralHumanoid(15_000_022, { targetVertices: 20_000 });
    expect(character.meta.clothing).toContain('cape');
    const errors = await rigJointErrors(character);
    // measured 1.9 and 1.8 %; before, 11.4 and 12.9 %
    for (const name of ['LeftHand', 'RightHand'] as const) expect(errors[SCORED_JOINTS.indexOf(name)], name).toBeLessThan(0.04);
  }, 60_000);

  // A cape fused to the body, a few hundredths behind a hanging arm: the elbow's ray crossed the arm, the narrow gap and
  // the cape, and read their midpoint (38 000 007's left elbow 0.029 of the canonical height behind the arm); the wrist,
  // whose ray crosses a gap as wide as ARM_RAY_GAP, then took the stretch nearest that elbow: the cape's. The elbow is
  // read on its own stretch from a gap of ARM_ROOT_RAY_GAP, and the wrist follows it into the hand.
  it.each([
    { seed: 38_000_007, asymmetricArms: true, side: 'Left' },
    { seed: 39_000_025, asymmetricArms: false, side: 'Left' },
  ])('puts procedural humanoid $seed\'s $side wrist in its hand, in front of the cape', async ({ seed, asymmetricArms, side }) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms });
    expect(character.meta.clothing).toContain('cape');
    const errors = await rigJointErrors(character);
    // measured: wrist 3.9 / 1.0 %, elbow 2.2 / 1.1 % of the height; before, wrists 13.2 / 8.7 %
    expect(errors[SCORED_JOINTS.indexOf(`${side}Hand` as never)]).toBeLessThan(0.05);
    expect(errors[SCORED_JOINTS.indexOf(`${side}ForeArm` as never)]).toBeLessThan(0.03);
  }, 60_000);
});

describe('a wrist whose ray crosses its hand, a gap and what hangs behind', () => {
  type Vec3 = [number, number, number];
  // a hanging left arm whose elbow stands at depth `elbow`; the wrist's whole read span runs over `stretches`
  const wristOver = (elbow: number, stretches: number[]) => {
    const front = stretches[0], back = stretches[stretches.length - 1];
    const c: Record<string, Vec3> = { LeftForeArm: [0.13, 0.1, elbow], LeftHand: [0.137, -0.06, 0.5 * (front + back)] };
    const spans: Record<string, number> = { LeftForeArm: 0.05, LeftHand: front - back };
    armJointsOnTheirOwnStretch(c, spans, { LeftHand: Float64Array.from(stretches) });
    return { z: c.LeftHand[2], span: spans.LeftHand };
  };

  it('takes the front stretch where that is also the one nearest the elbow (a hand before a cape)', () => {
    // 48 000 073's left wrist: the hand 0.054 → 0.017, a gap of 0.096 (under ARM_RAY_GAP), the cape behind
    const { z, span } = wristOver(0.002, [0.054, 0.017, -0.079, -0.112]);
    expect(0.017 - -0.079).toBeLessThan(ARM_RAY_GAP);
    expect(z).toBeCloseTo(0.0355, 6);
    expect(span).toBeCloseTo(0.037, 6);
  });

  it('keeps the read where the stretch nearest the elbow is not the front one (sleeve layers, a blade)', () => {
    // 15 000 003's left wrist (arms posed apart, wide sleeves, a sword): the generator's wrist lies in the gap
    const stretches = [-0.0078, -0.0422, -0.0854, -0.1785];
    expect(wristOver(-0.1856, stretches).z).toBeCloseTo(0.5 * (-0.0078 + -0.1785), 6);
  });

  it('reads across no gap under ARM_ROOT_RAY_GAP, and onto no front stretch shorter than ARM_MIN_STRETCH', () => {
    const narrow = [0.05, 0.01, 0.01 - 0.9 * ARM_ROOT_RAY_GAP, -0.03];
    expect(wristOver(0.02, narrow).z).toBeCloseTo(0.5 * (0.05 - 0.03), 6);
    const short = [0.05, 0.05 - 0.9 * ARM_MIN_STRETCH, 0, -0.03];
    expect(wristOver(0.04, short).z).toBeCloseTo(0.5 * (0.05 - 0.03), 6);
  });

  // A cape fused to the body behind hands hanging forward (48 000 073) and a wide sleeve's back behind a hand reaching
  // out of it (23 000 020): each wrist's ray crossed the hand, a gap and what lies behind, and read their midpoint
  it.each([
    { seed: 48_000_073, bound: 0.03 },
    { seed: 23_000_020, bound: 0.012 },
  ])('puts procedural humanoid $seed\'s wrists in its hands', async ({ seed, bound }) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000 });
    const errors = await rigJointErrors(character);
    // measured 1.24 / 1.45 % (48 000 073) and 0.23 / 0.46 % (23 000 020); before, 6.82 / 6.67 and 2.40 / 2.38 %
    for (const name of ['LeftHand', 'RightHand'] as const) expect(errors[SCORED_JOINTS.indexOf(name)], name).toBeLessThan(bound);
  }, 60_000);
});
