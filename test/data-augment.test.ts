/**
 * Augmented real rigs (issue 5): dev characters re-proportioned through their own skinning, then remeshed.
 * The dev characters are read in place from ../shared/data/characters/. Without them the tests that need them are
 * skipped locally and FAIL on CI (CI must run them).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { augmentDevCharacter, drawAugmentation, HEIGHT_RANGE, REMESH_RANGE } from '../sidecar/data/augment/augmentDevCharacter.js';
import { CHAIN_CHILD } from '../sidecar/data/augment/completeTemplateJoints.js';
import { DEV_CHARACTERS_DIR, loadDevCharacter, type DevCharacter } from '../sidecar/data/augment/devCharacter.js';
import { HELD_OUT_CHARACTERS, isHeldOutCharacter, trainingDevCharacters } from '../sidecar/data/augment/heldOut.js';
import { unitProportionFactors } from '../sidecar/data/augment/proportionFactors.js';
import { spanOf } from '../sidecar/data/augment/reproportionSkeleton.js';
import { heightAlong } from '../sidecar/data/augment/scaleRigged.js';
import { templateRigOf, type TemplateRig } from '../sidecar/data/augment/templateRig.js';
import { makeTrainingSample, type RiggedCharacter } from '../sidecar/data/trainingSample.js';
import { linearBlendSkinning, poseTransforms } from '../sidecar/deform/linearBlendSkinning.js';
import { randomPoses } from '../sidecar/eval/randomPoses.js';
import type { Character } from '../sidecar/io/character.js';
import { MIXAMO_JOINTS, MIXAMO_PARENTS } from '../sidecar/skeleton/mixamoTemplate.js';
import type { Vec3 } from '../sidecar/types.js';

const ON_CI = process.env.CI === 'true';
const HAVE_DATA = existsSync(DEV_CHARACTERS_DIR);
const needsData = it.skipIf(!HAVE_DATA && !ON_CI);
const J = MIXAMO_JOINTS.length;
const HEAD_TOP = MIXAMO_JOINTS.indexOf('HeadTop_End');
const PARENTS = Int32Array.from(MIXAMO_JOINTS.map((n) => (MIXAMO_PARENTS[n] ? MIXAMO_JOINTS.indexOf(MIXAMO_PARENTS[n]!) : -1)));
/** the joint at the end of each template bone, -1 for the chain ends */
const chainChild = (t: number): number => {
  const child = CHAIN_CHILD[MIXAMO_JOINTS[t]];
  return child ? MIXAMO_JOINTS.indexOf(child) : -1;
};

const cache = new Map<string, DevCharacter>();
async function dev(name: string): Promise<DevCharacter> {
  if (!cache.has(name)) cache.set(name, await loadDevCharacter(join(DEV_CHARACTERS_DIR, `${name}.glb`)));
  return cache.get(name)!;
}

const joint = (joints: ArrayLike<number>, t: number): Vec3 => [joints[3 * t], joints[3 * t + 1], joints[3 * t + 2]];
const dist = (a: Vec3, b: Vec3) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

/** Rows: k = 4, indices inside the template, HeadTop_End never weighted, each row sums to 1, largest first. */
function expectValidWeights(c: RiggedCharacter): void {
  expect(c.weights.length).toBe(c.parts.length);
  c.parts.forEach((part, p) => {
    const V = part.positions.length / 3;
    const { indices, weights } = c.weights[p];
    expect(indices.length).toBe(V * 4);
    expect(weights.length).toBe(V * 4);
    const bad: string[] = [];
    for (let v = 0; v < V && bad.length < 5; v++) {
      let sum = 0;
      for (let k = 0; k < 4; k++) {
        const w = weights[4 * v + k];
        if (!(w >= 0)) bad.push(`vertex ${v}: weight ${w}`);
        if (w > 0 && (indices[4 * v + k] >= J || indices[4 * v + k] === HEAD_TOP)) bad.push(`vertex ${v}: joint ${indices[4 * v + k]}`);
        if (k > 0 && w > weights[4 * v + k - 1] + 1e-7) bad.push(`vertex ${v}: not largest first`);
        sum += w;
      }
      if (!(Math.abs(sum - 1) < 1e-5)) bad.push(`vertex ${v}: sum ${sum}`);
    }
    expect(bad, `part ${part.name}`).toEqual([]);
  });
}

