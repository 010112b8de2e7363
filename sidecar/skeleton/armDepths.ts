/**
 * The depth of the arm joints read off the front view's rays (liftJoints.ts), mended where a ray read something other
 * than the limb: a Left/Right pair's depth (symmetrise, pairDepth), arms posed apart keeping their own (OWN_POSE_JOINTS),
 * a wrist across what its hand holds, arm bones of unequal length, joints on another stretch of the ray or wrapped in
 * a sleeve, and an elbow far behind its arm. Each rule takes the lifted points by name (canonical, modified in place)
 * and, where it needs them, what their rays read (readSpans, PiecesRead, the stretches inside the surface);
 * estimateSkeleton calls them in order. inArmProportion is the arm's proportion check, shared with the 2D elbow rules.
 */
import type { Vec3 } from '../types.js';
import { add, distance, scale, sub } from '../geometry/vec3.js';
import type { ClosedPieceHit } from './liftJoints.js';

/**
 * The joints (without their side) each arm keeps as read when the arms are posed apart (armsPosedApart): the elbow,
 * the wrist and the hand's tip. The upper-arm joint and the clavicle stay mirror-averaged: they sit in the shoulder,
 * which does not move with the arm's pose.
 */
export const OWN_POSE_JOINTS = ['ForeArm', 'Hand', 'HandTip'] as const;

/**
 * An arm bone (posed apart) this many times longer in 3D than its other side's is read too deep: its far end's ray
 * crossed something the hand holds (a sword's blade or guard in front of the wrist). Left and right bones differ by a
 * few percent (the generator's by up to 2 % each way) and a front view's reading by about 0.01 of the height.
 */
export const ARM_LENGTH_SLACK = 1.25;

/**
 * The share of the other side's bone length an arm bone's depth must span (ARM_LENGTH_SLACK too long) to be read too
 * deep (armDepthsOfEqualLength). On 40 characters with arms posed apart, the too-long bones whose far end's ray
 * crossed a held sword spanned 0.84–2.3 of it in depth; those misread across the view (an elbow placed out along a
 * level arm) 0.1–0.55.
 */
export const ARM_DEPTH_SHARE = 0.75;

/**
 * The forearm's length over the upper arm's of an arm whose reading may serve as the other side's measure
 * (armDepthsOfEqualLength), and of an elbow that reads as an arm's in the front view (elbowReadsAsArm): humanoids'
 * lie within about 0.75–1.15 (the generator's, the Mixamo template's); one far outside was misread (a raised arm's
 * elbow read out at the wrist).
 */
export const ARM_PROPORTION_RANGE: [number, number] = [0.6, 1.6];

/**
 * A wrist of arms posed apart whose depth was read from a span along its ray over this many times the other wrist's
 * read across something the hand holds: a sword's grip and guard fused to the fist, the blade pointing forward (the
 * ray runs from the guard to the back of the wrist, 0.12–0.13 of the height, against 0.035–0.043 for the free wrist,
 * on procedural humanoids 16 000 006, 16 000 007 and 15 000 028). Its forearm then takes the other's length
 * (armDepthsOfEqualLength), however little longer than it it reads: those forearms read 1.09–1.19 times the other's,
 * under ARM_LENGTH_SLACK. Lowering that slack to 1.15 for every wrist moved 4 hands nearer and 8 farther (hands
 * holding nothing among them, whose read spans were at most 2.3 times the other's). Over the nine runs with arms
 * posed apart (11 000 040–119, 12, 13, 15–20 000 000: 720 rigs) this moved 16 000 006's wrist 4.8 → 0.4 % of the
 * height, 16 000 007's 2.9 → 1.3, 15 000 028's 4.4 → 2.4, and 15 000 003's 1.7 → 2.2 farther; the artists' none.
 */
export const WRIST_SPAN_RATIO = 2.5;

/**
 * How many times the other wrist's read span a wrist's must exceed for wristsBehindWhatTheyHold to read it as crossing
 * something the hand holds. On 1 571 wrists of arms posed apart (procedural humanoids of ten runs, 11 000 040–119 and
 * 12–21 000 000–079), the sword wrists whose midpoint sat 2–4 % of the height in front of the wrist read 2.3–2.8 times
 * the other's (20 000 016, 15 000 028, 21 000 046, 21 000 047), the 13 others 3.2–9.5 times (the length rule had set most);
 * free wrists read up to 12 times a thin other read (16 000 043: 0.037 against 0.003), so the two checks below must
 * hold too. Over the 28 runs posed apart (11 000 040–119, 12, 13, 15–39 000 000–079: 4 422 wrists) four sword wrists
 * fused to their grip read 1.82–1.86 times the other's, 0.047–0.069 more and 1.80–2.02 times their elbow's, their
 * midpoints 1.7–3.5 % of the height in front of the wrist (25 000 006, 28 000 065, 32 000 078, 33 000 026); every wrist
 * holding no sword that read 1.8–2.2 times the other's read under HELD_WRIST_EXCESS more or under
 * HELD_WRIST_OVER_ELBOW_SPAN times its elbow's (the nearest: 18 000 012's, 0.033 more and 1.76 times). Two more sword
 * wrists read 1.58 and 1.63 times their elbow's (24 000 024, 30 000 063), among free wrists reading 1.52 and 1.56
 * (28 000 024, 33 000 054, the latter a hand reaching forward whose ray runs back along the forearm): no bound on that
 * ratio tells them apart by more than 0.02, and HELD_WRIST_OVER_ELBOW_SPAN stays. docs/EVAL.md, sixty-second session.
 */
export const HELD_WRIST_SPAN_RATIO = 1.8;

/**
 * How much longer than the other wrist's (canonical units, height ~1) a wrist's read span must be as well
 * (wristsBehindWhatTheyHold): what the hand holds adds at least a wrist's thickness to the ray (the generator's wrists
 * read 0.035–0.045). The sword wrists above read 0.049–0.078 more than the other; 16 000 042's free wrist, 2.3 times a
 * thin other read but only 0.031 more, moved 0.5 → 1.6 % of the height without this check.
 */
export const HELD_WRIST_EXCESS = 0.04;

/**
 * How many times its own elbow's read span a wrist's must exceed as well (wristsBehindWhatTheyHold): an arm is no
 * thicker at the wrist than at the elbow, so a wrist's ray reads more than its elbow's only across something else. The
 * sword wrists above read 1.7–2.3 times their elbow's. Of the 24 wrists holding no sword over HELD_WRIST_SPAN_RATIO
 * times the other's, 21 read 0.56–1.61 times their elbow's; 17 000 043's (2.05) moves 0.2 → 0.1 % of the height, 16 000 042's
 * (1.80) stays by HELD_WRIST_EXCESS, 19 000 021's free wrist (1.77) by HELD_WRIST_FOREARM_RANGE.
 */
export const HELD_WRIST_OVER_ELBOW_SPAN = 1.7;

/**
 * The forearm's length, over the other forearm's, within which wristsBehindWhatTheyHold's wrist must leave it: outside,
 * the span's end nearer the elbow is not where the arm comes into the fist (15 000 003's sword, its pommel behind the
 * fist, would leave the forearm 0.81 of the other's and the wrist 6.4 % of the height behind; the sword wrists mended
 * leave it 0.92–1.15).
 */
