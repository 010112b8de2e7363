/** The preview picture and the progress reporter. */
import { describe, expect, it } from 'vitest';
import { boneColour, renderPreview } from '../sidecar/cli/preview.js';
import { progressReporter } from '../sidecar/cli/progress.js';
import type { Image } from '../sidecar/io/png.js';
import type { Frame, MeshPart, PartWeights, Skeleton, Vec3 } from '../sidecar/types.js';

const FACING_PLUS_Z: Frame = { up: [0, 1, 0], forward: [0, 0, 1], left: [1, 0, 0] };

describe('renderPreview', () => {
  // Two boxes side by side: the one on +X is weighted to bone 0, the one on -X to bone 1.
  const parts = [box('onPlusX', [0.5, 1, 0], 0.3), box('onMinusX', [-0.5, 1, 0], 0.3)];
  const weights = [rigid(parts[0], 0), rigid(parts[1], 1)];
  const skeleton: Skeleton = {
    joints: [
      { name: 'a', parent: -1, head: [0.5, 0.8, 0], tail: [0.5, 1.2, 0], roll: 0 },
      { name: 'b', parent: 0, head: [-0.5, 0.8, 0], tail: [-0.5, 1.2, 0], roll: 0 },
    ],
  };

  it('is the requested height, and puts the character’s left on the viewer’s right', () => {
    const image = renderPreview({ parts, skeleton, weights, frame: FACING_PLUS_Z, height: 256 });
    expect(image.height).toBe(256);
    // Facing +Z with its left on +X: the +X box (bone 0) is on the image's right.
    expect(hueMatch(averageColour(image, 0.75, 0.5), boneColour(0))).toBeGreaterThan(0.97);
    expect(hueMatch(averageColour(image, 0.25, 0.5), boneColour(1))).toBeGreaterThan(0.97);
    // Turned around (facing -Z, left on -X) the sides swap.
    const turned = renderPreview({ parts, skeleton, weights, frame: { up: [0, 1, 0], forward: [0, 0, -1], left: [-1, 0, 0] }, height: 256 });
    expect(hueMatch(averageColour(turned, 0.75, 0.5), boneColour(1))).toBeGreaterThan(0.97);
  });

  it('keeps the nearest surface (z-buffer along forward)', () => {
    const front = box('front', [0, 1, 0.5], 0.3);
    const back = box('back', [0, 1, -0.5], 0.4);
    const frame = FACING_PLUS_Z;
    for (const order of [[front, back], [back, front]]) {
      const w = order.map((p) => rigid(p, p === front ? 0 : 1));
      const image = renderPreview({ parts: order, skeleton: { joints: [] }, weights: w, frame, height: 128 });
      expect(hueMatch(averageColour(image, 0.5, 0.5), boneColour(0))).toBeGreaterThan(0.97);
    }
  });

  it('draws the skeleton on top: a white joint dot at each head', () => {
    const image = renderPreview({ parts, skeleton, weights, frame: FACING_PLUS_Z, height: 256 });
    // Heads at y = 0.8 on a 0.7..1.3 body, x = ±0.5: find near-white pixels around the heads' rows.
    let white = 0;
    for (let y = 0; y < image.height; y++) {
      for (let x = 0; x < image.width; x++) {
        const [r, g, b] = pixel(image, x, y);
        if (r > 250 && g > 250 && b > 250) white++;
      }
    }
    expect(white).toBeGreaterThan(20);
    const withoutSkeleton = renderPreview({ parts, skeleton: { joints: [] }, weights, frame: FACING_PLUS_Z, height: 256 });
    let whiteWithout = 0;
    for (let i = 0; i < withoutSkeleton.pixels.length; i += 3) if (withoutSkeleton.pixels[i] > 250 && withoutSkeleton.pixels[i + 1] > 250 && withoutSkeleton.pixels[i + 2] > 250) whiteWithout++;
    expect(whiteWithout).toBe(0);
  });

  it('gives neighbouring bones clearly different colours', () => {
    for (let j = 0; j < 30; j++) {
      const a = boneColour(j);
      const b = boneColour(j + 1);
      expect(Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2])).toBeGreaterThan(0.25);
    }
  });
});

describe('progressReporter', () => {
  it('writes one line per stage into a pipe', () => {
    let text = '';
    const progress = progressReporter({ write: (s: string) => (text += s), isTTY: false });
    progress.onProgress('mesh', 0);
    progress.onProgress('mesh', 0.02);
    progress.onProgress('skinning', 0.5);
    progress.finish();
    expect(text).toBe('autorig:   0% mesh\nautorig:  50% skinning\n');
  });

  it('redraws one bar in place on a terminal and ends it with a newline', () => {
    let text = '';
    const progress = progressReporter({ write: (s: string) => (text += s), isTTY: true });
    progress.onProgress('skeleton', 0.25);
    progress.onProgress('skinning', 1);
    progress.finish();
    expect(text.split('\r')).toHaveLength(3);
    expect(text).toContain('[######..................]  25% skeleton');
    expect(text).toContain('[########################] 100% skinning');
    expect(text.endsWith('\n')).toBe(true);
  });
});

/** An axis-aligned closed box (12 triangles, outward). */
function box(name: string, center: Vec3, half: number): MeshPart {
  const positions: number[] = [];
  for (let c = 0; c < 8; c++) positions.push(center[0] + (c & 1 ? half : -half), center[1] + (c & 2 ? half : -half), center[2] + (c & 4 ? half : -half));
  const faces = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]];
  const triangles = faces.flatMap(([a, b, c, d]) => [a, b, c, a, c, d]);
  return { name, positions: Float32Array.from(positions), triangles: Uint32Array.from(triangles) };
}

function rigid(part: MeshPart, joint: number): PartWeights {
  const count = part.positions.length / 3;
  const indices = new Uint16Array(count * 4);
  const weights = new Float32Array(count * 4);
  for (let v = 0; v < count; v++) {
    indices[v * 4] = joint;
    weights[v * 4] = 1;
  }
  return { name: part.name, influences: 4, indices, weights };
}

function pixel(image: Image, x: number, y: number): [number, number, number] {
  const o = (y * image.width + x) * image.channels;
  return [image.pixels[o], image.pixels[o + 1], image.pixels[o + 2]];
}

/** Mean colour of a 9×9 window around a point given as fractions of the image size. */
function averageColour(image: Image, fx: number, fy: number): [number, number, number] {
  const cx = Math.round(fx * image.width);
  const cy = Math.round(fy * image.height);
  const sum = [0, 0, 0];
  for (let y = cy - 4; y <= cy + 4; y++) for (let x = cx - 4; x <= cx + 4; x++) pixel(image, x, y).forEach((c, k) => (sum[k] += c / 81));
  return sum as [number, number, number];
}

/** Cosine between two colours as RGB directions: shading scales a colour, it does not turn it. */
function hueMatch(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  return dot / (Math.hypot(a[0], a[1], a[2]) * Math.hypot(b[0], b[1], b[2]));
}
