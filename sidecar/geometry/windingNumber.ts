/**
 * The generalised winding number of a triangle soup (Jacobson, Kavan, Sorkine-Hornung 2013): at a point q, the
 * signed solid angle the triangles subtend, over 4π. On a closed, outward-oriented surface it is 1 inside and 0
 * outside; on an open one (a hole, a skirt) it varies smoothly between, and shells that overlap add up (2 where two
 * closed shells overlap). Orientation matters, as with any winding number: a shell with flipped triangles counts −1
 * inside.
 *
 * Many queries are made fast with a hierarchy (Barill, Dickson, Schmidt, Levin, Jacobson 2018, "Fast winding
 * numbers for soups and clouds"): each node of a bounding-volume tree over the triangles keeps the area-weighted
 * normal sum of its triangles (the dipole) and the first and second moments of the normal field about its expansion
 * centre; a node whose triangles all lie far from q (distance to the centre > β × the node's radius) is taken as that
 * second-order Taylor expansion of the solid-angle kernel, a near node descends, and near leaves sum exact triangle
 * solid angles (van Oosterom–Strackee).
 */
import { AutoRigError } from '../errors.js';
import { pointTriangleDistanceSquared } from './pointTriangleDistance.js';

/**
 * Triangles per leaf at most: near leaves are summed exactly, so small leaves keep the exact work local; larger ones
 * mean fewer nodes to build moments for and to visit. Apply Latent Pose's 2048 SDF samples of a 50k-vertex character
 * (100k triangles), tree included: 153 ms median at 8, 133 at 16, 119–127 at 32, 133–138 at 48 and 64, each giving
 * the same distances and signs; the winding numbers' error against the exact sum (400 samples) mean 1.78e-3, max
 * 7.9e-3 at 32 against 1.82e-3 and 8.4e-3 at 8 (.tmp measurements, 2026-12-03).
 */
const LEAF_TRIANGLES = 32;
/** Below this depth splits are at the spatial middle; deeper (a lopsided soup) at the median, so depth stays O(log T). */
const MIDDLE_SPLIT_LEVELS = 40;
/** Default accuracy parameter β: a node is expanded when the query is more than β radii from its centre. */
export const DEFAULT_BETA = 2;

/**
 * Floats per node in WindingNumberTree.nodes: centre p̃ (3), radius, normal sum N (3), first moment M (9, row-major),
 * second moment S (18: for each normal axis i, the symmetric 3×3 part xx yy zz xy xz yz), and w (3) with
 * w_k = Σ_i (2 S_iik + S_kii), the traces the second-order term contracts with the query direction.
 */
const NODE_STRIDE = 37;

/**
 * The hierarchy over a triangle soup (opaque to callers; build with buildWindingNumberTree).
 * Nodes are in depth-first order: a node's left child follows it, its right child is at `right[node]`.
 */
export interface WindingNumberTree {
  /** #T*9: the corners of each triangle in tree order (a.xyz b.xyz c.xyz), as doubles */
  corners: Float64Array;
  /**
   * #nodes*37: centre p̃ (3), radius r (farthest corner from p̃), N = ∫ n dA (3), M = ∫ n ⊗ (p − p̃) dA (9),
   * S = ½ ∫ n ⊗ (p − p̃) ⊗ (p − p̃) dA (18, symmetric in its last two indices), w (3, traces of S)
   */
  nodes: Float64Array;
  /** #nodes: index of the right child; 0 for a leaf */
  right: Int32Array;
  /** #nodes: first triangle (tree order) of a leaf */
  first: Int32Array;
  /** #nodes: triangles of a leaf; 0 for an inner node */
  count: Int32Array;
  /** levels of the tree (a lone root is 1): a depth-first traversal never holds more than depth + 1 nodes */
  depth: number;
  /** #nodes*6: the box of each node's triangles' corners, min xyz then max xyz (closestDistances prunes with it) */
  bounds: Float64Array;
}

/**
 * buildWindingNumberTree: positions Float32Array #V*3, triangles Uint32Array #T*3 (corner order gives the normal:
 * counter-clockwise seen from outside points out) → WindingNumberTree. Reads its inputs, never changes them.
 * Triangles are split top-down at the middle of their centroids' longest extent (half by count when all centroids
 * coincide; at the median below depth 40, which bounds the depth of a lopsided soup). Triangles of zero area are
 * kept; they add nothing. Throws BAD_INDEX for a corner index past the vertices.
 */
