/**
 * The latent pose library (models/latent_pose_library.bin, written by models/training/train_latent_pose.py): for
 * every pose of the vocabulary and every deformation variant, the latent delta Δμ = μ(posed) − μ(neutral) of each
 * training identity and their mean. Apply Latent Pose takes its delta from here: the mean (strategy 'mean'), or the
 * delta of the training identity whose neutral latent is nearest the user's character (strategy 'nearest').
 *
 * The file (format 2; models/training/latent_pose/library_file.py writes it): the magic "ARPOSLIB", a uint32 LE
 * header length H, H bytes of UTF-8 JSON (the library, each vector replaced by the index of its first float64 in
 * the data block), zero bytes up to a multiple of 8 from the file's start, then the data block, float64 LE. Format 1
 * was the same library as one JSON file of decimal numbers (4 MiB): reading and checking it took 0.10–0.15 s of
 * every fresh process; this one takes a few milliseconds, with the same values.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { PoseVariant } from '../data/poses/poseSample.js';
import { AutoRigError } from '../errors.js';

export const POSE_LIBRARY_FORMAT = 'autorig-latent-pose-library/2';
const MAGIC = 'ARPOSLIB';
/** The variant a user asks for: the pose with its corrective (the training's 'skinningCorrective' pairs). */
export const APPLIED_VARIANT: PoseVariant = 'skinningCorrective';
export const POSE_STRATEGIES = ['mean', 'nearest'] as const;
export type PoseStrategy = (typeof POSE_STRATEGIES)[number];

export interface LibraryIdentity {
  identity: string;
  /** #latentSize */
  muNeutral: ArrayLike<number>;
  /** #latentSize */
  delta: ArrayLike<number>;
}

export interface PoseLibrary {
  format: typeof POSE_LIBRARY_FORMAT;
  latentSize: number;
  /** neighbours per anchor in the decoder's kNN graph */
  knn: number;
  /** whether each anchor's own index is among its knn (default false) */
  knnIncludesSelf?: boolean;
  variants: string[];
  /** per pose, per variant: the mean Δμ (#latentSize) and the stored identities' */
  poses: Record<string, Record<string, { mean: ArrayLike<number>; identities: LibraryIdentity[] }>>;
}

const cache = new Map<string, PoseLibrary>();

/**
 * readPoseLibrary: the library at `path` (vectors as Float64Array views of the file's data), checked (every vector
 * inside the data, every value finite), cached per path. Throws MODEL_MISSING when there is no file, MODEL_FAILED
 * when it is not a library of format 2.
 */
export function readPoseLibrary(path: string): PoseLibrary {
  const cached = cache.get(path);
  if (cached) return cached;
  if (!existsSync(path)) throw new AutoRigError('MODEL_MISSING', `the latent pose library is not installed (no file ${path})`);
  const library = decodePoseLibrary(readFileSync(path), path);
  cache.set(path, library);
  return library;
}

/**
 * decodePoseLibrary: a library file's bytes → PoseLibrary (vectors: Float64Array #latentSize each). `name` is the
 * file, for messages. Throws MODEL_FAILED when the bytes are not a library of format 2.
 */
