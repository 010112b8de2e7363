/**
 * Writes a skinned .glb by hand: one node per joint (identity rotations, translation = head − parent head), one
 * skinned mesh node per part, one skin. The mesh is written exactly as given: same vertices, same order, in the input's
 * space, so the bind pose of the file is the input's pose and every joint sits at its head.
 * Spec: https://registry.khronos.org/glTF/specs/2.0/glTF-2.0.html#skins
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AutoRigError } from '../errors.js';
import type { PartWeights, Skeleton, Vec3 } from '../types.js';
import { INFLUENCES, type CharacterPart } from './character.js';
import { GlbBinaryBuilder, vec3Bounds } from './glbBinary.js';
import { writeGlb } from './glbContainer.js';
import { lookJson, type CharacterLooks, type LookJson } from './gltfLooks.js';

export interface SkinnedGlbInput {
  /** the mesh parts with their optional normals/uvs; each becomes a skinned mesh node named after the part */
  parts: CharacterPart[];
  skeleton: Skeleton;
  /** per part (same order): top-k joint indices and weights; k may differ from 4, it is brought to 4 */
  weights: PartWeights[];
  /** asset.generator */
  generator?: string;
  /** per part (same order), optional: its morph targets (corrective shape keys), in the order they are written */
  morphTargets?: MorphTarget[][];
  /** the input file's materials and textures (Character.looks): written with each part's own material */
  looks?: CharacterLooks;
}

/**
 * One morph target of a part: a displacement per vertex, added to the bind-pose positions at weight 1. Written as the
 * primitive's target POSITION accessor; the name goes to mesh.extras.targetNames (the convention Blender's importer and
 * three.js read) and `extras` to that accessor's extras (glTF targets themselves cannot carry extras).
 */
export interface MorphTarget {
  name: string;
  /** #V*3, the part's vertex count and order */
  displacements: Float32Array;
  extras?: Record<string, unknown>;
}

const ARRAY_BUFFER = 34962;
const ELEMENT_ARRAY_BUFFER = 34963;

/**
 * encodeSkinnedGlb: parts + skeleton + weights → the bytes of a .glb.
 * Throws AutoRigError BAD_REQUEST when the weights do not match the parts, BAD_SKELETON for an unusable skeleton.
 */
