/**
 * Running ONNX models in the sidecar (sidecar/learned/): the execution provider chosen by probing and its fallback to
 * cpu, the error codes for a missing or corrupt model, one session per model and thread, the tiny fixture model's
 * output against PyTorch's, and the provider in a real sidecar's hello.
 *
 * The fixture (test/fixtures/onnx/tiny_softmax.onnx, y = softmax(x W + b)) and PyTorch's output for a fixed input
 * come from test/fixtures/onnx/make_tiny_model.py.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { decodeMessage, encodeMessage } from '../shared-schema/codec.js';
import { validateServerMessage } from '../shared-schema/validate.js';
import { AutoRigError } from '../sidecar/errors.js';
import {
  conciseError, DEFAULT_PROVIDER_ORDER, probeProviders, PROVIDER_HANDOFF_ENV, readProbeRun, requestedProviders, type ProbeRun,
} from '../sidecar/learned/executionProvider.js';
import { loadModel, runModel, selectedProvider } from '../sidecar/learned/onnxSession.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const devRegister = new URL('../sidecar/server/devTsRegister.mjs', import.meta.url).href;
const MODEL = fileURLToPath(new URL('./fixtures/onnx/tiny_softmax.onnx', import.meta.url));
const EXPECTED = JSON.parse(readFileSync(new URL('./fixtures/onnx/tiny_softmax.expected.json', import.meta.url), 'utf8')) as {
  input: { name: string; dims: number[]; data: number[] };
  output: { name: string; dims: number[]; data: number[] };
};
const TOKEN = 'onnx-test-token-0123456789abcdef';

/** True when onnxruntime-node's CUDA provider library is installed here (the install normally skips it). */
const cudaLibraryInstalled = existsSync(
  join(dirname(createRequire(import.meta.url).resolve('onnxruntime-node')), '..', 'bin', 'napi-v6', process.platform, process.arch, 'libonnxruntime_providers_cuda.so'),
);

const tmp = mkdtempSync(join(tmpdir(), 'autorig-onnx-'));
const savedProvider = process.env.AUTORIG_PROVIDER;
beforeAll(() => {
  // This file's own sessions run on cpu: the same answer on every machine, and a quick probe.
  process.env.AUTORIG_PROVIDER = 'cpu';
});
afterAll(() => {
  if (savedProvider === undefined) delete process.env.AUTORIG_PROVIDER;
  else process.env.AUTORIG_PROVIDER = savedProvider;
  rmSync(tmp, { recursive: true, force: true });
});

/** The largest |a - b| over two equally long lists. */
function maxDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

/** The AutoRigError code a promise rejects with (fails the test when it resolves or throws something else). */
async function errorCode(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(AutoRigError);
  return (err as AutoRigError).code;
}

describe('the requested order', () => {
  it('reads AUTORIG_PROVIDER as one name or a comma list, else cuda → webgpu → cpu', () => {
    expect(requestedProviders({})).toEqual(['cuda', 'webgpu', 'cpu']);
    expect(requestedProviders({ AUTORIG_PROVIDER: '' })).toEqual([...DEFAULT_PROVIDER_ORDER]);
    expect(requestedProviders({ AUTORIG_PROVIDER: ' , ' })).toEqual([...DEFAULT_PROVIDER_ORDER]);
    expect(requestedProviders({ AUTORIG_PROVIDER: 'cuda' })).toEqual(['cuda']);
    expect(requestedProviders({ AUTORIG_PROVIDER: ' TensorRT, cuda,,cpu, cuda ' })).toEqual(['tensorrt', 'cuda', 'cpu']);
  });
});

