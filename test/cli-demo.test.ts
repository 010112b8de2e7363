/** The committed demo character: regenerable, small, and the humanoid it claims to be. */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildDemoCharacter, DEMO_CHARACTER_PATH } from '../sidecar/cli/demoCharacter.js';
import { demoCharacterObj } from '../sidecar/cli/generateDemoAsset.js';
import type { CharacterPart } from '../sidecar/io/character.js';
import { boundsOf } from '../sidecar/io/gltf.js';
import { parseObj } from '../sidecar/io/obj.js';

const assetPath = join(import.meta.dirname, '..', DEMO_CHARACTER_PATH);

describe('demo character asset', { timeout: 30_000 }, () => {
  const committed = parseObj(readFileSync(assetPath, 'utf8'), { source: assetPath }).parts;
  const built = buildDemoCharacter();

  it('is what the generator makes (regenerate: node dist/sidecar/cli/generateDemoAsset.js)', () => {
    const generated = parseObj(demoCharacterObj(built)).parts;
    expect(committed.map((p) => p.name)).toEqual(generated.map((p) => p.name));
    committed.forEach((part, p) => {
      expect(part.triangles).toEqual(generated[p].triangles);
      let worst = 0;
      for (let i = 0; i < part.positions.length; i++) worst = Math.max(worst, Math.abs(part.positions[i] - generated[p].positions[i]));
      expect(worst).toBeLessThan(2e-4);
    });
  });

  it('is small: under 1 MB, 3k to 8k vertices, in four parts', () => {
    expect(statSync(assetPath).size).toBeLessThan(1_000_000);
    const vertices = committed.reduce((n, p) => n + p.positions.length / 3, 0);
    expect(vertices).toBeGreaterThan(3000);
    expect(vertices).toBeLessThan(8000);
    expect(committed.map((p) => p.name)).toEqual(['body', 'eye_L', 'eye_R', 'hat']);
  });

  it('has a closed, outward-facing 2-manifold body and closed extra parts', () => {
    for (const part of built) {
      // Every directed edge once (consistent orientation, no fins) and its reverse present (no holes).
      const directed = new Set<number>();
      let repeated = 0;
      const t = part.triangles;
      const count = part.positions.length / 3;
      for (let f = 0; f < t.length; f += 3) {
        for (let e = 0; e < 3; e++) {
          const key = t[f + e] * count + t[f + ((e + 1) % 3)];
          if (directed.has(key)) repeated++;
          directed.add(key);
        }
      }
      let open = 0;
      for (const key of directed) if (!directed.has((key % count) * count + Math.floor(key / count))) open++;
      expect({ part: part.name, repeated, open }).toEqual({ part: part.name, repeated: 0, open: 0 });
      expect(signedVolume(part), part.name).toBeGreaterThan(0);
    }
  });

  it('stands 1.75 m tall on the floor, Y up, facing +Z, symmetric left/right, in an A-pose', () => {
    const body = committed[0];
    const [min, max] = boundsOf(body.positions);
    expect(min[1]).toBeGreaterThan(-0.01);
    expect(min[1]).toBeLessThan(0.01);
    expect(max[1]).toBeGreaterThan(1.7);
    expect(max[1]).toBeLessThan(1.8);
    expect(Math.abs(min[0] + max[0])).toBeLessThan(0.02);
    // Facing +Z: the nose and the toes stick out forwards.
    const frontmostAt = (y0: number, y1: number) => {
      let best = -Infinity;
      for (let i = 0; i < body.positions.length; i += 3) if (body.positions[i + 1] > y0 && body.positions[i + 1] < y1) best = Math.max(best, body.positions[i + 2]);
      return best;
    };
    expect(frontmostAt(1.55, 1.65)).toBeGreaterThan(0.11); // nose
    expect(frontmostAt(0, 0.1)).toBeGreaterThan(0.15); // toes
    // A-pose: the hands hang well below the shoulders but far out to the side.
    const leftmost = body.positions.reduce((best, x, i) => (i % 3 === 0 && x > body.positions[best * 3] ? i / 3 : best), 0);
    expect(body.positions[leftmost * 3]).toBeGreaterThan(0.75);
    expect(body.positions[leftmost * 3 + 1]).toBeLessThan(1.15);
    expect(body.positions[leftmost * 3 + 1]).toBeGreaterThan(0.9);
    // The eyes sit on the face, the hat on the head, neither welded to the body.
    expect(boundsOf(committed[1].positions)[0][0]).toBeGreaterThan(0);
    expect(boundsOf(committed[2].positions)[1][0]).toBeLessThan(0);
    expect(boundsOf(committed[3].positions)[1][1]).toBeGreaterThan(max[1]);
  });
});

/** Signed volume of a closed mesh: positive when its triangles face outwards. */
function signedVolume(part: CharacterPart): number {
  const p = part.positions;
  const t = part.triangles;
  let volume = 0;
  for (let f = 0; f < t.length; f += 3) {
    const a = t[f] * 3, b = t[f + 1] * 3, c = t[f + 2] * 3;
    volume += (p[a] * (p[b + 1] * p[c + 2] - p[b + 2] * p[c + 1]) - p[a + 1] * (p[b] * p[c + 2] - p[b + 2] * p[c]) + p[a + 2] * (p[b] * p[c + 1] - p[b + 1] * p[c])) / 6;
  }
  return volume;
}
