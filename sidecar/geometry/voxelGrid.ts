/** An axis-aligned grid of cubic voxels: voxel (i,j,k) covers origin + [i,i+1)*size along x (same for y, z). */
export interface VoxelGrid {
  origin: [number, number, number];
  size: number;
  dims: [number, number, number];
}

/** A grid with cubic voxels over the box [min, max], `resolution` voxels along its longest side, plus `pad` empty voxels around. */
export function gridOverBox(min: ArrayLike<number>, max: ArrayLike<number>, resolution: number, pad: number): VoxelGrid {
  const ext = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
  const size = Math.max(ext[0], ext[1], ext[2], 1e-12) / resolution;
  const dims: [number, number, number] = [0, 0, 0];
  const origin: [number, number, number] = [0, 0, 0];
  for (let a = 0; a < 3; a++) {
    dims[a] = Math.max(1, Math.ceil(ext[a] / size - 1e-9)) + 2 * pad;
    origin[a] = min[a] - pad * size - (dims[a] * size - 2 * pad * size - ext[a]) / 2;
  }
  return { origin, size, dims };
}

/** Linear index of voxel (i, j, k). */
export function voxelIndex(g: VoxelGrid, i: number, j: number, k: number): number {
  return (k * g.dims[1] + j) * g.dims[0] + i;
}

/**
 * Marks every voxel that a triangle passes through. Each triangle is sampled in rows parallel to its longest edge,
 * rows and samples along a row at most half a voxel apart (thin parts stay connected), so that the work follows the
 * triangle's area and perimeter in voxels: a long sliver costs a few rows, not the square of its length.
 * positions: Float32Array #V*3 (same space as the grid), triangles: Uint32Array #T*3 → occupancy Uint8Array #voxels (1 = surface)
 */
export function rasterizeTriangles(positions: Float32Array, triangles: Uint32Array, g: VoxelGrid, out?: Uint8Array): Uint8Array {
  const [nx, ny, nz] = g.dims;
  const occ = out ?? new Uint8Array(nx * ny * nz);
  const inv = 1 / g.size;
  const ox = g.origin[0], oy = g.origin[1], oz = g.origin[2];
  // (the sample's voxel is marked inline: a closure made per call was compiled again by V8 on every call)
  const corners = new Float64Array(9);
  for (let t = 0; t < triangles.length; t += 3) {
    // A triangle inside one voxel, a millionth of a voxel clear of its faces, marks that voxel alone: every sample
    // below is a convex combination of its corners, off by rounding (~1e-13 voxel) at most. A third of a 50k
    // character's triangles at 80 voxels, half at 48, skip the sampling.
    const single = voxelHoldingTriangle(positions, triangles, t, g, inv);
    if (single >= 0) {
      occ[single] = 1;
      continue;
    }
    const rows = triangleRows(positions, triangles, t, inv, corners);
    // corners: A, B (the longest edge) and the apex C; row q runs from A + f(C - A) to B + f(C - B), f = q / rows.
    for (let q = 0; q <= rows; q++) {
      const f = q / rows;
      const px = corners[0] + f * (corners[6] - corners[0]), py = corners[1] + f * (corners[7] - corners[1]), pz = corners[2] + f * (corners[8] - corners[2]);
      const qx = corners[3] + f * (corners[6] - corners[3]), qy = corners[4] + f * (corners[7] - corners[4]), qz = corners[5] + f * (corners[8] - corners[5]);
      const steps = rowSteps(px, py, pz, qx, qy, qz, inv);
      for (let s = 0; s <= steps; s++) {
        const e = s / steps;
        const x = px + e * (qx - px), y = py + e * (qy - py), z = pz + e * (qz - pz);
        const i = Math.floor((x - ox) * inv), j = Math.floor((y - oy) * inv), k = Math.floor((z - oz) * inv);
        if (i < 0 || j < 0 || k < 0 || i >= nx || j >= ny || k >= nz) continue;
        occ[(k * ny + j) * nx + i] = 1;
      }
    }
  }
  return occ;
}

