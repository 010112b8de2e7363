/**
 * A chibi character whose head is as wide as its body (sidecar/skeleton/estimateSkeleton.ts headOffItsNeck): the rules
 * find no neck in the width profile and read the neck, and the Head above it, far up the head. The hybrid skeleton
 * takes the network's Neck there (it is confident), but took the rules' Head where the network was unsure of its own:
 * the Head sat near the top of the skull, 24–29 % of the height off, and the head bone was a stub. Where the rules' Neck
 * lies far from the network's, the network's Head stands in, however unsure.
 */
import { describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { rigCharacterAsync } from '../sidecar/pipeline.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';
import { rigJointErrors, SCORED_JOINTS } from './fixtures/riggedProcedural.js';
import { prepareMesh } from '../sidecar/pipeline.js';
import { renderFrontView } from '../sidecar/skeleton/frontView.js';
import { predictJoints2D } from '../sidecar/skeleton/learnedJoints2d.js';
import { loadModel } from '../sidecar/learned/onnxSession.js';
import { modelPath } from '../sidecar/learned/modelFiles.js';
import { ARM_OVER_HEAD, estimateSkeleton, FRONT_VIEW_RESOLUTION, NECK_OVER_NETWORK_HEAD, rulesArmOverNetworkHead, rulesNeckOverNetworkHead, upperTrunkOverNetwork } from '../sidecar/skeleton/estimateSkeleton.js';

describe('the Head of a chibi character', () => {
  it.each([
    // measured 0.7 % (9 500 047) and 2.8 % (9 500 041, whose head the network reads behind its neck, where
    // HEAD_TIPPED_BACK stands it over the neck: 5.5 % before that); before headOffItsNeck, 24.4 and 29.3 %
    [9_500_047, 0.02],
    [9_500_041, 0.04],
  ])('of procedural humanoid %i sits at the base of its skull, over its neck', async (seed, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000 });
    const height = character.meta.heightMetres as number;
    const rig = await rigCharacterAsync(character.parts);
    const head = (name: string) => rig.skeleton.joints.find((j) => j.name === `mixamorig:${name}`)!.head;
    const k = MIXAMO_JOINTS.indexOf('Head');
    const error = Math.hypot(...head('Head').map((x, i) => x - character.joints[3 * k + i])) / height;
    expect(error).toBeLessThan(bound);
    // the head bone spans the head: its Head lies nearer the Neck than the top of the head
    const up = rig.frame.up;
    const along = (p: ArrayLike<number>) => p[0] * up[0] + p[1] * up[1] + p[2] * up[2];
    expect(along(head('Head')) - along(head('Neck'))).toBeLessThan(along(head('HeadTop_End')) - along(head('Head')));
  }, 60_000);

  // The rules found a neck, but the narrowest rows just over the shoulders, under a head that hides the real one: their
  // Head stood 0.026 of the height over the Neck, the network's (confidence 0.44–0.49, under the hybrid's 0.5) 0.10–
  // 0.12 over it. Where the rules' Head stands under half the network's neck, the network's stands in (HEAD_ON_NECK_SHARE)
  it.each([
    [11_000_041, 0.02],
    [12_000_065, 0.02],
    [13_000_008, 0.04],
  ])('of procedural humanoid %i, arms posed apart, is not read on its neck', async (seed, bound) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000, asymmetricArms: true });
    const errors = await rigJointErrors(character);
    // measured 0.78, 0.37 and 3.35 % of the height (13 000 008's Head takes its Neck's depth, read 5 % behind the
    // generator's); before, 10.5, 10.5 and 10.8 %
    expect(errors[SCORED_JOINTS.indexOf('Head')]).toBeLessThan(bound);
  }, 60_000);

  it('is told by the rules\' Neck well over the network\'s Head, the network sure of the chest', () => {
    const L = 'learned' as const, G = 'geometric' as const;
    const networkHead: [number, number] = [0, 0.12];
    expect(rulesNeckOverNetworkHead({ Neck: [0, 0.39] }, { Neck: G, Spine2: L }, networkHead, 1)).toBe(true);
    // just over it: the network's Head, unsure, may stand low (mixamo_ely's, 0.085 of the height), the rules' Neck right
    expect(rulesNeckOverNetworkHead({ Neck: [0, 0.12 + NECK_OVER_NETWORK_HEAD - 0.01] }, { Neck: G, Spine2: L }, networkHead, 1)).toBe(false);
    expect(rulesNeckOverNetworkHead({ Neck: [0, 0.12 + NECK_OVER_NETWORK_HEAD + 0.01] }, { Neck: G, Spine2: L }, networkHead, 1)).toBe(true);
    // the margin is the body's height's share
    expect(rulesNeckOverNetworkHead({ Neck: [0, 0.12 + NECK_OVER_NETWORK_HEAD + 0.01] }, { Neck: G, Spine2: L }, networkHead, 1.2)).toBe(false);
    // the Neck the network's already, or the chest the rules' (the network sure of nothing below the neck)
    expect(rulesNeckOverNetworkHead({ Neck: [0, 0.39] }, { Neck: L, Spine2: L }, networkHead, 1)).toBe(false);
    expect(rulesNeckOverNetworkHead({ Neck: [0, 0.39] }, { Neck: G, Spine2: G }, networkHead, 1)).toBe(false);
  });

  // 23 000 028 (mirrored), a chibi in a cape and a long coat: the rules read its neck far up the head, 0.27 of the
  // height over the network's Head, and the network was unsure of its Neck and Head (0.46, 0.49): the rules' Neck and
  // Head stood 39 and 29 % off, and the shoulders, hung from that Neck, 17 %
  it('puts procedural humanoid 23 000 028\'s neck, head and shoulders under its big head, not in it', async () => {
    const character = generateProceduralHumanoid(23_000_028, { targetVertices: 20_000 });
    expect(character.meta.clothing as string[]).toContain('cape');
    const errors = await rigJointErrors(character);
    // measured 2.0, 1.6, 1.9 and 2.0 %; before, 39.1, 29.3, 17.7 and 17.5 %
    for (const name of ['Neck', 'Head', 'LeftShoulder', 'RightShoulder']) expect(errors[SCORED_JOINTS.indexOf(name as never)], name).toBeLessThan(0.04);
  }, 60_000);
});

