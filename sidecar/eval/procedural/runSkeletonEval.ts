/**
 * `autorig eval skeletons`: the auto-rig's joints against the generator's own on procedural humanoids, whose joints are
 * exact by construction (data/procedural). The artists' characters (`autorig eval`) are ten; this counts in the
 * dozens, and can pose the arms apart, which no artist's character does.
 */
import { AutoRigError } from '../../errors.js';
import { generateProceduralHumanoid } from '../../data/procedural/proceduralHumanoid.js';
import { rigCharacterAsync } from '../../pipeline.js';
import { MIXAMO_JOINTS, type MixamoJointName } from '../../skeleton/mixamoTemplate.js';
import type { SkeletonEvalArguments } from './proceduralSkeletonArguments.js';

export const SKELETON_EVAL_SCHEMA = 'autorig-skeleton-eval/1';

/** The joints the arms' share reads: where a posed arm ends up (the elbows and wrists). */
export const ARM_POSE_JOINTS: readonly MixamoJointName[] = ['LeftForeArm', 'LeftHand', 'RightForeArm', 'RightHand'];

/** A joint this far off (share of the height) counts as misplaced in the summary. */
export const MISPLACED_JOINT = 0.05;

/** The scored joints: every template joint but HeadTop_End, which the generator puts inside the head. */
const SCORED = MIXAMO_JOINTS.filter((name) => name !== 'HeadTop_End');

/** One character's result. */
export interface SkeletonEvalRow {
  seed: number;
  /** the generator's pose: one kind, or one per arm (left, right) where the arms are posed apart */
  pose: string | string[];
  /** each arm's angle below level, degrees (left, right) */
  armDegrees: number[];
  clothing: string[];
  /** absent where the character was rigged */
  refused?: { code: string; message: string };
  /** % of the height: the mean over the scored joints, the elbows' and wrists' (ARM_POSE_JOINTS) and the others' */
  mean?: number;
  arms?: number;
  rest?: number;
  /** % of the height, by joint */
  perJoint?: Record<string, number>;
}

export interface SkeletonEvalSummary {
  rigged: number;
  refused: number;
  /** over the rigged characters' means, % of the height */
  mean: number;
  median: number;
  arms: { mean: number; median: number };
  rest: { mean: number; median: number };
  /** joints more than MISPLACED_JOINT of the height off, and the characters with any */
  misplacedJoints: number;
  charactersWithMisplacedJoints: number;
}

export interface SkeletonEvalReport {
  schema: typeof SKELETON_EVAL_SCHEMA;
  options: Omit<SkeletonEvalArguments, 'json'>;
  rows: SkeletonEvalRow[];
  summary: SkeletonEvalSummary;
}

/**
 * runSkeletonEval: options (SkeletonEvalArguments without json), log (a line per character) → SkeletonEvalReport.
 * Characters the pipeline refuses are counted, not scored.
 */
export async function runSkeletonEval(options: Omit<SkeletonEvalArguments, 'json'>, log: (line: string) => void = () => {}): Promise<SkeletonEvalReport> {
  const rows: SkeletonEvalRow[] = [];
  for (let seed = options.seed; seed < options.seed + options.procedural; seed++) {
    const character = generateProceduralHumanoid(seed, { targetVertices: options.vertices, asymmetricArms: options.asymmetricArms });
    const height = character.meta.heightMetres as number;
    const row: SkeletonEvalRow = {
      seed, pose: character.meta.pose as string | string[], armDegrees: (character.meta.armDegrees as number[]).map((d) => Math.round(d)),
      clothing: character.meta.clothing as string[],
    };
    try {
      const rig = await rigCharacterAsync(character.parts, { method: options.method });
      const perJoint: Record<string, number> = {};
      for (const name of SCORED) {
        const k = MIXAMO_JOINTS.indexOf(name);
        const head = rig.skeleton.joints.find((j) => j.name.endsWith(`:${name}`) || j.name === name)!.head;
        perJoint[name] = (100 * Math.hypot(head[0] - character.joints[3 * k], head[1] - character.joints[3 * k + 1], head[2] - character.joints[3 * k + 2])) / height;
      }
      const mean = (names: readonly string[]) => names.reduce((s, n) => s + perJoint[n], 0) / names.length;
      row.mean = mean(SCORED);
      row.arms = mean(ARM_POSE_JOINTS);
      row.rest = mean(SCORED.filter((n) => !ARM_POSE_JOINTS.includes(n)));
      row.perJoint = perJoint;
      log(`skeletons: ${seed}: mean ${row.mean.toFixed(2)} %, elbows and wrists ${row.arms.toFixed(2)} %`);
    } catch (err) {
      if (!(err instanceof AutoRigError)) throw err;
      row.refused = { code: err.code, message: err.message };
      log(`skeletons: ${seed}: refused ${err.code}`);
    }
    rows.push(row);
  }
  return { schema: SKELETON_EVAL_SCHEMA, options, rows, summary: summarise(rows) };
}

