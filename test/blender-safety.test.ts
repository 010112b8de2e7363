/**
 * Blender safety, in real Blender (background) with the add-on zip installed:
 *  - every failure leaves the scene exactly as it was (test/blender/scene_digest.py: objects, transforms, meshes,
 *    modifiers and their settings, vertex groups and every weight, shape keys, armatures, selection): the sidecar
 *    answering an error, the sidecar killed in the middle of Auto Rig and of Re-skin, malformed results from a fake
 *    sidecar, a failure injected while a result is applied;
 *  - every success is exactly one undo step (one undo gives the previous digest back, one redo the new one), and the
 *    click after a killed sidecar starts a new one;
 *  - the session token is in no file Blender saves;
 *  - Blender quitting, or being killed, in the middle of a job makes the sidecar exit.
 * Without `blender` on PATH the tests are skipped locally and FAIL on CI (CI must run them).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BLENDER, ON_CI, ROOT, preparedAddonZip, runAddonScript } from './fixtures/blenderScript.js';

const CHARACTER = resolve(ROOT, '../shared/data/characters/mixamo_ely.glb');
const SYSTEM_PYTHON = '/usr/bin/python3';

interface Case {
  finished: boolean;
  error: string | null;
  seconds: number;
  unchanged: boolean;
  differences: string[];
  undo_restores?: boolean;
  undo_differences?: string[];
  redo_restores?: boolean;
  redo_differences?: string[];
  killed_pid?: number | null;
  job_ended_first?: boolean;
  notice_seconds?: number | null;
  killed_process_gone?: boolean;
  new_sidecar?: boolean;
  bones?: number;
  hero_groups?: string[];
  hero_modifiers?: string[];
}

interface Safety {
  steps: string[];
  exception?: string;
  hero_vertices: number;
  cases: Record<string, Case>;
  sidecar_process: { pid: number; token_on_command_line: boolean; token_in_environment: boolean; stdin_is_pipe: boolean };
  token: { config_uses_session_token: boolean; found_in_saved_files: string[]; userpref_saved: boolean; preference_properties: string[] };
  total_seconds: number;
}

const tmp = mkdtempSync(join(tmpdir(), 'autorig-blender-safety-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Preconditions shared by both tests; returns the add-on zip built from the sources. */
function prepare(name: string): string {
  return preparedAddonZip(CHARACTER, ['sidecar', 'cli', 'main.js'], tmp, name);
}

function blenderEnv(name: string): NodeJS.ProcessEnv {
  return { ...process.env, BLENDER_USER_SCRIPTS: join(tmp, name, 'scripts'), BLENDER_USER_CONFIG: join(tmp, name, 'config') };
}

/** True once `pid` has exited (gone, or a zombie nobody reaped: it runs no more). */
function exited(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<number | null> {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    if (check()) return (performance.now() - start) / 1000;
    await new Promise((r) => setTimeout(r, 10));
  }
  return null;
}

const FAILURES = [
  'real_not_humanoid', 'real_killed_during_rig', 'real_killed_during_reskin',
  'fake_rig_badresult', 'fake_rig_nan', 'fake_rig_badindex', 'fake_rig_nanjoint', 'fake_rig_badname', 'fake_rig_slashname',
  'fake_rig_longname', 'fake_rig_dupname', 'rig_apply_fails',
  'fake_skin_error', 'fake_skin_unknownbone', 'fake_skin_nan', 'fake_skin_badresult', 'fake_skin_badindex', 'skin_apply_fails',
];
const SUCCESSES = ['real_rig_after_kill', 'real_reskin', 'fake_rig_normal', 'fake_skin_normal'];
const EXPECTED_ERROR: Record<string, RegExp> = {
  real_not_humanoid: /NOT_HUMANOID/,
  real_killed_during_rig: /SIDECAR: the sidecar stopped during the job/,
  real_killed_during_reskin: /SIDECAR: the sidecar stopped during the job/,
  fake_rig_badresult: /BAD_RESULT: .*weights for 8 vertices expected/,
  fake_rig_nan: /BAD_RESULT: .*NaN/,
  fake_rig_badindex: /BAD_RESULT: .*joint index 200 out of range/,
  fake_rig_nanjoint: /BAD_RESULT: .*joints\[1\]: NaN/,
  fake_rig_badname: /BAD_RESULT: .*U\+0007/,
  fake_rig_slashname: /BAD_RESULT: .*path separator/,
  fake_rig_longname: /BAD_RESULT: .*63 UTF-8 bytes/,
  fake_rig_dupname: /BAD_RESULT: .*earlier joint/,
  rig_apply_fails: /APPLY_FAILED: Auto Rig failed .*injected.*nothing was changed/,
  fake_skin_error: /INTERNAL: the skinning failed/,
  fake_skin_unknownbone: /BAD_RESULT: .*bones differ/,
  fake_skin_nan: /BAD_RESULT: .*NaN/,
  fake_skin_badresult: /BAD_RESULT: .*weights for 5040 vertices expected/,
  fake_skin_badindex: /BAD_RESULT: .*joint index 200/,
  skin_apply_fails: /APPLY_FAILED: Re-skin failed .*injected.*nothing was changed/,
};

