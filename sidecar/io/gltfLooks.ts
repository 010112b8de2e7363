/**
 * A glTF character's look (its materials and the textures, images and samplers they use), carried from the file read
 * (gltf.ts) into the .glb files the command line writes (glbWriter.ts for rigs, cli/meshGlb.ts for posed meshes), so
 * that a rigged or posed character renders as it came in. The geometry code never sees it: the reader hands three's
 * loader bare materials, since rigging needs no texture and decoding images would need a browser.
 * Images are embedded in the written .glb (from the input's BIN chunk, a data: URI or a file beside a .gltf); one that
 * cannot be read keeps its URI as written, relative to the input's folder.
 * Spec: https://registry.khronos.org/glTF/specs/2.0/glTF-2.0.html#materials
 */
import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';

/** One image of the look: its bytes, or the URI it had when they could not be read. */
export type LookImage =
  | { name?: string; mimeType: string; bytes: Uint8Array }
  | { name?: string; uri: string };

export interface CharacterLooks {
  /** the file's glTF materials, as written (texture references index `textures`) */
  materials: Record<string, unknown>[];
  /** glTF textures (`source` indexes `images`, `sampler` indexes `samplers`), as written */
  textures: Record<string, unknown>[];
  samplers: Record<string, unknown>[];
  images: LookImage[];
  /** the file's extensionsUsed and extensionsRequired that concern materials and textures */
  extensionsUsed: string[];
  extensionsRequired: string[];
}

/** Whether a glTF extension concerns materials or textures (the look), not geometry. */
export function isLookExtension(name: string): boolean {
  return name.startsWith('KHR_materials_') || name.startsWith('KHR_texture_') || name === 'EXT_texture_webp' || name === 'EXT_texture_avif';
}

/**
 * captureLooks: a glTF document (json, with every buffer view pointing into `bin`, as gltf.ts's mergeBuffers leaves
 * it) → its look, or undefined when it has no materials. Reads a .gltf's image files relative to resourceDir. Copies
 * what it keeps: json may be changed afterwards.
 */
export async function captureLooks(json: Record<string, any>, bin: Uint8Array, resourceDir: string): Promise<CharacterLooks | undefined> {
  const materials = Array.isArray(json.materials) ? json.materials : [];
  if (materials.length === 0) return undefined;
  const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value ?? null)) as T;
  const images: LookImage[] = [];
  for (const image of Array.isArray(json.images) ? json.images : []) {
    const found = await imageBytes(image, json, bin, resourceDir);
    // an image neither in a buffer nor at a URI: a malformed file, whose look is not carried (the mesh still is)
    if (found === null) return undefined;
    images.push(found);
  }
  const extensions = (key: string) => (Array.isArray(json[key]) ? (json[key] as string[]).filter(isLookExtension) : []);
  return {
    materials: copy(materials),
    textures: copy(Array.isArray(json.textures) ? json.textures : []),
    samplers: copy(Array.isArray(json.samplers) ? json.samplers : []),
    images,
    extensionsUsed: extensions('extensionsUsed'),
    extensionsRequired: extensions('extensionsRequired'),
  };
}

/**
 * The bytes of one glTF image (a buffer view, a data: URI or a file), its URI when the file cannot be read, or null
 * when it names neither a buffer view within the buffer nor a URI.
 */
async function imageBytes(image: Record<string, any>, json: Record<string, any>, bin: Uint8Array, resourceDir: string): Promise<LookImage | null> {
  const name = typeof image?.name === 'string' ? { name: image.name as string } : {};
  if (typeof image?.bufferView === 'number') {
    const view = json.bufferViews?.[image.bufferView];
    const start = view?.byteOffset ?? 0, length = view?.byteLength ?? 0;
    if (view && start + length <= bin.byteLength) {
      const bytes = bin.slice(start, start + length);
      return { ...name, mimeType: image.mimeType ?? sniffMimeType(bytes), bytes };
    }
    return null;
  }
  const uri = typeof image?.uri === 'string' ? (image.uri as string) : '';
  if (!uri) return null;
  if (uri.startsWith('data:')) {
    const comma = uri.indexOf(',');
    const header = uri.slice(5, comma);
    const bytes = new Uint8Array(header.endsWith(';base64')
      ? Buffer.from(uri.slice(comma + 1), 'base64')
      : Buffer.from(decodeURIComponent(uri.slice(comma + 1)), 'latin1'));
    return { ...name, mimeType: image.mimeType ?? (header.split(';')[0] || sniffMimeType(bytes)), bytes };
  }
  try {
    const bytes = new Uint8Array(await readFile(resolve(resourceDir, decodeURIComponent(uri))));
    return { ...name, mimeType: image.mimeType ?? mimeTypeOfName(uri) ?? sniffMimeType(bytes), bytes };
  } catch {
    return { ...name, uri };
  }
}

/** The MIME type an image file's extension says, or undefined. */
function mimeTypeOfName(uri: string): string | undefined {
  const kind = extname(uri.split(/[?#]/)[0]).toLowerCase();
  return { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp', '.ktx2': 'image/ktx2', '.avif': 'image/avif' }[kind];
}

/** The MIME type an image's first bytes say (PNG, JPEG, WebP, KTX2), else image/png. */
export function sniffMimeType(bytes: Uint8Array): string {
  const starts = (...b: number[]) => b.every((x, i) => bytes[i] === x);
  if (starts(0x89, 0x50, 0x4e, 0x47)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return 'image/webp';
  if (starts(0xab, 0x4b, 0x54, 0x58, 0x20, 0x32, 0x30)) return 'image/ktx2';
  return 'image/png';
}

/** What a .glb's JSON gets from a look: the top-level arrays, to be spread into the document. */
export interface LookJson {
  materials: Record<string, unknown>[];
  textures?: Record<string, unknown>[];
  samplers?: Record<string, unknown>[];
  images?: Record<string, unknown>[];
  extensionsUsed?: string[];
  extensionsRequired?: string[];
}

/**
 * lookJson: a look → the JSON arrays a .glb writer adds, each image's bytes appended through addBytes (which returns
 * the buffer view it wrote them to). The materials keep their indices: a part's material index stays valid.
 */
export function lookJson(looks: CharacterLooks, addBytes: (bytes: Uint8Array) => number): LookJson {
  const out: LookJson = { materials: looks.materials.map((m) => ({ ...m })) };
  if (looks.textures.length > 0) out.textures = looks.textures.map((t) => ({ ...t }));
  if (looks.samplers.length > 0) out.samplers = looks.samplers.map((s) => ({ ...s }));
  if (looks.images.length > 0) {
    out.images = looks.images.map((image) => {
      const name = image.name === undefined ? {} : { name: image.name };
      return 'bytes' in image ? { ...name, bufferView: addBytes(image.bytes), mimeType: image.mimeType } : { ...name, uri: image.uri };
    });
  }
  if (looks.extensionsUsed.length > 0) out.extensionsUsed = [...looks.extensionsUsed];
  if (looks.extensionsRequired.length > 0) out.extensionsRequired = [...looks.extensionsRequired];
  return out;
}
