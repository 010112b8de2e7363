import { describe, it, expect, beforeAll } from 'vitest';
import { existsSync } from 'node:fs';
import { loadCharacter } from '../sidecar/io/character.js';
import type { Character, CharacterRig } from '../sidecar/io/character.js';
import {
  mapRigToTemplate,
  mergeWeightsToTemplate,
  readJointName,
  spreadSpine,
  templateSkeleton,
  TemplateMappingError,
} from '../sidecar/eval/templateMapping.js';
import type { TemplateMapping } from '../sidecar/eval/templateMapping.js';
import { MIXAMO_JOINTS, MIXAMO_PARENTS } from '../sidecar/skeleton/mixamoTemplate.js';
import type { Vec3 } from '../sidecar/types.js';

const DATA = '../shared/data/characters/';
const haveData = existsSync(`${DATA}mixamo_ely.glb`);

/** Template joint → the artist's joint name; template joints left out are the ones the rig lacks. */
type Table = Partial<Record<(typeof MIXAMO_JOINTS)[number], string>>;

const limbs = (side: 'Left' | 'Right', names: [string, string, string, string, string, string, string, string]): Table => {
  const roles = ['Shoulder', 'Arm', 'ForeArm', 'Hand', 'UpLeg', 'Leg', 'Foot', 'ToeBase'];
  return Object.fromEntries(roles.flatMap((r, i) => (names[i] ? [[side + r, names[i]]] : []))) as Table;
};

