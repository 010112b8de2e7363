import type { FrontView } from './frontView.js';
import { nearestCoveredPixel } from './imageFields.js';

/**
 * HumanRig's lift: each 2D joint becomes 3D by casting a ray through the mesh along the viewing direction (z) and
 * taking the midpoint of the first and the last hit.
 * positions: Float32Array #V*3 (canonical), triangles: Uint32Array #T*3, points: canonical (x, y) #P*2,
 * fallback: the front view, used where a ray misses the mesh (a joint just outside the silhouette) →
 * z of each point: Float64Array #P
 */
export function liftJointsByRayMidpoint(positions: Float32Array, triangles: Uint32Array, points: Float64Array, fallback: FrontView): Float64Array {
  const np = points.length / 2;
  const first = new Float64Array(np).fill(-Infinity);
  const last = new Float64Array(np).fill(Infinity);
  // Sort points by x so each triangle only tests the points inside its x range.
  const order = Array.from({ length: np }, (_, k) => k).sort((a, b) => points[2 * a] - points[2 * b]);
  const xs = order.map((k) => points[2 * k]);
  for (let t = 0; t < triangles.length; t += 3) {
    const a = triangles[t] * 3, b = triangles[t + 1] * 3, c = triangles[t + 2] * 3;
    const x0 = positions[a], y0 = positions[a + 1], z0 = positions[a + 2];
    const x1 = positions[b], y1 = positions[b + 1], z1 = positions[b + 2];
    const x2 = positions[c], y2 = positions[c + 1], z2 = positions[c + 2];
    const minX = Math.min(x0, x1, x2), maxX = Math.max(x0, x1, x2);
    const minY = Math.min(y0, y1, y2), maxY = Math.max(y0, y1, y2);
    const area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
    if (area === 0) continue;
    for (let s = lowerBound(xs, minX); s < np && xs[s] <= maxX; s++) {
      const k = order[s];
      const x = points[2 * k], y = points[2 * k + 1];
      if (y < minY || y > maxY) continue;
      const w0 = ((x1 - x) * (y2 - y) - (x2 - x) * (y1 - y)) / area;
      const w1 = ((x2 - x) * (y0 - y) - (x0 - x) * (y2 - y)) / area;
      const w2 = 1 - w0 - w1;
      if (w0 < 0 || w1 < 0 || w2 < 0) continue;
      const z = w0 * z0 + w1 * z1 + w2 * z2;
      if (z > first[k]) first[k] = z;
      if (z < last[k]) last[k] = z;
    }
  }
  const out = new Float64Array(np);
  for (let k = 0; k < np; k++) {
    if (Number.isFinite(first[k])) out[k] = 0.5 * (first[k] + last[k]);
    else out[k] = nearestDepthMidpoint(fallback, points[2 * k], points[2 * k + 1]);
  }
  return out;
}

function lowerBound(xs: number[], v: number): number {
  let lo = 0, hi = xs.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (xs[m] < v) lo = m + 1; else hi = m; }
  return lo;
}

/** Midpoint of the front and back depth at the covered pixel nearest to canonical (x, y); 0 for an empty view. */
function nearestDepthMidpoint(view: FrontView, x: number, y: number): number {
  const { res, mask, zFront, zBack } = view;
  const p = nearestCoveredPixel(mask, res, Math.round((x + 0.5) * res - 0.5), Math.round((y + 0.5) * res - 0.5));
  return p < 0 ? 0 : 0.5 * (zFront[p] + zBack[p]);
}

/**
 * rayHits: every crossing of the ray through canonical (x, y) along the viewing direction with the mesh.
 * positions: Float32Array #V*3 (canonical), triangles: Uint32Array #T*3, x, y → { z: depth of each hit, triangle:
 * the first vertex of the triangle hit } (same length, in triangle order)
 */
export function rayHits(positions: Float32Array, triangles: Uint32Array, x: number, y: number): { z: number[]; vertex: number[] } {
  const z: number[] = [], vertex: number[] = [];
  for (let t = 0; t < triangles.length; t += 3) {
    const a = triangles[t] * 3, b = triangles[t + 1] * 3, c = triangles[t + 2] * 3;
    const x0 = positions[a], y0 = positions[a + 1], x1 = positions[b], y1 = positions[b + 1], x2 = positions[c], y2 = positions[c + 1];
    if (x < Math.min(x0, x1, x2) || x > Math.max(x0, x1, x2) || y < Math.min(y0, y1, y2) || y > Math.max(y0, y1, y2)) continue;
    const area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
    if (area === 0) continue;
    const w0 = ((x1 - x) * (y2 - y) - (x2 - x) * (y1 - y)) / area;
    const w1 = ((x2 - x) * (y0 - y) - (x0 - x) * (y2 - y)) / area;
    const w2 = 1 - w0 - w1;
    if (w0 < 0 || w1 < 0 || w2 < 0) continue;
    z.push(w0 * positions[a + 2] + w1 * positions[b + 2] + w2 * positions[c + 2]);
    vertex.push(triangles[t]);
  }
  return { z, vertex };
}

/**
 * frontPieceMidpoint: a point's depth from the ray through it along the viewing direction, as in
 * liftJointsByRayMidpoint, but counting only the hits on the piece of the surface (meshShells) that the ray meets
 * first. Another piece behind it (hair hanging down the back of the neck, a hood) does not pull the depth back.
 * positions: Float32Array #V*3 (canonical), triangles: Uint32Array #T*3, shellOf: Int32Array #V (meshShells of the
 * same triangles), x, y: canonical → the midpoint of that piece's first and last hit, or null when the ray hits that
 * piece fewer than twice (it misses the mesh, or grazes an open piece).
 */
export function frontPieceMidpoint(positions: Float32Array, triangles: Uint32Array, shellOf: Int32Array, x: number, y: number): number | null {
  const hits = rayHits(positions, triangles, x, y);
  if (hits.z.length === 0) return null;
  // z points forward: the first hit from the front is the largest z
  let front = 0;
  for (let h = 1; h < hits.z.length; h++) if (hits.z[h] > hits.z[front]) front = h;
  const piece = shellOf[hits.vertex[front]];
  let back = Infinity, count = 0;
  for (let h = 0; h < hits.z.length; h++) {
    if (shellOf[hits.vertex[h]] !== piece) continue;
    count++;
    if (hits.z[h] < back) back = hits.z[h];
  }
  return count < 2 ? null : 0.5 * (hits.z[front] + back);
}
