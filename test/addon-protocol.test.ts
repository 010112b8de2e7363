/**
 * The Blender add-on and the sidecar cannot drift apart: blender_addon/protocol.py is exactly what the generator
 * makes of protocol.json, and every request the add-on builds (Python) passes the sidecar's own validator.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Unpackr } from 'msgpackr';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeMessage } from '../shared-schema/codec.js';
import { loadSchema, protocolPyPath, pythonLiteral, renderProtocolPy, upperSnake } from '../shared-schema/generatePython.js';
import { validateRequest } from '../shared-schema/validate.js';

const PYTHON = '/usr/bin/python3';
const tmp = mkdtempSync(join(tmpdir(), 'autorig-addon-protocol-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('generated protocol.py', () => {
  it('matches the committed file byte for byte', () => {
    const expected = renderProtocolPy(loadSchema());
    const committed = readFileSync(protocolPyPath(), 'utf8');
    expect(committed).toBe(expected);
  });

  it('changes when the schema changes (the comparison can fail)', () => {
    const schema = loadSchema();
    const changed = { ...schema, errorCodes: { ...schema.errorCodes, NEW_CODE: 'x' } };
    expect(renderProtocolPy(changed)).not.toBe(renderProtocolPy(schema));
    expect(renderProtocolPy(changed)).toContain('ERROR_NEW_CODE = "NEW_CODE"');
  });

  it('writes Python literals and names', () => {
    expect(upperSnake('maxMessageBytes')).toBe('MAX_MESSAGE_BYTES');
    expect(upperSnake('pose.list')).toBe('POSE_LIST');
    expect(pythonLiteral({ a: [1, 'x"y', null, true] })).toBe('{\n    "a": (1, "x\\"y", None, True),\n}');
    expect(pythonLiteral(['one'])).toBe('("one",)');
  });

  it('is valid Python with the schema values', () => {
    const out = execFileSync(PYTHON, ['-c', [
      'import json, sys; sys.path.insert(0, ".")',
      'import blender_addon.protocol as p',
      'print(json.dumps({"v": p.PROTOCOL_VERSION, "limits": p.LIMITS, "codes": list(p.ERROR_CODES), "kinds": list(p.REQUEST_KINDS)}))',
    ].join('\n')], { encoding: 'utf8' });
    const schema = loadSchema();
    expect(JSON.parse(out)).toEqual({
      v: schema.protocolVersion,
      limits: schema.limits,
      codes: Object.keys(schema.errorCodes),
      kinds: Object.keys(schema.requests),
    });
  });
});

describe('requests built by the add-on', () => {
  it('pass the sidecar validator', () => {
    const file = join(tmp, 'requests.msgpack');
    execFileSync(PYTHON, ['test/python/sample_requests.py', file]);
    const frames = new Unpackr({ useRecords: false }).unpack(readFileSync(file)) as Uint8Array[];
    const kinds: string[] = [];
    for (const frame of frames) {
      const request = validateRequest(decodeMessage(frame));
      kinds.push(request.kind);
      if (request.kind === 'rig') {
        expect(request.objects[0].positions).toBeInstanceOf(Float32Array);
        expect(Array.from(request.objects[0].positions.slice(6, 9))).toEqual([1, 0, 2]);
        expect(Array.from(request.objects[0].triangles)).toEqual([0, 1, 2, 0, 2, 3]);
      }
      if (request.kind === 'skin' && request.locked.length) {
        expect(request.locked[0].bone).toBe('mixamorig:Spine');
        expect(Array.from(request.locked[0].weights)).toEqual([0, 0, 0.5, 1]);
      }
    }
    expect(kinds.sort()).toEqual(['cancel', 'hello', 'rig', 'rig', 'skin', 'skin']);
  });
});

describe('correctives requests with pose examples built by the add-on', () => {
  it('carry the examples the schema describes and pass the sidecar validator', () => {
    const file = join(tmp, 'examples.msgpack');
    execFileSync(PYTHON, ['test/python/sample_requests.py', file, '--examples']);
    const frames = new Unpackr({ useRecords: false }).unpack(readFileSync(file)) as Uint8Array[];
    const messages = frames.map((frame) => decodeMessage(frame));
    expect(messages.map((m) => m.kind)).toEqual(['correctives', 'correctives']);
    // as sent: two examples, each its name, #J*9 f32 rotations and its surfaces; without examples no field at all
    const sent = messages[0].examples as { name: string; rotations: Uint8Array; objects: { name: string }[] }[];
    expect(sent.map((e) => e.name)).toEqual(['BodyBent', 'AtRest']);
    expect(sent.map((e) => e.rotations.byteLength)).toEqual([23 * 9 * 4, 23 * 9 * 4]);
    expect(sent[0].objects.map((o) => o.name)).toEqual(['BodyBent', 'Hat']);
    expect(Object.hasOwn(messages[1], 'examples')).toBe(false);

    const requests = messages.map((m) => validateRequest(m) as unknown as Record<string, unknown>);
    expect(requests.map((r) => r.kind)).toEqual(['correctives', 'correctives']);
    // what the sidecar keeps of them (the validator's conversion of examples: Side A of the examples slice)
    const examples = requests[0].examples as { name: string; rotations: Float32Array; objects: { positions: Float32Array; triangles: Uint32Array }[] }[];
    expect(examples, 'the validator keeps the examples').toBeDefined();
    expect(examples.map((e) => e.name)).toEqual(['BodyBent', 'AtRest']);
    const forearm = 9; // mixamorig:LeftForeArm in sample_requests' skeleton: a quarter turn about y
    expect(examples[0].rotations).toBeInstanceOf(Float32Array);
    expect(Array.from(examples[0].rotations.slice(9 * forearm, 9 * forearm + 9))).toEqual([0, 0, 1, 0, 1, 0, -1, 0, 0]);
    expect(examples[0].objects.map((o) => o.positions.length / 3)).toEqual([5, 3]);
    expect(Array.from(examples[0].objects[0].triangles)).toEqual([0, 1, 2, 0, 2, 3, 1, 2, 4]);
    expect(requests[1].examples ?? []).toEqual([]);
  });
});
