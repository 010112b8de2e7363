/**
 * Means over characters and the quality bar, from the per-character results.
 */
import type { BarCheck, CharacterEval, EvalSummary, SkinningScores, Variant } from './evalTypes.js';

/** The bar of issue 3. */
export const QUALITY_BAR = {
  /** mean CD-J2J over the characters, normalised units */
  cdJ2J: 0.015,
  /** our ±45° deformation error at most this fraction of Blender's */
  deformationVsBlender: 0.8,
  /** on the remesh variant, our skinning time at most this fraction of Blender's */
  timeVsBlender: 0.2,
} as const;

const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN);

/** summarise: means over the characters with status "ok", one summary per variant present. */
export function summarise(characters: CharacterEval[]): EvalSummary[] {
  const variants = [...new Set(characters.map((c) => c.variant))];
  return variants.map((variant) => {
    const rows = characters.filter((c) => c.variant === variant);
    // Each mean is over the characters that have that measurement (a failed skeleton still has its skinning scored).
    const withSkeleton = rows.filter((c) => c.skeleton);
    const withSkinning = rows.filter((c) => c.skinning);
    const withPipeline = rows.filter((c) => c.pipeline);
    const skinning = (scores: SkinningScores[]) => ({
      precision: mean(scores.map((s) => s.precision)),
      recall: mean(scores.map((s) => s.recall)),
      l1: mean(scores.map((s) => s.l1)),
      deformation10: mean(scores.map((s) => s.deformation10)),
      deformation45: mean(scores.map((s) => s.deformation45)),
      seconds: mean(scores.map((s) => s.seconds)),
      failures: scores.filter((s) => s.failed).length,
    });
    const blender = withSkinning.flatMap((c) => (c.skinning!.blender ? [c.skinning!.blender] : []));
    const oursFailures = rows.filter((c) => c.status === 'failed').length;
    const ours = skinning(withSkinning.map((c) => c.skinning!.ours));
    return {
      variant,
      characters: rows.filter((c) => c.status === 'ok').length,
      skeleton: {
        cdJ2J: mean(withSkeleton.map((c) => c.skeleton!.cdJ2J)),
        cdJ2B: mean(withSkeleton.map((c) => c.skeleton!.cdJ2B)),
        cdB2B: mean(withSkeleton.map((c) => c.skeleton!.cdB2B)),
        meanJointError: mean(withSkeleton.map((c) => c.skeleton!.meanJointError)),
        wrongLimb: withSkeleton.reduce((n, c) => n + c.skeleton!.wrongLimb.length, 0),
      },
      ours: { ...ours, failures: ours.failures + oursFailures },
      ...(blender.length ? { blender: skinning(blender) } : {}),
      pipeline: {
        deformation10: mean(withPipeline.map((c) => c.pipeline!.deformation10)),
        deformation45: mean(withPipeline.map((c) => c.pipeline!.deformation45)),
      },
    };
  });
}

/**
 * checkBar: each criterion of the bar on each variant. Comparisons with Blender use the characters both methods
 * scored (a failed Blender run still scores: its unweighted vertices stay where they were); a criterion that this
 * run cannot judge (no peer) has pass null.
 */
