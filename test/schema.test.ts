/**
 * shared-schema/validate.ts and codec.ts: the type language of protocol.json, the request checks, and the wire format
 * a Python peer reads.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeMessage } from '../shared-schema/codec.js';
import protocol from '../shared-schema/protocol.json' with { type: 'json' };
import { protocolLimits, readMessageId, validateRequest, validateServerMessage, type RigRequest, type SkinRequest } from '../shared-schema/validate.js';
import { AutoRigError } from '../sidecar/errors.js';
import { buildMixamoSkeleton, MIXAMO_JOINTS, type MixamoJointName } from '../sidecar/skeleton/mixamoTemplate.js';
import type { Vec3 } from '../sidecar/types.js';
import { makeHumanoid } from './fixtures/humanoid.js';

/** Bytes of a typed array as msgpack would carry them (a Buffer view, like msgpackr's decoded bin). */
function bin(array: ArrayBufferView): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}

/** A rig request as it arrives decoded: bins are Buffers. */
function rigMessage(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'rig',
    id: 'r1',
    objects: [
      {
        name: 'Quad',
        positions: bin(new Float32Array([0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0])),
        triangles: bin(new Uint32Array([0, 1, 2, 0, 2, 3])),
      },
    ],
    ...overrides,
  };
}

function joint(name: string, parent: number, z: number) {
  return { name, parent, head: [0, 0, z], tail: [0, 0, z + 0.1], roll: 0 };
}

function skinMessage(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...rigMessage(),
    kind: 'skin',
    id: 's1',
    skeleton: { joints: [joint('Hips', -1, 0), joint('Spine', 0, 0.1), joint('Head', 1, 0.2)] },
    ...overrides,
  };
}

/** Auto Rig's 23-joint skeleton on a 1.8-unit T-posed figure (Y up, facing +Z), as a correctives request carries it. */
function tPoseSkeleton(): { joints: Record<string, unknown>[] } {
  const heads: Record<MixamoJointName, Vec3> = {
    Hips: [0, 1, 0], Spine: [0, 1.1, 0], Spine1: [0, 1.2, 0], Spine2: [0, 1.3, 0], Neck: [0, 1.5, 0], Head: [0, 1.6, 0],
    HeadTop_End: [0, 1.8, 0],
    LeftShoulder: [0.05, 1.45, 0], LeftArm: [0.2, 1.45, 0], LeftForeArm: [0.45, 1.45, 0], LeftHand: [0.7, 1.45, 0],
    RightShoulder: [-0.05, 1.45, 0], RightArm: [-0.2, 1.45, 0], RightForeArm: [-0.45, 1.45, 0], RightHand: [-0.7, 1.45, 0],
    LeftUpLeg: [0.1, 0.95, 0], LeftLeg: [0.1, 0.5, 0], LeftFoot: [0.1, 0.08, 0], LeftToeBase: [0.1, 0, 0.12],
    RightUpLeg: [-0.1, 0.95, 0], RightLeg: [-0.1, 0.5, 0], RightFoot: [-0.1, 0.08, 0], RightToeBase: [-0.1, 0, 0.12],
  };
  const skeleton = buildMixamoSkeleton(heads, {}, { up: [0, 1, 0], forward: [0, 0, 1] }, true);
  return { joints: skeleton.joints.map((joint) => ({ ...joint })) };
}

function identityRotations(joints: number): Float32Array {
  const rotations = new Float32Array(joints * 9);
  for (let j = 0; j < joints; j++) rotations[j * 9] = rotations[j * 9 + 4] = rotations[j * 9 + 8] = 1;
  return rotations;
}

/** One influence per vertex of the quad, all on joint 0. */
function quadWeights(): Record<string, unknown>[] {
  return [{ name: 'Quad', influences: 1, indices: bin(new Uint16Array([0, 0, 0, 0])), weights: bin(new Float32Array([1, 1, 1, 1])) }];
}

/** The AutoRigError code validateRequest throws for a message. */
function codeOf(message: Record<string, unknown>): string {
  try {
    validateRequest(message);
  } catch (err) {
    if (err instanceof AutoRigError) return err.code;
    throw err;
  }
  return 'OK';
}

