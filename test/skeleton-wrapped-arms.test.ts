/**
 * A shoulder or arm joint whose ray meets first a piece that wraps the limb along the ray (sidecar/skeleton/
 * armDepths.ts armJointsInsideWhatWrapsThem): a chibi's cone hat hanging down over its shoulders, long hair round
 * the upper arm. The front piece's midpoint is the wrapper's, behind the arm; the joint is read on the wrapped piece,
 * the one that holds its parent joint's depth, instead.
 */
import { describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { armJointsInsideWhatWrapsThem, armJointsWhoseRayMissedTheLimb } from '../sidecar/skeleton/armDepths.js';
import type { ClosedPieceHit } from '../sidecar/skeleton/liftJoints.js';
import type { Vec3 } from '../sidecar/types.js';
import { rigJointErrors, SCORED_JOINTS } from './fixtures/riggedProcedural.js';

type Pieces = Record<string, { piece: number; closed: ClosedPieceHit[] }>;

describe('an arm joint inside what wraps it along its ray', () => {
  // procedural 22 000 062's left upper arm (canonical units): the body (piece 0) holds the shoulder; the hat (piece 3)
  // wraps the upper arm along its ray, in front of it and far behind
  const lifted = (): { c: Record<string, Vec3>; spans: Record<string, number> } => ({
    c: { Spine2: [0, -0.22, -0.005], LeftShoulder: [0.034, -0.171, -0.008], LeftArm: [0.068, -0.177, -0.042] },
    spans: { Spine2: 0.116, LeftShoulder: 0.084, LeftArm: 0.117 },
  });
  const pieces: Pieces = {
    Spine2: { piece: 0, closed: [{ piece: 0, front: 0.05, back: -0.066 }] },
    LeftShoulder: { piece: 0, closed: [{ piece: 0, front: 0.034, back: -0.05 }, { piece: 3, front: 0.019, back: -0.13 }] },
    LeftArm: { piece: 3, closed: [{ piece: 3, front: 0.017, back: -0.1 }, { piece: 0, front: 0.012, back: -0.026 }] },
  };

  it('is read on the wrapped piece that holds its parent\'s depth', () => {
    const { c, spans } = lifted();
    armJointsInsideWhatWrapsThem(c, spans, pieces);
    expect(c.LeftArm[2]).toBeCloseTo(-0.007, 6);
    expect(spans.LeftArm).toBeCloseTo(0.038, 6);
    // the shoulder read the body already, and stays
    expect(c.LeftShoulder[2]).toBe(-0.008);
  });

  it('stays where the piece inside holds not the parent (a sword\'s grip in the fist), or is the longer along the ray', () => {
    const grip: Pieces = { ...pieces, LeftArm: { piece: 0, closed: [{ piece: 0, front: 0.017, back: -0.1 }, { piece: 5, front: 0.012, back: -0.026 }] } };
    const a = lifted();
    armJointsInsideWhatWrapsThem(a.c, a.spans, grip);
    expect(a.c.LeftArm[2]).toBe(-0.042);
    // the body sticks out of the hat's back, longer along the ray than the hat: the two overlap, the hat wraps nothing
    const overlap: Pieces = { ...pieces, LeftArm: { piece: 3, closed: [{ piece: 3, front: 0.017, back: -0.1 }, { piece: 0, front: 0.012, back: -0.12 }] } };
    const b = lifted();
    armJointsInsideWhatWrapsThem(b.c, b.spans, overlap);
    expect(b.c.LeftArm[2]).toBe(-0.042);
  });

  // procedural 24 000 044's right forearm, raised forward in a wide sleeve (posed apart): the elbow read the arm (piece
  // 0) inside the sleeve (piece 2); the wrist's ray grazes the hand where it leaves the cuff, a sliver the lift passed
  // as a pendant, and read the cuff's midpoint, 0.04 of the canonical height behind it (the wrist 5.2 % of the height off)
  const cuff = (hand: ClosedPieceHit): { c: Record<string, Vec3>; spans: Record<string, number>; pieces: Pieces } => ({
    c: { RightForeArm: [-0.32, 0.357, -0.046], RightHand: [-0.433, 0.425, 0.025] },
    spans: { RightForeArm: 0.057, RightHand: 0.08 },
    pieces: {
      RightForeArm: { piece: 0, closed: [{ piece: 2, front: -0.008, back: -0.084 }, { piece: 0, front: -0.017, back: -0.074 }] },
      RightHand: { piece: 2, closed: [hand, { piece: 2, front: 0.065, back: -0.015 }] },
    },
  });

  it('is read on the limb sticking out of the wrapper by under half its span, where it is the shorter of the two', () => {
    const { c, spans, pieces: read } = cuff({ piece: 0, front: 0.066, back: 0.054 });
    armJointsInsideWhatWrapsThem(c, spans, read);
    expect(c.RightHand[2]).toBeCloseTo(0.06, 6);
    expect(spans.RightHand).toBeCloseTo(0.012, 6);
    expect(read.RightHand.piece).toBe(0);
    // a hand wholly in front of the cuff, or touching it by a quarter of its span, is apart from it: the read stands
    for (const hand of [{ piece: 0, front: 0.09, back: 0.07 }, { piece: 0, front: 0.08, back: 0.06 }]) {
      const apart = cuff(hand);
      armJointsInsideWhatWrapsThem(apart.c, apart.spans, apart.pieces);
      expect(apart.c.RightHand[2]).toBe(0.025);
      expect(apart.pieces.RightHand.piece).toBe(2);
    }
    // a sleeve's cuff half inside the hand read on the arm (mirrored 16 000 051) is no limb sticking out of a wrapper
    const hand = cuff({ piece: 0, front: 0.066, back: 0.054 });
    hand.pieces.RightHand = { piece: 0, closed: [{ piece: 0, front: 0.039, back: 0.016 }, { piece: 2, front: 0.022, back: 0.011 }] };
    armJointsInsideWhatWrapsThem(hand.c, hand.spans, hand.pieces);
    expect(hand.c.RightHand[2]).toBe(0.025);
    expect(hand.pieces.RightHand.piece).toBe(0);
  });

  it('puts procedural humanoid 24 000 044\'s right wrist, raised forward out of a wide sleeve, in the hand', async () => {
    const character = generateProceduralHumanoid(24_000_044, { targetVertices: 20_000, asymmetricArms: true });
    const errors = await rigJointErrors(character);
    expect(errors[SCORED_JOINTS.indexOf('RightHand')]).toBeLessThan(0.035);
  }, 60_000);

  // the generator's chibis: 22 000 062 (mirrored) under a cone hat down to its shoulders, its upper-arm joints 6.6 and
  // 6.8 % of the height off; 19 000 049 (arms posed apart) under short hair and a brim hat, its left upper arm 6.4 %
  it.each([
    [22_000_062, false, ['LeftArm', 'RightArm'], 0.04],
    [19_000_049, true, ['LeftArm'], 0.02],
  ] as const)('puts procedural humanoid %i\'s upper arms in the arm, not the hat or the hair round it', async (seed, asymmetricArms, names, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms });
    const errors = await rigJointErrors(character);
    for (const name of names) expect(errors[SCORED_JOINTS.indexOf(name)], name).toBeLessThan(bound);
  }, 60_000);
});

