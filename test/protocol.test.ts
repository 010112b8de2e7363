/**
 * The sidecar server end to end: a real server on a real port, real WebSocket clients.
 * Every message the server sends is checked against protocol.json (validateServerMessage, strict).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { decodeMessage, encodeMessage } from '../shared-schema/codec.js';
import protocol from '../shared-schema/protocol.json' with { type: 'json' };
import { validateServerMessage } from '../shared-schema/validate.js';
import { requestedProviders } from '../sidecar/learned/executionProvider.js';
import { serve, type RunningServer } from '../sidecar/server/serve.js';
import { parseServeArguments } from '../sidecar/server/serveCommand.js';
import type { MeshPart } from '../sidecar/types.js';
import { makeHumanoid } from './fixtures/humanoid.js';

const TOKEN = 'test-token-0123456789abcdef';
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const devRegister = fileURLToPath(new URL('../sidecar/server/devTsRegister.mjs', import.meta.url));

type Message = Record<string, unknown>;

/** A protocol client that keeps every message the server sends, checked against protocol.json. */
class Client {
  readonly received: Message[] = [];
  readonly violations: string[] = [];
  private consumed = new Set<Message>();
  private wake: Array<() => void> = [];
  closeCode: number | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) this.violations.push('the server sent a text frame');
      try {
        const message = decodeMessage(data);
        validateServerMessage(message);
        this.received.push(message);
      } catch (err) {
        this.violations.push((err as Error).message);
      }
      this.notify();
    });
    ws.on('close', (code) => {
      this.closeCode = code;
      this.notify();
    });
  }

  static open(port: number, headers: Record<string, string> = { Authorization: `Bearer ${TOKEN}` }): Promise<Client> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers });
      const client = new Client(ws);
      ws.once('open', () => resolve(client));
      ws.once('error', reject);
    });
  }

  private notify(): void {
    for (const wake of this.wake.splice(0)) wake();
  }

  send(message: Message): void {
    this.ws.send(encodeMessage(message));
  }

  sendRaw(data: Buffer | string): void {
    this.ws.send(data, { binary: typeof data !== 'string' });
  }

  /** The first not-yet-taken message matching `match`, waiting up to `timeoutMs` for it. */
  async next(match: (m: Message) => boolean, timeoutMs = 10_000): Promise<Message> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find((m) => !this.consumed.has(m) && match(m));
      if (found) {
        this.consumed.add(found);
        return found;
      }
      const left = deadline - Date.now();
      if (left <= 0 || this.closeCode !== null) {
        throw new Error(`no matching message within ${timeoutMs} ms (closed: ${this.closeCode}); received ${JSON.stringify(this.received.map(summary))}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The terminal message (result or error) of job `id`. */
  terminal(id: string, timeoutMs = 20_000): Promise<Message> {
    return this.next((m) => m.id === id && (m.kind === 'result' || m.kind === 'error'), timeoutMs);
  }

  /** Send hello and expect its result: proof that the connection still serves. */
  async hello(id: string): Promise<Message> {
    this.send({ kind: 'hello', id, protocol: 1 });
    const reply = await this.next((m) => m.id === id);
    expect(reply).toMatchObject({ kind: 'result', request: 'hello', protocol: 1 });
    return reply;
  }

  close(): void {
    this.ws.terminate();
  }
}

function summary(m: Message): string {
  return `${m.kind}:${m.id}${m.code ? ':' + m.code : ''}${m.stage ? ':' + m.stage : ''}`;
}

/** A part as the wire carries it. */
function wirePart(part: MeshPart): Message {
  return { name: part.name, positions: part.positions, triangles: part.triangles };
}

/** Status of an upgrade attempt with exactly these headers (101 when accepted). */
function upgradeStatus(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/',
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': Buffer.from('0123456789abcdef').toString('base64'),
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Try a TCP connection; resolves with the error code, or 'CONNECTED'. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve('TIMEOUT');
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve('CONNECTED');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'ERROR'));
  });
}

let server: RunningServer;
const logLines: string[] = [];
const clients: Client[] = [];

async function openClient(): Promise<Client> {
  const client = await Client.open(server.port);
  clients.push(client);
  return client;
}

beforeAll(async () => {
  server = await serve({ port: 0, token: TOKEN, log: (line) => logLines.push(line) });
});

afterEach(() => {
  for (const client of clients.splice(0)) {
    expect(client.violations, 'messages that break protocol.json').toEqual([]);
    client.close();
  }
});

afterAll(async () => {
  await server.close();
});

describe('who may connect', () => {
  it('accepts the right token from a loopback client (with or without a loopback Origin)', async () => {
    expect(await upgradeStatus(server.port, { Host: `127.0.0.1:${server.port}`, Authorization: `Bearer ${TOKEN}` })).toBe(101);
    expect(await upgradeStatus(server.port, { Host: `localhost:${server.port}`, Authorization: `Bearer ${TOKEN}`, Origin: 'http://localhost:8080' })).toBe(101);
    expect(await upgradeStatus(server.port, { Host: `[::1]:${server.port}`, Authorization: `bearer ${TOKEN}`, Origin: 'http://[::1]' })).toBe(101);
  });

  it('answers a missing, wrong or malformed token with 401', async () => {
    const host = { Host: `127.0.0.1:${server.port}` };
    expect(await upgradeStatus(server.port, host)).toBe(401);
    expect(await upgradeStatus(server.port, { ...host, Authorization: 'Bearer wrong-token-0123456789abc' })).toBe(401);
    expect(await upgradeStatus(server.port, { ...host, Authorization: `Bearer ${TOKEN}x` })).toBe(401);
    expect(await upgradeStatus(server.port, { ...host, Authorization: `Basic ${TOKEN}` })).toBe(401);
    expect(await upgradeStatus(server.port, { ...host, Authorization: TOKEN })).toBe(401);
    expect(logLines.join('\n')).not.toContain(TOKEN);
  });

  it('answers a foreign Origin or Host with 403, even with the right token', async () => {
    const auth = { Authorization: `Bearer ${TOKEN}` };
    expect(await upgradeStatus(server.port, { ...auth, Host: `127.0.0.1:${server.port}`, Origin: 'https://evil.example' })).toBe(403);
    expect(await upgradeStatus(server.port, { ...auth, Host: `127.0.0.1:${server.port}`, Origin: 'null' })).toBe(403);
    expect(await upgradeStatus(server.port, { ...auth, Host: `127.0.0.1:${server.port}`, Origin: 'http://127.0.0.1.evil.example' })).toBe(403);
    expect(await upgradeStatus(server.port, { ...auth, Host: `evil.example:${server.port}` })).toBe(403);
  });

  it('answers plain HTTP requests with 426 (WebSocket only)', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port: server.port, path: '/' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(status).toBe(426);
  });

  it('refuses the ws client library with a wrong token', async () => {
    await expect(Client.open(server.port, { Authorization: 'Bearer nope-nope-nope-nope' })).rejects.toThrow(/401/);
  });

  it('listens on 127.0.0.1 only: every other address of this machine refuses', async () => {
    const addresses = Object.values(networkInterfaces())
      .flat()
      .filter((info) => info !== undefined && info.address !== '127.0.0.1')
      .map((info) => info!.address);
    const targets = [...new Set([...addresses, '127.0.0.2'])];
    for (const address of targets) {
      expect([address, await tryConnect(address, server.port)]).not.toEqual([address, 'CONNECTED']);
    }
    expect(await tryConnect('127.0.0.1', server.port)).toBe('CONNECTED');
  });
});

describe('hello', () => {
  it('describes the sidecar', async () => {
    const client = await openClient();
    const reply = await client.hello('h1');
    expect(reply).toMatchObject({
      sidecar: JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version,
      templates: ['mixamo22'],
      requests: ['hello', 'rig', 'skin', 'cancel', 'pose.list', 'pose.apply', 'pose.prepare', 'correctives', 'correctives.preview'],
      limits: protocol.limits,
    });
    expect(Array.isArray(reply.models)).toBe(true);
    // The execution provider: the first of the requested order that works (cpu, last resort, on a machine without
    // a GPU); the fallback names exactly the ones before it, each with a reason.
    const order = [...requestedProviders(), 'cpu'];
    const provider = reply.executionProvider as string;
    const fallback = reply.providerFallback as string[];
    expect(order).toContain(provider);
    expect(fallback.map((entry) => entry.split(':')[0])).toEqual(order.slice(0, order.indexOf(provider)));
    for (const entry of fallback) expect(entry).toMatch(/^[a-z]+: \S/);
  });
});

describe('bad messages: an error with a code, and the connection keeps serving', () => {
  const quad = { name: 'Quad', positions: new Float32Array([0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0]), triangles: new Uint32Array([0, 1, 2, 0, 2, 3]) };
  const cases: Array<[string, Buffer | string, string, string | null]> = [
    ['malformed msgpack', Buffer.from([0x82, 0xa4, 0x6b]), 'BAD_MESSAGE', null],
    ['trailing bytes after a map', Buffer.concat([encodeMessage({ kind: 'hello', id: 'x', protocol: 1 }), Buffer.from([0])]), 'BAD_MESSAGE', null],
    ['a list instead of a map', Buffer.from([0x92, 0x01, 0x02]), 'BAD_MESSAGE', null],
    ['a text frame', '{"kind":"hello","id":"t","protocol":1}', 'BAD_MESSAGE', null],
    ['no kind', encodeMessage({ id: 'k1' }), 'BAD_REQUEST', 'k1'],
    ['unknown kind', encodeMessage({ kind: 'dance', id: 'u1' }), 'UNKNOWN_KIND', 'u1'],
    ['a kind not in the protocol', encodeMessage({ kind: 'correctives.train', id: 'u2' }), 'UNKNOWN_KIND', 'u2'],
    ['an unreadable id', encodeMessage({ kind: 'hello', id: 42, protocol: 1 }), 'BAD_REQUEST', null],
    ['another protocol version', encodeMessage({ kind: 'hello', id: 'v1', protocol: 9 }), 'UNSUPPORTED_VERSION', 'v1'],
    ['objects of the wrong type', encodeMessage({ kind: 'rig', id: 'w1', objects: 'body' }), 'BAD_REQUEST', 'w1'],
    ['positions as numbers, not bin', encodeMessage({ kind: 'rig', id: 'w2', objects: [{ ...quad, positions: Array.from(quad.positions) }] }), 'BAD_REQUEST', 'w2'],
    ['positions of 13 bytes', encodeMessage({ kind: 'rig', id: 'a1', objects: [{ ...quad, positions: Buffer.alloc(13) }] }), 'BAD_ARRAY', 'a1'],
    ['triangles of 2 indices', encodeMessage({ kind: 'rig', id: 'a2', objects: [{ ...quad, triangles: new Uint32Array([0, 1]) }] }), 'BAD_ARRAY', 'a2'],
    ['a triangle index out of range', encodeMessage({ kind: 'rig', id: 'i1', objects: [{ ...quad, triangles: new Uint32Array([0, 1, 4]) }] }), 'BAD_INDEX', 'i1'],
    ['a NaN coordinate', encodeMessage({ kind: 'rig', id: 'n1', objects: [{ ...quad, positions: new Float32Array([0, 0, NaN, 1, 0, 0, 1, 1, 0, 0, 1, 0]) }] }), 'BAD_NUMBER', 'n1'],
    ['a bad joint parent', encodeMessage({ kind: 'skin', id: 'j1', objects: [quad], skeleton: { joints: [{ name: 'Hips', parent: 3, head: [0, 0, 0], tail: [0, 0, 1], roll: 0 }] } }), 'BAD_INDEX', 'j1'],
    ['no objects', encodeMessage({ kind: 'rig', id: 'e1', objects: [] }), 'EMPTY_MESH', 'e1'],
  ];

  it.each(cases)('%s → %s', async (_label, frame, code, id) => {
    const client = await openClient();
    client.sendRaw(frame);
    const error = await client.next((m) => m.kind === 'error');
    expect(error).toMatchObject({ code, id });
    expect(typeof error.message).toBe('string');
    await client.hello('after');
  });

  it('answers every bad message of a burst on one connection, in order, then still serves', async () => {
    const client = await openClient();
    for (const [, frame] of cases) client.sendRaw(frame);
    await client.hello('after-burst');
    const errors = client.received.filter((m) => m.kind === 'error');
    expect(errors.map((m) => m.code)).toEqual(cases.map(([, , code]) => code));
  });
});

describe('oversized messages', () => {
  let small: RunningServer;
  beforeAll(async () => {
    small = await serve({ port: 0, token: TOKEN, limits: { maxMessageBytes: 64 * 1024, maxVerticesTotal: 1000 } });
  });
  afterAll(async () => {
    await small.close();
  });

  it('answers a message over maxMessageBytes with TOO_LARGE and keeps serving', async () => {
    const client = await Client.open(small.port);
    clients.push(client);
    client.send({ kind: 'rig', id: 'big', objects: [{ name: 'A', positions: new Float32Array(20_000), triangles: new Uint32Array(3) }] });
    expect(await client.next((m) => m.kind === 'error')).toMatchObject({ id: 'big', code: 'TOO_LARGE' });
    await client.hello('after');
  });

  it('closes only that connection (1009) for a message far over the limit; new connections are served', async () => {
    const client = await Client.open(small.port);
    client.sendRaw(Buffer.alloc(200 * 1024));
    await expect(client.next(() => false, 5000)).rejects.toThrow(/closed: 1009/);
    const next = await Client.open(small.port);
    clients.push(next);
    await next.hello('after');
  });

  it('refuses a mesh over the vertex limit with TOO_LARGE', async () => {
    const client = await Client.open(small.port);
    clients.push(client);
    const positions = new Float32Array((1000 + 1) * 3);
    client.send({ kind: 'rig', id: 'many', objects: [{ name: 'A', positions, triangles: new Uint32Array([0, 1, 2]) }] });
    expect(await client.next((m) => m.kind === 'error')).toMatchObject({ id: 'many', code: 'TOO_LARGE' });
    await client.hello('after');
  });
});

/** The 23 joints of rig's result, in protocol order (without the `mixamorig:` prefix). */
const MIXAMO_JOINTS = [
  'Hips', 'Spine', 'Spine1', 'Spine2', 'Neck', 'Head', 'HeadTop_End',
  'LeftShoulder', 'LeftArm', 'LeftForeArm', 'LeftHand', 'RightShoulder', 'RightArm', 'RightForeArm', 'RightHand',
  'LeftUpLeg', 'LeftLeg', 'LeftFoot', 'LeftToeBase', 'RightUpLeg', 'RightLeg', 'RightFoot', 'RightToeBase',
];

interface WireWeights {
  name: string;
  influences: number;
  indices: Uint8Array;
  weights: Uint8Array;
}

/** Check one object's weights as they came over the wire: #V*k u16 indices into the joints, #V*k f32 weights, rows sum to 1. */
function expectWeightsFor(part: MeshPart, object: WireWeights, jointCount: number): void {
  const vertexCount = part.positions.length / 3;
  expect(object.name).toBe(part.name);
  expect(object.influences).toBe(4);
  expect(object.indices.byteLength).toBe(vertexCount * 4 * 2);
  expect(object.weights.byteLength).toBe(vertexCount * 4 * 4);
  const indices = new Uint16Array(Uint8Array.from(object.indices).buffer);
  const weights = new Float32Array(Uint8Array.from(object.weights).buffer);
  let worstSum = 0;
  for (let v = 0; v < vertexCount; v++) {
    let sum = 0;
    for (let k = 0; k < 4; k++) {
      expect(indices[v * 4 + k]).toBeLessThan(jointCount);
      expect(weights[v * 4 + k]).toBeGreaterThanOrEqual(0);
      sum += weights[v * 4 + k];
    }
    worstSum = Math.max(worstSum, Math.abs(sum - 1));
  }
  expect(worstSum).toBeLessThan(1e-4);
}

// Jobs run in worker threads; from sources each worker loads the pipeline through devTsLoader.mjs (slow when the
// machine is busy), hence the generous timeout.
describe('jobs', { timeout: 60_000 }, () => {
  const humanoid = makeHumanoid();
  /** A big humanoid (~600k vertices, several seconds of work) whose job is sure to be running when cancelled. */
  const bigHumanoid = makeHumanoid({ segments: 192 });

  it('rigs a humanoid: progress first, then one result with 23 joints and weights of the right byte lengths', async () => {
    const client = await openClient();
    const parts = makeHumanoid({ separateParts: true });
    client.send({ kind: 'rig', id: 'r1', objects: parts.map(wirePart) });
    const end = await client.terminal('r1', 30_000);
    const forJob = client.received.filter((m) => m.id === 'r1');
    expect(forJob[0]).toMatchObject({ kind: 'progress', stage: 'start', fraction: 0 });
    expect(forJob.filter((m) => m.kind === 'progress').length).toBeGreaterThan(1);
    expect(forJob.at(-1)).toBe(end);
    expect(forJob.filter((m) => m.kind !== 'progress')).toHaveLength(1);
    expect(end).toMatchObject({ kind: 'result', request: 'rig' });
    const joints = (end.skeleton as { joints: Array<{ name: string; parent: number }> }).joints;
    expect(joints.map((j) => j.name)).toEqual(MIXAMO_JOINTS.map((name) => `mixamorig:${name}`));
    joints.forEach((j, i) => expect(j.parent).toBeLessThan(i));
    // The fixture is Z up, facing -Y, its own left +X.
    const frame = end.frame as Record<string, number[]>;
    expect(frame.up[2]).toBeGreaterThan(0.9);
    expect(frame.forward[1]).toBeLessThan(-0.9);
    expect(frame.left[0]).toBeGreaterThan(0.9);
    expect(['shape', 'convention']).toContain(end.facing);
    const objects = end.objects as unknown as WireWeights[];
    expect(objects).toHaveLength(parts.length);
    parts.forEach((part, p) => expectWeightsFor(part, objects[p], joints.length));
    expect(end.seconds).toBeGreaterThan(0);
    await client.hello('after');
  });

  it('names joints without the prefix when options.prefix is false, and skins with a supplied skeleton', async () => {
    const client = await openClient();
    client.send({ kind: 'rig', id: 'plain', objects: humanoid.map(wirePart), options: { prefix: false } });
    const rig = await client.terminal('plain', 30_000);
    const joints = (rig.skeleton as { joints: Array<Record<string, unknown>> }).joints;
    expect(joints.map((j) => j.name)).toEqual(MIXAMO_JOINTS);
    client.send({ kind: 'skin', id: 'skin', objects: humanoid.map(wirePart), skeleton: { joints } });
    const skin = await client.terminal('skin', 30_000);
    // the skeleton's Mixamo names say which side is left: it is skinned facing as it was rigged (the fixture: -Y)
    expect(skin).toMatchObject({ kind: 'result', request: 'skin', facing: 'rig', forward: [0, -1, 0] });
    expect((skin.skeleton as { joints: unknown[] }).joints).toEqual(joints);
    expectWeightsFor(humanoid[0], (skin.objects as unknown as WireWeights[])[0], joints.length);
  });

  it('turns the frame to options.facing (the fixture turned to face +Y: its left is -X), and refuses a facing along up', async () => {
    const client = await openClient();
    client.send({ kind: 'rig', id: 'f1', objects: humanoid.map(wirePart), options: { facing: [0, 2, 0.1] } });
    const rig = await client.terminal('f1', 30_000);
    expect(rig).toMatchObject({ kind: 'result', request: 'rig', facing: 'option' });
    const frame = rig.frame as Record<string, number[]>;
    expect(frame.forward[1]).toBeGreaterThan(0.9);
    expect(frame.left[0]).toBeLessThan(-0.9);
    expect(frame.up[2]).toBeGreaterThan(0.9);
    const joints = (rig.skeleton as { joints: Array<{ name: string; head: number[] }> }).joints;
    expect(joints.find((j) => j.name === 'mixamorig:LeftHand')!.head[0]).toBeLessThan(-0.3);
    expect(joints.find((j) => j.name === 'mixamorig:RightHand')!.head[0]).toBeGreaterThan(0.3);
    client.send({ kind: 'rig', id: 'f2', objects: humanoid.map(wirePart), options: { facing: [0, 0.1, -1] } });
    expect(await client.terminal('f2', 30_000)).toMatchObject({ kind: 'error', code: 'BAD_REQUEST', message: expect.stringContaining('up') });
    await client.hello('after');
  });

  it("passes the pipeline's own error codes through the worker (an unknown method is BAD_REQUEST)", async () => {
    const client = await openClient();
    client.send({ kind: 'rig', id: 'm1', objects: humanoid.map(wirePart), options: { method: 'telepathy' } });
    expect(await client.terminal('m1')).toMatchObject({ kind: 'error', code: 'BAD_REQUEST', message: expect.stringContaining('telepathy') });
    await client.hello('after');
  });

  it('cancels a running job: CANCELLED within 0.5 s, and nothing else for that id afterwards', async () => {
    const client = await openClient();
    client.send({ kind: 'rig', id: 'long', objects: bigHumanoid.map(wirePart) });
    // Wait until the pipeline itself is at work (a stage past the worker's start), so that cancel stops real work.
    await client.next((m) => m.id === 'long' && m.kind === 'progress' && m.stage !== 'start', 30_000);
    const sent = performance.now();
    client.send({ kind: 'cancel', id: 'long' });
    const end = await client.terminal('long', 2000);
    expect(performance.now() - sent).toBeLessThan(500);
    expect(end).toMatchObject({ kind: 'error', code: 'CANCELLED' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(client.received.slice(client.received.indexOf(end) + 1).filter((m) => m.id === 'long')).toEqual([]);
    await client.hello('after');
  });

  it('cancels a job whose worker is still starting', async () => {
    const client = await openClient();
    client.send({ kind: 'rig', id: 'early', objects: humanoid.map(wirePart) });
    client.send({ kind: 'cancel', id: 'early' });
    const sent = performance.now();
    expect(await client.terminal('early', 2000)).toMatchObject({ code: 'CANCELLED' });
    expect(performance.now() - sent).toBeLessThan(500);
    await client.hello('after');
    expect(client.received.filter((m) => m.id === 'early')).toHaveLength(1);
  });

  it('refuses a second job with the id of a running one (DUPLICATE_ID); the id is free again once it ends', async () => {
    const client = await openClient();
    client.send({ kind: 'rig', id: 'dup', objects: bigHumanoid.map(wirePart) });
    client.send({ kind: 'rig', id: 'dup', objects: humanoid.map(wirePart) });
    expect(await client.next((m) => m.id === 'dup' && m.kind === 'error')).toMatchObject({ code: 'DUPLICATE_ID' });
    client.send({ kind: 'cancel', id: 'dup' });
    expect(await client.terminal('dup', 2000)).toMatchObject({ code: 'CANCELLED' });
    client.send({ kind: 'hello', id: 'dup', protocol: 1 });
    expect(await client.next((m) => m.id === 'dup')).toMatchObject({ kind: 'result', request: 'hello' });
  });

  it('ignores a cancel for a job that is not running (no reply of its own)', async () => {
    const client = await openClient();
    client.send({ kind: 'cancel', id: 'nothing' });
    await client.hello('after');
    expect(client.received.filter((m) => m.id === 'nothing')).toEqual([]);
  });

  it('keeps clients apart: the same id on two connections, cancel on one leaves the other', async () => {
    const a = await openClient();
    const b = await openClient();
    a.send({ kind: 'rig', id: 'same', objects: bigHumanoid.map(wirePart) });
    b.send({ kind: 'rig', id: 'same', objects: humanoid.map(wirePart) });
    await a.hello('a-accepted');
    await b.hello('b-accepted');
    a.send({ kind: 'cancel', id: 'same' });
    expect(await a.terminal('same', 2000)).toMatchObject({ code: 'CANCELLED' });
    expect(await b.terminal('same', 30_000)).toMatchObject({ kind: 'result', request: 'rig' });
    expect(a.received.filter((m) => m.id === 'b-accepted')).toEqual([]);
    expect(b.received.filter((m) => m.id === 'a-accepted')).toEqual([]);
  });

  it("stops a connection's running jobs when it closes", async () => {
    const client = await openClient();
    client.send({ kind: 'rig', id: 'orphan', objects: bigHumanoid.map(wirePart) });
    await client.hello('accepted');
    const before = logLines.length;
    client.ws.close();
    await expect.poll(() => logLines.slice(before).join('\n'), { timeout: 2000 }).toMatch(/stopping 1 running job\(s\): orphan/);
  });
});

/** `autorig serve` as a child process, run from the TypeScript sources. */
function startServeProcess(env: NodeJS.ProcessEnv, args: string[] = ['--port', '0']): ChildProcessWithoutNullStreams {
  const script = `import('./sidecar/server/serveCommand.ts').then((m) => m.runServeCommand(${JSON.stringify(args)}))`;
  return spawn(process.execPath, ['--import', devRegister, '--input-type=module', '-e', script], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

interface ChildRun {
  stdout: string;
  stderr: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  ready: Promise<{ event: string; port: number; protocol: number }>;
}

function watch(child: ChildProcessWithoutNullStreams): ChildRun {
  const run = { stdout: '', stderr: '' } as ChildRun;
  let onReady: (line: string) => void = () => {};
  run.ready = new Promise((resolve, reject) => {
    onReady = (line) => resolve(JSON.parse(line));
    child.once('exit', () => reject(new Error(`exited before ready: ${run.stderr}`)));
  });
  run.ready.catch(() => {});
  child.stdout.on('data', (chunk) => {
    run.stdout += chunk;
    const newline = run.stdout.indexOf('\n');
    if (newline >= 0) onReady(run.stdout.slice(0, newline));
  });
  child.stderr.on('data', (chunk) => (run.stderr += chunk));
  run.exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return run;
}

describe('autorig serve (child process)', { timeout: 30_000 }, () => {
  it('prints one ready line, serves, and exits 0 on SIGTERM even with a job running', async () => {
    const child = startServeProcess({ AUTORIG_TOKEN: TOKEN });
    const run = watch(child);
    const ready = await run.ready;
    expect(ready).toEqual({ event: 'ready', port: ready.port, protocol: 1 });
    expect(ready.port).toBeGreaterThan(0);
    const client = await Client.open(ready.port);
    clients.push(client);
    await client.hello('h');
    client.send({ kind: 'rig', id: 'busy', objects: makeHumanoid({ segments: 64 }).map(wirePart) });
    const signalled = performance.now();
    child.kill('SIGTERM');
    expect(await run.exit).toEqual({ code: 0, signal: null });
    expect(performance.now() - signalled).toBeLessThan(3000);
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).not.toContain(TOKEN);
  });

  it('exits 0 when its stdin closes (the parent went away)', async () => {
    const child = startServeProcess({ AUTORIG_TOKEN: TOKEN });
    const run = watch(child);
    await run.ready;
    child.stdin.end();
    expect(await run.exit).toEqual({ code: 0, signal: null });
    expect(run.stderr).toContain('stdin closed');
  });

  it('refuses to start without AUTORIG_TOKEN or with a short one (exit 2, a message on stderr, nothing on stdout)', async () => {
    const runs = [{}, { AUTORIG_TOKEN: 'short' }].map((env) => watch(startServeProcess(env)));
    for (const run of runs) {
      expect((await run.exit).code).toBe(2);
      expect(run.stderr).toContain('AUTORIG_TOKEN');
      expect(run.stdout).toBe('');
    }
  });

  it('refuses unknown arguments and bad ports (exit 2)', async () => {
    const run = watch(startServeProcess({ AUTORIG_TOKEN: TOKEN }, ['--bogus']));
    expect((await run.exit).code).toBe(2);
    expect(run.stderr).toMatch(/unknown argument '--bogus'/);
    for (const args of [['--port', 'x'], ['--port', '70000'], ['--port'], ['--port=-1']]) {
      expect(() => parseServeArguments(args), args.join(' ')).toThrow(/--port needs a number/);
    }
    expect(parseServeArguments(['--port=8123'])).toEqual({ port: 8123, warmUp: true });
    expect(parseServeArguments([])).toEqual({ port: 0, warmUp: true });
    expect(parseServeArguments(['--no-warm-up', '--port', '9'])).toEqual({ port: 9, warmUp: false });
  });
});

describe('hardening (issue 4)', { timeout: 60_000 }, () => {
  it('answers a big message with a stray byte after it at once (BAD_MESSAGE), not after seconds of work', async () => {
    // msgpackr's own trailing-bytes error stringified the whole decoded value: ~1 s and 100 MB per 3 MB of message.
    const client = await openClient();
    const big = encodeMessage({ kind: 'rig', id: 'tail', objects: [{ name: 'A', positions: new Float32Array(12_000_000), triangles: new Uint32Array(3) }] });
    client.sendRaw(Buffer.concat([big, Buffer.of(0xc0)]));
    expect(await client.next((m) => m.kind === 'error', 10_000)).toMatchObject({ code: 'BAD_MESSAGE', id: null });
    await client.hello('after');
  });

  it('runs two clients\' jobs side by side, each getting the result for its own mesh (no cross-talk)', async () => {
    const pair = await serve({ port: 0, token: TOKEN, jobSlots: 2 });
    try {
      const a = await Client.open(pair.port);
      const b = await Client.open(pair.port);
      clients.push(a, b);
      // Different meshes: different vertex counts, and b's stands 3 m to the side (+X).
      const meshA = makeHumanoid({ segments: 8 });
      const meshB = makeHumanoid({ segments: 12 }).map((part) => ({ ...part, positions: part.positions.map((x, i) => (i % 3 === 0 ? x + 3 : x)) }));
      // One timeline of what both clients hear, to see that the two jobs overlapped.
      const timeline: string[] = [];
      for (const [name, client] of [['a', a], ['b', b]] as const) {
        client.ws.on('message', (data: Buffer) => {
          const m = decodeMessage(data);
          timeline.push(`${name}:${String(m.kind)}${m.kind === 'progress' && m.stage !== 'start' ? ':stage' : ''}`);
        });
      }
      a.send({ kind: 'rig', id: 'same', objects: meshA.map(wirePart) });
      b.send({ kind: 'rig', id: 'same', objects: meshB.map(wirePart) });
      const [resultA, resultB] = await Promise.all([a.terminal('same', 60_000), b.terminal('same', 60_000)]);
      for (const [result, mesh, x] of [[resultA, meshA, 0], [resultB, meshB, 3]] as const) {
        expect(result).toMatchObject({ kind: 'result', request: 'rig' });
        const joints = (result.skeleton as { joints: Array<{ head: number[] }> }).joints;
        expect(Math.abs(joints[0].head[0] - x), 'the hips stand where this client\'s mesh stands').toBeLessThan(0.2);
        expectWeightsFor(mesh[0], (result.objects as unknown as WireWeights[])[0], joints.length);
      }
      // Both ran at once: each pipeline reported a stage before either result arrived.
      const firstResult = Math.min(timeline.indexOf('a:result'), timeline.indexOf('b:result'));
      expect(timeline.indexOf('a:progress:stage')).toBeLessThan(firstResult);
      expect(timeline.indexOf('b:progress:stage')).toBeLessThan(firstResult);
      expect(timeline.indexOf('a:progress:stage')).toBeGreaterThanOrEqual(0);
      expect(timeline.indexOf('b:progress:stage')).toBeGreaterThanOrEqual(0);
      expect(a.received.filter((m) => m.id === 'same' && m.kind !== 'progress')).toHaveLength(1);
      expect(b.received.filter((m) => m.id === 'same' && m.kind !== 'progress')).toHaveLength(1);
    } finally {
      await pair.close();
    }
  });

  it('runs at most jobSlots jobs at once: the others wait, start in turn, and can be cancelled while waiting', async () => {
    const lines: string[] = [];
    const single = await serve({ port: 0, token: TOKEN, jobSlots: 1, log: (line) => lines.push(line) });
    try {
      const client = await Client.open(single.port);
      clients.push(client);
      const bigHumanoid = makeHumanoid({ segments: 192 });
      client.send({ kind: 'rig', id: 'first', objects: bigHumanoid.map(wirePart) });
      client.send({ kind: 'rig', id: 'second', objects: makeHumanoid().map(wirePart) });
      client.send({ kind: 'rig', id: 'third', objects: makeHumanoid().map(wirePart) });
      await client.next((m) => m.id === 'first' && m.kind === 'progress' && m.stage !== 'start', 30_000);
      expect(lines.join('\n')).toMatch(/rig 'third' accepted \(1 objects; 1 running, 2 waiting\)/);
      // While 'first' runs, the waiting ones have not started: no progress for them.
      expect(client.received.filter((m) => m.id !== 'first' && m.kind === 'progress')).toEqual([]);
      const sent = performance.now();
      client.send({ kind: 'cancel', id: 'second' });
      expect(await client.terminal('second', 2000)).toMatchObject({ code: 'CANCELLED' });
      expect(performance.now() - sent).toBeLessThan(500);
      client.send({ kind: 'cancel', id: 'first' });
      expect(await client.terminal('first', 2000)).toMatchObject({ code: 'CANCELLED' });
      // The slot is free: 'third' starts and finishes; 'second' never ran.
      expect(await client.terminal('third', 30_000)).toMatchObject({ kind: 'result', request: 'rig' });
      expect(client.received.filter((m) => m.id === 'second')).toHaveLength(1);
    } finally {
      await single.close();
    }
  });

  it('never shows the token: not in stdout, stderr, replies, refusals or the command line, over a whole session', async () => {
    const child = startServeProcess({ AUTORIG_TOKEN: TOKEN });
    const run = watch(child);
    const ready = await run.ready;
    const port = ready.port;
    expect(readFileSync(`/proc/${child.pid}/cmdline`, 'utf8')).not.toContain(TOKEN);
    const rawReplies: Buffer[] = [];
    const client = await Client.open(port);
    clients.push(client);
    client.ws.on('message', (data: Buffer) => rawReplies.push(Buffer.from(data)));
    // Good requests, errors of every layer, a job, a cancelled job, and a job left running when the client goes.
    await client.hello('tok-hello');
    client.sendRaw(Buffer.from([0x82, 0xa4]));
    client.sendRaw('a text frame');
    client.send({ kind: 'dance', id: 'tok-kind' });
    client.send({ kind: 'rig', id: 'tok-rig', objects: makeHumanoid({ segments: 4 }).map(wirePart) });
    expect(await client.terminal('tok-rig', 30_000)).toMatchObject({ kind: 'result' });
    client.send({ kind: 'rig', id: 'tok-cancel', objects: makeHumanoid({ segments: 4 }).map(wirePart) });
    client.send({ kind: 'cancel', id: 'tok-cancel' });
    expect(await client.terminal('tok-cancel')).toMatchObject({ code: 'CANCELLED' });
    const leaving = await Client.open(port);
    leaving.send({ kind: 'rig', id: 'tok-orphan', objects: makeHumanoid({ segments: 4 }).map(wirePart) });
    leaving.close();
    // Refused upgrades, the token offered the wrong ways.
    const host = { Host: `127.0.0.1:${port}` };
    const refusals: Array<[Record<string, string>, string, number]> = [
      [{ ...host, Authorization: `Bearer ${TOKEN.slice(0, -1)}` }, '/', 401],
      [{ ...host, Authorization: `Basic ${TOKEN}` }, '/', 401],
      [{ ...host }, `/?token=${TOKEN}`, 401],
      [{ ...host, Authorization: `Bearer ${TOKEN}` }, `/${TOKEN}`, 404],
      [{ ...host, Authorization: `Bearer ${TOKEN}`, Origin: `https://${TOKEN}.example` }, '/', 403],
      [{ Host: `${TOKEN}.example`, Authorization: `Bearer ${TOKEN}` }, '/', 403],
    ];
    for (const [headers, path, status] of refusals) {
      const answer = await upgradeAnswer(port, headers, path);
      expect(answer.status, path).toBe(status);
      expect(answer.raw, `the ${status} answer`).not.toContain(TOKEN);
    }
    child.kill('SIGTERM');
    expect(await run.exit).toEqual({ code: 0, signal: null });
    // The session really happened (the log is not empty), and the token is nowhere in it.
    expect(run.stderr).toMatch(/refused a connection .* 404/);
    expect(run.stderr).toMatch(/rig 'tok-rig' done/);
    expect(run.stderr).toMatch(/stopping 1 running job\(s\): tok-orphan|'tok-orphan'/);
    expect(run.stdout + run.stderr).not.toContain(TOKEN);
    const replies = Buffer.concat(rawReplies);
    expect(replies.length).toBeGreaterThan(0);
    expect(replies.includes(Buffer.from(TOKEN))).toBe(false);
    expect(client.received.find((m) => m.id === 'tok-kind')).toMatchObject({ code: 'UNKNOWN_KIND' });
  });
});

/** The status and the raw text of the answer to an upgrade attempt. */
function upgradeAnswer(port: number, headers: Record<string, string>, path: string): Promise<{ status: number; raw: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let raw = '';
    socket.on('data', (chunk) => (raw += chunk.toString('latin1')));
    socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0), raw }));
    socket.on('error', reject);
    const lines = [`GET ${path} HTTP/1.1`, 'Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${Buffer.from('0123456789abcdef').toString('base64')}`];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}
