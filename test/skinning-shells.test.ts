/**
 * Anti-bleed between separate closed pieces: a box "head" resting on a box "torso" (a blocky character, a robot) must
 * move rigidly with the bone inside it, while an open shell and a single-piece body keep their smooth weights.
 */
import { describe, expect, it } from 'vitest';
import { skinCharacter } from '../sidecar/pipeline.js';
import { meshShells } from '../sidecar/mesh/meshShells.js';
import { hangingBoneSets, restrictToShellBones, rigidShells, shellBoneSets } from '../sidecar/skinning/shellBones.js';
import type { MeshPart, Skeleton } from '../sidecar/types.js';
import type { SkinBone } from '../sidecar/skinning/voxelBoneWeights.js';
import { boxMesh } from './fixtures/boxMesh.js';

function concat(parts: MeshPart[]): MeshPart {
  const positions = new Float32Array(parts.reduce((n, p) => n + p.positions.length, 0));
  const triangles = new Uint32Array(parts.reduce((n, p) => n + p.triangles.length, 0));
  let v = 0, t = 0;
  for (const p of parts) {
    positions.set(p.positions, v * 3);
    for (let i = 0; i < p.triangles.length; i++) triangles[t + i] = p.triangles[i] + v;
    v += p.positions.length / 3;
    t += p.triangles.length;
  }
  return { name: 'body', positions, triangles };
}

// A torso box (y 0..1) with a head box touching it on top (y 1..1.6); one bone through each.
const torso = boxMesh('torso', [-0.3, 0, -0.2], [0.3, 1, 0.2], 6);
const head = boxMesh('head', [-0.25, 1, -0.25], [0.25, 1.6, 0.25], 6);
const skeleton: Skeleton = {
  joints: [
    { name: 'Spine', parent: -1, head: [0, 0.05, 0], tail: [0, 1, 0], roll: 0 },
    { name: 'Head', parent: 0, head: [0, 1, 0], tail: [0, 1.55, 0], roll: 0 },
  ],
};

function dominantShare(part: MeshPart, weights: { indices: Uint16Array; weights: Float32Array }, bone: number, select: (y: number) => boolean): number {
  let n = 0, sum = 0;
  for (let v = 0; v < part.positions.length / 3; v++) {
    if (!select(part.positions[v * 3 + 1])) continue;
    n++;
    for (let k = 0; k < 4; k++) if (weights.indices[v * 4 + k] === bone) sum += weights.weights[v * 4 + k];
  }
  return sum / n;
}

describe('closed pieces keep to their own bones', () => {
  it('finds the pieces, welding the split corners of each box', () => {
    const body = concat([torso, head]);
    const shells = meshShells(body.positions, body.triangles);
    expect(shells.count).toBe(2);
    const torsoVertices = torso.positions.length / 3;
    expect(new Set(shells.shellOf.subarray(0, torsoVertices)).size).toBe(1);
    expect(shells.shellOf[0]).not.toBe(shells.shellOf[torsoVertices]);
    const bones = skeleton.joints.map((j) => ({ head: j.head, tail: j.tail, parent: j.parent, deform: true }));
    const sets = shellBoneSets(body.positions, body.triangles, shells, bones, 0.03);
    expect(sets[shells.shellOf[0]]).toEqual([0]);
    expect(sets[shells.shellOf[torsoVertices]]).toEqual([1]);
  });

  it('a box head on a box torso moves wholly with the head bone, the torso wholly with the spine', () => {
    const body = concat([torso, head]);
    const w = skinCharacter([body], skeleton).objects[0];
    const torsoVertices = torso.positions.length / 3;
    const torsoPart = { ...body, positions: body.positions.subarray(0, torsoVertices * 3) };
    const headPart = { ...body, positions: body.positions.subarray(torsoVertices * 3) };
    const headW = { indices: w.indices.subarray(torsoVertices * 4), weights: w.weights.subarray(torsoVertices * 4) };
    // even the torso's top face, which touches the head, stays on the spine
    expect(dominantShare(torsoPart, w, 0, () => true)).toBeCloseTo(1, 5);
    expect(dominantShare(torsoPart, w, 0, (y) => y > 0.99)).toBeCloseTo(1, 5);
    expect(dominantShare(headPart, headW, 1, () => true)).toBeCloseTo(1, 5);
  });

  it('one closed body keeps blending across the joint', () => {
    const column = boxMesh('column', [-0.3, 0, -0.2], [0.3, 1.6, 0.2], 12);
    const w = skinCharacter([column], skeleton).objects[0];
    // near the joint (y ≈ 1) both bones share the vertices
    const spineShare = dominantShare(column, w, 0, (y) => Math.abs(y - 1) < 0.07);
    expect(spineShare).toBeGreaterThan(0.2);
    expect(spineShare).toBeLessThan(0.8);
  });

  it('an open shell (a torso with no top) is not restricted', () => {
    const openTorso = boxMesh('torso', [-0.3, 0, -0.2], [0.3, 1, 0.2], 6, true);
    const body = concat([openTorso, head]);
    const shells = meshShells(body.positions, body.triangles);
    const bones = skeleton.joints.map((j) => ({ head: j.head, tail: j.tail, parent: j.parent, deform: true }));
    const sets = shellBoneSets(body.positions, body.triangles, shells, bones, 0.03);
    expect(shells.count).toBe(2);
    expect(sets[shells.shellOf[0]]).toEqual([]);
  });
});

