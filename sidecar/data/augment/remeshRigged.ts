/**
 * A rigged character remeshed the way AI generators mesh (eval/remeshVolume.ts: one closed, chaotically triangulated
 * surface around all the parts), its weights carried over by the eval's closest-point transfer.
 */
import { remeshVolume } from '../../eval/remeshVolume.js';
import { transferWeightsByClosestPoint } from '../../eval/transferWeights.js';
import type { RiggedCharacter } from '../trainingSample.js';

/**
 * remeshRigged: character (parts with per-part top-k weights into MIXAMO_JOINTS), targetVertices (integer ≥ 100),
 * seed → the same character with one part 'remesh' (≈ targetVertices vertices) and its weights (top-4, rows sum to
 * 1); joints and meta unchanged. Throws what remeshVolume and transferWeightsByClosestPoint throw.
 */
export function remeshRigged(character: RiggedCharacter, targetVertices: number, seed: number): RiggedCharacter {
  const remeshed = remeshVolume(character.parts, targetVertices, seed);
  const weights = character.weights.map((w, p) => ({
    name: character.parts[p].name,
    influences: w.indices.length / (character.parts[p].positions.length / 3),
    indices: w.indices,
    weights: w.weights,
  }));
  const carried = transferWeightsByClosestPoint({ parts: character.parts, weights }, remeshed.positions);
  return {
    ...character,
    parts: [{ name: remeshed.name, positions: remeshed.positions, triangles: remeshed.triangles }],
    weights: [carried],
  };
}
