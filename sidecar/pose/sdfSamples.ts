/**
 * Signed-distance samples of a mesh, the input of the SDF autoencoder: points near the surface (where the shape is
 * told apart) and through its bounding box, each with its signed distance to the surface, negative inside.
 *
 * The distance is to the nearest triangle and the sign comes from the generalised winding number, both read from one
 * hierarchy over the triangles (sidecar/geometry/windingNumber.ts), so the sign holds on soups: open meshes, holes, separate overlapping shells merged
 * into one mesh (winding numbers add: a point in two shells has w ≈ 2, still inside). Inside means w > 0.5.
 * Orientation matters to the winding number (a shell whose triangles face inward counts −1 inside, its inside reading
 * as outside), so the pieces wound inside out are turned first (mesh/orientPieces): a mirrored object or an
 * inward-wound export gets the samples of the same surface wound outward, bit for bit.
 *
 * The magnitude is the distance to the nearest triangle of any shell: inside two overlapping shells it is the distance
 * to the nearer wall, which may be a wall buried inside the union (a sleeve inside a jacket), not to the union's skin.
 *
 * Open sheets: a sheet that bounds nothing (a skirt, a cape) adds the share of the view it fills, seen from the
 * query, over 4π, with a jump of exactly 1 across the sheet (higher by 1 on the side its normals point away from). Inside a long skirt (an
 * open tube of radius R from −h to h: at its centre w = h/√(h²+R²)) most of the view is skirt and w > 0.5 all across
 * the gap between skirt and legs: the gap is inside, the skirt acts as the wall of a bell closed across its hem, the
 * signed distance changes sign across the skirt as across any wall, and across the hem opening (away from any
 * triangle) where w passes 0.5 it jumps from −d to +d. Around a short frill (h < R/√3, w < 0.5 at the centre) the
 * gap is outside, except for a thin lens right behind the sheet where the nearby sheet fills almost half the view
 * (R = 1, h = 0.2: inside within ~0.07 of the sheet): the frill still has a negative side, a thin one. We keep the
 * plain 0.5 threshold on purpose: it is the winding number's own reading of the volume an open surface most nearly
 * bounds, it needs no notion of parts, and it agrees with the closed case everywhere else.
 */
import { SeededRandom } from '../data/seededRandom.js';
import { AutoRigError } from '../errors.js';
import { buildWindingNumberTree, closestDistances, windingNumbers } from '../geometry/windingNumber.js';
import { hypot3 } from '../geometry/hypot3.js';
import { orientPiecesOutward } from '../mesh/orientPieces.js';

/** Winding numbers above this are inside (see the file comment on open sheets). */
export const INSIDE_WINDING_NUMBER = 0.5;
/** Default share of the samples drawn near the surface. */
export const DEFAULT_NEAR_FRACTION = 0.8;
/** Default standard deviation of the wider near-surface offsets, as a share of the bounding box diagonal. */
export const DEFAULT_NEAR_SIGMA = 0.025;
/** The narrower near-surface offsets have this much smaller a standard deviation (DeepSDF's variance ratio of 10). */
const NARROW_SIGMA_RATIO = 1 / Math.sqrt(10);
/** The uniform samples fill the bounding box grown by this share of its size on every side (10% wider overall). */
const BOX_GROWTH = 0.05;

export interface SdfSampleOptions {
  /** samples in all, a positive integer */
  count: number;
  /** share of the samples near the surface, in [0, 1]; default 0.8 */
  nearFraction?: number;
  /** standard deviation of the wider near-surface offsets as a share of the bounding box diagonal; default 0.025 */
  nearSigma?: number;
  /** seed of the random stream (an integer); the same seed gives the same samples */
  seed: number;
}

export interface SdfSamples {
  /** Float32Array #N*3: near-surface samples first (nearCount of them), then uniform ones, in the mesh's coordinates */
  points: Float32Array;
  /** Float32Array #N: signed distance to the surface at each point, negative inside */
  sdf: Float32Array;
  /** how many of the points (the first ones) were drawn near the surface: round(count × nearFraction) */
  nearCount: number;
}

