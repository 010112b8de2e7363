/**
 * The CLI end to end: `node bin/autorig.js` on the demo character (needs `npm run build`, which `npm test` runs first),
 * and runCli in process for the other commands and the error paths.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../sidecar/cli/main.js';
import { loadCharacter } from '../sidecar/io/character.js';
import { readGlb } from '../sidecar/io/glbContainer.js';
import { decodePng } from '../sidecar/io/png.js';
import { capsuleMesh, humanoidCapsules } from './fixtures/humanoid.js';

const root = join(import.meta.dirname, '..');
const demoObj = join(root, 'assets', 'demo', 'demo_character.obj');
const scratch = mkdtempSync(join(tmpdir(), 'autorig-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const MIXAMO_ORDER = [
  'Hips', 'Spine', 'Spine1', 'Spine2', 'Neck', 'Head', 'HeadTop_End',
  'LeftShoulder', 'LeftArm', 'LeftForeArm', 'LeftHand', 'RightShoulder', 'RightArm', 'RightForeArm', 'RightHand',
  'LeftUpLeg', 'LeftLeg', 'LeftFoot', 'LeftToeBase', 'RightUpLeg', 'RightLeg', 'RightFoot', 'RightToeBase',
];

/** Captures what a command writes. */
function capture(isTTY = false): CliIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: { write: (s: string) => (out += s), isTTY },
    stderr: { write: (s: string) => (err += s), isTTY },
    out: () => out,
    err: () => err,
  };
}