describe('an arm joint whose ray meets only what wrapped the limb up its chain', () => {
  // procedural 17 000 051's left arm (mirrored, canonical units): long hair (piece 4) wraps the body (piece 0) on the
  // shoulder's ray; the upper-arm and elbow joints stand a little over the thin arm, and their rays meet the hair alone
  const lifted = (): { c: Record<string, Vec3>; spans: Record<string, number> } => ({
    c: {
      Spine2: [0.002, -0.139, -0.035], LeftShoulder: [0.037, -0.069, -0.038], LeftArm: [0.072, -0.078, -0.106],
      LeftForeArm: [0.138, -0.078, -0.103], LeftHand: [0.215, -0.108, -0.008],
    },
    spans: { Spine2: 0.081, LeftShoulder: 0.056, LeftArm: 0.21, LeftForeArm: 0.14, LeftHand: Number.NaN },
  });
  const pieces: Pieces = {
    Spine2: { piece: 0, closed: [{ piece: 0, front: 0.005, back: -0.075 }, { piece: 4, front: -0.094, back: -0.156 }] },
    // read on the body inside the hair (armJointsInsideWhatWrapsThem)
    LeftShoulder: { piece: 0, closed: [{ piece: 4, front: 0.004, back: -0.225 }, { piece: 0, front: -0.01, back: -0.066 }] },
    LeftArm: { piece: 4, closed: [{ piece: 4, front: -0.001, back: -0.211 }] },
    LeftForeArm: { piece: 4, closed: [{ piece: 4, front: -0.033, back: -0.173 }] },
    LeftHand: { piece: -1, closed: [] },
  };

  it('takes its parent\'s depth, down the chain, and leaves a joint its ray read elsewhere', () => {
    const { c, spans } = lifted();
    expect(armJointsWhoseRayMissedTheLimb(c, spans, pieces)).toEqual(['LeftArm', 'LeftForeArm']);
    expect(c.LeftArm[2]).toBe(-0.038);
    expect(c.LeftForeArm[2]).toBe(-0.038);
    expect(spans.LeftForeArm).toBe(0.056);
    // the wrist's ray met nothing closed: the lift's fallback stands
    expect(c.LeftHand[2]).toBe(-0.008);
    expect(c.LeftShoulder[2]).toBe(-0.038);
  });

  it('stays where its ray meets the limb inside the wrapper, or a piece of its own, or nothing wrapped it', () => {
    // a sleeve: the elbow's ray meets the arm inside it
    const sleeve: Pieces = { ...pieces, LeftForeArm: { piece: 4, closed: [{ piece: 4, front: -0.033, back: -0.173 }, { piece: 0, front: -0.04, back: -0.07 }] } };
    const a = lifted();
    expect(armJointsWhoseRayMissedTheLimb(a.c, a.spans, sleeve)).toEqual(['LeftArm']);
    expect(a.c.LeftForeArm[2]).toBe(-0.103);
    // a modular character's arm, a piece of its own (5)
    const modular: Pieces = {
      ...pieces, LeftArm: { piece: 5, closed: [{ piece: 5, front: -0.02, back: -0.06 }] }, LeftForeArm: { piece: 5, closed: [{ piece: 5, front: -0.03, back: -0.06 }] },
    };
    const b = lifted();
    expect(armJointsWhoseRayMissedTheLimb(b.c, b.spans, modular)).toEqual([]);
    expect(b.c.LeftArm[2]).toBe(-0.106);
    // hair behind the shoulder, not round it, or a coat fitted to it: nothing is a wrapper
    const behind: Pieces = { ...pieces, LeftShoulder: { piece: 0, closed: [{ piece: 0, front: -0.01, back: -0.066 }, { piece: 4, front: -0.05, back: -0.225 }] } };
    const d = lifted();
    expect(armJointsWhoseRayMissedTheLimb(d.c, d.spans, behind)).toEqual([]);
    const fitted: Pieces = { ...pieces, LeftShoulder: { piece: 0, closed: [{ piece: 4, front: 0.0, back: -0.08 }, { piece: 0, front: -0.01, back: -0.066 }] } };
    const e = lifted();
    expect(armJointsWhoseRayMissedTheLimb(e.c, e.spans, fitted)).toEqual([]);
    // a staff the forearm's ray meets inside the arm (12 000 008): the arm is the limb, not a wrapper of the staff, and
    // the wrist's ray that meets the arm alone read it
    const staff: Pieces = {
      ...pieces,
      LeftShoulder: { piece: 0, closed: [{ piece: 0, front: 0.038, back: -0.079 }] },
      LeftArm: { piece: 0, closed: [{ piece: 0, front: 0.009, back: -0.061 }, { piece: 7, front: -0.043, back: -0.066 }] },
      LeftForeArm: { piece: 0, closed: [{ piece: 0, front: 0.002, back: -0.051 }, { piece: 7, front: -0.024, back: -0.04 }] },
      LeftHand: { piece: 0, closed: [{ piece: 0, front: 0.007, back: -0.03 }] },
    };
    const f = lifted();
    expect(armJointsWhoseRayMissedTheLimb(f.c, f.spans, staff)).toEqual([]);
    expect(f.c.LeftHand[2]).toBe(-0.008);
  });

  // 17 000 051 (mirrored) under long hair round its arms: its elbows read the hair, 14.5 % of the height off each
  it('puts procedural humanoid 17 000 051\'s mirrored elbows in the arm, not the hair round it', async () => {
    const character = generateProceduralHumanoid(17_000_051, { targetVertices: 20_000, asymmetricArms: false });
    const errors = await rigJointErrors(character);
    for (const name of ['LeftArm', 'LeftForeArm', 'RightArm', 'RightForeArm'] as const) expect(errors[SCORED_JOINTS.indexOf(name)], name).toBeLessThan(0.04);
  }, 60_000);
});
