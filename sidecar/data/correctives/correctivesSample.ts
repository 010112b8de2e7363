/**
 * One character of the pose-dependent weight field's training set (issue 7, `autorig data --kind correctives`): a bare
 * procedural humanoid with our static weights on its true skeleton, and for each of its poses the field's features,
 * the pose's bone transforms and samples of the EXACT posed surface (posedHumanoidSurface.ts: every part moved rigidly
 * by its bone and re-meshed). The posed surface has its own topology, so the trainer compares skinned vertices with
 * it without vertex correspondence (nearest samples, point-to-plane).
 *
 * File (binary bundle, sidecar/io/binaryBundle.ts; Python reader models/training/pose_weights/corr_io.py):
 * header { format: 'autorig-correctives/1', name, seed, heightMetres, vertexCount N, surfaceCount M,
 *          poses: [{ keys: key pose names, fractions: share of each key's angle }] (P) }
 *   0 rest         f32 #N*3   a seeded even subsample of the rest mesh's vertices (N = min(vertexCount, used vertices))
 *   1 restNormals  f32 #N*3   their vertex normals
 *   2 indices      u16 #N*4   static slots (topFourSlots: by weight, descending; padded with index 0, weight 0)
 *   3 weights      f32 #N*4   static slot weights, rows sum to 1
 *   per pose p: 4+4p features f32 #N*28 (poseFeatures), 5+4p transforms f32 #23*12 (poseTransforms, row-major 3x4:
 *   posed = Σ_k w_k (A_j p + b_j)), 6+4p surface f32 #M*3 (area-uniform samples of the exact posed surface),
 *   7+4p normals f32 #M*3 (their triangles' outward unit normals)
 */
import { readBundle, writeBundle, type Blob } from '../../io/binaryBundle.js';
import { vertexNormals } from '../../io/normals.js';
import { keyPoseRotations, keyPoses, type KeyPose } from '../../correctives/keyPoses.js';
import { poseFeatures, topFourSlots } from '../../correctives/poseFeatures.js';
import { poseTransforms } from '../../deform/linearBlendSkinning.js';
import { AutoRigError } from '../../errors.js';
import { GROUND_TRUTH_CELL_SHARE } from '../../eval/correctives/runCorrectivesEval.js';
import { mergeParts } from '../../mesh/mergeParts.js';
import { skinCharacterAsync } from '../../pipeline.js';
import { MIXAMO_JOINTS } from '../../skeleton/mixamoTemplate.js';
import { sampleHumanoidParams } from '../procedural/humanoidParams.js';
import { bareHumanoidParams, posedPlanSurface } from '../procedural/posedHumanoidSurface.js';
import { MIXAMO_PARENT_INDICES } from '../../skeleton/mixamoTemplate.js';
import { buildProceduralHumanoid, planProceduralHumanoid } from '../procedural/proceduralHumanoid.js';
import { trueSkeleton } from '../procedural/trueSkeleton.js';
import { SeededRandom } from '../seededRandom.js';

export const CORRECTIVES_SAMPLE_FORMAT = 'autorig-correctives/1';
/** Vertex budget of a training character (the generator's target). */
export const CORRECTIVES_TRAIN_VERTICES = 12_000;
/** Rest vertices kept per character. */
export const CORRECTIVES_VERTEX_COUNT = 4_000;
/** Samples of the exact posed surface per pose. */
export const CORRECTIVES_SURFACE_COUNT = 4_000;
/** Angle shares of the single-key poses and of the two-key poses (uniform in each range). */
export const SINGLE_KEY_FRACTIONS: [number, number] = [0.4, 1.25];
export const PAIR_KEY_FRACTIONS: [number, number] = [0.4, 1.1];
/** Two-key poses per character (two keys on different joints, both turned). */
export const KEY_PAIRS = 3;

/** One pose of a sample: keys (KeyPose names) each turned by its fraction of the key's angle. */
export interface CorrectivesPose {
  keys: string[];
  fractions: number[];
}

export interface CorrectivesSampleHeader {
  format: typeof CORRECTIVES_SAMPLE_FORMAT;
  name: string;
  seed: number;
  heightMetres: number;
  vertexCount: number;
  surfaceCount: number;
  poses: CorrectivesPose[];
}

