/**
 * Skinning weights by construction: a vertex moves with the shapes it was made from.
 *
 * Body rule. A bone's distance at a point is the smallest signed distance to the shapes it owns; Δ_b is how much
 * further bone b is than the nearest bone. Each bone has a temperature τ_b, about its own thickness (or its parent's,
 * whichever is thinner: boneTemperatures), and weights fall off as a Gaussian kernel K(Δ/τ), so they blend across each
 * joint over about a limb's thickness. The owner is soft (every nearby bone is a possible owner, by K), and a bone
 * only takes weight through owners within two steps of it in the hierarchy (a hand resting on a thigh stays a hand)
 * and only if the straight path from the point to its shape's core stays inside the body (visibility, as in bone
 * heat: an arm hanging beside the hip takes nothing from the hip). Every factor is continuous in space.
 * Clothing rule: the same blend over the bones the item follows, through the air (no visibility), at 1.5 times the
 * temperatures (cloth drapes over a joint); rigid items take one bone.
 * Left and right never mix: where a row has weight on both sides (the crotch between the thighs, the chest's midline
 * between the clavicles) the weaker side is dropped and the stronger scaled down by how close the two are, the rest
 * going to the centre bones, so the weights stay continuous across the seam; side bones also fade out just past the
 * midline.
 * Rows keep the 4 largest weights (less the fifth, so rows stay continuous where ranks swap) and sum to 1;
 * HeadTop_End owns no shape, so it is never weighted.
 */
import { MIXAMO_JOINTS, MIXAMO_PARENT_INDICES, MIXAMO_PARENTS } from '../../skeleton/mixamoTemplate.js';
import type { Vec3 } from '../../types.js';
import { shapeCorePoint, shapeDistance, type Shape } from './sdfShapes.js';
import type { ShapeField } from './shapeField.js';

export const INFLUENCES = 4;
const J = MIXAMO_JOINTS.length;

/** -1 right, 0 centre, +1 left, per joint. */
export const JOINT_SIDE: Int8Array = Int8Array.from(MIXAMO_JOINTS, (n) => (n.startsWith('Left') ? 1 : n.startsWith('Right') ? -1 : 0));

/** Tree distance between joints (edges between parent and child). */
const HOPS: Uint8Array = (() => {
  const parent = MIXAMO_PARENT_INDICES;
  const depth = parent.map((_, j) => { let d = 0; for (let k = j; parent[k] >= 0; k = parent[k]) d++; return d; });
  const hops = new Uint8Array(J * J);
  for (let a = 0; a < J; a++) {
    for (let b = 0; b < J; b++) {
      let x = a, y = b, n = 0;
      while (x !== y) {
        if (depth[x] >= depth[y]) x = parent[x];
        else y = parent[y];
        n++;
      }
      hops[a * J + b] = n;
    }
  }
  return hops;
})();

/** Bones more than this many hierarchy steps from the owner take nothing (a hand resting on a thigh stays a hand). */
const MAX_HOPS = 2;
/**
 * Bones further than this many τ behind the owner take nothing: the kernel K(t) = exp(-t²) - exp(-CUTOFF²), clamped at
 * 0, reaches 0 there continuously (about 1% of the owner's weight is given up), and no visibility test is spent on
 * bones beyond it.
 */
export const CUTOFF_TAUS = 2.15;
const KERNEL_FLOOR = Math.exp(-CUTOFF_TAUS * CUTOFF_TAUS);

/** The blend kernel: exp(-t²) lowered to reach 0 at CUTOFF_TAUS. */
function kernel(t: number): number {
  const k = Math.exp(-t * t) - KERNEL_FLOOR;
  return k > 0 ? k : 0;
}

/**
 * A path to a bone may leave the body by up to this share of the temperature (the bone's or the owner's, the smaller)
 * before the bone is unseen: a gap thinner than that (a crease) does not hide it, an arm's gap from the ribs does.
 */
export const VISIBILITY_TOLERANCE = 0.3;
/** Inside, the visibility march steps this share of the depth (the field is a distance bound stretched at most ~1.5×). */
const MARCH_SHARE = 0.6;

