/**
 * An artist's skeleton mapped onto our 23-joint Mixamo template, so that `autorig eval` can compare joints and weights
 * one for one: which artist joint is which template joint (by its name, or by a positional fit when the rig has no
 * meaningful names), and where the weight of every other artist joint (fingers, twist bones, helpers, face, props, IK)
 * goes. A rig that cannot be mapped is refused with TemplateMappingError, never guessed.
 */
import { AutoRigError } from '../errors.js';
import { add, distance, dot, scale, sub } from '../geometry/vec3.js';
import type { Character, CharacterRig } from '../io/character.js';
import { findCanonicalFrame } from '../mesh/canonicalFrame.js';
import { mergeParts } from '../mesh/mergeParts.js';
import { MIXAMO_JOINTS, MIXAMO_PARENTS, MIXAMO_PREFIX } from '../skeleton/mixamoTemplate.js';
import type { MixamoJointName } from '../skeleton/mixamoTemplate.js';
import type { Joint, MeshPart, PartWeights, Skeleton, Vec3 } from '../types.js';

export interface TemplateMapping {
  /** how the artist's joints were matched: by their names, or by a positional fit (rigs without meaningful names) */
  method: 'names' | 'positions';
  /** jointOf: Int32Array, #23 (MIXAMO_JOINTS order): index into rig.joints, or -1 when the rig lacks that joint */
  jointOf: Int32Array;
  /** mergeInto: Int32Array, #rig.joints: the template joint index (a mapped, deforming one) whose weight this rig joint's weight joins */
  mergeInto: Int32Array;
}

/** A rig that cannot be mapped onto the template: the message says why. */
export class TemplateMappingError extends AutoRigError {
  constructor(message: string) {
    super('BAD_SKELETON', message);
    this.name = 'TemplateMappingError';
  }
}

const INFLUENCES = 4;
/** A template joint's index in MIXAMO_JOINTS. */
const templateJoint = (name: MixamoJointName): number => MIXAMO_JOINTS.indexOf(name);
const HIPS = templateJoint('Hips'), SPINE = templateJoint('Spine'), SPINE1 = templateJoint('Spine1'), SPINE2 = templateJoint('Spine2');
const NECK = templateJoint('Neck'), HEAD = templateJoint('Head'), HEAD_TOP = templateJoint('HeadTop_End');

type Side = 'Left' | 'Right';
type LimbRole = 'Shoulder' | 'Arm' | 'ForeArm' | 'Hand' | 'UpLeg' | 'Leg' | 'Foot' | 'ToeBase';
const SIDES: Side[] = ['Left', 'Right'];
const ARM_ROLES: LimbRole[] = ['Shoulder', 'Arm', 'ForeArm', 'Hand'];
const LEG_ROLES: LimbRole[] = ['UpLeg', 'Leg', 'Foot', 'ToeBase'];
const limbJoint = (side: Side, role: LimbRole): number => templateJoint(`${side}${role}` as MixamoJointName);

/**
 * A joint name read as words: "mixamorig:LeftUpLeg" → left, [up, leg]; "B_UpperArm_Left" → left, [upper, arm];
 * "thigh.L.01" → left, [thigh]. Namespaces (text before ':'), numbers, single letters that are no side (bcn's B_ prefix,
 * its _T/_H suffixes) and exporter prefixes are dropped.
 */
export interface JointNameReading {
  side: Side | null;
  words: string[];
}

const PREFIX_WORDS = new Set(['mixamorig', 'skeleton', 'def', 'bip', 'root', 'jnt', 'joint', 'bone']);

/** readJointName: name → side and lower-case words (see JointNameReading). */
export function readJointName(name: string): JointNameReading {
  const local = name.slice(name.lastIndexOf(':') + 1);
  const words = local
    .split(/[^A-Za-z0-9]+/)
    .flatMap((piece) => piece.split(/(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])/))
    .map((w) => w.toLowerCase())
    .filter((w) => w !== '' && !/^[0-9]+$/.test(w));
  const sides = new Set<Side>();
  const rest: string[] = [];
  for (const w of words) {
    if (w === 'l' || w === 'left') sides.add('Left');
    else if (w === 'r' || w === 'right') sides.add('Right');
    else if (w.length > 1 && !PREFIX_WORDS.has(w) && !w.startsWith('mixamorig')) rest.push(w);
  }
  return { side: sides.size === 1 ? [...sides][0] : null, words: rest };
}

/**
 * Names of the template joints (Neck and Head are "neck" and "head"), as the words of a name joined ("upper_arm" and "UpperArm" both read "upperarm"),
 * in tiers: a lower tier is taken only when no joint of a higher one exists. Exact matches only, so helpers that add a
 * word ("ArmIK", "HandGoal", "upperarm_twist", "tag_head", "LeftHandThumb1") never match.
 */
