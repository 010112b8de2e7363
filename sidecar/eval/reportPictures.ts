/**
 * The eval report's pictures: a front view of each character with the artist's joints and ours, and a bar chart of
 * the skinning deformation error at ±45° per character (ours vs Blender). Both return an RGB Image (io/png.ts);
 * the caller writes them with encodePng.
 */
import type { Image } from '../io/png.js';
import type { Vec3 } from '../types.js';
import { drawText, fitText, GLYPH_HEIGHT, textWidth } from './bitmapFont.js';
import type { EvalReport, Variant } from './evalTypes.js';
import { createImage, drawLine, fillDisc, fillRectangle, fillTriangle, setPixel, type Rgb } from './raster.js';

export const BACKGROUND_RGB: Rgb = [255, 255, 255];
export const MESH_RGB: Rgb = [205, 205, 205];
export const TEXT_RGB: Rgb = [30, 30, 35];
export const ARTIST_RGB: Rgb = [0, 160, 60];
export const OURS_RGB: Rgb = [230, 70, 20];
export const BLENDER_RGB: Rgb = [40, 90, 200];
const AXIS_RGB: Rgb = [60, 60, 65];
const GRID_RGB: Rgb = [228, 228, 232];

/** A skeleton as joint heads (null where a joint is absent, e.g. unmapped) and parent indices (-1 for a root). */
export interface JointHeads {
  heads: (Vec3 | null)[];
  parents: number[];
}

export interface FrontViewInput {
  /** positions: Float32Array, #V*3 */
  positions: Float32Array;
  /** triangles: Uint32Array, #T*3 */
  triangles: Uint32Array;
  /** the character's up and own left (unit vectors) */
  up: Vec3;
  left: Vec3;
  artist: JointHeads;
  ours: JointHeads;
  title: string;
}

/** Where things go in a front view picture: project maps a 3D point to continuous pixel coordinates [x, y]. */
export interface FrontViewLayout {
  size: number;
  /** text scales: the title's (1 when it would not fit at 2) and the legend's */
  titleScale: number;
  legendScale: number;
  /** top of the drawing area and height of the title band, bottom band for the legend (pixels) */
  top: number;
  bottom: number;
  project(p: ArrayLike<number>, offset?: number): [number, number];
}

/**
 * frontViewLayout: an orthographic view from the character's front. Screen x runs along the character's left, so its
 * left appears on the picture's right, as when facing someone; screen y runs down along −up. Mesh and joints are fitted,
 * proportions kept, into the square between the title band and the legend band.
 * input: as frontViewPicture; size: picture side in pixels
 */
export function frontViewLayout(input: FrontViewInput, size: number): FrontViewLayout {
  const { up, left } = input;
  const along = (p: ArrayLike<number>, o: number, axis: Vec3) => p[o] * axis[0] + p[o + 1] * axis[1] + p[o + 2] * axis[2];
  let minU = Infinity, maxU = -Infinity, minV = Infinity, maxV = -Infinity;
  const include = (p: ArrayLike<number>, o: number) => {
    const u = along(p, o, left);
    const v = along(p, o, up);
    if (!Number.isFinite(u) || !Number.isFinite(v)) return;
    minU = Math.min(minU, u);
    maxU = Math.max(maxU, u);
    minV = Math.min(minV, v);
    maxV = Math.max(maxV, v);
  };
  for (let o = 0; o < input.positions.length; o += 3) include(input.positions, o);
  for (const head of [...input.artist.heads, ...input.ours.heads]) if (head) include(head, 0);
  if (!Number.isFinite(minU)) minU = maxU = minV = maxV = 0;

  const margin = Math.round(size * 0.04);
  const legendScale = size >= 320 ? 2 : 1;
  const titleScale = legendScale === 2 && textWidth(input.title, 2) <= size - 2 * margin ? 2 : 1;
  const band = GLYPH_HEIGHT * legendScale + Math.round(size * 0.03) * 2;
  const top = band;
  const bottom = size - band;
  const areaWidth = size - 2 * margin;
  const areaHeight = bottom - top;
  const scale = Math.min(areaWidth / Math.max(maxU - minU, 1e-12), areaHeight / Math.max(maxV - minV, 1e-12));
  const centreU = (minU + maxU) / 2;
  const centreV = (minV + maxV) / 2;
  const centreX = size / 2;
  const centreY = (top + bottom) / 2;
  return {
    size,
    titleScale,
    legendScale,
    top,
    bottom,
    project(p, offset = 0) {
      return [centreX + (along(p, offset, left) - centreU) * scale, centreY - (along(p, offset, up) - centreV) * scale];
    },
  };
}