describe('a closed piece no bone runs through follows what it hangs from', () => {
  // y up, height ~1. Bones: 0 Spine (torso), 1 LeftLeg, 2 RightLeg. A torso box on two leg boxes, and a cape: a
  // slab behind them, touching (5 mm away) the torso's back at the top and the legs' backs at the bottom.
  const torsoBox = boxMesh('torso', [-0.2, 0.505, -0.1], [0.2, 1, 0.1], 4);
  const legL = boxMesh('legL', [0.02, 0, -0.1], [0.18, 0.5, 0.1], 4);
  const legR = boxMesh('legR', [-0.18, 0, -0.1], [-0.02, 0.5, 0.1], 4);
  const cape = boxMesh('cape', [-0.2, 0.05, -0.165], [0.2, 0.95, -0.105], 6);
  const bones = [
    { head: [0, 0.5, 0] as [number, number, number], tail: [0, 1, 0] as [number, number, number], parent: -1, deform: true },
    { head: [0.1, 0.5, 0] as [number, number, number], tail: [0.1, 0, 0] as [number, number, number], parent: 0, deform: true },
    { head: [-0.1, 0.5, 0] as [number, number, number], tail: [-0.1, 0, 0] as [number, number, number], parent: 0, deform: true },
  ];
  const all = concat([torsoBox, legL, legR, cape]);
  const nv = all.positions.length / 3;
  const capeStart = nv - cape.positions.length / 3;
  // the unrestricted weights, as the solid gives them: each vertex to the bone nearest it (the cape's hem to the legs)
  const k = 4;
  const nearestBoneWeights = () => {
    const indices = new Uint16Array(nv * k), weights = new Float32Array(nv * k);
    for (let v = 0; v < nv; v++) {
      const y = all.positions[v * 3 + 1], x = all.positions[v * 3];
      indices[v * k] = y > 0.5 ? 0 : x > 0 ? 1 : 2;
      weights[v * k] = 1;
    }
    return { indices, weights };
  };

  it('binds a cape to the spine it hangs from, not to the legs its hem brushes; the legs keep theirs', () => {
    const shells = meshShells(all.positions, all.triangles);
    expect(shells.count).toBe(4);
    const closed = new Uint8Array(shells.count);
    const sets = shellBoneSets(all.positions, all.triangles, shells, bones, 0.01, closed);
    const capeShell = shells.shellOf[capeStart];
    expect(closed[capeShell]).toBe(1);
    expect(sets[capeShell]).toEqual([]);
    const { indices, weights } = nearestBoneWeights();
    hangingBoneSets(all.positions, shells, sets, closed, bones, k, indices, weights, 0.04);
    expect(sets[capeShell]).toEqual([0]);
    restrictToShellBones(all.positions, shells.shellOf, sets, bones, k, indices, weights);
    let hemVertices = 0;
    for (let v = capeStart; v < nv; v++) {
      // every cape vertex, the hem too, wholly on the spine
      expect(indices[v * k]).toBe(0);
      expect(weights[v * k]).toBeCloseTo(1, 6);
      if (all.positions[v * 3 + 1] < 0.3) hemVertices++;
    }
    expect(hemVertices).toBeGreaterThan(0);
    // the legs (closed, their bone inside) keep their own bone
    const legVertex = torsoBox.positions.length / 3;
    expect(sets[shells.shellOf[legVertex]]).toEqual([1]);
    expect(indices[legVertex * k]).toBe(1);
  });

  it('leaves a boneless piece that touches nothing unrestricted', () => {
    const floating = boxMesh('floating', [0.5, 0.2, -0.05], [0.6, 0.3, 0.05], 3);
    const scene = concat([torsoBox, floating]);
    const shells = meshShells(scene.positions, scene.triangles);
    const closed = new Uint8Array(shells.count);
    const sets = shellBoneSets(scene.positions, scene.triangles, shells, bones, 0.02, closed);
    const floatingShell = shells.shellOf[scene.positions.length / 3 - 1];
    expect(closed[floatingShell]).toBe(1);
    const n = scene.positions.length / 3;
    hangingBoneSets(scene.positions, shells, sets, closed, bones, k, new Uint16Array(n * k), Float32Array.from({ length: n * k }, (_, i) => (i % k === 0 ? 1 : 0)), 0.04);
    expect(sets[floatingShell]).toEqual([]);
  });
});

