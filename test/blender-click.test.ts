/**
 * The add-on's operators as a click runs them (test/blender/click.py): a Blender with a window under xvfb-run, each
 * operator invoked (INVOKE_DEFAULT: the modal path, a timer polling the sidecar, Esc cancelling), which background
 * Blender, where the other Blender tests run, cannot run. Against the fake sidecar (test/python/fake_sidecar.py),
 * which answers at once: what is tested is the add-on's modal path. Auto Rig rigs the character in one undo step;
 * Apply Latent Pose adds its shape key; Apply All Poses chains its requests; an error and Esc leave the scene exactly
 * as it was; a click's request is on its way when the click returns; a pose setting changed reads the mesh ahead
 * (pose.prepare), and the click after it is answered as reused.
 * Without `blender` or `xvfb-run` on PATH the test is skipped locally and FAILS on CI (CI must run it).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BLENDER, ON_CI, ROOT, XVFB_RUN, preparedAddonZip, runAddonScript } from './fixtures/blenderScript.js';

const CHARACTER = resolve(ROOT, '../shared/data/characters/mixamo_ely.glb');
const SYSTEM_PYTHON = '/usr/bin/python3';
/** test/python/fake_sidecar.py's FAKE_POSES, in its order */
const FAKE_POSES = ['elbowBentLf', 'kneeBentRt', 'elbowBentLf+kneeBentRt'];

interface Click { invoke: string[]; sent_when_click_returned: string[]; answer: string[]; differences?: string[] }
interface ClickRun {
  steps: string[];
  exception?: string;
  hero_vertices: number;
  cases: {
    auto_rig: { answer: string[]; armature: string | null; bones: number; groups: string[]; modifier: string[]; changed: boolean; undo_restores: boolean; redo_restores: boolean };
    pose: { answer: string[]; pose: string; keys: string[]; value: number | null; lift_min: number | null; lift_max: number | null };
    all_poses: { answer: string[]; poses: string[]; added: string[]; values: number[]; requests: number };
    error: Click;
    cancel: Click;
    handshake: Click;
    prepared: Click & { sent_with_preference_off: string[]; panel_drawn: boolean; sent_from_panel: string[]; outcome: unknown[]; status: string | null; sent_after_a_change_of_setting: string[]; sent_after_a_change_of_facing: string[]; sent_after_the_mesh_moved: string[]; reused: boolean[] };
  };
}

const tmp = mkdtempSync(join(tmpdir(), 'autorig-blender-click-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('Blender, as a click runs the operators', () => {
  it.skipIf((!BLENDER || !XVFB_RUN) && !ON_CI)('modal: rig, pose, all poses; an error and Esc change nothing; the request leaves at the click', () => {
    expect(XVFB_RUN, 'xvfb-run must be on PATH on CI (Debian: apt install xvfb)').not.toBeNull();
    const zip = preparedAddonZip(CHARACTER, ['sidecar', 'cli', 'main.js'], tmp, 'click');
    const work = join(tmp, 'work');
    mkdirSync(work, { recursive: true });
    const r = runAddonScript<ClickRun>({
      script: 'click.py', marker: 'AUTORIG_CLICK', zip, character: CHARACTER, home: join(tmp, 'home'), timeout: 180_000, window: true,
      args: ['--fake', join(ROOT, 'test', 'python', 'fake_sidecar.py'), '--python', SYSTEM_PYTHON, '--work', work],
    });
    expect(r.exception, r.exception).toBeUndefined();
    expect(r.hero_vertices).toBe(5040);
    const c = r.cases;

    // Auto Rig: the fake's two joints, one group each, bound by an armature modifier; one undo step each way
    expect(c.auto_rig.answer).toEqual(['FINISHED']);
    expect(c.auto_rig.armature).not.toBeNull();
    expect(c.auto_rig.bones).toBe(2);
    expect(c.auto_rig.groups).toEqual(['Head', 'mixamorig:Hips']);
    expect(c.auto_rig.modifier).toContain('ARMATURE');
    expect(c.auto_rig.undo_restores).toBe(true);
    expect(c.auto_rig.redo_restores).toBe(true);

    // Apply Latent Pose: Basis and the pose's key at 1, every vertex 0.1 higher in the world (the fake's answer)
    expect(c.pose.answer).toEqual(['FINISHED']);
    expect(c.pose.pose).toBe(FAKE_POSES[0]);
    expect(c.pose.keys).toEqual(['Basis', FAKE_POSES[0]]);
    expect(c.pose.value).toBe(1);
    expect(c.pose.lift_min!).toBeCloseTo(0.1, 4);
    expect(c.pose.lift_max!).toBeCloseTo(0.1, 4);

    // Apply All Poses: one request per pose, chained by the modal path, every key at 0
    expect(c.all_poses.answer).toEqual(['FINISHED']);
    expect(c.all_poses.poses).toEqual(FAKE_POSES);
    expect(c.all_poses.requests).toBe(FAKE_POSES.length);
    expect(c.all_poses.added).toEqual([`${FAKE_POSES[0]}.001`, ...FAKE_POSES.slice(1)]);
    expect(c.all_poses.values).toEqual(FAKE_POSES.map(() => 0));

    // an error from the sidecar, and Esc while it works: nothing changed
    expect(c.error.answer).toEqual(['CANCELLED']);
    expect(c.error.differences).toEqual([]);
    expect(c.cancel.invoke).toEqual(['RUNNING_MODAL']);
    expect(c.cancel.answer).toEqual(['CANCELLED']);
    expect(c.cancel.differences).toEqual([]);

    // the click's request left before the click returned: the modal timer only waits for the answer
    expect(c.handshake.invoke).toEqual(['RUNNING_MODAL']);
    expect(c.handshake.sent_when_click_returned).toEqual(['hello', 'pose.apply']);
    expect(c.handshake.answer).toEqual(['FINISHED']);

    // read ahead: the panel's Latent Pose section drawn sends one pose.prepare of the shown mesh (none with the
    // preference off); a setting changed sends none more for the same mesh, and one once the mesh has moved; the
    // click then sends its pose.apply alone, and the sidecar answers it as reused
    expect(c.prepared.sent_with_preference_off).toEqual([]);
    expect(c.prepared.panel_drawn).toBe(true);
    expect(c.prepared.sent_from_panel).toEqual(['hello', 'pose.prepare']);
    expect(c.prepared.outcome).toEqual(['done', { reused: false, rig: 'auto', facing: 'shape', forward: [0, -1, 0], seconds: 0.01 }]);
    expect(c.prepared.status).toBe('Mesh read: posing is quick');
    expect(c.prepared.sent_after_a_change_of_setting).toEqual([]);
    // Facing set in the panel (+Y): read again in that facing, and the click's apply carries it
    expect(c.prepared.sent_after_a_change_of_facing).toEqual(['hello', 'pose.prepare facing [0.0, 1.0, 0.0]']);
    expect(c.prepared.sent_after_the_mesh_moved).toEqual(['hello', 'pose.prepare facing [0.0, 1.0, 0.0]']);
    expect(c.prepared.sent_when_click_returned).toEqual(['hello', 'pose.apply facing [0.0, 1.0, 0.0]']);
    expect(c.prepared.answer).toEqual(['FINISHED']);
    expect(c.prepared.reused).toEqual([true]);
  }, 240_000);
});
