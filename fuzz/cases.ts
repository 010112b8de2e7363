/**
 * What a fuzz case is, and what the server must answer to it.
 *
 * A case is bytes to write and the answer they must get. Three shapes:
 * - messages: protocol messages on authenticated connections (0: the runner's, 1: a second one for cross-talk
 *   checks), in phases; after each phase both connections are probed with `hello` and each must have received
 *   exactly the expected replies, in order.
 * - frames: raw WebSocket bytes on the runner's connection, then wait, half-close (end) or reset; the server must
 *   close the connection (with one of the listed codes) or, for well-formed oddities (fragments, pings), answer.
 * - handshake: raw bytes on a fresh TCP connection instead of a valid upgrade; the server must answer one of the
 *   listed HTTP statuses (0: it closed without answering).
 *
 * The oracle (predictReply) says what the sidecar answers to one binary message when no job is running, using the
 * sidecar's own decoder and validator: msgpack-level mutations are too many to predict by hand, and the point there
 * is that every one is answered with a code and nothing crashes. Schema-level cases state their code by hand.
 */
import { decodeMessage, encodeMessage } from '../shared-schema/codec.js';
import { protocolLimits, readMessageId, validateRequest } from '../shared-schema/validate.js';
import { AutoRigError, type ErrorCode } from '../sidecar/errors.js';
import type { CloseOutcome } from './rawConnection.js';
import { binaryFrame } from './wsWire.js';

export type Layer = 'websocket' | 'msgpack' | 'schema' | 'session';
export const LAYERS: readonly Layer[] = ['websocket', 'msgpack', 'schema', 'session'];

/**
 * One reply a case expects: a result, an error with this code, for a job left to run any final message except
 * INTERNAL ('terminal'), or, for a valid job sent with its cancel right behind it, CANCELLED or its result ('accepted':
 * a job that ends within a few milliseconds may have answered before a cancel that came in a later TCP segment).
 * `id` is the id the reply must carry (null: the request's id could not be read).
 */
export type ExpectedReply =
  | { kind: 'result'; id: string }
  | { kind: 'error'; code: ErrorCode; id: string | null }
  | { kind: 'terminal'; id: string }
  | { kind: 'accepted'; id: string };

/** What a valid job followed by its cancel must get (see ExpectedReply 'accepted'). */
export const acceptedJob = (id: string): ExpectedReply => ({ kind: 'accepted', id });

/** Writes to one connection: the chunks are written one by one (each its own TCP segment). */
export interface Write {
  conn: 0 | 1;
  chunks: Buffer[];
}

/** One phase of a messages case: its writes, then the replies each connection must have received. */
export interface Phase {
  writes: Write[];
  replies: [ExpectedReply[], ExpectedReply[]];
}

interface CaseBase {
  layer: Layer;
  /** The generator's name: cases are counted by it, and it says what a failing case was trying. */
  name: string;
}

export interface MessagesCase extends CaseBase {
  shape: 'messages';
  phases: Phase[];
}

/** What a frames case must get: a close (any code, or one of these), or replies and pongs as in a phase. */
export type FramesExpectation = { close: 'any' | CloseOutcome[] } | { replies: ExpectedReply[]; pongs: number };

export interface FramesCase extends CaseBase {
  shape: 'frames';
  chunks: Buffer[];
  /** After writing: wait for the answer, half-close our side, or abort with a TCP reset. */
  then: 'wait' | 'end' | 'reset';
  expect: FramesExpectation;
}

export interface HandshakeCase extends CaseBase {
  shape: 'handshake';
  chunks: Buffer[];
  /** After writing: wait for the answer, or half-close and then wait. */
  then: 'wait' | 'end';
  /** Acceptable HTTP statuses; 0 means the server closed the connection without a response. */
  statuses: number[];
}

export type FuzzCase = MessagesCase | FramesCase | HandshakeCase;

/** What the sidecar does with one binary message on a connection where no job is running. */
export type Prediction =
  | { kind: 'reply'; reply: ExpectedReply }
  /** A valid job request (rig, skin, pose.apply, pose.prepare, correctives…): a job starts; its id is free for nothing else until it ends. */
  | { kind: 'job'; id: string }
  /** A valid cancel: no reply of its own. */
  | { kind: 'silent'; id: string };

