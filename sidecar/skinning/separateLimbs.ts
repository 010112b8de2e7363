/**
 * An arm never shares a vertex with a leg or with the other arm. A hand that rests on the thigh (arms hanging at the
 * sides) lies within a voxel or two of it, and a blend carried through the grid, or learned from points, can give the
 * hand's vertices half their weight to the thigh: bending the elbow then leaves half the hand behind. Artists do not
 * blend those limbs: on the ten dev characters 4 vertices of 28,400 hold weight on an arm and a leg or on both arms
 * (cesium_man), where the apply path's weights had 167 on bcn_epileptic and 15 on 0ad_male_tunic, the voxel
 * skinning's 45 on bcn_epileptic. Legs may share a vertex (artists blend the two thighs at the crotch), and so may a
 * limb and the torso (the shoulder and the hips belong to the torso).
 */
import { MIXAMO_JOINTS, type MixamoJointName } from '../skeleton/mixamoTemplate.js';
import type { Vec3 } from '../types.js';
import { END_BONE_LENGTH } from './limbJointBands.js';
import { pointSegmentDistanceSquared } from './shellBones.js';

/** One limb as the weights see it: which bones (weight indices) are its own, and its bones' segments. */
export interface LimbChain {
  kind: 'arm' | 'leg';
  /** the weight indices of its bones */
  bones: number[];
  /** its bones as segments, one per bone */
  segments: { head: Vec3; tail: Vec3 }[];
}

/** Top-k weights as the skinnings hand them over: bone indices #V*k, values #V*k. */
type TopK = { indices: Uint16Array | Uint32Array | Int32Array; weights: Float32Array };

/** The limbs' template bones in chain order. */
export const LIMB_BONES: readonly { kind: LimbChain['kind']; bones: readonly MixamoJointName[] }[] = [
  { kind: 'arm', bones: ['LeftArm', 'LeftForeArm', 'LeftHand'] },
  { kind: 'arm', bones: ['RightArm', 'RightForeArm', 'RightHand'] },
  { kind: 'leg', bones: ['LeftUpLeg', 'LeftLeg', 'LeftFoot', 'LeftToeBase'] },
  { kind: 'leg', bones: ['RightUpLeg', 'RightLeg', 'RightFoot', 'RightToeBase'] },
];

/**
 * templateLimbs: the limbs of a template skeleton given by its joint heads (Float32Array #23*3, MIXAMO_JOINTS order),
 * weights indexing MIXAMO_JOINTS → LimbChain[] (each bone from its head to the next joint's head; the hand and the toe
 * END_BONE_LENGTH of the bone before them long).
 */
export function templateLimbs(joints: Float32Array): LimbChain[] {
  return LIMB_BONES.map(({ kind, bones }) => {
    const slots = bones.map((b) => MIXAMO_JOINTS.indexOf(b));
    const heads = slots.map((j): Vec3 => [joints[3 * j], joints[3 * j + 1], joints[3 * j + 2]]);
    const segments = heads.map((head, i) => ({
      head,
      tail: i + 1 < heads.length ? heads[i + 1] : head.map((x, c) => x + END_BONE_LENGTH * (x - heads[i - 1][c])) as Vec3,
    }));
    return { kind, bones: slots, segments };
  });
}

/**
 * skeletonLimbs: the limbs of a skeleton whose bones have template names: bones (head and tail, one space),
 * templateName(b) → the bone's template name or null → LimbChain[] (weights indexing the bones; a limb without any
 * of its bones is left out; each bone from head to tail).
 */
export function skeletonLimbs(bones: readonly { head: Vec3; tail: Vec3 }[], templateName: (b: number) => string | null): LimbChain[] {
  const out: LimbChain[] = [];
  for (const { kind, bones: names } of LIMB_BONES) {
    const mine = names.map((n) => bones.findIndex((_, b) => templateName(b) === n)).filter((b) => b >= 0);
    if (mine.length === 0) continue;
    out.push({ kind, bones: mine, segments: mine.map((b) => ({ head: bones[b].head, tail: bones[b].tail })) });
  }
  return out;
}

/** Whether two limbs may not share a vertex: an arm with any other limb. */
function conflicting(limbs: LimbChain[], a: number, b: number): boolean {
  return a !== b && (limbs[a].kind === 'arm' || limbs[b].kind === 'arm');
}

/**
 * separateLimbs: where a vertex holds weight on two limbs that may not share it (an arm and a leg, the two arms), it
 * keeps the limb whose bones pass nearest to it and drops the other's weight; the row is scaled back to sum to 1.
 * positions: Float32Array #V*3, the limbs' space; weights: top-k bone indices #V*k + values #V*k, rows summing to 1,
 * modified in place; k: influences; limbs: templateLimbs or skeletonLimbs → the number of vertices changed.
 */
export function separateLimbs(positions: Float32Array, weights: TopK, k: number, limbs: LimbChain[]): number {
  // limb of each bone index, −1 for the torso's bones (indices past the limbs' are the torso's too)
  const limbOfBone = new Int8Array(Math.max(-1, ...limbs.flatMap((limb) => limb.bones)) + 1).fill(-1);
  limbs.forEach((limb, l) => limb.bones.forEach((b) => { limbOfBone[b] = l; }));
  const limbOf = (bone: number): number => (bone < limbOfBone.length ? limbOfBone[bone] : -1);
  const count = positions.length / 3;
  let changed = 0;
  for (let v = 0; v < count; v++) {
    let present = 0;
    for (let q = 0; q < k; q++) {
      const l = weights.weights[v * k + q] > 0 ? limbOf(weights.indices[v * k + q]) : -1;
      if (l >= 0) present |= 1 << l;
    }
    if (!hasConflict(limbs, present)) continue;
    let nearest = -1, nearestD = Infinity;
    limbs.forEach((limb, l) => {
      if ((present & (1 << l)) === 0) return;
      let d = Infinity;
      for (const { head, tail } of limb.segments) d = Math.min(d, pointSegmentDistanceSquared(positions, v, head, tail));
      if (d < nearestD) [nearest, nearestD] = [l, d];
    });
    let kept = 0;
    for (let q = 0; q < k; q++) {
      const s = v * k + q;
      if (weights.weights[s] <= 0) continue;
      const l = limbOf(weights.indices[s]);
      if (l >= 0 && conflicting(limbs, l, nearest)) weights.weights[s] = 0;
      else kept += weights.weights[s];
    }
    // the nearest limb's own weight is always kept, so kept > 0
    for (let q = 0; q < k; q++) weights.weights[v * k + q] /= kept;
    changed++;
  }
  return changed;
}

/** Whether a set of limbs (bits over limbs) holds two that may not share a vertex. */
function hasConflict(limbs: LimbChain[], present: number): boolean {
  for (let a = 0; a < limbs.length; a++) {
    if ((present & (1 << a)) === 0) continue;
    for (let b = a + 1; b < limbs.length; b++) if ((present & (1 << b)) !== 0 && conflicting(limbs, a, b)) return true;
  }
  return false;
}
