/**
 * "Augmented real rigs" (issue 5): a dev character re-proportioned through its own skinning — bone lengths and limb
 * thickness changed in the rest pose, so the artist's weights stay valid on a new shape — scaled to a new height, then
 * (by default) remeshed the way AI generators mesh. Every output is a pure function of the character and the seed.
 *
 * Steps: templateRigOf (map the artist's rig onto the 23 template joints, merge its weights), drawAugmentation (seed →
 * factors, height, remesh target), reproportionSkeleton (per-bone transforms, new joints), smoothWeights +
 * reproportionParts (move the mesh by those transforms), scaleRigged, remeshRigged.
 */
import { MIXAMO_JOINTS } from '../../skeleton/mixamoTemplate.js';
import { SeededRandom } from '../seededRandom.js';
import type { RiggedCharacter } from '../trainingSample.js';
import type { DevCharacter } from './devCharacter.js';
import { assertTrainable } from './heldOut.js';
import { drawProportionFactors, type ProportionFactors } from './proportionFactors.js';
import { remeshRigged } from './remeshRigged.js';
import { reproportionParts } from './reproportionMesh.js';
import { reproportionSkeleton } from './reproportionSkeleton.js';
import { heightAlong, scaleRigged } from './scaleRigged.js';
import { smoothWeights } from './smoothWeights.js';
import { templateRigOf } from './templateRig.js';

/** Heights (metres, along the character's up) drawn uniformly in this range. */
export const HEIGHT_RANGE: [number, number] = [0.5, 2.2];
/** Remesh targets (vertices) drawn log-uniformly in this range. */
export const REMESH_RANGE: [number, number] = [20_000, 300_000];

/** Rounds of weight averaging for the re-proportioning (see smoothWeights.ts). */
export const SMOOTHING_ROUNDS = 3;

export interface AugmentOptions {
  /** remesh target vertex count; undefined: drawn from the seed (REMESH_RANGE, log-uniform); null: keep the character's own mesh and parts */
  remeshVertices?: number | null;
  /** factors to apply instead of the drawn ones (unitProportionFactors() gives the character as it is) */
  factors?: ProportionFactors;
  /** height to scale to (metres along up); undefined: drawn (HEIGHT_RANGE); null: keep the character's size */
  height?: number | null;
  /** rounds of weight averaging for moving the mesh (smoothWeights; default SMOOTHING_ROUNDS; 0: the artist's weights as they are) */
  smoothing?: number;
  /** let a held-out character through: for evaluation only, never for training data */
  allowHeldOut?: boolean;
}

/** Everything an augmentation draws from its seed. */
export interface AugmentationDraw {
  factors: ProportionFactors;
  /** metres along up */
  height: number;
  remeshVertices: number;
  remeshSeed: number;
}

/** drawAugmentation: seed → the factors, height, remesh target and remesh seed of that augmentation (in this order from one stream). */
export function drawAugmentation(seed: number): AugmentationDraw {
  const rng = new SeededRandom(seed);
  const factors = drawProportionFactors(rng);
  const height = rng.range(HEIGHT_RANGE[0], HEIGHT_RANGE[1]);
  const remeshVertices = Math.round(Math.exp(rng.range(Math.log(REMESH_RANGE[0]), Math.log(REMESH_RANGE[1]))));
  const remeshSeed = rng.int(0, 0x7fffffff);
  return { factors, height, remeshVertices, remeshSeed };
}

/**
 * augmentDevCharacter: a dev character (loadDevCharacter) and a seed → RiggedCharacter: joints #23*3 (MIXAMO_JOINTS;
 * joints the artist's rig lacks completed, see completeTemplateJoints), weights the artist's merged onto the template
 * (top-4, rows sum to 1, HeadTop_End never weighted), parts kept separate unless remeshed (then one part 'remesh').
 * Faces the way the file does. meta: source, seed, the drawn factors, realised bone length ratios, scale, height,
 * remesh target and seed. The random draws are the same whatever the options (an option only replaces its draw).
 * Throws BAD_REQUEST for a held-out character (unless allowHeldOut), BAD_SKELETON when its rig cannot be mapped.
 */
export function augmentDevCharacter(character: DevCharacter, seed: number, options: AugmentOptions = {}): RiggedCharacter {
  if (!options.allowHeldOut) assertTrainable(character.name, character);
  const drawn = drawAugmentation(seed);
  const factors = options.factors ?? drawn.factors;
  const height = options.height === undefined ? drawn.height : options.height;
  const remeshVertices = options.remeshVertices === undefined ? drawn.remeshVertices : options.remeshVertices;
  const remeshSeed = drawn.remeshSeed;

  const rig = templateRigOf(character, character.name);
  const skeleton = reproportionSkeleton(rig.joints, factors);
  const joints = new Float32Array(MIXAMO_JOINTS.length * 3);
  skeleton.heads.forEach((h, t) => joints.set(h, 3 * t));
  const moving = smoothWeights(rig.rigged.parts, rig.rigged.weights, MIXAMO_JOINTS.length, options.smoothing ?? SMOOTHING_ROUNDS);
  const parts = reproportionParts(rig.rigged.parts, moving, skeleton.transforms);
  const ownHeight = heightAlong(parts, rig.frame.up);
  const scale = height === null || !(ownHeight > 0) ? 1 : height / ownHeight;

  let result: RiggedCharacter = { name: `${character.name}-aug${seed}`, parts, joints, weights: rig.rigged.weights, meta: {} };
  if (scale !== 1) result = scaleRigged(result, scale);
  if (remeshVertices !== null) result = remeshRigged(result, remeshVertices, remeshSeed);
  result.meta = {
    generator: 'augmentDevCharacter',
    source: character.name,
    seed,
    mapping: rig.method,
    mappedJoints: MIXAMO_JOINTS.filter((_, t) => rig.joints.mapped[t]),
    factors: factors.regions,
    boneLengthFactors: factors.length,
    boneThicknessFactors: factors.thickness,
    realisedLengthRatios: skeleton.lengthRatios,
    scale,
    height: ownHeight * scale,
    remeshVertices,
    remeshSeed: remeshVertices === null ? null : remeshSeed,
  };
  return result;
}
