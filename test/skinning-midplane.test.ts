/**
 * The voxel skinning's midplane (sidecar/skinning/voxelBoneWeights.ts, pipeline.ts skinBones): a bone of one side
 * weighs no voxel on the other side of the body, and mirrored siblings (the two thighs) share none. The midplane is the
 * Hips' x. It was the canonical box's centre (x = 0), which arms posed apart (one raised, one hanging) move off the
 * body's midline: on procedural humanoid 12 000 025 by 0.135 of the box, as far as the left ankle's side, so both
 * thighs read as right-side bones and blended across the crotch.
 */
import { describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { skinCharacterAsync } from '../sidecar/pipeline.js';
import { GENERATOR_FRAME } from '../sidecar/pose/poseVocabulary.js';
import { buildMixamoSkeleton, MIXAMO_JOINTS, type MixamoJointName } from '../sidecar/skeleton/mixamoTemplate.js';
import type { Vec3 } from '../sidecar/types.js';
import { bone, g, solidOf } from './fixtures/legSolids.js';
import { voxelBoneWeights } from '../sidecar/skinning/voxelBoneWeights.js';

describe('the voxel skinning\'s midplane', () => {
  it('keeps each thigh\'s weight on its own side of the given midline, wherever the grid\'s x = 0 is', () => {
    // two legs that touch (bones at x 12 and 8, 2.5 voxels round, midline 10) under the hips
    const solid = solidOf((x, y, z) => Math.abs(z - 5) <= 2.5 && y >= 1 && y <= 27 && (Math.abs(x - 12) <= 2.5 || Math.abs(x - 8) <= 2.5));
    const bones = [
      bone([10, 25, 5], [10, 28, 5], -1),
      bone([12, 25, 5], [12, 3, 5], 0),
      bone([8, 25, 5], [8, 3, 5], 0),
    ];
    const leak = (midline: number) => {
      const w = voxelBoneWeights(solid, g, bones, 4, undefined, midline);
      const [nx, ny] = g.dims;
      let most = 0;
      for (let v = 0; v < solid.length; v++) {
        if (!w.weighted[v]) continue;
        const x = (v % nx) + 0.5, y = Math.floor(v / nx) % ny + 0.5;
        if (y > 22 || x > 10) continue; // the right leg below the hips
        for (let q = 0; q < 4; q++) if (w.bones[v * 4 + q] === 1) most = Math.max(most, w.values[v * 4 + q]);
      }
      return most;
    };
    // the midline at the Hips: no left-thigh weight on the right leg
    expect(leak(10)).toBe(0);
    // the grid's x = 0 as the midline (both legs on one side): the left thigh takes voxels of the right one (measured
    // 0.13 at most)
    expect(leak(0)).toBeGreaterThan(0.1);
  });

  it('gives no vertex of one leg of procedural humanoid 12 000 025 (arms posed apart) weight from the other leg', async () => {
    const character = generateProceduralHumanoid(12_000_025, { targetVertices: 20_000, asymmetricArms: true });
    const heads = Object.fromEntries(MIXAMO_JOINTS.map((n, i) => [n, Array.from(character.joints.subarray(3 * i, 3 * i + 3))])) as Record<MixamoJointName, Vec3>;
    const skin = await skinCharacterAsync(character.parts, buildMixamoSkeleton(heads, {}, GENERATOR_FRAME, true), [], { method: 'geometric' });
    const height = character.meta.heightMetres as number;
    const mid = heads.Hips[0], crotch = Math.min(heads.LeftUpLeg[1], heads.RightUpLeg[1]);
    for (const [side, other] of [['Left', 'Right'], ['Right', 'Left']] as const) {
      const otherLeg = new Set(skin.skeleton.joints.flatMap((j, b) => (new RegExp(`${other}(UpLeg|Leg|Foot|ToeBase)$`).test(j.name) ? [b] : [])));
      let vertices = 0, crossed = 0;
      skin.objects.forEach((o, p) => {
        const pos = character.parts[p].positions, k = o.influences;
        for (let v = 0; v < pos.length / 3; v++) {
          const x = pos[3 * v] - mid;
          // below the crotch, off the midline by 2 % of the height on this leg's side
          if (pos[3 * v + 1] > crotch - 0.05 * height || (side === 'Left' ? x < 0.02 * height : x > -0.02 * height)) continue;
          vertices++;
          let w = 0;
          for (let q = 0; q < k; q++) if (otherLeg.has(o.indices[v * k + q])) w += o.weights[v * k + q];
          if (w > 0.01) crossed++;
        }
      });
      expect(vertices, side).toBeGreaterThan(3000);
      // measured 0 on each leg; before, 23 and 17 vertices
      expect(crossed, side).toBe(0);
    }
  }, 60_000);
});
