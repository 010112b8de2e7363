/**
 * Pose Correctives over the protocol (issue 7): the add-on's correctives and correctives.preview requests pass the
 * sidecar's validator, and a real server answers them for a dev character: one key per key pose with rest-space
 * offsets for every object, in the order and count sent, that turn linear blend skinning at the key pose into
 * dual-quaternion skinning (method dualQuaternion) or the learned field's dual-quaternion skinning (the default,
 * models/pose_weights.onnx); a preview of the armature's pose that equals the key's offsets at that pose; bad input
 * answered with its code while the sidecar keeps serving; the add-on's method list is the sidecar's.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Unpackr } from 'msgpackr';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeMessage } from '../shared-schema/codec.js';
import { validateRequest } from '../shared-schema/validate.js';
import { CORRECTIVE_METHODS } from '../sidecar/correctives/bakeCorrectives.js';
import { keyPoseRotations, keyPoses, KEY_POSE_NAMES } from '../sidecar/correctives/keyPoses.js';
import { poseDependentDeformation } from '../sidecar/correctives/poseDependentWeights.js';
import { topFourSlots } from '../sidecar/correctives/poseFeatures.js';
import { modelPath } from '../sidecar/learned/modelFiles.js';
import { loadModel } from '../sidecar/learned/onnxSession.js';
import { dualQuaternionSkinning } from '../sidecar/deform/dualQuaternionSkinning.js';
import { linearBlendSkinning, poseTransforms, restSkeleton } from '../sidecar/deform/linearBlendSkinning.js';
import { loadCharacter, type Character } from '../sidecar/io/character.js';
import { rigWeights, skeletonFromRig } from '../sidecar/io/rigSkeleton.js';
import { serve, type RunningServer } from '../sidecar/server/serve.js';
import type { PartWeights, Skeleton } from '../sidecar/types.js';
import { ProtocolClient } from './fixtures/protocolClient.js';

const ROOT = resolve(import.meta.dirname, '..');
const PYTHON = '/usr/bin/python3';
const DEV_CHARACTER = resolve(ROOT, '../shared/data/characters/mixamo_ely.glb');
const TOKEN = 'correctives-test-token-0123456789';

type Message = Record<string, unknown>;

/** A bin field of a decoded message as a Float32Array (copied: msgpack views need not be aligned). */
function floats(bytes: Uint8Array): Float32Array {
  return new Float32Array(Uint8Array.from(bytes).buffer);
}

function maxDistance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  for (let v = 0; v < a.length / 3; v++) worst = Math.max(worst, Math.hypot(a[3 * v] - b[3 * v], a[3 * v + 1] - b[3 * v + 1], a[3 * v + 2] - b[3 * v + 2]));
  return worst;
}

