/**
 * A character's auto-rig as Apply Latent Pose's decoder sees it (issue 6, v2): the 23 joints of the Mixamo template in
 * template order and in the canonical frame, and the skinning weights of all parts merged into one mesh, their joint
 * indices turned into template slots.
 */
import type { TopKWeights } from '../deform/linearBlendSkinning.js';
import { AutoRigError } from '../errors.js';
import { pointToCanonical, type CanonicalFrame } from '../mesh/canonicalFrame.js';
import { MIXAMO_JOINTS, templateIndexOf } from '../skeleton/mixamoTemplate.js';
import type { RigResult, Skeleton } from '../types.js';

/** A rig in template form. */
export interface TemplateRig {
  /** heads: Float64Array #23*3, the template joints' rest heads (MIXAMO_JOINTS order, canonical frame) */
  heads: Float64Array;
  /** the merged mesh's weights, #V*k, indices are MIXAMO_JOINTS slots */
  weights: TopKWeights;
}

/**
 * checkTemplateJoints: a skeleton (names maybe 'mixamorig:'-prefixed) → nothing; throws BAD_SKELETON naming the first
 * MIXAMO_JOINTS joint it lacks. Apply Latent Pose's decoder turns exactly those joints, so a rig without one cannot
 * carry its pose, whether the auto-rig made it or the user's armature gave it.
 */
export function checkTemplateJoints(skeleton: Skeleton): void {
  const missing = missingTemplateJoints(skeleton);
  if (missing.length > 0) {
    throw new AutoRigError('BAD_SKELETON', `the rig has no joint ${missing.join(', ')}: Apply Latent Pose needs every joint of the Mixamo template`);
  }
}

/** missingTemplateJoints: a skeleton → the MIXAMO_JOINTS names none of its joints carries (prefixed or not), in template order. */
export function missingTemplateJoints(skeleton: Skeleton): string[] {
  const slots = new Set(skeleton.joints.map((joint) => templateIndexOf(joint.name)));
  return MIXAMO_JOINTS.filter((_, t) => !slots.has(t));
}

/**
 * templateRig: rig (a skeleton with every template joint, names maybe prefixed, and one PartWeights per part) →
 * TemplateRig. Heads go to the canonical frame cf (the mesh's own); the parts' weight rows are stacked in part order
 * (partOffsets of mergeParts, #parts+1) and padded with zero weights to the largest influence count. A weight on a joint
 * outside the template goes to its nearest template ancestor (none: the weight is dropped, and a row left without
 * weight stays at rest in skinning).
 * Throws BAD_SKELETON when a template joint is missing, BAD_ARRAY when the weights do not fit the parts.
 */
export function templateRig(rig: Pick<RigResult, 'skeleton' | 'objects'>, cf: CanonicalFrame, partOffsets: Uint32Array): TemplateRig {
  const joints = rig.skeleton.joints;
  const own = joints.map((joint) => templateIndexOf(joint.name));
  const heads = new Float64Array(MIXAMO_JOINTS.length * 3);
  checkTemplateJoints(rig.skeleton);
  MIXAMO_JOINTS.forEach((_, t) => heads.set(pointToCanonical(joints[own.indexOf(t)].head, cf), 3 * t));
  const slots = joints.map((_, j) => {
    for (let at = j, steps = 0; at >= 0 && steps <= joints.length; at = joints[at].parent, steps++) {
      if (own[at] >= 0) return own[at];
    }
    return -1;
  });

  const partCount = partOffsets.length - 1;
  if (rig.objects.length !== partCount) throw new AutoRigError('BAD_ARRAY', `the rig weights ${rig.objects.length} parts of ${partCount}`);
  const k = Math.max(1, ...rig.objects.map((part) => part.influences));
  const vertexCount = partOffsets[partCount];
  const indices = new Uint16Array(vertexCount * k);
  const weights = new Float32Array(vertexCount * k);
  // a loop, not forEach: its vertex loop in a closure made per call was compiled again by V8 on every apply
  for (let p = 0; p < partCount; p++) {
    const part = rig.objects[p];
    const rows = partOffsets[p + 1] - partOffsets[p];
    const pk = part.influences;
    if (part.indices.length !== rows * pk || part.weights.length !== rows * pk) {
      throw new AutoRigError('BAD_ARRAY', `the rig's weights of part ${p} (${part.name}) hold ${part.weights.length / pk} rows for ${rows} vertices`);
    }
    for (let v = 0; v < rows; v++) {
      const row = (partOffsets[p] + v) * k;
      for (let s = 0; s < pk; s++) {
        const joint = part.indices[v * pk + s];
        const w = part.weights[v * pk + s];
        if (w === 0) continue;
        if (joint >= joints.length) throw new AutoRigError('BAD_INDEX', `part ${part.name}: vertex ${v} is weighted to joint ${joint} of ${joints.length}`);
        const slot = slots[joint];
        if (slot < 0) continue;
        indices[row + s] = slot;
        weights[row + s] = w;
      }
    }
  }
  return { heads, weights: { indices, weights, influences: k } };
}
