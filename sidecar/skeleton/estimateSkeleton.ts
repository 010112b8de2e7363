import type { CanonicalFrame } from '../mesh/canonicalFrame.js';
import { fromCanonical } from '../mesh/canonicalFrame.js';
import type { Skeleton, Vec3 } from '../types.js';
import { pixelToCanonical, renderFrontView } from './frontView.js';
import { checkHumanoidShape } from './humanoidShape.js';
import type { Landmarks2D, Pixel } from './landmarks2d.js';
import { findLandmarks2D } from './landmarks2d.js';
import { liftJointsByRayMidpoint } from './liftJoints.js';
import type { MixamoJointName } from './mixamoTemplate.js';
import { buildMixamoSkeleton } from './mixamoTemplate.js';

export const FRONT_VIEW_RESOLUTION = 256;

export interface SkeletonEstimate {
  skeleton: Skeleton;
  /** joint heads in canonical space, by Mixamo name */
  canonical: Record<MixamoJointName, Vec3>;
  landmarks: Landmarks2D;
}

/**
 * HumanRig's prior-guided skeleton estimator, geometric version: front view → 2D joints → 3D by the ray midpoint,
 * left/right made symmetric, feet and toes from the foot geometry, then the Mixamo skeleton in input space.
 * Throws NOT_HUMANOID when the shape is no standing humanoid (humanoidShape.ts, landmarks2d.ts).
 * canonical: Float32Array #V*3 (positions in the canonical frame), triangles: Uint32Array #T*3 (the body's: vertices no
 * triangle uses are not read) → SkeletonEstimate
 */
export function estimateSkeleton(canonical: Float32Array, triangles: Uint32Array, cf: CanonicalFrame, prefix: boolean): SkeletonEstimate {
  const view = renderFrontView(canonical, triangles, FRONT_VIEW_RESOLUTION);
  // A shape that is no standing humanoid is refused before landmarks are read into it.
  checkHumanoidShape(canonical, triangles, view);
  const lm = findLandmarks2D(view);
  const res = view.res;
  const toXY = (p: Pixel): [number, number] => [pixelToCanonical(p[0], res), pixelToCanonical(p[1], res)];

  const named2D: [MixamoJointName | 'LeftHandTip' | 'RightHandTip' | 'HeadTop', Pixel][] = [
    ['Hips', lm.hips], ['Spine', lm.spine], ['Spine1', lm.spine1], ['Spine2', lm.spine2], ['Neck', lm.neck], ['Head', lm.head],
    ['HeadTop', lm.headTop],
    ['LeftShoulder', lm.left.shoulder], ['LeftArm', lm.left.arm], ['LeftForeArm', lm.left.foreArm], ['LeftHand', lm.left.hand],
    ['LeftHandTip', lm.left.handTip],
    ['RightShoulder', lm.right.shoulder], ['RightArm', lm.right.arm], ['RightForeArm', lm.right.foreArm], ['RightHand', lm.right.hand],
    ['RightHandTip', lm.right.handTip],
    ['LeftUpLeg', lm.left.upLeg], ['LeftLeg', lm.left.leg], ['LeftFoot', lm.left.foot],
    ['RightUpLeg', lm.right.upLeg], ['RightLeg', lm.right.leg], ['RightFoot', lm.right.foot],
  ];
  const flat = new Float64Array(named2D.length * 2);
  named2D.forEach(([, p], k) => { const [x, y] = toXY(p); flat[2 * k] = x; flat[2 * k + 1] = y; });
  const zs = liftJointsByRayMidpoint(canonical, triangles, flat, view);
  const c: Record<string, Vec3> = {};
  named2D.forEach(([name], k) => { c[name] = [flat[2 * k], flat[2 * k + 1], zs[k]]; });
  // HeadTop_End sits on the top of the head: the ray midpoint of the row just below the top gives its depth.
  c.HeadTop_End = [c.HeadTop[0], pixelToCanonical(lm.headTop[1] + 0.5, res), c.Head[2]];

  const soleY = pixelToCanonical(lm.soleRow - 0.5, res);
  const toeTips: Record<string, Vec3> = {};
  const used = usedVertices(canonical.length / 3, triangles);
  for (const side of ['Left', 'Right'] as const) {
    const foot = c[`${side}Foot`];
    const { heelZ, tipZ } = footExtent(canonical, used, foot, soleY, side === 'Left' ? 1 : -1);
    const toeY = soleY + 0.25 * (foot[1] - soleY);
    c[`${side}ToeBase`] = [foot[0], toeY, heelZ + 0.72 * (tipZ - heelZ)];
    toeTips[side] = [foot[0], toeY, tipZ];
  }

  symmetrise(c);
  const heads = {} as Record<MixamoJointName, Vec3>;
  const canonicalHeads = {} as Record<MixamoJointName, Vec3>;
  for (const name of Object.keys(c)) {
    if (name.endsWith('Tip') || name === 'HeadTop') continue;
    canonicalHeads[name as MixamoJointName] = c[name];
    heads[name as MixamoJointName] = fromCanonical(c[name], cf);
  }
  const ends: Partial<Record<MixamoJointName, Vec3>> = {
    LeftHand: fromCanonical(c.LeftHandTip, cf), RightHand: fromCanonical(c.RightHandTip, cf),
    LeftToeBase: fromCanonical(toeTips.Left, cf), RightToeBase: fromCanonical(toeTips.Right, cf),
  };
  const skeleton = buildMixamoSkeleton(heads, ends, cf.frame, prefix);
  return { skeleton, canonical: canonicalHeads, landmarks: lm };
}

