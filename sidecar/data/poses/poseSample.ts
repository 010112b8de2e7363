/**
 * One identity of the latent-pose training set (issue 6, LatentReRig): a rigged character neutral and in every pose of
 * the vocabulary, each pose in three deformation variants, all as the SDF autoencoder and the vertex decoder see them.
 *
 * Everything is in the canonical frame of the NEUTRAL mesh (mesh/canonicalFrame on its body triangles: x left, y up,
 * z forward, longest side 1), the frame the sidecar finds on a user's mesh at apply time; the poses are set in that
 * frame's up and forward, so a pose means the same motion on every identity whichever way its file faced.
 *
 * File (binary bundle, sidecar/io/binaryBundle.ts; Python reader models/training/latent_pose/pose_io.py):
 * header { format: 'autorig-pose-sample/1', identity, meta, poses: string[] (P), variants: string[] (3),
 *          anchorCount A, sdfCount N, vertexCount, triangleCount, frame, center, scale }
 *   0 neutralSdfPoints  f32 #N*3   SDF sample points of the neutral mesh (near the surface first, then the box)
 *   1 neutralSdf        f32 #N     signed distance at each, negative inside (generalised winding number sign)
 *   2 anchorPositions   f32 #A*3   anchor vertices (area-weighted choice of mesh vertices), neutral
 *   3 anchorNormals     f32 #A*3   their vertex normals, neutral
 *   4 stateSdfPoints    f32 #S*N*3 per state s = p*3 + v (pose p, variant v), SDF points of that posed mesh
 *   5 stateSdf          f32 #S*N
 *   6 stateAnchors      f32 #S*A*3 the anchor vertices in that state (the decoder's targets: same vertices, moved)
 *   7 anchorIndices     u32 #A     which vertices of the merged mesh the anchors are (for tools; not for training)
 */
import { readBundle, writeBundle } from '../../io/binaryBundle.js';
import { vertexNormals } from '../../io/normals.js';
import { findCanonicalFrame, toCanonical, type CanonicalFrame } from '../../mesh/canonicalFrame.js';
import { bodyTriangles } from '../../mesh/debris.js';
import { mergeParts } from '../../mesh/mergeParts.js';
import { POSE_NAMES, type PoseName } from '../../pose/poseVocabulary.js';
import { posedCharacterStates, type PosedPart } from '../../pose/posedStates.js';
import { sdfSamples } from '../../pose/sdfSamples.js';
import { SeededRandom } from '../seededRandom.js';
import type { RiggedCharacter } from '../trainingSample.js';

export const POSE_SAMPLE_FORMAT = 'autorig-pose-sample/1';
/** The three deformation variants of every pose (LatentReRig's pair kinds), in file order. */
export const POSE_VARIANTS = ['skinning', 'corrective', 'skinningCorrective'] as const satisfies readonly (keyof PosedPart)[];
export type PoseVariant = (typeof POSE_VARIANTS)[number];
/** Anchor vertices per identity: the vertices the decoder is trained on. */
export const POSE_ANCHORS = 2048;
/** SDF samples per state. */
export const POSE_SDF_SAMPLES = 2048;

export interface PoseSampleHeader {
  format: typeof POSE_SAMPLE_FORMAT;
  identity: string;
  meta: Record<string, unknown>;
  poses: PoseName[];
  variants: PoseVariant[];
  anchorCount: number;
  sdfCount: number;
  vertexCount: number;
  triangleCount: number;
  /** the neutral's canonical frame in the character's space: canonical = scale · R · (p − center) */
  frame: CanonicalFrame['frame'];
  center: CanonicalFrame['center'];
  scale: number;
}

export interface PoseSample {
  header: PoseSampleHeader;
  neutralSdfPoints: Float32Array;
  neutralSdf: Float32Array;
  anchorPositions: Float32Array;
  anchorNormals: Float32Array;
  stateSdfPoints: Float32Array;
  stateSdf: Float32Array;
  stateAnchors: Float32Array;
  anchorIndices: Uint32Array;
}

export interface PoseSampleOptions {
  anchors?: number;
  sdfCount?: number;
  /** the poses to include (default all of POSE_NAMES) */
  poses?: readonly PoseName[];
}

/**
 * The neutral's canonical frame, refusing one that is not the character's own when the truth is known: a generator
 * character (meta.source 'procedural') is Y up and faces +Z. A misread frame would teach the model a pose on the
 * wrong limbs.
 */
export function neutralFrame(character: RiggedCharacter, positions: Float32Array, triangles: Uint32Array): CanonicalFrame {
  const cf = findCanonicalFrame(positions, bodyTriangles(positions, triangles));
  if (character.meta.source === 'procedural') {
    const { up, forward } = cf.frame;
    if (up[1] < 0.9 || forward[2] < 0.9) {
      throw new Error(`${character.name}: canonical frame misread (up ${up.map((v) => v.toFixed(2))}, forward ${forward.map((v) => v.toFixed(2))})`);
    }
  }
  return cf;
}

/**
 * Anchor vertices: `count` distinct vertex indices drawn with probability ∝ the vertex's area (a third of its
 * triangles'), so anchors cover the surface evenly whatever the triangulation (Efraimidis–Spirakis keys, seeded).
 * positions #V*3, triangles #T*3 → Uint32Array #min(count, used vertices), ascending
 */
