/**
 * Drawing primitives for the eval report's pictures, on the Image of io/png.ts (8-bit, row major from the top-left).
 * Coordinates are continuous pixel units: pixel (i, j) covers [i, i+1) × [j, j+1) and its centre is (i + 0.5, j + 0.5).
 * A shape paints every pixel whose centre it covers; nothing is blended, so colours in a picture are exact and tests can
 * look for them.
 */
import type { Image } from '../io/png.js';

/** A colour, 0..255 per channel. */
export type Rgb = readonly [number, number, number];

/** createImage: width × height RGB image filled with `background`. */
export function createImage(width: number, height: number, background: Rgb): Image {
  const pixels = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) pixels.set(background, i * 3);
  return { width, height, channels: 3, pixels };
}

/** setPixel: paint pixel (x, y) (integers); outside the image it does nothing. Alpha, when present, becomes opaque. */
export function setPixel(image: Image, x: number, y: number, rgb: Rgb): void {
  if (x < 0 || y < 0 || x >= image.width || y >= image.height) return;
  const o = (y * image.width + x) * image.channels;
  image.pixels[o] = rgb[0];
  image.pixels[o + 1] = rgb[1];
  image.pixels[o + 2] = rgb[2];
  if (image.channels === 4) image.pixels[o + 3] = 255;
}

/** getPixel: the colour of pixel (x, y) → [r, g, b]. */
export function getPixel(image: Image, x: number, y: number): [number, number, number] {
  const o = (y * image.width + x) * image.channels;
  return [image.pixels[o], image.pixels[o + 1], image.pixels[o + 2]];
}

/** fillRectangle: the pixels x..x+width-1, y..y+height-1 (integers), clipped to the image. */
export function fillRectangle(image: Image, x: number, y: number, width: number, height: number, rgb: Rgb): void {
  const x0 = Math.max(0, x);
  const y0 = Math.max(0, y);
  const x1 = Math.min(image.width, x + width);
  const y1 = Math.min(image.height, y + height);
  for (let j = y0; j < y1; j++) for (let i = x0; i < x1; i++) setPixel(image, i, j, rgb);
}

/**
 * drawLine: the pixels whose centres lie within thickness/2 of segment ab (round caps; a disc when a = b).
 * A radius of at least 0.5 keeps a one-pixel line 8-connected at any slope.
 */
export function drawLine(image: Image, ax: number, ay: number, bx: number, by: number, rgb: Rgb, thickness = 1): void {
  const radius = Math.max(0.5, thickness / 2);
  const x0 = Math.max(0, Math.floor(Math.min(ax, bx) - radius));
  const x1 = Math.min(image.width - 1, Math.ceil(Math.max(ax, bx) + radius));
  const y0 = Math.max(0, Math.floor(Math.min(ay, by) - radius));
  const y1 = Math.min(image.height - 1, Math.ceil(Math.max(ay, by) + radius));
  const dx = bx - ax;
  const dy = by - ay;
  const length2 = dx * dx + dy * dy;
  for (let j = y0; j <= y1; j++) {
    for (let i = x0; i <= x1; i++) {
      const px = i + 0.5 - ax;
      const py = j + 0.5 - ay;
      const t = length2 > 0 ? Math.min(1, Math.max(0, (px * dx + py * dy) / length2)) : 0;
      const ex = px - t * dx;
      const ey = py - t * dy;
      if (ex * ex + ey * ey <= radius * radius) setPixel(image, i, j, rgb);
    }
  }
}

/** fillDisc: the pixels whose centres lie within `radius` of (cx, cy). */
export function fillDisc(image: Image, cx: number, cy: number, radius: number, rgb: Rgb): void {
  drawLine(image, cx, cy, cx, cy, rgb, 2 * radius);
}

/**
 * fillTriangle: the pixels whose centres lie inside triangle abc (either winding), edges included so that triangles
 * sharing an edge leave no crack between them. a, b, c: [x, y].
 */
export function fillTriangle(image: Image, a: readonly [number, number], b: readonly [number, number], c: readonly [number, number], rgb: Rgb): void {
  const area = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
  if (!(Math.abs(area) > 1e-12)) return;
  const x0 = Math.max(0, Math.floor(Math.min(a[0], b[0], c[0])));
  const x1 = Math.min(image.width - 1, Math.ceil(Math.max(a[0], b[0], c[0])));
  const y0 = Math.max(0, Math.floor(Math.min(a[1], b[1], c[1])));
  const y1 = Math.min(image.height - 1, Math.ceil(Math.max(a[1], b[1], c[1])));
  // Barycentric coordinates; a small negative tolerance includes centres exactly on an edge.
  const tolerance = -1e-9;
  for (let j = y0; j <= y1; j++) {
    const py = j + 0.5;
    for (let i = x0; i <= x1; i++) {
      const px = i + 0.5;
      const wa = ((b[0] - px) * (c[1] - py) - (b[1] - py) * (c[0] - px)) / area;
      const wb = ((c[0] - px) * (a[1] - py) - (c[1] - py) * (a[0] - px)) / area;
      const wc = 1 - wa - wb;
      if (wa >= tolerance && wb >= tolerance && wc >= tolerance) setPixel(image, i, j, rgb);
    }
  }
}