/**
 * frontViewPicture: the mesh silhouette in light grey (no depth: a front view's silhouette is the union of its
 * triangles), the artist's skeleton in green and ours in orange-red (bones as lines from parent head to head, joints as
 * dots; ours drawn over the artist's), the title above and a legend below.
 * input: mesh, frame and both skeletons; size: side of the square picture in pixels → RGB Image size × size
 */
export function frontViewPicture(input: FrontViewInput, size = 512): Image {
  const image = createImage(size, size, BACKGROUND_RGB);
  const layout = frontViewLayout(input, size);
  const screen = new Float32Array((input.positions.length / 3) * 2);
  for (let v = 0; v < screen.length / 2; v++) screen.set(layout.project(input.positions, v * 3), v * 2);
  const t = input.triangles;
  const corner = (index: number): [number, number] => [screen[index * 2], screen[index * 2 + 1]];
  for (let f = 0; f + 2 < t.length; f += 3) fillTriangle(image, corner(t[f]), corner(t[f + 1]), corner(t[f + 2]), MESH_RGB);

  const thickness = Math.max(1, Math.round(size / 256));
  const radius = Math.max(2, size / 128);
  drawBones(image, input.artist, layout, ARTIST_RGB, thickness);
  drawBones(image, input.ours, layout, OURS_RGB, thickness);
  drawJoints(image, input.artist, layout, ARTIST_RGB, radius);
  drawJoints(image, input.ours, layout, OURS_RGB, radius);

  const titleScale = layout.titleScale;
  const title = fitText(input.title, size - 8, titleScale);
  drawText(image, Math.round((size - textWidth(title, titleScale)) / 2), Math.round((layout.top - GLYPH_HEIGHT * titleScale) / 2), title, TEXT_RGB, titleScale);
  const scale = layout.legendScale;
  const legendY = Math.round(layout.bottom + (size - layout.bottom - GLYPH_HEIGHT * scale) / 2);
  const entries: [string, Rgb][] = [['artist', ARTIST_RGB], ['ours', OURS_RGB]];
  const entryWidth = (label: string) => 2 * radius + 6 * scale + textWidth(label, scale);
  const gap = 16 * scale;
  let x = Math.round((size - entries.reduce((w, [label]) => w + entryWidth(label), 0) - gap * (entries.length - 1)) / 2);
  for (const [label, rgb] of entries) {
    fillDisc(image, x + radius, legendY + (GLYPH_HEIGHT * scale) / 2, radius, rgb);
    drawText(image, Math.round(x + 2 * radius + 6 * scale), legendY, label, TEXT_RGB, scale);
    x += Math.round(entryWidth(label) + gap);
  }
  return image;
}

function drawBones(image: Image, skeleton: JointHeads, layout: FrontViewLayout, rgb: Rgb, thickness: number): void {
  skeleton.heads.forEach((head, j) => {
    const parent = skeleton.parents[j];
    const parentHead = parent >= 0 ? skeleton.heads[parent] : null;
    if (!head || !parentHead) return;
    const [ax, ay] = layout.project(parentHead);
    const [bx, by] = layout.project(head);
    drawLine(image, ax, ay, bx, by, rgb, thickness);
  });
}