describe('reading a probe run', () => {
  const run = (stdout: string, end: Partial<ProbeRun> = {}): ProbeRun => ({ stdout, stderr: '', status: 0, signal: null, timedOut: false, ...end });
  const line = (provider: string, ok: boolean, error?: string) => `${JSON.stringify({ provider, ok, error, ms: 1 })}\n`;

  it('takes the first provider that worked and the reasons of those before it', () => {
    const read = readProbeRun(['cuda', 'webgpu', 'cpu'], run(line('cuda', false, 'no libcudart\nstack…') + line('webgpu', false, 'no adapter') + line('cpu', true)));
    expect(read).toEqual({ chosen: 'cpu', failures: ['cuda: no libcudart', 'webgpu: no adapter'], rest: [] });
  });

  it('blames the provider being tried when the probe process crashes or hangs, and goes on with the rest', () => {
    const crashed = readProbeRun(['tensorrt', 'cuda', 'cpu'], run(line('tensorrt', false, 'no libs'), { status: null, signal: 'SIGSEGV' }));
    expect(crashed).toEqual({ chosen: null, failures: ['tensorrt: no libs', 'cuda: the probe process was killed by SIGSEGV'], rest: ['cpu'] });
    const hung = readProbeRun(['cuda', 'cpu'], run('', { status: null, timedOut: true }));
    expect(hung.failures).toEqual(['cuda: the probe did not finish within 60 s']);
    expect(hung.rest).toEqual(['cpu']);
    const exited = readProbeRun(['cuda', 'cpu'], run('', { status: 134, stderr: 'noise\nterminate called: CUDA driver version is insufficient\n' }));
    expect(exited.failures).toEqual(['cuda: the probe process exited with code 134: terminate called: CUDA driver version is insufficient']);
  });

  it('fails every provider, with no retry, when onnxruntime-node cannot be loaded or node cannot start', () => {
    const fatal = readProbeRun(['cuda', 'cpu'], run(`${JSON.stringify({ fatal: 'cannot load onnxruntime-node: libstdc++ too old' })}\n`));
    expect(fatal).toEqual({ chosen: null, failures: ['cuda: cannot load onnxruntime-node: libstdc++ too old', 'cpu: cannot load onnxruntime-node: libstdc++ too old'], rest: [] });
    const unstarted = readProbeRun(['cpu'], run('', { status: null, spawnError: 'spawn node ENOENT' }));
    expect(unstarted).toEqual({ chosen: null, failures: ['cpu: the probe process could not start: spawn node ENOENT'], rest: [] });
  });

  it('skips stdout lines that are not its own', () => {
    const read = readProbeRun(['cpu'], run(`warning: something\n{not json\n${line('webgpu', true)}${line('cpu', true)}`));
    expect(read.chosen).toBe('cpu');
  });

  it('keeps the message of an onnxruntime assertion, without its source location', () => {
    const webgpu =
      '/onnxruntime_src/onnxruntime/core/providers/webgpu/webgpu_context.cc:136 onnxruntime::webgpu::WebGpuContext::Initialize(const onnxruntime::webgpu::WebGpuContextConfig&)::<lambda()> adapter_result.status == wgpu::RequestAdapterStatus::Success was false. Failed to get a WebGPU adapter: No supported adapters';
    expect(conciseError(webgpu)).toBe('Failed to get a WebGPU adapter: No supported adapters');
    expect(conciseError('\n\n  first line  \nsecond')).toBe('first line');
    expect(conciseError('x'.repeat(1000))).toHaveLength(300);
  });
});

describe('probing the providers (a real probe process)', { timeout: 60_000 }, () => {
  it('falls back to cpu when cuda is asked for and its libraries are missing, and says why', () => {
    const selection = probeProviders(requestedProviders({ AUTORIG_PROVIDER: 'cuda' }));
    expect(selection.requested).toEqual(['cuda']);
    if (cudaLibraryInstalled && selection.name === 'cuda') {
      expect(selection.fallbackFrom).toEqual([]);
      return;
    }
    expect(selection.name).toBe('cpu');
    expect(selection.fallbackFrom).toHaveLength(1);
    expect(selection.fallbackFrom[0]).toMatch(/^cuda: \S/);
    if (!cudaLibraryInstalled) expect(selection.fallbackFrom[0]).toMatch(/Failed to load shared library/);
  });

  it('gives cpu, with no fallback, when cpu is asked for', () => {
    expect(probeProviders(['cpu'])).toEqual({ name: 'cpu', fallbackFrom: [], requested: ['cpu'] });
  });

  it('refuses an unknown provider or a malformed name and still ends on cpu', () => {
    const selection = probeProviders(['bogus', 'Not A Name']);
    expect(selection.name).toBe('cpu');
    expect(selection.fallbackFrom).toEqual(['Not A Name: not a provider name', expect.stringMatching(/^bogus: .*backend not found/)]);
  });
});

