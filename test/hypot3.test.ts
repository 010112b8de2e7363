import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../sidecar/data/seededRandom.js';
import { hypot3 } from '../sidecar/geometry/hypot3.js';

describe('hypot3', () => {
  it('is Math.hypot to the bit: random triples at every scale, float32 products, zeros, subnormals, infinities, NaN', () => {
    const random = new SeededRandom(7);
    const f32 = new Float32Array(3);
    let compared = 0, inexact = 0, different = 0;
    for (let r = 0; r < 200_000; r++) {
      const scale = 10 ** Math.floor(random.next() * 40 - 20);
      for (let k = 0; k < 3; k++) f32[k] = (random.next() - 0.5) * scale * (random.next() < 0.05 ? 0 : 1);
      // cross products of float32 differences, as a triangle's area vector is made
      const a = f32[0] * f32[1] - f32[2] * 0.3, b = f32[1] * f32[2], c = f32[0] - f32[2];
      for (const [x, y, z] of [[a, b, c], [c, a, b], [-b, 0, a]]) {
        if (!Object.is(hypot3(x, y, z), Math.hypot(x, y, z))) different++;
        // not a test of Math.sqrt alone: the naive root differs from both now and then
        if (Math.sqrt(x * x + y * y + z * z) !== Math.hypot(x, y, z)) inexact++;
        compared++;
      }
    }
    expect(different).toBe(0);
    expect(compared).toBe(600_000);
    expect(inexact).toBeGreaterThan(compared / 100);
    const special = [0, -0, 5e-324, -5e-324, 1e-310, 1.7976931348623157e308, -1.7976931348623157e308, Infinity, -Infinity, NaN, 1, -3];
    for (const x of special) for (const y of special) for (const z of special) expect(Object.is(hypot3(x, y, z), Math.hypot(x, y, z))).toBe(true);
  });
});
