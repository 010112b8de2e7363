/**
 * The benchmark's hand-off files between processes (the bench runner, the rig child, Blender): meshes and rigs as
 * binary bundles (sidecar/io/binaryBundle.ts).
 */
import { readBundle, writeBundle } from '../sidecar/io/binaryBundle.js';
import type { MeshPart, PartWeights, RigResult, Skeleton, SkinResult } from '../sidecar/types.js';

/** A benchmark mesh: the character's parts and where they came from. */
export interface MeshBundleHeader {
  source: string;
  levels: number;
  parts: { name: string }[];
}

/** writeMeshBundle: parts as blobs [positions f32 #V*3, triangles u32 #T*3] per part. */
export function writeMeshBundle(path: string, parts: MeshPart[], source: string, levels: number): void {
  writeBundle(path, { source, levels, parts: parts.map((p) => ({ name: p.name })) }, parts.flatMap((p) => [p.positions, p.triangles]));
}

export function readMeshBundle(path: string): { header: MeshBundleHeader; parts: MeshPart[] } {
  const { header, blobs } = readBundle<MeshBundleHeader>(path);
  const parts = header.parts.map((p, i) => ({ name: p.name, positions: blobs[2 * i] as Float32Array, triangles: blobs[2 * i + 1] as Uint32Array }));
  return { header, parts };
}

/** A rig or skin result as the Blender side reads it: skeleton (and frame) in the header, per object [indices u16, weights f32]. */
export interface RigBundleHeader {
  skeleton: Skeleton;
  frame?: RigResult['frame'];
  seconds: number;
  objects: { name: string; influences: number }[];
}

export function writeRigBundle(path: string, result: RigResult | SkinResult): void {
  const header: RigBundleHeader = {
    skeleton: result.skeleton,
    frame: 'frame' in result ? result.frame : undefined,
    seconds: result.seconds,
    objects: result.objects.map((o) => ({ name: o.name, influences: o.influences })),
  };
  writeBundle(path, header, result.objects.flatMap((o) => [o.indices, o.weights]));
}

export function readRigBundle(path: string): { header: RigBundleHeader; objects: PartWeights[] } {
  const { header, blobs } = readBundle<RigBundleHeader>(path);
  const objects = header.objects.map((o, i) => ({ ...o, indices: blobs[2 * i] as Uint16Array, weights: blobs[2 * i + 1] as Float32Array }));
  return { header, objects };
}
