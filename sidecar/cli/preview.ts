/**
 * A front-view picture of a rigged character, to check a rig at a glance: orthographic, in the character's own frame
 * (its left on the viewer's right, as when facing someone), triangles z-buffered and shaded, every vertex coloured by
 * its weights (one colour per bone, blended), the skeleton drawn on top as outlined lines with joint dots.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { vertexNormals } from '../io/normals.js';
import { encodePng, type Image } from '../io/png.js';
import type { Frame, MeshPart, PartWeights, Skeleton, Vec3 } from '../types.js';

export interface PreviewInput {
  parts: MeshPart[];
  skeleton: Skeleton;
  /** per part, same order as parts */
  weights: PartWeights[];
  frame: Frame;
  /** image height in pixels (default 512); the width follows the character's proportions */
  height?: number;
}

type Rgb = [number, number, number];

const SUPERSAMPLING = 2;
const BACKGROUND: Rgb = [0.95, 0.95, 0.96];
const OUTLINE: Rgb = [0.08, 0.08, 0.1];
const UNWEIGHTED: Rgb = [0.55, 0.55, 0.55];

/** A distinct colour per bone: hues a golden angle apart, so neighbouring indices never look alike. */
export function boneColour(index: number): Rgb {
  const hue = (index * 0.618033988749895 + 0.05) % 1;
  return hsv(hue, 0.62, 0.95);
}

/** renderPreview: the picture as an RGB image (height × width × 3). */
export function renderPreview(input: PreviewInput): Image {
  const height = input.height ?? 512;
  const view = viewTransform(input, height);
  const W = view.width * SUPERSAMPLING;
  const H = view.height * SUPERSAMPLING;
  const colour = new Float32Array(W * H * 3);
  for (let i = 0; i < W * H; i++) colour.set(BACKGROUND, i * 3);
  const depth = new Float32Array(W * H).fill(-Infinity);
  const toScreen = (p: ArrayLike<number>, o = 0): Vec3 => view.project(p[o], p[o + 1], p[o + 2], SUPERSAMPLING);
  input.parts.forEach((part, p) => rasterisePart(part, input.weights[p], input.frame, toScreen, colour, depth, W, H));
  drawSkeleton(input.skeleton, toScreen, colour, W, H);
  return downsample(colour, W, H, SUPERSAMPLING);
}

/** writePreviewPng: render and write a PNG, creating its folder. */
export async function writePreviewPng(path: string, input: PreviewInput): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, encodePng(renderPreview(input)));
}

/** Orthographic projection: screen x along the character's left, y along up (flipped for rows), depth along forward. */
function viewTransform(input: PreviewInput, height: number) {
  const { left, up, forward } = input.frame;
  const dot = (x: number, y: number, z: number, a: Vec3) => x * a[0] + y * a[1] + z * a[2];
  let minX = Infinity;
  let maxX = -Infinity;
  let minY = Infinity;
  let maxY = -Infinity;
  const include = (x: number, y: number, z: number) => {
    const sx = dot(x, y, z, left);
    const sy = dot(x, y, z, up);
    minX = Math.min(minX, sx);
    maxX = Math.max(maxX, sx);
    minY = Math.min(minY, sy);
    maxY = Math.max(maxY, sy);
  };
  for (const part of input.parts) for (let i = 0; i < part.positions.length; i += 3) include(part.positions[i], part.positions[i + 1], part.positions[i + 2]);
  for (const joint of input.skeleton.joints) include(...joint.head);
  if (!Number.isFinite(minX)) minX = maxX = minY = maxY = 0;
  const margin = Math.round(height * 0.04);
  const span = Math.max(maxY - minY, (maxX - minX) / 2, 1e-9);
  const scale = (height - 2 * margin) / span;
  const width = Math.max(64, Math.min(4 * height, Math.round((maxX - minX) * scale) + 2 * margin));
  const offsetX = (width - (maxX - minX) * scale) / 2;
  const offsetY = (height - (maxY - minY) * scale) / 2;
  return {
    width,
    height,
    project(x: number, y: number, z: number, ss: number): Vec3 {
      return [((dot(x, y, z, left) - minX) * scale + offsetX) * ss, ((maxY - dot(x, y, z, up)) * scale + offsetY) * ss, dot(x, y, z, forward)];
    },
  };
}