export function buildWindingNumberTree(positions: Float32Array, triangles: Uint32Array): WindingNumberTree {
  const triangleCount = Math.floor(triangles.length / 3);
  const vertexCount = Math.floor(positions.length / 3);
  for (let i = 0; i < triangleCount * 3; i++) {
    if (triangles[i] >= vertexCount) throw new AutoRigError('BAD_INDEX', `buildWindingNumberTree: triangle ${Math.floor(i / 3)} indexes vertex ${triangles[i]} of ${vertexCount}`);
  }
  return new WindingTreeBuilder(positions, triangles, triangleCount).build();
}

/**
 * The steps of buildWindingNumberTree over one soup, as methods (not closures made per build: V8 compiled a closure's
 * loops again for each new closure, on every build; docs/EVAL.md, twenty-ninth session).
 */
class WindingTreeBuilder {
  // per triangle: centroid (3), area vector ½ (b−a)×(c−a) (3), area
  private readonly centroid: Float64Array;
  private readonly areaNormal: Float64Array;
  private readonly area: Float64Array;
  private readonly order: Int32Array;
  // the centroids in `order`'s order, swapped with it: the splits sweep their ranges contiguously
  private readonly cen: Float64Array;
  private readonly rangeStart: Int32Array;
  private readonly rangeEnd: Int32Array;
  private readonly rightOf: Int32Array;
  private nodeCount = 0;
  private depth = 1;
  // scratch of longestAxis: lo xyz, hi xyz (it runs once per node, tens of thousands of times on a large mesh)
  private readonly extent = new Float64Array(6);
  private axis = 0;
  // filled once the splits are done: the per-triangle arrays in tree order, and the nodes
  private corners = new Float64Array(0);
  private areaT = new Float64Array(0);
  private normalT = new Float64Array(0);
  private nodes = new Float64Array(0);
  private nodeArea = new Float64Array(0);
  private right = new Int32Array(0);
  private bounds = new Float64Array(0);
  private radiusStack = new Int32Array(0);
  private readonly shift = new Float64Array(3);

  constructor(private readonly positions: Float32Array, private readonly triangles: Uint32Array, private readonly triangleCount: number) {
    this.centroid = new Float64Array(triangleCount * 3);
    this.areaNormal = new Float64Array(triangleCount * 3);
    this.area = new Float64Array(triangleCount);
    const { centroid, areaNormal, area } = this;
    for (let t = 0; t < triangleCount; t++) {
      const a = triangles[t * 3] * 3, b = triangles[t * 3 + 1] * 3, c = triangles[t * 3 + 2] * 3;
      const ax = positions[a], ay = positions[a + 1], az = positions[a + 2];
      const ux = positions[b] - ax, uy = positions[b + 1] - ay, uz = positions[b + 2] - az;
      const vx = positions[c] - ax, vy = positions[c + 1] - ay, vz = positions[c + 2] - az;
      centroid[t * 3] = (3 * ax + ux + vx) / 3;
      centroid[t * 3 + 1] = (3 * ay + uy + vy) / 3;
      centroid[t * 3 + 2] = (3 * az + uz + vz) / 3;
      const nx = 0.5 * (uy * vz - uz * vy), ny = 0.5 * (uz * vx - ux * vz), nz = 0.5 * (ux * vy - uy * vx);
      areaNormal[t * 3] = nx;
      areaNormal[t * 3 + 1] = ny;
      areaNormal[t * 3 + 2] = nz;
      area[t] = Math.sqrt(nx * nx + ny * ny + nz * nz);
    }
    this.order = new Int32Array(triangleCount);
    for (let t = 0; t < triangleCount; t++) this.order[t] = t;
    this.cen = centroid.slice();
    // a binary tree with leaves of ≥1 triangle has < 2T nodes
    const capacity = Math.max(1, 2 * triangleCount);
    this.rangeStart = new Int32Array(capacity);
    this.rangeEnd = new Int32Array(capacity);
    this.rightOf = new Int32Array(capacity);
  }

