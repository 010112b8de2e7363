/**
 * Where the learned models live: `models/` of the AutoRig package (committed, each with its model card), or the
 * folder named by AUTORIG_MODELS. Found by climbing from this module to the package root, so it works from the
 * TypeScript sources (tests) and from dist/ alike.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The models the sidecar runs, by name: file names under the models folder. */
export const MODEL_FILES = {
  /** HumanRig's 2D joint predictor (models/joints2d.md) */
  joints2d: 'joints2d.onnx',
  /** HumanRig's joint refinement and skinning network (models/point_rig.md) */
  pointRig: 'point_rig.onnx',
} as const;
export type ModelName = keyof typeof MODEL_FILES;

/** modelsFolder: AUTORIG_MODELS, else the package's models/ folder. */
export function modelsFolder(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AUTORIG_MODELS) return env.AUTORIG_MODELS;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if (JSON.parse(readFileSync(manifest, 'utf8')).name === 'autorig') return join(dir, 'models');
      } catch {
        // not ours; keep climbing
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return join(dirname(fileURLToPath(import.meta.url)), 'models');
    dir = parent;
  }
}

/** modelPath: the file of a model (it may be missing: loadModel then answers MODEL_MISSING). */
export function modelPath(name: ModelName, env: NodeJS.ProcessEnv = process.env): string {
  return join(modelsFolder(env), MODEL_FILES[name]);
}
