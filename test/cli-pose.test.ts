/**
 * `autorig pose` (Apply Latent Pose from the command line): .obj and .glb in, .obj and .glb out, the input's vertices
 * in count and order, the requested limb moved; usage errors exit 64, model errors exit 2 with their code.
 * Models (AUTORIG_MODELS): the repository's models/ with test/fixtures/latent_pose_stub laid over them
 * (fixtures/latentPoseStubModels.ts), whose poses turn exactly their own limb's joint through the real auto-rig, so the
 * file handling is tested whatever the trained models are (pose-protocol.test.ts tests the trained ones).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../sidecar/cli/main.js';
import { loadCharacter } from '../sidecar/io/character.js';
import { readGlb, writeGlb } from '../sidecar/io/glbContainer.js';
import { parseObj } from '../sidecar/io/obj.js';
import { POSE_NAMES } from '../sidecar/pose/poseVocabulary.js';
import { LATENT_POSE_STUB, LATENT_POSE_STUB_ANGLE } from './fixtures/latentPoseStubModels.js';
import { captureCli, objVertices, useLatentPoseStubModels } from './fixtures/poseCommandRun.js';

const ROOT = resolve(import.meta.dirname, '..');
const stubModels = useLatentPoseStubModels();
const DEMO_OBJ = join(ROOT, 'assets', 'demo', 'demo_character.obj');
const DEV_GLB = resolve(ROOT, '../shared/data/characters/mixamo_ely.glb');
const scratch = mkdtempSync(join(tmpdir(), 'autorig-cli-pose-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Per vertex: its displacement length, before/after #V*3. */
function displacements(before: ArrayLike<number>, after: ArrayLike<number>): number[] {
  const out: number[] = [];
  for (let v = 0; v < before.length / 3; v++) {
    out.push(Math.hypot(after[3 * v] - before[3 * v], after[3 * v + 1] - before[3 * v + 1], after[3 * v + 2] - before[3 * v + 2]));
  }
  return out;
}