/** The summary of the rows (means and medians over the rigged characters). */
function summarise(rows: SkeletonEvalRow[]): SkeletonEvalSummary {
  const rigged = rows.filter((r) => r.mean !== undefined);
  const stats = (values: number[]) => {
    if (!values.length) return { mean: Number.NaN, median: Number.NaN };
    const sorted = [...values].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return { mean: values.reduce((a, b) => a + b, 0) / values.length, median: sorted.length % 2 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]) };
  };
  const all = stats(rigged.map((r) => r.mean!));
  const misplaced = rigged.map((r) => Object.values(r.perJoint!).filter((e) => e > 100 * MISPLACED_JOINT).length);
  return {
    rigged: rigged.length, refused: rows.length - rigged.length, mean: all.mean, median: all.median,
    arms: stats(rigged.map((r) => r.arms!)), rest: stats(rigged.map((r) => r.rest!)),
    misplacedJoints: misplaced.reduce((a, b) => a + b, 0), charactersWithMisplacedJoints: misplaced.filter((n) => n > 0).length,
  };
}

/** skeletonEvalTable: the report → the text the CLI prints (summary, then the characters with a misplaced joint). */
export function skeletonEvalTable(report: SkeletonEvalReport): string {
  const { options: o, summary: s } = report;
  const pct = (v: number) => `${v.toFixed(2)} %`;
  const lines = [
    `autorig eval skeletons: ${o.procedural} procedural humanoids from seed ${o.seed}${o.asymmetricArms ? ', arms posed apart' : ''}, ${o.vertices} vertices, method ${o.method}`,
    `  rigged ${s.rigged}, refused ${s.refused}`,
    `  joint error (% of height)   mean ${pct(s.mean)}   median ${pct(s.median)}`,
    `  elbows and wrists   mean ${pct(s.arms.mean)}   median ${pct(s.arms.median)}`,
    `  the other joints   mean ${pct(s.rest.mean)}   median ${pct(s.rest.median)}`,
    `  joints over ${100 * MISPLACED_JOINT} %: ${s.misplacedJoints} on ${s.charactersWithMisplacedJoints} characters`,
  ];
  for (const r of report.rows) {
    if (r.refused) { lines.push(`  ${r.seed}: refused ${r.refused.code}: ${r.refused.message}`); continue; }
    const off = Object.entries(r.perJoint!).filter(([, e]) => e > 100 * MISPLACED_JOINT).sort((a, b) => b[1] - a[1]);
    if (!off.length) continue;
    const pose = Array.isArray(r.pose) ? r.pose.join('/') : r.pose;
    lines.push(`  ${r.seed} (${pose}, arms ${r.armDegrees.join('°/')}°${r.clothing.length ? `, ${r.clothing.join(', ')}` : ''}): mean ${pct(r.mean!)}; ${off.map(([n, e]) => `${n} ${e.toFixed(1)}`).join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}
