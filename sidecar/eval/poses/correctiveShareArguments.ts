/**
 * The command line of `autorig eval corrective-share` (its usage text and the parse), kept apart from the fit so that
 * sidecar/cli/main.ts can print the usage without loading the apply path.
 */
import { forEachEvalArgument } from '../evalArguments.js';

/** The development seed stream: procedural humanoids neither the training data nor the test identities are made from. */
export const PROCEDURAL_DEVELOPMENT_SEED_BASE = 9_300_000;
export const DEFAULT_PROCEDURAL_DEVELOPMENT_IDENTITIES = 10;

export const CORRECTIVE_SHARE_USAGE = 'autorig eval corrective-share --data <characters folder> [--procedural N] [--write]\n'
  + '  Fits each pose\'s corrective share (Apply Latent Pose poses with LBS + s·(DQS − LBS), s from 0 to 1 in steps of 0.05)\n'
  + '  on development identities only: the characters in --data that are not held out, and N procedural humanoids (default\n'
  + `  ${DEFAULT_PROCEDURAL_DEVELOPMENT_IDENTITIES}, seeds ${PROCEDURAL_DEVELOPMENT_SEED_BASE} on; neither training nor the test identities of autorig eval poses).\n`
  + '  A pose and its mirror share one s, the one with the least mean error of the corrective alone. --write writes\n'
  + '  models/latent_pose_corrective_share.json, which Apply Latent Pose reads (without it every pose has s = 1).';

export interface CorrectiveShareArguments {
  data: string;
  procedural: number;
  write: boolean;
}

/** parseCorrectiveShareArguments: the arguments after `eval corrective-share` → CorrectiveShareArguments, or fail(…). */
export function parseCorrectiveShareArguments(args: string[], fail: (message: string) => Error): CorrectiveShareArguments {
  const parsed: CorrectiveShareArguments = { data: '', procedural: DEFAULT_PROCEDURAL_DEVELOPMENT_IDENTITIES, write: false };
  forEachEvalArgument(args, fail, (arg, value) => {
    if (arg === '--data') parsed.data = value();
    else if (arg === '--procedural') {
      const v = value();
      if (!/^\d+$/.test(v)) throw fail(`--procedural wants a whole number ≥ 0, got '${v}'`);
      parsed.procedural = Number(v);
    } else if (arg === '--write') parsed.write = true;
    else throw fail(`unknown argument '${arg}'`);
  });
  if (!parsed.data) throw fail('no data folder given (--data <folder>)');
  return parsed;
}
