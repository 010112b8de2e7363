/**
 * `autorig eval poses` as a function (issue 6): Apply Latent Pose measured on test identities (the held-out dev
 * characters and procedural humanoids from an unused seed stream) against the ground truth and three baselines,
 * each identity in a child process of its own (poseEvalWorker.ts); then the per-pose means, the latent diagnostics,
 * the issue's bar, and the outputs (JSON, markdown report, and the experimental marks listLatentPoses reads).
 */
import { fork } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HELD_OUT_CHARACTERS, isHeldOutCharacter } from '../../data/augment/heldOut.js';
import { AutoRigError } from '../../errors.js';
import { selectProvider } from '../../learned/executionProvider.js';
import { modelDataPath } from '../../learned/modelFiles.js';
import { correctiveShareOf } from '../../pose/correctiveShare.js';
import type { PoseStrategy } from '../../pose/poseLibrary.js';
import { POSE_NAMES, type PoseName } from '../../pose/poseVocabulary.js';
import { evaluatePoseIdentity, type IdentitySpec, type PoseIdentityJob } from './evaluatePoseIdentity.js';
import { encoderMissing, latentModelsMissing, loadEncoder, trainingIndex, type TrainingEntry } from './latentProbe.js';
import { renderPoseEvalMarkdown } from './poseEvalReport.js';
import {
  MEASURED_VARIANTS, POSE_EVAL_FORMAT, POSE_EVAL_MARKS_FORMAT, PREDICTORS,
  type IdentityPoseEval, type LatentRig, type LatentDiagnostics, type MeasuredVariant, type PoseEvalMarks, type PoseEvalReport, type PoseSummary,
  type PoseVariantSummary, type Predictor,
} from './poseEvalTypes.js';
import { cosineSimilarity, euclideanDistance, meanOf, meanOverPairs, STATIC_MOTION, vectorNorm } from './poseMetrics.js';
import { PROCEDURAL_TEST_SEED_BASE, PROCEDURAL_TEST_VERTICES } from './testIdentities.js';

export interface PoseEvalOptions {
  /** folder of the dev characters (*.glb); the held-out ones are read from it */
  data: string;
  /** held-out character names to measure (default all of HELD_OUT_CHARACTERS) */
  only?: string[];
  /** procedural test identities (misread frames are skipped and replaced, up to a bound) */
  procedural: number;
  proceduralVertices?: number;
  /** folder of the training identities (*.pose) for baseline (c); null: (c) not measured */
  train: string | null;
  json?: string;
  report?: string;
  /** write models/latent_pose_eval.json (needs the latent models) */
  writeMarks: boolean;
  /** auto-rig method of baseline (b) */
  rigMethod: string;
  strategy: PoseStrategy;
  /** the rig the latent path poses through (default auto) */
  latentRig?: LatentRig;
  /** poses to measure (default all of POSE_NAMES) */
  poses?: PoseName[];
  /** measure the latent path: default when its models are installed; false leaves it out (tests of the baselines) */
  latent?: boolean;
  /** score the identities in this process instead of a child each (tests) */
  inProcess?: boolean;
  version: string;
  log: (line: string) => void;
}

/** An identity that takes longer than this is stopped and reported as failed. */
const IDENTITY_TIMEOUT_MS = 15 * 60 * 1000;

