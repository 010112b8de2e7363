/**
 * New proportions for a rig, as one transform per template bone: the bone's head goes to its new place, nothing
 * turns, and space scales by the bone's length factor along the bone and by its thickness factor across it. Linear
 * blend skinning with the artist's weights (averaged over a few rings of edges, smoothWeights.ts) then carries the mesh
 * (reproportionMesh.ts), so regions with mixed weights (elbows, hips, the neck) stretch smoothly between their bones'
 * transforms.
 *
 * Only the artist's own bones move vertices, so transforms and new joint places follow the artist's rig: a mapped
 * joint's new head is where its carrier's transform takes it (the carrier: its nearest mapped template ancestor; for
 * the legs of a rig without hips, the lowest trunk joint), so a joint always lands where the vertices around it go.
 * An artist bone that spans several template bones (clonk's one spine bone from the pelvis to the head) scales by the
 * length-weighted mean of their factors; the template joints completed inside it lie on it and keep their places along
 * it. A chain child lies on its parent's axis, so it moves by exactly the bone's length factor; a joint off the axis
 * (arms on the chest, legs on the pelvis) moves out or in with the thickness.
 */
import { MIXAMO_JOINTS, MIXAMO_PARENTS } from '../../skeleton/mixamoTemplate.js';
import type { Vec3 } from '../../types.js';
import { CHAIN_CHILD, type CompletedJoints } from './completeTemplateJoints.js';
import type { ProportionFactors } from './proportionFactors.js';

export interface ReproportionedSkeleton {
  /** heads: #23 new joint positions, MIXAMO_JOINTS order */
  heads: Vec3[];
  /** tails: #23 new bone ends (as CompletedJoints.tails) */
  tails: Vec3[];
  /**
   * transforms: Float64Array #23*12, row-major 3x4 affine per template joint (linearBlendSkinning's layout): what it
   * does to the vertices it weighs; an unmapped joint gets its carrier's (it weighs none)
   */
  transforms: Float64Array;
  /** lengthRatios: #23, new over old length of each bone as realised (HeadTop_End: 1) */
  lengthRatios: number[];
}

/** Below this share of the skeleton's size a bone has no direction: it scales by its thickness factor every way. */
const DEGENERATE_SHARE = 1e-6;
const index = (n: string) => (MIXAMO_JOINTS as readonly string[]).indexOf(n);
const HEAD_TOP = index('HeadTop_End');

/**
 * reproportionSkeleton: the completed joints (old heads, which are mapped, old bone ends) and per-bone factors →
 * ReproportionedSkeleton. With every factor 1 all transforms are the identity and the heads are unchanged.
 */
