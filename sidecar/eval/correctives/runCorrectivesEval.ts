/**
 * `autorig eval correctives`: on procedural humanoids from a seed range the training data never uses, each key pose
 * at each angle is compared against the exact posed surface (data/procedural/posedHumanoidSurface.ts) for every
 * deformation method (deformationMethods.ts: static LBS and DQS with our weights on the true skeleton; the
 * pose-dependent method later), and the rest pose too (the "no worse at rest" check). Distances are shares of the
 * character's height.
 */
import { bareHumanoidParams, posedPlanSurface } from '../../data/procedural/posedHumanoidSurface.js';
import { MIXAMO_PARENT_INDICES } from '../../skeleton/mixamoTemplate.js';
import { sampleHumanoidParams } from '../../data/procedural/humanoidParams.js';
import { buildProceduralHumanoid, planProceduralHumanoid, type ProceduralPlan } from '../../data/procedural/proceduralHumanoid.js';
import { trueSkeleton } from '../../data/procedural/trueSkeleton.js';
import { poseTransforms } from '../../deform/linearBlendSkinning.js';
import { mergeParts } from '../../mesh/mergeParts.js';
import { skinCharacterAsync } from '../../pipeline.js';
import { MIXAMO_JOINTS, type MixamoJointName } from '../../skeleton/mixamoTemplate.js';
import type { Skeleton, Vec3 } from '../../types.js';
import { CORRECTIVES_SEED_BASE } from './correctivesEvalArguments.js';
import { crossSectionArea } from './crossSection.js';
import { BASELINE_METHODS, type DeformationMethod, type PosedSurface, type PoseQuery } from './deformationMethods.js';
import { KEY_POSE_DEGREES, KEY_POSES, keyPoseRotations, type KeyPose } from './keyPoses.js';
import { signedVolume, volumeInBall, volumeLoss } from './meshVolume.js';
import { meanPointToSurface, trianglesNear, type TriangleMesh } from './surfaceDistance.js';
import { buildTriangleGrid, surfaceDistances } from './triangleGrid.js';

export { CORRECTIVES_SEED_BASE };
/** Vertex budget of a test character (dev-like density). */
export const CORRECTIVES_VERTICES = 20_000;
/** The ground truth is meshed at this share of the rest body's cell: finer than the surface the methods deform. */
export const GROUND_TRUTH_CELL_SHARE = 0.75;
/** Surface samples per mesh for the distances (whole body, and again within the joint's region). */
export const CORRECTIVES_SAMPLES = 6_000;
/** The region the near-joint distances are measured over: a ball of this many times the joint's depth. */
export const JOINT_REGION_DEPTHS = 4;
/** The ball a joint's volume is measured in: this many times the joint's depth inside the rest surface. */
export const JOINT_BALL_DEPTHS = 2;

export interface CorrectivesOptions {
  /** number of characters */
  procedural: number;
  /** first seed (default CORRECTIVES_SEED_BASE) */
  seed?: number;
  /** skinning method for our weights (default geometric) */
  skinMethod?: string;
  /** methods to compare (default BASELINE_METHODS) */
  methods?: readonly DeformationMethod[];
  /** key poses and angles (default all, 45° and 90°) */
  poses?: readonly KeyPose[];
  degrees?: readonly number[];
  targetVertices?: number;
  /**
   * angles whose exact surfaces are handed, for every key pose measured, as posed examples to the methods that learn
   * from them (DeformationMethod.prepare); every other angle is held out for them. Default none.
   */
  exampleDegrees?: readonly number[];
  log?: (line: string) => void;
}

