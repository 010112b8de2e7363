/** The training-curve picture (sidecar/eval/trainingCurves.ts): CSV reading, the running mean, and drawn pixels. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { curvesPicture, readCurveCsv, runningMean } from '../sidecar/eval/trainingCurves.js';

describe('training curves', () => {
  it('reads the chosen columns, skipping blank and non-positive cells', () => {
    const dir = mkdtempSync(join(tmpdir(), 'autorig-curves-'));
    const csv = join(dir, 'c.csv');
    writeFileSync(csv, 'step,loss,val\n1,2.0,\n2,1.0,0.5\n3,0,\n4,0.5,0.25\n');
    const [loss, val] = readCurveCsv(csv, ['loss', 'val'], 'net');
    expect(loss).toEqual({ title: 'net: loss', points: [[1, 2], [2, 1], [4, 0.5]] });
    expect(val.points).toEqual([[2, 0.5], [4, 0.25]]);
    expect(() => readCurveCsv(csv, ['missing'], 'net')).toThrow(/no column missing/);
  });

  it('averages over a trailing window', () => {
    expect(runningMean([[1, 1], [2, 3], [3, 5], [4, 7]], 2)).toEqual([[1, 1], [2, 2], [3, 4], [4, 6]]);
  });

  it('draws one panel per curve with the curve in its colour', () => {
    const falling: [number, number][] = Array.from({ length: 100 }, (_, i) => [i + 1, 10 * Math.exp(-i / 20)]);
    const image = curvesPicture([{ title: 'a', points: falling }, { title: 'b', points: falling }, { title: 'c', points: falling }]);
    expect([image.width, image.height]).toEqual([840, 480]);
    let blue = 0;
    for (let i = 0; i < image.width * image.height; i++) {
      if (image.pixels[3 * i] === 30 && image.pixels[3 * i + 1] === 60 && image.pixels[3 * i + 2] === 160) blue++;
    }
    expect(blue).toBeGreaterThan(300);
  });
});
