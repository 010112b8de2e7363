/**
 * The point order PointRigNet reads (models/training/point_rig/geometry.py `farthest_point_order`): its levels are
 * plain prefixes of the cloud, so every prefix must spread over the whole surface.
 */

/**
 * farthestPointOrder: first the point nearest the centroid, then each next point the one farthest from all picked so
 * far, `count` picks in all; the points never picked follow in their original order. Squared Euclidean distances in
 * float64 and ties to the lowest index, summed in the order numpy sums them, so that the result is the Python
 * version's exactly (the network was trained on that order).
 * points: Float32Array #P*3, count: picks (default #P, clamped to [0, #P]) → Uint32Array #P, a permutation of 0..#P-1
 */
export function farthestPointOrder(points: Float32Array, count?: number): Uint32Array {
  const n = points.length / 3;
  const picks = Math.max(0, Math.min(n, Math.floor(count ?? n)));
  const order = new Uint32Array(n);
  if (n === 0 || picks === 0) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order;
  }
  // numpy's mean over axis 0 of an (N, 3) array adds the rows one after another, then divides.
  let cx = 0, cy = 0, cz = 0;
  for (let i = 0; i < n; i++) { cx += points[3 * i]; cy += points[3 * i + 1]; cz += points[3 * i + 2]; }
  cx /= n; cy /= n; cz /= n;
  let first = 0, firstD = Infinity;
  for (let i = 0; i < n; i++) {
    const d = squaredDistance(points, i, cx, cy, cz);
    if (d < firstD) { firstD = d; first = i; }
  }
  const picked = new Uint8Array(n);
  const nearest = new Float64Array(n);
  order[0] = first;
  picked[first] = 1;
  const fx = points[3 * first], fy = points[3 * first + 1], fz = points[3 * first + 2];
  for (let i = 0; i < n; i++) nearest[i] = squaredDistance(points, i, fx, fy, fz);
  for (let p = 1; p < picks; p++) {
    let next = 0, nextD = -Infinity;
    // Picked points are at distance 0, so with any positive distance left this is numpy's argmax; among coincident
    // points (all left at 0) it keeps the order a permutation, where numpy would pick a point twice.
    for (let i = 0; i < n; i++) if (!picked[i] && nearest[i] > nextD) { nextD = nearest[i]; next = i; }
    order[p] = next;
    picked[next] = 1;
    const x = points[3 * next], y = points[3 * next + 1], z = points[3 * next + 2];
    for (let i = 0; i < n; i++) {
      const d = squaredDistance(points, i, x, y, z);
      if (d < nearest[i]) nearest[i] = d;
    }
  }
  let o = picks;
  for (let i = 0; i < n; i++) if (!picked[i]) order[o++] = i;
  return order;
}

/** (p_i − c)² summed over x, y, z in that order, in float64 (numpy's ((p − c) ** 2).sum(axis=1)). */
function squaredDistance(points: Float32Array, i: number, cx: number, cy: number, cz: number): number {
  const dx = points[3 * i] - cx, dy = points[3 * i + 1] - cy, dz = points[3 * i + 2] - cz;
  return dx * dx + dy * dy + dz * dz;
}
