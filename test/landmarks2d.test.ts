import { describe, it, expect } from 'vitest';
import type { FrontView } from '../sidecar/skeleton/frontView.js';
import { findLandmarks2D, HELD_ACROSS_WRIST_RATIO, heldAcrossWrist } from '../sidecar/skeleton/landmarks2d.js';

const RES = 128;

/** A front view from axis-aligned boxes [i0, i1, j0, j1] (inclusive pixels), each with its depth half-extent. */
function boxesView(boxes: [number, number, number, number, number][]): FrontView {
  const mask = new Uint8Array(RES * RES);
  const zFront = new Float32Array(RES * RES).fill(-Infinity);
  const zBack = new Float32Array(RES * RES).fill(Infinity);
  for (const [i0, i1, j0, j1, half] of boxes) {
    for (let j = j0; j <= j1; j++) for (let i = i0; i <= i1; i++) {
      const p = j * RES + i;
      mask[p] = 1;
      zFront[p] = Math.max(zFront[p], half);
      zBack[p] = Math.min(zBack[p], -half);
    }
  }
  return { res: RES, mask, zFront, zBack };
}

// A blocky figure, midline at column 64: legs 0..49, torso 50..99 (columns 52..76), neck 100..104, head 105..124.
const LEGS: [number, number, number, number, number][] = [[53, 62, 0, 49, 0.04], [66, 75, 0, 49, 0.04]];
const TRUNK: [number, number, number, number, number][] = [[52, 76, 50, 99, 0.06], [60, 68, 100, 104, 0.03], [56, 72, 105, 124, 0.05]];

