/**
 * The rig of one latent-pose training identity (issue 6): its rest joints and the skinning weights of its anchor
 * vertices, in the same canonical frame as its *.pose file. The rig-structured vertex decoder learns joint rotations
 * from the latent condition; training skins the anchors with this true rig (at apply time the sidecar's auto-rig takes
 * its place).
 *
 * File `<stem>.poserig` beside `<stem>.pose` (binary bundle, sidecar/io/binaryBundle.ts; Python reader
 * models/training/latent_pose/pose_io.py `read_pose_rig`):
 * header { format: 'autorig-pose-rig/1', identity, joints: MIXAMO_JOINTS (23 names), influences: 4, anchorCount A }
 *   0 joints         f32 #23*3  rest joint heads, canonical frame of the neutral
 *   1 weightIndices  u32 #A*4   per anchor, the joints (MIXAMO_JOINTS indices) of its 4 largest weights
 *   2 weights        f32 #A*4   those weights, each row renormalised to sum to 1 (zero padding where fewer)
 */
import { SLOTS, topFourSlots } from '../../correctives/poseFeatures.js';
import { cross } from '../../geometry/vec3.js';
import { readBundle, writeBundle } from '../../io/binaryBundle.js';
import type { CanonicalFrame } from '../../mesh/canonicalFrame.js';
import { toCanonical } from '../../mesh/canonicalFrame.js';
import { mergeParts } from '../../mesh/mergeParts.js';
import { MIXAMO_JOINTS } from '../../skeleton/mixamoTemplate.js';
import type { Vec3 } from '../../types.js';
import type { RiggedCharacter } from '../trainingSample.js';
import type { PoseSampleHeader } from './poseSample.js';

export const POSE_RIG_FORMAT = 'autorig-pose-rig/1';
/** Weights kept per anchor. */
export const POSE_RIG_INFLUENCES = SLOTS;

export interface PoseRigHeader {
  format: typeof POSE_RIG_FORMAT;
  identity: string;
  joints: string[];
  influences: number;
  anchorCount: number;
}

export interface PoseRig {
  header: PoseRigHeader;
  joints: Float32Array;
  weightIndices: Uint32Array;
  weights: Float32Array;
}

/**
 * makePoseRig: a character and its pose sample's frame and anchors → the PoseRig. The frame is the sample header's
 * axes and scale (canonical = scale·R·(p − center)); anchorIndices index the character's merged mesh (mergeParts order).
 * Throws when the character does not fit the sample (another vertex count, or anchors that moved), which is how a
 * regenerated character is checked against the one the sample was made from.
 * character: RiggedCharacter, header: PoseSampleHeader, anchorIndices: #A, anchorPositions: #A*3 canonical
 */
export function makePoseRig(character: RiggedCharacter, header: PoseSampleHeader, anchorIndices: Uint32Array, anchorPositions: Float32Array): PoseRig {
  const mesh = mergeParts(character.parts);
  const V = mesh.positions.length / 3;
  if (V !== header.vertexCount) throw new Error(`${character.name}: ${V} vertices, its pose sample has ${header.vertexCount}`);
  // The sample header keeps the frame's axes and scale; its center (samples written before it was kept) is found
  // again from the anchors: canonical = s·R·(p − c) gives c = p − Rᵀ·canonical / s at every anchor.
  const { up, forward } = header.frame;
  const left = header.frame.left ?? cross(up, forward);
  const s = header.scale;
  const center: Vec3 = [0, 0, 0];
  anchorIndices.forEach((v, a) => {
    const x = anchorPositions[3 * a], y = anchorPositions[3 * a + 1], z = anchorPositions[3 * a + 2];
    for (let c = 0; c < 3; c++) center[c] += (mesh.positions[3 * v + c] - (left[c] * x + up[c] * y + forward[c] * z) / s) / anchorIndices.length;
  });
  const cf = { frame: { up, forward, left }, center, scale: s } as CanonicalFrame;
  const canonical = toCanonical(mesh.positions, cf);
  let worst = 0;
  anchorIndices.forEach((v, a) => {
    for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(canonical[3 * v + c] - anchorPositions[3 * a + c]));
  });
  if (worst > 1e-5) throw new Error(`${character.name}: anchors differ from its pose sample's by ${worst.toExponential(2)}`);

  const k = POSE_RIG_INFLUENCES;
  const A = anchorIndices.length;
  const weightIndices = new Uint32Array(A * k);
  const weights = new Float32Array(A * k);
  // each anchor's part and row: partOffsets are the merged index of every part's first vertex
  const offsets = mesh.partOffsets;
  anchorIndices.forEach((v, a) => {
    let p = 0;
    while (p + 1 < character.parts.length && offsets[p + 1] <= v) p++;
    const table = character.weights[p];
    const from = table.indices.length / (character.parts[p].positions.length / 3);
    const row = v - offsets[p];
    const top = topFourSlots(table.indices.subarray(row * from, row * from + from), table.weights.subarray(row * from, row * from + from), from);
    weightIndices.set(top.indices, a * k);
    weights.set(top.weights, a * k);
  });
  return {
    header: { format: POSE_RIG_FORMAT, identity: character.name, joints: [...MIXAMO_JOINTS], influences: k, anchorCount: A },
    joints: toCanonical(character.joints, cf), weightIndices, weights,
  };
}

/** poseRigPath: the side file of a *.pose path. */
export function poseRigPath(posePath: string): string {
  return posePath.replace(/\.pose$/, '') + '.poserig';
}

/** writePoseRig: the rig to `path` (layout in the file comment). */
export function writePoseRig(path: string, rig: PoseRig): void {
  writeBundle(path, rig.header, [rig.joints, rig.weightIndices, rig.weights]);
}

/** readPoseRig: a file written by writePoseRig. Throws when it is not one. */
export function readPoseRig(path: string): PoseRig {
  const { header: withBlobs, blobs } = readBundle<PoseRigHeader & { blobs?: unknown }>(path);
  const { blobs: _layout, ...header } = withBlobs;
  if (header.format !== POSE_RIG_FORMAT || blobs.length !== 3) throw new Error(`${path}: not a ${POSE_RIG_FORMAT} file`);
  return { header, joints: blobs[0] as Float32Array, weightIndices: blobs[1] as Uint32Array, weights: blobs[2] as Float32Array };
}
