/**
 * `autorig correctives`: a rigged dev character and an unrigged mesh in, a skinned .glb with one morph target per key
 * pose out. The outcome checked is what an engine does with the file: read the skeleton and weights back, add the
 * target, turn the target's joint by the rotation in its extras and skin linearly; that lands on dual-quaternion
 * skinning of the same pose, where plain linear blend skinning is far off. Usage errors exit 64, a rig without the
 * Mixamo joints exits 2 with BAD_SKELETON.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KEY_POSE_NAMES, keyPoseRotations, keyPoses } from '../sidecar/correctives/keyPoses.js';
import { runCli, type CliIo } from '../sidecar/cli/main.js';
import { dualQuaternionSkinning } from '../sidecar/deform/dualQuaternionSkinning.js';
import { linearBlendSkinning, poseTransforms, restSkeleton } from '../sidecar/deform/linearBlendSkinning.js';
import { loadCharacter } from '../sidecar/io/character.js';
import { readGlb } from '../sidecar/io/glbContainer.js';
import { writeSkinnedGlb } from '../sidecar/io/glbWriter.js';
import { rigWeights, skeletonFromRig } from '../sidecar/io/rigSkeleton.js';

const ROOT = resolve(import.meta.dirname, '..');
const DEMO_OBJ = join(ROOT, 'assets', 'demo', 'demo_character.obj');
const DEV_GLB = resolve(ROOT, '../shared/data/characters/mixamo_ely.glb');
const scratch = mkdtempSync(join(tmpdir(), 'autorig-cli-correctives-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function capture(): CliIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, out: () => out, err: () => err };
}

interface WrittenTarget {
  mesh: string;
  name: string;
  displacements: Float32Array;
  extras: { bone: string; pose: string; angle: number; axis: number[]; rotation: number[] };
}

/** The morph targets of a written .glb, read from its JSON and BIN chunk as any glTF consumer reads them. */
function morphTargets(path: string): { targets: WrittenTarget[]; meshes: Record<string, any>[] } {
  const { json, bin } = readGlb(new Uint8Array(readFileSync(path)));
  const targets: WrittenTarget[] = [];
  for (const mesh of json.meshes as Record<string, any>[]) {
    const primitive = mesh.primitives[0];
    (primitive.targets ?? []).forEach((target: Record<string, number>, t: number) => {
      const accessor = json.accessors[target.POSITION];
      const view = json.bufferViews[accessor.bufferView];
      const start = bin!.byteOffset + view.byteOffset + (accessor.byteOffset ?? 0);
      const displacements = new Float32Array(bin!.buffer.slice(start, start + accessor.count * 12));
      targets.push({ mesh: mesh.name, name: mesh.extras.targetNames[t], displacements, extras: accessor.extras });
    });
  }
  return { targets, meshes: json.meshes };
}

/** Row-major 3x3 of a unit quaternion [x, y, z, w]. */
function quaternionMatrix([x, y, z, w]: number[]): number[] {
  return [
    1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
    2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
    2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y),
  ];
}

function maxDistance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  for (let v = 0; v < a.length / 3; v++) worst = Math.max(worst, Math.hypot(a[3 * v] - b[3 * v], a[3 * v + 1] - b[3 * v + 1], a[3 * v + 2] - b[3 * v + 2]));
  return worst;
}

