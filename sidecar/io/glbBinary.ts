/**
 * The BIN chunk of a .glb as our writers build it: each array (an accessor's data, an image) a buffer view of its own,
 * padded to 4 bytes, with the accessors that read them. The skinned writer (glbWriter) and the static one
 * (cli/meshGlb) share it. Spec: https://registry.khronos.org/glTF/specs/2.0/glTF-2.0.html#buffers-and-buffer-views
 */
import { align4 } from './glbContainer.js';

const FLOAT = 5126;
const UNSIGNED_SHORT = 5123;
const UNSIGNED_INT = 5125;

export type AccessorType = 'SCALAR' | 'VEC2' | 'VEC3' | 'VEC4' | 'MAT4';

/** Accumulates buffer views and accessors over one BIN chunk. */
export class GlbBinaryBuilder {
  readonly bufferViews: Record<string, unknown>[] = [];
  readonly accessors: Record<string, unknown>[] = [];
  private chunks: Uint8Array[] = [];
  private length = 0;

  /**
   * Append a typed array as its own buffer view (with `target` when given) and an accessor of `type` reading it, with
   * `extra` fields (min/max, name...); returns the accessor's index.
   */
  add(data: Float32Array | Uint16Array | Uint32Array, type: AccessorType, target?: number, extra: Record<string, unknown> = {}): number {
    const bufferView = this.addBytes(bytesOf(data), target);
    const width = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT4: 16 }[type];
    const componentType = data instanceof Float32Array ? FLOAT : data instanceof Uint16Array ? UNSIGNED_SHORT : UNSIGNED_INT;
    this.accessors.push({ bufferView, componentType, count: data.length / width, type, ...extra });
    return this.accessors.length - 1;
  }

  /**
   * Append a sparse VEC3 float accessor of `count` elements, zero but at `at` (#n, ascending), where it is `values`
   * (#n*3), with `extra` fields; returns the accessor's index. Its views have no target, as glTF asks of sparse data.
   */
  addSparseVec3(count: number, at: Uint32Array, values: Float32Array, extra: Record<string, unknown> = {}): number {
    const indices = { bufferView: this.addBytes(bytesOf(at)), componentType: UNSIGNED_INT };
    this.accessors.push({
      componentType: FLOAT, count, type: 'VEC3', ...extra,
      sparse: { count: at.length, indices, values: { bufferView: this.addBytes(bytesOf(values)) } },
    });
    return this.accessors.length - 1;
  }

  /**
   * Append raw bytes (an accessor's data, an image) as a buffer view of their own, padded to 4 bytes, with `target`
   * when given; returns the view's index.
   */
  addBytes(bytes: Uint8Array, target?: number): number {
    const view: Record<string, unknown> = { buffer: 0, byteOffset: this.length, byteLength: bytes.byteLength };
    if (target !== undefined) view.target = target;
    this.bufferViews.push(view);
    this.chunks.push(bytes);
    const padded = align4(bytes.byteLength);
    if (padded > bytes.byteLength) this.chunks.push(new Uint8Array(padded - bytes.byteLength));
    this.length += padded;
    return this.bufferViews.length - 1;
  }

  /** The BIN chunk's bytes so far. */
  bytes(): Uint8Array {
    const out = new Uint8Array(this.length);
    let offset = 0;
    for (const c of this.chunks) {
      out.set(c, offset);
      offset += c.byteLength;
    }
    return out;
  }
}

/**
 * vec3Bounds: per-component min and max of 3-vectors (#n*3), as glTF requires them on POSITION accessors, in the
 * float32 values stored (validators compare against those); an empty array gets zeros.
 */
export function vec3Bounds(values: Float32Array): { min: number[]; max: number[] } {
  if (values.length === 0) return { min: [0, 0, 0], max: [0, 0, 0] };
  const min = [Infinity, Infinity, Infinity];
  const max = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < values.length; i += 3) {
    for (let a = 0; a < 3; a++) {
      min[a] = Math.min(min[a], values[i + a]);
      max[a] = Math.max(max[a], values[i + a]);
    }
  }
  return { min: min.map(Math.fround), max: max.map(Math.fround) };
}

function bytesOf(data: Float32Array | Uint16Array | Uint32Array): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}
