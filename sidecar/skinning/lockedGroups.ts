/**
 * Keeps the weights the user locked and spreads the rest of each vertex's unit of weight over the computed bones:
 * a vertex with locked total L keeps its locked weights as they are and gives the computed bones (1 - L), in the
 * proportions the skinning found. When locked weights alone fill all k slots or exceed 1, the k largest are kept
 * and scaled to sum to 1.
 * computed: top-k indices #V*k + values #V*k (rows sum to 1), locked: one weight array #V per locked bone index →
 *   top-k indices #V*k + values #V*k (rows sum to 1)
 */
export function mergeLockedWeights(
  computed: { indices: Uint16Array; weights: Float32Array },
  locked: Map<number, Float32Array>,
  k: number,
): { indices: Uint16Array; weights: Float32Array } {
  const nv = computed.indices.length / k;
  const indices = new Uint16Array(nv * k);
  const weights = new Float32Array(nv * k);
  const lockedBones = [...locked.keys()];
  for (let v = 0; v < nv; v++) {
    const keep: [number, number][] = [];
    let lockedSum = 0;
    for (const b of lockedBones) {
      const w = Math.max(0, locked.get(b)![v]);
      if (w > 0) { keep.push([b, w]); lockedSum += w; }
    }
    keep.sort((a, b) => b[1] - a[1]);
    const free: [number, number][] = [];
    for (let s = 0; s < k; s++) {
      const b = computed.indices[v * k + s], w = computed.weights[v * k + s];
      if (w > 0 && !locked.has(b)) free.push([b, w]);
    }
    let row: [number, number][];
    if (keep.length >= k || lockedSum >= 1 || (free.length === 0 && keep.length > 0)) {
      row = keep.slice(0, k);
      const s = row.reduce((a, [, w]) => a + w, 0);
      row = row.map(([b, w]) => [b, w / s]);
    } else {
      const slots = free.slice(0, k - keep.length);
      const s = slots.reduce((a, [, w]) => a + w, 0);
      row = [...keep, ...slots.map(([b, w]) => [b, (w / s) * (1 - lockedSum)] as [number, number])];
    }
    row.forEach(([b, w], s) => { indices[v * k + s] = b; weights[v * k + s] = w; });
  }
  return { indices, weights };
}
