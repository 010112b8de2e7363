/**
 * The short text the eval command prints when it is done: per-variant means and the quality bar, one line each.
 */
import type { EvalReport } from './evalTypes.js';

const fmt = (v: number | null | undefined, digits = 4) => (v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits));

/** formatBar: report → plain text (no colour codes), for a terminal or a CI log. */
export function formatBar(report: EvalReport): string {
  const lines: string[] = [];
  for (const s of report.summary) {
    lines.push(`${s.variant}: ${s.characters} characters scored`);
    lines.push(`  skeleton  CD-J2J ${fmt(s.skeleton.cdJ2J)}  CD-J2B ${fmt(s.skeleton.cdJ2B)}  CD-B2B ${fmt(s.skeleton.cdB2B)}  joints on a wrong limb ${s.skeleton.wrongLimb}`);
    lines.push(`  skinning  ours:    L1 ${fmt(s.ours.l1, 3)}  ±10° ${fmt(s.ours.deformation10)}  ±45° ${fmt(s.ours.deformation45)}  ${fmt(s.ours.seconds, 2)} s  failures ${s.ours.failures}`);
    if (s.blender) {
      lines.push(`            Blender: L1 ${fmt(s.blender.l1, 3)}  ±10° ${fmt(s.blender.deformation10)}  ±45° ${fmt(s.blender.deformation45)}  ${fmt(s.blender.seconds, 2)} s  failures ${s.blender.failures}`);
    }
    lines.push(`  pipeline  ±10° ${fmt(s.pipeline.deformation10)}  ±45° ${fmt(s.pipeline.deformation45)}`);
  }
  lines.push('quality bar:');
  for (const b of report.bar) {
    const mark = b.pass === null ? 'n/a ' : b.pass ? 'pass' : 'FAIL';
    lines.push(`  [${mark}] ${b.variant}: ${b.criterion}: ${fmt(b.value)} (target ${fmt(b.target)})${b.note ? ` — ${b.note}` : ''}`);
  }
  const notScored = report.characters.filter((c) => c.status !== 'ok');
  for (const c of notScored) lines.push(`  not scored: ${c.name} (${c.variant}): ${c.status}, ${c.error?.code}: ${c.error?.message.split('\n')[0]}`);
  return lines.join('\n');
}
