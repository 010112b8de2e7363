/**
 * Pose Correctives (issue 7): per key pose, the rest-space offsets that turn static linear blend skinning into the
 * pose-dependent deformation, for the add-on to bake as shape keys driven by the bone's rotation; and the same
 * offsets for whatever pose the armature is in now (the preview).
 * Methods (the pose-dependent deformation): 'poseDependentDualQuaternion' (the default: dual-quaternion skinning with
 * the learned field's weights at the pose; poseDependentWeights.ts, models/pose_weights.onnx), 'poseDependent' (linear
 * blend skinning with the field's weights, VINECS's own), 'dualQuaternion' (dual-quaternion skinning with the static
 * weights, no model). docs/EVAL.md has the measurements that chose the default.
 */
import { AutoRigError } from '../errors.js';
import { dualQuaternionSkinning } from '../deform/dualQuaternionSkinning.js';
import { poseTransforms, restSkeleton } from '../deform/linearBlendSkinning.js';
import { modelPath } from '../learned/modelFiles.js';
import { loadModel, type ModelSession } from '../learned/onnxSession.js';
import type { MeshPart, PartWeights, ProgressFn, Skeleton, Vec3 } from '../types.js';
import { correctiveOffsets } from './correctiveOffsets.js';
import { keyPoseRotations, keyPoses, KEY_POSE_NAMES, type KeyPoseName } from './keyPoses.js';
import { poseDependentDeformation, type FieldBlend, type StaticSlots } from './poseDependentWeights.js';
import { topFourSlots } from './poseFeatures.js';

/** The pose-dependent deformations a request may name; the first is the default. */
export const CORRECTIVE_METHODS = ['poseDependentDualQuaternion', 'poseDependent', 'dualQuaternion'] as const;
export type CorrectiveMethod = (typeof CORRECTIVE_METHODS)[number];

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

export interface CorrectivesResult {
  keys: CorrectiveKey[];
  method: CorrectiveMethod;
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
 * deformation at that pose.
 * objects: MeshPart[] (rest pose), skeleton: Auto Rig's Mixamo skeleton (same space), weights: PartWeights[] (one per
 * object, same order, indices into skeleton.joints), options, onProgress → CorrectivesResult (keys in keyPoses order).
 * Throws as checkCorrectiveInput, and BAD_SKELETON for a skeleton without the Mixamo joints or a frame.
 */
export async function bakeCorrectives(
  objects: MeshPart[], skeleton: Skeleton, weights: PartWeights[], options: CorrectiveOptions = {}, onProgress: ProgressFn = () => {},
): Promise<CorrectivesResult> {
  const started = performance.now();
  const { method, poses } = checkCorrectiveInput(objects, skeleton, weights, options);
  const keys = keyPoses(skeleton, poses);
  const rest = restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
  const field = await fieldFor(method, weights);
  const out: CorrectiveKey[] = [];
  onProgress('correctives', 0);
  for (const [n, key] of keys.entries()) {
    const rotations = keyPoseRotations(key, skeleton.joints.length);
    const transforms = poseTransforms(rest.heads, rest.parents, rotations);
    const targets = await targetsAtPose(objects, weights, skeleton, rotations, transforms, field);
    out.push({ name: key.name, bone: key.bone, pose: key.pose, axis: key.axis, angle: key.angle, objects: offsetsAtPose(objects, weights, transforms, targets) });
    onProgress('correctives', (n + 1) / keys.length);
  }
  return { keys: out, method, seconds: (performance.now() - started) / 1000 };
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
