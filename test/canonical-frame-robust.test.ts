/**
 * The canonical frame on procedural characters the axis-aligned finder misread (issue 6 data generation): a skirt and
 * a long coat (it took the side view), a cape (it faced backwards), a staff in hand (upside down), and characters
 * turned off the input axes (it gave an axis-aligned frame). Procedural characters stand +Y up facing +Z, left on +X.
 * The seeds and vertex counts are those of the survey (test/canonical-frame-survey.ts) where each misread showed;
 * seed 9 100 000 is the first test identity of `eval poses`, which the first turned finder misread.
 */
import { describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { findCanonicalFrame, fromCanonical, pointToCanonical, toCanonical } from '../sidecar/mesh/canonicalFrame.js';
import { bestMirrorPlane, bodyAxes, bodyEnds, bulkSides, feetApartAxis, footPieces, fullestLayer, HEM_SPAN, mirrorPlane, ROD_LAYER_SHARE, UP_BY_LENGTH } from '../sidecar/mesh/axisAlignedFrame.js';
import { bodyTriangles } from '../sidecar/mesh/debris.js';
import { mergeParts } from '../sidecar/mesh/mergeParts.js';
import { rigCharacterAsync } from '../sidecar/pipeline.js';
import type { Vec3 } from '../sidecar/types.js';
import { readFrame, turnAboutUp, turnedTruth } from './canonical-frame-survey.js';
import { boxMesh } from './fixtures/boxMesh.js';
import { capsuleMesh, humanoidCapsules } from './fixtures/humanoid.js';
import { rigJointErrors, SCORED_JOINTS } from './fixtures/riggedProcedural.js';

/** seed → what it wears and the vertex count it misread at. */
const MISREAD = [
  { seed: 46, wears: 'skirt', targetVertices: 29260 },
  { seed: 101, wears: 'long coat', targetVertices: 39788 },
  { seed: 137, wears: 'cape', targetVertices: 24860 },
  { seed: 171, wears: 'staff', targetVertices: 19095 },
  // the blade, held 0.65 m ahead of the chest, is wide enough to count as bulk (a sheet along one axis only) and made the
  // bulk deeper than wide: the thinness rule took left-right for depth and the frame lay the body on its back
  // (bulkSides' ROD_LAYER_SHARE; the pipeline then refused it, "the body leans 26°")
  { seed: 10_000_026, wears: 'sword held forward', targetVertices: 20_000 },
  // read facing backwards by the feet cue (feetForwardScore): a cape's thick hem lying behind the feet pulled the feet's
  // depth centroid back (footPieces), and a blade hanging beside the legs pulled the shins' forward (the
  // shins are read in the columns that hold feet)
  { seed: 9_200_024, wears: 'long coat, cape and sword', targetVertices: 20_000 },
  { seed: 9_500_050, wears: 'long coat, cape and sword', targetVertices: 20_000 },
  { seed: 9_900_021, wears: 'sword hanging beside the legs', targetVertices: 20_000 },
  { seed: 10_200_052, wears: 'sword hanging beside the legs', targetVertices: 20_000 },
  // a chibi under a brim hat 1.9 m across on a 1.8 m body: the brim's one layer held 2.5 times the bulk of any other
  // across up, and the legs' layers, under ROD_LAYER_SHARE of it, were left out of the height (fullestLayer); the body
  // was read lying on its back and refused NOT_HUMANOID
  { seed: 23_000_012, wears: 'brim hat wider than the body is tall', targetVertices: 20_000 },
  // read facing backwards while its cape went 0.22 of the height through the floor (the forward cue's feet band held
  // only the hem): the generator cuts it at the floor now
  { seed: 22_000_058, wears: 'long coat and a cape to the floor', targetVertices: 20_000 },
  // read facing backwards by the feet cue read over whole bands (no foot told apart from the hems of a long coat and a
  // cape): −0.006, over FORWARD_DECIDES; such bands decide only from FORWARD_DECIDES_WHOLE_BANDS, and it took the
  // file's convention. Rigged backwards, its joints stood 6–61 % of the height off
  { seed: 36_000_066, wears: 'long coat and a cape', targetVertices: 20_000 },
];

function bodyOf(seed: number, targetVertices: number): { positions: Float32Array; triangles: Uint32Array } {
  const mesh = mergeParts(generateProceduralHumanoid(seed, { targetVertices }).parts);
  return { positions: mesh.positions, triangles: bodyTriangles(mesh.positions, mesh.triangles) };
}

/** Angle between two unit vectors, degrees. */
function degreesBetween(a: Vec3, b: Vec3): number {
  return Math.acos(Math.min(1, Math.max(-1, a[0] * b[0] + a[1] * b[1] + a[2] * b[2]))) * 180 / Math.PI;
}

/** (x, y, z) → (x, -z, y): a Y-up character stood up the Blender way, +Z up, facing -Y. */
function zUp(positions: Float32Array): Float32Array {
  const out = new Float32Array(positions.length);
  for (let i = 0; i < positions.length; i += 3) {
    out[i] = positions[i];
    out[i + 1] = -positions[i + 2];
    out[i + 2] = positions[i + 1];
  }
  return out;
}

describe('the sides of the body\'s bulk', () => {
  it('leave out end layers that hold a few voxels against the fullest layer\'s (a rod held forward)', () => {
    // a 10 × 20 × 5 block of bulk, and a 1 × 1 rod 20 voxels long sticking out along z
    const grid = { origin: [0, 0, 0] as Vec3, size: 0.1, dims: [10, 20, 25] as [number, number, number] };
    const solid = new Uint8Array(10 * 20 * 25);
    const at = (i: number, j: number, k: number) => i + 10 * (j + 20 * k);
    for (let k = 0; k < 5; k++) for (let j = 0; j < 20; j++) for (let i = 0; i < 10; i++) solid[at(i, j, k)] = 1;
    for (let k = 5; k < 25; k++) solid[at(5, 10, k)] = 1;
    const sides = bulkSides([solid, solid, solid], grid, [1, 2, 2.5]);
    // each rod layer holds 1 voxel against 200 (0.5 % < ROD_LAYER_SHARE): depth 5 voxels, not 25
    expect(1 / 200).toBeLessThan(ROD_LAYER_SHARE);
    expect(sides.map((x) => +x.toFixed(6))).toEqual([1, 2, 0.5]);
    // a layer of the block itself stays however thin the rest: a 1-voxel slab across the whole block is kept
    for (let k = 5; k < 25; k++) for (let j = 0; j < 20; j++) for (let i = 0; i < 10; i++) solid[at(i, j, k)] = k === 5 ? 1 : 0;
    expect(bulkSides([solid, solid, solid], grid, [1, 2, 2.5])[2]).toBeCloseTo(0.6, 6);
  });

  it('weigh end layers against the body\'s fullest layer, not a brim one voxel thick that is far fuller', () => {
    // a 4 × 4 × 4 head, a 20 × 1 × 20 brim on it, and two 1 × 1 legs 8 voxels long under it (y up)
    const grid = { origin: [0, 0, 0] as Vec3, size: 0.1, dims: [20, 14, 20] as [number, number, number] };
    const solid = new Uint8Array(20 * 14 * 20);
    const at = (i: number, j: number, k: number) => i + 20 * (j + 14 * k);
    for (let k = 8; k < 12; k++) for (let j = 8; j < 12; j++) for (let i = 8; i < 12; i++) solid[at(i, j, k)] = 1;
    for (let k = 0; k < 20; k++) for (let i = 0; i < 20; i++) solid[at(i, 12, k)] = 1;
    for (let j = 0; j < 8; j++) { solid[at(9, j, 10)] = 1; solid[at(11, j, 10)] = 1; }
    // each leg layer holds 2 voxels: 0.5 % of the brim's 400, 12.5 % of the head's 16
    expect(2 / 400).toBeLessThan(ROD_LAYER_SHARE);
    const counts = new Float64Array(14);
    for (let j = 0; j < 14; j++) counts[j] = j < 8 ? 2 : j < 12 ? 16 : j === 12 ? 400 : 0;
    expect(fullestLayer(counts)).toBe(16);
    expect(bulkSides([solid, solid, solid], grid, [2, 1.4, 2])[1]).toBeCloseTo(1.3, 6);
    // a brim as thick as the head is a layer of the body: the legs are then a rod's handful of voxels under it
    for (let j = 8; j < 12; j++) for (let k = 0; k < 20; k++) for (let i = 0; i < 20; i++) solid[at(i, j, k)] = 1;
    expect(bulkSides([solid, solid, solid], grid, [2, 1.4, 2])[1]).toBeCloseTo(0.5, 6);
  });
});

describe('the axis the feet stand apart along', () => {
  it('is read without a hem lying on the floor behind the feet', () => {
    // y up; two feet 3 wide and 7 deep, 3 apart along x, and a hem 15 wide and 3 deep behind them, on the floor
    const dims = [20, 12, 20];
    const solid = new Uint8Array(20 * 12 * 20);
    const at = (i: number, j: number, k: number) => i + 20 * (j + 12 * k);
    for (let j = 1; j < 3; j++) {
      for (let k = 8; k < 15; k++) for (const x0 of [6, 12]) for (let i = x0; i < x0 + 3; i++) solid[at(i, j, k)] = 1;
    }
    expect(feetApartAxis(solid, dims, 1, [0, 2])).toBe(0);
    expect(feetApartAxis(solid, dims, 1, [2, 0])).toBe(0);
    for (let k = 3; k < 6; k++) for (let i = 3; i < 18; i++) solid[at(i, 1, k)] = 1;
    // before: the hem filled the gap between the feet seen from the front, and stood apart from the heels seen from
    // the side
    expect(feetApartAxis(solid, dims, 1, [0, 2])).toBe(0);
    expect(feetApartAxis(solid, dims, 1, [2, 0])).toBe(0);
  });
});

describe('the feet told apart from hems in the feet\'s band', () => {
  // lateral × depth cells, lateral-major; `rows` are drawn depth-major for reading (row = depth, column = lateral)
  function footprint(rows: string[]): { cells: Float64Array; lateral: number; depth: number } {
    const depth = rows.length, lateral = rows[0].length;
    const cells = new Float64Array(lateral * depth);
    rows.forEach((row, d) => [...row].forEach((ch, l) => { cells[l * depth + d] = ch === '.' ? 0 : Number(ch); }));
    return { cells, lateral, depth };
  }
  const nonZero = (f: Float64Array) => [...f].filter((x) => x > 0).length;

  it('drops a piece wider than HEM_SPAN of the band (a cape\'s hem behind two feet) and keeps the feet', () => {
    const { cells, lateral, depth } = footprint([
      '..........',
      '.33....33.',
      '.33....33.',
      '.33....33.',
      '..........',
      '4444444444',
    ]);
    const kept = footPieces(cells, lateral, depth)!;
    expect(nonZero(kept)).toBe(12);
    for (let l = 0; l < lateral; l++) expect(kept[l * depth + 5]).toBe(0);
    expect(kept[1 * depth + 1]).toBe(3);
    expect(HEM_SPAN).toBeLessThan(1);
  });

  it('tells no foot apart when every piece is that wide (feet standing together)', () => {
    const { cells, lateral, depth } = footprint([
      '.333333.',
      '.333333.',
      '..3333..',
    ]);
    expect(footPieces(cells, lateral, depth)).toBeNull();
  });
});

describe('the mirror plane of a body whose two sides are held differently', () => {
  // a 4 × 4 × 8 block at x 8..11 of a 24-wide grid, and a 1 × 1 rod from it out to x 23 on one side only: the box's
  // middle (x 12) lies off the block's (x 10)
  const dims = [24, 4, 8];
  const block = () => {
    const solid = new Uint8Array(24 * 4 * 8);
    for (let k = 0; k < 8; k++) for (let j = 0; j < 4; j++) for (let i = 8; i < 12; i++) solid[i + 24 * (j + 4 * k)] = 1;
    return solid;
  };
  it('mirrors across the solid\'s centroid where that matches the body better than the box\'s middle', () => {
    const solid = block();
    for (let i = 12; i < 24; i++) solid[i + 24 * (2 + 4 * 6)] = 1;
    const plane = mirrorPlane(solid, dims, 0);
    // centroid (128 block voxels at 10, 12 rod voxels at 18): 10.69, to the half voxel 10.5: three of the block's four
    // columns mirror onto it (IoU 98 / 182)
    expect(plane.at).toBe(10.5);
    expect(plane.iou).toBeCloseTo(98 / 182, 12);
    // across the box's middle, the block mirrors onto empty space (8 / 272)
    expect(mirrorPlaneIoUAcrossMiddle(solid)).toBeCloseTo(8 / 272, 12);
    // the best plane of all is the block's own middle: its 128 voxels mirror onto themselves, none of the rod's 12
    const best = bestMirrorPlane(solid, dims, 0);
    expect(best.at).toBe(10);
    expect(best.iou).toBeCloseTo(128 / 152, 12);
  });
  it('keeps the box\'s middle where a heavy piece on one side pulls the centroid off the body', () => {
    const solid = new Uint8Array(24 * 4 * 8);
    // a thin symmetric frame (x 2..21 along one row) and a heavy block on its right end
    for (let i = 2; i < 22; i++) solid[i + 24 * (1 + 4 * 4)] = 1;
    for (let k = 0; k < 8; k++) for (let j = 0; j < 4; j++) for (let i = 17; i < 21; i++) solid[i + 24 * (j + 4 * k)] = 1;
    for (let k = 0; k < 8; k++) for (let j = 0; j < 4; j++) for (let i = 3; i < 7; i++) solid[i + 24 * (j + 4 * k)] = (k + j) % 2;
    const plane = mirrorPlane(solid, dims, 0);
    expect(plane.at).toBe(12);
    expect(plane.iou).toBeCloseTo(mirrorPlaneIoUAcrossMiddle(solid), 12);
  });
});

describe('bodyEnds across a plane', () => {
  it('ends at the last slice that straddles the plane, past a rod raised on one side', () => {
    // a 6 × 4 block (x 4..9, y 0..11, z 0..3) and a 2 × 2 rod on its right, x 9..10, from y 12 up to 19
    const dims = [14, 20, 4];
    const solid = new Uint8Array(14 * 20 * 4);
    const set = (i: number, j: number, k: number) => { solid[i + 14 * (j + 20 * k)] = 1; };
    for (let k = 0; k < 4; k++) for (let j = 0; j < 12; j++) for (let i = 4; i < 10; i++) set(i, j, k);
    for (let k = 1; k < 3; k++) for (let j = 12; j < 20; j++) for (let i = 9; i < 11; i++) set(i, j, k);
    // every slice at least SHEET_RUN² = 9 voxels: the rod's 4 are thin ends either way, so the rod is made wider
    for (let k = 0; k < 4; k++) for (let j = 12; j < 19; j++) for (let i = 9; i < 12; i++) set(i, j, k);
    expect(bodyEnds(solid, dims, 1, 0.35)).toEqual([1, 18]);
    // the block's own plane at x = 7: the rod's slices lie wholly on its far side
    expect(bodyEnds(solid, dims, 1, 0.35, { axis: 0, at: 7 })).toEqual([1, 11]);
  });
});

describe('bestMirrorPlane, the scan over every plane', () => {
  it('finds, along each axis, the plane a voxel-by-voxel count over every plane finds best, with its IoU', () => {
    // random solids of blocks and rods on odd and even grids: bestMirrorPlane reads all planes from runs' pairs at once
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let trial = 0; trial < 12; trial++) {
      const dims = [9 + (trial % 4), 6 + (trial % 3), 7 + (trial % 5)];
      const solid = new Uint8Array(dims[0] * dims[1] * dims[2]);
      for (let piece = 0; piece < 3; piece++) {
        const lo = dims.map((d) => Math.floor(random() * d)), hi = lo.map((l, a) => Math.min(dims[a], l + 1 + Math.floor(random() * dims[a] * 0.6)));
        for (let k = lo[2]; k < hi[2]; k++) for (let j = lo[1]; j < hi[1]; j++) for (let i = lo[0]; i < hi[0]; i++) solid[i + dims[0] * (j + dims[1] * k)] = 1;
      }
      for (const axis of [0, 1, 2]) {
        const plane = bestMirrorPlane(solid, dims, axis);
        let bestIoU = 0;
        for (let last = 0; last <= 2 * (dims[axis] - 1); last++) bestIoU = Math.max(bestIoU, iouAcross(solid, dims, axis, last));
        expect(plane.iou).toBeCloseTo(bestIoU, 12);
        expect(iouAcross(solid, dims, axis, 2 * plane.at - 1)).toBeCloseTo(bestIoU, 12);
      }
    }
  });
});

