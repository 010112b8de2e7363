/**
 * A sword held in one hand (sidecar/skeleton/armDepths.ts pairDepth, liftJoints.ts's read span): the generator's
 * blade points forward out of the fist, so the wrist's ray on that side runs along the blade, or meets the guard, a
 * piece of its own in front of the wrist. Left and right were averaged in depth, and both wrists sat far in front of
 * the arms (procedural development humanoids 9 200 056 and 9 200 034: 10.4 % and 8.7 % of the height): the voxel
 * skinning then gave the free hand's bone no vertex at all, and it moved nothing. Now the pair takes the depth of the
 * side whose ray read only the wrist: the shorter read span where one is over twice the other (the blade), else,
 * where the two read spans do not overlap (the guard), the side nearer its forearm's depth.
 */
import { describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { meshShells } from '../sidecar/mesh/meshShells.js';
import { rigCharacterAsync } from '../sidecar/pipeline.js';
import { HELD_WRIST_MIRROR_AGREEMENT, symmetrise } from '../sidecar/skeleton/armDepths.js';
import { renderFrontView } from '../sidecar/skeleton/frontView.js';
import { insideStretches, liftJointsByFrontPiece } from '../sidecar/skeleton/liftJoints.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';
import { rigJointErrors, SCORED_JOINTS } from './fixtures/riggedProcedural.js';
import { addBox } from './fixtures/boxMesh.js';

describe('a sword held in one hand', () => {
  it('reports the span along the ray each depth was read from: the front piece\'s, or the whole ray\'s', () => {
    const positions: number[] = [], triangles: number[] = [];
    addBox(positions, triangles, [-0.05, -0.05, -0.05], [0.05, 0.05, 0.05]);  // a wrist, z from -0.05 to 0.05
    addBox(positions, triangles, [-0.3, -0.05, 0.1], [-0.2, 0.05, 0.6]);       // a blade along z, a piece of its own
    const p = new Float32Array(positions), t = new Uint32Array(triangles);
    const lift = liftJointsByFrontPiece(p, t, meshShells(p, t).shellOf, Float64Array.of(0, 0, -0.25, 0, 0.8, 0), renderFrontView(p, t, 64));
    expect(lift.span[0]).toBeCloseTo(0.1, 6);
    expect(lift.span[1]).toBeCloseTo(0.5, 6);
    expect(lift.z[1]).toBeCloseTo(0.35, 6);
    // a ray that misses the mesh reads no span
    expect(Number.isNaN(lift.span[2])).toBe(true);
  });

  it('reads a hand before a cape on the hand, though both are thin beside the whole ray', () => {
    const positions: number[] = [], triangles: number[] = [];
    addBox(positions, triangles, [-0.05, -0.05, -0.02], [0.05, 0.05, 0.02]);   // a hand, z from -0.02 to 0.02
    addBox(positions, triangles, [-0.3, -0.3, -0.2], [0.3, 0.3, -0.19]);       // a cape's two layers behind it
    const p = new Float32Array(positions), t = new Uint32Array(triangles);
    const lift = liftJointsByFrontPiece(p, t, meshShells(p, t).shellOf, Float64Array.of(0, 0), renderFrontView(p, t, 64));
    // both pieces span under MIN_FRONT_PIECE_SHARE of the ray (0.04 and 0.01 of 0.22): the first stands, not the
    // whole ray's midpoint (-0.09; procedural 9 200 040's wrists before its cape sat 7.7 % of the height behind)
    expect(lift.z[0]).toBeCloseTo(0, 6);
    expect(lift.span[0]).toBeCloseTo(0.04, 6);
  });

  it('splits a ray into the stretches it runs inside the surface, overlapping parts as one', () => {
    const positions: number[] = [], triangles: number[] = [];
    addBox(positions, triangles, [-0.05, -0.05, -0.3], [0.05, 0.05, -0.2]);   // an arm, z from -0.3 to -0.2
    addBox(positions, triangles, [-0.02, -0.02, -0.25], [0.02, 0.02, 0.3]);   // a blade out of it, through the fist
    addBox(positions, triangles, [-0.05, -0.05, 0.4], [0.05, 0.05, 0.45]);    // a guard in front, apart
    const p = new Float32Array(positions), t = new Uint32Array(triangles);
    const lift = liftJointsByFrontPiece(p, t, meshShells(p, t).shellOf, Float64Array.of(0.01, 0.01, 0.04, 0.03), renderFrontView(p, t, 64));
    // through the blade: the guard, then the blade and the arm it enters as one stretch
    expect(Array.from(lift.stretches[0])).toEqual([0.45, 0.4, 0.3, -0.3].map((z) => expect.closeTo(z, 6)));
    // beside the blade: the guard and the arm, with the gap between them
    expect(Array.from(lift.stretches[1])).toEqual([0.45, 0.4, -0.2, -0.3].map((z) => expect.closeTo(z, 6)));
    // faces wound inside out read the same; an open surface (three hits) is one stretch from first to last hit
    expect(Array.from(insideStretches([0.45, 0.4, -0.2, -0.3], [-1, 1, -1, 1]))).toEqual([0.45, 0.4, -0.2, -0.3]);
    expect(Array.from(insideStretches([0.45, 0.4, -0.3], [1, -1, 1]))).toEqual([0.45, -0.3]);
    expect(insideStretches([], []).length).toBe(0);
  });

  it('reports the piece each depth was read on, and every piece its ray meets twice', () => {
    const positions: number[] = [], triangles: number[] = [];
    addBox(positions, triangles, [-0.05, -0.05, -0.3], [0.05, 0.05, -0.2]);   // an arm, z from -0.3 to -0.2
    addBox(positions, triangles, [-0.02, -0.02, 0.1], [0.02, 0.02, 0.4]);     // a blade in front, a piece of its own
    const p = new Float32Array(positions), t = new Uint32Array(triangles);
    const { shellOf } = meshShells(p, t);
    const lift = liftJointsByFrontPiece(p, t, shellOf, Float64Array.of(0.01, 0.01, 0.04, 0.03, 0.5, 0.5), renderFrontView(p, t, 64));
    const arm = shellOf[0], blade = shellOf[8];
    expect(arm).not.toBe(blade);
    // through the blade: read on it (it spans 0.3 of the ray's 0.7), the arm behind it met too
    expect(lift.piece[0]).toBe(blade);
    expect(lift.closedPieces[0]).toEqual([
      { piece: blade, front: expect.closeTo(0.4, 6), back: expect.closeTo(0.1, 6) },
      { piece: arm, front: expect.closeTo(-0.2, 6), back: expect.closeTo(-0.3, 6) },
    ]);
    // beside the blade: the arm alone
    expect(lift.piece[1]).toBe(arm);
    expect(lift.closedPieces[1]).toHaveLength(1);
    // a ray that misses the mesh reads no piece
    expect(lift.piece[2]).toBe(-1);
    expect(lift.closedPieces[2]).toEqual([]);
  });

  // 15 000 003 holds its left arm out level, a sword pointing forward and in: the blade crosses the upper arm's and
  // the elbow's rays 0.37 and 0.22 of the height in front of the arm, on the same piece (the generator welds this hilt
  // to the hand). 15 000 020's hanging left hand holds a sword that is a piece of its own, read first along the wrist's
  // ray. The joints took the midpoint between arm and blade; now each takes the stretch inside the surface nearest its
  // parent's depth (armJointsOnTheirOwnStretch)
  it.each([
    [15_000_003, ['LeftArm', 'RightArm', 'LeftForeArm'], 0.03],
    [15_000_020, ['LeftHand'], 0.015],
  ] as const)('keeps the arm joints of procedural humanoid %i at the arm\'s depth, not between it and the blade', async (seed, joints, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    expect((character.meta.clothing as string[]).some((c) => c.startsWith('sword'))).toBe(true);
    const errors = await rigJointErrors(character);
    // measured (15 000 003) LeftArm / RightArm / LeftForeArm: 1.04 / 0.89 / 2.14 % of the height (the elbow's 2D is
    // the network's, 2 % short); before, 10.0 / 10.5 / 11.5 %. 15 000 020's LeftHand: 0.16 %; before, 5.4 %
    for (const name of joints) expect(errors[SCORED_JOINTS.indexOf(name as never)], name).toBeLessThan(bound);
  }, 60_000);

  // A sword of its own piece held forward: 17 000 032's elbow ray and 11 000 106's upper-arm, elbow and wrist rays meet
  // the blade (or the guard) first, apart from the arm behind it; each was read on the blade, and the arms' length rules
  // could only pull it part of the way back. Now a joint read on a piece that does not hold its parent is read on the
  // parent's piece its ray meets (armJointsOnTheirParentsPiece)
  it.each([
    [17_000_032, ['RightForeArm'], 0.03],
    [11_000_106, ['RightArm', 'RightForeArm', 'RightHand'], 0.025],
  ] as const)('reads procedural humanoid %i\'s sword arm on the arm, not on the blade held in front of it', async (seed, joints, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    expect(character.meta.clothing).toContain('sword (right hand)');
    const errors = await rigJointErrors(character);
    // measured 1.4 % (17 000 032's elbow; before, 5.9 %) and 0.8 / 1.1 / 1.3 % (11 000 106; before, 0.9 / 4.0 / 5.8 %)
    for (const name of joints) expect(errors[SCORED_JOINTS.indexOf(name as never)], name).toBeLessThan(bound);
  }, 60_000);

  // A grip sticking out in front of the fist that holds it: 21 000 072's wrist ray meets the grip (its own piece) and the
  // fist just behind it, overlapping by a tenth of the fist's span. Read on the grip, 0.08 of the canonical height in
  // front of the hand, the wrist was 8.3 % of the height off; the two pieces now lie apart (APART_OVERLAP_SHARE).
  // 19 000 010's left wrist ray meets the grip alone, the fist just off it: it read the grip's midpoint, 0.047 in front
  // of the wrist (5.7 %), and its forearm read 1.24 times the other's, under ARM_LENGTH_SLACK. A joint whose ray met
  // nothing of its limb now takes the other side's length however little longer it reads (armDepthsOfEqualLength); its
  // elbow, read first on the blade and then on the arm behind it, is recorded on the arm
  it.each([
    [21_000_072, 'on the fist, not on the grip in front of it'],
    [19_000_010, 'whose ray met the grip alone, on the arm'],
  ] as const)('reads procedural humanoid %i\'s sword wrist %s', async (seed, _how) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    expect(character.meta.clothing).toContain('sword (left hand)');
    const errors = await rigJointErrors(character);
    // measured 1.8 % and 2.0 %
    expect(errors[SCORED_JOINTS.indexOf('LeftHand')]).toBeLessThan(0.03);
  }, 60_000);

  // Arms read as one mirrored pose, the sword hand reaching forward: 25 000 071's blade, raised forward, crosses the right
  // upper arm's and elbow's rays in front of the arm. The pair gave the upper arm the left one's depth, but the elbow,
  // read on the blade as its parent had been, was taken for a read of the limb itself and kept the blade's (29.0 %).
  // 25 000 039's right wrist ray reads the grip in front of the fist, then the fist, then the sleeve: the pair took the
  // free hand's depth, behind the fist (6.3 %); the fist, on its elbow's piece, now stands in
  it.each([
    [25_000_071, false, 'RightForeArm', 0.03],
    [25_000_039, true, 'RightHand', 0.03],
  ] as const)('reads procedural humanoid %i\'s sword arm, mirrored in the front view, on the arm', async (seed, asymmetricArms, joint, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms });
    expect(character.meta.clothing).toContain('sword (right hand)');
    const errors = await rigJointErrors(character);
    // measured 0.2 % and 0.9 %
    expect(errors[SCORED_JOINTS.indexOf(joint)]).toBeLessThan(bound);
  }, 60_000);

  // A grip and guard fused to the fist, the blade pointing forward: the wrist's ray runs from the guard to the back of
  // the wrist (read span 0.13 / 0.12 of the height, the free wrist's 0.035 / 0.037), and its forearm reads 1.19 / 1.17
  // times the other's, under ARM_LENGTH_SLACK. A wrist read over WRIST_SPAN_RATIO times the other's takes its length
  it.each([
    [16_000_006, 'LeftHand', 0.02],
    [16_000_007, 'RightHand', 0.025],
  ] as const)('puts procedural humanoid %i\'s sword wrist on the arm, not between it and the guard fused to the fist', async (seed, hand, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    expect((character.meta.clothing as string[]).some((c) => c.startsWith('sword'))).toBe(true);
    const errors = await rigJointErrors(character);
    // measured 0.4 / 1.3 % of the height; before, 4.8 / 2.9 %, the wrist 0.042–0.048 in front of the arm
    expect(errors[SCORED_JOINTS.indexOf(hand)]).toBeLessThan(bound);
  }, 60_000);

  // A guard fused to the fist in front of it, the wrist's read span 2.7 / 2.8 times the free wrist's and twice its own
  // elbow's: the midpoint sat 0.04 of the height in front of the wrist, and its forearm read 1.22 / 1.09 times the
  // other's, under ARM_LENGTH_SLACK. The wrist now stands half a wrist's span inside the span's end nearer its elbow
  // (wristsBehindWhatTheyHold). 16 000 042's free right wrist reads 2.3 times the other's span, but only 0.03 of the
  // height more (under HELD_WRIST_EXCESS): it stays as read. 28 000 065's and 33 000 026's sword wrists read 1.86 and
  // 1.85 times the free wrist's span (HELD_WRIST_SPAN_RATIO)
  it.each([
    [20_000_016, 'LeftHand', 0.02],
    [15_000_028, 'LeftHand', 0.015],
    [16_000_042, 'RightHand', 0.01],
    [28_000_065, 'RightHand', 0.025],
    [33_000_026, 'RightHand', 0.02],
  ] as const)('puts procedural humanoid %i\'s %s behind the guard its ray crossed, and a free wrist where it was read', async (seed, hand, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    const errors = await rigJointErrors(character);
    // measured 0.9 / 0.7 / 0.5 / 1.9 / 1.4 % of the height; before, 4.3 / 2.4 % (1.6 % for 16 000 042 without the
    // excess), and 3.8 / 2.5 % with the sword wrists' ratio at 2.2
    expect(errors[SCORED_JOINTS.indexOf(hand)]).toBeLessThan(bound);
  }, 60_000);

  // 9 200 056: the blade runs along the left wrist's ray (read spans 0.38 against 0.03); 9 200 034: the right wrist's
  // ray meets the guard, a piece of its own (read spans 0.06 and 0.05, 0.16 apart in depth)
  it.each([9_200_056, 9_200_034])('puts both wrists of procedural humanoid %i at the arms\' depth, and the free hand\'s bone holds its hand', async (seed) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000 });
    const clothing = character.meta.clothing as string[], height = character.meta.heightMetres as number;
    expect(clothing.some((c) => c.startsWith('sword'))).toBe(true);
    const rig = await rigCharacterAsync(character.parts);
    const free = clothing.includes('sword (left hand)') ? 'RightHand' : 'LeftHand';
    for (const name of ['LeftHand', 'RightHand']) {
      const k = MIXAMO_JOINTS.indexOf(name as never);
      const head = rig.skeleton.joints.find((j) => j.name === `mixamorig:${name}`)!.head;
      const error = Math.hypot(...head.map((x, i) => x - character.joints[3 * k + i])) / height;
      // measured 0.55 / 0.11 % (9 200 056) and 0.77 / 1.27 % (9 200 034); before, 10.4–10.6 % and 8.7 %
      expect(error, name).toBeLessThan(0.025);
    }
    const b = rig.skeleton.joints.findIndex((j) => j.name === `mixamorig:${free}`);
    let held = 0;
    for (const o of rig.objects) for (let i = 0; i < o.indices.length; i++) if (o.indices[i] === b && o.weights[i] > 0.5) held++;
    // measured 292 and 159 vertices; before, 0 and 12
    expect(held, free).toBeGreaterThan(100);
  }, 60_000);

  // Arms posed apart, the sword pointing forward and up: its blade crosses the upper arm's ray in front of the
  // shoulder (read span 0.021 and 0.037 of the height, under the free arm's 0.067 and 0.063). The upper-arm pair was
  // mirror-averaged, half-way to the blade; then the free arm, checked against it for equal bone lengths
  // (armDepthsOfEqualLength), was pulled forward too. Now the pair takes the side nearer its shoulder's depth.
  it.each([11_000_053, 11_000_106])('keeps both upper arms of procedural humanoid %i at the shoulders\' depth, its sword raised across one', async (seed) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    expect(character.meta.clothing).toContain('sword (right hand)');
    const errors = await rigJointErrors(character);
    const at = (name: string) => errors[SCORED_JOINTS.indexOf(name as never)];
    // measured 0.27 / 0.28 % of the height (11 000 053) and 0.93 / 0.84 % (11 000 106); before, 3.4–7.5 %
    for (const name of ['LeftArm', 'RightArm']) expect(at(name), name).toBeLessThan(0.015);
    // measured 1.24 / 2.47 % and 0.96 / 3.99 %; before, 9.7–27 %
    for (const name of ['LeftForeArm', 'RightForeArm']) expect(at(name), name).toBeLessThan(0.05);
    // the free hand: measured 1.32 % and 1.72 %; before, 1.32 % and 18.0 %
    expect(at('LeftHand')).toBeLessThan(0.025);
  }, 60_000);

  // Arms mirrored, the sword raised forward and up out of the right fist: its blade crosses the right elbow's ray thinly
  // (read span 0.015 of the height against the free elbow's 0.052), 0.39 in front of the arm. The shorter span was
  // taken for the arm's, and both elbows stood on the blade (42.6 % of the height off); now two spans apart in depth
  // go to the side nearer its upper arm's depth (pairDepth)
  it('keeps both elbows of procedural humanoid 19 000 055 on its arms, its sword raised across one elbow\'s ray', async () => {
    const character = generateProceduralHumanoid(19_000_055, { targetVertices: 20_000 });
    expect(character.meta.clothing).toContain('sword (right hand)');
    const errors = await rigJointErrors(character);
    // measured 0.4 % each; before, 42.6 %
    for (const name of ['LeftForeArm', 'RightForeArm']) expect(errors[SCORED_JOINTS.indexOf(name as never)], name).toBeLessThan(0.02);
  }, 60_000);

  // Arms posed apart: the sword raised up and out to the left, a wide sleeve hanging on the right. Fitted over the middle
  // 80 % of the height pixel by pixel, the body leaned 17.5° and was refused NOT_HUMANOID; its legs and hips, row by
  // row, lean 7°, and the lesser stands (humanoidShape.ts LEAN_LOWER_ROWS)
  it('rigs procedural humanoid 19 000 021, its sword raised out to one side', async () => {
    const character = generateProceduralHumanoid(19_000_021, { targetVertices: 20_000, asymmetricArms: true });
    expect(character.meta.clothing).toContain('sword (left hand)');
    const errors = await rigJointErrors(character);
    // measured: mean 1.04 %; every joint but the sword hand (9.9 %) under 3 % of the height
    expect(errors.reduce((a, b) => a + b, 0) / errors.length).toBeLessThan(0.015);
    const trunkAndLegs = SCORED_JOINTS.flatMap((name, k) => (/Hips|Spine|Neck|Head|UpLeg|Leg|Foot/.test(name) ? [errors[k]] : []));
    expect(Math.max(...trunkAndLegs)).toBeLessThan(0.03);
    // the sword hand, read up its forearm inside the sleeve's and the blade's outline (the forearm 0.41 of the other's),
    // lengthened to the other's (forearmsOfEqualLength): measured 1.1 %; before, 9.9 %
    expect(errors[SCORED_JOINTS.indexOf('LeftHand')]).toBeLessThan(0.02);
  }, 60_000);

  // 22 000 013 holds its sword's arm out and up, the other down: the wrist read 0.47 of the way along the forearm's
  // length, and the hand stood 9.4 % of the height short of its place; lengthened, 1.8 %
  it('reaches procedural humanoid 22 000 013\'s raised sword hand along its forearm', async () => {
    const character = generateProceduralHumanoid(22_000_013, { targetVertices: 20_000, asymmetricArms: true });
    expect(character.meta.clothing).toContain('sword (left hand)');
    const errors = await rigJointErrors(character);
    expect(errors[SCORED_JOINTS.indexOf('LeftHand')]).toBeLessThan(0.03);
    expect(errors[SCORED_JOINTS.indexOf('RightHand')]).toBeLessThan(0.02);
  }, 60_000);

  // 28 000 002 holds its sword arm out level and forward. Its 2D elbow stands 2.4 % of the height in along the arm and
  // its wrist 2.7 % out: the forearm reads 1.5 times the other's, the upper arm 0.83 times. The forearm took the other
  // forearm's length, and its depth, short of what the front view had left it, put the wrist 6.3 % behind (6.9 % off).
  // A forearm whose upper arm reads shorter than the other's now keeps the other arm's whole length (upper arm and
  // forearm) less its own upper arm's. 25 000 071's raised sword wrist: its ray missed the surface and took the depth
  // of the pixel beside it, 0.7 of a forearm's length in front of the elbow, the forearm 1.26 times the other's (that
  // measure). A joint whose ray missed is held to that length whatever its depth
  it.each([
    // measured 3.4 % (before, 6.9 %) and 1.5 % (with the whole arm's measure alone, 5.3 %)
    [28_000_002, 'whose elbow was read in along its level arm', 0.045],
    [25_000_071, 'whose ray missed the surface', 0.025],
  ] as const)('holds procedural humanoid %i\'s sword wrist, %s, to the arm\'s length', async (seed, _how, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    expect(character.meta.clothing).toContain('sword (right hand)');
    const errors = await rigJointErrors(character);
    expect(errors[SCORED_JOINTS.indexOf('RightHand')]).toBeLessThan(bound);
  }, 60_000);

  // 37 000 000 and 35 000 075 raise their sword arm above the shoulder, the blade pointing forward and in: seen from
  // the front it lies back over the forearm, 15 to 20 times as deep as the wrist. The rules' wrist stood where the
  // blade's projection begins (the peak of depth read as the palm) and the network, at 0.39 and 0.28, was left under
  // HYBRID_MIN_HAND_CONFIDENCE: hands 8.4 % and 8.3 % of the height short. Such a wrist now gives way to the network's
  // whatever its confidence (landmarks2d heldAcrossWrist)
  it.each([
    // measured 5.1 % and 3.4 %
    [37_000_000, 0.065],
    [35_000_075, 0.05],
  ] as const)('reaches procedural humanoid %i\'s raised sword hand past the blade seen across its forearm', async (seed, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    expect(character.meta.clothing).toContain('sword (right hand)');
    const errors = await rigJointErrors(character);
    expect(errors[SCORED_JOINTS.indexOf('RightHand')]).toBeLessThan(bound);
    expect(errors[SCORED_JOINTS.indexOf('LeftHand')]).toBeLessThan(0.02);
  }, 60_000);

  it('rigs procedural humanoid 10 000 026, whose sword held forward made its box deeper than wide', async () => {
    // before, the canonical frame lay it on its back (axisAlignedFrame.ts bulkSides) and it was refused NOT_HUMANOID,
    // "the body leans 26°"
    const character = generateProceduralHumanoid(10_000_026, { targetVertices: 20_000 });
    expect(character.meta.clothing).toContain('sword (left hand)');
    const errors = await rigJointErrors(character);
    // measured: mean 1.00 %, worst joint 1.9 % of the height
    expect(errors.reduce((a, b) => a + b, 0) / errors.length).toBeLessThan(0.015);
    expect(Math.max(...errors)).toBeLessThan(0.03);
  }, 60_000);

  // read facing backwards before (axisAlignedFrame.ts feetForwardScore): 9 900 021's blade hangs beside its legs, across
  // the shins' band, and pulled the shins' depth forward of the feet; 9 200 024's cape lies on the floor behind its feet
  // and pulled theirs back. Facing backwards, left and right were swapped: mean joint error 16.3 % and 28.7 %
  it.each([
    [9_900_021, 'sword (right hand)', 0.017],
    [9_200_024, 'cape', 0.014],
  ] as const)('rigs procedural humanoid %i (%s) facing forward, its left side on its left', async (seed, wears, measured) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000 });
    expect(character.meta.clothing).toContain(wears);
    const errors = await rigJointErrors(character);
    // measured: mean 1.68 % (9 900 021) and 1.40 % (9 200 024), worst joint 4.0 % and 3.2 % of the height. With the
    // three-network joints2d, 9 900 021's right elbow was left to the rules, which read its arms in its cone hat: 3.48 %
    // (both elbows 26.8 % off) until the rules' elbow out of its upper arm's reach gave way (elbowOutOfReach): 1.21 %
    expect(errors.reduce((a, b) => a + b, 0) / errors.length).toBeLessThan(measured + 0.005);
    expect(Math.max(...errors)).toBeLessThan(0.05);
  }, 60_000);
});

