/**
 * Which way a character faces where its shape does not tell (mesh/facingHint): the frame's forward is read from the
 * feet in front of the shins; where that cue does not decide, the file conventions stand (+Z up: facing -Y), and the
 * rig result says so ('convention'), so that the user who sees left and right swapped can name the facing
 * (options.facing, `autorig rig --facing`, the add-on's Facing), which turns the frame about up.
 */
import { describe, expect, it } from 'vitest';
import { facingSource, frameFacing } from '../sidecar/mesh/facingHint.js';
import type { CanonicalFrame } from '../sidecar/mesh/canonicalFrame.js';
import { rigCharacter } from '../sidecar/pipeline.js';
import type { RigResult } from '../sidecar/types.js';
import { capsuleMesh, humanoidCapsules, makeHumanoid } from './fixtures/humanoid.js';

const yUp: CanonicalFrame = {
  frame: { up: [0, 1, 0], forward: [0, 0, 1], left: [1, 0, 0] },
  center: [0.1, 0.9, -0.2],
  scale: 0.55,
  evidence: { lateralSymmetry: 1, upScore: 1, forwardScore: 0, upByConvention: false, forwardByConvention: true },
};

/** x of a joint's head in the result (input space). */
function jointX(result: RigResult, name: string): number {
  return result.skeleton.joints.find((j) => j.name === `mixamorig:${name}`)!.head[0];
}

describe('frameFacing', () => {
  it('turns the frame about up to the horizontal direction nearest the hint, left = up × forward', () => {
    const back = frameFacing(yUp, [0.2, 0.1, -3]);
    expect(back.frame).toEqual({ up: [0, 1, 0], forward: [0, 0, -1], left: [-1, 0, 0] });
    const side = frameFacing(yUp, [1, -0.3, 0.4]);
    expect(side.frame).toEqual({ up: [0, 1, 0], forward: [1, 0, 0], left: [0, 0, -1] });
    // the box's center and scale are the frame's own: a quarter turn about up leaves the box's longest side
    expect(side.center).toEqual(yUp.center);
    expect(side.scale).toBe(yUp.scale);
    expect(facingSource(side)).toBe('option');
    expect(facingSource(yUp)).toBe('convention');
    expect(facingSource({ ...yUp, evidence: { ...yUp.evidence, forwardByConvention: false } })).toBe('shape');
  });

  it('refuses a zero hint and one within 30° of up or down (BAD_REQUEST)', () => {
    expect(() => frameFacing(yUp, [0, 0, 0])).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    expect(() => frameFacing(yUp, [0, -1, 0.5])).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    expect(frameFacing(yUp, [0, 1, 0.6]).frame.forward).toEqual([0, 0, 1]);
  });
});

describe('a rig whose facing the shape does not tell', () => {
  // The capsule humanoid (Z up, facing -Y, its left +X) without its feet: the legs end in round caps, the same seen
  // from the front and from the back
  const footless = humanoidCapsules().filter((c) => !c.name.endsWith('Foot')).map((c) => ({ name: c.name, ...capsuleMesh(c, 16) }));

  it('follows the convention and says so; with the hint it faces where the user says, left and right swapped', () => {
    const assumed = rigCharacter(footless);
    expect(assumed.facing).toBe('convention');
    expect(assumed.frame.forward).toEqual([0, -1, 0]);
    expect(jointX(assumed, 'LeftHand')).toBeGreaterThan(0.5);

    const turned = rigCharacter(footless, { facing: [0, 1, 0] });
    expect(turned.facing).toBe('option');
    expect(turned.frame.forward).toEqual([0, 1, 0]);
    expect(turned.frame.left).toEqual([-1, 0, 0]);
    expect(jointX(turned, 'LeftHand')).toBeLessThan(-0.5);
    expect(jointX(turned, 'RightHand')).toBeGreaterThan(0.5);
    // the same bones, mirrored: the body is symmetric
    expect(jointX(turned, 'LeftHand')).toBeCloseTo(-jointX(assumed, 'LeftHand'), 1);
  });

  it('reads the facing of the humanoid with feet from its shape', () => {
    const result = rigCharacter(makeHumanoid());
    expect(result.facing).toBe('shape');
    expect(result.frame.forward[1]).toBeLessThan(-0.99);
  });
});