export interface WeightSettings {
  /** per joint #J: the blend temperature of each bone (m; boneTemperatures) */
  boneTau: Float64Array;
  /** per joint #J: how sharply a bone stops being a likely owner (ownerTemperatures) */
  ownerTau: Float64Array;
  /** side bones fade out over this distance past the midline (m) */
  midline: number;
}

/** ownerTemperatures: per bone the smallest temperature of the bone, its parent and its children → #J */
export function ownerTemperatures(boneTau: Float64Array): Float64Array {
  const out = Float64Array.from(boneTau);
  for (let a = 0; a < J; a++) for (let b = 0; b < J; b++) if (HOPS[a * J + b] === 1) out[a] = Math.min(out[a], boneTau[b]);
  return out;
}

/** A bone's temperature per unit of its (or its parent's) thickness. */
const BONE_TEMPERATURE_PER_RADIUS = 1.4;
/** The head's, per unit of the neck's thickness: the face stays with the head. */
const HEAD_TEMPERATURE_PER_RADIUS = 0.5;
/** Clothing blends over this many times the bones' temperatures (cloth drapes across a joint). */
const CLOTH_TAU_SCALE = 1.5;

/**
 * boneTemperatures: how far each bone's weight reaches past its own shapes, from the shapes' radii: a bone's
 * temperature is BONE_TEMPERATURE_PER_RADIUS times its own thickness or its parent's, whichever is thinner (a hand's
 * weight fades within about the hand's thickness, the head's within the neck's), clamped to [lo, hi].
 * shapes: the body's shapes (bone ≥ 0 counts), lo/hi: bounds (m) → Float64Array #J (hi where a bone has no shape)
 */
export function boneTemperatures(shapes: Shape[], lo: number, hi: number): Float64Array {
  const radius = new Float64Array(J).fill(Infinity);
  const own = new Float64Array(J);
  for (const s of shapes) {
    if (s.bone < 0) continue;
    const r = s.kind === 'box' ? Math.min(s.b[0], s.b[1], s.b[2]) : Math.min(s.ra, s.rb) * Math.min(1, s.depthScale);
    own[s.bone] = Math.max(own[s.bone], r);
  }
  for (let b = 0; b < J; b++) if (own[b] > 0) radius[b] = own[b];
  const tau = new Float64Array(J);
  for (let b = 0; b < J; b++) {
    const parent = MIXAMO_PARENTS[MIXAMO_JOINTS[b]];
    const r = Math.min(radius[b], parent ? radius[MIXAMO_JOINTS.indexOf(parent)] : Infinity);
    // the head moves as a block: the neck's weight stops under the jaw, not halfway up the face
    const perRadius = MIXAMO_JOINTS[b] === 'Head' ? HEAD_TEMPERATURE_PER_RADIUS : BONE_TEMPERATURE_PER_RADIUS;
    tau[b] = Math.max(lo, Math.min(hi, Number.isFinite(r) ? r * perRadius : hi));
  }
  return tau;
}

/** Evaluates the body and clothing rules for one character. */
export class ConstructionWeights {
  private readonly bodyShapes: Shape[];
  private readonly shapesOfBone: number[][];
  private readonly field: ShapeField;
  private readonly inside: ShapeField;
  private readonly settings: WeightSettings;
  private readonly distance = new Float64Array(J);
  private readonly nearest = new Int32Array(J);
  private readonly seen = new Float64Array(J);
  private readonly ownerShare = new Float64Array(J);
  private readonly core: Vec3 = [0, 0, 0];
  private readonly clothingCandidates = new Map<readonly number[], Int32Array>();

  /**
   * field: lists the candidate shapes of a point (its buckets, built with reach ≥ CUTOFF_TAUS·τ); its shapes with
   * bone ≥ 0 are the body's (clothing shapes, bone -1, are ignored here). inside: the same shapes with a short reach,
   * whose inside is "the body" for the visibility test.
   */
  constructor(field: ShapeField, inside: ShapeField, settings: WeightSettings) {
    this.field = field;
    this.inside = inside;
    this.bodyShapes = field.shapes;
    this.settings = settings;
    this.shapesOfBone = MIXAMO_JOINTS.map(() => []);
    field.shapes.forEach((s, i) => { if (s.bone >= 0) this.shapesOfBone[s.bone].push(i); });
  }

