/**
 * Skinning weights by construction: a vertex moves with the shapes it was made from.
 *
 * Body rule. Each bone's distance at a point is the smallest signed distance to the shapes it owns. The bone whose
 * shape is nearest owns the point; the other bones within two steps of it in the hierarchy take a share that falls
 * off as exp(-(their distance - the owner's) / τ), a softmax whose temperature τ is tied to the limbs' blend radii, so
 * weights blend smoothly across each joint over about a limb's thickness. A bone only counts if the straight path
 * from the point to its shape's core stays inside the body (visibility, as in bone heat): an arm hanging a centimetre
 * from the hip takes nothing from the hip.
 * Clothing rule: the same softmax over the bones the item follows, through air (no visibility), at twice the
 * temperature (cloth drapes over the joint).
 * Left and right never mix: a left bone's weight is multiplied by a ramp that is 0 for x ≤ 0 and 1 beyond the side
 * margin (mirrored for the right), and what the ramps take goes to the nearest centre bone, so weights stay
 * continuous across the midline (crotch, chest) and no row holds both sides.
 * Rows keep the 4 largest weights and sum to 1; HeadTop_End owns no shape so it is never weighted.
 */
import { MIXAMO_JOINTS, MIXAMO_PARENTS } from '../../skeleton/mixamoTemplate.js';
import type { Vec3 } from '../../types.js';
import { shapeCorePoint, shapeDistance, type Shape } from './sdfShapes.js';
import type { ShapeField } from './shapeField.js';

export const INFLUENCES = 4;
const J = MIXAMO_JOINTS.length;

/** -1 right, 0 centre, +1 left, per joint. */
export const JOINT_SIDE: Int8Array = Int8Array.from(MIXAMO_JOINTS, (n) => (n.startsWith('Left') ? 1 : n.startsWith('Right') ? -1 : 0));

/** Tree distance between joints (edges between parent and child). */
const HOPS: Uint8Array = (() => {
  const parent = MIXAMO_JOINTS.map((n) => (MIXAMO_PARENTS[n] ? MIXAMO_JOINTS.indexOf(MIXAMO_PARENTS[n]!) : -1));
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
/** Bones further than this many τ behind the owner take nothing (e^-8 is below what top-4 rows keep anyway). */
const CUTOFF_TAUS = 8;
/** Path samples of the visibility test, as fractions of the way from the vertex to the bone's core. */
const VISIBILITY_SAMPLES = [0.3, 0.6, 0.9];

export interface WeightSettings {
  /** softmax temperature of the body rule (m) */
  tau: number;
  /** width of the left/right ramp at the midline (m) */
  sideMargin: number;
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
  private readonly affinity = new Float64Array(J);
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
   * linearly to 0 as the path's worst sample rises to τ outside (soft, so weights do not jump where a gap opens).
   */
  private visibility(p: Vec3, s: number): number {
    const q = shapeCorePoint(this.bodyShapes[s], p, this.core);
    let worst = -Infinity;
    for (const f of VISIBILITY_SAMPLES) {
      const x = p[0] + f * (q[0] - p[0]), y = p[1] + f * (q[1] - p[1]), z = p[2] + f * (q[2] - p[2]);
      worst = Math.max(worst, this.inside.value(x, y, z));
    }
    return worst <= 0 ? 1 : Math.max(0, 1 - worst / this.settings.tau);
  }

  /**
   * body: the body rule at p → dense weights #J into out (sum 1). Each bone's affinity q_b = visibility ·
   * exp(-(D_b - D_min)/τ); the owner is soft, P(o) = q_o / Σq; a bone keeps its affinity in proportion to the
   * probability that the owner is within MAX_HOPS of it: w_b = q_b · Σ_{o near b} P(o). Every factor is continuous
   * in p, so the weights are too, even where the nearest bone jumps across the hierarchy (armpit, chin on shoulders).
   */
  body(p: Vec3, out: Float64Array): void {
    out.fill(0);
    const bucket = this.field.bucketOf(p[0], p[1], p[2]);
    const owner = bucket < 0 ? -1 : this.boneDistances(p[0], p[1], p[2], this.field.bucketShapes, this.field.bucketStart[bucket], this.field.bucketStart[bucket + 1]);
    if (owner < 0) { this.fallback(p, out); return; }
    const D = this.distance, q = this.affinity;
    const tau = this.settings.tau;
    q.fill(0);
    let total = 0;
    for (let b = 0; b < J; b++) {
      const delta = D[b] - D[owner];
      if (!(delta <= CUTOFF_TAUS * tau)) continue;
      const v = b === owner ? 1 : this.visibility(p, this.nearest[b]);
      q[b] = v * Math.exp(-delta / tau);
      total += q[b];
    }
    for (let b = 0; b < J; b++) {
      if (q[b] === 0) continue;
      let gate = 0;
      for (let o = 0; o < J; o++) if (q[o] > 0 && HOPS[o * J + b] <= MAX_HOPS) gate += q[o];
      out[b] = (q[b] * gate) / total;
    }
    this.splitSides(p[0], out, this.settings.sideMargin);
  }

  /**
   * clothing: the clothing rule over `bones` at p → dense weights #J into out (sum 1). sideMargin: width of the
   * midline ramp (wider than the body's for garments spanning both legs, so their front stretches evenly)
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
    const D = this.distance;
    const tau = 2 * this.settings.tau;
    for (const b of bones) {
      const delta = D[b] - D[owner];
      if (delta <= CUTOFF_TAUS * tau) out[b] = Math.exp(-delta / tau);
    }
    this.splitSides(p[0], out, Math.max(sideMargin, this.settings.sideMargin));
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

  /**
   * The midline ramps: side bones fade to 0 at x = 0 (and stay 0 on the other side); their lost weight goes to the
   * nearest centre bone among those with a distance (this.distance), then the row is normalised.
   */
  private splitSides(x: number, w: Float64Array, m: number): void {
    let lost = 0;
    for (let b = 0; b < J; b++) {
      if (JOINT_SIDE[b] === 0 || w[b] === 0) continue;
      const f = smoothstep((JOINT_SIDE[b] * x) / m);
      lost += w[b] * (1 - f);
      w[b] *= f;
    }
    if (lost > 0) {
      let centre = -1;
      for (let b = 0; b < J; b++) if (JOINT_SIDE[b] === 0 && this.distance[b] < Infinity && (centre < 0 || this.distance[b] < this.distance[centre])) centre = b;
      if (centre >= 0) w[centre] += lost;
    }
    let sum = 0;
    for (let b = 0; b < J; b++) sum += w[b];
    if (sum > 0) for (let b = 0; b < J; b++) w[b] /= sum;
    else w[0] = 1;
  }
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