describe('validateRequest', () => {
  it('reads a rig request into typed arrays that own their memory', () => {
    const request = validateRequest(rigMessage({ options: { prefix: false } })) as RigRequest;
    expect(request.kind).toBe('rig');
    expect(request.options).toEqual({ prefix: false });
    const part = request.objects[0];
    expect(part.positions).toBeInstanceOf(Float32Array);
    expect(part.triangles).toBeInstanceOf(Uint32Array);
    expect(Array.from(part.positions.subarray(3, 6))).toEqual([1, 0, 0]);
    expect(Array.from(part.triangles)).toEqual([0, 1, 2, 0, 2, 3]);
    expect(part.positions.byteOffset).toBe(0);
    expect(part.positions.buffer.byteLength).toBe(part.positions.byteLength);
  });

  it('copies bins that start at an odd byte offset', () => {
    const values = new Float32Array([0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4.5]);
    const shifted = Buffer.alloc(values.byteLength + 1);
    Buffer.from(values.buffer).copy(shifted, 1);
    const positions = shifted.subarray(1);
    expect(positions.byteOffset % 4).not.toBe(0);
    const request = validateRequest(
      rigMessage({ objects: [{ name: 'A', positions, triangles: bin(new Uint32Array([0, 1, 2, 1, 2, 3])) }] }),
    ) as RigRequest;
    expect(Array.from(request.objects[0].positions)).toEqual(Array.from(values));
  });

  it('reads a skin request with locked groups', () => {
    const locked = [{ object: 0, bone: 'Spine', weights: bin(new Float32Array([0, 0.5, 1, 0.25])) }];
    const request = validateRequest(skinMessage({ locked })) as SkinRequest;
    expect(request.skeleton.joints.map((j) => j.parent)).toEqual([-1, 0, 1]);
    expect(request.skeleton.joints[2].tail).toEqual([0, 0, 0.2 + 0.1]);
    expect(Array.from(request.locked[0].weights)).toEqual([0, 0.5, 1, 0.25]);
    expect(request.locked[0].weights).toBeInstanceOf(Float32Array);
  });

  it('accepts nil for optional fields and ignores unknown ones (newer clients)', () => {
    const request = validateRequest(rigMessage({ options: null, extra: 1 })) as RigRequest;
    expect(request.options).toEqual({});
    expect(validateRequest({ kind: 'hello', id: 'h', protocol: 1, client: 'blender 3.4' })).toEqual({
      kind: 'hello',
      id: 'h',
      protocol: 1,
      client: 'blender 3.4',
    });
  });

  it('accepts uint64-encoded integers (bigint after decoding) within range', () => {
    expect(validateRequest({ kind: 'hello', id: 'h', protocol: 1n })).toMatchObject({ protocol: 1 });
  });

  const f32 = (...v: number[]) => bin(new Float32Array(v));
  const u32 = (...v: number[]) => bin(new Uint32Array(v));
  const quad = [0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0];
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['no kind', { id: 'x' }, 'BAD_REQUEST'],
    ['kind not a string', { kind: 3, id: 'x' }, 'BAD_REQUEST'],
    ['unknown kind', { kind: 'dance', id: 'x' }, 'UNKNOWN_KIND'],
    ['a kind not in the protocol', { kind: 'correctives.train', id: 'x' }, 'UNKNOWN_KIND'],
    ['a server event sent by the client', { kind: 'result', id: 'x', request: 'rig' }, 'UNKNOWN_KIND'],
    ['hello of another protocol', { kind: 'hello', id: 'h', protocol: 2 }, 'UNSUPPORTED_VERSION'],
    ['hello protocol negative', { kind: 'hello', id: 'h', protocol: -1 }, 'BAD_REQUEST'],
    ['hello protocol a float', { kind: 'hello', id: 'h', protocol: 1.5 }, 'BAD_REQUEST'],
    ['id missing', { kind: 'hello', protocol: 1 }, 'BAD_REQUEST'],
    ['id a number', { kind: 'hello', id: 7, protocol: 1 }, 'BAD_REQUEST'],
    ['id empty', { kind: 'hello', id: '', protocol: 1 }, 'BAD_REQUEST'],
    ['id too long', { kind: 'hello', id: 'x'.repeat(65), protocol: 1 }, 'BAD_REQUEST'],
    ['objects not a list', rigMessage({ objects: { a: 1 } }), 'BAD_REQUEST'],
    ['positions as a list of numbers', rigMessage({ objects: [{ name: 'A', positions: quad, triangles: u32(0, 1, 2) }] }), 'BAD_REQUEST'],
    ['name too long', rigMessage({ objects: [{ name: 'n'.repeat(64), positions: f32(...quad), triangles: u32(0, 1, 2) }] }), 'BAD_REQUEST'],
    ['positions 13 bytes', rigMessage({ objects: [{ name: 'A', positions: Buffer.alloc(13), triangles: u32(0, 1, 2) }] }), 'BAD_ARRAY'],
    ['positions 2 floats', rigMessage({ objects: [{ name: 'A', positions: f32(1, 2), triangles: u32(0, 1, 2) }] }), 'BAD_ARRAY'],
    ['triangles 2 indices', rigMessage({ objects: [{ name: 'A', positions: f32(...quad), triangles: u32(0, 1) }] }), 'BAD_ARRAY'],
    ['triangle index = #V', rigMessage({ objects: [{ name: 'A', positions: f32(...quad), triangles: u32(0, 1, 4) }] }), 'BAD_INDEX'],
    ['NaN coordinate', rigMessage({ objects: [{ name: 'A', positions: f32(...quad.slice(0, 11), NaN), triangles: u32(0, 1, 2) }] }), 'BAD_NUMBER'],
    ['infinite coordinate', rigMessage({ objects: [{ name: 'A', positions: f32(Infinity, ...quad.slice(1)), triangles: u32(0, 1, 2) }] }), 'BAD_NUMBER'],
    ['no objects', rigMessage({ objects: [] }), 'EMPTY_MESH'],
    ['no triangles', rigMessage({ objects: [{ name: 'A', positions: f32(...quad), triangles: u32() }] }), 'EMPTY_MESH'],
    ['three vertices', rigMessage({ objects: [{ name: 'A', positions: f32(0, 0, 0, 1, 0, 0, 0, 1, 0), triangles: u32(0, 1, 2) }] }), 'EMPTY_MESH'],
    ['65 objects', rigMessage({ objects: Array.from({ length: 65 }, () => ({ name: 'A', positions: f32(...quad), triangles: u32(0, 1, 2) })) }), 'TOO_LARGE'],
    ['prefix not a bool', rigMessage({ options: { prefix: 'yes' } }), 'BAD_REQUEST'],
    ['skin without a skeleton', { ...skinMessage(), skeleton: undefined }, 'BAD_REQUEST'],
    ['skin with no joints', skinMessage({ skeleton: { joints: [] } }), 'BAD_SKELETON'],
    ['joint parent out of range', skinMessage({ skeleton: { joints: [joint('Hips', -1, 0), joint('Spine', 5, 0.1)] } }), 'BAD_INDEX'],
    ['joint parent below -1', skinMessage({ skeleton: { joints: [joint('Hips', -2, 0)] } }), 'BAD_INDEX'],
    ['joint parent after the child', skinMessage({ skeleton: { joints: [joint('Hips', 1, 0), joint('Spine', 0, 0.1)] } }), 'BAD_SKELETON'],
    ['joint its own parent', skinMessage({ skeleton: { joints: [joint('Hips', -1, 0), joint('Spine', 1, 0.1)] } }), 'BAD_SKELETON'],
    ['two joints of one name', skinMessage({ skeleton: { joints: [joint('Hips', -1, 0), joint('Hips', 0, 0.1)] } }), 'BAD_SKELETON'],
    ['joint head of 2 numbers', skinMessage({ skeleton: { joints: [{ ...joint('Hips', -1, 0), head: [0, 0] }] } }), 'BAD_REQUEST'],
    ['joint head NaN', skinMessage({ skeleton: { joints: [{ ...joint('Hips', -1, 0), head: [0, NaN, 0] }] } }), 'BAD_NUMBER'],
    ['joint roll infinite', skinMessage({ skeleton: { joints: [{ ...joint('Hips', -1, 0), roll: -Infinity }] } }), 'BAD_NUMBER'],
    ['257 joints', skinMessage({ skeleton: { joints: Array.from({ length: 257 }, (_, i) => joint(`J${i}`, i - 1, i)) } }), 'TOO_LARGE'],
    ['locked object out of range', skinMessage({ locked: [{ object: 1, bone: 'Hips', weights: f32(0, 0, 0, 0) }] }), 'BAD_INDEX'],
    ['locked weights wrong length', skinMessage({ locked: [{ object: 0, bone: 'Hips', weights: f32(0, 0, 0) }] }), 'BAD_ARRAY'],
    ['locked weight above 1', skinMessage({ locked: [{ object: 0, bone: 'Hips', weights: f32(0, 0, 2, 0) }] }), 'BAD_REQUEST'],
    ['locked weight NaN', skinMessage({ locked: [{ object: 0, bone: 'Hips', weights: f32(0, NaN, 0, 0) }] }), 'BAD_NUMBER'],
    ['locked bone not in the skeleton', skinMessage({ locked: [{ object: 0, bone: 'Tail', weights: f32(0, 0, 0, 0) }] }), 'BAD_REQUEST'],
    ['cancel without id', { kind: 'cancel' }, 'BAD_REQUEST'],
  ];
  it.each(cases)('%s → %s', (_label, message, code) => {
    expect(codeOf(message)).toBe(code);
  });

  it('refuses more vertices than the limit with TOO_LARGE', () => {
    const limits = { ...protocolLimits, maxVerticesTotal: 100 };
    const [body] = makeHumanoid({ segments: 8 });
    expect(() => validateRequest(rigMessage({ objects: [{ name: 'Body', positions: bin(body.positions), triangles: bin(body.triangles) }] }), limits)).toThrow(
      expect.objectContaining({ code: 'TOO_LARGE' }),
    );
  });

  it('reads the id of a message for error replies only when it is a usable id', () => {
    expect(readMessageId({ kind: 'rig', id: 'abc' })).toBe('abc');
    expect(readMessageId({ kind: 'rig', id: 5 })).toBeNull();
    expect(readMessageId({ kind: 'rig', id: 'x'.repeat(65) })).toBeNull();
    expect(readMessageId([1, 2])).toBeNull();
  });
});