describe('Blender safety', () => {
  it.skipIf(!BLENDER && !ON_CI)('failures leave the scene exactly as it was; each success is one undo step', () => {
    const zipPath = prepare('safety');
    const work = join(tmp, 'work');
    mkdirSync(work, { recursive: true });
    const r = runAddonScript<Safety>({
      script: 'safety.py', marker: 'AUTORIG_SAFETY', zip: zipPath, character: CHARACTER, home: join(tmp, 'safety'), timeout: 150_000,
      args: ['--fake', join(ROOT, 'test', 'python', 'fake_sidecar.py'), '--python', SYSTEM_PYTHON, '--work', work],
    });
    expect(r.exception, r.exception).toBeUndefined();
    expect(r.hero_vertices).toBe(5040);
    expect(Object.keys(r.cases).sort()).toEqual([...FAILURES, ...SUCCESSES].sort());

    for (const name of FAILURES) {
      const c = r.cases[name];
      expect(c.finished, name).toBe(false);
      expect(c.error, name).toMatch(EXPECTED_ERROR[name]);
      expect(c.differences, `${name}: the scene changed`).toEqual([]);
      expect(c.unchanged, name).toBe(true);
    }

    // Killed in the middle of a job: the job had not ended, Blender noticed at once, the process is gone.
    for (const name of ['real_killed_during_rig', 'real_killed_during_reskin']) {
      const c = r.cases[name];
      expect(c.killed_pid, `${name}: the sidecar was never killed`).toBeGreaterThan(0);
      expect(c.job_ended_first, `${name}: the job ended before the kill: ${JSON.stringify(c)}`).toBe(false);
      expect(c.notice_seconds).not.toBeNull();
      expect(c.notice_seconds!).toBeLessThan(5); // generous: a correctness bound, the figure goes to the report
      expect(c.killed_process_gone, name).toBe(true);
    }

    for (const name of SUCCESSES) {
      const c = r.cases[name];
      expect(c.error, name).toBeNull();
      expect(c.finished, name).toBe(true);
      expect(c.unchanged, `${name} changed nothing`).toBe(false);
      expect(c.undo_differences, `${name}: one undo does not give the scene back`).toEqual([]);
      expect(c.undo_restores, name).toBe(true);
      expect(c.redo_differences, `${name}: redo does not give the result back`).toEqual([]);
      expect(c.redo_restores, name).toBe(true);
    }

    // The click after the kill started a new sidecar and rigged, keeping the artist's own groups and modifiers.
    const again = r.cases.real_rig_after_kill;
    expect(again.new_sidecar).toBe(true);
    expect(again.bones).toBe(23);
    expect(again.hero_groups).toEqual(expect.arrayContaining(['Belt', 'Pinned', 'mixamorig:Spine', 'mixamorig:Hips']));
    expect(again.hero_modifiers).toEqual(['ARMATURE', 'SMOOTH', 'DISPLACE']);

    // The token: in the sidecar's environment, not on its command line; stdin a pipe; saved in no file.
    expect(r.sidecar_process.token_on_command_line).toBe(false);
    expect(r.sidecar_process.token_in_environment).toBe(true);
    expect(r.sidecar_process.stdin_is_pipe).toBe(true);
    expect(r.token.config_uses_session_token).toBe(true);
    expect(r.token.userpref_saved).toBe(true);
    expect(r.token.found_in_saved_files).toEqual([]);
    expect(r.token.preference_properties.some((p) => /token/i.test(p))).toBe(false);
  }, 180_000);

  it.skipIf(!BLENDER && !ON_CI)('Blender quitting or killed during a job: the sidecar exits', async () => {
    const zipPath = prepare('quit');
    const seconds: Record<string, number | null> = {};
    for (const how of ['quit', 'stay'] as const) {
      const blender = spawn(BLENDER!, [
        '-b', '--factory-startup', '--python', 'test/blender/quit_during_job.py', '--',
        '--zip', zipPath, '--node', process.execPath, '--entry', join(ROOT, 'bin', 'autorig.js'), '--character', CHARACTER,
        '--how', how,
      ], { cwd: ROOT, env: blenderEnv(`quit-${how}`), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      blender.stdout.on('data', (d) => { stdout += d; });
      blender.stderr.on('data', (d) => { stderr += d; });
      const blenderExit = new Promise<number | null>((done) => blender.on('exit', (code) => done(code)));
      const found = await waitFor(() => stdout.includes('AUTORIG_QUIT '), 90_000);
      if (found === null) blender.kill('SIGKILL');
      expect(found, `${how}: no AUTORIG_QUIT line; stdout:\n${stdout.slice(-3000)}\nstderr:\n${stderr.slice(-2000)}`).not.toBeNull();
      const line = stdout.slice(stdout.indexOf('AUTORIG_QUIT ')).split('\n')[0];
      const started = JSON.parse(line.slice('AUTORIG_QUIT '.length)) as { pid: number | null; state: string; error: unknown; sidecar_running: boolean };
      expect(started.state, `${how}: the job was not running (${JSON.stringify(started.error)})`).toBe('running');
      expect(started.pid).toBeGreaterThan(0);
      const pid = started.pid!;
      // read by the script while the job ran: after "quit" the sidecar may rightly be gone before this line is read
      expect(started.sidecar_running, `${how}: the sidecar is not running during the job`).toBe(true);
      if (how === 'stay') expect(exited(pid), `${how}: the sidecar is not running while Blender stays`).toBe(false);
      if (how === 'stay') blender.kill('SIGKILL'); // no hook runs: only the closed stdin pipe tells the sidecar
      seconds[how] = await waitFor(() => exited(pid), 15_000);
      if (seconds[how] === null) process.kill(pid, 'SIGKILL'); // leave nothing behind
      expect(seconds[how], `${how}: the sidecar (pid ${pid}) still runs 15 s after Blender went away`).not.toBeNull();
      expect(seconds[how]!).toBeLessThan(5);
      const code = await blenderExit;
      if (how === 'quit') expect(code, `Blender's own exit; stderr:\n${stderr.slice(-2000)}`).toBe(0);
    }
    console.log(`sidecar exit after Blender went away: quit ${seconds.quit?.toFixed(3)} s, SIGKILL ${seconds.stay?.toFixed(3)} s`);
  }, 240_000);
});
