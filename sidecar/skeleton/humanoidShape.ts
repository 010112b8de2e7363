import { AutoRigError } from '../errors.js';
import { usedBounds } from '../mesh/canonicalFrame.js';
import type { FrontView } from './frontView.js';

/**
 * Whole-body cues that a shape is a standing humanoid, checked before landmarks are read so that a shape that is none
 * gets NOT_HUMANOID instead of a skeleton read into noise. Measured on the 10 dev characters and the hostile corpus
 * (test/hostile-meshes.test.ts):
 * - shoulders are wider than the chest is deep: width/depth ≥ 1.83 on every dev character, ≤ 0.48 on four-legged
 *   animals (whose long body runs front to back). The depth leaves out the DEPTH_OUTLIER_SHARE of the front view's
 *   pixels that reach furthest forward, and of those that reach furthest back (robustDepth): a sword held pointing
 *   forward is a third of the height deep but a few pixels seen from the front (0.4% of the silhouette of procedural
 *   seed 9 100 000 meshed at 20,000 vertices, 1–3% on the sword holders meshed coarsely at 6,000, whose blades are
 *   thicker), while an animal's body is deep behind most of its silhouette. The bounding box's depth read 0.80 for
 *   seed 9 100 000, 1.55 for the least wide dev character;
 * - the body is one piece seen from the front: the largest connected piece holds ≥ 99% of the silhouette on the dev
 *   characters, 4% on a cloud of scattered fragments;
 * - the silhouette leaves room around the head, between the legs, beside the arms: it covers ≤ 69% of its bounding
 *   box on the dev characters (the blocky minetest character), 100% for a block;
 * - the body stands along the up axis: its centre line leans ≤ 4.4° on the dev characters; the frame only knows the
 *   input's axes, so a body tilted between them (37°) would get a skeleton read across it.
 */
export const MIN_WIDTH_OVER_DEPTH = 1.0;
/**
 * The joint network's word on the shape, where a method runs it (hybrid, learned): its mean confidence over the
 * template's joints (meanJointConfidence). Measured with the committed joints2d.onnx:
 * - humanoids: 0.45–0.73 on the 10 artists' characters (robot_expressive lowest), 0.50–0.83 on 560 procedural ones
 *   (seven seed streams of 80), 0.38–0.66 on crude figures of capsules or boxes (a stick figure of thin capsules
 *   lowest, 0.38);
 * - shapes the silhouette cues pass: a floor lamp 0.07, a coat rack 0.03, a cactus 0.13, a signpost 0.24, a tree
 *   0.27, a cross 0.27, a snowman with stick arms 0.39;
 * - shapes refused by a cue above anyway: four-legged animals of capsules 0.32–0.37, of boxes 0.13, a bird 0.32.
 * Below MIN_NETWORK_CONFIDENCE the shape is refused: the network finds no body in it. The bound stays at about half
 * the least sure humanoid measured (0.2 against 0.38); what lies between (a signpost, a tree) is still rigged.
 */
export const MIN_NETWORK_CONFIDENCE = 0.2;
/**
 * A shape the network is sure of (mean confidence at least VOUCHED_NETWORK_CONFIDENCE) may be as deep as
 * MIN_WIDTH_OVER_DEPTH_VOUCHED of its width: a chibi, 2.5 heads tall, whose head and belly are as deep as its arms-down
 * body is wide (procedural 9 800 053: 0.92, confidence 0.72, refused before). Four-legged animals stay below it
 * (≤ 0.48), and a bird of 0.76 had confidence 0.32.
 */
export const VOUCHED_NETWORK_CONFIDENCE = 0.5;
export const MIN_WIDTH_OVER_DEPTH_VOUCHED = 0.75;
export const MIN_LARGEST_PIECE = 0.5;
export const MAX_BOX_FILL = 0.85;
export const MAX_LEAN_DEGREES = 15;
/** Share of the front view's covered pixels left out at each end of the depth range (see the module comment). */
export const DEPTH_OUTLIER_SHARE = 0.05;

/** What the checks measured, for logs and tests. */
export interface HumanoidShapeCues {
  /** left-right extent of the canonical mesh over its front-back extent seen from the front (robustDepth) */
  widthOverDepth: number;
  /** fraction of the front view's covered pixels in its largest 8-connected piece */
  largestPiece: number;
  /** covered pixels over the area of the silhouette's bounding box */
  boxFill: number;
  /** angle (degrees) between the up axis and the body's centre line seen from the side */
  leanDegrees: number;
}

/**
 * Measures the cues of a standing humanoid on a canonical mesh (x left, y up, z forward) and its front view.
 * canonical: Float32Array #V*3, triangles: Uint32Array #T*3, view: FrontView of the same mesh → HumanoidShapeCues
 */
