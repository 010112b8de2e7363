/**
 * A one-shot command's models on a thread of their own: the sidecar's model host (server/modelHost.ts), started by a
 * command that runs models once and exits (`autorig pose`). onnxruntime-node loads and runs a session synchronously on
 * the thread that asks, so without it the command's own thread would stand still for the provider probe and the
 * loads (about 0.8 s for the pose models here) and for every run. With it the probe runs while the input file is
 * read, the sessions load while the mesh is prepared, and each run overlaps the work the caller does meanwhile
 * (predictPointRigWhile); the results are the same.
 */
import { selectProvider, stopUsingModelHost, useModelHost } from '../learned/onnxSession.js';
import { modelPath, type ModelName } from '../learned/modelFiles.js';
import { ModelHost, type ModelHostStats } from '../server/modelHost.js';

export interface ModelThread {
  /** Start loading these models on the thread now (not awaited: a load that fails is reported where the model runs). */
  warm(names: readonly ModelName[]): void;
  /** What the thread has done so far: models loaded, runs answered. */
  stats(): Promise<ModelHostStats>;
  /** Stop the thread; this thread's loadModel/runModel run locally again. */
  close(): Promise<void>;
}

/**
 * startModelThread: chooses the execution provider (its probe runs in a child process, not on this thread), then
 * starts the model host thread, which inherits the choice, and makes this thread's loadModel/runModel go through it;
 * the `names` models start loading there at once. → the ModelThread, once this thread's model calls go to it. Close
 * it when the command is done (it never keeps the process alive by itself).
 */
export async function startModelThread(names: readonly ModelName[]): Promise<ModelThread> {
  await selectProvider();
  const host = new ModelHost((line) => process.stderr.write(`autorig: ${line}\n`));
  useModelHost(host.connect());
  const warm = (list: readonly ModelName[]) => {
    host.warm(list.map((name) => modelPath(name))).catch(() => {});
  };
  warm(names);
  return {
    warm,
    stats: () => host.stats(),
    close: async () => {
      stopUsingModelHost();
      await host.close();
    },
  };
}
