import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadCharacter } from '../sidecar/io/character.js';
import { MIXAMO_JOINTS } from '../sidecar/skeleton/mixamoTemplate.js';
import { rigCharacter, skinCharacter } from '../sidecar/pipeline.js';
import type { RigResult, Vec3 } from '../sidecar/types.js';

const DATA = '../shared/data/characters';

/**
 * What we know of each dev character independently of our pipeline: its true up axis, and the artist's left and right
 * hand joints. minetest_character is a stack of boxes that is the same seen from the front and from the back; only its
 * texture says where it faces, so its sides cannot be told from geometry and are not asserted. robot_expressive's
 * joints all sit within 0.03 of the origin in its bind space (its rigid parts hang under bones, weights baked), so they
 * say nothing about its hands; its mesh stands along +Z in that space.
 */
const TRUTH: Record<string, { up: Vec3; leftHand?: string; rightHand?: string }> = {
  '0ad_male_tunic.glb': { up: [0, 1, 0], leftHand: 'hand_L', rightHand: 'hand_R' },
  'bcn_epileptic.glb': { up: [0, 1, 0], leftHand: 'B_Hand_Left', rightHand: 'B_Hand_Right' },
  'cesium_man.glb': { up: [0, 0, 1] },
  'clonk.glb': { up: [0, 1, 0], leftHand: 'skeleton_arm_hand.L', rightHand: 'skeleton_arm_hand.R' },
  'clonk_farmer.glb': { up: [0, 1, 0], leftHand: 'skeleton_arm_hand.L', rightHand: 'skeleton_arm_hand.R' },
  'minetest_character.glb': { up: [0, 1, 0] },
  'mixamo_ely.glb': { up: [0, 1, 0], leftHand: 'mixamorig:LeftHand', rightHand: 'mixamorig:RightHand' },
  'mrfixit.glb': { up: [0, 1, 0], leftHand: 'Hand.L', rightHand: 'Hand.R' },
  'redeclipse_male.glb': { up: [0, 1, 0], leftHand: 'hand.L', rightHand: 'hand.R' },
  'robot_expressive.glb': { up: [0, 0, 1] },
};

const dot = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const dist = (a: Vec3, b: Vec3) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

describe('rig pipeline on every dev character, rig stripped', () => {
  const files = existsSync(DATA) ? readdirSync(DATA).filter((f) => f.endsWith('.glb')).sort() : [];
  it('finds the dev characters', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });

  for (const file of files) {
    it(file, async () => {
      const character = await loadCharacter(`${DATA}/${file}`);
      // Strip the rig: only positions and triangles go in.
      const parts = character.parts.map((p) => ({ name: p.name, positions: p.positions, triangles: p.triangles }));
      const result: RigResult = rigCharacter(parts, { prefix: true });
      const joints = result.skeleton.joints;
      const byName = (n: string) => joints.find((j) => j.name === `mixamorig:${n}`)!;
      expect(joints.map((j) => j.name)).toEqual(MIXAMO_JOINTS.map((n) => `mixamorig:${n}`));
      joints.forEach((j, i) => expect(j.parent).toBeLessThan(i));

      const truth = TRUTH[file];
      const up = truth.up;
      expect(dot(result.frame.up, up)).toBeGreaterThan(0.99);
      expect(dot(byName('Head').head, up)).toBeGreaterThan(dot(byName('Hips').head, up));
      const lowest = Math.min(...joints.map((j) => dot(j.head, up)));
      for (const foot of ['LeftToeBase', 'RightToeBase']) expect(dot(byName(foot).head, up) - lowest).toBeLessThan(1e-9);
      for (const foot of ['LeftFoot', 'RightFoot']) {
        for (const j of joints) if (!/Foot|ToeBase/.test(j.name)) expect(dot(byName(foot).head, up)).toBeLessThan(dot(j.head, up));
      }

      if (truth.leftHand && truth.rightHand) {
        const artist = (n: string) => character.rig!.joints.find((j) => j.name === n)!.position;
        const ourLeft = byName('LeftHand').head, ourRight = byName('RightHand').head;
        expect(dist(ourLeft, artist(truth.leftHand))).toBeLessThan(dist(ourLeft, artist(truth.rightHand)));
        expect(dist(ourRight, artist(truth.rightHand))).toBeLessThan(dist(ourRight, artist(truth.leftHand)));
      }

      // Weights: every vertex weighted, rows sum to 1, no leg weighted by the other leg.
      const leftLeg = new Set(['LeftUpLeg', 'LeftLeg', 'LeftFoot', 'LeftToeBase'].map((n) => joints.indexOf(byName(n))));
      const rightLeg = new Set(['RightUpLeg', 'RightLeg', 'RightFoot', 'RightToeBase'].map((n) => joints.indexOf(byName(n))));
      const left = result.frame.left;
      const hipsSide = dot(byName('Hips').head, left);
      const legTop = Math.min(dot(byName('LeftLeg').head, up), dot(byName('RightLeg').head, up));
      const height = Math.max(...joints.map((j) => dot(j.head, up))) - lowest;
      let legVertices = 0;
      result.objects.forEach((o, pi) => {
        const nv = parts[pi].positions.length / 3;
        expect(o.indices.length).toBe(nv * 4);
        for (let v = 0; v < nv; v++) {
          let sum = 0, max = 0;
          for (let s = 0; s < 4; s++) { sum += o.weights[v * 4 + s]; max = Math.max(max, o.weights[v * 4 + s]); }
          expect(Math.abs(sum - 1)).toBeLessThan(1e-5);
          expect(max).toBeGreaterThan(0);
          const p: Vec3 = [parts[pi].positions[3 * v], parts[pi].positions[3 * v + 1], parts[pi].positions[3 * v + 2]];
          const side = dot(p, left) - hipsSide;
          if (dot(p, up) > legTop || Math.abs(side) < 0.02 * height) continue;
          legVertices++;
          const other = side > 0 ? rightLeg : leftLeg;
          for (let s = 0; s < 4; s++) if (o.weights[v * 4 + s] > 0) expect(other.has(o.indices[v * 4 + s])).toBe(false);
        }
      });
      expect(legVertices).toBeGreaterThan(0);
    }, 60_000);
  }
});

