/**
 * `autorig eval poses` (sidecar/eval/poses/): the metrics on constructed cases, the baselines on real characters
 * (ground truth from posedStates), the summaries and bar, the outputs (JSON, report, marks) and the command line.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makePoseSample, writePoseSample, type PoseSample } from '../sidecar/data/poses/poseSample.js';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { evaluatePoseIdentity, type PoseIdentityJob } from '../sidecar/eval/poses/evaluatePoseIdentity.js';
import { latentModelsMissing, nearestTraining, trainingIndex, type TrainingEntry } from '../sidecar/eval/poses/latentProbe.js';
import { chamferDistance, closestAnchorOffsets, rigPosedParts, sampleOffsets } from '../sidecar/eval/poses/poseBaselines.js';
import { parsePoseEvalArguments } from '../sidecar/eval/poses/poseEvalArguments.js';
import { poseEvalSummary } from '../sidecar/eval/poses/poseEvalCommand.js';
import { POSE_EVAL_MARKS_FORMAT, type IdentityPoseEval, type IdentityPoseEntry, type VariantEval } from '../sidecar/eval/poses/poseEvalTypes.js';
import {
  cosineSimilarity, euclideanDistance, meanOverPairs, meanVertexError, staticLeakage, vertexDistances,
} from '../sidecar/eval/poses/poseMetrics.js';
import { heldOutFiles, latentDiagnostics, poseEvalMarks, runPoseEval, summarisePose } from '../sidecar/eval/poses/runPoseEval.js';
import { correctiveShareOf } from '../sidecar/pose/correctiveShare.js';
import { groundTruth, ownRig, proceduralIdentity, testIdentity } from '../sidecar/eval/poses/testIdentities.js';
import { posedCharacterStates } from '../sidecar/pose/posedStates.js';
import { GENERATOR_FRAME, POSE_NAMES } from '../sidecar/pose/poseVocabulary.js';

const DATA = '../shared/data/characters';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'autorig-eval-poses-'));
  dirs.push(d);
  return d;
}

describe('pose metrics', () => {
  it('measures mean vertex error and per-vertex distances', () => {
    const truth = Float32Array.of(0, 0, 0, 1, 1, 1);
    const predicted = Float32Array.of(3, 4, 0, 1, 1, 1);
    expect(Array.from(vertexDistances(predicted, truth))).toEqual([5, 0]);
    expect(meanVertexError(predicted, truth)).toBe(2.5);
    expect(() => meanVertexError(predicted, Float32Array.of(0, 0, 0))).toThrow(/do not pair/);
  });

  it('counts leakage only on the vertices the ground truth keeps still', () => {
    const rest = new Float32Array(9);
    // vertex 0 moves in the truth; 1 and 2 are static
    const truth = Float32Array.of(0.5, 0, 0, 0, 0, 0, 0.0005, 0, 0);
    // the prediction moves vertex 0 right, and drags vertices 1 and 2 by 0.02 and 0.04
    const predicted = Float32Array.of(0.5, 0, 0, 0, 0.02, 0, 0, 0, 0.04);
    const { leakage, staticCount } = staticLeakage(rest, predicted, truth, 0.001);
    expect(staticCount).toBe(2);
    expect(leakage).toBeCloseTo(0.03, 7);
    // no motion never leaks, and the truth itself leaks only what it moves below the threshold
    expect(staticLeakage(rest, rest, truth, 0.001).leakage).toBe(0);
    expect(staticLeakage(rest, truth, truth, 0.001).leakage).toBeCloseTo(0.00025, 8);
    expect(Number.isNaN(staticLeakage(rest, predicted, Float32Array.of(1, 0, 0, 1, 0, 0, 1, 0, 0), 0.001).leakage)).toBe(true);
  });

  it('measures cosines and distances over pairs of latents', () => {
    expect(cosineSimilarity([1, 0], [0, 2])).toBe(0);
    expect(cosineSimilarity([1, 1], [2, 2])).toBeCloseTo(1, 12);
    expect(Number.isNaN(cosineSimilarity([0, 0], [1, 0]))).toBe(true);
    // pairs (a,b) = 1, (a,c) = 0, (b,c) = 0 → 1/3
    expect(meanOverPairs([[1, 0], [3, 0], [0, 1]], cosineSimilarity)).toBeCloseTo(1 / 3, 12);
    expect(meanOverPairs([[0, 0], [3, 4], [6, 8]], euclideanDistance)).toBeCloseTo((5 + 10 + 5) / 3, 12);
    expect(Number.isNaN(meanOverPairs([[1, 0]], cosineSimilarity))).toBe(true);
  });
});

describe('baselines', () => {
  it('(c) carries each vertex the offset of its closest anchor', () => {
    const anchors = Float32Array.of(0, 0, 0, 1, 0, 0);
    const offsets = Float32Array.of(0, 0.1, 0, 0, 0, -0.2);
    const positions = Float32Array.of(0.2, 0, 0, 0.9, 0.1, 0, -3, 0, 0);
    expect(Array.from(closestAnchorOffsets(positions, anchors, offsets))).toEqual([0, 0.1, 0, 0, 0, -0.2, 0, 0.1, 0].map(Math.fround));
    expect(chamferDistance(anchors, Float32Array.of(0, 0, 0, 1, 0, 0))).toBe(0);
    expect(chamferDistance(Float32Array.of(0, 0, 0), Float32Array.of(0, 2, 0))).toBeCloseTo(2, 6);
  });

  it('(c) reads a training identity\'s offsets as state minus neutral anchors', () => {
    const sample = {
      header: { identity: 'x', poses: ['elbowBentLf', 'kneeBentRt'], variants: ['skinning', 'corrective', 'skinningCorrective'], anchorCount: 1 },
      anchorPositions: Float32Array.of(1, 2, 3),
      // state s = pose * 3 + variant: kneeBentRt/corrective is state 4
      stateAnchors: Float32Array.from({ length: 6 * 3 }, (_, i) => (i < 12 || i >= 15 ? 0 : [1.5, 2, 2][i - 12])),
    } as unknown as PoseSample;
    expect(Array.from(sampleOffsets(sample, 'kneeBentRt', 'corrective'))).toEqual([0.5, 0, -1]);
    expect(() => sampleOffsets(sample, 'hipFlexLf', 'corrective')).toThrow(/no hipFlexLf/);
  });

  it('(b) with the character\'s own rig reproduces the skinning ground truth exactly', () => {
    const character = generateProceduralHumanoid(9_100_007, { targetVertices: 4000 });
    for (const pose of ['elbowBentLf', 'spineTwistRt+elbowBentLf'] as const) {
      const states = posedCharacterStates(character, pose, 1, GENERATOR_FRAME);
      const posed = rigPosedParts(character.parts, ownRig(character), pose, GENERATOR_FRAME);
      posed.forEach((positions, p) => expect(meanVertexError(positions, states.parts[p].skinning)).toBeLessThan(1e-6));
    }
    const broken = ownRig(character);
    broken.skeleton.joints = broken.skeleton.joints.filter((j) => !j.name.endsWith('LeftForeArm'));
    expect(() => rigPosedParts(character.parts, broken, 'elbowBentLf', GENERATOR_FRAME)).toThrow(/no joint LeftForeArm/);
  });
});

describe('one test identity', () => {
  // a dev-like procedural character (T-pose, average build, one part) that our auto-rig reads well, and two
  // training identities (one of them the test character itself, so (c) carrying its own offsets must be near exact)
  const SEED = 9_100_007;
  const POSES = ['kneeBentRt', 'elbowBentLf'] as const;
  let training: TrainingEntry[] = [];
  let result: IdentityPoseEval;

  it('scores the ground truth, no motion, the auto-rig and the nearest identity\'s offsets', async () => {
    const train = tempDir();
    for (const [seed, name] of [[SEED, 'self'], [9_100_003, 'other']] as const) {
      const character = { ...generateProceduralHumanoid(seed, { targetVertices: 6000 }), name };
      writePoseSample(join(train, `${name}.pose`), makePoseSample(character, 5, { poses: [...POSES], sdfCount: 64, anchors: 2048 }));
    }
    training = await trainingIndex(train, null);
    expect(training.map((e) => e.identity)).toEqual(['other', 'self']);
    const job: PoseIdentityJob = {
      identity: { kind: 'procedural', seed: SEED, targetVertices: 6000 }, poses: [...POSES], rigMethod: 'hybrid', strategy: 'mean',
      latent: false, training,
    };
    result = await evaluatePoseIdentity(job);
    expect(result.status).toBe('ok');
    expect(result.name).toBe(`procedural-${SEED}`);
    expect(result.rig.ok).toBe(true);
    expect(result.nearest).toMatchObject({ identity: 'self', by: 'geometry' });
    // its own mesh, anchors drawn anew: a few tenths of a % of its height apart
    expect(result.nearest!.distance).toBeLessThan(0.02);
    expect(Object.keys(result.poses)).toEqual([...POSES]);
  }, 120_000);

  it('no motion scores exactly the ground-truth motion and never leaks', () => {
    for (const pose of POSES) {
      for (const variant of ['skinningCorrective', 'corrective'] as const) {
        const v: VariantEval = result.poses[pose].variants[variant];
        expect(v.scores.noMotion.error).toBeCloseTo(v.truthMotion, 9);
        expect(v.scores.noMotion.leakage).toBe(0);
        expect(v.scores.latent).toEqual({ error: null, leakage: null });
      }
      // the corrective alone is small next to the pose, and a rig has none: (b) is no motion there
      const c = result.poses[pose].variants.corrective;
      expect(c.scores.rig.error).toBe(c.scores.noMotion.error);
      expect(c.truthMotion).toBeLessThan(0.2 * result.poses[pose].variants.skinningCorrective.truthMotion);
    }
  });

  it('the auto-rig beats no motion on a knee and an elbow', () => {
    for (const pose of POSES) {
      const v = result.poses[pose].variants.skinningCorrective;
      expect(result.poses[pose].rigFailure).toBeNull();
      // the pose moves the character by a fraction of a % of its height on average over all vertices
      expect(v.truthMotion).toBeGreaterThan(0.002);
      expect(v.scores.rig.error!).toBeLessThan(0.5 * v.scores.noMotion.error!);
      expect(v.scores.rig.leakage!).toBeLessThan(0.002);
    }
  });

  it('the identity\'s own offsets carried back are near exact', () => {
    for (const pose of POSES) {
      const v = result.poses[pose].variants.skinningCorrective;
      expect(v.scores.nearestOffsets.error!).toBeLessThan(0.1 * v.scores.noMotion.error!);
    }
  });

  it('ground truth lives in the neutral\'s canonical frame (longest side 1)', () => {
    const identity = proceduralIdentity(SEED, 6000);
    let lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < identity.rest.length; i += 3) {
      lo = lo.map((x, a) => Math.min(x, identity.rest[i + a]));
      hi = hi.map((x, a) => Math.max(x, identity.rest[i + a]));
    }
    expect(Math.max(...hi.map((x, a) => x - lo[a]))).toBeCloseTo(1, 2);
    // up is y: a knee bent backwards moves the right shin towards −z (back) in the canonical frame
    const truth = groundTruth(identity, 'kneeBentRt').skinningCorrective;
    let back = 0;
    for (let i = 0; i < truth.length; i += 3) back = Math.min(back, truth[i + 2] - identity.rest[i + 2]);
    expect(back).toBeLessThan(-0.05);
  });

  it('skips a character whose canonical frame is misread', async () => {
    const character = generateProceduralHumanoid(SEED, { targetVertices: 4000 });
    // lying on its back (y ← z, z ← −y): the frame finder reads z as up, not the generator's +Y
    const lying = { ...character, meta: { ...character.meta, source: 'procedural' }, parts: character.parts.map((p) => ({ ...p, positions: p.positions.map((x, i) => (i % 3 === 1 ? p.positions[i + 1] : i % 3 === 2 ? -p.positions[i - 1] : x)) })) };
    expect(() => testIdentity(lying, 'procedural', SEED)).toThrow(/misread/);
  });
});

describe('summaries, bar and outputs', () => {
  /** An identity with constructed scores on one pose. */
  function identity(name: string, errors: { latent: number; nearest: number; rig: number; correctiveLatent: number }, deltaMu: number[], mu: number[], mu2: number[]): IdentityPoseEval {
    const scores = (latent: number, rig: number, nearest: number) => ({
      latent: { error: latent, leakage: 0.001 }, noMotion: { error: 0.05, leakage: 0 }, rig: { error: rig, leakage: 0.002 }, nearestOffsets: { error: nearest, leakage: 0.003 },
    });
    const entry: IdentityPoseEntry = {
      variants: {
        skinningCorrective: { truthMotion: 0.05, staticShare: 0.8, scores: scores(errors.latent, errors.rig, errors.nearest) },
        corrective: { truthMotion: 0.001, staticShare: 1, scores: scores(errors.correctiveLatent, 0.001, 0.0012) },
      },
      deltaMu, rigFailure: null,
    };
    return {
      name, source: 'procedural', seed: 1, status: 'ok', vertices: 10, parts: 1, rig: { ok: true, method: 'hybrid', seconds: 1 }, nearest: null,
      latentMissing: null, muNeutral: mu, muNeutralResampled: mu2, poses: { elbowBentLf: entry }, seconds: 1,
    };
  }

  it('averages over identities, agrees the latent deltas, and gives the bar per pose', () => {
    const a = identity('a', { latent: 0.01, nearest: 0.02, rig: 0.005, correctiveLatent: 0.0008 }, [2, 0], [0, 0], [0, 0.5]);
    const b = identity('b', { latent: 0.03, nearest: 0.04, rig: 0.005, correctiveLatent: 0.0006 }, [1, 1], [3, 4], [3, 4.5]);
    const failed: IdentityPoseEval = { ...a, name: 'c', status: 'failed', poses: {} };
    const s = summarisePose('elbowBentLf', [a, b, failed]);
    expect(s.variants.skinningCorrective.identities).toBe(2);
    expect(s.variants.skinningCorrective.error.latent).toBeCloseTo(0.02, 12);
    expect(s.variants.skinningCorrective.error.nearestOffsets).toBeCloseTo(0.03, 12);
    expect(s.deltaMuCosine).toBeCloseTo(Math.SQRT1_2, 12);
    // |Δμ| / noise: 2 / 0.5 and √2 / 0.5
    expect(s.conditionToNoise).toBeCloseTo((4 + 2 * Math.SQRT2) / 2, 12);
    expect(s.bar).toEqual({ belowNearestOffsets: true, correctiveBelowRig: true, pass: true });
    const worse = summarisePose('elbowBentLf', [identity('d', { latent: 0.05, nearest: 0.02, rig: 0.005, correctiveLatent: 0.0005 }, [1, 0], [0, 0], [0, 1])]);
    expect(worse.bar).toEqual({ belowNearestOffsets: false, correctiveBelowRig: true, pass: false });
    const d = latentDiagnostics([a, b], [s]);
    expect(d.identityDistance).toBe(5);
    expect(d.resamplingNoise).toBe(0.5);
    expect(d.identityToNoise).toBe(10);
    expect(d.conditionToNoise).toBeCloseTo(s.conditionToNoise!, 12);
  });

  it('writes every pose to the JSON and the report (baselines only, one held-out and one procedural identity)', async () => {
    const out = tempDir();
    const report = await runPoseEval({
      data: DATA, only: ['clonk_farmer'], procedural: 1, proceduralVertices: 3000, train: null, writeMarks: false, rigMethod: 'hybrid',
      strategy: 'mean', latent: false, inProcess: true, version: 'test', log: () => {}, json: join(out, 'poses.json'), report: join(out, 'poses.md'),
    });
    expect(report.latent.measured).toBe(false);
    expect(report.identities.map((i) => i.name)).toEqual(['clonk_farmer', expect.stringMatching(/^procedural-9100\d{3}$/)]);
    expect(report.identities.every((i) => i.status === 'ok')).toBe(true);
    const json = JSON.parse(readFileSync(join(out, 'poses.json'), 'utf8'));
    expect(json.poses.map((p: { pose: string }) => p.pose)).toEqual([...POSE_NAMES]);
    for (const i of json.identities) expect(Object.keys(i.poses)).toEqual([...POSE_NAMES]);
    // no latent, no (c): the bar is not measured, and says so rather than pass or fail
    expect(json.bar).toEqual({ passed: 0, measured: 0, poses: POSE_NAMES.length });
    const md = readFileSync(join(out, 'poses.md'), 'utf8');
    // one row per pose in each of the two per-pose tables
    for (const pose of POSE_NAMES) expect(md.split('\n').filter((line) => line.startsWith(`| ${pose} |`))).toHaveLength(2);
    expect(md).toContain('not measured: left out');
    // the report names the rig the latent path poses through (the apply path's, not (b)'s as it is)
    expect(md).toContain('| latent method | the encoder\'s Δμ → the decoder\'s joint rotations → the apply path\'s auto-rig ((b)\'s skeleton, the learned weights');
    // the shares the auto-rig path posed with are recorded, and the ones below 1 named in the report
    expect(Object.keys(json.settings.correctiveShares)).toEqual([...POSE_NAMES]);
    for (const pose of POSE_NAMES) expect(json.settings.correctiveShares[pose]).toBe(correctiveShareOf(pose));
    const partial = POSE_NAMES.filter((pose) => correctiveShareOf(pose) < 1);
    for (const pose of partial) expect(md).toMatch(new RegExp(`corrective share below 1 \\(fitted on development identities\\):[^|]*${pose.replace('+', '\\+')} ${correctiveShareOf(pose)}`));
    if (!partial.length) expect(md).not.toContain('corrective share below 1');
    // clonk_farmer's artist rig bends its knee: (b) beats (a) in the report's numbers too
    const knee = report.poses.find((p) => p.pose === 'kneeBentRt')!.variants.skinningCorrective.error;
    expect(knee.rig!).toBeLessThan(knee.noMotion!);
    expect(poseEvalSummary(report)).toMatch(/^eval poses: 2 test identities measured, 0 skipped \(frame misread\), 34 poses\nlatent path not measured: left out/);
    const marks = poseEvalMarks(report);
    expect(marks.format).toBe(POSE_EVAL_MARKS_FORMAT);
    expect(Object.keys(marks.poses)).toEqual([...POSE_NAMES]);
    expect(marks.poses.kneeBentRt.latent).toBeNull();
  }, 150_000);

  it('scores each identity in a child process of its own', async () => {
    const report = await runPoseEval({
      data: DATA, only: ['clonk_farmer'], procedural: 0, train: null, writeMarks: false, rigMethod: 'hybrid', strategy: 'mean', latent: false,
      poses: ['kneeBentRt'], version: 'test', log: () => {},
    });
    expect(report.identities).toHaveLength(1);
    const clonk = report.identities[0];
    expect(clonk).toMatchObject({ name: 'clonk_farmer', source: 'held-out', status: 'ok', vertices: 2131 });
    expect(clonk.poses.kneeBentRt.variants.skinningCorrective.scores.rig.error!).toBeLessThan(clonk.poses.kneeBentRt.variants.skinningCorrective.scores.noMotion.error!);
  }, 60_000);

  it('refuses marks without the models, and characters that are not held out', async () => {
    expect(() => heldOutFiles(DATA, ['clonk'])).toThrow(/not held out/);
    expect(() => heldOutFiles(join(DATA, 'nowhere'))).toThrow(/not a folder/);
    expect(heldOutFiles(DATA).map((f) => f.replace(/^.*\//, ''))).toEqual(['mixamo_ely.glb', 'clonk_farmer.glb', 'robot_expressive.glb']);
    await expect(runPoseEval({
      data: DATA, procedural: 0, train: null, writeMarks: true, rigMethod: 'geometric', strategy: 'mean', latent: false, version: 'test', log: () => {},
    })).rejects.toMatchObject({ code: 'MODEL_MISSING' });
  });
});

describe('command line', () => {
  it('parses the arguments with their defaults', () => {
    expect(parsePoseEvalArguments(['--data', 'chars'])).toEqual({
      data: 'chars', procedural: 10, train: '/work/data/pose-train', writeMarks: false, rigMethod: 'hybrid', strategy: 'mean', latentRig: 'auto',
    });
    expect(parsePoseEvalArguments(['--data', 'd', '--only', 'mixamo_ely, clonk_farmer', '--procedural', '0', '--train', 'none', '--json', 'o.json',
      '--report', 'o.md', '--write-marks', '--method', 'geometric', '--strategy', 'nearest'])).toEqual({
      data: 'd', only: ['mixamo_ely', 'clonk_farmer'], procedural: 0, train: null, json: 'o.json', report: 'o.md', writeMarks: true,
      rigMethod: 'geometric', strategy: 'nearest', latentRig: 'auto',
    });
    expect(parsePoseEvalArguments(['--data', 'd', '--latent-rig', 'own']).latentRig).toBe('own');
    // test identities above the size where the apply path reads a reduced copy (pose/poseProxy)
    expect(parsePoseEvalArguments(['--data', 'd', '--procedural-vertices', '50000']).proceduralVertices).toBe(50_000);
  });

  it('answers a bad command line with the caller\'s error', () => {
    const fail = (m: string) => new RangeError(m);
    expect(() => parsePoseEvalArguments([], fail)).toThrow(RangeError);
    expect(() => parsePoseEvalArguments(['--data'], fail)).toThrow(/--data needs a value/);
    expect(() => parsePoseEvalArguments(['--data', 'd', '--procedural', '-1'], fail)).toThrow(/whole number/);
    expect(() => parsePoseEvalArguments(['--data', 'd', '--report', 'r.html'], fail)).toThrow(/\.md/);
    expect(() => parsePoseEvalArguments(['--data', 'd', '--method', 'magic'], fail)).toThrow(/--method/);
    expect(() => parsePoseEvalArguments(['--data', 'd', '--strategy', 'best'], fail)).toThrow(/--strategy/);
    expect(() => parsePoseEvalArguments(['--data', 'd', '--latent-rig', 'artist'], fail)).toThrow(/--latent-rig/);
    expect(() => parsePoseEvalArguments(['--data', 'd', '--latent-rig', 'own', '--write-marks'], fail)).toThrow(/--write-marks/);
    expect(() => parsePoseEvalArguments(['--data', 'd', '--frobnicate'], fail)).toThrow(/unknown argument/);
    expect(() => parsePoseEvalArguments(['--data', 'd', '--procedural-vertices', '12.5'], fail)).toThrow(/--procedural-vertices/);
    expect(() => parsePoseEvalArguments(['--data', 'd', '--procedural-vertices', '500'], fail)).toThrow(/from 2000/);
    expect(() => parsePoseEvalArguments(['--data', 'd', '--procedural-vertices', '50000', '--write-marks'], fail)).toThrow(/--write-marks/);
  });
});

describe('with the latent pose models installed', () => {
  const missing = latentModelsMissing();
  it.skipIf(missing !== null)('measures the latent path and its latents on one pose', async () => {
    const result = await evaluatePoseIdentity({
      // the latent path poses through the job's auto-rig (here the geometric one, which rigs this identity well)
      identity: { kind: 'procedural', seed: 9_100_001, targetVertices: 6000 }, poses: ['elbowBentLf'], rigMethod: 'geometric', strategy: 'mean',
      latent: true, training: [],
    });
    expect(result.status).toBe('ok');
    expect(result.rig.ok).toBe(true);
    const entry = result.poses.elbowBentLf;
    for (const variant of ['skinningCorrective', 'corrective'] as const) {
      const s = entry.variants[variant].scores.latent;
      expect(Number.isFinite(s.error)).toBe(true);
      // a prediction that moved the character far off would be no pose at all
      expect(s.error!).toBeLessThan(entry.variants.skinningCorrective.truthMotion * 2);
    }
    // the pose itself: the latent path bends the elbow, far closer to the truth than not moving (measured 0.32 % of
    // height against 1.0 %), and within reach of the rig baseline that is given the true rotations (0.30 %)
    const applied = entry.variants.skinningCorrective.scores;
    expect(applied.latent.error!).toBeLessThan(0.5 * applied.noMotion.error!);
    expect(applied.latent.error!).toBeLessThan(1.5 * applied.rig.error!);
    expect(entry.deltaMu!.length).toBe(result.muNeutral!.length);
    expect(euclideanDistance(result.muNeutral!, result.muNeutralResampled!)).toBeGreaterThan(0);
    expect(nearestTraining([{ identity: 'x', file: 'x.pose', mu: result.muNeutral, anchors: null }], result.muNeutral, new Float32Array(0)).by).toBe('latent');
  }, 120_000);

  it.skipIf(missing !== null)('poses through the identity\'s own rig with --latent-rig own, and its corrective alone beats no motion', async () => {
    const job: PoseIdentityJob = {
      identity: { kind: 'procedural', seed: 9_100_001, targetVertices: 6000 }, poses: ['elbowBentLf'], rigMethod: 'geometric', strategy: 'mean',
      latent: true, training: [],
    };
    const auto = (await evaluatePoseIdentity(job)).poses.elbowBentLf.variants;
    const own = (await evaluatePoseIdentity({ ...job, latentRig: 'own' })).poses.elbowBentLf.variants;
    // (b) is the auto-rig in both runs; only the latent path changes rig
    expect(own.skinningCorrective.scores.rig.error).toBe(auto.skinningCorrective.scores.rig.error);
    const ownPose = own.skinningCorrective.scores.latent.error!, autoPose = auto.skinningCorrective.scores.latent.error!;
    expect(ownPose, `own ${ownPose}, auto ${autoPose}`).toBeLessThan(autoPose);
    // through the weights the truth was made with, the predicted rotations' correction lands where the true one is
    const ownCorrective = own.corrective.scores;
    expect(ownCorrective.latent.error!, JSON.stringify(ownCorrective)).toBeLessThan(ownCorrective.noMotion.error!);
  }, 180_000);
});