export function decodePoseLibrary(bytes: Uint8Array, name = 'in memory'): PoseLibrary {
  const bad = (why: string) => new AutoRigError('MODEL_FAILED', `the latent pose library ${name} is damaged: ${why}`);
  if (bytes.length < 12 || Buffer.from(bytes.buffer, bytes.byteOffset, 8).toString('latin1') !== MAGIC) {
    throw bad(`it does not start with ${MAGIC} (a format 1 JSON library? models/training/latent_pose/library_file.py converts it)`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(8, true);
  if (12 + headerLength > bytes.length) throw bad('its header runs past the end');
  let library: PoseLibrary;
  try {
    library = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 12, headerLength).toString('utf8')) as PoseLibrary;
  } catch (err) {
    throw bad(`its header is not JSON: ${(err as Error).message}`);
  }
  if (library.format !== POSE_LIBRARY_FORMAT) throw bad(`format ${String(library.format)}`);
  const L = library.latentSize;
  if (!Number.isInteger(L) || L < 1 || !Number.isInteger(library.knn) || library.knn < 1) throw bad('latentSize or knn');
  const start = Math.ceil((12 + headerLength) / 8) * 8;
  const count = Math.floor((bytes.length - start) / 8);
  if (count < 0 || start + 8 * count !== bytes.length) throw bad('its data is not a whole number of float64s');
  // a view where the bytes allow one (aligned, little-endian machine), else a copy read value by value
  const data = (bytes.byteOffset + start) % 8 === 0 && new Uint8Array(Float64Array.of(1).buffer)[7] === 0x3f
    ? new Float64Array(bytes.buffer, bytes.byteOffset + start, count)
    : Float64Array.from({ length: count }, (_, i) => view.getFloat64(start + 8 * i, true));
  for (let i = 0; i < count; i++) if (!Number.isFinite(data[i])) throw bad(`value ${i} is not finite`);
  const vector = (at: unknown, what: string): Float64Array => {
    if (!Number.isInteger(at) || (at as number) < 0 || (at as number) + L > count) throw bad(`${what} lies outside the data`);
    return data.subarray(at as number, (at as number) + L);
  };
  if (typeof library.poses !== 'object' || library.poses === null) throw bad('no poses');
  for (const [pose, variants] of Object.entries(library.poses)) {
    for (const [variant, entry] of Object.entries(variants)) {
      entry.mean = vector(entry.mean, `${pose}/${variant}: mean`);
      entry.identities = (entry.identities ?? []).map((id) => ({
        identity: String(id.identity),
        muNeutral: vector(id.muNeutral, `${pose}/${variant}: ${id.identity}`),
        delta: vector(id.delta, `${pose}/${variant}: ${id.identity}`),
      }));
    }
  }
  return library;
}

/**
 * encodePoseLibrary: a library (vectors of latentSize numbers) → the bytes of its file, format 2 (what
 * library_file.py's encode_library writes for the same library). Throws BAD_ARRAY for a vector of another length.
 */
export function encodePoseLibrary(library: Omit<PoseLibrary, 'format'>): Uint8Array {
  const L = library.latentSize;
  const data: number[] = [];
  const place = (values: ArrayLike<number>): number => {
    if (values.length !== L) throw new AutoRigError('BAD_ARRAY', `a vector of ${values.length} values in a library of latentSize ${L}`);
    const at = data.length;
    for (let i = 0; i < values.length; i++) data.push(values[i]);
    return at;
  };
  const poses: Record<string, Record<string, unknown>> = {};
  for (const [pose, variants] of Object.entries(library.poses)) {
    poses[pose] = {};
    for (const [variant, entry] of Object.entries(variants)) {
      poses[pose][variant] = {
        mean: place(entry.mean),
        identities: (entry.identities ?? []).map((id) => ({ identity: id.identity, muNeutral: place(id.muNeutral), delta: place(id.delta) })),
      };
    }
  }
  const { format: _format, poses: _poses, ...rest } = library as PoseLibrary;
  const header = Buffer.from(JSON.stringify({ format: POSE_LIBRARY_FORMAT, ...rest, poses }), 'utf8');
  const start = Math.ceil((12 + header.length) / 8) * 8;
  const out = new Uint8Array(start + 8 * data.length);
  out.set(Buffer.from(MAGIC, 'latin1'), 0);
  const view = new DataView(out.buffer);
  view.setUint32(8, header.length, true);
  out.set(header, 12);
  data.forEach((x, i) => view.setFloat64(start + 8 * i, x, true));
  return out;
}

/**
 * latentDelta: the Δμ to apply for `pose` in `variant`, by strategy; muSource (#L) is the user's character's latent.
 * → { delta: Float32Array #L, identity: the training identity it came from ('nearest'), else null }.
 * Throws BAD_REQUEST for a pose or variant the library lacks; MODEL_FAILED for 'nearest' without identities.
 */
export function latentDelta(
  library: PoseLibrary, pose: string, variant: string, strategy: PoseStrategy, muSource: Float32Array,
): { delta: Float32Array; identity: string | null } {
  const entry = library.poses[pose]?.[variant];
  if (!entry) throw new AutoRigError('BAD_REQUEST', `the latent pose library has no pose "${pose}" (${variant})`);
  if (strategy === 'mean') return { delta: Float32Array.from(entry.mean), identity: null };
  if (!entry.identities?.length) throw new AutoRigError('MODEL_FAILED', `the latent pose library holds no identities for "${pose}"`);
  let best = entry.identities[0], bestD = Infinity;
  for (const id of entry.identities) {
    let d = 0;
    for (let i = 0; i < muSource.length; i++) d += (id.muNeutral[i] - muSource[i]) ** 2;
    if (d < bestD) [best, bestD] = [id, d];
  }
  return { delta: Float32Array.from(best.delta), identity: best.identity };
}
