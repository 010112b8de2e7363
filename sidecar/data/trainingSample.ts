/**
 * One training sample for the learned skeleton and skinning models (issue 5), made from any rigged character the
 * generators produce (procedural humanoids, re-proportioned dev characters). Everything is expressed in the frame the
 * sidecar itself finds at inference (mesh/canonicalFrame on the body's triangles), so the networks learn from exactly
 * the pixels and points they will be shown.
 *
 * File: a binaryBundle (io/binaryBundle.ts) with header TrainingSampleHeader and blobs, in order:
 *   0 image        f32 5*S*S   frontViewImage channels-first (silhouette, front depth, back depth, normal x, normal y)
 *   1 joints       f32 #J*3    ground-truth joint heads, canonical frame, MIXAMO_JOINTS order (J = 23)
 *   2 joints2d     f32 #J*2    the same joints in image (column, row) pixels of the S*S image (canonicalToImage)
 *   3 points       f32 #P*3    surface points, canonical frame (area-uniform over every part)
 *   4 pointWeights f32 #P*J    ground-truth skinning weights at those points (dense, rows sum to 1, HeadTop_End 0)
 *   5 pointNormals f32 #P*3    unit face normals at those points
 * Python reader: models/training/sample_io.py.
 */
import { readBundle, writeBundle } from '../io/binaryBundle.js';
import { findCanonicalFrame, pointToCanonical, toCanonical } from '../mesh/canonicalFrame.js';
import { bodyTriangles } from '../mesh/debris.js';
import { mergeParts } from '../mesh/mergeParts.js';
import { orientPiecesOutward } from '../mesh/orientPieces.js';
import { FRONT_VIEW_RESOLUTION } from '../skeleton/estimateSkeleton.js';
import { renderFrontView } from '../skeleton/frontView.js';
import { canonicalToImage, frontViewImage } from '../skeleton/frontViewImage.js';
import { MIXAMO_JOINTS } from '../skeleton/mixamoTemplate.js';
import { sampleSurface } from '../skinning/surfaceSamples.js';
import type { Frame, MeshPart } from '../types.js';

export const SAMPLE_FORMAT = 'autorig-sample/1';
/** Pixels per side of the 2D joint predictor's input. */
export const JOINT_IMAGE_SIZE = 128;
/** Surface points per sample for the refinement and skinning network. */
export const SAMPLE_POINTS = 4096;

/** A character with its ground-truth rig, as a generator makes it (world space, metres). */
export interface RiggedCharacter {
  name: string;
  /** the mesh objects (body, clothes, eyes, props...), as a Blender user would have them */
  parts: MeshPart[];
  /** joint heads: Float32Array #23*3, MIXAMO_JOINTS order, same space as the parts */
  joints: Float32Array;
  /** per part: top-k joint indices (into MIXAMO_JOINTS) #V*k and weights #V*k, rows sum to 1, HeadTop_End never used */
  weights: { indices: Uint16Array; weights: Float32Array }[];
  /** how the character was made (generator parameters, source character, seed): kept in the sample header */
  meta: Record<string, unknown>;
}

export interface TrainingSampleHeader {
  format: typeof SAMPLE_FORMAT;
  name: string;
  jointNames: string[];
  imageSize: number;
  pointCount: number;
  vertexCount: number;
  triangleCount: number;
  partCount: number;
  /** the canonical frame found from the geometry, in the character's space */
  frame: Frame;
  meta: Record<string, unknown>;
}

export interface TrainingSample {
  header: TrainingSampleHeader;
  image: Float32Array;
  joints: Float32Array;
  joints2d: Float32Array;
  points: Float32Array;
  pointWeights: Float32Array;
  pointNormals: Float32Array;
}

/**
 * makeTrainingSample: a rigged character → what the networks train on (see the file layout above).
 * character: RiggedCharacter, seed: picks the surface points, imageSize: S, pointCount: P → TrainingSample
 */
