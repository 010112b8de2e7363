import { linearBlendSkinning, poseTransforms, UNWEIGHTED_SUM } from '../deform/linearBlendSkinning.js';
import type { RestSkeleton, TopKWeights } from '../deform/linearBlendSkinning.js';
import { AutoRigError } from '../errors.js';
import { posesForJoints } from './randomPoses.js';

/**
 * Skin weights against the artist's: which bones influence each vertex (precision/recall), how much (L1), and what
 * the difference does to the posed mesh (deformation error). Weights are top-k rows: indices #V*k + values #V*k;
 * precision/recall and L1 take one k for both sides, deformationError infers each side's k from #V. Like linear
 * blend skinning, every measure divides a row by its sum when the sum is at least UNWEIGHTED_SUM, and treats a row
 * below that as no weight at all. A bone listed twice in a row counts once, with the two weights added.
 */

function vertexCountOf(w: TopKWeights, what: string): number {
  const n = w.indices.length / w.influences;
  if (!Number.isInteger(n) || w.weights.length !== w.indices.length) {
    throw new AutoRigError('BAD_ARRAY', `${what}: ${w.indices.length} indices and ${w.weights.length} weights are not whole rows of ${w.influences}`);
  }
  return n;
}

function sameVertexCount(a: TopKWeights, b: TopKWeights): number {
  const n = vertexCountOf(a, 'ours');
  const m = vertexCountOf(b, 'artist');
  if (n !== m) throw new AutoRigError('BAD_ARRAY', `weights for ${n} and ${m} vertices cannot be compared`);
  return n;
}

/** Sum of row v of weights #V*k. */
function rowSum(weights: Float32Array, influences: number, v: number): number {
  let s = 0;
  for (let i = v * influences; i < (v + 1) * influences; i++) s += weights[i];
  return s;
}

/**
 * Writes the bones of row v whose normalised weight exceeds the threshold into `into` (returned count), each once.
 * A bone in several slots is judged on its total.
 */
function influenceSet(w: TopKWeights, v: number, threshold: number, into: Int32Array): number {
  const k = w.influences;
  const s = rowSum(w.weights, w.influences, v);
  if (!(s >= UNWEIGHTED_SUM)) return 0;
  let count = 0;
  for (let i = 0; i < k; i++) {
    const b = w.indices[v * k + i];
    let seenBefore = false;
    for (let e = 0; e < i && !seenBefore; e++) seenBefore = w.indices[v * k + e] === b && w.weights[v * k + e] !== 0;
    if (seenBefore || w.weights[v * k + i] === 0) continue;
    let total = 0;
    for (let e = i; e < k; e++) if (w.indices[v * k + e] === b) total += w.weights[v * k + e];
    if (total / s > threshold) into[count++] = b;
  }
  return count;
}

/**
 * Precision and recall of the influence sets: per vertex, O = our bones with weight > threshold and A = the
 * artist's; precision = |O ∩ A| / |O| averaged over vertices where O is non-empty, recall = |O ∩ A| / |A| averaged
 * over vertices where A is non-empty. So a vertex we left unweighted costs recall (it misses the artist's bones) but
 * has no precision to measure. When no vertex has a non-empty set on that side the value is 0 (nothing was
 * claimed, or nothing could be found). Bone indices must refer to the same bones on both sides.
 * oursIndices, oursWeights, artistIndices, artistWeights: #V*k each, influences: k,
 * threshold: normalised weight (default 1e-3) → { precision, recall } in [0, 1]
 */
