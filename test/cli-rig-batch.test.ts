/**
 * `autorig rig` and `autorig skin` with several inputs or a folder (inputFiles.ts): one output (and preview) per input
 * named by {name}, each the same file a run on that input alone writes; a file that fails is reported with its code
 * while the others are written (exit 2); names that would collide are refused before any work (exit 64).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT_CANNOT_RIG, EXIT_OK, EXIT_USAGE, runCli } from '../sidecar/cli/main.js';
import { readGlb } from '../sidecar/io/glbContainer.js';
import { captureCli } from './fixtures/poseCommandRun.js';

const DEMO_OBJ = resolve(import.meta.dirname, '..', 'assets', 'demo', 'demo_character.obj');
const scratch = mkdtempSync(join(tmpdir(), 'autorig-rig-batch-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The demo OBJ scaled by s: another character of the same topology. */
function scaledDemo(path: string, s: number): void {
  writeFileSync(path, readFileSync(DEMO_OBJ, 'utf8').split('\n').map((line) => {
    if (!line.startsWith('v ')) return line;
    const [, x, y, z] = line.trim().split(/\s+/).map(Number);
    return `v ${x * s} ${y * s} ${z * s}`;
  }).join('\n'));
}

/** A .glb's JSON and BIN chunk, the BIN as a Buffer (to compare). */
function glbParts(path: string): { json: Record<string, any>; bin: Buffer } {
  const { json, bin } = readGlb(readFileSync(path));
  return { json, bin: Buffer.from(bin!) };
}

describe('autorig rig and skin on several files', { timeout: 180_000 }, () => {
  it('rigs a folder into one .glb and one preview per character, each the same as rigging it alone', async () => {
    const folder = join(scratch, 'chars');
    mkdirSync(folder, { recursive: true });
    copyFileSync(DEMO_OBJ, join(folder, 'demo.obj'));
    scaledDemo(join(folder, 'tall.obj'), 1.4);
    writeFileSync(join(folder, 'readme.txt'), 'not a character');
    const io = captureCli();
    const out = join(scratch, 'rigged', '{name}.glb');
    const preview = join(scratch, 'rigged', '{name}.png');
    expect(await runCli(['rig', folder, '-o', out, '--preview', preview], io), io.err()).toBe(EXIT_OK);
    expect(io.out().trim().split('\n').map((l) => /rigged \(\w+.*?\) (.*?):/.exec(l)?.[1])).toEqual([join(folder, 'demo.obj'), join(folder, 'tall.obj')]);
    for (const name of ['demo', 'tall']) {
      expect(existsSync(join(scratch, 'rigged', `${name}.png`)), name).toBe(true);
      const alone = join(scratch, 'alone', `${name}.glb`);
      expect(await runCli(['rig', join(folder, `${name}.obj`), '-o', alone], captureCli())).toBe(EXIT_OK);
      const batch = glbParts(join(scratch, 'rigged', `${name}.glb`));
      const single = glbParts(alone);
      expect(batch.json.nodes.map((n: any) => n.translation)).toEqual(single.json.nodes.map((n: any) => n.translation));
      expect(batch.bin.equals(single.bin), name).toBe(true);
    }
    // the taller character's skeleton is the taller one
    const hips = (name: string) => glbParts(join(scratch, 'rigged', `${name}.glb`)).json.nodes[0].translation[1];
    expect(hips('tall') / hips('demo')).toBeCloseTo(1.4, 2);
  });

  it('reports a file that cannot be rigged, writes the others and exits 2; refuses outputs without {name}', async () => {
    const broken = join(scratch, 'broken.obj');
    writeFileSync(broken, 'v 0 0 0\nv 1 0 0\nf 1 2 7\n');
    const io = captureCli();
    const out = join(scratch, 'mixed', '{name}.glb');
    expect(await runCli(['rig', broken, DEMO_OBJ, '-o', out], io)).toBe(EXIT_CANNOT_RIG);
    expect(io.err()).toMatch(/error BAD_INDEX: .*broken\.obj/);
    expect(io.err()).toMatch(/1 of 2 files could not be rigged: .*broken\.obj/);
    expect(existsSync(join(scratch, 'mixed', 'demo_character.glb'))).toBe(true);
    expect(existsSync(join(scratch, 'mixed', 'broken.glb'))).toBe(false);
    for (const [args, message] of [
      [[DEMO_OBJ, broken, '-o', join(scratch, 'x.glb')], /2 input files given: name the output with \{name\}/],
      [[DEMO_OBJ, broken, '-o', join(scratch, '{name}.glb'), '--preview', join(scratch, 'p.png')], /name the output with \{name\}.*--preview out\/\{name\}\.png/],
      [[DEMO_OBJ, DEMO_OBJ, '-o', join(scratch, '{name}.glb')], /given twice/],
    ] as [string[], RegExp][]) {
      const refused = captureCli();
      expect(await runCli(['rig', ...args], refused), args.join(' ')).toBe(EXIT_USAGE);
      expect(refused.err()).toMatch(message);
      expect(refused.err()).toMatch(/usage: autorig rig/);
    }
  });

  it('re-skins a folder\'s rigged .glb files (an .obj beside them is not one)', async () => {
    const folder = join(scratch, 'rigged in');
    mkdirSync(folder, { recursive: true });
    expect(await runCli(['rig', DEMO_OBJ, '-o', join(folder, 'a.glb')], captureCli())).toBe(EXIT_OK);
    copyFileSync(join(folder, 'a.glb'), join(folder, 'b.glb'));
    copyFileSync(DEMO_OBJ, join(folder, 'c.obj'));
    const io = captureCli();
    expect(await runCli(['skin', folder, '-o', join(scratch, 'reskinned', '{name}.glb')], io), io.err()).toBe(EXIT_OK);
    expect(io.out().trim().split('\n')).toHaveLength(2);
    expect(glbParts(join(scratch, 'reskinned', 'a.glb')).bin.equals(glbParts(join(scratch, 'reskinned', 'b.glb')).bin)).toBe(true);
    expect(existsSync(join(scratch, 'reskinned', 'c.glb'))).toBe(false);
  });
});