export function humanoidShapeCues(canonical: Float32Array, triangles: Uint32Array, view: FrontView): HumanoidShapeCues {
  const [min, max] = usedBounds(canonical, triangles);
  const width = max[0] - min[0], depth = robustDepth(view, DEPTH_OUTLIER_SHARE);
  return {
    widthOverDepth: depth > 0 ? width / depth : Infinity,
    largestPiece: largestPieceFraction(view.mask, view.res),
    boxFill: boundingBoxFill(view.mask, view.res),
    leanDegrees: bodyLeanDegrees(view),
  };
}

/**
 * Throws NOT_HUMANOID when a cue says the shape cannot be a standing humanoid (see the module comment for the cues and
 * their measured ranges), or when the joint network, where the method runs it, finds no body (MIN_NETWORK_CONFIDENCE).
 * Returns the cues otherwise.
 * canonical: Float32Array #V*3, triangles: Uint32Array #T*3, view: FrontView, networkConfidence: the network's mean
 * joint confidence on this view (meanJointConfidence), or null where no network runs (geometric) → HumanoidShapeCues
 */
export function checkHumanoidShape(canonical: Float32Array, triangles: Uint32Array, view: FrontView, networkConfidence: number | null = null): HumanoidShapeCues {
  const cues = humanoidShapeCues(canonical, triangles, view);
  const vouched = networkConfidence !== null && networkConfidence >= VOUCHED_NETWORK_CONFIDENCE;
  if (cues.widthOverDepth < (vouched ? MIN_WIDTH_OVER_DEPTH_VOUCHED : MIN_WIDTH_OVER_DEPTH)) {
    throw new AutoRigError('NOT_HUMANOID', `the shape is deeper front to back than it is wide (width/depth ${cues.widthOverDepth.toFixed(2)}): no humanoid standing along one of the file's axes (a four-legged animal, a long object, a body tilted between the axes)`);
  }
  if (cues.largestPiece < MIN_LARGEST_PIECE) {
    throw new AutoRigError('NOT_HUMANOID', `seen from the front the shape falls apart into scattered pieces (the largest holds ${(100 * cues.largestPiece).toFixed(0)}% of it): no body`);
  }
  if (cues.boxFill > MAX_BOX_FILL) {
    throw new AutoRigError('NOT_HUMANOID', `seen from the front the shape fills ${(100 * cues.boxFill).toFixed(0)}% of its bounding box: a block, with no head, arms or legs standing apart`);
  }
  if (cues.leanDegrees > MAX_LEAN_DEGREES) {
    throw new AutoRigError('NOT_HUMANOID', `the body leans ${cues.leanDegrees.toFixed(0)}° away from the nearest axis of the file: stand it upright (or lying) along an axis and apply the rotation`);
  }
  if (networkConfidence !== null && networkConfidence < MIN_NETWORK_CONFIDENCE) {
    throw new AutoRigError('NOT_HUMANOID', `the joint network finds no body in the front view (mean joint confidence ${networkConfidence.toFixed(2)}, humanoids measured 0.38 or more): no standing humanoid; if this is a character, the geometric method reads its silhouette without the network`);
  }
  return cues;
}

/**
 * The body's front-to-back extent without thin things that stick out forward or back: from the depth that `share` of
 * the covered pixels reach behind (their back hits) to the one `share` of them reach in front (their front hits).
 * view: FrontView, share: in [0, 0.5) → canonical depth (0 for an empty view)
 */
export function robustDepth(view: FrontView, share: number): number {
  // the covered pixels' depths go straight into typed arrays sized by a first count: JS arrays pushed per pixel, then
  // copied to sort, allocated ~0.7 MB per apply (sampling heap profile)
  let covered = 0;
  for (let p = 0; p < view.mask.length; p++) if (view.mask[p]) covered++;
  if (covered === 0) return 0;
  const front = new Float64Array(covered), back = new Float64Array(covered);
  let c = 0;
  for (let p = 0; p < view.mask.length; p++) {
    if (!view.mask[p]) continue;
    front[c] = view.zFront[p];
    back[c] = view.zBack[p];
    c++;
  }
  const k = Math.floor(share * covered);
  const farthestFront = front.sort().reverse()[k];
  const farthestBack = back.sort()[k];
  return Math.max(0, farthestFront - farthestBack);
}

/**
 * Where the body's lean is read (bodyLeanDegrees), in shares of its height: over the middle 80 %, LEAN_MARGIN left out
 * at each end (feet that stick forward and a hanging head stay out of it), and over the legs and the hips,
 * LEAN_LOWER_ROWS from the soles up. A body tilted between the file's axes leans alike over both (the hostile 37°
 * humanoid: 37° and 38°); what one arm holds or hangs tilts the first (procedural 19 000 021, arms posed apart, raises a
 * sword out to its left and lets a wide sleeve hang on its right: 17.5°, refused; 7° over its legs), a cape trailing
 * behind the legs the second (up to 27° on procedural humanoids), so the lesser stands. On 1 200 procedural humanoids
 * (15 runs of 80 from 9 900 000 to 19 000 079) the lesser is 13.8° at most (the first alone 17.5, the second 26.7).
 */
export const LEAN_MARGIN = 0.1;
export const LEAN_LOWER_ROWS = [0.1, 0.5] as const;

