/**
 * The correctives eval's results as tables: one row per pose, angle and method (means over the characters), the
 * ground truth's own volume and section figures beside them, then each method's means over the poses.
 */
import type { CorrectivesReport, CorrectivesResult, PoseScores } from './runCorrectivesEval.js';

/** One line of the table: a (pose, angle, method) cell's scores averaged over the characters measured. */
export interface CorrectivesRow extends PoseScores {
  pose: string;
  degrees: number;
  method: string;
  label: string;
  characters: number;
}

/** A method's means over rows: the rest pose, every posed row, and the posed rows at the largest angle. */
export interface CorrectivesMeans {
  method: string;
  label: string;
  rest: PoseScores | null;
  posed: PoseScores | null;
  /** the largest angle measured (90° by default) */
  largest: PoseScores | null;
  largestDegrees: number;
  /** for a method fitted to examples: its posed rows at the example angles, and at the held-out ones (else null) */
  example: PoseScores | null;
  heldOut: PoseScores | null;
}

const SCORE_KEYS = ['chamfer', 'pointToSurface', 'bodyChamfer', 'volumeLoss', 'jointVolumeLoss', 'sectionKept'] as const;

/** The mean of each score over results (null where none of them has it). */
function meanScores(results: PoseScores[]): PoseScores {
  const out = {} as Record<(typeof SCORE_KEYS)[number], number | null>;
  for (const key of SCORE_KEYS) {
    const values = results.map((r) => r[key]).filter((v): v is number => v !== null);
    out[key] = values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
  }
  return out as PoseScores;
}

