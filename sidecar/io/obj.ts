/**
 * Wavefront OBJ reader and writer (geometry only: v, vt, vn, f, o, g; materials and free-form curves are ignored).
 * Vertex order is the file's `v` order, so weights computed on the parts map back onto the file one to one.
 */
import { readFile } from 'node:fs/promises';
import { AutoRigError } from '../errors.js';
import { MESH_LIMITS, type MeshLimits } from '../mesh/mergeParts.js';
import { AsciiWriter } from './asciiWriter.js';
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
  /**
   * what countObjElements answers for this text, when the caller has counted it already (checkObjSize on the file's
   * bytes, before decoding them): not counted again. The counts size the reader's arrays.
   */
  counted?: { vertices: number; triangles: number };
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
  const size = options.counted ?? countObjElements(text);
  refuseOversized(size, limits, source);
  // Read into growing typed arrays, token by token: a 50k-vertex file is a few hundred thousand lines, and a string
  // and an object per token made the reader spend most of its time collecting garbage.
  let triangleCount = 0;
  const positions = new GrowingArray(Float64Array, 3 * size.vertices);
  const texcoords = new GrowingArray(Float64Array);
  const normals = new GrowingArray(Float64Array);
  // group name → triangle corners, 3 per triangle, each corner (v, vt, vn) 0-based, -1 when absent
  const groups = new Map<string, GrowingArray<Int32Array>>();
  // one face line: its corner tokens' [start, end), then its corners
  const spans = new GrowingArray(Int32Array);
  const face = new GrowingArray(Int32Array);
  const tokens = new LineTokens();
  // the v, vt and vn read so far, when a face refers to them
  const counts = [0, 0, 0];
  let objectName = '';
  let groupName = '';
  for (const [lineNo, line] of objLines(text)) {
    tokens.reset(line);
    if (!tokens.next() || line.charCodeAt(tokens.start) === 35 /* # */) continue;
    const keyword = tokens.text();
    const where = () => `${source}:${lineNo}`;
    if (keyword === 'v') {
      readNumbers(positions, tokens, 3, keyword, false, where);
      if (positions.length / 3 > limits.maxVerticesTotal) {
        throw new AutoRigError('TOO_LARGE', `${where()}: the file holds more than ${limits.maxVerticesTotal} vertices, the limit (decimate it first)`);
      }
    } else if (keyword === 'vt') {
      readNumbers(texcoords, tokens, 2, keyword, true, where);
    } else if (keyword === 'vn') {
      readNumbers(normals, tokens, 3, keyword, false, where);
    } else if (keyword === 'o') {
      objectName = tokens.rest();
    } else if (keyword === 'g') {
      groupName = tokens.rest();
    } else if (keyword === 'f') {
      spans.length = 0;
      while (tokens.next()) {
        spans.push(tokens.start);
        spans.push(tokens.end);
      }
      const corners = spans.length / 2;
      if (corners < 3) throw new AutoRigError('BAD_REQUEST', `${where()}: a face needs at least 3 vertices`);
      face.length = 0;
      counts[0] = positions.length / 3;
      counts[1] = texcoords.length / 2;
      counts[2] = normals.length / 3;
      for (let c = 0; c < corners; c++) readCorner(line, spans.data[2 * c], spans.data[2 * c + 1], counts, face, where);
      const key = groupBy === 'object' ? objectName : groupBy === 'group' ? groupName : '';
      let list = groups.get(key);
      // the first part is sized for the whole file (most files hold one object), the others grow as they need
      if (!list) groups.set(key, (list = new GrowingArray(Int32Array, groups.size === 0 ? 9 * size.triangles : 0)));
      const f = face.data;
      for (let i = 1; i + 1 < corners; i++) {
        list.push3(f[0], f[1], f[2]);
        list.push3(f[3 * i], f[3 * i + 1], f[3 * i + 2]);
        list.push3(f[3 * i + 3], f[3 * i + 4], f[3 * i + 5]);
      }
      triangleCount += corners - 2;
      if (triangleCount > limits.maxTrianglesTotal) {
        throw new AutoRigError('TOO_LARGE', `${where()}: the file holds more than ${limits.maxTrianglesTotal} triangles, the limit (decimate it first)`);
      }
    }
  }
  const vertexCount = positions.length / 3;
  const entries = [...groups.entries()];
  const names = uniquePartNames(entries.map(([name]) => name), 'mesh');
  const parts = entries.map(([, corners], i) =>
    buildPart(names[i], corners.view(), positions.data, texcoords.data, normals.data, vertexCount, entries.length === 1),
  );
  return { parts };
}

