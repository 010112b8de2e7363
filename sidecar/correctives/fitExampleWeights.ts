/**
 * Per-character pose-dependent weights fitted to posed examples (issue 7: "as VINECS fits one subject from multi-view
 * video"). The user's examples are posed surfaces of any topology (sculpted shape keys, imported posed meshes), each
 * with the pose it shows; the fit corrects a base weight function (the generic field's weights at the pose, or the
 * static weights when there is no model) so that skinning the rest mesh at each example's pose reaches its surface.
 *
 * The correction, per vertex v and static slot s (joint j_s):
 *   w_vs(θ) = base_vs(θ) · exp(a_vs · r_{j_s}(θ)) / Σ_t base_vt(θ) · exp(a_vt · r_{j_t}(θ))
 * that is softmax_s(log base_vs + a_vs · r_s), with r_j(θ) the axis·angle vector of joint j's own turn relative to its
 * parent (poseTransforms' rotation R_j, read in the rest pose's world axes; any fixed frame gives the same family, a
 * only rotates with it) and zero for a root, whose turn is the whole body's orientation. a: #V*4*3. a = 0 is the base
 * exactly, so the rest pose (every r = 0) and a fit without examples give the base back. Only the vertex's four static
 * slots ever carry weight (locality), and a slot the base gives no weight never gains any.
 *
 * The fit (ICP): each iteration poses the rest mesh at every example's pose with the current weights (linear or
 * dual-quaternion blend), pairs each vertex whose position the weights move with its closest point on the example
 * (vertex → surface) and each example point near them with its closest point on the posed mesh (surface → posed
 * surface, so the fit is a Chamfer, not one-sided), linearises the posed positions in a (∂p_v/∂z_vs = w_vs ∂p_v/∂w_vs
 * for the softmax logit z, which is w_vs (T_s x_v − p_v) for LBS; a central difference for DQS), and takes one damped
 * Gauss-Newton step by block Gauss-Seidel sweeps over the vertices, with the regularisers:
 *  - Laplacian smoothness of a over the mesh's edges, joint by joint (a neighbour's parameters for the same joint; a
 *    joint the neighbour lacks counts as 0, so the correction fades where the joint's influence ends);
 *  - an L2 pull of a to 0 (where the examples say nothing, the base stands);
 *  - rigid regions (largest static weight ≥ RIGID_WEIGHT) kept at the base (a = 0 there, which the smoothness also
 *    reads as a boundary).
 * Distances are measured in mean rest edge lengths, so the regulariser weights do not depend on the character's units.
 */
import { Vector3 } from 'three';
import type { HitPointInfo } from 'three-mesh-bvh';
import { jointDualQuaternions, dualQuaternionSkinning } from '../deform/dualQuaternionSkinning.js';
import { linearBlendSkinning, poseTransforms, type RestSkeleton } from '../deform/linearBlendSkinning.js';
import { AutoRigError } from '../errors.js';
import { barycentric } from '../geometry/barycentric.js';
import { closestSurface, type ClosestSurface } from '../geometry/closestSurface.js';
import type { FieldBlend, StaticSlots } from './poseDependentWeights.js';
import { rotationVector, SLOTS } from './poseFeatures.js';

/**
 * A vertex whose largest static weight reaches this is rigid: it keeps the base weights at every pose. 0.999 (the
 * field's training uses the same): with 0.99 the thigh's and buttock's vertices of 0.99–0.999 could not follow a
 * 90° hip flex (eval correctives, procedural 9 200 001: Chamfer near the hip 0.290 with 0.99, 0.241 with 0.999).
 */
export const RIGID_WEIGHT = 0.999;
/** Parameters per slot: the turn vector's three components. */
export const PARAMS_PER_SLOT = 3;
const PARAMS = SLOTS * PARAMS_PER_SLOT;

/** One posed example: the pose it shows and its surface (any topology, the rest mesh's space and units). */
export interface PosedExample {
  /** Float64Array #J*9, per-joint rotations (poseTransforms' convention: local turns in world axes, relative to rest) */
  rotations: Float64Array;
  /** Float32Array #V*4, the base weights at this pose over the static slots (the field's, or slots.weights) */
  baseWeights: Float32Array;
  /** the example surface: positions Float32Array #P*3, triangles Uint32Array #T*3 (no correspondence with the rest mesh) */
  target: { positions: Float32Array; triangles: Uint32Array };
}

export interface ExampleFitOptions {
  /** how the weights pose the vertices in the fit (and should at use): default 'dualQuaternion' */
  blend?: FieldBlend;
  /** ICP iterations (correspondences found again each time); default 30 */
  iterations?: number;
  /** block Gauss-Seidel sweeps per iteration; default 8 */
  sweeps?: number;
  /** weight of the Laplacian smoothness per edge and joint; default 0.3 */
  smoothness?: number;
  /** weight of the L2 pull of a to 0; default 1e-3 */
  shrink?: number;
  /** Levenberg damping towards the previous iteration's a; default 0.05 */
  damping?: number;
  /** a vertex whose largest static weight reaches this keeps the base weights; default RIGID_WEIGHT */
  rigidWeight?: number;
  /** weight of the example → posed-surface direction against the vertex → example direction (1: a symmetric Chamfer); default 3 */
  reverseWeight?: number;
}

/** The fit's per-iteration distances (mean, in the rest mesh's units) over the pairs it used. */
export interface FitIteration {
  /** vertices the weights move → the example surface */
  forward: number;
  /** example points near them → the posed surface */
  reverse: number;
}