/** One method's figures on one character at one pose (null where not measured). */
export interface PoseScores {
  /**
   * near the pose's joint (samples of either surface within JOINT_REGION_DEPTHS joint depths of the posed joint, to
   * the whole other surface; the whole body at rest): symmetric Chamfer distance and mean point → surface distance
   * (method → ground truth), shares of the height
   */
  chamfer: number | null;
  pointToSurface: number | null;
  /** the symmetric Chamfer distance over the whole body (share of the height) */
  bodyChamfer: number | null;
  /** whole-body volume lost relative to rest (share; negative: gained) */
  volumeLoss: number;
  /** volume lost in a ball about the pose's joint (share) */
  jointVolumeLoss: number;
  /** smallest ratio of the limb's cross-section area at the pose's section joints to the ground truth's; null if none */
  sectionKept: number | null;
}

export interface CorrectivesResult extends PoseScores {
  character: string;
  /** key pose name, or 'rest' */
  pose: string;
  degrees: number;
  /** method id, or 'truth' for the ground truth's own volume and sections */
  method: string;
}

export interface CorrectivesCharacter {
  name: string;
  seed: number;
  heightMetres: number;
  build: string;
  restPose: string;
  vertices: number;
  groundTruthCell: number;
  /** fit: seconds the methods that learn from examples spent preparing (0 when none) */
  seconds: { build: number; skin: number; groundTruth: number; measure: number; fit: number };
}

export interface CorrectivesReport {
  generator: string;
  seeds: number[];
  skinMethod: string;
  methods: { id: string; label: string }[];
  characters: CorrectivesCharacter[];
  results: CorrectivesResult[];
  /** the angles given as examples (every key pose measured) and the methods that saw them; null when none */
  examples: { degrees: number[]; methods: string[] } | null;
  seconds: number;
}

/** A test character made ready for posing: rest mesh, skeleton, our weights and rest references. */
interface PreparedCharacter {
  info: CorrectivesCharacter;
  plan: ProceduralPlan;
  rest: TriangleMesh;
  heads: Float64Array;
  /** the true skeleton (heads, tails, rolls) */
  skeleton: Skeleton;
  weights: { indices: Uint16Array; weights: Float32Array; influences: number };
  restVolume: number;
  truthRestVolume: number;
  /** per joint index: the ball radius, the rest mesh's and the rest ground truth's volume in it */
  ball: Map<number, { radius: number; depth: number; rest: number; truthRest: number }>;
  /** exact posed surfaces already meshed, by `${pose id} ${degrees}` (an example is measured again at its angle) */
  truths: Map<string, TriangleMesh>;
}

const J = MIXAMO_JOINTS.length;
const jointIndex = (name: MixamoJointName) => MIXAMO_JOINTS.indexOf(name);

/**
 * runCorrectivesEval: options → CorrectivesReport (every character × pose × angle × method, plus the rest pose and
 * the ground truth's own volume rows). Throws what the skinning throws (MODEL_MISSING for a learned method without
 * its model).
 */
