/**
 * msgpack-level cases: the bytes of a request, mangled — flipped, cut, extended, spliced; lengths that claim gigabytes;
 * nesting hundreds of thousands deep; top-level values that are not maps; msgpackr's own extensions (records, typed
 * arrays, Set, RegExp, Error, BigInt, Date, cycles); duplicate and non-string keys; invalid UTF-8; numbers in
 * every encoding. Far too many outcomes to predict by hand: the oracle (cases.ts) says what the sidecar answers,
 * and the runner checks that it does — every message gets one coded reply, nothing crashes.
 */
import { isUtf8 } from 'node:buffer';
import { Packr } from 'msgpackr';
import { encodeMessage } from '../shared-schema/codec.js';
import { independentMessages, singlePhase, splitBytes, type FuzzCase } from './cases.js';
import type { SeededRandom } from './random.js';
import { BASE_REQUESTS, cloneDraft, type Draft } from './requests.js';
import { randomText, schemaMutation } from './schemaCases.js';
import { textFrame } from './wsWire.js';

/** msgpackr with everything a peer should never send us turned on. */
const exoticPackr = new Packr({ moreTypes: true, structuredClone: true, useRecords: true });

/** Bytes that start the msgpack types most likely to confuse a decoder. */
const TYPE_BYTES = [
  0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xcb, 0xcc,
  0xcd, 0xce, 0xcf, 0xd0, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xe0, 0xff,
];

/** A valid request (or a schema mutation of one) to start mangling from. */
function baseBytes(rng: SeededRandom, id: string): Buffer {
  if (rng.chance(0.3)) return schemaMutation(rng, id).payload;
  const kind = rng.weighted([
    ['hello', 4], ['rig', 3], ['skin', 2], ['cancel', 1], ['pose.list', 0.5], ['pose.apply', 1], ['pose.apply+rig', 1],
    ['pose.prepare', 1], ['correctives', 1], ['correctives.preview', 1],
  ] as const);
  return encodeMessage(BASE_REQUESTS[kind](id));
}

// ---- byte operators ---------------------------------------------------------------------------------------------

function flipBytes(rng: SeededRandom, bytes: Buffer): Buffer {
  const out = Buffer.from(bytes);
  const flips = rng.range(1, 4);
  for (let i = 0; i < flips; i++) out[rng.int(out.length)] ^= rng.range(1, 255);
  return out;
}

function setTypeByte(rng: SeededRandom, bytes: Buffer): Buffer {
  const out = Buffer.from(bytes);
  out[rng.int(out.length)] = rng.pick(TYPE_BYTES);
  return out;
}

function truncate(rng: SeededRandom, bytes: Buffer): Buffer {
  return bytes.subarray(0, rng.int(bytes.length));
}

function appendTrailing(rng: SeededRandom, bytes: Buffer): Buffer {
  return Buffer.concat([bytes, rng.chance(0.5) ? rng.bytes(rng.range(1, 8)) : encodeMessage({ kind: 'hello', id: 'again', protocol: 1 })]);
}

function insertBytes(rng: SeededRandom, bytes: Buffer): Buffer {
  const at = rng.int(bytes.length + 1);
  return Buffer.concat([bytes.subarray(0, at), rng.bytes(rng.range(1, 8)), bytes.subarray(at)]);
}

function deleteBytes(rng: SeededRandom, bytes: Buffer): Buffer {
  const at = rng.int(bytes.length);
  return Buffer.concat([bytes.subarray(0, at), bytes.subarray(Math.min(bytes.length, at + rng.range(1, 8)))]);
}

function duplicateRange(rng: SeededRandom, bytes: Buffer): Buffer {
  const from = rng.int(bytes.length);
  const slice = bytes.subarray(from, from + rng.range(1, 16));
  const at = rng.int(bytes.length + 1);
  return Buffer.concat([bytes.subarray(0, at), slice, bytes.subarray(at)]);
}

