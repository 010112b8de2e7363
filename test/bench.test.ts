import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readMeshBundle, readRigBundle, writeMeshBundle, writeRigBundle } from '../bench/bundle.js';
import { keyPoseExamples, sharpenedWeights } from '../bench/posedExamples.js';
import { keyPoseRotations, keyPoses } from '../sidecar/correctives/keyPoses.js';
import { linearBlendSkinning, poseTransforms, restSkeleton } from '../sidecar/deform/linearBlendSkinning.js';
import { loadCharacter } from '../sidecar/io/character.js';
import { rigWeights, skeletonFromRig } from '../sidecar/io/rigSkeleton.js';
import { stageRecorder } from '../bench/stageTimes.js';
import { splitLongestEdges, subdivideMidpoints, subdivideUntil, uniqueEdges } from '../bench/subdivide.js';

/** A tetrahedron with outward-facing (counter-clockwise) triangles: V = 4, E = 6, T = 4. */
const tetrahedron = () => ({
  positions: new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]),
  triangles: new Uint32Array([0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3]),
});

/** Directed edge counts: a closed, consistently oriented surface uses each directed edge exactly once, and its twin too. */
function directedEdges(triangles: Uint32Array): Map<string, number> {
  const seen = new Map<string, number>();
  for (let t = 0; t < triangles.length; t += 3) {
    for (let c = 0; c < 3; c++) {
      const key = `${triangles[t + c]}>${triangles[t + ((c + 1) % 3)]}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
  }
  return seen;
}

function expectClosedAndOriented(triangles: Uint32Array): void {
  const edges = directedEdges(triangles);
  for (const [key, count] of edges) {
    expect(count, `directed edge ${key}`).toBe(1);
    const [a, b] = key.split('>');
    expect(edges.get(`${b}>${a}`), `twin of ${key}`).toBe(1);
  }
}

describe('bench/subdivide: welded midpoint subdivision', () => {
  it('counts the unique edges of a tetrahedron', () => {
    const { triangles } = tetrahedron();
    const { ends, ofTriangle } = uniqueEdges(4, triangles);
    expect(ends.length / 2).toBe(6);
    // Every edge is named by exactly two triangle sides.
    const uses = new Array(6).fill(0);
    for (const e of ofTriangle) uses[e]++;
    expect(uses).toEqual([2, 2, 2, 2, 2, 2]);
  });

  it('gives V + E vertices and 4T triangles, with shared midpoints, and stays closed', () => {
    const mesh = tetrahedron();
    const once = subdivideMidpoints(mesh.positions, mesh.triangles);
    expect(once.positions.length / 3).toBe(4 + 6);
    expect(once.triangles.length / 3).toBe(16);
    expect(Array.from(once.positions.subarray(0, 12))).toEqual(Array.from(mesh.positions));
    expectClosedAndOriented(once.triangles);
    // Each new vertex is the midpoint of an original edge, and no two are the same point (welded, not duplicated).
    const midpoints = new Set<string>();
    for (let v = 4; v < 10; v++) midpoints.add(Array.from(once.positions.subarray(3 * v, 3 * v + 3)).join(','));
    expect(midpoints.size).toBe(6);
    expect(midpoints.has('0.5,0,0')).toBe(true);
    expect(midpoints.has('0,0.5,0.5')).toBe(true);

    const twice = subdivideMidpoints(once.positions, once.triangles);
    // E' = 2E + 3T = 24, so V'' = 10 + 24; Euler characteristic V - E + T stays 2.
    expect(twice.positions.length / 3).toBe(34);
    expect(twice.triangles.length / 3).toBe(64);
    expect(34 - uniqueEdges(34, twice.triangles).ends.length / 2 + 64).toBe(2);
    expectClosedAndOriented(twice.triangles);
  });

  it('keeps an open mesh open along its boundary only: two triangles sharing one edge share its midpoint', () => {
    const quad = subdivideMidpoints(new Float32Array([0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0]), new Uint32Array([0, 1, 2, 0, 2, 3]));
    expect(quad.positions.length / 3).toBe(4 + 5);
    const edges = directedEdges(quad.triangles);
    const interior = [...edges.keys()].filter((k) => edges.has(k.split('>').reverse().join('>')));
    // The diagonal's two halves plus the 6 inner edges of the two split triangles, each seen from both sides.
    expect(interior.length).toBe(2 * (2 + 6));
  });

  it('splits exactly the requested number of longest edges, and the surface stays closed, oriented and in place', () => {
    const mesh = subdivideMidpoints(tetrahedron().positions, tetrahedron().triangles);
    const edgeCount = uniqueEdges(10, mesh.triangles).ends.length / 2;
    const area = (p: Float32Array, t: Uint32Array) => {
      let sum = 0;
      for (let i = 0; i < t.length; i += 3) {
        const [a, b, c] = [t[i], t[i + 1], t[i + 2]].map((v) => [p[3 * v], p[3 * v + 1], p[3 * v + 2]]);
        const u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]], w = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        sum += Math.hypot(u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]) / 2;
      }
      return sum;
    };
    for (const count of [0, 1, 5, 13, edgeCount]) {
      const split = splitLongestEdges(mesh.positions, mesh.triangles, count);
      expect(split.positions.length / 3).toBe(10 + count);
      // each split edge adds one triangle on each of its two sides
      expect(split.triangles.length / 3).toBe(16 + 2 * count);
      expectClosedAndOriented(split.triangles);
      expect(area(split.positions, split.triangles)).toBeCloseTo(area(mesh.positions, mesh.triangles), 6);
      expect(Array.from(split.positions.subarray(0, 30))).toEqual(Array.from(mesh.positions));
    }
    // the first split is one of the longest edges: the tetrahedron's slanted face has edges √2/2 long, the others 1/2
    const one = splitLongestEdges(mesh.positions, mesh.triangles, 1);
    const [x, y, z] = one.positions.subarray(30, 33);
    expect(x + y + z).toBeCloseTo(1, 6);
    // all edges split is midpoint subdivision (same vertex set)
    const all = splitLongestEdges(mesh.positions, mesh.triangles, edgeCount);
    const twice = subdivideMidpoints(mesh.positions, mesh.triangles);
    const key = (p: Float32Array) => Array.from({ length: p.length / 3 }, (_, v) => Array.from(p.subarray(3 * v, 3 * v + 3)).join(',')).sort();
    expect(key(all.positions)).toEqual(key(twice.positions));
    expect(() => splitLongestEdges(mesh.positions, mesh.triangles, edgeCount + 1)).toThrow(RangeError);
  });

  it('subdivides every part until the total passes the target', () => {
    const { parts, levels } = subdivideUntil([{ name: 'a', ...tetrahedron() }, { name: 'b', ...tetrahedron() }], 50);
    expect(levels).toBe(2);
    expect(parts.map((p) => p.positions.length / 3)).toEqual([34, 34]);
    expect(parts[0].name).toBe('a');
  });
});

describe('bench hand-off files and stage times', () => {
  it('round-trips a mesh and a rig result through bundle files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'autorig-bench-test-'));
    try {
      const mesh = tetrahedron();
      writeMeshBundle(join(dir, 'm.bin'), [{ name: 'body', ...mesh }, { name: 'hat', positions: new Float32Array([1, 2, 3]), triangles: new Uint32Array(0) }], 'tet', 0);
      const back = readMeshBundle(join(dir, 'm.bin'));
      expect(back.header.source).toBe('tet');
      expect(back.parts.map((p) => p.name)).toEqual(['body', 'hat']);
      expect(Array.from(back.parts[0].positions)).toEqual(Array.from(mesh.positions));
      expect(Array.from(back.parts[0].triangles)).toEqual(Array.from(mesh.triangles));
      expect(Array.from(back.parts[1].positions)).toEqual([1, 2, 3]);

      const skeleton = { joints: [{ name: 'Hips', parent: -1, head: [0, 0, 0] as [number, number, number], tail: [0, 0, 1] as [number, number, number], roll: 0.5 }] };
      writeRigBundle(join(dir, 'r.bin'), {
        skeleton, seconds: 1.25, facing: 'rig', forward: [0, 0, 1],
        objects: [{ name: 'body', influences: 4, indices: new Uint16Array([0, 1, 2, 3, 4, 5, 6, 7]), weights: new Float32Array([0.5, 0.25, 0.25, 0, 1, 0, 0, 0]) }],
      });
      const rig = readRigBundle(join(dir, 'r.bin'));
      expect(rig.header.skeleton).toEqual(skeleton);
      expect(Array.from(rig.objects[0].indices)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(Array.from(rig.objects[0].weights)).toEqual([0.5, 0.25, 0.25, 0, 1, 0, 0, 0]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('splits a rig job into stages from its progress calls', () => {
    let clock = 0;
    const { onProgress, finish } = stageRecorder(() => clock);
    const at = (ms: number, stage: string, fraction: number) => { clock = ms; onProgress(stage, fraction); };
    // The fractions rigCharacter reports: skinning spans 0.25..1, voxelised at inner 0.1, geodesic done at inner 0.85.
    at(0, 'mesh', 0);
    at(100, 'frame', 0.05);
    at(300, 'skeleton', 0.1);
    at(700, 'skinning', 0.25);
    at(900, 'skinning', 0.25 + 0.75 * 0.1);
    at(1500, 'skinning', 0.25 + 0.75 * 0.85);
    clock = 2000;
    const { seconds } = finish();
    expect(seconds.mesh).toBeCloseTo(0.1);
    expect(seconds.frame).toBeCloseTo(0.2);
    expect(seconds.skeleton).toBeCloseTo(0.4);
    expect(seconds.voxelise).toBeCloseTo(0.2);
    expect(seconds.geodesic).toBeCloseTo(0.6);
    expect(seconds['weights→vertices']).toBeCloseTo(0.5);
  });
});

describe('bench/posedExamples: the examples the correctives-fit row fits to', () => {
  it('sharpens each row of weights: same joints, renormalised, unweighted rows left at 0', () => {
    const rows = { name: 'body', influences: 4, indices: new Uint16Array(12), weights: new Float32Array([0.75, 0.25, 0, 0, 0.5, 0.5, 0, 0, 0, 0, 0, 0]) };
    const sharp = Array.from(sharpenedWeights(rows, 4));
    [81 / 82, 1 / 82, 0, 0, 0.5, 0.5, 0, 0, 0, 0, 0, 0].forEach((w, i) => expect(sharp[i]).toBeCloseTo(w, 6));
  });

  it('poses a rigged dev character at its first four key poses, sharper than its own skin, as one object', async () => {
    const character = await loadCharacter(resolve(import.meta.dirname, '../../shared/data/characters/mixamo_ely.glb'));
    const skeleton = skeletonFromRig(character.rig!);
    const body = character.parts[0];
    const weights = rigWeights(character)[0]!;
    // the body twice, as two objects: the example must be one object over both, the second's triangles shifted
    const parts = [body, { ...body, name: 'copy' }];
    const examples = keyPoseExamples(parts, skeleton, [weights, { ...weights, name: 'copy' }], 4, 4);
    const keys = keyPoses(skeleton).slice(0, 4);
    expect(examples.map((e) => e.name)).toEqual(keys.map((k) => k.name));
    expect(keys.map((k) => k.pose)).toEqual(['elbowBend', 'elbowBend', 'kneeBend', 'kneeBend']);
    const V = body.positions.length / 3;
    const rest = restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
    const sharp = sharpenedWeights(weights, 4);
    let height = 0;
    for (let i = 1; i < body.positions.length; i += 3) height = Math.max(height, body.positions[i]);
    examples.forEach((example, e) => {
      const rotations = keyPoseRotations(keys[e], skeleton.joints.length);
      expect(Array.from(example.rotations)).toEqual(Array.from(rotations));
      expect(example.objects).toHaveLength(1);
      const { positions, triangles } = example.objects[0];
      expect(positions.length).toBe(2 * V * 3);
      expect(triangles.length).toBeGreaterThan(0);
      expect(Math.max(...triangles)).toBeGreaterThanOrEqual(V);
      expect(Math.max(...triangles)).toBeLessThan(2 * V);
      const transforms = poseTransforms(rest.heads, rest.parents, rotations);
      const expected = linearBlendSkinning(body.positions, weights.indices, sharp, weights.influences, transforms);
      const staticLbs = linearBlendSkinning(body.positions, weights.indices, weights.weights, weights.influences, transforms);
      let error = 0, moved = 0, sharper = 0;
      for (let i = 0; i < 3 * V; i++) {
        error = Math.max(error, Math.abs(positions[i] - expected[i]), Math.abs(positions[3 * V + i] - expected[i]));
        moved = Math.max(moved, Math.abs(positions[i] - body.positions[i]));
        sharper = Math.max(sharper, Math.abs(positions[i] - staticLbs[i]));
      }
      expect(error).toBe(0);
      // the key pose turns a whole forearm or shin (ely is 1.6 tall: 0.32 at the elbow, 0.68 at the knee today), and the
      // sharper weights move the joint's surface away from the static skin (≈ 0.025), a difference for the fit to close
      expect(moved).toBeGreaterThan(0.1 * height);
      expect(sharper).toBeGreaterThan(0.005 * height);
    });
  });
});
