/**
 * A staff held in a hand moves rigidly with the hand. The geodesic weights know nothing of that: along a staff that
 * stands on the floor they pass from the hand at the grip to the forearm and, at its foot, to the leg it stands beside
 * (procedural test identity 9 100 009 holds one in its left hand, fused into its mesh: bending the left elbow with the
 * true rotations, our rig erred 1.16 % of height, against 0.02 % for the right elbow). The skeleton stage finds such
 * standing rods in the front view (skeleton/propRods), and removes them before it reads the body; here the vertices
 * that lie in a rod's pixels (and in the small pieces its removal cuts off the body, a staff's knob) go wholly to the
 * hand nearest to that rod, when one is within HOLDING_REACH of it. A rod is one piece however the body cuts it: the
 * foot below a robe and the top above a hand move with the hand that holds the staff between them, and so does its
 * middle where the robe hides it, found along the rod's axis (heldRodsAlongTheirAxes).
 */
import type { FrontView } from '../skeleton/frontView.js';
import { withoutPropRods } from '../skeleton/propRods.js';
import { bindWholly, pointSegmentDistanceSquared } from './shellBones.js';
import type { SkinBone } from './voxelBoneWeights.js';

/** A rod is held by a hand whose bone comes this close to one of its vertices (canonical units, height ~1). */
export const HOLDING_REACH = 0.05;

/**
 * propRodPieces: canonical positions #V*3, their front view (renderFrontView at FRONT_VIEW_RESOLUTION) and that view
 * without its standing rods (withoutPropRods: the skeleton stage's SkeletonEstimate.silhouette, computed here when not
 * given) → Int32Array #V, for each vertex the rod it lies in (0, 1, …: the body view's rodOf, so that a staff a robe or
 * a hand cuts into pieces is one), −1 for none.
 */
export function propRodPieces(canonical: Float32Array, view: FrontView, body: FrontView = withoutPropRods(view)): Int32Array {
  const res = view.res;
  const nv = canonical.length / 3;
  const pieceOf = new Int32Array(nv).fill(-1);
  if (body === view) return pieceOf;
  // withoutPropRods marks which rod each pixel it took belonged to whenever it took any
  const rodOf = body.rodOf;
  if (!rodOf) return pieceOf;
  const removed = new Int32Array(res * res).fill(-1);
  for (let p = 0; p < removed.length; p++) if (view.mask[p] && !body.mask[p]) removed[p] = rodOf[p] - 1;
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
  // the middle of a held staff, where a robe hides it from the front view, found along the staff's axis
  const along = heldRodsAlongTheirAxes(positions, pieceOf, holder);
  let changed = 0;
  for (let v = 0; v < pieceOf.length; v++) {
    const hand = pieceOf[v] >= 0 ? holder[pieceOf[v]] : along[v] >= 0 ? holder[along[v]] : -1;
    if (hand < 0) continue;
    bindWholly(v, hand, k, indices, weights);
    changed++;
  }
  return changed;
}

/** A held rod is taken as straight when its extent along its axis is this many times its width across. */
const ROD_ELONGATION = 6;
/** The tube around a rod's axis that its hidden parts lie in: this many times its vertices' median distance to it. */
const ROD_TUBE_SCALE = 1.5;

/**
 * heldRodsAlongTheirAxes: the parts of each held rod that the front view cannot see. A robe hides all of procedural
 * test identity 9 100 009's staff but its top and its foot; bound by its pixels alone, its middle kept the robe's and
 * the legs' blend and bent with them. Each held rod that is straight (ROD_ELONGATION) gives an axis (the principal
 * direction of its vertices) and a radius (ROD_TUBE_SCALE times their median distance to the axis); the vertices in
 * that tube, between the rod's two ends along the axis, are the rod's.
 * positions: canonical Float32Array #V*3, pieceOf: Int32Array #V (propRodPieces), holder: Int32Array #rods (the
 * holding hand's bone, -1 for none) → Int32Array #V: for a vertex in no rod's pixels, the held rod whose tube it
 * lies in, -1 for none.
 */
export function heldRodsAlongTheirAxes(positions: Float32Array, pieceOf: Int32Array, holder: Int32Array): Int32Array {
  const count = pieceOf.length;
  const along = new Int32Array(count).fill(-1);
  for (let rod = 0; rod < holder.length; rod++) {
    if (holder[rod] < 0) continue;
    const members: number[] = [];
    for (let v = 0; v < count; v++) if (pieceOf[v] === rod) members.push(v);
    const axis = principalAxis(positions, members);
    if (axis === null) continue;
    const { centre, direction } = axis;
    const project = (v: number): { s: number; d: number } => {
      const x = positions[3 * v] - centre[0], y = positions[3 * v + 1] - centre[1], z = positions[3 * v + 2] - centre[2];
      const s = x * direction[0] + y * direction[1] + z * direction[2];
      return { s, d: Math.sqrt(Math.max(0, x * x + y * y + z * z - s * s)) };
    };
    const spans = members.map(project);
    const distances = spans.map((p) => p.d).sort((a, b) => a - b);
    const width = distances[distances.length >> 1];
    let sMin = Infinity, sMax = -Infinity;
    for (const { s } of spans) { sMin = Math.min(sMin, s); sMax = Math.max(sMax, s); }
    if (!(width > 0) || sMax - sMin < ROD_ELONGATION * 2 * width) continue;
    const tube = ROD_TUBE_SCALE * width;
    for (let v = 0; v < count; v++) {
      if (pieceOf[v] >= 0) continue;
      const { s, d } = project(v);
      if (d <= tube && s >= sMin && s <= sMax) along[v] = rod;
    }
  }
  return along;
}

/**
 * principalAxis: the centre and unit principal direction (power iteration on the covariance) of the vertices `members`
 * of positions (Float32Array #V*3); null for fewer than 8 vertices.
 */
function principalAxis(positions: Float32Array, members: number[]): { centre: [number, number, number]; direction: [number, number, number] } | null {
  if (members.length < 8) return null;
  const centre: [number, number, number] = [0, 0, 0];
  for (const v of members) for (let a = 0; a < 3; a++) centre[a] += positions[3 * v + a] / members.length;
  const c = new Float64Array(9);
  for (const v of members) {
    const d = [positions[3 * v] - centre[0], positions[3 * v + 1] - centre[1], positions[3 * v + 2] - centre[2]];
    for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) c[3 * a + b] += d[a] * d[b];
  }
  let direction: [number, number, number] = [0, 1, 0];
  for (let i = 0; i < 50; i++) {
    const next: [number, number, number] = [0, 0, 0];
    for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) next[a] += c[3 * a + b] * direction[b];
    const length = Math.hypot(...next);
    if (!(length > 0)) return null;
    direction = [next[0] / length, next[1] / length, next[2] / length];
  }
  return { centre, direction };
}