/** Triangles with a z-buffer; per-vertex colour = Σ weight · bone colour, times a two-sided Lambert term. */
function rasterisePart(
  part: MeshPart,
  weights: PartWeights | undefined,
  frame: Frame,
  toScreen: (p: ArrayLike<number>, o?: number) => Vec3,
  colour: Float32Array,
  depth: Float32Array,
  W: number,
  H: number,
): void {
  const count = part.positions.length / 3;
  const screen = new Float32Array(count * 3);
  for (let v = 0; v < count; v++) screen.set(toScreen(part.positions, v * 3), v * 3);
  const shade = vertexShade(part, frame);
  const tint = vertexTint(weights, count);
  const t = part.triangles;
  for (let f = 0; f < t.length; f += 3) {
    const a = t[f] * 3;
    const b = t[f + 1] * 3;
    const c = t[f + 2] * 3;
    const ax = screen[a], ay = screen[a + 1];
    const bx = screen[b], by = screen[b + 1];
    const cx = screen[c], cy = screen[c + 1];
    const area = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
    if (Math.abs(area) < 1e-12) continue;
    const x0 = Math.max(0, Math.floor(Math.min(ax, bx, cx)));
    const x1 = Math.min(W - 1, Math.ceil(Math.max(ax, bx, cx)));
    const y0 = Math.max(0, Math.floor(Math.min(ay, by, cy)));
    const y1 = Math.min(H - 1, Math.ceil(Math.max(ay, by, cy)));
    for (let y = y0; y <= y1; y++) {
      const py = y + 0.5;
      for (let x = x0; x <= x1; x++) {
        const px = x + 0.5;
        const wa = ((bx - px) * (cy - py) - (by - py) * (cx - px)) / area;
        const wb = ((cx - px) * (ay - py) - (cy - py) * (ax - px)) / area;
        const wc = 1 - wa - wb;
        if (wa < 0 || wb < 0 || wc < 0) continue;
        const z = wa * screen[a + 2] + wb * screen[b + 2] + wc * screen[c + 2];
        const pixel = y * W + x;
        if (z <= depth[pixel]) continue;
        depth[pixel] = z;
        const ia = t[f], ib = t[f + 1], ic = t[f + 2];
        const s = wa * shade[ia] + wb * shade[ib] + wc * shade[ic];
        for (let k = 0; k < 3; k++) {
          colour[pixel * 3 + k] = s * (wa * tint[ia * 3 + k] + wb * tint[ib * 3 + k] + wc * tint[ic * 3 + k]);
        }
      }
    }
  }
}

/** Light from the viewer's upper left; two-sided so open meshes and flipped normals still read. → #V in [0, 1] */
function vertexShade(part: MeshPart, frame: Frame): Float32Array {
  const normals = vertexNormals(part.positions, part.triangles);
  const light = normalise([-0.35 * 1, 0.55, 0.75]); // in (left, up, forward) coordinates
  const direction: Vec3 = [0, 1, 2].map((a) => light[0] * frame.left[a] + light[1] * frame.up[a] + light[2] * frame.forward[a]) as Vec3;
  const shade = new Float32Array(normals.length / 3);
  for (let v = 0; v < shade.length; v++) {
    const lambert = Math.abs(normals[v * 3] * direction[0] + normals[v * 3 + 1] * direction[1] + normals[v * 3 + 2] * direction[2]);
    shade[v] = 0.38 + 0.62 * lambert;
  }
  return shade;
}

