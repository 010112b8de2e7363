/**
 * The weights of every part of a character, by construction (constructionWeights): the body rule on the body, each
 * item's own rule on a separate clothing part, and on a fused surface whichever of the two its shapes are nearest to,
 * blended where the clothing merges into the body.
 */
import { MIXAMO_JOINTS } from '../../skeleton/mixamoTemplate.js';
import type { MeshPart, Vec3 } from '../../types.js';
import type { ClothingItem, WeightRule } from './clothingParts.js';
import { INFLUENCES, mixRows, writeTopWeights, type ConstructionWeights } from './constructionWeights.js';
import type { PartPlan } from './partMeshing.js';
import { shapeDistance } from './sdfShapes.js';
import type { ShapeField } from './shapeField.js';

export interface TopWeights {
  indices: Uint16Array;
  weights: Float32Array;
}

/** How a fused surface is weighted: which item (-1: body) each of the field's shapes belongs to, and the blend width. */
export interface FusedItems {
  field: ShapeField;
  itemOfShape: number[];
  items: ClothingItem[];
  /** the rules blend over ±blend of distance difference between the body's shapes and the nearest item's (m) */
  blend: number;
}

/**
 * characterWeights: parts and their plans (same order), the rules, fused (null for separate parts) → per part top-4
 * weights #V*INFLUENCES.
 */
export function characterWeights(parts: MeshPart[], plans: PartPlan[], rules: ConstructionWeights, fused: FusedItems | null): TopWeights[] {
  return parts.map((part, i) => {
    const rule = plans[i].rule;
    if (rule === null && fused) return fusedWeights(part.positions, rules, fused);
    return partWeights(part.positions, (p, out) => {
      if (rule === null) rules.body(p, out);
      else applyRule(rule, rules, p, out);
    });
  });
}

function applyRule(rule: WeightRule, rules: ConstructionWeights, p: Vec3, out: Float64Array): void {
  if (rule.kind === 'rigid') { out.fill(0); out[rule.bone] = 1; }
  else rules.clothing(p, rule.bones, rule.sideMargin, out);
}

/** Top-4 weights of every vertex of a part from a dense rule. */
function partWeights(positions: Float32Array, rule: (p: Vec3, out: Float64Array) => void): TopWeights {
  const n = positions.length / 3;
  const indices = new Uint16Array(n * INFLUENCES);
  const weights = new Float32Array(n * INFLUENCES);
  const dense = new Float64Array(MIXAMO_JOINTS.length);
  const p: Vec3 = [0, 0, 0];
  for (let v = 0; v < n; v++) {
    p[0] = positions[3 * v]; p[1] = positions[3 * v + 1]; p[2] = positions[3 * v + 2];
    rule(p, dense);
    writeTopWeights(dense, indices, weights, v);
  }
  return { indices, weights };
}

/**
 * A fused surface: each vertex takes the body rule, the rule of the clothing item whose shapes are nearer, or a blend
 * of the two where they meet.
 */
function fusedWeights(positions: Float32Array, rules: ConstructionWeights, fused: FusedItems): TopWeights {
  const { field, itemOfShape, items, blend } = fused;
  const body = new Float64Array(MIXAMO_JOINTS.length);
  const cloth = new Float64Array(MIXAMO_JOINTS.length);
  return partWeights(positions, (p, out) => {
    let bodyD = Infinity, itemD = Infinity, item = -1;
    const bucket = field.bucketOf(p[0], p[1], p[2]);
    const members = field.bucketShapes;
    for (let n = bucket < 0 ? 0 : field.bucketStart[bucket], end = bucket < 0 ? 0 : field.bucketStart[bucket + 1]; n < end; n++) {
      const d = shapeDistance(field.shapes[members[n]], p[0], p[1], p[2]);
      const owner = itemOfShape[members[n]];
      if (owner < 0) bodyD = Math.min(bodyD, d);
      else if (d < itemD) { itemD = d; item = owner; }
    }
    const t = item < 0 ? 0 : Math.max(0, Math.min(1, 0.5 + (bodyD - itemD) / (2 * blend)));
    if (t < 1) rules.body(p, body);
    if (t > 0) applyRule(items[item].weights, rules, p, cloth);
    if (t === 0) out.set(body);
    else if (t === 1) out.set(cloth);
    else mixRows(body, cloth, t, out);
  });
}
