/**
 * The connected pieces of a mesh's surface. Seams split a surface's vertices into bit-identical copies, so pieces are
 * found with those copies welded: a character's body is one piece, its separate hair, eyes, armour plates others.
 * Read by the frame (debris), the skeleton (the neck's depth) and the skinning (closed pieces keep their own bones).
 */

/**
 * meshShells: connected pieces of the surface, welding vertices that share a position (seams split vertices).
 * positions: Float32Array #V*3, triangles: Uint32Array #T*3 → shellOf: Int32Array #V (-1 for a vertex no triangle uses), count
 */
export function meshShells(positions: Float32Array, triangles: Uint32Array): { shellOf: Int32Array; count: number } {
  const nv = positions.length / 3;
  const parent = new Int32Array(nv);
  for (let v = 0; v < nv; v++) parent[v] = v;
  // Weld by exact position: seam duplicates are bit-identical copies.
  const first = firstVertexAtSamePosition(positions);
  for (let v = 0; v < nv; v++) if (first[v] !== v) union(parent, first[v], v);
  const used = new Uint8Array(nv);
  for (let t = 0; t < triangles.length; t += 3) {
    union(parent, triangles[t], triangles[t + 1]);
    union(parent, triangles[t], triangles[t + 2]);
    used[triangles[t]] = used[triangles[t + 1]] = used[triangles[t + 2]] = 1;
  }
  const shellOf = new Int32Array(nv).fill(-1);
  const label = new Map<number, number>();
  for (let v = 0; v < nv; v++) {
    if (!used[v]) continue;
    const r = find(parent, v);
    let s = label.get(r);
    if (s === undefined) {
      s = label.size;
      label.set(r, s);
    }
    shellOf[v] = s;
  }
  return { shellOf, count: label.size };
}

// The union-find's steps are module functions over `parent`, not closures made per call: a closure made per call is a
// new function each time, and the optimised meshShells that inlined the last ones was thrown away ("weak objects") and
// compiled again on every apply of a pose (V8 --trace-opt).

/** The root of v's set in the forest parent (Int32Array #V, halved on the way: modified in place). */
function find(parent: Int32Array, v: number): number {
  while (parent[v] !== v) {
    parent[v] = parent[parent[v]];
    v = parent[v];
  }
  return v;
}

/** Joins the sets of a and b in parent (Int32Array #V, modified in place): the lower root becomes the root. */
function union(parent: Int32Array, a: number, b: number): void {
  const ra = find(parent, a), rb = find(parent, b);
  if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
}

/**
 * firstVertexAtSamePosition: for each vertex, the lowest-numbered vertex with bit-identical coordinates (itself when
 * none), by open addressing over the coordinates' bits: no per-vertex allocation, so 1M vertices cost milliseconds.
 * positions: Float32Array #V*3 → Int32Array #V
 */
export function firstVertexAtSamePosition(positions: Float32Array): Int32Array {
  const nv = positions.length / 3;
  const bits = new Uint32Array(positions.buffer, positions.byteOffset, positions.length);
  let size = 1;
  while (size < 2 * nv) size <<= 1;
  const table = new Int32Array(size).fill(-1);
  const first = new Int32Array(nv);
  for (let v = 0; v < nv; v++) {
    const x = bits[v * 3], y = bits[v * 3 + 1], z = bits[v * 3 + 2];
    let h = Math.imul(x ^ Math.imul(y, 0x9e3779b1) ^ Math.imul(z, 0x85ebca6b), 0xc2b2ae35);
    h = (h ^ (h >>> 15)) & (size - 1);
    for (;;) {
      const u = table[h];
      if (u < 0) { table[h] = v; first[v] = v; break; }
      if (bits[u * 3] === x && bits[u * 3 + 1] === y && bits[u * 3 + 2] === z) { first[v] = u; break; }
      h = (h + 1) & (size - 1);
    }
  }
  return first;
}
