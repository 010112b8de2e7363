/**
 * WebSocket-level cases, written as raw bytes on an upgraded socket: random bytes, reserved bits, unknown opcodes,
 * unmasked frames, control frames too long or fragmented, continuations out of place, lengths past any limit or
 * longer than what follows, frames cut short, valid messages in fragments or in tiny TCP pieces, text frames
 * (valid and invalid UTF-8), close frames with every kind of code, messages after a close, resets mid-frame; and
 * broken upgrade requests on fresh connections (tokens, Host, Origin, path, method, headers, garbage).
 * A protocol violation must end in a close with the right code (1002 protocol error, 1007 bad UTF-8, 1009 too
 * big); a well-formed oddity must be answered as the message inside it.
 */
import { encodeMessage } from '../shared-schema/codec.js';
import { protocolLimits } from '../shared-schema/validate.js';
import { hardMessageCap } from '../sidecar/server/serve.js';
import { singlePhase, splitBytes, type ExpectedReply, type FramesCase, type FuzzCase, type HandshakeCase } from './cases.js';
import type { SeededRandom } from './random.js';
import { BASE_REQUESTS } from './requests.js';
import { mutationExchange, schemaMutation, SLOW_MUTATIONS } from './schemaCases.js';
import { binaryFrame, closeFrame, encodeFrame, OPCODE, textFrame, upgradeRequest, type FrameSpec, type UpgradeRequestSpec } from './wsWire.js';

/** What the fuzzer knows of the server it talks to: the token and the port (the Host header names it). */
export interface Target {
  token: string;
  port: number;
}

const helloPayload = (id: string) => encodeMessage(BASE_REQUESTS.hello(id));
const helloReply = (id: string): ExpectedReply[] => [{ kind: 'result', id }];

function frames(name: string, chunks: Buffer[], then: FramesCase['then'], expect: FramesCase['expect']): FramesCase {
  return { layer: 'websocket', name, shape: 'frames', chunks, then, expect };
}

function randomBytes(rng: SeededRandom): FramesCase {
  return frames('random-bytes', [rng.bytes(rng.range(1, 64))], 'end', { close: 'any' });
}

function reservedBits(rng: SeededRandom, id: string): FramesCase {
  const frame = encodeFrame({ opcode: rng.pick([OPCODE.binary, OPCODE.text, OPCODE.ping]), payload: helloPayload(id), rsv: rng.range(1, 7) });
  return frames('reserved-bits', [frame], 'wait', { close: [1002] });
}

function unknownOpcode(rng: SeededRandom, id: string): FramesCase {
  const opcode = rng.pick([3, 4, 5, 6, 7, 0xb, 0xc, 0xd, 0xe, 0xf]);
  return frames('unknown-opcode', [encodeFrame({ opcode, payload: helloPayload(id) })], 'wait', { close: [1002] });
}

function unmasked(rng: SeededRandom, id: string): FramesCase {
  const opcode = rng.pick([OPCODE.binary, OPCODE.text, OPCODE.ping, OPCODE.close]);
  const payload = opcode === OPCODE.close ? Buffer.of(0x03, 0xe8) : helloPayload(id);
  return frames('unmasked', [encodeFrame({ opcode, payload, masked: false })], 'wait', { close: [1002] });
}

function orphanContinuation(rng: SeededRandom, id: string): FramesCase {
  return frames('orphan-continuation', [encodeFrame({ opcode: OPCODE.continuation, payload: helloPayload(id), fin: rng.chance(0.5) })], 'wait', { close: [1002] });
}

function controlTooLong(rng: SeededRandom): FramesCase {
  const opcode = rng.pick([OPCODE.ping, OPCODE.pong, OPCODE.close]);
  const payload = Buffer.alloc(rng.range(126, 400), 0x41);
  if (opcode === OPCODE.close) payload.writeUInt16BE(1000, 0);
  return frames('control-too-long', [encodeFrame({ opcode, payload })], 'wait', { close: [1002] });
}

function fragmentedControl(rng: SeededRandom): FramesCase {
  const opcode = rng.pick([OPCODE.ping, OPCODE.pong, OPCODE.close]);
  return frames('fragmented-control', [encodeFrame({ opcode, payload: Buffer.of(0x03, 0xe8), fin: false })], 'wait', { close: [1002] });
}

/** A new data frame while a fragmented message is still open. */
function dataInsideFragments(rng: SeededRandom, id: string): FramesCase {
  const payload = helloPayload(id);
  const first = encodeFrame({ opcode: OPCODE.binary, payload: payload.subarray(0, 3), fin: false });
  const intruder = encodeFrame({ opcode: rng.pick([OPCODE.binary, OPCODE.text]), payload: payload.subarray(3) });
  return frames('data-inside-fragments', [Buffer.concat([first, intruder])], 'wait', { close: [1002] });
}