export const HELD_WRIST_FOREARM_RANGE: readonly [number, number] = [0.9, 1.2];

/**
 * For arms posed apart: a wrist whose ray read a span over HELD_WRIST_SPAN_RATIO times the other wrist's and over
 * HELD_WRIST_OVER_ELBOW_SPAN times its own elbow's crossed something the hand holds (a sword's grip runs across the fist
 * and its guard stands in front of it), and its depth, the span's midpoint, lies inside that. The wrist stands half the
 * other wrist's span inside the end of its span nearer its elbow's depth (the arm comes into the fist from there), and
 * reads the other wrist's span, where its forearm then measures within HELD_WRIST_FOREARM_RANGE of the other's. A hand
 * on a staff (held) keeps its depth, as armDepthsOfEqualLength keeps it. The refinement network's hand depth, misled by
 * the same guard, does not replace a wrist moved here (withRefinedDepth's wristsBehindHeld). Over ten runs of 80 with
 * arms posed apart (800 rigs) this moved six sword wrists nearer (20 000 016's 4.3 → 0.9 % of the height, 21 000 046's
 * 3.1 → 0.2, 21 000 047's 3.5 → 1.6, 15 000 028's 2.4 → 0.7) and two farther (16 000 007's 1.3 → 1.8, 16 000 011's
 * 0.6 → 1.1); mirrored runs and the artists' characters are unchanged.
 * c: lifted points by name (canonical), modified in place; readSpans: the span each depth was read from, by name,
 * modified in place; held: the hands (and hand tips) that grip a standing rod → the sides whose wrist moved
 */
export function wristsBehindWhatTheyHold(c: Record<string, Vec3>, readSpans: Record<string, number>, held: readonly string[]): ('Left' | 'Right')[] {
  const moved: ('Left' | 'Right')[] = [];
  for (const [side, other] of [['Left', 'Right'], ['Right', 'Left']] as const) {
    const z = wristBehindWhatItHolds(c, readSpans, side, held);
    if (Number.isNaN(z)) continue;
    c[`${side}Hand`][2] = z;
    readSpans[`${side}Hand`] = readSpans[`${other}Hand`];
    moved.push(side);
  }
  return moved;
}

/**
 * The depth of one wrist behind what its hand holds (wristsBehindWhatTheyHold's test and place, for one side): where
 * its read span is over HELD_WRIST_SPAN_RATIO times the other wrist's, HELD_WRIST_EXCESS longer and over
 * HELD_WRIST_OVER_ELBOW_SPAN times its own elbow's, half the other wrist's span inside the end of its span nearer its
 * elbow's depth, where its forearm then measures within HELD_WRIST_FOREARM_RANGE of the other's.
 * A hand on a staff (held) keeps its depth, as armDepthsOfEqualLength keeps it.
 * c: lifted points by name (canonical); readSpans: the span each depth was read from, by name; side: the wrist's;
 * held: the hands (and hand tips) that grip a standing rod → canonical z, NaN where the wrist reads nothing held
 */
function wristBehindWhatItHolds(c: Record<string, Vec3>, readSpans: Record<string, number>, side: 'Left' | 'Right', held: readonly string[]): number {
  const other = side === 'Left' ? 'Right' : 'Left';
  const wrist = c[`${side}Hand`], elbow = c[`${side}ForeArm`], otherWrist = c[`${other}Hand`], otherElbow = c[`${other}ForeArm`];
  if (!wrist || !elbow || !otherWrist || !otherElbow || held.includes(`${side}Hand`)) return Number.NaN;
  const span = readSpans[`${side}Hand`], otherSpan = readSpans[`${other}Hand`];
  if (!(span > HELD_WRIST_SPAN_RATIO * otherSpan && span - otherSpan > HELD_WRIST_EXCESS && span > HELD_WRIST_OVER_ELBOW_SPAN * readSpans[`${side}ForeArm`])) return Number.NaN;
  const front = wrist[2] + 0.5 * span, back = wrist[2] - 0.5 * span;
  const z = Math.abs(back - elbow[2]) <= Math.abs(front - elbow[2]) ? back + 0.5 * otherSpan : front - 0.5 * otherSpan;
  const share = distance(elbow, [wrist[0], wrist[1], z]) / distance(otherElbow, otherWrist);
  return share >= HELD_WRIST_FOREARM_RANGE[0] && share <= HELD_WRIST_FOREARM_RANGE[1] ? z : Number.NaN;
}

/**
 * A forearm of arms posed apart under this share of the other's length (3D) was read short: its wrist lies far up the
 * forearm (forearmsOfEqualLength). Left and right forearms of the generator differ by a few percent; read, they lie
 * within 0.75–1.33 of each other but for seven of 1 576 forearms over ten runs of 80 posed apart (11 000 040–119,
 * 12–21 000 000–079). Those under 0.5: 19 000 021's sword hand (0.41, raised level, read inside the outline of its
 * wide sleeve and the blade: 9.9 % of the height off), 19 000 049's raised beside a brim hat (0.45; its elbow misread
 * too) and 15 000 022's (0.32, a cape hiding the arms). Between 0.56 and 0.75 lengthening them moved 16 000 040's,
 * 19 000 025's and 17 000 051's wrists farther (0.6 → 3.5, 0.9 → 2.6 and 14.3 → 15.9 %).
 */
export const FOREARM_SHORT_SHARE = 0.5;

/**
 * For arms posed apart: a forearm under FOREARM_SHORT_SHARE of the other's length, whose upper arm measures within
 * 0.8–1.25 of the other's (the elbow read where the arm bends: not 19 000 049's or 15 000 022's), is lengthened along
 * itself to the other's length, its hand tip carried with its wrist: the wrist was read far up the forearm (a sword
 * raised level out of a wide sleeve: the sleeve and the blade's outline hid the hand from the rules, 19 000 021).
 * c: lifted points by name (canonical), modified in place
 */
export function forearmsOfEqualLength(c: Record<string, Vec3>): void {
  for (const [side, other] of [['Left', 'Right'], ['Right', 'Left']] as const) {
    const shoulder = c[`${side}Arm`], elbow = c[`${side}ForeArm`], wrist = c[`${side}Hand`], tip = c[`${side}HandTip`];
    const otherShoulder = c[`${other}Arm`], otherElbow = c[`${other}ForeArm`], otherWrist = c[`${other}Hand`];
    if (!shoulder || !elbow || !wrist || !otherShoulder || !otherElbow || !otherWrist) continue;
    const own = distance(elbow, wrist), wanted = distance(otherElbow, otherWrist);
    const upper = distance(shoulder, elbow) / distance(otherShoulder, otherElbow);
    if (!(own > 0 && own < FOREARM_SHORT_SHARE * wanted && upper >= 1 / ARM_LENGTH_SLACK && upper <= ARM_LENGTH_SLACK)) continue;
    const k = wanted / own;
    const moved = add(elbow, scale(sub(wrist, elbow), k));
    if (tip) for (let a = 0; a < 3; a++) tip[a] += moved[a] - wrist[a];
    for (let a = 0; a < 3; a++) wrist[a] = moved[a];
  }
}