const HIPS_NAMES = ['hips', 'pelvis'];
const HEAD_TOP_NAMES = ['headtopend', 'headtop'];
const LIMB_NAMES: Record<LimbRole, string[][]> = {
  Shoulder: [['shoulder', 'clavicle', 'collar', 'collarbone']],
  Arm: [['upperarm', 'armupper', 'uparm'], ['arm']],
  ForeArm: [['forearm', 'lowerarm', 'armlower'], ['elbow']],
  Hand: [['hand', 'armhand'], ['wrist'], ['palm']],
  // A sided "hip" is the thigh in joint-named rigs (bcn: B_Hip_Left → B_Knee_Left); a bare "leg" is the whole leg only
  // when no thigh exists on that side (minetest's Leg_Left), else the shin (Mixamo's LeftLeg, 0ad's leg_L).
  UpLeg: [['upleg', 'upperleg', 'legupper', 'thigh'], ['hip'], ['leg']],
  Leg: [['leg', 'lowerleg', 'leglower', 'shin', 'calf'], ['knee']],
  Foot: [['foot', 'upperfoot', 'football'], ['ankle']],
  ToeBase: [['toebase', 'toe', 'toes', 'ball', 'foottip', 'lowerfoot']],
};

/** Words that make a bone a helper: it is never a spine bone and never matched, only merged. */
const HELPER_WORDS = new Set(['ik', 'fk', 'pole', 'target', 'goal', 'ctrl', 'control', 'twist', 'roll', 'helper', 'null', 'nub', 'end', 'mch', 'org', 'rot']);

/** Below this many template joints found by name, a rig counts as unnamed (cesium_man's joint_0..joint_18) and is fitted by positions. */
const NAMED_MINIMUM = 3;

/** What mapRigToTemplate needs to know about the rig, computed once. */
interface RigFacts {
  rig: CharacterRig;
  readings: JointNameReading[];
  children: number[][];
  depth: number[];
  /** the joint moves at least one vertex */
  weighted: boolean[];
}

function rigFacts(rig: CharacterRig): RigFacts {
  const n = rig.joints.length;
  const children = rig.joints.map(() => [] as number[]);
  const depth = new Array<number>(n).fill(0);
  rig.joints.forEach((joint, j) => {
    if (joint.parent >= j) throw new TemplateMappingError(`joint "${joint.name}" comes before its parent; parents must precede children`);
    if (joint.parent >= 0) {
      children[joint.parent].push(j);
      depth[j] = depth[joint.parent] + 1;
    }
  });
  const weighted = new Array<boolean>(n).fill(false);
  for (const skin of rig.skins) {
    if (!skin) continue;
    for (let i = 0; i < skin.indices.length; i++) if (skin.weights[i] > 0 && skin.indices[i] < n) weighted[skin.indices[i]] = true;
  }
  return { rig, readings: rig.joints.map((j) => readJointName(j.name)), children, depth, weighted };
}

function isDescendant(rig: CharacterRig, joint: number, ancestor: number): boolean {
  for (let a = rig.joints[joint].parent; a >= 0; a = rig.joints[a].parent) if (a === ancestor) return true;
  return false;
}

/**
 * mapRigToTemplate: which artist joint is each template joint, and where every artist joint's weight goes.
 * By names when the rig has them (Mixamo with or without `mixamorig:`, Blender `.L`/`_L`/`Left`, VRM humanoid, Unreal,
 * and the dev characters' own conventions), else by a positional fit over the tree (legs: the two chains ending lowest,
 * arms: the two ending farthest to each side, head: the remaining chain ending highest). The spine bones strictly between
 * Hips and Neck (or Head) spread over Spine/Spine1/Spine2: 1 → Spine; 2 → Spine, Spine2; ≥3 → first, middle (by length
 * along the chain), last.
 * rig: the artist's joints and skins, parts: the bind-pose mesh (for the character's up and left) → TemplateMapping.
 * Throws TemplateMappingError when Head, Hips-or-a-spine-bone, or either side's Arm or UpLeg is missing, when a left
 * joint is not on the character's left of its right counterpart (checked only when the mesh decides the frame), or when
 * an unnamed rig's tree does not read as a humanoid.
 */
export function mapRigToTemplate(rig: CharacterRig, parts: MeshPart[]): TemplateMapping {
  if (rig.joints.length === 0) throw new TemplateMappingError('the rig has no joints');
  const facts = rigFacts(rig);
  const byName = mapByNames(facts);
  const frame = characterFrame(parts);
  let method: TemplateMapping['method'];
  let jointOf: Int32Array;
  if (byName.found >= NAMED_MINIMUM) {
    method = 'names';
    jointOf = byName.jointOf;
    checkRequired(jointOf, 'names');
    if (frame && frame.decided) checkSides(jointOf, rig, frame.left);
  } else {
    if (!frame) throw new TemplateMappingError('the rig has no joint names to go by, and no mesh to fit its joints to');
    method = 'positions';
    jointOf = mapByPositions(facts, frame.up, frame.left);
    checkRequired(jointOf, 'positions');
  }
  return { method, jointOf, mergeInto: mergeTargets(facts, jointOf) };
}

/** The character's up and left from its mesh; decided is false where either fell back to the file convention. */
function characterFrame(parts: MeshPart[]): { up: Vec3; left: Vec3; decided: boolean } | null {
  if (!parts.some((p) => p.triangles.length >= 3)) return null;
  let mesh;
  try {
    mesh = mergeParts(parts);
  } catch {
    return null;
  }
  const cf = findCanonicalFrame(mesh.positions, mesh.triangles);
  return { up: cf.frame.up, left: cf.frame.left, decided: !cf.evidence.upByConvention && !cf.evidence.forwardByConvention };
}

