/**
 * One client connection: reads requests, answers hello and pose.list, runs rig/skin/pose.apply/pose.prepare/correctives
 * jobs, cancels them.
 * Every frame gets an answer or a job; a bad frame gets an error with a code and the connection keeps serving.
 * Jobs are keyed by id within this connection only, so clients never see each other's jobs; when the connection
 * closes, its jobs stop.
 */
import type { WebSocket, RawData } from 'ws';
import { decodeMessage, encodeMessage } from '../../shared-schema/codec.js';
import {
  readMessageId, validateRequest, validateServerMessage, type CorrectivesPreviewRequest, type CorrectivesRequest, type Limits,
  type PoseApplyRequest, type PosePrepareRequest, type RigRequest, type SkinRequest,
} from '../../shared-schema/validate.js';
import type { CorrectivesPreviewResult, CorrectivesResult, ObjectOffsets } from '../correctives/bakeCorrectives.js';
import { AutoRigError, type ErrorCode } from '../errors.js';
import type { LatentPosePrepared, LatentPoseResult } from '../pose/applyLatentPose.js';
import type { FacingHint } from '../mesh/facingHint.js';
import { facingHintOf, hintedFacingSource } from '../skeleton/skeletonFacing.js';
import { reuseHolds } from '../pose/reuseHolds.js';
import type { RigResult, SkinResult } from '../types.js';
import { helloResult } from './hello.js';
import type { JobInput, JobResult } from './jobMessages.js';
import type { JobQueue, RunningJob } from './jobs.js';
import { meshDigest, PoseReuseCache } from './poseReuseCache.js';

/** What the log says of a pose request held until another job has read its mesh (the fuzzer counts these lines). */
export const HELD_REQUEST_LOG = 'waits for the job reading its mesh';

export type Log = (line: string) => void;

/** The requests that run as a job. */
type JobRequest = RigRequest | SkinRequest | PoseApplyRequest | PosePrepareRequest | CorrectivesRequest | CorrectivesPreviewRequest;

export interface Connection {
  /** Stop this connection's jobs (on close, or when the server shuts down). */
  stopJobs(): void;
}

