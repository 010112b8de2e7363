/**
 * `autorig pose` with several poses: the mesh is rigged and encoded once, each pose goes to its own file ({pose} in the
 * output's name) or, with --shape-keys, to one .glb of the unposed mesh with a glTF morph target per pose, which
 * three.js's GLTFLoader and Blender's glTF importer read as shape keys named after the poses. Every pose equals the
 * one-pose command's output. Blender's part FAILS on CI without `blender` on PATH (skipped locally).
 * Models: the stand-in latent pose models over the repository's (fixtures/latentPoseStubModels.ts), as cli-pose.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parsePoseArguments, parsePoseList, poseOutputPath, PoseUsageError } from '../sidecar/cli/poseCommand.js';
import { runCli } from '../sidecar/cli/main.js';
import { encodeMeshGlb } from '../sidecar/cli/meshGlb.js';
import { readGlb } from '../sidecar/io/glbContainer.js';
import { POSE_NAMES } from '../sidecar/pose/poseVocabulary.js';
import { captureCli, objVertices, useLatentPoseStubModels } from './fixtures/poseCommandRun.js';

const ROOT = resolve(import.meta.dirname, '..');
const DEMO_OBJ = join(ROOT, 'assets', 'demo', 'demo_character.obj');
const blender = spawnSync('sh', ['-c', 'command -v blender'], { encoding: 'utf8' }).stdout.trim() || null;
const onCi = process.env.CI === 'true';
const scratch = mkdtempSync(join(tmpdir(), 'autorig-cli-pose-keys-'));
useLatentPoseStubModels();
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function maxDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** Each pose alone, as the one-pose command writes it: pose name → the posed OBJ's vertices. */
const single: Record<string, Float64Array> = {};
async function posedAlone(pose: string): Promise<Float64Array> {
  if (!single[pose]) {
    const out = join(scratch, `alone ${pose}.obj`);
    expect(await runCli(['pose', DEMO_OBJ, '--pose', pose, '-o', out], captureCli())).toBe(0);
    single[pose] = objVertices(readFileSync(out, 'utf8'));
  }
  return single[pose];
}