const EXPECTED: Record<string, { method: 'names' | 'positions'; joints: Table }> = {
  mixamo_ely: {
    method: 'names',
    joints: Object.fromEntries(MIXAMO_JOINTS.map((t) => [t, `mixamorig:${t}`])) as Table,
  },
  mrfixit: {
    method: 'names',
    joints: {
      // Hips → Spine1 → Spine2 → Neck: two spine bones become Spine and Spine2; no clavicles.
      Hips: 'Hips', Spine: 'Spine1', Spine2: 'Spine2', Neck: 'Neck', Head: 'Head',
      ...limbs('Left', ['', 'UpperArm.L', 'LowerArm.L', 'Hand.L', 'Thigh.L', 'Shin.L', 'UpperFoot.L', 'LowerFoot.L']),
      ...limbs('Right', ['', 'UpperArm.R', 'LowerArm.R', 'Hand.R', 'Thigh.R', 'Shin.R', 'UpperFoot.R', 'LowerFoot.R']),
    },
  },
  bcn_epileptic: {
    method: 'names',
    joints: {
      // B_Root_Pelvis_T (at the hips, a pelvis helper) is left out of the spine; B_Spine3 is nearest half the chain's length.
      Hips: 'B_Root_Pelvis_L', Spine: 'B_Spine1', Spine1: 'B_Spine3', Spine2: 'B_Spine4',
      // No head bone: the face hangs from B_Neck, which moves the whole head.
      Neck: 'B_Root_Neck_T', Head: 'B_Neck',
      ...limbs('Left', ['B_Clavicle_Left', 'B_UpperArm_Left', 'B_ForeArm_Left', 'B_Hand_Left', 'B_Hip_Left', 'B_Knee_Left', 'B_Ankle_Left', 'B_Toe_Left']),
      ...limbs('Right', ['B_Clavicle_Right', 'B_UpperArm_Right', 'B_ForeArm_Right', 'B_Hand_Right', 'B_Hip_Right', 'B_Knee_Right', 'B_Ankle_Right', 'B_Toe_Right']),
    },
  },
  redeclipse_male: {
    method: 'names',
    joints: {
      Hips: 'hips', Spine: 'spine', Spine2: 'ribs', Neck: 'neck', Head: 'head',
      ...limbs('Left', ['shoulder.L', 'upper_arm.L.01', 'forearm.L.01', 'hand.L', 'thigh.L.01', 'shin.L.01', 'foot.L', 'toe.L']),
      ...limbs('Right', ['shoulder.R', 'upper_arm.R.01', 'forearm.R.01', 'hand.R', 'thigh.R.01', 'shin.R.01', 'foot.R', 'toe.R']),
    },
  },
  clonk: {
    method: 'names',
    joints: {
      // No hips bone: skeleton_body (head at the pelvis, carrying arms and head) is the one spine bone; legs are roots.
      Spine: 'skeleton_body', Head: 'skeleton_head',
      ...limbs('Left', ['', 'skeleton_arm_upper.L', 'skeleton_arm_lower.L', 'skeleton_arm_hand.L', 'skeleton_leg_upper.L', 'skeleton_leg_lower.L', 'skeleton_foot_ball.L', 'skeleton_foot_tip.L']),
      ...limbs('Right', ['', 'skeleton_arm_upper.R', 'skeleton_arm_lower.R', 'skeleton_arm_hand.R', 'skeleton_leg_upper.R', 'skeleton_leg_lower.R', 'skeleton_foot_ball.R', 'skeleton_foot_tip.R']),
    },
  },
  clonk_farmer: {
    method: 'names',
    joints: {
      Hips: 'skeleton_hips', Spine: 'skeleton_body', Neck: 'skeleton_neck', Head: 'skeleton_head',
      ...limbs('Left', ['', 'skeleton_arm_upper.L', 'skeleton_arm_lower.L', 'skeleton_arm_hand.L', 'skeleton_leg_upper.L', 'skeleton_leg_lower.L', 'skeleton_foot_ball.L', 'skeleton_foot_tip.L']),
      ...limbs('Right', ['', 'skeleton_arm_upper.R', 'skeleton_arm_lower.R', 'skeleton_arm_hand.R', 'skeleton_leg_upper.R', 'skeleton_leg_lower.R', 'skeleton_foot_ball.R', 'skeleton_foot_tip.R']),
    },
  },
  '0ad_male_tunic': {
    method: 'names',
    joints: {
      Hips: 'hip', Spine: 'spine', Spine1: 'spine1', Spine2: 'chest', Neck: 'neck', Head: 'head',
      // leg_L is the shin (thigh_L exists); knee_L/elbow_L are root-level IK helpers and map to nothing.
      ...limbs('Left', ['shoulder_L', 'arm_L', 'forearm_L', 'hand_L', 'thigh_L', 'leg_L', 'foot_L', '']),
      ...limbs('Right', ['shoulder_R', 'arm_R', 'forearm_R', 'hand_R', 'thigh_R', 'leg_R', 'foot_R', '']),
    },
  },
  cesium_man: {
    method: 'positions',
    joints: {
      Hips: 'joint_0', Spine: 'joint_1', Spine2: 'joint_2', Neck: 'joint_3', Head: 'joint_4',
      // +Y is the character's left (Z up, facing +X); three-joint arms are Arm, ForeArm, Hand.
      ...limbs('Left', ['', 'joint_5', 'joint_7', 'joint_9', 'joint_11', 'joint_13', 'joint_15', 'joint_17']),
      ...limbs('Right', ['', 'joint_6', 'joint_8', 'joint_10', 'joint_12', 'joint_14', 'joint_16', 'joint_18']),
    },
  },
  robot_expressive: {
    method: 'names',
    joints: {
      Hips: 'Hips', Spine: 'Abdomen', Spine2: 'Torso', Neck: 'Neck', Head: 'Head',
      // No hand bone: the palms start at the wrist, Palm2 (the middle one, first in the file) stands for the hand.
      // Foot.L hangs from the root (IK) but is the only foot.
      ...limbs('Left', ['Shoulder.L', 'UpperArm.L', 'LowerArm.L', 'Palm2.L', 'UpperLeg.L', 'LowerLeg.L', 'Foot.L', '']),
      ...limbs('Right', ['Shoulder.R', 'UpperArm.R', 'LowerArm.R', 'Palm2.R', 'UpperLeg.R', 'LowerLeg.R', 'Foot.R', '']),
    },
  },
  minetest_character: {
    method: 'names',
    joints: {
      // One bone per limb: Arm_Left is the arm, Leg_Left (no thigh on that side) the upper leg; Body is the one spine bone.
      Spine: 'Body', Head: 'Head', LeftArm: 'Arm_Left', RightArm: 'Arm_Right', LeftUpLeg: 'Leg_Left', RightUpLeg: 'Leg_Right',
    },
  },
};