describe('loading and running a model', { timeout: 60_000 }, () => {
  it('uses the provider this process chose (AUTORIG_PROVIDER=cpu here), and hands it to later threads', () => {
    expect(selectedProvider()).toEqual({ name: 'cpu', fallbackFrom: [], requested: ['cpu'] });
    expect(JSON.parse(process.env[PROVIDER_HANDOFF_ENV] ?? 'null')).toEqual(selectedProvider());
  });

  it("reproduces PyTorch's output of the fixture within 1e-4", async () => {
    const session = await loadModel(MODEL);
    const outputs = await runModel(session, { x: { data: Float32Array.from(EXPECTED.input.data), dims: EXPECTED.input.dims } });
    expect(Object.keys(outputs)).toEqual(['y']);
    expect(outputs.y.type).toBe('float32');
    expect(outputs.y.dims).toEqual(EXPECTED.output.dims);
    expect(maxDifference(outputs.y.data as Float32Array, EXPECTED.output.data)).toBeLessThan(1e-4);
    // the comparison can fail: a different input gives a different answer
    const shifted = await runModel(session, { x: { data: Float32Array.from(EXPECTED.input.data, (v) => v + 1), dims: EXPECTED.input.dims } });
    expect(maxDifference(shifted.y.data as Float32Array, EXPECTED.output.data)).toBeGreaterThan(1e-2);
  });

  it('creates one session per model file and reuses it', async () => {
    const [a, b] = await Promise.all([loadModel(MODEL), loadModel(MODEL)]);
    expect(a).toBe(b);
    expect(await loadModel(join(dirname(MODEL), '.', 'tiny_softmax.onnx'))).toBe(a);
    const copy = join(tmp, 'copy.onnx');
    copyFileSync(MODEL, copy);
    const other = await loadModel(copy);
    expect(other).not.toBe(a);
    expect(await loadModel(copy)).toBe(other);
  });

  it('answers a missing model with MODEL_MISSING', async () => {
    expect(await errorCode(loadModel(join(tmp, 'not-there.onnx')))).toBe('MODEL_MISSING');
    mkdirSync(join(tmp, 'a-folder.onnx'), { recursive: true });
    expect(await errorCode(loadModel(join(tmp, 'a-folder.onnx')))).toBe('MODEL_MISSING');
  });

  it('answers a corrupt or truncated model with MODEL_FAILED, and loads the file once it is fixed', async () => {
    const path = join(tmp, 'broken.onnx');
    writeFileSync(path, 'this is not an onnx model');
    const err = await loadModel(path).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'MODEL_FAILED' });
    expect((err as Error).message).toMatch(/broken\.onnx.*Protobuf parsing failed/);
    writeFileSync(path, readFileSync(MODEL).subarray(0, 200));
    expect(await errorCode(loadModel(path))).toBe('MODEL_FAILED');
    copyFileSync(MODEL, path);
    const session = await loadModel(path);
    const outputs = await runModel(session, { x: { data: Float32Array.from(EXPECTED.input.data), dims: EXPECTED.input.dims } });
    expect(maxDifference(outputs.y.data as Float32Array, EXPECTED.output.data)).toBeLessThan(1e-4);
  });

  it('answers feeds the model refuses with MODEL_FAILED, and the session keeps working', async () => {
    const session = await loadModel(MODEL);
    const wrongName = await runModel(session, { z: { data: new Float32Array(8), dims: [2, 4] } }).catch((e: unknown) => e);
    expect(wrongName).toMatchObject({ code: 'MODEL_FAILED' });
    expect((wrongName as Error).message).toMatch(/tiny_softmax\.onnx.*'x' is missing/);
    const wrongWidth = await runModel(session, { x: { data: new Float32Array(6), dims: [2, 3] } }).catch((e: unknown) => e);
    expect(wrongWidth).toMatchObject({ code: 'MODEL_FAILED' });
    expect((wrongWidth as Error).message).toMatch(/index: 1 Got: 3 Expected: 4/);
    const ok = await runModel(session, { x: { data: new Float32Array(4), dims: [1, 4] } });
    expect(ok.y.dims).toEqual([1, 3]);
  });

  it('runs in a worker thread (where jobs run), with the provider handed over instead of probed', async () => {
    selectedProvider();
    // A hand-off no probe would produce: the worker must adopt it as it is.
    const handed = { name: 'cpu', fallbackFrom: ['cuda: handed over by the test'], requested: ['cpu'] };
    const saved = process.env[PROVIDER_HANDOFF_ENV];
    process.env[PROVIDER_HANDOFF_ENV] = JSON.stringify(handed);
    try {
      const answer = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const worker = new Worker(new URL('./fixtures/onnx/runInWorker.ts', import.meta.url), {
          execArgv: ['--import', devRegister],
          workerData: {
            model: MODEL,
            input: EXPECTED.input.data,
            dims: EXPECTED.input.dims,
          },
        });
        worker.once('message', (message) => {
          resolve(message);
          void worker.terminate();
        });
        worker.once('error', reject);
      });
      expect(answer.error).toBeUndefined();
      expect(answer.provider).toEqual(handed);
      expect(answer.reused).toBe(true);
      expect(maxDifference(answer.y as number[], EXPECTED.output.data)).toBeLessThan(1e-4);
    } finally {
      if (saved === undefined) delete process.env[PROVIDER_HANDOFF_ENV];
      else process.env[PROVIDER_HANDOFF_ENV] = saved;
    }
  });
});

