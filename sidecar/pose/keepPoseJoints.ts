/**
 * The decoder answers a rotation for every template joint, and its joints that a pose does not turn are never quite
 * still: a few hundredths of a degree at the hips and spine, a tenth at the hands. Small as they are, they move the
 * whole body, and most of a mesh does not move in a pose: on the procedural test identity 9 100 003, kneeBentLf erred
 * 0.094 % of the height with the decoder's 23 rotations, 0.031 % with its knee alone (.tmp measurement, 2026-12-02).
 * A pose of the vocabulary names the joints it turns (poseVocabulary poseJoints); the decoder gives how far and about
 * which axis, and the others stay at rest.
 */
import { AutoRigError } from '../errors.js';
import { MIXAMO_JOINTS } from '../skeleton/mixamoTemplate.js';
import { poseJoints } from './poseVocabulary.js';

/**
 * keepPoseJoints: local rotations with every joint the pose does not turn set to rest.
 * local: Float32Array #23*3 (the decoder's rotation vectors, MIXAMO_JOINTS order), pose: a pose name
 * → Float32Array #23*3, a new array (local is not changed). Throws BAD_ARRAY on a wrong length, BAD_REQUEST for an
 * unknown pose.
 */
export function keepPoseJoints(local: Float32Array, pose: string): Float32Array {
  const J = MIXAMO_JOINTS.length;
  if (local.length !== J * 3) throw new AutoRigError('BAD_ARRAY', `keepPoseJoints: ${J} joints need ${J * 3} numbers, got ${local.length}`);
  const kept = new Float32Array(J * 3);
  for (const name of poseJoints(pose)) {
    const j = MIXAMO_JOINTS.indexOf(name);
    kept.set(local.subarray(3 * j, 3 * j + 3), 3 * j);
  }
  return kept;
}
