/**
 * Procedural humanoids for training the learned skeleton and skinning (issue 5): a RiggedCharacter per seed, made
 * the way AI 3D generators make characters. The body is the zero set of a smooth union of tapered capsules and
 * rounded boxes (bodyCapsules), clothes and accessories are more such shapes (clothingParts); either every item is
 * its own overlapping closed part, or everything is unioned into one field and meshed as a single surface. Surfaces
 * are meshed densely with surface nets (meshShapes) and, for most samples, made chaotic: random diagonals, tangent
 * jitter and random edge splits, to 20k–300k vertices. Joints and weights come from the construction itself
 * (constructionWeights), so they are exact ground truth for the mesh.
 */
import { AutoRigError } from '../../errors.js';
import { MIXAMO_JOINTS } from '../../skeleton/mixamoTemplate.js';
import type { Vec3 } from '../../types.js';
import type { RiggedCharacter } from '../trainingSample.js';
import { poseArms, type PosedArms } from './armPose.js';
import { buildBodyCore, JOINT, type BodyCore } from './bodyCapsules.js';
import { characterWeights } from './characterWeights.js';
import { buildArmClothing, buildTrunkClothing, sleeveShapes, type ClothingItem } from './clothingParts.js';
import { boneTemperatures, ConstructionWeights, CUTOFF_TAUS, ownerTemperatures, VISIBILITY_TOLERANCE } from './constructionWeights.js';
import { clothingList, sampleHumanoidParams, VERTEX_RANGE, withAsymmetricArms, type HumanoidParams } from './humanoidParams.js';
import { fieldBand, meshPlannedParts, type PartPlan } from './partMeshing.js';
import type { Shape } from './sdfShapes.js';
import { ShapeField } from './shapeField.js';

export const PROCEDURAL_GENERATOR = 'procedural-humanoid/1';

/** Surface area of a clothed humanoid per height squared: the first guess of the grid cell (calibrated after). */
const AREA_PER_HEIGHT_SQUARED = 0.7;
/** The body's cells are at most the wrist radius over this. */
const BODY_CELLS_PER_WRIST_RADIUS = 1.6;
/** Left bones may weigh on vertices at most this share of the height right of the midline (and mirrored). */
const MIDLINE_TOLERANCE = 0.01;

export interface ProceduralOptions {
  /** vertices of the whole character (all parts), within VERTEX_RANGE; default: drawn from the seed */
  targetVertices?: number;
  /** each arm posed on its own (withAsymmetricArms); default false: the two arms mirror each other up to a few degrees */
  asymmetricArms?: boolean;
}

/**
 * generateProceduralHumanoid: seed (integer), options → RiggedCharacter (parts in metres, Y up, facing +Z, left on
 * +X, feet at y = 0; joints #23*3 in MIXAMO_JOINTS order; per part top-4 weights, rows summing to 1; meta: every
 * parameter drawn plus vertex and part counts). A pure function of (seed, options). Throws BAD_REQUEST for a
 * non-integer seed or a target outside [1000, 2 × VERTEX_RANGE's top] (below 20k only for tests and previews).
 */
export function generateProceduralHumanoid(seed: number, options: ProceduralOptions = {}): RiggedCharacter {
  if (!Number.isInteger(seed)) throw new AutoRigError('BAD_REQUEST', `procedural humanoid: the seed must be an integer, got ${seed}`);
  const target = options.targetVertices;
  if (target !== undefined && (!Number.isInteger(target) || target < 1000 || target > VERTEX_RANGE[1] * 2)) {
    throw new AutoRigError('BAD_REQUEST', `procedural humanoid: targetVertices must be an integer in [1000, ${VERTEX_RANGE[1] * 2}], got ${target}`);
  }
  const params = sampleHumanoidParams(seed, target);
  return buildProceduralHumanoid(options.asymmetricArms ? withAsymmetricArms(params) : params);
}

/**
 * What a character is made of before any meshing: the body core, the joints, the posed arms, the clothing items and
 * the surfaces to mesh (plans). Exposed so that the same shapes can be posed and re-meshed (posedHumanoidSurface).
 */
export interface ProceduralPlan {
  params: HumanoidParams;
  core: BodyCore;
  /** joint heads, #23 Vec3, MIXAMO_JOINTS order */
  joints: Vec3[];
  arms: PosedArms;
  /** the body's shapes (core and arms), each owned by a bone */
  bodyShapes: Shape[];
  items: ClothingItem[];
  /** the surfaces to mesh: the body (fused: with every item) first, then one per separate item */
  plans: PartPlan[];
  /** fused: per shape of plans[0], the item it belongs to (-1: the body); separate: -1 per body shape */
  itemOfShape: number[];
  fusedBlend: number;
  /** surface-nets vertices planned and the first guess of the cell (m) */
  baseVertices: number;
  cellGuess: number;
}

