/** The eval report: Markdown tables, the bitmap font, the front view picture and the deformation bar chart. */
import { describe, expect, it } from 'vitest';
import { drawText, glyphCells, textWidth } from '../sidecar/eval/bitmapFont.js';
import type { CharacterEval, EvalReport } from '../sidecar/eval/evalTypes.js';
import { renderMarkdownReport } from '../sidecar/eval/reportMarkdown.js';
import {
  ARTIST_RGB, BACKGROUND_RGB, BLENDER_RGB, deformationBarChart, frontViewLayout, frontViewPicture, MESH_RGB, niceStep, OURS_RGB,
  type FrontViewInput,
} from '../sidecar/eval/reportPictures.js';
import { createImage, getPixel, type Rgb } from '../sidecar/eval/raster.js';
import type { Image } from '../sidecar/io/png.js';
import type { Vec3 } from '../sidecar/types.js';

/** Two characters: "alpha" measured (Blender's bone heat failed on it), "beta" whose rig could not be mapped. */
function sampleReport(): EvalReport {
  const alpha: CharacterEval = {
    name: 'alpha', file: 'data/alpha.glb', variant: 'original', vertices: 5040, triangles: 9000, status: 'ok',
    mapping: { method: 'names', joints: { Hips: 'mixamorig:Hips' }, missing: ['HeadTop_End'] },
    skeleton: {
      cdJ2J: 0.012345, cdJ2B: 0.0071, cdB2B: 0.00456, perJoint: { Hips: 0.01, LeftHand: 0.09 },
      meanJointError: 0.0213, maxJointError: 0.0912, maxJoint: 'LeftHand', wrongLimb: ['LeftHand', 'LeftForeArm'],
    },
    skinning: {
      ours: { precision: 0.8123, recall: 0.7456, l1: 0.3333, deformation10: 0.00123, deformation45: 0.00789, seconds: 1.234, unweighted: 0, failed: false },
      blender: {
        precision: 0.5, recall: 0.25, l1: 1.25, deformation10: 0.004, deformation45: 0.0301, seconds: 2.5, unweighted: 7214, failed: true,
        message: 'Bone Heat Weighting: failed to find a solution',
      },
    },
    pipeline: { deformation10: 0.0031, deformation45: 0.0172 },
    time: { rigSeconds: 3.456, skinSeconds: 1.234, peakRssMiB: 412.4 },
  };
  const beta: CharacterEval = {
    name: 'beta', file: 'data/beta.glb', variant: 'original', vertices: 775, triangles: 1400, status: 'unmapped',
    error: { code: 'UNMAPPABLE_RIG', message: 'no joint looks like a hip' },
    time: { rigSeconds: 0, skinSeconds: 0, peakRssMiB: 0 },
  };
  return {
    schema: 'autorig-eval', version: 2, created: '2026-11-30T10:00:00.000Z', data: 'data', method: 'geometric', peer: 'blender', remesh: null,
    settings: { poseSeed: 7, poses: 10, degrees: [10, 45] },
    environment: {
      node: 'v20.11.0', platform: 'linux x64', cpus: 16, cpuModel: 'Test CPU', blender: '3.4.1', autorig: '0.1.0', provider: null, providerFallback: [],
    },
    characters: [alpha, beta],
    summary: [{
      variant: 'original', characters: 1,
      skeleton: { cdJ2J: 0.012345, cdJ2B: 0.0071, cdB2B: 0.00456, meanJointError: 0.0213, wrongLimb: 2 },
      ours: { precision: 0.8123, recall: 0.7456, l1: 0.3333, deformation10: 0.00123, deformation45: 0.00789, seconds: 1.234, failures: 0 },
      blender: { precision: 0.5, recall: 0.25, l1: 1.25, deformation10: 0.004, deformation45: 0.0301, seconds: 2.5, failures: 1 },
      pipeline: { deformation10: 0.0031, deformation45: 0.0172 },
    }],
    bar: [
      { criterion: 'mean CD-J2J ≤ target', variant: 'original', value: 0.012345, target: 0.03, pass: true },
      { criterion: 'ours ±45° deformation below Blender', variant: 'original', value: 0.00789, target: 0.0301, pass: false },
      { criterion: 'remeshed characters measured', variant: 'original', value: null, target: null, pass: null, note: 'no --remesh' },
    ],
  };
}

