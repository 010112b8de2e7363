/**
 * The baselines Apply Latent Pose is measured against (issue 6): (a) no motion; (b) auto-rig the mesh, turn its
 * joints by the pose's rotations, linear blend skinning with its own weights; (c) the nearest training identity's
 * anchor offsets carried over by closest point. (a) is the rest mesh itself and needs no function.
 */
import type { PoseVariant, PoseSample } from '../../data/poses/poseSample.js';
import { linearBlendSkinning, poseTransforms } from '../../deform/linearBlendSkinning.js';
import { AutoRigError } from '../../errors.js';
import { nearestNeighbours } from '../../geometry/nearestNeighbours.js';
import { poseRotations, type PoseFrame, type PoseName } from '../../pose/poseVocabulary.js';
import { MIXAMO_JOINTS, templateIndexOf } from '../../skeleton/mixamoTemplate.js';
import type { MeshPart, PartWeights, Skeleton } from '../../types.js';

/** A rig as rigCharacterAsync answers it: a skeleton (23 Mixamo joints, names maybe prefixed) and per-part weights. */
export interface AutoRig {
  skeleton: Skeleton;
  objects: PartWeights[];
}

/**
 * rigPosedParts: baseline (b). The pose's rotations are read from the rig's own skeleton (poseRotations on its template
 * joints, in the given up and forward), each rig joint takes its template joint's rotation (others stay), and every
 * part is posed by linear blend skinning with the rig's weights.
 * parts: MeshPart[] (the character's space), rig: AutoRig, pose, frame: the character's up and forward, strength
 * → per part Float32Array #V_p*3 (the character's space).
 * Throws BAD_SKELETON when the rig lacks a template joint, BAD_ARRAY when its weights do not fit the parts.
 */
export function rigPosedParts(parts: MeshPart[], rig: AutoRig, pose: PoseName, frame: PoseFrame, strength = 1): Float32Array[] {
  const joints = rig.skeleton.joints;
  const slots = joints.map((j) => templateIndexOf(j.name));
  const templateHeads = new Float64Array(MIXAMO_JOINTS.length * 3);
  MIXAMO_JOINTS.forEach((name, t) => {
    const j = slots.indexOf(t);
    if (j < 0) throw new AutoRigError('BAD_SKELETON', `the rig has no joint ${name}`);
    templateHeads.set(joints[j].head, 3 * t);
  });
  const templateRotations = poseRotations(pose, templateHeads, frame, strength);
  const heads = new Float64Array(joints.length * 3);
  const rotations = new Float64Array(joints.length * 9);
  joints.forEach((joint, j) => {
    heads.set(joint.head, 3 * j);
    if (slots[j] >= 0) rotations.set(templateRotations.subarray(9 * slots[j], 9 * slots[j] + 9), 9 * j);
    else rotations.set([1, 0, 0, 0, 1, 0, 0, 0, 1], 9 * j);
  });
  const transforms = poseTransforms(heads, Int32Array.from(joints, (j) => j.parent), rotations);
  if (rig.objects.length !== parts.length) throw new AutoRigError('BAD_ARRAY', `the rig weights ${rig.objects.length} parts of ${parts.length}`);
  return parts.map((part, p) => {
    const w = rig.objects[p];
    return linearBlendSkinning(part.positions, w.indices, w.weights, w.influences, transforms);
  });
}

/**
 * sampleOffsets: a training identity's anchor motion in one pose and variant: state anchors − neutral anchors, in its
 * neutral's canonical frame. sample: PoseSample, pose, variant → Float32Array #A*3.
 * Throws BAD_REQUEST when the sample lacks the pose.
 */
export function sampleOffsets(sample: PoseSample, pose: PoseName, variant: PoseVariant): Float32Array {
  const p = sample.header.poses.indexOf(pose);
  const v = sample.header.variants.indexOf(variant);
  if (p < 0 || v < 0) throw new AutoRigError('BAD_REQUEST', `${sample.header.identity} has no ${pose} (${variant})`);
  const A = sample.header.anchorCount;
  const state = (p * sample.header.variants.length + v) * A * 3;
  const out = new Float32Array(A * 3);
  for (let i = 0; i < A * 3; i++) out[i] = sample.stateAnchors[state + i] - sample.anchorPositions[i];
  return out;
}

/**
 * closestAnchorOffsets: baseline (c)'s carrying: every vertex takes the offset of the closest source anchor, both in
 * canonical frames (so identities of different sizes and facings line up).
 * positions: Float32Array #V*3 (target, canonical), anchors: Float32Array #A*3 (source, canonical), offsets: #A*3
 * → Float32Array #V*3 (each vertex's displacement; zero when there are no anchors).
 */
export function closestAnchorOffsets(positions: Float32Array, anchors: Float32Array, offsets: Float32Array): Float32Array {
  if (anchors.length !== offsets.length) throw new AutoRigError('BAD_ARRAY', `${anchors.length / 3} anchors with ${offsets.length / 3} offsets`);
  const out = new Float32Array(positions.length);
  if (anchors.length === 0) return out;
  const { indices } = nearestNeighbours(anchors, positions, 1);
  for (let v = 0; v < indices.length; v++) {
    const a = indices[v];
    out[3 * v] = offsets[3 * a];
    out[3 * v + 1] = offsets[3 * a + 1];
    out[3 * v + 2] = offsets[3 * a + 2];
  }
  return out;
}

/**
 * chamferDistance: the symmetric mean closest-point distance between two point sets (how baseline (c) picks its
 * training identity when no encoder is installed). a: #P*3, b: #Q*3 → number (NaN when either is empty).
 */
export function chamferDistance(a: Float32Array, b: Float32Array): number {
  if (a.length === 0 || b.length === 0) return Number.NaN;
  const one = (from: Float32Array, to: Float32Array) => {
    const { distances } = nearestNeighbours(to, from, 1);
    let s = 0;
    for (const d of distances) s += d;
    return s / distances.length;
  };
  return (one(a, b) + one(b, a)) / 2;
}