/** Serve one accepted WebSocket. `label` names it in the log; its jobs wait in `queue` (shared by all connections). */
export function serveConnection(
  socket: WebSocket, limits: Limits, log: Log, label: string, queue: JobQueue, poseReuse: PoseReuseCache = new PoseReuseCache(),
): Connection {
  const jobs = new Map<string, RunningJob>();

  const send = (message: Record<string, unknown>) => {
    if (socket.readyState === socket.OPEN) socket.send(encodeMessage(message), { binary: true });
  };
  const sendError = (id: string | null, code: ErrorCode, message: string) => send({ kind: 'error', id, code, message });

  const runJob = (request: JobRequest) => {
    const { id } = request;
    if (jobs.has(id)) throw new AutoRigError('DUPLICATE_ID', `a job with id '${id}' is still running`);
    // pose.apply / pose.prepare: what is known of exactly this mesh is keyed by its digest, taken before the arrays move
    // and by what turns its frame (a rig's sides, the user's facing): what was read in one frame does not serve another
    const meshKey = request.kind === 'pose.apply' || request.kind === 'pose.prepare'
      ? meshDigest(request.objects, requestFacingHint(request)?.direction) : null;
    startOrHold(request, meshKey);
  };

  /**
   * Start `request` now, or, when another pose job is reading its mesh (a prepare from the panel, or an apply), once
   * that job has ended: submitted at once, it would run beside that job having read nothing, and do the same work
   * again. Released, it asks again, so that of several requests held for one mesh the first reads what the job left
   * did not hold and the others wait for it in turn.
   */
  const startOrHold = (request: JobRequest, meshKey: string | null) => {
    const { id } = request;
    const reading = meshKey ? poseReuse.reading(meshKey) : undefined;
    if (!reading) {
      startJob(request, meshKey);
      return;
    }
    let waiting = true;
    jobs.set(id, { cancel: () => { waiting = false; } });
    log(`${label}: ${request.kind} '${printable(id)}' ${HELD_REQUEST_LOG}`);
    void reading.then(() => {
      if (!waiting) return; // cancelled, or the connection closed
      jobs.delete(id);
      try {
        startOrHold(request, meshKey);
      } catch (err) {
        sendError(id, err instanceof AutoRigError ? err.code : 'INTERNAL', err instanceof Error ? err.message : String(err));
      }
    });
  };

  /** Start `request`'s job now (or answer a prepare whose mesh is known already). meshKey: its meshDigest for the pose requests. */
  const startJob = (request: JobRequest, meshKey: string | null) => {
    const { id } = request;
    const started = performance.now();
    const named = `${request.kind} '${printable(id)}'`;
    const reuse = meshKey ? poseReuse.get(meshKey) : undefined;
    if (request.kind === 'pose.prepare' && reuseHolds(reuse, request.autoRig)) {
      const { frame } = reuse!.frame!;
      const prepared: LatentPosePrepared = {
        reusable: reuse!, reused: true, rig: request.autoRig ? 'auto' : 'none',
        facing: hintedFacingSource(reuse!.frame!, requestFacingHint(request)), forward: [...frame.forward], seconds: 0,
      };
      const reply = resultMessage(id, request.kind, prepared, limits, []);
      if (reply instanceof AutoRigError) sendError(id, reply.code, reply.message);
      else send(reply);
      log(`${label}: ${named}: its mesh is prepared already`);
      return;
    }
    // A job that fails to start is answered before submit returns; it must not be left in `jobs` then.
    let ended = false;
    // The mesh's arrays move to the worker; a pose or correctives answer is checked against the vertex counts sent.
    const sentLengths = request.objects.map((part) => part.positions.length);
    const input = jobInput(request);
    if ((input.request === 'pose' || input.request === 'pose.prepare') && reuse) input.reuse = reuse;
    // A job that will read its mesh (what it needs is not remembered) holds the other pose requests of that mesh
    // until it ends (answered, failed or cancelled): startOrHold.
    const needsAutoRig = request.kind === 'pose.prepare' ? request.autoRig : request.kind === 'pose.apply' && !request.rig;
    const reads = meshKey !== null && !reuseHolds(reuse, needsAutoRig);
    const readingEnded = reads ? poseReuse.beginReading(meshKey) : () => {};
    let running = false;
    const job = queue.submit(input, {
      onProgress: (stage, fraction) => {
        // The worker's first progress comes as soon as its thread holds the mesh: the job has left the queue.
        if (!running) {
          running = true;
          log(`${label}: ${named} started`);
        }
        send({ kind: 'progress', id, stage, fraction });
      },
      onResult: (result) => {
        ended = true;
        jobs.delete(id);
        const reply = resultMessage(id, request.kind, result, limits, sentLengths);
        if (reply instanceof AutoRigError) sendError(id, reply.code, reply.message);
        else {
          send(reply);
          const reusable = (result as LatentPoseResult | LatentPosePrepared).reusable;
          if (meshKey && reusable) poseReuse.set(meshKey, reusable);
        }
        readingEnded();
        log(`${label}: ${named} done in ${((performance.now() - started) / 1000).toFixed(2)} s`);
      },
      onError: (code, message) => {
        ended = true;
        jobs.delete(id);
        readingEnded();
        sendError(id, code, message);
        log(`${label}: ${named} failed: ${code} ${printable(message)}`);
      },
    });
    if (ended) return;
    jobs.set(id, { cancel: () => { job.cancel(); readingEnded(); } });
    const counts = queue.counts;
    log(`${label}: ${named} accepted (${request.objects.length} objects; ${counts.running} running, ${counts.waiting} waiting)`);
  };

  const cancelJob = (id: string) => {
    const job = jobs.get(id);
    if (!job) return; // finished already, or never existed: cancel has no reply of its own
    job.cancel();
    jobs.delete(id);
    sendError(id, 'CANCELLED', `job '${id}' was cancelled`);
    log(`${label}: '${printable(id)}' cancelled`);
  };

  /** pose.list: answered from the installed pose library, or with its error (MODEL_MISSING, MODEL_FAILED). */
  const listPoses = async (id: string) => {
    try {
      // Loaded on first use: the apply module brings the mesh and model code, which the server's thread needs for
      // nothing else.
      const { listLatentPoses } = await import('../pose/listLatentPoses.js');
      const reply = { kind: 'result', id, request: 'pose.list', poses: listLatentPoses() };
      validateServerMessage(reply, limits);
      send(reply);
    } catch (err) {
      if (err instanceof AutoRigError) sendError(id, err.code, err.message);
      else {
        sendError(id, 'INTERNAL', err instanceof Error ? err.message : String(err));
        log(`${label}: internal error in pose.list: ${err instanceof Error ? err.stack : String(err)}`);
      }
    }
  };

  /** Handle one frame; anything wrong with it is thrown as AutoRigError and answered by the caller. */
  const handleFrame = (bytes: Buffer): void => {
    if (bytes.byteLength > limits.maxMessageBytes) {
      throw new AutoRigError('TOO_LARGE', `the message has ${bytes.byteLength} bytes; the limit is ${limits.maxMessageBytes}`);
    }
    const message = decodeMessage(bytes);
    const request = validateRequest(message, limits);
    switch (request.kind) {
      case 'hello':
        send({ kind: 'result', id: request.id, request: 'hello', ...helloResult(limits) });
        return;
      case 'rig':
      case 'skin':
      case 'pose.apply':
      case 'pose.prepare':
      case 'correctives':
      case 'correctives.preview':
        runJob(request);
        return;
      case 'pose.list':
        void listPoses(request.id);
        return;
      case 'cancel':
        cancelJob(request.id);
        return;
    }
  };

  socket.on('message', (data: RawData, isBinary: boolean) => {
    const bytes = toBuffer(data);
    if (!isBinary) {
      sendError(null, 'BAD_MESSAGE', 'text frames are not part of the protocol: send one msgpack map per binary message');
      return;
    }
    try {
      handleFrame(bytes);
    } catch (err) {
      const id = idOfFrame(bytes, limits);
      if (err instanceof AutoRigError) {
        sendError(id, err.code, err.message);
      } else {
        sendError(id, 'INTERNAL', err instanceof Error ? err.message : String(err));
        log(`${label}: internal error: ${err instanceof Error ? err.stack : String(err)}`);
      }
    }
  });

  const stopJobs = () => {
    if (jobs.size > 0) log(`${label}: stopping ${jobs.size} running job(s): ${[...jobs.keys()].map(printable).join(', ')}`);
    for (const job of jobs.values()) job.cancel();
    jobs.clear();
  };
  socket.on('close', stopJobs);
  return { stopJobs };
}