describe('autorig rig (bin/autorig.js, the built CLI)', { timeout: 60_000 }, () => {
  it('rigs the demo OBJ into a skinned glb with 23 joints, the input vertices in order, and a preview PNG', async () => {
    expect(existsSync(join(root, 'dist', 'sidecar', 'cli', 'main.js')), 'run `npm run build` first').toBe(true);
    const glb = join(scratch, 'demo rigged.glb');
    const png = join(scratch, 'demo.png');
    const run = spawnSync(process.execPath, ['bin/autorig.js', 'rig', demoObj, '-o', glb, '--preview', png], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/23 joints/);
    expect(run.stderr).toMatch(/skinning/); // one progress line per stage when stderr is not a terminal
    expect(run.stderr).not.toMatch(/\r/);

    const input = await loadCharacter(demoObj);
    const { json } = readGlb(readFileSync(glb));
    expect(json.skins).toHaveLength(1);
    expect(json.skins[0].joints).toHaveLength(23);
    json.meshes.forEach((mesh: any, m: number) => {
      const attributes = mesh.primitives[0].attributes;
      const count = input.parts[m].positions.length / 3;
      expect(json.accessors[attributes.JOINTS_0]).toMatchObject({ componentType: 5123, type: 'VEC4', count });
      expect(json.accessors[attributes.WEIGHTS_0]).toMatchObject({ componentType: 5126, type: 'VEC4', count });
      expect(json.accessors[attributes.POSITION].count).toBe(count);
    });

    const rigged = await loadCharacter(glb);
    expect(rigged.parts.map((p) => p.name)).toEqual(input.parts.map((p) => p.name));
    rigged.parts.forEach((part, p) => {
      expect(part.positions).toEqual(input.parts[p].positions); // same vertices, same order, same space
      expect(part.triangles).toEqual(input.parts[p].triangles);
    });
    const rig = rigged.rig!;
    expect(rig.joints.map((j) => j.name)).toEqual(MIXAMO_ORDER.map((n) => `mixamorig:${n}`));
    for (const skin of rig.skins) {
      for (let v = 0; v < skin!.weights.length / 4; v++) {
        const sum = skin!.weights[v * 4] + skin!.weights[v * 4 + 1] + skin!.weights[v * 4 + 2] + skin!.weights[v * 4 + 3];
        expect(Math.abs(sum - 1)).toBeLessThan(1e-5);
      }
    }
    // The demo stands 1.75 m tall on y = 0, facing +Z, its left on +X: the rig must agree.
    const joint = (name: string) => rig.joints.find((j) => j.name === `mixamorig:${name}`)!.position;
    expect(joint('Head')[1]).toBeGreaterThan(joint('Hips')[1]);
    expect(joint('LeftHand')[0]).toBeGreaterThan(0.3);
    expect(joint('RightHand')[0]).toBeLessThan(-0.3);
    expect(joint('LeftFoot')[1]).toBeLessThan(0.25);

    const image = decodePng(readFileSync(png));
    expect(image.height).toBe(512);
    expect(image.width).toBeGreaterThan(256);
    let painted = 0;
    for (let i = 0; i < image.width * image.height; i++) {
      const [r, g, b] = image.pixels.subarray(i * 3, i * 3 + 3);
      if (Math.abs(r - 242) + Math.abs(g - 242) + Math.abs(b - 245) > 12) painted++;
    }
    expect(painted / (image.width * image.height)).toBeGreaterThan(0.1);
  });

  it('exits 2 with the error code for input it cannot rig, 64 for bad usage', () => {
    const node = (...args: string[]) => spawnSync(process.execPath, ['bin/autorig.js', ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    const missing = node('rig', join(scratch, 'nope.obj'), '-o', join(scratch, 'x.glb'));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/error BAD_REQUEST: .*nope\.obj/);
    const usage = node('rig', demoObj);
    expect(usage.status).toBe(64);
    expect(usage.stderr).toMatch(/no output file given[\s\S]*usage: autorig rig/);
    expect(node().status).toBe(64);
    const help = node('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/rig[\s\S]*skin[\s\S]*demo[\s\S]*serve/);
  });
});

describe('autorig in process (runCli)', { timeout: 60_000 }, () => {
  it('--no-prefix gives bare Mixamo names', async () => {
    const io = capture();
    const glb = join(scratch, 'bare.glb');
    expect(await runCli(['rig', demoObj, '-o', glb, '--no-prefix'], io)).toBe(0);
    const rigged = await loadCharacter(glb);
    expect(rigged.rig!.joints.map((j) => j.name)).toEqual(MIXAMO_ORDER);
  });

  it('refuses what cannot be rigged with a code and exit 2, and writes nothing', async () => {
    const cases: [string, string, RegExp][] = [
      ['cube.obj', 'v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\nf 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 3 4 8 7\nf 2 3 7 6\nf 1 5 8 4\n', /error NOT_HUMANOID:/],
      ['points.obj', 'v 0 0 0\nv 1 0 0\n', /error EMPTY_MESH:/],
      ['broken.obj', 'v 0 0 0\nf 1 2 3\n', /error BAD_INDEX: .*broken\.obj:2/],
      ['junk.glb', 'definitely not a glb', /error BAD_REQUEST:/],
      ['model.fbx', 'whatever', /error BAD_REQUEST: .*unsupported file type/],
    ];
    for (const [name, text, message] of cases) {
      const input = join(scratch, name);
      writeFileSync(input, text);
      const output = join(scratch, `${name}.out.glb`);
      const io = capture();
      expect(await runCli(['rig', input, '-o', output], io), name).toBe(2);
      expect(io.err()).toMatch(message);
      expect(existsSync(output)).toBe(false);
    }
  });

  it('--facing turns the rig about up (left and right swap); a shape that does not tell its facing gets a warning', async () => {
    const plain = join(scratch, 'facing-plain.glb'), turned = join(scratch, 'facing-turned.glb');
    expect(await runCli(['rig', demoObj, '-o', plain], capture())).toBe(0);
    const before = (await loadCharacter(plain)).rig!.joints;
    const leftHand = before.find((j) => j.name === 'mixamorig:LeftHand')!.position;
    const hips = before.find((j) => j.name === 'mixamorig:Hips')!.position;
    // the demo stands +Y up facing +Z (its left +X): facing -Z puts its left on -X
    expect(leftHand[0]).toBeGreaterThan(hips[0]);
    expect(await runCli(['rig', demoObj, '-o', turned, '--facing', '-z'], capture())).toBe(0);
    const after = (await loadCharacter(turned)).rig!.joints;
    expect(after.find((j) => j.name === 'mixamorig:LeftHand')!.position[0]).toBeLessThan(hips[0]);
    expect(after.find((j) => j.name === 'mixamorig:RightHand')!.position[0]).toBeGreaterThan(hips[0]);

    // the capsule humanoid without feet (Z up): its front and back are alike, and the warning names the way out
    const footless = humanoidCapsules().filter((c) => !c.name.endsWith('Foot')).map((c) => capsuleMesh(c, 12));
    const lines: string[] = [];
    let base = 1;
    for (const m of footless) {
      for (let v = 0; v < m.positions.length; v += 3) lines.push(`v ${m.positions[v]} ${m.positions[v + 1]} ${m.positions[v + 2]}`);
      for (let t = 0; t < m.triangles.length; t += 3) lines.push(`f ${m.triangles[t] + base} ${m.triangles[t + 1] + base} ${m.triangles[t + 2] + base}`);
      base += m.positions.length / 3;
    }
    const footlessObj = join(scratch, 'footless.obj');
    writeFileSync(footlessObj, lines.join('\n') + '\n');
    const io = capture();
    expect(await runCli(['rig', footlessObj, '-o', join(scratch, 'footless.glb')], io)).toBe(0);
    expect(io.err()).toMatch(/does not tell which way it faces; it was taken to face -y .*--facing \+y/);
    const told = capture();
    expect(await runCli(['rig', footlessObj, '-o', join(scratch, 'footless2.glb'), '--facing', '+y'], told)).toBe(0);
    expect(told.err()).not.toMatch(/which way it faces/);

    for (const argv of [['rig', demoObj, '-o', 'x.glb', '--facing', 'up'], ['rig', demoObj, '-o', 'x.glb', '--facing', '0,0,0'], ['skin', demoObj, '-o', 'x.glb', '--facing', 'sideways']]) {
      const bad = capture();
      expect(await runCli(argv, bad), argv.join(' ')).toBe(64);
      expect(bad.err()).toMatch(/--facing|unknown option/);
    }
    // skin: the rigged file's Mixamo skeleton says which way it faces (the rig's -y, by convention): no warning, and a
    // --facing is accepted for skeletons that do not
    const reskinned = capture();
    expect(await runCli(['skin', join(scratch, 'footless.glb'), '-o', join(scratch, 'footless-skin.glb'), '--facing', '+y'], reskinned)).toBe(0);
    expect(reskinned.err()).not.toMatch(/which way it faces/);
    const along = capture();
    expect(await runCli(['rig', demoObj, '-o', join(scratch, 'along.glb'), '--facing', '0,1,0'], along)).toBe(2);
    expect(along.err()).toMatch(/error BAD_REQUEST: .*points along the character's up/);
  });

  it('skin needs a skeleton in the file', async () => {
    const io = capture();
    expect(await runCli(['skin', demoObj, '-o', join(scratch, 's.glb')], io)).toBe(2);
    expect(io.err()).toMatch(/error BAD_SKELETON:/);
  });

  it('usage errors exit 64 with the command usage', async () => {
    for (const argv of [[], ['frobnicate'], ['rig'], ['rig', demoObj, '-o', 'out.fbx'], ['rig', demoObj, '-o', 'x.glb', '--bogus'], ['demo', 'extra']]) {
      const io = capture();
      expect(await runCli(argv, io), argv.join(' ')).toBe(64);
      expect(io.err()).toMatch(/usage: autorig/);
    }
    const io = capture();
    expect(await runCli(['rig', '--help'], io)).toBe(0);
    expect(io.out()).toMatch(/--preview/);
    // a subcommand's help is its own, not its parent's
    const poses = capture();
    expect(await runCli(['eval', 'poses', '--help'], poses)).toBe(0);
    expect(poses.out()).toMatch(/usage: autorig eval poses .*--write-marks/s);
    expect(poses.out()).not.toMatch(/--peer blender/);
  });

  it('demo rigs the committed character into the folder and says what it did', async () => {
    const folder = join(scratch, 'demo');
    const io = capture();
    expect(await runCli(['demo', '-o', folder], io)).toBe(0);
    expect(existsSync(join(folder, 'demo_rigged.glb'))).toBe(true);
    expect(decodePng(readFileSync(join(folder, 'demo_preview.png'))).height).toBe(512);
    const vertices = (await loadCharacter(demoObj)).parts.reduce((n, p) => n + p.positions.length / 3, 0);
    expect(io.out()).toContain(`${vertices} vertices`);
    expect(io.out()).toMatch(/23 joints/);
    expect(io.out()).toMatch(/time: +\d+\.\d\d s/);
    expect(io.out()).toContain(join(folder, 'demo_rigged.glb'));
  });

  it('draws the progress as one bar redrawn with \\r on a terminal', async () => {
    const io = capture(true);
    expect(await runCli(['rig', demoObj, '-o', join(scratch, 'tty.glb')], io)).toBe(0);
    expect(io.err()).toMatch(/\rautorig \[#+\.*\] +\d+% skinning/);
    expect(io.err().endsWith('\n')).toBe(true);
    expect(io.err().split('\n')).toHaveLength(2); // the bar's line, then the final newline
  });
});

const ely = join(root, '..', 'shared', 'data', 'characters', 'mixamo_ely.glb');
describe.skipIf(!existsSync(ely))('autorig skin on a dev character', { timeout: 60_000 }, () => {
  it("re-skins mixamo_ely to its own 67-joint skeleton, keeping names and the bind pose", async () => {
    const io = capture();
    const glb = join(scratch, 'ely.glb');
    const png = join(scratch, 'ely.png');
    expect(await runCli(['skin', ely, '-o', glb, '--preview', png], io), io.err()).toBe(0);
    const source = await loadCharacter(ely);
    const skinned = await loadCharacter(glb);
    expect(skinned.rig!.joints.map((j) => j.name)).toEqual(source.rig!.joints.map((j) => j.name));
    skinned.rig!.joints.forEach((joint, j) => {
      joint.position.forEach((x, a) => expect(Math.abs(x - source.rig!.joints[j].position[a])).toBeLessThan(1e-5));
    });
    expect(skinned.parts[0].positions).toEqual(source.parts[0].positions);
    expect(decodePng(readFileSync(png)).height).toBe(512);
  });
});