  /**
   * Distance per bone (Infinity where no shape) and nearest shape per bone over the candidate shapes
   * candidates[from..to) → the owner bone (nearest), or -1.
   */
  private boneDistances(x: number, y: number, z: number, candidates: Int32Array, from: number, to: number): number {
    const D = this.distance, best = this.nearest;
    D.fill(Infinity);
    best.fill(-1);
    for (let n = from; n < to; n++) {
      const s = this.bodyShapes[candidates[n]];
      if (s.bone < 0) continue;
      const d = shapeDistance(s, x, y, z);
      if (d < D[s.bone]) { D[s.bone] = d; best[s.bone] = candidates[n]; }
    }
    let owner = -1;
    for (let b = 0; b < J; b++) if (D[b] < Infinity && (owner < 0 || D[b] < D[owner])) owner = b;
    return owner;
  }

  /**
   * How well p sees the core of shape s through the body, in [0, 1]: 1 when the straight path stays inside, falling
   * linearly to 0 as the path's worst point rises to `tolerance` outside (soft, so weights do not jump where a gap
   * opens). The path is marched in steps of half the field's depth where inside (the field changes by at most about
   * the distance moved) and of half the tolerance elsewhere, so no gap wider than the tolerance is stepped over.
   */
  private visibility(p: Vec3, s: number, tolerance: number): number {
    const q = shapeCorePoint(this.bodyShapes[s], p, this.core);
    const dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
    const length = Math.sqrt(dx * dx + dy * dy + dz * dz);
    if (length === 0) return 1;
    let worst = -Infinity;
    for (let t = 0.5 * tolerance; t < length; ) {
      const f = t / length;
      const value = this.inside.value(p[0] + f * dx, p[1] + f * dy, p[2] + f * dz);
      if (value > worst) {
        worst = value;
        if (worst >= tolerance) return 0;
      }
      t += Math.max(0.5 * tolerance, -MARCH_SHARE * value);
    }
    return worst <= 0 ? 1 : 1 - worst / tolerance;
  }

  /**
   * The rule shared by body and clothing, over the bone distances just computed (this.distance, owner = nearest):
   * with Δ_b = D_b - D_owner and τ_b each bone's temperature, the owner is soft, P(o) ∝ vis_o · K(Δ_o / τ'_o) with τ'_o
   * the smallest temperature among o and its parent and children (the chest is not a likely owner of the face), and
   * w_b = vis_b · Σ_o P(o) · [o within MAX_HOPS of b] · K(Δ_b / min(τ_o, τ_b)), K(t) ≈ exp(-t²) (kernel). Every factor is
   * continuous in p, so the weights are too, even where the nearest bone jumps across the hierarchy (armpit, chin on
   * shoulders); the pair's smaller temperature keeps a thick bone (the chest) from reaching into a thin one's region
   * (the face). Without `see`, visibility is 1 (cloth hangs in the air); without `gate`, any bone pair counts.
   */
  private blend(p: Vec3, owner: number, see: boolean, gate: boolean, tauScale: number, out: Float64Array): void {
    const D = this.distance, tau = this.settings.boneTau;
    const vis = this.seen, owners = this.ownerShare;
    vis.fill(0);
    owners.fill(0);
    let total = 0;
    const ownerTau = this.settings.ownerTau;
    for (let b = 0; b < J; b++) {
      const t = (D[b] - D[owner]) / (tau[b] * tauScale);
      if (!(t <= CUTOFF_TAUS)) continue;
      vis[b] = b === owner || !see ? 1 : this.visibility(p, this.nearest[b], VISIBILITY_TOLERANCE * Math.min(tau[b], tau[owner]));
      const u = (D[b] - D[owner]) / (ownerTau[b] * tauScale);
      owners[b] = vis[b] * kernel(u);
      total += owners[b];
    }
    for (let b = 0; b < J; b++) {
      if (vis[b] === 0) continue;
      const delta = D[b] - D[owner];
      let w = 0;
      for (let o = 0; o < J; o++) {
        if (owners[o] === 0 || (gate && HOPS[o * J + b] > MAX_HOPS)) continue;
        w += owners[o] * kernel(delta / (Math.min(tau[o], tau[b]) * tauScale));
      }
      out[b] = (vis[b] * w) / total;
    }
  }