export interface ExampleFit {
  /** Float32Array #V*4*3: a per vertex, slot, turn component (zero: the base) */
  params: Float32Array;
  /** iteration 0 is the base; the last is after the final step */
  history: FitIteration[];
  /** vertices kept at the base (rigid or with a single influence) */
  rigidCount: number;
  /** per example: the vertices its pose moves with the weights, and the example points pulling back on them */
  examples: { moving: number; pulling: number }[];
}

/**
 * Defaults, chosen on procedural 9 200 001 and 9 200 002 (shoulder raise and hip flex at 90° as examples, 45° held
 * out): 30 iterations (12 left the shoulder at 0.266 % of the height, 30 reach 0.074, 60 0.073), the example → posed
 * direction weighted 3 (1: 0.074 / 0.290 at shoulder / hip, 3: 0.065 / 0.274); sweeps (8 vs 24) and damping (0.05
 * vs 0.01) changed nothing measurable.
 */
const DEFAULTS = { blend: 'dualQuaternion' as FieldBlend, iterations: 30, sweeps: 8, smoothness: 0.3, shrink: 1e-3, damping: 0.05, reverseWeight: 3, rigidWeight: RIGID_WEIGHT };

/**
 * jointTurns: each joint's own turn as an axis·angle vector (radians, world axes at rest), zero for roots.
 * rotations: Float64Array #J*9 (poseTransforms' convention), parents: Int32Array #J → Float64Array #J*3.
 * Throws BAD_ARRAY when the lengths disagree.
 */
export function jointTurns(rotations: Float64Array, parents: Int32Array): Float64Array {
  const J = parents.length;
  if (rotations.length !== J * 9) throw new AutoRigError('BAD_ARRAY', `joint turns: ${J} joints need ${J * 9} rotation numbers, got ${rotations.length}`);
  const out = new Float64Array(J * 3);
  for (let j = 0; j < J; j++) if (parents[j] >= 0) out.set(rotationVector(rotations, j * 9), j * 3);
  return out;
}

/**
 * fittedWeights: the fitted weights at a pose.
 * slots: StaticSlots (#V*4), params: Float32Array #V*4*3 (ExampleFit.params), parents: Int32Array #J, rotations:
 * Float64Array #J*9, baseWeights: Float32Array #V*4 (the base at this pose) → Float32Array #V*4, rows sum to 1 where
 * the base's do (a row whose correction is zero is the base row exactly). Throws BAD_ARRAY / BAD_INDEX / BAD_NUMBER.
 */
export function fittedWeights(slots: StaticSlots, params: Float32Array, parents: Int32Array, rotations: Float64Array, baseWeights: Float32Array): Float32Array {
  const V = slots.indices.length / SLOTS;
  checkSlots(slots, V, parents.length);
  if (params.length !== V * PARAMS) throw new AutoRigError('BAD_ARRAY', `fitted weights: params want ${V * PARAMS} numbers, got ${params.length}`);
  if (!params.every(Number.isFinite)) throw new AutoRigError('BAD_NUMBER', 'fitted weights: params hold NaN or infinite values');
  checkBase(baseWeights, V, 'fitted weights');
  const turns = jointTurns(rotations, parents);
  const out = new Float32Array(V * SLOTS);
  const row = new Float64Array(SLOTS);
  for (let v = 0; v < V; v++) {
    if (!logitsAt(v, slots, params, turns, row)) { out.set(baseWeights.subarray(v * SLOTS, v * SLOTS + SLOTS), v * SLOTS); continue; }
    softmaxRow(baseWeights, v, row);
    for (let s = 0; s < SLOTS; s++) out[v * SLOTS + s] = row[s];
  }
  return out;
}

/**
 * fittedDeformation: the rest mesh skinned at a pose with the fitted weights.
 * rest: Float32Array #V*3, slots: StaticSlots, params: Float32Array #V*4*3, skeleton: RestSkeleton (heads #J*3,
 * parents #J), rotations: Float64Array #J*9, baseWeights: Float32Array #V*4 (the base at this pose), blend
 * → posed positions Float32Array #V*3. Throws as fittedWeights and the skinning.
 */
export function fittedDeformation(
  rest: Float32Array, slots: StaticSlots, params: Float32Array, skeleton: RestSkeleton, rotations: Float64Array, baseWeights: Float32Array,
  blend: FieldBlend,
): Float32Array {
  const weights = fittedWeights(slots, params, skeleton.parents, rotations, baseWeights);
  const transforms = poseTransforms(skeleton.heads, skeleton.parents, rotations);
  return (blend === 'linear' ? linearBlendSkinning : dualQuaternionSkinning)(rest, slots.indices, weights, SLOTS, transforms);
}

/** z_vs = a_vs · r_{j_s} into row #4; false when every logit is zero (the row is the base's). */
function logitsAt(v: number, slots: StaticSlots, params: ArrayLike<number>, turns: Float64Array, row: Float64Array): boolean {
  let any = false;
  for (let s = 0; s < SLOTS; s++) {
    const i = v * SLOTS + s;
    const j = slots.indices[i] * 3, o = i * PARAMS_PER_SLOT;
    const z = slots.weights[i] > 0 ? params[o] * turns[j] + params[o + 1] * turns[j + 1] + params[o + 2] * turns[j + 2] : 0;
    row[s] = z;
    if (z !== 0) any = true;
  }
  return any;
}

