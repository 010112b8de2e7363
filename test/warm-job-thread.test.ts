/**
 * The sidecar warms a job thread at start-up (sidecar/server/warmJobThread.ts): it poses the demo character on one
 * thread, which the queue keeps for the user's first request; the warm-up steps aside when a real job comes, and
 * stops when the server closes. The jobs are real: Apply Latent Pose with the committed models, geometric rigs. A
 * whole warm-up is WARM_UP_JOBS (6) demo applies, about 3 s on an idle 2-core machine: those tests allow a minute.
 */
import { describe, expect, it } from 'vitest';
import { serve } from '../sidecar/server/serve.js';
import { warmJobThread, warmUpJob, WARM_UP_JOBS } from '../sidecar/server/warmJobThread.js';
import type { RigResult } from '../sidecar/types.js';
import { makeHumanoid } from './fixtures/humanoid.js';
import { queuesClosedAfterEach, submitRig, waitFor } from './fixtures/jobQueue.js';

describe('warming a job thread at start-up', () => {
  const newQueue = queuesClosedAfterEach();

  it('poses the demo character on one thread, which the next job then runs on', async () => {
    const queue = newQueue(2);
    const report = await warmJobThread(queue).done;
    expect(report).toMatchObject({ jobs: WARM_UP_JOBS, failures: [], stoppedFor: null });
    expect(queue.threads).toEqual({ idle: 1, started: 1 });
    const answer = await submitRig(queue).answer;
    expect('result' in answer, JSON.stringify(answer).slice(0, 200)).toBe(true);
    const w = (answer as { result: RigResult }).result.objects[0].weights;
    for (let v = 0; v < w.length; v += 4) expect(w[v] + w[v + 1] + w[v + 2] + w[v + 3]).toBeCloseTo(1, 4);
    // the warmed thread ran it: no second thread was started
    expect(queue.threads).toEqual({ idle: 1, started: 1 });
  }, 60_000);

  it('warms with Apply Latent Pose when its models are installed, and each job gets its own copy of the mesh', () => {
    const parts = makeHumanoid({ segments: 10 });
    const a = warmUpJob(parts, true), b = warmUpJob(parts, true);
    expect(a.request).toBe('pose');
    expect(warmUpJob(parts, false).request).toBe('rig');
    // moved to a thread, a job's arrays are detached: two jobs must not share them, nor the caller's
    expect(a.objects[0].positions).not.toBe(b.objects[0].positions);
    expect(a.objects[0].positions).not.toBe(parts[0].positions);
    expect(Array.from(a.objects[0].positions)).toEqual(Array.from(parts[0].positions));
  });

  it('steps aside when a request comes: no further warm-up job, and the request runs next', async () => {
    const queue = newQueue(1);
    const warm = warmJobThread(queue, 3, makeHumanoid({ segments: 10 }));
    await waitFor(() => queue.counts.running === 1, 20_000);
    const request = submitRig(queue).answer;
    expect(queue.counts).toEqual({ running: 1, waiting: 1 });
    const report = await warm.done;
    expect(report.stoppedFor).toBe('a job');
    expect(report.jobs).toBe(1);
    expect('result' in await request).toBe(true);
    // the request ran on the thread the first warm-up job left
    expect(queue.threads).toEqual({ idle: 1, started: 1 });
  });

  it('stop() cancels a running warm-up job and keeps no thread', async () => {
    const queue = newQueue(1);
    const warm = warmJobThread(queue);
    await waitFor(() => queue.counts.running === 1, 20_000);
    warm.stop();
    const report = await warm.done;
    expect(report).toMatchObject({ jobs: 0, stoppedFor: 'close' });
    await waitFor(() => queue.counts.running === 0, 20_000);
    expect(queue.threads.idle).toBe(0);
  });

  it('serve({ warmJobs }) warms at start and logs it; closing during the warm-up ends it', async () => {
    const lines: string[] = [];
    const server = await serve({ port: 0, token: 'warm-test-token-0123456789', warmJobs: true, log: (line) => lines.push(line) });
    const report = await server.warmUp!;
    expect(report).toMatchObject({ jobs: WARM_UP_JOBS, failures: [], stoppedFor: null });
    await waitFor(() => lines.some((line) => line.startsWith('job thread warmed')), 20_000);
    await server.close();

    const early = await serve({ port: 0, token: 'warm-test-token-0123456789', warmJobs: true });
    await early.close();
    expect((await early.warmUp!).stoppedFor).toBe('close');
    const plain = await serve({ port: 0, token: 'warm-test-token-0123456789' });
    expect(plain.warmUp).toBeNull();
    await plain.close();
  }, 60_000);
});
