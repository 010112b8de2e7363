import { AutoRigError } from '../errors.js';

/**
 * Posing a skinned mesh: joint transforms from per-joint rotations, then linear blend skinning.
 * Transforms are row-major 3x4 affine matrices [r00 r01 r02 t0; r10 r11 r12 t1; r20 r21 r22 t2], 12 numbers per joint.
 */

/** A skin weight row whose weights sum below this has no weight at all: LBS leaves it in place. */
export const UNWEIGHTED_SUM = 1e-6;

/** A skeleton in its rest pose, as posing needs it. */
export interface RestSkeleton {
  /** heads: Float64Array, #J*3, each joint's rest position (the point it rotates about) */
  heads: Float64Array;
  /** parents: Int32Array, #J, parent joint index, -1 for a root; parents precede children */
  parents: Int32Array;
}

/** Skinning weights as top-k rows: indices #V*k into the skeleton's joints + values #V*k (PartWeights fits). */
export interface TopKWeights {
  indices: Uint16Array;
  weights: Float32Array;
  influences: number;
}

/**
 * RestSkeleton from joint positions and parent indices (Skeleton.joints' head/parent, or an artist rig's
 * position/parent). Throws BAD_SKELETON when a parent does not precede its child.
 * heads: Vec3-like #J, parents: #J → RestSkeleton
 */
export function restSkeleton(heads: ArrayLike<number>[], parents: ArrayLike<number>): RestSkeleton {
  if (heads.length !== parents.length) throw new AutoRigError('BAD_SKELETON', `${heads.length} heads for ${parents.length} parents`);
  const h = new Float64Array(heads.length * 3);
  const p = new Int32Array(parents.length);
  for (let j = 0; j < heads.length; j++) {
    h[j * 3] = heads[j][0];
    h[j * 3 + 1] = heads[j][1];
    h[j * 3 + 2] = heads[j][2];
    p[j] = parents[j];
  }
  checkParentsFirst(p);
  return { heads: h, parents: p };
}

function checkParentsFirst(parents: Int32Array): void {
  for (let j = 0; j < parents.length; j++) {
    const p = parents[j];
    if (p >= j || p < -1) throw new AutoRigError('BAD_SKELETON', `joint ${j} has parent ${p}: parents must come before their children`);
  }
}

/**
 * World transform of every joint for a pose. Each joint turns by its rotation about its own rest head, and carries
 * its children with it: G_j = G_parent ∘ (translate(head_j) · R_j · translate(−head_j)), G_root-parent = identity.
 * Rotations are in world axes relative to the rest pose, so the same matrix means the same turn on any skeleton,
 * whatever its bones' rest orientations (the eval gives two different skeletons the same pose this way).
 * heads: Float64Array #J*3, parents: Int32Array #J (-1 root, parents first),
 * rotations: Float64Array #J*9 (row-major 3x3 per joint) → Float64Array #J*12 (row-major 3x4 per joint)
 */
export function poseTransforms(heads: Float64Array, parents: Int32Array, rotations: Float64Array): Float64Array {
  const jointCount = parents.length;
  if (heads.length !== jointCount * 3 || rotations.length !== jointCount * 9) {
    throw new AutoRigError('BAD_ARRAY', `poseTransforms: ${jointCount} joints need ${jointCount * 3} head and ${jointCount * 9} rotation numbers, got ${heads.length} and ${rotations.length}`);
  }
  checkParentsFirst(parents);
  const out = new Float64Array(jointCount * 12);
  for (let j = 0; j < jointCount; j++) {
    const r = j * 9;
    const hx = heads[j * 3], hy = heads[j * 3 + 1], hz = heads[j * 3 + 2];
    // Local transform: linear part R, translation head − R·head.
    const l = [
      rotations[r], rotations[r + 1], rotations[r + 2], 0,
      rotations[r + 3], rotations[r + 4], rotations[r + 5], 0,
      rotations[r + 6], rotations[r + 7], rotations[r + 8], 0,
    ];
    for (let row = 0; row < 3; row++) {
      l[row * 4 + 3] = [hx, hy, hz][row] - (l[row * 4] * hx + l[row * 4 + 1] * hy + l[row * 4 + 2] * hz);
    }
    const o = j * 12;
    const p = parents[j];
    if (p < 0) {
      for (let i = 0; i < 12; i++) out[o + i] = l[i];
      continue;
    }
    const g = p * 12;
    for (let row = 0; row < 3; row++) {
      const a0 = out[g + row * 4], a1 = out[g + row * 4 + 1], a2 = out[g + row * 4 + 2], a3 = out[g + row * 4 + 3];
      for (let col = 0; col < 4; col++) {
        out[o + row * 4 + col] = a0 * l[col] + a1 * l[4 + col] + a2 * l[8 + col] + (col === 3 ? a3 : 0);
      }
    }
  }
  return out;
}

