/**
 * The test identities of `autorig eval poses` and their ground truth: the held-out dev characters with their own
 * artist rigs (templateRigOf), and procedural humanoids from a seed stream the training never draws from. Each is
 * measured in the canonical frame of its neutral mesh, the frame the training data and the apply path use, so
 * every distance is a fraction of the character's height.
 */
import { loadDevCharacter } from '../../data/augment/devCharacter.js';
import { templateRigOf } from '../../data/augment/templateRig.js';
import { neutralFrame } from '../../data/poses/poseSample.js';
import { generateProceduralHumanoid } from '../../data/procedural/proceduralHumanoid.js';
import type { RiggedCharacter } from '../../data/trainingSample.js';
import { toCanonical, type CanonicalFrame } from '../../mesh/canonicalFrame.js';
import { mergeParts, type MergedMesh } from '../../mesh/mergeParts.js';
import { posedCharacterStates } from '../../pose/posedStates.js';
import type { PoseName } from '../../pose/poseVocabulary.js';
import { MIXAMO_JOINTS, MIXAMO_PARENTS, MIXAMO_PREFIX } from '../../skeleton/mixamoTemplate.js';
import type { AutoRig } from './poseBaselines.js';
import type { MeasuredVariant } from './poseEvalTypes.js';
import { PROCEDURAL_TEST_VERTICES } from './poseEvalArguments.js';

/**
 * First generator seed of the procedural test identities. Training draws its procedural seeds through sampleSeed
 * (data/makeDataset.ts), a hash of (dataset seed, index) spread over all 32-bit values; this plain run of seeds is
 * chosen apart from it, and the eval reports the seeds it used.
 */
export const PROCEDURAL_TEST_SEED_BASE = 9_100_000;
// the default vertex budget lives with the command line's defaults, which the CLI loads without this module
export { PROCEDURAL_TEST_VERTICES } from './poseEvalArguments.js';

export interface TestIdentity {
  /** dev character name, or procedural-<seed> */
  name: string;
  source: 'held-out' | 'procedural';
  seed: number | null;
  character: RiggedCharacter;
  /** the parts merged, in part order (partOffsets) */
  mesh: MergedMesh;
  /** the neutral's canonical frame (data/poses/poseSample neutralFrame) */
  frame: CanonicalFrame;
  /** the neutral mesh in that frame: Float32Array #V*3 */
  rest: Float32Array;
}

/** Raised when a procedural identity's canonical frame is misread: it is skipped and counted, not scored. */
export class MisreadFrameError extends Error {
  override readonly name = 'MisreadFrameError';
}

/**
 * testIdentity: a rigged character as a test identity (its merged mesh, neutral canonical frame, rest in that frame).
 * Throws MisreadFrameError when neutralFrame refuses the frame (generator characters, whose frame is known).
 */
export function testIdentity(character: RiggedCharacter, source: TestIdentity['source'], seed: number | null = null): TestIdentity {
  const mesh = mergeParts(character.parts);
  let frame: CanonicalFrame;
  try {
    frame = neutralFrame(character, mesh.positions, mesh.triangles);
  } catch (err) {
    throw new MisreadFrameError((err as Error).message);
  }
  return { name: character.name, source, seed, character, mesh, frame, rest: toCanonical(mesh.positions, frame) };
}

/**
 * heldOutIdentity: a dev character file with its artist's rig read as the template (templateRigOf) → TestIdentity.
 * Throws what loadCharacter and templateRigOf throw (a missing file, a rig that cannot be mapped).
 */
export async function heldOutIdentity(file: string): Promise<TestIdentity> {
  const dev = await loadDevCharacter(file);
  return testIdentity(templateRigOf(dev, dev.name).rigged, 'held-out');
}

/**
 * proceduralIdentity: the generator's humanoid of `seed` → TestIdentity named procedural-<seed> (meta.source
 * 'procedural', as the training data marks it, so that its known frame is checked). Throws MisreadFrameError when its
 * canonical frame is misread.
 */
export function proceduralIdentity(seed: number, targetVertices = PROCEDURAL_TEST_VERTICES): TestIdentity {
  const character = generateProceduralHumanoid(seed, { targetVertices });
  return testIdentity({ ...character, name: `procedural-${seed}`, meta: { ...character.meta, source: 'procedural' } }, 'procedural', seed);
}

/**
 * mergedCanonical: per-part positions (each Float32Array #V_p*3 in the character's space, part order) → the merged
 * mesh's vertices in the identity's canonical frame, Float32Array #V*3.
 */
export function mergedCanonical(identity: TestIdentity, parts: Float32Array[]): Float32Array {
  const merged = new Float32Array(identity.mesh.positions.length);
  parts.forEach((positions, k) => merged.set(positions, 3 * identity.mesh.partOffsets[k]));
  return toCanonical(merged, identity.frame);
}

/**
 * groundTruth: the identity in `pose` at strength 1, set in its neutral's up and forward (posedStates), in both
 * measured variants, in the canonical frame → Record<MeasuredVariant, Float32Array #V*3>.
 */
export function groundTruth(identity: TestIdentity, pose: PoseName): Record<MeasuredVariant, Float32Array> {
  const { up, forward } = identity.frame.frame;
  const states = posedCharacterStates(identity.character, pose, 1, { up, forward });
  return {
    skinningCorrective: mergedCanonical(identity, states.parts.map((p) => p.skinningCorrective)),
    corrective: mergedCanonical(identity, states.parts.map((p) => p.corrective)),
  };
}

/**
 * ownRig: a test identity's own rig (the generator's, or the artist's read as the template: the rig its ground truth
 * is posed with) in the form rigCharacterAsync answers: 23 prefixed template joints (heads from the character; a tail
 * just above each head, which posing does not read) and per-part weights. character: RiggedCharacter → AutoRig.
 */
export function ownRig(character: RiggedCharacter): AutoRig {
  return {
    skeleton: {
      joints: MIXAMO_JOINTS.map((name, j) => {
        const parent = MIXAMO_PARENTS[name];
        const head: [number, number, number] = [character.joints[3 * j], character.joints[3 * j + 1], character.joints[3 * j + 2]];
        return { name: MIXAMO_PREFIX + name, parent: parent ? MIXAMO_JOINTS.indexOf(parent) : -1, head, tail: [head[0], head[1] + 0.01, head[2]], roll: 0 };
      }),
    },
    objects: character.weights.map((w, p) => ({
      name: character.parts[p].name, influences: w.indices.length / (character.parts[p].positions.length / 3), indices: w.indices, weights: w.weights,
    })),
  };
}
