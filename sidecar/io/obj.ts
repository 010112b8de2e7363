/**
 * Wavefront OBJ reader and writer (geometry only: v, vt, vn, f, o, g; materials and free-form curves are ignored).
 * Vertex order is the file's `v` order, so weights computed on the parts map back onto the file one to one.
 */
import { readFile } from 'node:fs/promises';
import { AutoRigError } from '../errors.js';
import { MESH_LIMITS, type MeshLimits } from '../mesh/mergeParts.js';
import { uniquePartNames, type Character, type CharacterPart } from './character.js';

export interface ObjReadOptions {
  /** file name for error messages */
  source?: string;
  /**
   * how faces become parts: 'object' (default) one part per `o`, 'group' one per `g`, 'none' a single part.
   * When the faces fall into one part only, that part keeps every `v` of the file, in file order.
   */
  groupBy?: 'object' | 'group' | 'none';
  /** size limits (default: the protocol's): a file over them is refused with TOO_LARGE while it is being read */
  limits?: MeshLimits;
}

/** loadObj: read an .obj file from disk. */
export async function loadObj(path: string, options: ObjReadOptions = {}): Promise<Character> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new AutoRigError('BAD_REQUEST', `${path}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return parseObj(text, { source: path, ...options });
}

/** One face corner: 0-based indices into the file's v / vt / vn lists (-1 when absent). */
interface Corner {
  v: number;
  vt: number;
  vn: number;
}

/**
 * parseObj: OBJ text → parts. n-gons are fan-triangulated (v0, vi, vi+1); negative indices count back from the
 * last element read so far. Per-vertex normals/uvs are kept only when every corner of a vertex agrees on them (a
 * seam would need split vertices, which would break the v order).
 * Throws AutoRigError BAD_INDEX for an index out of range, BAD_NUMBER for a non-finite coordinate, TOO_LARGE as soon
 * as the file holds more vertices or triangles than the limits allow (before the rest of it is parsed).
 */
export function parseObj(text: string, options: ObjReadOptions = {}): Character {
  const source = options.source ?? 'obj';
  const groupBy = options.groupBy ?? 'object';
  const limits = options.limits ?? MESH_LIMITS;
  checkObjSize(text, limits, source);
  let triangleCount = 0;
  const positions: number[] = [];
  const texcoords: number[] = [];
  const normals: number[] = [];
  const groups = new Map<string, Corner[]>(); // group name → triangle corners, 3 per triangle
  let objectName = '';
  let groupName = '';
  for (const [lineNo, raw] of objLines(text)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const tokens = line.split(/\s+/);
    const keyword = tokens[0];
    const where = () => `${source}:${lineNo}`;
    if (keyword === 'v') {
      pushNumbers(positions, tokens, 3, where);
      if (positions.length / 3 > limits.maxVerticesTotal) {
        throw new AutoRigError('TOO_LARGE', `${where()}: the file holds more than ${limits.maxVerticesTotal} vertices, the limit (decimate it first)`);
      }
    } else if (keyword === 'vt') {
      pushNumbers(texcoords, tokens.length >= 3 ? tokens : [...tokens, '0'], 2, where);
    } else if (keyword === 'vn') {
      pushNumbers(normals, tokens, 3, where);
    } else if (keyword === 'o') {
      objectName = tokens.slice(1).join(' ');
    } else if (keyword === 'g') {
      groupName = tokens.slice(1).join(' ');
    } else if (keyword === 'f') {
      if (tokens.length < 4) throw new AutoRigError('BAD_REQUEST', `${where()}: a face needs at least 3 vertices`);
      const corners = tokens.slice(1).map((token) => parseCorner(token, positions.length / 3, texcoords.length / 2, normals.length / 3, where));
      const key = groupBy === 'object' ? objectName : groupBy === 'group' ? groupName : '';
      let list = groups.get(key);
      if (!list) groups.set(key, (list = []));
      for (let i = 1; i + 1 < corners.length; i++) list.push(corners[0], corners[i], corners[i + 1]);
      triangleCount += corners.length - 2;
      if (triangleCount > limits.maxTrianglesTotal) {
        throw new AutoRigError('TOO_LARGE', `${where()}: the file holds more than ${limits.maxTrianglesTotal} triangles, the limit (decimate it first)`);
      }
    }
  }
  const vertexCount = positions.length / 3;
  const entries = [...groups.entries()];
  const names = uniquePartNames(entries.map(([name]) => name), 'mesh');
  const parts = entries.map(([, corners], i) =>
    buildPart(names[i], corners, positions, texcoords, normals, entries.length === 1 ? allVertices(vertexCount) : undefined),
  );
  return { parts };
}

/**
 * Refuses (TOO_LARGE) an OBJ that holds more vertices or triangles than the limits, from a scan that allocates nothing:
 * before any line is parsed, and, given the file's bytes, before they are decoded into a string.
 * text: OBJ text or its UTF-8 bytes, limits, source: file name for the message
 */
export function checkObjSize(text: string | Uint8Array, limits: MeshLimits, source: string): void {
  const size = countObjElements(text);
  if (size.vertices > limits.maxVerticesTotal) {
    throw new AutoRigError('TOO_LARGE', `${source}: the file holds ${size.vertices} vertices; the limit is ${limits.maxVerticesTotal} (decimate it first)`);
  }
  if (size.triangles > limits.maxTrianglesTotal) {
    throw new AutoRigError('TOO_LARGE', `${source}: the file holds ${size.triangles} triangles; the limit is ${limits.maxTrianglesTotal} (decimate it first)`);
  }
}

/**
 * How many vertices (`v` lines) and triangles (an n-corner `f` line fans into n - 2) an OBJ holds, from one pass over
 * its characters. Lines joined by a trailing backslash count as one. The keywords are ASCII, so the UTF-8 bytes of the
 * file give the same counts as its text.
 * text: OBJ text or its UTF-8 bytes → { vertices, triangles }
 */
export function countObjElements(text: string | Uint8Array): { vertices: number; triangles: number } {
  return typeof text === 'string' ? countElements(text.length, (i) => text.charCodeAt(i)) : countElements(text.length, (i) => text[i]);
}

function countElements(n: number, code: (i: number) => number): { vertices: number; triangles: number } {
  let vertices = 0, triangles = 0;
  let i = 0;
  while (i < n) {
    while (i < n && (code(i) === 32 || code(i) === 9)) i++;
    const c0 = code(i), c1 = i + 1 < n ? code(i + 1) : 10;
    const keywordEnds = c1 === 32 || c1 === 9 || c1 === 10 || c1 === 13;
    if (c0 === 118 /* v */ && keywordEnds) vertices++;
    const isFace = c0 === 102 /* f */ && keywordEnds;
    let corners = 0, inToken = false;
    // To the end of the logical line; in a face line, count the whitespace-separated corners.
    for (i += 1; i < n; i++) {
      const c = code(i);
      if (c === 10 && code(i - 1) !== 92 && !(code(i - 1) === 13 && code(i - 2) === 92)) break;
      if (!isFace) continue;
      const blank = c === 32 || c === 9 || c === 13 || c === 10 || c === 92;
      if (!blank && !inToken) corners++;
      inToken = !blank;
    }
    i++;
    if (isFace && corners >= 3) triangles += corners - 2;
  }
  return { vertices, triangles };
}

/**
 * The logical lines of an OBJ text, one at a time (a huge file is never split into one array of lines): a backslash at
 * the end of a line joins it with the next. Yields [number of the line's first physical line (1-based), text].
 */
export function* objLines(text: string): Generator<[number, string]> {
  let start = 0, lineNo = 1;
  let pending = '', pendingNo = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let line = text.slice(start, end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end);
    const firstNo = pending ? pendingNo : lineNo;
    if (pending) line = pending + line;
    if (line.endsWith('\\') && end < text.length) {
      pending = line.slice(0, -1) + ' ';
      pendingNo = firstNo;
    } else {
      pending = '';
      yield [firstNo, line];
    }
    start = end + 1;
    lineNo++;
  }
}

function pushNumbers(into: number[], tokens: string[], count: number, where: () => string): void {
  if (tokens.length < count + 1) throw new AutoRigError('BAD_REQUEST', `${where()}: "${tokens[0]}" needs ${count} numbers`);
  for (let i = 1; i <= count; i++) {
    const x = Number(tokens[i]);
    if (!Number.isFinite(x)) throw new AutoRigError('BAD_NUMBER', `${where()}: "${tokens[i]}" is not a finite number`);
    into.push(x);
  }
}

/** `v`, `v/vt`, `v//vn` or `v/vt/vn` → 0-based indices; OBJ indices are 1-based, negative ones relative to the end. */
function parseCorner(token: string, vCount: number, vtCount: number, vnCount: number, where: () => string): Corner {
  const [v, vt, vn] = token.split('/');
  return {
    v: resolveIndex(v, vCount, 'v', where),
    vt: vt ? resolveIndex(vt, vtCount, 'vt', where) : -1,
    vn: vn ? resolveIndex(vn, vnCount, 'vn', where) : -1,
  };
}

function resolveIndex(token: string, count: number, kind: string, where: () => string): number {
  const raw = Number(token);
  const index = raw < 0 ? count + raw : raw - 1;
  if (!Number.isInteger(raw) || raw === 0 || index < 0 || index >= count) {
    throw new AutoRigError('BAD_INDEX', `${where()}: ${kind} index ${token} is out of range (${count} defined so far)`);
  }
  return index;
}

function allVertices(count: number): Int32Array {
  const all = new Int32Array(count);
  for (let i = 0; i < count; i++) all[i] = i;
  return all;
}

/**
 * One part from its triangle corners. vertices: the file's v indices the part keeps, ascending; by default the ones
 * its faces use.
 */
function buildPart(
  name: string,
  corners: Corner[],
  positions: number[],
  texcoords: number[],
  normals: number[],
  vertices?: Int32Array,
): CharacterPart {
  if (!vertices) {
    const used = new Uint8Array(positions.length / 3);
    for (const c of corners) used[c.v] = 1;
    const list: number[] = [];
    used.forEach((u, i) => u && list.push(i));
    vertices = Int32Array.from(list);
  }
  const local = new Map<number, number>();
  vertices.forEach((v, i) => local.set(v, i));
  const count = vertices.length;
  const partPositions = new Float32Array(count * 3);
  vertices.forEach((v, i) => partPositions.set(positions.slice(v * 3, v * 3 + 3), i * 3));
  const triangles = new Uint32Array(corners.length);
  corners.forEach((c, i) => (triangles[i] = local.get(c.v)!));
  const part: CharacterPart = { name, positions: partPositions, triangles };
  const vn = perVertexAttribute(corners, local, count, (c) => c.vn);
  if (vn) part.normals = gather(normals, vn, 3);
  const vt = perVertexAttribute(corners, local, count, (c) => c.vt);
  if (vt) part.uvs = gather(texcoords, vt, 2);
  return part;
}

/** The attribute index each vertex uses at all its corners, or null when a vertex has none or several. */
function perVertexAttribute(corners: Corner[], local: Map<number, number>, count: number, pick: (c: Corner) => number): Int32Array | null {
  const chosen = new Int32Array(count).fill(-1);
  for (const c of corners) {
    const a = pick(c);
    if (a < 0) return null;
    const v = local.get(c.v)!;
    if (chosen[v] === -1) chosen[v] = a;
    else if (chosen[v] !== a) return null;
  }
  if (chosen.some((a) => a < 0)) return null;
  return chosen;
}

function gather(values: number[], index: Int32Array, width: number): Float32Array {
  const out = new Float32Array(index.length * width);
  index.forEach((a, i) => {
    for (let k = 0; k < width; k++) out[i * width + k] = values[a * width + k];
  });
  return out;
}

export interface ObjWriteOptions {
  /** decimals for coordinates (default 6) */
  decimals?: number;
  /** a comment for the first lines of the file */
  header?: string;
}

/**
 * formatObj: parts → OBJ text, one `o` block per part, each part's vertices in its own order (so reading the text
 * back gives the same parts). Normals and uvs are written when a part has them.
 */
export function formatObj(parts: CharacterPart[], options: ObjWriteOptions = {}): string {
  const decimals = options.decimals ?? 6;
  const num = (x: number) => String(+x.toFixed(decimals));
  const out: string[] = [];
  if (options.header) for (const line of options.header.split('\n')) out.push(`# ${line}`);
  // v, vt and vn are numbered separately: a part without uvs adds no vt lines.
  let base = 0;
  let uvBase = 0;
  let normalBase = 0;
  for (const part of parts) {
    out.push(`o ${part.name}`);
    const p = part.positions;
    for (let i = 0; i < p.length; i += 3) out.push(`v ${num(p[i])} ${num(p[i + 1])} ${num(p[i + 2])}`);
    if (part.uvs) for (let i = 0; i < part.uvs.length; i += 2) out.push(`vt ${num(part.uvs[i])} ${num(part.uvs[i + 1])}`);
    if (part.normals) {
      const n = part.normals;
      for (let i = 0; i < n.length; i += 3) out.push(`vn ${num(n[i])} ${num(n[i + 1])} ${num(n[i + 2])}`);
    }
    const corner = (v: number) => {
      const k = base + v + 1;
      const t = part.uvs ? String(uvBase + v + 1) : '';
      const n = part.normals ? `/${normalBase + v + 1}` : '';
      return part.uvs || part.normals ? `${k}/${t}${n}` : String(k);
    };
    const t = part.triangles;
    for (let i = 0; i < t.length; i += 3) out.push(`f ${corner(t[i])} ${corner(t[i + 1])} ${corner(t[i + 2])}`);
    base += p.length / 3;
    if (part.uvs) uvBase += p.length / 3;
    if (part.normals) normalBase += p.length / 3;
  }
  return out.join('\n') + '\n';
}
