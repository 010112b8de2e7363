/**
 * A volume remesh of a character, the kind of mesh AI 3D generators output: one closed surface around the volume of
 * all the parts together (intersecting, open parts included), sampled on a voxel grid, triangulated chaotically.
 *
 * How: the unsigned distance to the source triangles is sampled at the voxel centres near the surface; the outside is
 * what a flood from the grid's border reaches without coming closer than OFFSET_VOXELS to any triangle, so cracks and
 * holes narrower than about a voxel are sealed and open sheets (capes, hair cards) become thin closed shells. The
 * surface is the level set "distance = offset" on the outside's border, meshed by surface nets over the voxel
 * centres. This is the watertight-ification used to prepare the training meshes of 3D generators (the level set of the
 * unsigned distance at a small offset, inner pockets dropped), so the result sits that offset (under a voxel) outside
 * the source and thin parts closer than that merge, as they do in generated meshes.
 *
 * Generated meshes come from marching cubes over a network's field: irregular triangles, varied valences, no quads.
 * A plain surface-nets mesh is far too regular (a quad grid), so the triangulation is disturbed on purpose,
 * deterministically for a seed: each quad gets a random diagonal, each vertex slides randomly in its tangent plane
 * (within its cell), and a share of the edges is split at a random point, which also tunes the vertex count.
 */
import { AutoRigError } from '../errors.js';
import { pointTriangleDistanceSquared } from '../geometry/pointTriangleDistance.js';
import { fillInterior, gridOverBox, type VoxelGrid } from '../geometry/voxelGrid.js';
import { mergeParts } from '../mesh/mergeParts.js';
import type { MeshPart } from '../types.js';

/** A remeshed character: one part named 'remesh', plus the voxel edge length it was sampled at. */
export interface RemeshedPart extends MeshPart {
  /** voxel edge length, in the parts' units: the resolution of the remesh */
  voxelSize: number;
}

/**
 * Distance of the remeshed surface outside the source, in voxels. Above half a voxel so that a flood between voxel
 * centres cannot slip through a sheet (of two neighbouring centres on either side of it, one is within half a voxel).
 */
const OFFSET_VOXELS = 0.7;
/** Distances are needed up to the offset plus one voxel step (the outside neighbours of near voxels), with a margin. */
const BAND_VOXELS = OFFSET_VOXELS + 1.5;
/** Vertices added by edge splits, planned as this share of the surface-nets vertices (the splits absorb count errors). */
const SPLIT_SHARE = 0.3;
/** Splits stay within this range of shares of the surface-nets vertices: enough to disturb, at most one per triangle pair. */
const SPLIT_SHARE_RANGE: [number, number] = [0.1, 0.7];
/** Largest random slide of a vertex in its tangent plane, in voxels. */
const JITTER_VOXELS = 0.3;
/** Resolution (voxels along the longest side) of the pass that estimates the surface area. */
const COARSE_RESOLUTION = 48;
/** The grid holds a few bytes per voxel (peak ~8 during the flood): past this many voxels the count is reached by splits. */
const MAX_VOXELS = 200_000_000;

/**
 * remeshVolume: parts (MeshPart[], any number, may intersect or be open), targetVertices (≥ 100), seed (integer) →
 * RemeshedPart { name 'remesh', positions Float32Array #V*3, triangles Uint32Array #T*3, voxelSize }: a closed surface
 * (every edge in two triangles) wound outwards, no zero-area triangle, V = targetVertices as a rule (the edge splits
 * make up the difference; off only when the grid cannot get near: a few hundred vertices, or past MAX_VOXELS).
 * The same inputs and seed give the same mesh. Throws BAD_REQUEST for a bad target, EMPTY_MESH/BAD_NUMBER like mergeParts.
 */