export async function runCorrectivesEval(options: CorrectivesOptions): Promise<CorrectivesReport> {
  const t0 = performance.now();
  const log = options.log ?? (() => {});
  const methods = options.methods ?? BASELINE_METHODS;
  const poses = options.poses ?? KEY_POSES;
  const degrees = options.degrees ?? KEY_POSE_DEGREES;
  const first = options.seed ?? CORRECTIVES_SEED_BASE;
  const seeds = Array.from({ length: options.procedural }, (_, i) => first + i);
  const characters: CorrectivesCharacter[] = [];
  const results: CorrectivesResult[] = [];
  for (const seed of seeds) {
    const c = await prepareCharacter(seed, options.targetVertices ?? CORRECTIVES_VERTICES, options.skinMethod ?? 'geometric', poses);
    log(`${c.info.name}: ${c.info.vertices} vertices, ${c.info.build}, ${c.info.restPose}-pose, skinned in ${c.info.seconds.skin.toFixed(1)} s`);
    const learners = methods.filter((m) => m.prepare);
    if (learners.length && options.exampleDegrees?.length) {
      const examples = poses.flatMap((pose) => options.exampleDegrees!.map((d) => posedSurface(c, pose, d)));
      const t = performance.now();
      for (const m of learners) await m.prepare!({ ...queryOf(c), examples });
      c.info.seconds.fit = (performance.now() - t) / 1000;
      log(`${c.info.name}: ${learners.map((m) => m.id).join(', ')} fitted to ${examples.length} examples in ${c.info.seconds.fit.toFixed(1)} s`);
    }
    results.push(...await measurePose(c, null, 0, methods));
    for (const pose of poses) {
      for (const d of degrees) results.push(...await measurePose(c, pose, d, methods));
    }
    log(`${c.info.name}: ground truth ${c.info.seconds.groundTruth.toFixed(1)} s, measuring ${c.info.seconds.measure.toFixed(1)} s`);
    characters.push(c.info);
  }
  return {
    generator: 'procedural-humanoid (bare: clothing that follows several bones stripped)',
    seeds,
    skinMethod: options.skinMethod ?? 'geometric',
    methods: methods.map((m) => ({ id: m.id, label: m.label })),
    characters,
    results,
    examples: options.exampleDegrees?.length && methods.some((m) => m.prepare)
      ? { degrees: [...options.exampleDegrees], methods: methods.filter((m) => m.prepare).map((m) => m.id) }
      : null,
    seconds: (performance.now() - t0) / 1000,
  };
}

/** The character of a seed, skinned with our method on its true skeleton, with its rest references. */
async function prepareCharacter(seed: number, targetVertices: number, skinMethod: string, poses: readonly KeyPose[]): Promise<PreparedCharacter> {
  let t = performance.now();
  const params = bareHumanoidParams(sampleHumanoidParams(seed, targetVertices));
  const plan = planProceduralHumanoid(params);
  const character = buildProceduralHumanoid(params);
  const build = (performance.now() - t) / 1000;
  t = performance.now();
  const skeleton = trueSkeleton(plan);
  const skin = await skinCharacterAsync(character.parts, skeleton, [], { method: skinMethod });
  const skinSeconds = (performance.now() - t) / 1000;
  const mesh = mergeParts(character.parts);
  const influences = skin.objects[0].influences;
  const indices = new Uint16Array((mesh.positions.length / 3) * influences);
  const weights = new Float32Array(indices.length);
  skin.objects.forEach((o, p) => { indices.set(o.indices, mesh.partOffsets[p] * influences); weights.set(o.weights, mesh.partOffsets[p] * influences); });
  const heads = new Float64Array(J * 3);
  plan.joints.forEach((j, i) => heads.set(j, 3 * i));
  const rest = { positions: mesh.positions, triangles: mesh.triangles };
  // the body's own cell: the common cell, capped where wrists and ankles need finer ones
  const cell = GROUND_TRUTH_CELL_SHARE * Math.min(character.meta.cellMetres as number, plan.plans[0].maxCell);
  t = performance.now();
  const truthRest = merged(posedPlanSurface(plan, identityRotations(), cell).parts);
  const truthSeconds = (performance.now() - t) / 1000;
  // a joint's ball: JOINT_BALL_DEPTHS times how deep the joint lies inside the rest surface
  const grid = buildTriangleGrid(rest.positions, rest.triangles);
  const ball = new Map<number, { radius: number; depth: number; rest: number; truthRest: number }>();
  for (const pose of poses) {
    const j = jointIndex(pose.joint);
    if (ball.has(j)) continue;
    const centre = heads.subarray(3 * j, 3 * j + 3);
    const depth = surfaceDistances(grid, Float32Array.from(centre))[0];
    const radius = JOINT_BALL_DEPTHS * depth;
    ball.set(j, { radius, depth, rest: volumeInBall(rest.positions, rest.triangles, centre, radius), truthRest: volumeInBall(truthRest.positions, truthRest.triangles, centre, radius) });
  }
  return {
    info: {
      name: `procedural-${seed}`, seed, heightMetres: params.heightMetres, build: params.build, restPose: params.pose,
      vertices: mesh.positions.length / 3, groundTruthCell: cell,
      seconds: { build, skin: skinSeconds, groundTruth: truthSeconds, measure: 0, fit: 0 },
    },
    plan, rest, heads, skeleton, weights: { indices, weights, influences },
    restVolume: signedVolume(rest.positions, rest.triangles),
    truthRestVolume: signedVolume(truthRest.positions, truthRest.triangles),
    ball,
    truths: new Map(),
  };
}

