/**
 * Add-on security, without Blender:
 *  - a static audit (test/python/addon_audit.py, Python's ast) of every add-on source finds no way for data from the
 *    sidecar to run as code (eval/exec/compile/__import__, pickle/marshal, shells, data-chosen attributes, driver
 *    expressions) and no file writing (so no token file); the same audit does flag each of those in planted code;
 *  - the real sidecar started the add-on's way gets its token in its environment, never on its command line (any
 *    local user can read that with `ps`), and its stdin is a pipe: closing it (what the OS does when Blender dies)
 *    makes the sidecar exit cleanly.
 * Bone names from the sidecar are checked in test/python/test_protocol.py (BoneNames), run by addon-python.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const PYTHON = '/usr/bin/python3';
const tmp = mkdtempSync(join(tmpdir(), 'autorig-addon-security-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Finding { file: string; line: number; rule: string; text: string }

function audit(folder: string): { files: string[]; findings: Finding[] } {
  const run = spawnSync(PYTHON, [join(ROOT, 'test', 'python', 'addon_audit.py'), folder], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as { files: string[]; findings: Finding[] };
}

describe('add-on security', () => {
  it('no add-on source can run what the sidecar sends, or write a file', () => {
    const { files, findings } = audit(join(ROOT, 'blender_addon'));
    const sources = readdirSync(join(ROOT, 'blender_addon')).filter((f) => f.endsWith('.py')).sort();
    expect(files.sort()).toEqual(sources);
    expect(sources.length).toBeGreaterThanOrEqual(10);
    expect(findings).toEqual([]);
  });

  it('the audit flags each kind of unsafe code', () => {
    const planted = join(tmp, 'planted');
    mkdirSync(planted, { recursive: true });
    writeFileSync(join(planted, 'evil.py'), [
      'import pickle',
      'import subprocess, os',
      'def apply(message, obj, driver):',
      '    eval(message["name"])',
      '    exec(message["code"])',
      '    subprocess.run(message["cmd"], shell=True)',
      '    os.system("ls")',
      '    getattr(obj, message["attr"])()',
      '    driver.expression = message["name"]',
      '    open("/tmp/token", "w").write(message["token"])',
      '',
    ].join('\n'));
    const { findings } = audit(planted);
    const byLine = Object.fromEntries(findings.map((f) => [f.line, f.rule]));
    expect(byLine).toEqual({
      1: 'module', 4: 'dynamic-code', 5: 'dynamic-code', 6: 'shell', 7: 'shell', 8: 'dynamic-attribute',
      9: 'evaluates-text', 10: 'writes-file',
    });
  });

  it.skipIf(process.platform !== 'linux')('the token travels in the environment; closing stdin stops the sidecar', () => {
    expect(existsSync(join(ROOT, 'dist', 'sidecar', 'cli', 'main.js')), 'run `npm run build` first').toBe(true);
    const run = spawnSync(PYTHON, ['real_sidecar_probe.py', process.execPath, join(ROOT, 'bin', 'autorig.js')], {
      cwd: join(ROOT, 'test', 'python'), encoding: 'utf8', timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const r = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
      ready: boolean; token_on_command_line: boolean; command_line: string; token_in_environment: boolean;
      stdin_is_pipe: boolean; exit_code: number | null; exit_seconds: number; stderr_tail: string[];
    };
    expect(r.ready).toBe(true);
    expect(r.command_line).toMatch(/autorig\.js serve --port 0$/);
    expect(r.token_on_command_line).toBe(false);
    expect(r.token_in_environment).toBe(true);
    expect(r.stdin_is_pipe).toBe(true);
    expect(r.exit_code, r.stderr_tail.join('\n')).toBe(0);
    expect(r.stderr_tail.join('\n')).toContain('stopping (stdin closed)');
  }, 90_000);
});
