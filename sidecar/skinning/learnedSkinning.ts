/**
 * HumanRig's joint refinement and skinning network (models/point_rig.onnx, trained by models/training/
 * train_point_rig.py) in the sidecar: surface points of the canonical mesh and coarse joints in, refined joints and
 * per-point weights out, the weights then carried to every vertex (carryPointWeights.ts).
 */
import { AutoRigError } from '../errors.js';
import { runModel, type ModelSession } from '../learned/onnxSession.js';
import { MIXAMO_JOINTS, MIXAMO_PARENTS } from '../skeleton/mixamoTemplate.js';
import { applyCarryStencil, carryPointWeights, carryPointWeightsToVoxels, CARRY_NEIGHBOURS, SIDE_MARGIN, type CarryOptions, type CarryStencil } from './carryPointWeights.js';
import { sharpenWeights } from './sharpenWeights.js';
import { voxelWeightsToVertices } from './voxelWeightsToVertices.js';
import { farthestPointOrder } from './farthestPointOrder.js';
import { sampleSurface } from './surfaceSamples.js';

/** Points per cloud the network reads: the count it was trained with (models/point_rig.md, "points"). */
export const POINT_RIG_POINTS = 2048;
/**
 * Clouds per run: independent draws of POINT_RIG_POINTS points each, run as one batch. Each cloud is what the network
 * trained on (the density its neighbourhoods expect); together they give the vertices twice the points to blend, and
 * the refined joints are their mean. About 0.25 s of CPU per cloud.
 */
export const POINT_RIG_CLOUDS = 2;
/** The surface points are a pure function of the mesh: the same mesh always gets the same rig. */
export const POINT_RIG_SEED = 5_112_026;
/** HeadTop_End marks where the head ends: never weighted. */
const HEAD_TOP = MIXAMO_JOINTS.indexOf('HeadTop_End');
/** The hips stand on the body's midplane (estimateSkeleton mirrors left and right about them). */
const HIPS = MIXAMO_JOINTS.indexOf('Hips');

export interface PointRigOptions {
  /** points per cloud (a multiple of 16, ≥ 256; default POINT_RIG_POINTS) */
  points?: number;
  /** clouds in the batch (default POINT_RIG_CLOUDS) */
  clouds?: number;
  seed?: number;
}

/** What the network says about a mesh. */
export interface PointRigPrediction {
  /** refined joint heads, canonical, MIXAMO_JOINTS order, the mean over the clouds: Float32Array #23*3 */
  refinedJoints: Float32Array;
  /** every cloud's points, canonical, in the order the network read them: Float32Array #S*3 (S = clouds × points) */
  points: Float32Array;
  /** their weights over MIXAMO_JOINTS: Float32Array #S*23, rows sum to 1, HeadTop_End 0 */
  weights: Float32Array;
  /** typical distance between neighbouring points of all clouds together */
  spacing: number;
  /** seconds spent sampling, ordering and running the network */
  seconds: { sample: number; order: number; model: number };
}

export interface LearnedSkinning {
  /** Float32Array #23*3, as in PointRigPrediction */
  refinedJoints: Float32Array;
  /** top-k joint indices (MIXAMO_JOINTS) per vertex: Uint16Array #V*k */
  indices: Uint16Array;
  /** their weights: Float32Array #V*k, rows sum to 1, HeadTop_End never used */
  weights: Float32Array;
  seconds: { sample: number; order: number; model: number; carry: number };
}

/** The clouds point_rig reads, drawn from the mesh alone (drawPointRigClouds): known before the network runs. */
export interface PointRigClouds {
  /** every cloud's points, canonical, in the order the network reads them: Float32Array #S*3 (S = clouds × points) */
  points: Float32Array;
  /** their face normals: Float32Array #S*3 */
  normals: Float32Array;
  clouds: number;
  /** points per cloud */
  perCloud: number;
  /** typical distance between neighbouring points of all clouds together */
  spacing: number;
  /** seconds spent sampling and ordering */
  seconds: { sample: number; order: number };
}

/**
 * drawPointRigClouds: area-uniform points with face normals on the canonical mesh (surfaceSamples.ts, as the training
 * samples), split into clouds, each in farthest-point order (the first quarter picked, as in training).
 * canonical: Float32Array #V*3, triangles: Uint32Array #T*3 wound outward (prepareMesh's: the normals are read off
 * the winding), options: points, clouds, seed → PointRigClouds
 */
