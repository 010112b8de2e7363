/**
 * WebSocket wire format written by hand (RFC 6455 §5), so that the fuzzer can send what no WebSocket library would:
 * reserved bits, unknown opcodes, unmasked or fragmented control frames, lengths that lie, frames cut short.
 * Also the client's HTTP upgrade request, and a reader for the frames the server sends back (unmasked, never
 * fragmented by ws, but the reader does not rely on it).
 */
import { createHash } from 'node:crypto';

export const OPCODE = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

/** GUID of RFC 6455 §1.3: the server proves it speaks WebSocket by hashing the client's key with it. */
const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** One frame as the fuzzer wants it on the wire; every field has the honest default. */
export interface FrameSpec {
  opcode: number;
  payload: Uint8Array;
  /** FIN bit (default true). */
  fin?: boolean;
  /** RSV1..RSV3 as a 3-bit number (default 0). */
  rsv?: number;
  /** Mask the payload, as a client must (default true). */
  masked?: boolean;
  /** The 4-byte masking key (default 4 fixed bytes: masking is about proxies, not secrecy). */
  maskKey?: Uint8Array;
  /** The payload length written in the header; default the true length. May be larger than the payload (a lie). */
  declaredLength?: bigint;
  /** Which length encoding to use: 7-bit, 16-bit or 64-bit; default the smallest that fits. */
  lengthForm?: 7 | 16 | 64;
}

/** The bytes of one frame. Returns header + (masked) payload. */
export function encodeFrame(spec: FrameSpec): Buffer {
  const masked = spec.masked ?? true;
  const declared = spec.declaredLength ?? BigInt(spec.payload.byteLength);
  const form = spec.lengthForm ?? (declared < 126n ? 7 : declared < 65536n ? 16 : 64);
  const header: number[] = [((spec.fin ?? true) ? 0x80 : 0) | (((spec.rsv ?? 0) & 7) << 4) | (spec.opcode & 0x0f)];
  const maskBit = masked ? 0x80 : 0;
  if (form === 7) {
    header.push(maskBit | Number(declared & 0x7fn));
  } else if (form === 16) {
    header.push(maskBit | 126, Number((declared >> 8n) & 0xffn), Number(declared & 0xffn));
  } else {
    header.push(maskBit | 127);
    for (let shift = 56n; shift >= 0n; shift -= 8n) header.push(Number((declared >> shift) & 0xffn));
  }
  if (!masked) return Buffer.concat([Buffer.from(header), spec.payload]);
  const key = spec.maskKey ?? Uint8Array.of(0x37, 0xfa, 0x21, 0x3d);
  const body = Buffer.allocUnsafe(spec.payload.byteLength);
  for (let i = 0; i < body.length; i++) body[i] = spec.payload[i] ^ key[i & 3];
  return Buffer.concat([Buffer.from(header), key.subarray(0, 4), body]);
}

/** A complete, valid binary frame (one protocol message). */
export function binaryFrame(payload: Uint8Array): Buffer {
  return encodeFrame({ opcode: OPCODE.binary, payload });
}

/** A complete, valid text frame. */
export function textFrame(text: string | Uint8Array): Buffer {
  return encodeFrame({ opcode: OPCODE.text, payload: typeof text === 'string' ? Buffer.from(text, 'utf8') : text });
}

/** A close frame; without a code its payload is empty (RFC 6455 §5.5.1). */
export function closeFrame(code?: number, reason: Uint8Array = Buffer.alloc(0)): Buffer {
  if (code === undefined) return encodeFrame({ opcode: OPCODE.close, payload: Buffer.alloc(0) });
  const payload = Buffer.alloc(2 + reason.byteLength);
  payload.writeUInt16BE(code & 0xffff, 0);
  payload.set(reason, 2);
  return encodeFrame({ opcode: OPCODE.close, payload });
}

/** A frame from the server, as read off the socket. */
export interface ServerFrame {
  fin: boolean;
  opcode: number;
  payload: Buffer;
  /** True when the server broke its side of the framing rules (a masked frame, reserved bits). */
  malformed: boolean;
}