/** A declared length past the server's hard cap (or past 2^53): refused from the header alone with 1009. */
function hugeDeclaredLength(rng: SeededRandom): FramesCase {
  const cap = BigInt(hardMessageCap(protocolLimits));
  const declared = rng.pick([cap + 1n, cap + BigInt(rng.range(2, 1 << 30)), 2n ** 53n - 1n, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n]);
  const frame = encodeFrame({ opcode: rng.pick([OPCODE.binary, OPCODE.text, OPCODE.continuation]), payload: rng.bytes(rng.range(0, 32)), declaredLength: declared, lengthForm: 64 });
  // An opening continuation is refused for its opcode first (1002); the others for their length (1009).
  const opcode = frame[0] & 0x0f;
  return frames('huge-declared-length', [frame], 'wait', { close: opcode === OPCODE.continuation ? [1002] : [1009] });
}

/** A frame that promises more bytes than it brings, then the client goes quiet and half-closes. */
function payloadCutShort(rng: SeededRandom, id: string): FramesCase {
  const payload = helloPayload(id);
  const declared = BigInt(payload.length + rng.range(1, 1 << 20));
  const frame = encodeFrame({ opcode: OPCODE.binary, payload, declaredLength: declared, lengthForm: declared < 65536n ? 16 : 64 });
  return frames('payload-cut-short', [frame], rng.chance(0.8) ? 'end' : 'reset', { close: 'any' });
}

/** A valid frame cut anywhere (header, mask key or payload), then a half-close or a reset. */
function frameCutShort(rng: SeededRandom, id: string): FramesCase {
  const frame = binaryFrame(helloPayload(id));
  return frames('frame-cut-short', [frame.subarray(0, rng.range(1, frame.length - 1))], rng.chance(0.7) ? 'end' : 'reset', { close: 'any' });
}

/** A message in 2..8 fragments, pings between them sometimes (control frames may interleave): answered as usual. */
function fragmentedMessage(rng: SeededRandom, id: string): FramesCase {
  const mutation = rng.chance(0.5) ? schemaMutation(rng, id) : null;
  const exchange = mutation && !SLOW_MUTATIONS.has(mutation.name) ? mutationExchange(mutation) : { frames: [binaryFrame(helloPayload(id))], replies: helloReply(id) };
  // Fragment only the first frame's payload (the request); a following cancel stays whole.
  const payload = unframe(exchange.frames[0]);
  const pieces = splitBytes(payload, rng.range(2, 8), (n) => rng.int(n));
  let pings = 0;
  const parts: Buffer[] = [];
  pieces.forEach((piece, i) => {
    parts.push(encodeFrame({ opcode: i === 0 ? OPCODE.binary : OPCODE.continuation, payload: piece, fin: i === pieces.length - 1 }));
    if (i < pieces.length - 1 && rng.chance(0.3)) {
      parts.push(encodeFrame({ opcode: OPCODE.ping, payload: rng.bytes(rng.range(0, 16)) }));
      pings++;
    }
  });
  parts.push(...exchange.frames.slice(1));
  return frames('fragmented-message', [Buffer.concat(parts)], 'wait', { replies: exchange.replies, pongs: pings });
}

/** The payload of a frame made by binaryFrame (masked with encodeFrame's default key). */
function unframe(frame: Buffer): Buffer {
  let length = frame[1] & 0x7f;
  let offset = 2;
  if (length === 126) {
    length = frame.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    length = Number(frame.readBigUInt64BE(2));
    offset = 10;
  }
  const key = frame.subarray(offset, offset + 4);
  const payload = Buffer.from(frame.subarray(offset + 4, offset + 4 + length));
  for (let i = 0; i < payload.length; i++) payload[i] ^= key[i & 3];
  return payload;
}

/** A valid hello written a few bytes at a time, each piece its own TCP segment. */
function tinyTcpPieces(rng: SeededRandom, id: string): FramesCase {
  const frame = binaryFrame(helloPayload(id));
  const chunks: Buffer[] = [];
  for (let at = 0; at < frame.length; ) {
    const size = rng.range(1, 7);
    chunks.push(frame.subarray(at, at + size));
    at += size;
  }
  return frames('tiny-tcp-pieces', chunks, 'wait', { replies: helloReply(id), pongs: 0 });
}

