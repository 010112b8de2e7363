/**
 * Child-process entry that finds which onnxruntime execution providers work on this machine:
 *
 *   node providerProbe.js cuda webgpu cpu
 *
 * Tries the providers in the order given, each by creating a session of the probe model (probeModel.ts) on that
 * provider alone and running it once, and stops at the first that works. stdout gets one JSON line per provider
 * tried (ProbeLine in executionProvider.ts):
 *   {"provider":"cuda","ok":false,"error":"OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library","ms":160.2}
 *   {"provider":"cpu","ok":true,"ms":3.1}
 * or a single {"fatal": "..."} when onnxruntime-node itself cannot be loaded.
 *
 * Why a separate process: a GPU provider whose start-up crashes or hangs (driver faults do both) takes only this
 * process down, and the sidecar blames that provider and goes on (executionProvider.ts reads the lines).
 * onnxruntime's own log is silenced here: each failure is already reported, in one line, on stdout.
 */
import type { ProbeAttempt, ProbeLine } from './executionProvider.js';
import { probeCase, probeModelBytes } from './probeModel.js';

type OnnxRuntime = typeof import('onnxruntime-node');

/** Longest error text sent back; the sidecar keeps only its first line anyway. */
const MAX_ERROR_CHARS = 2000;

/** Create the probe session on `provider` alone, run it once, and check its answer. */
async function tryProvider(ort: OnnxRuntime, provider: string): Promise<ProbeAttempt> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
  try {
    const session = await ort.InferenceSession.create(probeModelBytes(), { executionProviders: [provider] });
    const { input, expected } = probeCase();
    const outputs = await session.run({ x: new ort.Tensor('float32', input, [input.length]) });
    const answer = outputs.y?.data as Float32Array | undefined;
    if (!answer || answer.length !== expected.length || answer.some((v, i) => v !== expected[i])) {
      return { provider, ok: false, error: `the probe model gave a wrong answer: [${Array.from(answer ?? [])}]`, ms: elapsed() };
    }
    await session.release();
    return { provider, ok: true, ms: elapsed() };
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    return { provider, ok: false, error: text.slice(0, MAX_ERROR_CHARS), ms: elapsed() };
  }
}

/** Write one line and wait until it has left (the process may be torn down by a crashing provider next). */
function writeLine(line: ProbeLine): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${JSON.stringify(line)}\n`, () => resolve()));
}

async function main(providers: string[]): Promise<void> {
  let ort: OnnxRuntime;
  try {
    ort = await import('onnxruntime-node');
    ort.env.logLevel = 'fatal';
  } catch (err) {
    await writeLine({ fatal: `cannot load onnxruntime-node: ${err instanceof Error ? err.message : String(err)}`.slice(0, MAX_ERROR_CHARS) });
    process.exit(0);
  }
  for (const provider of providers) {
    const line = await tryProvider(ort, provider);
    await writeLine(line);
    // Exit at once: some providers' native teardown is slow (or crashes); the answer is out already.
    if (line.ok) process.exit(0);
  }
  process.exit(0);
}

void main(process.argv.slice(2));
