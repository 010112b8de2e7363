/**
 * Running ONNX models in the sidecar: one onnxruntime InferenceSession per model file and thread, on the execution
 * provider chosen once for the sidecar (executionProvider.ts), with AutoRigError codes for what can go wrong:
 * MODEL_MISSING (no such file), MODEL_FAILED (corrupt model, a failed run, no working provider).
 *
 * Sessions are cached per thread: an onnxruntime session belongs to the thread that made it; each thread loads a model
 * once and reuses it for every run after. The server's job threads live for one job each, so there they hold no
 * sessions of their own: the server hands each job a port to its model host (sidecar/server/modelHost.ts), one
 * long-lived thread that loads every model once per sidecar, and useModelHost(port) makes loadModel/runModel in the
 * job's thread ask the host instead. Callers see no difference.
 * onnxruntime-node itself is loaded on first use only, so the geometric pipeline and every command that runs no
 * model never pay for it (60–150 ms here, and its native libraries).
 *
 * Callers pass and get plain typed arrays with their shape (TensorData), never onnxruntime's own types, so that only
 * this module knows onnxruntime-node.
 */
import { basename, resolve } from 'node:path';
import type { MessagePort } from 'node:worker_threads';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { AutoRigError, type ErrorCode } from '../errors.js';
import { selectProvider } from './executionProvider.js';
import { MODEL_FIRST_RUN_SIZES, modelNameOfFile, requireModelFile } from './modelFiles.js';

export {
  DEFAULT_PROVIDER_ORDER,
  requestedProviders,
  selectedProvider,
  selectProvider,
  type ProviderSelection,
} from './executionProvider.js';

/** A loaded model, ready to run (pass it to runModel): in this thread, or in the model host's. */
export interface ModelSession {
  /** the model file's name, for messages */
  readonly name: string;
  /** the model's declared inputs and outputs, in order */
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
}

/** A session of this thread: onnxruntime's own. */
interface LocalSession extends ModelSession {
  readonly session: InferenceSession;
}

/** A session held by the model host, named by its absolute path. */
interface HostedSession extends ModelSession {
  readonly path: string;
  readonly host: ModelHostClient;
}

/** A tensor as callers see it: a typed array (float32 → Float32Array, int64 → BigInt64Array, ...) and its shape, row-major. */
export interface TensorData {
  data: Exclude<Tensor.DataType, string[]>;
  dims: readonly number[];
}

/** A model output: TensorData plus onnxruntime's element type name ('float32', 'int64', ...). */
export interface TensorResult extends TensorData {
  type: string;
}

type OnnxRuntime = typeof import('onnxruntime-node');

/** Longest onnxruntime message passed on in an AutoRigError. */
const MAX_MESSAGE_CHARS = 400;

/** An onnxruntime error as one line: its lines joined (the detail is often on the second: "index: 1 Got: 3 Expected: 4"). */
function oneLine(err: unknown): string {
  const text = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text;
}

let runtime: Promise<OnnxRuntime> | undefined;

/** onnxruntime-node, loaded on first use (once per thread). */
function onnxRuntime(): Promise<OnnxRuntime> {
  runtime ??= import('onnxruntime-node').catch((err: unknown) => {
    runtime = undefined;
    throw new AutoRigError('MODEL_FAILED', `onnxruntime-node cannot be loaded: ${oneLine(err)}`);
  });
  return runtime;
}

/** This thread's sessions by absolute model path; a load in progress is shared by everyone asking for that path. */
const sessions = new Map<string, Promise<ModelSession>>();

/**
 * The session of the model at `path` (.onnx), created on first call on the selected provider and the same object
 * for every later call with that path in this thread (through the model host when useModelHost was called).
 * Throws AutoRigError MODEL_MISSING when there is no such file, MODEL_FAILED when onnxruntime cannot load it (corrupt
 * or unsupported model) or when no execution provider works; a failed load is not cached (a fixed file loads next time).
 */