/** A typed array that grows by doubling: `data` holds `length` values (and room for more). */
class GrowingArray<T extends Float64Array | Int32Array> {
  data: T;
  length = 0;
  /** capacity: the values expected (room for at least 1024 is made) */
  constructor(private readonly kind: { new (n: number): T }, capacity = 0) {
    this.data = new kind(Math.max(1024, capacity));
  }
  push(x: number): void {
    if (this.length === this.data.length) this.grow();
    this.data[this.length++] = x;
  }
  push3(a: number, b: number, c: number): void {
    if (this.length + 3 > this.data.length) this.grow();
    const d = this.data;
    d[this.length] = a;
    d[this.length + 1] = b;
    d[this.length + 2] = c;
    this.length += 3;
  }
  /** the values held, without a copy */
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
  private grow(): void {
    const bigger = new this.kind(this.data.length * 2);
    bigger.set(this.data);
    this.data = bigger;
  }
}

/**
 * The whitespace-separated tokens of one line, by position (start, end: the current token's [start, end) in the
 * line), so that a number or an index is read without a string per token. Whitespace is what the pattern \s matches
 * among ASCII, and no-break space and the byte order mark.
 */
class LineTokens {
  line = '';
  start = 0;
  end = 0;
  reset(line: string): void {
    this.line = line;
    this.start = 0;
    this.end = 0;
  }
  /** moves to the next token; false at the end of the line */
  next(): boolean {
    const line = this.line, n = line.length;
    let i = this.end;
    while (i < n && isBlank(line.charCodeAt(i))) i++;
    if (i >= n) {
      this.start = this.end = n;
      return false;
    }
    let j = i + 1;
    while (j < n && !isBlank(line.charCodeAt(j))) j++;
    this.start = i;
    this.end = j;
    return true;
  }
  text(): string {
    return this.line.slice(this.start, this.end);
  }
  /** the remaining tokens joined by single spaces (a name after `o` or `g`) */
  rest(): string {
    const words: string[] = [];
    while (this.next()) words.push(this.text());
    return words.join(' ');
  }
}

function isBlank(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 160 || c === 0xfeff || c === 0x2028 || c === 0x2029 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x202f || c === 0x205f || c === 0x3000;
}

/**
 * The `count` numbers after a keyword, appended to `into`; with `padWithZero` a missing last one reads 0 (a `vt` with
 * only u). Throws BAD_REQUEST when numbers are missing, BAD_NUMBER for one that is not finite.
 */
function readNumbers(into: GrowingArray<Float64Array>, tokens: LineTokens, count: number, keyword: string, padWithZero: boolean, where: () => string): void {
  for (let i = 0; i < count; i++) {
    if (!tokens.next()) {
      if (padWithZero && i === count - 1 && i > 0) {
        into.push(0);
        return;
      }
      throw new AutoRigError('BAD_REQUEST', `${where()}: "${keyword}" needs ${count} numbers`);
    }
    const x = Number(tokens.text());
    if (!Number.isFinite(x)) throw new AutoRigError('BAD_NUMBER', `${where()}: "${tokens.text()}" is not a finite number`);
    into.push(x);
  }
}

/**
 * One face corner, line[start, end): `v`, `v/vt`, `v//vn` or `v/vt/vn` → its 0-based (v, vt, vn) appended to `face`
 * (-1 for an absent vt or vn). OBJ indices are 1-based, negative ones relative to the end. counts: the v, vt and vn
 * read so far. Throws BAD_INDEX for an index out of range or not a whole number.
 */
