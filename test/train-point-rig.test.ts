/**
 * The refinement and skinning network's training script (models/training/train_point_rig.py) end to end at CI size:
 * a tiny run on a few procedural humanoids lowers its loss and exports an ONNX model that onnxruntime-node runs with
 * the documented inputs and outputs (any batch and point count, weight rows summing to 1, HeadTop_End never weighted)
 * and that reproduces the PyTorch outputs stored in its check file. The committed models/point_rig.onnx, when there
 * is one, must reproduce models/point_rig.check.json the same way. Training needs PyTorch in /usr/bin/python3
 * (python3-torch, python3-onnx): without it the training test is skipped locally and FAILS under CI=true.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { SeededRandom } from '../sidecar/data/seededRandom.js';
import { dualQuaternionSkinning } from '../sidecar/deform/dualQuaternionSkinning.js';
import { linearBlendSkinning, poseTransforms } from '../sidecar/deform/linearBlendSkinning.js';
import { axisAngleMatrix } from '../sidecar/geometry/axisAngleMatrix.js';
import { MIXAMO_PARENT_INDICES } from '../sidecar/skeleton/mixamoTemplate.js';
import type { Vec3 } from '../sidecar/types.js';
import { makeTrainingSample, writeTrainingSample } from '../sidecar/data/trainingSample.js';

const ROOT = resolve(import.meta.dirname, '..');
const ON_CI = process.env.CI === 'true';
const PYTHON = '/usr/bin/python3';
const torchReady = spawnSync(PYTHON, ['-c', 'import torch, onnx'], { encoding: 'utf8' }).status === 0;
const COMMITTED_MODEL = join(ROOT, 'models/point_rig.onnx');
const COMMITTED_CHECK = join(ROOT, 'models/point_rig.check.json');
const J = 23;
const HEAD_TOP = 6;

interface CheckTensor { dims: number[]; data: number[] }
interface CheckFile { opset: number; tolerance: number; inputs: Record<string, CheckTensor>; outputs: Record<string, CheckTensor> }

const tensor = (t: CheckTensor) => new ort.Tensor('float32', Float32Array.from(t.data), t.dims);

/** Largest |a − b| over two equally long arrays. */
function maxDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** Replays a check file through onnxruntime-node → the largest output difference to PyTorch, per output. */
async function replayCheck(model: string, checkFile: string): Promise<{ check: CheckFile; differences: Record<string, number> }> {
  const check = JSON.parse(readFileSync(checkFile, 'utf8')) as CheckFile;
  const session = await ort.InferenceSession.create(model);
  const result = await session.run(Object.fromEntries(Object.entries(check.inputs).map(([k, t]) => [k, tensor(t)])));
  const differences: Record<string, number> = {};
  for (const [name, expected] of Object.entries(check.outputs)) {
    expect(result[name].dims).toEqual(expected.dims);
    differences[name] = maxDifference(result[name].data as Float32Array, expected.data);
  }
  return { check, differences };
}