function drawJoints(image: Image, skeleton: JointHeads, layout: FrontViewLayout, rgb: Rgb, radius: number): void {
  for (const head of skeleton.heads) {
    if (!head) continue;
    const [x, y] = layout.project(head);
    fillDisc(image, x, y, radius, rgb);
  }
}

/** One group of bars: a character's deformation error at ±45°, ours and Blender's (null: not measured). */
export interface DeformationBars {
  name: string;
  ours: number | null;
  blender: number | null;
  blenderFailed: boolean;
}

/** deformationBars: the bar groups of a variant, one per character with status "ok", in the report's order. */
export function deformationBars(report: EvalReport, variant: Variant): DeformationBars[] {
  const finite = (x: number | undefined) => (x !== undefined && Number.isFinite(x) ? x : null);
  return report.characters
    .filter((c) => c.variant === variant && c.status === 'ok')
    .map((c) => ({
      name: c.name,
      ours: finite(c.skinning?.ours.deformation45),
      blender: finite(c.skinning?.blender?.deformation45),
      blenderFailed: c.skinning?.blender?.failed ?? false,
    }));
}

/**
 * deformationBarChart: grouped bars per character of the skinning deformation error at ±45° (mean vertex distance,
 * normalised units), ours solid orange-red, Blender solid blue, or blue-hatched where Blender failed (its
 * unweighted vertices then stay still, which is what the bar measures). Y axis with ticks from 0, names under the
 * groups, a legend under the title.
 * report: the eval result; variant: which variant's characters; height: picture height in pixels → RGB Image
 */
