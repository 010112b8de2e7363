/**
 * The apply path of Apply Latent Pose (sidecar/pose/applyLatentPose.ts, v2: the decoder's joint rotations skin the
 * character's own auto-rig): kNN (geometry/nearestNeighbours), the pose library, the options' checks, the model errors,
 * and the installed models on a held-out dev character. Those models (models/latent_pose_*, or the folder AUTORIG_MODELS
 * names) are not shipped yet: without them that last block is skipped, as in pose-protocol.test.ts.
 * The skinning half without any model: pose-rig-skinning.test.ts; the joint frames: pose-joint-frames.test.ts.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PoseVariant } from '../sidecar/data/poses/poseSample.js';
import { SeededRandom } from '../sidecar/data/seededRandom.js';
import { nearestNeighbours } from '../sidecar/geometry/nearestNeighbours.js';
import { loadCharacter, type Character } from '../sidecar/io/character.js';
import { limbMotion } from './fixtures/limbMotion.js';
import { MODEL_DATA_FILES, MODEL_FILES, modelsFolder } from '../sidecar/learned/modelFiles.js';
import { applyLatentPose, checkPoseOptions, latentOfParts, latentPoseAutoRig, POSE_SKIN_VOXEL_RESOLUTION, prepareLatentPose } from '../sidecar/pose/applyLatentPose.js';
import { prepareMesh, rigCharacterAsync } from '../sidecar/pipeline.js';
import { SKIN_VOXEL_RESOLUTION } from '../sidecar/skinning/skinInVoxels.js';
import { decodePoseLibrary, encodePoseLibrary, latentDelta, POSE_LIBRARY_FORMAT, readPoseLibrary, type PoseLibrary } from '../sidecar/pose/poseLibrary.js';
import { makeHumanoid } from './fixtures/humanoid.js';

const ROOT = resolve(import.meta.dirname, '..');
const STUB = join(ROOT, 'test', 'fixtures', 'latent_pose_stub');
const DEV_CHARACTER = resolve(ROOT, '../shared/data/characters/mixamo_ely.glb');
const INSTALLED = modelsFolder();
const installed = [MODEL_FILES.latentPoseEncoder, MODEL_FILES.latentPoseDecoder, MODEL_DATA_FILES.latentPoseLibrary, MODEL_FILES.joints2d]
  .every((name) => existsSync(join(INSTALLED, name)));
if (!installed) console.warn(`latent-pose-apply: the latent pose models are not installed in ${INSTALLED}; their test on a dev character is skipped`);

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('nearestNeighbours', () => {
  it('agrees with brute force on clustered and spread points, with and without the query itself', () => {
    const random = new SeededRandom(3);
    const P = 700;
    const points = new Float32Array(P * 3);
    for (let i = 0; i < P; i++) {
      // a thin curved sheet plus a tight cluster: uneven density, as anchors on a body are
      const cluster = i % 5 === 0;
      const u = random.next(), v = random.next();
      points.set(cluster ? [0.3 + 0.01 * random.normal(), 0.2 + 0.01 * random.normal(), 0.01 * random.normal()] : [u, v, 0.2 * Math.sin(3 * u)], 3 * i);
    }
    const queries = new Float32Array(200 * 3).map(() => random.range(-0.2, 1.2));
    for (const [q, skipSelf] of [[queries, false], [points, true]] as const) {
      const k = 7;
      const got = nearestNeighbours(points, q, k, skipSelf);
      for (let i = 0; i < q.length / 3; i++) {
        const all = Array.from({ length: P }, (_, j) => ({ j, d: Math.hypot(points[3 * j] - q[3 * i], points[3 * j + 1] - q[3 * i + 1], points[3 * j + 2] - q[3 * i + 2]) }))
          .filter(({ j }) => !(skipSelf && j === i))
          .sort((a, b) => a.d - b.d || a.j - b.j)
          .slice(0, k);
        expect(Array.from(got.indices.slice(i * k, i * k + k))).toEqual(all.map((x) => x.j));
        all.forEach((x, n) => expect(got.distances[i * k + n]).toBeCloseTo(x.d, 5));
      }
    }
  });

  it('pads with −1 when there are fewer points than k', () => {
    const got = nearestNeighbours(Float32Array.of(0, 0, 0, 1, 0, 0), Float32Array.of(0.9, 0, 0), 3);
    expect(Array.from(got.indices)).toEqual([1, 0, -1]);
    expect(got.distances[2]).toBe(Infinity);
  });
});

describe('the pose library and the options', () => {
  const L = 4;
  const library: PoseLibrary = {
    format: POSE_LIBRARY_FORMAT, latentSize: L, knn: 8, variants: ['skinning', 'corrective', 'skinningCorrective'],
    poses: {
      elbowBentLf: {
        skinningCorrective: {
          mean: [1, 0, 0, 0],
          identities: [
            { identity: 'tall', muNeutral: [5, 0, 0, 0], delta: [0.9, 0.1, 0, 0] },
            { identity: 'short', muNeutral: [-5, 0, 0, 0], delta: [1.1, -0.1, 0, 0] },
          ],
        },
      },
    },
  };

  it('gives the mean delta, or the delta of the identity nearest the character', () => {
    expect(Array.from(latentDelta(library, 'elbowBentLf', 'skinningCorrective', 'mean', new Float32Array(L)).delta)).toEqual([1, 0, 0, 0]);
    const near = latentDelta(library, 'elbowBentLf', 'skinningCorrective', 'nearest', Float32Array.of(-4, 0, 0, 0));
    expect(near.identity).toBe('short');
    expect(Array.from(near.delta)).toEqual([1.1, -0.1, 0, 0].map((x) => Math.fround(x)));
    expect(() => latentDelta(library, 'kneeBentRt', 'skinningCorrective', 'mean', new Float32Array(L))).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
  });

  it('reads back what it writes, the same bytes as the training\'s writer (the stub is library_file.py\'s), and the same choices', () => {
    const bytes = encodePoseLibrary(library);
    const read = decodePoseLibrary(bytes);
    expect(read.latentSize).toBe(L);
    expect(read.knn).toBe(8);
    expect(Array.from(read.poses.elbowBentLf.skinningCorrective.mean)).toEqual([1, 0, 0, 0]);
    expect(read.poses.elbowBentLf.skinningCorrective.identities.map((i) => [i.identity, Array.from(i.delta)]))
      .toEqual([['tall', [0.9, 0.1, 0, 0]], ['short', [1.1, -0.1, 0, 0]]]);
    expect(latentDelta(read, 'elbowBentLf', 'skinningCorrective', 'nearest', Float32Array.of(-4, 0, 0, 0)).identity).toBe('short');
    const stub = readFileSync(join(STUB, MODEL_DATA_FILES.latentPoseLibrary));
    expect(Buffer.from(encodePoseLibrary(decodePoseLibrary(stub))).equals(stub)).toBe(true);
    expect(() => encodePoseLibrary({ ...library, poses: { x: { skinning: { mean: [1, 2], identities: [] } } } }))
      .toThrow(expect.objectContaining({ code: 'BAD_ARRAY' }));
  });

  it('refuses a missing or damaged library with model codes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'autorig-lib-'));
    dirs.push(dir);
    expect(() => readPoseLibrary(join(dir, 'none.bin'))).toThrow(expect.objectContaining({ code: 'MODEL_MISSING' }));
    const good = encodePoseLibrary(library);
    const damaged = (name: string, bytes: Uint8Array | string) => {
      writeFileSync(join(dir, name), bytes);
      expect(() => readPoseLibrary(join(dir, name)), name).toThrow(expect.objectContaining({ code: 'MODEL_FAILED' }));
    };
    // the JSON of format 1
    damaged('json.bin', JSON.stringify(library));
    // cut short: its last vector runs past the data
    damaged('short.bin', good.subarray(0, good.length - 8));
    // a value that is not a number
    const nan = Uint8Array.from(good);
    new DataView(nan.buffer).setFloat64(nan.length - 8, Number.NaN, true);
    damaged('nan.bin', nan);
    // another format in the header
    const header = Buffer.from(good.subarray(12, 12 + new DataView(good.buffer).getUint32(8, true))).toString('utf8');
    const other = Uint8Array.from(good);
    other.set(Buffer.from(header.replace(POSE_LIBRARY_FORMAT, POSE_LIBRARY_FORMAT.replace('/2', '/9')), 'utf8'), 12);
    damaged('format.bin', other);
    writeFileSync(join(dir, 'good.bin'), good);
    expect(readPoseLibrary(join(dir, 'good.bin')).latentSize).toBe(L);
  });

  it('checks pose, strength and strategy with BAD_REQUEST, and fills the defaults', () => {
    expect(checkPoseOptions({ pose: 'kneeBentRt' })).toEqual({ pose: 'kneeBentRt', strength: 1, strategy: 'mean' });
    expect(checkPoseOptions({ pose: 'elbowBentLf+kneeBentRt', strength: 1.5, strategy: 'nearest' }).strength).toBe(1.5);
    for (const bad of [{ pose: 'moonwalk' }, { pose: 'kneeBentRt', strength: 1.6 }, { pose: 'kneeBentRt', strength: -0.1 }, { pose: 'kneeBentRt', strength: Number.NaN }, { pose: 'kneeBentRt', strategy: 'median' as never }]) {
      expect(() => checkPoseOptions(bad)).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    }
  });
});

/** Runs `body` with AUTORIG_MODELS at `folder`, then puts it back. */
async function withModels<T>(folder: string, body: () => Promise<T>): Promise<T> {
  const before = process.env.AUTORIG_MODELS;
  process.env.AUTORIG_MODELS = folder;
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env.AUTORIG_MODELS;
    else process.env.AUTORIG_MODELS = before;
  }
}