  /** body: the body rule at p (blend with visibility and hierarchy gating) → dense weights #J into out (sum 1). */
  body(p: Vec3, out: Float64Array): void {
    out.fill(0);
    const bucket = this.field.bucketOf(p[0], p[1], p[2]);
    const owner = bucket < 0 ? -1 : this.boneDistances(p[0], p[1], p[2], this.field.bucketShapes, this.field.bucketStart[bucket], this.field.bucketStart[bucket + 1]);
    if (owner < 0) { this.fallback(p, out); return; }
    this.blend(p, owner, true, true, 1, out);
    this.splitSides(p[0], out, 0);
  }

  /**
   * clothing: the clothing rule over `bones` at p → dense weights #J into out (sum 1): the body rule through the air,
   * at CLOTH_TAU_SCALE times the temperatures. sideMargin: width of the midline ramp (garments spanning both legs, so
   * their front stretches evenly; 0: none)
   */
  clothing(p: Vec3, bones: readonly number[], sideMargin: number, out: Float64Array): void {
    out.fill(0);
    let candidates = this.clothingCandidates.get(bones);
    if (!candidates) {
      candidates = Int32Array.from(bones.flatMap((b) => this.shapesOfBone[b])).sort();
      this.clothingCandidates.set(bones, candidates);
    }
    const owner = this.boneDistances(p[0], p[1], p[2], candidates, 0, candidates.length);
    if (owner < 0) { out[bones[0]] = 1; return; }
    this.blend(p, owner, false, false, CLOTH_TAU_SCALE, out);
    this.splitSides(p[0], out, sideMargin);
  }

  /** Nothing within reach (a stray vertex): the bone of the nearest body shape anywhere. */
  private fallback(p: Vec3, out: Float64Array): void {
    let best = -1, bestD = Infinity;
    for (const s of this.bodyShapes) {
      if (s.bone < 0) continue;
      const d = shapeDistance(s, p[0], p[1], p[2]);
      if (d < bestD) { bestD = d; best = s.bone; }
    }
    out[best >= 0 ? best : 0] = 1;
  }

  private splitSides(x: number, w: Float64Array, rampWidth: number): void {
    let centre = -1;
    for (let b = 0; b < J; b++) if (JOINT_SIDE[b] === 0 && this.distance[b] < Infinity && (centre < 0 || this.distance[b] < this.distance[centre])) centre = b;
    separateSides(w, x, rampWidth, this.settings.midline, centre);
  }
}

/**
 * Left and right apart: with L and R a row's total left and right weight, the weaker side is dropped and the
 * stronger one scaled by (L - R) / (L + R), so at a seam where the two sides are equally near (the crotch, the chest's
 * midline) both fade to 0 and the row goes to the centre bones: continuous, never mixed. With rampWidth > 0 side
 * bones also fade to 0 towards x = 0 over that width (garments spanning both legs). Weight taken from the sides goes
 * to the centre bones in proportion to their weights, or to `centre` when they have none (-1: renormalise instead).
 * Whatever the row, a side bone fades out over `midline` past x = 0 on the other side.
 * w: dense row #J (modified, normalised on return), x: the vertex's x, midline: that tolerance (m, > 0)
 */