export function checkBar(characters: CharacterEval[], summaries: EvalSummary[]): BarCheck[] {
  const checks: BarCheck[] = [];
  for (const s of summaries) {
    const variant: Variant = s.variant;
    const rows = characters.filter((c) => c.variant === variant);
    const ok = rows.filter((c) => c.skinning);
    const unmapped = rows.filter((c) => c.status === 'unmapped').map((c) => c.name);
    if (variant === 'original') {
      checks.push({
        criterion: 'skeleton: mean CD-J2J', variant, value: s.skeleton.cdJ2J, target: QUALITY_BAR.cdJ2J,
        pass: s.skeleton.cdJ2J <= QUALITY_BAR.cdJ2J,
        note: worst(ok.filter((c) => c.skeleton).map((c) => [c.name, c.skeleton!.cdJ2J])),
      });
      const wrong = ok.filter((c) => c.skeleton).flatMap((c) => c.skeleton!.wrongLimb.map((j) => `${c.name}:${j}`));
      checks.push({
        criterion: 'skeleton: joints on the wrong side or limb', variant, value: wrong.length, target: 0,
        pass: wrong.length === 0, ...(wrong.length ? { note: wrong.join(', ') } : {}),
      });
    }
    const rigFailures = rows.filter((c) => c.status === 'failed');
    checks.push({
      criterion: 'rig: characters our pipeline could not rig', variant, value: rigFailures.length, target: 0,
      pass: rigFailures.length === 0, ...(rigFailures.length ? { note: rigFailures.map((c) => `${c.name}: ${c.error?.code}`).join(', ') } : {}),
    });
    const skinFailures = rows.filter((c) => c.skinning && (c.skinning.ours.failed || c.skinning.ours.unweighted > 0));
    checks.push({
      criterion: 'skinning: our failures (unweighted vertices)', variant, value: skinFailures.length, target: 0,
      pass: skinFailures.length === 0, ...(skinFailures.length ? { note: skinFailures.map((c) => c.name).join(', ') } : {}),
    });
    if (unmapped.length) {
      checks.push({ criterion: 'characters that could not be scored', variant, value: unmapped.length, target: 0, pass: false, note: unmapped.join(', ') });
    }
    const both = ok.filter((c) => c.skinning!.blender && Number.isFinite(c.skinning!.blender.deformation45));
    if (!both.length) {
      const note = 'no Blender peer in this run (--peer blender)';
      checks.push({ criterion: 'skinning: ±45° deformation ≤ 0.8 × Blender', variant, value: null, target: QUALITY_BAR.deformationVsBlender, pass: null, note });
      checks.push({ criterion: 'skinning: L1 ≤ Blender', variant, value: null, target: null, pass: null, note });
      if (variant === 'remesh') checks.push({ criterion: 'skinning time ≤ 0.2 × Blender', variant, value: null, target: QUALITY_BAR.timeVsBlender, pass: null, note });
      continue;
    }
    const ratio = mean(both.map((c) => c.skinning!.ours.deformation45)) / mean(both.map((c) => c.skinning!.blender!.deformation45));
    const over = both.filter((c) => c.skinning!.ours.deformation45 > QUALITY_BAR.deformationVsBlender * c.skinning!.blender!.deformation45);
    checks.push({
      criterion: 'skinning: ±45° deformation ≤ 0.8 × Blender (ratio of means)', variant, value: ratio, target: QUALITY_BAR.deformationVsBlender,
      pass: ratio <= QUALITY_BAR.deformationVsBlender,
      note: over.length ? `above 0.8× on ${over.map((c) => c.name).join(', ')}` : 'at or below 0.8× on every character',
    });
    const l1Ours = mean(both.map((c) => c.skinning!.ours.l1));
    const l1Blender = mean(both.map((c) => c.skinning!.blender!.l1));
    checks.push({
      criterion: 'skinning: mean L1 ≤ Blender', variant, value: l1Ours, target: l1Blender, pass: l1Ours <= l1Blender,
      note: `Blender ${l1Blender.toFixed(3)}`,
    });
    if (variant === 'remesh') {
      const timeRatio = mean(both.map((c) => c.skinning!.ours.seconds)) / mean(both.map((c) => c.skinning!.blender!.seconds));
      checks.push({
        criterion: 'skinning time ≤ 0.2 × Blender (ratio of means)', variant, value: timeRatio, target: QUALITY_BAR.timeVsBlender,
        pass: timeRatio <= QUALITY_BAR.timeVsBlender,
      });
    }
  }
  return checks;
}

function worst(pairs: [string, number][]): string | undefined {
  if (!pairs.length) return undefined;
  const [name, value] = pairs.reduce((a, b) => (b[1] > a[1] ? b : a));
  return `worst ${name} ${value.toFixed(4)}`;
}