/** The IoU of a solid (grid dims #3) with its mirror image taking cell c to cell last − c along `axis`, counted voxel by voxel. */
function iouAcross(solid: Uint8Array, dims: number[], axis: number, last: number): number {
  let count = 0, inter = 0;
  for (let k = 0; k < dims[2]; k++) for (let j = 0; j < dims[1]; j++) for (let i = 0; i < dims[0]; i++) {
    if (!solid[i + dims[0] * (j + dims[1] * k)]) continue;
    count++;
    const m = [i, j, k];
    m[axis] = last - m[axis];
    if (m[axis] < 0 || m[axis] >= dims[axis]) continue;
    inter += solid[m[0] + dims[0] * (m[1] + dims[1] * m[2])];
  }
  return inter / (2 * count - inter);
}

/** The IoU of a solid on a 24 × 4 × 8 grid with its mirror image across the box's middle plane normal to x. */
function mirrorPlaneIoUAcrossMiddle(solid: Uint8Array): number {
  return iouAcross(solid, [24, 4, 8], 0, 23);
}

describe('a capsule humanoid (Z up, facing -Y, its left +X) whose arms are held differently', () => {
  /** The humanoid with its left arm turned down by `left` degrees at the shoulder, its right by `right` (negative: up). */
  const posed = (left: number, right: number) => {
    const turn = (side: number, degrees: number) => (p: Vec3): Vec3 => {
      const t = (-side * degrees * Math.PI) / 180, dx = p[0] - side * 0.2, dz = p[2] - 1.42;
      return [side * 0.2 + dx * Math.cos(t) - dz * Math.sin(t), p[1], 1.42 + dx * Math.sin(t) + dz * Math.cos(t)];
    };
    return humanoidCapsules().map((c) => {
      const side = /^Left(Arm|Hand)/.test(c.name) ? 1 : /^Right(Arm|Hand)/.test(c.name) ? -1 : 0;
      const at = side === 0 ? c : { ...c, a: turn(side, side > 0 ? left : right)(c.a), b: turn(side, side > 0 ? left : right)(c.b) };
      return { name: c.name, ...capsuleMesh(at, 16) };
    });
  };
  // before, the box's middle plane, off the body's, made left-right the least symmetric way (0.38 with the right arm
  // down 30°) and the frame stood the body on its side (up +X), or on its head
  it.each([[0, 30], [0, 70], [-30, 70], [45, 80], [-60, 0]])('reads it upright with the left arm at %i° and the right at %i°', (left, right) => {
    const mesh = mergeParts(posed(left, right));
    const cf = findCanonicalFrame(mesh.positions, mesh.triangles);
    expect(cf.frame).toEqual({ up: [0, 0, 1], forward: [0, -1, 0], left: [1, 0, 0] });
  });
  it('is rigged standing: the trunk, the head, the feet and each arm where the capsules put them', async () => {
    const rig = await rigCharacterAsync(posed(0, 70));
    const head = (name: string) => rig.skeleton.joints.find((j) => j.name === `mixamorig:${name}`)!.head;
    // the arms posed apart keep their own pose (skeleton/armsPosedApart): the left level, its wrist at x 0.86, z 1.42;
    // the right hanging 70° down, its elbow at (-0.31, 1.13) and its wrist at (-0.43, 0.80). Mirrored, both wrists sat
    // half-way, 35° down.
    expect(Math.abs(head('LeftHand')[2] - 1.42)).toBeLessThan(0.05);
    expect(head('LeftHand')[0]).toBeGreaterThan(0.8);
    // A capsule arm is straight, with nothing to show where its elbow is: the elbow is read on the arm's axis, its
    // place along it within 0.08 (the single joints2d network read it 0.04 below, the three-network one 0.07 above,
    // with the wrist 0.10 and 0.02 off)
    const [ex, ez] = [head('RightForeArm')[0] + 0.306, head('RightForeArm')[2] - 1.129];
    const [ax, az] = [-0.12 / Math.hypot(0.12, 0.329), -0.329 / Math.hypot(0.12, 0.329)];
    expect(Math.abs(ex * az - ez * ax)).toBeLessThan(0.03);
    expect(Math.abs(ex * ax + ez * az)).toBeLessThan(0.08);
    expect(Math.hypot(head('RightHand')[0] + 0.426, head('RightHand')[2] - 0.8)).toBeLessThan(0.12);
    expect(head('RightHand')[2]).toBeLessThan(1);
    // the torso's capsule runs from z 0.95 to 1.38 on x = y = 0, the head's centre at z 1.67, the soles at z ≈ 0
    expect(Math.hypot(head('Hips')[0], head('Hips')[1], head('Hips')[2] - 0.93)).toBeLessThan(0.05);
    expect(Math.abs(head('Head')[0])).toBeLessThan(0.02);
    expect(head('Head')[2]).toBeGreaterThan(1.5);
    for (const side of ['Left', 'Right']) expect(head(`${side}Foot`)[2]).toBeLessThan(0.2);
    expect(head('LeftFoot')[0]).toBeGreaterThan(0.05);
    expect(head('RightFoot')[0]).toBeLessThan(-0.05);
  }, 60_000);

  it('and with a shield held out before its left arm (the centroid pulled off the body: the box\'s middle is kept)', () => {
    const mesh = mergeParts([...posed(0, 0), boxMesh('Shield', [0.4, -0.15, 1.1], [0.8, -0.1, 1.7], 3)]);
    expect(findCanonicalFrame(mesh.positions, mesh.triangles).frame).toEqual({ up: [0, 0, 1], forward: [0, -1, 0], left: [1, 0, 0] });
  });
});

