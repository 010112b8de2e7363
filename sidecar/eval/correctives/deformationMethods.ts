/**
 * The deformations the correctives eval compares against the exact posed surface, behind one interface so that the
 * pose-dependent skinning is one more DeformationMethod: (i) static linear blend skinning with our weights, (ii)
 * dual-quaternion skinning with the same weights, (iii) the learned pose-dependent weight field (issue 7's VINECS),
 * (iv) weights fitted to posed examples of the character (correctives/fitExampleWeights.ts), which is prepared once
 * per character from the examples the eval hands it.
 */
import { fitExampleWeights, fittedDeformation, type ExampleFit, type ExampleFitOptions } from '../../correctives/fitExampleWeights.js';
import { poseDependentDeformation, poseDependentWeights, type FieldBlend, type StaticSlots } from '../../correctives/poseDependentWeights.js';
import { topFourSlots } from '../../correctives/poseFeatures.js';
import { dualQuaternionSkinning } from '../../deform/dualQuaternionSkinning.js';
import { linearBlendSkinning } from '../../deform/linearBlendSkinning.js';
import type { ModelSession } from '../../learned/onnxSession.js';
import type { Skeleton } from '../../types.js';
import { AutoRigError } from '../../errors.js';
import type { KeyPose } from './keyPoses.js';
import type { TriangleMesh } from './surfaceDistance.js';

/** Everything a method may use to pose one character (the whole character merged into one mesh). */
export interface PoseQuery {
  /** rest positions, Float32Array #V*3 (all parts, part order) */
  rest: Float32Array;
  /** triangles, Uint32Array #T*3 */
  triangles: Uint32Array;
  /** our static weights: top-k rows #V*k into the skeleton's 23 joints (MIXAMO_JOINTS order) */
  indices: Uint16Array;
  weights: Float32Array;
  influences: number;
  /** the character's true skeleton (23 joints, MIXAMO_JOINTS order: heads, tails, rolls) */
  skeleton: Skeleton;
  /** rest joint heads, Float64Array #23*3, and parents, Int32Array #23 */
  heads: Float64Array;
  parents: Int32Array;
  /** the pose: per-joint rotations #23*9 (world axes, relative to rest) and their joint transforms #23*12 */
  rotations: Float64Array;
  transforms: Float64Array;
  /** the key pose and angle (null and 0 at rest) */
  pose: KeyPose | null;
  degrees: number;
}

/** One posed example of a character: a key pose at an angle and its exact surface (no vertex correspondence). */
export interface PosedSurface {
  pose: KeyPose;
  degrees: number;
  /** per-joint rotations #23*9 and transforms #23*12 of the pose */
  rotations: Float64Array;
  transforms: Float64Array;
  target: TriangleMesh;
}

/** A character as a method that learns from examples sees it once, before any pose is measured. */
export type CharacterExamples = Omit<PoseQuery, 'rotations' | 'transforms' | 'pose' | 'degrees'> & { examples: PosedSurface[] };

/** A way to pose a skinned mesh: deform → posed positions, Float32Array #V*3 (the rest's vertex order). */
export interface DeformationMethod {
  /** short id for the JSON (e.g. 'lbs') */
  id: string;
  /** label for the table */
  label: string;
  /** a method that learns from the character's posed examples: called once per character before deform */
  prepare?(character: CharacterExamples): Promise<void>;
  deform(query: PoseQuery): Float32Array | Promise<Float32Array>;
}

/** (i) static linear blend skinning with our weights. */
export const STATIC_LBS: DeformationMethod = {
  id: 'lbs',
  label: 'static LBS',
  deform: (q) => linearBlendSkinning(q.rest, q.indices, q.weights, q.influences, q.transforms),
};

/** (ii) dual-quaternion skinning with the same weights. */
export const DUAL_QUATERNION: DeformationMethod = {
  id: 'dqs',
  label: 'DQS',
  deform: (q) => dualQuaternionSkinning(q.rest, q.indices, q.weights, q.influences, q.transforms),
};

/**
 * (iii) and (iv): the learned pose-dependent weight field (models/pose_weights.onnx) over each vertex's top-4 static
 * influences, blended linearly ('field', VINECS) or as dual quaternions ('fieldDqs', Pose Correctives' default).
 * session: the loaded model, blend → DeformationMethod
 */
export function fieldMethod(session: ModelSession, blend: FieldBlend): DeformationMethod {
  return {
    id: blend === 'linear' ? 'field' : 'fieldDqs',
    label: blend === 'linear' ? 'pose-dependent' : 'pose-dependent + DQS',
    deform: (q) => {
      const slots = topFourSlots(q.indices, q.weights, q.influences);
      return poseDependentDeformation(session, q.rest, slots, q.skeleton, q.rotations, q.transforms, blend);
    },
  };
}

/**
 * (v) weights fitted to the character's posed examples (fitExampleWeights) on top of a base: the learned field's
 * weights at the pose (session) or the static top-4 weights (null), blended as `blend` in the fit and in use.
 * session, blend, options (the fit's) → DeformationMethod whose prepare fits, deform poses with the fit.
 */
export function fittedMethod(session: ModelSession | null, blend: FieldBlend, options: ExampleFitOptions = {}): DeformationMethod {
  let fitted: { rest: Float32Array; slots: StaticSlots; fit: ExampleFit } | null = null;
  // the base weights at a pose: the field's, or the static ones
  const baseAt = async (c: { rest: Float32Array; skeleton: Skeleton }, rotations: Float64Array, slots: StaticSlots) =>
    (session ? poseDependentWeights(session, c.rest, slots, c.skeleton, rotations) : slots.weights);
  const on = session ? 'field' : 'static';
  return {
    id: `fitted${session ? 'Field' : ''}${blend === 'linear' ? '' : 'Dqs'}`,
    label: `fitted on ${on}${blend === 'linear' ? '' : ' + DQS'}`,
    async prepare(c) {
      const slots = topFourSlots(c.indices, c.weights, c.influences);
      const examples = [];
      for (const e of c.examples) examples.push({ rotations: e.rotations, baseWeights: await baseAt(c, e.rotations, slots), target: e.target });
      fitted = { rest: c.rest, slots, fit: fitExampleWeights(c.rest, c.triangles, slots, { heads: c.heads, parents: c.parents }, examples, { ...options, blend }) };
    },
    async deform(q) {
      if (!fitted || fitted.rest !== q.rest) throw new AutoRigError('INTERNAL', 'a fitted method was asked to pose a character it was not prepared for');
      const base = await baseAt(q, q.rotations, fitted.slots);
      return fittedDeformation(q.rest, fitted.slots, fitted.fit.params, { heads: q.heads, parents: q.parents }, q.rotations, base, blend);
    },
  };
}

/** The methods measured by default (the pose-dependent field is added by `--field`). */
export const BASELINE_METHODS: readonly DeformationMethod[] = [STATIC_LBS, DUAL_QUATERNION];
