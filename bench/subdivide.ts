/**
 * Midpoint subdivision for the benchmark: turns a dev character of a few thousand vertices into the 30k–1M-vertex
 * meshes users actually send, with the same shape (no smoothing), so that the rig has the same skeleton to find.
 */

export interface TriangleMesh {
  /** positions: Float32Array, #V*3 */
  positions: Float32Array;
  /** triangles: Uint32Array, #T*3 */
  triangles: Uint32Array;
}

/**
 * subdivideMidpoints: one step of loop-free midpoint subdivision. Every triangle (a, b, c) becomes four:
 * (a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca), where ab is the midpoint of edge a–b. Positions are not smoothed.
 * The two triangles that share an edge share its midpoint (welded), so a closed mesh stays closed and a connected
 * mesh stays connected: V' = V + E, T' = 4T, E' = 2E + 3T.
 * Orientation is kept: each child winds the same way as its parent.
 *
 * positions: Float32Array, #V*3; triangles: Uint32Array, #T*3.
 * Returns positions #(V+E)*3 (the original vertices first, in order, then one per unique edge) and triangles #4T*3.
 */
export function subdivideMidpoints(positions: Float32Array, triangles: Uint32Array): TriangleMesh {
  const vertexCount = positions.length / 3;
  const triangleCount = triangles.length / 3;
  const edges = uniqueEdges(vertexCount, triangles);
  const edgeCount = edges.ends.length / 2;

  const out = new Float32Array((vertexCount + edgeCount) * 3);
  out.set(positions);
  for (let e = 0; e < edgeCount; e++) {
    const a = edges.ends[2 * e], b = edges.ends[2 * e + 1], m = vertexCount + e;
    for (let k = 0; k < 3; k++) out[3 * m + k] = 0.5 * (positions[3 * a + k] + positions[3 * b + k]);
  }

  const children = new Uint32Array(triangleCount * 12);
  for (let t = 0; t < triangleCount; t++) {
    const a = triangles[3 * t], b = triangles[3 * t + 1], c = triangles[3 * t + 2];
    const ab = vertexCount + edges.ofTriangle[3 * t];
    const bc = vertexCount + edges.ofTriangle[3 * t + 1];
    const ca = vertexCount + edges.ofTriangle[3 * t + 2];
    const o = 12 * t;
    children[o] = a; children[o + 1] = ab; children[o + 2] = ca;
    children[o + 3] = ab; children[o + 4] = b; children[o + 5] = bc;
    children[o + 6] = ca; children[o + 7] = bc; children[o + 8] = c;
    children[o + 9] = ab; children[o + 10] = bc; children[o + 11] = ca;
  }
  return { positions: out, triangles: children };
}

/**
 * splitLongestEdges: adds exactly `count` vertices by splitting the `count` longest edges at their midpoints (ties by
 * edge order), so a bench mesh can land on a vertex count that whole subdivision levels (×~4 each) step over, e.g. the
 * 50k of issue 6's bar. Each triangle is re-split by how many of its edges were split: 1 → 2 triangles, 2 → 3, 3 → 4;
 * both triangles of an edge see the same split, so no T-junction appears, a closed mesh stays closed and orientation
 * is kept. Positions are not smoothed.
 *
 * positions: Float32Array, #V*3; triangles: Uint32Array, #T*3; count: edges to split, 0 ≤ count ≤ E.
 * Returns positions #(V+count)*3 (the original vertices first, in order, then one per split edge, longest first) and
 * the new triangles (T + one per split edge side).
 */