describe('correctives requests from the add-on', () => {
  it('pass the sidecar\'s validator with their options', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'autorig-correctives-requests-'));
    try {
      const file = join(tmp, 'correctives.msgpack');
      execFileSync(PYTHON, ['test/python/sample_requests.py', file, '--correctives'], { cwd: ROOT });
      const frames = new Unpackr({ useRecords: false }).unpack(readFileSync(file)) as Uint8Array[];
      const requests = frames.map((frame) => validateRequest(decodeMessage(frame)) as unknown as Message);
      expect(requests.map((r) => r.kind)).toEqual(['correctives', 'correctives', 'correctives.preview']);
      expect(requests[1].options).toEqual({ method: 'dualQuaternion', poses: ['elbowBend', 'kneeBend'] });
      expect((requests[2].rotations as Float32Array).length).toBe(23 * 9);
      const methods = JSON.parse(execFileSync(PYTHON, ['-c', 'import json, sys; sys.path.insert(0, "."); from blender_addon import messages; print(json.dumps(list(messages.CORRECTIVE_METHODS)))'], { cwd: ROOT, encoding: 'utf8' }));
      expect(methods).toEqual([...CORRECTIVE_METHODS]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('a sidecar answering correctives and correctives.preview', { timeout: 120_000 }, () => {
  let server: RunningServer;
  let client: ProtocolClient;
  let character: Character;
  let skeleton: Skeleton;
  let weights: PartWeights[];
  let request: Message;

  beforeAll(async () => {
    character = await loadCharacter(DEV_CHARACTER);
    skeleton = skeletonFromRig(character.rig!);
    weights = rigWeights(character).map((w) => w!);
    request = {
      objects: character.parts.map((p) => ({ name: p.name, positions: p.positions, triangles: p.triangles })),
      skeleton: { joints: skeleton.joints },
      weights: weights.map((w) => ({ name: w.name, influences: w.influences, indices: w.indices, weights: w.weights })),
    };
    server = await serve({ port: 0, token: TOKEN, jobSlots: 2 });
    client = await ProtocolClient.open(server.port, TOKEN);
  });
  afterEach(() => expect(client.violations, 'messages that break protocol.json').toEqual([]));
  afterAll(async () => {
    client?.close();
    await server?.close();
  });

  it('bakes every key pose: offsets per object in the order and count sent that make LBS land on DQS', async () => {
    const reply = await client.ask({ kind: 'correctives', id: 'bake-1', ...request, options: { method: 'dualQuaternion' } });
    expect(reply, JSON.stringify(reply).slice(0, 300)).toMatchObject({ kind: 'result', request: 'correctives', method: 'dualQuaternion' });
    expect(client.received.some((m) => m.kind === 'progress' && m.id === 'bake-1')).toBe(true);
    const keys = reply.keys as { name: string; bone: string; pose: string; angle: number; objects: { name: string; offsets: Uint8Array }[] }[];
    expect(keys).toHaveLength(13);
    expect(new Set(keys.map((k) => k.pose))).toEqual(new Set(KEY_POSE_NAMES));
    const rest = restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
    const expected = keyPoses(skeleton);
    for (const key of keys) {
      expect(key.objects.map((o) => o.name)).toEqual(character.parts.map((p) => p.name));
      const pose = expected.find((k) => k.name === key.name)!;
      const transforms = poseTransforms(rest.heads, rest.parents, keyPoseRotations(pose, skeleton.joints.length));
      character.parts.forEach((part, p) => {
        const offsets = floats(key.objects[p].offsets);
        expect(offsets.length).toBe(part.positions.length);
        const w = weights[p];
        const dqs = dualQuaternionSkinning(part.positions, w.indices, w.weights, w.influences, transforms);
        const corrected = linearBlendSkinning(part.positions.map((x, i) => x + offsets[i]), w.indices, w.weights, w.influences, transforms);
        expect(maxDistance(corrected, dqs), key.name).toBeLessThan(1e-3);
      });
    }
  });

  it('previews the armature\'s pose: the elbow bent to its key pose gives the elbow key\'s offsets', async () => {
    const elbow = keyPoses(skeleton, ['elbowBend'])[0];
    const bake = await client.ask({ kind: 'correctives', id: 'bake-elbow', ...request, options: { poses: ['elbowBend'], method: 'dualQuaternion' } });
    const baked = floats((bake.keys as { objects: { offsets: Uint8Array }[] }[])[0].objects[0].offsets);
    const reply = await client.ask({
      kind: 'correctives.preview', id: 'preview-1', ...request, rotations: Float32Array.from(keyPoseRotations(elbow, skeleton.joints.length)),
      options: { method: 'dualQuaternion' },
    });
    expect(reply).toMatchObject({ kind: 'result', request: 'correctives.preview', method: 'dualQuaternion' });
    const preview = floats((reply.objects as { offsets: Uint8Array }[])[0].offsets);
    expect(maxDistance(preview, baked)).toBeLessThan(1e-4);
    expect(maxDistance(preview, new Float32Array(preview.length))).toBeGreaterThan(0.01);
  });

  it('bakes with the learned field by default: offsets make LBS land on the field\'s dual-quaternion skinning', async () => {
    const reply = await client.ask({ kind: 'correctives', id: 'bake-field', ...request, options: { poses: ['shoulderRaise'] } });
    expect(reply, JSON.stringify(reply).slice(0, 300)).toMatchObject({ kind: 'result', request: 'correctives', method: 'poseDependentDualQuaternion' });
    const key = (reply.keys as { name: string; objects: { offsets: Uint8Array }[] }[]).find((k) => k.name === 'mixamorig:LeftArm_shoulderRaise')!;
    const pose = keyPoses(skeleton, ['shoulderRaise'])[0];
    const rotations = keyPoseRotations(pose, skeleton.joints.length);
    const rest = restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
    const transforms = poseTransforms(rest.heads, rest.parents, rotations);
    const field = await loadModel(modelPath('poseWeights'));
    const part = character.parts[0];
    const w = weights[0];
    const target = await poseDependentDeformation(field, part.positions, topFourSlots(w.indices, w.weights, w.influences), skeleton, rotations, transforms, 'dualQuaternion');
    const offsets = floats(key.objects[0].offsets);
    const corrected = linearBlendSkinning(part.positions.map((x, i) => x + offsets[i]), w.indices, w.weights, w.influences, transforms);
    expect(maxDistance(corrected, target)).toBeLessThan(1e-3);
    // the field moves the shoulder differently from plain DQS: the keys differ where the arm meets the torso
    const dqs = dualQuaternionSkinning(part.positions, w.indices, w.weights, w.influences, transforms);
    expect(maxDistance(target, dqs)).toBeGreaterThan(0.005);
  });

  it('answers bad input with its code and keeps serving', async () => {
    const codes: Record<string, Message> = {
      BAD_SKELETON: { skeleton: { joints: skeleton.joints.filter((j) => !j.name.endsWith('LeftForeArm')).map((j) => ({ ...j, parent: Math.min(j.parent, 0) })) } },
      BAD_REQUEST: { options: { poses: ['cartwheel'] } },
    };
    for (const [code, fields] of Object.entries(codes)) {
      const reply = await client.ask({ kind: 'correctives', id: `bad-${code}`, ...request, ...fields });
      expect(reply, code).toMatchObject({ kind: 'error', code });
    }
    const shortWeights = { ...(request.weights as Message[])[0], indices: new Uint16Array(4), weights: new Float32Array(4) };
    expect(await client.ask({ kind: 'correctives', id: 'bad-weights', ...request, weights: [shortWeights] })).toMatchObject({ kind: 'error', code: 'BAD_ARRAY' });
    expect(await client.ask({ kind: 'correctives.preview', id: 'bad-rotations', ...request, rotations: new Float32Array(9) }))
      .toMatchObject({ kind: 'error', code: 'BAD_ARRAY' });
    const again = await client.ask({ kind: 'correctives', id: 'after-bad', ...request, options: { poses: ['kneeBend'] } });
    expect(again).toMatchObject({ kind: 'result', request: 'correctives' });
    expect((again.keys as unknown[]).length).toBe(2);
  });
});