/**
 * Splits the server's byte stream into frames. push(chunk) returns the frames completed by this chunk; an
 * incomplete tail is kept for the next push.
 */
export class ServerFrameReader {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): ServerFrame[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: ServerFrame[] = [];
    for (;;) {
      const frame = this.takeFrame();
      if (!frame) return frames;
      frames.push(frame);
    }
  }

  private takeFrame(): ServerFrame | null {
    const buf = this.pending;
    if (buf.length < 2) return null;
    let length = buf[1] & 0x7f;
    let offset = 2;
    if (length === 126) {
      if (buf.length < 4) return null;
      length = buf.readUInt16BE(2);
      offset = 4;
    } else if (length === 127) {
      if (buf.length < 10) return null;
      const big = buf.readBigUInt64BE(2);
      if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('the server sent a frame longer than 2^53 bytes');
      length = Number(big);
      offset = 10;
    }
    const masked = (buf[1] & 0x80) !== 0;
    if (masked) offset += 4;
    if (buf.length < offset + length) return null;
    const payload = Buffer.from(buf.subarray(offset, offset + length));
    if (masked) {
      const key = buf.subarray(offset - 4, offset);
      for (let i = 0; i < payload.length; i++) payload[i] ^= key[i & 3];
    }
    this.pending = buf.subarray(offset + length);
    return { fin: (buf[0] & 0x80) !== 0, opcode: buf[0] & 0x0f, payload, malformed: masked || (buf[0] & 0x70) !== 0 };
  }
}

/** What goes into an upgrade request; each field can be left out or set to something wrong. */
export interface UpgradeRequestSpec {
  /** The Host header value; null leaves the header out. */
  host: string | null;
  /** The bearer token; null leaves Authorization out. */
  token: string | null;
  /** The whole Authorization value, overriding `token`. */
  authorization?: string;
  origin?: string;
  path?: string;
  method?: string;
  /** Sec-WebSocket-Key; null leaves it out. Default: 16 fixed bytes in base64. */
  key?: string | null;
  /** Sec-WebSocket-Version; null leaves it out. Default 13. */
  version?: string | null;
  /** The Upgrade header; null leaves it out. Default websocket. */
  upgrade?: string | null;
  /** More header lines, written as given. */
  extraHeaders?: string[];
}

/** The default Sec-WebSocket-Key: any 16 bytes in base64 do. */
export const DEFAULT_KEY = Buffer.from('autorig-fuzzer!!').toString('base64');

/** The HTTP/1.1 upgrade request text for `spec`. */
export function upgradeRequest(spec: UpgradeRequestSpec): string {
  const lines = [`${spec.method ?? 'GET'} ${spec.path ?? '/'} HTTP/1.1`];
  if (spec.host !== null) lines.push(`Host: ${spec.host}`);
  lines.push('Connection: Upgrade');
  if (spec.upgrade !== null) lines.push(`Upgrade: ${spec.upgrade ?? 'websocket'}`);
  if (spec.version !== null) lines.push(`Sec-WebSocket-Version: ${spec.version ?? '13'}`);
  if (spec.key !== null) lines.push(`Sec-WebSocket-Key: ${spec.key ?? DEFAULT_KEY}`);
  if (spec.authorization !== undefined) lines.push(`Authorization: ${spec.authorization}`);
  else if (spec.token !== null) lines.push(`Authorization: Bearer ${spec.token}`);
  if (spec.origin !== undefined) lines.push(`Origin: ${spec.origin}`);
  lines.push(...(spec.extraHeaders ?? []));
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** The Sec-WebSocket-Accept a server must answer to `key`. */
export function expectedAccept(key: string): string {
  return createHash('sha1').update(key + HANDSHAKE_GUID).digest('base64');
}

/** The status code of an HTTP response head ("HTTP/1.1 401 Unauthorized..."), or null when it is not one. */
export function responseStatus(head: string): number | null {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(head);
  return match ? Number(match[1]) : null;
}