/** `autorig serve` from the sources in a child process, with `env` added to a bare environment. */
function startSidecar(env: NodeJS.ProcessEnv): { child: ChildProcessWithoutNullStreams; port: Promise<number> } {
  const script = `import('./sidecar/server/serveCommand.ts').then((m) => m.runServeCommand(['--port', '0']))`;
  const child = spawn(process.execPath, ['--import', devRegister, '--input-type=module', '-e', script], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, AUTORIG_TOKEN: TOKEN, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const port = new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const newline = stdout.indexOf('\n');
      if (newline >= 0) resolve(JSON.parse(stdout.slice(0, newline)).port);
    });
    child.once('exit', (code) => reject(new Error(`the sidecar exited (${code}) before it was ready: ${stderr}`)));
  });
  return { child, port };
}

/** Send hello and return the result, checked strictly against protocol.json. */
function hello(port: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    ws.once('error', reject);
    ws.once('open', () => ws.send(encodeMessage({ kind: 'hello', id: 'h', protocol: 1 })));
    ws.once('message', (data: Buffer) => {
      ws.close();
      try {
        resolve(validateServerMessage(decodeMessage(data)));
      } catch (err) {
        reject(err);
      }
    });
  });
}

describe('a real sidecar', { timeout: 90_000 }, () => {
  const children: ChildProcessWithoutNullStreams[] = [];
  afterAll(() => {
    for (const child of children) child.kill('SIGTERM');
  });

  it('reports in hello the provider it runs on and the ones it fell back from', async () => {
    const cuda = startSidecar({ AUTORIG_PROVIDER: 'cuda' });
    const cpu = startSidecar({ AUTORIG_PROVIDER: 'cpu' });
    children.push(cuda.child, cpu.child);
    const [cudaHello, cpuHello] = await Promise.all([hello(await cuda.port), hello(await cpu.port)]);
    expect(cpuHello).toMatchObject({ kind: 'result', request: 'hello', executionProvider: 'cpu', providerFallback: [] });
    if (!cudaLibraryInstalled) {
      expect(cudaHello.executionProvider).toBe('cpu');
      expect(cudaHello.providerFallback).toEqual([expect.stringMatching(/^cuda: .*Failed to load shared library/)]);
    } else {
      expect(['cuda', 'cpu']).toContain(cudaHello.executionProvider);
    }
    // chosen once: a second hello gives the same answer
    expect(await hello(await cuda.port)).toEqual(cudaHello);
  });
});