  build(): WindingNumberTree {
    const { triangleCount, order, triangles, positions, area, areaNormal, rangeStart, rangeEnd } = this;
    if (triangleCount > 0) this.split(0, triangleCount, 0);
    const nodeCount = this.nodeCount;
    const corners = (this.corners = new Float64Array(triangleCount * 9));
    const areaT = (this.areaT = new Float64Array(triangleCount));
    const normalT = (this.normalT = new Float64Array(triangleCount * 3));
    for (let i = 0; i < triangleCount; i++) {
      const t = order[i];
      areaT[i] = area[t];
      for (let k = 0; k < 3; k++) normalT[i * 3 + k] = areaNormal[t * 3 + k];
      for (let k = 0; k < 3; k++) {
        const v = triangles[t * 3 + k] * 3;
        corners[i * 9 + k * 3] = positions[v];
        corners[i * 9 + k * 3 + 1] = positions[v + 1];
        corners[i * 9 + k * 3 + 2] = positions[v + 2];
      }
    }
    // moments bottom-up: in depth-first order every child comes after its parent
    this.nodes = new Float64Array(nodeCount * NODE_STRIDE);
    this.nodeArea = new Float64Array(nodeCount);
    const right = (this.right = this.rightOf.slice(0, nodeCount));
    const first = new Int32Array(nodeCount);
    const count = new Int32Array(nodeCount);
    const bounds = (this.bounds = new Float64Array(nodeCount * 6));
    this.radiusStack = new Int32Array(2 * this.depth + 2);
    for (let node = nodeCount - 1; node >= 0; node--) {
      const b = node * 6;
      if (right[node] === 0) {
        first[node] = rangeStart[node];
        count[node] = rangeEnd[node] - rangeStart[node];
        this.writeLeafMoments(node, rangeStart[node], rangeEnd[node]);
        // its triangles' corners: points 3·rangeStart .. 3·rangeEnd of `corners`
        writeBox(corners, 3 * rangeStart[node], 3 * rangeEnd[node], bounds, b);
      } else {
        this.mergeChildMoments(node, node + 1, right[node]);
        const l = (node + 1) * 6, r = right[node] * 6;
        for (let a = 0; a < 3; a++) {
          bounds[b + a] = Math.min(bounds[l + a], bounds[r + a]);
          bounds[b + 3 + a] = Math.max(bounds[l + 3 + a], bounds[r + 3 + a]);
        }
      }
      this.writeRadius(node);
    }
    return { corners, nodes: this.nodes, right, first, count, depth: this.depth, bounds };
  }

  /** Splits order[start, end) into the subtree of a new node (depth-first: its left child follows it); returns its index. */
  private split(start: number, end: number, level: number): number {
    const node = this.nodeCount++;
    this.depth = Math.max(this.depth, level + 1);
    this.rangeStart[node] = start;
    this.rangeEnd[node] = end;
    if (end - start > LEAF_TRIANGLES) {
      const middle = level < MIDDLE_SPLIT_LEVELS ? this.splitAtMiddle(start, end) : this.splitAtMedian(start, end);
      this.split(start, middle, level + 1);
      this.rightOf[node] = this.split(middle, end, level + 1);
    }
    return node;
  }

