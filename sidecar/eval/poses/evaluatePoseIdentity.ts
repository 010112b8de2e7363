/**
 * One test identity of `autorig eval poses`: its ground truth in every pose (both measured variants), the latent
 * path's prediction, the three baselines, static leakage, and the encoder's latents for the diagnostics.
 * Runs inside a process of its own (poseEvalWorker.ts) when called from runPoseEval.
 */
import { areaWeightedVertices, POSE_ANCHORS, type PoseSample } from '../../data/poses/poseSample.js';
import { AutoRigError } from '../../errors.js';
import type { ModelSession } from '../../learned/onnxSession.js';
import { rigCharacterAsync } from '../../pipeline.js';
import type { PoseStrategy } from '../../pose/poseLibrary.js';
import type { PoseName } from '../../pose/poseVocabulary.js';
import { closestAnchorOffsets, rigPosedParts, sampleOffsets, type AutoRig } from './poseBaselines.js';
import {
  MEASURED_VARIANTS, PREDICTORS, type IdentityPoseEval, type LatentRig, type MeasuredVariant, type PredictionScores, type Predictor, type VariantEval,
} from './poseEvalTypes.js';
import { latentOfParts, latentPoseAutoRig } from '../../pose/applyLatentPose.js';
import { encodeShape, latentPosedParts, loadEncoder, nearestTraining, readTrainingSample, type TrainingEntry } from './latentProbe.js';
import { meanOf, meanVertexError, STATIC_MOTION, staticLeakage, vertexDistances } from './poseMetrics.js';
import { groundTruth, heldOutIdentity, mergedCanonical, MisreadFrameError, ownRig, proceduralIdentity, type TestIdentity } from './testIdentities.js';

/** Which test identity: a held-out dev character file, or a procedural seed. */
export type IdentitySpec = { kind: 'held-out'; file: string } | { kind: 'procedural'; seed: number; targetVertices: number };

export interface PoseIdentityJob {
  identity: IdentitySpec;
  poses: PoseName[];
  /** rig method of baseline (b) (rigCharacterAsync) */
  rigMethod: string;
  strategy: PoseStrategy;
  /** the rig the latent path poses through: the auto-rig of the apply path (latentPoseAutoRig: (b)'s skeleton, learned weights) or its own rig; default auto */
  latentRig?: LatentRig;
  /** measure the apply path (encoder, decoder and library installed) */
  latent: boolean;
  /** read latents with the encoder (the diagnostics, baseline (c)'s choice by μ): needs the encoder alone; default latent */
  encoder?: boolean;
  /** baseline (c)'s candidates (trainingIndex); empty: (c) not measured */
  training: TrainingEntry[];
  staticThreshold?: number;
}

/** Seeds of the encoder's two readings of the neutral (1 is the apply path's). */
const SDF_SEED = 1;
const RESAMPLE_SEED = 2;
/** Seed of the test identity's own anchors for choosing baseline (c)'s identity by geometry. */
const ANCHOR_SEED = 2;

/**
 * evaluatePoseIdentity: score every pose on one test identity. Never throws for the identity itself: a misread
 * canonical frame gives status 'skipped', any other failure 'failed' with the error (a failed auto-rig only marks
 * baseline (b), scored then as no motion).
 */
export async function evaluatePoseIdentity(job: PoseIdentityJob, log: (line: string) => void = () => {}): Promise<IdentityPoseEval> {
  const t0 = performance.now();
  const spec = job.identity;
  const name = spec.kind === 'procedural' ? `procedural-${spec.seed}` : spec.file.replace(/^.*[\\/]/, '').replace(/\.[^.]*$/, '');
  const result: IdentityPoseEval = {
    name, source: spec.kind, seed: spec.kind === 'procedural' ? spec.seed : null, status: 'ok', vertices: 0, parts: 0,
    rig: { ok: false, method: job.rigMethod, seconds: 0 }, nearest: null,
    latentMissing: job.latent ? null : 'the latent pose models are not installed', muNeutral: null, muNeutralResampled: null,
    poses: {}, seconds: 0,
  };
  try {
    let identity: TestIdentity;
    try {
      identity = spec.kind === 'procedural' ? proceduralIdentity(spec.seed, spec.targetVertices) : await heldOutIdentity(spec.file);
    } catch (err) {
      if (err instanceof MisreadFrameError) {
        return { ...result, status: 'skipped', error: { code: 'FRAME_MISREAD', message: err.message }, seconds: (performance.now() - t0) / 1000 };
      }
      throw err;
    }
    result.vertices = identity.rest.length / 3;
    result.parts = identity.character.parts.length;
    await scoreIdentity(identity, job, result, log);
  } catch (err) {
    result.status = 'failed';
    result.error = { code: err instanceof AutoRigError ? err.code : 'INTERNAL', message: err instanceof Error ? err.message : String(err) };
  }
  result.seconds = (performance.now() - t0) / 1000;
  return result;
}