export function separateSides(w: Float64Array, x: number, rampWidth: number, midline: number, centre: number): void {
  let left = 0, right = 0;
  for (let b = 0; b < J; b++) {
    if (JOINT_SIDE[b] > 0) left += w[b];
    else if (JOINT_SIDE[b] < 0) right += w[b];
  }
  if (left > 0 || right > 0) {
    const keep = left >= right ? 1 : -1;
    const scale = Math.abs(left - right) / (left + right);
    let lost = 0;
    const total = left + right + centreTotal(w);
    for (let b = 0; b < J; b++) {
      if (JOINT_SIDE[b] === 0 || w[b] === 0) continue;
      let f = JOINT_SIDE[b] === keep ? scale * (rampWidth > 0 ? smoothstep((JOINT_SIDE[b] * x) / rampWidth) : 1) : 0;
      // and never past the midline by more than the tolerance (a trace of a shoulder on the far cheek)
      f *= smoothstep((JOINT_SIDE[b] * x + midline) / midline);
      // a trace of a side bone (a shoulder's on the far cheek) is dropped rather than kept on the wrong side
      if (w[b] * f < NEGLIGIBLE_SIDE_WEIGHT * total) f = 0;
      lost += w[b] * (1 - f);
      w[b] *= f;
    }
    const centreSum = centreTotal(w);
    if (centreSum > 0) {
      for (let b = 0; b < J; b++) if (JOINT_SIDE[b] === 0) w[b] += (lost * w[b]) / centreSum;
    } else if (centre >= 0) {
      w[centre] += lost;
    }
  }
  normalise(w);
}

/** Side weights below this share of the row are dropped by separateSides. */
const NEGLIGIBLE_SIDE_WEIGHT = 2e-3;

function centreTotal(w: Float64Array): number {
  let sum = 0;
  for (let b = 0; b < J; b++) if (JOINT_SIDE[b] === 0) sum += w[b];
  return sum;
}

function normalise(w: Float64Array): void {
  let sum = 0;
  for (let b = 0; b < J; b++) sum += w[b];
  if (sum > 0) for (let b = 0; b < J; b++) w[b] /= sum;
  else w[0] = 1;
}

function smoothstep(t: number): number {
  if (t <= 0) return 0;
  if (t >= 1) return 1;
  return t * t * (3 - 2 * t);
}

/**
 * writeTopWeights: a dense row → one top-INFLUENCES row. The fifth largest weight is subtracted from the four kept
 * before renormalising, so a bone enters or leaves a row with weight 0 and rows stay continuous where ranks swap.
 * Unused slots get index 0, weight 0.
 * dense: Float64Array #J (non-negative, not all 0), indices/weights: #V*INFLUENCES outputs, row: which row to write
 */
export function writeTopWeights(dense: Float64Array, indices: Uint16Array, weights: Float32Array, row: number): void {
  const chosen = TOP;
  chosen.fill(-1);
  for (let k = 0; k <= INFLUENCES; k++) {
    let best = -1;
    for (let b = 0; b < J; b++) {
      if (dense[b] <= 0 || (k > 0 && chosen.includes(b))) continue;
      if (best < 0 || dense[b] > dense[best]) best = b;
    }
    chosen[k] = best;
    if (best < 0) break;
  }
  const floor = chosen[INFLUENCES] >= 0 ? dense[chosen[INFLUENCES]] : 0;
  let sum = 0;
  for (let k = 0; k < INFLUENCES; k++) if (chosen[k] >= 0) sum += dense[chosen[k]] - floor;
  for (let k = 0; k < INFLUENCES; k++) {
    const b = chosen[k];
    const w = b < 0 || sum <= 0 ? 0 : (dense[b] - floor) / sum;
    indices[row * INFLUENCES + k] = w > 0 ? b : 0;
    weights[row * INFLUENCES + k] = w;
  }
  if (sum <= 0) { indices[row * INFLUENCES] = Math.max(0, chosen[0]); weights[row * INFLUENCES] = 1; }
}
const TOP = new Int32Array(INFLUENCES + 1);

/**
 * Blend of two dense rows: (1 - t) a + t b into out.
 */
export function mixRows(a: Float64Array, b: Float64Array, t: number, out: Float64Array): void {
  for (let j = 0; j < J; j++) out[j] = (1 - t) * a[j] + t * b[j];
}
