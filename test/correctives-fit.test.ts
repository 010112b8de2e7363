/**
 * Per-character pose-dependent weights fitted to posed examples (correctives/fitExampleWeights.ts): the fitted
 * weights are a partition of unity at any pose and the base exactly at rest or without examples; on a two-bone tube
 * whose example was posed with other (sharper) weights on a mesh of another topology, the fit brings the skinned tube
 * much closer to the example, keeps the rest pose where it was, and helps at an angle it was not shown; bad inputs are
 * AutoRigErrors with codes. In `eval correctives` (a small procedural humanoid), weights fitted to the exact 90°
 * shoulder raise beat DQS there and at the held-out 45°, and the report says which angle was the example.
 */
import { describe, expect, it } from 'vitest';
import { fittedDeformation, fittedWeights, fitExampleWeights, jointTurns, RIGID_WEIGHT, type PosedExample } from '../sidecar/correctives/fitExampleWeights.js';
import type { StaticSlots } from '../sidecar/correctives/poseDependentWeights.js';
import { dualQuaternionSkinning } from '../sidecar/deform/dualQuaternionSkinning.js';
import { linearBlendSkinning, poseTransforms, type RestSkeleton } from '../sidecar/deform/linearBlendSkinning.js';
import { correctivesMarkdown } from '../sidecar/eval/correctives/correctivesReport.js';
import { parseCorrectivesEvalArguments } from '../sidecar/eval/correctives/correctivesEvalArguments.js';
import { DUAL_QUATERNION, fittedMethod } from '../sidecar/eval/correctives/deformationMethods.js';
import { KEY_POSES } from '../sidecar/eval/correctives/keyPoses.js';
import { runCorrectivesEval } from '../sidecar/eval/correctives/runCorrectivesEval.js';
import { chamferDistance } from '../sidecar/eval/correctives/surfaceDistance.js';
import { AutoRigError } from '../sidecar/errors.js';

/** An open tube along x from −1 to 1, radius 0.2: rings × segments vertices. */
function tube(rings: number, segments: number): { positions: Float32Array; triangles: Uint32Array } {
  const positions = new Float32Array(rings * segments * 3);
  for (let i = 0; i < rings; i++) {
    for (let k = 0; k < segments; k++) {
      const a = (2 * Math.PI * k) / segments, o = (i * segments + k) * 3;
      positions[o] = -1 + (2 * i) / (rings - 1);
      positions[o + 1] = 0.2 * Math.cos(a);
      positions[o + 2] = 0.2 * Math.sin(a);
    }
  }
  const triangles: number[] = [];
  for (let i = 0; i + 1 < rings; i++) {
    for (let k = 0; k < segments; k++) {
      const a = i * segments + k, b = i * segments + ((k + 1) % segments), c = a + segments, d = b + segments;
      triangles.push(a, b, d, a, d, c);
    }
  }
  return { positions, triangles: Uint32Array.from(triangles) };
}

/** Joint 0 (root) at x = −1, joint 1 (the elbow) at x = 0, joint 2 at x = 1. */
const SKELETON: RestSkeleton = { heads: Float64Array.from([-1, 0, 0, 0, 0, 0, 1, 0, 0]), parents: Int32Array.from([-1, 0, 1]) };

/** Two slots per vertex (joints 1 and 0), the elbow's share a logistic of x over `width`; rigid beyond ±4.5 widths. */
function tubeWeights(positions: Float32Array, width: number): StaticSlots {
  const V = positions.length / 3;
  const indices = new Uint16Array(V * 4), weights = new Float32Array(V * 4);
  for (let v = 0; v < V; v++) {
    const x = positions[3 * v];
    let elbow = 1 / (1 + Math.exp(-x / width));
    if (Math.abs(x) > 4.5 * width) elbow = x > 0 ? 1 : 0;
    // slots by weight, descending (topFourSlots' order)
    const [first, second] = elbow >= 0.5 ? [[1, elbow], [0, 1 - elbow]] : [[0, 1 - elbow], [1, elbow]];
    indices[v * 4] = first[0]; weights[v * 4] = first[1];
    indices[v * 4 + 1] = second[0]; weights[v * 4 + 1] = second[1];
  }
  return { indices, weights };
}