export function loadModel(path: string): Promise<ModelSession> {
  const key = resolve(path);
  let session = sessions.get(key);
  if (!session && !hostClient && localSessionsRefused) {
    // A server's job thread reaches models through its job's model host only: onnxruntime loading or running on a
    // thread that is then terminated (a cancel, the idle thread's end) aborts the whole sidecar (refuseLocalSessions).
    return Promise.reject(new AutoRigError('INTERNAL', `model ${basename(key)} asked for on a job thread without a model host (a job that did not declare it, or work that outlived its job)`));
  }
  if (!session) {
    session = hostClient ? hostClient.load(key) : createSession(key);
    sessions.set(key, session);
    session.catch(() => sessions.delete(key));
  }
  return session;
}

/**
 * sessionOptions: what every session is created with on `provider` (an execution provider's name).
 * - No memory pattern: a session's second run then costs what its later ones do (point_rig: 49 ms, against 162 with
 *   it, the pattern being planned on that run); later runs cost the same either way.
 * - Intra-op threads that sleep instead of spinning while they wait for work. A run is never alone here: the job's own
 *   thread and the SDF samples' helper run beside the model host, and a spinning pool takes the cores they need. On 2
 *   cores a 50k-vertex Apply Latent Pose through the model host took 0.36–0.39 s (median of 9 warm applies, 2
 *   processes) against 0.47 with spinning, and point_rig alone ran in 47 ms on 80 ms of CPU against 54 on 110 (.tmp
 *   measurements, 2026-12-03). The outputs are the same.
 */
export function sessionOptions(provider: string): InferenceSession.SessionOptions {
  return {
    executionProviders: [provider],
    enableMemPattern: false,
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  };
}

async function createSession(path: string): Promise<LocalSession> {
  const name = basename(path);
  requireModelFile(path);
  const provider = await selectProvider();
  if (provider.name === 'none') {
    throw new AutoRigError('MODEL_FAILED', `no onnxruntime execution provider works here: ${provider.fallbackFrom.join('; ')}`);
  }
  const ort = await onnxRuntime();
  let session: InferenceSession;
  try {
    session = await ort.InferenceSession.create(path, sessionOptions(provider.name));
  } catch (err) {
    throw new AutoRigError('MODEL_FAILED', `model ${name} could not be loaded (${provider.name}): ${oneLine(err)}`);
  }
  const model = modelNameOfFile(name);
  await runOnceAtSizes(session, ort, model ? MODEL_FIRST_RUN_SIZES[model] : undefined);
  return { name, inputNames: [...session.inputNames], outputNames: [...session.outputNames], session };
}

/**
 * runOnceAtSizes: runs a new session once on made-up inputs at `sizes` (MODEL_FIRST_RUN_SIZES: each named
 * dimension's size), so that the first request's run costs what later ones do. Nothing when sizes is absent, or an
 * input is not float32 or names a dimension sizes lacks (a stand-in model of other inputs); a run that fails is left
 * to the real run to report, with the caller's message. The session keeps no state between runs: outputs are the same
 * with or without it. → whether it ran (and succeeded).
 */
export async function runOnceAtSizes(
  session: Pick<InferenceSession, 'inputMetadata' | 'run'>, ort: Pick<OnnxRuntime, 'Tensor'>, sizes: Record<string, number> | undefined,
): Promise<boolean> {
  if (!sizes) return false;
  const feeds: Record<string, Tensor> = {};
  for (const input of session.inputMetadata) {
    if (!input.isTensor || input.type !== 'float32') return false;
    const dims: number[] = [];
    for (const d of input.shape) {
      const size = typeof d === 'number' ? d : sizes[d];
      if (!(Number.isInteger(size) && size > 0)) return false;
      dims.push(size);
    }
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    // spread values, not zeros: a network that sorts or picks neighbours runs its usual course
    for (let i = 0; i < data.length; i++) data[i] = Math.sin(i * 12.9898) * 0.5;
    feeds[input.name] = new ort.Tensor(data, dims);
  }
  return session.run(feeds).then(() => true, () => false);
}