export function deformationBarChart(report: EvalReport, variant: Variant, height = 400): Image {
  const groups = deformationBars(report, variant);
  const withBlender = report.peer !== null || groups.some((g) => g.blender !== null);
  const values = groups.flatMap((g) => [g.ours, g.blender]).filter((x): x is number => x !== null);
  const max = Math.max(0, ...values);
  const step = niceStep((max > 0 ? max : 1) / 5);
  const topValue = Math.max(step, Math.ceil(max / step - 1e-9) * step);
  const decimals = Math.min(8, Math.max(0, -Math.floor(Math.log10(step) + 1e-9)));
  const ticks: number[] = [];
  for (let k = 0; k * step <= topValue + step * 1e-6; k++) ticks.push(k * step);

  const titleScale = 2;
  const title = `Skinning deformation at ±45° (${variant})`;
  const axisLabel = 'mean vertex distance (bbox longest side = 1)';
  const tickLabelWidth = Math.max(...ticks.map((v) => textWidth(v.toFixed(decimals))));
  const nameLimit = 16;
  const barWidth = 16;
  const groupWidth = Math.max(3 * barWidth, textWidth('x'.repeat(nameLimit)) + 10);
  const plotLeft = 12 + tickLabelWidth + 6;
  const plotWidth = Math.max(1, groups.length) * groupWidth;
  const width = Math.max(plotLeft + plotWidth + 16, textWidth(title, titleScale) + 24, plotLeft + textWidth(axisLabel) + 16, 360);
  const plotTop = 12 + GLYPH_HEIGHT * titleScale + 10 + GLYPH_HEIGHT + 12 + GLYPH_HEIGHT + 8;
  const plotBottom = height - (8 + GLYPH_HEIGHT + 8 + GLYPH_HEIGHT + 8);
  const image = createImage(width, height, BACKGROUND_RGB);
  const valueToY = (v: number) => plotBottom - (v / topValue) * (plotBottom - plotTop);

  // Title, legend, axis label.
  drawText(image, Math.round((width - textWidth(title, titleScale)) / 2), 12, title, TEXT_RGB, titleScale);
  const legendY = 12 + GLYPH_HEIGHT * titleScale + 10;
  const legend: [string, 'solid' | 'hatched', Rgb][] = [['ours', 'solid', OURS_RGB]];
  if (withBlender) legend.push(['Blender', 'solid', BLENDER_RGB], ['Blender failed', 'hatched', BLENDER_RGB]);
  let x = plotLeft;
  for (const [label, fill, rgb] of legend) {
    drawBar(image, x, legendY, 12, GLYPH_HEIGHT, rgb, fill === 'hatched');
    x += 16 + drawText(image, x + 16, legendY, label, TEXT_RGB) + 14;
  }
  drawText(image, plotLeft, legendY + GLYPH_HEIGHT + 12, axisLabel, TEXT_RGB);

  // Grid and ticks, then the axes over them.
  for (const v of ticks) {
    const y = Math.round(valueToY(v));
    fillRectangle(image, plotLeft + 1, y, plotWidth, 1, GRID_RGB);
    fillRectangle(image, plotLeft - 4, y, 4, 1, AXIS_RGB);
    const label = v.toFixed(decimals);
    drawText(image, plotLeft - 6 - textWidth(label), y - (GLYPH_HEIGHT >> 1), label, TEXT_RGB);
  }
  fillRectangle(image, plotLeft, plotTop - 4, 1, plotBottom - plotTop + 5, AXIS_RGB);
  fillRectangle(image, plotLeft, plotBottom, plotWidth + 1, 1, AXIS_RGB);

  groups.forEach((group, g) => {
    const centre = plotLeft + g * groupWidth + groupWidth / 2;
    const bars: [number | null, Rgb, boolean, number][] = [[group.ours, OURS_RGB, false, Math.round(centre - barWidth - 1)]];
    if (withBlender) bars.push([group.blender, BLENDER_RGB, group.blenderFailed, Math.round(centre + 1)]);
    for (const [value, rgb, hatched, left] of bars) {
      if (value === null) {
        // not measured: a dash on the axis says so, rather than a bar of height 0 that reads as "no error"
        drawText(image, left + ((barWidth - textWidth('—')) >> 1), plotBottom - GLYPH_HEIGHT - 2, '—', rgb);
        continue;
      }
      const top = Math.round(valueToY(Math.min(value, topValue)));
      drawBar(image, left, top, barWidth, plotBottom - top, rgb, hatched);
    }
    const name = fitText(group.name, groupWidth - 6);
    drawText(image, Math.round(centre - textWidth(name) / 2), plotBottom + 8, name, TEXT_RGB);
  });
  if (groups.length === 0) drawText(image, plotLeft + 8, Math.round((plotTop + plotBottom) / 2), `no measured characters (${variant})`, TEXT_RGB);
  const xLabel = 'character';
  drawText(image, Math.round(plotLeft + (plotWidth - textWidth(xLabel)) / 2), plotBottom + 8 + GLYPH_HEIGHT + 8, xLabel, TEXT_RGB);
  return image;
}

/** A bar's rectangle: solid, or outlined with diagonal hatching inside (a failed method). */
function drawBar(image: Image, x: number, y: number, width: number, height: number, rgb: Rgb, hatched: boolean): void {
  if (height <= 0) return;
  if (!hatched) {
    fillRectangle(image, x, y, width, height, rgb);
    return;
  }
  for (let j = y; j < y + height; j++) {
    for (let i = x; i < x + width; i++) {
      const edge = i === x || i === x + width - 1 || j === y || j === y + height - 1;
      if (edge || (i + j) % 4 === 0) setPixel(image, i, j, rgb);
    }
  }
}

/** niceStep: the smallest of 1, 2, 5 × 10^k that is ≥ rough (rough > 0). */
export function niceStep(rough: number): number {
  const power = 10 ** Math.floor(Math.log10(rough));
  for (const m of [1, 2, 5, 10]) if (m * power >= rough * (1 - 1e-9)) return m * power;
  return 10 * power;
}