describe('up by length where left-right is about as symmetric as head-to-feet (arms posed apart)', () => {
  it('takes the longer of the two sides across the thin depth as up when their symmetries nearly tie', () => {
    // 11 000 039's bulk: x 0.841 wide, y 1.122 tall, z 0.298 deep; mirror IoUs 0.480 / 0.483 / 0.356 (one arm up,
    // the other down with a sword): by symmetry alone y was left-right and the body lay on its side
    expect(bodyAxes([0.48, 0.483, 0.356], [0.841, 1.122, 0.298])).toEqual({ lateralAxis: 0, upAxis: 1, depthAxis: 2, byThinness: true });
    // 11 000 007's: a staff held out far to one side leaves left-right 0.215 less symmetric than head-to-feet
    expect(bodyAxes([0.151, 0.366, 0.69], [1.283, 2.738, 0.342])).toEqual({ lateralAxis: 0, upAxis: 1, depthAxis: 2, byThinness: true });
  });

  it('leaves left-right to symmetry where it is clearly the more symmetric, however wide the arms', () => {
    // robot_expressive (Z up): its arm span 1.43 times its height, left-right 0.994 against head-to-feet's 0.298
    expect(bodyAxes([0.994, 0.752, 0.298], [0.066, 0.026, 0.046])).toEqual({ lateralAxis: 0, upAxis: 2, depthAxis: 1, byThinness: true });
    expect(0.994 - 0.298).toBeGreaterThan(UP_BY_LENGTH.symmetryTie);
    // a four-legged animal (test/fixtures/hostileMeshes makeQuadruped): its thinnest side is its true mirror plane
    // (0.996), so its reading and its refusal as deeper than wide stand, though its two other sides nearly tie
    expect(bodyAxes([0.996, 0.638, 0.471], [0.363, 1.757, 1.116])).toEqual({ lateralAxis: 0, upAxis: 1, depthAxis: 2, byThinness: false });
    expect(0.996).toBeGreaterThanOrEqual(UP_BY_LENGTH.depthSymmetry);
    // and where the two sides are about as long (a T-pose: under UP_BY_LENGTH.ratio), symmetry decides, the near tie too
    expect(bodyAxes([0.6, 0.5, 0.7], [1.1, 1, 0.3])).toEqual({ lateralAxis: 0, upAxis: 1, depthAxis: 2, byThinness: true });
    expect(bodyAxes([0.5, 0.6, 0.7], [1.1, 1, 0.3])).toEqual({ lateralAxis: 1, upAxis: 0, depthAxis: 2, byThinness: true });
  });

  // misread before (up or depth taken for left-right) and refused: the body leans 21°, or is deeper than wide
  // 15 000 022's bell-shaped cape went through the floor, and the body was read facing backwards (see MISREAD's 22 000
  // 058); 19 000 065's, cut at the floor, lay behind the feet, and the feet's cue read the body from the side
  // (feetApartAxis)
  it.each([11_000_007, 11_000_039, 13_000_035, 13_000_051, 14_000_092, 15_000_022, 19_000_065])('reads procedural humanoid %i, arms posed apart, standing and facing forward', (seed) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    const mesh = mergeParts(character.parts);
    const cf = findCanonicalFrame(mesh.positions, bodyTriangles(mesh.positions, mesh.triangles));
    expect(readFrame(cf, turnedTruth(0))).toBe('ok');
  });

  // misread before the up cue read the best mirror plane (bestMirrorPlane) and its ends straddled it (END_BALANCE):
  // 15 000 052, a sword raised in its left hand above its head, read upside down (up cue −0.56, now 0.32)
  it('reads procedural humanoid 15 000 052, a sword raised above its head, standing and facing forward', () => {
    const character = generateProceduralHumanoid(15_000_052, { targetVertices: 20_000, asymmetricArms: true });
    const mesh = mergeParts(character.parts);
    const cf = findCanonicalFrame(mesh.positions, bodyTriangles(mesh.positions, mesh.triangles));
    expect(readFrame(cf, turnedTruth(0))).toBe('ok');
    expect(cf.evidence.upByConvention).toBe(false);
    expect(cf.evidence.upScore).toBeGreaterThan(0.15);
  });

  // misread where the symmetry of left-right was read across the box's middle or the centroid, not the best plane:
  // 13 000 122 (the feet decided a near tie, 0.835 against 0.736, and took depth for left-right; 0.911 across its own
  // plane) and 14 000 061 (a 13° turn read more symmetric than the grid's 0.43, and was taken; 0.70 across its own)
  it.each([13_000_122, 14_000_061])('reads procedural humanoid %i, arms posed apart, by its best mirror plane, standing and facing forward', (seed) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    const mesh = mergeParts(character.parts);
    const cf = findCanonicalFrame(mesh.positions, bodyTriangles(mesh.positions, mesh.triangles));
    expect(readFrame(cf, turnedTruth(0))).toBe('ok');
    expect(cf.evidence.turn ?? null).toBeNull();
  });

  it('rigs procedural humanoid 15 000 052 (a sword raised above the head) instead of refusing it upside down', async () => {
    const errors = await rigJointErrors(generateProceduralHumanoid(15_000_052, { targetVertices: 20_000, asymmetricArms: true }));
    for (const name of ['Hips', 'Head', 'LeftFoot', 'RightFoot'] as const) expect(errors[SCORED_JOINTS.indexOf(name)], name).toBeLessThan(0.03);
  }, 60_000);

  it('rigs procedural humanoid 11 000 039 (an arm raised, a sword held out forward) instead of refusing it', async () => {
    const errors = await rigJointErrors(generateProceduralHumanoid(11_000_039, { targetVertices: 20_000, asymmetricArms: true }));
    // the Hips and the Head where the generator put them, within 3 % of the height
    for (const name of ['Hips', 'Head'] as const) expect(errors[SCORED_JOINTS.indexOf(name)], name).toBeLessThan(0.03);
  }, 60_000);
});