describe('validateServerMessage', () => {
  const result = () => ({
    kind: 'result',
    id: 'r1',
    request: 'rig',
    skeleton: { joints: [joint('Hips', -1, 0)] },
    frame: { up: [0, 0, 1], forward: [0, -1, 0], left: [1, 0, 0] },
    facing: 'shape',
    objects: [{ name: 'Body', influences: 4, indices: new Uint16Array(8), weights: new Float32Array(8) }],
    seconds: 0.5,
  });

  it('accepts a rig result exactly as protocol.json describes it', () => {
    expect(validateServerMessage(result())).toMatchObject({ kind: 'result', id: 'r1', seconds: 0.5 });
  });

  it('reads bins of k = influences values per vertex, from typed arrays or decoded bytes', () => {
    const decoded = decodeMessage(encodeMessage(result()));
    const checked = validateServerMessage(decoded) as { objects: Array<{ indices: Uint16Array; weights: Float32Array }> };
    expect(checked.objects[0].indices).toBeInstanceOf(Uint16Array);
    expect(checked.objects[0].weights.length).toBe(8);
    const bad = result();
    bad.objects[0].weights = new Float32Array(6);
    expect(() => validateServerMessage(bad)).toThrow(expect.objectContaining({ code: 'BAD_ARRAY' }));
  });

  it('refuses missing and extra fields', () => {
    const missing: Record<string, unknown> = result();
    delete missing.frame;
    expect(() => validateServerMessage(missing)).toThrow(/frame is missing/);
    expect(() => validateServerMessage({ ...result(), debug: 1 })).toThrow(/debug is not a field/);
    expect(() => validateServerMessage({ kind: 'progress', id: 'r1', stage: 'x' })).toThrow(/fraction is missing/);
  });

  it('accepts errors with a nil id', () => {
    expect(validateServerMessage({ kind: 'error', id: null, code: 'BAD_MESSAGE', message: 'm' })).toMatchObject({ id: null });
  });
});