/**
 * sdfSamples: positions Float32Array #V*3, triangles Uint32Array #T*3 (a soup: parts merged, open or closed),
 * options → SdfSamples. Near-surface points: area-weighted random surface points plus an isotropic Gaussian offset,
 * half of them with standard deviation nearSigma × diagonal, half with that over √10. The rest: uniform in the
 * bounding box grown by 10%. A pure function of its inputs. Throws BAD_REQUEST for bad options, BAD_ARRAY / BAD_INDEX
 * / BAD_NUMBER / EMPTY_MESH for a mesh that is not one.
 */
export function sdfSamples(positions: Float32Array, triangles: Uint32Array, options: SdfSampleOptions): SdfSamples {
  const { count, seed } = options;
  const nearFraction = options.nearFraction ?? DEFAULT_NEAR_FRACTION;
  const nearSigma = options.nearSigma ?? DEFAULT_NEAR_SIGMA;
  if (!Number.isInteger(count) || count < 1) throw new AutoRigError('BAD_REQUEST', `sdfSamples: count must be a positive integer, got ${count}`);
  if (!Number.isInteger(seed)) throw new AutoRigError('BAD_REQUEST', `sdfSamples: seed must be an integer, got ${seed}`);
  if (!(nearFraction >= 0 && nearFraction <= 1)) throw new AutoRigError('BAD_REQUEST', `sdfSamples: nearFraction must be in [0, 1], got ${nearFraction}`);
  if (!(nearSigma > 0 && Number.isFinite(nearSigma))) throw new AutoRigError('BAD_REQUEST', `sdfSamples: nearSigma must be a positive number, got ${nearSigma}`);
  checkSoup(positions, triangles);
  // the sign is the surface's, whatever the file's winding (a mirrored object, an inward-wound export)
  const wound = orientPiecesOutward(positions, triangles);

  const { min, max } = boundingBox(positions, wound);
  const diagonal = Math.hypot(max[0] - min[0], max[1] - min[1], max[2] - min[2]);
  const random = new SeededRandom(seed);
  const nearCount = Math.round(count * nearFraction);
  const points = new Float32Array(count * 3);

  const surface = surfacePoints(positions, wound, nearCount, random);
  const wide = nearSigma * diagonal;
  const narrow = wide * NARROW_SIGMA_RATIO;
  for (let i = 0; i < nearCount; i++) {
    const sigma = i % 2 === 0 ? wide : narrow;
    for (let k = 0; k < 3; k++) points[i * 3 + k] = surface[i * 3 + k] + sigma * random.normal();
  }
  for (let i = nearCount; i < count; i++) {
    for (let k = 0; k < 3; k++) {
      const grow = BOX_GROWTH * (max[k] - min[k]);
      points[i * 3 + k] = random.range(min[k] - grow, max[k] + grow);
    }
  }
  return { points, sdf: signedDistances(positions, wound, points), nearCount };
}

/**
 * signedDistances: positions Float32Array #V*3, triangles Uint32Array #T*3, queries Float32Array #Q*3 → Float32Array
 * #Q: the distance from each query to the nearest triangle, negative where the winding number is over 0.5 (inside).
 * Reads its inputs, never changes them. Throws BAD_ARRAY / BAD_INDEX / BAD_NUMBER / EMPTY_MESH as sdfSamples.
 */
export function signedDistances(positions: Float32Array, triangles: Uint32Array, queries: Float32Array): Float32Array {
  checkSoup(positions, triangles);
  if (queries.length % 3 !== 0) throw new AutoRigError('BAD_ARRAY', 'signedDistances: queries must hold whole triples');
  // one hierarchy for both halves: the distance's (its boxes) and the sign's (its moments)
  const tree = buildWindingNumberTree(positions, triangles);
  const result = closestDistances(tree, queries);
  const winding = windingNumbers(tree, queries);
  for (let q = 0; q < result.length; q++) if (winding[q] > INSIDE_WINDING_NUMBER) result[q] = -result[q];
  return result;
}

