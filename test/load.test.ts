/**
 * The sidecar under load, as a child process (`autorig serve` from the sources), measured from the outside:
 * - a cancel storm: hundreds of rig requests from two clients with the same ids, each cancelled at a random moment
 *   (in the same write as the request, before its worker starts, while it runs, after it finished, or never);
 *   every request gets exactly one final reply, no client hears the other's, and a normal rig is then served;
 * - rig jobs in a row on one sidecar: resident memory after job 100 and after the last must not grow by more than a
 *   generous bound (a leak of a worker, its mesh or its listeners per job would blow through it), and no thread is
 *   left behind.
 * The figures (RSS at start, after 100, peak, at the end; seconds per job) are printed for the reliability report.
 * AUTORIG_LOAD_JOBS sets the number of jobs in a row (default 100, 0.7–1.4 s each on two busy cores: the pipeline's
 * cost is flat in the vertex count, so no mesh makes 1000 jobs fit a CI-sized test; 1000 took 12.5 minutes here).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeededRandom } from '../fuzz/random.js';
import { SidecarProcess } from '../fuzz/sidecarProcess.js';
import type { MeshPart } from '../sidecar/types.js';
import { makeHumanoid } from './fixtures/humanoid.js';
import { ProtocolClient } from './fixtures/protocolClient.js';

const TOKEN = 'load-test-token-0123456789abcdef';
const JOBS_IN_A_ROW = Number(process.env.AUTORIG_LOAD_JOBS ?? 100);
/** Where the in-a-row run takes its baseline: after job 100, or half-way in a shorter run (heap and caches warmed up). */
const BASELINE_JOB = Math.min(100, Math.floor(JOBS_IN_A_ROW / 2));
/** A leak shows as growth between the baseline and the end; V8's heap settling stays far below this. */
const LEAK_BOUND_MIB = 50;

type Message = Record<string, unknown>;

/** A part as the wire carries it (a fresh copy each time: nothing is shared between requests). */
function wire(parts: MeshPart[]): Message[] {
  return parts.map((part) => ({ name: part.name, positions: part.positions.slice(), triangles: part.triangles.slice() }));
}

/** Threads of a process (Threads: in /proc/<pid>/status): a worker thread that never ended would show here. */
function threadCount(pid: number): number {
  return Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
}

const mib = (kib: number) => kib / 1024;

/** Check a rig result for a mesh: 23 joints, parents first, one weight row per vertex, sums of 1. */
function expectGoodRig(result: Message, parts: MeshPart[]): void {
  expect(result).toMatchObject({ kind: 'result', request: 'rig' });
  const joints = (result.skeleton as { joints: Array<{ parent: number }> }).joints;
  expect(joints).toHaveLength(23);
  joints.forEach((joint, j) => expect(joint.parent).toBeLessThan(j));
  const objects = result.objects as Array<{ influences: number; weights: Uint8Array }>;
  expect(objects).toHaveLength(parts.length);
  objects.forEach((object, p) => {
    const weights = new Float32Array(new Uint8Array(object.weights).buffer);
    const vertexCount = parts[p].positions.length / 3;
    expect(weights.length).toBe(vertexCount * object.influences);
    for (let v = 0; v < vertexCount; v++) {
      let sum = 0;
      for (let k = 0; k < object.influences; k++) sum += weights[v * object.influences + k];
      expect(Math.abs(sum - 1)).toBeLessThan(1e-4);
    }
  });
}