/**
 * Run `session` once. feeds: input name → TensorData (each input the model declares; data.length = product of dims).
 * Returns output name → TensorResult for every output of the model.
 * Throws AutoRigError MODEL_FAILED when onnxruntime refuses the feeds or fails the run (or the model host is gone);
 * a feed whose data does not fit its dims is a caller's bug and throws a plain Error.
 */
export async function runModel(session: ModelSession, feeds: Record<string, TensorData>): Promise<Record<string, TensorResult>> {
  for (const [name, feed] of Object.entries(feeds)) {
    const size = feed.dims.reduce((a, b) => a * b, 1);
    if (feed.data.length !== size) throw new Error(`feed ${name}: ${feed.data.length} values for dims [${feed.dims.join(', ')}]`);
  }
  if ('host' in session) {
    const hosted = session as HostedSession;
    return hosted.host.run(hosted.path, feeds);
  }
  if (!('session' in session)) throw new Error('runModel: not a session made by loadModel');
  return runLocal(session as LocalSession, feeds);
}

async function runLocal(local: LocalSession, feeds: Record<string, TensorData>): Promise<Record<string, TensorResult>> {
  const ort = await onnxRuntime();
  const inputs: Record<string, Tensor> = {};
  for (const [name, feed] of Object.entries(feeds)) inputs[name] = new ort.Tensor(feed.data, feed.dims);
  let outputs: InferenceSession.OnnxValueMapType;
  try {
    outputs = await local.session.run(inputs);
  } catch (err) {
    throw new AutoRigError('MODEL_FAILED', `model ${local.name} failed to run: ${oneLine(err)}`);
  }
  const results: Record<string, TensorResult> = {};
  for (const [name, value] of Object.entries(outputs)) {
    const tensor = value as Tensor;
    results[name] = { type: tensor.type, dims: [...tensor.dims], data: tensor.data as TensorData['data'] };
  }
  return results;
}

/* ---- the model host: serving this thread's sessions to other threads, and asking it from a job's thread ---- */

/** A job thread's request to the model host, on the port the server gave the job. */
export type ModelHostRequest =
  | { id: number; op: 'load'; path: string }
  | { id: number; op: 'run'; path: string; feeds: Record<string, TensorData> };

/** The host's answer to the request with the same id. */
export type ModelHostAnswer =
  | { id: number; ok: true; inputNames: string[]; outputNames: string[] }
  | { id: number; ok: true; outputs: Record<string, TensorResult> }
  | { id: number; ok: false; code: ErrorCode; message: string };

/**
 * Answer one request from a job's thread with this thread's own sessions (the model host's side). Never throws:
 * failures are answers with the AutoRigError's code (INTERNAL for anything else).
 */
export async function answerModelRequest(request: ModelHostRequest): Promise<{ answer: ModelHostAnswer; transfer: ArrayBuffer[] }> {
  try {
    const session = (await loadModel(request.path)) as LocalSession;
    if (request.op === 'load') {
      return { answer: { id: request.id, ok: true, inputNames: [...session.inputNames], outputNames: [...session.outputNames] }, transfer: [] };
    }
    const outputs = await runLocal(session, request.feeds);
    const transfer = Object.values(outputs).flatMap((o) => (o.data.buffer instanceof ArrayBuffer ? [o.data.buffer] : []));
    return { answer: { id: request.id, ok: true, outputs }, transfer: [...new Set(transfer)] };
  } catch (err) {
    const code: ErrorCode = err instanceof AutoRigError ? err.code : 'INTERNAL';
    return { answer: { id: request.id, ok: false, code, message: err instanceof Error ? err.message : String(err) }, transfer: [] };
  }
}

