/**
 * Apply Latent Pose on a large mesh reads and auto-rigs a reduced copy of it (sidecar/pose/poseProxy.ts) and poses the
 * mesh itself: the copy's size and pieces, its rig against the full mesh's and the generator's truth, and the apply.
 */
import { describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { mergeParts } from '../sidecar/mesh/mergeParts.js';
import { meshShells } from '../sidecar/mesh/meshShells.js';
import { applyLatentPose, latentOfParts, latentPoseAutoRig, POSE_SKIN_STAGE } from '../sidecar/pose/applyLatentPose.js';
import { POSE_PROXY_ABOVE, POSE_PROXY_VERTICES, poseProxyOf } from '../sidecar/pose/poseProxy.js';
import { prepareMesh, rigPreparedAsync } from '../sidecar/pipeline.js';
import { MIXAMO_JOINTS, templateIndexOf } from '../sidecar/skeleton/mixamoTemplate.js';
import type { MeshPart, RigResult } from '../sidecar/types.js';
import { makeHumanoid } from './fixtures/humanoid.js';

// a skirted humanoid (body and skirt), neither point_rig's training nor a test identity of eval poses, at 80k vertices
const character = generateProceduralHumanoid(9_300_007, { targetVertices: 80_000 });
const parts = character.parts;
const merged = mergeParts(parts);
const vertices = merged.positions.length / 3;
let low = Infinity, high = -Infinity;
for (let i = 1; i < merged.positions.length; i += 3) { low = Math.min(low, merged.positions[i]); high = Math.max(high, merged.positions[i]); }
const height = high - low;

/** A vertex's weights by template joint (MIXAMO_JOINTS order): Float64Array #23 */
function templateRow(rig: Pick<RigResult, 'skeleton' | 'objects'>, part: number, v: number): Float64Array {
  const o = rig.objects[part];
  const row = new Float64Array(MIXAMO_JOINTS.length);
  for (let m = 0; m < o.influences; m++) row[templateIndexOf(rig.skeleton.joints[o.indices[o.influences * v + m]].name)] += o.weights[o.influences * v + m];
  return row;
}

/** The generator's weights of a vertex by template joint: Float64Array #23 */
function truthRow(part: number, v: number): Float64Array {
  const w = character.weights[part];
  const k = w.indices.length / (parts[part].positions.length / 3);
  const row = new Float64Array(MIXAMO_JOINTS.length);
  for (let m = 0; m < k; m++) row[w.indices[k * v + m]] += w.weights[k * v + m];
  return row;
}

/** Mean over the joints of the distance from a rig's head to the truth's, in height: number */
function jointError(rig: Pick<RigResult, 'skeleton'>): number {
  let sum = 0;
  for (let t = 0; t < MIXAMO_JOINTS.length - 1; t++) {
    const head = rig.skeleton.joints.find((j) => templateIndexOf(j.name) === t)!.head;
    sum += Math.hypot(head[0] - character.joints[3 * t], head[1] - character.joints[3 * t + 1], head[2] - character.joints[3 * t + 2]);
  }
  return sum / (MIXAMO_JOINTS.length - 1) / height;
}

/** Mean L1 distance between two weight rows per vertex: (part, v) → Float64Array #23 each */
function weightDistance(a: (part: number, v: number) => Float64Array, b: (part: number, v: number) => Float64Array): number {
  let sum = 0, n = 0;
  parts.forEach((p: MeshPart, k) => {
    for (let v = 0; v < p.positions.length / 3; v++) {
      const x = a(k, v), y = b(k, v);
      for (let j = 0; j < x.length; j++) sum += Math.abs(x[j] - y[j]);
      n++;
    }
  });
  return sum / n;
}

describe('poseProxyOf', () => {
  it('leaves a mesh of POSE_PROXY_ABOVE vertices or fewer as it is', () => {
    const small = makeHumanoid();
    const m = mergeParts(small);
    expect(m.positions.length / 3).toBeLessThanOrEqual(POSE_PROXY_ABOVE);
    expect(poseProxyOf(small, m)).toBeNull();
  });

  it('reduces an 80k humanoid to about POSE_PROXY_VERTICES, part by part, keeping its pieces', () => {
    expect(vertices).toBeGreaterThan(POSE_PROXY_ABOVE);
    const proxy = poseProxyOf(parts, merged)!;
    expect(proxy).not.toBeNull();
    const count = proxy.parts.reduce((n, p) => n + p.positions.length / 3, 0);
    expect(count).toBeGreaterThan(0.8 * POSE_PROXY_VERTICES);
    expect(count).toBeLessThan(1.25 * POSE_PROXY_VERTICES);
    expect(proxy.parts.map((p) => p.name)).toEqual(parts.map((p) => p.name));
    proxy.parts.forEach((p, k) => {
      // each part is reduced, none vanishes
      expect(p.positions.length).toBeGreaterThan(0);
      expect(p.positions.length).toBeLessThan(0.6 * parts[k].positions.length);
      for (const i of p.triangles) expect(i).toBeLessThan(p.positions.length / 3);
    });
    // the body and the skirt stay two pieces: clustering merges nothing across pieces, and no seam splits one
    const pm = mergeParts(proxy.parts);
    expect(meshShells(pm.positions, pm.triangles).count).toBe(meshShells(merged.positions, merged.triangles).count);
  });
});

describe('Apply Latent Pose on an 80k mesh, through its reduced copy', () => {
  it('auto-rigs the copy as well as the mesh: joints within 1% of height of the full mesh\'s, weights as near the truth', async () => {
    const proxyRig = await latentPoseAutoRig(parts);
    const fullRig = await rigPreparedAsync(parts, prepareMesh(parts, () => {}, () => {}, true), {}, () => {}, POSE_SKIN_STAGE);
    for (const joint of fullRig.skeleton.joints) {
      const other = proxyRig.skeleton.joints.find((j) => j.name === joint.name)!;
      expect(Math.hypot(...joint.head.map((x, a) => x - other.head[a])) / height, joint.name).toBeLessThan(0.01);
    }
    // measured: joints within 0.21 % of height of the mesh's; mean joint error against the generator's 0.460 % of
    // height through the copy, 0.488 on the mesh; weights' L1 against the truth's 0.412 and 0.413 (0.017 apart)
    expect(jointError(proxyRig)).toBeLessThan(jointError(fullRig) + 0.001);
    const throughCopy = weightDistance((k, v) => templateRow(proxyRig, k, v), truthRow);
    const onMesh = weightDistance((k, v) => templateRow(fullRig, k, v), truthRow);
    expect(throughCopy).toBeLessThan(onMesh + 0.03);
    expect(weightDistance((k, v) => templateRow(proxyRig, k, v), (k, v) => templateRow(fullRig, k, v))).toBeLessThan(0.05);
    // every vertex of the mesh has its weights, summing to one
    proxyRig.objects.forEach((o, k) => {
      expect(o.weights.length).toBe((parts[k].positions.length / 3) * o.influences);
      for (let v = 0; v < o.weights.length / o.influences; v++) {
        let sum = 0;
        for (let m = 0; m < o.influences; m++) sum += o.weights[o.influences * v + m];
        expect(sum).toBeCloseTo(1, 4);
      }
    });
  }, 120_000);

  it('poses every vertex of the mesh: elbowBentLf bends the left forearm, not the right; the next apply reuses it all', async () => {
    const first = await applyLatentPose(parts, { pose: 'elbowBentLf' });
    expect(first.objects.map((o) => o.positions.length)).toEqual(parts.map((p) => p.positions.length));
    const motion = new Map<string, [number, number]>();
    parts.forEach((p, k) => {
      for (let v = 0; v < p.positions.length / 3; v++) {
        const row = truthRow(k, v);
        let best = 0;
        for (let j = 1; j < row.length; j++) if (row[j] > row[best]) best = j;
        const q = first.objects[k].positions;
        const d = Math.hypot(q[3 * v] - p.positions[3 * v], q[3 * v + 1] - p.positions[3 * v + 1], q[3 * v + 2] - p.positions[3 * v + 2]);
        const m = motion.get(MIXAMO_JOINTS[best]) ?? [0, 0];
        motion.set(MIXAMO_JOINTS[best], [m[0] + d / height, m[1] + 1]);
      }
    });
    const mean = (joint: string) => motion.get(joint)![0] / motion.get(joint)![1];
    // measured: the left forearm's vertices move 10.5 % of height, its hand's 27 %; the right's do not move
    expect(mean('LeftForeArm')).toBeGreaterThan(0.03);
    expect(mean('LeftHand')).toBeGreaterThan(0.1);
    expect(mean('RightForeArm')).toBeLessThan(0.01 * mean('LeftForeArm'));
    expect(mean('RightHand')).toBeLessThan(0.01 * mean('LeftHand'));
    // μ is the copy's whoever asks (the eval reads it with latentOfParts)
    expect(Array.from(await latentOfParts(parts))).toEqual(Array.from(first.reusable!.mu));
    // the carried rig and the copy's frame serve the next apply: the same answer, nothing read or rigged again
    const again = await applyLatentPose(parts, { pose: 'elbowBentLf', reuse: first.reusable });
    expect(again.reused).toBe(true);
    again.objects.forEach((o, k) => expect(Array.from(o.positions)).toEqual(Array.from(first.objects[k].positions)));
  }, 120_000);
});
