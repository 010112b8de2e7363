/**
 * The sidecar's model host (sidecar/server/modelHost.ts): one thread holds the onnxruntime sessions, every job runs
 * its models there, so a model is loaded once per sidecar. Checked directly (a port used by this test's thread) and
 * through the server (jobs of two clients, a cancel, the host stopping).
 */
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { decodeMessage, encodeMessage } from '../shared-schema/codec.js';
import { existsSync } from 'node:fs';
import { MODEL_FILES, modelPath, type ModelName } from '../sidecar/learned/modelFiles.js';
import { loadModel, runModel, useModelHost } from '../sidecar/learned/onnxSession.js';
import { modelsRunBy } from '../sidecar/methods.js';
import { ModelHost } from '../sidecar/server/modelHost.js';
import { serve, type RunningServer } from '../sidecar/server/serve.js';
import type { MeshPart } from '../sidecar/types.js';
import { makeHumanoid } from './fixtures/humanoid.js';

const TOKEN = 'model-host-token-0123456789';
const JOINTS2D = modelPath('joints2d');

/** A fixed joints2d input: a soft ellipse silhouette (any fixed image will do: both runs see the same one). */
function fixedImage(size = 128): Float32Array {
  const x = new Float32Array(5 * size * size);
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      const u = (c - size / 2) / (size / 5), v = (r - size / 2) / (size / 2.3);
      const inside = u * u + v * v < 1 ? 1 : 0;
      x[r * size + c] = inside;
      x[size * size + r * size + c] = inside * 0.1;
    }
  }
  return x;
}

describe('the model host, asked from this thread', () => {
  const hosts: ModelHost[] = [];
  afterAll(async () => {
    for (const host of hosts) await host.close();
  });

  it('runs a model there with the same outputs as a session of our own, loads it once, and passes error codes on', async () => {
    const image = fixedImage();
    const local = await runModel(await loadModel(JOINTS2D), { image: { data: image, dims: [1, 5, 128, 128] } });

    const host = new ModelHost();
    hosts.push(host);
    expect(await host.warm([JOINTS2D, '/nonexistent/model.onnx'])).toEqual([expect.stringContaining('is not installed')]);
    expect(await host.stats()).toEqual({ loads: 1, runs: 0 });

    useModelHost(host.connect());
    // a different path string for the same file: still the host's one session (paths are resolved)
    const session = await loadModel(`${JOINTS2D}/../joints2d.onnx`);
    expect(session.inputNames).toEqual(['image']);
    const feeds = { image: { data: image, dims: [1, 5, 128, 128] } };
    const [a, b] = await Promise.all([runModel(session, feeds), runModel(session, feeds)]);
    for (const out of [a, b]) {
      expect(out.coords.dims).toEqual([1, 23, 2]);
      expect(Array.from(out.coords.data as Float32Array)).toEqual(Array.from(local.coords.data as Float32Array));
      expect(Array.from(out.confidence.data as Float32Array)).toEqual(Array.from(local.confidence.data as Float32Array));
    }
    // the caller's feed is copied, not taken
    expect(image.length).toBe(5 * 128 * 128);
    expect(await host.stats()).toEqual({ loads: 1, runs: 2 });

    await expect(loadModel('/nonexistent/model.onnx')).rejects.toMatchObject({ code: 'MODEL_MISSING' });
    await expect(runModel(session, { image: { data: new Float32Array(5 * 8 * 8), dims: [1, 5, 8, 8] } })).rejects.toMatchObject({
      code: 'MODEL_FAILED',
    });

    // the host going away fails what is asked after, with a code, instead of hanging
    await host.close();
    await expect(runModel(session, feeds)).rejects.toMatchObject({ code: 'MODEL_FAILED', message: expect.stringContaining('model host') });
  });
});

type Message = Record<string, unknown>;