describe('codec', () => {
  it('packs typed arrays as plain bin of their little-endian bytes (the view only)', () => {
    const floats = new Float32Array([9, 1, 2, 9]).subarray(1, 3);
    expect(encodeMessage({ a: floats }).toString('hex')).toBe('81a161c4080000803f00000040');
    expect(encodeMessage({ i: new Uint16Array([1, 258]) }).toString('hex')).toBe('81a169c40401000201');
    expect(encodeMessage({ t: new Uint32Array([7]) }).toString('hex')).toBe('81a174c40407000000');
  });

  it('packs absent values as nil, never as an extension type', () => {
    expect(encodeMessage({ id: undefined }).toString('hex')).toBe('81a26964c0');
  });

  it('refuses bytes that are not exactly one msgpack map with BAD_MESSAGE', () => {
    for (const hex of ['82a4', '920102', 'a3616263', '81a46b696e64a568656c6c6f00', 'c1', 'd6ff00000001', '']) {
      expect(() => decodeMessage(Buffer.from(hex, 'hex')), hex).toThrow(expect.objectContaining({ code: 'BAD_MESSAGE' }));
    }
  });

  const pythonDecoder = new URL('../blender_addon/msgpack.py', import.meta.url);
  it.runIf(existsSync(pythonDecoder))("is read by the add-on's standard-library msgpack decoder", () => {
    const message = encodeMessage({
      kind: 'result',
      id: 'r1',
      objects: [{ name: 'Body', influences: 4, indices: new Uint16Array([0, 1, 2, 3]), weights: new Float32Array([0.5, 0.25, 0.25, 0]) }],
      seconds: 1.5,
    });
    const script = [
      'import sys, array, json',
      'sys.path.insert(0, sys.argv[1])',
      'import msgpack',
      'm = msgpack.unpackb(sys.stdin.buffer.read())',
      'o = m["objects"][0]',
      'assert isinstance(o["indices"], (bytes, bytearray)), type(o["indices"])',
      'i = array.array("H"); i.frombytes(o["indices"])',
      'w = array.array("f"); w.frombytes(o["weights"])',
      'print(json.dumps([m["kind"], m["id"], o["name"], o["influences"], list(i), list(w), m["seconds"]]))',
    ].join('\n');
    const out = execFileSync('/usr/bin/python3', ['-c', script, new URL('../blender_addon/', import.meta.url).pathname], { input: message });
    expect(JSON.parse(out.toString())).toEqual(['result', 'r1', 'Body', 4, [0, 1, 2, 3], [0.5, 0.25, 0.25, 0], 1.5]);
  });

});