/**
 * Predict the sidecar's answer to one binary message, mirroring connection.ts: the size limit, decode, validate;
 * an AutoRigError is answered with its code and the id read from the message, anything else is INTERNAL.
 */
export function predictReply(payload: Buffer): Prediction {
  let id: string | null = null;
  try {
    if (payload.byteLength > protocolLimits.maxMessageBytes) throw new AutoRigError('TOO_LARGE', 'over maxMessageBytes');
    const message = decodeMessage(payload);
    id = readMessageId(message);
    const request = validateRequest(message);
    switch (request.kind) {
      case 'hello':
        return { kind: 'reply', reply: { kind: 'result', id: request.id } };
      case 'cancel':
        return { kind: 'silent', id: request.id };
      case 'pose.list':
        // the installed library's poses, or its error (MODEL_MISSING / MODEL_FAILED) where no models are installed
        return { kind: 'reply', reply: { kind: 'terminal', id: request.id } };
      default:
        return { kind: 'job', id: request.id };
    }
  } catch (err) {
    if (id === null) id = idOfPayload(payload);
    const code: ErrorCode = err instanceof AutoRigError ? err.code : 'INTERNAL';
    return { kind: 'reply', reply: { kind: 'error', code, id } };
  }
}

/** The id the sidecar reads from a message it could not accept (null when unreadable). */
function idOfPayload(payload: Buffer): string | null {
  try {
    return readMessageId(decodeMessage(payload));
  } catch {
    return null;
  }
}

/** A cancel request for `id`, as a frame. */
export function cancelFrame(id: string): Buffer {
  return binaryFrame(encodeMessage({ kind: 'cancel', id }));
}

/**
 * The frames and expected replies of independent messages sent back to back on one connection (each with an id of
 * its own). A message predicted to start a job is followed by a cancel for it, so that the job ends at once with
 * CANCELLED, or has answered with its result just before (pipeline runs are what the 'terminal' schema cases are
 * for; a result sent before the cancel was read still comes before the later messages' replies). Returns null when a message would get no
 * reply at all (a valid cancel) or one out of order (a valid pose.list): the caller makes another.
 */
export function independentMessages(payloads: Buffer[]): { frames: Buffer[]; replies: ExpectedReply[] } | null {
  const frames: Buffer[] = [];
  const replies: ExpectedReply[] = [];
  const jobIds = new Set<string>();
  for (const payload of payloads) {
    const prediction = predictReply(payload);
    // A valid cancel has no reply; pose.list's comes after a module load, out of the burst's order.
    if (prediction.kind === 'silent' || (prediction.kind === 'reply' && prediction.reply.kind === 'terminal')) return null;
    if (prediction.kind === 'job') {
      // Two jobs with one id in a burst would be a DUPLICATE_ID case; bursts are about independence.
      if (jobIds.has(prediction.id)) return null;
      jobIds.add(prediction.id);
      frames.push(binaryFrame(payload), cancelFrame(prediction.id));
      replies.push(acceptedJob(prediction.id));
    } else {
      frames.push(binaryFrame(payload));
      replies.push(prediction.reply);
    }
  }
  return { frames, replies };
}

/**
 * Split `bytes` into 1..maxPieces chunks at random cut points, so that a frame or message arrives across TCP
 * segments. `cut(n)` returns a random integer in [0, n).
 */
export function splitBytes(bytes: Buffer, pieces: number, cut: (n: number) => number): Buffer[] {
  if (pieces <= 1 || bytes.length < 2) return [bytes];
  const points = new Set<number>();
  for (let i = 1; i < pieces; i++) points.add(1 + cut(bytes.length - 1));
  const sorted = [...points].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of sorted) {
    chunks.push(bytes.subarray(start, point));
    start = point;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

/** A one-phase messages case on the runner's connection. */
export function singlePhase(layer: Layer, name: string, chunks: Buffer[], replies: ExpectedReply[]): MessagesCase {
  return { layer, name, shape: 'messages', phases: [{ writes: [{ conn: 0, chunks }], replies: [replies, []] }] };
}
