/**
 * `autorig pose` with several input files in one run (a pipeline posing a folder of characters): one output per input
 * ({name} in the output's name), each the same as a run on that file alone; a file that cannot be posed is reported
 * with its code and the others are still written (exit 2); outputs that would collide are refused before anything runs.
 * Models: the stand-in latent pose models (fixtures/latentPoseStubModels.ts), as in cli-pose.test.ts.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parsePoseArguments, poseOutputPath, PoseUsageError } from '../sidecar/cli/poseCommand.js';
import { EXIT_CANNOT_RIG, EXIT_OK, EXIT_USAGE, runCli } from '../sidecar/cli/main.js';
import { loadCharacter } from '../sidecar/io/character.js';
import { readGlb } from '../sidecar/io/glbContainer.js';
import { POSE_NAMES } from '../sidecar/pose/poseVocabulary.js';
import { captureCli, objVertices, useLatentPoseStubModels } from './fixtures/poseCommandRun.js';

const ROOT = resolve(import.meta.dirname, '..');
useLatentPoseStubModels();
const DEMO_OBJ = join(ROOT, 'assets', 'demo', 'demo_character.obj');
const DEV_GLB = resolve(ROOT, '../shared/data/characters/mixamo_ely.glb');
const scratch = mkdtempSync(join(tmpdir(), 'autorig-cli-pose-batch-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The demo OBJ with every vertex scaled by s about the origin: another character of the same topology. */
function scaledDemo(path: string, s: number): void {
  const lines = readFileSync(DEMO_OBJ, 'utf8').split('\n').map((line) => {
    if (!line.startsWith('v ')) return line;
    const [, x, y, z] = line.trim().split(/\s+/).map(Number);
    return `v ${x * s} ${y * s} ${z * s}`;
  });
  writeFileSync(path, lines.join('\n'));
}

/** The largest distance between two vertex lists of the same length (#V*3), NaN when the lengths differ. */
function largestGap(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Number.NaN;
  let most = 0;
  for (let i = 0; i < a.length; i += 3) most = Math.max(most, Math.hypot(a[i] - b[i], a[i + 1] - b[i + 1], a[i + 2] - b[i + 2]));
  return most;
}

