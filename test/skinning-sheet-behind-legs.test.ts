/**
 * A cape or tail fused to the body behind the legs hangs from the hips (sidecar/skinning/sheetBehindLegs.ts): in the
 * layers between the hip joints and the ankles, solid apart from both legs and wholly behind them, over at least a
 * quarter of the legs' height, gives the legs' weight to the hips. A skirt around the legs, a hand beside them and a
 * buttock's short crease are not such a sheet. Then the real thing: procedural test identity 9 100 007, whose cape
 * is fused to its back.
 */
import { describe, expect, it } from 'vitest';
import { behindLegsVoxels, hangBehindLegsFromHips } from '../sidecar/skinning/sheetBehindLegs.js';
import { bones, g, legs, markedLayers, solidOf, twoLegs, weightRow } from './fixtures/legSolids.js';
import { rigProcedural } from './fixtures/riggedProcedural.js';

const behindLayers = (solid: Uint8Array) => markedLayers(behindLegsVoxels(solid, g, bones, legs));
/** Buttocks joining the legs across the back from y 22 up (z 1 to 5). */
const buttocks = (x: number, y: number, z: number) => y >= 22 && y <= 26 && x >= 3 && x <= 17 && z >= 1 && z <= 5;
/** A cape: a slab at the back (z 0.5..1.6), from the hem at y 8 up into the buttocks. */
const cape = (x: number, y: number, z: number) => y >= 8 && y <= 26 && x >= 4 && x <= 16 && z <= 1.6;

describe('a sheet behind the legs hangs from the hips', () => {
  it('finds a fused cape where it hangs apart from the legs, and only there', () => {
    const solid = solidOf((x, y, z) => twoLegs(2.5)(x, y, z) || buttocks(x, y, z) || cape(x, y, z));
    // from the hem (8) to the last layer below the buttocks (21): in the buttocks it is one piece with the legs
    expect(behindLayers(solid)).toEqual(Array.from({ length: 21 - 8 + 1 }, (_, n) => 8 + n));
    // the legs alone, and the legs with buttocks: nothing
    expect(behindLayers(solidOf(twoLegs(2.5)))).toEqual([]);
    expect(behindLayers(solidOf((x, y, z) => twoLegs(2.5)(x, y, z) || buttocks(x, y, z)))).toEqual([]);
  });

  it('is not fooled by a skirt around the legs, a hand beside a thigh, or a short crease', () => {
    // a separate skirt: an elliptical ring around both legs, apart from them, from y 10 to 24
    const ring = (x: number, y: number, z: number) => {
      const e = ((x - 10) / 9) ** 2 + ((z - 5) / 4.9) ** 2;
      return y >= 10 && y <= 24 && e <= 1 && e >= 0.6;
    };
    expect(behindLayers(solidOf((x, y, z) => twoLegs(2.5)(x, y, z) || ring(x, y, z)))).toEqual([]);
    // a hand hanging beside the left thigh, apart from it (x 17.5..19, y 12..17)
    const hand = (x: number, y: number, z: number) => y >= 12 && y <= 17 && x >= 17.5 && x <= 19 && z >= 4 && z <= 6;
    expect(behindLayers(solidOf((x, y, z) => twoLegs(2.5)(x, y, z) || hand(x, y, z)))).toEqual([]);
    // a flap behind the legs over 3 layers only (the legs are 22 layers tall: a sheet needs 5.5)
    const flap = (x: number, y: number, z: number) => y >= 19 && y <= 21 && x >= 4 && x <= 16 && z <= 1.6;
    expect(behindLayers(solidOf((x, y, z) => twoLegs(2.5)(x, y, z) || buttocks(x, y, z) || flap(x, y, z)))).toEqual([]);
  });

  it('gives the legs\' weight on the sheet to the hips, and leaves the legs alone; rows sum to one', () => {
    const solid = solidOf((x, y, z) => twoLegs(2.5)(x, y, z) || buttocks(x, y, z) || cape(x, y, z));
    const behind = behindLegsVoxels(solid, g, bones, legs);
    // vertex 0: the cape's back at knee height (left thigh 0.6, left shin 0.3, hips 0.1); 1: the cape low down (right
    // shin 0.7, right foot 0.3); 2: the back of the left calf (shin 0.8, thigh 0.2); 3: the cape in the buttocks
    // (left thigh 0.5, hips 0.5), where it is one piece with the legs
    const positions = new Float32Array([9.2, 15.4, 0.3, 6.1, 9.3, 0.4, 13.2, 12.4, 2.6, 10.1, 23.5, 0.6]);
    const indices = new Uint16Array([1, 2, 0, 0, 5, 6, 0, 0, 2, 1, 0, 0, 1, 0, 0, 0]);
    const weights = new Float32Array([0.6, 0.3, 0.1, 0, 0.7, 0.3, 0, 0, 0.8, 0.2, 0, 0, 0.5, 0.5, 0, 0]);
    expect(hangBehindLegsFromHips(positions, g, solid, behind, bones, legs, 4, indices, weights)).toBe(2);
    const row = (v: number) => weightRow(indices, weights, 4, v);
    expect(Object.keys(row(0))).toEqual(['0']);
    expect(row(0)[0]).toBeCloseTo(1, 6);
    expect(Object.keys(row(1))).toEqual(['0']);
    expect(row(1)[0]).toBeCloseTo(1, 6);
    expect(row(2)).toEqual({ 2: expect.closeTo(0.8, 6), 1: expect.closeTo(0.2, 6) });
    expect(row(3)).toEqual({ 1: 0.5, 0: 0.5 });
  });

  it('rigs procedural identity 9 100 007 with its fused cape on the hips and spine, and its legs on the legs', async () => {
    const { positions, ymin, height, jointHead, share } = await rigProcedural(9_100_007);
    const legShare = share(/(Left|Right)(UpLeg|Leg|Foot|ToeBase)$/);
    const knee = jointHead('LeftLeg');
    // the cape: well behind the knees' line (the generator's cape hangs 0.06–0.16 of the height behind it), from 15 %
    // of the height up to the knee; the legs: in front of that line, over the same heights, within 0.2 of the height
    // of the midline (the right hand's prop hangs at 0.45)
    let cape = 0, capeLegs = 0, leg = 0, legLegs = 0;
    for (let v = 0; v < positions.length / 3; v++) {
      const x = positions[3 * v], y = positions[3 * v + 1], z = positions[3 * v + 2];
      if (y < ymin + 0.15 * height || y > knee[1] || Math.abs(x) > 0.2 * height) continue;
      const onLegs = legShare(v);
      if (z < knee[2] - 0.06 * height) { cape++; capeLegs += onLegs; }
      if (z > knee[2] - 0.02 * height) { leg++; legLegs += onLegs; }
    }
    expect(cape).toBeGreaterThan(500);
    expect(capeLegs / cape, 'share of the cape\'s weight on the legs').toBeLessThan(0.05);
    expect(leg).toBeGreaterThan(500);
    expect(legLegs / leg, 'share of the legs\' weight on the legs').toBeGreaterThan(0.95);
  }, 60_000);
});