describe('front-view landmarks', () => {
  it('follows arms that hang beside the torso from the armpit down to the hand, not to the hem of a tunic', () => {
    // Shoulders widen the torso's top rows; the arms hang from there with a 2-pixel gap, tips at row 60. The tunic's
    // hem (rows 40..47, wider than the arms) has corners farther from the neck than the hands.
    const view = boxesView([
      [53, 62, 0, 39, 0.04], [66, 75, 0, 39, 0.04], [52, 76, 40, 99, 0.06], [38, 90, 40, 47, 0.07],
      [60, 68, 100, 104, 0.03], [56, 72, 105, 124, 0.05],
      [44, 84, 90, 99, 0.06], [44, 49, 60, 89, 0.03], [79, 84, 60, 89, 0.03],
    ]);
    const lm = findLandmarks2D(view);
    expect(lm.left.handTip[1]).toBeCloseTo(60, 0);
    expect(lm.left.handTip[0]).toBeCloseTo(81.5, 0);
    expect(lm.right.handTip[0]).toBeCloseTo(46.5, 0);
    // The shoulder joint sits in the arm's column, between the armpit and the base of the neck.
    expect(lm.left.arm[0]).toBeGreaterThan(78);
    expect(lm.left.arm[0]).toBeLessThan(85);
    expect(lm.left.arm[1]).toBeGreaterThan(89);
    expect(lm.left.arm[1]).toBeLessThan(100);
    // Elbow and wrist on the arm, in order down it.
    expect(lm.left.foreArm[1]).toBeLessThan(lm.left.arm[1]);
    expect(lm.left.hand[1]).toBeLessThan(lm.left.foreArm[1]);
    expect(lm.left.hand[1]).toBeGreaterThan(60);
    expect(lm.notes.some((n) => n.startsWith('left arm hangs down'))).toBe(true);
    // followed from the armpit: no arm held out, whose upper-arm joint would stand at the waist's width
    expect([lm.left.armHeldOut, lm.right.armHeldOut]).toEqual([false, false]);
  });

  it('reads the shoulder row from the neck in the width profile, and flags a guessed one where the profile shows none', () => {
    const tPose: [number, number, number, number, number][] = [[10, 118, 92, 97, 0.02]];
    const seen = findLandmarks2D(boxesView([...LEGS, ...TRUNK, ...tPose]));
    expect(seen.shouldersFromProportions).toBe(false);
    expect(seen.notes.some((n) => n.startsWith('no neck found'))).toBe(false);
    // a head far wider than the shoulders (a chibi two heads tall) narrows straight into a short torso: no neck
    const chibi = findLandmarks2D(boxesView([
      [56, 62, 0, 29, 0.04], [66, 72, 0, 29, 0.04], [55, 73, 30, 59, 0.05], [10, 118, 52, 56, 0.02],
      [34, 94, 60, 124, 0.2],
    ]));
    expect(chibi.shouldersFromProportions).toBe(true);
    expect(chibi.notes.some((n) => n.startsWith('no neck found'))).toBe(true);
  });

  it('puts the wrist of an arm held out where the palm widens in depth', () => {
    // T-pose: arms at rows 92..97 from the torso to columns 10 and 118; palms (thicker in z) from 20 columns inside the tips.
    const view = boxesView([
      ...LEGS, ...TRUNK,
      [10, 118, 92, 97, 0.02],
      [10, 29, 92, 97, 0.05], [99, 118, 92, 97, 0.05],
    ]);
    const lm = findLandmarks2D(view);
    expect(lm.notes.some((n) => n.includes('hangs down'))).toBe(false);
    expect([lm.left.armHeldOut, lm.right.armHeldOut]).toEqual([true, true]);
    expect(lm.left.handTip[0]).toBeCloseTo(118, 0);
    expect(Math.abs(lm.left.hand[0] - 99)).toBeLessThanOrEqual(2);
    expect(Math.abs(lm.right.hand[0] - 29)).toBeLessThanOrEqual(2);
  });

  it('tells a sword\'s blade seen across the forearm from a palm by how much deeper than the wrist it reads', () => {
    // T-pose as above. The left hand's palm reads 2.5 times its wrist's depth (0.1 against 0.04). On the right a blade
    // pointing forward and in projects back over the forearm (columns 18..25, 0.6 deep: 15 times the wrist), short of
    // the fist; the rules' wrist stands where that begins, and the landmarks say so for the hybrid to weigh
    const view = boxesView([
      ...LEGS, ...TRUNK,
      [10, 118, 92, 97, 0.02],
      [10, 15, 92, 97, 0.05], [99, 118, 92, 97, 0.05],
      [18, 25, 92, 97, 0.3],
    ]);
    const lm = findLandmarks2D(view);
    expect(lm.left.wristReadAcrossHeld).toBe(false);
    expect(Math.abs(lm.left.hand[0] - 99)).toBeLessThanOrEqual(2);
    expect(lm.right.wristReadAcrossHeld).toBe(true);
    expect(lm.right.hand[0]).toBeGreaterThan(24);
    // the ratio's bounds, and a wrist sampled on the silhouette's edge (no depth to divide by)
    expect(heldAcrossWrist(3.3 * 0.03, 0.03)).toBe(false);
    expect(heldAcrossWrist(HELD_ACROSS_WRIST_RATIO * 0.03, 0.03)).toBe(true);
    expect(heldAcrossWrist(0.05, 0.003)).toBe(false);
  });

  it('finds the hands of arms held out over a cape that hides the legs, past fingertips the raster cut off', () => {
    // The cape fills the space between the legs (no crotch: the legs are not seen), so the body stands on its arms.
    // A pixel or two beyond each hand, not touching it (a fingertip thinner than a pixel), is out of the paths' reach:
    // it hid the hand's tip from the search for the farthest point (9 400 020 was refused NOT_HUMANOID). Before
    // refusing, the search runs again past such pixels.
    const view = boxesView([
      [50, 78, 0, 49, 0.06], [52, 76, 50, 99, 0.06], [60, 68, 100, 104, 0.03], [56, 72, 105, 124, 0.05],
      [12, 116, 92, 97, 0.02],
      [10, 10, 93, 93, 0.01], [10, 10, 96, 96, 0.01], [118, 118, 93, 93, 0.01], [118, 118, 96, 96, 0.01],
    ]);
    const lm = findLandmarks2D(view);
    expect(lm.notes).toContain('legs touch or are covered: crotch from proportions');
    expect(lm.notes).toContain('left hand found past pixels out of the paths\' reach');
    expect(lm.notes).toContain('right hand found past pixels out of the paths\' reach');
    expect(lm.left.handTip[0]).toBeCloseTo(116, 0);
    expect(lm.right.handTip[0]).toBeCloseTo(12, 0);
    for (const side of [lm.left, lm.right]) expect(side.handTip[1]).toBeGreaterThanOrEqual(92);
  });

  it('finds the hand of an arm raised above the shoulder past a fingertip the raster cut off, the legs apart', () => {
    // The left arm rises from the shoulder (rows 95..99) up and out in steps to its hand at column 104, row 114; a
    // pixel beyond the hand, not touching it, is out of the paths' reach and hid the tip (procedural 11 000 025, arms
    // posed apart: the raised arm was laid down the body's side). The right arm is held out level.
    const raised: [number, number, number, number, number][] = [];
    for (let k = 0; k < 6; k++) raised.push([77 + 4 * k, 84 + 4 * k, 92 + 3 * k, 99 + 3 * k, 0.02]);
    const view = boxesView([...LEGS, ...TRUNK, ...raised, [106, 106, 116, 116, 0.01], [20, 51, 93, 98, 0.02]]);
    const lm = findLandmarks2D(view);
    expect(lm.notes.some((n) => n.startsWith('left arm not separable'))).toBe(false);
    expect(lm.notes).toContain('left hand found past pixels out of the paths\' reach');
    expect(lm.left.handTip[0]).toBeGreaterThan(100);
    expect(lm.left.handTip[1]).toBeGreaterThan(110);
    // the wrist lies up the raised arm, above the shoulders; the level arm is read as before, from its own tip
    expect(lm.left.hand[1]).toBeGreaterThan(lm.shoulderRow);
    expect(lm.right.handTip[0]).toBeCloseTo(20, 0);
    expect(lm.notes).not.toContain('right hand found past pixels out of the paths\' reach');
  });

  it('reads the head, not a hand raised above it, as the top of the body', () => {
    // A small head (rows 105..114); the left arm rises steeply from the shoulder to a hand at rows 115..127, above the
    // head's top, off to the side: the midline was read from the hand (procedural 11 000 084: its right elbow and wrist
    // 25 % and 10 % of the height off). The head is the highest run over the legs' middle.
    const raised: [number, number, number, number, number][] = [];
    for (let k = 0; k < 5; k++) raised.push([77 + 4 * k, 84 + 4 * k, 90 + 6 * k, 99 + 6 * k, 0.02]);
    raised.push([93, 100, 115, 127, 0.02]);
    const view = boxesView([...LEGS, [52, 76, 50, 99, 0.06], [60, 68, 100, 104, 0.03], [56, 72, 105, 114, 0.05], ...raised, [20, 51, 93, 98, 0.02]]);
    const lm = findLandmarks2D(view);
    expect(lm.notes.some((n) => n.startsWith('the top of the silhouette is off the body\'s middle'))).toBe(true);
    expect(lm.headTop[1]).toBe(114);
    expect(lm.neck[0]).toBeCloseTo(64, 0);
    expect(lm.left.handTip[0]).toBeGreaterThan(92);
    expect(lm.left.handTip[1]).toBeGreaterThan(120);
    expect(lm.right.handTip[0]).toBeCloseTo(20, 0);
  });

  it('reads the midline from the head, not from a hand raised beside it to the head\'s height', () => {
    // The left arm rises from the shoulder to a hand (columns 86..95) whose top is the head's (row 124): the top band of
    // the silhouette holds both, and the midline was read from their mean column, ten pixels off (procedural 22 000 031,
    // a staff raised: every joint mirrored about it 11 % of the height off). The head is the top band's run that comes
    // near the legs' middle.
    const raised: [number, number, number, number, number][] = [];
    for (let k = 0; k < 5; k++) raised.push([77 + 2 * k, 84 + 2 * k, 95 + 5 * k, 102 + 5 * k, 0.02]);
    raised.push([86, 95, 116, 124, 0.02]);
    const view = boxesView([...LEGS, ...TRUNK, ...raised, [20, 51, 93, 98, 0.02]]);
    const lm = findLandmarks2D(view);
    expect(lm.headTop[1]).toBe(124);
    for (const joint of [lm.hips, lm.neck, lm.head]) expect(joint[0]).toBeCloseTo(64, 0);
    expect(lm.left.handTip[0]).toBeGreaterThan(85);
    expect(lm.right.handTip[0]).toBeCloseTo(20, 0);
  });

  it('lays arms glued to the body along its sides when the legs are apart, and refuses a plain column', () => {
    // The torso is as wide as torso + arms down to row 70, then narrows smoothly onto the legs (as a remeshed body whose
    // arms merged with it): no armpit, no tip beside it; legs stand apart.
    const taper: [number, number, number, number, number][] = [];
    for (let j = 50; j < 70; j++) {
      const inset = Math.round((7 * (70 - j)) / 20);
      taper.push([46 + inset, 82 - inset, j, j, 0.06]);
    }
    const view = boxesView([...LEGS, ...taper, [46, 82, 70, 99, 0.06], [60, 68, 100, 104, 0.03], [56, 72, 105, 124, 0.05]]);
    const lm = findLandmarks2D(view);
    expect(lm.notes.some((n) => n.startsWith('left arm not separable'))).toBe(true);
    // each arm hangs inside its own side of the body, from under the shoulders to above the crotch
    for (const [side, lmSide] of [[1, lm.left], [-1, lm.right]] as const) {
      expect((lmSide.hand[0] - 64) * side).toBeGreaterThan(8);
      expect((lmSide.hand[0] - 64) * side).toBeLessThan(19);
      expect(lmSide.arm[1]).toBeGreaterThan(lmSide.foreArm[1]);
      expect(lmSide.foreArm[1]).toBeGreaterThan(lmSide.hand[1]);
      expect(lmSide.handTip[1]).toBeGreaterThanOrEqual(lm.crotchRow);
    }
    const column = boxesView([[46, 82, 0, 99, 0.06], [60, 68, 100, 104, 0.03], [56, 72, 105, 124, 0.05]]);
    expect(() => findLandmarks2D(column)).toThrow(expect.objectContaining({ code: 'NOT_HUMANOID' }));
  });

  it('lays arms along the sides of a column whose arms another reading saw (a cape hiding arms and legs)', () => {
    // The same column: the hybrid's network, confident of both arms, vouches for them (estimateSkeleton networkSawArms)
    const column = boxesView([[46, 82, 0, 99, 0.06], [60, 68, 100, 104, 0.03], [56, 72, 105, 124, 0.05]]);
    const lm = findLandmarks2D(column, true);
    expect(lm.notes).toContain('arms not in the silhouette but seen by the network');
    for (const [side, lmSide] of [[1, lm.left], [-1, lm.right]] as const) {
      expect((lmSide.hand[0] - 64) * side).toBeGreaterThan(8);
      expect((lmSide.hand[0] - 64) * side).toBeLessThan(19);
      expect(lmSide.arm[1]).toBeGreaterThan(lmSide.foreArm[1]);
      expect(lmSide.foreArm[1]).toBeGreaterThan(lmSide.hand[1]);
    }
  });

  it('follows box arms glued to the torso down its sides to their tips (a blocky character)', () => {
    // Torso 52..76, arms 40..51 and 77..88 from row 60 to 99, touching it: no armpit; the arms' bottom corners are tips.
    const view = boxesView([...LEGS, ...TRUNK, [40, 51, 60, 99, 0.05], [77, 88, 60, 99, 0.05]]);
    const lm = findLandmarks2D(view);
    expect(lm.notes.some((n) => n.startsWith('left arm not separable') && n.endsWith('down to its tip'))).toBe(true);
    // the whole chain stays in the arm's own column, not inside the torso
    for (const joint of [lm.left.arm, lm.left.foreArm, lm.left.hand]) {
      expect(joint[0]).toBeGreaterThan(76);
      expect(joint[0]).toBeLessThanOrEqual(88);
    }
    for (const joint of [lm.right.arm, lm.right.foreArm, lm.right.hand]) {
      expect(joint[0]).toBeLessThan(52);
      expect(joint[0]).toBeGreaterThanOrEqual(40);
    }
    expect(lm.left.arm[1]).toBeGreaterThan(90);
    expect(lm.left.handTip[1]).toBeCloseTo(60, 0);
  });

  it('takes the hands at the ends of the arms, not the corners of a coat skirt that lie farther from the neck', () => {
    // T-pose arms to columns 10 and 118; a coat skirt (rows 24..55, columns 40..88) hangs over the legs' tops.
    const view = boxesView([...LEGS, ...TRUNK, [10, 118, 92, 97, 0.02], [40, 88, 24, 55, 0.07]]);
    const lm = findLandmarks2D(view);
    expect(lm.left.handTip[0]).toBeGreaterThanOrEqual(116);
    expect(lm.right.handTip[0]).toBeLessThanOrEqual(12);
    expect(lm.left.handTip[1]).toBeGreaterThan(90);
  });
});
