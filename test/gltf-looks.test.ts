/**
 * A glTF character's materials and textures go through the command line unchanged: `autorig pose` and `autorig rig`
 * write each part with its own material, the images embedded byte for byte (from the input's BIN chunk, or from a
 * file beside a .gltf), and the material extensions the file declared.
 * Models: the stand-in latent pose models (fixtures/latentPoseStubModels.ts) over the repository's auto-rig models.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT_OK, runCli } from '../sidecar/cli/main.js';
import { loadCharacter } from '../sidecar/io/character.js';
import { readGlb } from '../sidecar/io/glbContainer.js';
import { sniffMimeType } from '../sidecar/io/gltfLooks.js';
import { captureCli, useLatentPoseStubModels } from './fixtures/poseCommandRun.js';

useLatentPoseStubModels();
const CHARACTERS = resolve(import.meta.dirname, '../../shared/data/characters');
const CESIUM = join(CHARACTERS, 'cesium_man.glb'); // one material with a JPEG texture
const ROBOT = join(CHARACTERS, 'robot_expressive.glb'); // three materials, no texture
const CLONK = join(CHARACTERS, 'clonk.glb'); // a PNG texture under KHR_materials_pbrSpecularGlossiness
const scratch = mkdtempSync(join(tmpdir(), 'autorig-looks-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Json = Record<string, any>;

/** The bytes of image i of a .glb (from its buffer view in the BIN chunk). */
function imageOf(json: Json, bin: Uint8Array, i: number): Uint8Array {
  const view = json.bufferViews[json.images[i].bufferView];
  return bin.subarray(view.byteOffset ?? 0, (view.byteOffset ?? 0) + view.byteLength);
}

/** Per mesh node of a .glb, in node order: its (node or mesh) name and its primitives' material indices. */
function nodeMaterials(json: Json): { name: string; materials: (number | undefined)[] }[] {
  return (json.nodes as Json[]).filter((n) => n.mesh !== undefined).map((n) => ({
    name: n.name ?? json.meshes[n.mesh].name,
    materials: (json.meshes[n.mesh].primitives as Json[]).map((p) => p.material),
  }));
}

/** The material (JSON) each part of a character file wears, by the part names loadCharacter gives. */
async function materialsByPart(path: string): Promise<Map<string, unknown>> {
  const character = await loadCharacter(path);
  const { json } = readGlb(readFileSync(path));
  return new Map(character.parts.map((part) => [part.name, part.material === undefined ? undefined : json.materials[part.material]]));
}