export function remeshVolume(parts: MeshPart[], targetVertices: number, seed: number): RemeshedPart {
  if (!Number.isInteger(targetVertices) || targetVertices < 100) {
    throw new AutoRigError('BAD_REQUEST', `remeshVolume: the target vertex count must be an integer ≥ 100, got ${targetVertices}`);
  }
  const mesh = mergeParts(parts);
  const baseTarget = targetVertices / (1 + SPLIT_SHARE);
  // Surface-nets vertices grow with the square of the resolution (one per voxel the surface crosses).
  const coarse = volumeSurface(mesh.positions, mesh.triangles, COARSE_RESOLUTION, seed);
  let resolution = resolutionFor(COARSE_RESOLUTION, coarse.positions.length / 3, baseTarget, mesh.positions);
  let surface = volumeSurface(mesh.positions, mesh.triangles, resolution, seed);
  const fits = (vertices: number) => targetVertices >= vertices * (1 + SPLIT_SHARE_RANGE[0]) && targetVertices <= vertices * (1 + SPLIT_SHARE_RANGE[1]);
  if (!fits(surface.positions.length / 3)) {
    // The coarse pass misjudges shapes whose thin parts only appear at finer resolutions: correct once.
    resolution = resolutionFor(resolution, surface.positions.length / 3, baseTarget, mesh.positions);
    surface = volumeSurface(mesh.positions, mesh.triangles, resolution, seed);
  }
  const baseVertices = surface.positions.length / 3;
  const splits = Math.round(Math.min(Math.max(targetVertices - baseVertices, baseVertices * SPLIT_SHARE_RANGE[0]), baseVertices * SPLIT_SHARE_RANGE[1]));
  const split = splitRandomEdges(surface.positions, surface.triangles, splits, seed);
  return { name: 'remesh', positions: split.positions, triangles: split.triangles, voxelSize: surface.voxelSize };
}

/** The resolution expected to give `wanted` surface-nets vertices, from one that gave `got`; capped at MAX_VOXELS. */
function resolutionFor(resolution: number, got: number, wanted: number, positions: Float32Array): number {
  const scaled = Math.round(resolution * Math.sqrt(wanted / Math.max(got, 1)));
  const { min, max } = boundingBox(positions);
  const ext = [max[0] - min[0], max[1] - min[1], max[2] - min[2]];
  const longest = Math.max(ext[0], ext[1], ext[2], 1e-12);
  // voxels ≈ resolution³ · (product of the sides / longest³), plus the padding
  const fill = Math.max(ext[0] / longest, 1e-3) * Math.max(ext[1] / longest, 1e-3) * Math.max(ext[2] / longest, 1e-3);
  const cap = Math.floor(Math.cbrt(MAX_VOXELS / fill)) - 2 * padVoxels();
  return Math.max(4, Math.min(scaled, cap));
}

function padVoxels(): number {
  return Math.ceil(BAND_VOXELS) + 2;
}

function boundingBox(positions: Float32Array): { min: number[]; max: number[] } {
  const min = [Infinity, Infinity, Infinity];
  const max = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < positions.length; i += 3) {
    for (let a = 0; a < 3; a++) {
      const x = positions[i + a];
      if (x < min[a]) min[a] = x;
      if (x > max[a]) max[a] = x;
    }
  }
  return { min, max };
}

/**
 * volumeSurface: the jittered, randomly triangulated surface-nets mesh of the source's volume at one resolution.
 * positions: Float32Array #V*3, triangles: Uint32Array #T*3 (the source), resolution: voxels along the longest side,
 * seed: integer → { positions Float32Array #V'*3, triangles Uint32Array #T'*3 (closed, outward), voxelSize }.
 */
export function volumeSurface(positions: Float32Array, triangles: Uint32Array, resolution: number, seed: number): { positions: Float32Array; triangles: Uint32Array; voxelSize: number } {
  const { min, max } = boundingBox(positions);
  const grid = gridOverBox(min, max, resolution, padVoxels());
  const band = BAND_VOXELS * grid.size;
  const offset = OFFSET_VOXELS * grid.size;
  const distance = distanceBand(positions, triangles, grid, band);
  const near = new Uint8Array(distance.length);
  const nearLevel = quantisedBelow(offset, band);
  for (let v = 0; v < near.length; v++) near[v] = distance[v] < nearLevel ? 1 : 0;
  const solid = fillInterior(near, grid);
  makeWellComposed(solid, distance, grid);
  const mesh = meshVolumeBorder(solid, distance, grid, band, offset, seed);
  return { ...mesh, voxelSize: grid.size };
}