describe('autorig pose', { timeout: 120_000 }, () => {
  it('poses an OBJ into an OBJ: every v of the input in file order, the left arm moved forward, the rest in place', async () => {
    const out = join(scratch, 'posed.obj');
    const io = captureCli();
    expect(await runCli(['pose', DEMO_OBJ, '--pose', 'elbowBentLf', '-o', out], io), io.err()).toBe(0);
    expect(io.out()).toMatch(/posed .* as elbowBentLf through the auto-rig \(strength 1, mean\): 1 part, 7050 vertices/);
    expect(io.err()).toMatch(/auto-rigging first \(the file has no skin\)/);
    const input = objVertices(readFileSync(DEMO_OBJ, 'utf8'));
    const posed = objVertices(readFileSync(out, 'utf8'));
    expect(posed.length).toBe(input.length);
    const moved = displacements(input, posed);
    // the demo character: +y up, facing +z, its left on +x; the stub bends the left elbow 45°, the forearm forward (+z)
    const leftHand = moved.filter((_, v) => input[3 * v] > 0.6);
    const rightSide = moved.filter((_, v) => input[3 * v] < -0.3);
    const legs = moved.filter((_, v) => input[3 * v + 1] < 0.6);
    expect(leftHand.length).toBeGreaterThan(10);
    expect(Math.min(...leftHand)).toBeGreaterThan(0.05);
    expect(Math.max(...rightSide)).toBeLessThan(1e-5);
    expect(Math.max(...legs)).toBeLessThan(1e-5);
    const hand = moved.findIndex((_, v) => input[3 * v] > 0.6);
    expect(posed[3 * hand + 2] - input[3 * hand + 2]).toBeGreaterThan(0.05);
    // it reads back as a mesh with the input's faces
    const back = parseObj(readFileSync(out, 'utf8'), { groupBy: 'none' });
    const source = parseObj(readFileSync(DEMO_OBJ, 'utf8'), { groupBy: 'none' });
    expect(Array.from(back.parts[0].triangles)).toEqual(Array.from(source.parts[0].triangles));
  });

  it('turns the character to --facing: told the demo faces -z, its left elbow is the one on -x; a rig\'s sides overrule it', async () => {
    const out = join(scratch, 'posed-facing.obj');
    const io = captureCli();
    expect(await runCli(['pose', DEMO_OBJ, '--pose', 'elbowBentLf', '--facing', '-z', '-o', out], io), io.err()).toBe(0);
    const input = objVertices(readFileSync(DEMO_OBJ, 'utf8'));
    const moved = displacements(input, objVertices(readFileSync(out, 'utf8')));
    const onMinusX = moved.filter((_, v) => input[3 * v] < -0.6);
    const onPlusX = moved.filter((_, v) => input[3 * v] > 0.3);
    expect(onMinusX.length).toBeGreaterThan(10);
    expect(Math.min(...onMinusX)).toBeGreaterThan(0.05);
    expect(Math.max(...onPlusX)).toBeLessThan(1e-5);
    // the forearm bends towards the front it was told: -z
    const hand = moved.findIndex((_, v) => input[3 * v] < -0.6);
    expect(objVertices(readFileSync(out, 'utf8'))[3 * hand + 2] - input[3 * hand + 2]).toBeLessThan(-0.05);
    // a file posed through its own rig faces as the rig says, and the command says --facing was not read
    const glb = join(scratch, 'posed-facing.glb');
    const rigged = captureCli();
    expect(await runCli(['pose', DEV_GLB, '--pose', 'elbowBentLf', '--facing', '-z', '-o', glb], rigged), rigged.err()).toBe(0);
    expect(rigged.err()).toMatch(/--facing is not read: the file's own rig faces \+z/);
    // a character whose front and back are alike: the file's convention stands, and the command says how to turn it
    const boxes = captureCli();
    const minetest = resolve(ROOT, '../shared/data/characters/minetest_character.glb');
    expect(await runCli(['pose', minetest, '--pose', 'elbowBentLf', '-o', join(scratch, 'minetest.glb')], boxes), boxes.err()).toBe(0);
    expect(boxes.err()).toMatch(/does not tell which way it faces; it was taken to face \+z .*run again with --facing -z/);
  });

  it('keeps the vertex count and order of an OBJ of several objects with a vertex no face uses', async () => {
    const input = join(scratch, 'pieces.obj');
    const demo = readFileSync(DEMO_OBJ, 'utf8');
    // the demo body, then a loose vertex and a second object whose faces use vertices of the first
    const count = objVertices(demo).length / 3;
    writeFileSync(input, `${demo}v 9 9 9\no extra\nf 1 2 3\nf ${count} ${count - 1} ${count - 2}\n`);
    const out = join(scratch, 'pieces posed.obj');
    const io = captureCli();
    expect(await runCli(['pose', input, '--pose', 'kneeBentRt', '--strength', '0.5', '-o', out], io), io.err()).toBe(0);
    const before = objVertices(readFileSync(input, 'utf8'));
    const after = objVertices(readFileSync(out, 'utf8'));
    expect(after.length).toBe(before.length);
    expect(Array.from(after.slice(-3))).toEqual([9, 9, 9]);
  });

  it('poses a rigged glb into a glb: each part\'s vertices in count and order, the requested limb moved', async () => {
    const out = join(scratch, 'ely.glb');
    const io = captureCli();
    expect(await runCli(['pose', DEV_GLB, '--pose', 'elbowBentRt', '--strategy', 'nearest', '--strength', '1.5', '-o', out], io), io.err()).toBe(0);
    expect(io.out()).toMatch(/through its own rig \(strength 1\.5, nearest, identity stubNear/);
    const input = await loadCharacter(DEV_GLB);
    const posed = await loadCharacter(out);
    expect(posed.rig).toBeUndefined();
    expect(posed.parts.map((p) => p.positions.length)).toEqual(input.parts.map((p) => p.positions.length));
    const { json } = readGlb(readFileSync(out));
    expect(json.asset.version).toBe('2.0');
    // the right forearm and hand (the artist's skin says which vertices) moved; the left ones did not
    const rig = input.rig!;
    const side = (name: string) => (/Right(ForeArm|Hand)/.test(name) ? 'right' : /Left(ForeArm|Hand)/.test(name) ? 'left' : null);
    const moved: Record<string, number[]> = { right: [], left: [] };
    input.parts.forEach((part, k) => {
      const skin = rig.skins[k];
      const d = displacements(part.positions, posed.parts[k].positions);
      if (!skin) return;
      d.forEach((m, v) => {
        const s = side(rig.joints[skin.indices[4 * v]].name);
        if (s && skin.weights[4 * v] > 0.9) moved[s].push(m);
      });
    });
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(moved.right.length).toBeGreaterThan(20);
    expect(mean(moved.right)).toBeGreaterThan(0.05);
    expect(Math.max(...moved.left)).toBeLessThan(1e-4);
  });

  it('poses a glb with a Mixamo-named skin through that rig, with no auto-rig model installed; a rig without the template is auto-rigged', async () => {
    process.env.AUTORIG_MODELS = LATENT_POSE_STUB; // the pose models alone: no joints2d
    try {
      const out = join(scratch, 'ely own rig.obj');
      const io = captureCli();
      expect(await runCli(['pose', DEV_GLB, '--pose', 'elbowBentLf', '-o', out], io), io.err()).toBe(0);
      expect(io.err()).toMatch(/posing through the file's own rig \(\d+ joints\)/);
      expect(io.out()).toMatch(/as elbowBentLf through its own rig/);
      const input = await loadCharacter(DEV_GLB);
      const rest = Float64Array.from(input.parts.flatMap((p) => Array.from(p.positions)));
      const moved = displacements(rest, objVertices(readFileSync(out, 'utf8')));
      expect(Math.max(...moved)).toBeGreaterThan(0.05);
      // the same file with its left forearm's joint renamed: no longer the template, so auto-rig, whose model is not there
      const renamed = join(scratch, 'ely renamed.glb');
      const { json, bin } = readGlb(readFileSync(DEV_GLB));
      const node = (json.nodes as { name?: string }[]).find((n) => n.name?.endsWith('LeftForeArm'));
      expect(node, 'the dev character has a LeftForeArm joint').toBeDefined();
      node!.name = 'ForeArm.L';
      writeFileSync(renamed, writeGlb(json, bin));
      const io2 = captureCli();
      expect(await runCli(['pose', renamed, '--pose', 'elbowBentLf', '-o', join(scratch, 'never.obj')], io2)).toBe(2);
      expect(io2.err()).toMatch(/auto-rigging first \(its skin lacks the Mixamo joint LeftForeArm\)/);
      expect(io2.err()).toMatch(/MODEL_MISSING/);
    } finally {
      process.env.AUTORIG_MODELS = stubModels();
    }
  });

  it('turns the joint by the strength\'s share of its angle: half strength moves the limb\'s end by the chord ratio', async () => {
    const full = join(scratch, 'full.obj');
    const half = join(scratch, 'half.obj');
    expect(await runCli(['pose', DEMO_OBJ, '--pose', 'kneeBentLf', '-o', full], captureCli())).toBe(0);
    expect(await runCli(['pose', DEMO_OBJ, '--pose', 'kneeBentLf', '--strength', '0.5', '-o', half], captureCli())).toBe(0);
    const rest = objVertices(readFileSync(DEMO_OBJ, 'utf8'));
    const a = objVertices(readFileSync(full, 'utf8'));
    const b = objVertices(readFileSync(half, 'utf8'));
    const lengthA = displacements(rest, a);
    const lengthB = displacements(rest, b);
    expect(lengthA.filter((d) => d > 1e-3).length).toBeGreaterThan(50);
    // a vertex turned by θ about the knee moves along the chord 2r·sin(θ/2): at half the angle sin(θ/4)/sin(θ/2) as
    // far (0.5098 for the stub's 45°, not 0.5), and the two chords meet at θ/4. The shin's end (at least half the
    // largest motion) follows the knee alone; nearer the knee the weights blend.
    const theta = LATENT_POSE_STUB_ANGLE;
    const farthest = Math.max(...lengthA);
    let end = 0;
    for (let v = 0; v < lengthA.length; v++) {
      if (lengthA[v] < 1e-5) expect(lengthB[v], `vertex ${v} stays at full strength`).toBeLessThan(1e-5);
      if (lengthA[v] < 0.5 * farthest) continue;
      end++;
      expect(lengthB[v] / lengthA[v]).toBeCloseTo(Math.sin(theta / 4) / Math.sin(theta / 2), 3);
      let dot = 0;
      for (let k = 0; k < 3; k++) dot += (a[3 * v + k] - rest[3 * v + k]) * (b[3 * v + k] - rest[3 * v + k]);
      expect(Math.acos(Math.min(1, dot / (lengthA[v] * lengthB[v])))).toBeCloseTo(theta / 4, 2);
    }
    expect(end).toBeGreaterThan(20);
  });

  it('writes a glb from an OBJ and an OBJ from a glb with the same vertices', async () => {
    const glb = join(scratch, 'demo.glb');
    expect(await runCli(['pose', DEMO_OBJ, '--pose', 'elbowBentLf', '--strength', '0', '-o', glb], captureCli())).toBe(0);
    const back = await loadCharacter(glb);
    const source = parseObj(readFileSync(DEMO_OBJ, 'utf8'), { groupBy: 'none' });
    expect(Array.from(back.parts[0].positions)).toEqual(Array.from(source.parts[0].positions)); // strength 0: unchanged
    const obj = join(scratch, 'ely.obj');
    expect(await runCli(['pose', DEV_GLB, '--pose', 'elbowBentLf', '-o', obj], captureCli())).toBe(0);
    const elyIn = await loadCharacter(DEV_GLB);
    expect(objVertices(readFileSync(obj, 'utf8')).length).toBe(elyIn.parts.reduce((n, p) => n + p.positions.length, 0));
  });

  it('lists the installed poses with their experimental marks', async () => {
    const io = captureCli();
    expect(await runCli(['pose', '--list'], io)).toBe(0);
    const lines = io.out().trim().split('\n');
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual([...POSE_NAMES]);
    expect(lines.filter((l) => /\bexperimental\b/.test(l))).toHaveLength(POSE_NAMES.length - 1);
  });

  it('refuses a bad command line with exit 64 and the usage', async () => {
    const cases: [string[], RegExp][] = [
      [[DEMO_OBJ, '--pose', 'moonwalk', '-o', 'x.obj'], /unknown pose 'moonwalk'/],
      [[DEMO_OBJ, '--pose', 'elbowBentLf', '--strength', '1.6', '-o', 'x.obj'], /--strength wants a number from 0 to 1.5/],
      [[DEMO_OBJ, '--pose', 'elbowBentLf', '--strength', 'much', '-o', 'x.obj'], /--strength/],
      [[DEMO_OBJ, '--pose', 'elbowBentLf', '--strategy', 'median', '-o', 'x.obj'], /--strategy is one of mean, nearest/],
      [[DEMO_OBJ, '--pose', 'elbowBentLf', '-o', 'x.fbx'], /must be a .obj or .glb/],
      [[DEMO_OBJ, '--pose', 'elbowBentLf'], /no output file/],
      [[DEMO_OBJ, '-o', 'x.obj'], /no pose given/],
      [['--pose', 'elbowBentLf', '-o', 'x.obj'], /no input file/],
      [[DEMO_OBJ, '--pose', 'elbowBentLf', '-o', 'x.obj', '--colour'], /unknown option '--colour'/],
      [[DEMO_OBJ, '--pose', 'elbowBentLf', '-o', 'x.obj', '--facing', 'north'], /--facing: an axis .* got 'north'/],
      [[DEMO_OBJ, '--pose', 'elbowBentLf', '-o', 'x.obj', '--facing', '0,0,0'], /--facing: an axis/],
    ];
    for (const [args, message] of cases) {
      const io = captureCli();
      expect(await runCli(['pose', ...args], io), args.join(' ')).toBe(64);
      expect(io.err()).toMatch(message);
      expect(io.err()).toMatch(/usage: autorig pose/);
    }
    const help = captureCli();
    expect(await runCli(['pose', '--help'], help)).toBe(0);
    expect(help.out()).toMatch(/elbowBentLf\+kneeBentRt/);
  });

  it('says MODEL_MISSING (exit 2) without the models, and a bad input file\'s code', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'autorig-no-models-'));
    process.env.AUTORIG_MODELS = empty;
    try {
      const io = captureCli();
      expect(await runCli(['pose', DEMO_OBJ, '--pose', 'elbowBentLf', '-o', join(scratch, 'never.obj')], io)).toBe(2);
      expect(io.err()).toMatch(/error MODEL_MISSING/);
      expect(existsSync(join(scratch, 'never.obj'))).toBe(false);
      const list = captureCli();
      expect(await runCli(['pose', '--list'], list)).toBe(2);
      expect(list.err()).toMatch(/MODEL_MISSING/);
    } finally {
      process.env.AUTORIG_MODELS = stubModels();
      rmSync(empty, { recursive: true, force: true });
    }
    const broken = join(scratch, 'broken.obj');
    writeFileSync(broken, 'v 0 0 0\nv 1 0 0\nf 1 2 7\n');
    const io = captureCli();
    expect(await runCli(['pose', broken, '--pose', 'elbowBentLf', '-o', join(scratch, 'b.obj')], io)).toBe(2);
    expect(io.err()).toMatch(/BAD_INDEX/);
  });

  it('runs as the built command (bin/autorig.js)', () => {
    expect(existsSync(join(ROOT, 'dist', 'sidecar', 'cli', 'poseCommand.js')), 'run `npm run build` first').toBe(true);
    const out = join(scratch, 'built.obj');
    const run = spawnSync(process.execPath, ['bin/autorig.js', 'pose', DEMO_OBJ, '--pose', 'kneeBentLf', '-o', out], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, AUTORIG_MODELS: stubModels() },
    });
    expect(run.status, run.stderr).toBe(0);
    // one progress line per stage into a pipe
    const stages = run.stderr.split('\n').flatMap((line) => /^autorig: +\d+% (\S+)$/.exec(line)?.slice(1) ?? []);
    expect(stages).toEqual(['mesh', 'frame', 'encode', 'rig', 'decode', 'skin']);
    expect(objVertices(readFileSync(out, 'utf8')).length).toBe(objVertices(readFileSync(DEMO_OBJ, 'utf8')).length);
  });
});