/** Per pose: the field's features, the bone transforms and the exact posed surface's samples. */
export interface CorrectivesPoseData {
  features: Float32Array;
  transforms: Float32Array;
  surface: Float32Array;
  normals: Float32Array;
}

export interface CorrectivesSample {
  header: CorrectivesSampleHeader;
  rest: Float32Array;
  restNormals: Float32Array;
  indices: Uint16Array;
  weights: Float32Array;
  poses: CorrectivesPoseData[];
  /** seconds spent building, skinning, meshing the posed surfaces and computing the rest (not written) */
  seconds: { build: number; skin: number; groundTruth: number; total: number };
}

export interface CorrectivesSampleOptions {
  /** generator vertex target (default CORRECTIVES_TRAIN_VERTICES) */
  targetVertices?: number;
  /** rest vertices kept (default CORRECTIVES_VERTEX_COUNT) */
  vertexCount?: number;
  /** posed-surface samples per pose (default CORRECTIVES_SURFACE_COUNT) */
  surfaceCount?: number;
  /** the poses (default: drawCorrectivesPoses of the character's keys and the seed) */
  poses?: readonly CorrectivesPose[];
  /** the name written in the header (default procedural-<seed>) */
  name?: string;
}

/**
 * drawCorrectivesPoses: a skeleton's key poses and a seed → every key at a fraction drawn from SINGLE_KEY_FRACTIONS (key
 * order), then KEY_PAIRS pairs of keys on different joints at fractions from PAIR_KEY_FRACTIONS. keys: KeyPose[] (at
 * least two joints) → CorrectivesPose[] (#keys + KEY_PAIRS). A pure function of (keys, seed).
 */
export function drawCorrectivesPoses(keys: readonly KeyPose[], seed: number): CorrectivesPose[] {
  const random = new SeededRandom(seed ^ 0x0c0ffee5);
  const poses: CorrectivesPose[] = keys.map((k) => ({ keys: [k.name], fractions: [random.range(...SINGLE_KEY_FRACTIONS)] }));
  for (let p = 0; p < KEY_PAIRS; p++) {
    const a = random.pick(keys);
    const others = keys.filter((k) => k.joint !== a.joint);
    if (!others.length) throw new AutoRigError('BAD_SKELETON', 'correctives poses: every key turns the same joint, no pair can be made');
    const b = random.pick(others);
    poses.push({ keys: [a.name, b.name], fractions: [random.range(...PAIR_KEY_FRACTIONS), random.range(...PAIR_KEY_FRACTIONS)] });
  }
  return poses;
}

/**
 * The joint rotations of a pose (poseTransforms' convention, #J*9): identity but for each key's joint, turned by its
 * fraction of the key's angle about the key's world axis. Throws BAD_REQUEST for an unknown key name or two keys on
 * one joint (their turns would not compose into one key each).
 */
export function correctivesPoseRotations(pose: CorrectivesPose, keys: readonly KeyPose[], jointCount: number): Float64Array {
  const rotations = keyPoseRotations(keys[0], jointCount, 0);
  const used = new Set<number>();
  pose.keys.forEach((name, i) => {
    const key = keys.find((k) => k.name === name);
    if (!key) throw new AutoRigError('BAD_REQUEST', `correctives pose: no key pose '${name}' on this skeleton`);
    if (used.has(key.joint)) throw new AutoRigError('BAD_REQUEST', `correctives pose: two keys turn the joint of '${name}'`);
    used.add(key.joint);
    rotations.set(keyPoseRotations(key, jointCount, pose.fractions[i]).subarray(key.joint * 9, key.joint * 9 + 9), key.joint * 9);
  });
  return rotations;
}

/**
 * `count` distinct vertices of those some triangle uses, by a seeded shuffle (an even subsample), ascending.
 * triangles: Uint32Array #T*3, vertexCount: #V → Uint32Array #min(count, used)
 */
