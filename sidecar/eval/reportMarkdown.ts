/**
 * The eval's human-readable report: the JSON result (evalTypes.ts) as Markdown tables, with links to the pictures
 * (reportPictures.ts). What every number means is in docs/EVAL.md; the report links there instead of repeating it.
 */
import type { CharacterEval, EvalReport, EvalSummary, SkinningScores, Variant } from './evalTypes.js';

/** Pictures to link from the report; every path is relative to the report's folder. */
export interface ReportPictures {
  /** per variant: the deformation bar chart (deformationBarChart) */
  charts?: Partial<Record<Variant, string>>;
  /** front views (frontViewPicture): caption (e.g. "mixamo_ely" or "mixamo_ely-remesh") → path, shown in insertion order */
  frontViews?: Record<string, string>;
}

const MISSING = '—';
/** decimals per kind of number: distances in normalised units, ratios (precision, recall, L1), seconds */
const DISTANCE = 4;
const RATIO = 3;
const SECONDS = 2;

/**
 * renderMarkdownReport: the report as Markdown. Sections: run header, quality bar, skeleton, skinning (ours and Blender
 * rows), full pipeline and cost (each table ends every variant's rows with that variant's means from report.summary),
 * characters not measured with their reason, pictures. Values that are absent or not finite print as "—".
 * report: the eval result; pictures: links to the pictures written next to the report → Markdown text
 */
export function renderMarkdownReport(report: EvalReport, pictures: ReportPictures = {}): string {
  const out: string[] = [];
  out.push('# AutoRig evaluation', '');
  out.push(...headerTable(report), '');
  out.push('Distances are in normalised units (each character centred on its bounding box, longest side 1). '
    + 'Every metric is defined in `docs/EVAL.md` of the AutoRig repository.', '');
  out.push('## Quality bar', '', ...qualityBarTable(report), '');
  const variants = variantsOf(report);
  out.push('## Skeleton', '', ...skeletonTable(report, variants), '');
  out.push('## Skinning with the artist\'s skeleton', '', ...skinningTable(report, variants), '');
  out.push('## Full pipeline and cost', '', ...pipelineTable(report, variants), '');
  const notMeasured = report.characters.filter((c) => c.status !== 'ok');
  if (notMeasured.length > 0) {
    out.push('## Not measured', '');
    for (const c of notMeasured) {
      const reason = c.error ? `${c.error.code}: ${c.error.message}` : 'no reason recorded';
      out.push(`- **${inline(c.name)}** (${c.variant}, ${inline(c.file)}): ${c.status} — ${inline(reason)}`);
    }
    out.push('');
  }
  out.push(...pictureSection(pictures));
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}

function headerTable(report: EvalReport): string[] {
  const env = report.environment;
  const { poses, degrees, poseSeed } = report.settings;
  return table(['run', ''], [
    ['date', report.created],
    ['method', report.method],
    ['data', `\`${report.data}\``],
    ['peer', report.peer === 'blender' ? `Blender ${env.blender ?? '(version unknown)'}` : 'none'],
    ['remesh', report.remesh === null ? 'no' : `${report.remesh} vertices`],
    ['poses', `${poses} per range at ${degrees.map((d) => `±${d}°`).join(' and ')}, seed ${poseSeed}`],
    ['environment', `Node ${env.node}, ${env.platform}, ${env.cpus} × ${env.cpuModel}, autorig ${env.autorig}`],
    ['execution provider', providerText(env)],
    ['schema', `${report.schema} version ${report.version}`],
  ]);
}

/** Where the models ran: "cpu (fell back from cuda: <reason>; …)", or why no provider is named. */
function providerText(env: EvalReport['environment']): string {
  // Reports written before schema version 2 have no provider.
  if (env.provider === undefined) return 'not recorded';
  if (env.provider === null) return 'none (the method runs no model)';
  const fallback = env.providerFallback ?? [];
  return fallback.length === 0 ? env.provider : `${env.provider} (fell back from ${fallback.join('; ')})`;
}

