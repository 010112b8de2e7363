/**
 * A posed example for `autorig correctives --example FILE.json`: what the add-on's Add Pose Example records, as a file
 * a pipeline can write. FILE.json:
 *   {
 *     "name": "elbow sculpt",                  (optional; default the file's name)
 *     "mesh": "elbow_sculpt.obj",              (.obj/.glb/.gltf, relative to FILE.json; in the character's space)
 *     "rotations": { "mixamorig:LeftForeArm": [x, y, z, w], ... },
 *     "shapeKey": false                        (optional)
 *   }
 * rotations: per bone of the character's skeleton (its name, with or without the `mixamorig:` prefix), the bone's own
 * turn from its rest pose as a unit quaternion in world axes about its rest head (correctives.preview's convention);
 * bones not named stay at rest. shapeKey true: the mesh is the character itself at rest with a shape key sculpted in
 * that pose applied (same parts and vertex counts): the bake poses it as Blender's Armature modifier did.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import type { CorrectiveExample } from '../correctives/bakeCorrectives.js';
import { AutoRigError } from '../errors.js';
import { loadCharacter } from '../io/character.js';
import { MIXAMO_PREFIX } from '../skeleton/mixamoTemplate.js';
import type { Skeleton } from '../types.js';

/** A unit quaternion may be off by this much in norm (rounded decimals) before it is refused. */
const QUATERNION_NORM_TOLERANCE = 1e-3;

/**
 * readPosedExampleFile: FILE.json (format above) and the skeleton it poses → CorrectiveExample (rotations #J*9 over
 * skeleton.joints, row-major, world axes). Throws BAD_REQUEST for a file that is not such JSON (naming the field),
 * an unknown bone or a quaternion that is not a unit one, and what loadCharacter throws for its mesh.
 */
export async function readPosedExampleFile(path: string, skeleton: Skeleton): Promise<CorrectiveExample> {
  const fail = (why: string) => new AutoRigError('BAD_REQUEST', `example ${path}: ${why}`);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw fail(`not readable JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail('not a JSON object');
  const fields = value as Record<string, unknown>;
  if (fields.name !== undefined && typeof fields.name !== 'string') throw fail('"name" must be a string');
  if (typeof fields.mesh !== 'string' || fields.mesh === '') throw fail('"mesh" must name the example\'s mesh file');
  if (fields.shapeKey !== undefined && typeof fields.shapeKey !== 'boolean') throw fail('"shapeKey" must be true or false');
  const turns = fields.rotations;
  if (typeof turns !== 'object' || turns === null || Array.isArray(turns)) throw fail('"rotations" must map bone names to [x, y, z, w]');
  const rotations = new Float64Array(skeleton.joints.length * 9);
  for (let j = 0; j < skeleton.joints.length; j++) rotations[9 * j] = rotations[9 * j + 4] = rotations[9 * j + 8] = 1;
  for (const [bone, quaternion] of Object.entries(turns as Record<string, unknown>)) {
    const j = jointNamed(skeleton, bone);
    if (j < 0) throw fail(`no bone "${bone}" in the character's skeleton`);
    rotations.set(quaternionMatrix(checkedQuaternion(quaternion, (why) => fail(`"rotations"."${bone}": ${why}`))), 9 * j);
  }
  const meshPath = resolve(dirname(path), fields.mesh);
  const mesh = await loadCharacter(meshPath);
  return {
    name: fields.name ?? basename(path, extname(path)),
    rotations,
    objects: mesh.parts.map((part) => ({ name: part.name, positions: part.positions, triangles: part.triangles })),
    ...(fields.shapeKey ? { shapeKey: true } : {}),
  };
}

/** The joint of `name`, matched with or without the `mixamorig:` prefix on either side; −1 when none. */
function jointNamed(skeleton: Skeleton, name: string): number {
  const bare = (n: string) => (n.startsWith(MIXAMO_PREFIX) ? n.slice(MIXAMO_PREFIX.length) : n);
  const exact = skeleton.joints.findIndex((joint) => joint.name === name);
  return exact >= 0 ? exact : skeleton.joints.findIndex((joint) => bare(joint.name) === bare(name));
}

/** [x, y, z, w] checked to be four finite numbers of norm 1 (within the tolerance), then normalised. */
function checkedQuaternion(value: unknown, fail: (why: string) => Error): [number, number, number, number] {
  if (!Array.isArray(value) || value.length !== 4 || !value.every((x) => typeof x === 'number' && Number.isFinite(x))) {
    throw fail('a quaternion is four finite numbers [x, y, z, w]');
  }
  const norm = Math.hypot(...(value as number[]));
  if (Math.abs(norm - 1) > QUATERNION_NORM_TOLERANCE) throw fail(`not a unit quaternion (norm ${norm.toPrecision(4)})`);
  const [x, y, z, w] = (value as number[]).map((c) => c / norm);
  return [x, y, z, w];
}

/** Row-major 3x3 rotation of a unit quaternion [x, y, z, w]. */
function quaternionMatrix([x, y, z, w]: [number, number, number, number]): number[] {
  return [
    1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
    2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
    2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y),
  ];
}