/** Operators that mangle existing bytes. */
const BYTE_OPERATORS: ReadonlyArray<readonly [string, (rng: SeededRandom, bytes: Buffer) => Buffer]> = [
  ['flip-bytes', flipBytes],
  ['type-byte', setTypeByte],
  ['truncate', truncate],
  ['trailing-bytes', appendTrailing],
  ['insert-bytes', insertBytes],
  ['delete-bytes', deleteBytes],
  ['duplicate-range', duplicateRange],
];

// ---- constructed messages ---------------------------------------------------------------------------------------

/** The encoding of a map with these entries, written entry by entry (so keys may repeat or be any type). */
function rawMap(entries: Array<[unknown, unknown]>): Buffer {
  const head = entries.length < 16 ? Buffer.of(0x80 | entries.length) : Buffer.of(0xde, entries.length >> 8, entries.length & 0xff);
  return Buffer.concat([head, ...entries.flatMap(([k, v]) => [exoticPackr.pack(k), exoticPackr.pack(v)])]);
}

/** A hello map whose last value is replaced by `tail` (raw bytes): the map is complete only if `tail` is one value. */
function helloWithRawValue(id: string, tail: Buffer): Buffer {
  const head = Buffer.concat([Buffer.of(0x84), ...['kind', 'hello', 'id', id, 'protocol', 1, 'extra'].map((v) => exoticPackr.pack(v))]);
  return Buffer.concat([head, tail]);
}

/** A header declaring far more bytes or elements than follow. */
function hugeLength(rng: SeededRandom, id: string): Buffer {
  const declared = rng.pick([0xffffffff, 0x7fffffff, 0x10000000, 1 << 20, 65535, 0x1000000 + rng.int(1 << 24)]);
  const u32 = Buffer.alloc(4);
  u32.writeUInt32BE(declared >>> 0);
  const header = rng.pick([
    Buffer.concat([Buffer.of(0xdb), u32]), // str32
    Buffer.concat([Buffer.of(0xc6), u32]), // bin32
    Buffer.concat([Buffer.of(0xdd), u32]), // array32
    Buffer.concat([Buffer.of(0xdf), u32]), // map32
    Buffer.concat([Buffer.of(0xc9), u32, Buffer.of(rng.pick([0x74, 0x72, 0x62, 0x01, 0xff]))]), // ext32
    Buffer.of(0xda, 0xff, 0xff), // str16
    Buffer.of(0xdc, 0xff, 0xff), // array16
  ]);
  const tail = Buffer.concat([header, rng.bytes(rng.range(0, 16))]);
  return rng.chance(0.5) ? tail : helloWithRawValue(id, tail);
}

/**
 * Arrays or maps nested `depth` deep. Depths are either comfortably decodable (≤ 1000) or far past any stack
 * (≥ 100,000), never near the limit, so that the oracle and the sidecar agree whatever their stack sizes.
 */
function deepNesting(rng: SeededRandom, id: string): Buffer {
  const depth = rng.pick([10, 100, 1000, 100_000, 300_000]);
  const level = rng.chance(0.5) ? Buffer.of(0x91) : Buffer.of(0x81, 0xa1, 0x61);
  const nested = Buffer.concat([Buffer.alloc(level.length * depth).fill(level), Buffer.of(0xc0)]);
  switch (rng.int(3)) {
    case 0:
      return nested;
    case 1:
      return helloWithRawValue(id, nested);
    default: {
      // As the `objects` of a rig request.
      const head = Buffer.concat([Buffer.of(0x83), ...['kind', 'rig', 'id', id, 'objects'].map((v) => exoticPackr.pack(v))]);
      return Buffer.concat([head, nested]);
    }
  }
}