function mappedNames(rig: CharacterRig, mapping: TemplateMapping): Table {
  return Object.fromEntries(MIXAMO_JOINTS.flatMap((t, i) => (mapping.jointOf[i] >= 0 ? [[t, rig.joints[mapping.jointOf[i]].name]] : []))) as Table;
}

const jointIndex = (rig: CharacterRig, name: string) => {
  const j = rig.joints.findIndex((x) => x.name === name);
  if (j < 0) throw new Error(`no joint ${name}`);
  return j;
};
const templateName = (t: number) => MIXAMO_JOINTS[t];

describe.skipIf(!haveData)('mapRigToTemplate on the dev characters', () => {
  const characters = new Map<string, Character>();
  beforeAll(async () => {
    for (const name of Object.keys(EXPECTED)) characters.set(name, await loadCharacter(`${DATA}${name}.glb`));
  }, 60_000);

  for (const [name, expected] of Object.entries(EXPECTED)) {
    it(`${name}: every template joint as expected (${expected.method})`, () => {
      const character = characters.get(name)!;
      const mapping = mapRigToTemplate(character.rig!, character.parts);
      expect(mapping.method).toBe(expected.method);
      expect(mappedNames(character.rig!, mapping)).toEqual(expected.joints);
      expect(mapping.mergeInto.length).toBe(character.rig!.joints.length);
      // Every rig joint's weight goes to a mapped joint that deforms.
      for (const t of mapping.mergeInto) {
        expect(mapping.jointOf[t]).toBeGreaterThanOrEqual(0);
        expect(templateName(t)).not.toBe('HeadTop_End');
      }
    });

    it(`${name}: merged weights are 4 influences on the template skeleton, rows summing to 1`, () => {
      const character = characters.get(name)!;
      const mapping = mapRigToTemplate(character.rig!, character.parts);
      const template = templateSkeleton(character.rig!, mapping, character.parts);
      const weights = mergeWeightsToTemplate(character, mapping, template);
      expect(weights.length).toBe(character.parts.length);
      weights.forEach((w, p) => {
        const nv = character.parts[p].positions.length / 3;
        expect(w.influences).toBe(4);
        expect(w.indices.length).toBe(nv * 4);
        let worst = 0;
        for (let v = 0; v < nv; v++) {
          let sum = 0;
          for (let k = 0; k < 4; k++) {
            sum += w.weights[v * 4 + k];
            expect(w.indices[v * 4 + k]).toBeLessThan(template.skeleton.joints.length);
          }
          worst = Math.max(worst, Math.abs(sum - 1));
        }
        expect(worst).toBeLessThan(1e-5);
      });
    });
  }

  it('mrfixit: the fingers and the hand weights on the IK helper HandGoal.L (under the spine) go to LeftHand, not the spine', () => {
    const character = characters.get('mrfixit')!;
    const rig = character.rig!;
    const mapping = mapRigToTemplate(rig, character.parts);
    const leftHandT = MIXAMO_JOINTS.indexOf('LeftHand');
    const rightHandT = MIXAMO_JOINTS.indexOf('RightHand');
    expect(mapping.mergeInto[jointIndex(rig, 'HandGoal.L')]).toBe(leftHandT);
    expect(mapping.mergeInto[jointIndex(rig, 'Finger2.L.001')]).toBe(leftHandT);
    expect(mapping.mergeInto[jointIndex(rig, 'Finger.R.003')]).toBe(rightHandT);
    // A pelvis-side helper joins Hips, not the thigh.
    expect(templateName(mapping.mergeInto[jointIndex(rig, 'Hip.L')])).toBe('Hips');

    const template = templateSkeleton(rig, mapping, character.parts);
    const weights = mergeWeightsToTemplate(character, mapping, template);
    const leftHandSlot = template.templateIndex.indexOf(leftHandT);
    const rightHandSlot = template.templateIndex.indexOf(rightHandT);
    const handJoint = (j: number) => /^(Finger|HandGoal)/.test(rig.joints[j].name);
    let checked = 0;
    character.parts.forEach((part, p) => {
      const skin = rig.skins[p]!;
      for (let v = 0; v < part.positions.length / 3; v++) {
        let onHand = 0;
        let side: 'L' | 'R' = 'L';
        for (let k = 0; k < 4; k++) {
          const j = skin.indices[v * 4 + k];
          if (handJoint(j) && skin.weights[v * 4 + k] > 0) {
            onHand += skin.weights[v * 4 + k];
            side = rig.joints[j].name.includes('.R') ? 'R' : 'L';
          }
        }
        if (onHand < 0.5) continue;
        const slot = side === 'L' ? leftHandSlot : rightHandSlot;
        let merged = 0;
        for (let k = 0; k < 4; k++) if (weights[p].indices[v * 4 + k] === slot) merged += weights[p].weights[v * 4 + k];
        expect(merged).toBeGreaterThanOrEqual(onHand - 1e-5);
        checked++;
      }
    });
    expect(checked).toBeGreaterThan(100);
  });

  it('helpers, props and face bones join the joint they move with', () => {
    const at = (name: string, joint: string) => {
      const c = characters.get(name)!;
      const m = mapRigToTemplate(c.rig!, c.parts);
      return templateName(m.mergeInto[jointIndex(c.rig!, joint)]);
    };
    expect(at('0ad_male_tunic', 'quiver_L')).toBe('Hips');
    expect(at('0ad_male_tunic', 'shield')).toBe('LeftHand');
    expect(at('0ad_male_tunic', 'helmet')).toBe('Head');
    expect(at('0ad_male_tunic', 'cape2')).toBe('Spine2');
    expect(at('bcn_epileptic', 'B_Jaw')).toBe('Head');
    expect(at('bcn_epileptic', 'B_Root_Pelvis_T')).toBe('Hips');
    expect(at('bcn_epileptic', 'B_Spine2')).toBe('Spine');
    expect(at('redeclipse_male', 'forearm.L.02')).toBe('LeftForeArm');
    expect(at('redeclipse_male', 'finger_index.03.R')).toBe('RightHand');
    // Body sits above Hips in the tree and carries the torso: its weight joins Hips.
    expect(at('robot_expressive', 'Body')).toBe('Hips');
    expect(at('robot_expressive', 'Palm1.L')).toBe('LeftHand');
    expect(at('mixamo_ely', 'mixamorig:LeftHandPinky2')).toBe('LeftHand');
    expect(at('mixamo_ely', 'mixamorig:HeadTop_End')).toBe('Head');
  });

  it('templateSkeleton: mixamorig names, parents from the template, artist heads, HeadTop_End only when mapped', () => {
    const mrfixit = characters.get('mrfixit')!;
    const m = mapRigToTemplate(mrfixit.rig!, mrfixit.parts);
    const { skeleton, templateIndex } = templateSkeleton(mrfixit.rig!, m, mrfixit.parts);
    expect(skeleton.joints.map((j) => j.name)).toEqual(templateIndex.map((t) => `mixamorig:${MIXAMO_JOINTS[t]}`));
    expect(templateIndex).not.toContain(MIXAMO_JOINTS.indexOf('HeadTop_End'));
    const byName = (n: string) => skeleton.joints.findIndex((j) => j.name === `mixamorig:${n}`);
    // No clavicle and no Spine1: LeftArm hangs from Spine2, Spine2 from Spine.
    expect(skeleton.joints[byName('LeftArm')].parent).toBe(byName('Spine2'));
    expect(skeleton.joints[byName('Spine2')].parent).toBe(byName('Spine'));
    expect(skeleton.joints[byName('Spine')].tail).toEqual(mrfixit.rig!.joints[jointIndex(mrfixit.rig!, 'Spine2')].position);
    skeleton.joints.forEach((j, s) => {
      expect(j.head).toEqual(mrfixit.rig!.joints[m.jointOf[templateIndex[s]]].position);
      expect(j.parent).toBeLessThan(s);
      expect(Math.hypot(j.tail[0] - j.head[0], j.tail[1] - j.head[1], j.tail[2] - j.head[2])).toBeGreaterThan(1e-3);
    });

    const ely = characters.get('mixamo_ely')!;
    const elySkeleton = templateSkeleton(ely.rig!, mapRigToTemplate(ely.rig!, ely.parts), ely.parts);
    expect(elySkeleton.skeleton.joints.length).toBe(23);
    expect(elySkeleton.skeleton.joints.map((j) => j.parent)).toEqual(
      MIXAMO_JOINTS.map((t) => (MIXAMO_PARENTS[t] ? MIXAMO_JOINTS.indexOf(MIXAMO_PARENTS[t]!) : -1)),
    );

    // clonk has no Hips: its legs are roots of their own.
    const clonk = characters.get('clonk')!;
    const clonkSkeleton = templateSkeleton(clonk.rig!, mapRigToTemplate(clonk.rig!, clonk.parts), clonk.parts).skeleton;
    expect(clonkSkeleton.joints.filter((j) => j.parent < 0).map((j) => j.name).sort()).toEqual(
      ['mixamorig:LeftUpLeg', 'mixamorig:RightUpLeg', 'mixamorig:Spine'],
    );
  });

  it('a one-bone limb ends where its vertices end (minetest: the arm hangs down to the hand)', () => {
    const c = characters.get('minetest_character')!;
    const { skeleton } = templateSkeleton(c.rig!, mapRigToTemplate(c.rig!, c.parts), c.parts);
    const arm = skeleton.joints.find((j) => j.name === 'mixamorig:LeftArm')!;
    const leg = skeleton.joints.find((j) => j.name === 'mixamorig:LeftUpLeg')!;
    expect(arm.tail[1]).toBeLessThan(arm.head[1] - 3);
    expect(leg.tail[1]).toBeLessThan(leg.head[1] - 5);
  });

  it('names that put the left side on the character\'s right are refused (0ad with _L and _R swapped)', () => {
    const c = characters.get('0ad_male_tunic')!;
    const swapped: CharacterRig = {
      ...c.rig!,
      joints: c.rig!.joints.map((j) => ({ ...j, name: j.name.replace(/_L$/, '_X').replace(/_R$/, '_L').replace(/_X$/, '_R') })),
    };
    expect(() => mapRigToTemplate(swapped, c.parts)).toThrow(TemplateMappingError);
    expect(() => mapRigToTemplate(swapped, c.parts)).toThrow(/character's left/);
  });

  it('an unnamed rig that is no humanoid (a 3-joint chain) is refused, not guessed', () => {
    const c = characters.get('cesium_man')!;
    const chain: CharacterRig = {
      joints: [
        { name: 'joint_0', parent: -1, position: [0, 0, 0.2] },
        { name: 'joint_1', parent: 0, position: [0, 0, 0.7] },
        { name: 'joint_2', parent: 1, position: [0, 0, 1.2] },
      ],
      skins: [{ indices: new Uint16Array(c.parts[0].positions.length / 3 * 4), weights: new Float32Array(c.parts[0].positions.length / 3 * 4).map((_, i) => (i % 4 === 0 ? 1 : 0)) }],
    };
    expect(() => mapRigToTemplate(chain, c.parts)).toThrow(TemplateMappingError);
    expect(() => mapRigToTemplate(chain, c.parts)).toThrow(/chain ends/);
  });
});

/** A rig from [name, parent name, position] rows (parents first); no mesh, so names alone decide. */
function syntheticRig(rows: [string, string | null, Vec3][]): CharacterRig {
  const index = new Map(rows.map(([n], i) => [n, i]));
  return { joints: rows.map(([name, parent, position]) => ({ name, parent: parent ? index.get(parent)! : -1, position })), skins: [] };
}

/**
 * A T-posed humanoid, +X its left, named by `name(role, side)`; spine: the spine bones' names between hips and neck.
 * Extra rows (helpers) can be appended.
 */
function namedHumanoid(name: (role: string, side: 'Left' | 'Right' | null) => string, spine: string[], extra: [string, string | null, Vec3][] = []): CharacterRig {
  const rows: [string, string | null, Vec3][] = [[name('Hips', null), null, [0, 1, 0]]];
  let top = name('Hips', null);
  spine.forEach((s, i) => {
    rows.push([s, top, [0, 1.1 + (0.3 * i) / spine.length, 0]]);
    top = s;
  });
  rows.push([name('Neck', null), top, [0, 1.45, 0]], [name('Head', null), name('Neck', null), [0, 1.55, 0]]);
  for (const side of ['Left', 'Right'] as const) {
    const x = side === 'Left' ? 1 : -1;
    rows.push(
      [name('Shoulder', side), top, [0.05 * x, 1.4, 0]],
      [name('Arm', side), name('Shoulder', side), [0.15 * x, 1.4, 0]],
      [name('ForeArm', side), name('Arm', side), [0.4 * x, 1.4, 0]],
      [name('Hand', side), name('ForeArm', side), [0.65 * x, 1.4, 0]],
      [name('UpLeg', side), name('Hips', null), [0.1 * x, 0.95, 0]],
      [name('Leg', side), name('UpLeg', side), [0.1 * x, 0.5, 0]],
      [name('Foot', side), name('Leg', side), [0.1 * x, 0.1, 0]],
      [name('ToeBase', side), name('Foot', side), [0.1 * x, 0, 0.1]],
    );
  }
  return syntheticRig([...rows, ...extra]);
}

describe('name variants (synthetic rigs)', () => {
  const expectAll = (rig: CharacterRig, table: Table) => {
    const m = mapRigToTemplate(rig, []);
    expect(m.method).toBe('names');
    expect(mappedNames(rig, m)).toEqual(table);
    return m;
  };
  const fullTable = (name: (role: string, side: 'Left' | 'Right' | null) => string, spine: Table): Table => {
    const table: Table = { Hips: name('Hips', null), ...spine, Neck: name('Neck', null), Head: name('Head', null) };
    for (const side of ['Left', 'Right'] as const) {
      for (const role of ['Shoulder', 'Arm', 'ForeArm', 'Hand', 'UpLeg', 'Leg', 'Foot', 'ToeBase']) {
        (table as Record<string, string>)[side + role] = name(role, side);
      }
    }
    return table;
  };

  it('Mixamo names with and without mixamorig:, and with a numbered namespace', () => {
    for (const prefix of ['mixamorig:', '', 'mixamorig7:']) {
      const name = (role: string, side: string | null) => `${prefix}${side ?? ''}${role}`;
      const rig = namedHumanoid(name, [`${prefix}Spine`, `${prefix}Spine1`, `${prefix}Spine2`]);
      expectAll(rig, fullTable(name, { Spine: `${prefix}Spine`, Spine1: `${prefix}Spine1`, Spine2: `${prefix}Spine2` }));
    }
  });

  it('VRM humanoid names', () => {
    const vrm: Record<string, string> = {
      Hips: 'hips', Neck: 'neck', Head: 'head', Shoulder: 'Shoulder', Arm: 'UpperArm', ForeArm: 'LowerArm', Hand: 'Hand',
      UpLeg: 'UpperLeg', Leg: 'LowerLeg', Foot: 'Foot', ToeBase: 'Toes',
    };
    const name = (role: string, side: 'Left' | 'Right' | null) => (side ? side.toLowerCase() + vrm[role] : vrm[role]);
    const rig = namedHumanoid(name, ['spine', 'chest', 'upperChest']);
    expectAll(rig, fullTable(name, { Spine: 'spine', Spine1: 'chest', Spine2: 'upperChest' }));
  });

  it('Unreal names, with twist bones, fingers and IK bones merged where they belong', () => {
    const ue: Record<string, string> = {
      Hips: 'pelvis', Neck: 'neck_01', Head: 'head', Shoulder: 'clavicle', Arm: 'upperarm', ForeArm: 'lowerarm', Hand: 'hand',
      UpLeg: 'thigh', Leg: 'calf', Foot: 'foot', ToeBase: 'ball',
    };
    const name = (role: string, side: 'Left' | 'Right' | null) => (side ? `${ue[role]}_${side === 'Left' ? 'l' : 'r'}` : ue[role]);
    const spine = ['spine_01', 'spine_02', 'spine_03', 'spine_04', 'spine_05'];
    const rig = namedHumanoid(name, spine, [
      ['upperarm_twist_01_l', 'upperarm_l', [0.25, 1.4, 0]],
      ['index_01_l', 'hand_l', [0.72, 1.4, 0]],
      ['thigh_twist_01_r', 'thigh_r', [-0.1, 0.7, 0]],
      ['ik_foot_root', null, [0, 0, 0]],
      ['ik_foot_l', 'ik_foot_root', [0.1, 0.1, 0]],
    ]);
    const m = expectAll(rig, fullTable(name, { Spine: 'spine_01', Spine1: 'spine_03', Spine2: 'spine_05' }));
    const into = (joint: string) => templateName(m.mergeInto[jointIndex(rig, joint)]);
    expect(into('upperarm_twist_01_l')).toBe('LeftArm');
    expect(into('index_01_l')).toBe('LeftHand');
    expect(into('thigh_twist_01_r')).toBe('RightUpLeg');
    expect(into('ik_foot_l')).toBe('LeftFoot');
    expect(into('spine_02')).toBe('Spine');
    expect(into('spine_04')).toBe('Spine1');
  });

  it('left_arm style and Arm_L style', () => {
    const words: Record<string, string> = {
      Hips: 'hips', Neck: 'neck', Head: 'head', Shoulder: 'shoulder', Arm: 'arm', ForeArm: 'forearm', Hand: 'hand',
      UpLeg: 'thigh', Leg: 'shin', Foot: 'foot', ToeBase: 'toe',
    };
    const leftUnderscore = (role: string, side: 'Left' | 'Right' | null) => (side ? `${side.toLowerCase()}_${words[role]}` : words[role]);
    expectAll(namedHumanoid(leftUnderscore, ['spine', 'chest']), fullTable(leftUnderscore, { Spine: 'spine', Spine2: 'chest' }));

    const capital: Record<string, string> = {
      Hips: 'Hips', Neck: 'Neck', Head: 'Head', Shoulder: 'Shoulder', Arm: 'Arm', ForeArm: 'ForeArm', Hand: 'Hand',
      UpLeg: 'UpLeg', Leg: 'Leg', Foot: 'Foot', ToeBase: 'ToeBase',
    };
    const suffixed = (role: string, side: 'Left' | 'Right' | null) => (side ? `${capital[role]}_${side[0]}` : capital[role]);
    expectAll(namedHumanoid(suffixed, ['Spine']), fullTable(suffixed, { Spine: 'Spine' }));

    // Blender's .L with upper_arm/thigh/shin, and _Left with UpperArm/calf.
    const blender: Record<string, string> = { ...words, Arm: 'upper_arm', Shoulder: 'shoulder' };
    const dotted = (role: string, side: 'Left' | 'Right' | null) => (side ? `${blender[role]}.${side[0]}` : blender[role]);
    expectAll(namedHumanoid(dotted, ['spine', 'spine.001', 'spine.002']), fullTable(dotted, { Spine: 'spine', Spine1: 'spine.001', Spine2: 'spine.002' }));
    const unreal: Record<string, string> = { ...words, Arm: 'UpperArm', Leg: 'calf' };
    const leftSuffix = (role: string, side: 'Left' | 'Right' | null) => (side ? `${unreal[role]}_${side}` : unreal[role]);
    expectAll(namedHumanoid(leftSuffix, ['spine']), fullTable(leftSuffix, { Spine: 'spine' }));
  });

  it('a named rig without legs is refused with the reason', () => {
    const rig = syntheticRig([
      ['Hips', null, [0, 1, 0]], ['Spine', 'Hips', [0, 1.2, 0]], ['Neck', 'Spine', [0, 1.45, 0]], ['Head', 'Neck', [0, 1.55, 0]],
      ['LeftArm', 'Spine', [0.15, 1.4, 0]], ['RightArm', 'Spine', [-0.15, 1.4, 0]],
    ]);
    expect(() => mapRigToTemplate(rig, [])).toThrow(TemplateMappingError);
    expect(() => mapRigToTemplate(rig, [])).toThrow(/LeftUpLeg, RightUpLeg/);
  });

  it('an unnamed rig without a mesh cannot be fitted', () => {
    const rig = syntheticRig([['Bone', null, [0, 0, 0]], ['Bone.001', 'Bone', [0, 1, 0]], ['Bone.002', 'Bone.001', [0, 2, 0]]]);
    expect(() => mapRigToTemplate(rig, [])).toThrow(TemplateMappingError);
  });
});

describe('readJointName and spreadSpine', () => {
  it('reads sides and words from the usual spellings', () => {
    expect(readJointName('mixamorig:LeftUpLeg')).toEqual({ side: 'Left', words: ['up', 'leg'] });
    expect(readJointName('B_UpperArm_Left')).toEqual({ side: 'Left', words: ['upper', 'arm'] });
    expect(readJointName('thigh.R.01')).toEqual({ side: 'Right', words: ['thigh'] });
    expect(readJointName('left_forearm')).toEqual({ side: 'Left', words: ['forearm'] });
    expect(readJointName('ArmIK.L')).toEqual({ side: 'Left', words: ['arm', 'ik'] });
    expect(readJointName('skeleton_foot_tip.R')).toEqual({ side: 'Right', words: ['foot', 'tip'] });
    expect(readJointName('B_Root_Neck_T')).toEqual({ side: null, words: ['neck'] });
    expect(readJointName('joint_7')).toEqual({ side: null, words: [] });
  });

  it('spreads 1, 2 and 4 spine bones over Spine/Spine1/Spine2', () => {
    const rig = syntheticRig([
      ['a', null, [0, 0, 0]], ['b', 'a', [0, 1, 0]], ['c', 'b', [0, 1.9, 0]], ['d', 'c', [0, 3, 0]],
    ]);
    expect(spreadSpine([], rig)).toEqual([-1, -1, -1]);
    expect(spreadSpine([0], rig)).toEqual([0, -1, -1]);
    expect(spreadSpine([0, 1], rig)).toEqual([0, -1, 1]);
    // half of the length 3 is 1.5: c (at 1.9) is nearer than b (at 1).
    expect(spreadSpine([0, 1, 2, 3], rig)).toEqual([0, 2, 3]);
  });
});
