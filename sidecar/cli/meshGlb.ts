/**
 * A static (unrigged) .glb of mesh parts, as `autorig pose` writes it: one node per part, no transform, each part's
 * vertices exactly as given (count and order), so vertex i of part k in the file is vertex i of part k of the input;
 * with `autorig pose --shape-keys`, each part also holds one morph target per pose (Blender: shape keys).
 * Spec: https://registry.khronos.org/glTF/specs/2.0/glTF-2.0.html#meshes
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { CharacterPart } from '../io/character.js';
import { GlbBinaryBuilder, vec3Bounds } from '../io/glbBinary.js';
import { writeGlb } from '../io/glbContainer.js';
import { lookJson, type CharacterLooks, type LookJson } from '../io/gltfLooks.js';

const FLOAT = 5126;
const ARRAY_BUFFER = 34962;
const ELEMENT_ARRAY_BUFFER = 34963;

/** A shape key of every part: its name and, per part in order, the part's vertices in that shape (#V*3 each). */
export interface ShapeKey {
  name: string;
  positions: Float32Array[];
}

/**
 * encodeMeshGlb: parts (positions #V*3, triangles #T*3, optional normals #V*3 and uvs #V*2) → the bytes of a .glb
 * holding one mesh node per part, named after it. `generator` goes to asset.generator. Each of `keys` becomes a morph
 * target of every part (glTF morph targets hold displacements: the key's positions minus the part's, in float32),
 * named in the mesh's extras.targetNames, where Blender's glTF importer and three.js read the names, at weight 0; a
 * target whose moved vertices are fewer than three quarters of the part's is stored sparse (16 bytes per moved vertex
 * against 12 per vertex). `looks` (the input's materials and textures, Character.looks): written with each part's
 * own material, the images embedded.
 */
export function encodeMeshGlb(parts: CharacterPart[], generator = 'AutoRig', keys: readonly ShapeKey[] = [], looks?: CharacterLooks): Uint8Array {
  const bin = new GlbBinaryBuilder();
  /** Appends `data` as its own buffer view and accessor of `width` components; returns the accessor's index. */
  const add = (data: Float32Array | Uint32Array, width: 1 | 2 | 3, target: number, bounds = false): number =>
    // glTF requires min/max on POSITION accessors
    bin.add(data, width === 1 ? 'SCALAR' : width === 2 ? 'VEC2' : 'VEC3', target, bounds ? vec3Bounds(data as Float32Array) : {});
  for (const key of keys) {
    if (key.positions.length !== parts.length) throw new Error(`encodeMeshGlb: shape key '${key.name}' has ${key.positions.length} parts, the mesh ${parts.length}`);
  }
  // the input's look, its images in the BIN chunk; a part keeps its material (one without gets glTF's default)
  const look: LookJson | undefined = looks ? lookJson(looks, (bytes) => bin.addBytes(bytes)) : undefined;
  const meshes = parts.map((part, k) => {
    const attributes: Record<string, number> = { POSITION: add(part.positions, 3, ARRAY_BUFFER, true) };
    if (part.normals) attributes.NORMAL = add(part.normals, 3, ARRAY_BUFFER);
    if (part.uvs) attributes.TEXCOORD_0 = add(part.uvs, 2, ARRAY_BUFFER);
    const indices = add(part.triangles, 1, ELEMENT_ARRAY_BUFFER);
    const primitive: Record<string, unknown> = { attributes, indices, mode: 4 };
    if (look && part.material !== undefined && part.material >= 0 && part.material < look.materials.length) primitive.material = part.material;
    const mesh: Record<string, unknown> = { name: part.name, primitives: [primitive] };
    if (keys.length > 0) {
      primitive.targets = keys.map((key) => {
        const delta = shapeKeyDelta(part.positions, key.positions[k], key.name);
        const moved = movedVertices(delta);
        const sparse = moved.length * 16 < (delta.length / 3) * 12;
        if (!sparse) return { POSITION: add(delta, 3, ARRAY_BUFFER, true) };
        if (moved.length === 0) {
          // glTF: an accessor with neither a buffer view nor sparse values is all zeros (sparse needs a count ≥ 1)
          bin.accessors.push({ componentType: FLOAT, count: delta.length / 3, type: 'VEC3', min: [0, 0, 0], max: [0, 0, 0] });
          return { POSITION: bin.accessors.length - 1 };
        }
        const values = new Float32Array(moved.length * 3);
        moved.forEach((v, i) => values.set(delta.subarray(3 * v, 3 * v + 3), 3 * i));
        // the unmoved vertices' zeros belong in the bounds too
        return { POSITION: bin.addSparseVec3(delta.length / 3, moved, values, withZero(vec3Bounds(delta))) };
      });
      mesh.weights = keys.map(() => 0);
      mesh.extras = { targetNames: keys.map((key) => key.name) };
    }
    return mesh;
  });
  const bytes = bin.bytes();
  const json = {
    asset: { version: '2.0', generator },
    scene: 0,
    scenes: [{ nodes: parts.map((_, k) => k) }],
    nodes: parts.map((part, k) => ({ name: part.name, mesh: k })),
    meshes,
    ...(look ?? {}),
    accessors: bin.accessors,
    bufferViews: bin.bufferViews,
    buffers: [{ byteLength: bytes.byteLength }],
  };
  return writeGlb(json, bytes);
}

/** The displacement of a shape key's vertices from the part's: Float32Array #V*3 (float32 subtraction). */
function shapeKeyDelta(rest: Float32Array, shaped: Float32Array, name: string): Float32Array {
  if (shaped.length !== rest.length) throw new Error(`encodeMeshGlb: shape key '${name}' has ${shaped.length / 3} vertices where its part has ${rest.length / 3}`);
  const delta = new Float32Array(rest.length);
  for (let i = 0; i < rest.length; i++) delta[i] = shaped[i] - rest[i];
  return delta;
}

/** The vertices whose displacement is not zero, ascending: Uint32Array. */
function movedVertices(delta: Float32Array): Uint32Array {
  const moved: number[] = [];
  for (let v = 0; v < delta.length / 3; v++) if (delta[3 * v] !== 0 || delta[3 * v + 1] !== 0 || delta[3 * v + 2] !== 0) moved.push(v);
  return Uint32Array.from(moved);
}

/** Bounds widened to hold 0 in every component (a sparse accessor's elements default to zero). */
function withZero(bounds: { min: number[]; max: number[] }): { min: number[]; max: number[] } {
  return { min: bounds.min.map((x) => Math.min(x, 0)), max: bounds.max.map((x) => Math.max(x, 0)) };
}

/** writeMeshGlb: encodeMeshGlb to `path` (its folder is created when missing). */
export async function writeMeshGlb(path: string, parts: CharacterPart[], generator?: string, keys?: readonly ShapeKey[], looks?: CharacterLooks): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, encodeMeshGlb(parts, generator, keys, looks));
}
