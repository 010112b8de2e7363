/**
 * The exact posed surface of a procedural humanoid (issue 7's ground truth): every shape the character is made of is
 * moved rigidly by the bone that owns it, and the field is re-evaluated and re-meshed at the pose, so the smooth blends
 * between parts (an elbow's crease, a shoulder's armpit) are recomputed where the parts now are instead of being
 * carried along like skinned vertices. The result has its own topology (surface nets on a fresh grid): supervision
 * without vertex correspondence.
 *
 * A shape is evaluated in its bone's rest space (the point taken back by the inverse of the bone's rigid transform),
 * so squashed shapes (the torso's elliptic sections) keep their shape whatever the rotation, and the rest pose gives
 * the rest field exactly. The floor cut (flat soles) belongs to the feet: it is applied after the union in the rest
 * space of the bone owning the shape nearest the point, which at rest is the plain cut at y = 0.
 */
import { poseTransforms } from '../../deform/linearBlendSkinning.js';
import { AutoRigError } from '../../errors.js';
import { projectOntoField } from '../../geometry/projectOntoField.js';
import { MIXAMO_JOINTS, MIXAMO_PARENT_INDICES } from '../../skeleton/mixamoTemplate.js';
import type { MeshPart } from '../../types.js';
import type { HumanoidParams } from './humanoidParams.js';
import { fieldBand, type PartPlan } from './partMeshing.js';
import { planProceduralHumanoid, type ProceduralPlan } from './proceduralHumanoid.js';
import { shapeDistance, smoothUnion, type Shape } from './sdfShapes.js';

/** One shape at a pose: the shape (rest space), its bone's inverse transform and its posed bounding box. */
export interface PosedShape {
  shape: Shape;
  /** bone index into MIXAMO_JOINTS */
  bone: number;
  /** world → the shape's rest space: row-major 3x4 */
  inverse: Float64Array;
  /** posed box [minx, miny, minz, maxx, maxy, maxz], conservative (the rest box's corners moved) */
  box: Float64Array;
}

/** The re-meshed posed character: one part per plan of the character (body first), its transforms and the cell. */
export interface PosedSurface {
  parts: MeshPart[];
  /** the pose's joint transforms, Float64Array #23*12 (poseTransforms) */
  transforms: Float64Array;
  /** grid cell used (m) */
  cell: number;
}

/**
 * shapeOwners: the bone every shape of a plan moves with → Int32Array #shapes. Body shapes carry their bone; shapes
 * of items weighted rigidly to one bone (hat, eyes, teeth, a held prop) take that bone. Throws BAD_REQUEST for an item
 * that follows several bones (skirt, coat, sleeves, cape, hair, shoes): its rigid motion is not defined, so it has no
 * exact posed surface (strip it, e.g. with bareHumanoidParams).
 * plan: ProceduralPlan, part: index into plan.plans → Int32Array #plan.plans[part].shapes
 */
export function shapeOwners(plan: ProceduralPlan, part: number): Int32Array {
  const partPlan = plan.plans[part];
  return Int32Array.from(partPlan.shapes, (s, n) => {
    if (s.bone >= 0) return s.bone;
    const rule = part === 0 && plan.params.fused ? plan.items[plan.itemOfShape[n]]?.weights : partPlan.rule;
    if (rule && rule.kind === 'rigid') return rule.bone;
    const name = part === 0 && plan.params.fused ? plan.items[plan.itemOfShape[n]]?.name : partPlan.name;
    throw new AutoRigError('BAD_REQUEST', `posed surface: '${name}' follows several bones, so it has no rigid pose (strip it from the parameters)`);
  });
}

/**
 * bareHumanoidParams: the parameters without the clothing that follows several bones (skirt, coat, sleeves, cape,
 * hair, shoes); hat, eyes, teeth and a held prop stay (they are rigid). params → a new HumanoidParams.
 */
export function bareHumanoidParams(params: HumanoidParams): HumanoidParams {
  const { hat, eyes, teeth, prop } = params.clothing;
  const clothing: HumanoidParams['clothing'] = {};
  if (hat) clothing.hat = hat;
  if (eyes) clothing.eyes = eyes;
  if (teeth) clothing.teeth = teeth;
  if (prop) clothing.prop = prop;
  return { ...params, clothing };
}

/**
 * posedShapes: shapes, their owners (#S bone indices), the pose's transforms (#23*12) → PosedShape[] (same order).
 */
