/**
 * What the server and a job's worker thread say to each other (structured clone; typed arrays are transferred).
 */
import type { MessagePort } from 'node:worker_threads';
import type { ErrorCode } from '../errors.js';
import type { CorrectiveExample, CorrectiveOptions, CorrectivesPreviewResult, CorrectivesResult } from '../correctives/bakeCorrectives.js';
import type { LatentPosePrepared, LatentPoseResult, LatentPoseReuse, PoseStrategy } from '../pose/applyLatentPose.js';
import type { LockedGroup, MeshPart, PartWeights, RigOptions, RigResult, Skeleton, SkinResult, Vec3 } from '../types.js';

/** The work of one rig, skin, pose.apply, pose.prepare, correctives or correctives.preview request, handed to its thread in a JobMessage. */
export type JobInput =
  | { request: 'rig'; objects: MeshPart[]; options: RigOptions }
  | { request: 'skin'; objects: MeshPart[]; skeleton: Skeleton; locked: LockedGroup[]; options: RigOptions }
  | {
    request: 'pose'; objects: MeshPart[]; pose: string; strength: number; strategy: PoseStrategy;
    /** the mesh's own rig (skeleton + weights per object), when the client sent one; absent: auto-rig */
    rig?: { skeleton: Skeleton; objects: PartWeights[] };
    /** what an earlier apply of exactly this mesh left (the server's PoseReuseCache); copied to the thread, not moved */
    reuse?: LatentPoseReuse;
    /** the direction the character faces, client space (pose.apply.facing; not read with a rig) */
    facing?: Vec3;
  }
  | {
    request: 'pose.prepare'; objects: MeshPart[];
    /** false: the latent and frame only (the applies will bring the mesh's rig) */
    autoRig: boolean;
    /** what the server already knows of exactly this mesh; copied to the thread, not moved */
    reuse?: LatentPoseReuse;
    /** the skeleton the applies will send, and their facing (pose.apply.facing) */
    skeleton?: Skeleton;
    facing?: Vec3;
  }
  | {
    request: 'correctives'; objects: MeshPart[]; skeleton: Skeleton; weights: PartWeights[]; options: CorrectiveOptions;
    /** the character's posed examples to fit to (empty: no fit); rotations #J*9 */
    examples: (CorrectiveExample & { rotations: Float32Array })[];
  }
  | {
    request: 'correctives.preview'; objects: MeshPart[]; skeleton: Skeleton; weights: PartWeights[];
    /** rotations: Float32Array, #J*9 */
    rotations: Float32Array; options: CorrectiveOptions;
  };

/**
 * What a job answers: the pipeline's result for rig/skin, Apply Latent Pose's for pose, prepareLatentPose's for
 * pose.prepare, bakeCorrectives' and previewCorrectives' for the correctives requests.
 */
export type JobResult = RigResult | SkinResult | LatentPoseResult | LatentPosePrepared | CorrectivesResult | CorrectivesPreviewResult;

/** To a job's thread, once per job: the job, and for a job that runs a model, its port to the model host. */
export interface JobMessage {
  type: 'job';
  input: JobInput;
  models?: MessagePort;
}

/** From the worker: any number of progress messages, then exactly one result or error. */
export type JobOutput =
  | { type: 'progress'; stage: string; fraction: number }
  | { type: 'result'; result: JobResult }
  | { type: 'error'; code: ErrorCode; message: string };

/**
 * The ArrayBuffers behind the typed arrays in `arrays`, each once (two views of one buffer would make postMessage
 * throw), skipping SharedArrayBuffers (shared, not transferred).
 */
export function transferables(arrays: ArrayBufferView[]): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const array of arrays) {
    if (array.buffer instanceof ArrayBuffer) buffers.add(array.buffer);
  }
  return [...buffers];
}

/** What a job thread is started with (Worker workerData). */
export interface JobThreadData {
  /** the server has a model host: a job's models come through the port it brings, never a session of the thread's own */
  modelsThroughHost: boolean;
}