export function areaWeightedVertices(positions: Float32Array, triangles: Uint32Array, count: number, seed: number): Uint32Array {
  const V = positions.length / 3;
  const area = new Float64Array(V);
  for (let t = 0; t < triangles.length; t += 3) {
    const a = triangles[t], b = triangles[t + 1], c = triangles[t + 2];
    const ux = positions[3 * b] - positions[3 * a], uy = positions[3 * b + 1] - positions[3 * a + 1], uz = positions[3 * b + 2] - positions[3 * a + 2];
    const vx = positions[3 * c] - positions[3 * a], vy = positions[3 * c + 1] - positions[3 * a + 1], vz = positions[3 * c + 2] - positions[3 * a + 2];
    const third = Math.hypot(uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx) / 6;
    area[a] += third;
    area[b] += third;
    area[c] += third;
  }
  const random = new SeededRandom(seed);
  const keyed: { v: number; key: number }[] = [];
  for (let v = 0; v < V; v++) {
    const u = random.next();
    // log(u)/w orders exactly as u^(1/w) (the A-Res key) without underflow
    if (area[v] > 0) keyed.push({ v, key: Math.log(Math.max(u, 1e-300)) / area[v] });
  }
  keyed.sort((x, y) => y.key - x.key);
  return Uint32Array.from(keyed.slice(0, count).map((k) => k.v)).sort();
}

function gather(positions: Float32Array, indices: Uint32Array, out: Float32Array, at: number): void {
  for (let i = 0; i < indices.length; i++) {
    const v = indices[i];
    out[at + 3 * i] = positions[3 * v];
    out[at + 3 * i + 1] = positions[3 * v + 1];
    out[at + 3 * i + 2] = positions[3 * v + 2];
  }
}

/**
 * makePoseSample: a RiggedCharacter → its PoseSample (neutral + every pose × POSE_VARIANTS, SDF samples and anchors).
 * A pure function of (character, seed). Throws when the canonical frame is misread (neutralFrame).
 */
export function makePoseSample(character: RiggedCharacter, seed: number, options: PoseSampleOptions = {}): PoseSample {
  const anchorsWanted = options.anchors ?? POSE_ANCHORS;
  const N = options.sdfCount ?? POSE_SDF_SAMPLES;
  const poses = options.poses ?? POSE_NAMES;
  const mesh = mergeParts(character.parts);
  const cf = neutralFrame(character, mesh.positions, mesh.triangles);
  const frame = { up: cf.frame.up, forward: cf.frame.forward };
  const neutral = toCanonical(mesh.positions, cf);
  const anchorIndices = areaWeightedVertices(neutral, mesh.triangles, anchorsWanted, seed ^ 0x51ed);
  const A = anchorIndices.length;
  const anchorPositions = new Float32Array(A * 3);
  gather(neutral, anchorIndices, anchorPositions, 0);
  const anchorNormals = new Float32Array(A * 3);
  gather(vertexNormals(neutral, mesh.triangles), anchorIndices, anchorNormals, 0);
  const neutralSdf = sdfSamples(neutral, mesh.triangles, { count: N, seed });

  const S = poses.length * POSE_VARIANTS.length;
  const stateSdfPoints = new Float32Array(S * N * 3);
  const stateSdf = new Float32Array(S * N);
  const stateAnchors = new Float32Array(S * A * 3);
  const merged = new Float32Array(mesh.positions.length);
  poses.forEach((pose, p) => {
    const states = posedCharacterStates(character, pose, 1, frame);
    POSE_VARIANTS.forEach((variant, v) => {
      const s = p * POSE_VARIANTS.length + v;
      states.parts.forEach((part, k) => merged.set(part[variant], 3 * mesh.partOffsets[k]));
      const posed = toCanonical(merged, cf);
      gather(posed, anchorIndices, stateAnchors, s * A * 3);
      const samples = sdfSamples(posed, mesh.triangles, { count: N, seed: (seed + 7919 * (s + 1)) | 0 });
      stateSdfPoints.set(samples.points, s * N * 3);
      stateSdf.set(samples.sdf, s * N);
    });
  });
  return {
    header: {
      format: POSE_SAMPLE_FORMAT, identity: character.name, meta: character.meta, poses: [...poses], variants: [...POSE_VARIANTS],
      anchorCount: A, sdfCount: N, vertexCount: mesh.positions.length / 3, triangleCount: mesh.triangles.length / 3,
      frame: cf.frame, center: cf.center, scale: cf.scale,
    },
    neutralSdfPoints: neutralSdf.points, neutralSdf: neutralSdf.sdf, anchorPositions, anchorNormals,
    stateSdfPoints, stateSdf, stateAnchors, anchorIndices,
  };
}

/** writePoseSample: the sample to `path` (layout in the file comment). */
export function writePoseSample(path: string, s: PoseSample): void {
  writeBundle(path, s.header, [
    s.neutralSdfPoints, s.neutralSdf, s.anchorPositions, s.anchorNormals, s.stateSdfPoints, s.stateSdf, s.stateAnchors, s.anchorIndices,
  ]);
}

/** readPoseSample: a file written by writePoseSample. Throws when it is not one. */
export function readPoseSample(path: string): PoseSample {
  const { header: withBlobs, blobs } = readBundle<PoseSampleHeader & { blobs?: unknown }>(path);
  const { blobs: _layout, ...header } = withBlobs;
  if (header.format !== POSE_SAMPLE_FORMAT || blobs.length !== 8) throw new Error(`${path}: not a ${POSE_SAMPLE_FORMAT} file`);
  const [neutralSdfPoints, neutralSdf, anchorPositions, anchorNormals, stateSdfPoints, stateSdf, stateAnchors, anchorIndices] = blobs;
  return {
    header,
    neutralSdfPoints: neutralSdfPoints as Float32Array, neutralSdf: neutralSdf as Float32Array,
    anchorPositions: anchorPositions as Float32Array, anchorNormals: anchorNormals as Float32Array,
    stateSdfPoints: stateSdfPoints as Float32Array, stateSdf: stateSdf as Float32Array, stateAnchors: stateAnchors as Float32Array,
    anchorIndices: anchorIndices as Uint32Array,
  };
}
