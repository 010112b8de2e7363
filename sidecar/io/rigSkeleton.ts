/**
 * A file's own rig as the pipeline's Skeleton type: glTF stores joints as points (node origins), Blender and the
 * pipeline want bones with a head and a tail.
 */
import type { Joint, PartWeights, Skeleton, Vec3 } from '../types.js';
import type { Character, CharacterRig } from './character.js';

/**
 * skeletonFromRig: head = joint position; tail = the first child's position (the first one that is not at the head),
 * else the head extended along the parent→head direction by half that distance, else (a lone root) straight up along
 * +Y by a tenth of the skeleton's size. Roll 0.
 */
export function skeletonFromRig(rig: CharacterRig): Skeleton {
  const joints = rig.joints;
  const extent = skeletonExtent(joints.map((j) => j.position));
  const minimum = Math.max(extent * 1e-4, 1e-9);
  const children = joints.map(() => [] as number[]);
  joints.forEach((joint, j) => joint.parent >= 0 && children[joint.parent].push(j));
  const out: Joint[] = joints.map((joint, j) => {
    const head = joint.position;
    const child = children[j].find((c) => distance(joints[c].position, head) > minimum);
    let tail: Vec3;
    if (child !== undefined) {
      tail = [...joints[child].position];
    } else if (joint.parent >= 0 && distance(joints[joint.parent].position, head) > minimum) {
      const from = joints[joint.parent].position;
      tail = [0, 1, 2].map((a) => head[a] + 0.5 * (head[a] - from[a])) as Vec3;
    } else {
      tail = [head[0], head[1] + Math.max(extent * 0.1, minimum * 10), head[2]];
    }
    return { name: joint.name, parent: joint.parent, head: [...head], tail, roll: 0 };
  });
  return { joints: out };
}

/** The file's own weights as PartWeights (4 influences), for parts that have a skin. */
export function rigWeights(character: Character): (PartWeights | null)[] {
  return character.parts.map((part, p) => {
    const skin = character.rig?.skins[p];
    return skin ? { name: part.name, influences: 4, indices: skin.indices, weights: skin.weights } : null;
  });
}

function skeletonExtent(points: Vec3[]): number {
  if (points.length === 0) return 0;
  let extent = 0;
  for (let a = 0; a < 3; a++) {
    const values = points.map((p) => p[a]);
    extent = Math.max(extent, Math.max(...values) - Math.min(...values));
  }
  return extent;
}

function distance(a: Vec3, b: Vec3): number {
  return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}
