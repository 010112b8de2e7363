/**
 * Data shapes shared by the pipeline stages, the server and the CLI.
 * Geometry is plain typed arrays (libigl style): positions #V*3 (f32), triangles #T*3 (u32).
 */
export type Vec3 = [number, number, number];

/** One mesh object of a character, in the client's world space (metres). */
export interface MeshPart {
  name: string;
  /** positions: Float32Array, #V*3 */
  positions: Float32Array;
  /** triangles: Uint32Array, #T*3 indices into this part's positions */
  triangles: Uint32Array;
}

/** A bone: head/tail end points in the input's space, roll in radians (Blender's edit-bone convention). */
export interface Joint {
  name: string;
  /** index of the parent joint in Skeleton.joints, -1 for the root; parents precede children */
  parent: number;
  head: Vec3;
  tail: Vec3;
  roll: number;
}

export interface Skeleton {
  joints: Joint[];
}

/** The character's own frame, found from the geometry: unit vectors in the input's space. */
export interface Frame {
  up: Vec3;
  forward: Vec3;
  /** the character's own left */
  left: Vec3;
}

/** Skinning weights of one part: top-k indices #V*k (into Skeleton.joints) + values #V*k, rows sum to 1. */
export interface PartWeights {
  name: string;
  influences: number;
  indices: Uint16Array;
  weights: Float32Array;
}

/** Weights the user locked in Blender: kept as they are, the other bones are renormalised around them. */
export interface LockedGroup {
  /** index into the parts array */
  object: number;
  /** bone (vertex group) name */
  bone: string;
  /** weights: Float32Array, #V of that part */
  weights: Float32Array;
}

export interface RigOptions {
  /** prefix bone names with `mixamorig:` (default true) */
  prefix?: boolean;
  /** pipeline variant: "geometric" (default), "learned" or "hybrid" (pipeline.ts METHODS) */
  method?: string;
  /**
   * the direction the character faces, in the input's space, where the user knows it better than the shape tells:
   * the frame's forward becomes the nearest of its four horizontal directions (mesh/facingHint). skin reads it only
   * when the skeleton's sides do not say (skeleton/skeletonFacing)
   */
  facing?: Vec3;
}

/** How a frame's forward was decided: the feet cue, the file conventions (the cue undecided), or the caller's hint. */
export type FacingSource = 'shape' | 'convention' | 'option';
/** How the frame of a request that may bring a skeleton faces (pose.apply, skin): as a rig's, or as the skeleton's sides say ('rig'). */
export type SkeletonFacingSource = FacingSource | 'rig';

export interface RigResult {
  skeleton: Skeleton;
  frame: Frame;
  /** how frame.forward was decided */
  facing: FacingSource;
  objects: PartWeights[];
  seconds: number;
  /** the method that ran */
  method?: string;
  /** the onnxruntime execution provider that ran the models (learned methods only) */
  provider?: string;
}

export interface SkinResult {
  skeleton: Skeleton;
  objects: PartWeights[];
  /** how the frame the weights were made in faces: the skeleton's sides ('rig'), options.facing, the shape or the convention */
  facing: SkeletonFacingSource;
  /** the direction the character was taken to face, unit, in the input's space */
  forward: Vec3;
  seconds: number;
  /** the skinning method that ran */
  method?: string;
  /** the onnxruntime execution provider that ran the model (learned skinning only) */
  provider?: string;
}

/** Progress callback: stage name and fraction of the whole job in [0, 1]. */
export type ProgressFn = (stage: string, fraction: number) => void;
