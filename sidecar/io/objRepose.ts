/**
 * An OBJ file with new vertex positions and everything else kept: `autorig pose` writes an .obj input's posed copy
 * this way, so that its materials (mtllib, usemtl), texture coordinates with their seams (vt and the faces' /vt
 * indices), objects, groups, smoothing groups and comments come through as the user's tool wrote them. Only three
 * kinds of line change: each `v` gets its new position (any further numbers on it, a vertex colour, kept), each `vn`
 * the normal of the posed surface where the faces use it, and each `mtllib` a path that still finds the library from
 * the output's folder. It works on the file's bytes, line by line, copying the lines it keeps as they are (a 50k-vertex
 * file is 150k lines: a string per line cost several times the writing).
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { AsciiWriter } from './asciiWriter.js';

export interface ObjReposeOptions {
  /** comment lines put first (each gets "# ") */
  header?: string;
  /** the input file's folder and the output's: mtllib paths are rewritten from one to the other (both, or neither) */
  fromFolder?: string;
  toFolder?: string;
}

/** Decimals of the rewritten coordinates, as formatObj writes them. */
const DECIMALS = 6;
const SCALE = 10 ** DECIMALS;

/**
 * reposedObjBytes: an OBJ file's bytes (UTF-8), positions Float32Array #V*3 (one per `v` line, in file order) → the
 * same file with the `v` lines at these positions (rounded to 6 decimals, as formatObj writes them), every `vn` line
 * set to the area-weighted mean of the posed normals of the faces whose corners use it (unused ones kept), and mtllib
 * paths rebased from fromFolder to toFolder; each line keeps its ending (\n or \r\n). Faces are read as parseObj
 * reads them (fans; negative indices count back). Throws Error when the file's `v` lines are not #V.
 */
export function reposedObjBytes(bytes: Uint8Array, positions: Float32Array, options: ObjReposeOptions = {}): Uint8Array {
  const vertexCount = positions.length / 3;
  const lines = new ObjLines(bytes);
  const normals = hasLine(bytes, 'vn') ? reposedNormals(bytes, positions) : new Map<number, Float64Array>();
  const out = new AsciiWriter();
  if (options.header) for (const line of options.header.split('\n')) out.text(`# ${line}\n`);
  let v = 0, vn = 0;
  while (lines.next()) {
    const { start, end, body } = lines;
    const keyword = lines.keyword();
    if (keyword === 'v') {
      if (v >= vertexCount) throw new Error(`reposedObjBytes: the file has more than ${vertexCount} v lines`);
      out.text('v');
      for (let k = 0; k < 3; k++) {
        out.byte(32);
        number(out, positions[3 * v + k]);
      }
      // what follows the third number (a vertex colour, a w): kept as written
      const rest = lines.afterWords(4);
      if (rest < body) out.bytesFrom(bytes, rest, body);
      v++;
    } else if (keyword === 'vn' && normals.has(vn)) {
      const n = normals.get(vn)!;
      out.text('vn');
      for (let k = 0; k < 3; k++) {
        out.byte(32);
        number(out, n[k]);
      }
      vn++;
    } else if (keyword === 'mtllib' && options.fromFolder !== undefined && options.toFolder !== undefined) {
      out.text(rebasedMtllib(new TextDecoder().decode(bytes.subarray(start, body)), options.fromFolder, options.toFolder));
    } else {
      if (keyword === 'vn') vn++;
      out.bytesFrom(bytes, start, body);
    }
    out.bytesFrom(bytes, body, end);
  }
  if (v !== vertexCount) throw new Error(`reposedObjBytes: the file has ${v} v lines, the positions ${vertexCount}`);
  return out.view();
}

/** A coordinate as formatObj writes it: rounded to 6 decimals, as short as it reads back (String beyond 1e9). */
function number(out: AsciiWriter, x: number): void {
  if (Math.abs(x) < 1e9) out.decimal(x, DECIMALS, SCALE);
  else out.text(String(+x.toFixed(DECIMALS)));
}

/** Whether some line of the file starts with `keyword` and a space or tab. */
function hasLine(bytes: Uint8Array, keyword: string): boolean {
  const lines = new ObjLines(bytes);
  while (lines.next()) if (lines.keyword() === keyword) return true;
  return false;
}

/**
 * The lines of an OBJ file's bytes: after next(), [start, body) is the line without its ending, [body, end) the
 * ending (\n, \r\n, or nothing at the file's end).
 */
class ObjLines {
  start = 0;
  body = 0;
  end = 0;
  constructor(private readonly bytes: Uint8Array) {}

  next(): boolean {
    const bytes = this.bytes;
    if (this.end >= bytes.length) return false;
    this.start = this.end;
    let i = this.start;
    while (i < bytes.length && bytes[i] !== 10) i++;
    this.end = i < bytes.length ? i + 1 : i;
    this.body = i > this.start && bytes[i - 1] === 13 ? i - 1 : i;
    return true;
  }