describe('skin with a supplied skeleton', () => {
  it('keeps locked groups and renormalises the rest around them', async () => {
    const character = await loadCharacter(`${DATA}/mixamo_ely.glb`);
    const parts = character.parts.map((p) => ({ name: p.name, positions: p.positions, triangles: p.triangles }));
    const rig = rigCharacter(parts, { prefix: true });
    const nv = parts[0].positions.length / 3;
    const lockedWeights = new Float32Array(nv);
    for (let v = 0; v < nv; v += 3) lockedWeights[v] = 0.25;
    const spineName = 'mixamorig:Spine';
    const out = skinCharacter(parts, rig.skeleton, [{ object: 0, bone: spineName, weights: lockedWeights }]);
    const spine = rig.skeleton.joints.findIndex((j) => j.name === spineName);
    const o = out.objects[0];
    for (let v = 0; v < nv; v++) {
      let sum = 0, spineW = 0;
      for (let s = 0; s < 4; s++) { sum += o.weights[v * 4 + s]; if (o.indices[v * 4 + s] === spine && o.weights[v * 4 + s] > 0) spineW += o.weights[v * 4 + s]; }
      expect(Math.abs(sum - 1)).toBeLessThan(1e-5);
      expect(spineW).toBeCloseTo(lockedWeights[v], 6);
    }
  }, 60_000);

  it('moves weights with a moved bone', async () => {
    const character = await loadCharacter(`${DATA}/redeclipse_male.glb`);
    const parts = character.parts.map((p) => ({ name: p.name, positions: p.positions, triangles: p.triangles }));
    const rig = rigCharacter(parts, { prefix: false });
    const before = skinCharacter(parts, rig.skeleton);
    // Slide the left elbow towards the shoulder: more of the arm now belongs to the forearm.
    const joints = rig.skeleton.joints.map((j) => ({ ...j, head: [...j.head] as Vec3, tail: [...j.tail] as Vec3 }));
    const arm = joints.findIndex((j) => j.name === 'LeftArm');
    const fore = joints.findIndex((j) => j.name === 'LeftForeArm');
    const moved: Vec3 = joints[arm].head.map((x, a) => x + 0.4 * (joints[fore].head[a] - x)) as Vec3;
    joints[fore].head = moved;
    joints[arm].tail = moved;
    const after = skinCharacter(parts, { joints });
    const count = (o: { indices: Uint16Array; weights: Float32Array }) => {
      let n = 0;
      for (let v = 0; v < o.indices.length / 4; v++) {
        let best = 0;
        for (let s = 1; s < 4; s++) if (o.weights[v * 4 + s] > o.weights[v * 4 + best]) best = s;
        if (o.indices[v * 4 + best] === fore) n++;
      }
      return n;
    };
    expect(count(after.objects[0])).toBeGreaterThan(count(before.objects[0]) * 1.2);
  }, 60_000);

  it('refuses a skeleton whose parents come after their children', () => {
    const parts = [{ name: 'tri', positions: new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]), triangles: new Uint32Array([0, 1, 2, 0, 2, 3]) }];
    expect(() => skinCharacter(parts, { joints: [{ name: 'a', parent: 1, head: [0, 0, 0], tail: [0, 1, 0], roll: 0 }, { name: 'b', parent: -1, head: [0, 0, 0], tail: [0, 1, 0], roll: 0 }] }))
      .toThrow(/parents must come before/);
  });
});