describe('a hand whose depth both readings put behind it', () => {
  // The arms' lengths (armDepthsOfEqualLength) pull a wrist read too far from its elbow back to the other arm's
  // length; a sword's grip along the wrist's ray does the same. The refinement network's wrist, where it stands
  // HAND_FORWARD_OF_RAY in front of that, is taken (withRefinedDepth): 12 000 051 and 17 000 032 (fresh seeds, not
  // looked at before the rule was fixed) hold a sword in the right hand, 12 000 017 raises its hand in a wide sleeve
  it.each([
    // measured 0.9 % (before 5.2 %), 1.3 % (before 5.4 %) and 5.1 % (before 7.9 %: the network's wrist too is behind)
    [12_000_051, 'RightHand', 0.02],
    [17_000_032, 'RightHand', 0.02],
    [12_000_017, 'LeftHand', 0.065],
  ] as const)('of procedural humanoid %i (%s), arms posed apart, stands nearer its depth', async (seed, hand, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    const errors = await rigJointErrors(character);
    expect(errors[SCORED_JOINTS.indexOf(hand)]).toBeLessThan(bound);
  }, 60_000);
});

describe('a sword hand whose depth one reading took off what the hand holds', () => {
  // The network's wrist, drawn forward by a sword's guard or blade apart in front of the fist, can stand in the gap
  // between them, outside the surface along its ray: the ray's depth stays there (insideAStretch). 28 000 064's and
  // 24 000 008's stood 3.6 and 3.7 % of the canonical height in front of their wrists
  it.each([
    // measured 0.6 % and 1.6 % (before 4.0 % and 4.0 %)
    [28_000_064, 'LeftHand', 0.015],
    [24_000_008, 'LeftHand', 0.025],
  ] as const)('of procedural humanoid %i (%s), the network\'s wrist between its fist and its sword, keeps the ray\'s depth', async (seed, hand, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    expect(character.meta.clothing).toContain('sword (left hand)');
    const errors = await rigJointErrors(character);
    expect(errors[SCORED_JOINTS.indexOf(hand)]).toBeLessThan(bound);
  }, 60_000);

  // 31 000 055's 2D wrist stood on the fist of a hand reaching forward and down, past the wrist, and its ray read the
  // fist's depth on its forearm's piece (readLimbItself): the forearm read 1.31 times its upper arm, the other 0.89,
  // the upper arms alike. It now takes the other forearm's length (FOREARM_OVER_UPPER_ARM_MAX)
  it('of procedural humanoid 31 000 055, its wrist read on the fist past it, takes the other forearm\'s length', async () => {
    const character = generateProceduralHumanoid(31_000_055, { targetVertices: 20_000, asymmetricArms: true });
    expect(character.meta.clothing).toContain('sword (right hand)');
    const errors = await rigJointErrors(character);
    // measured 2.0 % (before 6.3 %: the wrist 5.8 % of the height in front)
    expect(errors[SCORED_JOINTS.indexOf('RightHand')]).toBeLessThan(0.03);
  }, 60_000);
});

