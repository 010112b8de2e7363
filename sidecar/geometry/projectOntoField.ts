/**
 * A point pulled onto the zero set of a distance field: two Newton steps along the field's numerical gradient
 * (central differences, step cell/20), each clamped to a third of a cell so that a surface-nets vertex stays near the
 * cell it was made in. Surface nets meshers (cli/surfaceNets, data/procedural/posedHumanoidSurface) finish with it.
 * f: (x, y, z) → signed distance, p: the point, cell: the grid's cell edge → the projected point.
 */
import type { Vec3 } from '../types.js';

export function projectOntoField(f: (x: number, y: number, z: number) => number, p: Vec3, cell: number): Vec3 {
  const h = cell * 0.05;
  let [x, y, z] = p;
  for (let step = 0; step < 2; step++) {
    const d = f(x, y, z);
    const gx = (f(x + h, y, z) - f(x - h, y, z)) / (2 * h);
    const gy = (f(x, y + h, z) - f(x, y - h, z)) / (2 * h);
    const gz = (f(x, y, z + h) - f(x, y, z - h)) / (2 * h);
    const g2 = gx * gx + gy * gy + gz * gz;
    if (g2 < 1e-12) break;
    let s = d / g2;
    const move = Math.abs(s) * Math.sqrt(g2);
    if (move > cell / 3) s *= cell / 3 / move;
    x -= s * gx;
    y -= s * gy;
    z -= s * gz;
  }
  return [x, y, z];
}