/** The rows of the first table after `## heading`, as trimmed cells. */
function tableRows(markdown: string, heading: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(`## ${heading}`);
  expect(start).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (let i = start + 1; i < lines.length && !lines[i].startsWith('## '); i++) {
    if (!lines[i].startsWith('|')) {
      if (rows.length) break;
      continue;
    }
    rows.push(lines[i].slice(1, -1).split(' | ').map((c) => c.trim()));
  }
  return rows.slice(2); // header and separator
}

function row(rows: string[][], ...key: string[]): string[] {
  const found = rows.filter((r) => key.every((k, i) => r[i] === k));
  expect(found, `one row for ${key.join(', ')}`).toHaveLength(1);
  return found[0];
}

describe('renderMarkdownReport', () => {
  const markdown = renderMarkdownReport(sampleReport(), { charts: { original: 'pictures/deformation original.png' }, frontViews: { alpha: 'pictures/alpha-front.png' } });

  it('states the run in its header', () => {
    expect(markdown).toContain('| date | 2026-11-30T10:00:00.000Z |');
    expect(markdown).toContain('| method | geometric |');
    expect(markdown).toContain('| peer | Blender 3.4.1 |');
    expect(markdown).toContain('| remesh | no |');
    expect(markdown).toContain('seed 7');
    expect(markdown).toContain('16 × Test CPU');
    expect(markdown).toContain('| execution provider | none (the method runs no model) |');
  });

  it('names the execution provider the models ran on, and the ones it fell back from', () => {
    const header = (environment: Partial<EvalReport['environment']>) => {
      const report = sampleReport();
      report.environment = { ...report.environment, ...environment };
      return renderMarkdownReport(report, { charts: {}, frontViews: {} }).split('\n').find((line) => line.startsWith('| execution provider |'));
    };
    expect(header({ provider: 'cuda', providerFallback: [] })).toBe('| execution provider | cuda |');
    expect(header({ provider: 'cpu', providerFallback: ['cuda: Failed to load shared library', 'webgpu: no adapter | none'] })).toBe(
      '| execution provider | cpu (fell back from cuda: Failed to load shared library; webgpu: no adapter \\| none) |',
    );
    // a version 1 report has no provider: said so, not "undefined"
    const old = sampleReport() as unknown as { environment: Record<string, unknown> };
    delete old.environment.provider;
    delete old.environment.providerFallback;
    const markdown = renderMarkdownReport(old as unknown as EvalReport, { charts: {}, frontViews: {} });
    expect(markdown).toContain('| execution provider | not recorded |');
  });

  it('marks each quality bar criterion ✓, ✗ or n/a with its value and target', () => {
    const rows = tableRows(markdown, 'Quality bar');
    expect(row(rows, 'mean CD-J2J ≤ target')).toEqual(['mean CD-J2J ≤ target', 'original', '0.01235', '0.03', '✓', '']);
    expect(row(rows, 'ours ±45° deformation below Blender')[4]).toBe('✗');
    expect(row(rows, 'remeshed characters measured')).toEqual(['remeshed characters measured', 'original', '—', '—', 'n/a', 'no --remesh']);
  });

  it('puts each character’s skeleton scores in its row, 4 decimals, "—" where not measured', () => {
    const rows = tableRows(markdown, 'Skeleton');
    expect(row(rows, 'alpha')).toEqual([
      'alpha', 'original', '5040', 'ok', 'names, 1 missing: HeadTop_End', '0.0123', '0.0071', '0.0046', '0.0213', '0.0912', 'LeftHand', '2: LeftHand, LeftForeArm',
    ]);
    expect(row(rows, 'beta')).toEqual(['beta', 'original', '775', 'unmapped', '—', '—', '—', '—', '—', '—', '—', '—']);
    const mean = row(rows, '**mean (original)**');
    expect(mean.slice(5, 9)).toEqual(['0.0123', '0.0071', '0.0046', '0.0213']);
    expect(mean[3]).toBe('1 ok');
    expect(mean[11]).toBe('2 in all');
  });

  it('gives ours and Blender one row each in the skinning table, with Blender’s failure and message', () => {
    const rows = tableRows(markdown, 'Skinning with the artist\'s skeleton');
    expect(row(rows, 'alpha', 'original', 'ours')).toEqual(['alpha', 'original', 'ours', '0.812', '0.746', '0.333', '0.0012', '0.0079', '1.23', '0', 'no', '']);
    expect(row(rows, 'alpha', 'original', 'Blender')).toEqual([
      'alpha', 'original', 'Blender', '0.500', '0.250', '1.250', '0.0040', '0.0301', '2.50', '7214', 'yes', 'Bone Heat Weighting: failed to find a solution',
    ]);
    // beta never reached skinning: an ours row of dashes, and no Blender row claims it was run
    expect(row(rows, 'beta', 'original', 'ours').slice(3, 11)).toEqual(Array(8).fill('—'));
    expect(rows.filter((r) => r[0] === 'beta')).toHaveLength(1);
    expect(row(rows, '**mean (original)**', 'original', 'Blender')[10]).toBe('1 failed');
    expect(row(rows, '**mean (original)**', 'original', 'ours')[10]).toBe('0 failed');
  });

  it('lists the full pipeline, times and memory, means over the measured characters only', () => {
    const rows = tableRows(markdown, 'Full pipeline and cost');
    expect(row(rows, 'alpha')).toEqual(['alpha', 'original', '0.0031', '0.0172', '3.46', '1.23', '412']);
    expect(row(rows, 'beta')).toEqual(['beta', 'original', '—', '—', '—', '—', '—']);
    expect(row(rows, '**mean (original)**')).toEqual(['**mean (original)**', 'original', '0.0031', '0.0172', '3.46', '1.23', '412']);
  });

  it('gives the reason a character was not measured, and links the pictures', () => {
    expect(markdown).toContain('- **beta** (original, data/beta.glb): unmapped — UNMAPPABLE_RIG: no joint looks like a hip');
    expect(markdown).not.toMatch(/\*\*alpha\*\* \(original, data\/alpha\.glb\)/);
    expect(markdown).toContain('](pictures/deformation%20original.png)');
    expect(markdown).toContain('![alpha front view](pictures/alpha-front.png)');
  });

  it('leaves out remesh rows and the pictures section when there are none, and escapes pipes in cells', () => {
    const report = sampleReport();
    report.characters[1].error = { code: 'X', message: 'a|b\nc' };
    report.bar[0].note = 'x | y';
    const text = renderMarkdownReport(report);
    expect(text).not.toMatch(/^\| \w+ \| remesh \|/m);
    expect(text).not.toContain('## Pictures');
    expect(text).toContain('| x \\| y |');
    expect(text).toContain('unmapped — X: a|b c');
  });
});