/** A valid hello with a random masking key, or with a needlessly long length encoding. */
function unusualEncoding(rng: SeededRandom, id: string): FramesCase {
  const spec: FrameSpec = { opcode: OPCODE.binary, payload: helloPayload(id), maskKey: rng.bytes(4) };
  if (rng.chance(0.5)) spec.lengthForm = rng.pick([16, 64] as const);
  return frames('unusual-encoding', [encodeFrame(spec)], 'wait', { replies: helloReply(id), pongs: 0 });
}

function textFrames(rng: SeededRandom): FramesCase {
  if (rng.chance(0.5)) {
    const text = rng.pick(['{"kind":"hello","id":"t","protocol":1}', 'hello', '', '\u{1F600}'.repeat(rng.range(1, 20))]);
    return frames('text-frame', [textFrame(text)], 'wait', { replies: [{ kind: 'error', code: 'BAD_MESSAGE', id: null }], pongs: 0 });
  }
  const invalid = rng.pick([Buffer.of(0xff), Buffer.of(0xc3, 0x28), Buffer.of(0xed, 0xa0, 0x80), Buffer.of(0xf4, 0x90, 0x80, 0x80), Buffer.concat([Buffer.from('ok'), Buffer.of(0xe2, 0x82)])]);
  return frames('text-frame-invalid-utf8', [textFrame(invalid)], 'wait', { close: [1007] });
}

/** Close frames: valid codes are echoed; bad codes, a 1-byte payload or a non-UTF-8 reason are protocol errors. */
function closeCodes(rng: SeededRandom): FramesCase {
  switch (rng.int(5)) {
    case 0: {
      const code = rng.pick([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4000, 4999]);
      return frames('close-valid', [closeFrame(code, Buffer.from(rng.chance(0.5) ? 'bye' : ''))], 'wait', { close: [code] });
    }
    case 1:
      return frames('close-empty', [closeFrame()], 'wait', { close: [1005] });
    case 2: {
      const code = rng.pick([0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535]);
      return frames('close-bad-code', [closeFrame(code)], 'wait', { close: [1002] });
    }
    case 3:
      return frames('close-one-byte', [encodeFrame({ opcode: OPCODE.close, payload: Buffer.of(0x03) })], 'wait', { close: [1002] });
    default:
      return frames('close-bad-reason', [closeFrame(1000, Buffer.of(0xff, 0xfe))], 'wait', { close: [1007] });
  }
}

/** Requests after our close frame: the server closes and answers none of them (a job among them never runs). */
function messagesAfterClose(rng: SeededRandom, id: string): FramesCase {
  const after = [binaryFrame(helloPayload(`${id}a`)), binaryFrame(encodeMessage(BASE_REQUESTS.rig(`${id}b`))), rng.bytes(rng.range(1, 32))];
  const before = rng.chance(0.5) ? [binaryFrame(encodeMessage(BASE_REQUESTS.rig(`${id}r`)))] : [];
  const chunks = [Buffer.concat([...before, closeFrame(1000), ...after.slice(0, rng.range(1, 3))])];
  return frames(before.length ? 'close-with-job-running' : 'messages-after-close', chunks, 'wait', { close: [1000] });
}

/** A ping is answered with a pong carrying its payload; an unsolicited pong is ignored. */
function pingPong(rng: SeededRandom, id: string): FramesCase {
  const pings = rng.range(1, 3);
  const parts: Buffer[] = [];
  for (let i = 0; i < pings; i++) parts.push(encodeFrame({ opcode: OPCODE.ping, payload: rng.bytes(rng.range(0, 125)) }));
  if (rng.chance(0.5)) parts.push(encodeFrame({ opcode: OPCODE.pong, payload: rng.bytes(rng.range(0, 20)) }));
  parts.push(binaryFrame(helloPayload(id)));
  return frames('ping-pong', [Buffer.concat(parts)], 'wait', { replies: helloReply(id), pongs: pings });
}

function emptyBinary(): FuzzCase {
  return singlePhase('websocket', 'empty-binary', [binaryFrame(Buffer.alloc(0))], [{ kind: 'error', code: 'BAD_MESSAGE', id: null }]);
}

// ---- the upgrade request ------------------------------------------------------------------------------------------

function handshake(name: string, request: string | Buffer, statuses: number[], then: HandshakeCase['then'] = 'wait'): HandshakeCase {
  return { layer: 'websocket', name, shape: 'handshake', chunks: [Buffer.isBuffer(request) ? request : Buffer.from(request, 'latin1')], then, statuses };
}