export function influencePrecisionRecall(
  oursIndices: Uint16Array, oursWeights: Float32Array, artistIndices: Uint16Array, artistWeights: Float32Array,
  influences: number, threshold = 1e-3,
): { precision: number; recall: number } {
  const ours = { indices: oursIndices, weights: oursWeights, influences };
  const artist = { indices: artistIndices, weights: artistWeights, influences };
  const vertexCount = sameVertexCount(ours, artist);
  const o = new Int32Array(ours.influences);
  const a = new Int32Array(artist.influences);
  let precisionSum = 0, precisionCount = 0, recallSum = 0, recallCount = 0;
  for (let v = 0; v < vertexCount; v++) {
    const no = influenceSet(ours, v, threshold, o);
    const na = influenceSet(artist, v, threshold, a);
    let common = 0;
    for (let i = 0; i < no; i++) {
      for (let e = 0; e < na; e++) if (o[i] === a[e]) { common++; break; }
    }
    if (no > 0) { precisionSum += common / no; precisionCount++; }
    if (na > 0) { recallSum += common / na; recallCount++; }
  }
  return {
    precision: precisionCount > 0 ? precisionSum / precisionCount : 0,
    recall: recallCount > 0 ? recallSum / recallCount : 0,
  };
}

/**
 * Adds sign × row v (divided by its sum; nothing for an unweighted row) into the dense per-bone `difference`, noting
 * each bone it touched in `touched` from `touchedCount` on → the new touched count.
 */
function addNormalisedRow(
  w: TopKWeights, v: number, sign: number, boneCount: number, difference: Float64Array, touched: Int32Array, touchedCount: number,
): number {
  const s = rowSum(w.weights, w.influences, v);
  if (!(s >= UNWEIGHTED_SUM)) return touchedCount;
  for (let i = v * w.influences; i < (v + 1) * w.influences; i++) {
    const value = w.weights[i];
    if (value === 0) continue;
    const b = w.indices[i];
    if (b >= boneCount) throw new AutoRigError('BAD_INDEX', `vertex ${v} is weighted to bone ${b} of ${boneCount}`);
    difference[b] += (sign * value) / s;
    touched[touchedCount++] = b;
  }
  return touchedCount;
}

/**
 * Mean over vertices of Σ_b |w_ours(b) − w_artist(b)| on normalised rows: 0 for the same weights, 2 for disjoint
 * bones, 1 where one side is unweighted and the other is not. Throws BAD_INDEX on an index ≥ boneCount.
 * oursIndices, oursWeights, artistIndices, artistWeights: #V*k each, influences: k,
 * boneCount: number of bones both index into → mean L1 (0 for #V = 0)
 */
export function weightL1(
  oursIndices: Uint16Array, oursWeights: Float32Array, artistIndices: Uint16Array, artistWeights: Float32Array,
  influences: number, boneCount: number,
): number {
  const ours = { indices: oursIndices, weights: oursWeights, influences };
  const artist = { indices: artistIndices, weights: artistWeights, influences };
  const vertexCount = sameVertexCount(ours, artist);
  const difference = new Float64Array(boneCount);
  const touched = new Int32Array(ours.influences + artist.influences);
  let total = 0;
  for (let v = 0; v < vertexCount; v++) {
    let touchedCount = addNormalisedRow(ours, v, 1, boneCount, difference, touched, 0);
    touchedCount = addNormalisedRow(artist, v, -1, boneCount, difference, touched, touchedCount);
    for (let i = 0; i < touchedCount; i++) {
      const b = touched[i];
      total += Math.abs(difference[b]);
      difference[b] = 0; // a bone touched twice adds 0 the second time
    }
  }
  return vertexCount > 0 ? total / vertexCount : 0;
}

/** A rest skeleton that can take template poses: joint j turns by pose row templateIndex[j] (-1: follows its parent). */
export interface PosableSkeleton extends RestSkeleton {
  /** templateIndex: Int32Array #J, pose row (template joint) of each joint, -1 for none; absent: joint j takes row j */
  templateIndex?: Int32Array;
}

/** Skin weights of the whole mesh: indices #V*k + values #V*k (k follows from #V). */
export interface SkinWeights {
  indices: Uint16Array;
  weights: Float32Array;
}

function rotationsFor(pose: Float64Array, skeleton: PosableSkeleton, what: string): Float64Array {
  const jointCount = skeleton.parents.length;
  if (skeleton.templateIndex) {
    if (skeleton.templateIndex.length !== jointCount) throw new AutoRigError('BAD_ARRAY', `${what}: ${skeleton.templateIndex.length} template indices for ${jointCount} joints`);
    return posesForJoints(pose, skeleton.templateIndex);
  }
  if (pose.length !== jointCount * 9) throw new AutoRigError('BAD_ARRAY', `${what}: a pose of ${pose.length / 9} rotations for ${jointCount} joints needs templateIndex`);
  return pose;
}