/**
 * A forearm longer than this many times its upper arm is out of a humanoid's proportion (the generator's and the Mixamo
 * template's lie within about 0.75–1.15): armDepthsOfEqualLength does not take such a wrist, read on its forearm's piece,
 * for a read of the limb itself where the other arm is in proportion and the upper arms read alike (UPPER_ARMS_ALIKE).
 * Procedural 31 000 055 (arms posed apart) holds a sword fused to a fist reaching forward and down; its 2D wrist stood on
 * the fist, 1.9 % of the height below the wrist, and its ray read the fist 0.06 of the canonical height in front of the
 * wrist: forearm 1.31 times its upper arm (the other 0.89), upper arms 0.115 and 0.118. Over the 28 runs posed apart
 * (2 240 rigs) readLimbItself kept four too-long arm bones: this wrist, 23 000 018's (0.86, the other side misread, its
 * upper arm 0.150 against 0.171) and 39 000 043's elbow and wrist (1.32, upper arms 0.128 and 0.092, its elbow misread):
 * docs/EVAL.md, sixty-second session.
 */
export const FOREARM_OVER_UPPER_ARM_MAX = 1.2;

/**
 * Two upper arms read within this share of each other's length read alike (FOREARM_OVER_UPPER_ARM_MAX): the generator's
 * sides differ by up to 2 % each way and a front view's reading by about 0.01 of the height, a twelfth of an upper arm.
 */
export const UPPER_ARMS_ALIKE = 0.1;

/** The arms' bones, parent → child, whose depth armDepthsOfEqualLength checks (the joints without their side). */
const ARM_BONES = [['Arm', 'ForeArm'], ['ForeArm', 'Hand'], ['Hand', 'HandTip']] as const;

/**
 * For arms posed apart, whose joints keep their own depth (symmetrise's ownPose): an arm bone ARM_LENGTH_SLACK times
 * longer than the other side's takes the depth that gives it that one's length (none beyond the front view's length),
 * on the side of its parent its ray read, where its depth spans ARM_DEPTH_SHARE of that length (a bone too long across the
 * view was misread there, and keeps its depth). The mirrored pair's depth rules (pairDepth) compare depths, which arms posed
 * apart do not share; their bones' lengths they do. The other side is the measure only where it reads as an arm
 * (ARM_PROPORTION_RANGE). Parents first: a moved elbow carries its wrist's check. A hand on a staff (held) keeps its
 * depth: its ray read the fist beside the staff, and the forearm that looks too long is the elbow's share of an arm
 * reaching forward (16 000 040's wrist was pulled 6.3 % of the height back). A wrist whose read span is over
 * WRIST_SPAN_RATIO times the other wrist's takes that length however little longer its forearm reads. A joint read on
 * its parent's piece over no more than its parent's span read the limb itself (readLimbItself), and keeps its depth:
 * the other side is then the one misread, a wrist whose 2D joint stands up its forearm (procedural 23 000 018, posed
 * apart: the right hand reaching forward, read 0.09 of the canonical height in front of its elbow, was pulled back to
 * the elbow, 9.6 % of the height off; 12 000 017's raised wrist in a wide sleeve, 5.1 %), but for a wrist whose forearm
 * reads out of a humanoid's proportion, the other's in it and the upper arms alike (FOREARM_OVER_UPPER_ARM_MAX: its 2D
 * joint stood on the fist past the wrist). A joint whose ray met nothing of its limb (rayMetNothingOfTheLimb) read
 * something else, and takes the other side's length however little longer its bone reads: 19 000 010's sword wrist,
 * whose ray met the grip alone, 0.047 of the canonical height in front of the fist (5.7 % of the height off), its
 * forearm 1.24 times the other's. A forearm whose upper arm reads shorter than the
 * other's is measured against the other arm's whole length less its own upper arm's: its 2D elbow was read in along the
 * arm (28 000 002's sword arm held out level: elbow 2.4 % of the height in, the forearm 1.5 times the other's and the
 * upper arm 0.83 times; given the other forearm's length, the wrist stood 6.3 % behind). A joint whose ray missed the
 * surface took the depth of the nearest pixel's ray (liftJointsByFrontPiece): it is held to the other side's length as
 * closely, whatever its depth (25 000 071's raised sword wrist, its forearm 1.26 times the other's measured so and its
 * depth 0.7 of that length, stood 5.2 % of the height in front).
 * c: lifted points by name (canonical), modified in place; held: the hands (and hand tips) that grip a standing rod;
 * readSpans: the span each depth was read from, by name (liftJointsByFrontPiece's, as the rules before left them);
 * pieces: each point's read piece (as the rules before left it) and the pieces its ray meets at least twice, by name
 */
export function armDepthsOfEqualLength(c: Record<string, Vec3>, held: readonly string[] = [], readSpans: Record<string, number> = {}, pieces: PiecesRead = {}): void {
  const length = (side: string, parent: string, joint: string) => {
    const p = c[side + parent], q = c[side + joint];
    return p && q ? Math.hypot(q[0] - p[0], q[1] - p[1], q[2] - p[2]) : Number.NaN;
  };
  const forearmOverUpper = (side: string) => length(side, 'ForeArm', 'Hand') / length(side, 'Arm', 'ForeArm');
  const readsAsArm = (side: string) => inArmProportion(forearmOverUpper(side));
  // an upper arm shorter than the other's left the forearm the rest of the arm's length: the elbow read in along the arm
  const forearmExpected = (side: string, other: string) => {
    const forearm = length(other, 'ForeArm', 'Hand'), upper = length(side, 'Arm', 'ForeArm'), otherUpper = length(other, 'Arm', 'ForeArm');
    return upper < otherUpper ? forearm + otherUpper - upper : forearm;
  };
  // a forearm out of a humanoid's proportion, the other in it, the upper arms alike: this wrist was read past its arm
  const wristPastItsForearm = (side: string, other: string) => forearmOverUpper(side) > FOREARM_OVER_UPPER_ARM_MAX
    && forearmOverUpper(other) <= FOREARM_OVER_UPPER_ARM_MAX
    && Math.abs(length(side, 'Arm', 'ForeArm') / length(other, 'Arm', 'ForeArm') - 1) <= UPPER_ARMS_ALIKE;
  for (const [parent, joint] of ARM_BONES) {
    for (const [side, other] of [['Left', 'Right'], ['Right', 'Left']]) {
      const expected = joint === 'Hand' ? forearmExpected(side, other) : length(other, parent, joint);
      // a joint whose ray missed the surface took the depth of a pixel beside it: it read no depth of its own
      const missed = pieces[side + joint]?.piece === -1 && Number.isNaN(readSpans[side + joint]);
      // a wrist whose ray read far more than the other's crossed what the hand holds, a joint whose ray met nothing of
      // its limb read something else, and one whose ray missed read nothing: any excess length is that
      const readAcross = (joint === 'Hand' && readSpans[side + joint] > WRIST_SPAN_RATIO * readSpans[other + joint])
        || rayMetNothingOfTheLimb(pieces[side + joint], pieces[side + parent], c[side + parent]) || missed;
      if (!(length(side, parent, joint) > (readAcross ? 1 : ARM_LENGTH_SLACK) * expected) || !readsAsArm(other)) continue;
      const p = c[side + parent], q = c[side + joint];
      const across = Math.hypot(q[0] - p[0], q[1] - p[1]);
      // too long with a depth under most of a bone's length: misread across the view, not in depth
      if (!missed && Math.abs(q[2] - p[2]) <= ARM_DEPTH_SHARE * expected) continue;
      if (held.includes(side + joint)) continue;
      if (readLimbItself(c, side, joint, readSpans, pieces) && !(joint === 'Hand' && wristPastItsForearm(side, other))) continue;
      q[2] = p[2] + Math.sign(q[2] - p[2]) * Math.sqrt(Math.max(0, expected * expected - across * across));
    }
  }
}

