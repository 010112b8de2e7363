/**
 * `autorig eval corrective-share`: fits each pose's corrective share (pose/correctiveShare) on development identities
 * only: the dev characters that are not held out (their artists' rigs read as the template) and procedural humanoids
 * from a seed stream that neither training (data seeds) nor the test identities (PROCEDURAL_TEST_SEED_BASE) use. The
 * test identities of `autorig eval poses` then say whether the shares hold.
 */
import { writeFileSync } from 'node:fs';
import { AutoRigError } from '../../errors.js';
import { modelDataPath } from '../../learned/modelFiles.js';
import type { MeshPart } from '../../types.js';
import { latentOfParts, latentPoseAutoRig } from '../../pose/applyLatentPose.js';
import {
  bestCorrectiveShare, CORRECTIVE_SHARE_FORMAT, CORRECTIVE_SHARE_GRID, mirrorPoseName, type CorrectiveShareFile,
} from '../../pose/correctiveShare.js';
import { POSE_NAMES, type PoseName } from '../../pose/poseVocabulary.js';
import { trainingDevCharacters } from '../../data/augment/heldOut.js';
import { PROCEDURAL_DEVELOPMENT_SEED_BASE } from './correctiveShareArguments.js';
import { latentPosedParts } from './latentProbe.js';
import { groundTruth, heldOutIdentity, mergedCanonical, MisreadFrameError, proceduralIdentity, type TestIdentity } from './testIdentities.js';

export interface CorrectiveShareFitOptions {
  /** folder of dev characters (.glb); the held-out ones are left out */
  data: string;
  /** procedural development humanoids, seeds PROCEDURAL_DEVELOPMENT_SEED_BASE + 0..N−1 */
  procedural: number;
  /** write models/latent_pose_corrective_share.json (else only answer) */
  write: boolean;
  /** the command line, recorded in the file */
  command: string;
  log: (line: string) => void;
}

export interface CorrectiveShareFit {
  file: CorrectiveShareFile;
  /** identities left out, and why (a frame misread, an auto-rig that failed) */
  skipped: { name: string; reason: string }[];
  /** where the file went, when written */
  written: string | null;
}

/**
 * correctiveErrorsByShare: one identity's corrective alone as Apply Latent Pose predicts it at share 1 (displacement
 * d = prediction − rest) against the truth's (t), → the mean vertex error |t − s·d| at each grid share (the prediction
 * is linear in s: posedByRig). rest, truth, predicted: Float32Array #V*3, same vertices → number[] #grid.
 */
export function correctiveErrorsByShare(rest: Float32Array, truth: Float32Array, predicted: Float32Array, grid: readonly number[] = CORRECTIVE_SHARE_GRID): number[] {
  if (truth.length !== rest.length || predicted.length !== rest.length) throw new AutoRigError('BAD_ARRAY', 'rest, truth and prediction must have the same vertices');
  const V = rest.length / 3;
  const sums = grid.map(() => 0);
  for (let i = 0; i < rest.length; i += 3) {
    const tx = truth[i] - rest[i], ty = truth[i + 1] - rest[i + 1], tz = truth[i + 2] - rest[i + 2];
    const dx = predicted[i] - rest[i], dy = predicted[i + 1] - rest[i + 1], dz = predicted[i + 2] - rest[i + 2];
    for (let j = 0; j < grid.length; j++) {
      const s = grid[j];
      sums[j] += Math.hypot(tx - s * dx, ty - s * dy, tz - s * dz);
    }
  }
  return sums.map((x) => (V ? x / V : 0));
}

