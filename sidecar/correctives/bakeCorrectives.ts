/**
 * Pose Correctives (issue 7): per key pose, the rest-space offsets that turn static linear blend skinning into the
 * pose-dependent deformation, for the add-on to bake as shape keys driven by the bone's rotation; and the same
 * offsets for whatever pose the armature is in now (the preview).
 * Methods (the pose-dependent deformation): 'poseDependentDualQuaternion' (the default: dual-quaternion skinning with
 * the learned field's weights at the pose; poseDependentWeights.ts, models/pose_weights.onnx), 'poseDependent' (linear
 * blend skinning with the field's weights, VINECS's own), 'dualQuaternion' (dual-quaternion skinning with the static
 * weights, no model). docs/EVAL.md has the measurements that chose the default.
 */
import protocol from '../../shared-schema/protocol.json' with { type: 'json' };
import { AutoRigError } from '../errors.js';
import { CORRECTIVE_METHODS, type CorrectiveMethod } from './correctiveMethods.js';
import { dualQuaternionSkinning } from '../deform/dualQuaternionSkinning.js';
import { linearBlendSkinning, poseTransforms, restSkeleton, type RestSkeleton } from '../deform/linearBlendSkinning.js';
import { modelPath } from '../learned/modelFiles.js';
import { loadModel, type ModelSession } from '../learned/onnxSession.js';
import { mergeParts, type MergedMesh } from '../mesh/mergeParts.js';
import type { MeshPart, PartWeights, ProgressFn, Skeleton, Vec3 } from '../types.js';
import { correctiveOffsets } from './correctiveOffsets.js';
import { fitExampleWeights, fittedDeformation, type ExampleFit, type PosedExample } from './fitExampleWeights.js';
import { keyPoseRotations, keyPoses, KEY_POSE_NAMES, type KeyPoseName } from './keyPoses.js';
import { poseDependentDeformation, poseDependentWeights, type FieldBlend, type StaticSlots } from './poseDependentWeights.js';
import { topFourSlots } from './poseFeatures.js';

export { CORRECTIVE_METHODS, type CorrectiveMethod } from './correctiveMethods.js';

/** options of a correctives request (protocol.json CorrectiveOptions). */
export interface CorrectiveOptions {
  /** the pose-dependent deformation (CORRECTIVE_METHODS; default the first, 'poseDependentDualQuaternion') */
  method?: string;
  /** key pose names to bake (default all: KEY_POSE_NAMES) */
  poses?: string[];
}

/** Rest-space offsets of one object, #V*3 in the count and order of its positions. */
export interface ObjectOffsets {
  name: string;
  offsets: Float32Array;
}

/** One baked key (protocol.json CorrectiveKey). */
export interface CorrectiveKey {
  name: string;
  bone: string;
  pose: KeyPoseName;
  /** unit axis in the bone's rest frame */
  axis: Vec3;
  /** radians */
  angle: number;
  objects: ObjectOffsets[];
}

/**
 * One of the character's posed examples (protocol.json PosedExample): its objects taken together as one surface (any
 * topology, the objects' space and units) and the pose it shows.
 */
export interface CorrectiveExample {
  name: string;
  /** #J*9 over skeleton.joints, correctives.preview's convention (row-major 3x3 per joint, world axes, about the rest head) */
  rotations: ArrayLike<number>;
  objects: MeshPart[];
  /**
   * true: the objects are the character's own (same count, order and vertex counts) at rest with a shape key sculpted
   * on the posed character applied; the example's surface is then those objects posed by linear blend skinning with
   * the bake's weights at the rotations, which is what Blender's Armature modifier showed while the key was sculpted
   */
  shapeKey?: boolean;
}

/** How the fit to the examples went (protocol.json ExampleFitReport). */
export interface ExampleFitReport {
  examples: number;
  /** mean distance from the moving vertices of the posed mesh to the examples with the base weights (objects' units) */
  before: number;
  /** the same after the fit's last step */
  after: number;
  /** the fit's seconds (its base weights included) */
  seconds: number;
}

