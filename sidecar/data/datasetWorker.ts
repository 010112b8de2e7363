/** Child process of makeDataset: makes samples first, first+stride, ... and reports back over IPC. */
import type { DevCharacter } from './augment/devCharacter.js';
import { isSampleMade, makeSample, type DatasetOptions, type DatasetSummary } from './makeDataset.js';

process.once('message', async (m: { options: Omit<DatasetOptions, 'log'>; first: number; stride: number }) => {
  const options: DatasetOptions = { ...m.options, log: (line) => process.send?.({ kind: 'log', line }) };
  const cache = new Map<string, DevCharacter>();
  const summary: DatasetSummary = { written: 0, kept: 0, failed: [], seconds: 0 };
  const t0 = performance.now();
  for (let i = m.first; i < options.count; i += m.stride) {
    const t = performance.now();
    try {
      if (options.resume && isSampleMade(i, options)) {
        summary.kept++;
        continue;
      }
      const path = await makeSample(i, options, cache);
      summary.written++;
      options.log(`sample ${i}: ${path} (${((performance.now() - t) / 1000).toFixed(1)} s)`);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      summary.failed.push({ index: i, error });
      options.log(`sample ${i}: FAILED ${error}`);
    }
  }
  summary.seconds = (performance.now() - t0) / 1000;
  process.send?.({ kind: 'done', summary }, () => process.exit(0));
});
