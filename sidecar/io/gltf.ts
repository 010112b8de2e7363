/**
 * glTF 2.0 reader (.glb and .gltf) for Node, on three's GLTFLoader.
 *
 * The character comes out in its BIND pose, not in the file's default node pose: for several real files the nodes are
 * posed (or the armature is rotated) after binding. glTF defines skinned vertices as
 *   v' = Σ w_j · world(joint_j) · IBM_j · v,
 * so in the bind pose (world(joint_j) = IBM_j⁻¹) a skinned vertex sits at its stored position v (three's bindMatrix,
 * identity for glTF, is applied for completeness) and joint j's head is the translation of IBM_j⁻¹.
 * Rigid meshes parented under a joint are carried from the node pose into the bind pose with that joint.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Bone, BufferGeometry, Mesh, Object3D, SkinnedMesh } from 'three';
import { Matrix3, Matrix4, Vector3 } from 'three';
import { AutoRigError } from '../errors.js';
import { MESH_LIMITS, type MeshLimits } from '../mesh/mergeParts.js';
import type { Vec3 } from '../types.js';
import {
  INFLUENCES,
  uniquePartNames,
  type Character,
  type CharacterPart,
  type CharacterRig,
  type PartSkin,
  type RigJoint,
} from './character.js';
import { align4, isGlb, readGlb, writeGlb } from './glbContainer.js';
import { captureLooks, isLookExtension } from './gltfLooks.js';

/** loadCharacter (any supported file: .glb, .gltf, .obj) lives in character.ts; re-exported for glTF callers. */
export { loadCharacter } from './character.js';

export interface GltfReadOptions {
  /** file name for error messages */
  source?: string;
  /** folder that relative buffer URIs of a .gltf resolve against */
  resourceDir?: string;
  /** size limits (default: the protocol's): a file over them is refused with TOO_LARGE before its buffers are decoded */
  limits?: MeshLimits;
}