export interface CorrectivesResult {
  keys: CorrectiveKey[];
  method: CorrectiveMethod;
  /** present only when the request brought examples */
  fit?: ExampleFitReport;
  seconds: number;
}

export interface CorrectivesPreviewResult {
  objects: ObjectOffsets[];
  method: CorrectiveMethod;
  seconds: number;
}

/** Largest departure of RᵀR from I (and of det R from 1) a preview rotation may have. */
const ROTATION_TOLERANCE = 1e-3;

/**
 * The method and poses of a request, checked against the mesh, skeleton and weights it comes with.
 * Throws BAD_REQUEST for an unknown method or pose, an empty pose list, a weights entry named differently from its
 * object, or a negative weight; BAD_ARRAY for weights that do not fit the objects (one entry per object, in order,
 * #V*k values); BAD_INDEX for a weighted joint outside the skeleton; BAD_SKELETON for a skeleton without joints or
 * whose parents do not precede their children.
 * objects: MeshPart[], skeleton, weights: PartWeights[] (same order as objects), options → { method, poses }
 */
export function checkCorrectiveInput(
  objects: MeshPart[], skeleton: Skeleton, weights: PartWeights[], options: CorrectiveOptions = {},
): { method: CorrectiveMethod; poses: KeyPoseName[] } {
  const method = options.method ?? CORRECTIVE_METHODS[0];
  if (!(CORRECTIVE_METHODS as readonly string[]).includes(method)) {
    throw new AutoRigError('BAD_REQUEST', `options.method: unknown corrective method '${printable(method)}' (known: ${CORRECTIVE_METHODS.join(', ')})`);
  }
  const poses = options.poses ?? [...KEY_POSE_NAMES];
  if (poses.length === 0) throw new AutoRigError('BAD_REQUEST', 'options.poses is empty: name at least one key pose, or leave it out for all');
  for (const pose of poses) {
    if (!(KEY_POSE_NAMES as readonly string[]).includes(pose)) {
      throw new AutoRigError('BAD_REQUEST', `options.poses: unknown pose '${printable(pose)}' (known: ${KEY_POSE_NAMES.join(', ')})`);
    }
  }
  if (skeleton.joints.length === 0) throw new AutoRigError('BAD_SKELETON', 'the skeleton has no joints');
  restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
  checkWeightsFit(objects, weights, skeleton.joints.length);
  return { method: method as CorrectiveMethod, poses: poses as KeyPoseName[] };
}

/**
 * One weights entry per object, in order and by name, each #V*k with weighted joints inside the skeleton; else
 * BAD_ARRAY / BAD_REQUEST / BAD_INDEX. Also checks the rig a pose.apply request brings (shared-schema/validate.ts).
 */
export function checkWeightsFit(objects: MeshPart[], weights: PartWeights[], jointCount: number): void {
  if (weights.length !== objects.length) {
    throw new AutoRigError('BAD_ARRAY', `weights has ${weights.length} entries for ${objects.length} objects (one per object, in order)`);
  }
  objects.forEach((part, p) => {
    const entry = weights[p];
    const vertexCount = part.positions.length / 3;
    if (entry.name !== part.name) {
      throw new AutoRigError('BAD_REQUEST', `weights[${p}] is named '${printable(entry.name)}' but objects[${p}] is '${printable(part.name)}'`);
    }
    const k = entry.influences;
    if (!(Number.isInteger(k) && k >= 1) || entry.indices.length !== vertexCount * k || entry.weights.length !== vertexCount * k) {
      throw new AutoRigError('BAD_ARRAY', `weights[${p}] (${printable(part.name)}): ${entry.weights.length} weights and ${entry.indices.length} indices do not fit ${vertexCount} vertices × ${k} influences`);
    }
    for (let i = 0; i < entry.weights.length; i++) {
      const w = entry.weights[i];
      if (!(w >= 0)) throw new AutoRigError('BAD_REQUEST', `weights[${p}].weights[${i}] is ${w}; weights are ≥ 0`);
      if (w > 0 && entry.indices[i] >= jointCount) {
        throw new AutoRigError('BAD_INDEX', `weights[${p}]: vertex ${Math.floor(i / k)} is weighted to joint ${entry.indices[i]}; the skeleton has ${jointCount}`);
      }
    }
  });
}

