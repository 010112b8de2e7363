/**
 * The human-readable report of `autorig eval poses`: the JSON result (poseEvalTypes.ts) as Markdown tables, errors as
 * % of the character's height.
 */
import type { IdentityPoseEval, PoseEvalReport, PoseSummary, Predictor } from './poseEvalTypes.js';

const MISSING = '—';

/** The poses the auto-rig path applied with a part of the corrective (LBS + s·(DQS − LBS)), for the method's row. */
function sharesNote(report: PoseEvalReport): string {
  const shares = Object.entries(report.settings.correctiveShares ?? {}).filter(([, s]) => s < 1);
  return shares.length ? `; corrective share below 1 (fitted on development identities): ${shares.map(([p, s]) => `${p} ${s}`).join(', ')}` : '';
}

/**
 * renderPoseEvalMarkdown: the report as Markdown. Sections: run, the bar, per-pose tables (the pose with its
 * corrective, then the corrective alone), latent diagnostics, per identity, identities not measured.
 * report: PoseEvalReport → Markdown text
 */
export function renderPoseEvalMarkdown(report: PoseEvalReport): string {
  const out: string[] = ['# Apply Latent Pose: evaluation on test identities', ''];
  const measured = report.identities.filter((i) => i.status === 'ok');
  const throughOwnRig = (report.settings.latentRig ?? 'auto') === 'own';
  out.push(...table(['run', ''], [
    ['date', report.created],
    ['test identities', `${measured.length} measured: ${measured.map((i) => i.name).join(', ') || 'none'}`],
    ['procedural seeds', `${report.settings.proceduralSeeds.join(', ') || 'none'} (${report.settings.proceduralVertices} vertices; ${report.skipped.length} skipped for a misread frame)`],
    ['latent path', report.latent.measured ? `measured (strategy ${report.settings.strategy}, strength ${report.settings.strength}, posed through ${throughOwnRig ? 'each identity\'s own rig' : 'each identity\'s auto-rig'})` : `not measured: ${report.latent.note}`],
    ['baseline (b)', `auto-rig (${report.settings.rigMethod}), the pose's joint rotations, linear blend skinning`],
    ['latent method', `the encoder's Δμ → the decoder's joint rotations → ${throughOwnRig ? 'the identity\'s own rig' : 'the apply path\'s auto-rig ((b)\'s skeleton, the learned weights)'}, dual-quaternion skinning (corrective alone: DQS − LBS)${sharesNote(report)}`],
    ['baseline (c)', report.train ? `nearest training identity's anchor offsets by closest anchor (${report.train})` : 'not measured (no --train folder)'],
    ['static vertices', `ground-truth motion below ${pct(report.settings.staticThreshold)} of height`],
    ['environment', `Node ${report.environment.node}, ${report.environment.platform}, ${report.environment.cpus} CPUs, provider ${report.environment.provider ?? 'none'}, autorig ${report.environment.autorig}`],
  ]), '');
  out.push('Errors are the mean vertex distance to the ground-truth posed mesh, in % of the character\'s height (the longest '
    + 'side of its neutral\'s canonical frame), averaged over the test identities. (a) no motion, (b) auto-rig + LBS '
    + '(for the corrective alone a rig has nothing: no motion; where the auto-rig failed, (b) counts as no motion: "(b) failed"; so does the latent path, whose auto-rig is made from the same skeleton), (c) nearest training identity\'s offsets. Leakage: mean '
    + 'predicted motion over the vertices the ground truth keeps still.', '');
  out.push('## Bar', '');
  out.push(`On test identities the latent error must be below (c) for every pose (with its corrective) and below (b) for the corrective-only pairs: **${report.bar.passed} of ${report.bar.measured} measured poses pass** (${report.bar.poses} poses).`, '');
  out.push('## Per pose: the pose with its corrective (what users get)', '');
  out.push(...appliedTable(report.poses), '');
  out.push('## Per pose: the corrective alone', '');
  out.push(...correctiveTable(report.poses), '');
  out.push('## Latent diagnostics', '');
  const d = report.diagnostics;
  out.push(...table(['quantity', 'value'], [
    ['identity distance (mean |μ_i − μ_j| over test neutrals)', num(d.identityDistance)],
    ['resampling noise (mean |μ(SDF seed 1) − μ(seed 2)| of a neutral)', num(d.resamplingNoise)],
    ['identity distance / noise', num(d.identityToNoise, 2)],
    ['R_cond/noise (mean over poses of |Δμ| / noise; the paper: 2.03)', num(d.conditionToNoise, 2)],
    ['cross-identity Δμ cosine, elbowBentLf (the paper: 0.958)', num(report.poses.find((p) => p.pose === 'elbowBentLf')?.deltaMuCosine ?? null, 3)],
    ['cross-identity Δμ cosine, mean over poses', num(meanOrNull(report.poses.map((p) => p.deltaMuCosine)), 3)],
  ]), '');
  out.push('## Per identity (means over poses, the pose with its corrective)', '');
  out.push(...identityTable(report.identities), '');
  const notMeasured = report.identities.filter((i) => i.status !== 'ok');
  if (notMeasured.length || report.skipped.length) {
    out.push('## Not measured', '');
    for (const i of notMeasured) out.push(`- **${inline(i.name)}**: ${i.status} — ${inline(`${i.error?.code ?? ''}: ${i.error?.message ?? 'no reason recorded'}`)}`);
    for (const s of report.skipped) out.push(`- **${inline(s.name)}**: skipped — ${inline(s.reason)}`);
    out.push('');
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}

function appliedTable(poses: PoseSummary[]): string[] {
  const header = ['pose', 'GT motion', 'latent', '(a) no motion', '(b) rig', '(c) nearest', 'leak latent', 'leak (b)', 'leak (c)', 'Δμ cosine', 'R_cond/noise', 'latent < (c)', 'latent < (b)', '(b) failed'];
  return table(header, poses.map((p) => {
    const v = p.variants.skinningCorrective;
    return [
      p.pose, pct(v.truthMotion),
      ...errors(v.error), pct(v.leakage.latent), pct(v.leakage.rig), pct(v.leakage.nearestOffsets),
      num(p.deltaMuCosine, 3), num(p.conditionToNoise, 2), verdict(p.bar.belowNearestOffsets), verdict(below(v.error.latent, v.error.rig)),
      `${v.rigFailures} of ${v.identities}`,
    ];
  }));
}

function correctiveTable(poses: PoseSummary[]): string[] {
  const header = ['pose', 'GT motion', 'latent', '(a) = (b) no motion', '(c) nearest', 'leak latent', 'leak (c)', 'latent < (b)', 'latent < (c)', 'bar'];
  return table(header, poses.map((p) => {
    const v = p.variants.corrective;
    return [
      p.pose, pct(v.truthMotion), pct(v.error.latent), pct(v.error.rig), pct(v.error.nearestOffsets),
      pct(v.leakage.latent), pct(v.leakage.nearestOffsets), verdict(p.bar.correctiveBelowRig), verdict(below(v.error.latent, v.error.nearestOffsets)),
      p.bar.pass === null ? 'not measured' : p.bar.pass ? '**pass**' : 'fail',
    ];
  }));
}

function identityTable(identities: IdentityPoseEval[]): string[] {
  const header = ['identity', 'source', 'vertices', 'parts', 'status', 'rig', 'nearest training identity', 'latent', '(a)', '(b)', '(c)', 'seconds'];
  return table(header, identities.map((i) => {
    const mean = (p: Predictor) => meanOrNull(Object.values(i.poses).map((e) => e.variants.skinningCorrective.scores[p].error));
    return [
      i.name, i.source, String(i.vertices), String(i.parts), i.status, i.rig.ok ? `${i.rig.method} ok` : `failed${i.rig.error ? `: ${i.rig.error}` : ''}`,
      i.nearest ? `${i.nearest.identity} (${i.nearest.by})` : MISSING, pct(mean('latent')), pct(mean('noMotion')), pct(mean('rig')), pct(mean('nearestOffsets')),
      i.seconds.toFixed(1),
    ];
  }));
}

function errors(e: Record<Predictor, number | null>): string[] {
  return [pct(e.latent), pct(e.noMotion), pct(e.rig), pct(e.nearestOffsets)];
}

function below(a: number | null, b: number | null): boolean | null {
  return a === null || b === null ? null : a < b;
}

function verdict(v: boolean | null): string {
  return v === null ? MISSING : v ? '✓' : '✗';
}

function meanOrNull(values: (number | null)[]): number | null {
  const finite = values.filter((v): v is number => v !== null && Number.isFinite(v));
  return finite.length ? finite.reduce((a, b) => a + b, 0) / finite.length : null;
}

/** A fraction of height as a percentage with 3 significant decimals, or "—". */
function pct(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? MISSING : `${(100 * x).toFixed(3)}%`;
}

function num(x: number | null, decimals = 4): string {
  return x === null || !Number.isFinite(x) ? MISSING : x.toFixed(decimals);
}

function table(header: string[], rows: string[][]): string[] {
  const line = (cells: string[]) => `| ${cells.map((c) => inline(c).replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)];
}

function inline(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}