/** Upgrade requests that must be refused: the status says why. */
function badUpgrade(rng: SeededRandom, target: Target): HandshakeCase {
  const good: UpgradeRequestSpec = { host: `127.0.0.1:${target.port}`, token: target.token };
  const wrongToken = target.token.slice(0, -1) + (target.token.endsWith('0') ? '1' : '0');
  const variants: Array<[string, UpgradeRequestSpec, number[]]> = [
    ['no-token', { ...good, token: null }, [401]],
    ['wrong-token', { ...good, token: wrongToken }, [401]],
    ['token-prefix', { ...good, token: target.token.slice(0, rng.range(1, target.token.length - 1)) }, [401]],
    ['token-suffix', { ...good, token: `${target.token}${rng.pick(['0', 'x', ' x'])}` }, [401]],
    ['basic-scheme', { ...good, authorization: `Basic ${target.token}` }, [401]],
    ['bare-token', { ...good, authorization: target.token }, [401]],
    ['token-in-query', { ...good, token: null, path: `/?token=${target.token}` }, [401]],
    ['token-in-path', { ...good, token: null, path: `/${target.token}` }, [404]],
    ['foreign-origin', { ...good, origin: rng.pick(['https://evil.example', 'null', 'http://127.0.0.1.evil.example', 'file://']) }, [403]],
    ['foreign-host', { ...good, host: rng.pick(['evil.example', `evil.example:${target.port}`, '127.0.0.2', '0.0.0.0', '[::2]']) }, [403]],
    ['no-host', { ...good, host: null }, [400, 403]],
    ['wrong-path', { ...good, path: rng.pick(['/ws', '//', '/..', '/%2e%2e', '/index.html']) }, [404]],
    ['post-method', { ...good, method: 'POST' }, [400, 405]],
    ['no-key', { ...good, key: null }, [400]],
    ['bad-key', { ...good, key: rng.pick(['short', '!!!!', '']) }, [400]],
    ['bad-version', { ...good, version: rng.pick(['12', '99', 'x', '']) }, [400, 426]],
    ['no-version', { ...good, version: null }, [400, 426]],
    ['no-upgrade-header', { ...good, upgrade: null }, [426]],
    ['wrong-upgrade', { ...good, upgrade: 'h2c' }, [400]],
  ];
  const [name, spec, statuses] = rng.pick(variants);
  return handshake(name, upgradeRequest(spec), statuses);
}

/** Not even HTTP, or HTTP the parser must refuse: garbage, huge headers, a request cut short. */
function brokenHttp(rng: SeededRandom, target: Target): HandshakeCase {
  switch (rng.int(4)) {
    case 0:
      return handshake('garbage-request', Buffer.concat([rng.bytes(rng.range(1, 200)), Buffer.from('\r\n\r\n')]), [0, 400]);
    case 1: {
      const big = upgradeRequest({ host: `127.0.0.1:${target.port}`, token: target.token, extraHeaders: [`X-Pad: ${'a'.repeat(rng.range(17_000, 40_000))}`] });
      return handshake('oversized-headers', big, [0, 431]);
    }
    case 2: {
      const request = upgradeRequest({ host: `127.0.0.1:${target.port}`, token: target.token });
      return handshake('request-cut-short', request.slice(0, rng.range(1, request.length - 4)), [0, 400], 'end');
    }
    default:
      return handshake('header-injection', upgradeRequest({ host: `127.0.0.1:${target.port}`, token: null, extraHeaders: [`Authorization: Bearer ${target.token}\r\nX: y`, 'Bad Header Line'] }), [0, 400]);
  }
}

const GENERATORS: ReadonlyArray<readonly [(rng: SeededRandom, id: string, target: Target) => FuzzCase, number]> = [
  [(rng) => randomBytes(rng), 6],
  [reservedBits, 3],
  [unknownOpcode, 3],
  [unmasked, 3],
  [orphanContinuation, 2],
  [(rng) => controlTooLong(rng), 2],
  [(rng) => fragmentedControl(rng), 2],
  [dataInsideFragments, 2],
  [(rng) => hugeDeclaredLength(rng), 3],
  [payloadCutShort, 3],
  [frameCutShort, 3],
  [fragmentedMessage, 7],
  [tinyTcpPieces, 3],
  [unusualEncoding, 3],
  [(rng) => textFrames(rng), 3],
  [(rng) => closeCodes(rng), 5],
  [messagesAfterClose, 4],
  [pingPong, 3],
  [() => emptyBinary(), 1],
  [(rng, _id, target) => badUpgrade(rng, target), 7],
  [(rng, _id, target) => brokenHttp(rng, target), 2],
];

export function websocketCase(rng: SeededRandom, index: number, target: Target): FuzzCase {
  return rng.weighted(GENERATORS)(rng, `w${index}`, target);
}
