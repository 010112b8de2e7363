/**
 * The command line of `autorig eval poses` (its usage text and the parse into PoseEvalOptions), kept beside the
 * eval so that sidecar/cli/main.ts only wires it in. Every CLI command loads this module for its usage text: it
 * imports nothing of the eval's or the apply's own work.
 */
import { extname } from 'node:path';
import { AutoRigError } from '../../errors.js';
import { DEFAULT_METHOD, METHODS } from '../../methods.js';
import { forEachEvalArgument } from '../evalArguments.js';
import { MESH_LIMITS } from '../../mesh/mergeParts.js';
import { POSE_STRATEGIES, type PoseStrategy } from '../../pose/poseLibrary.js';
import { LATENT_RIGS, type LatentRig } from './poseEvalTypes.js';
import type { PoseEvalOptions } from './runPoseEval.js';

/** Where `autorig data --kind pose` put the latent-pose training identities on the training machine. */
export const DEFAULT_POSE_TRAIN_FOLDER = '/work/data/pose-train';
export const DEFAULT_PROCEDURAL_TEST_IDENTITIES = 10;
/** Vertex budget of a procedural test identity (dev-like density). */
export const PROCEDURAL_TEST_VERTICES = 20_000;
/** The fewest vertices a procedural test identity may ask for: its generator's coarsest humanoid has a few thousand. */
const MIN_PROCEDURAL_VERTICES = 2000;

export const POSE_EVAL_USAGE = 'autorig eval poses --data <characters folder> [--only a,b] [--procedural N] [--procedural-vertices V]\n'
  + '                    [--train <folder of *.pose>] [--json <out.json>] [--report <out.md>] [--write-marks] [--method NAME] [--strategy mean|nearest]\n'
  + '                    [--latent-rig auto|own]\n'
  + '  Apply Latent Pose on test identities (the held-out dev characters in --data, N procedural humanoids from an unused\n'
  + '  seed stream) against the ground-truth posed mesh and three baselines: (a) no motion, (b) auto-rig + linear blend\n'
  + '  skinning (--method, default ' + DEFAULT_METHOD + '), (c) the nearest training identity\'s offsets (--train, default\n'
  + '  ' + DEFAULT_POSE_TRAIN_FOLDER + '; "none" to leave it out). --only: held-out names (default all); --procedural: default\n'
  + '  ' + DEFAULT_PROCEDURAL_TEST_IDENTITIES + ', of about V vertices each (--procedural-vertices, default ' + PROCEDURAL_TEST_VERTICES + '; a large mesh\n'
  + '  is read through a reduced copy of it). --write-marks writes models/latent_pose_eval.json (the experimental marks of the pose list).\n'
  + '  --latent-rig: the rig the latent path poses each identity through: auto (default: its auto-rig, what a mesh without\n'
  + '  a rig gets) or own (its own rig, what a character with a Mixamo rig gets). (b) is the auto-rig either way.';

/** The parsed command line: PoseEvalOptions without what the caller supplies (version, log). */
export type PoseEvalArguments = Omit<PoseEvalOptions, 'version' | 'log'>;

/**
 * parsePoseEvalArguments: the arguments after `eval poses` → PoseEvalArguments. `fail` makes the error for a bad
 * command line (the CLI passes one that makes its UsageError with POSE_EVAL_USAGE); by default BAD_REQUEST.
 */
export function parsePoseEvalArguments(args: string[], fail: (message: string) => Error = (m) => new AutoRigError('BAD_REQUEST', m)): PoseEvalArguments {
  const parsed: PoseEvalArguments = {
    data: '', procedural: DEFAULT_PROCEDURAL_TEST_IDENTITIES, train: DEFAULT_POSE_TRAIN_FOLDER, writeMarks: false,
    rigMethod: DEFAULT_METHOD, strategy: 'mean', latentRig: 'auto',
  };
  forEachEvalArgument(args, fail, (arg, value) => {
    if (arg === '--data') parsed.data = value();
    else if (arg === '--only') parsed.only = value().split(',').map((n) => n.trim()).filter(Boolean);
    else if (arg === '--procedural') {
      const v = value();
      if (!/^\d+$/.test(v)) throw fail(`--procedural wants a whole number ≥ 0, got '${v}'`);
      parsed.procedural = Number(v);
    } else if (arg === '--procedural-vertices') {
      const v = value();
      if (!/^\d+$/.test(v) || Number(v) < MIN_PROCEDURAL_VERTICES || Number(v) > MESH_LIMITS.maxVerticesTotal) {
        throw fail(`--procedural-vertices wants a whole number from ${MIN_PROCEDURAL_VERTICES} to ${MESH_LIMITS.maxVerticesTotal}, got '${v}'`);
      }
      parsed.proceduralVertices = Number(v);
    } else if (arg === '--train') {
      const v = value();
      parsed.train = v === 'none' ? null : v;
    } else if (arg === '--json') parsed.json = value();
    else if (arg === '--report') {
      parsed.report = value();
      if (extname(parsed.report).toLowerCase() !== '.md') throw fail(`the report must be a .md file, got '${parsed.report}'`);
    } else if (arg === '--write-marks') parsed.writeMarks = true;
    else if (arg === '--method') {
      const v = value();
      if (!(METHODS as readonly string[]).includes(v)) throw fail(`--method: one of ${METHODS.join(', ')}, got '${v}'`);
      parsed.rigMethod = v;
    } else if (arg === '--strategy') {
      const v = value();
      if (!(POSE_STRATEGIES as readonly string[]).includes(v)) throw fail(`--strategy: one of ${POSE_STRATEGIES.join(', ')}, got '${v}'`);
      parsed.strategy = v as PoseStrategy;
    } else if (arg === '--latent-rig') {
      const v = value();
      if (!(LATENT_RIGS as readonly string[]).includes(v)) throw fail(`--latent-rig: one of ${LATENT_RIGS.join(', ')}, got '${v}'`);
      parsed.latentRig = v as LatentRig;
    } else throw fail(`unknown argument '${arg}'`);
  });
  if (!parsed.data) throw fail('no characters folder given (--data <folder>)');
  if (parsed.only && parsed.only.length === 0) throw fail('--only names no character');
  // the marks label the pose menu for every user; they come from the default path, a mesh without a rig
  if (parsed.writeMarks && parsed.latentRig !== 'auto') throw fail('--write-marks takes its marks from --latent-rig auto');
  if (parsed.writeMarks && parsed.proceduralVertices !== undefined) throw fail('--write-marks takes its marks from the default --procedural-vertices');
  return parsed;
}