/**
 * The pose-dependent deformation of every object at a pose: objects and weights (checked), skeleton, the pose's
 * rotations #J*9 and transforms #J*12, field: the learned field prepared by fieldFor, or null for plain dual-quaternion
 * skinning of the static weights → Float32Array #V*3 per object.
 */
async function targetsAtPose(
  objects: MeshPart[], weights: PartWeights[], skeleton: Skeleton, rotations: Float64Array, transforms: Float64Array,
  field: PreparedField | null,
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (const [p, part] of objects.entries()) {
    const { indices, weights: values, influences } = weights[p];
    out.push(field
      ? await poseDependentDeformation(field.session, part.positions, field.slots[p], skeleton, rotations, transforms, field.blend)
      : dualQuaternionSkinning(part.positions, indices, values, influences, transforms));
  }
  return out;
}

/**
 * Per object, the offsets taking static LBS at the pose `transforms` to the pose-dependent deformation `targets`.
 * objects, weights (checked), transforms: Float64Array #J*12 (poseTransforms), targets (targetsAtPose) → ObjectOffsets[]
 */
function offsetsAtPose(objects: MeshPart[], weights: PartWeights[], transforms: Float64Array, targets: Float32Array[]): ObjectOffsets[] {
  return objects.map((part, p) => {
    const { indices, weights: values, influences } = weights[p];
    return { name: part.name, offsets: correctiveOffsets(part.positions, indices, values, influences, transforms, targets[p]) };
  });
}

/** The learned field as a request uses it at every pose: the model, each object's top-4 slots, the blend. */
interface PreparedField {
  session: ModelSession;
  /** per object (objects' order) */
  slots: StaticSlots[];
  blend: FieldBlend;
}

/**
 * The field a method needs, prepared once per request (the slots do not change from pose to pose), or null for
 * 'dualQuaternion'. method, weights (checked) → PreparedField | null. Throws MODEL_MISSING / MODEL_FAILED as loadModel.
 */
async function fieldFor(method: CorrectiveMethod, weights: PartWeights[]): Promise<PreparedField | null> {
  if (method === 'dualQuaternion') return null;
  return {
    session: await loadModel(modelPath('poseWeights')),
    slots: weights.map((w) => topFourSlots(w.indices, w.weights, w.influences)),
    blend: method === 'poseDependent' ? 'linear' : 'dualQuaternion',
  };
}

/**
 * bakeCorrectives: the corrective keys of a character. For each key pose of the skeleton (keyPoses.ts; options.poses
 * picks families), the per-object rest-space offsets that make LBS with `weights` reach the pose-dependent
 * deformation at that pose. With examples (at most limits.maxExamples), the pose-dependent deformation is first fitted
 * to them (fitExampleWeights over all objects merged, progress stage 'fit') and every key reaches the fitted one;
 * result.fit says how the fit went. Without examples (absent or empty) there is no fit and no result.fit.
 * objects: MeshPart[] (rest pose), skeleton: Auto Rig's Mixamo skeleton (same space), weights: PartWeights[] (one per
 * object, same order, indices into skeleton.joints), options, onProgress, examples: CorrectiveExample[]
 * → CorrectivesResult (keys in keyPoses order).
 * Throws as checkCorrectiveInput, BAD_SKELETON for a skeleton without the Mixamo joints or a frame, and for examples as
 * checkExamples.
 */
