/**
 * Which way a request that brings a skeleton takes the character to face (skeleton/skeletonFacing,
 * skeleton/skeletonForward): Apply Latent Pose and skin go by the skeleton's left and right when it is Mixamo-named,
 * else by the caller's facing, else by the shape. minetest_character's front and back are the
 * same boxes, so its shape cannot tell and the file convention (+Z) stands; its artist's rig puts Arm_Left at -X, so it
 * faces -Z. Read backwards, "bend the left elbow" bends the character's right one, and "arm forward" swings it behind.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadCharacter, type Character } from '../sidecar/io/character.js';
import { applyLatentPose, latentPoseAutoRig, prepareLatentPose, type ApplyLatentPoseOptions } from '../sidecar/pose/applyLatentPose.js';
import { rigCharacterAsync, skinCharacter } from '../sidecar/pipeline.js';
import { facingHintOf, sameFacingHint } from '../sidecar/skeleton/skeletonFacing.js';
import { skeletonForward } from '../sidecar/skeleton/skeletonForward.js';
import type { RigResult, Skeleton, Vec3 } from '../sidecar/types.js';

const CHARACTER = resolve(import.meta.dirname, '../../shared/data/characters/minetest_character.glb');
const FACES: Vec3 = [0, 0, -1];

let character: Character;
/** the auto-rig made facing -Z: a Mixamo rig whose LeftArm is at the artist's Arm_Left */
let rig: Pick<RigResult, 'skeleton' | 'objects'>;

beforeAll(async () => {
  expect(existsSync(CHARACTER), `dev character expected at ${CHARACTER}`).toBe(true);
  character = await loadCharacter(CHARACTER);
  rig = await latentPoseAutoRig(character.parts, FACES);
}, 120_000);

/** Unit direction. */
function unit(v: Vec3): Vec3 {
  const n = Math.hypot(v[0], v[1], v[2]);
  return [v[0] / n, v[1] / n, v[2] / n];
}

/**
 * How a pose moved the vertices the artist's skin gives most to `joint` (minetest's own rig: Arm_Left, Arm_Right...):
 * their mean displacement length and their mean displacement (input space).
 */
function jointMotion(posed: Float32Array[], joint: string): { distance: number; mean: Vec3 } {
  const artist = character.rig!;
  const j = artist.joints.findIndex((x) => x.name === joint);
  let distance = 0, n = 0;
  const mean: Vec3 = [0, 0, 0];
  character.parts.forEach((part, k) => {
    const skin = artist.skins[k]!;
    for (let v = 0; v < part.positions.length / 3; v++) {
      let best = 0;
      for (let s = 1; s < 4; s++) if (skin.weights[4 * v + s] > skin.weights[4 * v + best]) best = s;
      if (skin.indices[4 * v + best] !== j) continue;
      const d: Vec3 = [0, 1, 2].map((a) => posed[k][3 * v + a] - part.positions[3 * v + a]) as Vec3;
      distance += Math.hypot(d[0], d[1], d[2]);
      for (let a = 0; a < 3; a++) mean[a] += d[a];
      n++;
    }
  });
  expect(n, `${joint} owns vertices`).toBeGreaterThan(0);
  return { distance: distance / n, mean: mean.map((x) => x / n) as Vec3 };
}

async function posed(options: ApplyLatentPoseOptions): Promise<{ positions: Float32Array[]; result: Awaited<ReturnType<typeof applyLatentPose>> }> {
  const result = await applyLatentPose(character.parts, options);
  return { positions: result.objects.map((o) => o.positions), result };
}

describe('skeletonForward', () => {
  it('reads the way a Mixamo skeleton faces from its named sides, turned with it, and swaps with the names', () => {
    expect(unit(skeletonForward(rig.skeleton)!)[2]).toBeLessThan(-0.99);
    const swapped: Skeleton = {
      joints: rig.skeleton.joints.map((j) => ({ ...j, name: j.name.replace(/Left|Right/, (s) => (s === 'Left' ? 'Right' : 'Left')) })),
    };
    expect(unit(skeletonForward(swapped)!)[2]).toBeGreaterThan(0.99);
    // a quarter turn about +Y (x → -z, z → x) turns its forward -Z to -X
    const turn = (p: Vec3): Vec3 => [p[2], p[1], -p[0]];
    const turned: Skeleton = { joints: rig.skeleton.joints.map((j) => ({ ...j, head: turn(j.head), tail: turn(j.tail) })) };
    expect(unit(skeletonForward(turned)!)[0]).toBeLessThan(-0.99);
  });

  it('gives no direction for a skeleton whose sides coincide or that lacks a side joint', () => {
    const heads = new Map(rig.skeleton.joints.map((j) => [j.name.replace(/^mixamorig:/, ''), j.head]));
    const collapsed: Skeleton = {
      joints: rig.skeleton.joints.map((j) => {
        const bare = j.name.replace(/^mixamorig:/, '');
        return bare.includes('Right') ? { ...j, head: heads.get(bare.replace('Right', 'Left'))! } : j;
      }),
    };
    expect(skeletonForward(collapsed)).toBeNull();
    expect(skeletonForward({ joints: rig.skeleton.joints.filter((j) => !j.name.endsWith('RightUpLeg')) })).toBeNull();
    // then the caller's hint decides, and without one the shape
    expect(facingHintOf(collapsed, [1, 0, 0])).toEqual({ direction: [1, 0, 0], source: 'option' });
    expect(facingHintOf(collapsed, undefined)).toBeNull();
    expect(facingHintOf(rig.skeleton, [0, 0, 1])?.source).toBe('rig');
    // one direction is one hint whatever its length (the server keys a mesh's reading by it); a zero one stays zero
    expect(facingHintOf(undefined, [0, -2, -0])).toEqual({ direction: [0, -1, 0], source: 'option' });
    expect(Object.is(facingHintOf(undefined, [0, -2, -0])!.direction[2], -0)).toBe(false);
    expect(facingHintOf(undefined, [0, 0, 0])?.direction).toEqual([0, 0, 0]);
    expect(Math.hypot(...facingHintOf(rig.skeleton, undefined)!.direction)).toBeCloseTo(1, 12);
    expect(sameFacingHint(undefined, undefined) && sameFacingHint([0, 0, 1], [0, 0, 1]) && !sameFacingHint([0, 0, 1], undefined)).toBe(true);
  });
});