/** The job thread's end of a port to the model host. */
class ModelHostClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (answer: ModelHostAnswer) => void; reject: (err: Error) => void }>();
  private closed = false;

  constructor(private readonly port: MessagePort) {
    port.on('message', (answer: ModelHostAnswer) => {
      const waiter = this.pending.get(answer.id);
      if (!waiter) return;
      this.pending.delete(answer.id);
      this.holdThread();
      waiter.resolve(answer);
    });
    // The host thread ended (it crashed, or the sidecar is stopping): whatever was asked will never be answered.
    port.on('close', () => {
      this.closed = true;
      for (const waiter of this.pending.values()) waiter.reject(new AutoRigError('MODEL_FAILED', 'the model host stopped before answering'));
      this.pending.clear();
    });
    this.holdThread();
  }

  async load(path: string): Promise<HostedSession> {
    const answer = await this.ask({ op: 'load', path });
    if (!('inputNames' in answer)) throw new Error('the model host answered a load with outputs');
    return { name: basename(path), inputNames: answer.inputNames, outputNames: answer.outputNames, path, host: this };
  }

  async run(path: string, feeds: Record<string, TensorData>): Promise<Record<string, TensorResult>> {
    const answer = await this.ask({ op: 'run', path, feeds });
    if (!('outputs' in answer)) throw new Error('the model host answered a run without outputs');
    return answer.outputs;
  }

  private ask(request: { op: 'load'; path: string } | { op: 'run'; path: string; feeds: Record<string, TensorData> }) {
    if (this.closed) return Promise.reject(new AutoRigError('MODEL_FAILED', 'the model host has stopped'));
    const id = this.nextId++;
    return new Promise<ModelHostAnswer & { ok: true }>((resolve, reject) => {
      this.pending.set(id, {
        resolve: (answer) => (answer.ok ? resolve(answer) : reject(new AutoRigError(answer.code, answer.message))),
        reject,
      });
      this.holdThread();
      // Feeds are copied, not transferred: callers keep using their arrays.
      this.port.postMessage({ ...request, id } as ModelHostRequest);
    });
  }

  /** Close the port: the host forgets this client; anything still awaited is answered MODEL_FAILED. */
  close(): void {
    this.port.close();
  }

  /** The port keeps the thread alive only while an answer is awaited, so a finished job's thread still ends by itself. */
  private holdThread(): void {
    if (this.pending.size > 0) this.port.ref();
    else this.port.unref();
  }
}

let hostClient: ModelHostClient | null = null;
/** Set on a server's job threads (refuseLocalSessions): loadModel never loads a session of this thread's own. */
let localSessionsRefused = false;

/**
 * From now on, this thread's loadModel and runModel go through the model host at the other end of `port` (a job
 * thread of the server calls it first thing). Sessions loaded here before still run here for whoever holds them, but
 * loadModel hands out the host's from now on.
 */
export function useModelHost(port: MessagePort): void {
  hostClient?.close();
  hostClient = new ModelHostClient(port);
  sessions.clear();
}

/**
 * This thread's job is done with the model host: its port is closed (the host forgets it) and the sessions it handed
 * out are forgotten here. A job thread kept for the next job calls it after each job; the next job brings a new port.
 */
export function stopUsingModelHost(): void {
  hostClient?.close();
  hostClient = null;
  sessions.clear();
}

/**
 * From now on, for the thread's life, it reaches models only through a model host (useModelHost): without one (before
 * a job's useModelHost, after its stopUsingModelHost), loadModel rejects (INTERNAL) instead of loading a session here.
 * A server's job threads call it at start, when the server has a model host: onnxruntime loading or running on a
 * thread that is then terminated (a cancelled job, the idle thread's end) aborts the process, and a job that did not
 * declare its models (methods.ts), or work a failed job left running (Apply Latent Pose's encoder branch after its
 * auto-rig failed, between jobs), would otherwise load one on the job thread.
 */
export function refuseLocalSessions(): void {
  localSessionsRefused = true;
}