export async function bakeCorrectives(
  objects: MeshPart[], skeleton: Skeleton, weights: PartWeights[], options: CorrectiveOptions = {}, onProgress: ProgressFn = () => {},
  examples: CorrectiveExample[] = [],
): Promise<CorrectivesResult> {
  const started = performance.now();
  const { method, poses } = checkCorrectiveInput(objects, skeleton, weights, options);
  const keys = keyPoses(skeleton, poses);
  const rest = restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
  const surfaces = checkExamples(examples, skeleton.joints.length, { objects, weights, rest });
  const field = await fieldFor(method, weights);
  const fitted = surfaces.length > 0 ? await fitToExamples(objects, weights, skeleton, rest, surfaces, method, field, onProgress) : null;
  const out: CorrectiveKey[] = [];
  onProgress('correctives', 0);
  for (const [n, key] of keys.entries()) {
    const rotations = keyPoseRotations(key, skeleton.joints.length);
    const transforms = poseTransforms(rest.heads, rest.parents, rotations);
    const targets = fitted
      ? await fittedTargetsAtPose(fitted, objects, skeleton, rest, rotations, field)
      : await targetsAtPose(objects, weights, skeleton, rotations, transforms, field);
    out.push({ name: key.name, bone: key.bone, pose: key.pose, axis: key.axis, angle: key.angle, objects: offsetsAtPose(objects, weights, transforms, targets) });
    onProgress('correctives', (n + 1) / keys.length);
  }
  const seconds = (performance.now() - started) / 1000;
  return fitted ? { keys: out, method, fit: fitted.report, seconds } : { keys: out, method, seconds };
}

/** An example checked: its rotations (Float64Array #J*9, each a rotation) and its objects merged into one surface. */
interface ExampleSurface {
  rotations: Float64Array;
  surface: { positions: Float32Array; triangles: Uint32Array };
}

/**
 * The examples of a bake request, checked: at most limits.maxExamples (TOO_LARGE), rotations as a preview's
 * (BAD_ARRAY for the wrong length, BAD_REQUEST for a matrix that is no rotation), objects that merge into a surface
 * with triangles (mergeParts: EMPTY_MESH, BAD_ARRAY, BAD_INDEX, BAD_NUMBER, TOO_LARGE); a shape-key example's objects
 * match the character's one for one (BAD_ARRAY otherwise) and are posed here by linear blend skinning with its weights.
 * Errors name the example.
 * examples: CorrectiveExample[], jointCount, character: the bake's objects, weights (checked) and rest skeleton
 * → ExampleSurface[] (same order)
 */
export function checkExamples(
  examples: CorrectiveExample[], jointCount: number, character: { objects: MeshPart[]; weights: PartWeights[]; rest: RestSkeleton },
): ExampleSurface[] {
  if (examples.length > protocol.limits.maxExamples) {
    throw new AutoRigError('TOO_LARGE', `${examples.length} examples; the limit is ${protocol.limits.maxExamples}`);
  }
  return examples.map((example, e) => {
    try {
      const rotations = checkRotations(example.rotations, jointCount);
      const parts = example.shapeKey ? shapeKeyPosed(example.objects, character, rotations) : example.objects;
      const { positions, triangles } = mergeParts(parts);
      return { rotations, surface: { positions, triangles } };
    } catch (err) {
      if (err instanceof AutoRigError) throw new AutoRigError(err.code, `examples[${e}] (${printable(example.name)}): ${err.message}`);
      throw err;
    }
  });
}

/**
 * A shape-key example's surface: its objects (the character's, rest + the sculpted key) posed as the Armature
 * modifier poses them, by linear blend skinning with the character's weights at the example's rotations.
 * objects: MeshPart[] (one per character object, same vertex counts), character, rotations: Float64Array #J*9
 * → MeshPart[] posed. Throws BAD_ARRAY when the objects do not match the character's.
 */