/** row (logits) ← softmax(log base + logits) over the vertex's slots; a slot the base gives nothing stays 0. */
function softmaxRow(base: Float32Array, v: number, row: Float64Array): void {
  let top = -Infinity;
  for (let s = 0; s < SLOTS; s++) if (base[v * SLOTS + s] > 0) top = Math.max(top, row[s]);
  let sum = 0, baseSum = 0;
  for (let s = 0; s < SLOTS; s++) {
    const b = base[v * SLOTS + s];
    row[s] = b > 0 ? b * Math.exp(row[s] - top) : 0;
    sum += row[s];
    baseSum += b > 0 ? b : 0;
  }
  // keep the base row's own sum (1 for a partition of unity; 0 stays 0)
  for (let s = 0; s < SLOTS; s++) row[s] = sum > 0 ? (row[s] / sum) * baseSum : 0;
}

function checkSlots(slots: StaticSlots, V: number, J: number): void {
  if (!Number.isInteger(V) || slots.weights.length !== V * SLOTS) {
    throw new AutoRigError('BAD_ARRAY', `static slots: ${slots.indices.length} indices and ${slots.weights.length} weights are not rows of ${SLOTS}`);
  }
  for (let i = 0; i < slots.indices.length; i++) {
    if (!(slots.weights[i] >= 0)) throw new AutoRigError('BAD_NUMBER', `static slots: weight ${i} is ${slots.weights[i]}`);
    if (slots.weights[i] > 0 && slots.indices[i] >= J) throw new AutoRigError('BAD_INDEX', `static slots: vertex ${Math.floor(i / SLOTS)} names joint ${slots.indices[i]}, the skeleton has ${J}`);
  }
}

function checkBase(base: Float32Array, V: number, caller: string): void {
  if (base.length !== V * SLOTS) throw new AutoRigError('BAD_ARRAY', `${caller}: base weights want ${V * SLOTS} numbers, got ${base.length}`);
  for (let i = 0; i < base.length; i++) if (!(base[i] >= 0) || base[i] === Infinity) throw new AutoRigError('BAD_NUMBER', `${caller}: base weight ${i} is ${base[i]}`);
}

function checkMesh(positions: Float32Array, triangles: Uint32Array, what: string): void {
  if (positions.length % 3 !== 0 || triangles.length % 3 !== 0) throw new AutoRigError('BAD_ARRAY', `${what}: positions or triangles do not hold whole triples`);
  if (triangles.length === 0 || positions.length === 0) throw new AutoRigError('EMPTY_MESH', `${what} has no triangles`);
  if (!positions.every(Number.isFinite)) throw new AutoRigError('BAD_NUMBER', `${what}: positions hold NaN or infinite values`);
  const V = positions.length / 3;
  for (let i = 0; i < triangles.length; i++) if (triangles[i] >= V) throw new AutoRigError('BAD_INDEX', `${what}: triangle corner ${triangles[i]} outside ${V} vertices`);
}

function checkOptions(options: ExampleFitOptions): typeof DEFAULTS {
  const o = { ...DEFAULTS, ...options };
  if (o.blend !== 'linear' && o.blend !== 'dualQuaternion') throw new AutoRigError('BAD_REQUEST', `example fit: blend must be 'linear' or 'dualQuaternion', got '${String(o.blend)}'`);
  for (const key of ['iterations', 'sweeps'] as const) {
    if (!Number.isInteger(o[key]) || o[key] < 0) throw new AutoRigError('BAD_REQUEST', `example fit: ${key} must be a whole number ≥ 0, got ${o[key]}`);
  }
  for (const key of ['smoothness', 'shrink', 'damping', 'reverseWeight'] as const) {
    if (!(o[key] >= 0 && Number.isFinite(o[key]))) throw new AutoRigError('BAD_REQUEST', `example fit: ${key} must be a finite number ≥ 0, got ${o[key]}`);
  }
  if (!(o.rigidWeight > 0 && o.rigidWeight <= 1)) throw new AutoRigError('BAD_REQUEST', `example fit: rigidWeight must be in (0, 1], got ${o.rigidWeight}`);
  if (!(o.shrink + o.damping > 0)) throw new AutoRigError('BAD_REQUEST', 'example fit: shrink and damping cannot both be 0 (the step would be undetermined)');
  return o;
}

/** Per example, what stays fixed through the fit. */
interface PreparedExample {
  /** Float64Array #J*3, jointTurns at the example's pose */
  turns: Float64Array;
  /** Float64Array #J*8, the joints' dual quaternions at the pose */
  dualQuaternions: Float64Array;
  /** Float32Array #V*4, the base weights at the pose */
  base: Float32Array;
  /** Float64Array #V*4*3: T_s x_v for every valid slot (the rigid positions the linear blend mixes) */
  rigid: Float64Array;
  /** the free vertices whose posed position the weights move at this pose */
  affected: Int32Array;
  /** per vertex: its row among `affected`, or −1 */
  row: Int32Array;
  target: ClosestSurface;
  /** example points (the target's vertices) near the affected region, Float32Array #S*3 */
  samples: Float32Array;
  /** the rest mesh posed with the current weights; its BVH is refitted each iteration */
  posed: ClosestSurface;
}

/** A vertex moves with the weights at a pose when its slots' rigid positions spread more than this many edge lengths. */
const AFFECTED_SPREAD = 1e-3;
/** Example points within this many edge lengths (plus twice the base's mean distance) of a moving vertex pull on it. */
const SAMPLE_REACH = 3;
/** At most this many example points per moving vertex pull back (the reverse term); more are thinned evenly. */
const SAMPLES_PER_MOVING_VERTEX = 2;

/**
 * An example made ready for the fit: its turns, every slot's rigid position and the joints' dual quaternions, the free
 * vertices the weights move there, BVHs of its surface and of the rest mesh posed with the base, and its points near
 * the moving region.
 */