describe('autorig correctives', { timeout: 180_000 }, () => {
  it('writes a dev character\'s correctives as morph targets that turn its own linear skinning into dual-quaternion skinning', async () => {
    const out = join(scratch, 'ely_correctives.glb');
    const io = capture();
    expect(await runCli(['correctives', DEV_GLB, '-o', out, '--method', 'dualQuaternion'], io)).toBe(0);
    expect(io.out()).toMatch(/baked 13 corrective keys \(dualQuaternion\)/);

    const input = await loadCharacter(DEV_GLB);
    const written = await loadCharacter(out);
    // the input's parts, vertices and order are kept
    expect(written.parts.map((p) => p.positions.length)).toEqual(input.parts.map((p) => p.positions.length));
    written.parts.forEach((part, p) => expect(maxDistance(part.positions, input.parts[p].positions)).toBeLessThan(1e-6));

    const { targets, meshes } = morphTargets(out);
    for (const mesh of meshes.filter((m) => m.primitives[0].targets)) {
      expect(mesh.weights).toEqual(mesh.primitives[0].targets.map(() => 0));
      expect(mesh.extras.targetNames).toHaveLength(mesh.primitives[0].targets.length);
    }
    const names = new Set(targets.map((t) => t.name));
    expect(names.size).toBe(13);
    for (const target of targets) {
      expect(target.name).toBe(`${target.extras.bone}_${target.extras.pose}`);
      expect(KEY_POSE_NAMES).toContain(target.extras.pose);
    }

    // An engine's view: the file's skeleton and weights, the target added at weight 1, the joint turned by its extras.
    const skeleton = skeletonFromRig(written.rig!);
    const weights = rigWeights(written);
    const rest = restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
    const height = Math.max(...skeleton.joints.map((j) => j.head[1])) - Math.min(...skeleton.joints.map((j) => j.head[1]));
    const elbow = targets.filter((t) => t.name === 'mixamorig:LeftForeArm_elbowBend');
    expect(elbow.length).toBeGreaterThan(0);
    for (const target of elbow) {
      expect(target.extras.angle).toBeCloseTo(90, 6);
      const p = written.parts.findIndex((part) => part.name === target.mesh);
      const part = written.parts[p];
      const w = weights[p]!;
      const rotations = new Float64Array(skeleton.joints.length * 9);
      for (let j = 0; j < skeleton.joints.length; j++) rotations[j * 9] = rotations[j * 9 + 4] = rotations[j * 9 + 8] = 1;
      rotations.set(quaternionMatrix(target.extras.rotation), skeleton.joints.findIndex((j) => j.name === target.extras.bone) * 9);
      const transforms = poseTransforms(rest.heads, rest.parents, rotations);
      const dqs = dualQuaternionSkinning(part.positions, w.indices, w.weights, w.influences, transforms);
      const lbs = linearBlendSkinning(part.positions, w.indices, w.weights, w.influences, transforms);
      const corrected = linearBlendSkinning(part.positions.map((x, i) => x + target.displacements[i]), w.indices, w.weights, w.influences, transforms);
      expect(maxDistance(lbs, dqs)).toBeGreaterThan(0.01 * height);
      expect(maxDistance(corrected, dqs)).toBeLessThan(1e-4 * height);
    }
    // the knee key moves nothing on the arms: its displaced vertices are all below the hips
    const hips = skeleton.joints.find((j) => j.name.endsWith('Hips'))!.head[1];
    for (const target of targets.filter((t) => t.extras.pose === 'kneeBend')) {
      const part = written.parts.find((q) => q.name === target.mesh)!;
      for (let v = 0; v < part.positions.length / 3; v++) {
        const d = Math.hypot(target.displacements[3 * v], target.displacements[3 * v + 1], target.displacements[3 * v + 2]);
        if (d > 1e-4 * height) expect(part.positions[3 * v + 1]).toBeLessThan(hips);
      }
    }
  });

  it('auto-rigs an unrigged mesh first, and --poses limits the keys', async () => {
    const out = join(scratch, 'demo_correctives.glb');
    const io = capture();
    expect(await runCli(['correctives', DEMO_OBJ, '-o', out, '--poses', 'elbowBend,spineTwist'], io)).toBe(0);
    expect(io.out()).toMatch(/auto-rigged, then baked 3 corrective keys/);
    const written = await loadCharacter(out);
    expect(written.rig?.joints.map((j) => j.name)).toContain('mixamorig:LeftForeArm');
    const names = [...new Set(morphTargets(out).targets.map((t) => t.name))].sort();
    expect(names).toEqual(['mixamorig:LeftForeArm_elbowBend', 'mixamorig:RightForeArm_elbowBend', 'mixamorig:Spine1_spineTwist']);
  });

  it('refuses a rig without the Mixamo joints with BAD_SKELETON (exit 2), and a bad command line with exit 64', async () => {
    const bad = join(scratch, 'three_bones.glb');
    const positions = new Float32Array([0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0]);
    await writeSkinnedGlb(bad, {
      parts: [{ name: 'Quad', positions, triangles: new Uint32Array([0, 1, 2, 0, 2, 3]) }],
      skeleton: { joints: [
        { name: 'Root', parent: -1, head: [0, 0, 0], tail: [0, 0.5, 0], roll: 0 },
        { name: 'Mid', parent: 0, head: [0, 0.5, 0], tail: [0, 1, 0], roll: 0 },
      ] },
      weights: [{ name: 'Quad', influences: 1, indices: new Uint16Array([0, 0, 1, 1]), weights: new Float32Array([1, 1, 1, 1]) }],
    });
    const io = capture();
    expect(await runCli(['correctives', bad, '-o', join(scratch, 'never.glb')], io)).toBe(2);
    expect(io.err()).toMatch(/BAD_SKELETON[\s\S]*autorig rig/);

    for (const args of [
      [DEV_GLB, '-o', join(scratch, 'x.glb'), '--poses', 'elbowBend,cartwheel'],
      [DEV_GLB, '-o', join(scratch, 'x.obj')],
      [DEV_GLB, '-o', join(scratch, 'x.glb'), '--method', 'magic'],
      [DEV_GLB],
    ]) {
      const usage = capture();
      expect(await runCli(['correctives', ...args], usage)).toBe(64);
      expect(usage.err()).toMatch(/usage: autorig correctives/);
    }
  });

  it('fits to posed examples given as files (--example pose.json with its mesh), and refuses a broken one with BAD_REQUEST', async () => {
    // the example: mixamo_ely with its left elbow at the key pose, skinned with sharper weights than its own (what the
    // artist wants there), written as an OBJ beside a pose file naming the forearm's turn as a quaternion
    const character = await loadCharacter(DEV_GLB);
    const skeleton = skeletonFromRig(character.rig!);
    const weights = rigWeights(character).map((w) => w!);
    const key = keyPoses(skeleton, ['elbowBend']).find((k) => k.name === 'mixamorig:LeftForeArm_elbowBend')!;
    const rest = restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
    const transforms = poseTransforms(rest.heads, rest.parents, keyPoseRotations(key, skeleton.joints.length));
    const lines: string[] = [];
    let base = 0;
    for (const [p, part] of character.parts.entries()) {
      const w = weights[p];
      const sharp = w.weights.map((x) => x ** 4);
      for (let v = 0; v < sharp.length / w.influences; v++) {
        let sum = 0;
        for (let i = 0; i < w.influences; i++) sum += sharp[v * w.influences + i];
        for (let i = 0; i < w.influences; i++) sharp[v * w.influences + i] /= sum || 1;
      }
      const posed = dualQuaternionSkinning(part.positions, w.indices, sharp, w.influences, transforms);
      for (let v = 0; v < posed.length; v += 3) lines.push(`v ${posed[v]} ${posed[v + 1]} ${posed[v + 2]}`);
      for (let t = 0; t < part.triangles.length; t += 3) lines.push(`f ${base + part.triangles[t] + 1} ${base + part.triangles[t + 1] + 1} ${base + part.triangles[t + 2] + 1}`);
      base += posed.length / 3;
    }
    writeFileSync(join(scratch, 'elbow_sculpt.obj'), lines.join('\n') + '\n');
    const half = key.angle / 2;
    const quaternion = [...key.worldAxis.map((a) => a * Math.sin(half)), Math.cos(half)];
    const pose = join(scratch, 'elbow.json');
    writeFileSync(pose, JSON.stringify({ name: 'elbow sculpt', mesh: 'elbow_sculpt.obj', rotations: { LeftForeArm: quaternion } }));

    const plain = capture(), fitted = capture();
    const common = [DEV_GLB, '--poses', 'elbowBend', '--method', 'dualQuaternion'];
    expect(await runCli(['correctives', ...common, '-o', join(scratch, 'plain.glb')], plain)).toBe(0);
    expect(plain.out()).not.toMatch(/fitted/);
    expect(await runCli(['correctives', ...common, '-o', join(scratch, 'fitted.glb'), '--example', pose], fitted)).toBe(0);
    const fit = /fitted to 1 example first \(mean distance ([\d.e+-]+) → ([\d.e+-]+)\)/.exec(fitted.out());
    expect(fit, fitted.out()).not.toBeNull();
    expect(Number(fit![2])).toBeLessThan(0.8 * Number(fit![1]));
    // the fitted elbow targets differ from the plain ones
    const elbow = (file: string) => morphTargets(join(scratch, file)).targets.find((t) => t.name === 'mixamorig:LeftForeArm_elbowBend')!.displacements;
    const a = elbow('plain.glb'), b = elbow('fitted.glb');
    let moved = 0;
    for (let i = 0; i < a.length; i++) moved = Math.max(moved, Math.abs(a[i] - b[i]));
    expect(moved).toBeGreaterThan(1e-4);

    const broken: [string, unknown][] = [
      ['bone', { mesh: 'elbow_sculpt.obj', rotations: { LeftElbowOfDoom: quaternion } }],
      ['quaternion', { mesh: 'elbow_sculpt.obj', rotations: { LeftForeArm: [0, 0, 0, 2] } }],
      ['mesh', { rotations: {} }],
    ];
    for (const [label, content] of broken) {
      const file = join(scratch, `broken-${label}.json`);
      writeFileSync(file, JSON.stringify(content));
      const io = capture();
      expect(await runCli(['correctives', ...common, '-o', join(scratch, 'never.glb'), '--example', file], io), label).toBe(2);
      expect(io.err(), label).toMatch(/BAD_REQUEST.*example/);
    }
    const usage = capture();
    expect(await runCli(['correctives', ...common, '-o', join(scratch, 'x.glb'), '--example'], usage)).toBe(64);
  });
});