describe('applyLatentPose without its models', { timeout: 60_000 }, () => {
  const humanoid = makeHumanoid({ segments: 8 });
  const folder = mkdtempSync(join(tmpdir(), 'autorig-latent-models-'));
  dirs.push(folder);
  const install = (name: string, from = join(STUB, name)) => copyFileSync(from, join(folder, name));

  it('says MODEL_MISSING for a missing library, encoder, decoder or auto-rig model, at any strength', async () => {
    const missing = async (strength: number) => {
      await expect(withModels(folder, () => applyLatentPose(humanoid, { pose: 'elbowBentLf', strength }))).rejects.toMatchObject({ code: 'MODEL_MISSING' });
    };
    await missing(1);
    install(MODEL_DATA_FILES.latentPoseLibrary);
    await missing(1);
    install(MODEL_FILES.latentPoseEncoder);
    await missing(1);
    // a decoder of the wrong contract loads: only running it tells (below)
    install(MODEL_FILES.latentPoseDecoder, join(STUB, MODEL_FILES.latentPoseEncoder));
    // the auto-rig's 2D joint model (and point_rig) are missing: refused before any work, even at strength 0
    await missing(0);
    await missing(1);
  });

  it('says MODEL_FAILED when the decoder does not take the v2 inputs, BAD_REQUEST for a bad variant', async () => {
    symlinkSync(join(ROOT, 'models', MODEL_FILES.joints2d), join(folder, MODEL_FILES.joints2d));
    // point_rig is missing too: still MODEL_MISSING, before any work
    await expect(withModels(folder, () => applyLatentPose(humanoid, { pose: 'elbowBentLf' }))).rejects.toMatchObject({ code: 'MODEL_MISSING', message: expect.stringMatching(/point_rig/) });
    symlinkSync(join(ROOT, 'models', MODEL_FILES.pointRig), join(folder, MODEL_FILES.pointRig));
    // the mesh is encoded and auto-rigged; the decoder (the stub encoder in its place) refuses the v2 feeds
    await expect(withModels(folder, () => applyLatentPose(humanoid, { pose: 'elbowBentLf' })))
      .rejects.toMatchObject({ code: 'MODEL_FAILED', message: expect.stringMatching(/latent_pose_decoder/) });
    await expect(withModels(folder, () => applyLatentPose(humanoid, { pose: 'elbowBentLf', variant: 'posed' as never }))).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    // strength 0 runs no model: the input comes back as it was
    const still = await withModels(folder, () => applyLatentPose(humanoid, { pose: 'elbowBentLf', strength: 0 }));
    still.objects.forEach((o, k) => expect(Array.from(o.positions)).toEqual(Array.from(humanoid[k].positions)));
  });
});


