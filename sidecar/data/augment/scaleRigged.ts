/** A rigged character made taller or shorter as a whole (about the origin of its space): nothing turns. */
import type { Vec3 } from '../../types.js';
import type { RiggedCharacter } from '../trainingSample.js';

/**
 * heightAlong: the character's extent along up: max − min of every vertex's position · up.
 * parts: positions #V_p*3 each, up: unit vector → length (0 for no vertices)
 */
export function heightAlong(parts: { positions: Float32Array }[], up: Vec3): number {
  let lo = Infinity, hi = -Infinity;
  for (const part of parts) {
    const p = part.positions;
    for (let i = 0; i < p.length; i += 3) {
      const h = p[i] * up[0] + p[i + 1] * up[1] + p[i + 2] * up[2];
      if (h < lo) lo = h;
      if (h > hi) hi = h;
    }
  }
  return hi > lo ? hi - lo : 0;
}

/** scaleRigged: character, factor (> 0) → the character with every vertex and joint multiplied by factor. */
export function scaleRigged(character: RiggedCharacter, factor: number): RiggedCharacter {
  return {
    ...character,
    parts: character.parts.map((p) => ({ name: p.name, positions: Float32Array.from(p.positions, (x) => x * factor), triangles: p.triangles })),
    joints: Float32Array.from(character.joints, (x) => x * factor),
  };
}
