/**
 * The pose-dependent weight field's inputs and training data (issue 7): features read a vertex in its slot bones' rest
 * frames and each bone's local turn (zero at rest, the key's axis·angle on the key's bone only, nothing for Hips or a
 * padded slot); a correctives sample holds the contract's blobs, its exact posed surface lies where LBS of the rest
 * subsample puts the body (and not where the unposed limb was), its normals point outward, and Python reads it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { boneRestFrame } from '../sidecar/correctives/boneRestFrame.js';
import { keyPoseRotations, keyPoses } from '../sidecar/correctives/keyPoses.js';
import { FEATURES_PER_SLOT, poseFeatures, rotationVector, SLOTS, topFourSlots } from '../sidecar/correctives/poseFeatures.js';
import { CORRECTIVES_SAMPLE_FORMAT, makeCorrectivesSample, readCorrectivesSample, writeCorrectivesSample } from '../sidecar/data/correctives/correctivesSample.js';
import { makeSample, proceduralCount, sampleSeed, type DatasetOptions } from '../sidecar/data/makeDataset.js';
import { axisAngleMatrix } from '../sidecar/geometry/axisAngleMatrix.js';
import { readBundle } from '../sidecar/io/binaryBundle.js';
import { buildMixamoSkeleton, MIXAMO_JOINTS, type MixamoJointName } from '../sidecar/skeleton/mixamoTemplate.js';
import type { Vec3 } from '../sidecar/types.js';

const J = MIXAMO_JOINTS.length;
const jointOf = (name: MixamoJointName) => MIXAMO_JOINTS.indexOf(name);
const identity = () => { const r = new Float64Array(J * 9); for (let j = 0; j < J; j++) r.set([1, 0, 0, 0, 1, 0, 0, 0, 1], 9 * j); return r; };

// A hand-made T-posed skeleton (Y up, facing +Z, its left at +X): joint heads span y 0.02 … 1.8, so size = 1.78.
const HEADS: Record<MixamoJointName, Vec3> = {
  Hips: [0, 1, 0], Spine: [0, 1.1, 0], Spine1: [0, 1.2, 0], Spine2: [0, 1.3, 0], Neck: [0, 1.5, 0], Head: [0, 1.6, 0], HeadTop_End: [0, 1.8, 0],
  LeftShoulder: [0.05, 1.45, 0], LeftArm: [0.2, 1.45, 0], LeftForeArm: [0.5, 1.45, 0], LeftHand: [0.75, 1.45, 0],
  RightShoulder: [-0.05, 1.45, 0], RightArm: [-0.2, 1.45, 0], RightForeArm: [-0.5, 1.45, 0], RightHand: [-0.75, 1.45, 0],
  LeftUpLeg: [0.1, 0.95, 0], LeftLeg: [0.1, 0.5, 0.01], LeftFoot: [0.1, 0.08, 0], LeftToeBase: [0.1, 0.02, 0.12],
  RightUpLeg: [-0.1, 0.95, 0], RightLeg: [-0.1, 0.5, 0.01], RightFoot: [-0.1, 0.08, 0], RightToeBase: [-0.1, 0.02, 0.12],
};
const SIZE = 1.78;
const skeleton = buildMixamoSkeleton(HEADS, {
  LeftHand: [0.85, 1.45, 0], RightHand: [-0.85, 1.45, 0], LeftToeBase: [0.1, 0.02, 0.2], RightToeBase: [-0.1, 0.02, 0.2],
}, { up: [0, 1, 0], forward: [0, 0, 1] }, true);

// Three vertices: a forearm vertex with two slots given lightest first, a hip vertex (Hips + LeftUpLeg), a one-slot
// hand vertex.
const forearmPoint: Vec3 = [0.6, 1.48, 0.02];
const rest = new Float32Array([...forearmPoint, 0.08, 0.9, 0.05, 0.8, 1.45, 0.01]);
const indices = new Uint16Array([jointOf('LeftArm'), jointOf('LeftForeArm'), 0, 0, jointOf('Hips'), jointOf('LeftUpLeg'), 0, 0, jointOf('LeftHand'), 0, 0, 0]);
const weights = new Float32Array([0.3, 0.7, 0, 0, 0.5, 0.5, 0, 0, 1, 0, 0, 0]);
const slot = (f: Float32Array, v: number, k: number) => Array.from(f.subarray((v * SLOTS + k) * FEATURES_PER_SLOT, (v * SLOTS + k + 1) * FEATURES_PER_SLOT));

describe('poseFeatures', () => {
  it('reads a vertex in its heaviest slot bone first, in heights, with no turn at rest', () => {
    const f = poseFeatures(rest, indices, weights, skeleton, identity());
    const forearm = slot(f, 0, 0);
    expect(forearm[3]).toBeCloseTo(0.7, 6);
    const joint = skeleton.joints[jointOf('LeftForeArm')];
    const B = boneRestFrame(joint.head, joint.tail, joint.roll);
    const d = forearmPoint.map((x, a) => x - joint.head[a]);
    [B.x, B.y, B.z].forEach((axis, a) => expect(forearm[a]).toBeCloseTo((axis[0] * d[0] + axis[1] * d[1] + axis[2] * d[2]) / SIZE, 6));
    // the forearm runs along +X: 0.1 m along the bone, and the frame keeps lengths
    expect(forearm[1]).toBeCloseTo(0.1 / SIZE, 6);
    expect(Math.hypot(forearm[0], forearm[1], forearm[2])).toBeCloseTo(Math.hypot(...d) / SIZE, 6);
    expect(slot(f, 0, 1)[3]).toBeCloseTo(0.3, 6);
    for (let v = 0; v < 3; v++) for (let k = 0; k < SLOTS; k++) expect(slot(f, v, k).slice(4)).toEqual([0, 0, 0]);
  });

  it('gives a 90° elbow key as a quarter turn on the LeftForeArm slot only, and nothing for Hips or padded slots', () => {
    const key = keyPoses(skeleton).find((k) => k.bone === 'mixamorig:LeftForeArm' && k.pose === 'elbowBend')!;
    const rotations = keyPoseRotations(key, J, 1);
    axisAngleMatrix([0, 1, 0], 0.7, rotations, jointOf('Hips') * 9); // the whole body turned: masked
    const f = poseFeatures(rest, indices, weights, skeleton, rotations);
    const turn = slot(f, 0, 0).slice(4);
    expect(Math.hypot(...turn)).toBeCloseTo(Math.PI / 2, 5);
    turn.forEach((x, a) => expect(x).toBeCloseTo(key.axis[a] * Math.PI / 2, 5));
    expect(slot(f, 0, 1).slice(4)).toEqual([0, 0, 0]); // LeftArm did not turn
    // the hip vertex's equal weights keep their order: slot 0 is Hips, turned by 0.7 rad yet masked
    expect(slot(f, 1, 0)[3]).toBeCloseTo(0.5, 6);
    expect(slot(f, 1, 0)[1]).toBeCloseTo((0.9 - 1) / SIZE, 6);
    expect(slot(f, 1, 0).slice(4)).toEqual([0, 0, 0]);
    for (const [v, k] of [[0, 2], [0, 3], [1, 2], [1, 3], [2, 1], [2, 2], [2, 3]]) expect(slot(f, v, k)).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });

  it('takes axis·angle robustly at 0° and near 180°', () => {
    const r = new Float64Array(9);
    axisAngleMatrix([1, 0, 0], 0, r);
    expect(rotationVector(r)).toEqual([0, 0, 0]);
    const axis: Vec3 = [2 / 7, 3 / 7, 6 / 7];
    for (const angle of [1e-7, 0.5, Math.PI - 1e-6, Math.PI]) {
      axisAngleMatrix(axis, angle, r);
      const v = rotationVector(r);
      expect(Math.hypot(...v)).toBeCloseTo(angle, 6);
      const along = (v[0] * axis[0] + v[1] * axis[1] + v[2] * axis[2]) / angle;
      // at exactly 180° both signs are the same turn
      expect(angle === Math.PI ? Math.abs(along) : along).toBeCloseTo(1, 5);
    }
  });

  it('keeps the four heaviest of more influences, renormalised, by weight, padded', () => {
    const s = topFourSlots(new Uint16Array([3, 5, 7, 9, 11, 13, 2, 4, 0, 0, 0, 0]), new Float32Array([0.05, 0.3, 0.1, 0.2, 0.25, 0.1, 0.6, 0.4, 0, 0, 0, 0]), 6);
    expect(Array.from(s.indices)).toEqual([5, 11, 9, 7, 2, 4, 0, 0]);
    const w = Array.from(s.weights);
    expect(w[0] + w[1] + w[2] + w[3]).toBeCloseTo(1, 6);
    expect(w[0] / w[1]).toBeCloseTo(0.3 / 0.25, 5);
    expect(w.slice(4)).toEqual([expect.closeTo(0.6, 6), expect.closeTo(0.4, 6), 0, 0]);
  });
});

describe('correctives sample', () => {
  const dir = mkdtempSync(join(tmpdir(), 'autorig-corr-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const SEED = 9_200_000; // a thin T-posed humanoid, arms clear of the body
  const poses = [
    { keys: ['mixamorig:LeftForeArm_elbowBend'], fractions: [1] },
    { keys: ['mixamorig:RightLeg_kneeBend'], fractions: [0.8] },
    { keys: ['mixamorig:LeftArm_shoulderRaise', 'mixamorig:RightForeArm_elbowBend'], fractions: [0.7, 1] },
  ];
  const N = 500, M = 2000;
  const made = makeCorrectivesSample(SEED, { targetVertices: 4000, vertexCount: N, surfaceCount: M, poses });
  const path = join(dir, 'one.corr');

  it('writes the header and the blobs of the contract', async () => {
    const sample = await made;
    writeCorrectivesSample(path, sample);
    const { header, blobs } = readBundle<Record<string, unknown>>(path);
    expect(header).toMatchObject({ format: CORRECTIVES_SAMPLE_FORMAT, name: `procedural-${SEED}`, seed: SEED, vertexCount: N, surfaceCount: M, poses });
    expect(header.heightMetres).toBeGreaterThan(0.4);
    const sizes = [['f32', N * 3], ['f32', N * 3], ['u16', N * 4], ['f32', N * 4]];
    for (let p = 0; p < poses.length; p++) sizes.push(['f32', N * 28], ['f32', J * 12], ['f32', M * 3], ['f32', M * 3]);
    expect(blobs.map((b) => [b instanceof Uint16Array ? 'u16' : b instanceof Float32Array ? 'f32' : 'u32', b.length])).toEqual(sizes);
    const back = readCorrectivesSample(path);
    for (let v = 0; v < N; v++) {
      const w = Array.from(back.weights.subarray(4 * v, 4 * v + 4));
      expect(w[0] + w[1] + w[2] + w[3]).toBeCloseTo(1, 5);
      expect(w[0]).toBeGreaterThanOrEqual(w[1]);
    }
    const n = Array.from(back.restNormals.subarray(0, 3));
    expect(Math.hypot(...n)).toBeCloseTo(1, 5);
  }, 60_000);

  it('has an exact posed surface where LBS of the rest subsample puts the body, with outward normals', async () => {
    const sample = await made;
    const H = sample.header.heightMetres;
    const nearest = (points: Float32Array, from: ArrayLike<number>, v: number) => {
      let best = Infinity;
      for (let q = 0; q < points.length / 3; q++) {
        best = Math.min(best, Math.hypot(points[3 * q] - from[3 * v], points[3 * q + 1] - from[3 * v + 1], points[3 * q + 2] - from[3 * v + 2]));
      }
      return best;
    };
    sample.poses.forEach((pose, p) => {
      const posed = new Float32Array(N * 3);
      for (let v = 0; v < N; v++) {
        for (let k = 0; k < 4; k++) {
          const w = sample.weights[4 * v + k], o = 12 * sample.indices[4 * v + k];
          for (let r = 0; r < 3; r++) {
            posed[3 * v + r] += w * (pose.transforms[o + 4 * r] * sample.rest[3 * v] + pose.transforms[o + 4 * r + 1] * sample.rest[3 * v + 1]
              + pose.transforms[o + 4 * r + 2] * sample.rest[3 * v + 2] + pose.transforms[o + 4 * r + 3]);
          }
        }
      }
      let sum = 0;
      for (let v = 0; v < N; v++) sum += nearest(pose.surface, posed, v);
      expect(sum / N / H, `pose ${p}`).toBeLessThan(0.03);
      // … and it is posed: the left forearm's rest vertices are far from the elbow-bent surface
      if (p === 0) {
        const forearm = Array.from({ length: N }, (_, v) => v).filter((v) => sample.indices[4 * v] === jointOf('LeftForeArm') && sample.weights[4 * v] > 0.9);
        expect(forearm.length).toBeGreaterThan(3);
        const unposed = forearm.reduce((s, v) => s + nearest(pose.surface, sample.rest, v), 0) / forearm.length;
        const skinned = forearm.reduce((s, v) => s + nearest(pose.surface, posed, v), 0) / forearm.length;
        expect(unposed).toBeGreaterThan(4 * skinned);
      }
      // outward: each sample's normal agrees with the skinned normal (rest normal turned by the blended rotation) of
      // the nearest skinned vertex
      const posedNormals = new Float32Array(N * 3);
      for (let v = 0; v < N; v++) {
        for (let k = 0; k < 4; k++) {
          const w = sample.weights[4 * v + k], o = 12 * sample.indices[4 * v + k];
          for (let r = 0; r < 3; r++) {
            posedNormals[3 * v + r] += w * (pose.transforms[o + 4 * r] * sample.restNormals[3 * v] + pose.transforms[o + 4 * r + 1] * sample.restNormals[3 * v + 1]
              + pose.transforms[o + 4 * r + 2] * sample.restNormals[3 * v + 2]);
          }
        }
      }
      let outward = 0;
      for (let q = 0; q < M; q++) {
        let best = Infinity, at = 0;
        for (let v = 0; v < N; v++) {
          const d = Math.hypot(posed[3 * v] - pose.surface[3 * q], posed[3 * v + 1] - pose.surface[3 * q + 1], posed[3 * v + 2] - pose.surface[3 * q + 2]);
          if (d < best) { best = d; at = v; }
        }
        if ([0, 1, 2].reduce((s, a) => s + pose.normals[3 * q + a] * posedNormals[3 * at + a], 0) > 0) outward++;
        expect(Math.hypot(pose.normals[3 * q], pose.normals[3 * q + 1], pose.normals[3 * q + 2])).toBeCloseTo(1, 4);
      }
      expect(outward / M).toBeGreaterThan(0.9);
    });
  }, 60_000);

  it('is read by the Python reader with the shapes of the contract', async () => {
    await made;
    const script = [
      'import sys', 'sys.path.insert(0, "models/training/pose_weights")', 'from corr_io import read_corr_sample, list_corr_files',
      `d = read_corr_sample(${JSON.stringify(path)})`,
      'print({k: list(v.shape) for k, v in d.items() if k != "header"})', 'print(d["indices"].dtype, d["weights"].sum(1).min())',
      `print(len(list_corr_files(${JSON.stringify(dir)})))`,
    ].join('\n');
    const run = spawnSync('/usr/bin/python3', ['-c', script], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const [shapes, types, count] = run.stdout.trim().split('\n');
    expect(JSON.parse(shapes.replace(/'/g, '"'))).toEqual({
      rest: [N, 3], restNormals: [N, 3], indices: [N, 4], weights: [N, 4], features: [3, N, 4, 7], transforms: [3, J, 3, 4], surface: [3, M, 3], normals: [3, M, 3],
    });
    expect(types.split(' ')[0]).toBe('uint16');
    expect(Number(types.split(' ')[1])).toBeCloseTo(1, 5);
    expect(count).toBe('1');
  }, 60_000);
});

describe('autorig data --kind correctives', () => {
  it('is procedural only and writes <name>.corr for sample i from its own seed', async () => {
    expect(proceduralCount({ count: 10, augmentedFraction: 0.3, kind: 'correctives' })).toBe(10);
    expect(proceduralCount({ count: 10, augmentedFraction: 0.3, kind: 'rig' })).toBe(7);
    const out = mkdtempSync(join(tmpdir(), 'autorig-corr-data-'));
    try {
      const options: DatasetOptions = {
        kind: 'correctives', out, count: 1, seed: 7, augmentedFraction: 0.5, characters: '/nonexistent', jobs: 1,
        proceduralVertices: [3000, 3000], augmentedVertices: null, log: () => {},
      };
      const path = await makeSample(0, options, new Map());
      expect(path).toBe(join(out, 'proc-000000.corr'));
      const back = readCorrectivesSample(path);
      expect(back.header).toMatchObject({ name: 'proc-000000', seed: sampleSeed(7, 0), vertexCount: expect.any(Number), surfaceCount: 4000 });
      expect(back.poses).toHaveLength(16); // 13 keys + 3 pairs
      expect(back.header.poses.slice(13).every((p) => p.keys.length === 2 && p.keys[0] !== p.keys[1])).toBe(true);
      expect(back.header.poses.slice(0, 13).every((p) => p.fractions[0] >= 0.4 && p.fractions[0] < 1.25)).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
