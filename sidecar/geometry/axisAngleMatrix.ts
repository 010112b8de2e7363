/**
 * Rodrigues' formula: the rotation by `radians` about a unit axis as a row-major 3x3, written into out at offset.
 * axis: unit Vec3 (not normalised here), radians, out: Float64Array with room for 9 numbers at offset.
 */
import type { Vec3 } from '../types.js';

export function axisAngleMatrix(axis: Vec3, radians: number, out: Float64Array, offset = 0): void {
  const [x, y, z] = axis;
  const c = Math.cos(radians), s = Math.sin(radians), t = 1 - c;
  out[offset] = c + t * x * x; out[offset + 1] = t * x * y - s * z; out[offset + 2] = t * x * z + s * y;
  out[offset + 3] = t * x * y + s * z; out[offset + 4] = c + t * y * y; out[offset + 5] = t * y * z - s * x;
  out[offset + 6] = t * x * z - s * y; out[offset + 7] = t * y * z + s * x; out[offset + 8] = c + t * z * z;
}