function prepareExample(
  rest: Float32Array, triangles: Uint32Array, slots: StaticSlots, skeleton: RestSkeleton, example: PosedExample, free: Int32Array,
  blend: FieldBlend, h: number,
): PreparedExample {
  const V = rest.length / 3;
  const turns = jointTurns(example.rotations, skeleton.parents);
  const transforms = poseTransforms(skeleton.heads, skeleton.parents, example.rotations);
  const rigid = new Float64Array(V * SLOTS * 3);
  const affectedList: number[] = [];
  const row = new Int32Array(V).fill(-1);
  for (let v = 0; v < V; v++) {
    const x = rest[3 * v], y = rest[3 * v + 1], z = rest[3 * v + 2];
    let spread = 0, turning = false;
    for (let s = 0; s < SLOTS; s++) {
      const i = v * SLOTS + s;
      if (!(slots.weights[i] > 0)) continue;
      const j = slots.indices[i];
      const t = j * 12;
      for (let c = 0; c < 3; c++) rigid[i * 3 + c] = transforms[t + c * 4] * x + transforms[t + c * 4 + 1] * y + transforms[t + c * 4 + 2] * z + transforms[t + c * 4 + 3];
      spread = Math.max(spread, Math.hypot(rigid[i * 3] - rigid[v * SLOTS * 3], rigid[i * 3 + 1] - rigid[v * SLOTS * 3 + 1], rigid[i * 3 + 2] - rigid[v * SLOTS * 3 + 2]));
      if (turns[j * 3] !== 0 || turns[j * 3 + 1] !== 0 || turns[j * 3 + 2] !== 0) turning = true;
    }
    if (free[v] >= 0 && turning && spread > AFFECTED_SPREAD * h) { row[v] = affectedList.length; affectedList.push(v); }
  }
  const pose = { rigid, dualQuaternions: jointDualQuaternions(transforms) };
  // the base's pose, the posed mesh's BVH over it
  const posed = new Float32Array(V * 3);
  const weights = new Float64Array(SLOTS);
  const p = new Float64Array(3);
  for (let v = 0; v < V; v++) {
    for (let s = 0; s < SLOTS; s++) weights[s] = example.baseWeights[v * SLOTS + s];
    blendVertex(rest, v, slots, weights, pose, blend, p);
    posed.set(p, 3 * v);
  }
  const ex: PreparedExample = {
    ...pose, turns, base: example.baseWeights, affected: Int32Array.from(affectedList), row,
    target: closestSurface(example.target.positions, example.target.triangles),
    samples: new Float32Array(0),
    posed: closestSurface(posed, triangles),
  };
  ex.samples = samplesNear(ex, h);
  return ex;
}

/**
 * The target's vertices within reach of the affected vertices at the base pose (a hash grid of the affected ones), at
 * most SAMPLES_PER_MOVING_VERTEX per affected vertex (an even stride through them beyond that).
 */
function samplesNear(ex: PreparedExample, h: number): Float32Array {
  if (ex.affected.length === 0) return new Float32Array(0);
  const point = new Vector3();
  const hit = { point: new Vector3(), distance: 0, faceIndex: 0 } as HitPointInfo;
  let mean = 0;
  for (const v of ex.affected) {
    point.set(ex.posed.positions[3 * v], ex.posed.positions[3 * v + 1], ex.posed.positions[3 * v + 2]);
    if (ex.target.bvh.closestPointToPoint(point, hit)) mean += hit.distance / ex.affected.length;
  }
  const reach = SAMPLE_REACH * h + 2 * mean;
  const cells = new Map<string, number[]>();
  const key = (x: number, y: number, z: number) => `${Math.floor(x / reach)},${Math.floor(y / reach)},${Math.floor(z / reach)}`;
  for (const v of ex.affected) {
    const k = key(ex.posed.positions[3 * v], ex.posed.positions[3 * v + 1], ex.posed.positions[3 * v + 2]);
    if (!cells.has(k)) cells.set(k, []);
    cells.get(k)!.push(v);
  }
  const target = ex.target.positions;
  const kept: number[] = [];
  for (let q = 0; q < target.length / 3; q++) {
    const x = target[3 * q], y = target[3 * q + 1], z = target[3 * q + 2];
    const cx = Math.floor(x / reach), cy = Math.floor(y / reach), cz = Math.floor(z / reach);
    let near = false;
    for (let i = -1; i <= 1 && !near; i++) {
      for (let j = -1; j <= 1 && !near; j++) {
        for (let k = -1; k <= 1 && !near; k++) {
          for (const v of cells.get(`${cx + i},${cy + j},${cz + k}`) ?? []) {
            const p = ex.posed.positions;
            if ((p[3 * v] - x) ** 2 + (p[3 * v + 1] - y) ** 2 + (p[3 * v + 2] - z) ** 2 <= reach * reach) { near = true; break; }
          }
        }
      }
    }
    if (near) kept.push(x, y, z);
  }
  // a dense example (a scan) would pull with far more points than there are vertices to move: an even stride through
  // them is as good a reverse term (it is a mean) at a fraction of the closest-point queries
  const cap = SAMPLES_PER_MOVING_VERTEX * ex.affected.length;
  const count = kept.length / 3;
  if (count <= cap) return Float32Array.from(kept);
  const out = new Float32Array(cap * 3);
  for (let i = 0; i < cap; i++) {
    const q = Math.floor((i * count) / cap);
    out[3 * i] = kept[3 * q]; out[3 * i + 1] = kept[3 * q + 1]; out[3 * i + 2] = kept[3 * q + 2];
  }
  return out;
}