function readCorner(line: string, start: number, end: number, counts: readonly number[], face: GrowingArray<Int32Array>, where: () => string): void {
  let v = -1, vt = -1, vn = -1;
  let from = start;
  for (let field = 0; field < 3 && from <= end; field++) {
    let to = line.indexOf('/', from);
    if (to < 0 || to > end) to = end;
    // v is always read (an empty one is out of range); an empty vt or vn is absent
    if (field === 0) v = resolveIndex(line, from, to, counts[0], 'v', where);
    else if (to > from && field === 1) vt = resolveIndex(line, from, to, counts[1], 'vt', where);
    else if (to > from) vn = resolveIndex(line, from, to, counts[2], 'vn', where);
    from = to + 1;
  }
  face.push3(v, vt, vn);
}

/** line[from, to) as an OBJ index → 0-based; throws BAD_INDEX (with the token) when it is not one of `count`. */
function resolveIndex(line: string, from: number, to: number, count: number, kind: string, where: () => string): number {
  let raw = 0;
  let i = from;
  const negative = i < to && line.charCodeAt(i) === 45; /* - */
  if (negative) i++;
  let digits = i < to;
  for (; i < to; i++) {
    const d = line.charCodeAt(i) - 48;
    if (d < 0 || d > 9) {
      digits = false;
      break;
    }
    raw = raw * 10 + d;
  }
  // anything but plain digits (1e2, +3, 2.0, an empty field) is read as a number, as before
  if (!digits) raw = Number(line.slice(from, to));
  else if (negative) raw = -raw;
  const index = raw < 0 ? count + raw : raw - 1;
  if (!Number.isInteger(raw) || raw === 0 || index < 0 || index >= count) {
    throw new AutoRigError('BAD_INDEX', `${where()}: ${kind} index ${line.slice(from, to)} is out of range (${count} defined so far)`);
  }
  return index;
}

/**
 * Refuses (TOO_LARGE) an OBJ that holds more vertices or triangles than the limits, from a scan that allocates nothing:
 * before any line is parsed, and, given the file's bytes, before they are decoded into a string.
 * text: OBJ text or its UTF-8 bytes, limits, source: file name for the message → the counts (parseObj's `counted`)
 */
export function checkObjSize(text: string | Uint8Array, limits: MeshLimits, source: string): { vertices: number; triangles: number } {
  const size = countObjElements(text);
  refuseOversized(size, limits, source);
  return size;
}