export function posedShapes(shapes: Shape[], owners: Int32Array, transforms: Float64Array): PosedShape[] {
  return shapes.map((shape, n) => {
    const bone = owners[n];
    const t = transforms.subarray(bone * 12, bone * 12 + 12);
    const inverse = new Float64Array(12);
    // R^T and −R^T·t
    for (let r = 0; r < 3; r++) {
      for (let c = 0; c < 3; c++) inverse[r * 4 + c] = t[c * 4 + r];
      inverse[r * 4 + 3] = -(t[r] * t[3] + t[4 + r] * t[7] + t[8 + r] * t[11]);
    }
    const box = new Float64Array([Infinity, Infinity, Infinity, -Infinity, -Infinity, -Infinity]);
    for (let corner = 0; corner < 8; corner++) {
      const x = shape.box[corner & 1 ? 3 : 0], y = shape.box[corner & 2 ? 4 : 1], z = shape.box[corner & 4 ? 5 : 2];
      for (let a = 0; a < 3; a++) {
        const v = t[a * 4] * x + t[a * 4 + 1] * y + t[a * 4 + 2] * z + t[a * 4 + 3];
        if (v < box[a]) box[a] = v;
        if (v > box[3 + a]) box[3 + a] = v;
      }
    }
    return { shape, bone, inverse, box };
  });
}

/**
 * posedFieldValue: the posed field of a shape list at (x, y, z): the smooth union, in list order, of each shape's
 * distance at the point taken to its rest space, starting from `band` and skipping shapes whose posed box is further
 * than the band; with floor, the cut −y in the rest space of the nearest shape's bone. (m, negative inside)
 */
export function posedFieldValue(shapes: PosedShape[], band: number, floor: boolean, x: number, y: number, z: number): number {
  let f = band, nearest = Infinity, floorInverse: Float64Array | null = null;
  for (const p of shapes) {
    const reach = band * p.shape.stretch, b = p.box;
    if (x < b[0] - reach || y < b[1] - reach || z < b[2] - reach || x > b[3] + reach || y > b[4] + reach || z > b[5] + reach) continue;
    const m = p.inverse;
    const d = shapeDistance(p.shape, m[0] * x + m[1] * y + m[2] * z + m[3], m[4] * x + m[5] * y + m[6] * z + m[7], m[8] * x + m[9] * y + m[10] * z + m[11]);
    f = smoothUnion(f, d, p.shape.blend);
    if (d < nearest) { nearest = d; floorInverse = m; }
  }
  if (floor && floorInverse) {
    const m = floorInverse;
    const cut = -(m[4] * x + m[5] * y + m[6] * z + m[7]);
    if (cut > f) return cut;
  }
  return f;
}

/**
 * meshPosedShapes: surface nets over the posed field of one part's shapes at grid cell `cell`, each vertex then pulled
 * onto the field by two Newton steps (each at most a third of a cell) → { positions Float32Array #V*3, triangles
 * Uint32Array #T*3 wound outwards }. Grid values are folded shape by shape in list order over each shape's posed box
 * plus its blend, as the rest mesher does, so each grid value is the same union as posedFieldValue's.
 */
