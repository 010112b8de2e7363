/**
 * k nearest neighbours among a point set, by a uniform hash grid: the latent-pose decoder's kNN graph over its anchor
 * points, and each vertex's nearest anchors when displacements are carried to every vertex.
 */

export interface Neighbours {
  /** Int32Array #Q*k: indices into the points, nearest first (−1 where fewer than k points exist) */
  indices: Int32Array;
  /** Float32Array #Q*k: their distances (Infinity where the index is −1) */
  distances: Float32Array;
}

/**
 * nearestNeighbours: for each query, the k nearest of `points` (Euclidean), nearest first; ties broken by the lower index.
 * points: Float32Array #P*3, queries: Float32Array #Q*3, k ≥ 1, skipSelf: when the queries ARE the points (same array
 * order), leave each query's own index out → Neighbours (#Q*k).
 * Cost: about Q · (k + a few cells of points); the cell size makes ~2 points per cell on a surface.
 */
export function nearestNeighbours(points: Float32Array, queries: Float32Array, k: number, skipSelf = false): Neighbours {
  const P = points.length / 3;
  const Q = queries.length / 3;
  const indices = new Int32Array(Q * k).fill(-1);
  const distances = new Float32Array(Q * k).fill(Infinity);
  if (P === 0 || k < 1) return { indices, distances };
  let minX = Infinity, minY = Infinity, minZ = Infinity, maxX = -Infinity, maxY = -Infinity, maxZ = -Infinity;
  for (let i = 0; i < P; i++) {
    const x = points[3 * i], y = points[3 * i + 1], z = points[3 * i + 2];
    if (x < minX) minX = x;
    if (y < minY) minY = y;
    if (z < minZ) minZ = z;
    if (x > maxX) maxX = x;
    if (y > maxY) maxY = y;
    if (z > maxZ) maxZ = z;
  }
  // Points on a surface: about P / (surface area / cell²) per cell; the box's area is a fair stand-in for the surface's.
  const ex = maxX - minX, ey = maxY - minY, ez = maxZ - minZ;
  const area = 2 * (ex * ey + ey * ez + ez * ex) || 1;
  const cell = Math.max(Math.sqrt((2 * area) / P), 1e-9);
  const nx = Math.max(1, Math.ceil(ex / cell) + 1), ny = Math.max(1, Math.ceil(ey / cell) + 1), nz = Math.max(1, Math.ceil(ez / cell) + 1);
  const cellOf = (x: number, y: number, z: number): [number, number, number] => [
    Math.min(nx - 1, Math.max(0, Math.floor((x - minX) / cell))),
    Math.min(ny - 1, Math.max(0, Math.floor((y - minY) / cell))),
    Math.min(nz - 1, Math.max(0, Math.floor((z - minZ) / cell))),
  ];
  // Counting sort of the points by cell: start[c]..start[c+1] in `order`.
  const cellCount = nx * ny * nz;
  const start = new Int32Array(cellCount + 1);
  const cellIndex = new Int32Array(P);
  for (let i = 0; i < P; i++) {
    const [cx, cy, cz] = cellOf(points[3 * i], points[3 * i + 1], points[3 * i + 2]);
    cellIndex[i] = (cz * ny + cy) * nx + cx;
    start[cellIndex[i] + 1]++;
  }
  for (let c = 0; c < cellCount; c++) start[c + 1] += start[c];
  const fill = start.slice(0, cellCount);
  const order = new Int32Array(P);
  for (let i = 0; i < P; i++) order[fill[cellIndex[i]]++] = i;

  const bestI = new Int32Array(k);
  const bestD = new Float64Array(k);
  const maxRing = Math.max(nx, ny, nz);
  for (let q = 0; q < Q; q++) {
    const x = queries[3 * q], y = queries[3 * q + 1], z = queries[3 * q + 2];
    bestI.fill(-1);
    bestD.fill(Infinity);
    let found = 0;
    const [cx, cy, cz] = cellOf(x, y, z);
    // Ring r holds the cells at Chebyshev distance r; once the k-th best is nearer than the ring's inner wall, stop.
    for (let r = 0; r <= maxRing; r++) {
      if (found === k) {
        // distance from the query to the nearest point ring r could hold
        const wall = (r - 1) * cell + Math.min(x - (minX + cx * cell), minX + (cx + 1) * cell - x, y - (minY + cy * cell), minY + (cy + 1) * cell - y, z - (minZ + cz * cell), minZ + (cz + 1) * cell - z);
        if (wall * wall > bestD[k - 1]) break;
      }
      for (let dz = -r; dz <= r; dz++) {
        const zz = cz + dz;
        if (zz < 0 || zz >= nz) continue;
        for (let dy = -r; dy <= r; dy++) {
          const yy = cy + dy;
          if (yy < 0 || yy >= ny) continue;
          const onShell = Math.abs(dz) === r || Math.abs(dy) === r;
          for (let dx = -r; dx <= r; dx += onShell ? 1 : 2 * r || 1) {
            const xx = cx + dx;
            if (xx < 0 || xx >= nx) continue;
            const c = (zz * ny + yy) * nx + xx;
            for (let s = start[c]; s < start[c + 1]; s++) {
              const i = order[s];
              if (skipSelf && i === q) continue;
              const ddx = points[3 * i] - x, ddy = points[3 * i + 1] - y, ddz = points[3 * i + 2] - z;
              const d = ddx * ddx + ddy * ddy + ddz * ddz;
              if (found === k && (d > bestD[k - 1] || (d === bestD[k - 1] && i > bestI[k - 1]))) continue;
              // insertion into the sorted best list
              let at = found < k ? found++ : k - 1;
              while (at > 0 && (bestD[at - 1] > d || (bestD[at - 1] === d && bestI[at - 1] > i))) {
                bestD[at] = bestD[at - 1];
                bestI[at] = bestI[at - 1];
                at--;
              }
              bestD[at] = d;
              bestI[at] = i;
            }
          }
        }
      }
    }
    for (let j = 0; j < k; j++) {
      indices[q * k + j] = bestI[j];
      distances[q * k + j] = bestI[j] < 0 ? Infinity : Math.sqrt(bestD[j]);
    }
  }
  return { indices, distances };
}
