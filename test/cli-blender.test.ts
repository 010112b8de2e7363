/**
 * What `autorig rig` writes is what Blender's own glTF importer reads: one armature with the 23 Mixamo bones, the mesh
 * unmoved in the rest pose, a vertex group per bone, and weights that make the left arm move the left hand only; and
 * a textured character keeps its material and texture.
 * Without `blender` on PATH the test is skipped locally and FAILS on CI (CI must run it).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../sidecar/cli/main.js';

const root = join(import.meta.dirname, '..');
const blender = spawnSync('sh', ['-c', 'command -v blender'], { encoding: 'utf8' }).stdout.trim() || null;
const onCi = process.env.CI === 'true';
const scratch = mkdtempSync(join(tmpdir(), 'autorig-blender-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.skipIf(!blender && !onCi)("Blender's glTF importer reads what autorig rig writes", { timeout: 120_000 }, () => {
  it('imports one armature, the mesh unmoved at rest, and the left arm moves the left hand only', async () => {
    expect(blender, 'blender must be on PATH on CI').not.toBeNull();
    const glb = join(scratch, 'demo.glb');
    const sink = { write: () => true };
    expect(await runCli(['rig', join(root, 'assets/demo/demo_character.obj'), '-o', glb], { stdout: sink, stderr: sink })).toBe(0);
    const out = join(scratch, 'report.json');
    const run = spawnSync(
      blender!,
      ['-b', '--factory-startup', '--python', join(root, 'test/fixtures/blender_import_glb.py'), '--', glb, out, 'mixamorig:LeftArm'],
      { encoding: 'utf8', timeout: 100_000 },
    );
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.error, run.stdout + run.stderr).toBeNull();
    expect(report.armatures).toBe(1);
    expect(report.bones).toHaveLength(23);
    expect(report.bones[0]).toBe('mixamorig:Hips');
    expect(report.parents[report.bones.indexOf('mixamorig:LeftForeArm')]).toBe('mixamorig:LeftArm');
    expect(report.meshes.map((m: any) => m.name).sort()).toEqual(['body', 'eye_L', 'eye_R', 'hat']);
    for (const mesh of report.meshes) {
      expect(mesh.modifiers).toContain('ARMATURE');
      expect(mesh.groups).toBe(23);
      expect(mesh.rest_offset, mesh.name).toBeLessThan(1e-5);
    }
    expect(report.left_hand_min_move).toBeGreaterThan(0.05);
    expect(report.right_side_max_move).toBeLessThan(1e-5);
  });

  it('brings a textured character\'s material and texture along: the rigged cesium_man shows its decoded image', async () => {
    expect(blender, 'blender must be on PATH on CI').not.toBeNull();
    const glb = join(scratch, 'cesium rigged.glb');
    const sink = { write: () => true };
    expect(await runCli(['rig', join(root, '../shared/data/characters/cesium_man.glb'), '-o', glb], { stdout: sink, stderr: sink })).toBe(0);
    const out = join(scratch, 'looks.json');
    const run = spawnSync(blender!, ['-b', '--factory-startup', '--python', join(root, 'test/fixtures/blender_import_looks.py'), '--', glb, out], {
      encoding: 'utf8', timeout: 100_000,
    });
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.error, run.stdout + run.stderr).toBeNull();
    expect(report.meshes.length).toBeGreaterThan(0);
    for (const mesh of report.meshes) {
      expect(mesh.materials, mesh.name).toHaveLength(1);
      expect(mesh.materials[0].name, mesh.name).not.toBe('autorig');
      expect(mesh.materials[0].images, mesh.name).toHaveLength(1);
      // decoded: Blender knows the JPEG's pixel size
      expect(Math.min(...mesh.materials[0].images[0].size), mesh.name).toBeGreaterThan(1);
    }
  });
});