  /**
   * Centre, N, M and S of the triangles order[start, end) into leaf `node`, summed triangle by triangle. It reads the
   * per-triangle arrays in tree order (cen, areaT, normalT, corners), so that a leaf's triangles lie contiguous.
   */
  private writeLeafMoments(node: number, start: number, end: number): void {
    const { nodes, cen, areaT, normalT, corners } = this;
    const o = node * NODE_STRIDE;
    let total = 0, px = 0, py = 0, pz = 0;
    for (let i = start; i < end; i++) {
      total += areaT[i];
      px += areaT[i] * cen[i * 3]; py += areaT[i] * cen[i * 3 + 1]; pz += areaT[i] * cen[i * 3 + 2];
      nodes[o + 4] += normalT[i * 3]; nodes[o + 5] += normalT[i * 3 + 1]; nodes[o + 6] += normalT[i * 3 + 2];
    }
    if (total > 0) {
      px /= total; py /= total; pz /= total;
    } else {
      // only degenerate triangles: any point among them will do as the centre, they contribute nothing
      px = py = pz = 0;
      for (let i = start; i < end; i++) { px += cen[i * 3]; py += cen[i * 3 + 1]; pz += cen[i * 3 + 2]; }
      px /= end - start; py /= end - start; pz /= end - start;
    }
    nodes[o] = px; nodes[o + 1] = py; nodes[o + 2] = pz;
    this.nodeArea[node] = total;
    for (let i = start; i < end; i++) {
      const dx = cen[i * 3] - px, dy = cen[i * 3 + 1] - py, dz = cen[i * 3 + 2] - pz;
      const ax = normalT[i * 3], ay = normalT[i * 3 + 1], az = normalT[i * 3 + 2];
      // ∫ δ dA = area · (centroid − p̃), exactly
      nodes[o + 7] += ax * dx; nodes[o + 8] += ax * dy; nodes[o + 9] += ax * dz;
      nodes[o + 10] += ay * dx; nodes[o + 11] += ay * dy; nodes[o + 12] += ay * dz;
      nodes[o + 13] += az * dx; nodes[o + 14] += az * dy; nodes[o + 15] += az * dz;
      // ∫ δ δᵀ dA = area/12 · (Σ dᵢ dᵢᵀ + (Σ dᵢ)(Σ dᵢ)ᵀ) over the corners dᵢ = cornerᵢ − p̃ (Σ dᵢ = 3 (centroid − p̃))
      const sx = 3 * dx, sy = 3 * dy, sz = 3 * dz;
      let xx = sx * sx, yy = sy * sy, zz = sz * sz, xy = sx * sy, xz = sx * sz, yz = sy * sz;
      for (let k = 0; k < 3; k++) {
        const v = i * 9 + k * 3;
        const ex = corners[v] - px, ey = corners[v + 1] - py, ez = corners[v + 2] - pz;
        xx += ex * ex; yy += ey * ey; zz += ez * ez; xy += ex * ey; xz += ex * ez; yz += ey * ez;
      }
      // S = ½ ∫ n ⊗ δ ⊗ δ dA = ½ · (1/12) · (area · n) ⊗ (...)
      for (let n = 0; n < 3; n++) {
        const at = o + 16 + n * 6;
        const share = normalT[i * 3 + n] / 24;
        nodes[at] += share * xx; nodes[at + 1] += share * yy; nodes[at + 2] += share * zz;
        nodes[at + 3] += share * xy; nodes[at + 4] += share * xz; nodes[at + 5] += share * yz;
      }
    }
    this.writeTraces(o);
  }

  /**
   * The moments of an inner node from its children's, each moved to the new centre by e = p̃_child − p̃:
   * N' = N, M'_ij = M_ij + N_i e_j, S'_ijk = S_ijk + ½ (M_ij e_k + M_ik e_j) + ½ N_i e_j e_k.
   */
  private mergeChildMoments(node: number, left: number, rightChild: number): void {
    const { nodes, nodeArea, shift } = this;
    const o = node * NODE_STRIDE;
    const total = nodeArea[left] + nodeArea[rightChild];
    nodeArea[node] = total;
    const wl = total > 0 ? nodeArea[left] / total : 0.5, wr = 1 - wl;
    for (let k = 0; k < 3; k++) nodes[o + k] = wl * nodes[left * NODE_STRIDE + k] + wr * nodes[rightChild * NODE_STRIDE + k];
    for (let side = 0; side < 2; side++) {
      const c = (side === 0 ? left : rightChild) * NODE_STRIDE;
      shift[0] = nodes[c] - nodes[o]; shift[1] = nodes[c + 1] - nodes[o + 1]; shift[2] = nodes[c + 2] - nodes[o + 2];
      for (let i = 0; i < 3; i++) {
        const n = nodes[c + 4 + i];
        nodes[o + 4 + i] += n;
        for (let j = 0; j < 3; j++) nodes[o + 7 + i * 3 + j] += nodes[c + 7 + i * 3 + j] + n * shift[j];
        for (let slot = 0; slot < 6; slot++) {
          const j = SYMMETRIC_ROW[slot], k = SYMMETRIC_COLUMN[slot];
          nodes[o + 16 + i * 6 + slot] += nodes[c + 16 + i * 6 + slot]
            + 0.5 * (nodes[c + 7 + i * 3 + j] * shift[k] + nodes[c + 7 + i * 3 + k] * shift[j]) + 0.5 * n * shift[j] * shift[k];
        }
      }
    }
    this.writeTraces(o);
  }

  /** w_k = Σ_i (2 S_iik + S_kii) of the node at offset o (S_iik: row i's (i, k) entry; S_kii: the trace of row k). */
  private writeTraces(o: number): void {
    const nodes = this.nodes;
    for (let k = 0; k < 3; k++) {
      let sum = 0;
      for (let i = 0; i < 3; i++) sum += 2 * nodes[o + 16 + i * 6 + symmetricSlot(i, k)] + nodes[o + 16 + k * 6 + i];
      nodes[o + 34 + k] = sum;
    }
  }

