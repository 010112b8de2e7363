/**
 * A static (unrigged) .glb of mesh parts, as `autorig pose` writes it: one node per part, no transform, each part's
 * vertices exactly as given (count and order), so vertex i of part k in the file is vertex i of part k of the input;
 * with `autorig pose --shape-keys`, each part also holds one morph target per pose (Blender: shape keys).
 * Spec: https://registry.khronos.org/glTF/specs/2.0/glTF-2.0.html#meshes
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { CharacterPart } from '../io/character.js';
import { align4, writeGlb } from '../io/glbContainer.js';
import { lookJson, type CharacterLooks, type LookJson } from '../io/gltfLooks.js';

const FLOAT = 5126;
const UNSIGNED_INT = 5125;
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
  const chunks: Uint8Array[] = [];
  let length = 0;
  const bufferViews: Record<string, unknown>[] = [];
  const accessors: Record<string, unknown>[] = [];
  /** Appends `data` as a buffer view of its own (`target` when given: a sparse accessor's views have none); returns its index. */
  const addView = (data: Float32Array | Uint32Array | Uint8Array, target?: number): number => {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    bufferViews.push({ buffer: 0, byteOffset: length, byteLength: bytes.byteLength, ...(target === undefined ? {} : { target }) });
    chunks.push(bytes);
    const padded = align4(bytes.byteLength);
    if (padded > bytes.byteLength) chunks.push(new Uint8Array(padded - bytes.byteLength));
    length += padded;
    return bufferViews.length - 1;
  };
  /** Appends `data` as its own buffer view and accessor of `width` components; returns the accessor's index. */
  const add = (data: Float32Array | Uint32Array, width: 1 | 2 | 3, target: number, bounds = false): number => {
    const accessor: Record<string, unknown> = {
      bufferView: addView(data, target),
      componentType: data instanceof Float32Array ? FLOAT : UNSIGNED_INT,
      count: data.length / width,
      type: width === 1 ? 'SCALAR' : `VEC${width}`,
    };
    // glTF requires min/max on POSITION accessors.
    if (bounds) Object.assign(accessor, componentBounds(data as Float32Array));
    accessors.push(accessor);
    return accessors.length - 1;
  };
  /** Appends a sparse VEC3 float accessor of `count` elements, zero but at `at` (#n, ascending), where it is `values`. */
  const addSparse = (count: number, at: Uint32Array, values: Float32Array, bounds: { min: number[]; max: number[] }): number => {
    const indices = { bufferView: addView(at), componentType: UNSIGNED_INT };
    accessors.push({
      componentType: FLOAT, count, type: 'VEC3', ...bounds,
      sparse: { count: at.length, indices, values: { bufferView: addView(values) } },
    });
    return accessors.length - 1;
  };
  for (const key of keys) {
    if (key.positions.length !== parts.length) throw new Error(`encodeMeshGlb: shape key '${key.name}' has ${key.positions.length} parts, the mesh ${parts.length}`);
  }
  // the input's look, its images in the BIN chunk; a part keeps its material (one without gets glTF's default)
  const look: LookJson | undefined = looks ? lookJson(looks, (bytes) => addView(bytes)) : undefined;
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
          accessors.push({ componentType: FLOAT, count: delta.length / 3, type: 'VEC3', min: [0, 0, 0], max: [0, 0, 0] });
          return { POSITION: accessors.length - 1 };
        }
        const values = new Float32Array(moved.length * 3);
        moved.forEach((v, i) => values.set(delta.subarray(3 * v, 3 * v + 3), 3 * i));
        // the unmoved vertices' zeros belong in the bounds too
        return { POSITION: addSparse(delta.length / 3, moved, values, withZero(componentBounds(delta))) };
      });
      mesh.weights = keys.map(() => 0);
      mesh.extras = { targetNames: keys.map((key) => key.name) };
    }
    return mesh;
  });
  const bin = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bin.set(chunk, offset);
    offset += chunk.byteLength;
  }
  const json = {
    asset: { version: '2.0', generator },
    scene: 0,
    scenes: [{ nodes: parts.map((_, k) => k) }],
    nodes: parts.map((part, k) => ({ name: part.name, mesh: k })),
    meshes,
    ...(look ?? {}),
    accessors,
    bufferViews,
    buffers: [{ byteLength: length }],
  };
  return writeGlb(json, bin);
}

/** Per-component min and max of an array of 3-vectors, as a POSITION accessor states them. */
function componentBounds(values: Float32Array): { min: number[]; max: number[] } {
  const min = [Infinity, Infinity, Infinity];
  const max = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < values.length; i++) {
    const a = i % 3;
    if (values[i] < min[a]) min[a] = values[i];
    if (values[i] > max[a]) max[a] = values[i];
  }
  // An empty part has no bounds; glTF still wants numbers.
  return { min: min.map((x) => (Number.isFinite(x) ? x : 0)), max: max.map((x) => (Number.isFinite(x) ? x : 0)) };
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
