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
 *
 * mesh.bin is a mesh bundle (bench/bundle.ts); the result, when asked for, is written as a rig bundle for Blender.
 * Prints one JSON line on stdout: { mode, vertices, triangles, seconds, cpuSeconds, stages, sessionSeconds, peakRssBytes }.
 * The models the job runs are loaded first, timed apart (sessionSeconds): the sidecar loads them once, at start-up
 * (sidecar/server/modelHost.ts), so no request pays for them.
 * For `pose` the latent pose library (JSON) is read in that same untimed part: the sidecar reads it once per process too.
 * For `correctives-fit` the examples (the user's posed meshes, which a request brings) are made before the timed call;
 * the timed call is the whole bake, fit included, and the report adds the fit's own report (result.fit).
 * `seconds` is the wall time of the rigCharacter / skinCharacter / bakeCorrectives / applyLatentPose call only (reading the
 * files is not counted), and
 * cpuSeconds its CPU time (user + system, all threads): on a busy machine the wall time grows, the CPU time much less;
 * peakRssBytes is the process's high-water resident memory (VmHWM) right after the job, which includes Node itself and
 * the mesh as read.
 */
import { readFileSync } from 'node:fs';
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

/** correctives-fit: how many key poses become examples, and the power their weights are sharpened to. */
const FIT_EXAMPLES = 4;
const FIT_SHARPNESS = 4;

async function main(argv: string[]): Promise<void> {
  const [mode, meshPath, ...rest] = argv;
  const isCorrectives = mode === 'correctives' || mode === 'correctives-fit';
  const needsRig = mode === 'skin' || isCorrectives;
  const isPose = mode === 'pose' || mode === 'pose-again';
  if (!['rig', 'rig-learned', 'skin', 'correctives', 'correctives-fit', 'pose', 'pose-again'].includes(mode) || !meshPath || (needsRig && !rest[0]) || (isPose && !rest[0])) {
    process.stderr.write('usage: rigOnce.js rig|rig-learned <mesh.bin> [<result.bin>] | skin <mesh.bin> <rig.bin> [<result.bin>] | correctives|correctives-fit <mesh.bin> <rig.bin> [<method>] | pose <mesh.bin> <pose> [<rig.bin>] | pose-again <mesh.bin> <pose>\n');
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
  if (isPose) {
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
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const stages = recorder.finish().seconds;
  const peak = peakRssBytes();
  if (outPath && result) writeRigBundle(outPath, result);
  const report = {
    mode,
    vertices: parts.reduce((s, p) => s + p.positions.length / 3, 0),
    triangles: parts.reduce((s, p) => s + p.triangles.length / 3, 0),
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    stages,
    sessionSeconds,
    peakRssBytes: peak,
    ...(isCorrectives ? { keys } : {}),
    ...(mode === 'correctives-fit' ? { fit } : {}),
    ...(isPose ? { pose: rest[0], rigGiven: rig !== undefined, maxDisplacement: maxDisplacement(parts, posed) } : {}),
  };
  process.stdout.write(JSON.stringify(report) + '\n');
}

await main(process.argv.slice(2));