/** The template joints found by names (jointOf #23), and how many were found by a name rather than by the spine's structure. */
function mapByNames(facts: RigFacts): { jointOf: Int32Array; found: number } {
  const jointOf = new Int32Array(MIXAMO_JOINTS.length).fill(-1);
  const used = new Set<number>();
  const take = (t: number, j: number) => {
    if (j < 0) return;
    jointOf[t] = j;
    used.add(j);
  };
  const core = (j: number) => facts.readings[j].words.join('');
  const isHelper = (j: number) => facts.readings[j].words.some((w) => HELPER_WORDS.has(w));

  // Hips: any side (bcn's root is B_Root_Pelvis_L), but a sided "hip" is a thigh or a pelvis-side helper (mrfixit's Hip.L).
  take(HIPS, best(facts, facts.rig.joints.map((_, j) => j).filter((j) => !used.has(j) &&
    (HIPS_NAMES.includes(core(j)) || (core(j) === 'hip' && facts.readings[j].side === null))).map((j) => ({ joint: j, tier: 0 })), -1));

  // Neck and Head. A rig with nested neck bones and no head bone (bcn: B_Root_Neck_T → B_Root_Neck_H → B_Neck, the face
  // hanging from B_Neck, which moves the whole head) has its head in the deepest of them.
  const necks = facts.rig.joints.map((_, j) => j).filter((j) => core(j) === 'neck' && !isHelper(j));
  take(NECK, best(facts, necks.map((j) => ({ joint: j, tier: 0 })), jointOf[HIPS]));
  const heads = facts.rig.joints.map((_, j) => j).filter((j) => core(j) === 'head' && !used.has(j));
  if (heads.length) {
    take(HEAD, best(facts, heads.map((j) => ({ joint: j, tier: 0 })), jointOf[NECK] >= 0 ? jointOf[NECK] : jointOf[HIPS]));
  } else if (jointOf[NECK] >= 0) {
    const deeper = necks.filter((j) => isDescendant(facts.rig, j, jointOf[NECK]));
    if (deeper.length) take(HEAD, deeper.reduce((a, b) => (facts.depth[b] > facts.depth[a] ? b : a)));
  }
  if (jointOf[HEAD] >= 0) {
    const tops = facts.rig.joints.map((_, j) => j)
      .filter((j) => HEAD_TOP_NAMES.includes(core(j)) && isDescendant(facts.rig, j, jointOf[HEAD]));
    take(HEAD_TOP, best(facts, tops.map((j) => ({ joint: j, tier: 0 })), jointOf[HEAD]));
  }

  // Limbs, parents first, each side on its own; a joint under its template parent's joint wins over one elsewhere
  // (0ad's knee_L/elbow_L helpers sit at the root).
  for (const side of SIDES) {
    for (const role of [...ARM_ROLES, ...LEG_ROLES]) {
      const t = limbJoint(side, role);
      const candidates: { joint: number; tier: number }[] = [];
      facts.rig.joints.forEach((_, j) => {
        if (used.has(j) || facts.readings[j].side !== side) return;
        const tier = LIMB_NAMES[role].findIndex((names) => names.includes(core(j)));
        if (tier >= 0) candidates.push({ joint: j, tier });
      });
      take(t, best(facts, candidates, nearestMappedAncestorJoint(jointOf, t)));
    }
  }
  const found = jointOf.reduce((n, j) => n + (j >= 0 ? 1 : 0), 0);

  // The spine: the non-helper bones strictly between Hips and the neck (or the head), parents first.
  const top = jointOf[NECK] >= 0 ? jointOf[NECK] : jointOf[HEAD];
  if (top >= 0) {
    const chain: number[] = [];
    for (let a = facts.rig.joints[top].parent; a >= 0 && a !== jointOf[HIPS]; a = facts.rig.joints[a].parent) {
      const hipsLike = HIPS_NAMES.includes(core(a)) || core(a) === 'hip';
      if (!used.has(a) && !isHelper(a) && !hipsLike) chain.unshift(a);
    }
    spreadSpine(chain, facts.rig).forEach((j, k) => take([SPINE, SPINE1, SPINE2][k], j));
  }
  return { jointOf, found };
}

/**
 * The best of several joints a name matched: lowest tier, then under the joint of the template parent (when known),
 * then one that moves vertices, then nearest the root, then first in the file.
 */
function best(facts: RigFacts, candidates: { joint: number; tier: number }[], under: number): number {
  if (!candidates.length) return -1;
  const key = (c: { joint: number; tier: number }) => [
    c.tier,
    under >= 0 && !isDescendant(facts.rig, c.joint, under) ? 1 : 0,
    facts.weighted[c.joint] ? 0 : 1,
    facts.depth[c.joint],
    c.joint,
  ];
  return candidates.map((c) => ({ c, k: key(c) })).sort((a, b) => {
    for (let i = 0; i < a.k.length; i++) if (a.k[i] !== b.k[i]) return a.k[i] - b.k[i];
    return 0;
  })[0].c.joint;
}

/** The rig joint of template joint t's nearest mapped template ancestor, -1 for none. */
function nearestMappedAncestorJoint(jointOf: Int32Array, t: number): number {
  const a = nearestMappedTemplateAncestor(jointOf, t);
  return a >= 0 ? jointOf[a] : -1;
}