/**
 * How many points rasterizeTriangles samples for these triangles on a grid of voxels of this size: its work, counted
 * without doing it (O(#T)), so that a caller can refuse a mesh whose surface would take too long to voxelise.
 * positions: Float32Array #V*3, triangles: Uint32Array #T*3, size: voxel edge (same units) → number of samples
 */
export function rasterizeSampleCount(positions: Float32Array, triangles: Uint32Array, size: number): number {
  const inv = 1 / size;
  const corners = new Float64Array(9);
  let samples = 0;
  for (let t = 0; t < triangles.length; t += 3) {
    const rows = triangleRows(positions, triangles, t, inv, corners);
    // Rows shrink linearly from the longest edge to the apex: their steps add up to about half the base's per row.
    const base = rowSteps(corners[0], corners[1], corners[2], corners[3], corners[4], corners[5], inv);
    samples += (rows + 1) * (base / 2 + 2);
  }
  return samples;
}

/**
 * The corners of triangle t reordered as A, B (its longest edge) and the apex C into `corners` (#9), and the number of
 * rows (≥ 1) that keeps rows at most half a voxel apart: twice the apex's height over AB, in voxels.
 */
/**
 * The index in grid g of the voxel that holds triangle t's three corners at least SINGLE_VOXEL_MARGIN inside its
 * faces; -1 when the corners are in different voxels, too near a face, or outside the grid (the sampling then decides).
 * Coordinates as rasterizeTriangles reads them: (x − origin) · inv.
 */
function voxelHoldingTriangle(positions: Float32Array, triangles: Uint32Array, t: number, g: VoxelGrid, inv: number): number {
  const [nx, ny, nz] = g.dims;
  const a = triangles[t] * 3, b = triangles[t + 1] * 3, c = triangles[t + 2] * 3;
  const i = cellHoldingAll((positions[a] - g.origin[0]) * inv, (positions[b] - g.origin[0]) * inv, (positions[c] - g.origin[0]) * inv, nx);
  if (i < 0) return -1;
  const j = cellHoldingAll((positions[a + 1] - g.origin[1]) * inv, (positions[b + 1] - g.origin[1]) * inv, (positions[c + 1] - g.origin[1]) * inv, ny);
  if (j < 0) return -1;
  const k = cellHoldingAll((positions[a + 2] - g.origin[2]) * inv, (positions[b + 2] - g.origin[2]) * inv, (positions[c + 2] - g.origin[2]) * inv, nz);
  if (k < 0) return -1;
  return (k * ny + j) * nx + i;
}

/** A millionth of a voxel: far above the rounding of a sample's coordinate, far below a voxel. */
const SINGLE_VOXEL_MARGIN = 1e-6;

/** The unit cell [c, c + 1) holding u, v, w with the margin to spare, c in [0, n); -1 when there is none. */
function cellHoldingAll(u: number, v: number, w: number, n: number): number {
  const lo = Math.min(u, v, w), hi = Math.max(u, v, w);
  const c = Math.floor(lo - SINGLE_VOXEL_MARGIN);
  return c >= 0 && c < n && Math.floor(hi + SINGLE_VOXEL_MARGIN) === c ? c : -1;
}