/** Quantisation of distances in [0, band) to 0..254; 255 stands for "band or more". */
const LEVELS = 255;

/** The distance a quantised level stands for (the middle of its step). */
function levelDistance(level: number, band: number): number {
  return level >= LEVELS ? band : ((level + 0.5) * band) / LEVELS;
}

/** The smallest level whose distance is ≥ d: levels below it stand for distances < d. */
function quantisedBelow(d: number, band: number): number {
  let level = Math.max(0, Math.floor((d / band) * LEVELS - 0.5));
  while (level < LEVELS && levelDistance(level, band) < d) level++;
  return level;
}

/**
 * Unsigned distance from each voxel centre to the nearest source triangle, within `band`.
 * positions #V*3, triangles #T*3, grid, band → Uint8Array #voxels of levels (levelDistance reads them; 255 = ≥ band).
 * Each triangle visits only the voxels whose centres lie within `band` of its plane: per column along the axis its
 * normal is closest to, a short run around the plane's height.
 */
function distanceBand(positions: Float32Array, triangles: Uint32Array, g: VoxelGrid, band: number): Uint8Array {
  const [nx, ny, nz] = g.dims;
  const h = g.size;
  const distance = new Uint8Array(nx * ny * nz).fill(LEVELS);
  const stride = [1, nx, nx * ny];
  const toLevel = LEVELS / band;
  const p = [0, 0, 0];
  for (let t = 0; t < triangles.length; t += 3) {
    const a = triangles[t] * 3, b = triangles[t + 1] * 3, c = triangles[t + 2] * 3;
    const ax = positions[a], ay = positions[a + 1], az = positions[a + 2];
    const bx = positions[b], by = positions[b + 1], bz = positions[b + 2];
    const cx = positions[c], cy = positions[c + 1], cz = positions[c + 2];
    const ex = bx - ax, ey = by - ay, ez = bz - az, fx = cx - ax, fy = cy - ay, fz = cz - az;
    const n = [ey * fz - ez * fy, ez * fx - ex * fz, ex * fy - ey * fx];
    const nl = Math.hypot(n[0], n[1], n[2]);
    if (!(nl > 0)) continue;
    const w = Math.abs(n[0]) >= Math.abs(n[1]) && Math.abs(n[0]) >= Math.abs(n[2]) ? 0 : Math.abs(n[1]) >= Math.abs(n[2]) ? 1 : 2;
    const u = (w + 1) % 3, v = (w + 2) % 3;
    const corner = [ax, ay, az];
    const lo = [Math.min(ax, bx, cx), Math.min(ay, by, cy), Math.min(az, bz, cz)];
    const hi = [Math.max(ax, bx, cx), Math.max(ay, by, cy), Math.max(az, bz, cz)];
    const first = (axis: number, x: number) => Math.max(0, Math.ceil((x - g.origin[axis]) / h - 0.5));
    const last = (axis: number, x: number) => Math.min(g.dims[axis] - 1, Math.floor((x - g.origin[axis]) / h - 0.5));
    const halfRun = band / (Math.abs(n[w]) / nl);
    for (let iu = first(u, lo[u] - band); iu <= last(u, hi[u] + band); iu++) {
      const cu = g.origin[u] + (iu + 0.5) * h;
      for (let iv = first(v, lo[v] - band); iv <= last(v, hi[v] + band); iv++) {
        const cv = g.origin[v] + (iv + 0.5) * h;
        const w0 = corner[w] - (n[u] * (cu - corner[u]) + n[v] * (cv - corner[v])) / n[w];
        const iw0 = first(w, Math.max(w0 - halfRun, lo[w] - band));
        const iw1 = last(w, Math.min(w0 + halfRun, hi[w] + band));
        p[u] = cu;
        p[v] = cv;
        for (let iw = iw0; iw <= iw1; iw++) {
          p[w] = g.origin[w] + (iw + 0.5) * h;
          const d2 = pointTriangleDistanceSquared(p[0], p[1], p[2], ax, ay, az, bx, by, bz, cx, cy, cz);
          if (d2 >= band * band) continue;
          const level = Math.floor(Math.sqrt(d2) * toLevel);
          const idx = iu * stride[u] + iv * stride[v] + iw * stride[w];
          if (level < distance[idx]) distance[idx] = level;
        }
      }
    }
  }
  return distance;
}

