/**
 * msgpack framing of protocol messages: one map per binary WebSocket message.
 * Typed arrays go out as plain msgpack `bin` holding their raw bytes (never an extension type), so a Python peer
 * reads them with `array`/`memoryview` without knowing anything about msgpackr.
 */
import { endianness } from 'node:os';
import { Packr, Unpackr } from 'msgpackr';
import { AutoRigError } from '../sidecar/errors.js';

// The wire format is little-endian; typed arrays are packed as their in-memory bytes, so the host must be too.
if (endianness() !== 'LE') {
  throw new Error('autorig: the protocol sends raw little-endian arrays; this host is big-endian');
}

/**
 * useRecords: false — no msgpackr record extension (Python would not know it);
 * variableMapSize — fixmap/map16 as small as the map, like every other msgpack encoder;
 * encodeUndefinedAsNil — an absent value must be nil, not msgpackr's undefined extension.
 * Without `moreTypes`, typed arrays are packed as `bin` of their bytes (the view only, not its whole buffer).
 */
const packr = new Packr({ useRecords: false, variableMapSize: true, encodeUndefinedAsNil: true });

/** int64AsType 'number': a Python peer sends small ints as uint64 only by accident; keep them numbers (unsafe ones stay exact as bigint). */
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });

/** Encode one message (a plain object whose typed arrays become `bin`). Returns the bytes to send. */
export function encodeMessage(message: Record<string, unknown>): Buffer {
  return packr.pack(message);
}

/**
 * Decode the bytes of one binary frame. Returns the top-level map as a plain object; `bin` values come back as
 * Buffers that share memory with `bytes` (validate.ts copies them into typed arrays).
 * Throws AutoRigError BAD_MESSAGE when the bytes are not exactly one msgpack value or that value is not a map.
 */
export function decodeMessage(bytes: Uint8Array): Record<string, unknown> {
  let value: unknown;
  let end = -1;
  try {
    // Read the first value only and check for trailing bytes here: msgpackr's own check (unpack) builds its error
    // message from JSON.stringify of the whole decoded value — seconds and gigabytes for a big mesh plus one stray
    // byte (0.35 s and 40 MB per MB of message, measured), with the event loop blocked all the while.
    unpackr.unpackMultiple(bytes, (first: unknown, _start?: number, stop?: number) => {
      value = first;
      end = stop ?? -1;
      return false;
    });
  } catch (err) {
    throw new AutoRigError('BAD_MESSAGE', `not valid msgpack: ${(err as Error).message}`);
  }
  if (end !== bytes.byteLength) {
    const extra = bytes.byteLength - end;
    throw new AutoRigError('BAD_MESSAGE', `not valid msgpack: ${extra} byte${extra === 1 ? '' : 's'} after the first value (one message is one map)`);
  }
  if (!isPlainMap(value)) {
    throw new AutoRigError('BAD_MESSAGE', `the message must be a msgpack map, got ${describeValue(value)}`);
  }
  return value;
}

/** True for the plain objects msgpackr makes of maps (not arrays, Buffers, Dates, Maps). */
export function isPlainMap(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A short, safe description of a decoded value's type for error messages (never its content). */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (value instanceof Uint8Array) return `bin of ${value.byteLength} bytes`;
  if (ArrayBuffer.isView(value)) return `${value.constructor.name} of ${value.byteLength} bytes`;
  if (isPlainMap(value)) return 'a map';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'unknown'})`;
  return `a ${typeof value}`;
}