/** The elbow (joint 1) bent by `degrees` about z. */
function bend(degrees: number): Float64Array {
  const r = new Float64Array(27);
  for (let j = 0; j < 3; j++) { r[9 * j] = 1; r[9 * j + 4] = 1; r[9 * j + 8] = 1; }
  const a = (degrees * Math.PI) / 180;
  r.set([Math.cos(a), -Math.sin(a), 0, Math.sin(a), Math.cos(a), 0, 0, 0, 1], 9);
  return r;
}

const rest = tube(41, 24);
const slots = tubeWeights(rest.positions, 0.2);
/** The example's own mesh (another topology) and weights (sharper: what the character's "truth" does at a bend). */
const exampleMesh = tube(57, 31);
const exampleSlots = tubeWeights(exampleMesh.positions, 0.06);
const truthAt = (degrees: number) => {
  const t = poseTransforms(SKELETON.heads, SKELETON.parents, bend(degrees));
  return { positions: dualQuaternionSkinning(exampleMesh.positions, exampleSlots.indices, exampleSlots.weights, 4, t), triangles: exampleMesh.triangles };
};
const chamferTo = (positions: Float32Array, degrees: number) => chamferDistance({ positions, triangles: rest.triangles }, truthAt(degrees), 6000, 3);

describe('fitExampleWeights', { timeout: 60_000 }, () => {
  const example: PosedExample = { rotations: bend(90), baseWeights: slots.weights, target: truthAt(90) };
  const progress: number[] = [];
  const fit = fitExampleWeights(rest.positions, rest.triangles, slots, SKELETON, [example], {}, (f) => progress.push(f));

  it('brings the skinned tube much closer to the example, leaves the rest pose alone and helps at a held-out angle', () => {
    const at = (degrees: number, params: Float32Array) => fittedDeformation(rest.positions, slots, params, SKELETON, bend(degrees), slots.weights, 'dualQuaternion');
    const zero = new Float32Array(fit.params.length);
    const before90 = chamferTo(at(90, zero), 90), after90 = chamferTo(at(90, fit.params), 90);
    const before45 = chamferTo(at(45, zero), 45), after45 = chamferTo(at(45, fit.params), 45);
    // the base is visibly off the example (a sharper elbow) and the fit removes most of it
    expect(before90).toBeGreaterThan(3e-3);
    expect(after90).toBeLessThan(0.25 * before90);
    // 45° was never shown: the correction, linear in the turn, still brings it closer
    expect(after45).toBeLessThan(0.6 * before45);
    // the fit's own record falls
    expect(fit.history.at(-1)!.forward).toBeLessThan(0.25 * fit.history[0].forward);
    expect(fit.history.at(-1)!.reverse).toBeLessThan(0.25 * fit.history[0].reverse);
    // at rest the fitted weights are the base exactly, so the rest mesh does not move
    expect(at(0, fit.params)).toEqual(linearBlendSkinning(rest.positions, slots.indices, slots.weights, 4, poseTransforms(SKELETON.heads, SKELETON.parents, bend(0))));
    expect(progress.at(-1)).toBe(1);
    expect(fit.rigidCount).toBeGreaterThan(0);
  });

  it('thins a dense example (a scan) to two pulling points per moving vertex, and fits it as well', () => {
    // the same truth meshed about 9 times finer
    const fine = tube(171, 93);
    const fineSlots = tubeWeights(fine.positions, 0.06);
    const t = poseTransforms(SKELETON.heads, SKELETON.parents, bend(90));
    const dense = { positions: dualQuaternionSkinning(fine.positions, fineSlots.indices, fineSlots.weights, 4, t), triangles: fine.triangles };
    const denseFit = fitExampleWeights(rest.positions, rest.triangles, slots, SKELETON, [{ ...example, target: dense }]);
    const [plain] = fit.examples, [thinned] = denseFit.examples;
    expect(plain.moving).toBeGreaterThan(100);
    expect(plain.pulling).toBeLessThanOrEqual(2 * plain.moving);
    expect(thinned.moving).toBe(plain.moving);
    expect(thinned.pulling).toBe(2 * thinned.moving);
    const at90 = (params: Float32Array) => fittedDeformation(rest.positions, slots, params, SKELETON, bend(90), slots.weights, 'dualQuaternion');
    expect(chamferTo(at90(denseFit.params), 90)).toBeLessThan(1.15 * chamferTo(at90(fit.params), 90));
  });

  it('gives rows that sum to 1 at any pose, the base at rest and without examples, and only the static slots', () => {
    for (const degrees of [-60, 30, 90, 150]) {
      const w = fittedWeights(slots, fit.params, SKELETON.parents, bend(degrees), slots.weights);
      for (let v = 0; v < w.length / 4; v++) {
        expect(w[v * 4] + w[v * 4 + 1] + w[v * 4 + 2] + w[v * 4 + 3]).toBeCloseTo(1, 5);
        expect(w[v * 4 + 2]).toBe(0);
        expect(w[v * 4 + 3]).toBe(0);
        // rigid vertices keep the base
        if (Math.max(slots.weights[v * 4], slots.weights[v * 4 + 1]) >= RIGID_WEIGHT) expect(w[v * 4]).toBe(slots.weights[v * 4]);
      }
      // the fit moved weight somewhere
      if (degrees === 90) expect(w.some((x, i) => Math.abs(x - slots.weights[i]) > 0.05)).toBe(true);
    }
    expect(fittedWeights(slots, fit.params, SKELETON.parents, bend(0), slots.weights)).toEqual(slots.weights);
    const none = fitExampleWeights(rest.positions, rest.triangles, slots, SKELETON, []);
    expect(none.params.every((a) => a === 0)).toBe(true);
    expect(fittedWeights(slots, none.params, SKELETON.parents, bend(90), slots.weights)).toEqual(slots.weights);
  });

  it('fits the linear blend too, and is deterministic', () => {
    const target = (() => {
      const t = poseTransforms(SKELETON.heads, SKELETON.parents, bend(90));
      return { positions: linearBlendSkinning(exampleMesh.positions, exampleSlots.indices, exampleSlots.weights, 4, t), triangles: exampleMesh.triangles };
    })();
    const options = { blend: 'linear' as const, iterations: 6 };
    const a = fitExampleWeights(rest.positions, rest.triangles, slots, SKELETON, [{ ...example, target }], options);
    const b = fitExampleWeights(rest.positions, rest.triangles, slots, SKELETON, [{ ...example, target }], options);
    expect(a.params).toEqual(b.params);
    const posed = (params: Float32Array) => fittedDeformation(rest.positions, slots, params, SKELETON, bend(90), slots.weights, 'linear');
    const d = (params: Float32Array) => chamferDistance({ positions: posed(params), triangles: rest.triangles }, target, 6000, 3);
    expect(d(a.params)).toBeLessThan(0.6 * d(new Float32Array(a.params.length)));
  });

  it('turns are zero for roots and axis·angle for the others', () => {
    const t = jointTurns(bend(90), SKELETON.parents);
    expect(Array.from(t.subarray(0, 3))).toEqual([0, 0, 0]);
    expect(t[5]).toBeCloseTo(Math.PI / 2, 10);
  });

  it('answers bad inputs with AutoRigError codes', () => {
    const code = (f: () => unknown) => { try { f(); } catch (e) { return e instanceof AutoRigError ? e.code : 'other'; } return 'none'; };
    expect(code(() => fitExampleWeights(rest.positions.subarray(1), rest.triangles, slots, SKELETON, [example]))).toBe('BAD_ARRAY');
    expect(code(() => fitExampleWeights(rest.positions, rest.triangles, slots, SKELETON, [{ ...example, baseWeights: new Float32Array(3) }]))).toBe('BAD_ARRAY');
    expect(code(() => fitExampleWeights(rest.positions, rest.triangles, slots, SKELETON, [{ ...example, target: { positions: new Float32Array(3), triangles: new Uint32Array(0) } }]))).toBe('EMPTY_MESH');
    expect(code(() => fitExampleWeights(rest.positions, rest.triangles, slots, SKELETON, [{ ...example, target: { positions: new Float32Array(9), triangles: Uint32Array.from([0, 1, 5]) } }]))).toBe('BAD_INDEX');
    expect(code(() => fitExampleWeights(rest.positions, rest.triangles, slots, SKELETON, [{ ...example, rotations: new Float64Array(27).fill(NaN) }]))).toBe('BAD_NUMBER');
    expect(code(() => fitExampleWeights(rest.positions, rest.triangles, slots, SKELETON, [example], { iterations: -1 }))).toBe('BAD_REQUEST');
    expect(code(() => fittedWeights(slots, new Float32Array(5), SKELETON.parents, bend(0), slots.weights))).toBe('BAD_ARRAY');
    const far = { indices: slots.indices.map((i) => (i === 1 ? 7 : i)), weights: slots.weights };
    expect(code(() => fittedWeights(far, fit.params, SKELETON.parents, bend(0), slots.weights))).toBe('BAD_INDEX');
  });
});