/** The exact surface of a key pose at an angle on the character (meshed once, then kept). */
function posedSurface(c: PreparedCharacter, pose: KeyPose, degrees: number): PosedSurface {
  const rotations = keyPoseRotations(pose, c.heads, degrees);
  const key = `${pose.id} ${degrees}`;
  if (!c.truths.has(key)) {
    const t = performance.now();
    c.truths.set(key, merged(posedPlanSurface(c.plan, rotations, c.info.groundTruthCell).parts));
    c.info.seconds.groundTruth += (performance.now() - t) / 1000;
  }
  return { pose, degrees, rotations, transforms: poseTransforms(c.heads, MIXAMO_PARENT_INDICES, rotations), target: c.truths.get(key)! };
}

/** What every method may read of the character, whatever the pose. */
function queryOf(c: PreparedCharacter) {
  return { rest: c.rest.positions, triangles: c.rest.triangles, ...c.weights, skeleton: c.skeleton, heads: c.heads, parents: MIXAMO_PARENT_INDICES };
}

function identityRotations(): Float64Array {
  const r = new Float64Array(J * 9);
  for (let j = 0; j < J; j++) { r[9 * j] = 1; r[9 * j + 4] = 1; r[9 * j + 8] = 1; }
  return r;
}

function merged(parts: { name: string; positions: Float32Array; triangles: Uint32Array }[]): TriangleMesh {
  const m = mergeParts(parts);
  return { positions: m.positions, triangles: m.triangles };
}

/** Applies a 3x4 transform (row-major, at offset o of t) to a point, or only its rotation to a direction. */
function apply(t: Float64Array, o: number, p: ArrayLike<number>, direction = false): Vec3 {
  const w = direction ? 0 : 1;
  return [0, 1, 2].map((r) => t[o + r * 4] * p[0] + t[o + r * 4 + 1] * p[1] + t[o + r * 4 + 2] * p[2] + w * t[o + r * 4 + 3]) as Vec3;
}

/**
 * A section joint's posed plane: through the posed joint, its normal the bisector of the posed bone into the joint
 * and the posed bone out of it (a hand, which has no child joint, continues its forearm).
 */
function sectionPlane(heads: Float64Array, transforms: Float64Array, joint: number): { point: Vec3; normal: Vec3 } {
  const parent = MIXAMO_PARENT_INDICES[joint];
  const child = MIXAMO_PARENT_INDICES.indexOf(joint);
  const h = (j: number) => heads.subarray(3 * j, 3 * j + 3);
  const into = [0, 1, 2].map((a) => h(joint)[a] - h(parent)[a]);
  const out = child >= 0 ? [0, 1, 2].map((a) => h(child)[a] - h(joint)[a]) : into;
  const unit = (v: Vec3) => { const l = Math.hypot(...v) || 1; return v.map((x) => x / l) as Vec3; };
  const a = unit(apply(transforms, parent * 12, into, true)), b = unit(apply(transforms, joint * 12, out, true));
  return { point: apply(transforms, joint * 12, h(joint)), normal: unit([a[0] + b[0], a[1] + b[1], a[2] + b[2]]) };
}