describe('bitmap font', () => {
  it('draws the glyph of T: a full top bar and the middle column, nothing else', () => {
    const image = createImage(12, 12, [0, 0, 0]);
    const width = drawText(image, 2, 3, 'T', [255, 255, 255]);
    expect(width).toBe(5);
    const lit: string[] = [];
    for (let y = 0; y < 12; y++) for (let x = 0; x < 12; x++) if (getPixel(image, x, y)[0] === 255) lit.push(`${x},${y}`);
    const expected = ['2,3', '3,3', '4,3', '5,3', '6,3', '4,4', '4,5', '4,6', '4,7', '4,8', '4,9'];
    expect(lit.sort()).toEqual(expected.sort());
  });

  it('scales each cell to a block and advances 6 cells per character', () => {
    const image = createImage(30, 20, [0, 0, 0]);
    drawText(image, 0, 0, '-1', [255, 0, 0], 2);
    // '-' is the middle three cells of row 3: pixels x 2..7, y 6..7 at scale 2
    for (const [x, y, on] of [[2, 6, 1], [7, 7, 1], [1, 6, 0], [8, 6, 0], [4, 5, 0], [4, 8, 0]]) {
      expect(getPixel(image, x, y)[0], `${x},${y}`).toBe(on ? 255 : 0);
    }
    // '1' starts 12 pixels right; its top cell is column 2 → x 16..17, y 0..1
    expect(getPixel(image, 16, 0)[0]).toBe(255);
    expect(getPixel(image, 15, 0)[0]).toBe(0);
    expect(textWidth('-1', 2)).toBe(22);
  });

  it('draws an unknown character as ?', () => {
    expect(glyphCells('€')).toEqual(glyphCells('?'));
    expect(glyphCells('a')).not.toEqual(glyphCells('?'));
  });
});