export function drawPointRigClouds(canonical: Float32Array, triangles: Uint32Array, options: PointRigOptions = {}): PointRigClouds {
  const N = options.points ?? POINT_RIG_POINTS;
  const B = options.clouds ?? POINT_RIG_CLOUDS;
  if (N % 16 !== 0 || N < 256) throw new Error(`point_rig reads a multiple of 16 points, at least 256; asked for ${N}`);
  let t = performance.now();
  const lap = () => { const now = performance.now(), s = (now - t) / 1000; t = now; return s; };
  const drawn = sampleSurface(canonical, triangles, B * N, options.seed ?? POINT_RIG_SEED);
  const sample = lap();
  const points = new Float32Array(B * N * 3);
  const normals = new Float32Array(B * N * 3);
  for (let b = 0; b < B; b++) {
    const cloud = drawn.points.subarray(b * N * 3, (b + 1) * N * 3);
    const order = farthestPointOrder(cloud, N / 4);
    for (let i = 0; i < N; i++) {
      const from = (b * N + order[i]) * 3, to = (b * N + i) * 3;
      for (let a = 0; a < 3; a++) {
        points[to + a] = drawn.points[from + a];
        normals[to + a] = drawn.normals[from + a];
      }
    }
  }
  return { points, normals, clouds: B, perCloud: N, spacing: Math.sqrt(drawn.area / (B * N)), seconds: { sample, order: lap() } };
}

/**
 * runPointRig: the clouds run as one batch with the joints.
 * session: point_rig.onnx (inputs points/normals [B, N, 3], joints [B, 23, 3]; outputs refined_joints [B, 23, 3],
 * weights [B, N, 23]), clouds: drawPointRigClouds', joints: Float32Array #23*3 (canonical, MIXAMO_JOINTS order) →
 * PointRigPrediction (its points: the clouds' own array). MODEL_FAILED when the model answers with other shapes.
 */
export async function runPointRig(session: ModelSession, clouds: PointRigClouds, joints: Float32Array): Promise<PointRigPrediction> {
  const J = MIXAMO_JOINTS.length;
  const { clouds: B, perCloud: N, points, normals } = clouds;
  if (joints.length !== J * 3) throw new Error(`point_rig reads ${J} joints, got ${joints.length / 3}`);
  const t = performance.now();
  const batchJoints = new Float32Array(B * J * 3);
  for (let b = 0; b < B; b++) batchJoints.set(joints, b * J * 3);
  const out = await runModel(session, {
    points: { data: points, dims: [B, N, 3] },
    normals: { data: normals, dims: [B, N, 3] },
    joints: { data: batchJoints, dims: [B, J, 3] },
  });
  const model = (performance.now() - t) / 1000;
  const refined = out.refined_joints, weights = out.weights;
  if (!refined || !weights || !sameDims(refined.dims, [B, J, 3]) || !sameDims(weights.dims, [B, N, J])) {
    throw new AutoRigError('MODEL_FAILED', `point_rig answered ${describe(out)}; expected refined_joints [${B}, ${J}, 3] and weights [${B}, ${N}, ${J}]`);
  }
  const r = refined.data as Float32Array, w = weights.data as Float32Array;
  if (!r.every(Number.isFinite) || !w.every(Number.isFinite)) throw new AutoRigError('MODEL_FAILED', 'point_rig answered NaN or infinite values');
  const refinedJoints = new Float32Array(J * 3);
  for (let i = 0; i < J * 3; i++) {
    let sum = 0;
    for (let b = 0; b < B; b++) sum += r[b * J * 3 + i];
    refinedJoints[i] = sum / B;
  }
  return {
    refinedJoints,
    points,
    weights: Float32Array.from(w),
    spacing: clouds.spacing,
    seconds: { ...clouds.seconds, model },
  };
}

/**
 * predictPointRig: drawPointRigClouds, then runPointRig.
 * session: point_rig.onnx, canonical: Float32Array #V*3, triangles: Uint32Array #T*3, joints: Float32Array #23*3
 * (canonical, MIXAMO_JOINTS order), options → PointRigPrediction
 */
export async function predictPointRig(
  session: ModelSession, canonical: Float32Array, triangles: Uint32Array, joints: Float32Array, options: PointRigOptions = {},
): Promise<PointRigPrediction> {
  return runPointRig(session, drawPointRigClouds(canonical, triangles, options), joints);
}

/**
 * predictPointRigWhile: predictPointRig, with the caller's `work` (which needs no prediction, but may read the clouds
 * the network reads) done while the network runs (in the sidecar on the model host's thread) → the prediction and
 * what work returned. A failure of the network is reported by the returned promise, never as an unhandled rejection
 * while work runs; a throw of work's is thrown.
 */
export async function predictPointRigWhile<T>(
  session: ModelSession, canonical: Float32Array, triangles: Uint32Array, joints: Float32Array, options: PointRigOptions,
  work: (clouds: PointRigClouds) => T,
): Promise<{ prediction: PointRigPrediction; during: T }> {
  const clouds = drawPointRigClouds(canonical, triangles, options);
  const predicting = runPointRig(session, clouds, joints);
  predicting.catch(() => {});
  const during = work(clouds);
  return { prediction: await predicting, during };
}

