/**
 * End to end in Blender: the add-on zip installed into a clean Blender, a real character stripped of its rig,
 * Auto Rig against the real sidecar (started by the add-on), a posed forearm, Re-skin, undo, a failing cube, and Auto
 * Rig with Facing set (+Y).
 * Without `blender` on PATH the test is skipped locally and FAILS on CI (CI must run it).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BLENDER, ON_CI, ROOT, runAddonScript } from './fixtures/blenderScript.js';

const CHARACTER = resolve(ROOT, '../shared/data/characters/mixamo_ely.glb');

interface E2E {
  steps: string[];
  exception?: string;
  operators_registered: boolean;
  panel_registered: boolean;
  artist_left_hand?: number[];
  bare: { vertices: number; size: number[] };
  auto_rig: { finished: boolean; error: string | null; seconds: number };
  rigged_differs: boolean;
  undo: { ran: boolean; restored?: boolean; armature_gone?: boolean; error?: string };
  rig: {
    armature_found: boolean; bone_count: number; bone_names: string[]; parents_ok: boolean; armature_identity: boolean;
    mesh_parent: string; armature_modifier: boolean; modifier_first: boolean; groups_are_bones: boolean;
    unweighted_vertices: number; weight_sum_range: [number, number]; left_hand: number[]; right_hand: number[];
  };
  pose: { left_hand_vertices: number; right_hand_vertices: number; left_hand_min_move: number; right_hand_max_move: number; height: number };
  reskin: { finished: boolean; error: string | null; forearm_vertices_changed: number; locked_head_max_change: number; head_weight_total: number };
  reskin_undo: { ran: boolean; max_difference_to_before?: number };
  cube: { finished: boolean; error: string | null; unchanged: boolean };
  facing: { finished: boolean; error: string | null; bone_count?: number; unweighted_vertices?: number; left_hand?: number[]; right_hand?: number[] };
  total_seconds: number;
}

const MIXAMO = ['Hips', 'Spine', 'Spine1', 'Spine2', 'Neck', 'Head', 'HeadTop_End', 'LeftShoulder', 'LeftArm', 'LeftForeArm',
  'LeftHand', 'RightShoulder', 'RightArm', 'RightForeArm', 'RightHand', 'LeftUpLeg', 'LeftLeg', 'LeftFoot', 'LeftToeBase',
  'RightUpLeg', 'RightLeg', 'RightFoot', 'RightToeBase'];

describe('Blender add-on end to end', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'autorig-blender-e2e-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it.skipIf(!BLENDER && !ON_CI)('rigs, poses, re-skins, undoes and fails cleanly', () => {
    expect(BLENDER, 'blender must be on PATH on CI').not.toBeNull();
    expect(existsSync(CHARACTER), `${CHARACTER} is needed`).toBe(true);

    // Build the sidecar and the zip exactly as a user would.
    const build = spawnSync('npx', ['tsc', '-p', '.'], { cwd: ROOT, encoding: 'utf8' });
    expect(build.status, build.stdout + build.stderr).toBe(0);
    const zipPath = join(tmp, 'autorig_blender.zip');
    const zip = spawnSync(process.execPath, ['dist/sidecar/cli/addonZip.js', zipPath], { cwd: ROOT, encoding: 'utf8' });
    expect(zip.status, zip.stderr).toBe(0);

    const r = runAddonScript<E2E>({
      script: 'e2e.py', marker: 'AUTORIG_E2E', zip: zipPath, character: CHARACTER, home: tmp, timeout: 120_000,
    });
    expect(r.exception, r.exception).toBeUndefined();

    expect(r.operators_registered).toBe(true);
    expect(r.panel_registered).toBe(true);
    expect(r.bare.vertices).toBe(5040);
    expect(r.bare.size[2]).toBeGreaterThan(1.4); // stands up (z), ~1.6 m: the stripped mesh kept its bind pose and place
    expect(r.bare.size[2]).toBeLessThan(1.8);

    // Auto Rig
    expect(r.auto_rig.error).toBeNull();
    expect(r.auto_rig.finished).toBe(true);
    expect(r.rigged_differs).toBe(true);
    expect(r.rig.armature_found).toBe(true);
    expect(r.rig.bone_count).toBe(23);
    expect(r.rig.bone_names).toEqual(MIXAMO.map((n) => `mixamorig:${n}`));
    expect(r.rig.parents_ok).toBe(true);
    expect(r.rig.armature_identity).toBe(true);
    expect(r.rig.mesh_parent).toMatch(/_Armature$/);
    expect(r.rig.armature_modifier).toBe(true);
    expect(r.rig.modifier_first).toBe(true);
    expect(r.rig.groups_are_bones).toBe(true);
    expect(r.rig.unweighted_vertices).toBe(0);
    expect(r.rig.weight_sum_range[0]).toBeGreaterThan(0.99);
    expect(r.rig.weight_sum_range[1]).toBeLessThan(1.01);
    // the character's own left: the new LeftHand is on the side of the artist's LeftHand
    expect(r.artist_left_hand).toBeDefined();
    expect(Math.sign(r.rig.left_hand[0])).toBe(Math.sign(r.artist_left_hand![0]));
    expect(Math.sign(r.rig.right_hand[0])).toBe(-Math.sign(r.artist_left_hand![0]));

    // Posing the left forearm moves the left hand, not the right one.
    expect(r.pose.left_hand_vertices).toBeGreaterThan(20);
    expect(r.pose.right_hand_vertices).toBeGreaterThan(20);
    expect(r.pose.left_hand_min_move).toBeGreaterThan(0.02 * r.pose.height);
    expect(r.pose.right_hand_max_move).toBeLessThan(1e-4);

    // One undo step takes the whole Auto Rig back.
    expect(r.undo.ran, r.undo.error).toBe(true);
    expect(r.undo.armature_gone).toBe(true);
    expect(r.undo.restored).toBe(true);

    // Re-skin follows the moved elbow, keeps the locked group, and undoes in one step.
    expect(r.reskin.error).toBeNull();
    expect(r.reskin.finished).toBe(true);
    expect(r.reskin.forearm_vertices_changed).toBeGreaterThan(10);
    expect(r.reskin.head_weight_total).toBeGreaterThan(10);
    expect(r.reskin.locked_head_max_change).toBe(0);
    expect(r.reskin_undo.ran).toBe(true);
    expect(r.reskin_undo.max_difference_to_before).toBe(0);

    // A cube is not a humanoid: a clear error, nothing changed.
    expect(r.cube.finished).toBe(false);
    expect(r.cube.error).toMatch(/NOT_HUMANOID/);
    expect(r.cube.unchanged).toBe(true);

    // Facing +Y, set by the user: the same bare mesh rigged turned about up, its left hand on the other side.
    expect(r.facing.error).toBeNull();
    expect(r.facing.finished).toBe(true);
    expect(r.facing.bone_count).toBe(23);
    expect(r.facing.unweighted_vertices).toBe(0);
    expect(Math.sign(r.facing.left_hand![0])).toBe(-Math.sign(r.artist_left_hand![0]));
    expect(Math.sign(r.facing.right_hand![0])).toBe(Math.sign(r.artist_left_hand![0]));

    expect(r.total_seconds).toBeLessThan(60);
  }, 180_000);
});
