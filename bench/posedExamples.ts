/**
 * The posed examples the bench fits Pose Correctives to (issue 7's per-character fitting): the character itself at
 * some of its own key poses, skinned with a sharper version of its static weights, so the fit has a real difference
 * to close (with the static weights themselves the examples would be what the base already makes).
 */
import type { CorrectiveExample } from '../sidecar/correctives/bakeCorrectives.js';
import { keyPoseRotations, keyPoses } from '../sidecar/correctives/keyPoses.js';
import { linearBlendSkinning, poseTransforms, restSkeleton } from '../sidecar/deform/linearBlendSkinning.js';
import { mergeParts } from '../sidecar/mesh/mergeParts.js';
import type { MeshPart, PartWeights, Skeleton } from '../sidecar/types.js';

/**
 * Each vertex's row of weights raised to `power` and renormalised to sum 1: the same joints, blended more sharply.
 * A row that sums to 0 stays 0 (unweighted). weights: PartWeights (#V*k) → Float32Array #V*k
 */
export function sharpenedWeights(weights: PartWeights, power: number): Float32Array {
  const k = weights.influences;
  const out = new Float32Array(weights.weights.length);
  for (let row = 0; row < out.length; row += k) {
    let sum = 0;
    for (let i = row; i < row + k; i++) sum += (out[i] = weights.weights[i] ** power);
    for (let i = row; i < row + k; i++) out[i] = sum > 0 ? out[i] / sum : 0;
  }
  return out;
}

/**
 * The first `count` key poses of the skeleton (keyPoses order: left elbow, right elbow, left knee, right knee…), each
 * as a posed example: the rest mesh posed at the key's rotations (keyPoseRotations, the bake's own) by linear blend
 * skinning with the weights sharpened to `power`, all parts as one object over the character's triangles (mergeParts).
 * parts: MeshPart[] (rest pose), skeleton: Auto Rig's Mixamo skeleton, weights: PartWeights[] (one per part, in order),
 * count: how many key poses, power: the sharpening → CorrectiveExample[] (named after their keys)
 */
export function keyPoseExamples(parts: MeshPart[], skeleton: Skeleton, weights: PartWeights[], count: number, power: number): CorrectiveExample[] {
  const rest = restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
  const merged = mergeParts(parts);
  const sharp = weights.map((w) => sharpenedWeights(w, power));
  return keyPoses(skeleton).slice(0, count).map((key) => {
    const rotations = keyPoseRotations(key, skeleton.joints.length);
    const transforms = poseTransforms(rest.heads, rest.parents, rotations);
    const positions = new Float32Array(merged.positions.length);
    parts.forEach((part, p) => {
      const w = weights[p];
      const at = merged.partOffsets[p] * 3;
      linearBlendSkinning(part.positions, w.indices, sharp[p], w.influences, transforms, positions.subarray(at, at + part.positions.length));
    });
    return { name: key.name, rotations, objects: [{ name: `${key.name} example`, positions, triangles: merged.triangles }] };
  });
}