  /** The largest distance² from (px, py, pz) to a corner of node n's box (never below a corner's computed one). */
  private farthestInBox(n: number, px: number, py: number, pz: number): number {
    const bounds = this.bounds;
    const b = n * 6;
    const lx = bounds[b] - px, hx = bounds[b + 3] - px, ly = bounds[b + 1] - py, hy = bounds[b + 4] - py;
    const lz = bounds[b + 2] - pz, hz = bounds[b + 5] - pz;
    return Math.max(lx * lx, hx * hx) + Math.max(ly * ly, hy * hy) + Math.max(lz * lz, hz * hz);
  }

  /**
   * The radius of a node: the farthest corner of its triangles from its centre. Its subtree's boxes are written
   * already (bottom-up): a child whose box's farthest corner is no farther than the farthest corner found so far is
   * skipped, so a node reads a few leaves, not all its triangles. The same corners' distances as a sweep of all of
   * them, so the same maximum: a box bound, made of its extreme coordinates with the same operations, is never below a
   * corner's computed distance (rounding is monotone).
   */
  private writeRadius(node: number): void {
    const { nodes, right, corners, rangeStart, rangeEnd, radiusStack } = this;
    const o = node * NODE_STRIDE;
    const px = nodes[o], py = nodes[o + 1], pz = nodes[o + 2];
    let radius2 = 0;
    let top = 0;
    radiusStack[top++] = node;
    while (top > 0) {
      const n = radiusStack[--top];
      if (this.farthestInBox(n, px, py, pz) <= radius2) continue;
      if (right[n] === 0) {
        for (let c = rangeStart[n] * 9, last = rangeEnd[n] * 9; c < last; c += 3) {
          const ex = corners[c] - px, ey = corners[c + 1] - py, ez = corners[c + 2] - pz;
          const d2 = ex * ex + ey * ey + ez * ez;
          if (d2 > radius2) radius2 = d2;
        }
      } else if (this.farthestInBox(n + 1, px, py, pz) >= this.farthestInBox(right[n], px, py, pz)) {
        // the farther child first: its corners raise the bar that may skip the other
        radiusStack[top++] = right[n];
        radiusStack[top++] = n + 1;
      } else {
        radiusStack[top++] = n + 1;
        radiusStack[top++] = right[n];
      }
    }
    nodes[o + 3] = Math.sqrt(radius2);
  }

  /** The axis along which the centroids of order[start, end) spread most (this.axis), its extent in this.extent. */
  private longestAxis(start: number, end: number): void {
    const extent = this.extent;
    writeBox(this.cen, start, end, extent, 0);
    let axis = 0;
    for (let k = 1; k < 3; k++) if (extent[3 + k] - extent[k] > extent[3 + axis] - extent[axis]) axis = k;
    this.axis = axis;
  }

  /** Swaps places i and j of the tree order (order and cen). */
  private swapTriangles(i: number, j: number): void {
    const { order, cen } = this;
    const s = order[i]; order[i] = order[j]; order[j] = s;
    for (let k = 0; k < 3; k++) { const c = cen[i * 3 + k]; cen[i * 3 + k] = cen[j * 3 + k]; cen[j * 3 + k] = c; }
  }

  /** Partitions order[start, end) at the median centroid along the longest axis (quickselect); returns the split index. */
  private splitAtMedian(start: number, end: number): number {
    this.longestAxis(start, end);
    const { axis, cen } = this;
    const middle = (start + end) >> 1;
    let lo = start, hi = end - 1;
    while (lo < hi) {
      const pivot = cen[((lo + hi) >> 1) * 3 + axis];
      let i = lo, j = hi;
      while (i <= j) {
        while (cen[i * 3 + axis] < pivot) i++;
        while (cen[j * 3 + axis] > pivot) j--;
        if (i <= j) { this.swapTriangles(i, j); i++; j--; }
      }
      if (middle <= j) hi = j;
      else if (middle >= i) lo = i;
      else break;
    }
    return middle;
  }

  /** Partitions order[start, end) about the middle of its centroids' longest extent; returns the split index. */
  private splitAtMiddle(start: number, end: number): number {
    this.longestAxis(start, end);
    const { axis, cen, extent } = this;
    const cut = 0.5 * (extent[axis] + extent[3 + axis]);
    let i = start, j = end - 1;
    while (i <= j) {
      if (cen[i * 3 + axis] < cut) i++;
      else { this.swapTriangles(i, j); j--; }
    }
    // all centroids on one side (they coincide along every axis): halve by count
    return i === start || i === end ? (start + end) >> 1 : i;
  }
}