function shapeKeyPosed(
  objects: MeshPart[], character: { objects: MeshPart[]; weights: PartWeights[]; rest: RestSkeleton }, rotations: Float64Array,
): MeshPart[] {
  if (objects.length !== character.objects.length) {
    throw new AutoRigError('BAD_ARRAY', `a shape-key example has ${objects.length} objects; the character has ${character.objects.length}`);
  }
  objects.forEach((part, p) => {
    if (part.positions.length !== character.objects[p].positions.length) {
      throw new AutoRigError('BAD_ARRAY', `a shape-key example's objects[${p}] has ${part.positions.length / 3} vertices; the character's has ${character.objects[p].positions.length / 3}`);
    }
  });
  const transforms = poseTransforms(character.rest.heads, character.rest.parents, rotations);
  return objects.map((part, p) => {
    const w = character.weights[p];
    return { name: part.name, positions: linearBlendSkinning(part.positions, w.indices, w.weights, w.influences, transforms), triangles: part.triangles };
  });
}

/** The character fitted to its examples: all objects merged, their slots, the fit, how to blend, the report. */
interface FittedCharacter {
  mesh: MergedMesh;
  /** the merged vertices' top-4 static slots, #V*4 (objects' order) */
  slots: StaticSlots;
  fit: ExampleFit;
  blend: FieldBlend;
  report: ExampleFitReport;
}

/**
 * Fits the pose-dependent weights to the examples once for the whole character (fitExampleWeights on all objects
 * merged, so one example surface serves every object), on top of the method's base: the field's weights at each
 * example's pose, or the static slots for 'dualQuaternion'. Reports progress 'fit' from 0 to 1.
 * objects, weights (checked), skeleton, rest (its RestSkeleton), surfaces (checkExamples), method, field (fieldFor)
 * → FittedCharacter
 */
async function fitToExamples(
  objects: MeshPart[], weights: PartWeights[], skeleton: Skeleton, rest: RestSkeleton, surfaces: ExampleSurface[],
  method: CorrectiveMethod, field: PreparedField | null, onProgress: ProgressFn,
): Promise<FittedCharacter> {
  const started = performance.now();
  onProgress('fit', 0);
  const mesh = mergeParts(objects);
  const parts = field?.slots ?? weights.map((w) => topFourSlots(w.indices, w.weights, w.influences));
  const slots: StaticSlots = { indices: concatenate(parts.map((p) => p.indices), Uint16Array), weights: concatenate(parts.map((p) => p.weights), Float32Array) };
  const posed: PosedExample[] = [];
  for (const { rotations, surface } of surfaces) {
    posed.push({ rotations, baseWeights: await baseWeightsAtPose(objects, skeleton, rotations, field, slots), target: surface });
  }
  const blend: FieldBlend = method === 'poseDependent' ? 'linear' : 'dualQuaternion';
  const fit = fitExampleWeights(mesh.positions, mesh.triangles, slots, rest, posed, { blend }, (fraction) => onProgress('fit', fraction));
  // an empty history: no vertex the weights can move (all rigid); the fit's own convention reads that as distance 0
  const first = fit.history[0]?.forward ?? 0, last = fit.history[fit.history.length - 1]?.forward ?? 0;
  const report = { examples: surfaces.length, before: first, after: last, seconds: (performance.now() - started) / 1000 };
  onProgress('fit', 1);
  return { mesh, slots, fit, blend, report };
}

/**
 * The base weights of the merged character at a pose, #V*4 over the merged slots: the field's at the pose (run object by
 * object, as the bake runs it) or, without a field, the static slots' weights.
 */
async function baseWeightsAtPose(
  objects: MeshPart[], skeleton: Skeleton, rotations: Float64Array, field: PreparedField | null, slots: StaticSlots,
): Promise<Float32Array> {
  if (!field) return slots.weights;
  const parts: Float32Array[] = [];
  for (const [p, part] of objects.entries()) parts.push(await poseDependentWeights(field.session, part.positions, field.slots[p], skeleton, rotations));
  return concatenate(parts, Float32Array);
}

