import type { VoxelGrid } from '../geometry/voxelGrid.js';
import type { Vec3 } from '../types.js';

// 26-neighbourhood steps with integer lengths (x10): 10, 14, 17 ≈ 10·1, 10·√2, 10·√3.
const NEIGHBOURS: [number, number, number, number][] = [];
for (let dz = -1; dz <= 1; dz++) for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) {
  const n = Math.abs(dx) + Math.abs(dy) + Math.abs(dz);
  if (n > 0) NEIGHBOURS.push([dx, dy, dz, n === 1 ? 10 : n === 2 ? 14 : 17]);
}
export const GEODESIC_UNIT = 10;
const MAX_STEP = 17;

/**
 * Voxels that a bone segment passes through and that are solid; when the segment misses the solid (a bone placed
 * outside the mesh) the solid voxel nearest to its midpoint stands in.
 * head, tail: segment end points (grid space), solid: Uint8Array #voxels → voxel indices
 */
export function boneSourceVoxels(head: Vec3, tail: Vec3, solid: Uint8Array, g: VoxelGrid): number[] {
  const [nx, ny, nz] = g.dims;
  const len = Math.hypot(tail[0] - head[0], tail[1] - head[1], tail[2] - head[2]);
  const steps = Math.max(1, Math.ceil((len / g.size) * 2));
  const out = new Set<number>();
  for (let s = 0; s <= steps; s++) {
    const f = s / steps;
    const i = Math.floor((head[0] + f * (tail[0] - head[0]) - g.origin[0]) / g.size);
    const j = Math.floor((head[1] + f * (tail[1] - head[1]) - g.origin[1]) / g.size);
    const k = Math.floor((head[2] + f * (tail[2] - head[2]) - g.origin[2]) / g.size);
    if (i < 0 || j < 0 || k < 0 || i >= nx || j >= ny || k >= nz) continue;
    const v = (k * ny + j) * nx + i;
    if (solid[v]) out.add(v);
  }
  if (out.size === 0) {
    const mid: Vec3 = [(head[0] + tail[0]) / 2, (head[1] + tail[1]) / 2, (head[2] + tail[2]) / 2];
    const v = nearestSolidVoxel(mid, solid, g);
    if (v >= 0) out.add(v);
  }
  return [...out];
}

/** The solid voxel whose centre is nearest to p (grid space), or -1 when there is none. */
export function nearestSolidVoxel(p: Vec3, solid: Uint8Array, g: VoxelGrid): number {
  const [nx, ny] = g.dims;
  let best = -1, bestD = Infinity;
  for (let v = 0; v < solid.length; v++) {
    if (!solid[v]) continue;
    const i = v % nx, j = Math.floor(v / nx) % ny, k = Math.floor(v / (nx * ny));
    const d = (g.origin[0] + (i + 0.5) * g.size - p[0]) ** 2 + (g.origin[1] + (j + 0.5) * g.size - p[1]) ** 2 + (g.origin[2] + (k + 0.5) * g.size - p[2]) ** 2;
    if (d < bestD) { bestD = d; best = v; }
  }
  return best;
}

/**
 * Geodesic distance inside the solid from a set of source voxels (Dijkstra with a bucket queue over the 26-neighbourhood;
 * distances in tenths of a voxel). Paths never leave the solid, so a part separated by a gap is never reached.
 * It runs once per bone on every rig, the costliest loop of the skinning: the queue is typed arrays, and a voxel away
 * from the grid's faces visits its 26 neighbours without bounds checks (the distances are exact, so the order of the
 * work cannot change them).
 * solid: Uint8Array #voxels, sources: voxel indices, out: Uint32Array #voxels (filled; 0xffffffff = unreached)
 */
export function voxelGeodesicDistance(solid: Uint8Array, g: VoxelGrid, sources: number[], out: Uint32Array): Uint32Array {
  const [nx, ny, nz] = g.dims;
  out.fill(0xffffffff);
  const queue = new BucketQueue(MAX_STEP + 1);
  for (const s of sources) { out[s] = 0; queue.push(0, s); }
  const n = NEIGHBOURS.length;
  const step = new Int32Array(n), length = new Int32Array(n);
  const di = new Int32Array(n), dj = new Int32Array(n), dk = new Int32Array(n);
  NEIGHBOURS.forEach(([dx, dy, dz, w], m) => {
    step[m] = dx + dy * nx + dz * nx * ny;
    length[m] = w;
    di[m] = dx; dj[m] = dy; dk[m] = dz;
  });
  const plane = nx * ny;
  for (let d = 0; queue.pending > 0; d++) {
    const b = d % queue.buckets.length;
    while (queue.sizes[b] > 0) {
      const v = queue.pop(b);
      if (out[v] !== d) continue;
      const k = (v / plane) | 0, j = ((v - k * plane) / nx) | 0, i = v - k * plane - j * nx;
      const interior = i > 0 && j > 0 && k > 0 && i < nx - 1 && j < ny - 1 && k < nz - 1;
      for (let m = 0; m < n; m++) {
        if (!interior) {
          const a = i + di[m], bb = j + dj[m], c = k + dk[m];
          if (a < 0 || bb < 0 || c < 0 || a >= nx || bb >= ny || c >= nz) continue;
        }
        const q = v + step[m];
        if (!solid[q]) continue;
        const nd = d + length[m];
        if (nd < out[q]) { out[q] = nd; queue.push(nd, q); }
      }
    }
  }
  return out;
}

/**
 * The circular bucket queue of voxelGeodesicDistance: bucket d mod `count` holds the voxels reached at distance d
 * (a step is at most MAX_STEP, so no two live distances share a bucket). Each bucket is a stack that doubles when full.
 */
class BucketQueue {
  readonly buckets: Int32Array[];
  readonly sizes: Int32Array;
  pending = 0;

  constructor(count: number) {
    this.buckets = Array.from({ length: count }, () => new Int32Array(1024));
    this.sizes = new Int32Array(count);
  }

  push(distance: number, voxel: number): void {
    const b = distance % this.buckets.length;
    let bucket = this.buckets[b];
    if (this.sizes[b] === bucket.length) {
      const grown = new Int32Array(bucket.length * 2);
      grown.set(bucket);
      this.buckets[b] = bucket = grown;
    }
    bucket[this.sizes[b]++] = voxel;
    this.pending++;
  }

  pop(b: number): number {
    this.pending--;
    return this.buckets[b][--this.sizes[b]];
  }
}
