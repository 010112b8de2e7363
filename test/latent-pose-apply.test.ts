/**
 * The apply path of Apply Latent Pose (sidecar/pose/applyLatentPose.ts) and its geometry: kNN over anchors, carrying
 * anchor displacements to every vertex, the pose library, and the options' checks.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SeededRandom } from '../sidecar/data/seededRandom.js';
import { nearestNeighbours } from '../sidecar/geometry/nearestNeighbours.js';
import { checkPoseOptions } from '../sidecar/pose/applyLatentPose.js';
import { carryDisplacements } from '../sidecar/pose/carryDisplacements.js';
import { latentDelta, readPoseLibrary, type PoseLibrary } from '../sidecar/pose/poseLibrary.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('nearestNeighbours', () => {
  it('agrees with brute force on clustered and spread points, with and without the query itself', () => {
    const random = new SeededRandom(3);
    const P = 700;
    const points = new Float32Array(P * 3);
    for (let i = 0; i < P; i++) {
      // a thin curved sheet plus a tight cluster: uneven density, as anchors on a body are
      const cluster = i % 5 === 0;
      const u = random.next(), v = random.next();
      points.set(cluster ? [0.3 + 0.01 * random.normal(), 0.2 + 0.01 * random.normal(), 0.01 * random.normal()] : [u, v, 0.2 * Math.sin(3 * u)], 3 * i);
    }
    const queries = new Float32Array(200 * 3).map(() => random.range(-0.2, 1.2));
    for (const [q, skipSelf] of [[queries, false], [points, true]] as const) {
      const k = 7;
      const got = nearestNeighbours(points, q, k, skipSelf);
      for (let i = 0; i < q.length / 3; i++) {
        const all = Array.from({ length: P }, (_, j) => ({ j, d: Math.hypot(points[3 * j] - q[3 * i], points[3 * j + 1] - q[3 * i + 1], points[3 * j + 2] - q[3 * i + 2]) }))
          .filter(({ j }) => !(skipSelf && j === i))
          .sort((a, b) => a.d - b.d || a.j - b.j)
          .slice(0, k);
        expect(Array.from(got.indices.slice(i * k, i * k + k))).toEqual(all.map((x) => x.j));
        all.forEach((x, n) => expect(got.distances[i * k + n]).toBeCloseTo(x.d, 5));
      }
    }
  });

  it('pads with −1 when there are fewer points than k', () => {
    const got = nearestNeighbours(Float32Array.of(0, 0, 0, 1, 0, 0), Float32Array.of(0.9, 0, 0), 3);
    expect(Array.from(got.indices)).toEqual([1, 0, -1]);
    expect(got.distances[2]).toBe(Infinity);
  });
});

describe('carryDisplacements', () => {
  /** Two parallel sheets 1 cm apart facing each other (an arm hanging against the ribs): anchors on both. */
  function sheets() {
    const n = 20;
    const pos: number[] = [], nrm: number[] = [];
    for (const [x, nx] of [[0, 1], [0.01, -1]] as const) {
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
        pos.push(x, i * 0.02, j * 0.02);
        nrm.push(nx, 0, 0);
      }
    }
    return { positions: Float32Array.from(pos), normals: Float32Array.from(nrm), perSheet: n * n };
  }

  it('moves each vertex with the anchors of its own surface, never across a narrow gap', () => {
    const { positions, normals, perSheet } = sheets();
    // every 3rd vertex is an anchor; the second sheet (the arm) moves 5 cm along +y, the first stays
    const pick = Array.from({ length: positions.length / 3 }, (_, i) => i).filter((i) => i % 3 === 0);
    const anchors = Float32Array.from(pick.flatMap((i) => [...positions.subarray(3 * i, 3 * i + 3)]));
    const anchorNormals = Float32Array.from(pick.flatMap((i) => [...normals.subarray(3 * i, 3 * i + 3)]));
    const displacements = Float32Array.from(pick.flatMap((i) => (i >= perSheet ? [0, 0.05, 0] : [0, 0, 0])));
    const motion = carryDisplacements(positions, normals, anchors, anchorNormals, displacements);
    for (let v = 0; v < perSheet; v++) expect(Math.abs(motion[3 * v + 1])).toBeLessThan(1e-9);
    for (let v = perSheet; v < 2 * perSheet; v++) expect(motion[3 * v + 1]).toBeCloseTo(0.05, 6);
    // with normals ignored (all agreeing), motion would leak across: the test would catch a broken normal rule
    const leaky = carryDisplacements(positions, new Float32Array(normals.length).map((_, i) => (i % 3 === 0 ? 1 : 0)), anchors,
      new Float32Array(anchorNormals.length).map((_, i) => (i % 3 === 0 ? 1 : 0)), displacements);
    expect(Math.max(...Array.from({ length: perSheet }, (_, v) => leaky[3 * v + 1]))).toBeGreaterThan(0.01);
  });

  it('reproduces a smooth displacement field between anchors', () => {
    const { positions, normals } = sheets();
    const field = (y: number, z: number) => [0.1 * y, 0, 0.05 * z];
    const pick = Array.from({ length: positions.length / 3 }, (_, i) => i).filter((i) => i % 2 === 0);
    const anchors = Float32Array.from(pick.flatMap((i) => [...positions.subarray(3 * i, 3 * i + 3)]));
    const anchorNormals = Float32Array.from(pick.flatMap((i) => [...normals.subarray(3 * i, 3 * i + 3)]));
    const displacements = Float32Array.from(pick.flatMap((i) => field(positions[3 * i + 1], positions[3 * i + 2])));
    const motion = carryDisplacements(positions, normals, anchors, anchorNormals, displacements);
    let worst = 0;
    for (let v = 0; v < positions.length / 3; v++) {
      const want = field(positions[3 * v + 1], positions[3 * v + 2]);
      worst = Math.max(worst, Math.hypot(motion[3 * v] - want[0], motion[3 * v + 1] - want[1], motion[3 * v + 2] - want[2]));
    }
    // anchors 2 cm apart, a field changing 2 mm per 2 cm: the blend errs by a fraction of that
    expect(worst).toBeLessThan(0.002);
  });
});