/** planProceduralHumanoid: params → ProceduralPlan (shapes and joints; nothing meshed yet). */
export function planProceduralHumanoid(params: HumanoidParams): ProceduralPlan {
  const H = params.heightMetres;
  const core = buildBodyCore(params);
  const baseVertices = params.chaotic ? params.targetVertices / (1 + params.splitShare) : params.targetVertices;
  const cellGuess = Math.sqrt((AREA_PER_HEIGHT_SQUARED * H * H) / baseVertices);

  // trunk clothing first: the arms are posed to clear what hangs around the hips
  const trunkItems = buildTrunkClothing(params, core, new ShapeField(core.shapes, 0.1 * H, true), cellGuess);
  const sleeves = params.clothing.sleeves;
  const arms = poseArms(params, core, armObstacles(core, trunkItems), cellGuess, sleeves ? (frame) => sleeveShapes(frame, sleeves.flare) : undefined);
  const joints = core.joints.map((j) => [...j] as Vec3);
  arms.joints.forEach(([arm, foreArm, hand], side) => {
    const prefix = side === 0 ? 'Left' : 'Right';
    joints[JOINT[`${prefix}Arm`]] = arm;
    joints[JOINT[`${prefix}ForeArm`]] = foreArm;
    joints[JOINT[`${prefix}Hand`]] = hand;
  });
  const items: ClothingItem[] = [...trunkItems, ...buildArmClothing(params, core, arms.frames, cellGuess)];
  const bodyShapes = [...core.shapes, ...arms.shapes];

  // the parts to mesh: one fused surface, or the body and one part per item
  const fusedBlend = Math.max(0.006 * H, 1.5 * cellGuess);
  // wrists and ankles need a few cells across, whatever the budget (clothes then get coarser cells instead)
  const bodyMaxCell = Math.min(core.arms[0].wristRadius, core.arms[1].wristRadius, core.legs[0].ankleRadius, core.legs[1].ankleRadius) / BODY_CELLS_PER_WRIST_RADIUS;
  const itemOfShape: number[] = bodyShapes.map(() => -1);
  const plans: PartPlan[] = [];
  if (params.fused) {
    const shapes = [...bodyShapes];
    items.forEach((item, i) => item.shapes.forEach((s, n) => { shapes.push(n === 0 ? { ...s, blend: fusedBlend } : s); itemOfShape.push(i); }));
    plans.push({ name: 'body', shapes, floor: true, rule: null, maxCell: bodyMaxCell });
  } else {
    plans.push({ name: 'body', shapes: bodyShapes, floor: true, rule: null, maxCell: bodyMaxCell });
    for (const item of items) plans.push({ name: item.name, shapes: item.shapes, floor: item.floor, rule: item.weights, maxCell: item.maxCell });
  }
  return { params, core, joints, arms, bodyShapes, items, plans, itemOfShape, fusedBlend, baseVertices, cellGuess };
}

/** buildProceduralHumanoid: the character for a given set of parameters (see generateProceduralHumanoid). */
export function buildProceduralHumanoid(params: HumanoidParams): RiggedCharacter {
  const H = params.heightMetres;
  const { core, joints, arms, bodyShapes, items, plans, itemOfShape, fusedBlend, baseVertices, cellGuess } = planProceduralHumanoid(params);
  const { parts, cell, cells } = meshPlannedParts(plans, {
    targetVertices: params.targetVertices, baseVertices, cellGuess, chaotic: params.chaotic, seed: params.seed,
  });

  // weights by construction: blends about a limb's thickness (an upper arm's at most twice, half a wrist's at least)
  const upper = (core.arms[0].upperRadius + core.arms[1].upperRadius) / 2;
  const boneTau = boneTemperatures(bodyShapes, 0.5 * Math.min(core.arms[0].wristRadius, core.arms[1].wristRadius), 2 * upper);
  const tau = Math.max(...boneTau);
  const band = fieldBand(plans[0].shapes, cells[0]);
  const candidates = new ShapeField(plans[0].shapes, band, true, Math.max(CUTOFF_TAUS * tau, band));
  // the visibility test only needs the field up to its tolerance: a short reach keeps the buckets small
  const inside = new ShapeField(plans[0].shapes, VISIBILITY_TOLERANCE * tau + 2 * cell, true);
  const rules = new ConstructionWeights(candidates, inside, { boneTau, ownerTau: ownerTemperatures(boneTau), midline: MIDLINE_TOLERANCE * H });
  const weights = characterWeights(parts, plans, rules, params.fused ? { field: candidates, itemOfShape, items, blend: Math.max(fusedBlend, upper) } : null);

  const jointArray = new Float32Array(MIXAMO_JOINTS.length * 3);
  joints.forEach((j, i) => jointArray.set(j, 3 * i));
  const vertexCount = parts.reduce((s, p) => s + p.positions.length / 3, 0);
  return {
    name: `procedural_${params.seed}`,
    parts,
    joints: jointArray,
    weights,
    meta: {
      generator: PROCEDURAL_GENERATOR,
      seed: params.seed,
      heightMetres: H,
      headsTall: params.headsTall,
      build: params.build,
      pose: params.left.armPose && params.right.armPose ? [params.left.armPose, params.right.armPose] : params.pose,
      armDegrees: arms.degrees,
      clothing: clothingList(params.clothing),
      fused: params.fused,
      chaotic: params.chaotic,
      targetVertices: params.targetVertices,
      vertexCount,
      partCount: parts.length,
      partNames: parts.map((p) => p.name),
      cellMetres: cell,
      params,
    },
  };
}

/**
 * What the arms must keep clear of: the trunk and legs (not the clavicles, neck and head they hang from) and what
 * hangs around the hips (a skirt; a coat's hem, its first shape; its top hugs the shoulders).
 */
function armObstacles(core: BodyCore, trunkItems: ClothingItem[]): ShapeField {
  const attached = new Set([JOINT.LeftShoulder, JOINT.RightShoulder, JOINT.Neck, JOINT.Head]);
  const shapes: Shape[] = [
    ...core.shapes.filter((s) => !attached.has(s.bone)),
    ...trunkItems.filter((i) => i.name === 'skirt' || i.name === 'coat').map((i) => i.shapes[0]),
  ];
  return new ShapeField(shapes, 0.2 * core.height, false);
}