/** The fitted deformation at a pose, split back per object (each #V_p*3, the objects' vertex order). */
async function fittedTargetsAtPose(
  fitted: FittedCharacter, objects: MeshPart[], skeleton: Skeleton, rest: RestSkeleton, rotations: Float64Array, field: PreparedField | null,
): Promise<Float32Array[]> {
  const base = await baseWeightsAtPose(objects, skeleton, rotations, field, fitted.slots);
  const posed = fittedDeformation(fitted.mesh.positions, fitted.slots, fitted.fit.params, rest, rotations, base, fitted.blend);
  const offsets = fitted.mesh.partOffsets;
  return objects.map((_, p) => posed.slice(offsets[p] * 3, offsets[p + 1] * 3));
}

/** The arrays one after another, as one array of their type. */
function concatenate<T extends Float32Array | Uint16Array>(arrays: T[], Type: { new (length: number): T }): T {
  const out = new Type(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) { out.set(a, at); at += a.length; }
  return out;
}

/**
 * previewCorrectives: the offsets for the armature's current pose. rotations: #J*9 (row-major 3x3 per skeleton joint,
 * world axes, relative to rest, about the joint's rest head: poseTransforms' convention), each a rotation.
 * → CorrectivesPreviewResult (objects in the order sent). Throws as checkCorrectiveInput (options.poses is checked
 * but unused), BAD_ARRAY for rotations of the wrong length, BAD_REQUEST for a matrix that is not a rotation, and
 * MODEL_MISSING / MODEL_FAILED for 'poseDependent' without a working field.
 */
export async function previewCorrectives(
  objects: MeshPart[], skeleton: Skeleton, weights: PartWeights[], rotations: ArrayLike<number>, options: CorrectiveOptions = {},
  onProgress: ProgressFn = () => {},
): Promise<CorrectivesPreviewResult> {
  const started = performance.now();
  const { method } = checkCorrectiveInput(objects, skeleton, weights, options);
  const rest = restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
  const turns = checkRotations(rotations, skeleton.joints.length);
  const field = await fieldFor(method, weights);
  onProgress('correctives', 0);
  const transforms = poseTransforms(rest.heads, rest.parents, turns);
  const targets = await targetsAtPose(objects, weights, skeleton, turns, transforms, field);
  const result = offsetsAtPose(objects, weights, transforms, targets);
  onProgress('correctives', 1);
  return { objects: result, method, seconds: (performance.now() - started) / 1000 };
}

/** rotations #J*9 as Float64Array, each 3x3 a proper rotation within ROTATION_TOLERANCE. */
function checkRotations(rotations: ArrayLike<number>, jointCount: number): Float64Array {
  if (rotations.length !== jointCount * 9) {
    throw new AutoRigError('BAD_ARRAY', `rotations has ${rotations.length} numbers; ${jointCount} joints need ${jointCount * 9} (a 3x3 each)`);
  }
  const out = Float64Array.from(rotations);
  for (let j = 0; j < jointCount; j++) {
    const r = out.subarray(j * 9, j * 9 + 9);
    let error = 0;
    for (let a = 0; a < 3; a++) {
      for (let b = 0; b < 3; b++) {
        const product = r[a] * r[b] + r[3 + a] * r[3 + b] + r[6 + a] * r[6 + b];
        error = Math.max(error, Math.abs(product - (a === b ? 1 : 0)));
      }
    }
    const det = r[0] * (r[4] * r[8] - r[5] * r[7]) - r[1] * (r[3] * r[8] - r[5] * r[6]) + r[2] * (r[3] * r[7] - r[4] * r[6]);
    if (!(error <= ROTATION_TOLERANCE) || !(Math.abs(det - 1) <= ROTATION_TOLERANCE)) {
      throw new AutoRigError('BAD_REQUEST', `rotations of joint ${j} are not a rotation (no scale, shear or mirror)`);
    }
  }
  return out;
}

/** A client's text for an error message: control characters shown as '?', cut to 64 characters. */
function printable(text: string): string {
  const clean = String(text).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean;
}