function nearestMappedTemplateAncestor(jointOf: Int32Array, t: number): number {
  for (let p = MIXAMO_PARENTS[MIXAMO_JOINTS[t]]; p; p = MIXAMO_PARENTS[p]) if (jointOf[templateJoint(p)] >= 0) return templateJoint(p);
  return -1;
}

/**
 * spreadSpine: the rig's spine chain (root side first) over [Spine, Spine1, Spine2]: none → all -1; 1 bone → Spine;
 * 2 → Spine, Spine2; ≥3 → first, the one nearest half the chain's length, last. chain: rig joint indices → #3 (-1: lacking).
 */
export function spreadSpine(chain: number[], rig: CharacterRig): [number, number, number] {
  if (chain.length === 0) return [-1, -1, -1];
  if (chain.length === 1) return [chain[0], -1, -1];
  if (chain.length === 2) return [chain[0], -1, chain[1]];
  const along = [0];
  for (let i = 1; i < chain.length; i++) {
    along.push(along[i - 1] + distance(rig.joints[chain[i - 1]].position, rig.joints[chain[i]].position));
  }
  const half = along[along.length - 1] / 2;
  let middle = 1;
  for (let i = 2; i < chain.length - 1; i++) if (Math.abs(along[i] - half) < Math.abs(along[middle] - half)) middle = i;
  return [chain[0], chain[middle], chain[chain.length - 1]];
}

/**
 * mapByPositions: the template joints of an unnamed rig from its tree and bind pose. Only joints that move vertices (or
 * have a descendant that does) take part. Legs: the two chain ends lowest along up, one on each side; Hips: their
 * common ancestor. Arms: of the other ends, the farthest on each side; Spine2: their common ancestor. Head: the highest
 * remaining end under Spine2. Along each chain, roles go by count (a chain stops at its first fork: the hand or foot):
 * arm 1–4 joints → Arm | Arm, ForeArm | Arm, ForeArm, Hand | Shoulder, Arm, ForeArm, Hand; leg 1–4 → UpLeg, Leg, Foot,
 * ToeBase in order; neck+head 1–2 → Head | Neck, Head; spine as spreadSpine. Anything else throws TemplateMappingError.
 * up, left: unit vectors of the character's frame → jointOf: Int32Array #23
 */
function mapByPositions(facts: RigFacts, up: Vec3, left: Vec3): Int32Array {
  const { rig } = facts;
  const n = rig.joints.length;
  const live = facts.weighted.slice();
  for (let j = n - 1; j >= 0; j--) if (live[j] && rig.joints[j].parent >= 0) live[rig.joints[j].parent] = true;
  const liveChildren = facts.children.map((c) => c.filter((k) => live[k]));
  const ends = rig.joints.map((_, j) => j).filter((j) => live[j] && liveChildren[j].length === 0);
  if (ends.length < 5) {
    throw new TemplateMappingError(`the rig has no joint names to go by, and its tree has ${ends.length} chain ends where a humanoid has at least 5 (head, two arms, two legs)`);
  }
  const height = (j: number) => dot(rig.joints[j].position, up);
  const lateral = (j: number) => dot(rig.joints[j].position, left);

  const byHeight = [...ends].sort((a, b) => height(a) - height(b));
  const [footA, footB] = byHeight;
  const hips = commonAncestor(rig, footA, footB);
  if (hips < 0) throw new TemplateMappingError('the two lowest chain ends (the feet) share no ancestor joint');
  if (Math.sign(lateral(footA) - lateral(hips)) === Math.sign(lateral(footB) - lateral(hips))) {
    throw new TemplateMappingError('the two lowest chain ends (the feet) are on the same side of the body');
  }
  // Other ends under the legs (toes of a forked foot) are no arm or head.
  const legRoots = [footA, footB].map((foot) => pathBelow(rig, foot, hips)[0]);
  const rest = ends.filter((j) => isDescendant(rig, j, hips) && !legRoots.some((root) => j === root || isDescendant(rig, j, root)));
  const leftmost = rest.filter((j) => lateral(j) > lateral(hips)).sort((a, b) => lateral(b) - lateral(a))[0];
  const rightmost = rest.filter((j) => lateral(j) < lateral(hips)).sort((a, b) => lateral(a) - lateral(b))[0];
  if (leftmost === undefined || rightmost === undefined) throw new TemplateMappingError('no arm found on each side of the body');
  const chest = commonAncestor(rig, leftmost, rightmost);
  if (chest < 0 || (chest !== hips && !isDescendant(facts.rig, chest, hips))) throw new TemplateMappingError('the arms do not hang from the body that carries the legs');
  const headEnd = rest.filter((j) => j !== leftmost && j !== rightmost && isDescendant(facts.rig, j, chest))
    .filter((j) => !isOnPath(rig, j, leftmost, chest) && !isOnPath(rig, j, rightmost, chest))
    .sort((a, b) => height(b) - height(a))[0];
  if (headEnd === undefined || height(headEnd) <= height(chest)) throw new TemplateMappingError('no head chain rises above the shoulders');
  if (height(hips) >= height(chest) && chest !== hips) throw new TemplateMappingError('the legs hang from above the arms');

  const jointOf = new Int32Array(MIXAMO_JOINTS.length).fill(-1);
  jointOf[HIPS] = hips;
  spreadSpine(pathBelow(rig, chest, hips), rig).forEach((j, k) => (jointOf[[SPINE, SPINE1, SPINE2][k]] = j));
  const legSide = lateral(footA) > lateral(hips) ? { Left: footA, Right: footB } : { Left: footB, Right: footA };
  for (const side of SIDES) {
    const leg = untilFork(pathBelow(rig, legSide[side], hips), liveChildren);
    if (leg.length > 4) throw new TemplateMappingError(`the ${side.toLowerCase()} leg chain has ${leg.length} joints; without names its roles are ambiguous`);
    leg.forEach((j, k) => (jointOf[limbJoint(side, LEG_ROLES[k])] = j));
    const arm = untilFork(pathBelow(rig, side === 'Left' ? leftmost : rightmost, chest), liveChildren);
    if (arm.length > 4) throw new TemplateMappingError(`the ${side.toLowerCase()} arm chain has ${arm.length} joints; without names its roles are ambiguous`);
    const roles = arm.length === 4 ? ARM_ROLES : ARM_ROLES.slice(1, 1 + arm.length);
    arm.forEach((j, k) => (jointOf[limbJoint(side, roles[k])] = j));
  }
  const neckHead = pathBelow(rig, headEnd, chest);
  if (neckHead.length > 2) throw new TemplateMappingError(`the head chain has ${neckHead.length} joints; without names its roles are ambiguous`);
  if (neckHead.length === 2) jointOf[NECK] = neckHead[0];
  jointOf[HEAD] = neckHead[neckHead.length - 1];
  return jointOf;
}

