/**
 * An OBJ file with new vertex positions and everything else kept: `autorig pose` writes an .obj input's posed copy
 * this way, so that its materials (mtllib, usemtl), texture coordinates with their seams (vt and the faces' /vt
 * indices), groups, smoothing groups and comments come through as the user's tool wrote them. Only three kinds of
 * line change: each `v` gets its new position (any further numbers on it, a vertex colour, kept), each `vn` the
 * normal of the posed surface where the faces use it, and each `mtllib` a path that still finds the library from the
 * output's folder.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';

export interface ObjReposeOptions {
  /** comment lines put first (each gets "# ") */
  header?: string;
  /** the input file's folder and the output's: mtllib paths are rewritten from one to the other (both, or neither) */
  fromFolder?: string;
  toFolder?: string;
}

/**
 * reposedObjText: text of an OBJ file, positions Float32Array #V*3 (one per `v` line, in file order) → the same text
 * with the `v` lines at these positions (rounded to 6 decimals, as formatObj writes them), every `vn` line set to the
 * area-weighted mean of the posed normals of the faces whose corners use it (unused ones kept), and mtllib paths
 * rebased from fromFolder to toFolder. Faces are read as parseObj reads them (fans; negative indices count back).
 * Throws Error when the file's `v` lines are not #V (positions of another file).
 */
export function reposedObjText(text: string, positions: Float32Array, options: ObjReposeOptions = {}): string {
  const lines = text.split(/\r?\n/);
  const vertexCount = positions.length / 3;
  const normals = reposedNormals(lines, positions);
  const out: string[] = [];
  if (options.header) for (const line of options.header.split('\n')) out.push(`# ${line}`);
  let v = 0, vn = 0;
  for (const line of lines) {
    const keyword = firstWord(line);
    if (keyword === 'v') {
      if (v >= vertexCount) throw new Error(`reposedObjText: the file has more than ${vertexCount} v lines`);
      const extra = line.trim().split(/\s+/).slice(4);
      out.push(['v', number(positions[3 * v]), number(positions[3 * v + 1]), number(positions[3 * v + 2]), ...extra].join(' '));
      v++;
    } else if (keyword === 'vn') {
      const n = normals.get(vn++);
      out.push(n ? `vn ${number(n[0])} ${number(n[1])} ${number(n[2])}` : line);
    } else if (keyword === 'mtllib' && options.fromFolder !== undefined && options.toFolder !== undefined) {
      out.push(rebasedMtllib(line, options.fromFolder, options.toFolder));
    } else {
      out.push(line);
    }
  }
  if (v !== vertexCount) throw new Error(`reposedObjText: the file has ${v} v lines, the positions ${vertexCount}`);
  return out.join('\n');
}

/** The first whitespace-separated word of a line ('' for a blank one). */
function firstWord(line: string): string {
  const match = /^\s*(\S+)/.exec(line);
  return match ? match[1] : '';
}

/** A coordinate as formatObj writes it: rounded to 6 decimals, as short as it reads back. */
function number(x: number): string {
  const rounded = Math.round(x * 1e6) / 1e6;
  return String(Object.is(rounded, -0) ? 0 : rounded);
}

/**
 * Per vn index (0-based, file order) that a face corner uses: the unit mean of the area-weighted normals of the fan
 * triangles whose corners use it, at `positions`. A face corner `v`, `v/vt`, `v//vn`, `v/vt/vn`; 1-based indices,
 * negative ones relative to the elements read so far.
 */
function reposedNormals(lines: string[], positions: Float32Array): Map<number, [number, number, number]> {
  const sums = new Map<number, [number, number, number]>();
  let vCount = 0, vnCount = 0;
  const corner = (token: string): [number, number] => {
    const [vText, , vnText] = token.split('/');
    const index = (text: string | undefined, count: number) => {
      if (!text) return -1;
      const i = Number.parseInt(text, 10);
      return i < 0 ? count + i : i - 1;
    };
    return [index(vText, vCount), index(vnText, vnCount)];
  };
  for (const line of lines) {
    const keyword = firstWord(line);
    if (keyword === 'v') vCount++;
    else if (keyword === 'vn') vnCount++;
    else if (keyword === 'f') {
      const corners = line.trim().split(/\s+/).slice(1).map(corner);
      for (let k = 1; k + 1 < corners.length; k++) {
        const fan = [corners[0], corners[k], corners[k + 1]];
        if (fan.some(([vi, ni]) => ni < 0 || vi < 0 || vi * 3 + 2 >= positions.length)) continue;
        const normal = triangleAreaNormal(positions, fan[0][0], fan[1][0], fan[2][0]);
        for (const [, ni] of fan) {
          const sum = sums.get(ni) ?? [0, 0, 0];
          sum[0] += normal[0]; sum[1] += normal[1]; sum[2] += normal[2];
          sums.set(ni, sum);
        }
      }
    }
  }
  for (const [ni, sum] of sums) {
    const length = Math.hypot(sum[0], sum[1], sum[2]);
    if (length > 0) sums.set(ni, [sum[0] / length, sum[1] / length, sum[2] / length]);
    else sums.delete(ni);
  }
  return sums;
}

/** (b − a) × (c − a) of vertices a, b, c of positions #V*3: the triangle's normal times twice its area. */
function triangleAreaNormal(positions: Float32Array, a: number, b: number, c: number): [number, number, number] {
  const ux = positions[3 * b] - positions[3 * a], uy = positions[3 * b + 1] - positions[3 * a + 1], uz = positions[3 * b + 2] - positions[3 * a + 2];
  const vx = positions[3 * c] - positions[3 * a], vy = positions[3 * c + 1] - positions[3 * a + 1], vz = positions[3 * c + 2] - positions[3 * a + 2];
  return [uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx];
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