/**
 * How far the body leans away from the up axis: the slope of its centre line, forwards or back (depth: the middle of a
 * pixel's front and back hits) and sideways (the pixel's column), fitted by least squares over the middle rows
 * (LEAN_MARGIN) with each covered pixel one vote, and over the legs' and hips' rows (LEAN_LOWER_ROWS) with each row's
 * median one vote: the lesser of the two leans.
 * view: FrontView → degrees from the up axis, 0 when fewer than two rows are covered
 */
export function bodyLeanDegrees(view: FrontView): number {
  const { res, mask, zFront, zBack } = view;
  let jBot = -1, jTop = -1;
  for (let p = 0; p < mask.length; p++) {
    if (!mask[p]) continue;
    const j = (p - (p % res)) / res;
    if (jBot < 0) jBot = j;
    jTop = j;
  }
  const height = jTop - jBot + 1;
  const middle = { forward: new LineFit(), sideways: new LineFit() }, lower = { forward: new LineFit(), sideways: new LineFit() };
  const xs = new Float64Array(res), zs = new Float64Array(res);
  for (let j = Math.ceil(jBot + LEAN_MARGIN * height); j <= jTop - LEAN_MARGIN * height; j++) {
    const y = (j + 0.5) / res;
    let m = 0;
    for (let i = 0; i < res; i++) {
      const p = j * res + i;
      if (!mask[p]) continue;
      xs[m] = (i + 0.5) / res;
      zs[m] = 0.5 * (zFront[p] + zBack[p]);
      middle.forward.add(y, zs[m]);
      middle.sideways.add(y, xs[m++]);
    }
    if (m === 0 || j < jBot + LEAN_LOWER_ROWS[0] * height || j > jBot + LEAN_LOWER_ROWS[1] * height) continue;
    lower.forward.add(y, median(zs.subarray(0, m)));
    lower.sideways.add(y, median(xs.subarray(0, m)));
  }
  const degrees = (fit: { forward: LineFit; sideways: LineFit }) => (Math.atan(Math.hypot(fit.forward.slope(), fit.sideways.slope())) * 180) / Math.PI;
  return Math.min(degrees(middle), degrees(lower));
}

/** A least-squares line v = a + slope·y over points added one by one. */
class LineFit {
  private n = 0; private sy = 0; private sv = 0; private syy = 0; private syv = 0;
  add(y: number, v: number): void { this.n++; this.sy += y; this.sv += v; this.syy += y * y; this.syv += y * v; }
  /** the slope, 0 with fewer than two distinct y */
  slope(): number {
    const varY = this.syy - (this.sy * this.sy) / Math.max(1, this.n);
    return this.n < 2 || varY <= 0 ? 0 : (this.syv - (this.sy * this.sv) / this.n) / varY;
  }
}

/** The median of values (sorted in place), NaN when empty. */
function median(values: Float64Array): number {
  const m = values.length;
  if (m === 0) return Number.NaN;
  values.sort();
  return m % 2 ? values[(m - 1) / 2] : 0.5 * (values[m / 2 - 1] + values[m / 2]);
}

/**
 * Fraction of the covered pixels that lie in the largest 8-connected piece of the mask (0 for an empty mask).
 * mask: Uint8Array res*res → [0, 1]
 */
export function largestPieceFraction(mask: Uint8Array, res: number): number {
  const seen = new Uint8Array(mask.length);
  const stack = new Int32Array(mask.length);
  let covered = 0, largest = 0;
  for (let p = 0; p < mask.length; p++) {
    if (!mask[p]) continue;
    covered++;
    if (seen[p]) continue;
    let size = 0, top = 0;
    stack[top++] = p;
    seen[p] = 1;
    while (top > 0) {
      const q = stack[--top];
      size++;
      const i = q % res, j = (q - i) / res;
      for (let b = Math.max(0, j - 1); b <= Math.min(res - 1, j + 1); b++) {
        for (let a = Math.max(0, i - 1); a <= Math.min(res - 1, i + 1); a++) {
          const r = b * res + a;
          if (mask[r] && !seen[r]) { seen[r] = 1; stack[top++] = r; }
        }
      }
    }
    if (size > largest) largest = size;
  }
  return covered ? largest / covered : 0;
}

/**
 * Covered pixels over the area of their axis-aligned bounding box (0 for an empty mask).
 * mask: Uint8Array res*res → (0, 1]
 */
export function boundingBoxFill(mask: Uint8Array, res: number): number {
  let covered = 0, i0 = res, i1 = -1, j0 = res, j1 = -1;
  for (let p = 0; p < mask.length; p++) {
    if (!mask[p]) continue;
    covered++;
    const i = p % res, j = (p - i) / res;
    if (i < i0) i0 = i;
    if (i > i1) i1 = i;
    if (j < j0) j0 = j;
    if (j > j1) j1 = j;
  }
  return covered ? covered / ((i1 - i0 + 1) * (j1 - j0 + 1)) : 0;
}
