/**
 * A character read from a file: its mesh parts in the bind pose and, when the file carries one, the artist's rig.
 * Readers (gltf.ts, obj.ts) produce it; the CLI, the glb writer and `autorig eval` consume it.
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { AutoRigError } from '../errors.js';
import { MESH_LIMITS } from '../mesh/mergeParts.js';
import type { MeshPart, Vec3 } from '../types.js';
import type { CharacterLooks } from './gltfLooks.js';

/** A mesh part plus the surface attributes a writer carries over unchanged (same vertex count and order). */
export interface CharacterPart extends MeshPart {
  /** normals: Float32Array, #V*3, unit length, in the same space as positions; absent when the file had none */
  normals?: Float32Array;
  /** uvs: Float32Array, #V*2 (glTF convention: v down from the top of the image); absent when the file had none */
  uvs?: Float32Array;
  /** index into Character.looks.materials of the part's material; absent when it had none (or the file no looks) */
  material?: number;
}

/** A joint of the file's own skeleton, in the bind pose. */
export interface RigJoint {
  name: string;
  /** index into CharacterRig.joints, -1 for a root; parents precede children */
  parent: number;
  /** world-space head (the joint's origin) in the bind pose, same space as the parts' positions */
  position: Vec3;
}

/** One part's skinning: 4 influences per vertex. */
export interface PartSkin {
  /** indices: Uint16Array, #V*4, into CharacterRig.joints */
  indices: Uint16Array;
  /** weights: Float32Array, #V*4, rows sum to 1 */
  weights: Float32Array;
}

/** The artist's rig as stored in the file. */
export interface CharacterRig {
  joints: RigJoint[];
  /** per part (same order as Character.parts): its skin, or null for a part that no joint moves */
  skins: (PartSkin | null)[];
}

export interface Character {
  parts: CharacterPart[];
  rig?: CharacterRig;
  /** a glTF file's materials and textures, which .glb writers carry over (gltfLooks.ts); absent for .obj or none */
  looks?: CharacterLooks;
}

/** Influences per vertex that readers and writers use (glTF JOINTS_0/WEIGHTS_0). */
export const INFLUENCES = 4;

/**
 * loadCharacter: read a .glb, .gltf or .obj file.
 * Throws AutoRigError BAD_REQUEST for a missing, unreadable or unsupported file, EMPTY_MESH when it holds no triangles,
 * TOO_LARGE when it holds more vertices or triangles than the protocol's limits (refused while reading, see the readers).
 */
export async function loadCharacter(path: string): Promise<Character> {
  const extension = extname(path).toLowerCase();
  if (extension !== '.glb' && extension !== '.gltf' && extension !== '.obj') {
    throw new AutoRigError('BAD_REQUEST', `${path}: unsupported file type "${extension || '(none)'}"; expected .glb, .gltf or .obj`);
  }
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_FS_FILE_TOO_LARGE') throw new AutoRigError('TOO_LARGE', `${path}: the file is too large to read`);
    throw new AutoRigError('BAD_REQUEST', `${path}: cannot read the file (${code ?? String(err)})`);
  }
  // Imported lazily so that OBJ users never pay for three's loader and the readers stay independent modules.
  let character: Character;
  if (extension === '.obj') {
    const obj = await import('./obj.js');
    // Counted on the bytes: a file over the limits is refused before it is decoded into a string.
    const counted = obj.checkObjSize(bytes, MESH_LIMITS, path);
    character = obj.parseObj(decodeText(bytes, path), { source: path, counted });
  } else {
    character = await (await import('./gltf.js')).parseGltf(bytes, { source: path });
  }
  assertHasTriangles(character, path);
  return character;
}

/** The bytes of a text file as a string; a file longer than the longest string the runtime holds is TOO_LARGE. */
function decodeText(bytes: Uint8Array, path: string): string {
  try {
    return new TextDecoder().decode(bytes);
  } catch (err) {
    if (err instanceof RangeError || (err as NodeJS.ErrnoException).code === 'ERR_STRING_TOO_LONG') {
      throw new AutoRigError('TOO_LARGE', `${path}: the file (${bytes.byteLength} bytes) is too large to read as text`);
    }
    throw err;
  }
}

/** Refuse a character with no triangle at all: nothing downstream can work on it. */
function assertHasTriangles(character: Character, source: string): void {
  const triangles = character.parts.reduce((sum, part) => sum + part.triangles.length / 3, 0);
  if (character.parts.length === 0 || triangles === 0) {
    throw new AutoRigError('EMPTY_MESH', `${source}: the file holds no triangle meshes`);
  }
}

/** Give every part a distinct, non-empty name (writers and the Blender side key objects by name). */
export function uniquePartNames(names: string[], fallback = 'part'): string[] {
  const used = new Set<string>();
  return names.map((raw, i) => {
    const base = raw.trim() || `${fallback}_${i}`;
    let name = base;
    for (let n = 1; used.has(name); n++) name = `${base}.${String(n).padStart(3, '0')}`;
    used.add(name);
    return name;
  });
}