/**
 * Whether an arm joint's ray met pieces of the surface (meshShells) but none that holds its parent's depth on the
 * parent's own ray: neither the limb nor a sleeve round it, only something the hand holds (a sword's grip in front of
 * the fist).
 * own, parent: the joint's and its parent's read piece and closed pieces (PiecesRead's), parentAt: the parent (canonical)
 */
function rayMetNothingOfTheLimb(own: PiecesRead[string] | undefined, parent: PiecesRead[string] | undefined, parentAt: Vec3 | undefined): boolean {
  if (!own || !parent || !parentAt || own.closed.length === 0) return false;
  const limb = piecesHoldingDepth(parent.closed, parentAt[2]);
  return limb.length > 0 && own.closed.every((hit) => !limb.includes(hit.piece));
}

/**
 * The least gap, along an arm joint's ray, between two stretches inside the surface that its read span crosses for the
 * joint to be read on one of them (armJointsOnTheirOwnStretch): wider than an arm is thick (0.04–0.07 of the height on
 * the generator's humanoids), so the ray left the arm and met something else. A sword's blade held forward was 0.18–
 * 0.37 behind or in front of the arm on procedural humanoids 15 000 003 and 15 000 020; fingers curled round a hilt
 * leave gaps of a few hundredths.
 */
export const ARM_RAY_GAP = 0.1;

/**
 * Two pieces along a ray overlapping by under this share of the shorter one's span lie apart (armJointsOnTheirParentsPiece,
 * arms posed apart): a fist that holds a grip wholly (or a sleeve round the arm) overlaps the inner piece over its whole
 * span; the fist behind a grip that sticks out in front of it (procedural 21 000 072, 12 000 057) over a tenth of it.
 */
export const APART_OVERLAP_SHARE = 0.5;

/**
 * The least gap, along the ray of an upper-arm joint or an elbow, between two stretches inside the surface that its
 * read span crosses for the joint to be read on one of them, where no gap reaches ARM_RAY_GAP
 * (armJointsOnTheirOwnStretch): long hair or a cape fused to the body, hanging a few hundredths behind the arm, took
 * the midpoint of the ray far behind it (procedural 38 000 007's elbow 0.029 of the canonical height behind the arm,
 * across a gap of 0.037; 20 000 059's upper-arm joints 0.06 behind, across 0.026). No fingers curl there. Over 464
 * procedural humanoids (38, 39 and 20 000 000, both arm modes) the arm's own stretch held the truth within 0.004
 * wherever a gap from 0.01 moved a joint (19 upper-arm joints, 5 elbows, none farther): docs/EVAL.md, fifty-ninth
 * session.
 */
export const ARM_ROOT_RAY_GAP = 0.01;

/**
 * The least length of the inside stretch that an upper-arm joint or an elbow is read on across a gap under ARM_RAY_GAP
 * (armJointsOnTheirOwnStretch); where the stretch chosen is shorter, the joint keeps its read. An arm is 0.04–0.07
 * thick on the generator's humanoids: where such a gap moved an upper-arm joint nearer on 640 procedural humanoids (38,
 * 39 and 20 000 000 in both arm modes, 13 and 37 000 000 posed apart), its own stretch was 0.030–0.093 long. A staff
 * held before a hanging upper arm (13 000 061, 37 000 043) is a stretch 0.020–0.021 long, and the joint taken onto it
 * stood 5.4–6.3 % of the height off (a thicker staff would pass for an arm). The artists' robot_expressive wears its
 * shoulder as nested plates 0.007 thick with gaps of 0.007–0.029 between them (its upper-arm joint on the front plate:
 * CD-J2J 0.0303 → 0.0312). A ray at the very edge of the arm grazes it (procedural 9 200 017's right upper arm, 0.007
 * before long hair): taking the next stretch, the hair's, put the joint 0.036 of the height behind.
 */
export const ARM_MIN_STRETCH = 0.025;

/**
 * Each arm joint (without its side) whose depth armJointsOnTheirOwnStretch checks, with its parent, parents first, and
 * the stretch it takes across a gap from ARM_ROOT_RAY_GAP to ARM_RAY_GAP (null: it takes none; 'frontIfNearest': the
 * front one where that is also the one nearest its parent's depth).
 */
const ARM_CHAIN = [
  ['Arm', 'Shoulder', 'front'], ['ForeArm', 'Arm', 'nearest'], ['Hand', 'ForeArm', 'frontIfNearest'], ['HandTip', 'Hand', null],
] as const;

/**
 * An arm joint whose read span along its ray crosses a gap outside the surface read the midpoint between the arm and
 * what lies beyond the gap; it takes the midpoint of one inside stretch instead, and that stretch's length as its read
 * span. Across a gap of ARM_RAY_GAP or more (a blade held forward out of the fist or before the arm, a hilt, its guard)
 * any arm joint takes the stretch nearest its parent's depth: the blade may stand in front of the arm or behind it.
 * Across a narrower gap, from ARM_ROOT_RAY_GAP (long hair or a cape hanging behind the arm), an elbow takes the stretch
 * nearest its parent's, and an upper-arm joint the front one within its read span: its parent, the shoulder, was read
 * across the same hair or cape, behind the arm (on those 464 humanoids, nearest the shoulder moved 9 of 17 upper-arm
 * joints farther, 0.06 into long hair); either, only a stretch ARM_MIN_STRETCH long or more. A wrist takes the front
 * stretch there only where it is also the one nearest its elbow's depth (and ARM_MIN_STRETCH long): a hand hanging
 * forward before a cape fused to the body (procedural 48 000 073: the rays crossed the hand, a gap of 0.092–0.095 and
 * the cape, and both wrists stood 6.8 and 6.7 % of the height off) or reaching out of a wide sleeve, whose back lies
 * behind it (23 000 020: 2.4 %); behind a front stretch that is not the nearest lie a sleeve's layers round the wrist
 * or a blade (15 000 003, arms posed apart: taking the nearest put the wrist 3.9 % off, against 1.7). On 2 400
 * procedural humanoids not looked at while choosing it (25–39 000 000 in both arm modes) it moved 15 wrists, 24.0 →
 * 11.7 % of the height in sum (11 nearer by over 0.05, none farther by as much); docs/EVAL.md, sixty-sixth session.
 * Parents first, so a moved upper-arm joint carries its elbow's choice, and an elbow its wrist's.
 * c: lifted points by name (canonical), modified in place; readSpans: the span each depth was read from, by name,
 * modified in place; stretches: each point's insideStretches along its ray (front first), by name
 */
