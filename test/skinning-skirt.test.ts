/**
 * A skirt or robe fused into the body stays on the hips and thighs (sidecar/skinning/skirtOnThighs.ts): the layers
 * where one solid skirt spans both legs are found in the voxel solid, and there the weight of the bones below the
 * knees goes to the thighs, on the outer surface only. Legs that touch, legs with a cape fused behind them, and legs
 * below the hem keep their knees. Then the real thing: procedural test identity 9 100 009, a fused robe to 10 % of
 * its height, rigged by the pipeline.
 */
import { describe, expect, it } from 'vitest';
import { keepSkirtOnThighs, legChains, ownReachOffSkirt, REACH_MARGIN, skirtVoxels } from '../sidecar/skinning/skirtOnThighs.js';
import { bone, bones, g, legs, markedLayers, NAMES, solidOf, twoLegs, weightRow } from './fixtures/legSolids.js';
import { rigProcedural } from './fixtures/riggedProcedural.js';

/** The height layers with a skirt voxel. */
const skirtLayers = (solid: Uint8Array) => markedLayers(skirtVoxels(solid, g, bones, legs));

describe('a skirt stays on the thighs', () => {
  it('reads the two legs from Mixamo names: each thigh, and the shin with what hangs below it', () => {
    expect(legs).toEqual([{ thigh: 1, belowKnee: [2, 3] }, { thigh: 4, belowKnee: [5, 6] }]);
    expect(legChains(bones, (b) => (b === 2 ? 'Knee' : NAMES[b]))).toEqual([]);
  });

  it('finds the layers a skirt spans, and none where the legs are apart', () => {
    // an elliptical skirt from the hips (y 26) down to y 8 around both legs; below it the legs alone
    const skirt = solidOf((x, y, z) => twoLegs(2.5)(x, y, z) || (y >= 8 && y <= 26 && ((x - 10) / 8) ** 2 + ((z - 5) / 4.5) ** 2 <= 1));
    const layers = skirtLayers(skirt);
    // the legs' lines reach from y 3 (ankles) to 25 (hip joints): every skirt layer among those, and no other
    expect(layers).toEqual(Array.from({ length: 25 - 8 }, (_, n) => 8 + n));
    expect(skirtLayers(solidOf(twoLegs(2.5)))).toEqual([]);
  });

  it('is not fooled by legs that touch, nor by a cape fused behind the legs', () => {
    // round legs touching at x = 10 (radius 3.2 around centres 6 apart): the contact is narrower than a leg
    expect(skirtLayers(solidOf(twoLegs(3.2)))).toEqual([]);
    // a cape slab at the back (z 0..1.5) joining the legs: the gap between them stays empty
    const cape = solidOf((x, y, z) => twoLegs(2.5)(x, y, z) || (y >= 8 && y <= 26 && x >= 3 && x <= 17 && z <= 2.6));
    expect(skirtLayers(cape)).toEqual([]);
  });

  it('moves the weight below the knees to the thighs on the skirt\'s outside only, and a far hand\'s weight away; rows sum to one', () => {
    // a hand bone (index 7) beside the skirt: wrist at (19.5, 14), tip at (19.5, 12); and a staff it holds down to y 1,
    // whose foot touches the hem (y 8 to 9)
    const withHand = [...bones, bone([19.5, 14, 5], [19.5, 12, 5], 0)];
    const skirtShape = (x: number, y: number, z: number) => twoLegs(2.5)(x, y, z) || (y >= 8 && y <= 26 && ((x - 10) / 8) ** 2 + ((z - 5) / 4.5) ** 2 <= 1);
    const staff = (x: number, y: number, z: number) => Math.abs(z - 5) <= 0.6 && ((y >= 1 && y <= 14 && Math.abs(x - 19.5) <= 0.6) || (y >= 8 && y <= 9 && x >= 17 && x <= 20));
    const solid = solidOf((x, y, z) => skirtShape(x, y, z) || staff(x, y, z));
    const marked = skirtVoxels(solid, g, withHand, legs);
    // the staff is not the skirt's, even where it touches the hem
    expect(marked[(5 * 30 + 12) * 20 + 19]).toBe(0);
    expect(marked[(5 * 30 + 12) * 20 + 17]).toBe(1);
    expect(marked[(5 * 30 + 8) * 20 + 19]).toBe(1);
    // vertex 0: the skirt's left side at knee height (shin 0.7, thigh 0.3); 1: its front, on the shin and foot only;
    // 2: inside the filled skirt (a leg modelled under a separate skirt); 3: the left calf below the hem;
    // 4: the skirt's side low down, reached by the hand through the staff (hand 0.5, thigh 0.5); 5: the skirt's side
    // next to the hand (hand 0.4, thigh 0.6); 6: the staff beside the skirt (hand 1)
    const positions = new Float32Array([17.9, 15.2, 5.1, 10.2, 10.3, 9.4, 13.1, 14.8, 5.2, 15.4, 4.6, 5.0, 17.6, 8.6, 4.4, 17.9, 13.4, 5.5, 19.9, 11.5, 5.0]);
    const indices = new Uint16Array([2, 1, 0, 0, 5, 6, 0, 0, 2, 1, 0, 0, 2, 3, 0, 0, 7, 1, 0, 0, 7, 1, 0, 0, 7, 0, 0, 0]);
    const weights = new Float32Array([0.7, 0.3, 0, 0, 0.6, 0.4, 0, 0, 0.7, 0.3, 0, 0, 0.8, 0.2, 0, 0, 0.5, 0.5, 0, 0, 0.4, 0.6, 0, 0, 1, 0, 0, 0]);
    const changed = keepSkirtOnThighs(positions, g, solid, marked, withHand, legs, 4, indices, weights);
    expect(changed).toBe(3);
    const row = (v: number) => weightRow(indices, weights, 4, v);
    expect(row(0)).toEqual({ 1: 1 });
    // the right shin and the right foot both go to the right thigh, summed in one slot
    expect(Object.keys(row(1))).toEqual(['4']);
    expect(row(1)[4]).toBeCloseTo(1, 6);
    expect(row(2)).toEqual({ 2: expect.closeTo(0.7, 6), 1: expect.closeTo(0.3, 6) });
    expect(row(3)).toEqual({ 2: expect.closeTo(0.8, 6), 3: expect.closeTo(0.2, 6) });
    expect(row(4)).toEqual({ 1: 1 });
    expect(row(5)).toEqual({ 7: expect.closeTo(0.4, 6), 1: expect.closeTo(0.6, 6) });
    expect(row(6)).toEqual({ 7: 1 });
  });

  it('keeps a hand resting on the skirt only within the reach of its own surface, read off the skirt', () => {
    // a hand bone (index 7) against the skirt's left side, wrist (19.5, 16) to tip (19.5, 12): longer than two voxels,
    // so that its reach, not the two-voxel floor, decides
    const withHand = [...bones, bone([19.5, 16, 5], [19.5, 12, 5], 0)];
    const skirtShape = (x: number, y: number, z: number) => twoLegs(2.5)(x, y, z) || (y >= 8 && y <= 26 && ((x - 10) / 8) ** 2 + ((z - 5) / 4.5) ** 2 <= 1);
    const hand = (x: number, y: number, z: number) => x >= 18.7 && x <= 20 && y >= 12 && y <= 16 && Math.abs(z - 5) <= 0.8;
    const solid = solidOf((x, y, z) => skirtShape(x, y, z) || hand(x, y, z));
    const marked = skirtVoxels(solid, g, withHand, legs);
    // vertex 0: the skirt's side 2.92 from the hand's bone (hand 0.5, thigh 0.5); 1..8: the hand's own surface on
    // its free side, 0.8 from its bone (hand 1)
    const own = [12.5, 13.5, 14.5, 15.5].flatMap((y) => [20.3, y, 5, 19.5, y, 5.8]);
    const positions = new Float32Array([17.2, 14, 6.8, ...own]);
    const rows = (n: number) => {
      const indices = new Uint16Array(4 * (1 + n)), weights = new Float32Array(4 * (1 + n));
      indices.set([7, 1], 0);
      weights.set([0.5, 0.5], 0);
      for (let v = 1; v <= n; v++) { indices[4 * v] = 7; weights[4 * v] = 1; }
      return { indices, weights };
    };
    // only vertex 0 is on the skirt
    const onSkirt = new Uint8Array(9);
    onSkirt[0] = 1;
    const read = rows(8);
    const reach = ownReachOffSkirt(positions, withHand, onSkirt, 4, read.indices, read.weights);
    expect(reach[7]).toBeCloseTo(0.8 * REACH_MARGIN, 5);
    // no vertex is any other bone's: nothing to read its reach from
    expect(Number.isNaN(reach[1])).toBe(true);

    const withSurface = rows(8);
    expect(keepSkirtOnThighs(positions, g, solid, marked, withHand, legs, 4, withSurface.indices, withSurface.weights)).toBe(1);
    expect(weightRow(withSurface.indices, withSurface.weights, 4, 0)).toEqual({ 1: 1 });
    // the hand's own vertices are off the skirt: untouched
    for (let v = 1; v <= 8; v++) expect(weightRow(withSurface.indices, withSurface.weights, 4, v)).toEqual({ 7: 1 });

    // with too few of its own vertices to read (7 < REACH_MIN_VERTICES), the hand keeps its weight within its length
    const fewer = rows(7);
    expect(keepSkirtOnThighs(positions.subarray(0, 24), g, solid, marked, withHand, legs, 4, fewer.indices, fewer.weights)).toBe(0);
    expect(weightRow(fewer.indices, fewer.weights, 4, 0)).toEqual({ 7: 0.5, 1: 0.5 });
  });

  it('rigs procedural identity 9 100 009 with its fused robe on the hips and thighs, and its calves below the hem on the shins', async () => {
    const { positions, ymin, height, jointHead, share } = await rigProcedural(9_100_009);
    const shinShare = share(/(Left|Right)(Leg|Foot|ToeBase)$/);
    const knee = jointHead('LeftLeg')[1];
    // the robe's surface between 12 % of the height (above its hem at ~10 %) and the knee: wide, beyond the legs
    let robe = 0, robeShin = 0, calf = 0, calfShin = 0;
    for (let v = 0; v < positions.length / 3; v++) {
      const y = positions[3 * v + 1], x = positions[3 * v];
      const shin = shinShare(v);
      if (y > ymin + 0.12 * height && y < knee && Math.abs(x) > 0.2 * height) { robe++; robeShin += shin; }
      if (y > ymin + 0.03 * height && y < ymin + 0.07 * height) { calf++; calfShin += shin; }
    }
    expect(robe).toBeGreaterThan(200);
    expect(robeShin / robe, 'share of the robe\'s weight on the shins and feet').toBeLessThan(0.05);
    expect(calf).toBeGreaterThan(50);
    expect(calfShin / calf, 'share of the lower legs\' weight on the shins and feet').toBeGreaterThan(0.8);
  }, 60_000);
});