/** The auto-rig Apply Latent Pose makes for these parts (latentPoseAutoRig), or null where it refuses them (an AutoRigError). */
async function applyPathRig(parts: TestIdentity['character']['parts']): Promise<AutoRig | null> {
  try {
    return await latentPoseAutoRig(parts);
  } catch (err) {
    if (err instanceof AutoRigError) return null;
    throw err;
  }
}

async function scoreIdentity(identity: TestIdentity, job: PoseIdentityJob, result: IdentityPoseEval, log: (line: string) => void): Promise<void> {
  const { name, rest } = identity;
  const parts = identity.character.parts;
  const threshold = job.staticThreshold ?? STATIC_MOTION;

  let encoder: ModelSession | null = null;
  let muNeutral: Float32Array | null = null;
  if (job.encoder ?? job.latent) {
    encoder = await loadEncoder();
    muNeutral = await encodeShape(encoder, rest, identity.mesh.triangles, SDF_SEED);
    result.muNeutral = Array.from(muNeutral);
    result.muNeutralResampled = Array.from(await encodeShape(encoder, rest, identity.mesh.triangles, RESAMPLE_SEED));
  }

  log(`${name}: auto-rig (${job.rigMethod})`);
  let rig: AutoRig | null = null;
  try {
    const rigged = await rigCharacterAsync(parts, { method: job.rigMethod });
    rig = rigged;
    result.rig = { ok: true, method: job.rigMethod, seconds: rigged.seconds };
  } catch (err) {
    if (!(err instanceof AutoRigError)) throw err;
    result.rig = { ok: false, method: job.rigMethod, seconds: 0, error: `${err.code}: ${err.message}` };
  }

  let nearestSample: PoseSample | null = null;
  if (job.training.length) {
    const anchors = muNeutral ? new Float32Array(0) : gatherAnchors(rest, areaWeightedVertices(rest, identity.mesh.triangles, POSE_ANCHORS, ANCHOR_SEED));
    const nearest = nearestTraining(job.training, muNeutral, anchors);
    nearestSample = readTrainingSample(nearest.entry);
    result.nearest = { identity: nearest.entry.identity, by: nearest.by, distance: nearest.distance };
  }

  // the rig the latent path poses through: the mesh's auto-rig (where (b)'s failed, the latent path cannot pose this
  // identity and counts as no motion, like (b)), or the identity's own rig, the one its ground truth is posed with
  // (the apply path's auto-rig has (b)'s skeleton, both at the network's depth, and the learned weights, POSE_SKIN_STAGE:
  // the one users get)
  const latentRig = job.latentRig === 'own' ? ownRig(identity.character) : rig && job.latent ? await applyPathRig(parts) : rig;
  // the apply path's own μ of this identity (its frame and samples, not the neutral's above), read once for every
  // pose and variant: what applyLatentPose would read each time
  // an own rig is given to the apply, whose frame then faces as the rig's sides say: μ is read in that frame
  const muSkeleton = job.latentRig === 'own' ? latentRig?.skeleton : undefined;
  const applyMu = job.latent && result.latentMissing === null && latentRig ? await latentOfParts(parts, muSkeleton) : undefined;
  const { up, forward } = identity.frame.frame;
  for (const pose of job.poses) {
    log(`${name}: ${pose}`);
    const truth = groundTruth(identity, pose);
    let rigged: Float32Array[] | null = null;
    let rigFailure: string | null = rig ? null : result.rig.error ?? 'no rig';
    if (rig) {
      try {
        rigged = rigPosedParts(parts, rig, pose, { up, forward });
      } catch (err) {
        // a skeleton this pose cannot be read from (a missing joint, a bone of no length): (b) moves nothing here
        if (!(err instanceof AutoRigError && err.code === 'BAD_SKELETON')) throw err;
        rigFailure = `${err.code}: ${err.message}`;
      }
    }
    const variants = {} as Record<MeasuredVariant, VariantEval>;
    let appliedPrediction: Float32Array | null = null;
    for (const variant of MEASURED_VARIANTS) {
      const predictions: Record<Predictor, Float32Array | null> = {
        latent: null,
        noMotion: rest,
        // a rig has no corrective: for the corrective alone it moves nothing; a failed rig moves nothing either
        rig: variant === 'corrective' || !rigged ? rest : mergedCanonical(identity, rigged),
        nearestOffsets: nearestSample ? withOffsets(rest, nearestSample, pose, variant) : null,
      };
      if (job.latent && result.latentMissing === null) {
        // the latent path poses the mesh through its auto-rig (the same one as (b), made once above): where the rig
        // failed it cannot pose the character, and like (b) it counts as no motion
        const latent = latentRig
          ? mergedCanonical(identity, await latentPosedParts(parts, pose, variant, job.strategy, job.latentRig === 'own' ? { rig: latentRig, mu: applyMu } : { autoRig: latentRig, mu: applyMu }))
          : rest;
        if (variant === 'skinningCorrective') appliedPrediction = latent;
        else if (latentRig && appliedPrediction && sameArray(latent, appliedPrediction)) {
          // applyLatentPose ignored the variant: the corrective alone cannot be told apart from the applied pose
          result.latentMissing = 'applyLatentPose ignores the variant option: the corrective-only variant is not measured';
        }
        if (variant === 'skinningCorrective' || result.latentMissing === null) predictions.latent = latent;
      }
      variants[variant] = scoreVariant(rest, truth[variant], predictions, threshold);
    }
    const deltaMu = encoder && muNeutral
      ? Array.from(await encodeShape(encoder, truth.skinningCorrective, identity.mesh.triangles, SDF_SEED), (x, i) => x - muNeutral![i])
      : null;
    result.poses[pose] = { variants, deltaMu, rigFailure };
  }
}

