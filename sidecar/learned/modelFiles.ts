/**
 * Where the learned models live: `models/` of the AutoRig package (committed, each with its model card), or the
 * folder named by AUTORIG_MODELS.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { AutoRigError } from '../errors.js';
import { packageRoot } from '../packageRoot.js';

/** The models the sidecar runs, by name: file names under the models folder. */
export const MODEL_FILES = {
  /** HumanRig's 2D joint predictor (models/joints2d.md) */
  joints2d: 'joints2d.onnx',
  /** HumanRig's joint refinement and skinning network (models/point_rig.md) */
  pointRig: 'point_rig.onnx',
  /** LatentReRig's SDF encoder: SDF samples → latent μ (models/latent_pose_encoder.md) */
  latentPoseEncoder: 'latent_pose_encoder.onnx',
  /** LatentReRig's rig decoder: μ + latent pose delta → joint rotations in their bone frames (models/latent_pose_decoder.md) */
  latentPoseDecoder: 'latent_pose_decoder.onnx',
  /** VINECS's pose-dependent weight field: skeleton-relative features → weights over 4 slots (models/pose_weights.md) */
  poseWeights: 'pose_weights.onnx',
} as const;

/** Data files the models need beside them, by name. */
export const MODEL_DATA_FILES = {
  /** per pose, the training identities' latent deltas and their mean (written by train_latent_pose.py) */
  latentPoseLibrary: 'latent_pose_library.bin',
  /** per pose, the latent path's measured error against the rig-based baseline (written by `autorig eval poses`) */
  latentPoseEval: 'latent_pose_eval.json',
  /** per pose, the share of the DQS corrective Apply Latent Pose adds (written by `autorig eval corrective-share --write`) */
  latentPoseCorrectiveShare: 'latent_pose_corrective_share.json',
} as const;
export type ModelName = keyof typeof MODEL_FILES;

/**
 * The sizes of each model's named (symbolic) input dimensions on the path that runs it most: Apply Latent Pose's
 * auto-rig (one cloud of POINT_RIG_POINTS points; test/model-first-run.test.ts holds them to the constants) and its
 * encoder (POSE_SDF_SAMPLES samples). A session runs once at these sizes as it loads (onnxSession), because
 * onnxruntime's first run at a shape costs far more than the next ones (point_rig 172 against 49 ms, joints2d 24
 * against 11, the encoder 10 against 2.3): the first run at another shape (a rig request's two clouds) pays it as before.
 * A model left out (pose_weights: its size is the mesh's) is not run at load.
 */
export const MODEL_FIRST_RUN_SIZES: Partial<Record<ModelName, Record<string, number>>> = {
  joints2d: { batch: 1 },
  pointRig: { batch: 1, points: 2048 },
  latentPoseEncoder: { batch: 1, samples: 2048 },
  latentPoseDecoder: { batch: 1 },
};

/** modelNameOfFile: the ModelName whose file name is `file` (a basename), or null. */
export function modelNameOfFile(file: string): ModelName | null {
  for (const [name, f] of Object.entries(MODEL_FILES)) if (f === file) return name as ModelName;
  return null;
}

/** modelsFolder: AUTORIG_MODELS, else the package's models/ folder. */
export function modelsFolder(env: NodeJS.ProcessEnv = process.env): string {
  return env.AUTORIG_MODELS || join(packageRoot(), 'models');
}

/** modelPath: the file of a model (it may be missing: loadModel then answers MODEL_MISSING). */
export function modelPath(name: ModelName, env: NodeJS.ProcessEnv = process.env): string {
  return join(modelsFolder(env), MODEL_FILES[name]);
}

/** modelDataPath: a data file of the models (it may be missing). */
export function modelDataPath(name: keyof typeof MODEL_DATA_FILES, env: NodeJS.ProcessEnv = process.env): string {
  return join(modelsFolder(env), MODEL_DATA_FILES[name]);
}

/**
 * requireModelFile: throws AutoRigError MODEL_MISSING when the model file at `path` is not installed (no such file, or
 * not a file); the message names the file. loadModel says the same; a job calls this for every model it will run
 * before it starts work, so that a missing one fails at once even when the sessions load later.
 */
export function requireModelFile(path: string): void {
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw new AutoRigError('MODEL_MISSING', `model ${basename(path)} is not installed (no file ${path})`);
  }
}