/** What turns a pose request's frame (skeleton/skeletonFacing): the skeleton it sends (or its prepare names), else its facing. */
function requestFacingHint(request: JobRequest & { kind: 'pose.apply' | 'pose.prepare' }): FacingHint | null {
  const skeleton = request.kind === 'pose.apply' ? request.rig?.skeleton : request.skeleton;
  return facingHintOf(skeleton, request.facing);
}

/** The worker's job for a request that runs as one. */
function jobInput(request: JobRequest): JobInput {
  switch (request.kind) {
    case 'rig':
      return { request: 'rig', objects: request.objects, options: request.options };
    case 'skin':
      return { request: 'skin', objects: request.objects, skeleton: request.skeleton, locked: request.locked, options: request.options };
    case 'pose.apply':
      return {
        request: 'pose', objects: request.objects, pose: request.pose, strength: request.strength, strategy: request.strategy,
        ...(request.rig ? { rig: request.rig } : {}), ...(request.facing ? { facing: request.facing } : {}),
      };
    case 'pose.prepare':
      return {
        request: 'pose.prepare', objects: request.objects, autoRig: request.autoRig,
        ...(request.skeleton ? { skeleton: request.skeleton } : {}), ...(request.facing ? { facing: request.facing } : {}),
      };
    case 'correctives':
      return {
        request: 'correctives', objects: request.objects, skeleton: request.skeleton, weights: request.weights, options: request.options,
        examples: request.examples,
      };
    case 'correctives.preview': {
      const { objects, skeleton, weights, rotations, options } = request;
      return { request: 'correctives.preview', objects, skeleton, weights, rotations, options };
    }
  }
}

/** A client's text made safe for one log line: control characters (a newline could forge a line) become '?'. */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');
}

/** The id of a frame for an error reply, or null when the frame cannot be read that far. */
function idOfFrame(bytes: Buffer, limits: Limits): string | null {
  try {
    return readMessageId(decodeMessage(bytes), limits);
  } catch {
    return null;
  }
}

/** ws hands over a Buffer, an ArrayBuffer or fragments depending on its settings; make it one Buffer. */
function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/**
 * The result message of a finished job, exactly the fields of protocol.json (events.result + results[request]),
 * checked against it: a malformed pipeline output becomes an INTERNAL error instead of a reply the client cannot read.
 */