describe('protocol coverage', () => {
  it('validates a well-formed message of every request kind protocol.json names', () => {
    const valid: Record<string, Record<string, unknown>> = {
      hello: { kind: 'hello', id: 'h', protocol: 1 },
      rig: rigMessage(),
      skin: skinMessage(),
      cancel: { kind: 'cancel', id: 'r1' },
      'pose.list': { kind: 'pose.list', id: 'pl' },
      'pose.apply': { kind: 'pose.apply', id: 'pa', objects: rigMessage().objects, pose: 'elbowBentLf', strength: 1, strategy: 'mean' },
      'pose.prepare': { kind: 'pose.prepare', id: 'pp', objects: rigMessage().objects },
      correctives: { ...rigMessage(), kind: 'correctives', id: 'c', skeleton: tPoseSkeleton(), weights: quadWeights() },
      'correctives.preview': {
        ...rigMessage(),
        kind: 'correctives.preview',
        id: 'cp',
        skeleton: tPoseSkeleton(),
        weights: quadWeights(),
        rotations: bin(identityRotations(MIXAMO_JOINTS.length)),
      },
    };
    for (const kind of Object.keys(protocol.requests)) {
      expect(valid[kind], `no sample for request '${kind}'`).toBeDefined();
      expect(validateRequest(valid[kind]).kind).toBe(kind);
    }
  });
});