describe('materials and textures through the command line', { timeout: 180_000 }, () => {
  it('reads which material each part wears and the images\' bytes', async () => {
    const character = await loadCharacter(CESIUM);
    const { json, bin } = readGlb(readFileSync(CESIUM));
    expect(character.looks?.materials).toEqual(json.materials);
    expect(character.looks?.textures).toEqual(json.textures);
    const image = character.looks!.images[0];
    expect('bytes' in image && image.mimeType).toBe('image/jpeg');
    expect('bytes' in image && Buffer.from(image.bytes).equals(Buffer.from(imageOf(json, bin!, 0)))).toBe(true);
    expect(character.parts.every((part) => part.material === 0)).toBe(true);
    // an .obj has none
    expect((await loadCharacter(resolve(import.meta.dirname, '../assets/demo/demo_character.obj'))).looks).toBeUndefined();
  });

  it('autorig pose writes the posed .glb with the input\'s materials and its texture, byte for byte', async () => {
    const out = join(scratch, 'cesium posed.glb');
    const io = captureCli();
    expect(await runCli(['pose', CESIUM, '--pose', 'kneeBentLf', '-o', out], io), io.err()).toBe(EXIT_OK);
    const input = readGlb(readFileSync(CESIUM));
    const posed = readGlb(readFileSync(out));
    expect(posed.json.materials).toEqual(input.json.materials);
    expect(posed.json.textures).toEqual(input.json.textures);
    expect(posed.json.samplers ?? []).toEqual(input.json.samplers ?? []);
    expect(posed.json.images).toHaveLength(input.json.images.length);
    expect(posed.json.images[0].mimeType).toBe('image/jpeg');
    expect(Buffer.from(imageOf(posed.json, posed.bin!, 0)).equals(Buffer.from(imageOf(input.json, input.bin!, 0)))).toBe(true);
    expect(nodeMaterials(posed.json).every((node) => node.materials.every((m) => m === 0))).toBe(true);
    // the posed file reads back as the same parts, each on its material
    const back = await loadCharacter(out);
    expect(back.parts.map((p) => p.positions.length)).toEqual((await loadCharacter(CESIUM)).parts.map((p) => p.positions.length));
    expect(back.parts.every((part) => part.material === 0)).toBe(true);
    // with --shape-keys too, and the material extensions a file declares
    const keys = join(scratch, 'clonk keys.glb');
    expect(await runCli(['pose', CLONK, '--pose', 'kneeBentLf,elbowBentRt', '--shape-keys', '-o', keys], captureCli())).toBe(EXIT_OK);
    const clonkIn = readGlb(readFileSync(CLONK));
    const clonkOut = readGlb(readFileSync(keys));
    expect(clonkOut.json.materials).toEqual(clonkIn.json.materials);
    expect(clonkOut.json.extensionsUsed).toContain('KHR_materials_pbrSpecularGlossiness');
    expect(Buffer.from(imageOf(clonkOut.json, clonkOut.bin!, 0)).equals(Buffer.from(imageOf(clonkIn.json, clonkIn.bin!, 0)))).toBe(true);
  });

  it('autorig rig keeps each part on its own material (three materials)', async () => {
    const out = join(scratch, 'robot rigged.glb');
    const io = captureCli();
    expect(await runCli(['rig', ROBOT, '-o', out], io), io.err()).toBe(EXIT_OK);
    const rigged = readGlb(readFileSync(out));
    const input = readGlb(readFileSync(ROBOT));
    // the input's materials first, in order (their indices stay valid), then the plain one for parts without
    expect(rigged.json.materials.slice(0, input.json.materials.length)).toEqual(input.json.materials);
    const before = await materialsByPart(ROBOT);
    const after = await materialsByPart(out);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [name, material] of before) expect(after.get(name), name).toEqual(material);
    expect(new Set([...after.values()].map((m) => JSON.stringify(m))).size).toBeGreaterThan(1);
  });

  it('embeds the image file a .gltf names, with its type', async () => {
    const { json, bin } = readGlb(readFileSync(CESIUM));
    const jpeg = imageOf(json, bin!, 0);
    writeFileSync(join(scratch, 'skin tex.jpg'), jpeg);
    writeFileSync(join(scratch, 'cesium.bin'), bin!);
    const gltf = { ...json, buffers: [{ ...json.buffers[0], uri: 'cesium.bin' }], images: [{ uri: 'skin%20tex.jpg' }] };
    const path = join(scratch, 'cesium.gltf');
    writeFileSync(path, JSON.stringify(gltf));
    const out = join(scratch, 'from gltf.glb');
    expect(await runCli(['pose', path, '--pose', 'elbowBentLf', '-o', out], captureCli())).toBe(EXIT_OK);
    const posed = readGlb(readFileSync(out));
    expect(posed.json.images[0].mimeType).toBe('image/jpeg');
    expect(posed.json.images[0].uri).toBeUndefined();
    expect(Buffer.from(imageOf(posed.json, posed.bin!, 0)).equals(Buffer.from(jpeg))).toBe(true);
  });

  it('tells image types by their first bytes', () => {
    expect(sniffMimeType(Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10))).toBe('image/png');
    expect(sniffMimeType(Uint8Array.of(0xff, 0xd8, 0xff, 0xe0))).toBe('image/jpeg');
    expect(sniffMimeType(Uint8Array.from([...Buffer.from('RIFF'), 0, 0, 0, 0, ...Buffer.from('WEBP')]))).toBe('image/webp');
  });
});