/** correctivesRows: report → rows in measuring order (rest first), means over characters. */
export function correctivesRows(report: CorrectivesReport): CorrectivesRow[] {
  const labels = new Map([...report.methods.map((m) => [m.id, m.label] as const), ['truth', 'ground truth']]);
  const groups = new Map<string, CorrectivesResult[]>();
  for (const r of report.results) {
    const key = `${r.pose}\u0000${r.degrees}\u0000${r.method}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(r);
  }
  return [...groups.values()].map((rs) => ({
    pose: rs[0].pose, degrees: rs[0].degrees, method: rs[0].method, label: (labels.get(rs[0].method) ?? rs[0].method) + exampleNote(report, rs[0]),
    characters: rs.length, ...meanScores(rs),
  }));
}

/** ' (example)' or ' (held out)' for a posed row of a method fitted to examples, else ''. */
function exampleNote(report: CorrectivesReport, r: CorrectivesResult): string {
  if (!report.examples?.methods.includes(r.method) || r.pose === 'rest') return '';
  return report.examples.degrees.includes(r.degrees) ? ' (example)' : ' (held out)';
}

/** correctivesMeans: report → per method (ground truth last) its means at rest, over the poses, and at the largest angle. */
export function correctivesMeans(report: CorrectivesReport): CorrectivesMeans[] {
  const posed = report.results.filter((r) => r.pose !== 'rest');
  const largest = Math.max(0, ...posed.map((r) => r.degrees));
  return [...report.methods, { id: 'truth', label: 'ground truth' }].map((m) => {
    const mine = report.results.filter((r) => r.method === m.id);
    const fitted = report.examples?.methods.includes(m.id) ?? false;
    const examples = report.examples?.degrees ?? [];
    const pick = (f: (r: CorrectivesResult) => boolean) => { const rs = mine.filter(f); return rs.length ? meanScores(rs) : null; };
    return {
      method: m.id, label: m.label,
      rest: pick((r) => r.pose === 'rest'),
      posed: pick((r) => r.pose !== 'rest'),
      largest: pick((r) => r.pose !== 'rest' && r.degrees === largest),
      largestDegrees: largest,
      example: fitted ? pick((r) => r.pose !== 'rest' && examples.includes(r.degrees)) : null,
      heldOut: fitted ? pick((r) => r.pose !== 'rest' && !examples.includes(r.degrees)) : null,
    };
  });
}

const pct = (v: number | null, digits: number) => (v === null ? '—' : (100 * v).toFixed(digits));

/** A markdown table row's score cells: Chamfer, point → surface, body Chamfer (% height), volume losses, section (%). */
function scoreCells(s: PoseScores): string[] {
  return [pct(s.chamfer, 3), pct(s.pointToSurface, 3), pct(s.bodyChamfer, 4), pct(s.volumeLoss, 2), pct(s.jointVolumeLoss, 1), pct(s.sectionKept, 0)];
}

const SCORE_HEADER = 'Chamfer near joint (% h) | point→surface near joint (% h) | Chamfer body (% h) | body volume loss (%) | joint volume loss (%) | section kept (%)';

/** correctivesTable: rows → a markdown table (one line per pose, angle and method). */
export function correctivesTable(rows: CorrectivesRow[]): string {
  const lines = [`| pose | angle | method | ${SCORE_HEADER} |`, `|---|---:|---|${'---:|'.repeat(6)}`];
  for (const r of rows) lines.push(`| ${r.pose} | ${r.degrees}° | ${r.label} | ${scoreCells(r).join(' | ')} |`);
  return lines.join('\n');
}

/** correctivesMeansTable: means → a markdown table (rest, all posed rows, the largest angle; per method). */
export function correctivesMeansTable(means: CorrectivesMeans[]): string {
  const lines = [`| method | over | ${SCORE_HEADER} |`, `|---|---|${'---:|'.repeat(6)}`];
  for (const m of means) {
    const rows = [['rest', m.rest], ['all poses', m.posed], [`poses at ${m.largestDegrees}°`, m.largest], ['example angles', m.example], ['held-out angles', m.heldOut]] as const;
    for (const [over, s] of rows) {
      if (s) lines.push(`| ${m.label} | ${over} | ${scoreCells(s).join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

/** correctivesMarkdown: report → the whole markdown report (what was measured, the table, the means, timings). */
export function correctivesMarkdown(report: CorrectivesReport): string {
  const chars = report.characters.map((c) =>
    `| ${c.name} | ${c.build} | ${c.restPose} | ${c.heightMetres.toFixed(2)} | ${c.vertices} | ${(1000 * c.groundTruthCell).toFixed(1)} | ${c.seconds.skin.toFixed(1)} | ${c.seconds.groundTruth.toFixed(1)} | ${c.seconds.measure.toFixed(1)} | ${(c.seconds.fit ?? 0).toFixed(1)} |`);
  return [
    '# Pose correctives eval (issue 7)',
    '',
    `Test characters: ${report.characters.length} procedural humanoids, seeds ${report.seeds.join(', ')} (${report.generator}).`,
    `Weights: ours (${report.skinMethod} skinning on the true skeleton). Ground truth: every shape posed rigidly by its bone and the`,
    'field re-meshed at the pose. Left-side poses; "near joint": samples within a few joint depths of the posed joint (whole body at rest);',
    '"joint volume": inside a ball about the posed joint; "section kept": the limb\'s cross-section at the elbow, wrist or knee over the',
    'ground truth\'s (the candy-wrapper measure). Volume losses of the ground truth are against its own rest.',
    ...(report.examples ? [
      `Examples: ${report.examples.methods.join(', ')} were fitted, per character, to the exact surfaces of every key pose measured at`,
      `${report.examples.degrees.map((d) => `${d}°`).join(', ')} (rows marked "example": measured on what they were fitted to); other angles are held out.`,
    ] : []),
    '',
    '| character | build | rest pose | height (m) | vertices | truth cell (mm) | skin (s) | truth meshing (s) | measuring (s) | fitting (s) |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...chars,
    '',
    correctivesTable(correctivesRows(report)),
    '',
    '## Means',
    '',
    correctivesMeansTable(correctivesMeans(report)),
    '',
    `Total time: ${report.seconds.toFixed(1)} s.`,
    '',
  ].join('\n');
}
