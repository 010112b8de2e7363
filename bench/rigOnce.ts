/**
 * One benchmark job in a process of its own, so that its peak memory is that job's alone.
 *
 *   node dist/bench/rigOnce.js rig  <mesh.bin> [<result.bin>]              (the default method, DEFAULT_METHOD)
 *   node dist/bench/rigOnce.js rig-learned <mesh.bin> [<result.bin>]    (method learned: models/joints2d.onnx)
 *   node dist/bench/rigOnce.js skin <mesh.bin> <skeleton-from-rig.bin> [<result.bin>]
 *   node dist/bench/rigOnce.js correctives <mesh.bin> <rig.bin> [<method>]   (bake every key pose's corrective;
 *                                                                        method: default the sidecar's)
 *   node dist/bench/rigOnce.js correctives-fit <mesh.bin> <rig.bin> [<method>]   (the same bake fitted to 4 posed examples
 *                                                                            first: bench/posedExamples.ts, made untimed)
 *   node dist/bench/rigOnce.js pose <mesh.bin> <pose> [<rig.bin>]   (Apply Latent Pose, strength 1, strategy mean, the
 *                                                                   user's variant; without rig.bin it auto-rigs the mesh
 *                                                                   inside the timed call, as for a mesh with no rig)
 *   node dist/bench/rigOnce.js pose-again <mesh.bin> <pose>   (the same mesh posed again, as a user trying strength
 *                                                            after strength: an untimed apply at strength 0.5 first,
 *                                                            then the timed one reusing its latent and auto-rig, as the
 *                                                            sidecar's PoseReuseCache hands them over)
 *   node dist/bench/rigOnce.js pose-served <mesh.bin> <pose>   (Apply Latent Pose through a running sidecar, as the add-on
 *                                                             asks it: serve() on a free port, models warmed, a
 *                                                             WebSocket client; SERVED_WARMUPS applies of other meshes
 *                                                             (this one scaled, so nothing is reused) first, then the
 *                                                             timed one: request sent → posed vertices decoded, on a
 *                                                             job thread kept from those jobs; `servedRuns`: each
 *                                                             apply's time)
 *   node dist/bench/rigOnce.js pose-first <mesh.bin> <pose>   (the first apply a sidecar answers, as after the user's
 *                                                            Blender started it: serve() with its start-up warm-up
 *                                                            (warmJobs: the demo character posed on a job thread) and
 *                                                            models loaded, then the timed apply of this mesh)
 *
 * mesh.bin is a mesh bundle (bench/bundle.ts); the result, when asked for, is written as a rig bundle for Blender.
 * Prints one JSON line on stdout: { mode, vertices, triangles, seconds, cpuSeconds, stages, sessionSeconds, peakRssBytes }.
 * The models the job runs are loaded first, timed apart (sessionSeconds): the sidecar loads them once, at start-up
 * (sidecar/server/modelHost.ts), so no request pays for them.
 * For `pose` the latent pose library (models/latent_pose_library.bin) is read in that same untimed part: the sidecar reads it once per process too.
 * For `correctives-fit` the examples (the user's posed meshes, which a request brings) are made before the timed call;
 * the timed call is the whole bake, fit included, and the report adds the fit's own report (result.fit).
 * `seconds` is the wall time of the rigCharacter / skinCharacter / bakeCorrectives / applyLatentPose call only (reading the
 * files is not counted), and
 * cpuSeconds its CPU time (user + system, all threads): on a busy machine the wall time grows, the CPU time much less;
 * peakRssBytes is the process's high-water resident memory (VmHWM) right after the job, which includes Node itself and
 * the mesh as read.
 */
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { decodeMessage, encodeMessage } from '../shared-schema/codec.js';
import { serve } from '../sidecar/server/serve.js';
import type { MeshPart } from '../sidecar/types.js';
import { loadModel } from '../sidecar/learned/onnxSession.js';
import { modelDataPath, modelPath } from '../sidecar/learned/modelFiles.js';
import { modelsRunBy, modelsRunByCorrectives, modelsRunByPose } from '../sidecar/methods.js';
import { bakeCorrectives, type CorrectiveExample, type ExampleFitReport } from '../sidecar/correctives/bakeCorrectives.js';
import { applyLatentPose } from '../sidecar/pose/applyLatentPose.js';
import { readPoseLibrary } from '../sidecar/pose/poseLibrary.js';
import { rigCharacterAsync, skinCharacter } from '../sidecar/pipeline.js';
import type { RigResult, SkinResult } from '../sidecar/types.js';
import { readMeshBundle, readRigBundle, writeRigBundle } from './bundle.js';
import { keyPoseExamples } from './posedExamples.js';
import { stageRecorder } from './stageTimes.js';

/** Peak resident set size of this process in bytes: VmHWM where /proc exists, else Node's maxRSS. */
export function peakRssBytes(): number {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
    if (match) return Number(match[1]) * 1024;
  } catch {
    // not Linux: fall through
  }
  return process.resourceUsage().maxRSS * 1024;
}

