/**
 * From shapes to mesh parts at a vertex budget. Each part (the body, or the fused body, and each separate clothing
 * item) is meshed with surface nets on its own grid; one cell size serves them all, capped per part where thin or
 * small things need finer cells (wrists, brims, eyes). The cell is calibrated from a coarse pass (vertex counts grow
 * as 1/cell²) and corrected once if the real count misses; chaotic samples then get random edge splits
 * (splitRandomEdges) up to the target, spread over the parts in proportion to their size.
 */
import { splitRandomEdges } from '../../eval/remeshVolume.js';
import type { MeshPart } from '../../types.js';
import { SeededRandom } from '../seededRandom.js';
import type { WeightRule } from './clothingParts.js';
import { meshShapes } from './meshShapes.js';
import type { Shape } from './sdfShapes.js';
import { ShapeField } from './shapeField.js';

/** One surface to mesh: the body (with everything, when fused) or one clothing item. */
export interface PartPlan {
  name: string;
  shapes: Shape[];
  /** cut at y = 0 */
  floor: boolean;
  /** null: the body (or fused) rule */
  rule: WeightRule | null;
  /** cells no larger than this (m) */
  maxCell: number;
}

export interface MeshingOptions {
  /** vertices wanted in all (after splits) */
  targetVertices: number;
  /** surface-nets vertices planned (targetVertices when not chaotic) */
  baseVertices: number;
  /** first guess of the cell (m) */
  cellGuess: number;
  /** random diagonals, tangent jitter and edge splits */
  chaotic: boolean;
  seed: number;
}

/** The calibration pass meshes at this many times the guessed cell. */
const COARSE_FACTOR = 2;
/** Capped parts may take this share of the vertex budget before their caps are relaxed, by at most MAX_CAP_RELAXATION. */
const CAPPED_SHARE = 0.9;
const MAX_CAP_RELAXATION = 1.6;
/** A first meshing whose vertex count misses the plan by more than this share is redone at a corrected cell. */
const CALIBRATION_TOLERANCE = 0.12;
/** Splits per part stay below this share of its vertices (splitRandomEdges splits at most one edge per triangle pair). */
const MAX_SPLIT_SHARE = 0.9;
/** Largest tangent slide of a chaotic mesh's vertices, in cells. */
const JITTER_CELLS = 0.3;

/** The field band of a shape list meshed at `cell`: its largest blend plus three cells. */
export function fieldBand(shapes: Shape[], cell: number): number {
  let blend = 0;
  for (const s of shapes) blend = Math.max(blend, s.blend);
  return blend + 3 * cell;
}

/**
 * meshPlannedParts: plans, options → { parts: MeshPart[] (one per plan, same order), cell: the common cell (m),
 * cells: each part's own cell (m) }. Deterministic for the options' seed.
 */
export function meshPlannedParts(plans: PartPlan[], options: MeshingOptions): { parts: MeshPart[]; cell: number; cells: number[] } {
  let capScale = 1;
  const partCell = (plan: PartPlan, cell: number) => Math.min(cell, plan.maxCell * capScale);
  const meshPart = (plan: PartPlan, c: number, random: (() => number) | null) =>
    meshShapes(new ShapeField(plan.shapes, fieldBand(plan.shapes, c), plan.floor), { cell: c, random, jitter: JITTER_CELLS });

  const coarseCell = COARSE_FACTOR * options.cellGuess;
  const coarseCells = plans.map((plan) => partCell(plan, coarseCell));
  const coarseCounts = plans.map((plan, i) => meshPart(plan, coarseCells[i], null).positions.length / 3);
  const predicted = (cell: number) => plans.reduce((sum, plan, i) => sum + coarseCounts[i] * (coarseCells[i] / partCell(plan, cell)) ** 2, 0);
  // parts at their caps alone may exceed the budget (a sombrero on a chibi head): relax every cap a little then
  const capped = predicted(Infinity);
  if (capped > CAPPED_SHARE * options.baseVertices) capScale = Math.min(MAX_CAP_RELAXATION, Math.sqrt(capped / (CAPPED_SHARE * options.baseVertices)));
  const cellFor = (vertices: number) => {
    let lo = coarseCell / 30, hi = coarseCell * 4;
    for (let it = 0; it < 50; it++) {
      const mid = Math.sqrt(lo * hi);
      if (predicted(mid) > vertices) lo = mid;
      else hi = mid;
    }
    return Math.sqrt(lo * hi);
  };

  // when the count misses the plan (shapes the coarse pass could not resolve), correct once
  const meshAll = (cell: number) => plans.map((plan, i) => {
    const rng = options.chaotic ? new SeededRandom(options.seed * 7919 + i * 104729 + 1) : null;
    return meshPart(plan, partCell(plan, cell), rng ? () => rng.next() : null);
  });
  const countOf = (meshes: { positions: Float32Array }[]) => meshes.reduce((s, m) => s + m.positions.length / 3, 0);
  let cell = cellFor(options.baseVertices);
  let surfaces = meshAll(cell);
  const miss = countOf(surfaces) / options.baseVertices;
  if (Math.abs(miss - 1) > CALIBRATION_TOLERANCE) {
    cell = cellFor(options.baseVertices / miss);
    surfaces = meshAll(cell);
  }

  const base = countOf(surfaces);
  const splits = options.chaotic ? Math.max(0, options.targetVertices - base) : 0;
  const parts = surfaces.map((m, i) => {
    const v = m.positions.length / 3;
    const count = Math.min(Math.round((splits * v) / Math.max(base, 1)), Math.floor(MAX_SPLIT_SHARE * v));
    const out = count > 0 ? splitRandomEdges(m.positions, m.triangles, count, options.seed * 31 + i) : m;
    return { name: plans[i].name, positions: out.positions, triangles: out.triangles };
  });
  return { parts, cell, cells: plans.map((plan) => partCell(plan, cell)) };
}