function resultMessage(
  id: string, request: JobRequest['kind'], result: JobResult, limits: Limits, sentLengths: number[],
): Record<string, unknown> | AutoRigError {
  const message = request === 'pose.apply'
    ? poseResultFields(result as LatentPoseResult)
    : request === 'pose.prepare'
      ? prepareResultFields(result as LatentPosePrepared)
      : request === 'correctives'
        ? correctivesResultFields(result as CorrectivesResult)
        : request === 'correctives.preview'
          ? previewResultFields(result as CorrectivesPreviewResult)
          : rigResultFields(request, result as RigResult | SkinResult);
  try {
    validateServerMessage({ kind: 'result', id, request, ...message }, limits);
    // The add-on writes a pose answer onto the vertices it sent: one position per vertex sent, object by object.
    const posed = request === 'pose.apply' ? (result as LatentPoseResult).objects : null;
    if (posed && (posed.length !== sentLengths.length || posed.some((part, k) => part.positions.length !== sentLengths[k]))) {
      throw new Error(`the posed vertices (${posed.map((p) => p.positions.length / 3).join(', ')}) do not match the vertices sent (${sentLengths.map((n) => n / 3).join(', ')})`);
    }
    // Offsets become shape keys of the objects sent: one offset per vertex sent, object by object, in every key.
    const offsetSets = request === 'correctives'
      ? (result as CorrectivesResult).keys.map((key) => key.objects)
      : request === 'correctives.preview' ? [(result as CorrectivesPreviewResult).objects] : [];
    for (const objects of offsetSets) {
      if (objects.length !== sentLengths.length || objects.some((part, k) => part.offsets.length !== sentLengths[k])) {
        throw new Error(`the offsets (${objects.map((p) => p.offsets.length / 3).join(', ')}) do not match the vertices sent (${sentLengths.map((n) => n / 3).join(', ')})`);
      }
    }
    return { kind: 'result', id, request, ...message };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return new AutoRigError('INTERNAL', `the pipeline returned a result that does not fit the protocol: ${reason}`);
  }
}

/** results['pose.apply'] of protocol.json from Apply Latent Pose's result. */
function poseResultFields(result: LatentPoseResult): Record<string, unknown> {
  return {
    objects: result.objects.map((part) => ({ name: part.name, positions: part.positions })),
    pose: result.pose,
    strength: result.strength,
    strategy: result.strategy,
    identity: result.identity,
    rig: result.rig,
    reused: result.reused,
    facing: result.facing,
    forward: [...result.forward],
    seconds: result.seconds,
    provider: result.provider,
  };
}

/** results['pose.prepare'] of protocol.json from prepareLatentPose's result. */
function prepareResultFields(result: LatentPosePrepared): Record<string, unknown> {
  return { reused: result.reused, rig: result.rig, facing: result.facing, forward: [...result.forward], seconds: result.seconds };
}

/** ObjectOffsets of protocol.json. */
function offsetFields(objects: ObjectOffsets[]): Record<string, unknown>[] {
  return objects.map((part) => ({ name: part.name, offsets: part.offsets }));
}

/** results.correctives of protocol.json from bakeCorrectives' result. */
function correctivesResultFields(result: CorrectivesResult): Record<string, unknown> {
  return {
    keys: result.keys.map((key) => ({
      name: key.name, bone: key.bone, pose: key.pose, axis: [...key.axis], angle: key.angle, objects: offsetFields(key.objects),
    })),
    method: result.method,
    // only a bake with examples has a fit (an absent field, not nil: the answer without examples is as before)
    ...(result.fit ? { fit: { ...result.fit } } : {}),
    seconds: result.seconds,
  };
}

/** results['correctives.preview'] of protocol.json from previewCorrectives' result. */
function previewResultFields(result: CorrectivesPreviewResult): Record<string, unknown> {
  return { objects: offsetFields(result.objects), method: result.method, seconds: result.seconds };
}

/** results.rig / results.skin of protocol.json from the pipeline's result. */
function rigResultFields(request: 'rig' | 'skin', result: RigResult | SkinResult): Record<string, unknown> {
  const message: Record<string, unknown> = {
    skeleton: {
      joints: result.skeleton.joints.map((joint) => ({
        name: joint.name,
        parent: joint.parent,
        head: [...joint.head],
        tail: [...joint.tail],
        roll: joint.roll,
      })),
    },
    objects: result.objects.map((part) => ({ name: part.name, influences: part.influences, indices: part.indices, weights: part.weights })),
    seconds: result.seconds,
  };
  if (request === 'rig') {
    const frame = (result as RigResult).frame;
    message.frame = { up: [...frame.up], forward: [...frame.forward], left: [...frame.left] };
    message.facing = (result as RigResult).facing;
  } else {
    message.facing = (result as SkinResult).facing;
    message.forward = [...(result as SkinResult).forward];
  }
  return message;
}