/**
 * The largest distance a vertex moved (input units): a pose that moves nothing is a broken apply, not a fast one.
 * rest: the parts; posed: per part its posed vertices, Float32Array #V*3 (a count mismatch gives NaN).
 */
function maxDisplacement(rest: { positions: Float32Array }[], posed: Float32Array[]): number {
  let most = 0;
  for (let k = 0; k < rest.length; k++) {
    const a = rest[k].positions, b = posed[k];
    if (!b || b.length !== a.length) return Number.NaN;
    for (let i = 0; i < a.length; i += 3) most = Math.max(most, Math.hypot(b[i] - a[i], b[i + 1] - a[i + 1], b[i + 2] - a[i + 2]));
  }
  return most;
}

/** A served job's answer, as the add-on reads it: the final message for `id` (result or error). */
type Message = Record<string, unknown>;

/** pose-served: how many applies of other meshes the sidecar answers before the timed one. */
const SERVED_WARMUPS = 5;

/**
 * pose-served: SERVED_WARMUPS untimed pose.apply requests of other meshes (the parts scaled by 1.01, 0.99, 1.02…: the
 * same work, never reused), then the timed one of `parts`, through a sidecar started here (serve(), models warmed
 * first, the default job slots) and a WebSocket client, one request at a time.
 * → the timed one's wall and CPU seconds (request sent → result decoded), every apply's wall seconds in order (the
 * timed one last), and its posed vertices, per part
 */
