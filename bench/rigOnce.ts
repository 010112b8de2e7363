/**
 * One benchmark job in a process of its own, so that its peak memory is that job's alone.
 *
 *   node dist/bench/rigOnce.js rig  <mesh.bin> [<result.bin>]              (the default method, DEFAULT_METHOD)
 *   node dist/bench/rigOnce.js rig-learned <mesh.bin> [<result.bin>]    (method learned: models/joints2d.onnx)
 *   node dist/bench/rigOnce.js skin <mesh.bin> <skeleton-from-rig.bin> [<result.bin>]
 *   node dist/bench/rigOnce.js correctives <mesh.bin> <rig.bin> [<method>]   (bake every key pose's corrective;
 *                                                                        method: default the sidecar's)
 *
 * mesh.bin is a mesh bundle (bench/bundle.ts); the result, when asked for, is written as a rig bundle for Blender.
 * Prints one JSON line on stdout: { mode, vertices, triangles, seconds, cpuSeconds, stages, sessionSeconds, peakRssBytes }.
 * The models the job runs are loaded first, timed apart (sessionSeconds): the sidecar loads them once, at start-up
 * (sidecar/server/modelHost.ts), so no request pays for them.
 * `seconds` is the wall time of the rigCharacter / skinCharacter / bakeCorrectives call only (reading the file is not counted), and
 * cpuSeconds its CPU time (user + system, all threads): on a busy machine the wall time grows, the CPU time much less;
 * peakRssBytes is the process's high-water resident memory (VmHWM) right after the job, which includes Node itself and
 * the mesh as read.
 */
import { readFileSync } from 'node:fs';
import { modelPath } from '../sidecar/learned/modelFiles.js';
import { loadModel } from '../sidecar/learned/onnxSession.js';
import { modelsRunBy, modelsRunByCorrectives } from '../sidecar/methods.js';
import { bakeCorrectives } from '../sidecar/correctives/bakeCorrectives.js';
import { rigCharacterAsync, skinCharacter } from '../sidecar/pipeline.js';
import type { RigResult, SkinResult } from '../sidecar/types.js';
import { readMeshBundle, readRigBundle, writeRigBundle } from './bundle.js';
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

async function main(argv: string[]): Promise<void> {
  const [mode, meshPath, ...rest] = argv;
  const needsRig = mode === 'skin' || mode === 'correctives';
  if (!['rig', 'rig-learned', 'skin', 'correctives'].includes(mode) || !meshPath || (needsRig && !rest[0])) {
    process.stderr.write('usage: rigOnce.js rig|rig-learned <mesh.bin> [<result.bin>] | skin <mesh.bin> <rig.bin> [<result.bin>] | correctives <mesh.bin> <rig.bin> [<method>]\n');
    process.exit(2);
  }
  const { parts } = readMeshBundle(meshPath);
  const rig = needsRig ? readRigBundle(rest[0]) : undefined;
  const skeleton = mode === 'skin' ? rig!.header.skeleton : undefined;
  const outPath = mode === 'skin' ? rest[1] : mode === 'correctives' ? undefined : rest[0];

  const s0 = performance.now();
  const correctiveMethod = mode === 'correctives' ? rest[1] : undefined;
  if (!needsRig) {
    for (const name of modelsRunBy('rig', mode === 'rig-learned' ? 'learned' : undefined)) await loadModel(modelPath(name));
  } else if (mode === 'correctives') {
    for (const name of modelsRunByCorrectives(correctiveMethod)) await loadModel(modelPath(name));
  }
  const sessionSeconds = (performance.now() - s0) / 1000;

  const recorder = stageRecorder();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let result: RigResult | SkinResult | undefined;
  let keys = 0;
  if (mode === 'correctives') keys = (await bakeCorrectives(parts, rig!.header.skeleton, rig!.objects, correctiveMethod ? { method: correctiveMethod } : {}, recorder.onProgress)).keys.length;
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
    ...(mode === 'correctives' ? { keys } : {}),
  };
  process.stdout.write(JSON.stringify(report) + '\n');
}

await main(process.argv.slice(2));
