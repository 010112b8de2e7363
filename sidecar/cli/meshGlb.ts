/**
 * A static (unrigged) .glb of mesh parts, as `autorig pose` writes it: one node per part, no transform, each part's
 * vertices exactly as given (count and order), so vertex i of part k in the file is vertex i of part k of the input.
 * Spec: https://registry.khronos.org/glTF/specs/2.0/glTF-2.0.html#meshes
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { CharacterPart } from '../io/character.js';
import { align4, writeGlb } from '../io/glbContainer.js';

const FLOAT = 5126;
const UNSIGNED_INT = 5125;
const ARRAY_BUFFER = 34962;
const ELEMENT_ARRAY_BUFFER = 34963;

/**
 * encodeMeshGlb: parts (positions #V*3, triangles #T*3, optional normals #V*3 and uvs #V*2) → the bytes of a .glb
 * holding one mesh node per part, named after it. `generator` goes to asset.generator.
 */
export function encodeMeshGlb(parts: CharacterPart[], generator = 'AutoRig'): Uint8Array {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const bufferViews: Record<string, unknown>[] = [];
  const accessors: Record<string, unknown>[] = [];
  /** Appends `data` as its own buffer view and accessor of `width` components; returns the accessor's index. */
  const add = (data: Float32Array | Uint32Array, width: 1 | 2 | 3, target: number, bounds = false): number => {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    bufferViews.push({ buffer: 0, byteOffset: length, byteLength: bytes.byteLength, target });
    chunks.push(bytes);
    const padded = align4(bytes.byteLength);
    if (padded > bytes.byteLength) chunks.push(new Uint8Array(padded - bytes.byteLength));
    length += padded;
    const accessor: Record<string, unknown> = {
      bufferView: bufferViews.length - 1,
      componentType: data instanceof Float32Array ? FLOAT : UNSIGNED_INT,
      count: data.length / width,
      type: width === 1 ? 'SCALAR' : `VEC${width}`,
    };
    // glTF requires min/max on POSITION accessors.
    if (bounds) Object.assign(accessor, componentBounds(data as Float32Array));
    accessors.push(accessor);
    return accessors.length - 1;
  };
  const meshes = parts.map((part) => {
    const attributes: Record<string, number> = { POSITION: add(part.positions, 3, ARRAY_BUFFER, true) };
    if (part.normals) attributes.NORMAL = add(part.normals, 3, ARRAY_BUFFER);
    if (part.uvs) attributes.TEXCOORD_0 = add(part.uvs, 2, ARRAY_BUFFER);
    const indices = add(part.triangles, 1, ELEMENT_ARRAY_BUFFER);
    return { name: part.name, primitives: [{ attributes, indices, mode: 4 }] };
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

/** writeMeshGlb: encodeMeshGlb to `path` (its folder is created when missing). */
export async function writeMeshGlb(path: string, parts: CharacterPart[], generator?: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, encodeMeshGlb(parts, generator));
}
