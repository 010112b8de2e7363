/**
 * The server's job threads are kept warm between jobs (sidecar/server/jobs.ts): a job that answered leaves its thread
 * for the next one, a cancelled or failed-hard job's thread is gone, a job over KEEP_THREAD_MAX_VERTICES is not kept,
 * an idle thread ends after its idle time, and closing the queue ends the idle ones. The jobs are real geometric rigs.
 */
import { Worker, type MessagePort } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { JobMessage, JobOutput, JobThreadData } from '../sidecar/server/jobMessages.js';
import { ModelHost } from '../sidecar/server/modelHost.js';
import { workerEntry } from '../sidecar/server/workerEntry.js';
import { KEEP_THREAD_MAX_VERTICES } from '../sidecar/server/jobs.js';
import type { RigResult } from '../sidecar/types.js';
import { makeHumanoid } from './fixtures/humanoid.js';
import { queuesClosedAfterEach, submitRig, waitFor } from './fixtures/jobQueue.js';

/**
 * Each test runs real rigs one after another: about a second each on an idle machine, and past vitest's 5 s default
 * when the machine is busy (four of them timed out while training data was being generated beside them).
 */
const JOB_TEST_TIMEOUT_MS = 30_000;

describe('job threads kept between jobs', () => {
  // every queue a test makes ends its threads after the test, whatever the test's outcome
  const newQueue = queuesClosedAfterEach();

  it('runs a second job on the thread of the first, each answered with a rig whose weights sum to one', async () => {
    const queue = newQueue(1);
    for (let n = 0; n < 3; n++) {
      const answer = await submitRig(queue).answer;
      expect('result' in answer, JSON.stringify(answer).slice(0, 200)).toBe(true);
      const result = (answer as { result: RigResult }).result;
      expect(result.skeleton.joints.length).toBeGreaterThanOrEqual(22);
      const w = result.objects[0].weights;
      for (let v = 0; v < w.length; v += 4) expect(w[v] + w[v + 1] + w[v + 2] + w[v + 3]).toBeCloseTo(1, 4);
      expect(queue.threads).toEqual({ idle: 1, started: 1 });
    }
    expect(queue.counts).toEqual({ running: 0, waiting: 0 });
    // closing ends the idle thread
    queue.close();
    expect(queue.threads.idle).toBe(0);
  }, JOB_TEST_TIMEOUT_MS);

  it('does not reuse the thread of a cancelled job; the next job gets a new thread and answers', async () => {
    const queue = newQueue(1);
    expect('result' in await submitRig(queue).answer).toBe(true);
    let started: () => void = () => {};
    const running = new Promise<void>((r) => { started = r; });
    const doomed = submitRig(queue, makeHumanoid({ segments: 64 }), () => started());
    await running;
    doomed.cancel();
    await waitFor(() => queue.counts.running === 0);
    expect(queue.threads).toEqual({ idle: 0, started: 1 });
    expect('result' in await submitRig(queue).answer).toBe(true);
    expect(queue.threads).toEqual({ idle: 1, started: 2 });
  }, JOB_TEST_TIMEOUT_MS);

  it('does not keep the thread of a job over KEEP_THREAD_MAX_VERTICES, and answers its error', async () => {
    const queue = newQueue(1);
    const positions = new Float32Array(3 * (KEEP_THREAD_MAX_VERTICES + 1));
    positions[5] = Number.NaN;
    const big = [{ name: 'Big', positions, triangles: Uint32Array.of(0, 1, 2) }];
    const answer = await submitRig(queue, big).answer;
    expect(answer).toMatchObject({ code: 'BAD_NUMBER' });
    await waitFor(() => queue.counts.running === 0);
    expect(queue.threads).toEqual({ idle: 0, started: 1 });
    // a small mesh's error keeps its thread: only the size decides
    const bad = makeHumanoid({ segments: 10 });
    bad[0].positions[0] = Number.NaN;
    expect(await submitRig(queue, bad).answer).toMatchObject({ code: 'BAD_NUMBER' });
    expect(queue.threads).toEqual({ idle: 1, started: 2 });
  }, JOB_TEST_TIMEOUT_MS);

  it('ends a thread left idle past its idle time; the next job starts a new one', async () => {
    const queue = newQueue(1, undefined, 200);
    expect('result' in await submitRig(queue).answer).toBe(true);
    expect(queue.threads.idle).toBe(1);
    await waitFor(() => queue.threads.idle === 0, 5000);
    expect('result' in await submitRig(queue).answer).toBe(true);
    expect(queue.threads).toEqual({ idle: 1, started: 2 });
  }, JOB_TEST_TIMEOUT_MS);

  it('keeps at most one thread per slot, however many jobs ran at once', async () => {
    const queue = newQueue(2);
    const answers = await Promise.all([submitRig(queue), submitRig(queue), submitRig(queue), submitRig(queue)].map((job) => job.answer));
    expect(answers.every((a) => 'result' in a)).toBe(true);
    expect(queue.threads.idle).toBe(2);
    expect(queue.threads.started).toBe(2);
  }, JOB_TEST_TIMEOUT_MS);
});

describe('a job thread of a server with a model host', () => {
  it('never loads a model of its own: without its job\'s port, before a job or between jobs, a model is answered INTERNAL', { timeout: 60_000 }, async () => {
    // onnxruntime loading or running on a job thread that is then terminated (a cancel) aborts the whole process; the
    // queue gives a job that declares models a port to the host, so a load here could only be an undeclared model or
    // work that outlived its job (Apply Latent Pose's encoder branch after its auto-rig failed)
    const entry = workerEntry('jobWorker');
    const workerData: JobThreadData = { modelsThroughHost: true };
    const worker = new Worker(entry.url, { execArgv: entry.execArgv, workerData, stdout: true, stderr: true });
    const host = new ModelHost();
    try {
      const answers: JobOutput[] = [];
      let heard = () => {};
      worker.on('message', (message: JobOutput) => {
        if (message.type === 'progress') return;
        answers.push(message);
        heard();
      });
      const run = (models?: MessagePort): Promise<JobOutput> => {
        const count = answers.length;
        const answered = new Promise<JobOutput>((resolve) => {
          heard = () => {
            if (answers.length > count) resolve(answers[count]);
          };
        });
        // the hybrid rig runs joints2d and point_rig
        const job: JobMessage = { type: 'job', input: { request: 'rig', objects: makeHumanoid({ segments: 10 }), options: { method: 'hybrid' } }, ...(models ? { models } : {}) };
        worker.postMessage(job, models ? [models] : []);
        return answered;
      };
      const refused = { type: 'error', code: 'INTERNAL', message: expect.stringContaining('without a model host') };
      // sent without the port the queue would bring
      expect(await run()).toMatchObject(refused);
      // the next job's port serves, from the host's sessions
      const served = await run(host.connect());
      expect(served.type).toBe('result');
      expect(served.type === 'result' && (served.result as RigResult).skeleton.joints.length).toBe(23);
      const stats = await host.stats();
      expect(stats.loads).toBe(2);
      expect(stats.runs).toBeGreaterThan(0);
      // between jobs, after a job that had a port: refused again, and the host loaded nothing more
      expect(await run()).toMatchObject(refused);
      expect((await host.stats()).loads).toBe(2);
    } finally {
      await worker.terminate();
      await host.close();
    }
  });
});