/** runPoseEval: measure, write the outputs asked for, return the report. */
export async function runPoseEval(options: PoseEvalOptions): Promise<PoseEvalReport> {
  const created = new Date().toISOString();
  const heldOut = heldOutFiles(options.data, options.only);
  const poses = options.poses ?? [...POSE_NAMES];
  const missing = options.latent === false ? 'left out (latent: false)' : latentModelsMissing();
  if (options.writeMarks && missing) throw new AutoRigError('MODEL_MISSING', `--write-marks needs the latent pose models (${missing})`);
  const latent = missing === null;
  // the encoder alone (installed before the decoder is trained) already gives the latent diagnostics
  const encoder = options.latent !== false && encoderMissing() === null;
  const usesModels = encoder || options.rigMethod !== 'geometric';
  const provider = usesModels ? (await selectProvider()).name : null;

  let training: TrainingEntry[] = [];
  if (options.train) {
    options.log(`eval poses: reading the training identities in ${options.train}`);
    training = await trainingIndex(options.train, encoder ? await loadEncoder() : null, (file, why) => options.log(`eval poses: left out ${file}: ${why}`));
    options.log(`eval poses: ${training.length} training identities for baseline (c)`);
  }
  const job = (identity: IdentitySpec): PoseIdentityJob => ({
    identity, poses, rigMethod: options.rigMethod, strategy: options.strategy, latentRig: options.latentRig ?? 'auto', latent, encoder, training,
    staticThreshold: STATIC_MOTION,
  });
  const run = (identity: IdentitySpec) => (options.inProcess ? evaluatePoseIdentity(job(identity), options.log) : evaluateInChild(job(identity)));

  const identities: IdentityPoseEval[] = [];
  const skipped: PoseEvalReport['skipped'] = [];
  const report = (r: IdentityPoseEval) => options.log(`eval poses: ${r.name}: ${describe(r)} (${r.seconds.toFixed(1)} s)`);
  for (const file of heldOut) {
    const r = await run({ kind: 'held-out', file });
    identities.push(r);
    report(r);
  }
  const vertices = options.proceduralVertices ?? PROCEDURAL_TEST_VERTICES;
  const seeds: number[] = [];
  // a misread frame is replaced by the next seed, but a generator that misreads everything must not run forever
  for (let i = 0, accepted = 0; accepted < options.procedural && i < 3 * options.procedural + 5; i++) {
    const seed = PROCEDURAL_TEST_SEED_BASE + i;
    const r = await run({ kind: 'procedural', seed, targetVertices: vertices });
    report(r);
    if (r.status === 'skipped') {
      skipped.push({ name: r.name, reason: r.error?.message ?? 'canonical frame misread' });
      continue;
    }
    seeds.push(seed);
    identities.push(r);
    accepted++;
  }

  const summaries = poses.map((pose) => summarisePose(pose, identities));
  const result: PoseEvalReport = {
    format: POSE_EVAL_FORMAT,
    created,
    data: options.data,
    train: options.train,
    settings: {
      strength: 1, strategy: options.strategy, rigMethod: options.rigMethod, latentRig: options.latentRig ?? 'auto',
      ...((options.latentRig ?? 'auto') === 'auto' ? { correctiveShares: Object.fromEntries(poses.map((pose) => [pose, correctiveShareOf(pose)])) } : {}),
      proceduralSeeds: seeds, proceduralVertices: vertices,
      staticThreshold: STATIC_MOTION, poses,
    },
    environment: { node: process.version, platform: `${platform()} ${process.arch}`, cpus: availableParallelism(), autorig: options.version, provider },
    latent: {
      measured: latent,
      note: missing === null ? 'encoder, decoder and library installed' : `${missing}${encoder ? ' (the encoder is: latent diagnostics measured)' : ''}`,
    },
    identities,
    skipped,
    poses: summaries,
    diagnostics: latentDiagnostics(identities, summaries),
    bar: {
      passed: summaries.filter((s) => s.bar.pass === true).length,
      measured: summaries.filter((s) => s.bar.pass !== null).length,
      poses: summaries.length,
    },
  };

  if (options.json) {
    await mkdir(dirname(resolve(options.json)), { recursive: true });
    await writeFile(options.json, `${JSON.stringify(result, jsonNumbers, 1)}\n`);
  }
  if (options.report) {
    await mkdir(dirname(resolve(options.report)), { recursive: true });
    await writeFile(options.report, renderPoseEvalMarkdown(result));
  }
  if (options.writeMarks) {
    const path = modelDataPath('latentPoseEval');
    await writeFile(path, `${JSON.stringify(poseEvalMarks(result), jsonNumbers, 2)}\n`);
    options.log(`eval poses: wrote ${path}`);
  }
  return result;
}