describe('a separate piece with no joint inside moves rigidly with the bone it lies along', () => {
  // an arm along x: upper arm bone 0 (0 → 1), forearm bone 1 (1 → 2), hand bone 2 (2 → 2.3)
  const arm: SkinBone[] = [
    { head: [0, 0, 0], tail: [1, 0, 0], parent: -1, deform: true },
    { head: [1, 0, 0], tail: [2, 0, 0], parent: 0, deform: true },
    { head: [2, 0, 0], tail: [2.3, 0, 0], parent: 1, deform: true },
  ];
  /** Blended top-4 rows: share a on bone p, 1 − a on bone q, for every vertex. */
  const blended = (n: number, p: number, q: number, a: number) => {
    const indices = new Uint16Array(4 * n), weights = new Float32Array(4 * n);
    for (let v = 0; v < n; v++) { indices[4 * v] = p; weights[4 * v] = a; indices[4 * v + 1] = q; weights[4 * v + 1] = 1 - a; }
    return { indices, weights };
  };
  const rows = (w: { indices: Uint16Array; weights: Float32Array }, v0: number, v1: number) => {
    const out = new Set<string>();
    for (let v = v0; v < v1; v++) out.add(Array.from({ length: 4 }, (_, q) => `${w.indices[4 * v + q]}:${w.weights[4 * v + q].toFixed(3)}`).join(' '));
    return [...out];
  };

  it('binds an upper-arm plate wholly to the upper arm, and leaves a sleeve over the elbow and a one-piece mesh blended', () => {
    const plate = boxMesh('plate', [0.05, -0.1, -0.1], [0.95, 0.1, 0.1], 4);
    // the sleeve spans the elbow (the forearm's head at x = 1 lies well inside it)
    const sleeve = boxMesh('sleeve', [0.6, -0.15, -0.15], [1.6, 0.15, 0.15], 4);
    const body = concat([plate, sleeve]);
    const nPlate = plate.positions.length / 3, n = body.positions.length / 3;
    const shells = meshShells(body.positions, body.triangles);
    expect(shells.count).toBe(2);
    const w = blended(n, 0, 1, 0.7);
    rigidShells(body.positions, shells, arm, 4, w.indices, w.weights);
    expect(rows(w, 0, nPlate)).toEqual(['0:1.000 0:0.000 0:0.000 0:0.000']);
    expect(rows(w, nPlate, n)).toEqual(['0:0.700 1:0.300 0:0.000 0:0.000']);
    // the plate alone, a mesh of one piece: untouched
    const alone = blended(nPlate, 0, 1, 0.7);
    rigidShells(plate.positions, meshShells(plate.positions, plate.triangles), arm, 4, alone.indices, alone.weights);
    expect(rows(alone, 0, nPlate)).toEqual(['0:0.700 1:0.300 0:0.000 0:0.000']);
  });

  it('takes the bone a piece lies along even where its weights lean on a neighbour, unless that bone holds under a quarter', () => {
    const plate = boxMesh('plate', [0.05, -0.1, -0.1], [0.95, 0.1, 0.1], 4);
    const hand = boxMesh('hand', [2.02, -0.05, -0.05], [2.28, 0.05, 0.05], 2);
    const body = concat([plate, hand]);
    const nPlate = plate.positions.length / 3, n = body.positions.length / 3;
    const shells = meshShells(body.positions, body.triangles);
    // the plate lies along the upper arm but its weights give 0.8 to the forearm: left as it is; the hand gives 0.55
    // to the forearm and 0.45 to its own bone: it goes wholly to the hand (a hat leaning on the neck goes to the head)
    const w = blended(n, 1, 0, 0.8);
    for (let v = nPlate; v < n; v++) { w.indices[4 * v] = 2; w.weights[4 * v] = 0.45; w.indices[4 * v + 1] = 1; w.weights[4 * v + 1] = 0.55; }
    rigidShells(body.positions, shells, arm, 4, w.indices, w.weights);
    expect(rows(w, 0, nPlate)).toEqual(['1:0.800 0:0.200 0:0.000 0:0.000']);
    expect(rows(w, nPlate, n)).toEqual(['2:1.000 0:0.000 0:0.000 0:0.000']);
    // with 0.3 on the upper arm the plate goes to it
    for (let v = 0; v < nPlate; v++) { w.weights[4 * v] = 0.7; w.weights[4 * v + 1] = 0.3; }
    rigidShells(body.positions, shells, arm, 4, w.indices, w.weights);
    expect(rows(w, 0, nPlate)).toEqual(['0:1.000 0:0.000 0:0.000 0:0.000']);
  });

});
