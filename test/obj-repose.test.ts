/**
 * An .obj posed into an .obj keeps the file: only `v` (new positions), `vn` (normals of the posed faces that use them)
 * and `mtllib` (rebased to the output's folder) change; materials, uv seams, groups, smoothing and comments stay.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT_OK, runCli } from '../sidecar/cli/main.js';
import { loadCharacter } from '../sidecar/io/character.js';
import { parseObj } from '../sidecar/io/obj.js';
import { reposedObjBytes, type ObjReposeOptions } from '../sidecar/io/objRepose.js';
import { captureCli, objVertices, useLatentPoseStubModels } from './fixtures/poseCommandRun.js';

useLatentPoseStubModels();
const DEMO_OBJ = resolve(import.meta.dirname, '..', 'assets', 'demo', 'demo_character.obj');
const scratch = mkdtempSync(join(tmpdir(), 'autorig-obj-repose-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A unit cube as exporters write it: per-face normals, a uv seam, two materials, a group, a vertex colour. */
const CUBE = [
  '# exported by some tool',
  'mtllib cube.mtl',
  'o Cube',
  'v 0 0 0 1 0 0', 'v 1 0 0', 'v 1 1 0', 'v 0 1 0', 'v 0 0 1', 'v 1 0 1', 'v 1 1 1', 'v 0 1 1',
  'vt 0 0', 'vt 1 0', 'vt 1 1', 'vt 0 1',
  'vn 0 0 -1', 'vn 0 0 1', 'vn 0 -1 0', 'vn 0 1 0', 'vn -1 0 0', 'vn 1 0 0', 'vn 0.5 0.5 0.5',
  'g sides',
  'usemtl red',
  's off',
  'f 1/1/1 4/4/1 3/3/1 2/2/1',
  'f 5/1/2 6/2/2 7/3/2 8/4/2',
  'f 1/1/3 2/2/3 6/3/3 5/4/3',
  'usemtl blue',
  'f 4/1/4 8/4/4 7/3/4 3/2/4',
  'f -8/1/5 -4/2/5 -1/3/5 -5/4/5',
  'f 2/1/6 3/2/6 7/3/6 6/4/6',
  '',
].join('\n');

/** The cube's 8 positions turned 90° about z (x, y) → (−y, x). */
function turnedCube(): Float32Array {
  const v = objVertices(CUBE.split('\n').map((l) => (l.startsWith('v ') ? l.split(' ').slice(0, 4).join(' ') : l)).join('\n'));
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i += 3) { out[i] = -v[i + 1]; out[i + 1] = v[i]; out[i + 2] = v[i + 2]; }
  return out;
}

/** reposedObjBytes on text: UTF-8 in and out. */
function reposedObjText(text: string, positions: Float32Array, options?: ObjReposeOptions): string {
  return new TextDecoder().decode(reposedObjBytes(new TextEncoder().encode(text), positions, options));
}

describe('an .obj posed into an .obj', { timeout: 120_000 }, () => {
  it('moves the v lines, turns the normals with the faces that use them, and keeps every other line', () => {
    const text = reposedObjText(CUBE, turnedCube(), { header: 'posed', fromFolder: '/chars/in', toFolder: '/chars/out/posed' });
    const lines = text.split('\n');
    expect(lines[0]).toBe('# posed');
    const before = CUBE.split('\n');
    expect(lines.length).toBe(before.length + 1);
    const kept = (l: string) => !/^(v|vn|mtllib) /.test(l);
    expect(lines.slice(1).filter(kept)).toEqual(before.filter(kept));
    expect(lines).toContain('mtllib ../../in/cube.mtl');
    // the vertex colour stays on its v line; the turned positions
    expect(lines).toContain('v 0 0 0 1 0 0');
    expect(lines).toContain('v 0 1 0'); // (1, 0, 0) turned
    expect(lines).toContain('v -1 1 0'); // (1, 1, 0) turned
    // each face normal turned with its face: −y → +x, +y → −x, −x → −y, +x → +y; z unchanged; the unused one kept
    const normals = lines.filter((l) => l.startsWith('vn '));
    expect(normals).toEqual(['vn 0 0 -1', 'vn 0 0 1', 'vn 1 0 0', 'vn -1 0 0', 'vn 0 -1 0', 'vn 0 1 0', 'vn 0.5 0.5 0.5']);
    // a name with spaces is one library
    expect(reposedObjText('mtllib my cube.mtl\nv 0 0 0\n', new Float32Array(3), { fromFolder: '/a', toFolder: '/a/b' })).toBe('mtllib ../my cube.mtl\nv 0 0 0\n');
    expect(() => reposedObjText(CUBE, new Float32Array(9))).toThrow(/more than 3 v lines/);
    // line endings kept, a CRLF file stays CRLF; non-ASCII comments pass through
    expect(reposedObjText('# tête\r\nv 1 2 3\r\nf 1 1 1', Float32Array.of(4, 5, 6))).toBe('# tête\r\nv 4 5 6\r\nf 1 1 1');
  });

  it('autorig pose keeps the input\'s objects, materials and faces, the library found from the output\'s folder', async () => {
    const folder = join(scratch, 'in');
    mkdirSync(folder, { recursive: true });
    // the demo character with a material library, a material per object and a smoothing group
    const text = readFileSync(DEMO_OBJ, 'utf8').replace(/^o (\w+)$/gm, 'o $1\nusemtl mat_$1\ns 1');
    const input = join(folder, 'demo.obj');
    writeFileSync(input, `mtllib demo.mtl\n${text}`);
    writeFileSync(join(folder, 'demo.mtl'), 'newmtl mat_body\nKd 0.8 0.6 0.5\n');
    const out = join(scratch, 'out', 'posed', 'demo.obj');
    expect(await runCli(['pose', input, '--pose', 'elbowBentLf', '-o', out], captureCli())).toBe(EXIT_OK);
    const posed = readFileSync(out, 'utf8');
    expect(posed).toMatch(/^mtllib \.\.\/\.\.\/in\/demo\.mtl$/m);
    const objects = (s: string) => s.split('\n').filter((l) => /^(o|usemtl|s|f) /.test(l));
    expect(objects(posed)).toEqual(objects(`mtllib demo.mtl\n${text}`));
    // the positions are the pose's: the same as the .glb the command writes, to the .obj's 6 decimals
    const glb = join(scratch, 'out', 'demo.glb');
    expect(await runCli(['pose', input, '--pose', 'elbowBentLf', '-o', glb], captureCli())).toBe(EXIT_OK);
    const exact = (await loadCharacter(glb)).parts[0].positions;
    const written = objVertices(posed);
    expect(written.length).toBe(exact.length);
    let largest = 0;
    for (let i = 0; i < exact.length; i++) largest = Math.max(largest, Math.abs(written[i] - exact[i]));
    expect(largest).toBeLessThan(1e-6);
    const rest = objVertices(text);
    let moved = 0;
    for (let i = 0; i < rest.length; i++) moved = Math.max(moved, Math.abs(written[i] - rest[i]));
    expect(moved).toBeGreaterThan(0.05);
    // and it reads as the same mesh
    expect(Array.from(parseObj(posed, { groupBy: 'none' }).parts[0].triangles)).toEqual(Array.from(parseObj(text, { groupBy: 'none' }).parts[0].triangles));
  });
});
