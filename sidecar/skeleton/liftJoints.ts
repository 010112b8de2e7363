import type { FrontView } from './frontView.js';
import { nearestCoveredPixel } from './imageFields.js';

function lowerBound(xs: number[], v: number): number {
  let lo = 0, hi = xs.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (xs[m] < v) lo = m + 1; else hi = m; }
  return lo;
}

/** Midpoint of the front and back depth at the covered pixel nearest to canonical (x, y); 0 for an empty view. */
function nearestDepthMidpoint(view: FrontView, x: number, y: number): number {
  const { res, mask, zFront, zBack } = view;
  const p = nearestCoveredPixel(mask, res, Math.round((x + 0.5) * res - 0.5), Math.round((y + 0.5) * res - 0.5));
  return p < 0 ? 0 : 0.5 * (zFront[p] + zBack[p]);
}

/**
 * A front piece whose span along the ray is under this share of the whole ray's span is not read alone: a pendant, a
 * buckle or a button in front of the body is a piece of its own, and the joint behind it lies in the body. The
 * pieces that are read (a leg in front of a cape, a neck in front of hair) measured 0.36 to 0.62 of their ray's span
 * on the procedural training identities.
 */
export const MIN_FRONT_PIECE_SHARE = 0.25;

/** Each point's lift by liftJointsByFrontPiece: its depth, and its whole ray's first and last hits. */
export interface FrontPieceLift {
  /** the depth of each point (the front piece's midpoint, or the whole ray's): Float64Array #P */
  z: Float64Array;
  /** the whole ray's first (largest z) and last hit per point, NaN where the ray misses the mesh: Float64Array #P each */
  front: Float64Array;
  back: Float64Array;
  /** the span along the ray that z was read from (the front piece's first to last hit, or the whole ray's), NaN where the ray misses: Float64Array #P */
  span: Float64Array;
  /** each point's ray inside the surface (insideStretches): front, back pairs front first, #P arrays of #S*2 (empty where the ray misses) */
  stretches: Float64Array[];
  /** the piece (meshShells) each depth was read on, -1 where the whole ray's midpoint or the fallback stands: Int32Array #P */
  piece: Int32Array;
  /** each point's pieces that its ray meets at least twice, in the order it meets them, with their first and last hit: #P arrays */
  closedPieces: ClosedPieceHit[][];
}

/** A piece of the surface (meshShells) a ray meets at least twice: its first (front) and last (back) hit along the ray. */
export interface ClosedPieceHit {
  piece: number;
  front: number;
  back: number;
}

/**
 * insideStretches: the stretches of a ray along -z that lie inside a closed, consistently wound surface, from its hits:
 * a hit on a face turned to the viewer enters, one on a face turned away leaves, and a stretch runs while the count of
 * surfaces entered is above zero (overlapping parts count as one). A surface wound inside out (or a frame that
 * mirrors it) is read with the facings swapped. Where neither reading stays at or above zero and ends at zero (an
 * open surface, faces wound either way, a ray through an edge counted twice), the whole ray from its first to its last
 * hit is one stretch.
 * zs: the hits' depths #H, facing: the sign of each hit triangle's facing along +z (the viewer), #H → front, back
 * pairs, front first: Float64Array #S*2 (empty where there are no hits)
 */
export function insideStretches(zs: readonly number[], facing: readonly number[]): Float64Array {
  if (zs.length === 0) return new Float64Array(0);
  const byDepth = zs.map((_, h) => h).sort((p, q) => zs[q] - zs[p]);
  for (const turn of [1, -1]) {
    const out: number[] = [];
    let inside = 0, start = Number.NaN;
    for (const h of byDepth) {
      const was = inside;
      inside += turn * facing[h] > 0 ? 1 : -1;
      if (inside < 0) break;
      if (was === 0) start = zs[h];
      else if (inside === 0) out.push(start, zs[h]);
    }
    if (inside === 0) return new Float64Array(out);
  }
  return new Float64Array([zs[byDepth[0]], zs[byDepth[byDepth.length - 1]]]);
}

/**
 * liftJointsByFrontPiece: HumanRig's lift (each 2D joint becomes 3D by casting a ray through the mesh along the
 * viewing direction, z, and taking the midpoint of its first and last hit) read on the piece of the surface (meshShells)
 * each ray meets first: the midpoint of that piece's first and last hit. Another piece behind it (hair hanging down
 * the back of the neck, a cape behind the calves) does not pull the joint back. A piece the ray meets only once (open)
 * or that spans under MIN_FRONT_PIECE_SHARE of the ray's hits (a pendant) is passed for the next piece behind it; where
 * every piece met twice was that thin (a hand before a cape's two layers), the first of them is read; where no piece
 * was met twice, the whole ray's midpoint stands, and the fallback's where the ray misses the mesh.
 * positions: Float32Array #V*3 (canonical), triangles: Uint32Array #T*3, shellOf: Int32Array #V (meshShells of the
 * mesh these triangles belong to), points: canonical (x, y) #P*2, fallback: the front view → FrontPieceLift
 */
