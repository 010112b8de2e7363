/**
 * The add-on zip: a valid archive (checked by Python's zipfile, which Blender uses to install it) with the add-on
 * under autorig/, both bl_info and the 4.2+ manifest, no caches, no path of the machine that built it and nothing
 * that looks like a secret; `npm run addon:zip` (the CLI in dist/) writes the same bytes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addonFiles, buildAddonZip } from '../sidecar/cli/addonZip.js';
import { crc32 } from '../sidecar/io/png.js';

const ROOT = resolve(import.meta.dirname, '..');
const tmp = mkdtempSync(join(tmpdir(), 'autorig-addon-zip-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('addon zip', () => {
  it('crc32 matches the standard check value', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });

  it('is installable and clean', () => {
    const out = join(tmp, 'autorig_blender.zip');
    const names = buildAddonZip(ROOT, out);
    expect(names).toContain('autorig/__init__.py');
    expect(names).toContain('autorig/blender_manifest.toml');
    expect(names).toContain('autorig/protocol.py');
    expect(names.every((n) => n.startsWith('autorig/') && !n.includes('__pycache__') && !n.endsWith('.pyc'))).toBe(true);
    expect(names.length).toBe(addonFiles(join(ROOT, 'blender_addon')).length);

    const listing = execFileSync('/usr/bin/python3', ['-c', [
      'import json, sys, zipfile',
      'z = zipfile.ZipFile(sys.argv[1])',
      'assert z.testzip() is None',
      'print(json.dumps({n: z.read(n).decode("utf-8") for n in z.namelist()}))',
    ].join('\n'), out], { encoding: 'utf8', maxBuffer: 64 << 20 });
    const files = JSON.parse(listing) as Record<string, string>;
    expect(files['autorig/__init__.py']).toBe(readFileSync(join(ROOT, 'blender_addon', '__init__.py'), 'utf8'));
    expect(files['autorig/__init__.py']).toContain('bl_info');
    expect(files['autorig/blender_manifest.toml']).toMatch(/^id = "autorig"$/m);
    const all = Object.values(files).join('\n');
    expect(all).not.toContain(ROOT);
    expect(all).not.toContain(tmpdir());

    // same sources, same bytes
    const again = join(tmp, 'again.zip');
    buildAddonZip(ROOT, again);
    expect(readFileSync(again).equals(readFileSync(out))).toBe(true);
  });

  /** What in a text looks like a path of this machine or a secret (empty: nothing). */
  function leaks(text: string): string[] {
    const machinePaths = [...new Set(['/work/', '/root/', '/home/', '/tmp/', ROOT, homedir(), tmpdir()])];
    const secrets: [string, RegExp][] = [
      ['a long hex string', /\b[0-9a-f]{32,}\b/i],
      ['a long base64 string', /[A-Za-z0-9+/]{40,}={0,2}/],
      ['a token value', /AUTORIG_TOKEN\s*[=:]\s*['"]?[A-Za-z0-9]/],
      ['a bearer value', /Bearer\s+[A-Za-z0-9]{8,}/],
      ['a private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
    ];
    return [
      ...machinePaths.filter((path) => text.includes(path)).map((path) => `machine path ${path}`).slice(0, 1),
      ...secrets.filter(([, pattern]) => pattern.test(text)).map(([what]) => what),
    ];
  }

  /** name -> text of every entry, read back with Python's zipfile. */
  function readZip(path: string): Record<string, string> {
    const listing = execFileSync('/usr/bin/python3', ['-c', [
      'import json, sys, zipfile',
      'z = zipfile.ZipFile(sys.argv[1])',
      'assert z.testzip() is None',
      'print(json.dumps({n: z.read(n).decode("utf-8") for n in z.namelist()}))',
    ].join('\n'), path], { encoding: 'utf8', maxBuffer: 64 << 20 });
    return JSON.parse(listing) as Record<string, string>;
  }

  it('holds no machine paths, secrets or caches', () => {
    // A copy of the add-on with the leftovers a working folder collects: none of them may be packed.
    const root = join(tmp, 'dirty');
    cpSync(join(ROOT, 'blender_addon'), join(root, 'blender_addon'), { recursive: true });
    mkdirSync(join(root, 'blender_addon', '__pycache__'), { recursive: true });
    writeFileSync(join(root, 'blender_addon', '__pycache__', 'client.cpython-311.pyc'), 'cache');
    writeFileSync(join(root, 'blender_addon', 'messages.pyc'), 'cache');
    writeFileSync(join(root, 'blender_addon', '.env'), 'AUTORIG_TOKEN=0123456789abcdef0123456789abcdef');
    writeFileSync(join(root, 'blender_addon', 'client.py~'), 'editor backup');
    writeFileSync(join(root, 'blender_addon', 'secrets.json'), '{"token": "s3cret"}');
    writeFileSync(join(root, 'blender_addon', 'notes.txt'), 'private notes');
    const out = join(tmp, 'dirty.zip');
    const names = buildAddonZip(root, out);
    const files = readZip(out);
    expect(Object.keys(files).sort()).toEqual([...names].sort());
    expect(names.sort()).toEqual(addonFiles(join(ROOT, 'blender_addon')).map((f) => `autorig/${f}`).sort());
    for (const name of names) {
      expect(name.startsWith('autorig/') && !name.split('/').some((part) => part === '..' || part.startsWith('.')), name).toBe(true);
      expect(name.includes('__pycache__') || name.endsWith('.pyc'), name).toBe(false);
    }
    for (const [name, text] of Object.entries(files)) expect(leaks(text), name).toEqual([]);
    // the scan itself finds what it looks for
    const found = leaks(`path = "${join(homedir(), 'x')}"\ntoken = "${'ab12'.repeat(16)}"\nAUTORIG_TOKEN='s3cret'`);
    expect(found.some((what) => what.startsWith('machine path '))).toBe(true);
    expect(found).toEqual(expect.arrayContaining(['a long hex string', 'a token value']));
  });

  it('`npm run addon:zip` writes the same zip', () => {
    const cli = join(ROOT, 'dist', 'sidecar', 'cli', 'addonZip.js');
    expect(existsSync(cli), 'run `npm run build` first').toBe(true);
    const fromCli = join(tmp, 'cli.zip');
    const run = spawnSync(process.execPath, [cli, fromCli], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const fromSources = join(tmp, 'sources.zip');
    buildAddonZip(ROOT, fromSources);
    expect(readFileSync(fromCli).equals(readFileSync(fromSources))).toBe(true);
  });
});