  /** The line's first word, when it is one of those rewritten or parsed ('v', 'vn', 'f', 'mtllib'); else ''. */
  keyword(): string {
    const bytes = this.bytes;
    let i = this.start;
    while (i < this.body && (bytes[i] === 32 || bytes[i] === 9)) i++;
    const from = i;
    while (i < this.body && bytes[i] !== 32 && bytes[i] !== 9) i++;
    const length = i - from;
    if (length === 1 && bytes[from] === 118) return 'v';
    if (length === 1 && bytes[from] === 102) return 'f';
    if (length === 2 && bytes[from] === 118 && bytes[from + 1] === 110) return 'vn';
    if (length === 6 && new TextDecoder().decode(bytes.subarray(from, i)) === 'mtllib') return 'mtllib';
    return '';
  }

  /** Where the line goes on after its first `count` words (the whitespace after them included in what follows). */
  afterWords(count: number): number {
    const bytes = this.bytes;
    let i = this.start;
    for (let w = 0; w < count; w++) {
      while (i < this.body && (bytes[i] === 32 || bytes[i] === 9)) i++;
      while (i < this.body && bytes[i] !== 32 && bytes[i] !== 9) i++;
    }
    return i;
  }
}

/**
 * Per vn index (0-based, file order) that a face corner uses: the unit mean of the area-weighted normals of the fan
 * triangles whose corners use it, at `positions`. Face corners `v`, `v/vt`, `v//vn`, `v/vt/vn`; 1-based indices,
 * negative ones relative to the elements read so far.
 */
function reposedNormals(bytes: Uint8Array, positions: Float32Array): Map<number, Float64Array> {
  const sums = new Map<number, Float64Array>();
  const lines = new ObjLines(bytes);
  let vCount = 0, vnCount = 0;
  const cornerV: number[] = [], cornerN: number[] = [];
  while (lines.next()) {
    const keyword = lines.keyword();
    if (keyword === 'v') vCount++;
    else if (keyword === 'vn') vnCount++;
    else if (keyword === 'f') {
      cornerV.length = 0;
      cornerN.length = 0;
      let i = lines.afterWords(1);
      while (i < lines.body) {
        while (i < lines.body && (bytes[i] === 32 || bytes[i] === 9)) i++;
        if (i >= lines.body) break;
        // one corner: up to three slash-separated fields
        const fields = [0, 0, 0];
        const given = [false, false, false];
        for (let f = 0; f < 3 && i < lines.body && bytes[i] !== 32 && bytes[i] !== 9; f++) {
          let sign = 1, value = 0, digits = 0;
          if (bytes[i] === 45) { sign = -1; i++; }
          while (i < lines.body && bytes[i] >= 48 && bytes[i] <= 57) { value = value * 10 + bytes[i] - 48; i++; digits++; }
          if (digits > 0) { fields[f] = sign * value; given[f] = true; }
          if (i < lines.body && bytes[i] === 47) i++;
          else break;
        }
        while (i < lines.body && bytes[i] !== 32 && bytes[i] !== 9) i++;
        const index = (f: number, count: number) => (!given[f] ? -1 : fields[f] < 0 ? count + fields[f] : fields[f] - 1);
        cornerV.push(index(0, vCount));
        cornerN.push(index(2, vnCount));
      }
      for (let k = 1; k + 1 < cornerV.length; k++) addFanNormal(sums, positions, cornerV, cornerN, 0, k, k + 1);
    }
  }
  for (const [n, sum] of sums) {
    const length = Math.hypot(sum[0], sum[1], sum[2]);
    if (length > 0) for (let k = 0; k < 3; k++) sum[k] /= length;
    else sums.delete(n);
  }
  return sums;
}

/** Adds triangle (a, b, c) of the face's corners' (b − a) × (c − a) to the sums of its corners' vn indices. */
function addFanNormal(sums: Map<number, Float64Array>, positions: Float32Array, cornerV: number[], cornerN: number[], a: number, b: number, c: number): void {
  const corners = [a, b, c];
  if (corners.some((k) => cornerN[k] < 0 || cornerV[k] < 0 || cornerV[k] * 3 + 2 >= positions.length)) return;
  const pa = cornerV[a] * 3, pb = cornerV[b] * 3, pc = cornerV[c] * 3;
  const ux = positions[pb] - positions[pa], uy = positions[pb + 1] - positions[pa + 1], uz = positions[pb + 2] - positions[pa + 2];
  const vx = positions[pc] - positions[pa], vy = positions[pc + 1] - positions[pa + 1], vz = positions[pc + 2] - positions[pa + 2];
  const nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
  for (const k of corners) {
    let sum = sums.get(cornerN[k]);
    if (!sum) sums.set(cornerN[k], (sum = new Float64Array(3)));
    sum[0] += nx; sum[1] += ny; sum[2] += nz;
  }
}

/**
 * An `mtllib a.mtl b.mtl` line with each relative library path made relative to toFolder instead of fromFolder. Several
 * names when every word ends in .mtl; else the rest of the line is one name with spaces (as Blender writes one).
 */
function rebasedMtllib(line: string, fromFolder: string, toFolder: string): string {
  const rest = line.trim().replace(/^mtllib\s+/, '');
  const words = rest.split(/\s+/);
  const names = words.every((word) => word.toLowerCase().endsWith('.mtl')) ? words : [rest];
  const rebased = names.map((name) => {
    if (isAbsolute(name)) return name;
    const path = relative(resolve(toFolder), resolve(fromFolder, name)) || name;
    return sep === '\\' ? path.split(sep).join('/') : path;
  });
  return ['mtllib', ...rebased].join(' ');
}
