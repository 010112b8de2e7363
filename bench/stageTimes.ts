/**
 * Where a pipeline job spends its time, read from the progress callback the pipeline already calls (no timers inside
 * sidecar/). The stage boundaries follow the fractions pipeline.ts and skinning/skinInVoxels.ts report today:
 * stages "mesh", "frame", "skeleton" (rig only), then "skinning", whose own fraction f (rescaled from where skinning
 * starts to 1) reaches 0.1 when the solid voxelisation is done and 0.85 when the last bone's geodesic distances are;
 * the rest is per-voxel weights and their mapping to vertices.
 */
import type { ProgressFn } from '../sidecar/types.js';

export interface StageTimes {
  /** seconds per stage, in pipeline order; "voxelise", "geodesic" and "weights→vertices" split "skinning" */
  seconds: Record<string, number>;
}

const VOXELISED = 0.1;
const GEODESIC_DONE = 0.85;

/**
 * stageRecorder: a ProgressFn to pass to rigCharacter / skinCharacter, and `finish()` to call when the job returns.
 * now: the clock in milliseconds (performance.now by default).
 */
export function stageRecorder(now: () => number = () => performance.now()): { onProgress: ProgressFn; finish: () => StageTimes } {
  const events: { stage: string; fraction: number; t: number }[] = [];
  const onProgress: ProgressFn = (stage, fraction) => events.push({ stage, fraction, t: now() });
  const finish = (): StageTimes => {
    const end = now();
    const seconds: Record<string, number> = {};
    const add = (name: string, from: number, to: number) => {
      seconds[name] = (seconds[name] ?? 0) + (to - from) / 1000;
    };
    const skinStart = events.findIndex((e) => e.stage === 'skinning');
    const before = skinStart < 0 ? events : events.slice(0, skinStart);
    before.forEach((e, i) => add(e.stage, e.t, i + 1 < events.length ? events[i + 1].t : end));
    if (skinStart >= 0) {
      const base = events[skinStart].fraction;
      const inner = (f: number) => (base < 1 ? (f - base) / (1 - base) : 1);
      const skinning = events.slice(skinStart);
      const firstAt = (threshold: number) => skinning.find((e) => inner(e.fraction) >= threshold - 1e-9)?.t ?? end;
      const t0 = skinning[0].t, tVoxel = firstAt(VOXELISED), tGeodesic = firstAt(GEODESIC_DONE);
      add('voxelise', t0, tVoxel);
      add('geodesic', tVoxel, tGeodesic);
      add('weights→vertices', tGeodesic, end);
    }
    return { seconds };
  };
  return { onProgress, finish };
}