describe('the canonical frame of characters the axis-aligned finder misread', () => {
  for (const { seed, wears, targetVertices } of MISREAD) {
    it(`reads seed ${seed} (${wears}) as made, and turned 35° and 90° about up`, () => {
      const { positions, triangles } = bodyOf(seed, targetVertices);
      const cf = findCanonicalFrame(positions, triangles);
      expect(cf.frame).toEqual({ up: [0, 1, 0], forward: [0, 0, 1], left: [1, 0, 0] });
      expect(cf.evidence.turn ?? null).toBeNull();

      for (const degrees of [35, 90]) {
        const turned = findCanonicalFrame(turnAboutUp(positions, degrees), triangles);
        const truth = turnedTruth(degrees);
        expect(readFrame(turned, truth, 4), `${degrees}°`).toBe('ok');
        expect(degreesBetween(turned.frame.forward, truth.forward)).toBeLessThan(4);
        expect(degreesBetween(turned.frame.left, truth.left)).toBeLessThan(4);
      }
    }, 30_000);
  }

  it('gives a turned character the canonical positions of the same character standing straight', () => {
    const { positions, triangles } = bodyOf(137, 24860);
    const straight = toCanonical(positions, findCanonicalFrame(positions, triangles));
    const turnedPositions = turnAboutUp(positions, 35);
    const cf = findCanonicalFrame(turnedPositions, triangles);
    expect(cf.evidence.turn?.axis).toBe(1);
    const turned = toCanonical(turnedPositions, cf);
    // Same body in the same box, up to the few degrees and the voxel the turn is read to (longest side 1).
    let worst = 0;
    for (let i = 0; i < straight.length; i++) worst = Math.max(worst, Math.abs(turned[i] - straight[i]));
    expect(worst).toBeLessThan(0.05);
    for (let a = 0; a < 3; a++) {
      let lo = Infinity, hi = -Infinity;
      for (let i = a; i < turned.length; i += 3) { lo = Math.min(lo, turned[i]); hi = Math.max(hi, turned[i]); }
      expect(lo).toBeGreaterThanOrEqual(-0.5 - 1e-6);
      expect(hi).toBeLessThanOrEqual(0.5 + 1e-6);
    }
    // and back: a canonical point lands where it came from.
    const p: Vec3 = [turnedPositions[300], turnedPositions[301], turnedPositions[302]];
    const round = fromCanonical(pointToCanonical(p, cf), cf);
    for (let a = 0; a < 3; a++) expect(round[a]).toBeCloseTo(p[a], 5);
  });

  it('stands by the grid when a held sword tips the mirror sweep (seed 9 100 000 at 3000 vertices, eval poses)', () => {
    // The sweep finds a plane 8° off about the depth axis; read after that turn, the body's left-right is less
    // symmetric than along the grid (0.41 against 0.79) and the reading swaps axes, so the turn is not taken.
    const mesh = mergeParts(generateProceduralHumanoid(9_100_000, { targetVertices: 3000 }).parts);
    const cf = findCanonicalFrame(mesh.positions, mesh.triangles);
    expect(cf.frame).toEqual({ up: [0, 1, 0], forward: [0, 0, 1], left: [1, 0, 0] });
    expect(cf.evidence.turn ?? null).toBeNull();
  });

  it('reads a +Z-up character turned 35° about +Z (the Blender way, turned)', () => {
    const { positions, triangles } = bodyOf(137, 24860);
    const standing = findCanonicalFrame(zUp(positions), triangles);
    expect(standing.frame).toEqual({ up: [0, 0, 1], forward: [0, -1, 0], left: [1, 0, 0] });
    const c = Math.cos(35 * Math.PI / 180), s = Math.sin(35 * Math.PI / 180);
    const up = zUp(positions);
    const turned = new Float32Array(up.length);
    for (let i = 0; i < up.length; i += 3) {
      turned[i] = c * up[i] - s * up[i + 1];
      turned[i + 1] = s * up[i] + c * up[i + 1];
      turned[i + 2] = up[i + 2];
    }
    const cf = findCanonicalFrame(turned, triangles);
    expect(cf.frame.up).toEqual([0, 0, 1]);
    expect(degreesBetween(cf.frame.forward, [s, -c, 0])).toBeLessThan(4);
    expect(degreesBetween(cf.frame.left, [c, s, 0])).toBeLessThan(4);
  });
});
