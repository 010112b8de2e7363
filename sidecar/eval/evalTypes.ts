/**
 * The result of `autorig eval`: the JSON file's shape (documented, with its change log, in docs/EVAL.md).
 * All distances are in normalised units: each character is moved so that its mesh bounding-box centre is the origin
 * and scaled so that the box's longest side is 1.
 */

export const EVAL_SCHEMA = 'autorig-eval';
/** Bumped on any change a reader must know about; docs/EVAL.md lists what each version changed. */
export const EVAL_SCHEMA_VERSION = 2;

export interface EvalReport {
  schema: typeof EVAL_SCHEMA;
  version: number;
  /** ISO 8601 time the run started */
  created: string;
  /** the --data directory as given */
  data: string;
  /** pipeline variant (--method), "geometric" today */
  method: string;
  /** "blender" when --peer blender ran, else null */
  peer: 'blender' | null;
  /** --remesh N, else null */
  remesh: number | null;
  settings: EvalSettings;
  environment: EvalEnvironment;
  /** one entry per (file, variant) */
  characters: CharacterEval[];
  /** means over the characters with status "ok", per variant */
  summary: EvalSummary[];
  /** the quality bar, each criterion checked on this run */
  bar: BarCheck[];
}

export interface EvalEnvironment {
  node: string;
  platform: string;
  cpus: number;
  cpuModel: string;
  /** Blender's version when the peer ran, else null */
  blender: string | null;
  autorig: string;
  /** onnxruntime execution provider the models ran on ('cpu', 'cuda', ...); null when the method runs no model (geometric) */
  provider: string | null;
  /** providers tried before it that failed, each `name: first line of its error`; empty when provider is null */
  providerFallback: string[];
}

export interface EvalSettings {
  /** seed of the random poses (same poses for every method and peer) */
  poseSeed: number;
  /** poses per rotation range */
  poses: number;
  /** the two ranges of per-axis joint rotation, degrees: [10, 45] */
  degrees: [number, number];
}

export type Variant = 'original' | 'remesh';

export interface CharacterEval {
  /** file name without extension */
  name: string;
  file: string;
  variant: Variant;
  vertices: number;
  triangles: number;
  /** ok: measured; unmapped: the artist's skeleton could not be mapped to the template (reason in error); failed: our pipeline threw */
  status: 'ok' | 'unmapped' | 'failed';
  error?: { code: string; message: string };
  mapping?: TemplateMappingReport;
  /** our skeleton vs the artist's (mapped template joints only) */
  skeleton?: SkeletonScores;
  /** our weights (and the peer's) for the artist's skeleton mapped to the template, vs the artist's merged weights */
  skinning?: { ours: SkinningScores; blender?: SkinningScores };
  /** our skeleton and weights vs the artist's, same local rotations on corresponding joints */
  pipeline?: { deformation10: number; deformation45: number };
  /** ours: rig (skeleton + weights) and skin-alone wall times, and the peak resident memory of the process that ran them */
  time: { rigSeconds: number; skinSeconds: number; peakRssMiB: number };
}

export interface TemplateMappingReport {
  /** how the artist's joints were matched: by their names, or by a positional fit (unnamed rigs) */
  method: 'names' | 'positions';
  /** template joint name (no prefix) → the artist's joint name */
  joints: Record<string, string>;
  /** template joints the artist's rig does not have (left out of per-joint metrics) */
  missing: string[];
}

export interface SkeletonScores {
  cdJ2J: number;
  cdJ2B: number;
  cdB2B: number;
  /** template joint name → distance between our joint and the artist's */
  perJoint: Record<string, number>;
  meanJointError: number;
  maxJointError: number;
  maxJoint: string;
  /** our joints farther than 0.05 from the artist's same joint and nearer to an artist joint of another limb group (or side) than to it */
  wrongLimb: string[];
}

export interface SkinningScores {
  /** influences (weight > 1e-3 after merging): |ours ∩ artist| / |ours| and / |artist|, averaged over vertices */
  precision: number;
  recall: number;
  /** mean over vertices of Σ_bones |w_ours − w_artist| (0..2) */
  l1: number;
  /** mean vertex distance between the two posed meshes, averaged over the poses, at ±10° and ±45° */
  deformation10: number;
  deformation45: number;
  /** wall time of computing the weights */
  seconds: number;
  /** vertices left with no weight at all */
  unweighted: number;
  /** the method gave no usable result (Blender: "failed to find a solution"); its scores then count unweighted vertices as unmoved */
  failed: boolean;
  message?: string;
}

export interface EvalSummary {
  variant: Variant;
  characters: number;
  skeleton: { cdJ2J: number; cdJ2B: number; cdB2B: number; meanJointError: number; wrongLimb: number };
  ours: { precision: number; recall: number; l1: number; deformation10: number; deformation45: number; seconds: number; failures: number };
  blender?: { precision: number; recall: number; l1: number; deformation10: number; deformation45: number; seconds: number; failures: number };
  pipeline: { deformation10: number; deformation45: number };
}

export interface BarCheck {
  criterion: string;
  variant: Variant;
  value: number | null;
  target: number | null;
  pass: boolean | null;
  note?: string;
}