/** Every method (and the ground truth's own volume) on one character at one pose (null: rest). */
async function measurePose(c: PreparedCharacter, pose: KeyPose | null, degrees: number, methods: readonly DeformationMethod[]): Promise<CorrectivesResult[]> {
  let rotations: Float64Array, transforms: Float64Array, truth: TriangleMesh;
  if (pose) ({ rotations, transforms, target: truth } = posedSurface(c, pose, degrees));
  else {
    rotations = identityRotations();
    transforms = poseTransforms(c.heads, MIXAMO_PARENT_INDICES, rotations);
    const t0 = performance.now();
    truth = merged(posedPlanSurface(c.plan, rotations, c.info.groundTruthCell).parts);
    c.info.seconds.groundTruth += (performance.now() - t0) / 1000;
  }
  c.truths.delete(pose ? `${pose.id} ${degrees}` : '');
  const t = performance.now();
  const H = c.info.heightMetres;
  const truthGrid = buildTriangleGrid(truth.positions, truth.triangles);
  const joint = pose ? jointIndex(pose.joint) : -1;
  const ball = joint >= 0 ? c.ball.get(joint)! : null;
  const ballCentre = joint >= 0 ? apply(transforms, joint * 12, c.heads.subarray(3 * joint, 3 * joint + 3)) : null;
  const planes = (pose?.sections ?? []).map((name) => sectionPlane(c.heads, transforms, jointIndex(name)));
  const truthSections = planes.map((p) => crossSectionArea(truth.positions, truth.triangles, p.point, p.normal));
  const key = { character: c.info.name, pose: pose ? pose.name : 'rest', degrees };
  const out: CorrectivesResult[] = [];
  const query: PoseQuery = { ...queryOf(c), rotations, transforms, pose, degrees };
  for (const method of methods) {
    const positions = await method.deform(query);
    const mesh = { positions, triangles: c.rest.triangles };
    const toTruth = meanPointToSurface(mesh, truthGrid, CORRECTIVES_SAMPLES, 1);
    const methodGrid = buildTriangleGrid(positions, c.rest.triangles);
    const toMethod = meanPointToSurface(truth, methodGrid, CORRECTIVES_SAMPLES, 2);
    let nearTruth = toTruth, nearMethod = toMethod;
    if (ball && ballCentre) {
      const region = JOINT_REGION_DEPTHS * ball.depth;
      nearTruth = meanPointToSurface({ positions, triangles: trianglesNear(positions, c.rest.triangles, ballCentre, region) }, truthGrid, CORRECTIVES_SAMPLES, 3);
      nearMethod = meanPointToSurface({ positions: truth.positions, triangles: trianglesNear(truth.positions, truth.triangles, ballCentre, region) }, methodGrid, CORRECTIVES_SAMPLES, 4);
    }
    const kept = planes.map((p, i) => crossSectionArea(positions, c.rest.triangles, p.point, p.normal) / truthSections[i]);
    out.push({
      ...key, method: method.id,
      chamfer: (nearTruth + nearMethod) / 2 / H,
      pointToSurface: nearTruth / H,
      bodyChamfer: (toTruth + toMethod) / 2 / H,
      volumeLoss: volumeLoss(signedVolume(positions, c.rest.triangles), c.restVolume),
      jointVolumeLoss: ball && ballCentre ? volumeLoss(volumeInBall(positions, c.rest.triangles, ballCentre, ball.radius), ball.rest) : 0,
      sectionKept: kept.length ? Math.min(...kept) : null,
    });
  }
  out.push({
    ...key, method: 'truth', chamfer: null, pointToSurface: null, bodyChamfer: null,
    volumeLoss: volumeLoss(signedVolume(truth.positions, truth.triangles), c.truthRestVolume),
    jointVolumeLoss: ball && ballCentre ? volumeLoss(volumeInBall(truth.positions, truth.triangles, ballCentre, ball.radius), ball.truthRest) : 0,
    sectionKept: planes.length ? 1 : null,
  });
  c.info.seconds.measure += (performance.now() - t) / 1000;
  return out;
}
