/**
 * Hand-off files between processes (the bench runner, rig children, Blender): a JSON header plus raw little-endian
 * typed arrays, so that a million-vertex mesh crosses a process boundary without any parsing.
 *
 * Layout: u32 header length H | H bytes of UTF-8 JSON | zero padding to a multiple of 8 | blob 0 | pad | blob 1 | ...
 * The header's `blobs` lists each blob's { offset, byteLength, type }, offsets counted from the end of the padding
 * (the data start, align8(4 + H)); every blob starts on a multiple of 8. Python readers: bench/blender_apply.py,
 * sidecar/eval/blender_bone_heat.py.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

export type Blob = Float32Array | Uint32Array | Uint16Array;
type BlobType = 'f32' | 'u32' | 'u16';

interface BlobEntry {
  offset: number;
  byteLength: number;
  type: BlobType;
}

const align8 = (n: number) => (n + 7) & ~7;

function blobType(b: Blob): BlobType {
  if (b instanceof Float32Array) return 'f32';
  if (b instanceof Uint32Array) return 'u32';
  return 'u16';
}

/**
 * writeBundle: `header` (any JSON) and `blobs` (typed arrays, in order) to one file; see the layout above. The bytes go
 * to `<path>.partial` first and are renamed onto `path`, so that a process killed mid-write never leaves a truncated
 * file under the real name (`autorig data --resume` takes an existing file as a finished sample).
 */
export function writeBundle(path: string, header: object, blobs: Blob[]): void {
  let offset = 0;
  const entries: BlobEntry[] = blobs.map((b) => {
    const entry = { offset, byteLength: b.byteLength, type: blobType(b) };
    offset = align8(offset + b.byteLength);
    return entry;
  });
  const headerBytes = Buffer.from(JSON.stringify({ ...header, blobs: entries }));
  const dataStart = align8(4 + headerBytes.length);
  const out = Buffer.alloc(dataStart + offset);
  out.writeUInt32LE(headerBytes.length, 0);
  headerBytes.copy(out, 4);
  blobs.forEach((b, i) => out.set(new Uint8Array(b.buffer, b.byteOffset, b.byteLength), dataStart + entries[i].offset));
  const partial = `${path}.partial`;
  writeFileSync(partial, out);
  renameSync(partial, path);
}

/** readBundle: the header and the blobs of a file written by writeBundle (blobs copied into aligned typed arrays). */
export function readBundle<H>(path: string): { header: H; blobs: Blob[] } {
  const bytes = readFileSync(path);
  const length = bytes.readUInt32LE(0);
  const header = JSON.parse(bytes.subarray(4, 4 + length).toString('utf8')) as H & { blobs: BlobEntry[] };
  const dataStart = align8(4 + length);
  const blobs = header.blobs.map((e) => {
    const raw = bytes.subarray(dataStart + e.offset, dataStart + e.offset + e.byteLength);
    const copy = new Uint8Array(raw).buffer;
    if (e.type === 'f32') return new Float32Array(copy);
    if (e.type === 'u32') return new Uint32Array(copy);
    return new Uint16Array(copy);
  });
  return { header, blobs };
}