describe('Apply Latent Pose faces the way it is told', () => {
  it('takes the file convention where the shape cannot tell, and says so', async () => {
    const { result } = await posed({ pose: 'elbowBentLf', strength: 0 });
    expect(result.facing).toBe('convention');
    expect(result.forward).toEqual([0, 0, 1]);
  }, 120_000);

  it('turns to the caller\'s facing: the left elbow bent is the artist\'s Arm_Left, the arm swung forward goes to -Z', async () => {
    const bent = await posed({ pose: 'elbowBentLf', facing: FACES });
    expect(bent.result.facing).toBe('option');
    expect(bent.result.forward).toEqual([0, 0, -1]);
    const left = jointMotion(bent.positions, 'Arm_Left'), right = jointMotion(bent.positions, 'Arm_Right');
    expect(left.distance).toBeGreaterThan(5 * right.distance);
    const forward = await posed({ pose: 'armForwardLf', facing: FACES });
    expect(jointMotion(forward.positions, 'Arm_Left').mean[2]).toBeLessThan(-0.5);
  }, 240_000);

  it('poses through a given rig as the rig faces, whatever the shape or the facing option say', async () => {
    for (const facing of [undefined, [0, 0, 1] as Vec3]) {
      const forward = await posed({ pose: 'armForwardLf', rig, ...(facing ? { facing } : {}) });
      expect(forward.result.facing).toBe('rig');
      expect(forward.result.forward).toEqual([0, 0, -1]);
      const arm = jointMotion(forward.positions, 'Arm_Left');
      expect(arm.mean[2]).toBeLessThan(-0.5);
      expect(arm.distance).toBeGreaterThan(5 * jointMotion(forward.positions, 'Arm_Right').distance);
    }
  }, 240_000);

  it('prepares for applies through a rig in the rig\'s frame, and reuses it only for the same facing', async () => {
    const prepared = await prepareLatentPose(character.parts, { skeleton: rig.skeleton });
    expect(prepared.rig).toBe('none');
    expect(prepared.facing).toBe('rig');
    expect(prepared.forward).toEqual([0, 0, -1]);
    const cold = await posed({ pose: 'kneeBentRt', rig });
    const warm = await posed({ pose: 'kneeBentRt', rig, reuse: prepared.reusable });
    expect(warm.result.reused).toBe(true);
    expect(warm.positions).toEqual(cold.positions);
    // read in the rig's frame, it does not serve an auto-rigged apply, which faces as the shape says
    const other = await posed({ pose: 'kneeBentRt', reuse: prepared.reusable });
    expect(other.result.reused).toBe(false);
    expect(other.result.forward).toEqual([0, 0, 1]);
    await expect(prepareLatentPose(character.parts, { skeleton: rig.skeleton, autoRig: true })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  }, 300_000);

  it('refuses a rig that lies across the mesh', async () => {
    // the rig turned a quarter about +X: its forward (-Z) becomes +Y, the mesh's up
    const tip = (p: Vec3): Vec3 => [p[0], -p[2], p[1]];
    const lying = { ...rig, skeleton: { joints: rig.skeleton.joints.map((j) => ({ ...j, head: tip(j.head), tail: tip(j.tail) })) } };
    await expect(applyLatentPose(character.parts, { pose: 'elbowBentLf', rig: lying })).rejects.toMatchObject({ code: 'BAD_SKELETON' });
  }, 120_000);
});

describe('skin faces as the armature does', () => {
  it('re-skins an armature rigged facing -Z in that frame: the weights Auto Rig gave, bit for bit', async () => {
    const rigged = await rigCharacterAsync(character.parts, { facing: FACES, method: 'geometric' });
    expect(rigged.facing).toBe('option');
    const again = skinCharacter(character.parts, rigged.skeleton);
    expect(again.facing).toBe('rig');
    expect(again.forward).toEqual([0, 0, -1]);
    again.objects.forEach((part, k) => {
      expect(Array.from(part.indices)).toEqual(Array.from(rigged.objects[k].indices));
      expect(Array.from(part.weights)).toEqual(Array.from(rigged.objects[k].weights));
    });
    // a skeleton without Mixamo names says nothing of its sides: the facing option, else the shape (here the convention)
    const renamed: Skeleton = { joints: rigged.skeleton.joints.map((j, i) => ({ ...j, name: `Bone${i}` })) };
    expect(skinCharacter(character.parts, renamed)).toMatchObject({ facing: 'convention', forward: [0, 0, 1] });
    expect(skinCharacter(character.parts, renamed, [], { facing: FACES })).toMatchObject({ facing: 'option', forward: [0, 0, -1] });
  }, 120_000);
});