/** Edge lengths of every part's triangles (each edge once per triangle side), from the given positions per part. */
function edgeLengths(c: RiggedCharacter, positions: Float32Array[]): number[] {
  const out: number[] = [];
  c.parts.forEach((part, p) => {
    const P = positions[p], T = part.triangles;
    for (let t = 0; t < T.length; t += 3) {
      for (let k = 0; k < 3; k++) {
        const a = 3 * T[t + k], b = 3 * T[t + ((k + 1) % 3)];
        out.push(Math.hypot(P[a] - P[b], P[a + 1] - P[b + 1], P[a + 2] - P[b + 2]));
      }
    }
  });
  return out;
}

function quantile(values: number[], q: number): number {
  const sorted = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return sorted[Math.floor(q * (sorted.length - 1))];
}

/** Edge stretch (posed length / rest length, edges longer than 1e-6 of the height) of a character under poses: its 99.9th percentile. */
function posedStretch(c: RiggedCharacter, poses: Float64Array[], height: number): number {
  const rest = edgeLengths(c, c.parts.map((p) => p.positions));
  const ratios: number[] = [];
  for (const pose of poses) {
    const transforms = poseTransforms(Float64Array.from(c.joints), PARENTS, pose);
    const posed = c.parts.map((part, p) => linearBlendSkinning(part.positions, c.weights[p].indices, c.weights[p].weights, 4, transforms));
    edgeLengths(c, posed).forEach((l, i) => rest[i] > 1e-6 * height && ratios.push(l / rest[i]));
  }
  return quantile(ratios, 0.999);
}

