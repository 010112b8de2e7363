import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { deflateSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AutoRigError } from '../sidecar/errors.js';
import { loadCharacter, type CharacterPart } from '../sidecar/io/character.js';
import { readGlb, writeGlb } from '../sidecar/io/glbContainer.js';
import { encodeSkinnedGlb, fourInfluences } from '../sidecar/io/glbWriter.js';
import { boundsOf, parseGltf } from '../sidecar/io/gltf.js';
import { formatObj, parseObj } from '../sidecar/io/obj.js';
import { crc32, decodePng, encodePng } from '../sidecar/io/png.js';
import type { Joint, PartWeights, Vec3 } from '../sidecar/types.js';

const scratch = mkdtempSync(join(tmpdir(), 'autorig-io-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('OBJ reader', () => {
  it('fan-triangulates n-gons, resolves negative indices and all corner forms, keeps v order', () => {
    const text = [
      'v 0 0 0',
      'v 1 0 0',
      'v 1 1 0',
      'v 0 1 0',
      'v 0.5 1.5 0',
      'vt 0 0',
      'vt 1 0',
      'vn 0 0 1',
      'f 1/1/1 2/2/1 3//1 4 5', // pentagon, mixed corner forms
      'f -1 -2 -3', // negative: 5 4 3
    ].join('\n');
    const { parts } = parseObj(text);
    expect(parts).toHaveLength(1);
    const [part] = parts;
    expect(Array.from(part.positions)).toEqual([0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0.5, 1.5, 0]);
    expect(Array.from(part.triangles)).toEqual([0, 1, 2, 0, 2, 3, 0, 3, 4, 4, 3, 2]);
    // corners disagree on (or lack) vt/vn: no per-vertex attribute can be kept
    expect(part.normals).toBeUndefined();
    expect(part.uvs).toBeUndefined();
  });

  it('splits o blocks into parts, each with the vertices its faces use in file order; keeps unreferenced v for one part', () => {
    const text = ['o A', 'v 0 0 0', 'v 1 0 0', 'v 0 1 0', 'f 1 2 3', 'o B', 'v 5 0 0', 'v 6 0 0', 'v 5 1 0', 'v 9 9 9', 'f 4 6 5'].join('\n');
    const { parts } = parseObj(text);
    expect(parts.map((p) => p.name)).toEqual(['A', 'B']);
    expect(Array.from(parts[1].positions)).toEqual([5, 0, 0, 6, 0, 0, 5, 1, 0]);
    expect(Array.from(parts[1].triangles)).toEqual([0, 2, 1]);
    const single = parseObj(text, { groupBy: 'none' }).parts;
    expect(single).toHaveLength(1);
    expect(single[0].positions.length / 3).toBe(7);
    expect(Array.from(single[0].triangles)).toEqual([0, 1, 2, 3, 5, 4]);
    const byGroup = parseObj('g left\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\ng right\nf 3 2 1\n', { groupBy: 'group' }).parts;
    expect(byGroup.map((p) => p.name)).toEqual(['left', 'right']);
  });

  it('refuses out-of-range indices and non-finite numbers with codes', () => {
    const bad = (text: string) => {
      try {
        parseObj(text, { source: 'x.obj' });
      } catch (err) {
        return err as AutoRigError;
      }
      throw new Error('no error');
    };
    expect(bad('v 0 0 0\nv 1 0 0\nf 1 2 3').code).toBe('BAD_INDEX');
    expect(bad('v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 -4').code).toBe('BAD_INDEX');
    expect(bad('v 0 nan 0').code).toBe('BAD_NUMBER');
    expect(bad('v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4').message).toContain('x.obj:4');
  });

  it('reads tokens split by any whitespace, a vt with u alone, and indices written as other numbers', () => {
    const text = [
      '# a comment',
      'v\t0 0 0',
      'v  1\u00a00 0 ', // no-break space between numbers, trailing blank
      '   v 0 1 0 0.5 0.5 0.5', // leading blanks; vertex colours after the position are ignored
      'vt 0.25', // v alone: the v coordinate reads 0
      'vt 0.5 1',
      'vt 1 1',
      'o  my   body ', // the name's words joined by single spaces
      'f 1/1 +2/2 3.0/3', // +2 and 3.0 are the whole numbers 2 and 3
      'f 1e0 2 3',
    ].join('\r\n');
    const { parts } = parseObj(text);
    expect(parts.map((p) => p.name)).toEqual(['my body']);
    expect(Array.from(parts[0].positions)).toEqual([0, 0, 0, 1, 0, 0, 0, 1, 0]);
    expect(Array.from(parts[0].triangles)).toEqual([0, 1, 2, 0, 1, 2]);
    // the second face has no vt: no per-vertex uv
    expect(parts[0].uvs).toBeUndefined();
    const uv = parseObj(text.split('\r\n').slice(0, -1).join('\n')).parts[0].uvs;
    expect(Array.from(uv!)).toEqual([0.25, 0, 0.5, 1, 1, 1]);
  });

  it('refuses faces with too few corners or malformed corners before reading their indices', () => {
    const codeOf = (text: string) => {
      try {
        parseObj(text, { source: 'x.obj' });
      } catch (err) {
        return `${(err as AutoRigError).code} ${(err as Error).message}`;
      }
      return 'no error';
    };
    const verts = 'v 0 0 0\nv 1 0 0\nv 0 1 0\n';
    expect(codeOf(`${verts}f 1 9`)).toBe('BAD_REQUEST x.obj:4: a face needs at least 3 vertices');
    expect(codeOf(`${verts}f 1 2 x`)).toBe('BAD_INDEX x.obj:4: v index x is out of range (3 defined so far)');
    expect(codeOf(`${verts}f 1 2 /1`)).toBe('BAD_INDEX x.obj:4: v index  is out of range (3 defined so far)');
    expect(codeOf(`${verts}f 1 2 3/2`)).toBe('BAD_INDEX x.obj:4: vt index 2 is out of range (0 defined so far)');
    expect(codeOf(`${verts}f 1 2 1.5`)).toBe('BAD_INDEX x.obj:4: v index 1.5 is out of range (3 defined so far)');
    expect(codeOf(`${verts}f 1 2 -`)).toBe('BAD_INDEX x.obj:4: v index - is out of range (3 defined so far)');
    expect(codeOf('vt')).toBe('BAD_REQUEST x.obj:1: "vt" needs 2 numbers');
    expect(codeOf('v 1 2')).toBe('BAD_REQUEST x.obj:1: "v" needs 3 numbers');
  });

  it('writes coordinates rounded to the decimals asked, as short as they read back', () => {
    const part = { name: 'p', positions: new Float32Array([0.1234564, -0.0000004, 12.5, 3e9, -2.25, 1]), triangles: new Uint32Array([0, 1, 0]) };
    const lines = formatObj([part]).split('\n').filter((l) => l.startsWith('v '));
    expect(lines[0]).toBe('v 0.123456 0 12.5');
    expect(lines[1]).toBe('v 3000000000 -2.25 1');
    expect(formatObj([part], { decimals: 2 }).split('\n').find((l) => l.startsWith('v '))).toBe('v 0.12 0 12.5');
  });

  it('writes each coordinate as String writes the rounded number, and UTF-8 names', () => {
    // the byte writer's digits against String(Math.round(x·10^d) / 10^d), the rule the writer keeps
    const values: number[] = [0, -0, 1e-7, -4e-7, 5e-7, 0.000001, 0.0000015, 2.675, 1.005, 999999999.5, -123456.7890125];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let i = 0; i < 30000; i++) values.push((random() - 0.5) * 10 ** Math.floor(random() * 16 - 8));
    const positions = Float32Array.from(values.slice(0, values.length - (values.length % 3)));
    const part = { name: 'épaule ✓', positions, triangles: new Uint32Array([0, 1, 2]), uvs: positions.subarray(0, (positions.length / 3) * 2) };
    for (const decimals of [0, 3, 6]) {
      const scale = 10 ** decimals;
      const as = (x: number) => (Math.abs(x) < 1e9 ? String(Math.round(x * scale) / scale) : String(+x.toFixed(decimals)));
      const lines = formatObj([part], { decimals }).split('\n');
      expect(lines[0]).toBe('o épaule ✓');
      const written = lines.filter((l) => l.startsWith('v ')).flatMap((l) => l.split(' ').slice(1));
      expect(written).toEqual(Array.from(positions, as));
      const uvs = lines.filter((l) => l.startsWith('vt ')).flatMap((l) => l.split(' ').slice(1));
      expect(uvs).toEqual(Array.from(part.uvs, as));
      expect(lines.find((l) => l.startsWith('f '))).toBe('f 1/1 2/2 3/3');
    }
  });

  it('round-trips through the writer with normals and uvs', () => {
    const parts = [gridPart('sheet', 4, 3, [0, 0, 0], true), gridPart('other', 2, 2, [2, 0, 0], false)];
    const back = parseObj(formatObj(parts)).parts;
    expect(back.map((p) => p.name)).toEqual(['sheet', 'other']);
    back.forEach((part, i) => {
      expectClose(part.positions, parts[i].positions, 1e-6);
      expect(Array.from(part.triangles)).toEqual(Array.from(parts[i].triangles));
    });
    expectClose(back[0].normals!, parts[0].normals!, 1e-6);
    expectClose(back[0].uvs!, parts[0].uvs!, 1e-6);
    expect(back[1].normals).toBeUndefined();
  });
});

