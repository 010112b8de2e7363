import { pixelToCanonical } from './frontView.js';

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

/**
 * The pelvis's row over the crotch (CrotchThroughClothing.pelvisRow): the lowest from which the body's piece is, down
 * the midline, PELVIS_THICKNESS_SHARE as thick front to back as it is at most up to PELVIS_REACH of the body's height
 * over its crotch. The thighs can touch, or nearly, for a stretch under the pelvis, and the midline then leaves the
 * body lower down, at a thickness that tapers slowly (procedural 19 000 054: 0.17 of the height under its hip joints,
 * the generator's deepest at 0.14): the pelvis's own outline is where the thickness climbs. On 95 procedural humanoids
 * in clothes of their own piece (skirts, long coats: 11 000 040–119 and 12, 13, 15, 16, 17, 18 000 000–079, arms posed
 * apart), the generator's hip joints stood 0.038–0.140 of the height over the crotch (standard deviation 0.019), and
 * 0.034–0.076 over the pelvis's row (0.008; mean 0.054: HIP_ABOVE_PELVIS).
 */
export const PELVIS_THICKNESS_SHARE = 0.5;
export const PELVIS_REACH = 0.15;

/** The crotch read through the clothes (crotchThroughClothing). */
export interface CrotchThroughClothing {
  /** the crotch's front-view row, -1 where no piece is crossed at the chest row */
  row: number;
  /** whether another piece is crossed on the row under it: clothes cover the body's crotch (the body has no other piece) */
  covered: boolean;
  /**
   * whether such a piece reaches in front of the body's back there (a coat, a skirt: the legs' outline is the
   * clothes'), not only behind it (a cape: the front view still shows the legs, the gap between them filled)
   */
  coveredInFront: boolean;
  /** the pelvis's row over it (PELVIS_THICKNESS_SHARE), the crotch's where none is read */
  pelvisRow: number;
}

/**
 * crotchThroughClothing: among the pieces the midline's ray crosses (meets at least twice) at the chest row and that
 * reach down to the legs (BODY_PIECE_REACH), each one's lowest row from which the ray crosses it on every row up to
 * the chest; the highest of those is the body's crotch (a coat or a cape around or behind the body reaches lower
 * down the midline, its hem or the floor); it is covered where the ray crosses another piece on the row under it, in
 * front where that piece reaches in front of the body's back.
 * The rays run along z through the row centres of a front view of res rows over canonical [-0.5, 0.5].
 * positions: Float32Array #V*3 (canonical), triangles: Uint32Array #T*3, shellOf: Int32Array #V (meshShells), x: the
 * midline (canonical), chestRow, soleRow: front-view rows (chest above soles), res: the front view's rows,
 * heightRows: the body's height in rows → CrotchThroughClothing
 */
export function crotchThroughClothing(
  positions: Float32Array, triangles: Uint32Array, shellOf: Int32Array, x: number, chestRow: number, soleRow: number, res: number,
  heightRows: number,
): CrotchThroughClothing {
  const rows = chestRow - soleRow + 1;
  if (rows < 2) return { row: -1, covered: false, coveredInFront: false, pelvisRow: -1 };
  // per piece and row: how often the ray meets it, and its nearest and farthest hit (its thickness down the midline)
  const hits = new Map<number, { count: Int32Array; front: Float64Array; back: Float64Array }>();
  const lowestY = new Map<number, number>();
  for (let t = 0; t < triangles.length; t += 3) {
    const a = triangles[t] * 3, b = triangles[t + 1] * 3, c = triangles[t + 2] * 3;
    const piece = shellOf[triangles[t]];
    const x0 = positions[a], y0 = positions[a + 1], x1 = positions[b], y1 = positions[b + 1], x2 = positions[c], y2 = positions[c + 1];
    const z0 = positions[a + 2], z1 = positions[b + 2], z2 = positions[c + 2];
    const minY = Math.min(y0, y1, y2);
    if (!(minY >= (lowestY.get(piece) ?? Infinity))) lowestY.set(piece, minY);
    if (Math.min(x0, x1, x2) > x || Math.max(x0, x1, x2) < x) continue;
    const area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
    if (area === 0) continue;
    const from = Math.max(soleRow, Math.ceil((minY + 0.5) * res - 0.5));
    const to = Math.min(chestRow, Math.floor((Math.max(y0, y1, y2) + 0.5) * res - 0.5));
    for (let j = from; j <= to; j++) {
      const y = pixelToCanonical(j, res);
      const w0 = ((x1 - x) * (y2 - y) - (x2 - x) * (y1 - y)) / area;
      const w1 = ((x2 - x) * (y0 - y) - (x0 - x) * (y2 - y)) / area;
      if (w0 < 0 || w1 < 0 || 1 - w0 - w1 < 0) continue;
      let met = hits.get(piece);
      if (!met) {
        met = { count: new Int32Array(rows), front: new Float64Array(rows).fill(-Infinity), back: new Float64Array(rows).fill(Infinity) };
        hits.set(piece, met);
      }
      met.count[j - soleRow]++;
      const z = w0 * z0 + w1 * z1 + (1 - w0 - w1) * z2;
      if (z > met.front[j - soleRow]) met.front[j - soleRow] = z;
      if (z < met.back[j - soleRow]) met.back[j - soleRow] = z;
    }
  }
  const reachY = pixelToCanonical(soleRow + BODY_PIECE_REACH * (chestRow - soleRow), res);
  let crotch = -1, body = -1;
  for (const [piece, { count }] of hits) {
    if (count[rows - 1] < 2 || !(lowestY.get(piece)! <= reachY)) continue;
    let low = rows - 1;
    while (low > 0 && count[low - 1] >= 2) low--;
    if (soleRow + low > crotch) { crotch = soleRow + low; body = piece; }
  }
  if (crotch < 0) return { row: -1, covered: false, coveredInFront: false, pelvisRow: -1 };
  const { front: far, back: near } = hits.get(body)!;
  let covered = false, coveredInFront = false;
  for (const [piece, { count, front }] of hits) {
    if (piece === body || crotch <= soleRow || count[crotch - 1 - soleRow] < 2) continue;
    covered = true;
    if (front[crotch - 1 - soleRow] > near[crotch - soleRow]) coveredInFront = true;
  }
  const thickness = (j: number) => far[j - soleRow] - near[j - soleRow];
  const top = Math.min(chestRow, crotch + Math.round(PELVIS_REACH * heightRows));
  let most = 0;
  for (let j = crotch; j <= top; j++) most = Math.max(most, thickness(j));
  let pelvisRow = crotch;
  while (pelvisRow < top && thickness(pelvisRow) < PELVIS_THICKNESS_SHARE * most) pelvisRow++;
  return { row: crotch, covered, coveredInFront, pelvisRow };
}
