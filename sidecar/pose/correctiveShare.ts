/**
 * The corrective share of a pose (issue 6): how much of the dual-quaternion corrective Apply Latent Pose adds on top
 * of linear blend skinning, LBS + s·(DQS − LBS), s in [0, 1] (the weight-blended skinning idea: a blend between the
 * two, here per pose). The corrective the auto-rig carries is a matter of its weights; where they blend a joint
 * differently from the truth's (the wrist: a band that starts before the truth's and moves vertices the truth keeps
 * still), a part of the corrective is closer to the truth than all of it. `autorig eval corrective-share --write`
 * fits s on development identities only and writes models/latent_pose_corrective_share.json; no file means s = 1
 * (plain DQS, the data's "better deformation").
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { AutoRigError } from '../errors.js';
import { modelDataPath } from '../learned/modelFiles.js';
import { isPoseName, POSE_NAMES, type PoseName } from './poseVocabulary.js';

export const CORRECTIVE_SHARE_FORMAT = 'autorig-corrective-share/1';

/** The shares a fit tries: 0, 0.05, …, 1. */
export const CORRECTIVE_SHARE_GRID: readonly number[] = Object.freeze(Array.from({ length: 21 }, (_, i) => i / 20));

/** models/latent_pose_corrective_share.json */
export interface CorrectiveShareFile {
  format: typeof CORRECTIVE_SHARE_FORMAT;
  date: string;
  /** the command that wrote it */
  command: string;
  /** the development identities the fit measured (never a test identity) */
  identities: string[];
  grid: number[];
  /** per pose: the share, and the mean corrective-alone error (fraction of height) of the pose and its mirror at each grid share */
  poses: Record<string, { share: number; meanError: number[] }>;
}

/**
 * mirrorPoseName: the pose with left and right swapped in each component (elbowBentLf+kneeBentRt →
 * elbowBentRt+kneeBentLf); a pose without a side is its own mirror.
 */
export function mirrorPoseName(name: PoseName): PoseName {
  const mirrored = name.split('+').map((c) => c.endsWith('Lf') ? `${c.slice(0, -2)}Rt` : c.endsWith('Rt') ? `${c.slice(0, -2)}Lf` : c).join('+');
  if (isPoseName(mirrored)) return mirrored;
  // a combination whose mirror is listed in the other order
  const parts = mirrored.split('+');
  const swapped = [...parts].reverse().join('+');
  if (isPoseName(swapped)) return swapped;
  throw new AutoRigError('BAD_REQUEST', `pose "${name}" has no mirror in the vocabulary`);
}

/**
 * bestCorrectiveShare: errors #identities × #grid (each row one identity's mean corrective-alone error at each grid
 * share) → the grid share whose mean over the rows is least, and that mean per grid share. Ties go to the larger share
 * (nearer plain DQS). No rows → share 1.
 */
export function bestCorrectiveShare(errors: readonly (readonly number[])[], grid: readonly number[] = CORRECTIVE_SHARE_GRID): { share: number; meanError: number[] } {
  const meanError = grid.map((_, j) => errors.length ? errors.reduce((s, row) => s + row[j], 0) / errors.length : 0);
  if (!errors.length) return { share: 1, meanError };
  let best = 0;
  for (let j = 1; j < grid.length; j++) if (meanError[j] <= meanError[best]) best = j;
  return { share: grid[best], meanError };
}

let cached: { path: string; mtimeMs: number; shares: Map<string, number> } | null = null;

/**
 * correctiveShareOf: the share `pose` is applied with, from models/latent_pose_corrective_share.json (read once per
 * file version); 1 where the file or the pose is missing. Throws MODEL_FAILED for a file that is not a share file or
 * holds a share outside [0, 1].
 */
export function correctiveShareOf(pose: string, path: string = modelDataPath('latentPoseCorrectiveShare')): number {
  if (!existsSync(path)) return 1;
  const mtimeMs = statSync(path).mtimeMs;
  if (!cached || cached.path !== path || cached.mtimeMs !== mtimeMs) cached = { path, mtimeMs, shares: readShares(path) };
  return cached.shares.get(pose) ?? 1;
}

function readShares(path: string): Map<string, number> {
  let file: CorrectiveShareFile;
  try {
    file = JSON.parse(readFileSync(path, 'utf8')) as CorrectiveShareFile;
  } catch (err) {
    throw new AutoRigError('MODEL_FAILED', `${path} is not JSON: ${(err as Error).message}`);
  }
  if (file?.format !== CORRECTIVE_SHARE_FORMAT || typeof file.poses !== 'object' || !file.poses) {
    throw new AutoRigError('MODEL_FAILED', `${path} is not a corrective share file (format ${CORRECTIVE_SHARE_FORMAT})`);
  }
  const shares = new Map<string, number>();
  for (const name of POSE_NAMES) {
    const entry = file.poses[name];
    if (!entry) continue;
    if (typeof entry.share !== 'number' || !(entry.share >= 0 && entry.share <= 1)) {
      throw new AutoRigError('MODEL_FAILED', `${path}: pose ${name}'s share must be a number from 0 to 1, got ${String(entry.share)}`);
    }
    shares.set(name, entry.share);
  }
  return shares;
}
