/**
 * The joint network's word on the whole shape (humanoidShape.ts checkHumanoidShape, estimateSkeleton.ts
 * meanJointConfidence), where the method runs it (hybrid, the default, and learned):
 * - a shape whose silhouette passes every whole-body cue but in which the network finds no body (mean joint confidence
 *   under MIN_NETWORK_CONFIDENCE) is refused NOT_HUMANOID: before, a floor lamp, a coat rack and a cactus were rigged
 *   with a Mixamo skeleton read into them;
 * - a body the network is sure of may be deeper than wide, down to MIN_WIDTH_OVER_DEPTH_VOUCHED: procedural 9 800 053,
 *   a chibi whose head and belly are as deep as its body is wide (width/depth 0.92), was refused before.
 */
import { describe, expect, it } from 'vitest';
import { AutoRigError } from '../sidecar/errors.js';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { prepareMesh, rigCharacterAsync } from '../sidecar/pipeline.js';
import { FRONT_VIEW_RESOLUTION, meanJointConfidence } from '../sidecar/skeleton/estimateSkeleton.js';
import { renderFrontView } from '../sidecar/skeleton/frontView.js';
import {
  checkHumanoidShape, MIN_NETWORK_CONFIDENCE, MIN_WIDTH_OVER_DEPTH, MIN_WIDTH_OVER_DEPTH_VOUCHED, VOUCHED_NETWORK_CONFIDENCE,
} from '../sidecar/skeleton/humanoidShape.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';
import type { MeshPart } from '../sidecar/types.js';
import { makeCactus, makeCoatRack, makeFloorLamp, makeQuadruped } from './fixtures/hostileMeshes.js';
import { makeHumanoid } from './fixtures/humanoid.js';
import { rigJointErrors } from './fixtures/riggedProcedural.js';

/** The front view of parts in their canonical frame, as the skeleton stage reads it. */
function shapeOf(parts: MeshPart[]) {
  const { canonical, body } = prepareMesh(parts);
  return { canonical, body, view: renderFrontView(canonical, body, FRONT_VIEW_RESOLUTION) };
}

function refusal(call: () => unknown): string {
  try {
    call();
  } catch (err) {
    if (err instanceof AutoRigError) return `${err.code}: ${err.message}`;
    throw err;
  }
  return 'rigged';
}

async function asyncRefusal(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
  } catch (err) {
    if (err instanceof AutoRigError) return `${err.code}: ${err.message}`;
    throw err;
  }
  return 'rigged';
}

describe('the network\'s confidence in checkHumanoidShape', () => {
  it('refuses a humanoid silhouette only when the network\'s mean confidence is under MIN_NETWORK_CONFIDENCE, never without a network', () => {
    const { canonical, body, view } = shapeOf(makeHumanoid());
    expect(refusal(() => checkHumanoidShape(canonical, body, view, MIN_NETWORK_CONFIDENCE - 0.01))).toMatch(/^NOT_HUMANOID: the joint network finds no body/);
    expect(refusal(() => checkHumanoidShape(canonical, body, view, MIN_NETWORK_CONFIDENCE))).not.toMatch(/NOT_HUMANOID/);
    expect(refusal(() => checkHumanoidShape(canonical, body, view, null))).not.toMatch(/NOT_HUMANOID/);
  });

  it('a confident network does not let a four-legged animal through: its width/depth is below the vouched bound too', () => {
    const { canonical, body, view } = shapeOf(makeQuadruped(1));
    expect(refusal(() => checkHumanoidShape(canonical, body, view, 0.95))).toMatch(/deeper front to back than it is wide \(width\/depth 0\.3/);
    expect(MIN_WIDTH_OVER_DEPTH_VOUCHED).toBeLessThan(MIN_WIDTH_OVER_DEPTH);
  });

  it('meanJointConfidence is the mean over the template\'s joints', () => {
    const confidence = new Float32Array(MIXAMO_JOINTS.length).fill(0.5);
    confidence[0] = 0.5 + MIXAMO_JOINTS.length * 0.01;
    expect(meanJointConfidence({ xy: new Float64Array(2 * MIXAMO_JOINTS.length), confidence })).toBeCloseTo(0.51, 6);
  });
});

describe('the default method on objects the silhouette cues pass', () => {
  // measured mean joint confidence: lamp 0.07, coat rack 0.03, cactus 0.13 (humanoids 0.38 or more); all three were
  // rigged before
  it.each([['a floor lamp', makeFloorLamp], ['a coat rack', makeCoatRack], ['a cactus', makeCactus]] as const)('%s is refused NOT_HUMANOID by the network', async (_, make) => {
    const parts = make();
    const { canonical, body, view } = shapeOf(parts);
    // the silhouette cues alone let it through
    expect(refusal(() => checkHumanoidShape(canonical, body, view, null))).toBe('rigged');
    expect(await asyncRefusal(() => rigCharacterAsync(parts))).toMatch(/^NOT_HUMANOID: the joint network finds no body in the front view \(mean joint confidence 0\.[01]/);
  }, 60_000);
});

describe('a chibi deeper than wide that the network is sure of', () => {
  it('procedural 9 800 053 is rigged, its joints where the generator put them', async () => {
    const character = generateProceduralHumanoid(9_800_053, { targetVertices: 20_000 });
    const { canonical, body, view } = shapeOf(character.parts);
    // deeper than wide: the cue alone refuses it
    expect(refusal(() => checkHumanoidShape(canonical, body, view, null))).toMatch(/deeper front to back than it is wide \(width\/depth 0\.9/);
    expect(refusal(() => checkHumanoidShape(canonical, body, view, VOUCHED_NETWORK_CONFIDENCE - 0.01))).toMatch(/deeper front to back/);
    const errors = await rigJointErrors(character);
    // measured: mean 0.41 %, worst joint 1.0 % of the height (the right hand); before, refused
    expect(errors.reduce((a, b) => a + b, 0) / errors.length).toBeLessThan(0.01);
    expect(Math.max(...errors)).toBeLessThan(0.02);
  }, 60_000);
});