describe('frontViewPicture', () => {
  // A unit square in the plane z = 0, facing +z: up = +y, the character's left = +x.
  const square: Pick<FrontViewInput, 'positions' | 'triangles'> = {
    positions: Float32Array.from([-0.5, -0.5, 0, 0.5, -0.5, 0, 0.5, 0.5, 0, -0.5, 0.5, 0]),
    triangles: Uint32Array.from([0, 1, 2, 0, 2, 3]),
  };
  const artistHead: Vec3 = [0.3, 0.2, 0];
  const ourHead: Vec3 = [-0.25, -0.3, 0];
  const input = (left: Vec3): FrontViewInput => ({
    ...square, up: [0, 1, 0], left,
    artist: { heads: [artistHead], parents: [-1] },
    ours: { heads: [ourHead], parents: [-1] },
    title: 'square',
  });

  it('shows the artist’s joint green and ours red over a grey silhouette, the character’s left on the right', () => {
    const size = 256;
    const image = frontViewPicture(input([1, 0, 0]), size);
    expect([image.width, image.height]).toEqual([size, size]);
    const layout = frontViewLayout(input([1, 0, 0]), size);
    const at = (p: Vec3) => {
      const [x, y] = layout.project(p);
      return getPixel(image, Math.floor(x), Math.floor(y));
    };
    expect(at(artistHead)).toEqual([...ARTIST_RGB]);
    expect(at(ourHead)).toEqual([...OURS_RGB]);
    expect(at([0, 0, 0])).toEqual([...MESH_RGB]);
    expect(at([-0.4, 0.4, 0])).toEqual([...MESH_RGB]);
    // the artist's joint is on the character's left (+x): the right half; higher up, so nearer the top
    const [ax, ay] = layout.project(artistHead);
    const [ox, oy] = layout.project(ourHead);
    expect(ax).toBeGreaterThan(size / 2 + 20);
    expect(ox).toBeLessThan(size / 2 - 20);
    expect(ay).toBeLessThan(oy);
    // the square fills the width between the margins, so a pixel beside it is background
    expect(getPixel(image, 2, Math.floor(ay))).toEqual([...BACKGROUND_RGB]);
    expect(countColour(image, ARTIST_RGB)).toBeGreaterThan(20);
  });

  it('mirrors when the character faces the other way (its left along −x)', () => {
    const size = 256;
    const image = frontViewPicture(input([-1, 0, 0]), size);
    const [ax, ay] = frontViewLayout(input([-1, 0, 0]), size).project(artistHead);
    expect(ax).toBeLessThan(size / 2 - 20);
    expect(getPixel(image, Math.floor(ax), Math.floor(ay))).toEqual([...ARTIST_RGB]);
  });

  it('draws a bone between a joint and its parent', () => {
    const size = 256;
    const withBone: FrontViewInput = { ...input([1, 0, 0]), ours: { heads: [[-0.3, -0.3, 0], [0.3, -0.3, 0]], parents: [-1, 0] } };
    const image = frontViewPicture(withBone, size);
    const [x, y] = frontViewLayout(withBone, size).project([0, -0.3, 0]);
    expect(getPixel(image, Math.floor(x), Math.floor(y))).toEqual([...OURS_RGB]);
  });
});