export function reproportionSkeleton(joints: CompletedJoints, factors: ProportionFactors): ReproportionedSkeleton {
  const J = MIXAMO_JOINTS.length;
  const { heads, tails, mapped } = joints;
  const root = [0, 1, 2, 3].find((t) => mapped[t]);
  if (root === undefined) throw new Error('reproportionSkeleton: the rig maps neither Hips nor a spine joint');
  const carrier = (t: number): number => {
    for (let p = MIXAMO_PARENTS[MIXAMO_JOINTS[t]]; p; p = MIXAMO_PARENTS[p]) if (mapped[index(p)]) return index(p);
    return root;
  };
  const size = skeletonSize(heads);

  // Each mapped joint's linear map: S = k·I + (f − k)·a·aᵀ, a along the bone it drives (to the next mapped joint of its chain).
  const linear: number[][] = MIXAMO_JOINTS.map(() => [1, 0, 0, 0, 1, 0, 0, 0, 1]);
  for (let t = 0; t < J; t++) {
    if (!mapped[t] || t === HEAD_TOP) continue;
    const span = spanOf(t, mapped);
    let weighted = 0, total = 0;
    for (const b of span) {
      const length = dist(heads[b], tails[b]);
      weighted += factors.length[b] * length;
      total += length;
    }
    const end = tails[span[span.length - 1]];
    const axis = sub(end, heads[t]);
    const axisLength = Math.hypot(...axis);
    const k = factors.thickness[t];
    if (!(axisLength > DEGENERATE_SHARE * size) || !(total > 0)) {
      linear[t] = [k, 0, 0, 0, k, 0, 0, 0, k];
      continue;
    }
    const f = weighted / total;
    const a = axis.map((x) => x / axisLength);
    linear[t] = [0, 1, 2].flatMap((r) => [0, 1, 2].map((c) => (r === c ? k : 0) + (f - k) * a[r] * a[c]));
  }

  // The root stays; every other joint goes where its carrier's transform takes it (carriers come first: an ancestor, or the root).
  const newHeads: Vec3[] = heads.map((h) => [...h] as Vec3);
  const carrierOf = MIXAMO_JOINTS.map((_, t) => (t === root ? root : carrier(t)));
  const apply = (t: number, p: Vec3): Vec3 => {
    const m = linear[t], d = sub(p, heads[t]);
    return [0, 1, 2].map((r) => newHeads[t][r] + m[3 * r] * d[0] + m[3 * r + 1] * d[1] + m[3 * r + 2] * d[2]) as Vec3;
  };
  for (let t = 0; t < J; t++) if (t !== root) newHeads[t] = apply(carrierOf[t], heads[t]);

  // x ↦ newHead + S·(x − head) as [S | newHead − S·head]; a joint that weighs nothing gets its carrier's.
  const transforms = new Float64Array(J * 12);
  for (let t = 0; t < J; t++) {
    const owner = mapped[t] && t !== HEAD_TOP ? t : carrierOf[t];
    const m = linear[owner], h = heads[owner];
    for (let r = 0; r < 3; r++) {
      const shift = newHeads[owner][r] - (m[3 * r] * h[0] + m[3 * r + 1] * h[1] + m[3 * r + 2] * h[2]);
      transforms.set([m[3 * r], m[3 * r + 1], m[3 * r + 2], shift], t * 12 + r * 4);
    }
  }

  const newTails: Vec3[] = MIXAMO_JOINTS.map((n, t) => {
    const child = CHAIN_CHILD[n];
    if (child) return [...newHeads[index(child)]] as Vec3;
    if (t === HEAD_TOP) return [...newHeads[t]] as Vec3;
    const owner = mapped[t] ? t : carrierOf[t];
    return apply(owner, tails[t]);
  });
  const lengthRatios = MIXAMO_JOINTS.map((_, t) => {
    const old = dist(heads[t], tails[t]);
    return t === HEAD_TOP || !(old > 0) ? 1 : dist(newHeads[t], newTails[t]) / old;
  });
  return { heads: newHeads, tails: newTails, transforms, lengthRatios };
}

/**
 * The template bones a mapped joint's artist bone covers: itself, then its chain's next joints up to (not including)
 * the next mapped one. HeadTop_End is no bone. t: a mapped template joint, mapped: #23 → template joint indices.
 */
export function spanOf(t: number, mapped: boolean[]): number[] {
  const span = [t];
  for (let c = CHAIN_CHILD[MIXAMO_JOINTS[t]]; c && !mapped[index(c)] && index(c) !== HEAD_TOP; c = CHAIN_CHILD[c]) span.push(index(c));
  return span;
}

function sub(a: Vec3, b: Vec3): Vec3 {
  return [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
}

function dist(a: Vec3, b: Vec3): number {
  return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}

/** The diagonal of the joints' bounding box (1 when they all coincide). */
function skeletonSize(heads: Vec3[]): number {
  const min = [Infinity, Infinity, Infinity], max = [-Infinity, -Infinity, -Infinity];
  for (const h of heads) for (let a = 0; a < 3; a++) { min[a] = Math.min(min[a], h[a]); max[a] = Math.max(max[a], h[a]); }
  const d = Math.hypot(max[0] - min[0], max[1] - min[1], max[2] - min[2]);
  return d > 0 ? d : 1;
}