/**
 * One vertex blended with (unnormalised) slot weights `weights` #4 at the example's pose → out #3. Linear: Σ w_s T_s x
 * / Σ w_s. Dual quaternion: as dualQuaternionSkinning (each slot's quaternion flipped to the hemisphere of the
 * strongest slot, blended, normalised by the rotation part, applied to x).
 */
function blendVertex(
  rest: Float32Array, v: number, slots: StaticSlots, weights: ArrayLike<number>, ex: Pick<PreparedExample, 'rigid' | 'dualQuaternions'>, blend: FieldBlend,
  out: Float64Array,
): void {
  let sum = 0, strongest = -1, strongestWeight = 0;
  for (let s = 0; s < SLOTS; s++) {
    const w = weights[s];
    if (!(slots.weights[v * SLOTS + s] > 0)) continue;
    sum += w;
    if (w > strongestWeight) { strongestWeight = w; strongest = s; }
  }
  if (strongest < 0 || !(sum > 0)) { out[0] = rest[3 * v]; out[1] = rest[3 * v + 1]; out[2] = rest[3 * v + 2]; return; }
  if (blend === 'linear') {
    let px = 0, py = 0, pz = 0;
    for (let s = 0; s < SLOTS; s++) {
      const i = v * SLOTS + s;
      if (!(slots.weights[i] > 0)) continue;
      px += weights[s] * ex.rigid[i * 3]; py += weights[s] * ex.rigid[i * 3 + 1]; pz += weights[s] * ex.rigid[i * 3 + 2];
    }
    out[0] = px / sum; out[1] = py / sum; out[2] = pz / sum;
    return;
  }
  const dq = ex.dualQuaternions;
  const ref = slots.indices[v * SLOTS + strongest] * 8;
  let rw = 0, rx = 0, ry = 0, rz = 0, dw = 0, dx = 0, dy = 0, dz = 0;
  for (let s = 0; s < SLOTS; s++) {
    const i = v * SLOTS + s;
    if (!(slots.weights[i] > 0)) continue;
    const b = slots.indices[i] * 8;
    let w = weights[s];
    if (dq[b] * dq[ref] + dq[b + 1] * dq[ref + 1] + dq[b + 2] * dq[ref + 2] + dq[b + 3] * dq[ref + 3] < 0) w = -w;
    rw += w * dq[b]; rx += w * dq[b + 1]; ry += w * dq[b + 2]; rz += w * dq[b + 3];
    dw += w * dq[b + 4]; dx += w * dq[b + 5]; dy += w * dq[b + 6]; dz += w * dq[b + 7];
  }
  const n = Math.hypot(rw, rx, ry, rz);
  rw /= n; rx /= n; ry /= n; rz /= n; dw /= n; dx /= n; dy /= n; dz /= n;
  const x = rest[3 * v], y = rest[3 * v + 1], z = rest[3 * v + 2];
  const cx = ry * z - rz * y + rw * x, cy = rz * x - rx * z + rw * y, cz = rx * y - ry * x + rw * z;
  out[0] = x + 2 * (ry * cz - rz * cy) + 2 * (rw * dx - dw * rx + ry * dz - rz * dy);
  out[1] = y + 2 * (rz * cx - rx * cz) + 2 * (rw * dy - dw * ry + rz * dx - rx * dz);
  out[2] = z + 2 * (rx * cy - ry * cx) + 2 * (rw * dz - dw * rz + rx * dy - ry * dx);
}

/**
 * Poses the rest mesh at one example with the current a into ex.posed (refitting its BVH) → the derivatives
 * g_vs = ∂p_v/∂z_vs of the affected vertices, in edge lengths, Float64Array #A*4*3.
 */
function poseExample(rest: Float32Array, slots: StaticSlots, params: Float64Array, ex: PreparedExample, blend: FieldBlend, h: number): Float64Array {
  const row = new Float64Array(SLOTS);
  const p = new Float64Array(3), plus = new Float64Array(3), minus = new Float64Array(3);
  const derivatives = new Float64Array(ex.affected.length * SLOTS * 3);
  // the difference step of the dual-quaternion derivative (weights are O(1))
  const eps = 1e-5;
  // only the affected vertices move with a: the others stay where prepareExample posed them with the base weights (a
  // vertex left out turns with no joint, or its slots' positions lie within AFFECTED_SPREAD of each other)
  for (const v of ex.affected) {
    if (logitsAt(v, slots, params, ex.turns, row)) softmaxRow(ex.base, v, row);
    else for (let s = 0; s < SLOTS; s++) row[s] = ex.base[v * SLOTS + s];
    blendVertex(rest, v, slots, row, ex, blend, p);
    ex.posed.positions[3 * v] = p[0]; ex.posed.positions[3 * v + 1] = p[1]; ex.posed.positions[3 * v + 2] = p[2];
    const r = ex.row[v];
    let sum = 0;
    for (let s = 0; s < SLOTS; s++) if (slots.weights[v * SLOTS + s] > 0) sum += row[s];
    for (let s = 0; s < SLOTS; s++) {
      const o = (r * SLOTS + s) * 3;
      if (!(slots.weights[v * SLOTS + s] > 0) || !(row[s] > 0)) continue;
      if (blend === 'linear') {
        // ∂p/∂z_s = ŵ_s (T_s x − p)
        const w = row[s] / sum;
        for (let c = 0; c < 3; c++) derivatives[o + c] = (w * (ex.rigid[(v * SLOTS + s) * 3 + c] - p[c])) / h;
      } else {
        // the blend is homogeneous of degree 0 in the weights, so ∂p/∂z_s = u_s ∂p/∂u_s (Euler), by central difference
        const saved = row[s];
        row[s] = saved + eps; blendVertex(rest, v, slots, row, ex, blend, plus);
        row[s] = saved - eps; blendVertex(rest, v, slots, row, ex, blend, minus);
        row[s] = saved;
        for (let c = 0; c < 3; c++) derivatives[o + c] = (saved * (plus[c] - minus[c])) / (2 * eps) / h;
      }
    }
  }
  ex.posed.bvh.refit();
  return derivatives;
}