/** The joints from just below `top` down to `end`, root side first (`top` excluded, `end` included; empty when they coincide). */
function pathBelow(rig: CharacterRig, end: number, top: number): number[] {
  const path: number[] = [];
  for (let j = end; j >= 0 && j !== top; j = rig.joints[j].parent) path.unshift(j);
  return path;
}

/** A chain cut after its first joint with several moving children (the hand over its fingers, the foot over its toes). */
function untilFork(chain: number[], liveChildren: number[][]): number[] {
  const fork = chain.findIndex((j) => liveChildren[j].length > 1);
  return fork >= 0 ? chain.slice(0, fork + 1) : chain;
}

function commonAncestor(rig: CharacterRig, a: number, b: number): number {
  const above = new Set<number>();
  for (let j = a; j >= 0; j = rig.joints[j].parent) above.add(j);
  for (let j = b; j >= 0; j = rig.joints[j].parent) if (above.has(j)) return j;
  return -1;
}

/** joint lies on the path from `end` up to (not including) `top`. */
function isOnPath(rig: CharacterRig, joint: number, end: number, top: number): boolean {
  for (let j = end; j >= 0 && j !== top; j = rig.joints[j].parent) if (j === joint) return true;
  return false;
}

/** Refuse a mapping without Head, without Hips and every spine bone, or without either side's Arm or UpLeg. */
function checkRequired(jointOf: Int32Array, method: TemplateMapping['method']): void {
  const missing: string[] = [];
  if (jointOf[HIPS] < 0 && jointOf[SPINE] < 0 && jointOf[SPINE1] < 0 && jointOf[SPINE2] < 0) missing.push('Hips (or a spine bone)');
  if (jointOf[HEAD] < 0) missing.push('Head');
  for (const side of SIDES) for (const role of ['Arm', 'UpLeg'] as LimbRole[]) if (jointOf[limbJoint(side, role)] < 0) missing.push(side + role);
  if (missing.length) {
    throw new TemplateMappingError(`the rig's joints (matched by ${method}) lack ${missing.join(', ')}; the character cannot be compared with the template`);
  }
}

/** Refuse names that put a left joint on the character's right of its right counterpart. left: unit vector. */
function checkSides(jointOf: Int32Array, rig: CharacterRig, left: Vec3): void {
  for (const role of [...ARM_ROLES, ...LEG_ROLES]) {
    const l = jointOf[limbJoint('Left', role)], r = jointOf[limbJoint('Right', role)];
    if (l < 0 || r < 0) continue;
    const across = dot(rig.joints[l].position, left) - dot(rig.joints[r].position, left);
    if (!(across > 0)) {
      throw new TemplateMappingError(`"${rig.joints[l].name}" (Left${role}) is not on the character's left of "${rig.joints[r].name}" (Right${role}); the names and the mesh disagree`);
    }
  }
}

/** Which template limb (its joints, root first) a limb joint belongs to, -1 for the centre joints. */
function limbOf(t: number): { side: Side; roles: LimbRole[] } | null {
  for (const side of SIDES) {
    for (const roles of [ARM_ROLES, LEG_ROLES]) if (roles.some((r) => limbJoint(side, r) === t)) return { side, roles };
  }
  return null;
}

function sameLimb(a: { side: Side; roles: LimbRole[] } | null, b: { side: Side; roles: LimbRole[] } | null): boolean {
  return !!a && !!b && a.side === b.side && a.roles === b.roles;
}