export function armJointsOnTheirOwnStretch(c: Record<string, Vec3>, readSpans: Record<string, number>, stretches: Record<string, Float64Array>): void {
  for (const side of ['Left', 'Right']) {
    for (const [joint, parent, acrossNarrowGap] of ARM_CHAIN) {
      const q = c[side + joint], p = c[side + parent], st = stretches[side + joint], span = readSpans[side + joint];
      if (!q || !p || !st || !(span > 0)) continue;
      const front = q[2] + 0.5 * span, back = q[2] - 0.5 * span, eps = 1e-9;
      let widestGap = 0, nearest = -1, frontmost = -1;
      for (let s = 0; s < st.length; s += 2) {
        if (s + 2 < st.length && st[s + 1] <= front + eps && st[s + 2] >= back - eps) widestGap = Math.max(widestGap, st[s + 1] - st[s + 2]);
        if (nearest < 0 || Math.abs(0.5 * (st[s] + st[s + 1]) - p[2]) < Math.abs(0.5 * (st[nearest] + st[nearest + 1]) - p[2])) nearest = s;
        if (frontmost < 0 && st[s + 1] <= front + eps && st[s] >= back - eps) frontmost = s;
      }
      let best = -1;
      if (widestGap >= ARM_RAY_GAP) best = nearest;
      else if (acrossNarrowGap && widestGap >= ARM_ROOT_RAY_GAP) {
        // 'frontIfNearest': a wrist whose front stretch is not the one nearest its elbow may lie behind it, in a
        // sleeve's back layer, along a blade, or between fingers curled round a hilt
        best = acrossNarrowGap === 'front' ? frontmost
          : acrossNarrowGap === 'nearest' ? nearest
          : nearest === frontmost ? nearest : -1;
        // a stretch too short for the limb is a plate, a staff held before the arm, or the limb's edge grazed: the
        // read stays
        if (best >= 0 && st[best] - st[best + 1] < ARM_MIN_STRETCH) best = -1;
      }
      if (best < 0) continue;
      q[2] = 0.5 * (st[best] + st[best + 1]);
      readSpans[side + joint] = st[best] - st[best + 1];
    }
  }
}

/** Each lifted point's read piece (liftJointsByFrontPiece's piece, -1 for none) and its ray's closedPieces, by name. */
export type PiecesRead = Record<string, { piece: number; closed: readonly ClosedPieceHit[] }>;

/** The pieces among a ray's closed hits that hold depth z (an elbow in a sleeve lies in both): their piece ids. */
function piecesHoldingDepth(hits: readonly ClosedPieceHit[], z: number): number[] {
  return hits.filter((hit) => hit.back <= z && z <= hit.front).map((hit) => hit.piece);
}

/** The depth midway between a piece's first and last hit along the ray. */
function hitMiddle(hit: ClosedPieceHit): number {
  return 0.5 * (hit.front + hit.back);
}

/** The shoulder and arm joints (without their side) armJointsInsideWhatWrapsThem reads, each with its parent joint. */
const WRAPPED_CHAIN = [['Shoulder', 'Spine2'], ['Arm', 'Shoulder'], ['ForeArm', 'Arm'], ['Hand', 'ForeArm']] as const;

/**
 * A shoulder or arm joint whose ray met first a piece of the surface (meshShells) that wraps, along the ray, another
 * piece holding its parent joint's depth (on the parent's own ray) read the wrapper's midpoint: a cone hat hanging down
 * over a chibi's shoulders (procedural 22 000 062: the upper-arm joints 0.036 of the canonical height behind), long hair
 * round the upper arm (19 000 049, 17 000 051: 0.06–0.07). The joint is read on the wrapped piece instead, the midpoint
 * of its first and last hit (the longest of several): the limb's own. A sleeve wraps the arm the same way, and its
 * elbow and wrist are read on the arm; the limb may stick out of it a little (wrapsAlongRay: a hand out of a cuff).
 * Parents first, so a moved shoulder carries its upper-arm joint's check. A piece inside the read one that does not
 * hold the parent (a sword's grip in the fist) is no limb of the chain.
 * c: lifted points by name (canonical), modified in place; readSpans: the span each depth was read from, by name,
 * modified in place; pieces: each point's read piece (liftJointsByFrontPiece's piece, -1 for none; a moved joint's
 * becomes the wrapped one) and the pieces its ray meets at least twice (closedPieces), by name, modified in place
 */
export function armJointsInsideWhatWrapsThem(c: Record<string, Vec3>, readSpans: Record<string, number>, pieces: PiecesRead): void {
  for (const side of ['Left', 'Right']) {
    for (const [joint, parent] of WRAPPED_CHAIN) {
      const name = side + joint, parentName = parent === 'Spine2' ? parent : side + parent;
      const q = c[name], p = c[parentName], own = pieces[name], theirs = pieces[parentName];
      if (!q || !p || !own || !theirs || own.piece < 0) continue;
      const read = own.closed.find((hit) => hit.piece === own.piece);
      if (!read) continue;
      const holdsParent = piecesHoldingDepth(theirs.closed, p[2]);
      let wrapped: ClosedPieceHit | null = null;
      for (const hit of own.closed) {
        if (hit.piece === own.piece || !wrapsAlongRay(read, hit, hit.piece === theirs.piece) || !holdsParent.includes(hit.piece)) continue;
        if (!wrapped || hit.front - hit.back > wrapped.front - wrapped.back) wrapped = hit;
      }
      if (!wrapped) continue;
      q[2] = hitMiddle(wrapped);
      readSpans[name] = wrapped.front - wrapped.back;
      own.piece = wrapped.piece;
    }
  }
}

/**
 * Whether a piece wraps another along a ray (armJointsInsideWhatWrapsThem): holds it wholly inside, or, where the inner
 * one is the limb (the parent joint's own piece), shorter along the ray, holds all of it but under APART_OVERLAP_SHARE
 * of its span. 24 000 044's right hand, raised forward out of a wide sleeve, was grazed where it leaves the cuff, a
 * sliver 0.001 out of the cuff's front that the lift passed as a pendant; read on the cuff, the wrist stood 0.04 of the
 * canonical height behind it (5.2 % of the height off). Any piece half inside, not only the limb, took a sleeve's cuff
 * half inside a hand for the limb (mirrored 16 000 051's hands 0.7 → 1.4 %).
 * outer, inner: two closed hits of one ray, limb: whether inner is the parent's own piece → boolean
 */
function wrapsAlongRay(outer: ClosedPieceHit, inner: ClosedPieceHit, limb: boolean): boolean {
  if (inner.front < outer.front && inner.back > outer.back) return true;
  const span = inner.front - inner.back;
  const overlap = Math.min(inner.front, outer.front) - Math.max(inner.back, outer.back);
  return limb && span < outer.front - outer.back && overlap >= (1 - APART_OVERLAP_SHARE) * span;
}

