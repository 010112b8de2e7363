import { AutoRigError } from '../errors.js';
import type { Vec3 } from '../types.js';

/**
 * A bone's rest axes as Blender builds them from head, tail and roll (vec_roll_to_mat3 in Blender's armature code):
 * y along head → tail; the roll-free frame turns world +Y onto y by the shortest arc (a bone pointing straight down,
 * where that arc is not unique, gets Blender's fixed frame x = −X, z = +Z); roll then turns x and z about y.
 * A pose bone's rotation is written in these axes, so a driver reading "the rotation about a" needs a in them.
 * head, tail: Vec3 (world), roll: radians → { x, y, z } unit Vec3 each, right-handed (x = y × z)
 * Throws BAD_SKELETON when head and tail coincide.
 */
export function boneRestFrame(head: Vec3, tail: Vec3, roll: number): { x: Vec3; y: Vec3; z: Vec3 } {
  const d: Vec3 = [tail[0] - head[0], tail[1] - head[1], tail[2] - head[2]];
  const length = Math.hypot(d[0], d[1], d[2]);
  if (!(length > 0)) throw new AutoRigError('BAD_SKELETON', 'a bone whose head and tail coincide has no rest axes');
  const [x, y, z] = [d[0] / length, d[1] / length, d[2] / length];
  const theta = 1 + y;
  const thetaAlt = x * x + z * z;
  let x0: Vec3, z0: Vec3;
  // Blender's thresholds: a bone nearly straight down falls back to a series expansion, then to the fixed frame.
  if (theta > 1e-5 || (theta > 1e-9 && thetaAlt > 1e-9)) {
    const t = theta > 1e-5 ? theta : thetaAlt * 0.5 + thetaAlt * thetaAlt * 0.125;
    x0 = [1 - (x * x) / t, -x, (-x * z) / t];
    z0 = [(-x * z) / t, -z, 1 - (z * z) / t];
  } else {
    x0 = [-1, 0, 0];
    z0 = [0, 0, 1];
  }
  const yAxis: Vec3 = [x, y, z];
  return { x: turnAbout(x0, yAxis, roll), y: yAxis, z: turnAbout(z0, yAxis, roll) };
}

/** v turned by `radians` about the unit axis a (right hand), for v ⟂ a: v cos + (a × v) sin. */
function turnAbout(v: Vec3, a: Vec3, radians: number): Vec3 {
  const c = Math.cos(radians), s = Math.sin(radians);
  const ax: Vec3 = [a[1] * v[2] - a[2] * v[1], a[2] * v[0] - a[0] * v[2], a[0] * v[1] - a[1] * v[0]];
  return [v[0] * c + ax[0] * s, v[1] * c + ax[1] * s, v[2] * c + ax[2] * s];
}