/** A random msgpack value, up to `depth` levels of containers. */
function randomValue(rng: SeededRandom, depth: number): unknown {
  const choice = rng.int(depth > 0 ? 16 : 12);
  switch (choice) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.range(-200, 200);
    case 3:
      return rng.pick([2 ** 31, 2 ** 32, -(2 ** 40), Number.MAX_SAFE_INTEGER, 2 ** 60, 1.5, -0, 1e308, 5e-324]);
    case 4:
      return rng.pick([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    case 5:
      return randomText(rng, rng.range(0, 40));
    case 6:
      return rng.bytes(rng.range(0, 40));
    case 7:
      return rng.pick([2n ** 63n - 1n, -(2n ** 63n), 2n ** 64n - 1n]);
    case 8:
      return rng.pick(['hello', 'rig', 'skin', 'cancel', 'id', 'kind', 'objects']);
    case 9:
      return new Date(rng.range(-1e12, 1e12));
    case 10:
      return rng.pick([new Float32Array(rng.range(0, 6) * 3), new Uint32Array(rng.range(0, 6) * 3), new Float64Array(3), new Int8Array(5), new Uint16Array(4), new BigInt64Array(1)]);
    case 11:
      return rng.pick([undefined, /x+/g, new Error('boom'), new ArrayBuffer(8)]);
    case 12:
      return Array.from({ length: rng.range(0, 5) }, () => randomValue(rng, depth - 1));
    case 13:
      return new Set(Array.from({ length: rng.range(0, 3) }, () => randomValue(rng, depth - 1)));
    case 14:
      return new Map([[randomValue(rng, 0), randomValue(rng, depth - 1)]]);
    default: {
      const map: Record<string, unknown> = {};
      for (let i = rng.range(0, 5); i > 0; i--) map[rng.pick(['kind', 'id', 'protocol', 'objects', 'name', 'positions', 'x', randomText(rng, 4)])] = randomValue(rng, depth - 1);
      return map;
    }
  }
}

/** A request-shaped map with random values, encoded with msgpackr's extensions (records, typed arrays, sets…). */
function exoticRequest(rng: SeededRandom, id: string): Buffer {
  const draft: Draft = cloneDraft(BASE_REQUESTS[rng.pick(['hello', 'rig', 'skin'] as const)](id));
  const keys = Object.keys(draft).filter((key) => key !== 'kind');
  const replaced = rng.range(1, 2);
  for (let i = 0; i < replaced; i++) draft[rng.pick(keys)] = randomValue(rng, 3);
  if (rng.chance(0.1)) draft.self = draft; // a cycle (structured clone extension)
  if (rng.chance(0.2)) {
    // positions as msgpackr's typed-array extension instead of bin
    const objects = draft.objects;
    if (Array.isArray(objects) && objects[0] && typeof objects[0] === 'object') (objects[0] as Draft).positions = new Float32Array(12);
  }
  return exoticPackr.pack(draft);
}

/** A top-level value that is not a map. */
function notAMap(rng: SeededRandom): Buffer {
  let value = randomValue(rng, 2);
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype) value = [value];
  return exoticPackr.pack(value);
}

/** A map whose keys repeat (`kind` or `id` twice) or are not strings. */
function oddKeys(rng: SeededRandom, id: string): Buffer {
  const entries: Array<[unknown, unknown]> = [['kind', 'hello'], ['id', id], ['protocol', 1]];
  switch (rng.int(3)) {
    case 0:
      entries.push([rng.pick(['kind', 'id', 'protocol']), rng.pick(['rig', 'cancel', 'other', 2, null, id])]);
      break;
    case 1:
      entries.push([rng.pick([1, -1, null, true, 2.5, Buffer.from('id'), ['id'], { k: 1 }, 2n ** 64n - 1n]), rng.pick(['x', 1, null])]);
      break;
    default:
      entries.unshift([rng.pick(['__proto__', 'constructor', 'prototype', 'toString']), rng.pick([{ kind: 'rig' }, 'x', null, []])]);
  }
  for (let i = entries.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [entries[i], entries[j]] = [entries[j], entries[i]];
  }
  return rawMap(entries);
}