/**
 * checkSkinningArrays: the shape check every skinning function makes before it reads a row. Throws BAD_ARRAY (naming
 * `caller`) unless positions hold whole vertices and indices, weights and out fit them.
 * positions: #V*3, indices: #V*k, weights: #V*k, influences: k, out: #V*3 → V
 */
export function checkSkinningArrays(
  caller: string, positions: Float32Array, indices: Uint16Array, weights: Float32Array, influences: number, out: Float32Array,
): number {
  const vertexCount = positions.length / 3;
  const k = influences;
  if (!Number.isInteger(vertexCount) || indices.length !== vertexCount * k || weights.length !== vertexCount * k || out.length !== positions.length) {
    throw new AutoRigError('BAD_ARRAY', `${caller}: ${vertexCount} vertices × ${k} influences do not match indices (${indices.length}), weights (${weights.length}) or output (${out.length})`);
  }
  return vertexCount;
}

/**
 * Linear blend skinning: each vertex goes to Σ_b w_b · G_b(p). A row whose weights sum to s ≥ UNWEIGHTED_SUM is
 * divided by s first (so rows that do not quite sum to 1 still keep the mesh's size); a row below it has no weight
 * and stays where it is, which is how the eval counts a method's unweighted vertices (unmoved). Slots with weight 0
 * are skipped whatever their index (padding). Throws BAD_INDEX on a weighted index outside the transforms.
 * positions: Float32Array #V*3, indices: Uint16Array #V*k, weights: Float32Array #V*k, influences: k,
 * transforms: Float64Array #J*12 (poseTransforms), out: optional Float32Array #V*3 to write into (may not alias
 * positions) → the posed positions, Float32Array #V*3 (out when given)
 */
export function linearBlendSkinning(
  positions: Float32Array, indices: Uint16Array, weights: Float32Array, influences: number, transforms: Float64Array,
  out: Float32Array = new Float32Array(positions.length),
): Float32Array {
  const vertexCount = checkSkinningArrays('linearBlendSkinning', positions, indices, weights, influences, out);
  const k = influences;
  const jointCount = transforms.length / 12;
  for (let v = 0; v < vertexCount; v++) {
    const x = positions[v * 3], y = positions[v * 3 + 1], z = positions[v * 3 + 2];
    let sum = 0;
    for (let i = v * k; i < v * k + k; i++) sum += weights[i];
    if (!(sum >= UNWEIGHTED_SUM)) {
      out[v * 3] = x;
      out[v * 3 + 1] = y;
      out[v * 3 + 2] = z;
      continue;
    }
    let px = 0, py = 0, pz = 0;
    for (let i = v * k; i < v * k + k; i++) {
      const w = weights[i];
      if (w === 0) continue;
      const b = indices[i];
      if (b >= jointCount) throw new AutoRigError('BAD_INDEX', `vertex ${v} is weighted to joint ${b} of ${jointCount}`);
      const t = b * 12;
      px += w * (transforms[t] * x + transforms[t + 1] * y + transforms[t + 2] * z + transforms[t + 3]);
      py += w * (transforms[t + 4] * x + transforms[t + 5] * y + transforms[t + 6] * z + transforms[t + 7]);
      pz += w * (transforms[t + 8] * x + transforms[t + 9] * y + transforms[t + 10] * z + transforms[t + 11]);
    }
    out[v * 3] = px / sum;
    out[v * 3 + 1] = py / sum;
    out[v * 3 + 2] = pz / sum;
  }
  return out;
}

/**
 * Where each joint's head goes under its transform (for drawing a posed skeleton).
 * heads: Float64Array #J*3, transforms: Float64Array #J*12 → Float64Array #J*3
 */
export function posedHeads(heads: Float64Array, transforms: Float64Array): Float64Array {
  const out = new Float64Array(heads.length);
  for (let j = 0; j * 3 < heads.length; j++) {
    const t = j * 12;
    const x = heads[j * 3], y = heads[j * 3 + 1], z = heads[j * 3 + 2];
    out[j * 3] = transforms[t] * x + transforms[t + 1] * y + transforms[t + 2] * z + transforms[t + 3];
    out[j * 3 + 1] = transforms[t + 4] * x + transforms[t + 5] * y + transforms[t + 6] * z + transforms[t + 7];
    out[j * 3 + 2] = transforms[t + 8] * x + transforms[t + 9] * y + transforms[t + 10] * z + transforms[t + 11];
  }
  return out;
}
