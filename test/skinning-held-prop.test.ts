/**
 * A staff held in a hand moves rigidly with that hand (sidecar/skinning/heldPropWeights.ts): the standing rods that
 * the skeleton stage removes from the front view are found again, and their vertices go wholly to the hand that holds
 * them; a rod no hand comes near keeps its weights. Then procedural test identity 9 100 004, whose staff (a separate
 * part, open at its foot) had a third of its weight on the forearm.
 */
import { describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { rigCharacterAsync } from '../sidecar/pipeline.js';
import { HOLDING_REACH, heldRodsAlongTheirAxes, holdPropsInHands } from '../sidecar/skinning/heldPropWeights.js';
import type { SkinBone } from '../sidecar/skinning/voxelBoneWeights.js';

const bone = (head: number[], tail: number[], parent: number): SkinBone => ({ head: head as SkinBone['head'], tail: tail as SkinBone['tail'], parent, deform: true });

describe('a held staff moves with the hand', () => {
  it('gives a rod piece wholly to the hand that holds it, and leaves a rod no hand reaches alone', () => {
    // bones: 0 forearm, 1 hand (ending at x 0.3, y 0.1); rod piece 0 passes the hand, piece 1 stands far off
    const bones = [bone([0.3, 0.3, 0], [0.3, 0.15, 0], -1), bone([0.3, 0.15, 0], [0.3, 0.1, 0], 0)];
    const positions = new Float32Array([0.32, 0.12, 0, 0.32, -0.4, 0, 0.32, 0.45, 0, 0.3 + 3 * HOLDING_REACH, -0.2, 0, 0.1, 0.1, 0]);
    const pieceOf = new Int32Array([0, 0, 0, 1, -1]);
    const indices = new Uint16Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0]);
    const weights = new Float32Array([0.9, 0.1, 0, 0, 0.7, 0.3, 0, 0, 0.6, 0.4, 0, 0, 0.5, 0.5, 0, 0, 0.5, 0.5, 0, 0]);
    expect(holdPropsInHands(positions, pieceOf, bones, [1], 4, indices, weights)).toBe(3);
    for (const v of [0, 1, 2]) {
      expect(indices[4 * v]).toBe(1);
      expect(Array.from(weights.subarray(4 * v, 4 * v + 4))).toEqual([1, 0, 0, 0]);
    }
    expect(Array.from(weights.subarray(12, 20))).toEqual([0.5, 0.5, 0, 0, 0.5, 0.5, 0, 0]);
  });

  it('finds the middle of a held rod that the front view cannot see, in a tube along its axis between its ends', () => {
    // a vertical rod of radius 0.01 at x 0.3, z 0: its foot (y -0.5 to -0.4) and its top (0.1 to 0.2) are rod 0's
    // pixels; its middle is hidden (no piece); a body vertex beside it, one on its line past its top, and a rod no
    // hand holds
    const rows: number[][] = [];
    const pieces: number[] = [];
    const ring = (y: number, piece: number) => {
      for (let a = 0; a < 6; a++) { rows.push([0.3 + 0.01 * Math.cos(a), y, 0.01 * Math.sin(a)]); pieces.push(piece); }
    };
    for (let y = -0.5; y <= -0.4; y += 0.02) ring(y, 0);
    for (let y = 0.1; y <= 0.2; y += 0.02) ring(y, 0);
    const hidden = rows.length;
    for (let y = -0.3; y <= 0; y += 0.05) ring(y, -1);
    const hiddenEnd = rows.length;
    rows.push([0.36, -0.2, 0]); pieces.push(-1); // beside the rod: out of its tube
    rows.push([0.3, 0.3, 0]); pieces.push(-1); // on its line, past its top
    const positions = new Float32Array(rows.flat()), pieceOf = new Int32Array(pieces);
    const along = heldRodsAlongTheirAxes(positions, pieceOf, new Int32Array([7]));
    for (let v = 0; v < hidden; v++) expect(along[v]).toBe(-1);
    for (let v = hidden; v < hiddenEnd; v++) expect(along[v]).toBe(0);
    expect(along[hiddenEnd]).toBe(-1);
    expect(along[hiddenEnd + 1]).toBe(-1);
    // a rod no hand holds is not followed
    expect(Array.from(heldRodsAlongTheirAxes(positions, pieceOf, new Int32Array([-1]))).every((r) => r === -1)).toBe(true);
  });

  it('rigs procedural identity 9 100 004 with its staff wholly on the left hand', async () => {
    const character = generateProceduralHumanoid(9_100_004, { targetVertices: 20_000 });
    const staff = character.parts.findIndex((p) => p.name === 'staff');
    expect(staff).toBeGreaterThanOrEqual(0);
    const rig = await rigCharacterAsync(character.parts);
    const leftHand = rig.skeleton.joints.findIndex((j) => j.name.endsWith('LeftHand'));
    const { indices, weights, influences: k } = rig.objects[staff];
    let onHand = 0;
    for (let s = 0; s < weights.length; s++) if (indices[s] === leftHand) onHand += weights[s];
    expect(onHand / (weights.length / k)).toBeGreaterThan(0.99);
  }, 60_000);
});
