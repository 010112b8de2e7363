/**
 * `autorig eval skeletons`'s command line: its usage and its parser, apart from the eval itself (sidecar/cli/main.ts
 * imports the eval when it runs).
 */
import { AutoRigError } from '../../errors.js';
import { DEFAULT_METHOD, METHODS, type Method } from '../../methods.js';
import { forEachEvalArgument } from '../evalArguments.js';

/**
 * First generator seed of the skeleton eval's characters: a plain run of seeds apart from the training data's
 * (data/makeDataset.ts sampleSeed hashes (dataset seed, index) over all 32-bit values), from the runs the estimator's
 * rules were developed on (9 200 000–10 300 079, 11 000 000–039) and from `eval poses`' and `eval correctives`'.
 */
export const SKELETON_EVAL_SEED_BASE = 11_000_040;
export const DEFAULT_SKELETON_EVAL_COUNT = 80;
export const DEFAULT_SKELETON_EVAL_VERTICES = 20_000;

export const SKELETON_EVAL_USAGE = 'autorig eval skeletons [--procedural N] [--seed S] [--asymmetric-arms] [--method NAME]\n'
  + '                    [--vertices V] [--json <out.json>]\n'
  + '  Rigs N procedural humanoids (default ' + DEFAULT_SKELETON_EVAL_COUNT + ') from generator seeds S, S+1, ... (default ' + SKELETON_EVAL_SEED_BASE + ', a run the\n'
  + '  training data never draws) at V vertices (default ' + DEFAULT_SKELETON_EVAL_VERTICES + ') and scores each joint against the generator\'s own,\n'
  + '  in % of the character\'s height: every joint, the elbows and wrists, the others. --asymmetric-arms poses each\n'
  + '  character\'s arms apart (one raised or held out, one hanging). --method as for autorig rig (default ' + DEFAULT_METHOD + ').';

/** The parsed command line. */
export interface SkeletonEvalArguments {
  procedural: number;
  seed: number;
  asymmetricArms: boolean;
  method: Method;
  vertices: number;
  json?: string;
}

/**
 * parseSkeletonEvalArguments: the arguments after `eval skeletons` → SkeletonEvalArguments; `fail` makes the error for a
 * bad command line (default BAD_REQUEST).
 */
export function parseSkeletonEvalArguments(args: string[], fail: (message: string) => Error = (m) => new AutoRigError('BAD_REQUEST', m)): SkeletonEvalArguments {
  const parsed: SkeletonEvalArguments = {
    procedural: DEFAULT_SKELETON_EVAL_COUNT, seed: SKELETON_EVAL_SEED_BASE, asymmetricArms: false, method: DEFAULT_METHOD,
    vertices: DEFAULT_SKELETON_EVAL_VERTICES,
  };
  forEachEvalArgument(args, fail, (arg, value) => {
    const whole = (v: string, min: number, max = Number.MAX_SAFE_INTEGER) => {
      if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw fail(`${arg} wants a whole number in [${min}, ${max}], got '${v}'`);
      return Number(v);
    };
    if (arg === '--procedural') parsed.procedural = whole(value(), 1);
    else if (arg === '--seed') parsed.seed = whole(value(), 0);
    else if (arg === '--vertices') parsed.vertices = whole(value(), 1000, 600_000);
    else if (arg === '--asymmetric-arms') parsed.asymmetricArms = true;
    else if (arg === '--json') parsed.json = value();
    else if (arg === '--method') {
      const v = value();
      if (!(METHODS as readonly string[]).includes(v)) throw fail(`--method: one of ${METHODS.join(', ')}, got '${v}'`);
      parsed.method = v as Method;
    } else throw fail(`unknown argument '${arg}'`);
  });
  return parsed;
}
