/** Means over characters and the quality bar, on hand-made results with known answers. */
import { describe, expect, it } from 'vitest';
import type { CharacterEval, SkinningScores } from '../sidecar/eval/evalTypes.js';
import { checkBar, summarise } from '../sidecar/eval/qualityBar.js';

const scores = (deformation45: number, l1: number, seconds = 1): SkinningScores => ({
  precision: 0.8, recall: 0.9, l1, deformation10: deformation45 / 4, deformation45, seconds, unweighted: 0, failed: false,
});

function character(name: string, over: Partial<CharacterEval>): CharacterEval {
  return {
    name, file: `${name}.glb`, variant: 'original', vertices: 100, triangles: 190, status: 'ok',
    time: { rigSeconds: 1, skinSeconds: 0.5, peakRssMiB: 100 }, ...over,
  };
}
const skeleton = (cdJ2J: number, wrongLimb: string[] = []) => ({
  cdJ2J, cdJ2B: cdJ2J / 2, cdB2B: cdJ2J, perJoint: {}, meanJointError: cdJ2J, maxJointError: cdJ2J, maxJoint: 'Hips', wrongLimb,
});

describe('quality bar', () => {
  const rows: CharacterEval[] = [
    character('a', { skeleton: skeleton(0.01), skinning: { ours: scores(0.004, 0.3), blender: scores(0.01, 0.4, 10) }, pipeline: { deformation10: 0.01, deformation45: 0.03 } }),
    character('b', { skeleton: skeleton(0.03, ['LeftHand']), skinning: { ours: scores(0.008, 0.5), blender: scores(0.01, 0.4, 10) }, pipeline: { deformation10: 0.02, deformation45: 0.05 } }),
    // the rig failed, skinning the artist's skeleton was still scored
    character('c', { status: 'failed', error: { code: 'NOT_HUMANOID', message: 'two arms were not found' }, skinning: { ours: scores(0.012, 0.4), blender: scores(0.01, 0.4, 10) } }),
    character('d', { status: 'unmapped', error: { code: 'UNMAPPED', message: 'no head' } }),
  ];

  it('averages each measurement over the characters that have it', () => {
    const [s] = summarise(rows);
    expect(s.characters).toBe(2);
    expect(s.skeleton.cdJ2J).toBeCloseTo(0.02, 12);
    expect(s.skeleton.wrongLimb).toBe(1);
    expect(s.ours.deformation45).toBeCloseTo(0.008, 12);
    expect(s.ours.l1).toBeCloseTo(0.4, 12);
    expect(s.ours.failures).toBe(1);
    expect(s.blender!.deformation45).toBeCloseTo(0.01, 12);
    expect(s.pipeline.deformation45).toBeCloseTo(0.04, 12);
  });

  it('checks every criterion with the right verdict', () => {
    const bar = checkBar(rows, summarise(rows));
    const find = (text: string) => bar.find((b) => b.criterion.includes(text))!;
    expect(find('CD-J2J')).toMatchObject({ value: 0.02, pass: false });
    expect(find('wrong side')).toMatchObject({ value: 1, pass: false, note: 'b:LeftHand' });
    expect(find('could not rig')).toMatchObject({ value: 1, pass: false });
    expect(find('unweighted')).toMatchObject({ value: 0, pass: true });
    expect(find('±45°').value).toBeCloseTo(0.8, 12);
    expect(find('±45°').pass).toBe(true);
    expect(find('L1')).toMatchObject({ pass: true });
    expect(find('could not be scored')).toMatchObject({ value: 1, note: 'd' });
  });

  it('cannot judge the Blender criteria without the peer', () => {
    const alone = rows.map((r) => (r.skinning ? { ...r, skinning: { ours: r.skinning.ours } } : r));
    const bar = checkBar(alone, summarise(alone));
    expect(bar.filter((b) => b.pass === null).map((b) => b.criterion)).toHaveLength(2);
  });
});