/** fitCorrectiveShares: measure every development identity, fit each pose's share (with its mirror's), write. */
export async function fitCorrectiveShares(options: CorrectiveShareFitOptions): Promise<CorrectiveShareFit> {
  const makers: { name: string; make: () => Promise<TestIdentity> }[] = [
    // a dev character with its artist's rig read as the template, as a held-out one is read (not held out here)
    ...trainingDevCharacters(options.data).map((file) => ({ name: file, make: () => heldOutIdentity(file) })),
    ...Array.from({ length: options.procedural }, (_, i) => ({
      name: `procedural-${PROCEDURAL_DEVELOPMENT_SEED_BASE + i}`,
      make: async () => proceduralIdentity(PROCEDURAL_DEVELOPMENT_SEED_BASE + i),
    })),
  ];
  const rows = new Map<PoseName, number[][]>(POSE_NAMES.map((p) => [p, []]));
  const measured: string[] = [];
  const skipped: CorrectiveShareFit['skipped'] = [];
  for (const { name, make } of makers) {
    let identity: TestIdentity;
    try {
      identity = await make();
    } catch (err) {
      if (!(err instanceof MisreadFrameError || err instanceof AutoRigError)) throw err;
      skipped.push({ name, reason: err.message });
      continue;
    }
    const parts: MeshPart[] = identity.character.parts;
    let rig;
    try {
      rig = await latentPoseAutoRig(parts);
    } catch (err) {
      if (!(err instanceof AutoRigError)) throw err;
      skipped.push({ name: identity.name, reason: `auto-rig: ${err.code}: ${err.message}` });
      continue;
    }
    options.log(`${identity.name}: ${POSE_NAMES.length} poses`);
    const mu = await latentOfParts(parts);
    for (const pose of POSE_NAMES) {
      const truth = groundTruth(identity, pose).corrective;
      const predicted = mergedCanonical(identity, await latentPosedParts(parts, pose, 'corrective', 'mean', { autoRig: rig, mu, correctiveShare: 1 }));
      rows.get(pose)!.push(correctiveErrorsByShare(identity.rest, truth, predicted));
    }
    measured.push(identity.name);
  }
  if (!measured.length) throw new AutoRigError('BAD_REQUEST', `no development identity could be measured (${skipped.map((s) => s.name).join(', ') || 'none found'})`);
  const poses: CorrectiveShareFile['poses'] = {};
  for (const pose of POSE_NAMES) {
    const mirror = mirrorPoseName(pose);
    const pooled = mirror === pose ? rows.get(pose)! : [...rows.get(pose)!, ...rows.get(mirror)!];
    poses[pose] = bestCorrectiveShare(pooled);
  }
  const file: CorrectiveShareFile = {
    format: CORRECTIVE_SHARE_FORMAT, date: new Date().toISOString(), command: options.command, identities: measured,
    grid: [...CORRECTIVE_SHARE_GRID], poses,
  };
  let written: string | null = null;
  if (options.write) {
    written = modelDataPath('latentPoseCorrectiveShare');
    writeFileSync(written, `${JSON.stringify(file, null, 2)}\n`);
  }
  return { file, skipped, written };
}

/** One line per pose whose share is below 1: the share and the mean error at it against at 1 and at 0. */
export function correctiveShareSummary(fit: CorrectiveShareFit): string {
  const { file } = fit;
  const pct = (x: number) => `${(100 * x).toFixed(4)}%`;
  const lines = [`corrective share fitted on ${file.identities.length} development identities${fit.skipped.length ? ` (${fit.skipped.length} skipped: ${fit.skipped.map((s) => s.name).join(', ')})` : ''}`];
  const below = POSE_NAMES.filter((p) => file.poses[p].share < 1);
  lines.push(below.length ? `poses with a share below 1: ${below.length} of ${POSE_NAMES.length}` : `every pose keeps the whole corrective (share 1)`);
  for (const pose of below) {
    const { share, meanError } = file.poses[pose];
    const at = (s: number) => meanError[file.grid.indexOf(s)];
    lines.push(`  ${pose}: share ${share}, corrective-alone error ${pct(at(share))} (share 1 ${pct(at(1))}, no corrective ${pct(at(0))})`);
  }
  if (fit.written) lines.push(`written: ${fit.written}`);
  return lines.join('\n');
}