function qualityBarTable(report: EvalReport): string[] {
  if (report.bar.length === 0) return ['No criterion was checked.'];
  return table(['criterion', 'variant', 'value', 'target', 'pass', 'note'], report.bar.map((b) => [
    b.criterion,
    b.variant,
    general(b.value),
    general(b.target),
    b.pass === null ? 'n/a' : b.pass ? '✓' : '✗',
    b.note ?? '',
  ]));
}

function skeletonTable(report: EvalReport, variants: Variant[]): string[] {
  const header = ['character', 'variant', 'vertices', 'status', 'mapping', 'CD-J2J', 'CD-J2B', 'CD-B2B', 'mean joint error', 'max joint error', 'max joint', 'wrong-limb joints'];
  const rows: string[][] = [];
  for (const variant of variants) {
    for (const c of charactersOf(report, variant)) {
      const s = c.skeleton;
      rows.push([
        c.name, c.variant, String(c.vertices), c.status, mapping(c),
        fixed(s?.cdJ2J, DISTANCE), fixed(s?.cdJ2B, DISTANCE), fixed(s?.cdB2B, DISTANCE),
        fixed(s?.meanJointError, DISTANCE), fixed(s?.maxJointError, DISTANCE), s?.maxJoint || MISSING,
        s ? (s.wrongLimb.length === 0 ? '0' : `${s.wrongLimb.length}: ${s.wrongLimb.join(', ')}`) : MISSING,
      ]);
    }
    const m = summaryOf(report, variant);
    if (m) {
      const k = m.skeleton;
      rows.push([meanLabel(m), variant, MISSING, `${m.characters} ok`, MISSING,
        fixed(k.cdJ2J, DISTANCE), fixed(k.cdJ2B, DISTANCE), fixed(k.cdB2B, DISTANCE), fixed(k.meanJointError, DISTANCE),
        MISSING, MISSING, Number.isFinite(k.wrongLimb) ? `${k.wrongLimb} in all` : MISSING]);
    }
  }
  return table(header, rows);
}

function skinningTable(report: EvalReport, variants: Variant[]): string[] {
  const header = ['character', 'variant', 'weights', 'precision', 'recall', 'L1', 'deformation ±10°', 'deformation ±45°', 'time (s)', 'unweighted', 'failed', 'note'];
  const scoreRow = (name: string, variant: Variant, who: string, s: SkinningScores | undefined) => [
    name, variant, who, fixed(s?.precision, RATIO), fixed(s?.recall, RATIO), fixed(s?.l1, RATIO),
    fixed(s?.deformation10, DISTANCE), fixed(s?.deformation45, DISTANCE), fixed(s?.seconds, SECONDS),
    s ? String(s.unweighted) : MISSING, s ? (s.failed ? 'yes' : 'no') : MISSING, s?.message ?? '',
  ];
  type Means = EvalSummary['ours'];
  const meanRow = (label: string, variant: Variant, who: string, m: Means) => [
    label, variant, who, fixed(m.precision, RATIO), fixed(m.recall, RATIO), fixed(m.l1, RATIO),
    fixed(m.deformation10, DISTANCE), fixed(m.deformation45, DISTANCE), fixed(m.seconds, SECONDS),
    MISSING, `${m.failures} failed`, '',
  ];
  const rows: string[][] = [];
  for (const variant of variants) {
    for (const c of charactersOf(report, variant)) {
      rows.push(scoreRow(c.name, variant, 'ours', c.skinning?.ours));
      if (c.skinning?.blender || (report.peer === 'blender' && c.status === 'ok')) rows.push(scoreRow(c.name, variant, 'Blender', c.skinning?.blender));
    }
    const m = summaryOf(report, variant);
    if (m) {
      rows.push(meanRow(meanLabel(m), variant, 'ours', m.ours));
      if (m.blender) rows.push(meanRow(meanLabel(m), variant, 'Blender', m.blender));
    }
  }
  return table(header, rows);
}