export function meshPosedShapes(shapes: PosedShape[], band: number, floor: boolean, cell: number): { positions: Float32Array; triangles: Uint32Array } {
  if (!shapes.length) return { positions: new Float32Array(0), triangles: new Uint32Array(0) };
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  let maxBlend = 0;
  for (const p of shapes) {
    for (let a = 0; a < 3; a++) { lo[a] = Math.min(lo[a], p.box[a]); hi[a] = Math.max(hi[a], p.box[3 + a]); }
    maxBlend = Math.max(maxBlend, p.shape.blend);
  }
  const pad = 2 * cell + maxBlend / 4;
  const origin = lo.map((v) => v - pad);
  const n = [0, 1, 2].map((a) => Math.ceil((hi[a] + pad - origin[a]) / cell));
  const px = n[0] + 1, py = n[1] + 1, pz = n[2] + 1;
  const values = new Float32Array(px * py * pz).fill(band);
  // per grid point, the nearest shape so far (its inverse gives the floor's frame)
  const nearestShape = floor ? new Int16Array(px * py * pz).fill(-1) : null;
  const nearestDistance = floor ? new Float32Array(px * py * pz).fill(Infinity) : null;
  shapes.forEach((p, s) => {
    const r = Math.min(band, p.shape.blend + 4 * cell) * p.shape.stretch;
    const first = (a: number) => Math.max(0, Math.ceil((p.box[a] - r - origin[a]) / cell));
    const last = (a: number) => Math.min(n[a], Math.floor((p.box[3 + a] + r - origin[a]) / cell));
    const m = p.inverse, k = p.shape.blend;
    for (let kz = first(2), kz1 = last(2); kz <= kz1; kz++) {
      const z = origin[2] + kz * cell;
      for (let j = first(1), j1 = last(1); j <= j1; j++) {
        const y = origin[1] + j * cell;
        const row = px * (j + py * kz);
        for (let i = first(0), i1 = last(0); i <= i1; i++) {
          const x = origin[0] + i * cell;
          const d = shapeDistance(p.shape, m[0] * x + m[1] * y + m[2] * z + m[3], m[4] * x + m[5] * y + m[6] * z + m[7], m[8] * x + m[9] * y + m[10] * z + m[11]);
          const idx = row + i;
          values[idx] = smoothUnion(values[idx], d, k);
          if (nearestDistance && d < nearestDistance[idx]) { nearestDistance[idx] = d; nearestShape![idx] = s; }
        }
      }
    }
  });
  if (nearestShape) {
    for (let kz = 0; kz < pz; kz++) {
      for (let j = 0; j < py; j++) {
        for (let i = 0; i < px; i++) {
          const idx = i + px * (j + py * kz);
          const s = nearestShape[idx];
          if (s < 0) continue;
          const m = shapes[s].inverse;
          const x = origin[0] + i * cell, y = origin[1] + j * cell, z = origin[2] + kz * cell;
          const cut = -(m[4] * x + m[5] * y + m[6] * z + m[7]);
          if (cut > values[idx]) values[idx] = cut;
        }
      }
    }
  }
  const mesh = surfaceNetsOnGrid(values, n, origin, cell);
  const field = (x: number, y: number, z: number) => posedFieldValue(shapes, band, floor, x, y, z);
  const p = mesh.positions;
  for (let v = 0; v < p.length; v += 3) p.set(projectOntoField(field, [p[v], p[v + 1], p[v + 2]], cell), v);
  return mesh;
}

/**
 * posedPlanSurface: a character's plan, per-joint rotations (#23*9, world axes relative to rest, each joint about its
 * own rest head: poseTransforms' convention), cell (m; default the rest mesher's guess capped by the body's cap) →
 * PosedSurface: one re-meshed part per plan. Throws BAD_ARRAY for rotations of the wrong length, BAD_REQUEST for
 * clothing that follows several bones (shapeOwners).
 */
export function posedPlanSurface(plan: ProceduralPlan, rotations: Float64Array, cell?: number): PosedSurface {
  const heads = new Float64Array(MIXAMO_JOINTS.length * 3);
  plan.joints.forEach((j, i) => heads.set(j, 3 * i));
  const transforms = poseTransforms(heads, MIXAMO_PARENT_INDICES, rotations);
  const c = cell ?? Math.min(plan.cellGuess, plan.plans[0].maxCell);
  if (!(c > 0)) throw new AutoRigError('BAD_REQUEST', `posed surface: the cell must be positive, got ${c}`);
  const parts = plan.plans.map((partPlan: PartPlan, i) => {
    const posed = posedShapes(partPlan.shapes, shapeOwners(plan, i), transforms);
    const cellHere = Math.min(c, partPlan.maxCell);
    return { name: partPlan.name, ...meshPosedShapes(posed, fieldBand(partPlan.shapes, cellHere), partPlan.floor, cellHere) };
  });
  return { parts, transforms, cell: c };
}

/**
 * posedHumanoidSurface: generator parameters (or a seed: sampleHumanoidParams(seed)), rotations #23*9, cell (m) →
 * PosedSurface (see posedPlanSurface). The parameters must hold no clothing that follows several bones
 * (bareHumanoidParams).
 */
export function posedHumanoidSurface(params: HumanoidParams, rotations: Float64Array, cell?: number): PosedSurface {
  return posedPlanSurface(planProceduralHumanoid(params), rotations, cell);
}

/** The 12 edges of a grid cell as corner pairs (corner c sits at offset (c & 1, c >> 1 & 1, c >> 2 & 1)). */
const EDGES: [number, number][] = [];
for (let a = 0; a < 8; a++) for (let b = a + 1; b < 8; b++) if ([1, 2, 4].includes(a ^ b)) EDGES.push([a, b]);

