/**
 * The crotch read through clothes that hide it from the front (a long coat, a skirt, a robe, a cape reaching the
 * floor): the silhouette's gap between the legs starts at the hem, or nowhere, and the trunk and hip joints read from
 * there sit far too low (procedural humanoid 15 000 033's hips 11 % of the height under its own). Where the clothes are
 * pieces of their own (meshShells), the body's piece still shows where the legs part: down the midline, its surface is
 * crossed on every row from the chest to the crotch, and on none between the legs.
 */

/**
 * The share of the way from the soles up to the chest a piece must reach down to be the body's (its legs): a jacket or
 * a shirt crossed at the chest ends above it; the body, trousers, a long coat or a cape reach it.
 */
export const BODY_PIECE_REACH = 0.3;

/** The crotch read through the clothes (crotchThroughClothing). */
export interface CrotchThroughClothing {
  /** the crotch's front-view row, -1 where no piece is crossed at the chest row */
  row: number;
  /** whether another piece is crossed on the row under it: clothes cover the body's crotch (the body has no other piece) */
  covered: boolean;
}

/**
 * crotchThroughClothing: among the pieces the midline's ray crosses (meets at least twice) at the chest row and that
 * reach down to the legs (BODY_PIECE_REACH), each one's lowest row from which the ray crosses it on every row up to
 * the chest; the highest of those is the body's crotch (a coat or a cape around or behind the body reaches lower
 * down the midline, its hem or the floor); it is covered where the ray crosses another piece on the row under it.
 * The rays run along z through the row centres of a front view of res rows over canonical [-0.5, 0.5].
 * positions: Float32Array #V*3 (canonical), triangles: Uint32Array #T*3, shellOf: Int32Array #V (meshShells), x: the
 * midline (canonical), chestRow, soleRow: front-view rows (chest above soles), res: the front view's rows →
 * CrotchThroughClothing
 */
export function crotchThroughClothing(
  positions: Float32Array, triangles: Uint32Array, shellOf: Int32Array, x: number, chestRow: number, soleRow: number, res: number,
): CrotchThroughClothing {
  const rows = chestRow - soleRow + 1;
  if (rows < 2) return { row: -1, covered: false };
  const rowY = (j: number) => -0.5 + (j + 0.5) / res;
  const hits = new Map<number, Int32Array>();
  const lowestY = new Map<number, number>();
  for (let t = 0; t < triangles.length; t += 3) {
    const a = triangles[t] * 3, b = triangles[t + 1] * 3, c = triangles[t + 2] * 3;
    const piece = shellOf[triangles[t]];
    const x0 = positions[a], y0 = positions[a + 1], x1 = positions[b], y1 = positions[b + 1], x2 = positions[c], y2 = positions[c + 1];
    const minY = Math.min(y0, y1, y2);
    if (!(minY >= (lowestY.get(piece) ?? Infinity))) lowestY.set(piece, minY);
    if (Math.min(x0, x1, x2) > x || Math.max(x0, x1, x2) < x) continue;
    const area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
    if (area === 0) continue;
    const from = Math.max(soleRow, Math.ceil((minY + 0.5) * res - 0.5));
    const to = Math.min(chestRow, Math.floor((Math.max(y0, y1, y2) + 0.5) * res - 0.5));
    for (let j = from; j <= to; j++) {
      const y = rowY(j);
      const w0 = ((x1 - x) * (y2 - y) - (x2 - x) * (y1 - y)) / area;
      const w1 = ((x2 - x) * (y0 - y) - (x0 - x) * (y2 - y)) / area;
      if (w0 < 0 || w1 < 0 || 1 - w0 - w1 < 0) continue;
      let count = hits.get(piece);
      if (!count) { count = new Int32Array(rows); hits.set(piece, count); }
      count[j - soleRow]++;
    }
  }
  const reachY = rowY(soleRow + BODY_PIECE_REACH * (chestRow - soleRow));
  let crotch = -1, body = -1;
  for (const [piece, count] of hits) {
    if (count[rows - 1] < 2 || !(lowestY.get(piece)! <= reachY)) continue;
    let low = rows - 1;
    while (low > 0 && count[low - 1] >= 2) low--;
    if (soleRow + low > crotch) { crotch = soleRow + low; body = piece; }
  }
  if (crotch <= soleRow) return { row: crotch, covered: false };
  let covered = false;
  for (const [piece, count] of hits) if (piece !== body && count[crotch - 1 - soleRow] >= 2) covered = true;
  return { row: crotch, covered };
}