/**
 * How many times deeper along a ray than the limb inside it a piece is that wraps the limb (piecesWrappingLimb): long
 * hair round a chibi's upper arm measured 3.8 times its arm (procedural 17 000 051), a brim hat over the arm 3.6 times
 * (19 000 049); a long coat fitted to the chest 0.97–1.14 times the body inside it (12 000 028, 16 000 059,
 * 11 000 095), and its sleeves about twice the arm.
 */
export const WRAPPER_DEPTH_RATIO = 2;

/**
 * The pieces that wrap a limb along a ray: those among the ray's closed hits that hold the limb's piece wholly inside
 * them along the ray and span WRAPPER_DEPTH_RATIO times its depth or more (hair round an upper arm, a hat's brim over
 * it; not a coat fitted to the body).
 * hits: a ray's closedPieces, limb: the limb's piece (meshShells) → piece ids, none where the ray does not meet the limb
 */
function piecesWrappingLimb(hits: readonly ClosedPieceHit[], limb: number): number[] {
  const inner = hits.find((hit) => hit.piece === limb);
  if (!inner) return [];
  return hits.filter((outer) => outer !== inner && wrapsAlongRay(outer, inner, false)
    && WRAPPER_DEPTH_RATIO * (inner.front - inner.back) <= outer.front - outer.back).map((hit) => hit.piece);
}

/**
 * A shoulder or arm joint whose ray meets only pieces of the surface (meshShells) that wrapped the limb on a joint up
 * its chain passed over or under the limb: its 2D joint stands off the thin arm, inside the outline of what wraps it
 * (long hair hanging round a chibi's arms, procedural 17 000 051: the upper-arm joints read 0.035 and the elbows 0.12
 * of the canonical height behind the arm, elbows 14.5 % of the height off; a brim hat as wide as the arms, 19 000 049,
 * posed apart: the left elbow and wrist read the brim, 0.07 and 0.05 behind). Its depth is the wrapper's midpoint,
 * nothing of the limb's: the joint takes its parent's depth, where the limb goes on. The wrappers carry down the chain
 * (the elbow's ray misses the arm the upper-arm joint's ray missed too), and so does the limb's piece: the piece each
 * joint was read on (a staff the forearm's ray met inside the arm is no limb, and the arm round it no wrapper).
 * Parents first; to run after armJointsInsideWhatWrapsThem, which puts a wrapped parent in its limb.
 * c: lifted points by name (canonical), modified in place; readSpans: the span each depth was read from, by name,
 * modified in place; pieces: each point's read piece (liftJointsByFrontPiece's piece, -1 for none) and the pieces its
 * ray meets at least twice (closedPieces), by name → the names of the joints moved
 */
export function armJointsWhoseRayMissedTheLimb(c: Record<string, Vec3>, readSpans: Record<string, number>, pieces: PiecesRead): string[] {
  const moved: string[] = [];
  for (const side of ['Left', 'Right']) {
    const wrappers = new Set<number>();
    let parentMissed = false;
    for (const [joint, parent] of WRAPPED_CHAIN) {
      const name = side + joint, parentName = parent === 'Spine2' ? parent : side + parent;
      const q = c[name], p = c[parentName], own = pieces[name], theirs = pieces[parentName];
      if (!q || !p || !own || !theirs) break;
      // a parent whose ray missed the limb has none of the limb's on it: the limb and its wrappers carry on
      if (!parentMissed) for (const piece of piecesWrappingLimb(theirs.closed, theirs.piece)) wrappers.add(piece);
      parentMissed = own.piece >= 0 && own.closed.length > 0 && own.closed.every((hit) => wrappers.has(hit.piece));
      if (!parentMissed) continue;
      q[2] = p[2];
      readSpans[name] = readSpans[parentName];
      moved.push(name);
    }
  }
  return moved;
}

/**
 * An arm joint read on a piece of the surface (meshShells) that does not hold its parent joint read something the hand
 * holds: a sword, a piece of its own, held forward in front of the elbow or the upper arm, or its guard in front of the
 * fist (procedural humanoids 17 000 032, 18 000 036, 11 000 106 and 11 000 053, arms posed apart: elbows and wrists
 * 4–9 % of the height in front of the arm). Where its ray also meets a piece that holds the parent's depth (on the
 * parent's own ray), apart from the read one along the ray, the joint is read on that piece instead: the midpoint of
 * its first and last hit (the one nearest the parent's depth where several are), where that lies nearer the parent's
 * depth than the read one. A sleeve round the arm holds the elbow as the arm does, and a fist round a grip overlaps it
 * along the ray: neither is apart; two pieces are apart where they overlap along the ray by under APART_OVERLAP_SHARE
 * of the shorter one's span (a fist behind a grip that sticks out in front of it, procedural 21 000 072: the wrist
 * read the grip, 0.08 of the canonical height in front of the hand). Parents first, so a moved upper-arm joint carries
 * its elbow's check. On 149 procedural humanoids with arms posed apart (11 000 040–119, 13 000 000–068) it moved 21
 * joints (and a hand tip), each from 0.035–0.50 of the height off in depth to within 0.01; on the artists' ten it
 * moves none. Mirrored arms share
 * their depth, which the pair's rules (pairDepth) take from the free hand where the other's ray read a held sword;
 * there, reading a piece apart either way moved a sword hand onto the wide sleeve behind it (mirrored 15 000 027 and
 * 9 900 070: both hands 2.1 → 2.8 and 0.6 → 1.9 % of the height), so mirrored arms read only a piece wholly in front of
 * the read one (inFrontOnly): the limb the lift passed as a pendant, thin against its ray's whole span. 15 000 022
 * (mirrored) hangs its hands in front of a bell-shaped cape; each wrist's ray read the cape, 0.16 of the canonical
 * height behind the hand (hands 11.4 and 12.9 % off). Behind the read one they read the piece their parent was read on
 * (the limb; not a sleeve round it): 25 000 039's sword hand reaches forward, its ray reading the grip in front of the
 * fist, and the pair took the free hand's depth, 0.05 of the canonical height behind it (6.3 % of the height off). A
 * joint moved here is read on that piece from then on (its piece in pieces).
 * c: lifted points by name (canonical), modified in place; readSpans: the span each depth was read from, by name,
 * modified in place; pieces: each point's read piece (liftJointsByFrontPiece's piece, -1 for none) and the pieces its
 * ray meets at least twice (closedPieces), by name, modified in place; inFrontOnly: read only a piece wholly in front
 * of the read one, or the parent's own piece apart from it
 */
