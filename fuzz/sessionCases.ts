/**
 * Session-level cases: what only a sequence of messages can get wrong — duplicate ids while a job runs, cancels
 * before, twice, for nothing, ids reused after a cancel, a hello sharing a running job's id, bursts of unrelated
 * messages in one write, and the same id on two connections (a cancel on one must not touch the other). The jobs are
 * of every kind but in the two-connection case, which needs its job still running when the second phase cancels it (a
 * pose job on a tetrahedron can end, refused, before that).
 */
import { encodeMessage } from '../shared-schema/codec.js';
import { cancelFrame, independentMessages, splitBytes, type ExpectedReply, type FuzzCase, type MessagesCase, type Phase } from './cases.js';
import { msgpackPayload } from './msgpackCases.js';
import type { SeededRandom } from './random.js';
import { BASE_REQUESTS, basesSending, type BaseName } from './requests.js';
import { mutationExchange, schemaMutation, SLOW_MUTATIONS } from './schemaCases.js';
import { binaryFrame } from './wsWire.js';

/** The bases whose valid request starts a job: those that send a mesh. */
const JOB_BASES = basesSending('objects');
const job = (name: BaseName, id: string) => binaryFrame(encodeMessage(BASE_REQUESTS[name](id)));
const hello = (id: string) => binaryFrame(encodeMessage(BASE_REQUESTS.hello(id)));
const cancelled = (id: string): ExpectedReply => ({ kind: 'error', code: 'CANCELLED', id });

/** A one-connection, one-phase case whose frames may arrive split anywhere. */
function onOneConnection(rng: SeededRandom, name: string, frames: Buffer[], replies: ExpectedReply[]): MessagesCase {
  const bytes = Buffer.concat(frames);
  const chunks = rng.chance(0.3) ? splitBytes(bytes, rng.range(2, 8), (n) => rng.int(n)) : [bytes];
  return { layer: 'session', name, shape: 'messages', phases: [{ writes: [{ conn: 0, chunks }], replies: [replies, []] }] };
}

function duplicateId(rng: SeededRandom, id: string): MessagesCase {
  const first = rng.pick(JOB_BASES);
  const second = rng.pick(JOB_BASES);
  return onOneConnection(rng, 'duplicate-id', [job(first, id), job(second, id), cancelFrame(id)], [{ kind: 'error', code: 'DUPLICATE_ID', id }, cancelled(id)]);
}

function helloSharesJobId(rng: SeededRandom, id: string): MessagesCase {
  return onOneConnection(rng, 'hello-shares-job-id', [job(rng.pick(JOB_BASES), id), hello(id), cancelFrame(id)], [{ kind: 'result', id }, cancelled(id)]);
}

function cancelTwice(rng: SeededRandom, id: string): MessagesCase {
  return onOneConnection(rng, 'cancel-twice', [job(rng.pick(JOB_BASES), id), cancelFrame(id), cancelFrame(id), hello(`${id}h`)], [cancelled(id), { kind: 'result', id: `${id}h` }]);
}

function reuseAfterCancel(rng: SeededRandom, id: string): MessagesCase {
  const rounds = rng.range(2, 4);
  const frames: Buffer[] = [];
  for (let i = 0; i < rounds; i++) frames.push(job(rng.pick(JOB_BASES), id), cancelFrame(id));
  return onOneConnection(rng, 'reuse-after-cancel', frames, Array.from({ length: rounds }, () => cancelled(id)));
}

function cancelUnknown(rng: SeededRandom, id: string): MessagesCase {
  return onOneConnection(rng, 'cancel-unknown', [cancelFrame(id), cancelFrame(`${id}x`), hello(id)], [{ kind: 'result', id }]);
}

/** 2..24 unrelated messages (schema mutations and mangled bytes) in one write; each answered, in order. */
function burst(rng: SeededRandom, id: string): MessagesCase {
  const count = rng.range(2, 24);
  const frames: Buffer[] = [];
  const replies: ExpectedReply[] = [];
  for (let i = 0; frames.length === 0 || i < count; i++) {
    const messageId = `${id}.${i}`;
    if (rng.chance(0.5)) {
      const mutation = schemaMutation(rng, messageId);
      // pose.list is answered after a module load, behind the burst's later replies: bursts are answered in order
      if (SLOW_MUTATIONS.has(mutation.name) || (mutation.kind === 'pose.list' && mutation.expect === 'valid')) continue;
      const exchange = mutationExchange(mutation);
      frames.push(...exchange.frames);
      replies.push(...exchange.replies);
    } else {
      const exchange = independentMessages([msgpackPayload(rng, messageId).payload]);
      // A mangled message may have kept another message's id (or lost its own): only distinct ids keep the burst's
      // messages independent, so such draws are skipped.
      if (!exchange || exchange.replies.some((reply) => reply.id !== null && reply.id !== messageId)) continue;
      frames.push(...exchange.frames);
      replies.push(...exchange.replies);
    }
  }
  return onOneConnection(rng, 'burst', frames, replies);
}

/**
 * The same job id on two connections. Phase 1: both start it, connection 0 cancels — only connection 0 hears
 * CANCELLED. Phase 2: connection 1 cancels its own (still running or queued: it was never touched).
 */
function sameIdTwoConnections(rng: SeededRandom, id: string): MessagesCase {
  const phases: Phase[] = [
    {
      writes: [
        { conn: 0, chunks: [job(rng.pick(['rig', 'skin'] as const), id)] },
        { conn: 1, chunks: [job(rng.pick(['rig', 'skin'] as const), id)] },
        { conn: 0, chunks: [cancelFrame(id)] },
      ],
      replies: [[cancelled(id)], []],
    },
    { writes: [{ conn: 1, chunks: [cancelFrame(id)] }], replies: [[], [cancelled(id)]] },
  ];
  return { layer: 'session', name: 'same-id-two-connections', shape: 'messages', phases };
}

const GENERATORS: ReadonlyArray<readonly [(rng: SeededRandom, id: string) => MessagesCase, number]> = [
  [duplicateId, 4],
  [helloSharesJobId, 2],
  [cancelTwice, 2],
  [reuseAfterCancel, 2],
  [cancelUnknown, 2],
  [burst, 6],
  [sameIdTwoConnections, 2],
];

export function sessionCase(rng: SeededRandom, index: number): FuzzCase {
  return rng.weighted(GENERATORS)(rng, `q${index}`);
}