/** Baseline (c): the rest mesh moved by the nearest training identity's offsets, closest anchor per vertex. */
function withOffsets(rest: Float32Array, sample: PoseSample, pose: PoseName, variant: MeasuredVariant): Float32Array {
  const motion = closestAnchorOffsets(rest, sample.anchorPositions, sampleOffsets(sample, pose, variant));
  return rest.map((x, i) => x + motion[i]);
}

/** Every prediction's error and leakage against the truth of one variant. */
function scoreVariant(rest: Float32Array, truth: Float32Array, predictions: Record<Predictor, Float32Array | null>, threshold: number): VariantEval {
  const truthMotion = vertexDistances(truth, rest);
  let staticCount = 0;
  for (const m of truthMotion) if (m < threshold) staticCount++;
  const scores = {} as Record<Predictor, PredictionScores>;
  for (const p of PREDICTORS) {
    const predicted = predictions[p];
    scores[p] = predicted
      ? { error: meanVertexError(predicted, truth), leakage: finiteOrNull(staticLeakage(rest, predicted, truth, threshold).leakage) }
      : { error: null, leakage: null };
  }
  return { truthMotion: meanOf(truthMotion), staticShare: truthMotion.length ? staticCount / truthMotion.length : 0, scores };
}

function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

function sameArray(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function gatherAnchors(positions: Float32Array, indices: Uint32Array): Float32Array {
  const out = new Float32Array(indices.length * 3);
  indices.forEach((v, i) => out.set(positions.subarray(3 * v, 3 * v + 3), 3 * i));
  return out;
}
