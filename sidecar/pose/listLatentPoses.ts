/**
 * The pose menu (`pose.list`, `autorig pose --list`): the library's poses with the experimental marks `autorig eval
 * poses --write-marks` measured. Kept apart from the apply path so that listing never loads mesh or model code.
 */
import { existsSync, readFileSync } from 'node:fs';
import { modelDataPath } from '../learned/modelFiles.js';
import { APPLIED_VARIANT, readPoseLibrary } from './poseLibrary.js';
import { poseComponents, POSE_NAMES } from './poseVocabulary.js';

export interface PoseListEntry {
  name: string;
  /** the single poses it combines (itself for a single pose) */
  components: string[];
  /** true unless `autorig eval poses` measured the latent path beating the rig-based baseline on this pose */
  experimental: boolean;
  /** what the measurement said, for a tooltip */
  note: string;
}

interface PoseEvalFile {
  poses: Record<string, { latent?: number; rig?: number }>;
}

/**
 * listLatentPoses: every pose of the vocabulary the installed library holds, in vocabulary order, with its
 * experimental mark from models/latent_pose_eval.json. Throws MODEL_MISSING / MODEL_FAILED for the library.
 */
export function listLatentPoses(): PoseListEntry[] {
  const library = readPoseLibrary(modelDataPath('latentPoseLibrary'));
  const evalPath = modelDataPath('latentPoseEval');
  const measured: PoseEvalFile['poses'] = existsSync(evalPath) ? (JSON.parse(readFileSync(evalPath, 'utf8')) as PoseEvalFile).poses ?? {} : {};
  return POSE_NAMES.filter((name) => library.poses[name]?.[APPLIED_VARIANT]).map((name) => {
    const m = measured[name];
    const known = m && typeof m.latent === 'number' && typeof m.rig === 'number';
    const experimental = !known || !(m.latent! < m.rig!);
    const pct = (x: number) => `${(x * 100).toFixed(2)}% of height`;
    const note = known
      ? `mean vertex error on test characters ${pct(m.latent!)} (rig-based baseline ${pct(m.rig!)})`
      : 'not measured yet';
    return { name, components: poseComponents(name), experimental, note };
  });
}