/**
 * The box of points [from, to) of xyz (Float64Array #N*3) into out[at .. at + 6): min xyz, then max xyz (±Infinity
 * for no points).
 */
function writeBox(xyz: Float64Array, from: number, to: number, out: Float64Array, at: number): void {
  let lx = Infinity, ly = Infinity, lz = Infinity, hx = -Infinity, hy = -Infinity, hz = -Infinity;
  for (let c = 3 * from, last = 3 * to; c < last; c += 3) {
    const x = xyz[c], y = xyz[c + 1], z = xyz[c + 2];
    if (x < lx) lx = x;
    if (x > hx) hx = x;
    if (y < ly) ly = y;
    if (y > hy) hy = y;
    if (z < lz) lz = z;
    if (z > hz) hz = z;
  }
  out[at] = lx; out[at + 1] = ly; out[at + 2] = lz; out[at + 3] = hx; out[at + 4] = hy; out[at + 5] = hz;
}

/** Row and column of each slot of a symmetric 3×3 matrix stored as xx yy zz xy xz yz. */
const SYMMETRIC_ROW = [0, 1, 2, 0, 0, 1];
const SYMMETRIC_COLUMN = [0, 1, 2, 1, 2, 2];

/** Slot of entry (j, k) of a symmetric 3×3 matrix stored as xx yy zz xy xz yz. */
function symmetricSlot(j: number, k: number): number {
  if (j === k) return j;
  const sum = j + k;
  return sum === 1 ? 3 : sum === 2 ? 4 : 5;
}

/**
 * windingNumbers: tree (from buildWindingNumberTree), queries Float32Array #Q*3, β (default 2; larger is more exact
 * and slower) → Float32Array #Q, the generalised winding number at each query (1 inside a closed outward-oriented
 * shell, 0 outside, sums over shells). Far nodes use the second-order expansion; its error falls as β grows, about
 * as β⁻⁴ (against the exact sum on a 50k-triangle character: mean 2e-3, max 9e-3 at β = 2; mean 4e-4, max 2e-3 at
 * β = 3, for about twice the time).
 */
export function windingNumbers(tree: WindingNumberTree, queries: Float32Array, beta = DEFAULT_BETA): Float32Array {
  const queryCount = Math.floor(queries.length / 3);
  const result = new Float32Array(queryCount);
  const { corners, nodes, right, first, count } = tree;
  if (right.length === 0) return result;
  const beta2 = beta * beta;
  const stack = new Int32Array(tree.depth * 2 + 2);
  for (let q = 0; q < queryCount; q++) {
    const qx = queries[q * 3], qy = queries[q * 3 + 1], qz = queries[q * 3 + 2];
    let solidAngle = 0;
    let top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const node = stack[--top];
      const o = node * NODE_STRIDE;
      // r = p̃ − q
      const rx = nodes[o] - qx, ry = nodes[o + 1] - qy, rz = nodes[o + 2] - qz;
      const d2 = rx * rx + ry * ry + rz * rz;
      const radius = nodes[o + 3];
      if (d2 > beta2 * radius * radius) {
        // Ω ≈ N·r/|r|³ + tr(M)/|r|³ − 3 rᵀMr/|r|⁵ + (second order): the kernel (p−q)/|p−q|³ and its first two
        // derivatives at p̃, against the moments
        const inv = 1 / Math.sqrt(d2);
        const inv3 = inv * inv * inv;
        const dipole = nodes[o + 4] * rx + nodes[o + 5] * ry + nodes[o + 6] * rz;
        const trace = nodes[o + 7] + nodes[o + 11] + nodes[o + 15];
        const rMr =
          rx * (nodes[o + 7] * rx + nodes[o + 8] * ry + nodes[o + 9] * rz) +
          ry * (nodes[o + 10] * rx + nodes[o + 11] * ry + nodes[o + 12] * rz) +
          rz * (nodes[o + 13] * rx + nodes[o + 14] * ry + nodes[o + 15] * rz);
        const inv5 = inv3 * inv * inv;
        // + Σ S_ijk ∂²K_i/∂p_j∂p_k = −3 r·w/|r|⁵ + 15 S(r, r, r)/|r|⁷
        const xx = rx * rx, yy = ry * ry, zz = rz * rz, xy2 = 2 * rx * ry, xz2 = 2 * rx * rz, yz2 = 2 * ry * rz;
        const cubic =
          rx * (nodes[o + 16] * xx + nodes[o + 17] * yy + nodes[o + 18] * zz + nodes[o + 19] * xy2 + nodes[o + 20] * xz2 + nodes[o + 21] * yz2) +
          ry * (nodes[o + 22] * xx + nodes[o + 23] * yy + nodes[o + 24] * zz + nodes[o + 25] * xy2 + nodes[o + 26] * xz2 + nodes[o + 27] * yz2) +
          rz * (nodes[o + 28] * xx + nodes[o + 29] * yy + nodes[o + 30] * zz + nodes[o + 31] * xy2 + nodes[o + 32] * xz2 + nodes[o + 33] * yz2);
        const traces = rx * nodes[o + 34] + ry * nodes[o + 35] + rz * nodes[o + 36];
        solidAngle += (dipole + trace) * inv3 - 3 * (rMr + traces) * inv5 + 15 * cubic * inv5 * inv * inv;
      } else if (count[node] > 0) {
        const end = first[node] + count[node];
        for (let t = first[node]; t < end; t++) solidAngle += triangleSolidAngle(corners, t * 9, qx, qy, qz);
      } else {
        stack[top++] = right[node];
        stack[top++] = node + 1;
      }
    }
    result[q] = solidAngle / (4 * Math.PI);
  }
  return result;
}