/**
 * The template joint a helper's name points to (a limb keyword and a side): "HandGoal.L", "Finger1.L", "Palm1.L" →
 * LeftHand; "ik_foot_l" → LeftFoot; "ElbowRot.L" → LeftForeArm. A sided "hip" points nowhere: such a bone lies in the
 * pelvis (mrfixit's Hip.L). -1 for none.
 */
function namedLimbJoint(reading: JointNameReading): number {
  if (!reading.side) return -1;
  const has = (...ws: string[]) => ws.some((w) => reading.words.includes(w));
  const role: LimbRole | null =
    has('hand', 'palm', 'finger', 'fingers', 'thumb', 'index', 'middle', 'ring', 'pinky', 'pinkie', 'little', 'digit', 'wrist', 'metacarpal', 'knuckle') ? 'Hand'
    : has('toe', 'toes', 'ball') ? 'ToeBase'
    : has('foot', 'ankle', 'heel') ? 'Foot'
    : has('forearm', 'elbow') || (has('arm') && has('lower', 'fore')) ? 'ForeArm'
    : has('shoulder', 'clavicle', 'collar') ? 'Shoulder'
    : has('upperarm', 'arm') ? 'Arm'
    : has('thigh', 'upleg', 'upperleg') || (has('leg') && has('up', 'upper')) ? 'UpLeg'
    : has('shin', 'calf', 'knee', 'leg', 'lowerleg') ? 'Leg'
    : null;
  return role ? limbJoint(reading.side, role) : -1;
}

/**
 * mergeTargets: for every rig joint, the mapped template joint its weight joins. A mapped joint keeps its own (HeadTop_End,
 * which deforms nothing, passes to Head). Any other joint joins its nearest mapped ancestor, except that a helper whose
 * name names a limb joint on a side joins that joint when its ancestor is off that limb or higher up it (mrfixit's
 * fingers under the spine's HandGoal.L → LeftHand; robot_expressive's Palm1.L under LowerArm.L → LeftHand). A joint with
 * no mapped ancestor joins its mapped descendant highest in the template (robot_expressive's Body above Hips → Hips),
 * else the mapped joint nearest to it.
 * facts: the rig, jointOf: #23 → Int32Array #rig.joints
 */
function mergeTargets(facts: RigFacts, jointOf: Int32Array): Int32Array {
  const { rig } = facts;
  const n = rig.joints.length;
  const templateOf = new Int32Array(n).fill(-1);
  jointOf.forEach((j, t) => j >= 0 && (templateOf[j] = t));
  if (jointOf[HEAD_TOP] >= 0) templateOf[jointOf[HEAD_TOP]] = HEAD;
  /** t when mapped, else its nearest mapped ancestor within the same limb (LeftToeBase → LeftFoot), else -1 */
  const mappedUpLimb = (t: number): number => {
    const limb = limbOf(t);
    for (let a = t; a >= 0; ) {
      if (jointOf[a] >= 0) return a;
      const p = MIXAMO_PARENTS[MIXAMO_JOINTS[a]];
      a = p && sameLimb(limbOf(templateJoint(p)), limb) ? templateJoint(p) : -1;
    }
    return -1;
  };
  const into = new Int32Array(n).fill(-1);
  for (let j = 0; j < n; j++) {
    if (templateOf[j] >= 0) {
      into[j] = templateOf[j];
      continue;
    }
    let ancestor = -1;
    for (let a = rig.joints[j].parent; a >= 0; a = rig.joints[a].parent) {
      if (templateOf[a] >= 0) {
        ancestor = templateOf[a];
        break;
      }
    }
    const named = namedLimbJoint(facts.readings[j]);
    const alias = named >= 0 ? mappedUpLimb(named) : -1;
    if (alias >= 0 && (ancestor < 0 || !sameLimb(limbOf(ancestor), limbOf(alias)) || isTemplateAncestor(ancestor, alias))) {
      into[j] = alias;
    } else if (ancestor >= 0) {
      into[j] = ancestor;
    }
  }
  for (let j = 0; j < n; j++) {
    if (into[j] >= 0) continue;
    let highest = -1;
    for (let d = j + 1; d < n; d++) {
      if (templateOf[d] >= 0 && isDescendant(facts.rig, d, j) && (highest < 0 || templateOf[d] < highest)) highest = templateOf[d];
    }
    into[j] = highest >= 0 ? highest : nearestMappedJoint(rig, jointOf, rig.joints[j].position);
  }
  return into;
}

/** a is a strict template ancestor of t */
function isTemplateAncestor(a: number, t: number): boolean {
  for (let p = MIXAMO_PARENTS[MIXAMO_JOINTS[t]]; p; p = MIXAMO_PARENTS[p]) if (templateJoint(p) === a) return true;
  return false;
}

/** The mapped deforming template joint whose artist joint is nearest to point. */
function nearestMappedJoint(rig: CharacterRig, jointOf: Int32Array, point: Vec3): number {
  let bestT = -1, bestD = Infinity;
  jointOf.forEach((j, t) => {
    if (j < 0 || t === HEAD_TOP) return;
    const d = distance(rig.joints[j].position, point);
    if (d < bestD) [bestT, bestD] = [t, d];
  });
  return bestT;
}

