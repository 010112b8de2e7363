/**
 * The add-on zip: a valid archive (checked by Python's zipfile, which Blender uses to install it) with the add-on
 * under autorig/, both bl_info and the 4.2+ manifest, no caches, and no path of the machine that built it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
});