/** Corner c of a 2×2×2 block of voxels sits at offset (c & 1, c >> 1 & 1, c >> 2 & 1). */
const BLOCK_FACES: number[][] = (() => {
  const faces: number[][] = [];
  for (let axis = 0; axis < 3; axis++) {
    const p = 1 << ((axis + 1) % 3), q = 1 << ((axis + 2) % 3);
    for (const side of [0, 1 << axis]) faces.push([side, side | p, side | p | q, side | q]);
  }
  return faces;
})();

/**
 * For each inside-pattern of a 2×2×2 block (bit c set when corner c is inside), the outside corners whose filling
 * removes a critical configuration (a face with diagonal corners alike and the others unlike, or two opposite corners
 * alone on their side); 0 when the block is not critical. Binary volumes without critical blocks ("well-composed")
 * have manifold borders, so surface nets over them gives a manifold mesh.
 */
const CRITICAL_FILL: Uint8Array = (() => {
  const table = new Uint8Array(256);
  const count = (m: number) => { let n = 0; for (let c = 0; c < 8; c++) n += (m >> c) & 1; return n; };
  for (let mask = 0; mask < 256; mask++) {
    let fill = 0;
    for (const [a, b, c, d] of BLOCK_FACES) {
      const ia = (mask >> a) & 1, ib = (mask >> b) & 1, ic = (mask >> c) & 1, id = (mask >> d) & 1;
      if (ia === ic && ib === id && ia !== ib) fill |= ia ? (1 << b) | (1 << d) : (1 << a) | (1 << c);
    }
    for (let c = 0; c < 4; c++) {
      const pair = (1 << c) | (1 << (7 - c));
      if (mask === pair) fill |= ~mask & 255;
      if ((~mask & 255) === pair) fill |= pair;
    }
    table[mask] = count(mask) === 0 || count(mask) === 8 ? 0 : fill;
  }
  return table;
})();

/**
 * Fills outside voxels (nearest to the source first) until no 2×2×2 block is critical.
 * solid: Uint8Array #voxels (0 outside, else inside; filled voxels become 2), distance: levels #voxels (distanceBand).
 */
function makeWellComposed(solid: Uint8Array, distance: Uint8Array, g: VoxelGrid): void {
  const [nx, ny, nz] = g.dims;
  const sz = nx * ny;
  const cornerOffset = Array.from({ length: 8 }, (_, c) => (c & 1) + ((c >> 1) & 1) * nx + ((c >> 2) & 1) * sz);
  let kFrom = 0, kTo = nz - 2;
  while (kFrom <= kTo) {
    let changedFrom = nz, changedTo = -1;
    for (let k = kFrom; k <= kTo; k++) {
      for (let j = 0; j < ny - 1; j++) {
        for (let i = 0; i < nx - 1; i++) {
          const v0 = k * sz + j * nx + i;
          let mask = 0;
          for (let c = 0; c < 8; c++) if (solid[v0 + cornerOffset[c]]) mask |= 1 << c;
          const fill = CRITICAL_FILL[mask];
          if (fill === 0) continue;
          let best = -1;
          for (let c = 0; c < 8; c++) {
            if (((fill >> c) & 1) && (best < 0 || distance[v0 + cornerOffset[c]] < distance[v0 + cornerOffset[best]])) best = c;
          }
          solid[v0 + cornerOffset[best]] = 2;
          const kc = k + ((best >> 2) & 1);
          changedFrom = Math.min(changedFrom, kc);
          changedTo = Math.max(changedTo, kc);
        }
      }
    }
    // a filled voxel can make blocks critical in the layers of blocks that contain it: those sharing its layer
    kFrom = Math.max(0, changedFrom - 1);
    kTo = Math.min(nz - 2, changedTo);
  }
}