describe('held-out dev characters', () => {
  it('names the three held-out characters', () => {
    expect([...HELD_OUT_CHARACTERS].sort()).toEqual(['clonk_farmer', 'mixamo_ely', 'robot_expressive']);
  });

  it('trainingDevCharacters lists every .glb of a folder except the held-out ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'autorig-aug-'));
    try {
      for (const f of ['b.glb', 'a.GLB', 'mixamo_ely.glb', 'clonk_farmer.glb', 'robot_expressive.glb', 'notes.txt']) writeFileSync(join(dir, f), '');
      expect(trainingDevCharacters(dir)).toEqual([join(dir, 'a.GLB'), join(dir, 'b.glb')]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(() => trainingDevCharacters(join(tmpdir(), 'no-such-autorig-folder'))).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
  });

  it('recognises a held-out character by its shape whatever its name', () => {
    const fake = (vertices: number, triangles: number, joints: number): Character => ({
      parts: [{ name: 'body', positions: new Float32Array(vertices * 3), triangles: new Uint32Array(triangles * 3) }],
      rig: { joints: Array.from({ length: joints }, (_, j) => ({ name: `j${j}`, parent: j - 1, position: [0, 0, 0] as Vec3 })), skins: [null] },
    });
    expect(isHeldOutCharacter('renamed', fake(5040, 8770, 67))).toBe(true);
    expect(isHeldOutCharacter('renamed', fake(2131, 3233, 53))).toBe(true);
    expect(isHeldOutCharacter('renamed', fake(2131, 3233, 52))).toBe(false);
    expect(isHeldOutCharacter('/some/where/mixamo_ely.glb')).toBe(true);
    expect(isHeldOutCharacter('clonk')).toBe(false);
  });

  needsData('the dev folder: the training list is every dev character but the held-out ones', () => {
    expect(HAVE_DATA, `${DEV_CHARACTERS_DIR} must exist on CI`).toBe(true);
    const names = trainingDevCharacters().map((f) => f.slice(f.lastIndexOf('/') + 1, -4));
    expect(names.length).toBeGreaterThanOrEqual(7);
    expect(names).toContain('clonk');
    expect(names).toContain('cesium_man');
    for (const held of HELD_OUT_CHARACTERS) expect(names).not.toContain(held);
  });

  needsData('augmentDevCharacter refuses a held-out character, also renamed, unless allowHeldOut', { timeout: 60_000 }, async () => {
    const farmer = await dev('clonk_farmer');
    expect(() => augmentDevCharacter(farmer, 1, { remeshVertices: null })).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    expect(() => augmentDevCharacter({ ...farmer, name: 'farmer_copy' }, 1, { remeshVertices: null })).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    const clonk = await dev('clonk');
    expect(() => augmentDevCharacter({ ...clonk, name: 'mixamo_ely' }, 1, { remeshVertices: null })).toThrow(/held-out/);
    const allowed = augmentDevCharacter(farmer, 1, { remeshVertices: null, allowHeldOut: true });
    expect(allowed.meta.source).toBe('clonk_farmer');
  });
});

describe('the draws', () => {
  it('keeps every drawn number in its range; left and right mostly alike; a few big heads', () => {
    let chibi = 0, symmetric = 0;
    const seeds = 400;
    for (let seed = 0; seed < seeds; seed++) {
      const d = drawAugmentation(seed);
      expect(d.height).toBeGreaterThanOrEqual(HEIGHT_RANGE[0]);
      expect(d.height).toBeLessThan(HEIGHT_RANGE[1]);
      expect(d.remeshVertices).toBeGreaterThanOrEqual(REMESH_RANGE[0]);
      expect(d.remeshVertices).toBeLessThanOrEqual(REMESH_RANGE[1]);
      const r = d.factors.regions;
      for (const f of [r.spine, r.neck]) expect(f >= 0.75 && f <= 1.35).toBe(true);
      for (const f of [r.leftArm, r.rightArm, r.leftLeg, r.rightLeg]) expect(f >= 0.75 * 0.94 && f <= 1.35 * 1.06).toBe(true);
      for (const k of [r.leftArmThickness, r.rightArmThickness, r.leftLegThickness, r.rightLegThickness]) expect(k >= 0.7 && k <= 1.5).toBe(true);
      expect(r.head >= 0.75 && r.head <= 1.9).toBe(true);
      if (r.chibi) chibi++;
      if (r.leftArm === r.rightArm && r.leftLeg === r.rightLeg) symmetric++;
      expect(d.factors.length).toHaveLength(J);
      expect(d.factors.thickness).toHaveLength(J);
    }
    expect(chibi / seeds).toBeGreaterThan(0.05);
    expect(chibi / seeds).toBeLessThan(0.3);
    expect(symmetric / seeds).toBeGreaterThan(0.6);
    expect(symmetric).toBeLessThan(seeds);
  });
});

describe.each(['cesium_man', 'clonk'])('augmenting %s', (name) => {
  let character: DevCharacter;
  let rig: TemplateRig;
  beforeAll(async () => {
    if (!HAVE_DATA) return;
    character = await dev(name);
    rig = templateRigOf(character, name);
  });

  needsData('the mapped original: 23 joints, the artist\'s merged weights, every part', () => {
    expect(rig.rigged.joints.length).toBe(J * 3);
    expect(rig.rigged.parts.length).toBe(character.parts.length);
    expectValidWeights(rig.rigged);
    expect(rig.joints.mapped.filter(Boolean).length).toBeGreaterThanOrEqual(15);
  });

  needsData('factors of 1 and no scaling reproduce the mapped original', () => {
    const a = augmentDevCharacter(character, 7, { factors: unitProportionFactors(), height: null, remeshVertices: null });
    for (let i = 0; i < J * 3; i++) expect(Math.abs(a.joints[i] - rig.rigged.joints[i])).toBeLessThan(1e-5);
    a.parts.forEach((part, p) => {
      const original = rig.rigged.parts[p].positions;
      let worst = 0;
      for (let i = 0; i < original.length; i++) worst = Math.max(worst, Math.abs(part.positions[i] - original[i]));
      expect(worst).toBeLessThan(1e-5);
      expect(part.triangles).toEqual(rig.rigged.parts[p].triangles);
      expect(a.weights[p].weights).toEqual(rig.rigged.weights[p].weights);
      expect(a.weights[p].indices).toEqual(rig.rigged.weights[p].indices);
    });
  });

  needsData('bone lengths become the drawn factors times the original lengths', { timeout: 60_000 }, () => {
    for (const seed of [1, 2, 3, 12]) {
      const a = augmentDevCharacter(character, seed, { height: null, remeshVertices: null });
      const length = a.meta.boneLengthFactors as number[];
      let checked = 0;
      for (let t = 0; t < J; t++) {
        if (!rig.joints.mapped[t] || t === HEAD_TOP) continue;
        const span = spanOf(t, rig.joints.mapped);
        const last = span[span.length - 1];
        const end = chainChild(last);
        if (end < 0 || (!rig.joints.mapped[end] && end !== HEAD_TOP)) continue;
        // the artist's bone from t to the next mapped joint: the length-weighted mean of its template bones' factors
        let old = 0, expected = 0;
        for (const b of span) {
          const l = dist(rig.joints.heads[b], rig.joints.tails[b]);
          old += l;
          expected += length[b] * l;
        }
        const ratio = dist(joint(a.joints, t), joint(a.joints, end)) / dist(joint(rig.rigged.joints, t), joint(rig.rigged.joints, end));
        expect(ratio, `${name} seed ${seed} ${MIXAMO_JOINTS[t]}`).toBeCloseTo(expected / old, 2);
        if (span.length === 1) expect(Math.abs(ratio / length[t] - 1)).toBeLessThan(0.01);
        checked++;
      }
      expect(checked).toBeGreaterThanOrEqual(12);
    }
  });

  needsData('the default augmentation is scaled to the drawn height, keeps the weights valid and does not tear', { timeout: 60_000 }, () => {
    const up = rig.frame.up;
    const originalHeight = heightAlong(rig.rigged.parts, up);
    const poses = randomPoses(11, 3, J, 45);
    const originalStretch = posedStretch(rig.rigged, poses, originalHeight);
    for (const seed of [1, 2, 3]) {
      const a = augmentDevCharacter(character, seed, { remeshVertices: null });
      const h = heightAlong(a.parts, up);
      expect(h).toBeCloseTo(drawAugmentation(seed).height, 4);
      expect(a.meta.height).toBeCloseTo(h, 4);
      expect(a.meta.source).toBe(name);
      expect(a.meta.seed).toBe(seed);
      expect(a.meta.remeshVertices).toBeNull();
      expect(a.parts.map((p) => p.name)).toEqual(character.parts.map((p) => p.name));
      expectValidWeights(a);
      // joints stay inside the mesh's extent along up
      let low = Infinity, high = -Infinity;
      for (const part of a.parts) {
        for (let v = 0; v < part.positions.length / 3; v++) {
          const y = part.positions[3 * v] * up[0] + part.positions[3 * v + 1] * up[1] + part.positions[3 * v + 2] * up[2];
          low = Math.min(low, y);
          high = Math.max(high, y);
        }
      }
      for (let t = 0; t < J; t++) {
        const y = joint(a.joints, t).reduce((s, x, i) => s + x * up[i], 0);
        expect(y).toBeGreaterThanOrEqual(low - 0.02 * h);
        expect(y).toBeLessThanOrEqual(high + 0.02 * h);
      }
      // at rest: edges change about as much as the factors do, and hardly any triangle turns over
      const scale = a.meta.scale as number;
      const before = edgeLengths(rig.rigged, rig.rigged.parts.map((p) => p.positions));
      const after = edgeLengths(a, a.parts.map((p) => p.positions));
      const ratios = after.map((l, i) => (before[i] > 1e-6 * originalHeight ? l / scale / before[i] : NaN));
      // (creases compress: short thick legs fold their knees to ~0.3 at the crease)
      expect(quantile(ratios, 0.001)).toBeGreaterThan(0.3);
      expect(quantile(ratios, 0.999)).toBeLessThan(2.5);
      expect(flippedTriangles(rig.rigged, a)).toBeLessThan(0.002);
      // posed at ±45° it stretches about as the original does
      expect(posedStretch(a, poses, h)).toBeLessThan(1.5 * originalStretch);
    }
  });
});

/** The share of triangles whose normal turns by more than 90° from the original to the augmented character. */
function flippedTriangles(original: RiggedCharacter, augmented: RiggedCharacter): number {
  let flipped = 0, total = 0;
  const normal = (P: Float32Array, a: number, b: number, c: number) => {
    const u = [P[3 * b] - P[3 * a], P[3 * b + 1] - P[3 * a + 1], P[3 * b + 2] - P[3 * a + 2]];
    const v = [P[3 * c] - P[3 * a], P[3 * c + 1] - P[3 * a + 1], P[3 * c + 2] - P[3 * a + 2]];
    return [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
  };
  original.parts.forEach((part, p) => {
    const T = part.triangles;
    for (let t = 0; t < T.length; t += 3) {
      const n0 = normal(part.positions, T[t], T[t + 1], T[t + 2]);
      const n1 = normal(augmented.parts[p].positions, T[t], T[t + 1], T[t + 2]);
      if (Math.hypot(n0[0], n0[1], n0[2]) === 0) continue;
      total++;
      if (n0[0] * n1[0] + n0[1] * n1[1] + n0[2] * n1[2] < 0) flipped++;
    }
  });
  return flipped / total;
}

describe('re-proportioning', () => {
  needsData('thickness scales across each bone\'s own axis (trunk, limbs, neck, head)', { timeout: 60_000 }, async () => {
    // clonk: many vertices carried by one bone alone (cesium_man's weights blend everywhere)
    const name = 'clonk';
    const character = await dev(name);
    const rig = templateRigOf(character, name);
    const seed = 5;
    // without averaging, vertices carried by one bone alone move exactly by that bone's transform
    const a = augmentDevCharacter(character, seed, { height: null, remeshVertices: null, smoothing: 0 });
    const thickness = a.meta.boneThicknessFactors as number[];
    const checked: string[] = [];
    for (let t = 0; t < J; t++) {
      if (!rig.joints.mapped[t] || t === HEAD_TOP) continue;
      const span = spanOf(t, rig.joints.mapped);
      const oldHead = rig.joints.heads[t], oldEnd = rig.joints.tails[span[span.length - 1]];
      const axisLength = dist(oldHead, oldEnd);
      const axis = [0, 1, 2].map((i) => (oldEnd[i] - oldHead[i]) / axisLength);
      const newHead = joint(a.joints, t);
      // the new axis direction is the old one (nothing turns)
      const across = (p: ArrayLike<number>, o: number, h: Vec3) => {
        const d = [p[o] - h[0], p[o + 1] - h[1], p[o + 2] - h[2]];
        const along = d[0] * axis[0] + d[1] * axis[1] + d[2] * axis[2];
        return Math.hypot(d[0] - along * axis[0], d[1] - along * axis[1], d[2] - along * axis[2]);
      };
      let vertices = 0;
      rig.rigged.parts.forEach((part, p) => {
        const w = rig.rigged.weights[p];
        for (let v = 0; v < part.positions.length / 3; v++) {
          if (!(w.indices[4 * v] === t && w.weights[4 * v] > 0.9999)) continue;
          const before = across(part.positions, 3 * v, oldHead);
          if (before < 0.02 * axisLength) continue;
          expect(across(a.parts[p].positions, 3 * v, newHead) / before, `${name} ${MIXAMO_JOINTS[t]} vertex ${v}`).toBeCloseTo(thickness[t], 3);
          vertices++;
        }
      });
      if (vertices > 0) checked.push(MIXAMO_JOINTS[t]);
    }
    // the trunk and at least one limb, among others
    expect(checked.length, checked.join(' ')).toBeGreaterThanOrEqual(4);
    expect(checked.some((n) => /^(Hips|Spine)/.test(n)), checked.join(' ')).toBe(true);
    expect(checked.some((n) => /(Arm|Leg)$/.test(n)), checked.join(' ')).toBe(true);
  });

});

describe('augmenting a character of several parts', () => {
  needsData('keeps each part separate and the seams between parts closed', { timeout: 60_000 }, async () => {
    const bcn = await dev('bcn_epileptic');
    const rig = templateRigOf(bcn, bcn.name);
    const a = augmentDevCharacter(bcn, 4, { remeshVertices: null });
    expect(a.parts.length).toBe(bcn.parts.length);
    expect(a.parts.length).toBeGreaterThan(1);
    // vertices of different parts that coincide in the original (within 1e-5 of the height) still coincide
    const size = heightAlong(rig.rigged.parts, rig.frame.up);
    const flat = rig.rigged.parts.flatMap((part, p) => Array.from({ length: part.positions.length / 3 }, (_, v) => [p, v]));
    const at = (parts: { positions: Float32Array }[], [p, v]: number[]): Vec3 => [parts[p].positions[3 * v], parts[p].positions[3 * v + 1], parts[p].positions[3 * v + 2]];
    let seams = 0, worst = 0;
    for (let i = 0; i < flat.length; i++) {
      const pi = at(rig.rigged.parts, flat[i]);
      for (let k = i + 1; k < flat.length; k++) {
        if (flat[k][0] === flat[i][0] || Math.abs(rig.rigged.parts[flat[k][0]].positions[3 * flat[k][1]] - pi[0]) > 1e-5 * size) continue;
        if (dist(pi, at(rig.rigged.parts, flat[k])) > 1e-5 * size) continue;
        seams++;
        worst = Math.max(worst, dist(at(a.parts, flat[i]), at(a.parts, flat[k])));
      }
    }
    expect(seams).toBeGreaterThan(10);
    expect(worst).toBeLessThan(2e-5 * (a.meta.height as number));
  });
});

describe('remeshed augmentation', () => {
  needsData('has about the target vertex count, valid weights, the same joints, and makes a training sample', { timeout: 60_000 }, async () => {
    const clonk = await dev('clonk');
    const target = 20_000;
    const flat = augmentDevCharacter(clonk, 9, { remeshVertices: null });
    const a = augmentDevCharacter(clonk, 9, { remeshVertices: target });
    expect(a.parts.length).toBe(1);
    const V = a.parts[0].positions.length / 3;
    expect(Math.abs(V - target) / target).toBeLessThan(0.35);
    expect(a.joints).toEqual(flat.joints);
    expect(a.meta.remeshVertices).toBe(target);
    expectValidWeights(a);

    const sample = makeTrainingSample(a, 3, 64, 1024);
    expect(sample.joints.length).toBe(J * 3);
    expect(sample.header.meta.source).toBe('clonk');
    expect(sample.header.vertexCount).toBe(V);
    let silhouette = 0;
    for (let i = 0; i < 64 * 64; i++) silhouette += sample.image[i] > 0 ? 1 : 0;
    expect(silhouette).toBeGreaterThan(200);
    for (let s = 0; s < 1024; s++) {
      let sum = 0;
      for (let j = 0; j < J; j++) sum += sample.pointWeights[s * J + j];
      expect(sum).toBeCloseTo(1, 4);
      expect(sample.pointWeights[s * J + HEAD_TOP]).toBe(0);
    }
    // every joint inside the canonical box the image shows
    for (let i = 0; i < J * 3; i++) expect(Math.abs(sample.joints[i])).toBeLessThan(0.55);
  });

  needsData('is a pure function of the seed', { timeout: 60_000 }, async () => {
    const cesium = await dev('cesium_man');
    const a = augmentDevCharacter(cesium, 21, { remeshVertices: 20_000 });
    const b = augmentDevCharacter(cesium, 21, { remeshVertices: 20_000 });
    const c = augmentDevCharacter(cesium, 22, { remeshVertices: 20_000 });
    expect(b.joints).toEqual(a.joints);
    expect(b.parts[0].positions).toEqual(a.parts[0].positions);
    expect(b.parts[0].triangles).toEqual(a.parts[0].triangles);
    expect(b.weights[0].indices).toEqual(a.weights[0].indices);
    expect(b.weights[0].weights).toEqual(a.weights[0].weights);
    expect(b.meta).toEqual(a.meta);
    expect(c.joints).not.toEqual(a.joints);
  });
});
