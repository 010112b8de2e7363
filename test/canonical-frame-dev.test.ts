/**
 * The canonical frame of every dev character, as findCanonicalFrame found it before the frame finder was made robust
 * to capes, coats, props and turned characters (issue 6). The rig eval numbers rest on these frames (and on which cue
 * fell back to the file convention: templateMapping trusts only decided frames), so they must not move.
 * Values recorded from the finder as it was, on the merged parts and on the body triangles the pipeline reads; every
 * one of them is still a frame along the input axes (no turn).
 */
import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCharacter } from '../sidecar/io/character.js';
import { findCanonicalFrame } from '../sidecar/mesh/canonicalFrame.js';
import { bodyTriangles } from '../sidecar/mesh/debris.js';
import { mergeParts } from '../sidecar/mesh/mergeParts.js';

const DATA = resolve(import.meta.dirname, '../../shared/data/characters');

const RECORDED = [
  { file: '0ad_male_tunic.glb', up: [0, 1, 0], forward: [0, 0, -1], left: [-1, 0, 0], upByConvention: false, forwardByConvention: false, center: [0, 2.1363000269047916, 0.00273875892162323], scale: 0.23416308461461013 },
  { file: 'bcn_epileptic.glb', up: [0, 1, 0], forward: [0, 0, 1], left: [1, 0, 0], upByConvention: false, forwardByConvention: false, center: [-0.015987500548362732, -0.11713099479675293, -0.10792399570345879], scale: 0.5511421244423934 },
  // cesium_man's, clonk's and clonk_farmer's forward fell back to the file convention (their feet's centroid 0.001–0.006
  // of the height in front of the shins', under the decision's 0.006); the columns' cue reads the same forward from the
  // geometry (0.0078 each: axisAlignedFrame feetForwardScores), so the frames stay and the rig eval's mapping checks
  // their named sides against them (they pass: the eval is unchanged)
  { file: 'cesium_man.glb', up: [0, 0, 1], forward: [1, 0, 0], left: [0, 1, 0], upByConvention: false, forwardByConvention: false, center: [0.024976998567581177, -8.940696716308594e-08, 0.7532749772071838], scale: 0.6637682322248147 },
  { file: 'clonk.glb', up: [0, 1, 0], forward: [0, 0, 1], left: [1, 0, 0], upByConvention: false, forwardByConvention: false, center: [0, 10.398085486143827, 0.07512497901916504], scale: 0.048270867595660384 },
  { file: 'clonk_farmer.glb', up: [0, 1, 0], forward: [0, 0, 1], left: [1, 0, 0], upByConvention: false, forwardByConvention: false, center: [0, 10.311543867253931, -0.17163002490997314], scale: 0.048487877103510595 },
  { file: 'minetest_character.glb', up: [0, 1, 0], forward: [0, 0, 1], left: [1, 0, 0], upByConvention: true, forwardByConvention: true, center: [0, 8.499999999999961, -4.76837158203125e-07], scale: 0.058823529411764434 },
  { file: 'mixamo_ely.glb', up: [0, 1, 0], forward: [0, 0, 1], left: [1, 0, 0], upByConvention: false, forwardByConvention: false, center: [4.747509956359863e-05, 0.8002039874554612, -0.0005744099617004395], scale: 0.6258197968543615 },
  // mrfixit's up was +Y by convention (upScore 0.05); the robust finder reads the same +Y from the geometry (its hair's
  // sparse top slice is trimmed, upScore 0.2). templateMapping then also checks its named sides against the frame: they
  // pass, so its mapping (and the rig eval) is unchanged.
  { file: 'mrfixit.glb', up: [0, 1, 0], forward: [1, 0, 0], left: [0, 0, -1], upByConvention: false, forwardByConvention: false, center: [0.32051604986190796, 4.032390423119068, 4.76837158203125e-07], scale: 0.09917974787564054 },
  { file: 'redeclipse_male.glb', up: [0, 1, 0], forward: [0, 0, 1], left: [1, 0, 0], upByConvention: false, forwardByConvention: false, center: [0, 8.663953691720963, -0.5338665246963501], scale: 0.05769121942107722 },
  { file: 'robot_expressive.glb', up: [0, 0, 1], forward: [0, -1, 0], left: [1, 0, 0], upByConvention: false, forwardByConvention: false, center: [0, -0.0005883458070456982, -0.0012385565787553787], scale: 15.109052008574324 },
];

describe('the canonical frame of the dev characters', () => {
  it('covers every dev character on disk', () => {
    expect(existsSync(DATA), `dev characters expected in ${DATA}`).toBe(true);
    const onDisk = readdirSync(DATA).filter((f) => f.endsWith('.glb')).sort();
    expect(onDisk).toEqual(RECORDED.map((r) => r.file));
  });

  for (const r of RECORDED) {
    it(`keeps ${r.file} where it was`, async () => {
      const character = await loadCharacter(resolve(DATA, r.file));
      const mesh = mergeParts(character.parts);
      for (const triangles of [mesh.triangles, bodyTriangles(mesh.positions, mesh.triangles)]) {
        const cf = findCanonicalFrame(mesh.positions, triangles);
        expect(cf.frame.up).toEqual(r.up);
        expect(cf.frame.forward).toEqual(r.forward);
        expect(cf.frame.left).toEqual(r.left);
        expect(cf.evidence.upByConvention).toBe(r.upByConvention);
        expect(cf.evidence.forwardByConvention).toBe(r.forwardByConvention);
        expect(cf.evidence.turn ?? null).toBeNull();
        cf.center.forEach((c, a) => expect(c).toBeCloseTo(r.center[a], 9));
        expect(cf.scale / r.scale).toBeCloseTo(1, 12);
      }
    });
  }

  // Turned half a turn about up, a character faces the other way: the frame must say so from the geometry. Before the
  // columns' cue, these three fell back to the file convention and kept facing the same way (left and right swapped);
  // minetest_character, whose front and back are the same boxes, still does.
  for (const file of ['cesium_man.glb', 'clonk.glb', 'clonk_farmer.glb']) {
    it(`reads ${file} turned half a turn about up facing the other way`, async () => {
      const r = RECORDED.find((x) => x.file === file)!;
      const mesh = mergeParts((await loadCharacter(resolve(DATA, file))).parts);
      const upAxis = r.up.findIndex((x) => x !== 0);
      const turned = new Float32Array(mesh.positions);
      for (let i = 0; i < turned.length; i += 3) for (let a = 0; a < 3; a++) if (a !== upAxis) turned[i + a] = -turned[i + a];
      const cf = findCanonicalFrame(turned, bodyTriangles(turned, mesh.triangles));
      expect(cf.frame.up).toEqual(r.up);
      expect(cf.frame.forward).toEqual(r.forward.map((x) => (x === 0 ? 0 : -x)));
      expect(cf.evidence.forwardByConvention).toBe(false);
    });
  }
});
