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
import { splitRandomEdges } from '../../eval/remeshVolume.js';
import { MIXAMO_JOINTS } from '../../skeleton/mixamoTemplate.js';
import type { MeshPart, Vec3 } from '../../types.js';
import { SeededRandom } from '../seededRandom.js';
import type { RiggedCharacter } from '../trainingSample.js';
import { solveArmDegrees } from './armPose.js';
import { buildArm, buildBodyCore, JOINT, type ArmFrame } from './bodyCapsules.js';
import { buildArmClothing, buildTrunkClothing, type ClothingItem, type WeightRule } from './clothingParts.js';
import { ConstructionWeights, INFLUENCES, mixRows, writeTopWeights } from './constructionWeights.js';
import { clothingList, sampleHumanoidParams, VERTEX_RANGE, type HumanoidParams } from './humanoidParams.js';
import { meshShapes } from './meshShapes.js';
import { shapeDistance, type Shape } from './sdfShapes.js';
import { ShapeField } from './shapeField.js';

export const PROCEDURAL_GENERATOR = 'procedural-humanoid/1';

/** Surface area of a clothed humanoid per height squared: the first guess of the grid cell (calibrated after). */
const AREA_PER_HEIGHT_SQUARED = 0.7;
/** The calibration pass meshes at this many times the guessed cell. */
const COARSE_FACTOR = 2;
/** Splits per part stay below this share of its vertices (splitRandomEdges splits at most one edge per triangle pair). */
const MAX_SPLIT_SHARE = 0.9;
/** Largest tangent slide of a chaotic mesh's vertices, in cells. */
const JITTER_CELLS = 0.3;

export interface ProceduralOptions {
  /** vertices of the whole character (all parts), within VERTEX_RANGE; default: drawn from the seed */
  targetVertices?: number;
}

/**
 * generateProceduralHumanoid: seed (integer), options → RiggedCharacter (parts in metres, Y up, facing +Z, left on
 * +X, feet at y = 0; joints #23*3 in MIXAMO_JOINTS order; per part top-4 weights, rows summing to 1; meta: every
 * parameter drawn plus vertex and part counts). A pure function of (seed, options). Throws BAD_REQUEST for a
 * non-integer seed or a target outside VERTEX_RANGE (widened down to 1000 for tests).
 */
export function generateProceduralHumanoid(seed: number, options: ProceduralOptions = {}): RiggedCharacter {
  if (!Number.isInteger(seed)) throw new AutoRigError('BAD_REQUEST', `procedural humanoid: the seed must be an integer, got ${seed}`);
  const target = options.targetVertices;
  if (target !== undefined && (!Number.isInteger(target) || target < 1000 || target > VERTEX_RANGE[1] * 2)) {
    throw new AutoRigError('BAD_REQUEST', `procedural humanoid: targetVertices must be an integer in [1000, ${VERTEX_RANGE[1] * 2}], got ${target}`);
  }
  return buildProceduralHumanoid(sampleHumanoidParams(seed, target));
}

/** One surface to mesh: the body (with everything, when fused) or one clothing item. */
interface PartPlan {
  name: string;
  shapes: Shape[];
  floor: boolean;
  /** null: the body (or fused) rule */
  rule: WeightRule | null;
  /** cells no larger than this */
  maxCell: number;
}