/** Σ weight · bone colour per vertex → #V*3; grey where a part has no weights or a vertex none. */
function vertexTint(weights: PartWeights | undefined, count: number): Float32Array {
  const tint = new Float32Array(count * 3);
  for (let v = 0; v < count; v++) {
    let total = 0;
    const rgb: Rgb = [0, 0, 0];
    if (weights) {
      const k = weights.influences;
      for (let s = 0; s < k; s++) {
        const w = weights.weights[v * k + s];
        if (!(w > 0)) continue;
        const c = boneColour(weights.indices[v * k + s]);
        for (let i = 0; i < 3; i++) rgb[i] += w * c[i];
        total += w;
      }
    }
    tint.set(total > 0 ? rgb.map((x) => x / total) : UNWEIGHTED, v * 3);
  }
  return tint;
}

/** Bones as head→tail lines in their colour with a dark outline, then white joint dots at the heads. */
function drawSkeleton(skeleton: Skeleton, toScreen: (p: ArrayLike<number>) => Vec3, colour: Float32Array, W: number, H: number): void {
  // Line widths grow with big pictures but never shrink below what stays legible.
  const unit = Math.max(1, H / SUPERSAMPLING / 512) * SUPERSAMPLING;
  const bones = skeleton.joints.map((joint) => ({ head: toScreen(joint.head), tail: toScreen(joint.tail) }));
  for (const bone of bones) drawSegment(bone.head, bone.tail, 3.2 * unit, OUTLINE, colour, W, H);
  bones.forEach((bone, j) => drawSegment(bone.head, bone.tail, 1.8 * unit, boneColour(j), colour, W, H));
  for (const bone of bones) drawSegment(bone.head, bone.head, 4.6 * unit, OUTLINE, colour, W, H);
  for (const bone of bones) drawSegment(bone.head, bone.head, 3.0 * unit, [1, 1, 1], colour, W, H);
}

/** Fill the pixels within `radius` of segment pq (a disc when p = q). */
function drawSegment(p: Vec3, q: Vec3, radius: number, rgb: Rgb, colour: Float32Array, W: number, H: number): void {
  const x0 = Math.max(0, Math.floor(Math.min(p[0], q[0]) - radius));
  const x1 = Math.min(W - 1, Math.ceil(Math.max(p[0], q[0]) + radius));
  const y0 = Math.max(0, Math.floor(Math.min(p[1], q[1]) - radius));
  const y1 = Math.min(H - 1, Math.ceil(Math.max(p[1], q[1]) + radius));
  const dx = q[0] - p[0];
  const dy = q[1] - p[1];
  const length2 = dx * dx + dy * dy;
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const px = x + 0.5 - p[0];
      const py = y + 0.5 - p[1];
      const t = length2 > 0 ? Math.max(0, Math.min(1, (px * dx + py * dy) / length2)) : 0;
      const ex = px - t * dx;
      const ey = py - t * dy;
      if (ex * ex + ey * ey <= radius * radius) colour.set(rgb, (y * W + x) * 3);
    }
  }
}

/** Box-filter the supersampled float image down to 8-bit RGB. */
function downsample(colour: Float32Array, W: number, H: number, ss: number): Image {
  const width = W / ss;
  const height = H / ss;
  const pixels = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 3; k++) {
        let sum = 0;
        for (let j = 0; j < ss; j++) for (let i = 0; i < ss; i++) sum += colour[((y * ss + j) * W + x * ss + i) * 3 + k];
        pixels[(y * width + x) * 3 + k] = Math.round(Math.max(0, Math.min(1, sum / (ss * ss))) * 255);
      }
    }
  }
  return { width, height, channels: 3, pixels };
}

function hsv(h: number, s: number, v: number): Rgb {
  const i = Math.floor(h * 6);
  const f = h * 6 - i;
  const p = v * (1 - s);
  const q = v * (1 - f * s);
  const t = v * (1 - (1 - f) * s);
  return ([
    [v, t, p],
    [q, v, p],
    [p, v, t],
    [p, q, v],
    [t, p, v],
    [v, p, q],
  ] as Rgb[])[i % 6];
}

function normalise(v: Vec3): Vec3 {
  const length = Math.hypot(...v);
  return [v[0] / length, v[1] / length, v[2] / length];
}