export function armJointsOnTheirParentsPiece(c: Record<string, Vec3>, readSpans: Record<string, number>, pieces: PiecesRead, inFrontOnly = false): void {
  for (const side of ['Left', 'Right']) {
    for (const [joint, parent] of ARM_CHAIN) {
      const q = c[side + joint], p = c[side + parent], own = pieces[side + joint];
      if (!q || !p || !own || !pieces[side + parent] || own.piece < 0) continue;
      const theirs = piecesHoldingDepth(pieces[side + parent].closed, p[2]);
      if (theirs.length === 0 || theirs.includes(own.piece)) continue;
      const read = own.closed.find((hit) => hit.piece === own.piece)!;
      let best: ClosedPieceHit | null = null;
      for (const hit of own.closed) {
        const overlap = Math.min(hit.front, read.front) - Math.max(hit.back, read.back);
        const apartBy = overlap < APART_OVERLAP_SHARE * Math.min(hit.front - hit.back, read.front - read.back);
        const apart = inFrontOnly ? hit.back > read.front || (apartBy && hit.piece === pieces[side + parent].piece) : apartBy;
        if (!theirs.includes(hit.piece) || !apart) continue;
        if (!best || Math.abs(hitMiddle(hit) - p[2]) < Math.abs(hitMiddle(best) - p[2])) best = hit;
      }
      // a piece of the parent's that lies farther from its depth than the read one is no nearer reading of the limb (a
      // modular character's arm, a piece of its own, lies before a sliver of its trunk: redeclipse_male)
      if (!best || Math.abs(hitMiddle(best) - p[2]) >= Math.abs(q[2] - p[2])) continue;
      q[2] = hitMiddle(best);
      readSpans[side + joint] = best.front - best.back;
      own.piece = best.piece;
    }
  }
}

/**
 * A Left/Right pair of joints whose depths were read from overlapping spans along the ray differing by more than this
 * factor is not averaged in depth: the longer ray crossed something one side holds and the other does not (a sword's
 * blade pointing forward out of the fist runs along the wrist's ray), so both take the shorter one's depth. Spans
 * apart in depth read two things, and the shorter can be the blade's: a sword raised forward and up crosses the
 * elbow's ray thinly, far in front (procedural 19 000 055, arms mirrored: 0.015 of the height against the free
 * elbow's 0.052, 0.39 in front of it; both elbows were put there, 42.6 % of the height off).
 */
export const ONE_SIDED_SPAN_RATIO = 2;

/**
 * The joints (without their side) whose pair's depth may come from one side (pairDepth), each with the parent joint
 * its depth is checked against: the upper arm, forearm and hand, where a character holds things (a sword pointing
 * forward and up crosses the upper arm's ray too, in front of the shoulder). Elsewhere the rays meet hair or a cape on
 * both sides alike and the mean stands.
 */
const ONE_SIDED_DEPTH_PARENT: Record<string, string> = { Arm: 'Shoulder', ForeArm: 'Arm', Hand: 'ForeArm', HandTip: 'Hand' };

/**
 * Whether an arm joint (of ONE_SIDED_DEPTH_PARENT) read the limb itself: on its parent's piece (meshShells), over no
 * more than its parent's span, so its ray crossed nothing the limb holds or lies before, its parent's depth still on
 * that piece. A sword raised forward crosses the upper arm's and the elbow's rays in front of the arm (procedural
 * 25 000 071, mirrored): both read the blade, the elbow on its parent's piece; the pair's rule then gave the upper arm
 * the other side's depth, and the elbow, taken for a read of the limb, kept the blade's (29 % of the height off).
 * c: the points by name (canonical); side: 'Left' or 'Right', joint: the name without its side ('Hand'), readSpans: the
 * span each depth was read from, by name; pieces: each point's read piece and closed pieces, by name
 */
function readLimbItself(c: Record<string, Vec3>, side: string, joint: string, readSpans: Record<string, number>, pieces: PiecesRead): boolean {
  const parent = ONE_SIDED_DEPTH_PARENT[joint];
  if (!parent) return false;
  const own = pieces[side + joint], theirs = pieces[side + parent], p = c[side + parent];
  if (!own || !theirs || !p || own.piece < 0 || own.piece !== theirs.piece || !(readSpans[side + joint] <= readSpans[side + parent])) return false;
  // the parent's depth lies on the piece it was read on: a rule that moved it off (a sword's blade read on the upper
  // arm's ray, the pair's depth taken from the other side) leaves the chain on something else
  return piecesHoldingDepth(theirs.closed, p[2]).includes(theirs.piece);
}

/**
 * The joints (without their side) of ONE_SIDED_DEPTH_PARENT whose pair may take the shorter read span's depth: not
 * the upper arm, whose shorter span can be long hair's behind the shoulder rather than the shoulder's (a procedural
 * development humanoid); a held sword's blade there spans less than the arm (0.021 and 0.037 of the height against
 * 0.067 and 0.063 on procedural humanoids 11 000 053 and 11 000 106), so only the disjoint reads tell it.
 */
const SHORTER_SPAN_JOINTS = ['ForeArm', 'Hand', 'HandTip'];

/**
 * Mirror-averages each Left/Right pair across the midline x = Hips.x (the body is symmetric; silhouettes are noisy).
 * Depth is averaged too, except at the upper arms, forearms, hands and hand tips (ONE_SIDED_DEPTH_PARENT) where one
 * side's ray read something the other side's did not (readSpans: the span along the ray each depth was read from, by
 * name; NaN or absent where none was read):
 * - the two spans overlap in depth and one exceeds ONE_SIDED_SPAN_RATIO times the other (a blade along the ray;
 *   SHORTER_SPAN_JOINTS only): both take the shorter span's depth;
 * - the two spans do not overlap in depth (the ray met a separate piece in front, such as a sword's guard or blade,
 *   where its mirror met the arm): both take the depth of the side that lies nearer its parent joint's depth (parents
 *   are settled first), the side whose limb did not turn out of the body's plane.
 * - both sides read the limb itself (readLimbItself) and their spans do not overlap in depth: each keeps its own
 *   depth. Arms the front view reads as one pose can differ in depth alone: procedural 16 000 050 ('A' and 'down',
 *   read as mirrored) reaches its right hand forward, read on the hand 0.075 of the canonical height in front of the
 *   left one, and the pair took the left's, the one nearer its elbow (7.3 % of the height off).
 * - one wrist alone reads as standing behind what its hand holds (wristOfOneHoldingSomething; held: the hands and hand
 *   tips that grip a standing rod, which do not): it stands there, or half-way to the other wrist's depth where the
 *   two agree, and the other keeps its own depth.
 * Pairs whose joint (without its side) is in ownPose keep each side as read: arms posed apart (armsPosedApart).
 * c: lifted points by name (canonical), modified in place, parents before children in key order; pieces: each point's
 * read piece (as the rules before left it) and the pieces its ray meets at least twice, by name
 */
export function symmetrise(
  c: Record<string, Vec3>, readSpans: Record<string, number> = {}, ownPose: readonly string[] = [], pieces: PiecesRead = {}, held: readonly string[] = [],
): void {
  const mid = c.Hips[0];
  for (const name of Object.keys(c)) {
    if (!name.startsWith('Left') || ownPose.includes(name.slice(4))) continue;
    const other = 'Right' + name.slice(4);
    const l = c[name], r = c[other];
    if (!r) continue;
    const half = 0.5 * ((l[0] - mid) - (r[0] - mid));
    const y = 0.5 * (l[1] + r[1]);
    const joint = name.slice(4);
    const limbItself = readLimbItself(c, 'Left', joint, readSpans, pieces) && readLimbItself(c, 'Right', joint, readSpans, pieces);
    const heldSide = joint === 'Hand' ? wristOfOneHoldingSomething(c, readSpans, held) : null;
    const [zl, zr] = heldSide ? [heldSide.left, heldSide.right]
      : pairDepth(c, joint, l[2], r[2], readSpans[name] ?? Number.NaN, readSpans[other] ?? Number.NaN, limbItself);
    c[name] = [mid + half, y, zl];
    c[other] = [mid - half, y, zr];
  }
  for (const name of ['Spine', 'Spine1', 'Spine2', 'Neck', 'Head', 'HeadTop_End', 'HeadTop']) c[name][0] = mid;
}

