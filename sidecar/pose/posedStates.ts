import { AutoRigError } from '../errors.js';
import type { RiggedCharacter } from '../data/trainingSample.js';
import { dualQuaternionSkinning } from '../deform/dualQuaternionSkinning.js';
import { linearBlendSkinning, posedHeads, poseTransforms } from '../deform/linearBlendSkinning.js';
import { MIXAMO_PARENT_INDICES } from '../skeleton/mixamoTemplate.js';
import { GENERATOR_FRAME, poseRotations, type PoseFrame, type PoseName } from './poseVocabulary.js';

/**
 * A rigged character in one semantic pose, in the three variants issue 6 trains on. Skinning is linear blend skinning
 * (what any rig does); the better deformation is dual-quaternion skinning, which keeps bent joints' volume; the
 * corrective is what DQS adds on top of LBS, applied to the rest mesh alone (so a model can learn the correction
 * apart from the motion).
 */

/** One part's positions in a pose, each Float32Array #V*3 in the character's space. */
export interface PosedPart {
  name: string;
  /** linear blend skinning */
  skinning: Float32Array;
  /** skinning with the corrective: dual-quaternion skinning */
  skinningCorrective: Float32Array;
  /** rest + (DQS − LBS): the corrective alone, without the skinning motion */
  corrective: Float32Array;
}

export interface PosedCharacterStates {
  pose: PoseName;
  strength: number;
  /** per part of the character, in its order */
  parts: PosedPart[];
  /** posed joint heads: Float32Array #23*3, MIXAMO_JOINTS order */
  joints: Float32Array;
  /** the pose's joint rotations: Float64Array #23*9 (poseRotations) */
  rotations: Float64Array;
}

/**
 * posedCharacterStates: a character in a pose, three ways. A pure function of its inputs (the character is not
 * changed). frame: the character's up and forward; generator characters (sidecar/data/procedural, data/augment) are
 * Y up and face +Z, which is the default.
 * character: RiggedCharacter (joints #23*3, per part top-k weights #V*k), pose: a pose name (poseVocabulary),
 * strength: in [0, 1.5], frame: PoseFrame → PosedCharacterStates (per part: skinning, skinningCorrective and corrective
 * Float32Array #V*3; joints Float32Array #23*3; rotations Float64Array #23*9).
 * Throws BAD_REQUEST for an unknown pose or strength out of range (poseRotations), BAD_ARRAY when a part's weights do
 * not hold whole rows, BAD_INDEX for a weight on a joint outside the template.
 */
export function posedCharacterStates(
  character: RiggedCharacter, pose: PoseName, strength = 1, frame: PoseFrame = GENERATOR_FRAME,
): PosedCharacterStates {
  if (character.weights.length !== character.parts.length) {
    throw new AutoRigError('BAD_ARRAY', `${character.name}: weights for ${character.weights.length} of ${character.parts.length} parts`);
  }
  const heads = Float64Array.from(character.joints);
  const rotations = poseRotations(pose, heads, frame, strength);
  const transforms = poseTransforms(heads, MIXAMO_PARENT_INDICES, rotations);
  const parts = character.parts.map((part, p): PosedPart => {
    const { indices, weights } = character.weights[p];
    const vertexCount = part.positions.length / 3;
    const influences = vertexCount > 0 ? indices.length / vertexCount : 0;
    if (!Number.isInteger(influences)) {
      throw new AutoRigError('BAD_ARRAY', `${character.name}: part ${part.name} has ${vertexCount} vertices but ${indices.length} weight slots`);
    }
    const skinning = linearBlendSkinning(part.positions, indices, weights, influences, transforms);
    const skinningCorrective = dualQuaternionSkinning(part.positions, indices, weights, influences, transforms);
    const corrective = new Float32Array(part.positions.length);
    for (let i = 0; i < corrective.length; i++) corrective[i] = part.positions[i] + (skinningCorrective[i] - skinning[i]);
    return { name: part.name, skinning, skinningCorrective, corrective };
  });
  return { pose, strength, parts, joints: Float32Array.from(posedHeads(heads, transforms)), rotations };
}