describe('skinned glb writer + glTF reader', () => {
  const skeleton = chainSkeleton();
  const parts = [gridPart('body', 6, 10, [-0.3, 0, 0.05], true), gridPart('hat', 3, 3, [0.1, 1.9, 0], false)];
  const weights = parts.map((part) => weightsByHeight(part, skeleton.joints));

  it('writes a glb that reads back with the same vertices, joints, bind pose and weights', async () => {
    const bytes = encodeSkinnedGlb({ parts, skeleton, weights });
    const { json } = readGlb(bytes);
    expect(json.skins[0].joints).toHaveLength(skeleton.joints.length);
    expect(json.meshes[0].primitives[0].attributes).toHaveProperty('JOINTS_0');
    const character = await parseGltf(bytes, { source: 'roundtrip.glb' });
    expect(character.parts.map((p) => p.name)).toEqual(['body', 'hat']);
    const rig = character.rig!;
    expect(rig.joints.map((j) => j.name)).toEqual(skeleton.joints.map((j) => j.name));
    expect(rig.joints.map((j) => j.parent)).toEqual(skeleton.joints.map((j) => j.parent));
    rig.joints.forEach((joint, j) => expectClose(joint.position, skeleton.joints[j].head, 1e-5));
    character.parts.forEach((part, p) => {
      expect(part.positions.length).toBe(parts[p].positions.length);
      expectClose(part.positions, parts[p].positions, 1e-6);
      expect(Array.from(part.triangles)).toEqual(Array.from(parts[p].triangles));
      const expected = fourInfluences(weights[p], parts[p].positions.length / 3, skeleton.joints.length);
      expect(Array.from(rig.skins[p]!.indices)).toEqual(Array.from(expected.indices));
      expectClose(rig.skins[p]!.weights, expected.weights, 1e-6);
    });
    expectClose(character.parts[0].normals!, parts[0].normals!, 1e-6);
    expectClose(character.parts[0].uvs!, parts[0].uvs!, 1e-6);
    expect(character.parts[1].normals).toBeUndefined();
  });

  it('reads the same file as .gltf with an external buffer', async () => {
    const { json, bin } = readGlb(encodeSkinnedGlb({ parts, skeleton, weights }));
    json.buffers[0].uri = 'character data.bin';
    writeFileSync(join(scratch, 'character data.bin'), bin!);
    writeFileSync(join(scratch, 'character.gltf'), JSON.stringify(json));
    const character = await loadCharacter(join(scratch, 'character.gltf'));
    expect(character.rig!.joints.map((j) => j.name)).toEqual(skeleton.joints.map((j) => j.name));
    expectClose(character.parts[0].positions, parts[0].positions, 1e-6);
  });

  it('brings top-k weights to 4, keeping the largest and renormalising', () => {
    const k6: PartWeights = {
      name: 'p',
      influences: 6,
      indices: Uint16Array.from([0, 1, 2, 3, 4, 5]),
      weights: Float32Array.from([0.05, 0.3, 0.05, 0.2, 0.25, 0.15]),
    };
    const four = fourInfluences(k6, 1, 6);
    expect(Array.from(four.indices)).toEqual([1, 4, 3, 5]);
    expectClose(four.weights, [0.3 / 0.9, 0.25 / 0.9, 0.2 / 0.9, 0.15 / 0.9], 1e-6);
  });

  it('refuses weights with a joint index out of range', () => {
    const broken = weights.map((w) => ({ ...w, indices: w.indices.map(() => 99) }));
    expect(() => encodeSkinnedGlb({ parts, skeleton, weights: broken })).toThrow(/out of range/);
  });

  it('refuses a bad file with a code', async () => {
    await expect(parseGltf(new Uint8Array([1, 2, 3, 4]), { source: 'junk.glb' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    const truncated = writeGlb({ asset: { version: '2.0' }, buffers: [{ byteLength: 64 }], bufferViews: [{ buffer: 3, byteLength: 4 }] });
    await expect(parseGltf(truncated, { source: 't.glb' })).rejects.toBeInstanceOf(AutoRigError);
    await expect(loadCharacter(join(scratch, 'missing.glb'))).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(loadCharacter(join(scratch, 'model.fbx'))).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    const empty = writeGlb({ asset: { version: '2.0' }, scenes: [{ nodes: [] }], scene: 0 });
    writeFileSync(join(scratch, 'empty.glb'), empty);
    await expect(loadCharacter(join(scratch, 'empty.glb'))).rejects.toMatchObject({ code: 'EMPTY_MESH' });
  });
});

describe('PNG codec', () => {
  it('computes the standard CRC-32', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });

  it('round-trips RGB and RGBA images', () => {
    for (const channels of [3, 4] as const) {
      const width = 37;
      const height = 19;
      const pixels = new Uint8Array(width * height * channels).map((_, i) => (i * 7919) % 251);
      const bytes = encodePng({ width, height, channels, pixels });
      expect(Array.from(bytes.subarray(0, 8))).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      const back = decodePng(bytes);
      expect(back).toMatchObject({ width, height, channels });
      expect(back.pixels).toEqual(pixels);
    }
  });

  it('undoes all five row filters and rejects a corrupted chunk', () => {
    // One RGB row per filter type, encoded here by the PNG spec's definitions.
    const width = 5;
    const rows = [0, 1, 2, 3, 4].map((r) => Uint8Array.from({ length: width * 3 }, (_, i) => (r * 53 + i * 29) % 256));
    const raw: number[] = [];
    rows.forEach((row, y) => {
      raw.push(y);
      for (let x = 0; x < row.length; x++) {
        const left = x >= 3 ? row[x - 3] : 0;
        const up = y > 0 ? rows[y - 1][x] : 0;
        const upLeft = x >= 3 && y > 0 ? rows[y - 1][x - 3] : 0;
        const p = left + up - upLeft;
        const paeth = Math.abs(p - left) <= Math.abs(p - up) && Math.abs(p - left) <= Math.abs(p - upLeft) ? left : Math.abs(p - up) <= Math.abs(p - upLeft) ? up : upLeft;
        raw.push((row[x] - [0, left, up, (left + up) >> 1, paeth][y] + 256) % 256);
      }
    });
    const reference = encodePng({ width, height: 5, channels: 3, pixels: Uint8Array.from(rows.flatMap((r) => Array.from(r))) });
    const filtered = replaceIdat(reference, deflateSync(Uint8Array.from(raw)));
    expect(decodePng(filtered).pixels).toEqual(Uint8Array.from(rows.flatMap((r) => Array.from(r))));
    const corrupted = filtered.slice();
    corrupted[20] ^= 0xff; // inside IHDR
    expect(() => decodePng(corrupted)).toThrow(/CRC/);
  });
});

/** The same PNG with its IDAT chunk's data replaced (CRC recomputed). */
function replaceIdat(png: Uint8Array, data: Uint8Array): Uint8Array {
  const view = new DataView(png.buffer, png.byteOffset);
  const ihdrEnd = 8 + 12 + view.getUint32(8);
  const chunk = new Uint8Array(12 + data.length);
  const chunkView = new DataView(chunk.buffer);
  chunkView.setUint32(0, data.length);
  chunk.set(new TextEncoder().encode('IDAT'), 4);
  chunk.set(data, 8);
  chunkView.setUint32(8 + data.length, crc32(chunk.subarray(4, 8 + data.length)));
  const iend = png.subarray(png.length - 12);
  return Uint8Array.from([...png.subarray(0, ihdrEnd), ...chunk, ...iend]);
}

const charactersDir = join(import.meta.dirname, '..', '..', 'shared', 'data', 'characters');
const characterFiles = existsSync(charactersDir) ? readdirSync(charactersDir).filter((f) => f.endsWith('.glb')) : [];

describe.skipIf(characterFiles.length === 0)('dev characters load in the bind pose with a sane rig', { timeout: 30_000 }, () => {
  it.each(characterFiles)('%s', async (file) => {
    const character = await loadCharacter(join(charactersDir, file));
    const rig = character.rig!;
    expect(rig, 'every dev character is rigged').toBeDefined();
    expect(rig.joints.length).toBeGreaterThanOrEqual(6);
    rig.joints.forEach((joint, j) => {
      expect(joint.parent).toBeLessThan(j);
      expect(joint.name).not.toBe('');
    });
    const allPositions = Float32Array.from(character.parts.flatMap((p) => Array.from(p.positions)));
    const [min, max] = boundsOf(allPositions);
    const diagonal = Math.hypot(max[0] - min[0], max[1] - min[1], max[2] - min[2]);
    const used = new Float64Array(rig.joints.length);
    const nearestOwnVertex = new Float64Array(rig.joints.length).fill(Infinity);
    character.parts.forEach((part, p) => {
      const skin = rig.skins[p]!;
      expect(skin.weights.length).toBe((part.positions.length / 3) * 4);
      for (let v = 0; v < part.positions.length / 3; v++) {
        let sum = 0;
        for (let k = 0; k < 4; k++) {
          const joint = skin.indices[v * 4 + k];
          const w = skin.weights[v * 4 + k];
          sum += w;
          used[joint] += w;
          if (w > 0.3) {
            const head = rig.joints[joint].position;
            const d = Math.hypot(part.positions[v * 3] - head[0], part.positions[v * 3 + 1] - head[1], part.positions[v * 3 + 2] - head[2]);
            nearestOwnVertex[joint] = Math.min(nearestOwnVertex[joint], d);
          }
        }
        expect(Math.abs(sum - 1)).toBeLessThan(1e-3);
      }
    });
    // Joints that move the mesh sit inside it in the bind pose, and close to vertices they move: a wrong pose
    // (node pose instead of bind pose, a missing armature transform) breaks both.
    rig.joints.forEach((joint, j) => {
      if (used[j] < 1) return;
      joint.position.forEach((x, a) => {
        expect(x).toBeGreaterThanOrEqual(min[a] - 1e-3 * diagonal);
        expect(x).toBeLessThanOrEqual(max[a] + 1e-3 * diagonal);
      });
      if (Number.isFinite(nearestOwnVertex[j])) expect(nearestOwnVertex[j] / diagonal, joint.name).toBeLessThan(0.2);
    });
  });
});

/** A flat grid of w×h vertices (row major) in the XY plane at `origin`, 10 cm spacing, 2 triangles per cell. */
function gridPart(name: string, w: number, h: number, origin: Vec3, withAttributes: boolean): CharacterPart {
  const positions = new Float32Array(w * h * 3);
  const normals = new Float32Array(w * h * 3);
  const uvs = new Float32Array(w * h * 2);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      positions.set([origin[0] + x * 0.1, origin[1] + y * 0.2, origin[2] + 0.01 * x * y], i * 3);
      normals.set([0, 0, 1], i * 3);
      uvs.set([x / (w - 1), y / (h - 1)], i * 2);
    }
  }
  const triangles: number[] = [];
  for (let y = 0; y + 1 < h; y++) {
    for (let x = 0; x + 1 < w; x++) {
      const i = y * w + x;
      triangles.push(i, i + 1, i + w, i + 1, i + w + 1, i + w);
    }
  }
  const part: CharacterPart = { name, positions, triangles: Uint32Array.from(triangles) };
  if (withAttributes) Object.assign(part, { normals, uvs });
  return part;
}