/**
 * How near (canonical units, height ~1) a held wrist's place behind what its hand holds (wristBehindWhatItHolds) and
 * the other wrist's depth must lie, for arms the front view reads as one pose, to read as two measures of one depth
 * (wristOfOneHoldingSomething). Each errs by up to about 0.015 where the arms do mirror each other (the place behind
 * the hold: half the other wrist's span stands for the wrist's thickness, too much in a wide sleeve, 30 000 046; the
 * other wrist: the generator's two sides differ by a few degrees, 37 000 029's by 0.016 in depth). 22 000 006 hangs
 * one arm and holds its sword arm out 11° higher, read as one pose: the two lie 0.035 apart, and the place behind the
 * hold is the wrist's (0.001 off; the other wrist's depth 0.036). On 66 runs of 80 (15–47 000 000, both arm modes)
 * this moved 30 wrists; on the 38 runs it was not chosen on (29–47) 17, 14.9 → 13.1 % of the height in sum (10 nearer
 * by over 0.05, 5 farther, at most 30 000 018's 0.78 → 0.93 %), where the place behind the hold alone gave 16.9 →
 * 16.2 (30 000 046's 1.02 → 1.57). docs/EVAL.md, sixty-fourth session.
 */
export const HELD_WRIST_MIRROR_AGREEMENT = 0.02;

/**
 * The wrists' depths of arms read as one pose where one wrist alone stands behind what its hand holds
 * (wristBehindWhatItHolds; a hand on a staff, held, holds nothing here). The pair's rules (pairDepth) gave both the
 * free wrist's depth, the held wrist's only where the arms mirror each other in depth as well. Now the held wrist
 * takes the mean of its place behind the hold and the other wrist's depth where they agree within
 * HELD_WRIST_MIRROR_AGREEMENT, its place behind the hold where they do not (the arms differ in depth, which the front
 * view does not show); the other wrist keeps its own depth.
 * c: lifted points by name (canonical); readSpans: the span each depth was read from, by name; held: the hands (and
 * hand tips) that grip a standing rod → the left and the right wrist's depth, null where neither or both read so
 */
function wristOfOneHoldingSomething(c: Record<string, Vec3>, readSpans: Record<string, number>, held: readonly string[]): { left: number; right: number } | null {
  const left = wristBehindWhatItHolds(c, readSpans, 'Left', held), right = wristBehindWhatItHolds(c, readSpans, 'Right', held);
  if (Number.isNaN(left) === Number.isNaN(right)) return null;
  const behind = Number.isNaN(left) ? right : left, free = Number.isNaN(left) ? c.LeftHand[2] : c.RightHand[2];
  const z = Math.abs(behind - free) <= HELD_WRIST_MIRROR_AGREEMENT ? 0.5 * (behind + free) : behind;
  return Number.isNaN(left) ? { left: free, right: z } : { left: z, right: free };
}

/**
 * The depths of a Left/Right pair (symmetrise): for a joint of ONE_SIDED_DEPTH_PARENT, each side's own where both read
 * the limb itself and their spans do not overlap, the shorter read span's where the spans overlap and differ by
 * ONE_SIDED_SPAN_RATIO (SHORTER_SPAN_JOINTS), the side nearer its parent's depth where the spans do not overlap; else
 * (and for every other joint) the mean.
 * c: the points (the parent's depth is read from it), joint: the name without its side ('Hand'), zl, zr: each side's
 * depth, sl, sr: each side's read span (NaN where none), limbItself: both sides read the limb itself (readLimbItself)
 * → the left and the right depth
 */
function pairDepth(
  c: Record<string, Vec3>, joint: string, zl: number, zr: number, sl: number, sr: number, limbItself = false,
): [number, number] {
  const mean = 0.5 * (zl + zr);
  const parent = ONE_SIDED_DEPTH_PARENT[joint];
  const apart = Math.abs(zl - zr) > 0.5 * (sl + sr);
  // two reads of the limb itself that lie apart in depth: the pose is not mirrored there (a hand reaching forward)
  if (parent && limbItself && apart) return [zl, zr];
  if (!parent || !(sl > 0 && sr > 0)) return [mean, mean];
  let z = mean;
  if (SHORTER_SPAN_JOINTS.includes(joint) && !apart) {
    if (sl > ONE_SIDED_SPAN_RATIO * sr) z = zr;
    else if (sr > ONE_SIDED_SPAN_RATIO * sl) z = zl;
  } else if (apart) {
    const pl = c['Left' + parent], pr = c['Right' + parent];
    if (pl && pr) z = Math.abs(zl - pl[2]) <= Math.abs(zr - pr[2]) ? zl : zr;
  }
  return [z, z];
}

/** Whether a forearm's length over its upper arm's lies in ARM_PROPORTION_RANGE (NaN: no). */
export function inArmProportion(ratio: number): boolean {
  return ratio >= ARM_PROPORTION_RANGE[0] && ratio <= ARM_PROPORTION_RANGE[1];
}

/**
 * How far (canonical units, height ~1) behind both its upper-arm joint and its wrist an elbow's depth may lie
 * (elbowsBehindTheirArm). 39 000 043 (arms posed apart) raises its left arm before long hair fused to its back; the
 * network, unsure of that elbow (0.09), put it on the hair beside the arm, and its ray read the hair: 0.131 behind the
 * mean of its neighbours, 15.5 % of the height off. Of 9 120 elbows of the hybrid on 4 560 procedural humanoids
 * (11 000 000–119 and 15–39 000 000–079 with arms posed apart and mirrored, 12 and 13 000 000–079 posed apart, 9 500 000
 * and 9 900 000–079 mirrored) it is the only one more than 0.03 behind both (the next, 0.012); the mean of its
 * neighbours' depths lies 0.004 from the generator's.
 */
export const ELBOW_BEHIND_ARM = 0.03;

/**
 * In place, each elbow (ForeArm) whose depth lies over ELBOW_BEHIND_ARM behind both its upper-arm joint's (Arm) and its
 * wrist's (Hand) takes the mean of theirs: a character posed for rigging holds its arms out or down, and an elbow that
 * far behind both ends of its arm (a bow drawn back) is rarer than a ray that read something behind the arm.
 * c: lifted points by name (canonical), modified in place
 */
export function elbowsBehindTheirArm(c: Record<string, Vec3>): void {
  for (const side of ['Left', 'Right'] as const) {
    const arm = c[`${side}Arm`], elbow = c[`${side}ForeArm`], hand = c[`${side}Hand`];
    if (!arm || !elbow || !hand) continue;
    if (elbow[2] < Math.min(arm[2], hand[2]) - ELBOW_BEHIND_ARM) elbow[2] = 0.5 * (arm[2] + hand[2]);
  }
}