/**
 * closestDistances: tree (from buildWindingNumberTree), queries Float32Array #Q*3 → Float32Array #Q, the distance from
 * each query to the nearest point of any triangle of the soup (Infinity for a tree of no triangles). Exact: the
 * nodes' boxes only prune, nearer child first. The same hierarchy as the winding numbers, so a signed distance builds
 * one tree, not two.
 */
export function closestDistances(tree: WindingNumberTree, queries: Float32Array): Float32Array {
  const queryCount = Math.floor(queries.length / 3);
  const result = new Float32Array(queryCount).fill(Infinity);
  const { corners, bounds, right, first, count } = tree;
  if (right.length === 0) return result;
  const stack = new Int32Array(tree.depth * 2 + 2);
  for (let q = 0; q < queryCount; q++) {
    const qx = queries[q * 3], qy = queries[q * 3 + 1], qz = queries[q * 3 + 2];
    let best = Infinity;
    let top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const node = stack[--top];
      if (boxDistance2(bounds, node * 6, qx, qy, qz) >= best) continue;
      if (count[node] > 0) {
        const end = first[node] + count[node];
        for (let t = first[node]; t < end; t++) {
          const d2 = triangleDistance2(corners, t * 9, qx, qy, qz);
          if (d2 < best) best = d2;
        }
      } else {
        // the nearer child is popped first, so the farther one is often pruned
        const near = node + 1, far = right[node];
        if (boxDistance2(bounds, near * 6, qx, qy, qz) <= boxDistance2(bounds, far * 6, qx, qy, qz)) {
          stack[top++] = far;
          stack[top++] = near;
        } else {
          stack[top++] = near;
          stack[top++] = far;
        }
      }
    }
    result[q] = Math.sqrt(best);
  }
  return result;
}

/** Squared distance from (qx, qy, qz) to the box bounds[at..at+6) (min xyz, max xyz); 0 inside it. */
function boxDistance2(bounds: Float64Array, at: number, qx: number, qy: number, qz: number): number {
  const dx = Math.max(bounds[at] - qx, 0, qx - bounds[at + 3]);
  const dy = Math.max(bounds[at + 1] - qy, 0, qy - bounds[at + 4]);
  const dz = Math.max(bounds[at + 2] - qz, 0, qz - bounds[at + 5]);
  return dx * dx + dy * dy + dz * dz;
}

/**
 * Squared distance from (qx, qy, qz) to triangle corners[at..at+9) (a, b, c): pointTriangleDistanceSquared, with a
 * triangle of no area (or a sliver whose regions round to nothing) read as its edges.
 */
