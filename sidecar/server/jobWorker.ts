/**
 * Entry of the worker thread that runs one rig, skin, pose.apply or correctives job. The geometric pipeline is synchronous; running it here lets the
 * server stay responsive and stop a job at once (cancel terminates this thread).
 * The thread ends by itself after posting its one result or error.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { bakeCorrectives, previewCorrectives } from '../correctives/bakeCorrectives.js';
import { AutoRigError } from '../errors.js';
import { useModelHost } from '../learned/onnxSession.js';
import { applyLatentPose } from '../pose/applyLatentPose.js';
import { rigCharacterAsync, skinCharacterAsync } from '../pipeline.js';
import { transferables, type JobInput, type JobOutput, type JobResult, type JobWorkerData } from './jobMessages.js';

/** Run the job described by `input`, reporting progress through `post`. Returns the pipeline's (or pose's) result. */
async function runJob(input: JobInput, post: (message: JobOutput) => void): Promise<JobResult> {
  const onProgress = (stage: string, fraction: number) => post({ type: 'progress', stage, fraction });
  if (input.request === 'rig') return rigCharacterAsync(input.objects, input.options, onProgress);
  if (input.request === 'correctives') {
    return bakeCorrectives(input.objects, input.skeleton, input.weights, input.options, onProgress, input.examples);
  }
  if (input.request === 'correctives.preview') {
    return previewCorrectives(input.objects, input.skeleton, input.weights, input.rotations, input.options, onProgress);
  }
  if (input.request === 'pose') {
    const { pose, strength, strategy, rig, reuse } = input;
    return applyLatentPose(input.objects, { pose, strength, strategy, rig, reuse }, onProgress);
  }
  return skinCharacterAsync(input.objects, input.skeleton, input.locked, input.options, onProgress);
}

/** The typed arrays of a result, to transfer instead of copy. */
function resultArrays(result: JobResult): ArrayBufferView[] {
  const objects = 'keys' in result ? result.keys.flatMap((key) => key.objects) : result.objects;
  const arrays = objects.flatMap((part) => ('positions' in part ? [part.positions] : 'offsets' in part ? [part.offsets] : [part.indices, part.weights]));
  return arrays.filter((array) => ArrayBuffer.isView(array));
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('jobWorker.ts runs only as a worker thread');
  const post = (message: JobOutput, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  // The thread is up and the mesh has arrived: the client learns that its job started even before the first stage.
  post({ type: 'progress', stage: 'start', fraction: 0 });
  const { models, ...input } = workerData as JobWorkerData;
  if (models) useModelHost(models);
  try {
    const result = await runJob(input as JobInput, post);
    post({ type: 'result', result }, transferables(resultArrays(result)));
  } catch (err) {
    if (err instanceof AutoRigError) post({ type: 'error', code: err.code, message: err.message });
    else post({ type: 'error', code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) });
  }
}

void main();