/** 1 for each vertex that a triangle uses: vertexCount, triangles #T*3 → Uint8Array #V */
function usedVertices(vertexCount: number, triangles: Uint32Array): Uint8Array {
  const used = new Uint8Array(vertexCount);
  for (let t = 0; t < triangles.length; t++) used[triangles[t]] = 1;
  return used;
}

/** Heel and toe-tip depth of one foot: the vertices of the body (`used`) below the ankle on that side. */
function footExtent(canonical: Float32Array, used: Uint8Array, ankle: Vec3, soleY: number, side: number): { heelZ: number; tipZ: number } {
  let heelZ = Infinity, tipZ = -Infinity;
  const top = ankle[1] + 0.25 * (ankle[1] - soleY);
  for (let i = 0; i < canonical.length; i += 3) {
    if (!used[i / 3] || canonical[i + 1] > top || canonical[i] * side <= 0) continue;
    if (Math.abs(canonical[i] - ankle[0]) > 0.08) continue;
    const z = canonical[i + 2];
    if (z < heelZ) heelZ = z;
    if (z > tipZ) tipZ = z;
  }
  if (!Number.isFinite(heelZ)) return { heelZ: ankle[2] - 0.01, tipZ: ankle[2] + 0.05 };
  return { heelZ, tipZ };
}

/** Mirror-averages each Left/Right pair across the midline x = Hips.x (the body is symmetric; silhouettes are noisy). */
function symmetrise(c: Record<string, Vec3>): void {
  const mid = c.Hips[0];
  for (const name of Object.keys(c)) {
    if (!name.startsWith('Left')) continue;
    const other = 'Right' + name.slice(4);
    const l = c[name], r = c[other];
    if (!r) continue;
    const half = 0.5 * ((l[0] - mid) - (r[0] - mid));
    const y = 0.5 * (l[1] + r[1]), z = 0.5 * (l[2] + r[2]);
    c[name] = [mid + half, y, z];
    c[other] = [mid - half, y, z];
  }
  for (const name of ['Spine', 'Spine1', 'Spine2', 'Neck', 'Head', 'HeadTop_End', 'HeadTop']) c[name][0] = mid;
}