/** A 32-bit generator (a Weyl sequence through an integer finaliser): uniform numbers in [0, 1), fixed by the seed. */
function randomSource(seed: number, stream: number): () => number {
  let state = (Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(stream + 1, 0x85ebca77)) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
    x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
    return ((x ^ (x >>> 16)) >>> 0) / 4294967296;
  };
}

/** Cell-edge k of a 2×2×2 block joins corners CELL_EDGES[2k] and CELL_EDGES[2k + 1]. */
const CELL_EDGES = [0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3, 4, 6, 5, 7, 0, 4, 1, 5, 2, 6, 3, 7];

/**
 * Surface nets over the voxel centres: one vertex per cell (2×2×2 block of centres) the border crosses, one quad per
 * pair of neighbouring centres on opposite sides, split along a random diagonal. The field at a centre is its distance
 * minus the offset, negative inside: vertices land on the offset level set, then slide randomly in their tangent plane.
 * Cell layers are visited along z keeping two layers of vertex ids, so memory follows the surface, not the grid.
 * solid, distance: #voxels (makeWellComposed's output, distanceBand's levels), band, offset: lengths, seed →
 * { positions Float32Array #V*3, triangles Uint32Array #T*3 wound outwards }
 */
function meshVolumeBorder(solid: Uint8Array, distance: Uint8Array, g: VoxelGrid, band: number, offset: number, seed: number): { positions: Float32Array; triangles: Uint32Array } {
  const [nx, ny, nz] = g.dims;
  const h = g.size;
  const sz = nx * ny;
  const cx = nx - 1, cy = ny - 1, cz = nz - 1;
  const random = randomSource(seed, 1);
  const margin = 0.02;
  // f: negative inside, never 0, so that every crossing lies strictly inside its cell edge
  const field = (v: number): number => {
    const d = levelDistance(distance[v], band) - offset;
    if (solid[v] === 0) return Math.max(d, 0.01 * h);
    if (solid[v] === 2) return -0.05 * h;
    return d < 0 ? Math.min(d, -0.01 * h) : -h;
  };
  const cornerOffset = Array.from({ length: 8 }, (_, c) => (c & 1) + ((c >> 1) & 1) * nx + ((c >> 2) & 1) * sz);
  let positions = new Float32Array(3 * 4096);
  let vertexCount = 0;
  let triangles = new Uint32Array(3 * 8192);
  let triangleCount = 0;
  const f = new Float64Array(8);
  const cell = (i: number, j: number) => j * cx + i;
  let previous = new Int32Array(cx * cy).fill(-1);
  let current = new Int32Array(cx * cy).fill(-1);

  const addVertex = (x: number, y: number, z: number) => {
    if (vertexCount * 3 + 3 > positions.length) positions = grown(positions, positions.length * 2);
    positions[vertexCount * 3] = x;
    positions[vertexCount * 3 + 1] = y;
    positions[vertexCount * 3 + 2] = z;
    return vertexCount++;
  };
  const addQuad = (a: number, b: number, c: number, d: number, outwardForward: boolean) => {
    if (!outwardForward) { const t = a; a = d; d = t; const u = b; b = c; c = u; }
    if (triangleCount * 3 + 6 > triangles.length) triangles = grown(triangles, triangles.length * 2);
    const o = triangleCount * 3;
    if (random() < 0.5) triangles.set([a, b, c, a, c, d], o);
    else triangles.set([a, b, d, b, c, d], o);
    triangleCount += 2;
  };

  for (let k = 0; k < cz; k++) {
    current.fill(-1);
    for (let j = 0; j < cy; j++) {
      for (let i = 0; i < cx; i++) {
        const v0 = k * sz + j * nx + i;
        let inside = 0;
        for (let c = 0; c < 8; c++) if (solid[v0 + cornerOffset[c]]) inside++;
        if (inside === 0 || inside === 8) continue;
        for (let c = 0; c < 8; c++) f[c] = field(v0 + cornerOffset[c]);
        let sx = 0, sy = 0, sz2 = 0, crossings = 0;
        for (let e = 0; e < 24; e += 2) {
          const a = CELL_EDGES[e], b = CELL_EDGES[e + 1];
          if (f[a] < 0 === f[b] < 0) continue;
          const t = f[a] / (f[a] - f[b]);
          sx += (a & 1) + t * ((b & 1) - (a & 1));
          sy += ((a >> 1) & 1) + t * (((b >> 1) & 1) - ((a >> 1) & 1));
          sz2 += ((a >> 2) & 1) + t * (((b >> 2) & 1) - ((a >> 2) & 1));
          crossings++;
        }
        let lx = sx / crossings, ly = sy / crossings, lz = sz2 / crossings;
        // the field's gradient is the normal; slide in the plane across it
        const gx = f[1] - f[0] + f[3] - f[2] + f[5] - f[4] + f[7] - f[6];
        const gy = f[2] - f[0] + f[3] - f[1] + f[6] - f[4] + f[7] - f[5];
        const gz = f[4] - f[0] + f[5] - f[1] + f[6] - f[2] + f[7] - f[3];
        const radius = JITTER_VOXELS * Math.sqrt(random());
        const angle = 2 * Math.PI * random();
        const gl = Math.hypot(gx, gy, gz);
        if (gl > 0) {
          const nxn = gx / gl, nyn = gy / gl, nzn = gz / gl;
          // a tangent: the normal crossed with the axis it is least aligned with
          let t1x: number, t1y: number, t1z: number;
          if (Math.abs(nxn) <= Math.abs(nyn) && Math.abs(nxn) <= Math.abs(nzn)) { t1x = 0; t1y = nzn; t1z = -nyn; }
          else if (Math.abs(nyn) <= Math.abs(nzn)) { t1x = -nzn; t1y = 0; t1z = nxn; }
          else { t1x = nyn; t1y = -nxn; t1z = 0; }
          const tl = Math.hypot(t1x, t1y, t1z);
          t1x /= tl; t1y /= tl; t1z /= tl;
          const t2x = nyn * t1z - nzn * t1y, t2y = nzn * t1x - nxn * t1z, t2z = nxn * t1y - nyn * t1x;
          const cu = radius * Math.cos(angle), cv = radius * Math.sin(angle);
          lx += cu * t1x + cv * t2x;
          ly += cu * t1y + cv * t2y;
          lz += cu * t1z + cv * t2z;
        }
        // staying inside the cell keeps every vertex apart from every other: no triangle collapses
        lx = Math.min(Math.max(lx, margin), 1 - margin);
        ly = Math.min(Math.max(ly, margin), 1 - margin);
        lz = Math.min(Math.max(lz, margin), 1 - margin);
        current[j * cx + i] = addVertex(
          g.origin[0] + (i + 0.5 + lx) * h,
          g.origin[1] + (j + 0.5 + ly) * h,
          g.origin[2] + (k + 0.5 + lz) * h,
        );
      }
    }
    // quads around the grid edges whose four cells lie in layers k-1 and k (x, y edges) or in layer k (z edges)
    for (let j = 0; j < cy; j++) {
      for (let i = 0; i < cx; i++) {
        const v = k * sz + j * nx + i;
        const here = solid[v] !== 0;
        if (k > 0 && j > 0 && here !== (solid[v + 1] !== 0)) {
          // edge along x: cells (i, j-1..j, k-1..k), in y-then-z order the quad faces +x
          addQuad(previous[cell(i, j - 1)], previous[cell(i, j)], current[cell(i, j)], current[cell(i, j - 1)], here);
        }
        if (k > 0 && i > 0 && here !== (solid[v + nx] !== 0)) {
          // edge along y: cells (i-1..i, j, k-1..k), in z-then-x order the quad faces +y
          addQuad(previous[cell(i - 1, j)], current[cell(i - 1, j)], current[cell(i, j)], previous[cell(i, j)], here);
        }
        if (i > 0 && j > 0 && here !== (solid[v + sz] !== 0)) {
          // edge along z: cells (i-1..i, j-1..j, k), in x-then-y order the quad faces +z
          addQuad(current[cell(i - 1, j - 1)], current[cell(i, j - 1)], current[cell(i, j)], current[cell(i - 1, j)], here);
        }
      }
    }
    const t = previous;
    previous = current;
    current = t;
  }
  return { positions: positions.slice(0, vertexCount * 3), triangles: triangles.slice(0, triangleCount * 3) };
}