/** How learnedWeights carries a prediction's point weights to the vertices. */
export interface LearnedWeightsOptions {
  influences?: number; neighbours?: number; solid?: CarryOptions['solid']; carry?: 'vertices' | 'voxels'; sharpen?: number;
  /** carry 'voxels': carryStencilToVoxels of the prediction's points, made beforehand (while the network ran) */
  stencil?: CarryStencil;
  onProgress?: (fraction: number) => void;
}

/**
 * learnedSkinning: predictPointRig, then learnedWeights.
 * session: point_rig.onnx, canonical: Float32Array #V*3, triangles: Uint32Array #T*3, joints: Float32Array #23*3
 * (canonical, MIXAMO_JOINTS order: the coarse joints to refine, or a user's skeleton to skin), options:
 * PointRigOptions and LearnedWeightsOptions → LearnedSkinning
 */
export async function learnedSkinning(
  session: ModelSession, canonical: Float32Array, triangles: Uint32Array, joints: Float32Array,
  options: PointRigOptions & LearnedWeightsOptions = {},
): Promise<LearnedSkinning> {
  return learnedWeights(await predictPointRig(session, canonical, triangles, joints, options), canonical, triangles, joints, options);
}

/**
 * learnedWeights: a prediction's point weights carried to every vertex (carryPointWeights: never across a gap in the
 * solid, the other side's joints dropped about the hips' midplane, top-k, rows sum to 1, HeadTop_End never weighted).
 * prediction: predictPointRig's for these arguments, canonical: Float32Array #V*3, triangles: Uint32Array #T*3,
 * joints: Float32Array #23*3 (the joints it was predicted for), options: influences k (default 4), solid (the
 * voxelisation to carry in; default one of its own), carry ('vertices', the default: carryPointWeights; 'voxels':
 * carryPointWeightsToVoxels, then voxelWeightsToVertices; with a stencil, applyCarryStencil instead), sharpen (the exponent of sharpenWeights after the carry;
 * default 1, none), onProgress (from 0.3: the prediction is taken as 0.3 of the work) → LearnedSkinning
 */
export function learnedWeights(
  prediction: PointRigPrediction, canonical: Float32Array, triangles: Uint32Array, joints: Float32Array, options: LearnedWeightsOptions = {},
): LearnedSkinning {
  options.onProgress?.(0.3);
  const t = performance.now();
  const samples = { points: prediction.points, weights: prediction.weights, joints: MIXAMO_JOINTS.length, spacing: prediction.spacing };
  const carryOptions: CarryOptions = {
    influences: options.influences ?? 4,
    neighbours: options.neighbours ?? CARRY_NEIGHBOURS,
    jointSide: oneSidedJoints(joints),
    midline: joints[3 * HIPS],
    noWeight: [HEAD_TOP],
    solid: options.solid,
    onProgress: (f) => options.onProgress?.(0.3 + 0.7 * f),
  };
  let carried: { indices: Uint16Array; weights: Float32Array };
  if (options.carry === 'voxels') {
    const { voxels, grid } = options.stencil
      ? { voxels: applyCarryStencil(options.stencil, samples, carryOptions), grid: options.stencil.grid }
      : carryPointWeightsToVoxels(canonical, triangles, samples, carryOptions);
    carried = voxelWeightsToVertices(canonical, grid, voxels, MIXAMO_JOINTS.length);
  } else {
    carried = carryPointWeights(canonical, triangles, samples, carryOptions);
  }
  sharpenWeights(carried.weights, carryOptions.influences, options.sharpen ?? 1);
  return {
    refinedJoints: prediction.refinedJoints,
    indices: carried.indices,
    weights: carried.weights,
    seconds: { ...prediction.seconds, carry: (performance.now() - t) / 1000 },
  };
}

/**
 * The side of the body each template joint's bone lies on, as voxelBoneWeights reads it: 1 when the joint and the
 * joints its bone reaches (its children) all lie beyond SIDE_MARGIN on +x of the hips (the character's left), -1 on
 * −x, else 0.
 * joints: Float32Array #23*3 canonical, MIXAMO_JOINTS order → Int8Array #23
 */
export function oneSidedJoints(joints: Float32Array): Int8Array {
  const side = new Int8Array(MIXAMO_JOINTS.length);
  const mid = joints[3 * HIPS];
  MIXAMO_JOINTS.forEach((name, j) => {
    const xs = [joints[3 * j] - mid];
    MIXAMO_JOINTS.forEach((child, c) => { if (MIXAMO_PARENTS[child] === name) xs.push(joints[3 * c] - mid); });
    if (xs.every((x) => x > SIDE_MARGIN)) side[j] = 1;
    else if (xs.every((x) => x < -SIDE_MARGIN)) side[j] = -1;
  });
  return side;
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function describe(out: Record<string, { dims: readonly number[] }>): string {
  return Object.entries(out).map(([name, t]) => `${name} [${t.dims.join(', ')}]`).join(', ') || 'nothing';
}