describe('autorig pose, several poses', { timeout: 180_000 }, () => {
  it('reads --pose lists and all, and refuses outputs that cannot hold several poses', () => {
    expect(parsePoseList('all')).toEqual([...POSE_NAMES]);
    expect(parsePoseList('kneeBentRt, elbowBentLf+kneeBentRt,kneeBentRt')).toEqual(['kneeBentRt', 'elbowBentLf+kneeBentRt']);
    expect(() => parsePoseList('kneeBentRt,,neckTurnLf')).toThrow(/an empty name/);
    expect(() => parsePoseList('kneeBentRt,moonwalk')).toThrow(/unknown pose 'moonwalk'/);
    expect(poseOutputPath('out/{pose}/ely_{pose}.obj', 'elbowBentLf+kneeBentRt')).toBe('out/elbowBentLf+kneeBentRt/ely_elbowBentLf+kneeBentRt.obj');
    const parsed = parsePoseArguments([DEMO_OBJ, '--pose', 'all', '--shape-keys', '-o', 'keys.glb']);
    expect(parsed.poses).toHaveLength(POSE_NAMES.length);
    expect(parsed.shapeKeys).toBe(true);
    const refused: [string[], RegExp][] = [
      [['--pose', 'kneeBentRt,neckTurnLf', '-o', 'x.obj'], /2 poses asked for: name the output with \{pose\}/],
      [['--pose', 'kneeBentRt', '--shape-keys', '-o', 'x.obj'], /--shape-keys writes a .glb/],
      [['--pose', 'all', '--shape-keys', '-o', 'x_{pose}.glb'], /cannot hold \{pose\}/],
    ];
    for (const [args, message] of refused) {
      expect(() => parsePoseArguments([DEMO_OBJ, ...args]), args.join(' ')).toThrow(PoseUsageError);
      expect(() => parsePoseArguments([DEMO_OBJ, ...args])).toThrow(message);
    }
    expect(() => parsePoseArguments(['--list', '--shape-keys'])).toThrow(/--list takes no/);
  });

  it('writes one file per pose, each the same as the pose posed alone, and says each', async () => {
    const poses = ['kneeBentRt', 'elbowBentLf', 'elbowBentLf+kneeBentRt'];
    const io = captureCli();
    expect(await runCli(['pose', DEMO_OBJ, '--pose', poses.join(','), '-o', join(scratch, 'each', 'demo_{pose}.obj')], io), io.err()).toBe(0);
    const said = io.out().trim().split('\n');
    expect(said).toHaveLength(3);
    // the mesh is rigged once: one "auto-rigging" line, one run of progress lines
    expect(io.err().match(/auto-rigging first/g)).toHaveLength(1);
    expect(io.err().match(/% rig\b/g)).toHaveLength(1);
    const rest = objVertices(readFileSync(DEMO_OBJ, 'utf8'));
    for (const [k, pose] of poses.entries()) {
      const file = join(scratch, 'each', `demo_${pose}.obj`);
      expect(said[k]).toContain(`as ${pose} through the auto-rig`);
      expect(said[k]).toContain(`→ ${file}`);
      // the stand-in's marks measure elbowBentLf alone: every other pose is experimental, as the pose menu says
      expect(said[k].endsWith(' [experimental]'), said[k]).toBe(pose !== 'elbowBentLf');
      const posed = objVertices(readFileSync(file, 'utf8'));
      expect(maxDifference(posed, await posedAlone(pose)), pose).toBe(0);
      expect(maxDifference(posed, rest), `${pose} moves the mesh`).toBeGreaterThan(0.05);
    }
  });

  it('writes one .glb of shape keys that three.js reads back as the unposed mesh plus each pose', async () => {
    const poses = ['elbowBentLf', 'kneeBentRt', 'neckTurnLf'];
    const out = join(scratch, 'keys.glb');
    const io = captureCli();
    expect(await runCli(['pose', DEMO_OBJ, '--pose', poses.join(','), '--shape-keys', '-o', out], io), io.err()).toBe(0);
    expect(io.out()).toMatch(/3 shape keys → .*keys\.glb/);
    const { json } = readGlb(readFileSync(out));
    expect(json.meshes[0].extras.targetNames).toEqual(poses);
    expect(json.meshes[0].weights).toEqual([0, 0, 0]);
    // a limb pose moves a fraction of the body: its target is stored sparse
    const targets = json.meshes[0].primitives[0].targets as { POSITION: number }[];
    expect(targets.some((t) => json.accessors[t.POSITION].sparse !== undefined)).toBe(true);

    (globalThis as { self?: unknown }).self ??= globalThis;
    const { GLTFLoader } = await import('three/examples/jsm/loaders/GLTFLoader.js');
    const bytes = readFileSync(out);
    const gltf = await new GLTFLoader().parseAsync(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, '');
    const meshes: any[] = [];
    gltf.scene.traverse((o: any) => { if (o.isMesh) meshes.push(o); });
    expect(meshes).toHaveLength(1);
    const { geometry } = meshes[0];
    expect(meshes[0].morphTargetDictionary).toEqual({ elbowBentLf: 0, kneeBentRt: 1, neckTurnLf: 2 });
    expect(geometry.morphTargetsRelative).toBe(true);
    const base = geometry.attributes.position.array as Float32Array;
    const rest = objVertices(readFileSync(DEMO_OBJ, 'utf8'));
    expect(maxDifference(base, rest)).toBeLessThan(1e-6);
    for (const [k, pose] of poses.entries()) {
      const delta = geometry.morphAttributes.position[k].array as Float32Array;
      const shaped = base.map((x, i) => x + delta[i]);
      // the one-pose OBJ holds 6 decimals
      expect(maxDifference(shaped, await posedAlone(pose)), pose).toBeLessThan(1e-6);
    }
  });

  it('stores a target that moves nothing, or everything, in a form glTF readers take', async () => {
    const part = { name: 'tri', positions: Float32Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0), triangles: Uint32Array.of(0, 1, 2) };
    const keys = [
      { name: 'still', positions: [part.positions.slice()] },
      { name: 'lifted', positions: [part.positions.map((x, i) => (i % 3 === 2 ? x + 0.5 : x))] },
      { name: 'one corner', positions: [part.positions.map((x, i) => (i === 3 ? 2 : x))] },
    ];
    const glb = encodeMeshGlb([part], 'test', keys);
    const { json } = readGlb(glb);
    const accessor = (k: number) => json.accessors[json.meshes[0].primitives[0].targets[k].POSITION];
    // nothing moved: neither a buffer view nor sparse values (glTF's zeros; sparse needs a count of at least 1)
    expect(accessor(0).bufferView).toBeUndefined();
    expect(accessor(0).sparse).toBeUndefined();
    expect(accessor(1).bufferView).toBeDefined(); // every vertex moved: dense
    expect(accessor(2).sparse.count).toBe(1);
    expect(accessor(2).min).toEqual([0, 0, 0]);
    expect(accessor(2).max).toEqual([1, 0, 0]);
    (globalThis as { self?: unknown }).self ??= globalThis;
    const { GLTFLoader } = await import('three/examples/jsm/loaders/GLTFLoader.js');
    const gltf = await new GLTFLoader().parseAsync(glb.buffer.slice(glb.byteOffset, glb.byteOffset + glb.byteLength) as ArrayBuffer, '');
    let geometry: any;
    gltf.scene.traverse((o: any) => { if (o.isMesh) geometry = o.geometry; });
    expect(Array.from(geometry.morphAttributes.position[0].array)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(Array.from(geometry.morphAttributes.position[1].array)).toEqual([0, 0, 0.5, 0, 0, 0.5, 0, 0, 0.5]);
    expect(Array.from(geometry.morphAttributes.position[2].array)).toEqual([0, 0, 0, 1, 0, 0, 0, 0, 0]);
    expect(() => encodeMeshGlb([part], 'test', [{ name: 'short', positions: [new Float32Array(6)] }])).toThrow(/has 2 vertices where its part has 3/);
  });

  describe.skipIf(!blender && !onCi)("Blender's glTF importer", () => {
    it('makes a shape key per pose, named after it, at value 0, each the pose posed alone', async () => {
      expect(blender, 'blender must be on PATH on CI').not.toBeNull();
      const poses = ['elbowBentLf', 'kneeBentRt'];
      const glb = join(scratch, 'keys for blender.glb');
      expect(await runCli(['pose', DEMO_OBJ, '--pose', poses.join(','), '--shape-keys', '-o', glb], captureCli())).toBe(0);
      const out = join(scratch, 'keys report.json');
      const run = spawnSync(
        blender!,
        ['-b', '--factory-startup', '--python', join(ROOT, 'test/fixtures/blender_import_shape_keys.py'), '--', glb, out],
        { encoding: 'utf8', timeout: 100_000 },
      );
      expect(existsSync(out), run.stdout + run.stderr).toBe(true);
      const report = JSON.parse(readFileSync(out, 'utf8'));
      expect(report.error, run.stdout + run.stderr).toBeNull();
      expect(report.meshes).toHaveLength(1);
      const [mesh] = report.meshes;
      const rest = objVertices(readFileSync(DEMO_OBJ, 'utf8'));
      expect(mesh.vertices).toBe(rest.length / 3);
      expect(mesh.keys.map((k: any) => k.name)).toEqual(['Basis', ...poses]);
      expect(maxDifference(mesh.keys[0].co, rest)).toBeLessThan(1e-5);
      for (const [k, pose] of poses.entries()) {
        const key = mesh.keys[k + 1];
        expect(key.value).toBe(0);
        expect(key.relative_to).toBe('Basis');
        expect(maxDifference(key.co, await posedAlone(pose)), pose).toBeLessThan(1e-5);
      }
    });
  });
});
