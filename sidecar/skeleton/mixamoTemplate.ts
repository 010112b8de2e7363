import { add, distance as dist, dot, normalize, scale, sub } from '../geometry/vec3.js';
import type { Joint, Skeleton, Vec3 } from '../types.js';
import { rollTowards } from './boneRoll.js';

/** The 22 deforming joints of the Mixamo skeleton plus HeadTop_End, parents before children. */
export const MIXAMO_JOINTS = [
  'Hips', 'Spine', 'Spine1', 'Spine2', 'Neck', 'Head', 'HeadTop_End',
  'LeftShoulder', 'LeftArm', 'LeftForeArm', 'LeftHand',
  'RightShoulder', 'RightArm', 'RightForeArm', 'RightHand',
  'LeftUpLeg', 'LeftLeg', 'LeftFoot', 'LeftToeBase',
  'RightUpLeg', 'RightLeg', 'RightFoot', 'RightToeBase',
] as const;
export type MixamoJointName = (typeof MIXAMO_JOINTS)[number];

export const MIXAMO_PARENTS: Record<MixamoJointName, MixamoJointName | null> = {
  Hips: null, Spine: 'Hips', Spine1: 'Spine', Spine2: 'Spine1', Neck: 'Spine2', Head: 'Neck', HeadTop_End: 'Head',
  LeftShoulder: 'Spine2', LeftArm: 'LeftShoulder', LeftForeArm: 'LeftArm', LeftHand: 'LeftForeArm',
  RightShoulder: 'Spine2', RightArm: 'RightShoulder', RightForeArm: 'RightArm', RightHand: 'RightForeArm',
  LeftUpLeg: 'Hips', LeftLeg: 'LeftUpLeg', LeftFoot: 'LeftLeg', LeftToeBase: 'LeftFoot',
  RightUpLeg: 'Hips', RightLeg: 'RightUpLeg', RightFoot: 'RightLeg', RightToeBase: 'RightFoot',
};

/** The child whose head is each bone's tail (the chain the bone drives). */
const TAIL_CHILD: Partial<Record<MixamoJointName, MixamoJointName>> = {
  Hips: 'Spine', Spine: 'Spine1', Spine1: 'Spine2', Spine2: 'Neck', Neck: 'Head', Head: 'HeadTop_End',
  LeftShoulder: 'LeftArm', LeftArm: 'LeftForeArm', LeftForeArm: 'LeftHand',
  RightShoulder: 'RightArm', RightArm: 'RightForeArm', RightForeArm: 'RightHand',
  LeftUpLeg: 'LeftLeg', LeftLeg: 'LeftFoot', LeftFoot: 'LeftToeBase',
  RightUpLeg: 'RightLeg', RightLeg: 'RightFoot', RightFoot: 'RightToeBase',
};

export const MIXAMO_PREFIX = 'mixamorig:';

/** The parent of each template joint as a MIXAMO_JOINTS index, #23 (−1 for Hips): the layout poseTransforms takes. */
export const MIXAMO_PARENT_INDICES: Int32Array = Int32Array.from(MIXAMO_JOINTS, (name) => {
  const parent = MIXAMO_PARENTS[name];
  return parent ? MIXAMO_JOINTS.indexOf(parent) : -1;
});

/** The tail child of each template joint (TAIL_CHILD) as a MIXAMO_JOINTS index, #23 (−1 for the leaves). */
export const MIXAMO_TAIL_CHILD_INDICES: Int32Array = Int32Array.from(MIXAMO_JOINTS, (name) => {
  const child = TAIL_CHILD[name];
  return child ? MIXAMO_JOINTS.indexOf(child) : -1;
});

/** The MIXAMO_JOINTS index of a joint name, with or without the 'mixamorig:' prefix; −1 for a joint not in the template. */
export function templateIndexOf(name: string): number {
  const bare = name.startsWith(MIXAMO_PREFIX) ? name.slice(MIXAMO_PREFIX.length) : name;
  return (MIXAMO_JOINTS as readonly string[]).indexOf(bare);
}

/**
 * Builds the Mixamo skeleton from joint positions: tails at the child joint (ends given explicitly for the hands,
 * toes and head top), rolls that turn each bone's Z axis to the character's forward (or up for bones that point
 * forward, the feet and toes), so that rest-pose rotations read the same on every character.
 * heads: joint positions by name (input space), ends: tail points of the leaf bones LeftHand/RightHand/LeftToeBase/
 * RightToeBase/HeadTop_End, frame: the character's up and forward, prefix: name prefix → Skeleton (23 joints)
 */
export function buildMixamoSkeleton(
  heads: Record<MixamoJointName, Vec3>,
  ends: Partial<Record<MixamoJointName, Vec3>>,
  frame: { up: Vec3; forward: Vec3 },
  prefix: boolean,
): Skeleton {
  // Lengths that stand in for missing ones are fractions of the skeleton's size, so that a character modelled in
  // millimetres or in kilometres gets the same bones up to scale.
  const size = skeletonSize(heads);
  const joints: Joint[] = MIXAMO_JOINTS.map((name) => {
    const head = heads[name];
    const child = TAIL_CHILD[name];
    let tail = ends[name] ?? (child ? heads[child] : undefined);
    if (!tail || dist(head, tail) < 1e-9 * size) {
      // A bone needs length: continue its parent's direction (HeadTop_End points up by a quarter of the head's bone).
      const parent = MIXAMO_PARENTS[name];
      const from = parent ? heads[parent] : add(head, scale(frame.up, -1));
      const dir = normalize(sub(head, from));
      const length = parent ? Math.max(dist(head, heads[parent]) * 0.25, 1e-4 * size) : 1e-2 * size;
      tail = add(head, scale(dir, length));
    }
    const along = normalize(sub(tail, head));
    const wanted = Math.abs(dot(along, frame.forward)) > 0.7 ? frame.up : frame.forward;
    return {
      name: prefix ? MIXAMO_PREFIX + name : name,
      parent: MIXAMO_PARENTS[name] ? MIXAMO_JOINTS.indexOf(MIXAMO_PARENTS[name]!) : -1,
      head: [...head] as Vec3,
      tail: [...tail] as Vec3,
      roll: rollTowards(head, tail, wanted),
    };
  });
  return { joints };
}

/**
 * The diagonal of the joints' bounding box: the skeleton's size, 1 when the joints all coincide.
 * heads: joint positions by name → length
 */
function skeletonSize(heads: Record<string, Vec3>): number {
  const min = [Infinity, Infinity, Infinity], max = [-Infinity, -Infinity, -Infinity];
  for (const p of Object.values(heads)) {
    for (let a = 0; a < 3; a++) {
      min[a] = Math.min(min[a], p[a]);
      max[a] = Math.max(max[a], p[a]);
    }
  }
  const diagonal = Math.hypot(max[0] - min[0], max[1] - min[1], max[2] - min[2]);
  return diagonal > 0 && Number.isFinite(diagonal) ? diagonal : 1;
}