export function splitLongestEdges(positions: Float32Array, triangles: Uint32Array, count: number): TriangleMesh {
  const vertexCount = positions.length / 3;
  const edges = uniqueEdges(vertexCount, triangles);
  const edgeCount = edges.ends.length / 2;
  if (!Number.isInteger(count) || count < 0 || count > edgeCount) throw new RangeError(`splitLongestEdges: count ${count} is not in 0..${edgeCount}`);
  const length = new Float64Array(edgeCount);
  for (let e = 0; e < edgeCount; e++) {
    const a = edges.ends[2 * e], b = edges.ends[2 * e + 1];
    length[e] = Math.hypot(positions[3 * a] - positions[3 * b], positions[3 * a + 1] - positions[3 * b + 1], positions[3 * a + 2] - positions[3 * b + 2]);
  }
  const order = Array.from({ length: edgeCount }, (_, e) => e).sort((x, y) => length[y] - length[x] || x - y);
  const midpointOf = new Int32Array(edgeCount).fill(-1);
  const out = new Float32Array((vertexCount + count) * 3);
  out.set(positions);
  for (let n = 0; n < count; n++) {
    const e = order[n], a = edges.ends[2 * e], b = edges.ends[2 * e + 1], m = vertexCount + n;
    midpointOf[e] = m;
    for (let k = 0; k < 3; k++) out[3 * m + k] = 0.5 * (positions[3 * a + k] + positions[3 * b + k]);
  }

  const result: number[] = [];
  for (let t = 0; t < triangles.length / 3; t++) {
    const corner = [triangles[3 * t], triangles[3 * t + 1], triangles[3 * t + 2]];
    // mid[i]: the midpoint on the edge from corner i to corner i+1, or -1
    const mid = [0, 1, 2].map((i) => midpointOf[edges.ofTriangle[3 * t + i]]);
    const splits = mid.filter((m) => m >= 0).length;
    if (splits === 0) { result.push(...corner); continue; }
    if (splits === 3) {
      const [a, b, c] = corner, [ab, bc, ca] = mid;
      result.push(a, ab, ca, ab, b, bc, ca, bc, c, ab, bc, ca);
      continue;
    }
    // rotate the corners so that, with one split, it is edge 0 (a–b) and, with two, the unsplit one is edge 2 (c–a)
    let r = 0;
    if (splits === 1) r = mid.findIndex((m) => m >= 0);
    else r = (mid.findIndex((m) => m < 0) + 1) % 3;
    const a = corner[r], b = corner[(r + 1) % 3], c = corner[(r + 2) % 3];
    const ab = mid[r], bc = mid[(r + 1) % 3];
    if (splits === 1) result.push(a, ab, c, ab, b, c);
    else result.push(ab, b, bc, a, ab, bc, a, bc, c);
  }
  return { positions: out, triangles: Uint32Array.from(result) };
}

/**
 * uniqueEdges: the undirected edges of a triangle mesh, each once.
 * vertexCount: V; triangles: Uint32Array, #T*3.
 * Returns ends: Uint32Array, #E*2 (lower index first), and ofTriangle: Uint32Array, #T*3, the edge id of each
 * triangle's edges (a–b, b–c, c–a).
 * Edges are bucketed by their lower vertex (counting sort), so the cost is linear and the memory is typed arrays,
 * which matters at a million vertices where a Map of edge keys would dominate.
 */
export function uniqueEdges(vertexCount: number, triangles: Uint32Array): { ends: Uint32Array; ofTriangle: Uint32Array } {
  const halfEdgeCount = triangles.length;
  const start = new Uint32Array(vertexCount + 1);
  const lowOf = (h: number) => {
    const t = h - (h % 3), i = triangles[h], j = triangles[t + ((h - t + 1) % 3)];
    return i < j ? i : j;
  };
  const highOf = (h: number) => {
    const t = h - (h % 3), i = triangles[h], j = triangles[t + ((h - t + 1) % 3)];
    return i < j ? j : i;
  };
  for (let h = 0; h < halfEdgeCount; h++) start[lowOf(h) + 1]++;
  for (let v = 0; v < vertexCount; v++) start[v + 1] += start[v];
  const fill = start.slice(0, vertexCount);
  const byLow = new Uint32Array(halfEdgeCount);
  for (let h = 0; h < halfEdgeCount; h++) byLow[fill[lowOf(h)]++] = h;

  const ofTriangle = new Uint32Array(halfEdgeCount);
  const ends: number[] = [];
  // Edge id last given to each high vertex, tagged with the low vertex it was given under.
  const lastLow = new Int32Array(vertexCount).fill(-1);
  const lastEdge = new Uint32Array(vertexCount);
  for (let v = 0; v < vertexCount; v++) {
    for (let s = start[v]; s < start[v + 1]; s++) {
      const h = byLow[s], w = highOf(h);
      if (lastLow[w] !== v) {
        lastLow[w] = v;
        lastEdge[w] = ends.length / 2;
        ends.push(v, w);
      }
      ofTriangle[h] = lastEdge[w];
    }
  }
  return { ends: Uint32Array.from(ends), ofTriangle };
}

/**
 * subdivideUntil: subdivide every part, one level at a time for the whole character, until the total vertex count
 * reaches minVertices (or maxLevels is hit). Returns the parts and the number of levels applied.
 */
export function subdivideUntil<P extends TriangleMesh>(parts: P[], minVertices: number, maxLevels = 8): { parts: P[]; levels: number } {
  let current = parts;
  let levels = 0;
  while (vertexTotal(current) < minVertices && levels < maxLevels) {
    current = current.map((p) => ({ ...p, ...subdivideMidpoints(p.positions, p.triangles) }));
    levels++;
  }
  return { parts: current, levels };
}

/** Total vertex count of some parts. */
export function vertexTotal(parts: TriangleMesh[]): number {
  return parts.reduce((sum, p) => sum + p.positions.length / 3, 0);
}
