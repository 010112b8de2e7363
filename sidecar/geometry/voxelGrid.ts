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
 * Marks every voxel that a triangle passes through (sampled at half a voxel, so thin parts stay connected).
 * positions: Float32Array #V*3 (same space as the grid), triangles: Uint32Array #T*3 → occupancy Uint8Array #voxels (1 = surface)
 */
export function rasterizeTriangles(positions: Float32Array, triangles: Uint32Array, g: VoxelGrid, out?: Uint8Array): Uint8Array {
  const [nx, ny, nz] = g.dims;
  const occ = out ?? new Uint8Array(nx * ny * nz);
  const inv = 1 / g.size;
  const ox = g.origin[0], oy = g.origin[1], oz = g.origin[2];
  const mark = (x: number, y: number, z: number) => {
    const i = Math.floor((x - ox) * inv), j = Math.floor((y - oy) * inv), k = Math.floor((z - oz) * inv);
    if (i < 0 || j < 0 || k < 0 || i >= nx || j >= ny || k >= nz) return;
    occ[(k * ny + j) * nx + i] = 1;
  };
  for (let t = 0; t < triangles.length; t += 3) {
    const a = triangles[t] * 3, b = triangles[t + 1] * 3, c = triangles[t + 2] * 3;
    const ax = positions[a], ay = positions[a + 1], az = positions[a + 2];
    const ux = positions[b] - ax, uy = positions[b + 1] - ay, uz = positions[b + 2] - az;
    const vx = positions[c] - ax, vy = positions[c + 1] - ay, vz = positions[c + 2] - az;
    const longest = Math.sqrt(Math.max(ux * ux + uy * uy + uz * uz, vx * vx + vy * vy + vz * vz,
      (ux - vx) ** 2 + (uy - vy) ** 2 + (uz - vz) ** 2));
    const n = Math.max(1, Math.ceil((longest * inv) * 2));
    for (let s = 0; s <= n; s++) {
      for (let r = 0; r <= n - s; r++) {
        const fs = s / n, fr = r / n;
        mark(ax + ux * fs + vx * fr, ay + uy * fs + vy * fr, az + uz * fs + vz * fr);
      }
    }
  }
  return occ;
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
  const push = (v: number) => { if (!surface[v] && !outside[v]) { outside[v] = 1; queue[tail++] = v; } };
  for (let k = 0; k < nz; k++) for (let j = 0; j < ny; j++) for (let i = 0; i < nx; i++) {
    if (i === 0 || j === 0 || k === 0 || i === nx - 1 || j === ny - 1 || k === nz - 1) push((k * ny + j) * nx + i);
  }
  const sy = nx, sz = nx * ny;
  while (head < tail) {
    const v = queue[head++];
    const i = v % nx, j = ((v - i) / nx) % ny, k = Math.floor(v / sz);
    if (i > 0) push(v - 1);
    if (i < nx - 1) push(v + 1);
    if (j > 0) push(v - sy);
    if (j < ny - 1) push(v + sy);
    if (k > 0) push(v - sz);
    if (k < nz - 1) push(v + sz);
  }
  const solid = new Uint8Array(surface.length);
  for (let v = 0; v < solid.length; v++) solid[v] = outside[v] ? 0 : 1;
  return solid;
}
