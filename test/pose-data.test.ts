/**
 * The latent-pose training set (issue 6): one identity neutral and posed, as sidecar/data/poses/poseSample.ts writes
 * it, and `autorig data --kind pose` over it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleFiles, sampleStem, type DatasetOptions } from '../sidecar/data/makeDataset.js';
import { makePoseRig, readPoseRig, writePoseRig } from '../sidecar/data/poses/poseRig.js';
import { areaWeightedVertices, makePoseSample, POSE_VARIANTS, readPoseSample, writePoseSample } from '../sidecar/data/poses/poseSample.js';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { mergeParts } from '../sidecar/mesh/mergeParts.js';
import { toCanonical } from '../sidecar/mesh/canonicalFrame.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a latent-pose identity', () => {
  const character = generateProceduralHumanoid(11, { targetVertices: 15_000 });
  character.meta = { ...character.meta, source: 'procedural' };
  const poses = ['elbowBentLf', 'kneeBentRt'] as const;
  const sample = makePoseSample(character, 3, { poses, anchors: 1024, sdfCount: 1024 });
  const A = sample.header.anchorCount;
  const N = sample.header.sdfCount;

  it('holds the neutral anchors as mesh vertices in the canonical frame, and SDF samples with a sign', () => {
    expect(A).toBe(1024);
    expect(sample.header.variants).toEqual([...POSE_VARIANTS]);
    const mesh = mergeParts(character.parts);
    const canonical = toCanonical(mesh.positions, frameOf(sample));
    for (let i = 0; i < A; i += 97) {
      const v = sample.anchorIndices[i];
      for (let c = 0; c < 3; c++) expect(sample.anchorPositions[3 * i + c]).toBeCloseTo(canonical[3 * v + c], 4);
    }
    // the canonical box: longest side 1, feet at the bottom, the head at the top
    const ys = Array.from({ length: A }, (_, i) => sample.anchorPositions[3 * i + 1]);
    expect(Math.max(...ys) - Math.min(...ys)).toBeGreaterThan(0.9);
    // unit normals
    for (let i = 0; i < A; i += 53) expect(Math.hypot(...sample.anchorNormals.slice(3 * i, 3 * i + 3))).toBeCloseTo(1, 3);
    // both signs present, and the samples near the surface have small distances
    const inside = sample.neutralSdf.filter((s) => s < 0).length;
    expect(inside).toBeGreaterThan(N * 0.15);
    expect(inside).toBeLessThan(N * 0.85);
    const near = Array.from(sample.neutralSdf.slice(0, Math.round(N * 0.8)), Math.abs).sort((a, b) => a - b);
    expect(near[Math.floor(near.length / 2)]).toBeLessThan(0.03);
  });

  it('moves the left forearm for elbowBentLf and the right shin for kneeBentRt, and little else; corrective moves little', () => {
    // anchors owned by a joint: by nearest joint among the template's, a rough but honest proxy for the weights
    const joints = toCanonical(character.joints, frameOf(sample));
    const nearestJoint = (i: number) => {
      let best = 0, bestD = Infinity;
      for (let j = 0; j < MIXAMO_JOINTS.length; j++) {
        const d = Math.hypot(joints[3 * j] - sample.anchorPositions[3 * i], joints[3 * j + 1] - sample.anchorPositions[3 * i + 1], joints[3 * j + 2] - sample.anchorPositions[3 * i + 2]);
        if (d < bestD) [best, bestD] = [j, d];
      }
      return MIXAMO_JOINTS[best];
    };
    const owner = Array.from({ length: A }, (_, i) => nearestJoint(i));
    const motion = (state: number, i: number) => Math.hypot(
      sample.stateAnchors[state * A * 3 + 3 * i] - sample.anchorPositions[3 * i],
      sample.stateAnchors[state * A * 3 + 3 * i + 1] - sample.anchorPositions[3 * i + 1],
      sample.stateAnchors[state * A * 3 + 3 * i + 2] - sample.anchorPositions[3 * i + 2],
    );
    const meanOver = (state: number, names: string[]) => {
      const ids = owner.map((o, i) => (names.includes(o) ? i : -1)).filter((i) => i >= 0);
      return ids.reduce((s, i) => s + motion(state, i), 0) / ids.length;
    };
    const skin = (p: number) => p * 3 + POSE_VARIANTS.indexOf('skinning');
    const corrective = (p: number) => p * 3 + POSE_VARIANTS.indexOf('corrective');
    expect(meanOver(skin(0), ['LeftHand'])).toBeGreaterThan(0.05);
    expect(meanOver(skin(0), ['RightHand', 'RightFoot', 'LeftFoot', 'Head'])).toBeLessThan(1e-5);
    expect(meanOver(skin(1), ['RightFoot'])).toBeGreaterThan(0.05);
    expect(meanOver(skin(1), ['LeftFoot', 'LeftHand', 'RightHand'])).toBeLessThan(1e-5);
    // the corrective alone is a small change near the bent joint, none at the far limbs
    expect(meanOver(corrective(0), ['LeftHand'])).toBeLessThan(meanOver(skin(0), ['LeftHand']) * 0.2);
    expect(meanOver(corrective(0), ['RightHand', 'RightFoot'])).toBeLessThan(1e-5);
    // the posed SDF samples follow the posed surface: the moved hand's new place has samples near it
    expect(sample.stateSdf.length).toBe(poses.length * 3 * N);
  });

  it('its rig: the joints in the same canonical frame as the anchors, and each anchor\'s own weights', () => {
    const rig = makePoseRig(character, sample.header, sample.anchorIndices, sample.anchorPositions);
    expect(rig.header.joints).toEqual([...MIXAMO_JOINTS]);
    const joints = toCanonical(character.joints, frameOf(sample));
    for (let i = 0; i < joints.length; i++) expect(rig.joints[i]).toBeCloseTo(joints[i], 4);
    // the left hand is on the character's left (+x) and above the left foot
    const at = (name: string) => Array.from(rig.joints.slice(3 * MIXAMO_JOINTS.indexOf(name as never), 3 * MIXAMO_JOINTS.indexOf(name as never) + 3));
    expect(at('LeftHand')[0]).toBeGreaterThan(0.1);
    expect(at('LeftHand')[1]).toBeGreaterThan(at('LeftFoot')[1] + 0.3);
    const mesh = mergeParts(character.parts);
    for (let a = 0; a < A; a += 61) {
      let sum = 0;
      for (let s = 0; s < 4; s++) sum += rig.weights[4 * a + s];
      expect(sum).toBeCloseTo(1, 5);
      // the anchor's largest weight is the character's own largest weight for that vertex
      const v = sample.anchorIndices[a];
      let p = 0;
      while (mesh.partOffsets[p + 1] <= v) p++;
      const table = character.weights[p];
      const k = table.indices.length / (character.parts[p].positions.length / 3);
      const row = Array.from({ length: k }, (_, s) => ({ j: table.indices[(v - mesh.partOffsets[p]) * k + s], w: table.weights[(v - mesh.partOffsets[p]) * k + s] }));
      row.sort((x, y) => y.w - x.w);
      expect(rig.weightIndices[4 * a]).toBe(row[0].j);
    }
    const dir = mkdtempSync(join(tmpdir(), 'autorig-poserig-'));
    dirs.push(dir);
    writePoseRig(join(dir, 'x.poserig'), rig);
    const back = readPoseRig(join(dir, 'x.poserig'));
    expect(Array.from(back.weights)).toEqual(Array.from(rig.weights));
    expect(Array.from(back.weightIndices)).toEqual(Array.from(rig.weightIndices));
  });

  it('refuses a character that is not the one its sample was made from', () => {
    const other = generateProceduralHumanoid(12, { targetVertices: 15_000 });
    expect(() => makePoseRig(other, sample.header, sample.anchorIndices, sample.anchorPositions)).toThrow(/vertices|anchors differ/);
  });

  it('reads back exactly what was written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'autorig-pose-'));
    dirs.push(dir);
    writePoseSample(join(dir, 'x.pose'), sample);
    const back = readPoseSample(join(dir, 'x.pose'));
    expect(back.header).toEqual(JSON.parse(JSON.stringify(sample.header)));
    expect(Array.from(back.stateAnchors)).toEqual(Array.from(sample.stateAnchors));
    expect(Array.from(back.neutralSdf)).toEqual(Array.from(sample.neutralSdf));
  });
});

it('areaWeightedVertices: distinct vertices, denser where the triangles are bigger', () => {
  // a strip: 10 big quads on the left half, 10×10 small quads on the right half, the same area each side
  const positions: number[] = [];
  const triangles: number[] = [];
  const grid = (x0: number, cells: number, size: number) => {
    const base = positions.length / 3;
    for (let r = 0; r <= cells; r++) for (let c = 0; c <= cells; c++) positions.push(x0 + c * size, r * size, 0);
    for (let r = 0; r < cells; r++) for (let c = 0; c < cells; c++) {
      const a = base + r * (cells + 1) + c;
      triangles.push(a, a + 1, a + cells + 2, a, a + cells + 2, a + cells + 1);
    }
  };
  grid(0, 4, 0.25);
  grid(2, 40, 0.025);
  const p = Float32Array.from(positions), t = Uint32Array.from(triangles);
  const chosen = areaWeightedVertices(p, t, 20, 5);
  expect(new Set(chosen).size).toBe(20);
  expect(areaWeightedVertices(p, t, 20, 5)).toEqual(chosen);
  // the coarse grid has 25 vertices against 1681 but half the area: it gets far more than its 1.5% share
  const coarse = Array.from(chosen).filter((v) => v < 25).length;
  expect(coarse).toBeGreaterThanOrEqual(5);
});

it('sampleStem and sampleFiles name what sample i writes without making it: procedural first, then the dev characters in turn', () => {
  const shape = { count: 10, augmentedFraction: 0.3, kind: 'pose' as const };
  const devs = () => ['/dev/alpha.glb', '/dev/beta.glb'];
  expect([3, 6, 7, 8, 9].map((i) => sampleStem(i, shape, devs))).toEqual(['proc-000003', 'proc-000006', 'aug-alpha-000007', 'aug-beta-000008', 'aug-alpha-000009']);
  expect(() => sampleStem(7, shape, () => [])).toThrow(/no training dev characters/);
  const options: DatasetOptions = {
    ...shape, out: '/o', seed: 1, characters: '/nonexistent', jobs: 1, proceduralVertices: null, augmentedVertices: null, log: () => {},
  };
  expect(sampleFiles(2, options)).toEqual(['/o/proc-000002.pose', '/o/proc-000002.poserig']);
  expect(sampleFiles(2, { ...options, kind: 'pose-rig' })).toEqual(['/o/proc-000002.poserig']);
  expect(sampleFiles(2, { ...options, kind: 'rig' })).toEqual(['/o/proc-000002.sample']);
  // a correctives dataset is procedural only, whatever the augmented fraction
  expect(sampleFiles(9, { ...options, kind: 'correctives' })).toEqual(['/o/proc-000009.corr']);
});

it('`autorig data --kind pose` writes one .pose per identity, the same bytes with 1 or 2 processes', { timeout: 300_000 }, () => {
  const runs: string[] = [];
  for (const jobs of [1, 2]) {
    const out = mkdtempSync(join(tmpdir(), `autorig-posedata-${jobs}-`));
    dirs.push(out);
    // the built CLI, as users run it: its worker processes start dist/ files
    const run = spawnSync(process.execPath, [
      'bin/autorig.js', 'data', '--kind', 'pose', '--out', out, '--count', '2', '--seed', '5', '--augmented-fraction', '0',
      '--procedural-vertices', '12000,14000', '--jobs', String(jobs),
    ], { encoding: 'utf8', timeout: 200_000 });
    expect(run.status, run.stderr + run.stdout).toBe(0);
    runs.push(out);
  }
  const files = readdirSync(runs[0]).filter((f) => f.endsWith('.pose')).sort();
  expect(files).toEqual(['proc-000000.pose', 'proc-000001.pose']);
  for (const f of files) expect(readFileSync(join(runs[1], f)).equals(readFileSync(join(runs[0], f)))).toBe(true);
  // each identity has its rig beside it; --kind pose-rig makes the same side file again from (seed, i)
  const rigs = readdirSync(runs[0]).filter((f) => f.endsWith('.poserig')).sort();
  expect(rigs).toEqual(['proc-000000.poserig', 'proc-000001.poserig']);
  const first = readFileSync(join(runs[0], rigs[0]));
  rmSync(join(runs[0], rigs[0]));
  const again = spawnSync(process.execPath, [
    'bin/autorig.js', 'data', '--kind', 'pose-rig', '--out', runs[0], '--count', '2', '--seed', '5', '--augmented-fraction', '0',
    '--procedural-vertices', '12000,14000',
  ], { encoding: 'utf8', timeout: 100_000 });
  expect(again.status, again.stderr + again.stdout).toBe(0);
  expect(readFileSync(join(runs[0], rigs[0])).equals(first)).toBe(true);
  const header = readPoseSample(join(runs[0], files[0])).header;
  expect(header.poses.length).toBe(34);
  // --resume finishes an interrupted run: identity 0, whole, is kept untouched; identity 1, its rig missing, is made
  // again, the same bytes as the first run's
  const keptAt = statSync(join(runs[1], files[0])).mtimeMs;
  rmSync(join(runs[1], rigs[1]));
  writeFileSync(join(runs[1], `${files[1]}.partial`), 'a write cut short');
  const resumed = spawnSync(process.execPath, [
    'bin/autorig.js', 'data', '--kind', 'pose', '--out', runs[1], '--count', '2', '--seed', '5', '--augmented-fraction', '0',
    '--procedural-vertices', '12000,14000', '--resume',
  ], { encoding: 'utf8', timeout: 150_000 });
  expect(resumed.status, resumed.stderr + resumed.stdout).toBe(0);
  expect(resumed.stdout).toMatch(/1 samples in .*, 1 kept from before \(0 failed\)/);
  expect(statSync(join(runs[1], files[0])).mtimeMs).toBe(keptAt);
  for (const f of [files[1], rigs[1]]) expect(readFileSync(join(runs[1], f)).equals(readFileSync(join(runs[0], f)))).toBe(true);
  expect(readdirSync(runs[1]).filter((f) => f.endsWith('.partial'))).toEqual([]);
});

/** The sample's canonical frame, as toCanonical takes it. */
function frameOf(sample: ReturnType<typeof makePoseSample>) {
  const { frame, center, scale } = sample.header;
  return { frame, center, scale, evidence: undefined as never };
}
