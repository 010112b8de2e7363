/**
 * A user's skeleton as the learned skinning network's joints. The network knows one skeleton, our 23-joint Mixamo
 * template; mapping any other rig onto it is guesswork (sidecar/eval/templateMapping.ts does it for scoring only), so
 * learned skinning takes a skeleton only when it is that template.
 */
import { AutoRigError } from '../errors.js';
import type { CanonicalFrame } from '../mesh/canonicalFrame.js';
import { pointToCanonical } from '../mesh/canonicalFrame.js';
import { MIXAMO_JOINTS, MIXAMO_PREFIX } from '../skeleton/mixamoTemplate.js';
import type { Skeleton } from '../types.js';

const HEAD_TOP = MIXAMO_JOINTS.indexOf('HeadTop_End');
const HEAD = MIXAMO_JOINTS.indexOf('Head');

/**
 * templateJointSlots: for each MIXAMO_JOINTS joint, the index of the skeleton's joint of that name (with or without
 * the `mixamorig:` prefix). HeadTop_End may be missing (-1): it carries no weight, and artists' rigs often lack it.
 * Throws BAD_REQUEST, naming what differs, when the skeleton has other joints, a joint twice, or lacks one.
 * skeleton → Int32Array #23
 */
export function templateJointSlots(skeleton: Skeleton): Int32Array {
  const slots = new Int32Array(MIXAMO_JOINTS.length).fill(-1);
  const foreign: string[] = [];
  skeleton.joints.forEach((joint, i) => {
    const name = joint.name.startsWith(MIXAMO_PREFIX) ? joint.name.slice(MIXAMO_PREFIX.length) : joint.name;
    const t = (MIXAMO_JOINTS as readonly string[]).indexOf(name);
    if (t < 0) { foreign.push(joint.name); return; }
    if (slots[t] >= 0) throw notTemplate(`it has joint "${name}" twice`);
    slots[t] = i;
  });
  if (foreign.length) {
    throw notTemplate(`${foreign.length > 1 ? 'joints' : 'joint'} ${listed(foreign.map((n) => `"${n}"`))} ${foreign.length > 1 ? 'are' : 'is'} not in it`);
  }
  const missing = MIXAMO_JOINTS.filter((_, t) => slots[t] < 0 && t !== HEAD_TOP);
  if (missing.length) throw notTemplate(`it lacks ${listed(missing)}`);
  return slots;
}

/** Whether templateJointSlots takes the skeleton. */
export function isTemplateSkeleton(skeleton: Skeleton): boolean {
  try {
    templateJointSlots(skeleton);
    return true;
  } catch (err) {
    if (err instanceof AutoRigError) return false;
    throw err;
  }
}

/**
 * templateJointsInCanonical: the network's `joints` input from a template skeleton: each template joint's head in
 * the canonical frame; a missing HeadTop_End stands at the Head bone's tail (where the head ends).
 * skeleton, slots (templateJointSlots), cf → Float32Array #23*3
 */
export function templateJointsInCanonical(skeleton: Skeleton, slots: Int32Array, cf: CanonicalFrame): Float32Array {
  const out = new Float32Array(MIXAMO_JOINTS.length * 3);
  MIXAMO_JOINTS.forEach((_, t) => {
    const p = slots[t] >= 0 ? skeleton.joints[slots[t]].head : skeleton.joints[slots[HEAD]].tail;
    out.set(pointToCanonical(p, cf), 3 * t);
  });
  return out;
}

/** The first few of a list of names, and how many more. */
function listed(names: string[], shown = 5): string {
  return names.slice(0, shown).join(', ') + (names.length > shown ? ` and ${names.length - shown} more` : '');
}

function notTemplate(why: string): AutoRigError {
  const template = `the 23-joint Mixamo template skeleton (Hips … RightToeBase, names with or without "${MIXAMO_PREFIX}")`;
  return new AutoRigError('BAD_REQUEST', `learned skinning takes only ${template}, but ${why}: skin this skeleton with "geometric"`);
}
