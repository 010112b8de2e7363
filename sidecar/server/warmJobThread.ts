/**
 * Warming a job thread when the sidecar starts: a new thread compiles the pipeline's code on its first jobs, which
 * made the first Apply Latent Pose of a session cost 1.1–1.3 s through the sidecar at 42k vertices against ~0.4 s
 * once warm (.tmp measurements, 2026-12-01: after two applies of the demo character the next 42k apply took 0.42 s,
 * after one 0.81 s, after none 1.13 s). So `autorig serve` poses the project's own demo character (assets/demo, 7k
 * vertices) WARM_UP_JOBS times on one job thread, which the queue then keeps idle for the user's first request (6
 * since the pose path's auto-rig takes the learned weights: see WARM_UP_JOBS).
 * The warm-up steps aside for real work: it stops at once when a job is running or waiting, and never holds more
 * than one slot.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_CHARACTER_PATH } from '../cli/demoCharacter.js';
import { loadObj } from '../io/obj.js';
import { modelPath } from '../learned/modelFiles.js';
import { modelsRunByPose } from '../methods.js';
import { packageRoot } from '../packageRoot.js';
import type { MeshPart } from '../types.js';
import type { JobInput } from './jobMessages.js';
import type { JobQueue, RunningJob } from './jobs.js';

/**
 * Jobs run to warm a thread. Two applies compiled the pose path while it skinned by voxel geodesics (a third saved no
 * more; see the module comment). The learned weights' path (point carry, rules' plan, sharpening) takes longer to
 * reach the optimising compiler: the first 50k-vertex apply after 2 warm-up jobs took 0.59–0.69 s through the sidecar,
 * after 3 0.59–0.67, after 4 0.36–0.50, after 6 0.38–0.47 (.tmp measurements, 2026-12-01, 3 starts each). Six demo
 * applies take about 3 s in the background at start-up.
 */
export const WARM_UP_JOBS = 6;

/** What a warm-up did: the jobs that answered with a result, those that failed, and why it stopped early (if it did). */
export interface WarmUpReport {
  jobs: number;
  failures: string[];
  stoppedFor: 'a job' | 'close' | null;
  seconds: number;
}

export interface WarmUp {
  /** Resolves once the warm-up has ended (never rejects). */
  done: Promise<WarmUpReport>;
  /** Stop now (the server is closing): a running warm-up job is cancelled. */
  stop(): void;
}

/**
 * The warm-up jobs for `parts` (a character's objects): Apply Latent Pose without a rig when its models are installed
 * (the auto-rig, the SDF samples and both pose models: the most code one job compiles), otherwise a rig.
 * Each call gives fresh copies: a job's arrays are moved to its thread.
 */
export function warmUpJob(parts: MeshPart[], poseInstalled: boolean): JobInput {
  const objects = parts.map((part) => ({ name: part.name, positions: part.positions.slice(), triangles: part.triangles.slice() }));
  return poseInstalled
    ? { request: 'pose', objects, pose: 'elbowBentLf', strength: 1, strategy: 'mean' }
    : { request: 'rig', objects, options: {} };
}

/**
 * Warm one of `queue`'s threads with `count` jobs on the demo character, one after another (each reuses the thread the
 * last one left). Before each job it checks the queue: when another job is running or waiting it stops, so the user's
 * request never waits behind a warm-up for more than the job already started.
 */
export function warmJobThread(queue: JobQueue, count = WARM_UP_JOBS, parts?: MeshPart[]): WarmUp {
  const t0 = performance.now();
  let stopped = false;
  /** cancels the job now running, and settles its wait (a cancelled job's listener hears nothing more) */
  let cancelCurrent: (() => void) | null = null;
  const report = (jobs: number, failures: string[], stoppedFor: WarmUpReport['stoppedFor']): WarmUpReport =>
    ({ jobs, failures, stoppedFor, seconds: (performance.now() - t0) / 1000 });
  const runOne = (input: JobInput) => new Promise<string | null>((resolve) => {
    const job: RunningJob = queue.submit(input, {
      onProgress: () => {},
      onResult: () => resolve(null),
      onError: (code, message) => resolve(`${code}: ${message}`),
    });
    cancelCurrent = () => {
      job.cancel();
      resolve('cancelled');
    };
  });
  const run = async (): Promise<WarmUpReport> => {
    const failures: string[] = [];
    let objects: MeshPart[];
    try {
      objects = parts ?? (await loadObj(join(packageRoot(), DEMO_CHARACTER_PATH))).parts;
    } catch (err) {
      return report(0, [`the demo character could not be read: ${err instanceof Error ? err.message : String(err)}`], null);
    }
    const poseInstalled = modelsRunByPose().every((name) => existsSync(modelPath(name)));
    let jobs = 0;
    for (let n = 0; n < count; n++) {
      if (stopped) return report(jobs, failures, 'close');
      const { running, waiting } = queue.counts;
      if (running > 0 || waiting > 0) return report(jobs, failures, 'a job');
      const outcome = await runOne(warmUpJob(objects, poseInstalled));
      cancelCurrent = null;
      if (outcome === 'cancelled') return report(jobs, failures, 'close');
      if (outcome === null) jobs++;
      else failures.push(outcome);
    }
    return report(jobs, failures, null);
  };
  return {
    done: run(),
    stop: () => {
      stopped = true;
      (cancelCurrent as (() => void) | null)?.();
    },
  };
}
