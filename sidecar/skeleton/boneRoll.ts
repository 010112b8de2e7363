import { cross, dot, sub } from '../geometry/vec3.js';
import type { Vec3 } from '../types.js';

/**
 * Blender's edit-bone roll that turns the bone's local Z axis towards `zWanted`.
 * Blender builds a bone's rest matrix from its direction y and roll: the roll-free Z axis of a bone pointing along
 * y = (x, y, z) is (-x z / (1 + y), -z, 1 - z^2 / (1 + y)) (vec_roll_to_mat3 in Blender's armature code); roll then
 * turns it about y. Straight down (y = -1) has its own fixed frame.
 * head, tail: bone end points (Blender world space); zWanted: any vector not parallel to the bone → roll in radians
 */
export function rollTowards(head: Vec3, tail: Vec3, zWanted: Vec3): number {
  const d = sub(tail, head);
  const len = Math.hypot(d[0], d[1], d[2]);
  if (len < 1e-12) return 0;
  const [x, y, z] = [d[0] / len, d[1] / len, d[2] / len];
  const nor: Vec3 = [x, y, z];
  let z0: Vec3;
  const theta = 1 + y;
  const thetaAlt = x * x + z * z;
  if (theta > 1e-5 || (theta > 1e-9 && thetaAlt > 1e-9)) {
    const t = theta > 1e-5 ? theta : thetaAlt * 0.5 + thetaAlt * thetaAlt * 0.125;
    z0 = [-x * z / t, -z, 1 - z * z / t];
  } else {
    z0 = [0, 0, 1];
  }
  // Project the wanted axis onto the plane normal to the bone.
  const k = dot(zWanted, nor);
  const zw: Vec3 = [zWanted[0] - k * x, zWanted[1] - k * y, zWanted[2] - k * z];
  if (Math.hypot(zw[0], zw[1], zw[2]) < 1e-9) return 0;
  const c = cross(z0, zw);
  return Math.atan2(dot(c, nor), dot(z0, zw));
}

