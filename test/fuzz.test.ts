/**
 * Protocol fuzzing against the real sidecar (`autorig serve` as a child process, from the sources): 10,000 cases of
 * a fixed seed over the WebSocket framing, the msgpack layer, the schema and multi-message sessions (fuzz/).
 * Every case must get its answer (the expected coded reply, a close with the right code, or the right HTTP status),
 * the sidecar must never exit, never answer INTERNAL, never print or send the token, answer a hello after every case,
 * and stop cleanly at the end. `npm run fuzz -- --cases N --seed S` runs longer campaigns against the build.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeMessage } from '../shared-schema/codec.js';
import { REQUEST_KINDS, validateRequest } from '../shared-schema/validate.js';
import { BASE_NAMES, BASE_REQUESTS } from '../fuzz/requests.js';
import { formatReport, fuzzPassed } from '../fuzz/run.js';
import { runFuzz } from '../fuzz/runner.js';
import type { SidecarCommand } from '../fuzz/sidecarProcess.js';

const CASES = 10_000;
const SEED = 20_240_917;

describe('protocol fuzzing', () => {
  it('starts from a valid request of every kind protocol.json names', () => {
    const kinds = new Set<string>();
    for (const name of BASE_NAMES) {
      const request = validateRequest(decodeMessage(encodeMessage(BASE_REQUESTS[name]('v1'))));
      expect(request.id).toBe('v1');
      kinds.add(request.kind);
    }
    // a request kind added to protocol.json without a base here would go unfuzzed
    expect([...kinds].sort()).toEqual([...REQUEST_KINDS].sort());
    const withRig = validateRequest(decodeMessage(encodeMessage(BASE_REQUESTS['pose.apply+rig']('v2'))));
    expect(withRig.kind === 'pose.apply' && withRig.rig?.skeleton.joints.length).toBe(23);
  });

  it(`answers ${CASES} fuzz cases (seed ${SEED}) without a crash, and still serves`, { timeout: 480_000 }, async () => {
    const report = await runFuzz({ cases: CASES, seed: SEED });
    console.log(formatReport(report));
    expect(report.cases).toBe(CASES);
    expect(report.crashes, 'the sidecar exited during the run').toEqual([]);
    expect(report.failures.slice(0, 10), 'cases without their expected answer').toEqual([]);
    expect(report.answered).toBe(CASES);
    expect(report.errors.INTERNAL ?? 0, 'INTERNAL replies').toBe(0);
    expect(report.finalRequestServed).toBe(true);
    expect(report.tokenSightings).toEqual({ output: 0, replies: 0 });
    expect(report.cleanShutdown).toBe(true);
    // Every layer was exercised in earnest, and the answers cover the protocol's codes and WebSocket's closes.
    for (const layer of ['websocket', 'msgpack', 'schema', 'session'] as const) expect(report.byLayer[layer]).toBeGreaterThan(CASES / 20);
    for (const code of ['BAD_MESSAGE', 'BAD_REQUEST', 'BAD_ARRAY', 'BAD_INDEX', 'BAD_NUMBER', 'TOO_LARGE', 'UNKNOWN_KIND', 'UNSUPPORTED_VERSION', 'DUPLICATE_ID', 'EMPTY_MESH', 'BAD_SKELETON', 'CANCELLED']) {
      expect(report.errors[code] ?? 0, code).toBeGreaterThan(0);
    }
    for (const close of ['1002', '1007', '1009', '1000']) expect(report.closes[close] ?? 0, `close ${close}`).toBeGreaterThan(0);
    // the pose and correctives requests' own rules, and their jobs run to the end
    for (const name of ['bad-pose-choice', 'bad-weights', 'bad-corrective-options', 'not-template-skeleton', 'bad-examples', 'pose-and-correctives-run']) {
      expect(report.byGenerator[name] ?? 0, name).toBeGreaterThan(0);
    }
    // pose jobs for one mesh on two connections: some were held for the other's reading, and all were answered
    expect(report.byGenerator['one-mesh-two-connections'] ?? 0).toBeGreaterThan(0);
    expect(report.heldRequests, 'pose requests held for another job reading their mesh').toBeGreaterThan(0);
    for (const status of ['400', '401', '403', '404']) expect(report.http[status] ?? 0, `HTTP ${status}`).toBeGreaterThan(0);
    expect(fuzzPassed(report)).toBe(true);
  });

  // 13–35 s alone (a dozen or so sidecars started from the sources, one after another); beside the bench it once ran
  // past 60 s, so the limit leaves room for a busy CI machine
  it('notices a sidecar that dies: the crash is recorded with its exit code, and the run goes on with a new one', { timeout: 150_000 }, async () => {
    // The real sidecar, made to exit with code 3 a moment after its warm-up is over: the runner must call that a crash.
    // It runs with a models folder that does not exist (AUTORIG_MODELS), so no onnxruntime session is ever loaded or running:
    // process.exit while onnxruntime runs a session on the model host's thread aborts the process (SIGABRT) instead of
    // exiting with the code, and with the models installed no moment is safe from that, since the fuzz cases' own
    // jobs may be running one (CI hit it at 1.5 s, at 1 s after the models loaded, and at 0.3 s after the warm-up).
    // The requests that need a model are answered MODEL_MISSING, which is an answer like any other to the runner.
    const register = fileURLToPath(new URL('../sidecar/server/devTsRegister.mjs', import.meta.url));
    const entry = new URL('../sidecar/server/serveCommand.ts', import.meta.url).href;
    const script = [
      "process.env.AUTORIG_MODELS = (await import('node:path')).join((await import('node:os')).tmpdir(), 'autorig-fuzz-no-models-' + process.pid);",
      'const write = process.stderr.write.bind(process.stderr);',
      "process.stderr.write = (chunk, ...rest) => { if (/job thread (not )?warmed|warm-up stopped/.test(String(chunk))) setTimeout(() => process.exit(3), 300); return write(chunk, ...rest); };",
      `import(${JSON.stringify(entry)}).then((m) => m.runServeCommand(['--port', '0']));`,
    ].join('\n');
    const dying: SidecarCommand = { command: process.execPath, args: ['--import', register, '--input-type=module', '-e', script] };
    const report = await runFuzz({ cases: 1500, seed: 7, command: dying, replyTimeoutMs: 2000 });
    expect(report.cases).toBe(1500);
    expect(report.crashes.length).toBeGreaterThan(0);
    for (const crash of report.crashes) expect(crash.exit).toEqual({ code: 3, signal: null });
    expect(fuzzPassed(report)).toBe(false);
  });
});