export function encodeSkinnedGlb(input: SkinnedGlbInput): Uint8Array {
  const { parts, skeleton, weights } = input;
  checkSkeleton(skeleton);
  if (weights.length !== parts.length) {
    throw new AutoRigError('BAD_REQUEST', `weights for ${weights.length} parts, but there are ${parts.length} parts`);
  }
  const bin = new GlbBinaryBuilder();
  const joints = skeleton.joints;
  const nodes: Record<string, unknown>[] = joints.map((joint) => {
    const parentHead: Vec3 = joint.parent >= 0 ? joints[joint.parent].head : [0, 0, 0];
    const node: Record<string, unknown> = {
      name: joint.name,
      translation: [0, 1, 2].map((a) => joint.head[a] - parentHead[a]),
      // Blender-style bone ends, for tools that want them back; glTF itself has no bone tails.
      extras: { tail: [...joint.tail], roll: joint.roll },
    };
    return node;
  });
  joints.forEach((joint, j) => {
    if (joint.parent >= 0) ((nodes[joint.parent].children ??= []) as number[]).push(j);
  });
  const inverseBind = new Float32Array(joints.length * 16);
  joints.forEach((joint, j) => {
    // world(joint) = translate(head) with identity rotation, so its inverse is translate(−head); column major.
    const m = inverseBind.subarray(j * 16, j * 16 + 16);
    m[0] = m[5] = m[10] = m[15] = 1;
    m[12] = -joint.head[0];
    m[13] = -joint.head[1];
    m[14] = -joint.head[2];
  });
  const inverseBindAccessor = bin.add(inverseBind, 'MAT4');
  const meshes: Record<string, unknown>[] = [];
  const meshNodes: number[] = [];
  const look = partMaterials(input.looks, parts, (bytes) => bin.addBytes(bytes));
  if (input.morphTargets && input.morphTargets.length !== parts.length) {
    throw new AutoRigError('BAD_REQUEST', `morph targets for ${input.morphTargets.length} parts, but there are ${parts.length} parts`);
  }
  parts.forEach((part, p) => {
    const attributes = partAttributes(bin, part, weights[p], joints.length);
    const vertexCount = part.positions.length / 3;
    const indices = vertexCount <= 0xffff ? Uint16Array.from(part.triangles) : Uint32Array.from(part.triangles);
    const indexAccessor = bin.add(indices, 'SCALAR', ELEMENT_ARRAY_BUFFER);
    const primitive: Record<string, unknown> = { attributes, indices: indexAccessor, material: look.materialOf[p], mode: 4 };
    const mesh: Record<string, unknown> = { name: part.name, primitives: [primitive] };
    const targets = input.morphTargets?.[p] ?? [];
    if (targets.length > 0) {
      primitive.targets = targets.map((target) => ({ POSITION: morphTargetAccessor(bin, target, vertexCount, part.name) }));
      mesh.weights = targets.map(() => 0);
      mesh.extras = { targetNames: targets.map((target) => target.name) };
    }
    meshes.push(mesh);
    nodes.push({ name: part.name, mesh: meshes.length - 1, skin: 0 });
    meshNodes.push(nodes.length - 1);
  });
  const roots = joints.flatMap((joint, j) => (joint.parent < 0 ? [j] : []));
  const skin: Record<string, unknown> = { name: 'Armature', inverseBindMatrices: inverseBindAccessor, joints: joints.map((_, j) => j) };
  if (roots.length === 1) skin.skeleton = roots[0];
  const json = {
    asset: { version: '2.0', generator: input.generator ?? 'AutoRig' },
    scene: 0,
    scenes: [{ name: 'Scene', nodes: [...roots, ...meshNodes] }],
    nodes,
    meshes,
    skins: [skin],
    ...look.json,
    accessors: bin.accessors,
    bufferViews: bin.bufferViews,
    buffers: [{ byteLength: 0 }],
  };
  const bytes = bin.bytes();
  json.buffers[0].byteLength = bytes.byteLength;
  return writeGlb(json, bytes);
}

/** The material a part without one of the input's gets: a plain grey. */
const PLAIN_MATERIAL = { name: 'autorig', pbrMetallicRoughness: { baseColorFactor: [0.8, 0.8, 0.8, 1], metallicFactor: 0, roughnessFactor: 0.8 } };

/**
 * The materials of a skinned .glb: the input's look (its images appended through addBytes) with PLAIN_MATERIAL after
 * them for the parts that have none of its materials, or PLAIN_MATERIAL alone. → the JSON arrays and each part's
 * material index.
 */
function partMaterials(looks: CharacterLooks | undefined, parts: CharacterPart[], addBytes: (bytes: Uint8Array) => number): { json: LookJson; materialOf: number[] } {
  const json: LookJson = looks ? lookJson(looks, addBytes) : { materials: [] };
  const own = (part: CharacterPart) => part.material !== undefined && Number.isInteger(part.material) && part.material >= 0 && part.material < json.materials.length;
  const plain = json.materials.length;
  if (parts.some((part) => !own(part))) json.materials.push(PLAIN_MATERIAL);
  return { json, materialOf: parts.map((part) => (own(part) ? part.material! : plain)) };
}

/** writeSkinnedGlb: encode and write to `path`, creating its folder. */
export async function writeSkinnedGlb(path: string, input: SkinnedGlbInput): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, encodeSkinnedGlb(input));
}

function checkSkeleton(skeleton: Skeleton): void {
  const joints = skeleton.joints;
  if (joints.length === 0) throw new AutoRigError('BAD_SKELETON', 'the skeleton has no joints');
  if (joints.length > 0xffff) throw new AutoRigError('BAD_SKELETON', 'too many joints for 16-bit joint indices');
  joints.forEach((joint, j) => {
    if (!Number.isInteger(joint.parent) || joint.parent >= j || joint.parent < -1) {
      throw new AutoRigError('BAD_SKELETON', `joint ${j} (${joint.name}) has parent ${joint.parent}; parents must precede children`);
    }
    if (![...joint.head, ...joint.tail].every(Number.isFinite)) {
      throw new AutoRigError('BAD_NUMBER', `joint ${j} (${joint.name}) has a non-finite head or tail`);
    }
  });
}

