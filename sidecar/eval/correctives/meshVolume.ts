/**
 * Volumes of closed, outward-wound triangle meshes: the whole enclosed volume (divergence theorem) and the volume
 * inside a ball (generalised winding number on a grid), the latter local to a joint, where skinning loses or gains it.
 */
import { buildWindingNumberTree, windingNumbers } from '../../geometry/windingNumber.js';

/**
 * signedVolume: Σ over triangles of a · (b × c) / 6 (positive for a closed mesh wound outwards; independent of the
 * origin for a closed one). positions Float32Array #V*3, triangles Uint32Array #T*3 → m³
 */
export function signedVolume(positions: Float32Array, triangles: Uint32Array): number {
  let v = 0;
  for (let t = 0; t < triangles.length; t += 3) {
    const a = triangles[t] * 3, b = triangles[t + 1] * 3, c = triangles[t + 2] * 3;
    const ax = positions[a], ay = positions[a + 1], az = positions[a + 2];
    const bx = positions[b], by = positions[b + 1], bz = positions[b + 2];
    const cx = positions[c], cy = positions[c + 1], cz = positions[c + 2];
    v += ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz) + az * (bx * cy - by * cx);
  }
  return v / 6;
}

/**
 * volumeLoss: the share of the rest volume lost at a pose, 1 − posed / rest (negative: volume gained).
 * posedVolume, restVolume: m³ (restVolume > 0) → unitless
 */
export function volumeLoss(posedVolume: number, restVolume: number): number {
  return 1 - posedVolume / restVolume;
}

/** Grid points per ball diameter in volumeInBall: the volume is then within about a percent for a limb-sized ball. */
export const BALL_RESOLUTION = 24;

/**
 * volumeInBall: the volume of the mesh's inside (winding number > ½) within the ball of `radius` about `centre`,
 * counted on a regular grid of `resolution` points per diameter (cell-centred, so a rest and a posed mesh are sampled
 * alike). positions Float32Array #V*3, triangles Uint32Array #T*3 (closed, outward), centre [x, y, z], radius (m),
 * resolution → m³
 */
export function volumeInBall(positions: Float32Array, triangles: Uint32Array, centre: ArrayLike<number>, radius: number, resolution = BALL_RESOLUTION): number {
  const h = (2 * radius) / resolution;
  const points: number[] = [];
  for (let k = 0; k < resolution; k++) {
    for (let j = 0; j < resolution; j++) {
      for (let i = 0; i < resolution; i++) {
        const x = -radius + (i + 0.5) * h, y = -radius + (j + 0.5) * h, z = -radius + (k + 0.5) * h;
        if (x * x + y * y + z * z <= radius * radius) points.push(centre[0] + x, centre[1] + y, centre[2] + z);
      }
    }
  }
  const w = windingNumbers(buildWindingNumberTree(positions, triangles), Float32Array.from(points));
  let inside = 0;
  for (let i = 0; i < w.length; i++) if (w[i] > 0.5) inside++;
  return inside * h * h * h;
}