function pipelineTable(report: EvalReport, variants: Variant[]): string[] {
  const header = ['character', 'variant', 'deformation ±10°', 'deformation ±45°', 'rig time (s)', 'skin time (s)', 'peak memory (MiB)'];
  const rows: string[][] = [];
  for (const variant of variants) {
    const measured: CharacterEval[] = [];
    for (const c of charactersOf(report, variant)) {
      const ran = c.status === 'ok';
      if (ran) measured.push(c);
      rows.push([c.name, variant, fixed(c.pipeline?.deformation10, DISTANCE), fixed(c.pipeline?.deformation45, DISTANCE),
        ran ? fixed(c.time.rigSeconds, SECONDS) : MISSING, ran ? fixed(c.time.skinSeconds, SECONDS) : MISSING,
        ran ? fixed(c.time.peakRssMiB, 0) : MISSING]);
    }
    const m = summaryOf(report, variant);
    if (m) {
      // The summary holds no time or memory means: those are taken over the same "ok" characters here.
      rows.push([meanLabel(m), variant, fixed(m.pipeline.deformation10, DISTANCE), fixed(m.pipeline.deformation45, DISTANCE),
        fixed(mean(measured.map((c) => c.time.rigSeconds)), SECONDS), fixed(mean(measured.map((c) => c.time.skinSeconds)), SECONDS),
        fixed(mean(measured.map((c) => c.time.peakRssMiB)), 0)]);
    }
  }
  return table(header, rows);
}

function pictureSection(pictures: ReportPictures): string[] {
  const out: string[] = [];
  const charts = Object.entries(pictures.charts ?? {}).filter((e): e is [Variant, string] => typeof e[1] === 'string');
  const views = Object.entries(pictures.frontViews ?? {});
  if (charts.length === 0 && views.length === 0) return out;
  out.push('## Pictures', '');
  for (const [variant, path] of charts) out.push(`![Skinning deformation at ±45° per character, ${variant}](${link(path)})`, '');
  if (views.length > 0) {
    out.push('### Front views', '', 'The artist\'s joints in green, ours in orange-red; the character\'s left is on the picture\'s right.', '');
    for (const [caption, path] of views) out.push(`**${inline(caption)}**`, '', `![${altText(caption)} front view](${link(path)})`, '');
  }
  return out;
}

function variantsOf(report: EvalReport): Variant[] {
  const order: Variant[] = ['original', 'remesh'];
  const present = new Set<Variant>([...report.characters.map((c) => c.variant), ...report.summary.map((s) => s.variant)]);
  return order.filter((v) => present.has(v));
}

function charactersOf(report: EvalReport, variant: Variant): CharacterEval[] {
  return report.characters.filter((c) => c.variant === variant);
}

function summaryOf(report: EvalReport, variant: Variant): EvalSummary | undefined {
  return report.summary.find((s) => s.variant === variant);
}

function meanLabel(m: EvalSummary): string {
  return `**mean (${m.variant})**`;
}

function mapping(c: CharacterEval): string {
  if (!c.mapping) return MISSING;
  const missing = c.mapping.missing.length;
  return missing === 0 ? c.mapping.method : `${c.mapping.method}, ${missing} missing: ${c.mapping.missing.join(', ')}`;
}

function mean(values: number[]): number | undefined {
  return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length;
}

/** A number with a fixed count of decimals, or "—". */
function fixed(value: number | null | undefined, decimals: number): string {
  return value === null || value === undefined || !Number.isFinite(value) ? MISSING : value.toFixed(decimals);
}

/** A number of unknown kind (the quality bar mixes distances, ratios, seconds): 4 significant digits, or "—". */
function general(value: number | null | undefined): string {
  return value === null || value === undefined || !Number.isFinite(value) ? MISSING : String(Number(value.toPrecision(4)));
}

function table(header: string[], rows: string[][]): string[] {
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)];
}

/** Text safe inside a table cell: pipes escaped, line breaks flattened. */
function cell(text: string): string {
  return inline(text).replaceAll('|', '\\|');
}

function inline(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}

function altText(text: string): string {
  return inline(text).replace(/[[\]]/g, '');
}

/** A relative path as a Markdown link target: spaces and other unsafe characters percent-encoded. */
function link(path: string): string {
  return encodeURI(path.replaceAll('\\', '/'));
}