/** A small branching skeleton with non-trivial heads. */
function chainSkeleton(): { joints: Joint[] } {
  const joint = (name: string, parent: number, head: Vec3, tail: Vec3): Joint => ({ name, parent, head, tail, roll: 0 });
  return {
    joints: [
      joint('mixamorig:Hips', -1, [0.01, 0.95, 0.02], [0.01, 1.1, 0.0]),
      joint('mixamorig:Spine', 0, [0.01, 1.1, 0.0], [0.0, 1.4, -0.01]),
      joint('mixamorig:Head', 1, [0.0, 1.4, -0.01], [0.0, 1.8, 0.0]),
      joint('mixamorig:LeftUpLeg', 0, [0.1, 0.9, 0.0], [0.11, 0.5, 0.02]),
      joint('mixamorig:RightUpLeg', 0, [-0.1, 0.9, 0.0], [-0.11, 0.5, 0.02]),
    ],
  };
}

/** Top-4 weights that blend between joints by distance to their heads (a smooth, non-trivial field). */
function weightsByHeight(part: CharacterPart, joints: Joint[]): PartWeights {
  const count = part.positions.length / 3;
  const indices = new Uint16Array(count * 4);
  const weights = new Float32Array(count * 4);
  for (let v = 0; v < count; v++) {
    const scored = joints
      .map((joint, j) => ({ j, s: 1 / (1e-3 + Math.hypot(...([0, 1, 2].map((a) => part.positions[v * 3 + a] - joint.head[a])) as Vec3)) }))
      .sort((a, b) => b.s - a.s)
      .slice(0, 4);
    const total = scored.reduce((sum, x) => sum + x.s, 0);
    scored.forEach((x, k) => {
      indices[v * 4 + k] = x.j;
      weights[v * 4 + k] = x.s / total;
    });
  }
  return { name: part.name, influences: 4, indices, weights };
}

function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance: number): void {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < actual.length; i++) worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
  expect(worst).toBeLessThanOrEqual(tolerance);
}