/** A hello whose kind, id or client is a str holding bytes that are not UTF-8. */
function invalidUtf8(rng: SeededRandom, id: string): Buffer {
  const junk = rng.chance(0.5) ? Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]) : rng.bytes(rng.range(1, 30));
  const str = Buffer.concat([Buffer.of(0xd9, junk.length), junk]);
  const field = rng.pick(['kind', 'id', 'client']);
  const entries: Array<[string, unknown]> = [['kind', 'hello'], ['id', id], ['protocol', 1], ['client', 'fuzz']];
  const parts: Buffer[] = [Buffer.of(0x84)];
  for (const [key, value] of entries) parts.push(exoticPackr.pack(key), key === field ? str : exoticPackr.pack(value));
  return Buffer.concat(parts);
}

/** A hello whose protocol version 1 is written in another encoding (float32/64, uint64, int8, …) or is not 1. */
function numberEncodings(rng: SeededRandom, id: string): Buffer {
  const one = rng.pick([
    Buffer.of(0x01),
    Buffer.of(0xcc, 0x01),
    Buffer.of(0xcd, 0x00, 0x01),
    Buffer.of(0xce, 0, 0, 0, 1),
    Buffer.of(0xcf, 0, 0, 0, 0, 0, 0, 0, 1),
    Buffer.of(0xd0, 0x01),
    Buffer.of(0xd3, 0, 0, 0, 0, 0, 0, 0, 1),
    Buffer.of(0xca, 0x3f, 0x80, 0, 0),
    Buffer.of(0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0),
    Buffer.of(0xca, 0x3f, 0x80, 0, 1),
    Buffer.of(0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
    Buffer.of(0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0),
    Buffer.of(0xff),
    Buffer.of(0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0),
  ]);
  const head = Buffer.concat([Buffer.of(0x83), ...['kind', 'hello', 'id', id, 'protocol'].map((v) => exoticPackr.pack(v))]);
  return Buffer.concat([head, one]);
}

/** The constructed-message generators and how often each is drawn (byte operators are drawn as one group). */
const CONSTRUCTORS: ReadonlyArray<readonly [string, (rng: SeededRandom, id: string) => Buffer, number]> = [
  ['huge-length', hugeLength, 6],
  ['deep-nesting', deepNesting, 3],
  ['exotic-types', exoticRequest, 8],
  ['not-a-map', (rng) => notAMap(rng), 4],
  ['odd-keys', oddKeys, 5],
  ['invalid-utf8', invalidUtf8, 3],
  ['number-encodings', numberEncodings, 3],
];

/** One mangled message: its generator's name and bytes. */
export function msgpackPayload(rng: SeededRandom, id: string): { name: string; payload: Buffer } {
  if (rng.chance(0.55)) {
    const [name, operate] = rng.pick(BYTE_OPERATORS);
    let bytes = baseBytes(rng, id);
    const rounds = rng.chance(0.8) ? 1 : rng.range(2, 4);
    for (let i = 0; i < rounds && bytes.length > 0; i++) bytes = operate(rng, bytes);
    return { name, payload: bytes };
  }
  const [name, make] = rng.weighted(CONSTRUCTORS.map(([n, m, w]) => [[n, m] as const, w] as const));
  return { name, payload: make(rng, id) };
}

/**
 * A msgpack-level case: one mangled message (rarely sent as a text frame when it happens to be UTF-8). Mangling
 * that leaves a valid cancel (no reply at all) is drawn again.
 */
export function msgpackCase(rng: SeededRandom, index: number): FuzzCase {
  for (;;) {
    const { name, payload } = msgpackPayload(rng, `m${index}`);
    if (rng.chance(0.03) && isUtf8(payload)) {
      return singlePhase('msgpack', `${name}+text-frame`, [textFrame(payload)], [{ kind: 'error', code: 'BAD_MESSAGE', id: null }]);
    }
    const exchange = independentMessages([payload]);
    if (!exchange) continue;
    const bytes = Buffer.concat(exchange.frames);
    const chunks = rng.chance(0.15) ? splitBytes(bytes, rng.range(2, 5), (n) => rng.int(n)) : [bytes];
    return singlePhase('msgpack', name, chunks, exchange.replies);
  }
}