/**
 * heldOutFiles: the .glb of every held-out character asked for (default all) in `data`. Throws BAD_REQUEST when the
 * folder is missing, a name is not a held-out character (only those are test identities), or its file is not there.
 */
export function heldOutFiles(data: string, only?: string[]): string[] {
  if (!existsSync(data) || !statSync(data).isDirectory()) throw new AutoRigError('BAD_REQUEST', `--data ${data}: not a folder`);
  const names = only ?? [...HELD_OUT_CHARACTERS];
  const notHeldOut = names.filter((n) => !isHeldOutCharacter(n));
  if (notHeldOut.length) {
    throw new AutoRigError('BAD_REQUEST', `--only: ${notHeldOut.join(', ')} ${notHeldOut.length > 1 ? 'are' : 'is'} not held out of training, so not a test identity (held out: ${HELD_OUT_CHARACTERS.join(', ')})`);
  }
  return names.map((n) => {
    const file = join(data, `${n}.glb`);
    if (!existsSync(file)) throw new AutoRigError('BAD_REQUEST', `--data ${data}: no ${n}.glb`);
    return file;
  });
}

/** summarisePose: the means over the measured identities of one pose, its latent agreement and its bar verdict. */
export function summarisePose(pose: string, identities: IdentityPoseEval[]): PoseSummary {
  const measured = identities.filter((i) => i.status === 'ok' && i.poses[pose]);
  const variants = {} as Record<MeasuredVariant, PoseVariantSummary>;
  for (const variant of MEASURED_VARIANTS) {
    const entries = measured.map((i) => i.poses[pose].variants[variant]);
    const meanOfPredictor = (p: Predictor, key: 'error' | 'leakage') => nullable(meanOf(entries.map((e) => e.scores[p][key] ?? Number.NaN)));
    variants[variant] = {
      identities: entries.length,
      truthMotion: meanOf(entries.map((e) => e.truthMotion)),
      error: Object.fromEntries(PREDICTORS.map((p) => [p, meanOfPredictor(p, 'error')])) as Record<Predictor, number | null>,
      leakage: Object.fromEntries(PREDICTORS.map((p) => [p, meanOfPredictor(p, 'leakage')])) as Record<Predictor, number | null>,
      rigFailures: measured.filter((i) => i.poses[pose].rigFailure !== null).length,
    };
  }
  const withDelta = measured.filter((i) => i.poses[pose].deltaMu);
  const deltas = withDelta.map((i) => i.poses[pose].deltaMu!);
  const ratios = withDelta.map((i) => vectorNorm(i.poses[pose].deltaMu!) / resamplingNoise(i));
  const below = (a: number | null, b: number | null) => (a === null || b === null ? null : a < b);
  const applied = variants.skinningCorrective.error, corrective = variants.corrective.error;
  const belowNearestOffsets = below(applied.latent, applied.nearestOffsets);
  const correctiveBelowRig = below(corrective.latent, corrective.rig);
  return {
    pose,
    variants,
    deltaMuCosine: nullable(meanOverPairs(deltas, cosineSimilarity)),
    deltaMuNorm: nullable(meanOf(deltas.map(vectorNorm))),
    conditionToNoise: nullable(meanOf(ratios)),
    bar: {
      belowNearestOffsets,
      correctiveBelowRig,
      pass: belowNearestOffsets === null || correctiveBelowRig === null ? null : belowNearestOffsets && correctiveBelowRig,
    },
  };
}

/** |μ(seed 1) − μ(seed 2)| of an identity's neutral: how far the encoder's reading moves with the SDF samples alone. */
function resamplingNoise(identity: IdentityPoseEval): number {
  return identity.muNeutral && identity.muNeutralResampled ? euclideanDistance(identity.muNeutral, identity.muNeutralResampled) : Number.NaN;
}