/** Throws TOO_LARGE when `size` (countObjElements') is over the limits. */
function refuseOversized(size: { vertices: number; triangles: number }, limits: MeshLimits, source: string): void {
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

/**
 * One part from its triangle corners (v, vt, vn per corner, Int32Array #3·corners). keepAll: the part keeps every v of
 * the file in file order (the only part); otherwise the v its faces use, ascending.
 * positions, texcoords, normals: the file's v, vt, vn (flat, at least as long as the indices need)
 */
function buildPart(
  name: string,
  corners: Int32Array,
  positions: Float64Array,
  texcoords: Float64Array,
  normals: Float64Array,
  vertexCount: number,
  keepAll: boolean,
): CharacterPart {
  // the file's v → this part's vertex, -1 when the part leaves it out
  const local = new Int32Array(vertexCount).fill(-1);
  let count = 0;
  if (keepAll) {
    for (let v = 0; v < vertexCount; v++) local[v] = v;
    count = vertexCount;
  } else {
    for (let c = 0; c < corners.length; c += 3) local[corners[c]] = 0;
    for (let v = 0; v < vertexCount; v++) if (local[v] === 0) local[v] = count++;
  }
  const partPositions = new Float32Array(count * 3);
  for (let v = 0; v < vertexCount; v++) {
    const i = local[v];
    if (i < 0) continue;
    partPositions[3 * i] = positions[3 * v];
    partPositions[3 * i + 1] = positions[3 * v + 1];
    partPositions[3 * i + 2] = positions[3 * v + 2];
  }
  const triangles = new Uint32Array(corners.length / 3);
  for (let c = 0; c < triangles.length; c++) triangles[c] = local[corners[3 * c]];
  const part: CharacterPart = { name, positions: partPositions, triangles };
  const vn = perVertexAttribute(corners, 2, local, count);
  if (vn) part.normals = gather(normals, vn, 3);
  const vt = perVertexAttribute(corners, 1, local, count);
  if (vt) part.uvs = gather(texcoords, vt, 2);
  return part;
}

/** The attribute (vt: slot 1, vn: slot 2) each vertex uses at all its corners, or null when a vertex has none or several. */
function perVertexAttribute(corners: Int32Array, slot: number, local: Int32Array, count: number): Int32Array | null {
  const chosen = new Int32Array(count).fill(-1);
  for (let c = 0; c < corners.length; c += 3) {
    const a = corners[c + slot];
    if (a < 0) return null;
    const v = local[corners[c]];
    if (chosen[v] === -1) chosen[v] = a;
    else if (chosen[v] !== a) return null;
  }
  if (chosen.some((a) => a < 0)) return null;
  return chosen;
}

function gather(values: Float64Array, index: Int32Array, width: number): Float32Array {
  const out = new Float32Array(index.length * width);
  for (let i = 0; i < index.length; i++) {
    for (let k = 0; k < width; k++) out[i * width + k] = values[index[i] * width + k];
  }
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
 * back gives the same parts). Normals and uvs are written when a part has them. (formatObjBytes' UTF-8, decoded.)
 */
export function formatObj(parts: CharacterPart[], options: ObjWriteOptions = {}): string {
  return new TextDecoder('utf-8').decode(formatObjBytes(parts, options));
}

/** formatObjBytes: formatObj's text as UTF-8 bytes, to write to a file as it is. */
export function formatObjBytes(parts: CharacterPart[], options: ObjWriteOptions = {}): Uint8Array {
  const decimals = options.decimals ?? 6;
  const scale = 10 ** decimals;
  const out = new AsciiWriter();
  // each coordinate rounded to `decimals` places and written as short as it reads back; the writer's digits are
  // exactly String's below 1e9 (at most 15 significant digits), the rare rest goes through String
  const exactDigits = Number.isInteger(decimals) && decimals >= 0 && decimals <= 6;
  const num = (x: number) => {
    if (exactDigits && Math.abs(x) < 1e9) out.decimal(x, decimals, scale);
    else out.text(Math.abs(x) < 1e9 ? String(Math.round(x * scale) / scale) : String(+x.toFixed(decimals)));
  };
  const vector = (keyword: string, values: Float32Array, width: number) => {
    for (let i = 0; i < values.length; i += width) {
      out.text(keyword);
      for (let k = 0; k < width; k++) {
        out.byte(32);
        num(values[i + k]);
      }
      out.byte(10);
    }
  };
  if (options.header) for (const line of options.header.split('\n')) out.text(`# ${line}\n`);
  // v, vt and vn are numbered separately: a part without uvs adds no vt lines.
  let base = 0;
  let uvBase = 0;
  let normalBase = 0;
  for (const part of parts) {
    out.text(`o ${part.name}\n`);
    const p = part.positions;
    vector('v', p, 3);
    if (part.uvs) vector('vt', part.uvs, 2);
    if (part.normals) vector('vn', part.normals, 3);
    const t = part.triangles;
    for (let i = 0; i < t.length; i += 3) {
      out.byte(102); // f
      for (let k = 0; k < 3; k++) {
        const v = t[i + k];
        out.byte(32);
        out.integer(base + v + 1);
        if (part.uvs || part.normals) {
          out.byte(47); // /
          if (part.uvs) out.integer(uvBase + v + 1);
          if (part.normals) {
            out.byte(47);
            out.integer(normalBase + v + 1);
          }
        }
      }
      out.byte(10);
    }
    base += p.length / 3;
    if (part.uvs) uvBase += p.length / 3;
    if (part.normals) normalBase += p.length / 3;
  }
  return out.view();
}
