import type { Joints2DPrediction } from './joints2d.js';
import type { FrontView } from './frontView.js';

/**
 * A body the front view shows small. The canonical frame fits the whole shape into [-0.5, 0.5], a hat's crown
 * included: under a cone hat over half as tall as the body (procedural 29 000 010, 22 000 062) the body, soles to the
 * top of the head, fills 0.63 of the view's height, its trunk some 20 of the 2D joint network's 128 pixels, where the
 * bodies it was trained on fill nearly all of it, and it read the joints of such a body 7–14 % of the height off,
 * unsure. Looking again at a view of the body's box alone puts it back at the size the network knows.
 */

/**
 * How many times over the body's box (bodyCrop) must fit the view before the network looks again: on procedural
 * humanoids 29 000 000–079 (mirrored), 74 boxes fit under 1.0 times (the body fills the view), a hatless T-pose 1.00,
 * the five under hats 1.06–1.34. Over 38 runs of 80 (docs/EVAL.md, fifty-seventh session), of the rigs looked at again
 * (boxes 1.10–1.40) that moved, 54 came nearer the generator's joints and 7 went farther.
 */
export const SMALL_BODY_ZOOM = 1.1;

/**
 * The room over the network's highest joint that the body's box keeps, as a share of the box's height below it: the top
 * of the head over the HeadTop_End it reads, fingers over a raised wrist.
 */
export const BODY_CROP_MARGIN = 0.1;

/** The share of the view the zoomed box fills, a little room left at its sides. */
const BODY_CROP_FILL = 0.95;

/** A square of the canonical view (x, y) around the body, and how many times it is magnified to fill the view. */
export interface BodyCrop {
  /** the box's centre (canonical x, y) */
  cx: number;
  cy: number;
  /** the magnification: the view's side over the box's, BODY_CROP_FILL of it filled */
  scale: number;
}

/**
 * bodyCrop: the box from the view's lowest covered row up to the network's highest joint (plus BODY_CROP_MARGIN),
 * across every covered pixel under that top, and the scale that makes it fill the view.
 * view: the front view the network read (FrontView), xy: its joints (canonical x, y): Float64Array #J*2 → BodyCrop
 * (scale ≤ 1 where the body already fills the view)
 */
export function bodyCrop(view: FrontView, xy: Float64Array): BodyCrop {
  const res = view.res;
  let highest = -Infinity;
  for (let j = 1; j < xy.length; j += 2) highest = Math.max(highest, xy[j]);
  let lowestRow = -1;
  for (let q = 0; q < res * res && lowestRow < 0; q++) if (view.mask[q]) lowestRow = Math.floor(q / res);
  if (lowestRow < 0 || !Number.isFinite(highest)) return { cx: 0, cy: 0, scale: 1 };
  const bottom = -0.5 + lowestRow / res;
  const top = Math.min(0.5, highest + BODY_CROP_MARGIN * (highest - bottom));
  const topRow = Math.min(res - 1, Math.floor((top + 0.5) * res));
  let left = res, right = -1;
  for (let j = lowestRow; j <= topRow; j++) {
    for (let i = 0; i < res; i++) {
      if (!view.mask[j * res + i]) continue;
      left = Math.min(left, i);
      right = Math.max(right, i);
    }
  }
  const x0 = -0.5 + left / res, x1 = -0.5 + (right + 1) / res;
  const side = Math.max(top - bottom, x1 - x0);
  return { cx: 0.5 * (x0 + x1), cy: 0.5 * (bottom + top), scale: side > 0 ? BODY_CROP_FILL / side : 1 };
}

/**
 * The canonical positions magnified about the crop's centre (depth too, about 0, so the body keeps its shape).
 * canonical: Float32Array #V*3, crop: BodyCrop → Float32Array #V*3
 */
export function zoomedToCrop(canonical: Float32Array, crop: BodyCrop): Float32Array {
  const out = new Float32Array(canonical.length);
  for (let v = 0; v < canonical.length; v += 3) {
    out[v] = (canonical[v] - crop.cx) * crop.scale;
    out[v + 1] = (canonical[v + 1] - crop.cy) * crop.scale;
    out[v + 2] = canonical[v + 2] * crop.scale;
  }
  return out;
}

/**
 * 2D points read in the zoomed view, back in the whole view's frame.
 * xy: canonical (x, y) in the zoomed frame, Float64Array #J*2, modified in place; crop: the BodyCrop it was zoomed by
 */
export function unzoomFromCrop(xy: Float64Array, crop: BodyCrop): void {
  for (let j = 0; j < xy.length; j += 2) {
    xy[j] = xy[j] / crop.scale + crop.cx;
    xy[j + 1] = xy[j + 1] / crop.scale + crop.cy;
  }
}

/**
 * The second look's joints, but where the first look was sure of a joint (to sure) and the second is not: the first's.
 * The zoomed box cuts what stands above the body (a hat's crown, a staff over a raised hand), and the network, reading
 * that cut, grows unsure of the joints next to it. On 26 rigs looked at again (procedural 22, 25, 26, 28, 29 000 000
 * and 9 900 000, both arm modes) the first look's HeadTop_End stood 0.6 % of the canonical height off on average, the
 * second's 1.3 %; 8 of the 10 joints so kept were a HeadTop_End the second look was unsure of (0.21–0.43), where the
 * hybrid took the rules' reading, which a hat's crown can raise: 22 000 062's Hips, measured up from the pelvis by the
 * head's height, 3.4 / 3.9 → 0.1 / 0.6 % of the height (both arm modes). The other two were raised elbows by a staff:
 * 26 000 040's 3.6 → 2.3 %, 26 000 024's 0.9 → 1.9 (eval skeletons over 46 runs of 80: three rigs nearer, two farther).
 * first, second: the two looks' joints (the second's already back in the whole view's frame), sure: the confidence
 * the hybrid takes a network joint at → Joints2DPrediction (new arrays)
 */
export function keepSureFirstLook(first: Joints2DPrediction, second: Joints2DPrediction, sure: number): Joints2DPrediction {
  const xy = Float64Array.from(second.xy), confidence = Float32Array.from(second.confidence);
  for (let k = 0; k < confidence.length; k++) {
    if (!(first.confidence[k] >= sure && second.confidence[k] < sure)) continue;
    xy[2 * k] = first.xy[2 * k];
    xy[2 * k + 1] = first.xy[2 * k + 1];
    confidence[k] = first.confidence[k];
  }
  return { xy, confidence };
}