export function triangleDistance2(corners: Float64Array, at: number, qx: number, qy: number, qz: number): number {
  const abx = corners[at + 3] - corners[at], aby = corners[at + 4] - corners[at + 1], abz = corners[at + 5] - corners[at + 2];
  const acx = corners[at + 6] - corners[at], acy = corners[at + 7] - corners[at + 1], acz = corners[at + 8] - corners[at + 2];
  const nx = aby * acz - abz * acy, ny = abz * acx - abx * acz, nz = abx * acy - aby * acx;
  if (!(nx * nx + ny * ny + nz * nz > 0)) return edgesDistance2(corners, at, qx, qy, qz);
  const d2 = pointTriangleDistanceSquared(
    qx, qy, qz, corners[at], corners[at + 1], corners[at + 2], corners[at + 3], corners[at + 4], corners[at + 5], corners[at + 6], corners[at + 7], corners[at + 8],
  );
  return Number.isFinite(d2) ? d2 : edgesDistance2(corners, at, qx, qy, qz);
}

/** Squared distance from (qx, qy, qz) to the nearest of the edges of triangle corners[at..at+9) (one of no area). */
function edgesDistance2(corners: Float64Array, at: number, qx: number, qy: number, qz: number): number {
  return Math.min(segmentDistance2(corners, at, at + 3, qx, qy, qz), segmentDistance2(corners, at + 3, at + 6, qx, qy, qz), segmentDistance2(corners, at + 6, at, qx, qy, qz));
}

/** Squared distance from (qx, qy, qz) to the segment between corners[i..i+3) and corners[j..j+3). */
function segmentDistance2(corners: Float64Array, i: number, j: number, qx: number, qy: number, qz: number): number {
  const ex = corners[j] - corners[i], ey = corners[j + 1] - corners[i + 1], ez = corners[j + 2] - corners[i + 2];
  const fx = qx - corners[i], fy = qy - corners[i + 1], fz = qz - corners[i + 2];
  const length2 = ex * ex + ey * ey + ez * ez;
  const t = length2 > 0 ? Math.min(1, Math.max(0, (ex * fx + ey * fy + ez * fz) / length2)) : 0;
  const dx = fx - t * ex, dy = fy - t * ey, dz = fz - t * ez;
  return dx * dx + dy * dy + dz * dz;
}

/**
 * exactWindingNumbers: positions Float32Array #V*3, triangles Uint32Array #T*3, queries Float32Array #Q*3 →
 * Float32Array #Q: the winding number summed over every triangle, no approximation (O(Q·T); for tests and checks).
 */
export function exactWindingNumbers(positions: Float32Array, triangles: Uint32Array, queries: Float32Array): Float32Array {
  const triangleCount = Math.floor(triangles.length / 3);
  const corners = new Float64Array(triangleCount * 9);
  for (let t = 0; t < triangleCount; t++) {
    for (let k = 0; k < 3; k++) for (let a = 0; a < 3; a++) corners[t * 9 + k * 3 + a] = positions[triangles[t * 3 + k] * 3 + a];
  }
  const queryCount = Math.floor(queries.length / 3);
  const result = new Float32Array(queryCount);
  for (let q = 0; q < queryCount; q++) {
    let solidAngle = 0;
    for (let t = 0; t < triangleCount; t++) solidAngle += triangleSolidAngle(corners, t * 9, queries[q * 3], queries[q * 3 + 1], queries[q * 3 + 2]);
    result[q] = solidAngle / (4 * Math.PI);
  }
  return result;
}

/**
 * The signed solid angle (steradians, in (−2π, 2π]) of triangle corners[at..at+9) seen from (qx, qy, qz), by van
 * Oosterom–Strackee: tan(Ω/2) = a·(b×c) / (|a||b||c| + (a·b)|c| + (b·c)|a| + (c·a)|b|) with a, b, c the corners
 * relative to q. Positive when q sits behind the triangle (on the side its normal points away from).
 */
export function triangleSolidAngle(corners: Float64Array, at: number, qx: number, qy: number, qz: number): number {
  const ax = corners[at] - qx, ay = corners[at + 1] - qy, az = corners[at + 2] - qz;
  const bx = corners[at + 3] - qx, by = corners[at + 4] - qy, bz = corners[at + 5] - qz;
  const cx = corners[at + 6] - qx, cy = corners[at + 7] - qy, cz = corners[at + 8] - qz;
  const la = Math.sqrt(ax * ax + ay * ay + az * az);
  const lb = Math.sqrt(bx * bx + by * by + bz * bz);
  const lc = Math.sqrt(cx * cx + cy * cy + cz * cz);
  const det = ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz) + az * (bx * cy - by * cx);
  const denominator = la * lb * lc + (ax * bx + ay * by + az * bz) * lc + (bx * cx + by * cy + bz * cz) * la + (cx * ax + cy * ay + cz * az) * lb;
  return 2 * Math.atan2(det, denominator);
}