describe('point rig network (models/training/train_point_rig.py)', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'autorig-point-rig-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it.skipIf(!torchReady && !ON_CI)('trains a few steps: the loss goes down, and the ONNX export runs and matches PyTorch', async () => {
    expect(torchReady, `${PYTHON} cannot import torch and onnx (apt-get install python3-torch python3-onnx)`).toBe(true);
    const data = join(tmp, 'data');
    mkdirSync(data, { recursive: true });
    for (let i = 0; i < 4; i++) {
      const character = generateProceduralHumanoid(101 + i, { targetVertices: 1500 });
      character.name = `proc-test-${i}`;
      character.meta = { ...character.meta, source: 'procedural' };
      writeTrainingSample(join(data, `${character.name}.sample`), makeTrainingSample(character, 7 + i));
    }
    const out = join(tmp, 'point_rig.onnx');
    const curve = join(tmp, 'curve.csv');
    const card = join(tmp, 'point_rig.md');
    const run = spawnSync(PYTHON, [
      'models/training/train_point_rig.py', '--data', data, '--tiny', '--steps', '40', '--out', out, '--curve', curve, '--card', card,
      '--corrective-loss-weight', '100',
    ], { cwd: ROOT, encoding: 'utf8', timeout: 150_000, env: { ...process.env, OPENBLAS_NUM_THREADS: '1' } });
    expect(run.status, run.stderr + run.stdout).toBe(0);

    // The loss: per-step rows of the curve, mean of the last steps below the first.
    const [header, ...lines] = readFileSync(curve, 'utf8').trim().split(/\r?\n/);
    const columns = header.split(',');
    const rows = lines.map((l) => l.split(',')).filter((r) => r[columns.indexOf('split')] === 'train');
    expect(rows.length).toBe(40);
    const losses = rows.map((r) => Number(r[columns.indexOf('loss')]));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(losses.every(Number.isFinite)).toBe(true);
    expect(mean(losses.slice(-8))).toBeLessThan(0.85 * mean(losses.slice(0, 8)));
    // the corrective term is trained on and reported (and, trained on, it falls too)
    const correctives = rows.map((r) => Number(r[columns.indexOf('corrective')]));
    expect(correctives.every((c) => Number.isFinite(c) && c > 0)).toBe(true);
    expect(mean(correctives.slice(-8))).toBeLessThan(mean(correctives.slice(0, 8)));
    // by default the term trained on is the one reported: loss = KL + 1000 × joint MSE + 100 × corrective
    for (const r of rows) {
      const at = (c: string) => Number(r[columns.indexOf(c)]);
      const trained = (at('loss') - at('weight_kl') - 1000 * at('joint_mse')) / 100;
      expect(Math.abs(trained - at('corrective'))).toBeLessThan(1e-3 * at('corrective') + 2e-7);
    }

    const cardText = readFileSync(card, 'utf8');
    expect(cardText).toContain('train_point_rig.py');
    expect(cardText).toContain('corrective loss weight: 100');
    expect(cardText).toMatch(/\| procedural \| \d+ \| \d+ \|/);

    // The export reproduces PyTorch on the check input.
    const { check, differences } = await replayCheck(out, out.replace(/\.onnx$/, '.check.json'));
    expect(check.opset).toBe(17);
    expect(check.inputs.points.dims).toEqual([1, 256, 3]);
    for (const [name, d] of Object.entries(differences)) expect(d, name).toBeLessThan(check.tolerance);

    // Any batch and point count: B = 2, N = 512 (a multiple of 16, other than the traced 256).
    const session = await ort.InferenceSession.create(out);
    expect(session.inputNames).toEqual(['points', 'normals', 'joints']);
    expect(session.outputNames).toEqual(['refined_joints', 'weights']);
    const rng = new SeededRandom(3);
    const B = 2, N = 512;
    const points = Float32Array.from({ length: B * N * 3 }, () => rng.range(-0.4, 0.4));
    const normals = new Float32Array(B * N * 3);
    for (let i = 0; i < B * N; i++) {
      const v = [rng.normal(), rng.normal(), rng.normal()];
      const len = Math.hypot(...v) || 1;
      normals.set(v.map((x) => x / len), 3 * i);
    }
    const joints = Float32Array.from(check.inputs.joints.data.concat(check.inputs.joints.data));
    const result = await session.run({
      points: new ort.Tensor('float32', points, [B, N, 3]),
      normals: new ort.Tensor('float32', normals, [B, N, 3]),
      joints: new ort.Tensor('float32', joints, [B, J, 3]),
    });
    expect(result.refined_joints.dims).toEqual([B, J, 3]);
    expect(result.weights.dims).toEqual([B, N, J]);
    const weights = result.weights.data as Float32Array;
    for (let p = 0; p < B * N; p++) {
      let sum = 0;
      for (let j = 0; j < J; j++) {
        expect(weights[p * J + j]).toBeGreaterThanOrEqual(0);
        sum += weights[p * J + j];
      }
      expect(Math.abs(sum - 1)).toBeLessThan(1e-5);
      expect(weights[p * J + HEAD_TOP]).toBe(0);
    }
    for (const v of result.refined_joints.data as Float32Array) expect(Number.isFinite(v)).toBe(true);
  }, 180_000);

  it.skipIf(!torchReady && !ON_CI)('shows a body without its head: the head\'s points gone, HeadTop_End at the top of the rest, every other joint and weight as it was', () => {
    expect(torchReady, `${PYTHON} cannot import torch and onnx`).toBe(true);
    const data = join(tmp, 'headless');
    mkdirSync(data, { recursive: true });
    const character = generateProceduralHumanoid(131, { targetVertices: 1500 });
    character.name = 'proc-headless';
    writeTrainingSample(join(data, 'proc-headless.sample'), makeTrainingSample(character, 3));
    const script = `
import json, sys
import numpy as np
sys.path.insert(0, 'models/training')
from point_rig.dataset import SampleSet, cut_head, make_example, HEAD, HEAD_TOP, UP
s = SampleSet([sys.argv[1]])
p, n, w, j = s.points[0], s.normals[0], s.weights[0], s.joints[0]
cp, cn, cw, cj = cut_head(p, n, w, j)
cut = make_example(s, 0, 256, np.random.default_rng(4), headless=1.0)
print(json.dumps({
  "before": len(p), "after": len(cp), "headPoints": int((w[:, HEAD].astype(np.float32) >= 0.5).sum()),
  "maxHeadWeightLeft": float(cw[:, HEAD].astype(np.float32).max()),
  "top": float(cp[:, UP].max()), "headY": float(j[HEAD, UP]), "headTopY": float(j[HEAD_TOP, UP]), "cutHeadTop": cj[HEAD_TOP].tolist(),
  "head": j[HEAD].tolist(), "othersSame": bool(np.array_equal(np.delete(cj, HEAD_TOP, 0), np.delete(j, HEAD_TOP, 0))),
  "weightsKept": bool(np.array_equal(cw, w[w[:, HEAD].astype(np.float32) < 0.5])),
  "cutTopBelowHeadTop": float(cut["points"][:, UP].max()) < float(j[HEAD_TOP, UP]) - 0.02,
}))
`;
    const run = spawnSync(PYTHON, ['-c', script, join(data, 'proc-headless.sample')], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const r = JSON.parse(run.stdout.trim().split('\n').pop()!);
    expect(r.headPoints).toBeGreaterThan(20);
    expect(r.after).toBe(r.before - r.headPoints);
    expect(r.maxHeadWeightLeft).toBeLessThan(0.5);
    // HeadTop_End comes down from above the head to where the cut body ends (never below the Head joint), over it
    expect(r.headTopY - r.headY).toBeGreaterThan(0.05);
    expect(r.cutHeadTop[1]).toBeCloseTo(Math.max(r.top, r.headY), 6);
    expect(r.cutHeadTop[0]).toBeCloseTo(r.head[0], 6);
    expect(r.cutHeadTop[2]).toBeCloseTo(r.head[2], 6);
    expect(r.othersSame).toBe(true);
    expect(r.weightsKept).toBe(true);
    // an example made with --headless 1 is always the cut body
    expect(r.cutTopBelowHeadTop).toBe(true);
  }, 90_000);

  it.skipIf(!torchReady && !ON_CI)('the corrective loss bends a limb as the sidecar does: DQS − LBS of deform/ with a joint turned, zero for matching weights', () => {
    expect(torchReady, `${PYTHON} cannot import torch and onnx`).toBe(true);
    // A procedural humanoid's true joints; points around the left elbow and wrist; rows over the left arm's bones,
    // some all on one bone (no corrective), the rest blended over two or three.
    const heads = Float64Array.from(generateProceduralHumanoid(141, { targetVertices: 1500 }).joints);
    const rng = new SeededRandom(11);
    const N = 48, arm = [8, 9, 10]; // LeftArm, LeftForeArm, LeftHand
    const points = new Float32Array(N * 3), dense = new Float32Array(N * J);
    for (let i = 0; i < N; i++) {
      const from = arm[1 + (i % 2)];
      for (let c = 0; c < 3; c++) points[3 * i + c] = heads[3 * from + c] + rng.range(-0.06, 0.06);
      if (i < 6) { dense[i * J + arm[i % 3]] = 1; continue; }
      const w = arm.map(() => (rng.next() < 0.3 ? 0 : rng.next()));
      if (w[1] + w[2] === 0) w[2] = 0.5;
      const sum = w.reduce((a, b) => a + b, 0);
      arm.forEach((b, k) => { dense[i * J + b] = w[k] / sum; });
    }
    const cases = [{ joint: 10, axis: [0, 0.6, 0.8] as Vec3, angle: 1.2 }, { joint: 9, axis: [0.8, 0, -0.6] as Vec3, angle: -0.9 }];
    const script = `
import json, sys
import torch
sys.path.insert(0, 'models/training')
from point_rig.losses import blend_corrective, corrective_l1, subtree_masks
from point_rig.skeleton import PARENTS
a = json.loads(sys.stdin.read())
pts = torch.tensor(a["points"], dtype=torch.float64).reshape(1, -1, 3)
w = torch.tensor(a["weights"], dtype=torch.float64).reshape(1, pts.shape[1], -1)
heads = torch.tensor(a["heads"], dtype=torch.float64).reshape(1, -1, 3)
out = []
for c in a["cases"]:
    share = w @ subtree_masks(PARENTS).double()[c["joint"]]
    corr = blend_corrective(pts, heads[:, [c["joint"]]], torch.tensor([[c["axis"]]], dtype=torch.float64),
                            torch.tensor([[c["angle"]]], dtype=torch.float64), share[..., None])
    out.append(corr.reshape(-1).tolist())
g = torch.Generator().manual_seed(5)
same = corrective_l1(w, w, pts, heads, [9, 10, 16], PARENTS, g).item()
other = w.roll(1, dims=1)
moved = corrective_l1(other, w, pts, heads, [9, 10, 16], PARENTS, torch.Generator().manual_seed(5)).item()
print(json.dumps({"corrective": out, "same": same, "moved": moved}))
`;
    const run = spawnSync(PYTHON, ['-c', script], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000,
      input: JSON.stringify({ points: Array.from(points), weights: Array.from(dense), heads: Array.from(heads), cases }),
    });
    expect(run.status, run.stderr).toBe(0);
    const r = JSON.parse(run.stdout.trim().split('\n').pop()!) as { corrective: number[][]; same: number; moved: number };
    // the sidecar's skinning: top-3 rows over the arm, the case's joint turned about its head (its children carried)
    const indices = new Uint16Array(N * 3), values = new Float32Array(N * 3);
    for (let i = 0; i < N; i++) arm.forEach((b, k) => { indices[3 * i + k] = b; values[3 * i + k] = dense[i * J + b]; });
    let largest = 0;
    cases.forEach((c, n) => {
      const rotations = new Float64Array(J * 9);
      for (let j = 0; j < J; j++) rotations[9 * j] = rotations[9 * j + 4] = rotations[9 * j + 8] = 1;
      axisAngleMatrix(c.axis, c.angle, rotations, 9 * c.joint);
      const transforms = poseTransforms(heads, MIXAMO_PARENT_INDICES, rotations);
      const dqs = dualQuaternionSkinning(points, indices, values, 3, transforms);
      const lbs = linearBlendSkinning(points, indices, values, 3, transforms);
      for (let i = 0; i < N * 3; i++) {
        expect(Math.abs(r.corrective[n][i] - (dqs[i] - lbs[i])), `case ${n}, coordinate ${i}`).toBeLessThan(2e-6);
        largest = Math.max(largest, Math.abs(dqs[i] - lbs[i]));
      }
      // a row on one bone has no corrective
      for (let i = 0; i < 6 * 3; i++) expect(Math.abs(r.corrective[n][i])).toBeLessThan(1e-9);
    });
    expect(largest).toBeGreaterThan(1e-3); // the blended rows do bend apart
    expect(r.same).toBeLessThan(2e-6); // the norm's floor: √1e-12
    expect(r.moved).toBeGreaterThan(1e-4);
  }, 90_000);

  it.skipIf(!torchReady && !ON_CI)('trains the corrective term on the joints asked for (--corrective-joints) and still reports the default eight', () => {
    expect(torchReady, `${PYTHON} cannot import torch and onnx`).toBe(true);
    const data = join(tmp, 'wrists');
    mkdirSync(data, { recursive: true });
    for (let i = 0; i < 2; i++) {
      const character = generateProceduralHumanoid(151 + i, { targetVertices: 1500 });
      character.name = `proc-wrists-${i}`;
      writeTrainingSample(join(data, `${character.name}.sample`), makeTrainingSample(character, 5 + i));
    }
    const train = (extra: string[]) => spawnSync(PYTHON, [
      'models/training/train_point_rig.py', '--data', data, '--tiny', '--steps', '6', '--out', join(tmp, 'wrists.onnx'),
      '--curve', join(tmp, 'wrists.csv'), '--card', join(tmp, 'wrists.md'), ...extra,
    ], { cwd: ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, OPENBLAS_NUM_THREADS: '1' } });

    for (const [joints, message] of [['LeftHand,Wrist', /must name joints of the skeleton.*Wrist/], ['Hips', /root has no parent bone/]] as const) {
      const refused = train(['--corrective-joints', joints]);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toMatch(message);
    }

    const run = train(['--corrective-loss-weight', '1000', '--corrective-joints', 'LeftHand,RightHand']);
    expect(run.status, run.stderr + run.stdout).toBe(0);
    expect(readFileSync(join(tmp, 'wrists.md'), 'utf8')).toContain('corrective joints: LeftHand, RightHand');
    const [header, ...lines] = readFileSync(join(tmp, 'wrists.csv'), 'utf8').trim().split(/\r?\n/);
    const columns = header.split(',');
    const rows = lines.map((l) => l.split(',')).filter((r) => r[columns.indexOf('split')] === 'train');
    expect(rows.length).toBe(6);
    // the term in the loss is the wrists' alone, not the eight joints' reported beside it
    let differing = 0;
    for (const r of rows) {
      const at = (c: string) => Number(r[columns.indexOf(c)]);
      const trained = (at('loss') - at('weight_kl') - 1000 * at('joint_mse')) / 1000;
      expect(trained).toBeGreaterThan(0);
      expect(at('corrective')).toBeGreaterThan(0);
      if (Math.abs(trained - at('corrective')) > 0.05 * at('corrective')) differing++;
    }
    expect(differing).toBeGreaterThanOrEqual(5);
  }, 150_000);

  it.skipIf(!existsSync(COMMITTED_MODEL))('the committed models/point_rig.onnx reproduces its check file', async () => {
    expect(existsSync(COMMITTED_CHECK), `${COMMITTED_CHECK} must accompany the model`).toBe(true);
    expect(readFileSync(COMMITTED_MODEL).length).toBeLessThanOrEqual(50 * 2 ** 20);
    const { check, differences } = await replayCheck(COMMITTED_MODEL, COMMITTED_CHECK);
    expect(Object.keys(differences).sort()).toEqual(['refined_joints', 'weights']);
    for (const [name, d] of Object.entries(differences)) expect(d, name).toBeLessThan(check.tolerance);
  });
});
