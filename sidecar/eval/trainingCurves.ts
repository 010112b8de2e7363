/**
 * Training curves as a picture for the model cards and the closing notes: the per-step CSV the training scripts write
 * (models/training/*.py, `--curve`) → one PNG, a panel per curve, loss on a log scale against the step.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { encodePng, type Image } from '../io/png.js';
import { drawText, textWidth } from './bitmapFont.js';
import { createImage, drawLine, fillRectangle, type Rgb } from './raster.js';

export interface CurveSeries {
  /** the panel's title, e.g. "joints2d: loss" */
  title: string;
  /** (step, value) pairs, value > 0 (plotted on a log scale) */
  points: [number, number][];
}

/** readCurveCsv: a CSV with a `step` column → one series per chosen numeric column (blank cells skipped). */
export function readCurveCsv(path: string, columns: string[], titlePrefix: string): CurveSeries[] {
  const lines = readFileSync(path, 'utf8').trim().split(/\r?\n/);
  const head = lines[0].split(',');
  const stepAt = head.indexOf('step');
  if (stepAt < 0) throw new Error(`${path}: no step column`);
  return columns.map((column) => {
    const at = head.indexOf(column);
    if (at < 0) throw new Error(`${path}: no column ${column}`);
    const points: [number, number][] = [];
    for (const line of lines.slice(1)) {
      const cells = line.split(',');
      const v = Number(cells[at]);
      if (cells[at] !== '' && Number.isFinite(v) && v > 0) points.push([Number(cells[stepAt]), v]);
    }
    return { title: `${titlePrefix}: ${column}`, points };
  });
}

/** Running mean over `window` points, so a noisy per-step loss shows its trend (the raw curve is drawn faint). */
export function runningMean(points: [number, number][], window: number): [number, number][] {
  const out: [number, number][] = [];
  let sum = 0;
  for (let i = 0; i < points.length; i++) {
    sum += points[i][1];
    if (i >= window) sum -= points[i - window][1];
    out.push([points[i][0], sum / Math.min(i + 1, window)]);
  }
  return out;
}

const PANEL_W = 420, PANEL_H = 240, MARGIN = 36;
const FAINT: Rgb = [190, 200, 225], LINE: Rgb = [30, 60, 160], AXIS: Rgb = [0, 0, 0], GRID: Rgb = [225, 225, 225];

/** curvesPicture: series → an image with one panel each (two per row), log-scale y with decade grid lines. */
export function curvesPicture(series: CurveSeries[]): Image {
  const cols = Math.min(2, series.length), rows = Math.ceil(series.length / 2);
  const image = createImage(cols * PANEL_W, rows * PANEL_H, [255, 255, 255]);
  series.forEach((s, k) => drawPanel(image, (k % 2) * PANEL_W, Math.floor(k / 2) * PANEL_H, s));
  return image;
}

function drawPanel(image: Image, x0: number, y0: number, s: CurveSeries): void {
  drawText(image, x0 + MARGIN, y0 + 6, s.title, AXIS);
  if (s.points.length < 2) { drawText(image, x0 + MARGIN, y0 + 40, 'no data', AXIS); return; }
  const steps = s.points.map((p) => p[0]);
  const logs = s.points.map((p) => Math.log10(p[1]));
  const xMin = Math.min(...steps), xMax = Math.max(...steps);
  const yMin = Math.floor(Math.min(...logs) * 4) / 4, yMax = Math.ceil(Math.max(...logs) * 4) / 4 || yMin + 1;
  const left = x0 + MARGIN + 12, right = x0 + PANEL_W - 10, top = y0 + 22, bottom = y0 + PANEL_H - 24;
  const px = (step: number) => left + ((step - xMin) / Math.max(1, xMax - xMin)) * (right - left);
  const py = (v: number) => bottom - ((Math.log10(v) - yMin) / Math.max(1e-9, yMax - yMin)) * (bottom - top);
  for (let d = Math.ceil(yMin); d <= Math.floor(yMax); d++) {
    const y = py(10 ** d);
    drawLine(image, left, y, right, y, GRID);
    const label = d >= 0 ? String(10 ** d) : `1e${d}`;
    drawText(image, left - textWidth(label) - 3, Math.round(y) - 3, label, AXIS);
  }
  drawLine(image, left, top, left, bottom, AXIS);
  drawLine(image, left, bottom, right, bottom, AXIS);
  drawText(image, left, bottom + 6, String(xMin), AXIS);
  const last = `step ${xMax}`;
  drawText(image, right - textWidth(last), bottom + 6, last, AXIS);
  const plot = (pts: [number, number][], rgb: Rgb, thickness: number) => {
    for (let i = 1; i < pts.length; i++) drawLine(image, px(pts[i - 1][0]), py(pts[i - 1][1]), px(pts[i][0]), py(pts[i][1]), rgb, thickness);
  };
  const smooth = runningMean(s.points, Math.max(1, Math.round(s.points.length / 40)));
  if (s.points.length > 60) plot(s.points, FAINT, 1);
  plot(smooth, LINE, 2);
  const end = `${smooth[smooth.length - 1][1].toPrecision(3)}`;
  fillRectangle(image, right - textWidth(end) - 2, top, textWidth(end) + 2, 9, [255, 255, 255]);
  drawText(image, right - textWidth(end), top + 1, end, LINE);
}

/** writeCurvesPng: the picture of `series` to a PNG file. */
export function writeCurvesPng(path: string, series: CurveSeries[]): void {
  writeFileSync(path, encodePng(curvesPicture(series)));
}
