/**
 * sharpenWeights: each vertex's weights raised to `exponent` and renormalised to sum to 1, in place: the same bones in
 * the same order of strength, with a narrower blend between them. The learned skinning's weights are smoothed twice on
 * their way to the vertices (the network's softmax, then the carry's blend of several sample points), so they blend
 * over a wider band than an artist's; on the artist dev set (`autorig eval --method learned`, the artists' skeletons
 * re-skinned) the weight L1 is 0.374 unsharpened, 0.368 at exponent 1.5, 0.366 at 2, 0.367 at 3 and 4 (±45°: 0.0089,
 * 0.0087, 0.0086, 0.0085, 0.0085).
 * weights: Float32Array #V*k (rows sum to 1; modified in place), k: influences, exponent > 0 (1: unchanged)
 */
export function sharpenWeights(weights: Float32Array, k: number, exponent: number): void {
  if (exponent === 1) return;
  for (let v = 0; v < weights.length / k; v++) {
    let sum = 0;
    for (let q = 0; q < k; q++) {
      const w = weights[v * k + q] > 0 ? weights[v * k + q] ** exponent : 0;
      weights[v * k + q] = w;
      sum += w;
    }
    if (sum > 0) for (let q = 0; q < k; q++) weights[v * k + q] /= sum;
  }
}
