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
  // each bone's name is asked once (not once per limb bone searched for)
  const names: (string | null)[] = [];
  for (let b = 0; b < bones.length; b++) names.push(templateName(b));
  const out: LimbChain[] = [];
  for (const { kind, bones: wanted } of LIMB_BONES) {
    const mine: number[] = [];
    for (const n of wanted) {
      const b = names.indexOf(n);
      if (b >= 0) mine.push(b);
    }
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
  const limbOfBone = limbOfBoneTable(limbs);
  const count = positions.length / 3;
  let changed = 0;
  for (let v = 0; v < count; v++) {
    let present = 0;
    for (let q = 0; q < k; q++) {
      const l = weights.weights[v * k + q] > 0 ? limbOf(limbOfBone, weights.indices[v * k + q]) : -1;
      if (l >= 0) present |= 1 << l;
    }
    if (!hasConflict(limbs, present)) continue;
    const nearest = nearestLimb(positions, v, limbs, present);
    let kept = 0;
    for (let q = 0; q < k; q++) {
      const s = v * k + q;
      if (weights.weights[s] <= 0) continue;
      const l = limbOf(limbOfBone, weights.indices[s]);
      if (l >= 0 && conflicting(limbs, l, nearest)) weights.weights[s] = 0;
      else kept += weights.weights[s];
    }
    // the nearest limb's own weight is always kept, so kept > 0
    for (let q = 0; q < k; q++) weights.weights[v * k + q] /= kept;
    changed++;
  }
  return changed;
}

// limbOf and nearestLimb are module functions, not closures made per call (limbOf per call, a limbs.forEach callback
// per vertex in conflict): with them the vertex loop allocated ~100 bytes per vertex, 4.8 MB per apply on the 50k
// mesh (sampling heap profile), none without.

/**
 * The limb of each bone index (Int8Array #(largest limb bone + 1)): its index in limbs, −1 for the torso's bones
 * (indices past the limbs' are the torso's too, limbOf).
 */
function limbOfBoneTable(limbs: LimbChain[]): Int8Array {
  let largest = -1;
  for (const limb of limbs) for (const b of limb.bones) largest = Math.max(largest, b);
  const limbOfBone = new Int8Array(largest + 1).fill(-1);
  for (let l = 0; l < limbs.length; l++) for (const b of limbs[l].bones) limbOfBone[b] = l;
  return limbOfBone;
}

/** The limb of bone index `bone` (limbOfBoneTable's table), −1 for a torso bone. */
function limbOf(limbOfBone: Int8Array, bone: number): number {
  return bone < limbOfBone.length ? limbOfBone[bone] : -1;
}

/**
 * Of the limbs present at vertex v (bits over limbs), the one whose bones pass nearest to it (squared distance to its
 * nearest segment; the first limb on a tie) → its index in limbs. positions: Float32Array #V*3.
 */
function nearestLimb(positions: Float32Array, v: number, limbs: LimbChain[], present: number): number {
  let nearest = -1, nearestD = Infinity;
  for (let l = 0; l < limbs.length; l++) {
    if ((present & (1 << l)) === 0) continue;
    const segments = limbs[l].segments;
    let d = Infinity;
    for (let i = 0; i < segments.length; i++) d = Math.min(d, pointSegmentDistanceSquared(positions, v, segments[i].head, segments[i].tail));
    if (d < nearestD) { nearest = l; nearestD = d; }
  }
  return nearest;
}

/** Whether a set of limbs (bits over limbs) holds two that may not share a vertex. */
function hasConflict(limbs: LimbChain[], present: number): boolean {
  for (let a = 0; a < limbs.length; a++) {
    if ((present & (1 << a)) === 0) continue;
    for (let b = a + 1; b < limbs.length; b++) if ((present & (1 << b)) !== 0 && conflicting(limbs, a, b)) return true;
  }
  return false;
}