export function makeTrainingSample(character: RiggedCharacter, seed: number, imageSize = JOINT_IMAGE_SIZE, pointCount = SAMPLE_POINTS): TrainingSample {
  const J = MIXAMO_JOINTS.length;
  if (character.joints.length !== J * 3) throw new Error(`${character.name}: ${character.joints.length / 3} joints, expected ${J}`);
  if (character.weights.length !== character.parts.length) throw new Error(`${character.name}: weights for ${character.weights.length} of ${character.parts.length} parts`);
  const mesh = mergeParts(character.parts);
  const body = bodyTriangles(mesh.positions, mesh.triangles);
  const cf = findCanonicalFrame(mesh.positions, body);
  const canonical = toCanonical(mesh.positions, cf);
  const view = renderFrontView(canonical, body, FRONT_VIEW_RESOLUTION);
  const image = frontViewImage(view, imageSize);

  const joints = new Float32Array(J * 3);
  const joints2d = new Float32Array(J * 2);
  for (let j = 0; j < J; j++) {
    const c = pointToCanonical(character.joints.subarray(3 * j, 3 * j + 3), cf);
    joints.set(c, 3 * j);
    joints2d.set(canonicalToImage(c[0], c[1], imageSize), 2 * j);
  }

  // Dense weights per vertex would be #V*23 floats for 300k vertices: read the parts' top-k per sampled point instead.
  // wound as the sidecar winds what it samples (learnedSkinning's drawPointRigClouds): the face normals are the surface's
  const tris = orientPiecesOutward(canonical, mesh.triangles);
  const { points, normals: pointNormals, triangle, bary } = sampleSurface(canonical, tris, pointCount, seed);
  const pointWeights = new Float32Array(pointCount * J);
  const partOf = (v: number) => {
    let lo = 0, hi = mesh.partOffsets.length - 2;
    while (lo < hi) { const m = (lo + hi + 1) >> 1; if (mesh.partOffsets[m] <= v) lo = m; else hi = m - 1; }
    return lo;
  };
  for (let s = 0; s < pointCount; s++) {
    for (let c = 0; c < 3; c++) {
      const vtx = tris[3 * triangle[s] + c];
      const p = partOf(vtx);
      const local = vtx - mesh.partOffsets[p];
      const w = character.weights[p];
      const kk = w.indices.length / (character.parts[p].positions.length / 3);
      for (let i = 0; i < kk; i++) pointWeights[s * J + w.indices[local * kk + i]] += bary[3 * s + c] * w.weights[local * kk + i];
    }
    let sum = 0;
    for (let j = 0; j < J; j++) sum += pointWeights[s * J + j];
    if (sum > 0) for (let j = 0; j < J; j++) pointWeights[s * J + j] /= sum;
  }

  return {
    header: {
      format: SAMPLE_FORMAT,
      name: character.name,
      jointNames: [...MIXAMO_JOINTS],
      imageSize,
      pointCount,
      vertexCount: mesh.positions.length / 3,
      triangleCount: mesh.triangles.length / 3,
      partCount: character.parts.length,
      frame: cf.frame,
      meta: character.meta,
    },
    image, joints, joints2d, points, pointWeights, pointNormals,
  };
}

/** writeTrainingSample: a sample to one bundle file (layout above). */
export function writeTrainingSample(path: string, s: TrainingSample): void {
  writeBundle(path, s.header, [s.image, s.joints, s.joints2d, s.points, s.pointWeights, s.pointNormals]);
}

/** readTrainingSample: the inverse of writeTrainingSample. */
export function readTrainingSample(path: string): TrainingSample {
  const { header, blobs } = readBundle<TrainingSampleHeader>(path);
  if (header.format !== SAMPLE_FORMAT) throw new Error(`${path}: not a ${SAMPLE_FORMAT} file`);
  const [image, joints, joints2d, points, pointWeights, pointNormals] = blobs as Float32Array[];
  return { header, image, joints, joints2d, points, pointWeights, pointNormals };
}