export function vertexSubsample(triangles: Uint32Array, vertexCount: number, count: number, seed: number): Uint32Array {
  const used = new Uint8Array(vertexCount);
  for (const v of triangles) used[v] = 1;
  const pool: number[] = [];
  for (let v = 0; v < vertexCount; v++) if (used[v]) pool.push(v);
  const random = new SeededRandom(seed);
  const n = Math.min(count, pool.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(random.next() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return Uint32Array.from(pool.slice(0, n)).sort();
}

/**
 * Area-uniform samples of a triangle mesh with their triangles' unit normals (the winding's right-hand normal: outward
 * for the posed surface's meshes). positions #V*3, triangles #T*3, count, seed → { points #count*3, normals #count*3 }.
 * Throws EMPTY_MESH when the mesh has no area.
 */
export function surfaceSamples(positions: Float32Array, triangles: Uint32Array, count: number, seed: number): { points: Float32Array; normals: Float32Array } {
  const T = triangles.length / 3;
  const cumulative = new Float64Array(T);
  const unit = new Float32Array(T * 3);
  let total = 0;
  for (let t = 0; t < T; t++) {
    const a = 3 * triangles[3 * t], b = 3 * triangles[3 * t + 1], c = 3 * triangles[3 * t + 2];
    const ux = positions[b] - positions[a], uy = positions[b + 1] - positions[a + 1], uz = positions[b + 2] - positions[a + 2];
    const vx = positions[c] - positions[a], vy = positions[c + 1] - positions[a + 1], vz = positions[c + 2] - positions[a + 2];
    const nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
    const length = Math.hypot(nx, ny, nz);
    if (length > 0) { unit[3 * t] = nx / length; unit[3 * t + 1] = ny / length; unit[3 * t + 2] = nz / length; }
    total += length / 2;
    cumulative[t] = total;
  }
  if (!(total > 0)) throw new AutoRigError('EMPTY_MESH', 'surface samples: the mesh has no area');
  const random = new SeededRandom(seed);
  const points = new Float32Array(count * 3);
  const normals = new Float32Array(count * 3);
  for (let i = 0; i < count; i++) {
    const target = random.next() * total;
    let lo = 0, hi = T - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (cumulative[mid] <= target) lo = mid + 1; else hi = mid; }
    // uniform in the triangle: (1 − √r1, √r1 (1 − r2), √r1 r2)
    const r1 = Math.sqrt(random.next()), r2 = random.next();
    const wa = 1 - r1, wb = r1 * (1 - r2), wc = r1 * r2;
    const a = 3 * triangles[3 * lo], b = 3 * triangles[3 * lo + 1], c = 3 * triangles[3 * lo + 2];
    for (let k = 0; k < 3; k++) {
      points[3 * i + k] = wa * positions[a + k] + wb * positions[b + k] + wc * positions[c + k];
      normals[3 * i + k] = unit[3 * lo + k];
    }
  }
  return { points, normals };
}

function gather(values: ArrayLike<number>, vertices: Uint32Array, width: number): Float32Array {
  const out = new Float32Array(vertices.length * width);
  vertices.forEach((v, i) => { for (let k = 0; k < width; k++) out[i * width + k] = values[v * width + k]; });
  return out;
}

function gatherIndices(values: Uint16Array, vertices: Uint32Array, width: number): Uint16Array {
  const out = new Uint16Array(vertices.length * width);
  vertices.forEach((v, i) => { for (let k = 0; k < width; k++) out[i * width + k] = values[v * width + k]; });
  return out;
}

/**
 * makeCorrectivesSample: a generator seed → the character's CorrectivesSample (file layout above): bare parameters
 * (clothing that follows several bones stripped: it has no exact posed surface), our geometric weights on the true
 * skeleton, the ground truth meshed at GROUND_TRUTH_CELL_SHARE of the rest body's cell as `autorig eval correctives`
 * does. A pure function of (seed, options) but for `seconds`. Throws what the generator and the skinning throw.
 */
export async function makeCorrectivesSample(seed: number, options: CorrectivesSampleOptions = {}): Promise<CorrectivesSample> {
  const t0 = performance.now();
  const params = bareHumanoidParams(sampleHumanoidParams(seed, options.targetVertices ?? CORRECTIVES_TRAIN_VERTICES));
  const plan = planProceduralHumanoid(params);
  const character = buildProceduralHumanoid(params);
  const build = (performance.now() - t0) / 1000;
  let t = performance.now();
  const skeleton = trueSkeleton(plan);
  const skin = await skinCharacterAsync(character.parts, skeleton, [], { method: 'geometric' });
  const skinSeconds = (performance.now() - t) / 1000;
  const mesh = mergeParts(character.parts);
  const V = mesh.positions.length / 3;
  const influences = skin.objects[0].influences;
  const allIndices = new Uint16Array(V * influences);
  const allWeights = new Float32Array(V * influences);
  skin.objects.forEach((o, p) => { allIndices.set(o.indices, mesh.partOffsets[p] * influences); allWeights.set(o.weights, mesh.partOffsets[p] * influences); });
  const slots = topFourSlots(allIndices, allWeights, influences);

  const kept = vertexSubsample(mesh.triangles, V, options.vertexCount ?? CORRECTIVES_VERTEX_COUNT, seed ^ 0x5eed);
  const rest = gather(mesh.positions, kept, 3);
  const restNormals = gather(vertexNormals(mesh.positions, mesh.triangles), kept, 3);
  const indices = gatherIndices(slots.indices, kept, 4);
  const weights = gather(slots.weights, kept, 4);

  const J = MIXAMO_JOINTS.length;
  const keys = keyPoses(skeleton);
  const posesWanted = options.poses ?? drawCorrectivesPoses(keys, seed);
  const heads = new Float64Array(J * 3);
  plan.joints.forEach((j, i) => heads.set(j, 3 * i));
  const cell = GROUND_TRUTH_CELL_SHARE * Math.min(character.meta.cellMetres as number, plan.plans[0].maxCell);
  const M = options.surfaceCount ?? CORRECTIVES_SURFACE_COUNT;
  let groundTruth = 0;
  const poses = posesWanted.map((pose, p) => {
    const rotations = correctivesPoseRotations(pose, keys, J);
    t = performance.now();
    const truth = mergeParts(posedPlanSurface(plan, rotations, cell).parts);
    groundTruth += (performance.now() - t) / 1000;
    const { points, normals } = surfaceSamples(truth.positions, truth.triangles, M, (seed ^ 0x7a11) + 7919 * (p + 1));
    return {
      features: poseFeatures(rest, indices, weights, skeleton, rotations),
      transforms: Float32Array.from(poseTransforms(heads, MIXAMO_PARENT_INDICES, rotations)),
      surface: points,
      normals,
    };
  });
  return {
    header: {
      format: CORRECTIVES_SAMPLE_FORMAT, name: options.name ?? `procedural-${seed}`, seed, heightMetres: params.heightMetres,
      vertexCount: kept.length, surfaceCount: M, poses: posesWanted.map((p) => ({ keys: [...p.keys], fractions: [...p.fractions] })),
    },
    rest, restNormals, indices, weights, poses,
    seconds: { build, skin: skinSeconds, groundTruth, total: (performance.now() - t0) / 1000 },
  };
}

/** writeCorrectivesSample: a sample → one binary bundle at path (layout above; `seconds` is not written). */
export function writeCorrectivesSample(path: string, sample: CorrectivesSample): void {
  const blobs: Blob[] = [sample.rest, sample.restNormals, sample.indices, sample.weights];
  for (const p of sample.poses) blobs.push(p.features, p.transforms, p.surface, p.normals);
  writeBundle(path, sample.header, blobs);
}

/**
 * readCorrectivesSample: a file written by writeCorrectivesSample → its sample (seconds zero). Throws BAD_REQUEST for a
 * file of another format or with the wrong number of blobs.
 */
export function readCorrectivesSample(path: string): CorrectivesSample {
  const { header, blobs } = readBundle<CorrectivesSampleHeader>(path);
  if (header.format !== CORRECTIVES_SAMPLE_FORMAT || blobs.length !== 4 + 4 * header.poses.length) {
    throw new AutoRigError('BAD_REQUEST', `${path}: not an ${CORRECTIVES_SAMPLE_FORMAT} file`);
  }
  const [rest, restNormals, indices, weights] = blobs as [Float32Array, Float32Array, Uint16Array, Float32Array];
  const poses = header.poses.map((_, p) => {
    const [features, transforms, surface, normals] = blobs.slice(4 + 4 * p, 8 + 4 * p) as Float32Array[];
    return { features, transforms, surface, normals };
  });
  return { header, rest, restNormals, indices, weights, poses, seconds: { build: 0, skin: 0, groundTruth: 0, total: 0 } };
}