/**
 * Surface nets on a dense grid of values (negative inside): values #(n0+1)(n1+1)(n2+1), x fastest, at origin + i·cell
 * → positions #V*3 (the mean of each crossed cell's edge crossings) and triangles #T*3 (two per crossed grid edge,
 * along the shorter diagonal), wound so that the values grow on their outward side.
 */
function surfaceNetsOnGrid(values: Float32Array, n: number[], origin: number[], cell: number): { positions: Float32Array; triangles: Uint32Array } {
  const [nx, ny, nz] = n;
  const px = nx + 1, py = ny + 1;
  const at = (i: number, j: number, k: number) => i + px * (j + py * k);
  const cellOf = new Int32Array(nx * ny * nz).fill(-1);
  const positions: number[] = [];
  const v = new Float64Array(8);
  const corner = [0, 1, px, px + 1, px * py, px * py + 1, px * py + px, px * py + px + 1];
  for (let k = 0; k < nz; k++) {
    for (let j = 0; j < ny; j++) {
      const row = at(0, j, k);
      for (let i = 0; i < nx; i++) {
        // most cells are all outside (or all inside): decided from their corners' signs before anything else
        const first = values[row + i] < 0;
        let mixed = false;
        for (let c = 1; c < 8 && !mixed; c++) mixed = values[row + i + corner[c]] < 0 !== first;
        if (!mixed) continue;
        let mask = 0;
        for (let c = 0; c < 8; c++) {
          v[c] = values[row + i + corner[c]];
          if (v[c] < 0) mask |= 1 << c;
        }
        let sx = 0, sy = 0, sz = 0, count = 0;
        for (const [a, b] of EDGES) {
          if (((mask >> a) & 1) === ((mask >> b) & 1)) continue;
          const t = v[a] / (v[a] - v[b]);
          sx += (a & 1) + t * ((b & 1) - (a & 1));
          sy += ((a >> 1) & 1) + t * (((b >> 1) & 1) - ((a >> 1) & 1));
          sz += ((a >> 2) & 1) + t * (((b >> 2) & 1) - ((a >> 2) & 1));
          count++;
        }
        cellOf[i + nx * (j + ny * k)] = positions.length / 3;
        positions.push(origin[0] + (i + sx / count) * cell, origin[1] + (j + sy / count) * cell, origin[2] + (k + sz / count) * cell);
      }
    }
  }
  const cellIndex = (i: number, j: number, k: number) => cellOf[i + nx * (j + ny * k)];
  const triangles: number[] = [];
  const quad = (a: number, b: number, c: number, d: number, outwardPositive: boolean) => {
    if (!outwardPositive) [a, b, c, d] = [d, c, b, a];
    const d2 = (p: number, q: number) => (positions[3 * p] - positions[3 * q]) ** 2 + (positions[3 * p + 1] - positions[3 * q + 1]) ** 2 + (positions[3 * p + 2] - positions[3 * q + 2]) ** 2;
    if (d2(a, c) <= d2(b, d)) triangles.push(a, b, c, a, c, d);
    else triangles.push(a, b, d, b, c, d);
  };
  for (let k = 0; k <= nz; k++) {
    for (let j = 0; j <= ny; j++) {
      for (let i = 0; i <= nx; i++) {
        const here = values[at(i, j, k)] < 0;
        // a crossed grid edge joins the four cells around it; quad order makes the normal point along +axis
        if (i < nx && j > 0 && k > 0 && j < ny && k < nz && here !== values[at(i + 1, j, k)] < 0) {
          quad(cellIndex(i, j - 1, k - 1), cellIndex(i, j, k - 1), cellIndex(i, j, k), cellIndex(i, j - 1, k), here);
        }
        if (j < ny && i > 0 && k > 0 && i < nx && k < nz && here !== values[at(i, j + 1, k)] < 0) {
          quad(cellIndex(i - 1, j, k - 1), cellIndex(i - 1, j, k), cellIndex(i, j, k), cellIndex(i, j, k - 1), here);
        }
        if (k < nz && i > 0 && j > 0 && i < nx && j < ny && here !== values[at(i, j, k + 1)] < 0) {
          quad(cellIndex(i - 1, j - 1, k), cellIndex(i, j - 1, k), cellIndex(i, j, k), cellIndex(i - 1, j, k), here);
        }
      }
    }
  }
  return { positions: Float32Array.from(positions), triangles: Uint32Array.from(triangles) };
}