/** Scratch for accumulate: J's columns, (slot, component) × xyz. */
const jacobian = new Float64Array(PARAMS * 3);

/**
 * Adds one residual d (edge lengths) of affected vertex v (free index f, its normal matrix's block), weighted `share`,
 * to its normal matrix and gradient.
 */
function accumulate(
  v: number, ex: PreparedExample, derivatives: Float64Array, slots: StaticSlots, f: number, block: number, share: number,
  dx: number, dy: number, dz: number, normal: Float64Array, gradient: Float64Array,
): void {
  // J (3 × 12): column (s, k) = g_s · r_{j_s}[k]
  const row = ex.row[v];
  for (let s = 0; s < SLOTS; s++) {
    const j = slots.indices[v * SLOTS + s] * 3;
    const g = (row * SLOTS + s) * 3;
    for (let k = 0; k < 3; k++) {
      const r = ex.turns[j + k];
      for (let c = 0; c < 3; c++) jacobian[(s * 3 + k) * 3 + c] = derivatives[g + c] * r;
    }
  }
  const N = block * PARAMS * PARAMS, G = f * PARAMS;
  for (let a = 0; a < PARAMS; a++) {
    const ax = jacobian[a * 3], ay = jacobian[a * 3 + 1], az = jacobian[a * 3 + 2];
    if (ax === 0 && ay === 0 && az === 0) continue;
    gradient[G + a] += share * (ax * dx + ay * dy + az * dz);
    for (let b = 0; b < PARAMS; b++) normal[N + a * PARAMS + b] += share * (ax * jacobian[b * 3] + ay * jacobian[b * 3 + 1] + az * jacobian[b * 3 + 2]);
  }
}

/** The mean length of the mesh's triangle edges (each edge counted once per triangle side). */
function meanEdgeLength(positions: Float32Array, triangles: Uint32Array): number {
  let sum = 0;
  for (let t = 0; t < triangles.length; t += 3) {
    for (let c = 0; c < 3; c++) {
      const a = triangles[t + c] * 3, b = triangles[t + ((c + 1) % 3)] * 3;
      sum += Math.hypot(positions[a] - positions[b], positions[a + 1] - positions[b + 1], positions[a + 2] - positions[b + 2]);
    }
  }
  const mean = sum / triangles.length;
  if (!(mean > 0)) throw new AutoRigError('EMPTY_MESH', 'the rest mesh has no extent (every edge has length 0)');
  return mean;
}

/**
 * The smoothness term's neighbours of every free vertex: its mesh neighbours, and per neighbour which of its slots
 * holds the joint of each of the vertex's slots (−1: the neighbour lacks it, or is rigid: that joint's a is 0 there).
 */
function slotNeighbours(triangles: Uint32Array, slots: StaticSlots, free: Int32Array, freeList: number[]) {
  const adjacency: Set<number>[] = freeList.map(() => new Set<number>());
  for (let t = 0; t < triangles.length; t += 3) {
    for (let c = 0; c < 3; c++) {
      const a = triangles[t + c], b = triangles[t + ((c + 1) % 3)];
      if (a === b) continue;
      if (free[a] >= 0) adjacency[free[a]].add(b);
      if (free[b] >= 0) adjacency[free[b]].add(a);
    }
  }
  const start = new Int32Array(freeList.length + 1);
  adjacency.forEach((set, f) => { start[f + 1] = start[f] + set.size; });
  const other = new Int32Array(start[freeList.length]);
  const map = new Int8Array(other.length * SLOTS).fill(-1);
  adjacency.forEach((set, f) => {
    const v = freeList[f];
    let n = start[f];
    for (const u of [...set].sort((x, y) => x - y)) {
      other[n] = u;
      if (free[u] >= 0) {
        for (let s = 0; s < SLOTS; s++) {
          if (!(slots.weights[v * SLOTS + s] > 0)) continue;
          for (let t = 0; t < SLOTS; t++) {
            if (slots.weights[u * SLOTS + t] > 0 && slots.indices[u * SLOTS + t] === slots.indices[v * SLOTS + s]) { map[n * SLOTS + s] = t; break; }
          }
        }
      }
      n++;
    }
  });
  return {
    degree: (f: number) => start[f + 1] - start[f],
    /** rhs[s*3+k] += weight · Σ_neighbours a_u[same joint][k] */
    addSums(f: number, params: Float64Array, weight: number, rhs: Float64Array): void {
      for (let n = start[f]; n < start[f + 1]; n++) {
        const u = other[n];
        for (let s = 0; s < SLOTS; s++) {
          const t = map[n * SLOTS + s];
          if (t < 0) continue;
          for (let k = 0; k < 3; k++) rhs[s * 3 + k] += weight * params[u * PARAMS + t * 3 + k];
        }
      }
    },
  };
}


/** In-place-free Cholesky of a symmetric positive definite n×n matrix (row-major) → its lower factor L in `out`. */
function cholesky(m: Float64Array, out: Float64Array): void {
  const n = PARAMS;
  out.fill(0);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = m[i * n + j];
      for (let k = 0; k < j; k++) sum -= out[i * n + k] * out[j * n + k];
      if (i === j) out[i * n + i] = Math.sqrt(Math.max(sum, 1e-300));
      else out[i * n + j] = sum / out[j * n + j];
    }
  }
}

