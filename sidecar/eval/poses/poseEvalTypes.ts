/**
 * The result of `autorig eval poses` (issue 6, Apply Latent Pose measured on test identities): the JSON file's shape.
 *
 * Every distance is a fraction of the character's height: positions are taken into the canonical frame of the
 * character's neutral mesh (mesh/canonicalFrame: x left, y up, z forward, longest side 1), where the longest side of
 * a standing character is its height. The markdown report prints them as % of height.
 */
import type { PoseVariant } from '../../data/poses/poseSample.js';

export const POSE_EVAL_FORMAT = 'autorig-latent-pose-eval-report/1';
/** The file listLatentPoses() reads its experimental marks from (models/latent_pose_eval.json). */
export const POSE_EVAL_MARKS_FORMAT = 'autorig-latent-pose-eval/1';

/** The two variants measured: what users get (the pose with its corrective) and the corrective alone. */
export const MEASURED_VARIANTS = ['skinningCorrective', 'corrective'] as const satisfies readonly PoseVariant[];
export type MeasuredVariant = (typeof MEASURED_VARIANTS)[number];

/** The predictions scored against the ground truth, per pose and variant. */
export const PREDICTORS = ['latent', 'noMotion', 'rig', 'nearestOffsets'] as const;
export type Predictor = (typeof PREDICTORS)[number];

/** One prediction's scores: null where it was not measured (no models, a failed rig, no training folder). */
export interface PredictionScores {
  /** mean over vertices of |predicted − ground truth| */
  error: number | null;
  /** mean predicted motion over the static vertices (ground-truth motion below the threshold) */
  leakage: number | null;
}

export interface VariantEval {
  /** mean ground-truth motion over vertices (how much the pose moves this character) */
  truthMotion: number;
  /** share of the vertices that are static in the ground truth */
  staticShare: number;
  scores: Record<Predictor, PredictionScores>;
}

export interface IdentityPoseEntry {
  variants: Record<MeasuredVariant, VariantEval>;
  /** μ(posed, skinningCorrective) − μ(neutral), SDF samples of seed 1 both; null without the encoder */
  deltaMu: number[] | null;
  /** why baseline (b) could not pose this (no rig, or a joint the pose turns missing): it then counts as no motion */
  rigFailure: string | null;
}

export interface IdentityPoseEval {
  /** dev character name, or procedural-<seed> */
  name: string;
  source: 'held-out' | 'procedural';
  /** generator seed of a procedural identity, else null */
  seed: number | null;
  /** ok: measured; skipped: its canonical frame was misread (not a test of the pose model); failed: see error */
  status: 'ok' | 'skipped' | 'failed';
  error?: { code: string; message: string };
  vertices: number;
  parts: number;
  /** baseline (b): did our auto-rig give a skeleton and weights (when not, (b) is scored as no motion) */
  rig: { ok: boolean; method: string; seconds: number; error?: string };
  /** baseline (c): the training identity whose offsets were carried, and how it was chosen */
  nearest: { identity: string; by: 'latent' | 'geometry'; distance: number } | null;
  /** why the latent path was not measured on this identity, else null */
  latentMissing: string | null;
  /** the encoder's μ of the neutral with SDF seeds 1 and 2 (resampling noise); null without the encoder */
  muNeutral: number[] | null;
  muNeutralResampled: number[] | null;
  /** per pose name */
  poses: Record<string, IdentityPoseEntry>;
  seconds: number;
}

/** Means over the measured identities (status ok) of one pose and variant. */
export interface PoseVariantSummary {
  identities: number;
  truthMotion: number;
  /** mean error per predictor (null where no identity measured it) */
  error: Record<Predictor, number | null>;
  leakage: Record<Predictor, number | null>;
  /** identities where the auto-rig failed and (b) counted as no motion */
  rigFailures: number;
}

export interface PoseSummary {
  pose: string;
  variants: Record<MeasuredVariant, PoseVariantSummary>;
  /** mean pairwise cosine of Δμ across test identities (skinningCorrective), null with fewer than two */
  deltaMuCosine: number | null;
  /** mean |Δμ| over identities */
  deltaMuNorm: number | null;
  /** R_cond/noise: mean over identities of |Δμ| / that identity's resampling noise */
  conditionToNoise: number | null;
  /** the bar on this pose: latent below (c) with the corrective (skinningCorrective), below (b) alone (corrective) */
  bar: { belowNearestOffsets: boolean | null; correctiveBelowRig: boolean | null; pass: boolean | null };
}

export interface LatentDiagnostics {
  /** mean |μ_i − μ_j| over pairs of test neutrals */
  identityDistance: number | null;
  /** mean over identities of |μ(SDF seed 1) − μ(seed 2)| of the neutral */
  resamplingNoise: number | null;
  /** identityDistance / resamplingNoise */
  identityToNoise: number | null;
  /** mean over poses of PoseSummary.conditionToNoise (the paper: 2.03) */
  conditionToNoise: number | null;
}

/** The rig the latent path poses a test identity through: its auto-rig (a mesh without a rig) or its own rig. */
export const LATENT_RIGS = ['auto', 'own'] as const;
export type LatentRig = (typeof LATENT_RIGS)[number];

export interface PoseEvalReport {
  format: typeof POSE_EVAL_FORMAT;
  created: string;
  data: string;
  train: string | null;
  settings: {
    strength: number;
    strategy: string;
    rigMethod: string;
    /** the rig the latent path posed through (absent in reports made before it was an option: auto) */
    latentRig?: LatentRig;
    /** the corrective share each pose was applied with on the auto-rig path (pose/correctiveShare; absent with --latent-rig own, and in reports made before the shares) */
    correctiveShares?: Record<string, number>;
    proceduralSeeds: number[];
    proceduralVertices: number;
    /** a vertex whose ground-truth motion is below this (fraction of height) is static */
    staticThreshold: number;
    poses: string[];
  };
  environment: { node: string; platform: string; cpus: number; autorig: string; provider: string | null };
  /** whether the latent path ran; when not, why */
  latent: { measured: boolean; note: string };
  identities: IdentityPoseEval[];
  /** procedural seeds left out because their canonical frame was misread */
  skipped: { name: string; reason: string }[];
  poses: PoseSummary[];
  diagnostics: LatentDiagnostics;
  /** poses passing the bar / poses measured */
  bar: { passed: number; measured: number; poses: number };
}

/** models/latent_pose_eval.json: per pose, the skinningCorrective means (fractions of height). */
export interface PoseEvalMarks {
  format: typeof POSE_EVAL_MARKS_FORMAT;
  date: string;
  poses: Record<string, { latent: number | null; rig: number | null; nearestOffsets: number | null; noMotion: number | null }>;
}
