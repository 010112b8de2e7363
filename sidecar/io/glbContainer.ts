/**
 * The GLB container (glTF 2.0 binary): a 12-byte header, a JSON chunk, an optional BIN chunk, all 4-byte aligned.
 * Spec: https://registry.khronos.org/glTF/specs/2.0/glTF-2.0.html#binary-gltf-layout
 */
import { AutoRigError } from '../errors.js';

const GLB_MAGIC = 0x46546c67; // "glTF"
const CHUNK_JSON = 0x4e4f534a; // "JSON"
const CHUNK_BIN = 0x004e4942; // "BIN\0"

/** The two halves of a .glb: the parsed JSON document and the raw bytes of the BIN chunk (buffer 0). */
export interface GlbContents {
  json: Record<string, any>;
  bin?: Uint8Array;
}

/** True when the bytes start with the GLB magic. */
export function isGlb(bytes: Uint8Array): boolean {
  return bytes.byteLength >= 12 && new DataView(bytes.buffer, bytes.byteOffset, 12).getUint32(0, true) === GLB_MAGIC;
}

/**
 * readGlb: split a .glb into its JSON document and BIN chunk.
 * bytes: Uint8Array, the whole file. Throws AutoRigError BAD_REQUEST on a malformed container.
 */
export function readGlb(bytes: Uint8Array, source = 'glb'): GlbContents {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!isGlb(bytes)) throw new AutoRigError('BAD_REQUEST', `${source}: not a binary glTF file (bad magic)`);
  const version = view.getUint32(4, true);
  if (version !== 2) throw new AutoRigError('BAD_REQUEST', `${source}: glTF version ${version} is not supported (need 2)`);
  const length = Math.min(view.getUint32(8, true), bytes.byteLength);
  let json: Record<string, any> | undefined;
  let bin: Uint8Array | undefined;
  for (let offset = 12; offset + 8 <= length; ) {
    const chunkLength = view.getUint32(offset, true);
    const chunkType = view.getUint32(offset + 4, true);
    const start = offset + 8;
    if (start + chunkLength > length) throw new AutoRigError('BAD_REQUEST', `${source}: truncated glb chunk`);
    const body = bytes.subarray(start, start + chunkLength);
    if (chunkType === CHUNK_JSON && json === undefined) {
      try {
        json = JSON.parse(new TextDecoder().decode(body));
      } catch (err) {
        throw new AutoRigError('BAD_REQUEST', `${source}: the JSON chunk does not parse (${(err as Error).message})`);
      }
    } else if (chunkType === CHUNK_BIN && bin === undefined) {
      bin = body;
    }
    offset = start + chunkLength + ((4 - (chunkLength % 4)) % 4);
  }
  if (json === undefined || typeof json !== 'object') throw new AutoRigError('BAD_REQUEST', `${source}: no JSON chunk`);
  return { json, bin };
}

/**
 * writeGlb: pack a JSON document and a BIN chunk into a .glb.
 * The JSON is padded with spaces and the BIN with zeros to 4 bytes, as the spec requires.
 */
export function writeGlb(json: Record<string, unknown>, bin?: Uint8Array): Uint8Array {
  const jsonBytes = new TextEncoder().encode(JSON.stringify(json));
  const jsonPadded = align4(jsonBytes.byteLength);
  const binPadded = bin ? align4(bin.byteLength) : 0;
  const total = 12 + 8 + jsonPadded + (bin ? 8 + binPadded : 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, GLB_MAGIC, true);
  view.setUint32(4, 2, true);
  view.setUint32(8, total, true);
  view.setUint32(12, jsonPadded, true);
  view.setUint32(16, CHUNK_JSON, true);
  out.set(jsonBytes, 20);
  out.fill(0x20, 20 + jsonBytes.byteLength, 20 + jsonPadded);
  if (bin) {
    const binStart = 20 + jsonPadded;
    view.setUint32(binStart, binPadded, true);
    view.setUint32(binStart + 4, CHUNK_BIN, true);
    out.set(bin, binStart + 8);
  }
  return out;
}

/** Round a byte count up to a multiple of 4. */
export function align4(n: number): number {
  return (n + 3) & ~3;
}