/** Mean displacement of all vertices of all parts. */
function meanMotion(character: Character, posed: Float32Array[]): number {
  let sum = 0, n = 0;
  character.parts.forEach((part, k) => {
    const p = part.positions, q = posed[k];
    for (let i = 0; i < p.length; i += 3, n++) sum += Math.hypot(q[i] - p[i], q[i + 1] - p[i + 1], q[i + 2] - p[i + 2]);
  });
  return sum / n;
}

describe('the installed latent pose models on a held-out dev character', { timeout: 240_000 }, () => {
  let character: Character;
  beforeAll(async () => {
    if (installed) character = await loadCharacter(DEV_CHARACTER);
  });
  const apply = async (pose: string, strength = 1, variant?: PoseVariant) => {
    const result = await applyLatentPose(character.parts, { pose, strength, variant });
    expect(result.objects.map((o) => o.name)).toEqual(character.parts.map((p) => p.name));
    result.objects.forEach((o, k) => expect(o.positions.length).toBe(character.parts[k].positions.length));
    return result.objects.map((o) => o.positions);
  };

  it.skipIf(!installed)('elbowBentLf / kneeBentRt move the requested limb more than the others, and the limbs the pose does not turn not at all', async () => {
    const cases = [
      ['elbowBentLf', 'LeftHand', ['RightHand', 'LeftFoot', 'RightFoot', 'Head']],
      ['kneeBentRt', 'RightFoot', ['LeftHand', 'RightHand', 'LeftFoot', 'Head']],
    ] as const;
    for (const [pose, limb, still] of cases) {
      const motion = limbMotion(character, await apply(pose));
      const others = Object.entries(motion).filter(([name]) => name !== limb).map(([, m]) => m);
      expect(motion[limb], `${pose}: ${JSON.stringify(motion)}`).toBeGreaterThan(Math.max(...others));
      // only the pose's own joints turn (pose/keepPoseJoints): the decoder's small rotations elsewhere are dropped
      for (const other of still) expect(motion[other], `${pose}: ${other}`).toBe(0);
    }
  });

  it.skipIf(!installed)('returns the input at strength 0, and the corrective alone moves much less than the pose', async () => {
    const still = await apply('elbowBentLf', 0);
    still.forEach((positions, k) => expect(Array.from(positions)).toEqual(Array.from(character.parts[k].positions)));
    const posed = meanMotion(character, await apply('elbowBentLf', 1, 'skinningCorrective'));
    const corrective = meanMotion(character, await apply('elbowBentLf', 1, 'corrective'));
    expect(posed).toBeGreaterThan(0);
    expect(corrective, `corrective ${corrective}, pose ${posed}`).toBeLessThan(0.25 * posed);
  });

  it.skipIf(!installed)('poses a mesh wound inside out (a mirrored object, a clockwise export) exactly as wound outward', async () => {
    const own = await apply('kneeBentRt');
    const parts = character.parts.map((p) => {
      const triangles = p.triangles.slice();
      for (let t = 0; t < triangles.length; t += 3) [triangles[t + 1], triangles[t + 2]] = [triangles[t + 2], triangles[t + 1]];
      return { ...p, triangles };
    });
    const read = await applyLatentPose(parts, { pose: 'kneeBentRt' });
    read.objects.forEach((o, k) => expect(Array.from(o.positions)).toEqual(Array.from(own[k])));
    expect(limbMotion(character, own).RightFoot).toBeGreaterThan(0);
  });

  it.skipIf(!installed)('poses the same with a μ read beforehand (latentOfParts) as without, and refuses a μ of the wrong size', async () => {
    const mu = await latentOfParts(character.parts);
    expect(mu.some((x) => x !== 0)).toBe(true);
    const own = await apply('kneeBentLf');
    const given = (await applyLatentPose(character.parts, { pose: 'kneeBentLf', mu })).objects.map((o) => o.positions);
    given.forEach((positions, k) => expect(Array.from(positions)).toEqual(Array.from(own[k])));
    expect(meanMotion(character, given)).toBeGreaterThan(0);
    await expect(applyLatentPose(character.parts, { pose: 'kneeBentLf', mu: mu.subarray(1) })).rejects.toMatchObject({ code: 'BAD_ARRAY' });
  });

  it.skipIf(!installed)('hands the next apply its μ, auto-rig and canonical frame: a reused apply poses bit for bit as a fresh one, with or without the frame', async () => {
    const first = await applyLatentPose(character.parts, { pose: 'elbowBentLf' });
    const reuse = first.reusable!;
    // the frame prepareMesh finds for these parts, and what a later apply would find again
    expect(reuse.frame).toEqual(prepareMesh(character.parts).cf);
    expect(reuse.autoRig).toBeDefined();
    const fresh = await apply('kneeBentRt');
    const again = await applyLatentPose(character.parts, { pose: 'kneeBentRt', reuse });
    expect(again.reused).toBe(true);
    again.objects.forEach((o, k) => expect(Array.from(o.positions)).toEqual(Array.from(fresh[k])));
    // without the frame (what older callers kept) it is found again: the same answer
    const { frame: _frame, ...older } = reuse;
    const found = await applyLatentPose(character.parts, { pose: 'kneeBentRt', reuse: older });
    found.objects.forEach((o, k) => expect(Array.from(o.positions)).toEqual(Array.from(fresh[k])));
    expect(found.reusable!.frame).toEqual(reuse.frame);
    expect(again.reusable!.frame).toEqual(reuse.frame);
  });

  it.skipIf(!installed)('prepares a mesh before any pose: what a cold apply leaves, so that the apply after it poses bit for bit as a cold one', async () => {
    const cold = await applyLatentPose(character.parts, { pose: 'elbowBentRt' });
    const prepared = await prepareLatentPose(character.parts);
    expect(prepared).toMatchObject({ reused: false, rig: 'auto' });
    // the μ, the auto-rig and the frame of a cold apply, bit for bit
    expect(Array.from(prepared.reusable.mu)).toEqual(Array.from(cold.reusable!.mu));
    expect(prepared.reusable.frame).toEqual(cold.reusable!.frame);
    prepared.reusable.autoRig!.objects.forEach((o, k) => expect(Array.from(o.weights)).toEqual(Array.from(cold.reusable!.autoRig!.objects[k].weights)));
    const after = await applyLatentPose(character.parts, { pose: 'elbowBentRt', reuse: prepared.reusable });
    expect(after.reused).toBe(true);
    after.objects.forEach((o, k) => expect(Array.from(o.positions)).toEqual(Array.from(cold.objects[k].positions)));
    expect(limbMotion(character, after.objects.map((o) => o.positions)).RightHand).toBeGreaterThan(0);
    // what it already holds is handed back as it is; without the auto-rig (the applies bring the mesh's rig) the
    // same μ and frame, and a later prepare with the auto-rig keeps them
    expect(await prepareLatentPose(character.parts, { reuse: prepared.reusable })).toMatchObject({ reused: true, reusable: prepared.reusable });
    const latentOnly = await prepareLatentPose(character.parts, { autoRig: false });
    expect(latentOnly).toMatchObject({ reused: false, rig: 'none' });
    expect(latentOnly.reusable.autoRig).toBeUndefined();
    expect(Array.from(latentOnly.reusable.mu)).toEqual(Array.from(cold.reusable!.mu));
    expect(latentOnly.reusable.frame).toEqual(cold.reusable!.frame);
    const completed = await prepareLatentPose(character.parts, { reuse: latentOnly.reusable });
    expect(completed.reused).toBe(false);
    expect(completed.reusable.mu).toBe(latentOnly.reusable.mu);
    completed.reusable.autoRig!.objects.forEach((o, k) => expect(Array.from(o.weights)).toEqual(Array.from(cold.reusable!.autoRig!.objects[k].weights)));
  });

  it.skipIf(!installed)('poses through latentPoseAutoRig exactly as without a rig (the eval measures the apply\'s own rig), a rig skinned on the coarser grid', async () => {
    const own = await apply('elbowBentRt');
    const rig = await latentPoseAutoRig(character.parts);
    const through = await applyLatentPose(character.parts, { pose: 'elbowBentRt', rig });
    through.objects.forEach((o, k) => expect(Array.from(o.positions)).toEqual(Array.from(own[k])));
    expect(limbMotion(character, own).RightHand).toBeGreaterThan(0);
    // the rig request's skeleton (both at the network's depth: withRefinedDepth), with the learned weights from the
    // POSE_SKIN_VOXEL_RESOLUTION grid (not the 112 one's voxel skinning), each row summing to one
    const requested = await rigCharacterAsync(character.parts);
    expect(rig.skeleton.joints.map((j) => j.name)).toEqual(requested.skeleton.joints.map((j) => j.name));
    rig.skeleton.joints.forEach((j, i) => {
      const d = j.head.map((x, a) => x - requested.skeleton.joints[i].head[a]);
      expect(Math.hypot(d[0], d[1], d[2]), j.name).toBeLessThan(1e-5);
    });
    expect(POSE_SKIN_VOXEL_RESOLUTION).toBeLessThan(SKIN_VOXEL_RESOLUTION);
    let differing = 0;
    rig.objects.forEach((o, k) => {
      const w = o.weights, other = requested.objects[k].weights;
      for (let v = 0; v < w.length; v += 4) {
        expect(w[v] + w[v + 1] + w[v + 2] + w[v + 3]).toBeCloseTo(1, 4);
        if (Math.abs(w[v] - other[v]) > 1e-3) differing++;
      }
    });
    expect(differing).toBeGreaterThan(0);
  });
});

