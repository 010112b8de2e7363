/**
 * `autorig eval correctives`'s command line: its usage and its parser, apart from the eval itself, so that the CLI
 * prints the usage and checks the arguments without loading the eval (sidecar/cli/main.ts imports the eval when it
 * runs).
 */
import { extname } from 'node:path';
import { AutoRigError } from '../../errors.js';
import { METHODS } from '../../methods.js';
import { forEachEvalArgument } from '../evalArguments.js';
import { KEY_POSES } from './keyPoses.js';
import type { CorrectivesOptions } from './runCorrectivesEval.js';

/**
 * First generator seed of the correctives test characters: a plain run of seeds apart from the training data's
 * (data/makeDataset.ts sampleSeed hashes (dataset seed, index) over all 32-bit values) and from `eval poses`'s
 * 9 100 000 run.
 */
export const CORRECTIVES_SEED_BASE = 9_200_000;

export const DEFAULT_CORRECTIVES_CHARACTERS = 4;

export const CORRECTIVES_EVAL_USAGE = 'autorig eval correctives [--procedural N] [--seed S] [--json] [--report <out.md>]\n'
  + '                    [--poses id,id] [--degrees 45,90] [--method geometric|learned] [--field]\n'
  + '                    [--fit-examples 90[,..]] [--fit-blend dqs|linear]\n'
  + '  Static LBS and dual-quaternion skinning with our weights (--method, default geometric, on the true skeleton)\n'
  + '  against the exact posed surface of N procedural humanoids (default ' + DEFAULT_CORRECTIVES_CHARACTERS + ') from seeds S, S+1, ... (default\n'
  + '  ' + CORRECTIVES_SEED_BASE + ': a plain run the training data never draws; its seeds are hashes over all 32-bit values),\n'
  + '  at rest and at each key pose: ' + KEY_POSES.map((p) => p.id).join(', ') + ' (default all) and angle (default 45,90).\n'
  + '  --field: also the learned pose-dependent weight field (models/pose_weights.onnx; AUTORIG_MODELS picks another folder).\n'
  + '  --fit-examples D: also weights fitted per character to posed examples (correctives/fitExampleWeights.ts): the exact\n'
  + '  surface of every key pose at the angles D is given as an example, other angles are held out; on the field\'s weights\n'
  + '  with --field, else on the static ones; blended as --fit-blend (default dqs).\n'
  + '  Prints the table (--json: the full results as JSON instead).';

/** The parsed command line. */
export interface CorrectivesEvalArguments extends Pick<CorrectivesOptions, 'procedural' | 'seed' | 'poses' | 'degrees' | 'skinMethod'> {
  json: boolean;
  /** also measure the learned pose-dependent field (models/pose_weights.onnx, or AUTORIG_MODELS's) */
  field?: boolean;
  /** also measure weights fitted to the exact surfaces at these angles (every key pose), blended as fitBlend */
  exampleDegrees?: number[];
  fitBlend?: 'dqs' | 'linear';
  report?: string;
}

/**
 * parseCorrectivesEvalArguments: the arguments after `eval correctives` → CorrectivesEvalArguments; `fail` makes the error for
 * a bad command line (default BAD_REQUEST).
 */
export function parseCorrectivesEvalArguments(args: string[], fail: (message: string) => Error = (m) => new AutoRigError('BAD_REQUEST', m)): CorrectivesEvalArguments {
  const parsed: CorrectivesEvalArguments = { procedural: DEFAULT_CORRECTIVES_CHARACTERS, seed: CORRECTIVES_SEED_BASE, json: false };
  forEachEvalArgument(args, fail, (arg, value) => {
    const whole = (v: string, min: number) => {
      if (!/^\d+$/.test(v) || Number(v) < min) throw fail(`${arg} wants a whole number ≥ ${min}, got '${v}'`);
      return Number(v);
    };
    const angles = (text: string) => {
      const list = text.split(',').map((s) => Number(s.trim()));
      if (!list.length || list.some((d) => !Number.isFinite(d) || d <= 0 || d > 180)) throw fail(`${arg}: angles in (0, 180], got '${text}'`);
      return list;
    };
    if (arg === '--procedural') parsed.procedural = whole(value(), 1);
    else if (arg === '--seed') parsed.seed = whole(value(), 0);
    else if (arg === '--json') parsed.json = true;
    else if (arg === '--report') {
      parsed.report = value();
      if (extname(parsed.report).toLowerCase() !== '.md') throw fail(`the report must be a .md file, got '${parsed.report}'`);
    } else if (arg === '--poses') {
      const ids = value().split(',').map((s) => s.trim()).filter(Boolean);
      const poses = ids.map((id) => KEY_POSES.find((p) => p.id === id));
      const unknown = ids.filter((_, k) => !poses[k]);
      if (unknown.length || !ids.length) throw fail(`--poses: ids among ${KEY_POSES.map((p) => p.id).join(', ')}, got '${unknown.join(',') || ids.join(',')}'`);
      parsed.poses = poses.map((p) => p!);
    } else if (arg === '--degrees') parsed.degrees = angles(value());
    else if (arg === '--fit-examples') parsed.exampleDegrees = angles(value());
    else if (arg === '--fit-blend') {
      const v = value();
      if (v !== 'dqs' && v !== 'linear') throw fail(`--fit-blend: dqs or linear, got '${v}'`);
      parsed.fitBlend = v;
    } else if (arg === '--field') parsed.field = true;
    else if (arg === '--method') {
      const v = value();
      if (v === 'hybrid' || !(METHODS as readonly string[]).includes(v)) throw fail(`--method: geometric or learned, got '${v}'`);
      parsed.skinMethod = v;
    } else throw fail(`unknown argument '${arg}'`);
  });
  return parsed;
}