/** Along each template chain, the joint whose head is this joint's tail: the chain's next joint (Hips → Spine, Spine2 → Neck). */
const CHAIN_CHILD: Partial<Record<MixamoJointName, MixamoJointName>> = {
  Hips: 'Spine', Spine: 'Spine1', Spine1: 'Spine2', Spine2: 'Neck', Neck: 'Head', Head: 'HeadTop_End',
  LeftShoulder: 'LeftArm', LeftArm: 'LeftForeArm', LeftForeArm: 'LeftHand',
  RightShoulder: 'RightArm', RightArm: 'RightForeArm', RightForeArm: 'RightHand',
  LeftUpLeg: 'LeftLeg', LeftLeg: 'LeftFoot', LeftFoot: 'LeftToeBase',
  RightUpLeg: 'RightLeg', RightLeg: 'RightFoot', RightFoot: 'RightToeBase',
};

/**
 * templateSkeleton: the mapped joints as a Skeleton in MIXAMO_JOINTS order, named `mixamorig:<Template>`; parent = the
 * nearest mapped template ancestor (-1 for none: a rig without Hips has several roots); head = the artist's joint.
 * Tail = the head of the next mapped joint down the template chain that is not at this head (Spine → Spine1, or Spine2
 * when Spine1 is lacking). A chain's last joint (hand, toe, head, minetest's one-bone limbs) has no such joint; its tail,
 * in this order: with parts, the point on the line from the head through the centroid of the vertices whose merged
 * weight on it is ≥ 0.5, as far along as the farthest of those vertices (fingertips, head top, toe tip); the mean of the
 * weighted artist joints below it that merge into it (fingers, face bones) when that lies ahead along parent → head;
 * the head carried on along parent → head by half that length (like skeletonFromRig); up (+Y) by a tenth of the rig's
 * size. HeadTop_End is included only when mapped. Roll 0.
 * rig, mapping, parts (optional, the bind-pose parts in the order of rig.skins) → skeleton (#mapped joints) and
 * templateIndex (per skeleton joint, its MIXAMO_JOINTS index)
 */
export function templateSkeleton(
  rig: CharacterRig,
  mapping: TemplateMapping,
  parts?: MeshPart[],
): { skeleton: Skeleton; templateIndex: number[] } {
  const { jointOf, mergeInto } = mapping;
  const templateIndex = MIXAMO_JOINTS.map((_, t) => t).filter((t) => jointOf[t] >= 0);
  const slot = new Map(templateIndex.map((t, s) => [t, s]));
  const extent = rigExtent(rig);
  const minimum = Math.max(extent * 1e-4, 1e-9);
  const dominated = parts ? dominatedVertices(rig, parts, mergeInto) : null;
  const weighted = new Array<boolean>(rig.joints.length).fill(false);
  for (const skin of rig.skins) if (skin) skin.indices.forEach((j, i) => skin.weights[i] > 0 && (weighted[j] = true));

  const joints: Joint[] = templateIndex.map((t) => {
    const name = MIXAMO_JOINTS[t];
    const head: Vec3 = [...rig.joints[jointOf[t]].position];
    const parentT = nearestMappedTemplateAncestor(jointOf, t);
    const from = parentT >= 0 ? rig.joints[jointOf[parentT]].position : null;
    const ahead = (p: Vec3) => distance(p, head) > minimum && (!from || distance(from, head) <= minimum || dot(sub(p, head), sub(head, from)) > 0);
    let tail: Vec3 | null = null;
    for (let c = CHAIN_CHILD[name]; c && !tail; c = CHAIN_CHILD[c]) {
      const j = jointOf[templateJoint(c)];
      if (j >= 0 && distance(rig.joints[j].position, head) > minimum) tail = [...rig.joints[j].position];
    }
    if (!tail && dominated) tail = reachThroughCentroid(head, dominated[t], minimum);
    if (!tail) {
      const below = rig.joints.map((_, j) => j)
        .filter((j) => j !== jointOf[t] && weighted[j] && mergeInto[j] === t && isDescendant(rig, j, jointOf[t]));
      if (below.length) {
        const mean = scale(below.reduce((sum, j) => add(sum, rig.joints[j].position), [0, 0, 0] as Vec3), 1 / below.length);
        if (ahead(mean)) tail = mean;
      }
    }
    if (!tail && from && distance(from, head) > minimum) tail = add(head, scale(sub(head, from), 0.5));
    if (!tail) tail = [head[0], head[1] + Math.max(extent * 0.1, minimum * 10), head[2]];
    return { name: MIXAMO_PREFIX + name, parent: parentT >= 0 ? slot.get(parentT)! : -1, head, tail, roll: 0 };
  });
  return { skeleton: { joints }, templateIndex };
}

/**
 * Per template joint, the vertices whose weight merged onto it is at least one half (empty where none).
 * rig: skins per part, parts: positions #V*3 each, mergeInto: #rig.joints → Vec3[][] #23
 */
function dominatedVertices(rig: CharacterRig, parts: MeshPart[], mergeInto: Int32Array): Vec3[][] {
  const out: Vec3[][] = MIXAMO_JOINTS.map(() => []);
  const merged = new Float64Array(MIXAMO_JOINTS.length);
  parts.forEach((part, p) => {
    const skin = rig.skins[p];
    if (!skin) return;
    for (let v = 0; v < part.positions.length / 3; v++) {
      merged.fill(0);
      for (let k = 0; k < INFLUENCES; k++) {
        const t = mergeInto[skin.indices[v * INFLUENCES + k]];
        if (t >= 0) merged[t] += skin.weights[v * INFLUENCES + k];
      }
      const t = merged.findIndex((w) => w >= 0.5);
      if (t >= 0) out[t].push([part.positions[v * 3], part.positions[v * 3 + 1], part.positions[v * 3 + 2]]);
    }
  });
  return out;
}