function triangleRows(positions: Float32Array, triangles: Uint32Array, t: number, inv: number, corners: Float64Array): number {
  const a = triangles[t] * 3, b = triangles[t + 1] * 3, c = triangles[t + 2] * 3;
  const ab = dist2(positions, a, b), bc = dist2(positions, b, c), ca = dist2(positions, c, a);
  // Rotate the corners so that the longest edge comes first (scalars: an array a triangle is garbage at 100k triangles).
  const abLongest = ab >= bc && ab >= ca, bcLongest = !abLongest && bc >= ca;
  const p = abLongest ? a : bcLongest ? b : c;
  const q = abLongest ? b : bcLongest ? c : a;
  const r = abLongest ? c : bcLongest ? a : b;
  for (let k = 0; k < 3; k++) {
    corners[k] = positions[p + k];
    corners[3 + k] = positions[q + k];
    corners[6 + k] = positions[r + k];
  }
  const ux = corners[3] - corners[0], uy = corners[4] - corners[1], uz = corners[5] - corners[2];
  const vx = corners[6] - corners[0], vy = corners[7] - corners[1], vz = corners[8] - corners[2];
  const cx = uy * vz - uz * vy, cy = uz * vx - ux * vz, cz = ux * vy - uy * vx;
  const base = Math.sqrt(ux * ux + uy * uy + uz * uz);
  const height = base > 0 ? Math.sqrt(cx * cx + cy * cy + cz * cz) / base : Math.sqrt(vx * vx + vy * vy + vz * vz);
  return Math.max(1, Math.ceil(height * inv * 2));
}

/** Steps (≥ 1) that sample the segment p→q at most half a voxel apart. */
function rowSteps(px: number, py: number, pz: number, qx: number, qy: number, qz: number, inv: number): number {
  return Math.max(1, Math.ceil(Math.sqrt((qx - px) ** 2 + (qy - py) ** 2 + (qz - pz) ** 2) * inv * 2));
}

function dist2(positions: Float32Array, a: number, b: number): number {
  return (positions[a] - positions[b]) ** 2 + (positions[a + 1] - positions[b + 1]) ** 2 + (positions[a + 2] - positions[b + 2]) ** 2;
}

/**
 * Solid voxelisation: voxels not reachable from the grid's border through empty voxels (6-connected) are inside.
 * A surface with holes smaller than a voxel still closes; a wide-open shell stays a shell (still connected, so still usable).
 * surface: Uint8Array #voxels → solid Uint8Array #voxels (1 = surface or interior)
 */
export function fillInterior(surface: Uint8Array, g: VoxelGrid): Uint8Array {
  const [nx, ny, nz] = g.dims;
  const outside = new Uint8Array(surface.length);
  const queue = new Int32Array(surface.length);
  let head = 0, tail = 0;
  for (let k = 0; k < nz; k++) for (let j = 0; j < ny; j++) for (let i = 0; i < nx; i++) {
    if (i === 0 || j === 0 || k === 0 || i === nx - 1 || j === ny - 1 || k === nz - 1) tail = pushOutside((k * ny + j) * nx + i, surface, outside, queue, tail);
  }
  const sy = nx, sz = nx * ny;
  while (head < tail) {
    const v = queue[head++];
    const i = v % nx, j = ((v - i) / nx) % ny, k = Math.floor(v / sz);
    if (i > 0) tail = pushOutside(v - 1, surface, outside, queue, tail);
    if (i < nx - 1) tail = pushOutside(v + 1, surface, outside, queue, tail);
    if (j > 0) tail = pushOutside(v - sy, surface, outside, queue, tail);
    if (j < ny - 1) tail = pushOutside(v + sy, surface, outside, queue, tail);
    if (k > 0) tail = pushOutside(v - sz, surface, outside, queue, tail);
    if (k < nz - 1) tail = pushOutside(v + sz, surface, outside, queue, tail);
  }
  const solid = new Uint8Array(surface.length);
  for (let v = 0; v < solid.length; v++) solid[v] = outside[v] ? 0 : 1;
  return solid;
}

/**
 * Voxel v into the flood from outside when it is empty and not reached yet: marks it and queues it at `tail`; → the
 * new tail. (A module function: a closure made per call, which V8 compiled again on every call.)
 */
function pushOutside(v: number, surface: Uint8Array, outside: Uint8Array, queue: Int32Array, tail: number): number {
  if (surface[v] || outside[v]) return tail;
  outside[v] = 1;
  queue[tail] = v;
  return tail + 1;
}