describe('a sword hand of arms the front view reads as one pose', () => {
  /** Canonical points of arms read as one pose, the right hand's ray run along what it holds (spans from 22 000 006). */
  const armsReadAsOne = (leftWristZ: number) => {
    const c: Record<string, [number, number, number]> = { Hips: [0, -0.2, -0.16] };
    for (const name of ['Spine', 'Spine1', 'Spine2', 'Neck', 'Head', 'HeadTop_End', 'HeadTop']) c[name] = [0, 0, -0.16];
    Object.assign(c, {
      LeftForeArm: [0.13, -0.035, -0.16], LeftHand: [0.17, -0.116, leftWristZ],
      RightForeArm: [-0.13, -0.035, -0.16], RightHand: [-0.17, -0.116, -0.068],
    });
    const readSpans = { LeftForeArm: 0.031, RightForeArm: 0.031, LeftHand: 0.023, RightHand: 0.126 };
    return { c, readSpans };
  };

  it('stands the held wrist behind what its hand holds where the other wrist lies apart in depth, and keeps the other\'s', () => {
    const { c, readSpans } = armsReadAsOne(-0.155);
    symmetrise(c, readSpans);
    // the span runs from -0.131 to -0.005; the end nearer the elbow (-0.16), half the free wrist's span inside it
    expect(c.RightHand[2]).toBeCloseTo(-0.131 + 0.0115, 6);
    expect(c.LeftHand[2]).toBeCloseTo(-0.155, 6);
    // the front view's x and y are still mirrored
    expect(c.RightHand[0]).toBeCloseTo(-c.LeftHand[0], 6);
    expect(c.RightHand[1]).toBeCloseTo(c.LeftHand[1], 6);
  });

  it('takes the mean of the place behind the hold and the other wrist\'s depth where the two agree', () => {
    const { c, readSpans } = armsReadAsOne(-0.13);
    expect(Math.abs(-0.1195 + 0.13)).toBeLessThan(HELD_WRIST_MIRROR_AGREEMENT);
    symmetrise(c, readSpans);
    expect(c.RightHand[2]).toBeCloseTo(0.5 * (-0.1195 - 0.13), 6);
    expect(c.LeftHand[2]).toBeCloseTo(-0.13, 6);
  });

  it('leaves a hand on a staff to the pair\'s rules: both take the free wrist\'s depth', () => {
    const { c, readSpans } = armsReadAsOne(-0.155);
    symmetrise(c, readSpans, [], {}, ['RightHand', 'RightHandTip']);
    expect(c.RightHand[2]).toBeCloseTo(-0.155, 6);
    expect(c.LeftHand[2]).toBeCloseTo(-0.155, 6);
  });

  // 22 000 006 hangs one arm and holds its sword arm out 11° higher, read as one pose; 37 000 029 and 28 000 065 mirror
  // their arms, their sword wrists' place behind the hold within HELD_WRIST_MIRROR_AGREEMENT of the free wrist's depth
  it.each([
    // measured 1.9 % of the height (before 4.1 %: the free wrist's depth, 3.6 % behind)
    [22_000_006, true, 'RightHand', 0.025],
    // measured 1.2 % and 1.2 % (before 1.9 % and 1.9 %)
    [37_000_029, false, 'LeftHand', 0.015],
    [28_000_065, false, 'RightHand', 0.015],
  ] as const)('puts procedural humanoid %i\'s sword wrist (arms generated apart: %s) at its depth', async (seed, asymmetricArms, hand, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms });
    expect((character.meta.clothing as string[]).some((c) => c.startsWith('sword'))).toBe(true);
    const errors = await rigJointErrors(character);
    expect(errors[SCORED_JOINTS.indexOf(hand)]).toBeLessThan(bound);
  }, 60_000);
});
