/**
 * Skinning weights averaged over the mesh, for moving a mesh smoothly. Artist rigs often switch from one bone to the
 * next within one ring of edges (mrfixit's neck, rigid props); re-proportioning with such weights would fold or
 * stretch that one ring wherever two bones scale differently. Averaged weights spread the change over a few rings.
 * They serve only to move the mesh: the weights a generated character carries stay the artist's.
 */
import { mergeParts } from '../../mesh/mergeParts.js';
import type { MeshPart } from '../../types.js';

/**
 * Vertices closer than this share of the bounding box diagonal are one vertex (the dev characters' seams between parts
 * are 1e-6 of it apart; distinct vertices at least 1e-4).
 */
export const WELD_SHARE = 1e-5;

/**
 * smoothWeights: parts (#P), weights (per part top-k indices #V_p*k into jointCount joints + values #V_p*k, rows sum
 * to 1), jointCount J, iterations n ≥ 0 → per part every joint's weight, in the top-k layout with k = J (indices
 * #V_p*J: 0..J-1 on every row, weights #V_p*J, rows sum to 1). Each round every
 * vertex takes the mean of its own row and its edge neighbours' rows; vertices at the same position (within WELD_SHARE
 * of the mesh's size) in different parts or the same part count as one vertex, so parts that meet at a seam stay
 * together.
 */
export function smoothWeights(
  parts: MeshPart[],
  weights: { indices: Uint16Array; weights: Float32Array }[],
  jointCount: number,
  iterations: number,
): { indices: Uint16Array; weights: Float32Array }[] {
  const mesh = mergeParts(parts);
  const V = mesh.positions.length / 3;
  const J = jointCount;
  const weld = weldCoincident(mesh.positions, WELD_SHARE);
  let current = new Float32Array(V * J);
  parts.forEach((part, p) => {
    const n = part.positions.length / 3;
    const k = weights[p].indices.length / n;
    for (let v = 0; v < n; v++) {
      const at = mesh.partOffsets[p] + v;
      for (let s = 0; s < k; s++) current[weld[at] * J + weights[p].indices[v * k + s]] += weights[p].weights[v * k + s];
    }
  });
  // welded vertices summed their rows: average them (count per welded id)
  const copies = new Uint32Array(V);
  for (let v = 0; v < V; v++) copies[weld[v]]++;
  for (let v = 0; v < V; v++) if (copies[v] > 1) for (let j = 0; j < J; j++) current[v * J + j] /= copies[v];

  // neighbours of welded ids, as a compressed list (each triangle edge both ways; duplicates only add weight)
  const degree = new Uint32Array(V + 1);
  const t = mesh.triangles;
  for (let i = 0; i < t.length; i += 3) for (let c = 0; c < 3; c++) degree[weld[t[i + c]]] += 2;
  const start = new Uint32Array(V + 1);
  for (let v = 0; v < V; v++) start[v + 1] = start[v] + degree[v];
  const fill = start.slice(0, V);
  const neighbours = new Uint32Array(start[V]);
  for (let i = 0; i < t.length; i += 3) {
    for (let c = 0; c < 3; c++) {
      const a = weld[t[i + c]];
      neighbours[fill[a]++] = weld[t[i + (c + 1) % 3]];
      neighbours[fill[a]++] = weld[t[i + (c + 2) % 3]];
    }
  }
  let next = new Float32Array(V * J);
  for (let round = 0; round < iterations; round++) {
    for (let v = 0; v < V; v++) {
      if (weld[v] !== v) continue;
      const count = 1 + start[v + 1] - start[v];
      for (let j = 0; j < J; j++) {
        let sum = current[v * J + j];
        for (let e = start[v]; e < start[v + 1]; e++) sum += current[neighbours[e] * J + j];
        next[v * J + j] = sum / count;
      }
    }
    [current, next] = [next, current];
  }
  return parts.map((part, p) => {
    const n = part.positions.length / 3;
    const out = new Float32Array(n * J);
    const indices = new Uint16Array(n * J);
    for (let v = 0; v < n; v++) {
      const row = weld[mesh.partOffsets[p] + v] * J;
      out.set(current.subarray(row, row + J), v * J);
      for (let j = 0; j < J; j++) indices[v * J + j] = j;
    }
    return { indices, weights: out };
  });
}

/**
 * weldCoincident: positions #V*3, share → Uint32Array #V: for every vertex the lowest-numbered vertex within
 * share × (bounding box diagonal) of it that is its own representative (itself when none), found on a hash grid of
 * that cell size.
 */
export function weldCoincident(positions: Float32Array, share: number): Uint32Array {
  const V = positions.length / 3;
  const min = [Infinity, Infinity, Infinity], max = [-Infinity, -Infinity, -Infinity];
  for (let v = 0; v < V; v++) {
    for (let a = 0; a < 3; a++) {
      min[a] = Math.min(min[a], positions[3 * v + a]);
      max[a] = Math.max(max[a], positions[3 * v + a]);
    }
  }
  const tolerance = Math.max(share * Math.hypot(max[0] - min[0], max[1] - min[1], max[2] - min[2]), Number.MIN_VALUE);
  const cell = (v: number, a: number) => Math.floor((positions[3 * v + a] - min[a]) / tolerance);
  const grid = new Map<string, number[]>();
  const weld = new Uint32Array(V);
  for (let v = 0; v < V; v++) {
    const c = [cell(v, 0), cell(v, 1), cell(v, 2)];
    let found = -1;
    for (let dx = -1; dx <= 1 && found < 0; dx++) {
      for (let dy = -1; dy <= 1 && found < 0; dy++) {
        for (let dz = -1; dz <= 1 && found < 0; dz++) {
          for (const u of grid.get(`${c[0] + dx},${c[1] + dy},${c[2] + dz}`) ?? []) {
            const d = Math.hypot(positions[3 * u] - positions[3 * v], positions[3 * u + 1] - positions[3 * v + 1], positions[3 * u + 2] - positions[3 * v + 2]);
            if (d <= tolerance) { found = u; break; }
          }
        }
      }
    }
    if (found >= 0) {
      weld[v] = found;
      continue;
    }
    weld[v] = v;
    const key = `${c[0]},${c[1]},${c[2]}`;
    const list = grid.get(key);
    if (list) list.push(v);
    else grid.set(key, [v]);
  }
  return weld;
}
