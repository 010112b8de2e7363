/**
 * Distance fields over a binary image (res*res, row-major, row 0 at the bottom), used to read a body's layout from its
 * front-view silhouette.
 */

/** The 8 steps to a pixel's neighbours (i, j and length), straight ones first. */
const STEP_I = Int8Array.of(1, -1, 0, 0, 1, 1, -1, -1);
const STEP_J = Int8Array.of(0, 0, 1, -1, 1, -1, 1, -1);
const STEP_LENGTH = Float64Array.of(1, 1, 1, 1, Math.SQRT2, Math.SQRT2, Math.SQRT2, Math.SQRT2);

/**
 * Chamfer distance (pixels) from each covered pixel to the nearest uncovered one: how deep inside the shape it is.
 * mask: Uint8Array res*res → Float32Array res*res (0 outside)
 */
export function insideDistance(mask: Uint8Array, res: number): Float32Array {
  const d = new Float32Array(res * res);
  const big = 1e9;
  for (let p = 0; p < d.length; p++) d[p] = mask[p] ? big : 0;
  const get = (i: number, j: number) => (i < 0 || j < 0 || i >= res || j >= res ? 0 : d[j * res + i]);
  for (let j = 0; j < res; j++) for (let i = 0; i < res; i++) {
    const p = j * res + i;
    if (!mask[p]) continue;
    d[p] = Math.min(d[p], get(i - 1, j) + 1, get(i, j - 1) + 1, get(i - 1, j - 1) + Math.SQRT2, get(i + 1, j - 1) + Math.SQRT2);
  }
  for (let j = res - 1; j >= 0; j--) for (let i = res - 1; i >= 0; i--) {
    const p = j * res + i;
    if (!mask[p]) continue;
    d[p] = Math.min(d[p], get(i + 1, j) + 1, get(i, j + 1) + 1, get(i + 1, j + 1) + Math.SQRT2, get(i - 1, j + 1) + Math.SQRT2);
  }
  return d;
}

/**
 * Shortest-path distance inside the shape from a seed pixel (or the nearest of several), each step costing its length
 * times cost(pixel) (cost 1: geodesic distance; a cost falling with depth: paths that keep to the middle of limbs).
 * mask: Uint8Array res*res, seed: pixel index or indices, cost?: Float32Array res*res →
 *   { dist: Float64Array res*res (Infinity where unreached), prev: Int32Array res*res (-1 at the seed / unreached) }
 */
export function shortestPathsFrom(mask: Uint8Array, res: number, seed: number | number[], cost?: Float32Array): { dist: Float64Array; prev: Int32Array } {
  const n = res * res;
  const dist = new Float64Array(n).fill(Infinity);
  const prev = new Int32Array(n).fill(-1);
  const heap = new MinHeap(n);
  for (const s of typeof seed === 'number' ? [seed] : seed) {
    dist[s] = 0;
    heap.push(s, 0);
  }
  // runs several times per skeleton over the whole view: no allocation per pixel or per step
  while (heap.size) {
    const p = heap.popItem(), dp = heap.poppedKey;
    if (dp > dist[p]) continue;
    const i = p % res, j = (p - i) / res;
    for (let t = 0; t < 8; t++) {
      const a = i + STEP_I[t], b = j + STEP_J[t];
      if (a < 0 || b < 0 || a >= res || b >= res) continue;
      const q = b * res + a;
      if (!mask[q]) continue;
      const nd = dp + STEP_LENGTH[t] * (cost ? 0.5 * (cost[p] + cost[q]) : 1);
      if (nd < dist[q]) { dist[q] = nd; prev[q] = p; heap.push(q, nd); }
    }
  }
  return { dist, prev };
}

/** The pixel path seed → target, following `prev` from shortestPathsFrom: pixel indices, seed first. */
export function tracePath(prev: Int32Array, target: number): number[] {
  const path: number[] = [];
  for (let p = target; p >= 0; p = prev[p]) path.push(p);
  return path.reverse();
}

/** The covered pixel nearest to (i0, j0) in growing square rings (Chebyshev distance): its index, or -1 when none. */
export function nearestCoveredPixel(mask: Uint8Array, res: number, i0: number, j0: number): number {
  for (let r = 0; r < res; r++) {
    for (let dj = -r; dj <= r; dj++) for (let di = -r; di <= r; di++) {
      if (Math.max(Math.abs(di), Math.abs(dj)) !== r) continue;
      const i = i0 + di, j = j0 + dj;
      if (i >= 0 && j >= 0 && i < res && j < res && mask[j * res + i]) return j * res + i;
    }
  }
  return -1;
}

/** Binary min-heap of (item, key) with lazy deletion. */
export class MinHeap {
  private items: Int32Array;
  private keys: Float64Array;
  size = 0;
  constructor(capacity: number) {
    this.items = new Int32Array(Math.max(16, capacity));
    this.keys = new Float64Array(Math.max(16, capacity));
  }
  push(item: number, key: number): void {
    if (this.size === this.items.length) {
      const items = new Int32Array(this.size * 2); items.set(this.items); this.items = items;
      const keys = new Float64Array(this.size * 2); keys.set(this.keys); this.keys = keys;
    }
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.keys[parent] <= key) break;
      this.items[i] = this.items[parent]; this.keys[i] = this.keys[parent];
      i = parent;
    }
    this.items[i] = item; this.keys[i] = key;
  }
  /** the key of the item popItem last returned */
  poppedKey = 0;
  /** the item with the smallest key, taken off the heap; its key in poppedKey */
  popItem(): number {
    const item = this.items[0], key = this.keys[0];
    const lastItem = this.items[--this.size], lastKey = this.keys[this.size];
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= this.size) break;
      if (c + 1 < this.size && this.keys[c + 1] < this.keys[c]) c++;
      if (this.keys[c] >= lastKey) break;
      this.items[i] = this.items[c]; this.keys[i] = this.keys[c];
      i = c;
    }
    this.items[i] = lastItem; this.keys[i] = lastKey;
    this.poppedKey = key;
    return item;
  }
}