describe('autorig pose on several files', { timeout: 180_000 }, () => {
  it('names each output after its input ({name}) and replaces the pose ({pose})', () => {
    expect(poseOutputPath('posed/{name}_{pose}.glb', 'kneeBentLf', 'chars/ely.v2.glb')).toBe('posed/ely.v2_kneeBentLf.glb');
    expect(poseOutputPath('out/{name}.obj', 'x', '/abs/demo character.obj')).toBe('out/demo character.obj');
    expect(poseOutputPath('out.obj', 'x', 'a/b.obj')).toBe('out.obj');
    expect(parsePoseArguments(['a.obj', 'b.glb', '--pose', 'kneeBentLf', '-o', '{name}.obj']).inputs).toEqual(['a.obj', 'b.glb']);
  });

  it('refuses outputs that would collide, before posing anything', async () => {
    const cases: [string[], RegExp][] = [
      [['a.obj', 'b.obj', '--pose', 'kneeBentLf', '-o', 'out.obj'], /2 input files given: name the output with \{name\}.*-o posed\/\{name\}\.obj/],
      [['a.obj', 'b.obj', '--pose', 'kneeBentLf,elbowBentLf', '-o', 'out_{pose}.obj'], /-o posed\/\{name\}_\{pose\}\.obj/],
      [['a.obj', 'a.obj', '--pose', 'kneeBentLf', '-o', '{name}.obj'], /a\.obj is given twice/],
      [['x/a.obj', 'y/a.glb', '--pose', 'kneeBentLf', '-o', 'out/{name}.obj'], /x\/a\.obj and y\/a\.glb would both write out\/a\.obj/],
      [['a.obj', 'b.obj', '--pose', 'all', '--shape-keys', '-o', 'keys.glb'], /name the output with \{name\}.*-o posed\/\{name\}\.glb/],
      // an earlier run's output in the folder posed again: a.glb's kneeBentLf would overwrite it before it is read
      [['in/a.glb', 'in/a_kneeBentLf.obj', '--pose', 'kneeBentLf', '-o', 'in/{name}_{pose}.obj'], /in\/a\.glb would write in\/a_kneeBentLf\.obj, which is also an input/],
    ];
    for (const [args, message] of cases) {
      expect(() => parsePoseArguments(args), args.join(' ')).toThrow(PoseUsageError);
      expect(() => parsePoseArguments(args), args.join(' ')).toThrow(message);
    }
    // through the command line: exit 64 with the usage, and no output
    const io = captureCli();
    const out = join(scratch, 'collide', '{name}.obj');
    expect(await runCli(['pose', DEMO_OBJ, DEMO_OBJ, '--pose', 'kneeBentLf', '-o', out], io)).toBe(EXIT_USAGE);
    expect(io.err()).toMatch(/given twice[\s\S]*usage: autorig pose/);
    expect(existsSync(join(scratch, 'collide'))).toBe(false);
  });

  it('poses each file as a run on that file alone would, rigged or not, in one process', async () => {
    const big = join(scratch, 'big demo.obj');
    scaledDemo(big, 1.3);
    const inputs = [DEV_GLB, DEMO_OBJ, big];
    const io = captureCli();
    const pattern = join(scratch, 'batch', '{name}_{pose}.obj');
    expect(await runCli(['pose', ...inputs, '--pose', 'kneeBentLf,elbowBentRt', '-o', pattern], io), io.err()).toBe(EXIT_OK);
    // one line per file and pose, in input order; the first file through its own rig, the others auto-rigged
    const said = io.out().trim().split('\n');
    expect(said).toHaveLength(6);
    expect(said[0]).toMatch(/posed .*mixamo_ely\.glb as kneeBentLf through its own rig/);
    expect(said[2]).toMatch(/posed .*demo_character\.obj as kneeBentLf through the auto-rig/);
    expect(said[5]).toMatch(/posed .*big demo\.obj as elbowBentRt through the auto-rig .* → .*big demo_elbowBentRt\.obj/);
    expect(io.err()).toMatch(/demo_character\.obj: auto-rigging first/);
    for (const input of inputs) {
      for (const pose of ['kneeBentLf', 'elbowBentRt']) {
        const alone = join(scratch, 'alone', `${pose}.obj`);
        expect(await runCli(['pose', input, '--pose', pose, '-o', alone], captureCli())).toBe(EXIT_OK);
        const batch = objVertices(readFileSync(poseOutputPath(pattern, pose, input), 'utf8'));
        const single = objVertices(readFileSync(alone, 'utf8'));
        // the same models, rig and encoding: the same vertices, nothing carried over from the file before
        expect(batch.length, `${input} ${pose}`).toBe(single.length);
        expect(largestGap(batch, single), `${input} ${pose}`).toBe(0);
      }
    }
    // and they are posed: the scaled demo's knee moved, by 1.3 times the demo's motion
    const rest = objVertices(readFileSync(DEMO_OBJ, 'utf8'));
    const demoKnee = objVertices(readFileSync(poseOutputPath(pattern, 'kneeBentLf', DEMO_OBJ), 'utf8'));
    const bigKnee = objVertices(readFileSync(poseOutputPath(pattern, 'kneeBentLf', big), 'utf8'));
    const moved = largestGap(rest, demoKnee);
    expect(moved).toBeGreaterThan(0.05);
    expect(largestGap(rest.map((x) => x * 1.3), bigKnee) / moved).toBeCloseTo(1.3, 2);
  });

  it('takes a folder as its character files (.glb, .gltf, .obj, by name; not hidden ones, other files or subfolders)', async () => {
    const folder = join(scratch, 'folder in');
    mkdirSync(join(folder, 'sub'), { recursive: true });
    copyFileSync(DEMO_OBJ, join(folder, 'b demo.obj'));
    copyFileSync(DEV_GLB, join(folder, 'a ely.GLB'));
    copyFileSync(DEMO_OBJ, join(folder, '.hidden.obj'));
    copyFileSync(DEMO_OBJ, join(folder, 'sub', 'deeper.obj'));
    writeFileSync(join(folder, 'notes.txt'), 'not a character');
    const io = captureCli();
    const pattern = join(scratch, 'folder out', '{name}.obj');
    expect(await runCli(['pose', folder, '--pose', 'kneeBentLf', '-o', pattern], io), io.err()).toBe(EXIT_OK);
    const said = io.out().trim().split('\n');
    expect(said.map((line) => /posed (.*) as kneeBentLf/.exec(line)?.[1])).toEqual([join(folder, 'a ely.GLB'), join(folder, 'b demo.obj')]);
    expect(objVertices(readFileSync(join(scratch, 'folder out', 'b demo.obj'), 'utf8')).length).toBe(objVertices(readFileSync(DEMO_OBJ, 'utf8')).length);
    expect(existsSync(join(scratch, 'folder out', 'deeper.obj'))).toBe(false);
    expect(existsSync(join(scratch, 'folder out', '.hidden.obj'))).toBe(false);
    // a folder of one name twice (a.obj beside a.glb), and one without characters: refused with the usage
    const twins = join(scratch, 'twins');
    mkdirSync(twins);
    copyFileSync(DEMO_OBJ, join(twins, 'same.obj'));
    copyFileSync(DEV_GLB, join(twins, 'same.glb'));
    const collide = captureCli();
    expect(await runCli(['pose', twins, '--pose', 'kneeBentLf', '-o', join(scratch, 'never', '{name}.obj')], collide)).toBe(EXIT_USAGE);
    expect(collide.err()).toMatch(/same\.glb and .*same\.obj would both write/);
    const empty = join(scratch, 'empty');
    mkdirSync(empty);
    writeFileSync(join(empty, 'readme.md'), '');
    const nothing = captureCli();
    expect(await runCli(['pose', empty, '--pose', 'kneeBentLf', '-o', '{name}.obj'], nothing)).toBe(EXIT_USAGE);
    expect(nothing.err()).toMatch(/is a folder without \.glb, \.gltf, \.obj files/);
    expect(existsSync(join(scratch, 'never'))).toBe(false);
  });

  it('reports a file that cannot be posed with its code, writes the others, and exits 2', async () => {
    const folder = join(scratch, 'mixed');
    mkdirSync(folder, { recursive: true });
    const broken = join(folder, 'broken.obj');
    writeFileSync(broken, 'v 0 0 0\nv 1 0 0\nf 1 2 7\n');
    const second = join(folder, 'second.obj');
    copyFileSync(DEMO_OBJ, second);
    const io = captureCli();
    const pattern = join(folder, 'out', '{name}.glb');
    expect(await runCli(['pose', DEMO_OBJ, broken, second, '--pose', 'all', '--shape-keys', '-o', pattern], io)).toBe(EXIT_CANNOT_RIG);
    expect(io.err()).toMatch(/error BAD_INDEX: .*broken\.obj/);
    expect(io.err()).toMatch(/1 of 3 files could not be posed: .*broken\.obj/);
    expect(existsSync(join(folder, 'out', 'broken.glb'))).toBe(false);
    // the files before and after it: a .glb each, with a shape key per pose
    for (const name of ['demo_character', 'second']) {
      const file = join(folder, 'out', `${name}.glb`);
      const keys = await loadCharacter(file);
      expect(keys.parts[0].positions.length, name).toBe(objVertices(readFileSync(DEMO_OBJ, 'utf8')).length);
      const { json } = readGlb(readFileSync(file));
      expect(json.meshes[0].primitives[0].targets, name).toHaveLength(POSE_NAMES.length);
      expect(json.meshes[0].extras.targetNames, name).toEqual([...POSE_NAMES]);
    }
    expect(io.out()).toMatch(/shape keys → .*second\.glb/);
  });
});
