/**
 * Whether a character's two arms are posed differently (one raised, one hanging; one held forward at the elbow): the
 * skeleton estimator then keeps each arm as the front view shows it instead of mirroring the pair into one pose.
 */
import type { FrontView } from './frontView.js';

/**
 * How far (canonical units, height ~1) a joint mirrored across the midline may land from the silhouette and still be
 * on the body: the width of a wrist or two at FRONT_VIEW_RESOLUTION (a slim forearm is 0.015–0.03 across).
 */
export const MIRROR_ON_BODY_TOLERANCE = 0.012;

/**
 * The least distance (canonical units) between one side's forearm or hand joint and the other side's mirrored that
 * tells two arms apart. The generator's symmetric characters differ by a few degrees (up to 7.5° at the shoulder, so
 * up to about 0.05 at the wrist); a pose below this is read as one pose with noise.
 */
export const POSED_APART_DISTANCE = 0.04;

/** The arm joints (without their side) whose two sides armsPosedApart compares: the elbow and the wrist. */
export const POSED_APART_JOINTS = ['ForeArm', 'Hand'] as const;

/**
 * Whether the front view's silhouette holds the point (x, y) or a covered pixel within `tolerance` of it; with
 * `frontAtLeast`, only a pixel whose first hit (zFront) is at that depth or in front of it counts.
 * view: FrontView (mask, zFront res*res), x, y: canonical, tolerance: canonical units, frontAtLeast: canonical z
 * → boolean
 */
export function silhouetteNear(view: FrontView, x: number, y: number, tolerance = MIRROR_ON_BODY_TOLERANCE, frontAtLeast = -Infinity): boolean {
  const res = view.res;
  const ci = (x + 0.5) * res - 0.5, cj = (y + 0.5) * res - 0.5;
  const r = tolerance * res;
  const i0 = Math.max(0, Math.floor(ci - r)), i1 = Math.min(res - 1, Math.ceil(ci + r));
  const j0 = Math.max(0, Math.floor(cj - r)), j1 = Math.min(res - 1, Math.ceil(cj + r));
  for (let j = j0; j <= j1; j++) {
    for (let i = i0; i <= i1; i++) {
      const k = j * res + i;
      if (view.mask[k] && view.zFront[k] >= frontAtLeast && (i - ci) ** 2 + (j - cj) ** 2 <= r * r + 0.5) return true;
    }
  }
  return false;
}

/**
 * The first hit's depth (zFront) of the front view's pixel that holds the point (x, y); NaN where that pixel is not
 * covered. view: FrontView, x, y: canonical → canonical z
 */
export function frontDepthAt(view: FrontView, x: number, y: number): number {
  const res = view.res;
  const i = Math.round((x + 0.5) * res - 0.5), j = Math.round((y + 0.5) * res - 0.5);
  if (i < 0 || j < 0 || i >= res || j >= res || !view.mask[j * res + i]) return Number.NaN;
  return view.zFront[j * res + i];
}

/**
 * armsPosedApart: the front view's 2D joints (canonical x, y, by name: LeftForeArm, RightHand, …), the midline x (the
 * Hips'), the front view, and (optional) a second reading of the same joints that must agree (the joint network's,
 * where it is sure of both sides; null: none) → whether the arms are posed apart. They are where, at the elbow or the
 * wrist (POSED_APART_JOINTS), the two sides lie POSED_APART_DISTANCE or more apart once one is mirrored, and the
 * mirror of one side lands off the silhouette (MIRROR_ON_BODY_TOLERANCE): a body whose arms mirror each other has an
 * arm wherever a mirrored joint lands, even where one side was misread. The second reading, where given, must see the
 * pair that far apart too.
 */
export function armsPosedApart(
  points: Partial<Record<string, [number, number]>>, mid: number, view: FrontView,
  vouch: Partial<Record<string, [number, number]>> | null = null,
): boolean {
  const mirrored = (p: [number, number]): [number, number] => [2 * mid - p[0], p[1]];
  const apart = (l: [number, number], r: [number, number]) => Math.hypot(l[0] - mirrored(r)[0], l[1] - r[1]) >= POSED_APART_DISTANCE;
  for (const joint of POSED_APART_JOINTS) {
    const left = points[`Left${joint}`], right = points[`Right${joint}`];
    if (!left || !right || !apart(left, right)) continue;
    const ml = mirrored(left), mr = mirrored(right);
    if (silhouetteNear(view, ml[0], ml[1]) && silhouetteNear(view, mr[0], mr[1])) continue;
    const vl = vouch?.[`Left${joint}`], vr = vouch?.[`Right${joint}`];
    if (vl && vr && !apart(vl, vr)) continue;
    return true;
  }
  return false;
}
