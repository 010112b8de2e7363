/**
 * Entry of a job thread: it runs the rig, skin, pose.apply, pose.prepare or correctives jobs it is sent, one at a time, and stays
 * for the next one (jobs.ts keeps it warm, or terminates it). The geometric pipeline is synchronous; running it here
 * lets the server stay responsive and stop a job at once (cancel terminates this thread).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { bakeCorrectives, previewCorrectives } from '../correctives/bakeCorrectives.js';
import { AutoRigError } from '../errors.js';
import { refuseLocalSessions, stopUsingModelHost, useModelHost } from '../learned/onnxSession.js';
import { applyLatentPose, prepareLatentPose } from '../pose/applyLatentPose.js';
import { rigCharacterAsync, skinCharacterAsync } from '../pipeline.js';
import { transferables, type JobInput, type JobMessage, type JobOutput, type JobResult, type JobThreadData } from './jobMessages.js';

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
    const { pose, strength, strategy, rig, reuse, facing } = input;
    return applyLatentPose(input.objects, { pose, strength, strategy, rig, reuse, facing }, onProgress);
  }
  if (input.request === 'pose.prepare') {
    const { autoRig, reuse, skeleton, facing } = input;
    return prepareLatentPose(input.objects, { autoRig, reuse, skeleton, facing }, onProgress);
  }
  return skinCharacterAsync(input.objects, input.skeleton, input.locked, input.options, onProgress);
}

/** The typed arrays of a result, to transfer instead of copy. */
function resultArrays(result: JobResult): ArrayBufferView[] {
  // a prepare's answer is kept by the server, copied: μ and the rig's weights are small beside a mesh
  if (!('objects' in result) && !('keys' in result)) return [];
  const objects = 'keys' in result ? result.keys.flatMap((key) => key.objects) : result.objects;
  const arrays = objects.flatMap((part) => ('positions' in part ? [part.positions] : 'offsets' in part ? [part.offsets] : [part.indices, part.weights]));
  return arrays.filter((array) => ArrayBuffer.isView(array));
}

/** One job: its answer (result or error) is posted; the model host's port it came with is closed after it. */
async function serveJob(message: JobMessage, post: (message: JobOutput, transfer?: ArrayBuffer[]) => void): Promise<void> {
  // The thread holds the mesh: the client learns that its job started even before the first stage.
  post({ type: 'progress', stage: 'start', fraction: 0 });
  if (message.models) useModelHost(message.models);
  try {
    const result = await runJob(message.input, post);
    post({ type: 'result', result }, transferables(resultArrays(result)));
  } catch (err) {
    if (err instanceof AutoRigError) post({ type: 'error', code: err.code, message: err.message });
    else post({ type: 'error', code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) });
  } finally {
    if (message.models) stopUsingModelHost();
  }
}

function main(): void {
  const port = parentPort;
  if (!port) throw new Error('jobWorker.ts runs only as a worker thread');
  // the server has a model host: this thread reaches models through it only (JobThreadData)
  if ((workerData as JobThreadData | undefined)?.modelsThroughHost) refuseLocalSessions();
  const post = (message: JobOutput, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  port.on('message', (message: JobMessage) => {
    if (message?.type === 'job') void serveJob(message, post);
  });
}

main();