describe('a hat\'s brim over a big head', () => {
  it('is told by a rules\' chest over the network\'s Neck, or a rules\' shoulder over its Head', () => {
    const L = 'learned', G = 'geometric';
    expect(upperTrunkOverNetwork({ Spine2: [0, 0.3], Neck: [0, 0.1] }, { Spine2: G, Neck: L })).toBe(true);
    expect(upperTrunkOverNetwork({ Spine2: [0, 0.05], Neck: [0, 0.1] }, { Spine2: G, Neck: L })).toBe(false);
    // any rules' Spine joint over a trunk joint the network read further up (29 000 010's Spine1 over the network's
    // Spine2, 0.26 of the canonical height), not the rules' Neck or Head, nor a joint under the network's
    expect(upperTrunkOverNetwork({ Spine1: [0, -0.06], Spine2: [0, -0.2] }, { Spine1: G, Spine2: L })).toBe(true);
    expect(upperTrunkOverNetwork({ Spine: [0, 0.2], Head: [0, 0.1] }, { Spine: G, Head: L })).toBe(true);
    expect(upperTrunkOverNetwork({ Spine: [0, 0.2], Spine1: [0, 0.1] }, { Spine: G, Spine1: L })).toBe(true);
    expect(upperTrunkOverNetwork({ Spine1: [0, -0.25], Spine2: [0, -0.2] }, { Spine1: G, Spine2: L })).toBe(false);
    expect(upperTrunkOverNetwork({ Neck: [0, 0.3], Head: [0, 0.1] }, { Neck: G, Head: L })).toBe(false);
    expect(upperTrunkOverNetwork({ Spine2: [0, 0.3], Spine1: [0, 0.1] }, { Spine2: G, Spine1: L })).toBe(false);
    // the rules' own Neck, or the network's chest, say nothing of the rules' reading against the network's
    expect(upperTrunkOverNetwork({ Spine2: [0, 0.3], Neck: [0, 0.1] }, { Spine2: G, Neck: G })).toBe(false);
    expect(upperTrunkOverNetwork({ Spine2: [0, 0.3], Neck: [0, 0.1] }, { Spine2: L, Neck: L })).toBe(false);
    // a rules' shoulder over the network's Head, the network's own chest under its Neck
    const chest = { Spine2: [0, 0.05], Neck: [0, 0.1], Head: [0, 0.2] } as Record<string, [number, number]>;
    expect(upperTrunkOverNetwork({ ...chest, LeftShoulder: [0.05, 0.3] }, { Spine2: L, Neck: L, Head: L, LeftShoulder: G })).toBe(true);
    expect(upperTrunkOverNetwork({ ...chest, RightShoulder: [-0.05, 0.3] }, { Spine2: L, Neck: L, Head: L, RightShoulder: G })).toBe(true);
    // over the Neck but under the Head: where the rules' shoulders may stand on a short neck
    expect(upperTrunkOverNetwork({ ...chest, LeftShoulder: [0.05, 0.15] }, { Spine2: L, Neck: L, Head: L, LeftShoulder: G })).toBe(false);
  });

  // 9 900 062 (mirrored) wears a cone hat wider than its head: the rules took the brim for the shoulders, and divided
  // the trunk from the crotch up to it. Their Spine2 stood over the network's Neck, 44 % of the height off, and the
  // shoulders 29 %; the network's trunk and shoulders now stand in
  it('puts procedural humanoid 9 900 062\'s chest and shoulders under its neck', async () => {
    const character = generateProceduralHumanoid(9_900_062, { targetVertices: 20_000 });
    expect(character.meta.clothing as string[]).toContain('cone hat');
    const errors = await rigJointErrors(character);
    const at = (name: string) => errors[SCORED_JOINTS.indexOf(name as never)];
    // measured 3.1, 4.2 and 4.2 % (the network's, unsure); before, 44.2, 28.7 and 28.9 %. Since the network looks
    // again at a body the view shows small (skeleton/bodyCrop.ts), 0.7, 0.9 and 0.9 %
    for (const name of ['Spine2', 'LeftShoulder', 'RightShoulder']) expect(at(name), name).toBeLessThan(0.06);
    // measured 7.1 % (the network's Spine1, unsure, 7 % high); before, 30.4 %; zoomed, 0.5 %
    expect(at('Spine1')).toBeLessThan(0.1);
  }, 60_000);

  // 17 000 051 (mirrored) has long hair wider than its shoulders under a big head: the rules read the shoulders in the
  // hair, over the network's Head, 45.5 % of the height off; the network's Spine2 was its own. The network's shoulders,
  // unsure (0.44), stand in
  it('puts procedural humanoid 17 000 051\'s shoulders under its long hair, not in it', async () => {
    const character = generateProceduralHumanoid(17_000_051, { targetVertices: 20_000 });
    expect(character.meta.clothing as string[]).toContain('long hair');
    const errors = await rigJointErrors(character);
    // measured 4.0 and 4.1 %; before, 45.5 % each
    for (const name of ['LeftShoulder', 'RightShoulder']) expect(errors[SCORED_JOINTS.indexOf(name as never)], name).toBeLessThan(0.05);
  }, 60_000);

  // 29 000 010, a chibi under a cone hat over half as tall as its body, a skirt fused to it: the rules read the brim as the
  // shoulders, the hat as the head, and divided the trunk from the hem up to the brim. The network's first look (the
  // body under two thirds of the view's height), sure of the Spine2, Neck and Head only, put them at the body's top; the rules'
  // Spine1 stood over that Spine2 and their Hips over the network's Spine, the trunk folded back down twice. The
  // network's trunk, Hips and hip joints stand in. (The pipeline now looks again at such a body, zoomed, and is sure of
  // its joints: skeleton-small-body.test.ts. This reads the first look's joints, as a body too wide to zoom would.)
  it('keeps procedural humanoid 29 000 010\'s trunk in order under its hat, from the network\'s first look', async () => {
    const character = generateProceduralHumanoid(29_000_010, { targetVertices: 20_000 });
    expect(character.meta.clothing as string[]).toContain('cone hat');
    const height = character.meta.heightMetres as number;
    const { body, cf, canonical, shells } = prepareMesh(character.parts);
    const view = renderFrontView(canonical, body, FRONT_VIEW_RESOLUTION);
    const prediction = await predictJoints2D(await loadModel(modelPath('joints2d')), view);
    const { skeleton } = estimateSkeleton(canonical, body, cf, true, { method: 'hybrid', prediction }, view, shells);
    const head = (name: string) => skeleton.joints.find((j) => j.name === `mixamorig:${name}`)!.head;
    const up = cf.frame.up;
    const chain = ['Hips', 'Spine', 'Spine1', 'Spine2', 'Neck', 'Head'].map((name) => head(name).reduce((a, x, i) => a + x * up[i], 0));
    for (let k = 1; k < chain.length; k++) expect(chain[k], `joint ${k} of the trunk`).toBeGreaterThan(chain[k - 1]);
    for (const name of ['Hips', 'Spine', 'Spine1', 'LeftUpLeg', 'RightUpLeg']) {
      const k = MIXAMO_JOINTS.indexOf(name as never);
      const error = Math.hypot(...head(name).map((x, i) => x - character.joints[3 * k + i])) / height;
      // measured (the whole pipeline, then) 7.1 / 8.2 / 9.4 / 10.6 / 10.6 %: the network's first look, unsure; before,
      // 24.1 / 38.1 / 52.9 / 23.2 / 23.3 %
      expect(error, name).toBeLessThan(0.13);
    }
  }, 60_000);

  // 25 000 005 (mirrored) wears a cone hat far wider than its shoulders, its arms hanging straight down: the rules read
  // the brim as shoulders and arms held out level, their upper-arm joints 0.133 and 0.137 of the height over the
  // network's Head, and traced the hands along the brim (54 % of the height off). The network's, unsure, stand in
  it('puts procedural humanoid 25 000 005\'s hands by its sides, not out along its hat\'s brim', async () => {
    const character = generateProceduralHumanoid(25_000_005, { targetVertices: 20_000 });
    expect(character.meta.clothing as string[]).toContain('cone hat');
    const errors = await rigJointErrors(character);
    // measured 11.2 / 11.1 % (elbows) and 13.5 / 13.3 % (hands), the network's; before, 54.4 and 54.2 % at the hands;
    // since the network looks again at a body the view shows small, 2.7 / 2.6 and 4.9 / 4.6 % (skeleton-small-body)
    for (const name of ['LeftForeArm', 'RightForeArm', 'LeftHand', 'RightHand']) expect(errors[SCORED_JOINTS.indexOf(name as never)], name).toBeLessThan(0.2);
  }, 60_000);

  it('is told, on one side, by the rules\' upper-arm joint well over the network\'s Head', () => {
    const L = 'learned' as const, G = 'geometric' as const;
    const points = { Head: [0, 0.2] } as Record<string, [number, number]>;
    const sources = { Head: L, LeftArm: L };
    expect(rulesArmOverNetworkHead({ LeftArm: [0.2, 0.2 + ARM_OVER_HEAD + 0.01] }, points, sources, 'Left', 1)).toBe(true);
    // a raised arm's upper-arm joint may stand a little over the Head
    expect(rulesArmOverNetworkHead({ LeftArm: [0.2, 0.2 + ARM_OVER_HEAD - 0.01] }, points, sources, 'Left', 1)).toBe(false);
    // the margin is the body's height's share
    expect(rulesArmOverNetworkHead({ LeftArm: [0.2, 0.2 + ARM_OVER_HEAD + 0.01] }, points, sources, 'Left', 1.2)).toBe(false);
    // the network unsure of its Head or of that upper-arm joint: nothing to set against the rules
    expect(rulesArmOverNetworkHead({ LeftArm: [0.2, 0.5] }, points, { Head: G, LeftArm: L }, 'Left', 1)).toBe(false);
    expect(rulesArmOverNetworkHead({ LeftArm: [0.2, 0.5] }, points, { Head: L, LeftArm: G }, 'Left', 1)).toBe(false);
    expect(rulesArmOverNetworkHead({ LeftArm: [0.2, 0.5] }, points, sources, 'Right', 1)).toBe(false);
  });

  // With its arms posed apart, 17 000 051's rules traced both arms down the hair from upper-arm joints 0.245 of the
  // height over the network's Head: their elbows and wrists stood 10–26 % off. The network's, unsure (0.13–0.28), stand
  // in; both arms' depths are still read through the hair behind them (not mended)
  it('puts procedural humanoid 17 000 051\'s elbows and wrists, arms posed apart, on its arms in the front view', async () => {
    const character = generateProceduralHumanoid(17_000_051, { targetVertices: 20_000, asymmetricArms: true });
    const height = character.meta.heightMetres as number;
    const rig = await rigCharacterAsync(character.parts);
    const forward = rig.frame.forward;
    for (const name of ['LeftForeArm', 'LeftHand', 'RightForeArm', 'RightHand']) {
      const k = MIXAMO_JOINTS.indexOf(name as never);
      const d = rig.skeleton.joints.find((j) => j.name === `mixamorig:${name}`)!.head.map((x, i) => x - character.joints[3 * k + i]);
      const along = d[0] * forward[0] + d[1] * forward[1] + d[2] * forward[2];
      // the error across the front view: measured 5.0, 3.0, 2.7 and 9.3 % (the right wrist, the network's, unsure);
      // before, 19.8, 9.5, 8.2 and 25.8 %
      expect(Math.sqrt(Math.max(0, d[0] ** 2 + d[1] ** 2 + d[2] ** 2 - along ** 2)) / height, name).toBeLessThan(0.11);
    }
  }, 60_000);
});