/** Send one request and collect its messages until its result or error. */
async function request(port: number, message: Message, cancelAtStage?: string): Promise<Message[]> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  await new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject));
  const received: Message[] = [];
  return new Promise<Message[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer: ${JSON.stringify(received.map((m) => [m.kind, m.stage]))}`)), 60_000);
    ws.on('message', (data: Buffer) => {
      const m = decodeMessage(data) as Message;
      received.push(m);
      if (cancelAtStage && m.kind === 'progress' && m.stage === cancelAtStage) ws.send(encodeMessage({ kind: 'cancel', id: message.id }));
      if (m.kind === 'result' || m.kind === 'error') {
        clearTimeout(timer);
        ws.close();
        resolve(received);
      }
    });
    ws.send(encodeMessage(message));
  });
}

function wirePart(part: MeshPart): Message {
  return { name: part.name, positions: part.positions, triangles: part.triangles };
}

it('closes without harm while a model is still loading (onnxruntime aborts the process if its thread is cut under a load)', async () => {
  const host = new ModelHost();
  const warming = host.warm([JOINTS2D, modelPath('pointRig')]);
  await new Promise((resolve) => setTimeout(resolve, 50));
  await host.close();
  // the load either finished before the stop or the host stopped first: both are answered, none hangs
  await warming.then(
    (failures) => expect(failures).toEqual([]),
    (err: Error) => expect(err.message).toMatch(/stopped before answering/),
  );
  expect(host.running).toBe(false);
  // this process is still here to assert: a new host works
  const again = new ModelHost();
  expect(await again.warm([JOINTS2D])).toEqual([]);
  await again.close();
});

describe('the server runs every job through one model host', { timeout: 60_000 }, () => {
  let server: RunningServer;
  afterAll(async () => {
    await server?.close();
  });

  it('loads each model once for all jobs and clients; geometric jobs start no host; a cancelled job leaves it serving', async () => {
    server = await serve({ port: 0, token: TOKEN });
    const humanoid = makeHumanoid().map(wirePart);

    const geometric = await request(server.port, { kind: 'rig', id: 'g', objects: humanoid, options: { method: 'geometric' } });
    expect(geometric.at(-1)).toMatchObject({ kind: 'result', request: 'rig' });
    expect(server.models.running).toBe(false);

    expect(modelsRunBy('rig', undefined)).toEqual(['joints2d', 'pointRig']);
    const [first, second] = await Promise.all([
      request(server.port, { kind: 'rig', id: 'h1', objects: humanoid }),
      request(server.port, { kind: 'rig', id: 'h2', objects: humanoid }),
    ]);
    for (const answer of [first, second]) expect(answer.at(-1)).toMatchObject({ kind: 'result', request: 'rig' });
    // each hybrid rig runs joints2d, then point_rig for its joints' depth
    expect(await server.models.stats()).toEqual({ loads: 2, runs: 4 });

    // cancelled while the network's stage runs: the host finishes that run for nobody and keeps serving
    const cancelled = await request(server.port, { kind: 'rig', id: 'c', objects: humanoid }, 'skeleton');
    expect(cancelled.at(-1)).toMatchObject({ kind: 'error', code: 'CANCELLED' });
    const learned = await request(server.port, { kind: 'rig', id: 'l', objects: humanoid, options: { method: 'learned' } });
    expect(learned.at(-1)).toMatchObject({ kind: 'result', request: 'rig' });
    const stats = await server.models.stats();
    expect(stats.loads).toBe(2);
    expect(stats.runs).toBeGreaterThanOrEqual(6);
  });

  it('warms every model at start-up when asked, and a job after that loads nothing more', async () => {
    const lines: string[] = [];
    const warmed = await serve({ port: 0, token: TOKEN, warmModels: true, log: (line) => lines.push(line) });
    try {
      for (let i = 0; i < 100 && !lines.some((l) => l.startsWith('models ')); i++) await new Promise((r) => setTimeout(r, 100));
      const installed = (Object.keys(MODEL_FILES) as ModelName[]).filter((name) => existsSync(modelPath(name)));
      expect(installed.slice(0, 2)).toEqual(['joints2d', 'pointRig']);
      expect(lines.find((l) => l.startsWith('models '))).toBe(lines.find((l) => /^models loaded \(.*\) in [\d.]+ s$/.test(l)));
      expect(lines.find((l) => l.startsWith('models '))).toContain(`(${installed.join(', ')})`);
      expect(await warmed.models.stats()).toEqual({ loads: installed.length, runs: 0 });
      const answer = await request(warmed.port, { kind: 'rig', id: 'w', objects: makeHumanoid().map(wirePart) });
      expect(answer.at(-1)).toMatchObject({ kind: 'result' });
      expect(await warmed.models.stats()).toEqual({ loads: installed.length, runs: 2 });
    } finally {
      await warmed.close();
    }
    expect(warmed.models.running).toBe(false);
  });
});