describe('the pose library and the options', () => {
  const L = 4;
  const library: PoseLibrary = {
    format: 'autorig-latent-pose-library/1', latentSize: L, knn: 8, variants: ['skinning', 'corrective', 'skinningCorrective'],
    poses: {
      elbowBentLf: {
        skinningCorrective: {
          mean: [1, 0, 0, 0],
          identities: [
            { identity: 'tall', muNeutral: [5, 0, 0, 0], delta: [0.9, 0.1, 0, 0] },
            { identity: 'short', muNeutral: [-5, 0, 0, 0], delta: [1.1, -0.1, 0, 0] },
          ],
        },
      },
    },
  };

  it('gives the mean delta, or the delta of the identity nearest the character', () => {
    expect(Array.from(latentDelta(library, 'elbowBentLf', 'skinningCorrective', 'mean', new Float32Array(L)).delta)).toEqual([1, 0, 0, 0]);
    const near = latentDelta(library, 'elbowBentLf', 'skinningCorrective', 'nearest', Float32Array.of(-4, 0, 0, 0));
    expect(near.identity).toBe('short');
    expect(Array.from(near.delta)).toEqual([1.1, -0.1, 0, 0].map((x) => Math.fround(x)));
    expect(() => latentDelta(library, 'kneeBentRt', 'skinningCorrective', 'mean', new Float32Array(L))).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
  });

  it('refuses a missing or damaged library with model codes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'autorig-lib-'));
    dirs.push(dir);
    expect(() => readPoseLibrary(join(dir, 'none.json'))).toThrow(expect.objectContaining({ code: 'MODEL_MISSING' }));
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...library, poses: { x: { skinning: { mean: [1, 2], identities: [] } } } }));
    expect(() => readPoseLibrary(join(dir, 'bad.json'))).toThrow(expect.objectContaining({ code: 'MODEL_FAILED' }));
    writeFileSync(join(dir, 'nan.json'), '{"format": "autorig-latent-pose-library/1", "latentSize": 1, "knn": 1, "poses": {"x": {"s": {"mean": [null]}}}}');
    expect(() => readPoseLibrary(join(dir, 'nan.json'))).toThrow(expect.objectContaining({ code: 'MODEL_FAILED' }));
    writeFileSync(join(dir, 'good.json'), JSON.stringify(library));
    expect(readPoseLibrary(join(dir, 'good.json')).latentSize).toBe(L);
  });

  it('checks pose, strength and strategy with BAD_REQUEST, and fills the defaults', () => {
    expect(checkPoseOptions({ pose: 'kneeBentRt' })).toEqual({ pose: 'kneeBentRt', strength: 1, strategy: 'mean' });
    expect(checkPoseOptions({ pose: 'elbowBentLf+kneeBentRt', strength: 1.5, strategy: 'nearest' }).strength).toBe(1.5);
    for (const bad of [{ pose: 'moonwalk' }, { pose: 'kneeBentRt', strength: 1.6 }, { pose: 'kneeBentRt', strength: -0.1 }, { pose: 'kneeBentRt', strength: Number.NaN }, { pose: 'kneeBentRt', strategy: 'median' as never }]) {
      expect(() => checkPoseOptions(bad)).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    }
  });
});
