/**
 * The exact posed surface of a procedural humanoid (issue 7's ground truth): at rest it is the rest mesh; a 90°
 * left-elbow bend moves the left forearm rigidly and leaves the right arm and the legs where they were; the re-blended
 * elbow keeps its volume where linear blend skinning (even with the exact construction weights) loses it.
 */
import { describe, expect, it } from 'vitest';
import { bareHumanoidParams, posedPlanSurface } from '../sidecar/data/procedural/posedHumanoidSurface.js';
import { sampleHumanoidParams } from '../sidecar/data/procedural/humanoidParams.js';
import { buildProceduralHumanoid, planProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { linearBlendSkinning } from '../sidecar/deform/linearBlendSkinning.js';
import { AutoRigError } from '../sidecar/errors.js';
import { KEY_POSES, keyPoseRotations } from '../sidecar/eval/correctives/keyPoses.js';
import { volumeInBall, volumeLoss } from '../sidecar/eval/correctives/meshVolume.js';
import { chamferDistance } from '../sidecar/eval/correctives/surfaceDistance.js';
import { buildTriangleGrid, surfaceDistances } from '../sidecar/eval/correctives/triangleGrid.js';
import { mergeParts } from '../sidecar/mesh/mergeParts.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';

const J = MIXAMO_JOINTS.length;
const SEED = 9_200_000; // a thin T-posed humanoid, arms clear of the body
const params = bareHumanoidParams(sampleHumanoidParams(SEED, 10_000));
const plan = planProceduralHumanoid(params);
const character = buildProceduralHumanoid(params);
const H = params.heightMetres;
const rest = mergeParts(character.parts);
const cell = 0.75 * (character.meta.cellMetres as number);
const heads = new Float64Array(J * 3);
plan.joints.forEach((j, i) => heads.set(j, 3 * i));
const identity = new Float64Array(J * 9);
for (let j = 0; j < J; j++) identity.set([1, 0, 0, 0, 1, 0, 0, 0, 1], 9 * j);
const idx = (name: string) => MIXAMO_JOINTS.indexOf(name as never);
const atRest = posedPlanSurface(plan, identity, cell);
const restTruth = mergeParts(atRest.parts);

/** Rest vertices whose construction weight on one of `bones` is at least `share`. */
function verticesOf(bones: string[], share: number): number[] {
  const ids = bones.map(idx);
  const out: number[] = [];
  character.weights.forEach((w, p) => {
    const k = w.indices.length / (character.parts[p].positions.length / 3);
    for (let v = 0; v < character.parts[p].positions.length / 3; v++) {
      for (let s = 0; s < k; s++) if (ids.includes(w.indices[v * k + s]) && w.weights[v * k + s] >= share) { out.push(rest.partOffsets[p] + v); break; }
    }
  });
  return out;
}

function pointsOf(positions: Float32Array, vertices: number[]): Float32Array {
  const out = new Float32Array(vertices.length * 3);
  vertices.forEach((v, i) => out.set(positions.subarray(3 * v, 3 * v + 3), 3 * i));
  return out;
}

const mean = (a: Float64Array) => a.reduce((s, x) => s + x, 0) / a.length;
const max = (a: Float64Array) => a.reduce((s, x) => Math.max(s, x), 0);

describe('posed procedural surface (ground truth)', { timeout: 120_000 }, () => {
  it('at the rest pose is the rest mesh: the same parts, Chamfer a few hundredths of a percent of the height', () => {
    expect(atRest.parts.map((p) => p.name)).toEqual(character.parts.map((p) => p.name));
    const t = mergeParts(atRest.parts);
    const d = chamferDistance({ positions: t.positions, triangles: t.triangles }, { positions: rest.positions, triangles: rest.triangles }, 8000);
    expect(d / H).toBeLessThan(3e-4);
  });

  const elbow = KEY_POSES.find((p) => p.id === 'elbow')!;
  const rotations = keyPoseRotations(elbow, heads, 90);
  const posed = posedPlanSurface(plan, rotations, cell);
  const truth = mergeParts(posed.parts);
  const grid = buildTriangleGrid(truth.positions, truth.triangles);

  it('bending the left elbow 90° moves the left forearm rigidly and leaves the right arm and the legs in place', () => {
    const forearm = verticesOf(['LeftForeArm'], 0.97);
    expect(forearm.length).toBeGreaterThan(100);
    const moved = linearBlendSkinning(rest.positions, new Uint16Array(rest.positions.length / 3).fill(idx('LeftForeArm')), new Float32Array(rest.positions.length / 3).fill(1), 1, posed.transforms);
    // the forearm's own vertices, turned with its bone, lie on the posed surface; left at rest they do not
    const turned = mean(surfaceDistances(grid, pointsOf(moved, forearm))) / H;
    const left = mean(surfaceDistances(grid, pointsOf(rest.positions, forearm))) / H;
    expect(turned).toBeLessThan(6e-4);
    expect(left).toBeGreaterThan(0.02);
    expect(left).toBeGreaterThan(50 * turned);
    // the right arm and both legs have not moved
    const still = verticesOf(['RightArm', 'RightForeArm', 'RightHand', 'LeftUpLeg', 'LeftLeg', 'RightUpLeg', 'RightLeg'], 0.97);
    expect(still.length).toBeGreaterThan(500);
    // as close to the posed surface as to the rest surface: the meshing's own noise, nothing more
    const d = surfaceDistances(grid, pointsOf(rest.positions, still));
    const floor = surfaceDistances(buildTriangleGrid(restTruth.positions, restTruth.triangles), pointsOf(rest.positions, still));
    expect(mean(d)).toBeLessThan(1.05 * mean(floor) + 1e-5 * H);
    expect(max(d)).toBeLessThan(1.05 * max(floor) + 1e-4 * H);
    expect(mean(d) / H).toBeLessThan(6e-4);
  });

  it('the re-blended elbow keeps its volume better than linear blend skinning with the exact weights', () => {
    const j = idx('LeftForeArm');
    const restGrid = buildTriangleGrid(rest.positions, rest.triangles);
    const centre = heads.subarray(3 * j, 3 * j + 3);
    const radius = 2 * surfaceDistances(restGrid, Float32Array.from(centre))[0];
    // the elbow's head turns with the upper arm, which this pose leaves still
    const posedCentre = [0, 1, 2].map((a) => posed.transforms[j * 12 + a * 4] * centre[0] + posed.transforms[j * 12 + a * 4 + 1] * centre[1] + posed.transforms[j * 12 + a * 4 + 2] * centre[2] + posed.transforms[j * 12 + a * 4 + 3]);
    expect(posedCentre.map((x, a) => x - centre[a])).toEqual([0, 0, 0].map(() => expect.closeTo(0, 9)));
    const k = character.weights[0].indices.length / (character.parts[0].positions.length / 3);
    const indices = new Uint16Array(rest.positions.length / 3 * k), weights = new Float32Array(indices.length);
    character.weights.forEach((w, p) => { indices.set(w.indices, rest.partOffsets[p] * k); weights.set(w.weights, rest.partOffsets[p] * k); });
    const lbs = linearBlendSkinning(rest.positions, indices, weights, k, posed.transforms);
    const restVolume = volumeInBall(rest.positions, rest.triangles, centre, radius);
    const lbsLoss = volumeLoss(volumeInBall(lbs, rest.triangles, centre, radius), restVolume);
    const truthLoss = volumeLoss(volumeInBall(truth.positions, truth.triangles, centre, radius), restVolume);
    expect(lbsLoss).toBeGreaterThan(0.03);
    expect(Math.abs(truthLoss)).toBeLessThan(lbsLoss / 2);
  });

  it('refuses clothing that follows several bones (a skirt has no rigid pose)', () => {
    let seed = 1;
    while (!sampleHumanoidParams(seed, 5000).clothing.skirt) seed++;
    const skirted = planProceduralHumanoid(sampleHumanoidParams(seed, 5000));
    expect(() => posedPlanSurface(skirted, identity)).toThrow(AutoRigError);
    expect(() => posedPlanSurface(skirted, identity)).toThrow(/skirt/);
  });
});
