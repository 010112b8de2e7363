/**
 * The latent pose library (models/latent_pose_library.json, written by models/training/train_latent_pose.py): for
 * every pose of the vocabulary and every deformation variant, the latent delta Δμ = μ(posed) − μ(neutral) of each
 * training identity and their mean. Apply Latent Pose takes its delta from here: the mean (strategy 'mean'), or the
 * delta of the training identity whose neutral latent is nearest the user's character (strategy 'nearest').
 */
import { existsSync, readFileSync } from 'node:fs';
import type { PoseVariant } from '../data/poses/poseSample.js';
import { AutoRigError } from '../errors.js';

export const POSE_LIBRARY_FORMAT = 'autorig-latent-pose-library/1';
/** The variant a user asks for: the pose with its corrective (the training's 'skinningCorrective' pairs). */
export const APPLIED_VARIANT: PoseVariant = 'skinningCorrective';
export const POSE_STRATEGIES = ['mean', 'nearest'] as const;
export type PoseStrategy = (typeof POSE_STRATEGIES)[number];

export interface LibraryIdentity {
  identity: string;
  muNeutral: number[];
  delta: number[];
}

export interface PoseLibrary {
  format: typeof POSE_LIBRARY_FORMAT;
  latentSize: number;
  /** neighbours per anchor in the decoder's kNN graph */
  knn: number;
  /** whether each anchor's own index is among its knn (default false) */
  knnIncludesSelf?: boolean;
  variants: string[];
  poses: Record<string, Record<string, { mean: number[]; identities: LibraryIdentity[] }>>;
}

const cache = new Map<string, PoseLibrary>();

/**
 * readPoseLibrary: the library at `path`, checked (every vector finite and latentSize long), cached per path.
 * Throws MODEL_MISSING when there is no file, MODEL_FAILED when it is not a library.
 */
export function readPoseLibrary(path: string): PoseLibrary {
  const cached = cache.get(path);
  if (cached) return cached;
  if (!existsSync(path)) throw new AutoRigError('MODEL_MISSING', `the latent pose library is not installed (no file ${path})`);
  let library: PoseLibrary;
  try {
    library = JSON.parse(readFileSync(path, 'utf8')) as PoseLibrary;
  } catch (err) {
    throw new AutoRigError('MODEL_FAILED', `the latent pose library ${path} is not JSON: ${(err as Error).message}`);
  }
  const bad = (why: string) => new AutoRigError('MODEL_FAILED', `the latent pose library ${path} is damaged: ${why}`);
  if (library.format !== POSE_LIBRARY_FORMAT) throw bad(`format ${String(library.format)}`);
  const L = library.latentSize;
  if (!Number.isInteger(L) || L < 1 || !Number.isInteger(library.knn) || library.knn < 1) throw bad('latentSize or knn');
  const vector = (v: unknown) => Array.isArray(v) && v.length === L && v.every((x) => typeof x === 'number' && Number.isFinite(x));
  for (const [pose, variants] of Object.entries(library.poses ?? {})) {
    for (const [variant, entry] of Object.entries(variants)) {
      if (!vector(entry.mean)) throw bad(`${pose}/${variant}: mean`);
      for (const id of entry.identities ?? []) if (!vector(id.muNeutral) || !vector(id.delta)) throw bad(`${pose}/${variant}: ${id.identity}`);
    }
  }
  cache.set(path, library);
  return library;
}

/**
 * latentDelta: the Δμ to apply for `pose` in `variant`, by strategy; muSource (#L) is the user's character's latent.
 * → { delta: Float32Array #L, identity: the training identity it came from ('nearest'), else null }.
 * Throws BAD_REQUEST for a pose or variant the library lacks; MODEL_FAILED for 'nearest' without identities.
 */
export function latentDelta(
  library: PoseLibrary, pose: string, variant: string, strategy: PoseStrategy, muSource: Float32Array,
): { delta: Float32Array; identity: string | null } {
  const entry = library.poses[pose]?.[variant];
  if (!entry) throw new AutoRigError('BAD_REQUEST', `the latent pose library has no pose "${pose}" (${variant})`);
  if (strategy === 'mean') return { delta: Float32Array.from(entry.mean), identity: null };
  if (!entry.identities?.length) throw new AutoRigError('MODEL_FAILED', `the latent pose library holds no identities for "${pose}"`);
  let best = entry.identities[0], bestD = Infinity;
  for (const id of entry.identities) {
    let d = 0;
    for (let i = 0; i < muSource.length; i++) d += (id.muNeutral[i] - muSource[i]) ** 2;
    if (d < bestD) [best, bestD] = [id, d];
  }
  return { delta: Float32Array.from(best.delta), identity: best.identity };
}