/** latentDiagnostics: identity spread vs resampling noise over the measured identities, and R_cond/noise over poses. */
export function latentDiagnostics(identities: IdentityPoseEval[], poses: PoseSummary[]): LatentDiagnostics {
  const measured = identities.filter((i) => i.status === 'ok' && i.muNeutral);
  const identityDistance = nullable(meanOverPairs(measured.map((i) => i.muNeutral!), euclideanDistance));
  const noise = nullable(meanOf(measured.map(resamplingNoise)));
  return {
    identityDistance,
    resamplingNoise: noise,
    identityToNoise: identityDistance !== null && noise ? identityDistance / noise : null,
    conditionToNoise: nullable(meanOf(poses.map((p) => p.conditionToNoise ?? Number.NaN))),
  };
}

/** poseEvalMarks: models/latent_pose_eval.json's content: per pose the skinningCorrective means (fractions of height). */
export function poseEvalMarks(report: PoseEvalReport): PoseEvalMarks {
  const poses: PoseEvalMarks['poses'] = {};
  for (const s of report.poses) {
    const e = s.variants.skinningCorrective.error;
    poses[s.pose] = { latent: e.latent, rig: e.rig, nearestOffsets: e.nearestOffsets, noMotion: e.noMotion };
  }
  return { format: POSE_EVAL_MARKS_FORMAT, date: report.created, poses };
}

/** The worker's file beside this module: the built .js, or the .ts source run with the dev loader (tests). */
function workerCommand(): { modulePath: string; execArgv: string[] } {
  if (!import.meta.url.endsWith('.ts')) return { modulePath: fileURLToPath(new URL('./poseEvalWorker.js', import.meta.url)), execArgv: [] };
  const register = new URL('../../server/devTsRegister.mjs', import.meta.url).href;
  return { modulePath: fileURLToPath(new URL('./poseEvalWorker.ts', import.meta.url)), execArgv: ['--import', register] };
}

function evaluateInChild(job: PoseIdentityJob): Promise<IdentityPoseEval> {
  const { modulePath, execArgv } = workerCommand();
  const spec = job.identity;
  const name = spec.kind === 'procedural' ? `procedural-${spec.seed}` : spec.file.replace(/^.*[\\/]/, '').replace(/\.[^.]*$/, '');
  const failed = (code: string, message: string): IdentityPoseEval => ({
    name, source: spec.kind, seed: spec.kind === 'procedural' ? spec.seed : null, status: 'failed', error: { code, message },
    vertices: 0, parts: 0, rig: { ok: false, method: job.rigMethod, seconds: 0 }, nearest: null, latentMissing: null,
    muNeutral: null, muNeutralResampled: null, poses: {}, seconds: 0,
  });
  return new Promise((done) => {
    const t0 = performance.now();
    const child = fork(modulePath, [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let answered = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), IDENTITY_TIMEOUT_MS);
    child.on('message', (message: { result?: IdentityPoseEval; error?: { message: string; code?: string; stack?: string } }) => {
      answered = true;
      if (message.result) done(message.result);
      else done(failed(message.error?.code ?? 'INTERNAL', message.error?.stack ?? message.error?.message ?? 'unknown error'));
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (!answered) done({ ...failed('INTERNAL', `the evaluation process ended without a result (exit ${code ?? signal})`), seconds: (performance.now() - t0) / 1000 });
    });
    child.send(job);
  });
}

/** One log line per identity: its means over poses, skinningCorrective. */
function describe(r: IdentityPoseEval): string {
  if (r.status !== 'ok') return `${r.status}: ${r.error?.message.split('\n')[0]}`;
  const mean = (p: Predictor) => meanOf(Object.values(r.poses).map((e) => e.variants.skinningCorrective.scores[p].error ?? Number.NaN));
  const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(2)}%` : '—');
  return `latent ${pct(mean('latent'))}, no motion ${pct(mean('noMotion'))}, rig ${pct(mean('rig'))}${r.rig.ok ? '' : ' (rig failed)'}, `
    + `nearest offsets ${pct(mean('nearestOffsets'))}${r.nearest ? ` (${r.nearest.identity} by ${r.nearest.by})` : ''}`;
}

function nullable(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/** JSON has no NaN: a value that could not be measured is written as null. */
function jsonNumbers(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? null : value;
}
