/**
 * A staff held in a hand moves rigidly with the hand. The geodesic weights know nothing of that: along a staff that
 * stands on the floor they pass from the hand at the grip to the forearm and, at its foot, to the leg it stands beside
 * (procedural test identity 9 100 009 holds one in its left hand, fused into its mesh: bending the left elbow with the
 * true rotations, our rig erred 1.16 % of height, against 0.02 % for the right elbow). The skeleton stage finds such
 * standing rods in the front view (skeleton/propRods), and removes them before it reads the body; here the vertices
 * that lie in a rod's pixels (and in the small pieces its removal cuts off the body, a staff's knob) go wholly to the
 * hand nearest to that rod, when one is within HOLDING_REACH of it.
 */
import type { FrontView } from '../skeleton/frontView.js';
import { pieces8, withoutPropRods } from '../skeleton/propRods.js';
import { pointSegmentDistanceSquared } from './shellBones.js';
import type { SkinBone } from './voxelBoneWeights.js';

/** A rod is held by a hand whose bone comes this close to one of its vertices (canonical units, height ~1). */
export const HOLDING_REACH = 0.05;

/**
 * propRodPieces: canonical positions #V*3, their front view (renderFrontView at FRONT_VIEW_RESOLUTION) and that view
 * without its standing rods (withoutPropRods: the skeleton stage's SkeletonEstimate.silhouette, computed here when not
 * given) → Int32Array #V, for each vertex the rod piece it lies in (0, 1, …: the 8-connected pieces of the pixels the
 * rods' removal took), −1 for none.
 */
export function propRodPieces(canonical: Float32Array, view: FrontView, body: FrontView = withoutPropRods(view)): Int32Array {
  const res = view.res;
  const nv = canonical.length / 3;
  const pieceOf = new Int32Array(nv).fill(-1);
  if (body === view) return pieceOf;
  const removedMask = view.mask.map((covered, p) => (covered && !body.mask[p] ? 1 : 0));
  const removed = new Int32Array(res * res).fill(-1);
  pieces8(removedMask, res).forEach((piece, n) => { for (const p of piece) removed[p] = n; });
  const pixel = (c: number) => Math.min(res - 1, Math.max(0, Math.floor((c + 0.5) * res)));
  for (let v = 0; v < nv; v++) pieceOf[v] = removed[pixel(canonical[3 * v + 1]) * res + pixel(canonical[3 * v])];
  return pieceOf;
}

/**
 * holdPropsInHands: in place, every vertex of a rod piece (propRodPieces) that a hand holds goes wholly to that hand.
 * positions: canonical Float32Array #V*3, pieceOf #V, bones, hands: the hand bones' indices; top-k indices Uint16Array
 * #V*k + values Float32Array #V*k → the number of vertices changed.
 */
export function holdPropsInHands(
  positions: Float32Array, pieceOf: Int32Array, bones: SkinBone[], hands: number[], k: number, indices: Uint16Array, weights: Float32Array,
): number {
  let pieces = 0;
  for (let v = 0; v < pieceOf.length; v++) if (pieceOf[v] >= pieces) pieces = pieceOf[v] + 1;
  if (pieces === 0 || hands.length === 0) return 0;
  // the hand that comes nearest to each piece
  const nearest = new Float64Array(pieces * hands.length).fill(Infinity);
  for (let v = 0; v < pieceOf.length; v++) {
    const p = pieceOf[v];
    if (p < 0) continue;
    hands.forEach((hand, h) => {
      const d = Math.sqrt(pointSegmentDistanceSquared(positions, v, bones[hand].head, bones[hand].tail));
      if (d < nearest[p * hands.length + h]) nearest[p * hands.length + h] = d;
    });
  }
  const holder = new Int32Array(pieces).fill(-1);
  for (let p = 0; p < pieces; p++) {
    let best = HOLDING_REACH;
    hands.forEach((hand, h) => { if (nearest[p * hands.length + h] <= best) { best = nearest[p * hands.length + h]; holder[p] = hand; } });
  }
  let changed = 0;
  for (let v = 0; v < pieceOf.length; v++) {
    const hand = pieceOf[v] >= 0 ? holder[pieceOf[v]] : -1;
    if (hand < 0) continue;
    for (let q = 0; q < k; q++) { indices[v * k + q] = q === 0 ? hand : 0; weights[v * k + q] = q === 0 ? 1 : 0; }
    changed++;
  }
  return changed;
}