function grown<T extends Float32Array | Uint32Array>(array: T, length: number): T {
  const bigger = new (array.constructor as { new (n: number): T })(length);
  bigger.set(array);
  return bigger;
}

/**
 * Splits `count` edges (at most one per triangle), chosen at random, each at a random point of its middle 40%:
 * both triangles of the edge become two, so valences and triangle shapes vary as in marching-cubes output.
 * positions #V*3, triangles #T*3 (closed, consistently wound) → positions #(V+S)*3, triangles #(T+2S)*3, S ≤ count.
 */
export function splitRandomEdges(positions: Float32Array, triangles: Uint32Array, count: number, seed: number): { positions: Float32Array; triangles: Uint32Array } {
  const random = randomSource(seed, 2);
  const vertexCount = positions.length / 3;
  const triangleCount = triangles.length / 3;
  // half-edge 3t+e runs from corner e to corner e+1 of triangle t; its twin runs back, found via its start's list
  const firstOut = new Uint32Array(vertexCount + 1);
  for (let h = 0; h < triangles.length; h++) firstOut[triangles[h] + 1]++;
  for (let v = 0; v < vertexCount; v++) firstOut[v + 1] += firstOut[v];
  const outgoing = new Uint32Array(triangles.length);
  const fillAt = firstOut.slice(0, vertexCount);
  for (let h = 0; h < triangles.length; h++) outgoing[fillAt[triangles[h]]++] = h;
  const next = (h: number) => (h % 3 === 2 ? h - 2 : h + 1);
  const twin = (h: number) => {
    const from = triangles[h], to = triangles[next(h)];
    for (let s = firstOut[to]; s < firstOut[to + 1]; s++) if (triangles[next(outgoing[s])] === from) return outgoing[s];
    return -1;
  };

  const order = new Uint32Array(triangleCount);
  for (let t = 0; t < triangleCount; t++) order[t] = t;
  for (let t = triangleCount - 1; t > 0; t--) {
    const s = Math.floor(random() * (t + 1));
    const x = order[t]; order[t] = order[s]; order[s] = x;
  }
  const taken = new Uint8Array(triangleCount);
  const chosen: number[] = [];
  for (let n = 0; n < triangleCount && chosen.length < count; n++) {
    const t = order[n];
    if (taken[t]) continue;
    const start = Math.floor(random() * 3);
    for (let e = 0; e < 3; e++) {
      const h = 3 * t + ((start + e) % 3);
      const w = twin(h);
      if (w < 0 || taken[Math.floor(w / 3)]) continue;
      taken[t] = 1;
      taken[Math.floor(w / 3)] = 1;
      chosen.push(h);
      break;
    }
  }

  const outPositions = new Float32Array((vertexCount + chosen.length) * 3);
  outPositions.set(positions);
  const outTriangles = new Uint32Array(triangles.length + chosen.length * 6);
  outTriangles.set(triangles);
  let tail = triangleCount;
  chosen.forEach((h, n) => {
    const m = vertexCount + n;
    const a = triangles[h], b = triangles[next(h)];
    const s = 0.3 + 0.4 * random();
    for (let x = 0; x < 3; x++) outPositions[m * 3 + x] = positions[a * 3 + x] + s * (positions[b * 3 + x] - positions[a * 3 + x]);
    // triangle (a, b, c) becomes (a, m, c) + (m, b, c); its twin (b, a, d) becomes (b, m, d) + (m, a, d)
    for (const half of [h, twin(h)]) {
      const t = Math.floor(half / 3);
      const from = triangles[half], to = triangles[next(half)], opposite = triangles[next(next(half))];
      outTriangles.set([from, m, opposite], 3 * t);
      outTriangles.set([m, to, opposite], 3 * tail++);
    }
  });
  return { positions: outPositions, triangles: outTriangles };
}
