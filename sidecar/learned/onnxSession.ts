/**
 * Running ONNX models in the sidecar: one onnxruntime InferenceSession per model file and thread, on the execution
 * provider chosen once for the sidecar (executionProvider.ts), with AutoRigError codes for what can go wrong:
 * MODEL_MISSING (no such file), MODEL_FAILED (corrupt model, a failed run, no working provider).
 *
 * Sessions are cached per thread: jobs run in worker threads (sidecar/server/jobs.ts) and an onnxruntime session
 * belongs to the thread that made it; each thread loads a model once and reuses it for every run after.
 * onnxruntime-node itself is loaded on first use only, so the geometric pipeline and every command that runs no
 * model never pay for it (60–150 ms here, and its native libraries).
 *
 * Callers pass and get plain typed arrays with their shape (TensorData), never onnxruntime's own types, so that only
 * this module knows onnxruntime-node.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { AutoRigError } from '../errors.js';
import { selectProvider } from './executionProvider.js';

export {
  DEFAULT_PROVIDER_ORDER,
  requestedProviders,
  selectedProvider,
  selectProvider,
  type ProviderSelection,
} from './executionProvider.js';

/** A loaded model, ready to run (onnxruntime's session; pass it to runModel). */
export type ModelSession = InferenceSession;

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
const sessions = new Map<string, Promise<InferenceSession>>();
/** The file each session was loaded from, for error messages. */
const modelNames = new WeakMap<InferenceSession, string>();

/**
 * The session of the model at `path` (.onnx), created on first call on the selected provider and the same object
 * for every later call with that path in this thread.
 * Throws AutoRigError MODEL_MISSING when there is no such file, MODEL_FAILED when onnxruntime cannot load it (corrupt
 * or unsupported model) or when no execution provider works; a failed load is not cached (a fixed file loads next time).
 */
export function loadModel(path: string): Promise<ModelSession> {
  const key = resolve(path);
  let session = sessions.get(key);
  if (!session) {
    session = createSession(key);
    sessions.set(key, session);
    session.catch(() => sessions.delete(key));
  }
  return session;
}

async function createSession(path: string): Promise<InferenceSession> {
  const name = basename(path);
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw new AutoRigError('MODEL_MISSING', `model ${name} is not installed (no file ${path})`);
  }
  const provider = await selectProvider();
  if (provider.name === 'none') {
    throw new AutoRigError('MODEL_FAILED', `no onnxruntime execution provider works here: ${provider.fallbackFrom.join('; ')}`);
  }
  const ort = await onnxRuntime();
  try {
    const session = await ort.InferenceSession.create(path, { executionProviders: [provider.name] });
    modelNames.set(session, name);
    return session;
  } catch (err) {
    throw new AutoRigError('MODEL_FAILED', `model ${name} could not be loaded (${provider.name}): ${oneLine(err)}`);
  }
}

/**
 * Run `session` once. feeds: input name → TensorData (each input the model declares; data.length = product of dims).
 * Returns output name → TensorResult for every output of the model.
 * Throws AutoRigError MODEL_FAILED when onnxruntime refuses the feeds or fails the run; a feed whose data does not
 * fit its dims is a caller's bug and throws a plain Error.
 */
export async function runModel(session: ModelSession, feeds: Record<string, TensorData>): Promise<Record<string, TensorResult>> {
  const ort = await onnxRuntime();
  const inputs: Record<string, Tensor> = {};
  for (const [name, feed] of Object.entries(feeds)) inputs[name] = new ort.Tensor(feed.data, feed.dims);
  let outputs: InferenceSession.OnnxValueMapType;
  try {
    outputs = await session.run(inputs);
  } catch (err) {
    throw new AutoRigError('MODEL_FAILED', `model ${modelNames.get(session) ?? '(unnamed)'} failed to run: ${oneLine(err)}`);
  }
  const results: Record<string, TensorResult> = {};
  for (const [name, value] of Object.entries(outputs)) {
    const tensor = value as Tensor;
    results[name] = { type: tensor.type, dims: [...tensor.dims], data: tensor.data as TensorData['data'] };
  }
  return results;
}
