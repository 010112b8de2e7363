/**
 * The numbers of `autorig eval poses`: vertex error against a ground-truth posed mesh, static leakage, and the latent
 * diagnostics (cosine of latent deltas across identities, distances between latents). Pure functions over typed arrays.
 */
import { AutoRigError } from '../../errors.js';

/** A vertex whose ground-truth motion is below this share of the character's height counts as static (0.1%). */
export const STATIC_MOTION = 0.001;

function checkSameLength(a: ArrayLike<number>, b: ArrayLike<number>, what: string): void {
  if (a.length !== b.length || a.length % 3 !== 0) throw new AutoRigError('BAD_ARRAY', `${what}: ${a.length} and ${b.length} coordinates do not pair into vertices`);
}

/**
 * vertexDistances: |a_v − b_v| per vertex. a, b: Float32Array #V*3 (same space, same vertex order) → Float64Array #V.
 * Throws BAD_ARRAY when the lengths differ.
 */
export function vertexDistances(a: Float32Array, b: Float32Array): Float64Array {
  checkSameLength(a, b, 'vertexDistances');
  const out = new Float64Array(a.length / 3);
  for (let v = 0; v < out.length; v++) {
    out[v] = Math.hypot(a[3 * v] - b[3 * v], a[3 * v + 1] - b[3 * v + 1], a[3 * v + 2] - b[3 * v + 2]);
  }
  return out;
}

/**
 * meanVertexError: mean over vertices of |predicted_v − truth_v|. predicted, truth: Float32Array #V*3 → number
 * (NaN for no vertices). Throws BAD_ARRAY when the lengths differ.
 */
export function meanVertexError(predicted: Float32Array, truth: Float32Array): number {
  return meanOf(vertexDistances(predicted, truth));
}

/**
 * staticLeakage: how much a prediction moves what the ground truth keeps still: the mean of |predicted_v − rest_v|
 * over the vertices whose ground-truth motion |truth_v − rest_v| is below `threshold`.
 * rest, predicted, truth: Float32Array #V*3, threshold: a distance → { leakage (NaN when no vertex is static),
 * staticCount }. Throws BAD_ARRAY when the lengths differ.
 */
export function staticLeakage(rest: Float32Array, predicted: Float32Array, truth: Float32Array, threshold = STATIC_MOTION): { leakage: number; staticCount: number } {
  const truthMotion = vertexDistances(truth, rest);
  const predictedMotion = vertexDistances(predicted, rest);
  let sum = 0, count = 0;
  for (let v = 0; v < truthMotion.length; v++) {
    if (truthMotion[v] < threshold) {
      sum += predictedMotion[v];
      count++;
    }
  }
  return { leakage: count > 0 ? sum / count : Number.NaN, staticCount: count };
}

/** cosineSimilarity: a·b / (|a||b|), NaN when either is zero. a, b: same length. */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new AutoRigError('BAD_ARRAY', `cosineSimilarity: vectors of ${a.length} and ${b.length}`);
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : Number.NaN;
}

/** euclideanDistance: |a − b|. a, b: same length. */
export function euclideanDistance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new AutoRigError('BAD_ARRAY', `euclideanDistance: vectors of ${a.length} and ${b.length}`);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] - b[i]) ** 2;
  return Math.sqrt(s);
}

/** vectorNorm: |a|. */
export function vectorNorm(a: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * a[i];
  return Math.sqrt(s);
}

/**
 * meanOverPairs: the mean of f(v_i, v_j) over the unordered pairs i < j whose value is finite; NaN with fewer than two
 * vectors (or no finite pair). The cross-identity agreement of latent deltas (f = cosineSimilarity) and the spread
 * of identities (f = euclideanDistance).
 */
export function meanOverPairs(vectors: ArrayLike<number>[], f: (a: ArrayLike<number>, b: ArrayLike<number>) => number): number {
  const values: number[] = [];
  for (let i = 0; i < vectors.length; i++) for (let j = i + 1; j < vectors.length; j++) values.push(f(vectors[i], vectors[j]));
  return meanOf(values);
}

/** meanOf: the mean of the finite values, NaN when there are none. */
export function meanOf(values: ArrayLike<number>): number {
  let s = 0, n = 0;
  for (let i = 0; i < values.length; i++) {
    if (Number.isFinite(values[i])) {
      s += values[i];
      n++;
    }
  }
  return n > 0 ? s / n : Number.NaN;
}