export function liftJointsByFrontPiece(
  positions: Float32Array, triangles: Uint32Array, shellOf: Int32Array, points: Float64Array, fallback: FrontView,
): FrontPieceLift {
  const np = points.length / 2;
  const hitZ: number[][] = Array.from({ length: np }, () => []);
  const hitPiece: number[][] = Array.from({ length: np }, () => []);
  const hitFacing: number[][] = Array.from({ length: np }, () => []);
  const order = Array.from({ length: np }, (_, k) => k).sort((a, b) => points[2 * a] - points[2 * b]);
  const xs = order.map((k) => points[2 * k]);
  for (let t = 0; t < triangles.length; t += 3) {
    const a = triangles[t] * 3, b = triangles[t + 1] * 3, c = triangles[t + 2] * 3;
    const x0 = positions[a], y0 = positions[a + 1], z0 = positions[a + 2];
    const x1 = positions[b], y1 = positions[b + 1], z1 = positions[b + 2];
    const x2 = positions[c], y2 = positions[c + 1], z2 = positions[c + 2];
    const minX = Math.min(x0, x1, x2), maxX = Math.max(x0, x1, x2);
    const minY = Math.min(y0, y1, y2), maxY = Math.max(y0, y1, y2);
    const area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0);
    if (area === 0) continue;
    for (let s = lowerBound(xs, minX); s < np && xs[s] <= maxX; s++) {
      const k = order[s];
      const x = points[2 * k], y = points[2 * k + 1];
      if (y < minY || y > maxY) continue;
      const w0 = ((x1 - x) * (y2 - y) - (x2 - x) * (y1 - y)) / area;
      const w1 = ((x2 - x) * (y0 - y) - (x0 - x) * (y2 - y)) / area;
      const w2 = 1 - w0 - w1;
      if (w0 < 0 || w1 < 0 || w2 < 0) continue;
      hitZ[k].push(w0 * z0 + w1 * z1 + w2 * z2);
      hitPiece[k].push(shellOf[triangles[t]]);
      hitFacing[k].push(Math.sign(area));
    }
  }
  const z = new Float64Array(np), front = new Float64Array(np).fill(Number.NaN), back = new Float64Array(np).fill(Number.NaN);
  const readSpan = new Float64Array(np).fill(Number.NaN);
  const readPiece = new Int32Array(np).fill(-1);
  const closedPieces: ClosedPieceHit[][] = Array.from({ length: np }, () => []);
  const stretches = hitZ.map((zs, k) => insideStretches(zs, hitFacing[k]));
  for (let k = 0; k < np; k++) {
    const zs = hitZ[k];
    if (zs.length === 0) { z[k] = nearestDepthMidpoint(fallback, points[2 * k], points[2 * k + 1]); continue; }
    // z points forward: the hits from the front, and the pieces in the order the ray meets them
    const byDepth = zs.map((_, h) => h).sort((p, q) => zs[q] - zs[p]);
    front[k] = zs[byDepth[0]]; back[k] = zs[byDepth[byDepth.length - 1]];
    const span = front[k] - back[k];
    z[k] = 0.5 * (front[k] + back[k]);
    readSpan[k] = span;
    const seen = new Set<number>();
    let firstClosed = -1, firstClosedBack = Number.NaN, read = false;
    for (const h of byDepth) {
      const piece = hitPiece[k][h];
      if (seen.has(piece)) continue;
      seen.add(piece);
      let pieceBack = Infinity, count = 0;
      for (let g = 0; g < zs.length; g++) {
        if (hitPiece[k][g] !== piece) continue;
        count++;
        if (zs[g] < pieceBack) pieceBack = zs[g];
      }
      if (count >= 2) closedPieces[k].push({ piece, front: zs[h], back: pieceBack });
      if (read) continue;
      // an open piece met once is no span to read; a thin one (a pendant) is passed for the piece behind it
      if (count >= 2 && zs[h] - pieceBack >= MIN_FRONT_PIECE_SHARE * span) { z[k] = 0.5 * (zs[h] + pieceBack); readSpan[k] = zs[h] - pieceBack; readPiece[k] = piece; read = true; continue; }
      if (count >= 2 && firstClosed < 0) { firstClosed = h; firstClosedBack = pieceBack; }
    }
    // every closed piece was thin (a hand before a cape's two layers): the first of them, not the whole ray
    if (!read && firstClosed >= 0) {
      z[k] = 0.5 * (zs[firstClosed] + firstClosedBack); readSpan[k] = zs[firstClosed] - firstClosedBack; readPiece[k] = hitPiece[k][firstClosed];
    }
  }
  return { z, front, back, span: readSpan, stretches, piece: readPiece, closedPieces };
}