/** The end of a bone from head through the centroid of points, as far as the farthest point along that line (null when degenerate). */
function reachThroughCentroid(head: Vec3, points: Vec3[], minimum: number): Vec3 | null {
  if (!points.length) return null;
  const c = scale(points.reduce((sum, q) => add(sum, q), [0, 0, 0] as Vec3), 1 / points.length);
  const toward = sub(c, head);
  const length = Math.hypot(...toward);
  if (length <= minimum) return null;
  const direction = scale(toward, 1 / length);
  let reach = 0;
  for (const q of points) reach = Math.max(reach, dot(sub(q, head), direction));
  return add(head, scale(direction, reach));
}

/**
 * mergeWeightsToTemplate: the artist's weights on templateSkeleton's joints. Each artist influence adds to the skeleton
 * joint of its mergeInto target; per vertex the 4 largest sums are kept and renormalised (rows sum to 1, unused slots
 * index 0 weight 0, largest first). A part with no skin, and a vertex whose weights are all zero, get weight 1 on the
 * bone (head–tail segment, HeadTop_End excluded) nearest to the part's centroid, resp. to the vertex: an unskinned part
 * is a rigid prop that its nearest bone carries.
 * character: parts and rig; mapping; templateSkel: templateSkeleton's result → PartWeights[] (one per part, 4 influences)
 */
export function mergeWeightsToTemplate(
  character: Character,
  mapping: TemplateMapping,
  templateSkel: { skeleton: Skeleton; templateIndex: number[] },
): PartWeights[] {
  const rig = character.rig;
  if (!rig) throw new TemplateMappingError('the character has no rig to take weights from');
  const slotOfTemplate = new Int32Array(MIXAMO_JOINTS.length).fill(-1);
  templateSkel.templateIndex.forEach((t, s) => (slotOfTemplate[t] = s));
  const slotOfJoint = Int32Array.from(mapping.mergeInto, (t) => (t >= 0 ? slotOfTemplate[t] : -1));
  const bones = templateSkel.skeleton.joints.map((j, s) => ({ s, head: j.head, tail: j.tail, deform: templateSkel.templateIndex[s] !== HEAD_TOP }))
    .filter((b) => b.deform);
  const nearestBone = (p: Vec3) => bones.reduce((a, b) => (segmentDistance(p, b.head, b.tail) < segmentDistance(p, a.head, a.tail) ? b : a)).s;
  const sums = new Float64Array(templateSkel.skeleton.joints.length);

  return character.parts.map((part, p) => {
    const nv = part.positions.length / 3;
    const indices = new Uint16Array(nv * INFLUENCES);
    const weights = new Float32Array(nv * INFLUENCES);
    const skin = rig.skins[p];
    const rigid = skin ? -1 : nearestBone(centroid(part.positions));
    for (let v = 0; v < nv; v++) {
      const touched: number[] = [];
      if (skin) {
        for (let k = 0; k < INFLUENCES; k++) {
          const w = skin.weights[v * INFLUENCES + k];
          const s = slotOfJoint[skin.indices[v * INFLUENCES + k]];
          if (!(w > 0) || s === undefined || s < 0) continue;
          if (sums[s] === 0) touched.push(s);
          sums[s] += w;
        }
      }
      if (!touched.length) {
        const s = rigid >= 0 ? rigid : nearestBone([part.positions[v * 3], part.positions[v * 3 + 1], part.positions[v * 3 + 2]]);
        touched.push(s);
        sums[s] = 1;
      }
      touched.sort((a, b) => sums[b] - sums[a] || a - b);
      const kept = touched.slice(0, INFLUENCES);
      const total = kept.reduce((t, s) => t + sums[s], 0);
      kept.forEach((s, k) => {
        indices[v * INFLUENCES + k] = s;
        weights[v * INFLUENCES + k] = sums[s] / total;
      });
      for (const s of touched) sums[s] = 0;
    }
    return { name: part.name, influences: INFLUENCES, indices, weights };
  });
}

function centroid(positions: Float32Array): Vec3 {
  const c: Vec3 = [0, 0, 0];
  const nv = positions.length / 3;
  for (let v = 0; v < nv; v++) for (let a = 0; a < 3; a++) c[a] += positions[v * 3 + a] / nv;
  return c;
}

function segmentDistance(p: Vec3, a: Vec3, b: Vec3): number {
  const ab = sub(b, a);
  const len2 = dot(ab, ab);
  const s = len2 > 0 ? Math.min(1, Math.max(0, dot(sub(p, a), ab) / len2)) : 0;
  return distance(p, add(a, scale(ab, s)));
}

function rigExtent(rig: CharacterRig): number {
  let extent = 0;
  for (let a = 0; a < 3; a++) {
    const values = rig.joints.map((j) => j.position[a]);
    extent = Math.max(extent, Math.max(...values) - Math.min(...values));
  }
  return extent;
}