/**
 * count points on the surface, Float32Array #count*3: a triangle is drawn with probability proportional to its area
 * (binary search in the running area sum), a point in it uniformly (the square-root fold of two uniforms).
 */
function surfacePoints(positions: Float32Array, triangles: Uint32Array, count: number, random: SeededRandom): Float32Array {
  const triangleCount = triangles.length / 3;
  const runningArea = new Float64Array(triangleCount);
  let total = 0;
  for (let t = 0; t < triangleCount; t++) {
    total += triangleArea(positions, triangles[t * 3], triangles[t * 3 + 1], triangles[t * 3 + 2]);
    runningArea[t] = total;
  }
  if (!(total > 0)) throw new AutoRigError('EMPTY_MESH', 'sdfSamples: the mesh has no triangle with a non-zero area');
  const points = new Float32Array(count * 3);
  for (let i = 0; i < count; i++) {
    const target = random.next() * total;
    let lo = 0, hi = triangleCount - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (runningArea[mid] > target) hi = mid;
      else lo = mid + 1;
    }
    const a = triangles[lo * 3] * 3, b = triangles[lo * 3 + 1] * 3, c = triangles[lo * 3 + 2] * 3;
    const r1 = Math.sqrt(random.next()), r2 = random.next();
    const wa = 1 - r1, wb = r1 * (1 - r2), wc = r1 * r2;
    for (let k = 0; k < 3; k++) points[i * 3 + k] = wa * positions[a + k] + wb * positions[b + k] + wc * positions[c + k];
  }
  return points;
}

/** Area of triangle (a, b, c), vertex indices into positions #V*3. */
function triangleArea(positions: Float32Array, a: number, b: number, c: number): number {
  const ux = positions[b * 3] - positions[a * 3], uy = positions[b * 3 + 1] - positions[a * 3 + 1], uz = positions[b * 3 + 2] - positions[a * 3 + 2];
  const vx = positions[c * 3] - positions[a * 3], vy = positions[c * 3 + 1] - positions[a * 3 + 1], vz = positions[c * 3 + 2] - positions[a * 3 + 2];
  return 0.5 * hypot3(uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx);
}

/** Bounding box of the vertices the triangles use: { min: #3, max: #3 }. */
function boundingBox(positions: Float32Array, triangles: Uint32Array): { min: number[]; max: number[] } {
  const min = [Infinity, Infinity, Infinity], max = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < triangles.length; i++) {
    for (let k = 0; k < 3; k++) {
      const x = positions[triangles[i] * 3 + k];
      if (x < min[k]) min[k] = x;
      if (x > max[k]) max[k] = x;
    }
  }
  return { min, max };
}

/** Holds positions #V*3 and triangles #T*3 to being a soup: whole triples, indices in range, finite coordinates, ≥1 triangle. */
function checkSoup(positions: Float32Array, triangles: Uint32Array): void {
  if (positions.length % 3 !== 0 || triangles.length % 3 !== 0) throw new AutoRigError('BAD_ARRAY', 'positions and triangles must hold whole triples');
  if (triangles.length === 0) throw new AutoRigError('EMPTY_MESH', 'the mesh has no triangles');
  const vertexCount = positions.length / 3;
  for (let i = 0; i < triangles.length; i++) {
    if (triangles[i] >= vertexCount) throw new AutoRigError('BAD_INDEX', `triangle ${Math.floor(i / 3)} indexes vertex ${triangles[i]} of ${vertexCount}`);
  }
  for (let i = 0; i < positions.length; i++) {
    if (!Number.isFinite(positions[i])) throw new AutoRigError('BAD_NUMBER', `vertex ${Math.floor(i / 3)} has a NaN or infinite coordinate`);
  }
}