describe('eval correctives with weights fitted to examples', { timeout: 90_000 }, () => {
  it('parses --fit-examples and --fit-blend', () => {
    expect(parseCorrectivesEvalArguments(['--fit-examples', '90,60', '--fit-blend', 'linear'])).toMatchObject({ exampleDegrees: [90, 60], fitBlend: 'linear' });
    expect(() => parseCorrectivesEvalArguments(['--fit-examples', '0'])).toThrow(/--fit-examples/);
    expect(() => parseCorrectivesEvalArguments(['--fit-blend', 'cubic'])).toThrow(/--fit-blend/);
    // the reader of a value, shared with eval poses (eval/evalArguments): the next argument, never another option
    expect(() => parseCorrectivesEvalArguments(['--degrees', '--json'])).toThrow(/--degrees needs a value/);
    expect(() => parseCorrectivesEvalArguments(['--degrees', '45,200'])).toThrow("--degrees: angles in (0, 180], got '45,200'");
    expect(parseCorrectivesEvalArguments(['--degrees', '30', '--json', '--seed', '7'])).toMatchObject({ degrees: [30], json: true, seed: 7 });
  });

  it('fits a humanoid to its exact 90° shoulder raise: better there and at the held-out 45°, unchanged at rest', async () => {
    const poses = KEY_POSES.filter((p) => p.id === 'shoulderRaise');
    const report = await runCorrectivesEval({
      procedural: 1, poses, degrees: [45, 90], exampleDegrees: [90], targetVertices: 4000, methods: [DUAL_QUATERNION, fittedMethod(null, 'dualQuaternion')],
    });
    const at = (degrees: number, method: string) => report.results.find((r) => r.degrees === degrees && r.method === method && (degrees === 0 || r.pose === 'shoulder raise'))!.chamfer!;
    expect(at(90, 'fittedDqs')).toBeLessThan(0.6 * at(90, 'dqs'));
    expect(at(45, 'fittedDqs')).toBeLessThan(0.8 * at(45, 'dqs'));
    expect(at(0, 'fittedDqs')).toBe(at(0, 'dqs'));
    expect(report.examples).toEqual({ degrees: [90], methods: ['fittedDqs'] });
    expect(report.characters[0].seconds.fit).toBeGreaterThan(0);
    const md = correctivesMarkdown(report);
    expect(md).toMatch(/\| shoulder raise \| 90° \| fitted on static \+ DQS \(example\) \| [\d.]+ \|/);
    expect(md).toMatch(/\| shoulder raise \| 45° \| fitted on static \+ DQS \(held out\) \| [\d.]+ \|/);
    expect(md).toMatch(/\| fitted on static \+ DQS \| held-out angles \| [\d.]+ \|/);
  });
});