/** loadGltf: read a .glb or .gltf file from disk. */
export async function loadGltf(path: string): Promise<Character> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new AutoRigError('BAD_REQUEST', `${path}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return parseGltf(bytes, { source: path });
}

/**
 * parseGltf: the bytes of a .glb or a .gltf (JSON text) → parts in the bind pose + the file's rig when it has a skin.
 * Textures and materials are kept aside (Character.looks, gltfLooks.ts: the .glb writers carry them over) and dropped
 * before three sees the file: rigging needs none of them, and decoding images would need a browser. A file whose meshes hold more vertices or triangles than the limits allow is refused (TOO_LARGE)
 * from its JSON alone, before any buffer is copied or decoded.
 */
export async function parseGltf(bytes: Uint8Array, options: GltfReadOptions = {}): Promise<Character> {
  const source = options.source ?? 'gltf';
  const resourceDir = options.resourceDir ?? (options.source ? dirname(resolve(options.source)) : process.cwd());
  const { json, bin } = isGlb(bytes) ? readGlb(bytes, source) : { json: parseGltfJson(bytes, source), bin: undefined };
  checkGltfSize(json, options.limits ?? MESH_LIMITS, source);
  const merged = await mergeBuffers(json, bin, resourceDir, source);
  const looks = await captureLooks(json, merged, resourceDir);
  stripMaterials(json);
  refuseUnsupportedCompression(json, source);
  const gltf = await runGltfLoader(writeGlb(json, merged), json, source);
  const scene: Object3D | undefined = gltf.scene ?? gltf.scenes?.[0];
  if (!scene) throw new AutoRigError('EMPTY_MESH', `${source}: the file has no scene`);
  scene.updateMatrixWorld(true);
  const character = extractCharacter(scene, json, gltf.parser.associations);
  if (!looks) {
    for (const part of character.parts) delete part.material;
    return character;
  }
  return { ...character, looks };
}

function parseGltfJson(bytes: Uint8Array, source: string): Record<string, any> {
  try {
    const json = JSON.parse(new TextDecoder().decode(bytes));
    if (json && typeof json === 'object' && json.asset) return json;
  } catch {
    // fall through to the error below
  }
  throw new AutoRigError('BAD_REQUEST', `${source}: neither a .glb nor a glTF JSON document`);
}

/**
 * The vertices and triangles the file's triangle meshes will load as, counted from the JSON (accessor counts of every
 * node's mesh primitives; points and lines are skipped, as the reader skips them), held to the limits.
 * Entries that are malformed count as nothing here: the loader reports them.
 */
export function checkGltfSize(json: Record<string, any>, limits: MeshLimits, source: string): void {
  const countOf = (accessor: unknown): number => {
    const count = typeof accessor === 'number' ? json.accessors?.[accessor]?.count : undefined;
    return typeof count === 'number' && Number.isFinite(count) && count > 0 ? count : 0;
  };
  let vertices = 0, triangles = 0;
  for (const node of Array.isArray(json.nodes) ? json.nodes : []) {
    const primitives = typeof node?.mesh === 'number' ? json.meshes?.[node.mesh]?.primitives : undefined;
    if (!Array.isArray(primitives)) continue;
    for (const primitive of primitives) {
      const mode = primitive?.mode ?? 4;
      if (mode !== 4 && mode !== 5 && mode !== 6) continue;
      const positions = countOf(primitive?.attributes?.POSITION);
      const corners = primitive?.indices !== undefined ? countOf(primitive.indices) : positions;
      vertices += positions;
      triangles += mode === 4 ? Math.floor(corners / 3) : Math.max(0, corners - 2);
    }
  }
  if (vertices > limits.maxVerticesTotal) {
    throw new AutoRigError('TOO_LARGE', `${source}: the meshes hold ${vertices} vertices; the limit is ${limits.maxVerticesTotal} (decimate them first)`);
  }
  if (triangles > limits.maxTrianglesTotal) {
    throw new AutoRigError('TOO_LARGE', `${source}: the meshes hold ${triangles} triangles; the limit is ${limits.maxTrianglesTotal} (decimate them first)`);
  }
}

/**
 * Gather every buffer (GLB BIN chunk, data: URIs, external files) into one BIN chunk and point the buffer views at it,
 * so that three never has to fetch anything (Node's fetch cannot read files).
 */
async function mergeBuffers(
  json: Record<string, any>,
  bin: Uint8Array | undefined,
  resourceDir: string,
  source: string,
): Promise<Uint8Array> {
  const buffers: any[] = json.buffers ?? [];
  const contents: Uint8Array[] = [];
  for (let i = 0; i < buffers.length; i++) {
    const uri: string | undefined = buffers[i].uri;
    if (uri === undefined) {
      if (!bin) throw new AutoRigError('BAD_REQUEST', `${source}: buffer ${i} has no uri and there is no BIN chunk`);
      contents.push(bin);
    } else if (uri.startsWith('data:')) {
      const comma = uri.indexOf(',');
      contents.push(new Uint8Array(Buffer.from(uri.slice(comma + 1), 'base64')));
    } else {
      const path = resolve(resourceDir, decodeURIComponent(uri));
      try {
        contents.push(await readFile(path));
      } catch {
        throw new AutoRigError('BAD_REQUEST', `${source}: cannot read external buffer "${uri}" (looked at ${path})`);
      }
    }
  }
  const starts: number[] = [];
  let total = 0;
  for (const c of contents) {
    starts.push(total);
    total += align4(c.byteLength);
  }
  const merged = new Uint8Array(total);
  contents.forEach((c, i) => merged.set(c, starts[i]));
  for (const view of json.bufferViews ?? []) {
    const buffer = view.buffer ?? 0;
    if (buffer < 0 || buffer >= contents.length) throw new AutoRigError('BAD_INDEX', `${source}: buffer view points at missing buffer ${buffer}`);
    view.byteOffset = (view.byteOffset ?? 0) + starts[buffer];
    view.buffer = 0;
  }
  json.buffers = contents.length > 0 ? [{ byteLength: total }] : [];
  return merged;
}

/** Replace materials by bare named ones and drop images/textures: nothing to decode, nothing to fetch. */
function stripMaterials(json: Record<string, any>): void {
  if (Array.isArray(json.materials)) json.materials = json.materials.map((m: any) => (m?.name ? { name: m.name } : {}));
  delete json.images;
  delete json.textures;
  delete json.samplers;
  for (const key of ['extensionsUsed', 'extensionsRequired']) {
    if (Array.isArray(json[key])) json[key] = json[key].filter((name: string) => !isLookExtension(name));
  }
}

function refuseUnsupportedCompression(json: Record<string, any>, source: string): void {
  const used: string[] = [...(json.extensionsUsed ?? []), ...(json.extensionsRequired ?? [])];
  if (used.includes('KHR_draco_mesh_compression')) {
    throw new AutoRigError('BAD_REQUEST', `${source}: Draco-compressed meshes are not supported; export the glTF without compression`);
  }
}

/** Node lacks the browser globals three's loader touches on some paths; provide the minimum (see PLATFORM-NOTES). */
function installBrowserShims(): void {
  const g = globalThis as any;
  if (g.self === undefined) g.self = globalThis;
  if (g.createImageBitmap === undefined) {
    g.createImageBitmap = async () => ({ width: 1, height: 1, close() {} });
  }
}

async function runGltfLoader(glb: Uint8Array, json: Record<string, any>, source: string): Promise<any> {
  installBrowserShims();
  const { GLTFLoader } = await import('three/examples/jsm/loaders/GLTFLoader.js');
  const loader = new GLTFLoader();
  if ((json.extensionsUsed ?? []).includes('EXT_meshopt_compression')) {
    const { MeshoptDecoder } = await import('three/examples/jsm/libs/meshopt_decoder.module.js');
    loader.setMeshoptDecoder(MeshoptDecoder);
  }
  const data = glb.buffer.slice(glb.byteOffset, glb.byteOffset + glb.byteLength) as ArrayBuffer;
  try {
    return await loader.parseAsync(data, '');
  } catch (err) {
    if (err instanceof AutoRigError) throw err;
    throw new AutoRigError('BAD_REQUEST', `${source}: the glTF does not load (${(err as Error)?.message ?? String(err)})`);
  }
}

/** The glTF indices three's loader associates with an object (node, mesh, primitive). */
type Association = { nodes?: number; meshes?: number; primitives?: number; materials?: number };

/** Walk the loaded scene: joints from the skins, one part per triangle primitive, skins per part. */
function extractCharacter(scene: Object3D, json: Record<string, any>, associations: Map<Object3D, Association>): Character {
  const jointTable = collectJoints(scene, json, associations);
  const meshes: Mesh[] = [];
  scene.traverse((object) => {
    const mesh = object as Mesh;
    if (mesh.isMesh && (mesh as any).isInstancedMesh !== true && isTriangleMesh(mesh)) meshes.push(mesh);
  });
  const names = uniquePartNames(meshes.map((mesh) => partName(mesh, json, associations)), 'mesh');
  const parts: CharacterPart[] = [];
  const skins: (PartSkin | null)[] = [];
  meshes.forEach((mesh, i) => {
    const skinned = (mesh as SkinnedMesh).isSkinnedMesh === true;
    const holder = skinned ? undefined : rigidHolder(mesh, jointTable);
    const toBind = skinned
      ? (mesh as SkinnedMesh).bindMatrix.clone()
      : holder
        ? jointTable.bindWorld[holder.index].clone().multiply(holder.bone.matrixWorld.clone().invert()).multiply(mesh.matrixWorld)
        : mesh.matrixWorld.clone();
    const part = partGeometry(mesh.geometry, names[i], toBind);
    // the materials three made keep their file index (stripMaterials keeps the list's order)
    const material = Array.isArray(mesh.material) ? undefined : associations.get(mesh.material as unknown as Object3D)?.materials;
    if (material !== undefined) part.material = material;
    parts.push(part);
    skins.push(skinned ? skinOfMesh(mesh as SkinnedMesh, jointTable) : holder ? rigidSkin(mesh.geometry, holder.index) : null);
  });
  const rig: CharacterRig | undefined = jointTable.joints.length > 0 ? { joints: jointTable.joints, skins } : undefined;
  return rig ? { parts, rig } : { parts };
}

function isTriangleMesh(mesh: Mesh): boolean {
  const geometry = mesh.geometry as BufferGeometry | undefined;
  return !!geometry && !!geometry.getAttribute('position') && (mesh as any).isLine !== true && (mesh as any).isPoints !== true;
}

/** A part is named after its glTF node (the object a user sees), else its mesh; primitives of one mesh get `.N`. */
function partName(mesh: Mesh, json: Record<string, any>, associations: Map<Object3D, Association>): string {
  // A one-primitive mesh is its node's object; the primitives of a multi-primitive mesh hang under a group for the node.
  const node = associations.get(mesh)?.nodes ?? (mesh.parent ? associations.get(mesh.parent)?.nodes : undefined);
  const nodeName: string | undefined = node !== undefined ? json.nodes?.[node]?.name : undefined;
  const own = associations.get(mesh);
  const meshDef = own?.meshes !== undefined ? json.meshes?.[own.meshes] : undefined;
  const base = nodeName || meshDef?.name || mesh.name || 'mesh';
  const primitives = meshDef?.primitives?.length ?? 1;
  return primitives > 1 && own?.primitives !== undefined ? `${base}.${own.primitives}` : base;
}

interface JointTable {
  joints: RigJoint[];
  /** bind-pose world matrix per joint */
  bindWorld: Matrix4[];
  indexOf: Map<Object3D, number>;
}

/**
 * Every joint of every skin with its bind-pose head (translation of the inverse of its inverse bind matrix) and its
 * parent (nearest ancestor node that is a joint). Order: the skins' own joint order when parents already precede
 * children in it (so a file written by glbWriter reads back in the same order), else depth first through the scene.
 * Names come from the glTF JSON: three's loader strips `:` and `.` from node names, and `mixamorig:Hips` must stay.
 */
function collectJoints(scene: Object3D, json: Record<string, any>, associations: Map<Object3D, Association>): JointTable {
  const inverseBind = new Map<Object3D, Matrix4>();
  scene.traverse((object) => {
    const mesh = object as SkinnedMesh;
    if (!mesh.isSkinnedMesh || !mesh.skeleton) return;
    mesh.skeleton.bones.forEach((bone, j) => {
      if (bone && !inverseBind.has(bone)) inverseBind.set(bone, mesh.skeleton.boneInverses[j]);
    });
  });
  const parentOf = new Map<Object3D, Object3D | null>();
  for (const bone of inverseBind.keys()) {
    let o = bone.parent;
    while (o && !inverseBind.has(o)) o = o.parent;
    parentOf.set(bone, o);
  }
  let order = [...inverseBind.keys()];
  const position = new Map(order.map((bone, i) => [bone, i]));
  if (order.some((bone, i) => (parentOf.get(bone) ? position.get(parentOf.get(bone)!)! > i : false))) {
    order = [];
    scene.traverse((object) => {
      if (inverseBind.has(object)) order.push(object);
    });
  }
  const indexOf = new Map(order.map((bone, i) => [bone as Object3D, i]));
  const bindWorld = order.map((bone) => inverseBind.get(bone)!.clone().invert());
  const joints: RigJoint[] = order.map((bone, i) => {
    const head = new Vector3().setFromMatrixPosition(bindWorld[i]);
    const node = associations.get(bone)?.nodes;
    const name: string = (node !== undefined ? json.nodes?.[node]?.name : undefined) || bone.name || `joint_${i}`;
    const parent = parentOf.get(bone);
    return { name, parent: parent ? indexOf.get(parent)! : -1, position: [head.x, head.y, head.z] };
  });
  return { joints, bindWorld, indexOf };
}

/** The nearest ancestor of a rigid mesh that is a skin joint: the mesh moves with it. */
function rigidHolder(mesh: Mesh, table: JointTable): { bone: Object3D; index: number } | undefined {
  for (let o = mesh.parent; o; o = o.parent) {
    const index = table.indexOf.get(o);
    if (index !== undefined) return { bone: o, index };
  }
  return undefined;
}

/** Positions (and normals, uvs) of one primitive, carried into bind space by `toBind`; triangles as stored. */
function partGeometry(geometry: BufferGeometry, name: string, toBind: Matrix4): CharacterPart {
  const position = geometry.getAttribute('position');
  const count = position.count;
  const positions = new Float32Array(count * 3);
  const v = new Vector3();
  for (let i = 0; i < count; i++) {
    v.fromBufferAttribute(position, i).applyMatrix4(toBind);
    positions[i * 3] = v.x;
    positions[i * 3 + 1] = v.y;
    positions[i * 3 + 2] = v.z;
  }
  const index = geometry.getIndex();
  const triangleCount = Math.floor((index ? index.count : count) / 3);
  const triangles = new Uint32Array(triangleCount * 3);
  for (let i = 0; i < triangleCount * 3; i++) triangles[i] = index ? index.getX(i) : i;
  const part: CharacterPart = { name, positions, triangles };
  const normal = geometry.getAttribute('normal');
  if (normal && normal.count === count) {
    const normalMatrix = new Matrix3().getNormalMatrix(toBind);
    const normals = new Float32Array(count * 3);
    for (let i = 0; i < count; i++) {
      v.fromBufferAttribute(normal, i).applyMatrix3(normalMatrix).normalize();
      normals[i * 3] = v.x;
      normals[i * 3 + 1] = v.y;
      normals[i * 3 + 2] = v.z;
    }
    part.normals = normals;
  }
  const uv = geometry.getAttribute('uv');
  if (uv && uv.count === count) {
    const uvs = new Float32Array(count * 2);
    for (let i = 0; i < count; i++) {
      uvs[i * 2] = uv.getX(i);
      uvs[i * 2 + 1] = uv.getY(i);
    }
    part.uvs = uvs;
  }
  return part;
}

/** JOINTS_0/WEIGHTS_0 of a skinned primitive, re-indexed into the joint table and normalised per vertex. */
function skinOfMesh(mesh: SkinnedMesh, table: JointTable): PartSkin {
  const skinIndex = mesh.geometry.getAttribute('skinIndex');
  const skinWeight = mesh.geometry.getAttribute('skinWeight');
  const count = mesh.geometry.getAttribute('position').count;
  const bones: (Bone | undefined)[] = mesh.skeleton.bones;
  const indices = new Uint16Array(count * INFLUENCES);
  const weights = new Float32Array(count * INFLUENCES);
  for (let i = 0; i < count; i++) {
    let sum = 0;
    for (let k = 0; k < INFLUENCES; k++) {
      const bone = bones[skinIndex.getComponent(i, k)];
      const joint = bone ? table.indexOf.get(bone) : undefined;
      const w = joint === undefined ? 0 : Math.max(0, skinWeight.getComponent(i, k));
      indices[i * INFLUENCES + k] = joint ?? 0;
      weights[i * INFLUENCES + k] = w;
      sum += w;
    }
    if (sum > 0) for (let k = 0; k < INFLUENCES; k++) weights[i * INFLUENCES + k] /= sum;
  }
  return { indices, weights };
}

/** A rigid attachment: every vertex fully on one joint. */
function rigidSkin(geometry: BufferGeometry, joint: number): PartSkin {
  const count = geometry.getAttribute('position').count;
  const indices = new Uint16Array(count * INFLUENCES);
  const weights = new Float32Array(count * INFLUENCES);
  for (let i = 0; i < count; i++) {
    indices[i * INFLUENCES] = joint;
    weights[i * INFLUENCES] = 1;
  }
  return { indices, weights };
}

/** Axis-aligned bounds of a set of points: positions #V*3 → [min, max]. */
export function boundsOf(positions: Float32Array): [Vec3, Vec3] {
  const min: Vec3 = [Infinity, Infinity, Infinity];
  const max: Vec3 = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < positions.length; i += 3) {
    for (let a = 0; a < 3; a++) {
      const x = positions[i + a];
      if (x < min[a]) min[a] = x;
      if (x > max[a]) max[a] = x;
    }
  }
  return [min, max];
}