async function servedPose(parts: MeshPart[], pose: string, warmups = SERVED_WARMUPS, warmJobs = false): Promise<{ seconds: number; cpuSeconds: number; runs: number[]; posed: Float32Array[] }> {
  const token = 'bench-token-0123456789abcdef';
  const server = await serve({ port: 0, token, warmJobs });
  try {
    const failures = await server.models.warm(modelsRunByPose().map((name) => modelPath(name)));
    if (failures.length) throw new Error(`pose-served: models not loaded: ${failures.join('; ')}`);
    if (server.warmUp) {
      const warmed = await server.warmUp;
      if (warmed.failures.length > 0 || warmed.stoppedFor !== null) throw new Error(`pose-first: the start-up warm-up did not finish: ${warmed.failures.join('; ') || warmed.stoppedFor}`);
    }
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/`, { headers: { Authorization: `Bearer ${token}` } });
    await new Promise<void>((done, fail) => { ws.once('open', () => done()); ws.once('error', fail); });
    const waiting = new Map<string, (message: Message) => void>();
    ws.on('message', (data: Buffer) => {
      const message = decodeMessage(data);
      if (message.kind === 'result' || message.kind === 'error') waiting.get(message.id as string)?.(message);
    });
    const ask = (id: string, objects: MeshPart[]) => new Promise<Message>((done) => {
      waiting.set(id, done);
      ws.send(encodeMessage({ kind: 'pose.apply', id, objects: objects.map((p) => ({ name: p.name, positions: p.positions, triangles: p.triangles })), pose }));
    });
    const runs: number[] = [];
    let answer: Message = {};
    let cpu = process.cpuUsage();
    for (let n = 0; n <= warmups; n++) {
      const timed = n === warmups;
      const scale = 1 + (n % 2 === 0 ? 1 : -1) * 0.01 * (Math.floor(n / 2) + 1);
      const objects = timed ? parts : parts.map((p) => ({ name: p.name, positions: p.positions.map((x) => x * scale), triangles: p.triangles }));
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      answer = await ask(timed ? 'timed' : `other-mesh-${n}`, objects);
      runs.push((performance.now() - t0) / 1000);
      cpu = process.cpuUsage(cpu0);
      if (answer.kind !== 'result') throw new Error(`pose-served: apply ${n + 1} failed: ${String(answer.code)} ${String(answer.message)}`);
    }
    ws.close();
    const posed = (answer.objects as { positions: Uint8Array }[]).map((o) => {
      const bytes = Uint8Array.from(o.positions);
      return new Float32Array(bytes.buffer, 0, bytes.byteLength / 4);
    });
    return { seconds: runs[runs.length - 1], cpuSeconds: (cpu.user + cpu.system) / 1e6, runs, posed };
  } finally {
    await server.close();
  }
}

/** correctives-fit: how many key poses become examples, and the power their weights are sharpened to. */
const FIT_EXAMPLES = 4;
const FIT_SHARPNESS = 4;

async function main(argv: string[]): Promise<void> {
  const [mode, meshPath, ...rest] = argv;
  const isCorrectives = mode === 'correctives' || mode === 'correctives-fit';
  const needsRig = mode === 'skin' || isCorrectives;
  const isPose = mode === 'pose' || mode === 'pose-again' || mode === 'pose-served' || mode === 'pose-first';
  if (!['rig', 'rig-learned', 'skin', 'correctives', 'correctives-fit', 'pose', 'pose-again', 'pose-served', 'pose-first'].includes(mode) || !meshPath || (needsRig && !rest[0]) || (isPose && !rest[0])) {
    process.stderr.write('usage: rigOnce.js rig|rig-learned <mesh.bin> [<result.bin>] | skin <mesh.bin> <rig.bin> [<result.bin>] | correctives|correctives-fit <mesh.bin> <rig.bin> [<method>] | pose <mesh.bin> <pose> [<rig.bin>] | pose-again|pose-served|pose-first <mesh.bin> <pose>\n');
    process.exit(2);
  }
  const { parts } = readMeshBundle(meshPath);
  const rig = needsRig ? readRigBundle(rest[0]) : isPose && rest[1] ? readRigBundle(rest[1]) : undefined;
  const skeleton = mode === 'skin' ? rig!.header.skeleton : undefined;
  const outPath = mode === 'skin' ? rest[1] : isCorrectives || isPose ? undefined : rest[0];

  const s0 = performance.now();
  const correctiveMethod = isCorrectives ? rest[1] : undefined;
  if (isPose) {
    for (const name of modelsRunByPose()) await loadModel(modelPath(name));
    readPoseLibrary(modelDataPath('latentPoseLibrary'));
  } else if (!needsRig) {
    for (const name of modelsRunBy('rig', mode === 'rig-learned' ? 'learned' : undefined)) await loadModel(modelPath(name));
  } else if (isCorrectives) {
    for (const name of modelsRunByCorrectives(correctiveMethod)) await loadModel(modelPath(name));
  }
  const sessionSeconds = (performance.now() - s0) / 1000;
  // pose-again: what the sidecar holds after a first apply of this mesh (server/poseReuseCache.ts)
  const reuse = mode === 'pose-again' ? (await applyLatentPose(parts, { pose: rest[0], strength: 0.5, strategy: 'mean' })).reusable : undefined;
  const examples: CorrectiveExample[] = mode === 'correctives-fit'
    ? keyPoseExamples(parts, rig!.header.skeleton, rig!.objects, FIT_EXAMPLES, FIT_SHARPNESS)
    : [];

  const recorder = stageRecorder();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let result: RigResult | SkinResult | undefined;
  let keys = 0;
  let fit: ExampleFitReport | undefined;
  let posed: Float32Array[] = [];
  let served: { seconds: number; cpuSeconds: number; runs: number[] } | undefined;
  if (mode === 'pose-served' || mode === 'pose-first') {
    const answer = mode === 'pose-served' ? await servedPose(parts, rest[0]) : await servedPose(parts, rest[0], 0, true);
    served = answer;
    posed = answer.posed;
  } else if (isPose) {
    const rigGiven = rig ? { skeleton: rig.header.skeleton, objects: rig.objects } : undefined;
    const options = { pose: rest[0], strength: 1, strategy: 'mean' as const, ...(rigGiven ? { rig: rigGiven } : {}), ...(reuse ? { reuse } : {}) };
    const applied = await applyLatentPose(parts, options, recorder.onProgress);
    if (mode === 'pose-again' && !applied.reused) throw new Error('pose-again: the second apply did not reuse the first one\'s latent and rig');
    posed = applied.objects.map((o) => o.positions);
  } else if (isCorrectives) {
    const baked = await bakeCorrectives(parts, rig!.header.skeleton, rig!.objects, correctiveMethod ? { method: correctiveMethod } : {}, recorder.onProgress, examples);
    keys = baked.keys.length;
    fit = baked.fit;
  }
  else if (skeleton) result = skinCharacter(parts, skeleton, [], {}, recorder.onProgress);
  else result = await rigCharacterAsync(parts, mode === 'rig-learned' ? { method: 'learned' } : {}, recorder.onProgress);
  // pose-served: the request's own round trip, without starting the server and the warm-up apply
  const seconds = served?.seconds ?? (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const stages = recorder.finish().seconds;
  const peak = peakRssBytes();
  if (outPath && result) writeRigBundle(outPath, result);
  const report = {
    mode,
    vertices: parts.reduce((s, p) => s + p.positions.length / 3, 0),
    triangles: parts.reduce((s, p) => s + p.triangles.length / 3, 0),
    seconds,
    cpuSeconds: served?.cpuSeconds ?? (cpu.user + cpu.system) / 1e6,
    stages,
    sessionSeconds,
    peakRssBytes: peak,
    ...(isCorrectives ? { keys } : {}),
    ...(mode === 'correctives-fit' ? { fit } : {}),
    ...(served ? { servedRuns: served.runs } : {}),
    ...(isPose ? { pose: rest[0], rigGiven: rig !== undefined, maxDisplacement: maxDisplacement(parts, posed) } : {}),
  };
  process.stdout.write(JSON.stringify(report) + '\n');
}

await main(process.argv.slice(2));