/** Solves L Lᵀ x = b in place (b becomes x). */
function choleskySolve(L: Float64Array, b: Float64Array): void {
  const n = PARAMS;
  for (let i = 0; i < n; i++) {
    let sum = b[i];
    for (let k = 0; k < i; k++) sum -= L[i * n + k] * b[k];
    b[i] = sum / L[i * n + i];
  }
  for (let i = n - 1; i >= 0; i--) {
    let sum = b[i];
    for (let k = i + 1; k < n; k++) sum -= L[k * n + i] * b[k];
    b[i] = sum / L[i * n + i];
  }
}

/**
 * fitExampleWeights: the per-character correction a fitted to posed examples (design in the file comment).
 * rest: Float32Array #V*3, triangles: Uint32Array #T*3 (the rest mesh), slots: StaticSlots (#V*4, topFourSlots),
 * skeleton: RestSkeleton (heads #J*3, parents #J, parents first), examples: PosedExample[] (may be empty),
 * options, onProgress(fraction in [0, 1]) → ExampleFit. Deterministic. Throws BAD_ARRAY / BAD_INDEX / BAD_NUMBER /
 * EMPTY_MESH for inputs that do not fit together, BAD_REQUEST for bad options, BAD_SKELETON as poseTransforms.
 */
export function fitExampleWeights(
  rest: Float32Array, triangles: Uint32Array, slots: StaticSlots, skeleton: RestSkeleton, examples: PosedExample[],
  options: ExampleFitOptions = {}, onProgress: (fraction: number) => void = () => {},
): ExampleFit {
  const o = checkOptions(options);
  checkMesh(rest, triangles, 'the rest mesh');
  const V = rest.length / 3;
  const J = skeleton.parents.length;
  if (skeleton.heads.length !== J * 3) throw new AutoRigError('BAD_ARRAY', `example fit: ${J} joints need ${J * 3} head numbers, got ${skeleton.heads.length}`);
  if (slots.indices.length !== V * SLOTS) throw new AutoRigError('BAD_ARRAY', `example fit: ${V} vertices need ${V * SLOTS} slot indices, got ${slots.indices.length}`);
  checkSlots(slots, V, J);
  for (const [e, example] of examples.entries()) {
    if (example.rotations.length !== J * 9) throw new AutoRigError('BAD_ARRAY', `example ${e}: rotations want ${J * 9} numbers, got ${example.rotations.length}`);
    if (!example.rotations.every(Number.isFinite)) throw new AutoRigError('BAD_NUMBER', `example ${e}: rotations hold NaN or infinite values`);
    checkBase(example.baseWeights, V, `example ${e}`);
    checkMesh(example.target.positions, example.target.triangles, `example ${e}'s surface`);
  }

  // rigid vertices keep the base; the others are the unknowns
  const free = new Int32Array(V).fill(-1);
  const freeList: number[] = [];
  for (let v = 0; v < V; v++) {
    let top = 0, count = 0;
    for (let s = 0; s < SLOTS; s++) { const w = slots.weights[v * SLOTS + s]; top = Math.max(top, w); if (w > 0) count++; }
    if (top < o.rigidWeight && count >= 2) { free[v] = freeList.length; freeList.push(v); }
  }
  const params = new Float64Array(V * PARAMS);
  const history: FitIteration[] = [];
  let counts: ExampleFit['examples'] = examples.map(() => ({ moving: 0, pulling: 0 }));
  const done = (): ExampleFit => ({ params: Float32Array.from(params), history, rigidCount: V - freeList.length, examples: counts });
  if (examples.length === 0 || freeList.length === 0 || o.iterations === 0) { onProgress(1); return done(); }

  const h = meanEdgeLength(rest, triangles);
  const neighbours = slotNeighbours(triangles, slots, free, freeList);
  const prepared = examples.map((example) => prepareExample(rest, triangles, slots, skeleton, example, free, o.blend, h));
  counts = prepared.map((ex) => ({ moving: ex.affected.length, pulling: ex.samples.length / 3 }));
  const F = freeList.length;
  // the data terms' normal matrix (12x12) of each free vertex some example moves (its block; −1 for the others, most
  // of them, whose system is the diagonal alone) and every free vertex's gradient at the current a
  const block = new Int32Array(F).fill(-1);
  let blocks = 0;
  for (const ex of prepared) for (const v of ex.affected) if (block[free[v]] < 0) block[free[v]] = blocks++;
  const normal = new Float64Array(blocks * PARAMS * PARAMS);
  const gradient = new Float64Array(F * PARAMS);
  const previous = new Float64Array(V * PARAMS);
  const system = new Float64Array(PARAMS * PARAMS);
  const factors = new Float64Array(blocks * PARAMS * PARAMS);
  const rhs = new Float64Array(PARAMS);
  const fixedRhs = new Float64Array(F * PARAMS);
  const withData = new Uint8Array(F);
  const diagonals = new Float64Array(F);
  const point = new Vector3();
  const hit = { point: new Vector3(), distance: 0, faceIndex: 0 } as HitPointInfo;
  const bary = [0, 0, 0];
  const corners = [0, 0, 0];
  const slotValid = (v: number, s: number) => slots.weights[v * SLOTS + s] > 0;

  for (let iteration = 0; iteration <= o.iterations; iteration++) {
    normal.fill(0);
    gradient.fill(0);
    let forwardSum = 0, forwardCount = 0, reverseSum = 0, reverseCount = 0;
    for (const ex of prepared) {
      const derivatives = poseExample(rest, slots, params, ex, o.blend, h);
      // both directions weigh alike in all (a symmetric Chamfer), however many example points there are
      const forwardShare = 1;
      const reverseShare = ex.samples.length ? (o.reverseWeight * ex.affected.length) / (ex.samples.length / 3) : 0;
      // vertex → example: residual d = p_v − c in edge lengths
      for (const v of ex.affected) {
        point.set(ex.posed.positions[3 * v], ex.posed.positions[3 * v + 1], ex.posed.positions[3 * v + 2]);
        if (!ex.target.bvh.closestPointToPoint(point, hit)) continue;
        forwardSum += hit.distance; forwardCount++;
        accumulate(v, ex, derivatives, slots, free[v], block[free[v]], forwardShare,
          (point.x - hit.point.x) / h, (point.y - hit.point.y) / h, (point.z - hit.point.z) / h, normal, gradient);
      }
      // example point → posed surface: the closest point's corners each pull by their barycentric share
      for (let q = 0; q < ex.samples.length / 3; q++) {
        point.set(ex.samples[3 * q], ex.samples[3 * q + 1], ex.samples[3 * q + 2]);
        if (!ex.posed.bvh.closestPointToPoint(point, hit)) continue;
        reverseSum += hit.distance; reverseCount++;
        for (let k = 0; k < 3; k++) corners[k] = ex.posed.corners[3 * hit.faceIndex + k];
        barycentric(ex.posed.positions, corners[0], corners[1], corners[2], hit.point, bary);
        const dx = (hit.point.x - point.x) / h, dy = (hit.point.y - point.y) / h, dz = (hit.point.z - point.z) / h;
        for (let k = 0; k < 3; k++) {
          const v = corners[k];
          if (ex.row[v] < 0 || !(bary[k] > 1e-3)) continue;
          // this corner alone moving: residual d + β J δa, so β² on JᵀJ and β on Jᵀd
          accumulate(v, ex, derivatives, slots, free[v], block[free[v]], reverseShare * bary[k] * bary[k], dx / bary[k], dy / bary[k], dz / bary[k], normal, gradient);
        }
      }
    }
    history.push({ forward: forwardCount ? forwardSum / forwardCount : 0, reverse: reverseCount ? reverseSum / reverseCount : 0 });
    if (iteration === o.iterations) break;

    // one damped Gauss-Newton step: per free vertex its 12x12 system, factored once, then Gauss-Seidel sweeps
    previous.set(params);
    for (let f = 0; f < F; f++) {
      const v = freeList[f];
      const diagonal = o.smoothness * neighbours.degree(f) + o.shrink + o.damping;
      // most free vertices have no residual at any example (the examples move a few joints): their system is the
      // diagonal alone, solved by a division in the sweeps, with no factoring
      const n = block[f];
      let data = false;
      for (let r = 0; r < PARAMS && !data && n >= 0; r++) data = normal[n * PARAMS * PARAMS + r * (PARAMS + 1)] > 0;
      withData[f] = data ? 1 : 0;
      diagonals[f] = diagonal;
      if (!data) continue;
      for (let r = 0; r < PARAMS; r++) {
        for (let c = 0; c < PARAMS; c++) system[r * PARAMS + c] = normal[n * PARAMS * PARAMS + r * PARAMS + c] + (r === c ? diagonal : 0);
      }
      // a padded slot is no unknown: its rows and columns become the identity (its a stays 0)
      for (let s = 0; s < SLOTS; s++) {
        if (slotValid(v, s)) continue;
        for (let k = 0; k < 3; k++) {
          const r = s * 3 + k;
          for (let c = 0; c < PARAMS; c++) { system[r * PARAMS + c] = 0; system[c * PARAMS + r] = 0; }
          system[r * PARAMS + r] = 1;
        }
      }
      cholesky(system, factors.subarray(n * PARAMS * PARAMS, (n + 1) * PARAMS * PARAMS));
    }
    // the minimiser over a_v of |d + J(a_v − a0)|² + smoothness Σ|a_v − a_u|² + shrink |a_v|² + damping |a_v − a0|²:
    // its right-hand side without the neighbours' sums depends on a0 alone, so it is made once for all the sweeps
    for (let f = 0; f < F; f++) {
      const v = freeList[f];
      const m = block[f] * PARAMS * PARAMS;
      for (let r = 0; r < PARAMS; r++) {
        let sum = -gradient[f * PARAMS + r] + o.damping * previous[v * PARAMS + r];
        if (withData[f]) for (let c = 0; c < PARAMS; c++) sum += normal[m + r * PARAMS + c] * previous[v * PARAMS + c];
        fixedRhs[f * PARAMS + r] = sum;
      }
    }
    for (let sweep = 0; sweep < o.sweeps; sweep++) {
      for (let f = 0; f < F; f++) {
        const v = freeList[f];
        const m = block[f] * PARAMS * PARAMS;
        for (let r = 0; r < PARAMS; r++) rhs[r] = fixedRhs[f * PARAMS + r];
        neighbours.addSums(f, params, o.smoothness, rhs);
        for (let s = 0; s < SLOTS; s++) if (!slotValid(v, s)) for (let k = 0; k < 3; k++) rhs[s * 3 + k] = 0;
        if (withData[f]) choleskySolve(factors.subarray(m, m + PARAMS * PARAMS), rhs);
        else for (let r = 0; r < PARAMS; r++) rhs[r] /= diagonals[f];
        for (let r = 0; r < PARAMS; r++) params[v * PARAMS + r] = rhs[r];
      }
    }
    onProgress((iteration + 1) / o.iterations);
  }
  return done();
}