/** A morph target's POSITION accessor, with the min/max glTF requires of it and the target's extras. */
function morphTargetAccessor(bin: GlbBinaryBuilder, target: MorphTarget, vertexCount: number, partName: string): number {
  if (target.displacements.length !== vertexCount * 3) {
    throw new AutoRigError('BAD_ARRAY', `morph target '${target.name}' of ${partName} has ${target.displacements.length} numbers; ${vertexCount} vertices need ${vertexCount * 3}`);
  }
  if (!target.displacements.every(Number.isFinite)) throw new AutoRigError('BAD_NUMBER', `morph target '${target.name}' of ${partName} is not finite`);
  const { min, max } = vec3Bounds(target.displacements);
  return bin.add(target.displacements, 'VEC3', ARRAY_BUFFER, { name: target.name, min, max, ...(target.extras ? { extras: target.extras } : {}) });
}

/** POSITION (with the min/max glTF requires), NORMAL and TEXCOORD_0 when given, JOINTS_0/WEIGHTS_0. */
function partAttributes(bin: GlbBinaryBuilder, part: CharacterPart, weights: PartWeights, jointCount: number): Record<string, number> {
  const vertexCount = part.positions.length / 3;
  const { min, max } = vec3Bounds(part.positions);
  const attributes: Record<string, number> = { POSITION: bin.add(part.positions, 'VEC3', ARRAY_BUFFER, { min, max }) };
  if (part.normals && part.normals.length === vertexCount * 3) attributes.NORMAL = bin.add(part.normals, 'VEC3', ARRAY_BUFFER);
  if (part.uvs && part.uvs.length === vertexCount * 2) attributes.TEXCOORD_0 = bin.add(part.uvs, 'VEC2', ARRAY_BUFFER);
  const four = fourInfluences(weights, vertexCount, jointCount, part.name);
  attributes.JOINTS_0 = bin.add(four.indices, 'VEC4', ARRAY_BUFFER);
  attributes.WEIGHTS_0 = bin.add(four.weights, 'VEC4', ARRAY_BUFFER);
  return attributes;
}

/**
 * Bring top-k weights to exactly 4 per vertex: keep the 4 largest, renormalise to 1, zero the unused slots.
 * A vertex no joint moves (all weights 0) goes to joint 0 with weight 1: glTF requires weights that sum to 1.
 */
export function fourInfluences(
  weights: PartWeights,
  vertexCount: number,
  jointCount: number,
  partName = weights.name,
): { indices: Uint16Array; weights: Float32Array } {
  const k = weights.influences;
  if (!(k >= 1) || weights.indices.length !== vertexCount * k || weights.weights.length !== vertexCount * k) {
    throw new AutoRigError('BAD_ARRAY', `weights of part "${partName}": expected ${vertexCount} vertices × ${k} influences`);
  }
  const indices = new Uint16Array(vertexCount * INFLUENCES);
  const out = new Float32Array(vertexCount * INFLUENCES);
  const order = Array.from({ length: k }, (_, i) => i);
  for (let v = 0; v < vertexCount; v++) {
    const row = v * k;
    order.sort((a, b) => weights.weights[row + b] - weights.weights[row + a]);
    let sum = 0;
    for (let s = 0; s < Math.min(k, INFLUENCES); s++) {
      const w = Math.max(0, weights.weights[row + order[s]]);
      const joint = weights.indices[row + order[s]];
      if (w > 0 && joint >= jointCount) {
        throw new AutoRigError('BAD_INDEX', `weights of part "${partName}": joint index ${joint} out of range (${jointCount} joints)`);
      }
      if (w > 0) {
        indices[v * INFLUENCES + s] = joint;
        out[v * INFLUENCES + s] = w;
        sum += w;
      }
    }
    if (sum > 0) for (let s = 0; s < INFLUENCES; s++) out[v * INFLUENCES + s] /= sum;
    else out[v * INFLUENCES] = 1;
  }
  return { indices, weights: out };
}
