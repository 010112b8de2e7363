/**
 * What pose.apply may carry from one request to the next for the same mesh. A Blender user tries pose after pose,
 * strength after strength, on one character; each request sends the mesh again, and most of an apply's time is
 * spent on things that depend on the mesh alone (the SDF samples, the encoder's μ, the auto-rig). The server keeps
 * them here, keyed by a digest of exactly the mesh sent, for a few meshes; every job's own thread stays stateless.
 */
import { createHash } from 'node:crypto';
import { modelPath } from '../learned/modelFiles.js';
import { modelsRunByPose } from '../methods.js';
import type { LatentPoseReuse } from '../pose/applyLatentPose.js';
import type { MeshPart, Vec3 } from '../types.js';

/** Meshes remembered at once: a few characters in one scene, not a whole library. */
export const POSE_REUSE_ENTRIES = 4;
/** Bytes of μ and rig weights remembered at once (the largest mesh the limits allow fits more than once). */
export const POSE_REUSE_BYTES = 256 * 1024 * 1024;

/**
 * meshDigest: a key for exactly these parts: their count, names, positions and triangles, bit for bit (SHA-256), the
 * files of the models that read them (the encoder's μ and the auto-rig are those models' answers: another models
 * folder is another key), and the direction that turns their frame (skeleton/skeletonFacing: a rig's or the user's; μ, rig and
 * frame are read in it). parts: MeshPart[], facing: Vec3 or undefined (the shape decides) → hex string. Any change to
 * the mesh (a moved vertex, a renamed object, a new order) or to the facing is a new key.
 */
export function meshDigest(parts: MeshPart[], facing?: Vec3): string {
  const hash = createHash('sha256');
  for (const model of modelsRunByPose(false)) hash.update(`${modelPath(model)}\0`);
  if (facing) hash.update(new Uint8Array(Float64Array.from(facing).buffer));
  else hash.update('shape\0');
  const header = new Uint32Array(1);
  header[0] = parts.length;
  hash.update(new Uint8Array(header.buffer));
  for (const part of parts) {
    const name = Buffer.from(part.name, 'utf8');
    const sizes = Uint32Array.of(name.byteLength, part.positions.length, part.triangles.length);
    hash.update(new Uint8Array(sizes.buffer));
    hash.update(name);
    hash.update(new Uint8Array(part.positions.buffer, part.positions.byteOffset, part.positions.byteLength));
    hash.update(new Uint8Array(part.triangles.buffer, part.triangles.byteOffset, part.triangles.byteLength));
  }
  return hash.digest('hex');
}

/** The bytes an entry holds: μ and the auto-rig's weight arrays (the skeleton is small). */
function reuseBytes(reuse: LatentPoseReuse): number {
  let bytes = reuse.mu.byteLength;
  for (const part of reuse.autoRig?.objects ?? []) bytes += part.indices.byteLength + part.weights.byteLength;
  return bytes;
}

/**
 * A least-recently-used map mesh digest → LatentPoseReuse, bounded by entry count and bytes. Entries are stored and
 * handed out as they are: a job receives them by structured clone (copied), never by transfer.
 */
export class PoseReuseCache {
  private readonly entries = new Map<string, LatentPoseReuse>();
  /** digest → settles when the job reading that mesh ends (answered, failed or cancelled) */
  private readonly readings = new Map<string, Promise<void>>();

  constructor(readonly maxEntries = POSE_REUSE_ENTRIES, readonly maxBytes = POSE_REUSE_BYTES) {}

  /**
   * A pose.apply or pose.prepare starts reading the mesh with this digest (what it needs is not remembered yet): until
   * the returned function is called (once its job has answered, failed or been cancelled; later calls do nothing),
   * reading(key) gives a promise that settles then.
   */
  beginReading(key: string): () => void {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => { end = resolve; });
    this.readings.set(key, ended);
    return () => {
      if (this.readings.get(key) === ended) this.readings.delete(key);
      end();
    };
  }

  /** A promise that settles when the job now reading this mesh ends, or undefined when none does. */
  reading(key: string): Promise<void> | undefined {
    return this.readings.get(key);
  }

  /** What an earlier apply of the mesh with this digest left, or undefined; marks it recently used. */
  get(key: string): LatentPoseReuse | undefined {
    const found = this.entries.get(key);
    if (found) {
      this.entries.delete(key);
      this.entries.set(key, found);
    }
    return found;
  }

  /**
   * Remember what an apply left. An entry that had an auto-rig keeps it when the new one has none (a later apply
   * through the user's own rig reads μ only), and so with the canonical frame. The least recently used entries go first when a bound is passed; an
   * entry larger than maxBytes alone is not kept.
   */
  set(key: string, reuse: LatentPoseReuse): void {
    const before = this.entries.get(key);
    const entry: LatentPoseReuse = {
      mu: reuse.mu,
      ...(reuse.autoRig ?? before?.autoRig ? { autoRig: reuse.autoRig ?? before!.autoRig } : {}),
      ...(reuse.frame ?? before?.frame ? { frame: reuse.frame ?? before!.frame } : {}),
      // the key holds the facing: what is kept under it was read in the frame that hint turns, whoever left it
      ...(reuse.facingHint ? { facingHint: reuse.facingHint } : {}),
    };
    this.entries.delete(key);
    if (reuseBytes(entry) > this.maxBytes) return;
    this.entries.set(key, entry);
    let bytes = 0;
    for (const e of this.entries.values()) bytes += reuseBytes(e);
    for (const [oldest, e] of this.entries) {
      if (this.entries.size <= this.maxEntries && bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      bytes -= reuseBytes(e);
    }
  }

  /** Number of meshes remembered. */
  get size(): number {
    return this.entries.size;
  }
}
