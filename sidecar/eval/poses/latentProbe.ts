/**
 * What `autorig eval poses` asks of the latent-pose models: the encoder's μ of a shape (for the latent diagnostics and
 * for picking baseline (c)'s nearest training identity), and the apply path's prediction of a pose in a variant.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { POSE_SDF_SAMPLES, readPoseSample, type PoseSample, type PoseVariant } from '../../data/poses/poseSample.js';
import { AutoRigError } from '../../errors.js';
import { modelDataPath, modelPath } from '../../learned/modelFiles.js';
import { loadModel, type ModelSession } from '../../learned/onnxSession.js';
import { applyLatentPose, encodeSdfSamples, latentOfParts } from '../../pose/applyLatentPose.js';
import type { PoseStrategy } from '../../pose/poseLibrary.js';
import { sdfSamples } from '../../pose/sdfSamples.js';
import type { MeshPart } from '../../types.js';
import { chamferDistance, type AutoRig } from './poseBaselines.js';
import { euclideanDistance } from './poseMetrics.js';

/**
 * latentModelsMissing: why the latent path cannot be measured (the files it needs that are not installed), or null
 * when the encoder, decoder and library are all there.
 */
export function latentModelsMissing(env: NodeJS.ProcessEnv = process.env): string | null {
  const files = [modelPath('latentPoseEncoder', env), modelPath('latentPoseDecoder', env), modelDataPath('latentPoseLibrary', env)];
  const missing = files.filter((f) => !existsSync(f));
  return missing.length ? `not installed: ${missing.join(', ')}` : null;
}

/** encoderMissing: why the encoder cannot be read (it is not installed), or null. */
export function encoderMissing(env: NodeJS.ProcessEnv = process.env): string | null {
  const file = modelPath('latentPoseEncoder', env);
  return existsSync(file) ? null : `not installed: ${file}`;
}

/** loadEncoder: the installed SDF encoder's session. Throws MODEL_MISSING / MODEL_FAILED. */
export function loadEncoder(): Promise<ModelSession> {
  return loadModel(modelPath('latentPoseEncoder'));
}

/**
 * encodeShape: μ of a mesh as the apply path sees it: POSE_SDF_SAMPLES samples of seed `seed` (the apply path uses 1)
 * of the canonical-frame mesh. canonical: Float32Array #V*3, triangles: Uint32Array #T*3 → Float32Array #L.
 */
export async function encodeShape(encoder: ModelSession, canonical: Float32Array, triangles: Uint32Array, seed: number): Promise<Float32Array> {
  const samples = sdfSamples(canonical, triangles, { count: POSE_SDF_SAMPLES, seed });
  return encodeSdfSamples(encoder, samples.points, samples.sdf);
}

/** A training identity baseline (c) may carry offsets from: its file, and what it is compared by. */
export interface TrainingEntry {
  identity: string;
  file: string;
  /** the encoder's μ of its stored neutral SDF samples; null without an encoder */
  mu: number[] | null;
  /** its neutral anchors (canonical), for the geometric choice without an encoder; null when μ is given */
  anchors: number[] | null;
}

/**
 * trainingIndex: every readable *.pose file of `folder` (sorted) as a TrainingEntry: with the encoder, its neutral's μ
 * (from the file's own SDF samples); without, its neutral anchors. A file that cannot be read (one being written) is
 * left out and told to onSkip. Throws BAD_REQUEST when the folder holds no readable .pose file.
 */
export async function trainingIndex(
  folder: string, encoder: ModelSession | null, onSkip: (file: string, why: string) => void = () => {},
): Promise<TrainingEntry[]> {
  let files: string[];
  try {
    files = readdirSync(folder).filter((f) => f.endsWith('.pose')).sort();
  } catch (err) {
    throw new AutoRigError('BAD_REQUEST', `--train ${folder} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  if (!files.length) throw new AutoRigError('BAD_REQUEST', `--train ${folder}: no .pose files`);
  const out: TrainingEntry[] = [];
  for (const f of files) {
    const file = join(folder, f);
    let sample: PoseSample;
    try {
      sample = readPoseSample(file);
    } catch (err) {
      onSkip(file, err instanceof Error ? err.message : String(err));
      continue;
    }
    const mu = encoder ? Array.from(await encodeSdfSamples(encoder, sample.neutralSdfPoints, sample.neutralSdf)) : null;
    out.push({ identity: sample.header.identity, file, mu, anchors: mu ? null : Array.from(sample.anchorPositions) });
  }
  if (!out.length) throw new AutoRigError('BAD_REQUEST', `--train ${folder}: no readable .pose file`);
  return out;
}

/**
 * nearestTraining: baseline (c)'s training identity: nearest by μ when both the test identity's μ and the entries'
 * are given, else by the chamfer distance between neutral anchors (canonical frames) → the entry, how, how far.
 * Throws BAD_REQUEST for an empty index.
 */
export function nearestTraining(index: TrainingEntry[], mu: ArrayLike<number> | null, anchors: Float32Array): { entry: TrainingEntry; by: 'latent' | 'geometry'; distance: number } {
  if (!index.length) throw new AutoRigError('BAD_REQUEST', 'no training identities to choose from');
  const byLatent = mu !== null && index.every((e) => e.mu !== null);
  let best = index[0], bestD = Infinity;
  for (const e of index) {
    const d = byLatent ? euclideanDistance(e.mu!, mu!) : chamferDistance(Float32Array.from(e.anchors ?? []), anchors);
    if (d < bestD) [best, bestD] = [e, d];
  }
  return { entry: best, by: byLatent ? 'latent' : 'geometry', distance: bestD };
}

/** readTrainingSample: the .pose file of a training entry. */
export function readTrainingSample(entry: TrainingEntry): PoseSample {
  return readPoseSample(entry.file);
}

/**
 * latentPosedParts: Apply Latent Pose's prediction of `pose` at strength 1 in `variant` → per part Float32Array
 * #V_p*3 (the character's space). with.rig: a rig of the character's own (options.rig: posed with the whole
 * corrective); with.autoRig: the apply path's auto-rig made beforehand (latentPoseAutoRig), handed over as an earlier
 * apply's (options.reuse) so that the pose is what a mesh without a rig gets, its corrective share included; neither:
 * applyLatentPose rigs the parts itself. with.mu: the parts' latentOfParts when the caller has it (else encoded);
 * with.correctiveShare: a share to pose with instead of the default (the share fit asks for 1). Throws what
 * applyLatentPose throws.
 */
export async function latentPosedParts(
  parts: MeshPart[], pose: string, variant: PoseVariant, strategy: PoseStrategy,
  with_: { rig?: AutoRig; autoRig?: AutoRig; mu?: Float32Array; correctiveShare?: number } = {},
): Promise<Float32Array[]> {
  const { rig, autoRig, correctiveShare } = with_;
  const mu = autoRig && !with_.mu ? await latentOfParts(parts) : with_.mu;
  const reuse = autoRig ? { mu: mu!, autoRig } : undefined;
  const result = await applyLatentPose(parts, { pose, strength: 1, strategy, variant, rig, mu, reuse, correctiveShare });
  return result.objects.map((o) => o.positions);
}