function topK(w: SkinWeights, vertexCount: number, what: string): TopKWeights {
  const influences = vertexCount > 0 ? w.indices.length / vertexCount : 1;
  if (!Number.isInteger(influences) || influences < 1 || w.weights.length !== w.indices.length) {
    throw new AutoRigError('BAD_ARRAY', `${what}: ${w.indices.length} indices and ${w.weights.length} weights are not whole rows for ${vertexCount} vertices`);
  }
  return { indices: w.indices, weights: w.weights, influences };
}

/**
 * Mean distance between the mesh posed by rig A and by rig B, averaged over the poses: the error a viewer sees.
 * Poses are rows of rotations, one per template joint (randomPoses); each skeleton's joint j turns by row
 * templateIndex[j] about its own head (poseTransforms: world axes, relative to rest), or not at all where that is -1.
 * Skinning alone: A and B are one skeleton with two weight sets. Whole pipeline: A is our skeleton, B the artist's,
 * both with their template indices, so corresponding joints turn alike. Unweighted vertices stay in place
 * (linearBlendSkinning).
 * positions: Float32Array #V*3 (rest pose), weightsA/B: SkinWeights over #V (indices into A's/B's joints; k may
 * differ), skeletonA/B: PosableSkeleton (#JA, #JB joints), poses: Float64Array[] each #T*9
 * → mean distance (same units as positions; 0 when there are no poses or vertices)
 */
export function deformationError(
  positions: Float32Array,
  weightsA: SkinWeights, skeletonA: PosableSkeleton,
  weightsB: SkinWeights, skeletonB: PosableSkeleton,
  poses: Float64Array[],
): number {
  const vertexCount = positions.length / 3;
  if (!Number.isInteger(vertexCount)) throw new AutoRigError('BAD_ARRAY', `${positions.length} coordinates are not whole vertices`);
  const a = topK(weightsA, vertexCount, 'weights A');
  const b = topK(weightsB, vertexCount, 'weights B');
  if (poses.length === 0 || vertexCount === 0) return 0;
  const posedA = new Float32Array(positions.length);
  const posedB = new Float32Array(positions.length);
  let total = 0;
  for (const pose of poses) {
    const transformsA = poseTransforms(skeletonA.heads, skeletonA.parents, rotationsFor(pose, skeletonA, 'skeleton A'));
    const transformsB = poseTransforms(skeletonB.heads, skeletonB.parents, rotationsFor(pose, skeletonB, 'skeleton B'));
    linearBlendSkinning(positions, a.indices, a.weights, a.influences, transformsA, posedA);
    linearBlendSkinning(positions, b.indices, b.weights, b.influences, transformsB, posedB);
    let poseTotal = 0;
    for (let i = 0; i < positions.length; i += 3) {
      const dx = posedA[i] - posedB[i], dy = posedA[i + 1] - posedB[i + 1], dz = posedA[i + 2] - posedB[i + 2];
      poseTotal += Math.sqrt(dx * dx + dy * dy + dz * dz);
    }
    total += poseTotal / vertexCount;
  }
  return total / poses.length;
}

/**
 * Vertices with no weight at all (row sum below UNWEIGHTED_SUM): a method that leaves them is incomplete.
 * weights: Float32Array #V*k, influences: k → count
 */
export function unweightedCount(weights: Float32Array, influences: number): number {
  const vertexCount = weights.length / influences;
  if (!Number.isInteger(vertexCount)) throw new AutoRigError('BAD_ARRAY', `${weights.length} weights are not whole rows of ${influences}`);
  let count = 0;
  for (let v = 0; v < vertexCount; v++) if (!(rowSum(weights, influences, v) >= UNWEIGHTED_SUM)) count++;
  return count;
}