describe('deformationBarChart', () => {
  function chartReport(ours: number, blender: number, failed: boolean): EvalReport {
    const report = sampleReport();
    const alpha = report.characters[0];
    alpha.skinning!.ours.deformation45 = ours;
    alpha.skinning!.blender!.deformation45 = blender;
    alpha.skinning!.blender!.failed = failed;
    return report;
  }

  it('makes our bar twice as tall as Blender’s when our error is twice as large', () => {
    const image = deformationBarChart(chartReport(0.04, 0.02, false), 'original');
    const ours = tallestColumn(image, OURS_RGB);
    const blender = tallestColumn(image, BLENDER_RGB);
    expect(ours.count).toBeGreaterThan(100);
    expect(ours.count / blender.count).toBeCloseTo(2, 1);
    // grouped: the Blender bar stands just right of ours
    expect(blender.x).toBeGreaterThan(ours.x);
    expect(blender.x - ours.x).toBeLessThan(40);
  });

  it('makes Blender’s bar taller when its error is larger, and hatches it when Blender failed', () => {
    const solid = deformationBarChart(chartReport(0.01, 0.03, false), 'original');
    expect(tallestColumn(solid, BLENDER_RGB).count).toBeGreaterThan(2.5 * tallestColumn(solid, OURS_RGB).count);
    const hatched = deformationBarChart(chartReport(0.01, 0.03, true), 'original');
    const column = tallestColumn(hatched, BLENDER_RGB);
    // the outline's column is solid; inside the bar, one pixel in four is blue (the legend's swatch adds a few)
    const inner = columnSpan(hatched, column.x + 5, BLENDER_RGB);
    expect(inner.extent).toBeGreaterThan(100);
    expect(inner.count / column.count).toBeCloseTo(0.25, 1);
  });

  it('has no bars for a variant without characters', () => {
    const image = deformationBarChart(sampleReport(), 'remesh');
    expect(tallestColumn(image, OURS_RGB).count).toBeLessThan(10); // the legend's swatch only
  });

  it('picks round tick steps', () => {
    expect(niceStep(0.008)).toBeCloseTo(0.01, 12);
    expect(niceStep(0.011)).toBeCloseTo(0.02, 12);
    expect(niceStep(3)).toBe(5);
    expect(niceStep(1)).toBe(1);
  });
});

function same(image: Image, x: number, y: number, rgb: Rgb): boolean {
  const p = getPixel(image, x, y);
  return p[0] === rgb[0] && p[1] === rgb[1] && p[2] === rgb[2];
}

function countColour(image: Image, rgb: Rgb): number {
  let n = 0;
  for (let y = 0; y < image.height; y++) for (let x = 0; x < image.width; x++) if (same(image, x, y, rgb)) n++;
  return n;
}

/** The column with the longest vertical run of colour rgb (a bar, not its legend swatch) → its x and the run's length. */
function tallestColumn(image: Image, rgb: Rgb): { x: number; count: number } {
  let best = { x: -1, count: 0 };
  for (let x = 0; x < image.width; x++) {
    let run = 0;
    for (let y = 0; y < image.height; y++) {
      run = same(image, x, y, rgb) ? run + 1 : 0;
      if (run > best.count) best = { x, count: run };
    }
  }
  return best;
}

/** Pixels of colour rgb in column x, and the rows from the first to the last of them. */
function columnSpan(image: Image, x: number, rgb: Rgb): { count: number; extent: number } {
  let count = 0, first = -1, last = -1;
  for (let y = 0; y < image.height; y++) {
    if (!same(image, x, y, rgb)) continue;
    count++;
    if (first < 0) first = y;
    last = y;
  }
  return { count, extent: first < 0 ? 0 : last - first + 1 };
}
