/**
 * Session-level cases: what only a sequence of messages can get wrong — duplicate ids while a job runs, cancels
 * before, twice, for nothing, ids reused after a cancel, a hello sharing a running job's id, bursts of unrelated
 * messages in one write, the same id on two connections (a cancel on one must not touch the other), and pose jobs for
 * one mesh on two connections (one may wait for the other's reading; a cancel on either side must not leave the other
 * stuck). A case that expects its job still running when a later frame comes starts a rig or a skin
 * (RUNNING_JOB_BASES); jobs of every kind run in the schema cases, and the pose ones in the one-mesh case, whose
 * expected answers do not depend on timing.
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
/**
 * The job bases whose job on its tetrahedron lasts long enough for the frames written after it to find it running:
 * rig and skin (30–190 ms a job on a warm thread, `.tmp` probe). The correctives requests and a pose.apply with its
 * rig end in 1–20 ms, which the pauses of a split write can outlast: a duplicate-id case then got the first job's
 * result where it expected DUPLICATE_ID (seen once in the 10,000 cases of the CI seed). The pose requests that
 * auto-rig take 40–140 ms with the models installed, but a sidecar without them answers MODEL_MISSING at once (the
 * runner's own test of a dying sidecar runs one); their cancels are fuzzed by the one-mesh case.
 */
const RUNNING_JOB_BASES: readonly BaseName[] = ['rig', 'skin'];
/** The job bases that the sidecar's per-mesh reading holds (server/connection.ts startOrHold): every client shares it. */
const POSE_BASES = JOB_BASES.filter((name) => name.startsWith('pose.'));
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
  const first = rng.pick(RUNNING_JOB_BASES);
  // refused at once, whatever it is
  const second = rng.pick(JOB_BASES);
  return onOneConnection(rng, 'duplicate-id', [job(first, id), job(second, id), cancelFrame(id)], [{ kind: 'error', code: 'DUPLICATE_ID', id }, cancelled(id)]);
}

function helloSharesJobId(rng: SeededRandom, id: string): MessagesCase {
  return onOneConnection(rng, 'hello-shares-job-id', [job(rng.pick(RUNNING_JOB_BASES), id), hello(id), cancelFrame(id)], [{ kind: 'result', id }, cancelled(id)]);
}

function cancelTwice(rng: SeededRandom, id: string): MessagesCase {
  return onOneConnection(rng, 'cancel-twice', [job(rng.pick(RUNNING_JOB_BASES), id), cancelFrame(id), cancelFrame(id), hello(`${id}h`)], [cancelled(id), { kind: 'result', id: `${id}h` }]);
}

function reuseAfterCancel(rng: SeededRandom, id: string): MessagesCase {
  const rounds = rng.range(2, 4);
  const frames: Buffer[] = [];
  for (let i = 0; i < rounds; i++) frames.push(job(rng.pick(RUNNING_JOB_BASES), id), cancelFrame(id));
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
      if (SLOW_MUTATIONS.has(mutation.name)) continue;
      const exchange = mutationExchange(mutation);
      // A reply that comes when its work ends (a valid pose.list's, after a module load) may come behind the burst's
      // later replies, which must come in order: skipped, as independentMessages skips it.
      if (exchange.replies.some((reply) => reply.kind === 'terminal')) continue;
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
        { conn: 0, chunks: [job(rng.pick(RUNNING_JOB_BASES), id)] },
        { conn: 1, chunks: [job(rng.pick(RUNNING_JOB_BASES), id)] },
        { conn: 0, chunks: [cancelFrame(id)] },
      ],
      replies: [[cancelled(id)], []],
    },
    { writes: [{ conn: 1, chunks: [cancelFrame(id)] }], replies: [[], [cancelled(id)]] },
  ];
  return { layer: 'session', name: 'same-id-two-connections', shape: 'messages', phases };
}

/**
 * Pose jobs for the same mesh on two connections, then one side cancels its own. The second job may be held until the
 * first has read the mesh (the per-mesh reading is shared by all clients), and the cancel may find a job running, held
 * or already answered: whatever the timing, each side gets exactly one terminal answer (CANCELLED or its own outcome),
 * so a held request is released by the other side's cancel, and a cancel of a held request does not stop the reading
 * job. Half the time both jobs have the same id.
 */
function oneMeshTwoConnections(rng: SeededRandom, id: string): MessagesCase {
  const ids = [id, rng.chance(0.5) ? id : `${id}b`] as const;
  const canceller = rng.pick([0, 1] as const);
  const phase: Phase = {
    writes: [
      { conn: 0, chunks: [job(rng.pick(POSE_BASES), ids[0])] },
      { conn: 1, chunks: [job(rng.pick(POSE_BASES), ids[1])] },
      { conn: canceller, chunks: [cancelFrame(ids[canceller])] },
    ],
    replies: [[{ kind: 'terminal', id: ids[0] }], [{ kind: 'terminal', id: ids[1] }]],
  };
  return { layer: 'session', name: 'one-mesh-two-connections', shape: 'messages', phases: [phase] };
}

const GENERATORS: ReadonlyArray<readonly [(rng: SeededRandom, id: string) => MessagesCase, number]> = [
  [duplicateId, 4],
  [helloSharesJobId, 2],
  [cancelTwice, 2],
  [reuseAfterCancel, 2],
  [cancelUnknown, 2],
  [burst, 6],
  [sameIdTwoConnections, 2],
  [oneMeshTwoConnections, 2],
];

export function sessionCase(rng: SeededRandom, index: number): FuzzCase {
  return rng.weighted(GENERATORS)(rng, `q${index}`);
}