/** buildProceduralHumanoid: the character for a given set of parameters (see generateProceduralHumanoid). */
export function buildProceduralHumanoid(params: HumanoidParams): RiggedCharacter {
  const H = params.heightMetres;
  const core = buildBodyCore(params);
  const baseTarget = params.chaotic ? params.targetVertices / (1 + params.splitShare) : params.targetVertices;
  const cellGuess = Math.sqrt((AREA_PER_HEIGHT_SQUARED * H * H) / baseTarget);

  // trunk clothing first: the arms are posed to clear what hangs around the hips
  const coreField = new ShapeField(core.shapes, 0.1 * H, true);
  const trunkItems = buildTrunkClothing(params, core, coreField, cellGuess);
  const shoulderBones = new Set([JOINT.LeftShoulder, JOINT.RightShoulder, JOINT.Neck, JOINT.Head]);
  const obstacles = new ShapeField([
    ...core.shapes.filter((s) => !shoulderBones.has(s.bone)),
    // what hangs around the hips (the coat's hem is its first shape; its sleeves-free top hugs the shoulders)
    ...trunkItems.filter((i) => i.name === 'skirt' || i.name === 'coat').map((i) => i.shapes[0]),
  ], 0.2 * H, false);
  const joints = core.joints.map((j) => [...j] as Vec3);
  const armShapes: Shape[] = [];
  const frames: ArmFrame[] = [];
  const armDegrees: number[] = [];
  for (const side of [0, 1] as const) {
    const sideParams = side === 0 ? params.left : params.right;
    const dims = core.arms[side];
    const gap = params.armGap >= 0 ? Math.max(params.armGap * H, dims.blend / 2 + 1.5 * cellGuess) : params.armGap * H;
    const degrees = solveArmDegrees(core, obstacles, side, sideParams, sideParams.armDegrees, gap);
    const arm = buildArm(core, sideParams, side, degrees);
    const prefix = side === 0 ? 'Left' : 'Right';
    joints[JOINT[`${prefix}Arm`]] = arm.joints[0];
    joints[JOINT[`${prefix}ForeArm`]] = arm.joints[1];
    joints[JOINT[`${prefix}Hand`]] = arm.joints[2];
    armShapes.push(...arm.shapes);
    frames.push(arm.frame);
    armDegrees.push(degrees);
  }
  const items: ClothingItem[] = [...trunkItems, ...buildArmClothing(params, core, frames as [ArmFrame, ArmFrame], cellGuess)];
  const bodyShapes = [...core.shapes, ...armShapes];

  const fusedBlend = Math.max(0.006 * H, 1.5 * cellGuess);
  const plans: PartPlan[] = [];
  const itemOfShape: number[] = bodyShapes.map(() => -1);
  if (params.fused) {
    const shapes = [...bodyShapes];
    items.forEach((item, i) => {
      item.shapes.forEach((s, n) => { shapes.push(n === 0 ? { ...s, blend: fusedBlend } : s); itemOfShape.push(i); });
    });
    plans.push({ name: 'body', shapes, floor: true, rule: null, maxCell: Infinity });
  } else {
    plans.push({ name: 'body', shapes: bodyShapes, floor: true, rule: null, maxCell: Infinity });
    for (const item of items) plans.push({ name: item.name, shapes: item.shapes, floor: item.floor, rule: item.weights, maxCell: item.maxCell });
  }

  // calibrate the cell: vertex counts grow as 1/cell² (per part, with each part's own cap)
  const bandFor = (shapes: Shape[], cell: number) => Math.max(0, ...shapes.map((s) => s.blend)) + 3 * cell;
  const partCell = (plan: PartPlan, cell: number) => Math.min(cell, plan.maxCell);
  const coarseCell = COARSE_FACTOR * cellGuess;
  const coarseCounts = plans.map((plan) => {
    const c = partCell(plan, coarseCell);
    return meshShapes(new ShapeField(plan.shapes, bandFor(plan.shapes, c), plan.floor), { cell: c, random: null }).positions.length / 3;
  });
  const predicted = (cell: number) => plans.reduce((sum, plan, i) => sum + coarseCounts[i] * (partCell(plan, coarseCell) / partCell(plan, cell)) ** 2, 0);
  let lo = coarseCell / 30, hi = coarseCell * 4;
  for (let it = 0; it < 50; it++) {
    const mid = Math.sqrt(lo * hi);
    if (predicted(mid) > baseTarget) lo = mid;
    else hi = mid;
  }
  const cell = Math.sqrt(lo * hi);

  // mesh every part
  const meshFields: ShapeField[] = [];
  const surfaces = plans.map((plan, i) => {
    const c = partCell(plan, cell);
    const field = new ShapeField(plan.shapes, bandFor(plan.shapes, c), plan.floor);
    meshFields.push(field);
    const rng = params.chaotic ? new SeededRandom(params.seed * 7919 + i * 104729 + 1) : null;
    return meshShapes(field, { cell: c, random: rng ? () => rng.next() : null, jitter: JITTER_CELLS });
  });
  const baseVertices = surfaces.reduce((s, m) => s + m.positions.length / 3, 0);
  const splits = params.chaotic ? Math.max(0, params.targetVertices - baseVertices) : 0;
  const parts: MeshPart[] = surfaces.map((m, i) => {
    const v = m.positions.length / 3;
    const count = Math.min(Math.round((splits * v) / Math.max(baseVertices, 1)), Math.floor(MAX_SPLIT_SHARE * v));
    const out = count > 0 ? splitRandomEdges(m.positions, m.triangles, count, params.seed * 31 + i) : m;
    return { name: plans[i].name, positions: out.positions, triangles: out.triangles };
  });

  // weights by construction
  const upper = (core.arms[0].upperRadius + core.arms[1].upperRadius) / 2;
  const tau = 0.4 * upper;
  const settings = { tau, sideMargin: 0.012 * H };
  const bodyPlan = plans[0];
  const weightField = new ShapeField(bodyPlan.shapes, meshFields[0].band, true, Math.max(8 * tau, meshFields[0].band));
  const rules = new ConstructionWeights(weightField, meshFields[0], settings);
  const weights = parts.map((part, i) => {
    const plan = plans[i];
    if (plan.rule === null && params.fused) return fusedWeights(part.positions, rules, weightField, itemOfShape, items, fusedBlend);
    return partWeights(part.positions, (p, out) => {
      if (plan.rule === null) rules.body(p, out);
      else applyRule(plan.rule, rules, p, out);
    });
  });

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
      pose: params.pose,
      armDegrees,
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

function applyRule(rule: WeightRule, rules: ConstructionWeights, p: Vec3, out: Float64Array): void {
  if (rule.kind === 'rigid') { out.fill(0); out[rule.bone] = 1; }
  else rules.clothing(p, rule.bones, rule.sideMargin, out);
}

/** Top-4 weights of every vertex of a part from a dense rule. */
function partWeights(positions: Float32Array, rule: (p: Vec3, out: Float64Array) => void): { indices: Uint16Array; weights: Float32Array } {
  const n = positions.length / 3;
  const indices = new Uint16Array(n * INFLUENCES);
  const weights = new Float32Array(n * INFLUENCES);
  const dense = new Float64Array(MIXAMO_JOINTS.length);
  const p: Vec3 = [0, 0, 0];
  for (let v = 0; v < n; v++) {
    p[0] = positions[3 * v]; p[1] = positions[3 * v + 1]; p[2] = positions[3 * v + 2];
    rule(p, dense);
    writeTopWeights(dense, indices, weights, v);
  }
  return { indices, weights };
}

/**
 * A fused surface: each vertex takes the body rule, the rule of the clothing item whose shapes are nearer, or a blend
 * of the two over the fused blend width (where the clothing merges into the body).
 */
function fusedWeights(positions: Float32Array, rules: ConstructionWeights, field: ShapeField, itemOfShape: number[], items: ClothingItem[], blend: number): { indices: Uint16Array; weights: Float32Array } {
  const body = new Float64Array(MIXAMO_JOINTS.length);
  const cloth = new Float64Array(MIXAMO_JOINTS.length);
  return partWeights(positions, (p, out) => {
    let bodyD = Infinity, itemD = Infinity, item = -1;
    const bucket = field.bucketOf(p[0], p[1], p[2]);
    const members = field.bucketShapes;
    for (let n = bucket < 0 ? 0 : field.bucketStart[bucket], end = bucket < 0 ? 0 : field.bucketStart[bucket + 1]; n < end; n++) {
      const d = shapeDistance(field.shapes[members[n]], p[0], p[1], p[2]);
      const owner = itemOfShape[members[n]];
      if (owner < 0) bodyD = Math.min(bodyD, d);
      else if (d < itemD) { itemD = d; item = owner; }
    }
    const t = item < 0 ? 0 : Math.max(0, Math.min(1, 0.5 + (bodyD - itemD) / (2 * blend)));
    if (t < 1) rules.body(p, body);
    if (t > 0) applyRule(items[item].weights, rules, p, cloth);
    if (t === 0) out.set(body);
    else if (t === 1) out.set(cloth);
    else mixRows(body, cloth, t, out);
  });
}