describe('the sidecar under load', () => {
  let sidecar: SidecarProcess;
  /** The smallest fixture humanoid: the pipeline's cost is flat in the vertex count, so this is as cheap as it gets. */
  const humanoid = makeHumanoid({ segments: 4 });

  beforeAll(async () => {
    sidecar = await SidecarProcess.start(TOKEN);
  }, 60_000);

  afterAll(async () => {
    const status = await sidecar?.stop();
    expect(status).toEqual({ code: 0, signal: null });
    expect(sidecar.outputWatch.sightings, 'the token in the sidecar output').toBe(0);
  });

  it('survives a cancel storm: one final reply per request, no cross-talk, then serves a normal rig', { timeout: 180_000 }, async () => {
    const rng = new SeededRandom(4);
    const clients = [await ProtocolClient.open(sidecar.port, TOKEN), await ProtocolClient.open(sidecar.port, TOKEN)];
    const REQUESTS = 100; // per client, with the same ids on both
    type Policy = 'same-write' | 'soon' | 'random' | 'after-final' | 'never';
    const plan: Array<{ client: ProtocolClient; id: string; policy: Policy }> = [];
    const started = performance.now();
    for (let i = 0; i < REQUESTS; i++) {
      for (const client of clients) {
        const id = `storm-${i}`;
        const policy = rng.weighted<Policy>([['same-write', 25], ['soon', 15], ['random', 50], ['after-final', 5], ['never', 5]]);
        plan.push({ client, id, policy });
        client.send({ kind: 'rig', id, objects: wire(humanoid) });
        if (policy === 'same-write') client.send({ kind: 'cancel', id });
        else if (policy === 'soon') setImmediate(() => client.send({ kind: 'cancel', id }));
        else if (policy === 'random') setTimeout(() => client.send({ kind: 'cancel', id }), rng.float() * 4000);
      }
    }
    // Cancel 'after-final' requests once their result is in; then wait for every request's final reply.
    const cancelledAfter = new Set<string>();
    const allFinal = () => {
      for (const { client, id, policy } of plan) {
        const key = `${clients.indexOf(client)}:${id}`;
        if (policy === 'after-final' && !cancelledAfter.has(key) && client.finals(id).length > 0) {
          client.send({ kind: 'cancel', id });
          cancelledAfter.add(key);
        }
      }
      return plan.every(({ client, id }) => client.finals(id).length > 0);
    };
    await Promise.all(clients.map((client) => client.until(allFinal, 170_000, 'a final reply to every storm request')));
    const stormSeconds = (performance.now() - started) / 1000;
    // Late extras would arrive now: a second final, or progress after the final.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const outcomes: Record<string, number> = {};
    for (const { client, id, policy } of plan) {
      const finals = client.finals(id);
      expect(finals, `${id} (${policy}) must get exactly one final reply`).toHaveLength(1);
      const final = finals[0];
      const outcome = final.kind === 'result' ? 'result' : String(final.code);
      outcomes[`${policy}:${outcome}`] = (outcomes[`${policy}:${outcome}`] ?? 0) + 1;
      if (policy === 'same-write') expect(final, id).toMatchObject({ kind: 'error', code: 'CANCELLED' });
      else if (policy === 'never' || policy === 'after-final') expectGoodRig(final, humanoid);
      else expect(outcome === 'result' || outcome === 'CANCELLED', `${id} (${policy}) ended with ${outcome}`).toBe(true);
      const forId = client.received.filter((m) => m.id === id);
      expect(forId.at(-1), `nothing for ${id} after its final reply`).toBe(final);
    }
    for (const client of clients) expect(client.violations).toEqual([]);

    // A normal rig afterwards, on a fresh connection.
    const fresh = await ProtocolClient.open(sidecar.port, TOKEN);
    fresh.send({ kind: 'rig', id: 'after-storm', objects: wire(humanoid) });
    await fresh.until(() => fresh.finals('after-storm').length > 0, 60_000, 'the rig after the storm');
    expectGoodRig(fresh.finals('after-storm')[0], humanoid);
    for (const client of [...clients, fresh]) client.close();

    const memory = sidecar.memory();
    console.log(
      `[load] cancel storm: ${plan.length} rig requests from 2 clients in ${stormSeconds.toFixed(1)} s; outcomes ${JSON.stringify(outcomes)}; ` +
        `sidecar peak RSS ${mib(memory!.peakKiB).toFixed(1)} MiB, now ${mib(memory!.rssKiB).toFixed(1)} MiB`,
    );
  });

  it(`runs ${JOBS_IN_A_ROW} rig jobs in a row with flat memory and no thread left behind`, { timeout: Math.max(240_000, JOBS_IN_A_ROW * 3000) }, async () => {
    const client = await ProtocolClient.open(sidecar.port, TOKEN);
    const atStart = sidecar.memory()!;
    let atBaseline = atStart;
    const started = performance.now();
    let baselineTime = started;
    let threadsAtBaseline = Number.POSITIVE_INFINITY;
    for (let job = 1; job <= JOBS_IN_A_ROW; job++) {
      const id = `row-${job}`;
      client.send({ kind: 'rig', id, objects: wire(humanoid) });
      await client.until(() => client.finals(id).length > 0, 60_000, `job ${job}`);
      const final = client.finals(id)[0];
      if (job === 1 || job === JOBS_IN_A_ROW) expectGoodRig(final, humanoid);
      else expect(final, id).toMatchObject({ kind: 'result', request: 'rig' });
      // Keep only what the test still needs: the client must not be the thing that grows.
      client.received.length = 0;
      if (job === BASELINE_JOB) {
        // The job's thread ends a moment after its answer; Node's own thread pool has started by now.
        await new Promise((resolve) => setTimeout(resolve, 300));
        threadsAtBaseline = threadCount(sidecar.pid);
        atBaseline = sidecar.memory()!;
        baselineTime = performance.now();
      }
    }
    const seconds = (performance.now() - started) / 1000;
    // Worker threads end a moment after their answer.
    await expect.poll(() => threadCount(sidecar.pid), { timeout: 5000 }).toBeLessThanOrEqual(threadsAtBaseline);
    const atEnd = sidecar.memory()!;
    client.close();
    const growth = mib(atEnd.rssKiB - atBaseline.rssKiB);
    console.log(
      `[load] ${JOBS_IN_A_ROW} rig jobs in a row (${humanoid[0].positions.length / 3} vertices): ${(seconds / JOBS_IN_A_ROW).toFixed(2)} s per job ` +
        `(${((performance.now() - baselineTime) / 1000 / Math.max(1, JOBS_IN_A_ROW - BASELINE_JOB)).toFixed(2)} s after job ${BASELINE_JOB}); ` +
        `RSS ${mib(atStart.rssKiB).toFixed(1)} MiB before, ${mib(atBaseline.rssKiB).toFixed(1)} after job ${BASELINE_JOB}, ` +
        `${mib(atEnd.rssKiB).toFixed(1)} after job ${JOBS_IN_A_ROW} (growth ${growth.toFixed(1)} MiB), peak ${mib(atEnd.peakKiB).toFixed(1)} MiB; ` +
        `threads ${threadsAtBaseline} after job ${BASELINE_JOB}, ${threadCount(sidecar.pid)} at the end`,
    );
    expect(growth, `RSS growth from job ${BASELINE_JOB} to job ${JOBS_IN_A_ROW} (MiB)`).toBeLessThan(LEAK_BOUND_MIB);
  });
});
