// Training curves → one PNG (the closing notes and model cards show it): node models/training/plot_curves.mjs OUT.png
// NAME=CSV:col1,col2 ... (needs `npm run build`; drawing code in sidecar/eval/trainingCurves.ts).
import { readCurveCsv, writeCurvesPng } from '../../dist/sidecar/eval/trainingCurves.js';

const [out, ...specs] = process.argv.slice(2);
if (!out || !specs.length) {
  console.error('usage: node models/training/plot_curves.mjs OUT.png NAME=CSV:col1,col2 ...');
  process.exit(64);
}
const series = specs.flatMap((spec) => {
  const m = /^([^=]+)=([^:]+):(.+)$/.exec(spec);
  if (!m) throw new Error(`bad curve spec '${spec}' (NAME=CSV:col1,col2)`);
  return readCurveCsv(m[2], m[3].split(','), m[1]);
});
writeCurvesPng(out, series);
console.log(`${out}: ${series.length} curves`);
