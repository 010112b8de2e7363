/**
 * The rigging pipeline, stage by stage: mesh/ (merge, clean, canonical frame) → skeleton/ (front-view render,
 * 2D landmarks, ray-midpoint lift) → skinning/ (solid voxelisation, geodesic weights, mapping to vertices; or the
 * learned network's point weights carried to the vertices). The geometric method is synchronous and pure; the learned
 * ones await onnxruntime. The server runs either in a worker thread so that cancel can stop it at once.
 */
import protocol from '../shared-schema/protocol.json' with { type: 'json' };
import { AutoRigError } from './errors.js';
import { rasterizeSampleCount } from './geometry/voxelGrid.js';
import { findCanonicalFrame, pointToCanonical, toCanonical, usedBounds } from './mesh/canonicalFrame.js';
import { facingSource, frameFacing, type FacingHint } from './mesh/facingHint.js';
import type { CanonicalFrame } from './mesh/canonicalFrame.js';
import { bodyTriangles } from './mesh/debris.js';
import { meshShells } from './mesh/meshShells.js';
import { mergeParts } from './mesh/mergeParts.js';
import type { MergedMesh } from './mesh/mergeParts.js';
import { orientPiecesOutward } from './mesh/orientPieces.js';
import { estimateSkeleton, FRONT_VIEW_RESOLUTION, type SkeletonEstimate } from './skeleton/estimateSkeleton.js';
import { renderFrontView, type FrontView } from './skeleton/frontView.js';
import { liftJointsByFrontPiece } from './skeleton/liftJoints.js';
import { predictJoints2DOfBody } from './skeleton/learnedJoints2d.js';
import { MIXAMO_JOINTS, templateIndexOf } from './skeleton/mixamoTemplate.js';
import { refinedSkeleton, withRefinedDepth, type JointRaySpans } from './skeleton/refinedSkeleton.js';
import { modelPath } from './learned/modelFiles.js';
import { DEFAULT_METHOD, METHODS, type Method } from './methods.js';
import { loadModel, selectedProvider } from './learned/onnxSession.js';
import { learnedSkinning, learnedWeights, predictPointRigWhile } from './skinning/learnedSkinning.js';
import { mergeLockedWeights } from './skinning/lockedGroups.js';
import { SKIN_VOXEL_RESOLUTION, skinInVoxels } from './skinning/skinInVoxels.js';
import { propRodPieces } from './skinning/heldPropWeights.js';
import { legChains, type LegChain } from './skinning/skirtOnThighs.js';
import { limbJointBands } from './skinning/limbJointBands.js';
import { separateLimbs, skeletonLimbs, templateLimbs, type LimbChain } from './skinning/separateLimbs.js';
import { applySkinningRules, planSkinningRules, type HeldProps } from './skinning/skinningRules.js';
import { solidVoxelisation } from './skinning/solidVoxelisation.js';
import { carryStencilToVoxels } from './skinning/carryPointWeights.js';
import { templateJointSlots, templateJointsInCanonical } from './skinning/templateJoints.js';
import type { SkinBone } from './skinning/voxelBoneWeights.js';
import { facingHintOf, hintedFacingSource } from './skeleton/skeletonFacing.js';
import type { LockedGroup, MeshPart, PartWeights, ProgressFn, RigOptions, RigResult, Skeleton, SkeletonFacingSource, SkinResult } from './types.js';

export const INFLUENCES = 4;
/**
 * point_rig's clouds for the hybrid skeleton's depth when the weights are the voxel skinning's (a rig request): one,
 * as Apply Latent Pose's auto-rig draws (POSE_SKIN_STAGE), so both paths give a mesh the same skeleton (a mesh that
 * Apply Latent Pose reads through a reduced copy, pose/poseProxy: the clouds are drawn from the mesh itself, the front
 * view is the copy's; on procedural humanoids the joints agreed within 0.04 % of height at 50k vertices, 0.21 % at 80k).
 */
export const HYBRID_DEPTH_CLOUDS = 1;

/**
 * The most points the surface may take to voxelise on the skinning grid (rasterizeSampleCount), the pipeline's
 * costliest pass over the surface: the front view and the frame's coarser grid cost the same or less per triangle.
 * A mesh at the vertex and triangle limits made of small triangles needs about 2·10^7; the dev characters about 10^5.
 * Beyond it (hundreds of thousands of large triangles stacked over each other) the work would run into minutes.
 */
export const MAX_SURFACE_SAMPLES = 100_000_000;

export { DEFAULT_METHOD, METHODS, type Method } from './methods.js';

/**
 * rig with any method: the learned methods run ONNX models (asynchronous), the geometric one is rigCharacter.
 * learned: 2D joints from joints2d.onnx, lifted to 3D, refined by point_rig.onnx, which also gives the weights
 * (learnedSkinning.ts); needs both models. hybrid: the hybrid 2D joints (estimateSkeleton) lifted by the rays, the
 * trunk and leg joints then at point_rig's refined depth (withRefinedDepth), and the geometric voxel skinning; needs
 * both models. A missing model is answered with MODEL_MISSING, never a quiet fallback.
 */
export async function rigCharacterAsync(parts: MeshPart[], options: RigOptions = {}, onProgress: ProgressFn = () => {}): Promise<RigResult> {
  const method = checkMethod(options);
  if (method === 'geometric') return rigCharacter(parts, options, onProgress);
  // The models load before any work, so that a missing one is answered at once.
  await loadModel(modelPath('joints2d'));
  await loadModel(modelPath('pointRig'));
  return rigPreparedAsync(parts, prepareMesh(parts, onProgress, undefined, true, optionFacing(options)), options, onProgress);
}

/**
 * rigPreparedAsync: rigCharacterAsync from the skeleton stage on, for a caller that has prepared the mesh already
 * (prepareMesh of the same parts: Apply Latent Pose reads the mesh's shape in that frame too). Any method.
 * skin: SkinStage (default: the method's own skinning on SKIN_VOXEL_RESOLUTION voxels; Apply Latent Pose asks for
 * fewer voxels and the learned weights on the hybrid skeleton); the learned method's skinning has no grid.
 */
export async function rigPreparedAsync(
  parts: MeshPart[], prepared: PreparedMesh, options: RigOptions = {}, onProgress: ProgressFn = () => {}, skin: SkinStage = {},
): Promise<RigResult> {
  const method = checkMethod(options);
  if (method === 'geometric') return rigPrepared(parts, prepared, options, onProgress);
  const skinResolution = skin.resolution ?? SKIN_VOXEL_RESOLUTION;
  const t0 = performance.now();
  const joints2d = await loadModel(modelPath('joints2d'));
  // both methods read point_rig: the learned one for its joints and weights, the hybrid one for its joints' depth
  const pointRig = await loadModel(modelPath('pointRig'));
  const { mesh, body, cf, canonical } = prepared;
  onProgress('skeleton', 0.1);
  const view = renderFrontView(canonical, body, FRONT_VIEW_RESOLUTION);
  // a body the view shows small (under a tall hat) is looked at again, zoomed
  const prediction = await predictJoints2DOfBody(joints2d, canonical, body, view);
  const prefix = options.prefix ?? true;
  const estimate = estimateSkeleton(canonical, body, cf, prefix, { method, prediction }, view, prepared.shells);
  const coarse = canonicalJoints(estimate);
  let skeleton: Skeleton;
  let objects: PartWeights[];
  if (method === 'hybrid' && skin.learnedWeights) {
    // the network's weights, then the rules the voxel skinning keeps
    onProgress('skinning', 0.2);
    // what needs neither the weights nor the final skeleton, made while the network runs: on the model host's thread
    // it leaves this one idle for longer than the solid and the carry's stencil (which reads the clouds) take
    const cloudSurface = skin.cloudSurface ?? { canonical, triangles: mesh.triangles };
    const { prediction, during } = await predictPointRigWhile(pointRig, cloudSurface.canonical, cloudSurface.triangles, coarse, { clouds: skin.clouds }, (clouds) => {
      const solid = solidVoxelisation(canonical, mesh.triangles, skinResolution);
      return {
        spans: jointRaySpans(prepared, view, coarse),
        pieceOf: propRodPieces(canonical, view, estimate.silhouette),
        solid,
        stencil: skin.carry === 'voxels' ? carryStencilToVoxels(canonical, mesh.triangles, clouds, { solid }) : undefined,
      };
    });
    const { solid, stencil } = during;
    const learned = learnedWeights(prediction, canonical, mesh.triangles, coarse, {
      influences: INFLUENCES, solid, carry: skin.carry, sharpen: skin.sharpen, stencil,
      onProgress: (f) => onProgress('skinning', 0.2 + 0.7 * f),
    });
    const all = { indices: learned.indices, weights: learned.weights };
    // the front view gives a joint's x and y; its depth, the midpoint of a ray's first and last hit, sits behind the
    // truth on the trunk and legs: the network's depth places those, and the limbs' bands follow the joints that will
    // bend them
    const joints = withRefinedDepth(coarse, learned.refinedJoints, during.spans, estimate.landmarks?.unseenArms, estimate.armsPosedApart, estimate.wristsBehindHeld);
    skeleton = refinedSkeleton(estimate, joints, cf, prefix);
    keepLimbBlends(canonical, joints, all);
    // the rules read the final skeleton, as the voxel skinning does: read off the front view's, a cape's solid behind
    // the legs was measured from leg bones the ray midpoints had put inside the cape (procedural 9 300 006's knees
    // erred 0.124 % of height against 0.061: docs/EVAL.md, twenty-sixth session)
    const { bones, legs, hands } = skinBones(skeleton, cf);
    const plan = planSkinningRules(canonical, mesh.triangles, solid.grid, solid.solid, bones, legs, prepared.shells);
    const props: HeldProps | undefined = hands.length > 0 ? { hands, pieceOf: during.pieceOf } : undefined;
    applySkinningRules(canonical, solid.grid, solid.solid, bones, INFLUENCES, all, plan, props);
    objects = partWeights(parts, mesh, skeleton, all, []);
  } else if (method === 'learned') {
    onProgress('skinning', 0.2);
    const learned = await learnedSkinning(pointRig, canonical, mesh.triangles, coarse, {
      influences: INFLUENCES,
      onProgress: (f) => onProgress('skinning', 0.2 + 0.8 * f),
    });
    keepLimbBlends(canonical, learned.refinedJoints, learned);
    skeleton = refinedSkeleton(estimate, learned.refinedJoints, cf, prefix);
    objects = partWeights(parts, mesh, skeleton, { indices: learned.indices, weights: learned.weights }, []);
  } else {
    // the hybrid skeleton: the front view's x and y, the network's depth on the trunk and legs (withRefinedDepth), as
    // Apply Latent Pose's auto-rig places it, from a cloud drawn as that one's (a mesh gets one skeleton on both paths);
    // the joints' ray spans are made while the network runs
    const { prediction, during: spans } = await predictPointRigWhile(
      pointRig, canonical, mesh.triangles, coarse, { clouds: HYBRID_DEPTH_CLOUDS }, () => jointRaySpans(prepared, view, coarse),
    );
    skeleton = refinedSkeleton(estimate, withRefinedDepth(coarse, prediction.refinedJoints, spans, estimate.landmarks?.unseenArms, estimate.armsPosedApart, estimate.wristsBehindHeld), cf, prefix);
    onProgress('skinning', 0.25);
    objects = skinParts(parts, prepared, skeleton, [], (f) => onProgress('skinning', 0.25 + 0.75 * f), () => propRodPieces(canonical, view, estimate.silhouette), skinResolution);
  }
  return { skeleton, frame: cf.frame, facing: facingSource(cf), objects, seconds: (performance.now() - t0) / 1000, method, provider: selectedProvider().name };
}

/**
 * The rules every learned skinning's limbs keep: the network's blends can start well before a limb's joint
 * (limbJointBands.ts), and may reach from a hand to the thigh it rests on (separateLimbs.ts).
 * positions: canonical #V*3, joints: template heads #23*3 (MIXAMO_JOINTS order), weights: top-INFLUENCES rows indexing
 * MIXAMO_JOINTS, modified in place.
 */
function keepLimbBlends(positions: Float32Array, joints: Float32Array, weights: { indices: Uint16Array; weights: Float32Array }): void {
  limbJointBands(positions, joints, weights, INFLUENCES);
  separateLimbs(positions, weights, INFLUENCES, templateLimbs(joints));
}

/**
 * Each joint's ray along the viewing direction: its first and last hit on the body (liftJointsByFrontPiece, the lift's
 * own rays), NaN where it misses. prepared: the mesh, view: its front view, joints: canonical #J*3 → front, back #J each
 */
function jointRaySpans(prepared: PreparedMesh, view: FrontView, joints: Float32Array): JointRaySpans {
  const points = new Float64Array((joints.length / 3) * 2);
  for (let j = 0; j < joints.length / 3; j++) { points[2 * j] = joints[3 * j]; points[2 * j + 1] = joints[3 * j + 1]; }
  return liftJointsByFrontPiece(prepared.canonical, prepared.body, prepared.shells.shellOf, points, view);
}

/** The estimate's joint heads in the canonical frame, MIXAMO_JOINTS order: Float32Array #23*3. */
function canonicalJoints(estimate: SkeletonEstimate): Float32Array {
  const out = new Float32Array(MIXAMO_JOINTS.length * 3);
  MIXAMO_JOINTS.forEach((name, j) => out.set(estimate.canonical[name], 3 * j));
  return out;
}

/** rig: find the 22-joint Mixamo skeleton (+HeadTop_End) and top-4 weights for every vertex of every part. */
export function rigCharacter(parts: MeshPart[], options: RigOptions = {}, onProgress: ProgressFn = () => {}): RigResult {
  const t0 = performance.now();
  if (checkMethod(options, 'geometric') !== 'geometric') {
    throw new AutoRigError('BAD_REQUEST', `method "${options.method}" runs a model: call rigCharacterAsync`);
  }
  return rigPrepared(parts, prepareMesh(parts, onProgress, undefined, true, optionFacing(options)), options, onProgress, t0);
}

/** A rig request's options.facing as prepareMesh's hint (the caller's), or undefined. */
function optionFacing(options: RigOptions): FacingHint | undefined {
  return options.facing ? { direction: options.facing, source: 'option' } : undefined;
}

/** rigCharacter from the skeleton stage on, for a mesh prepareMesh has prepared (geometric method). */
function rigPrepared(parts: MeshPart[], prepared: PreparedMesh, options: RigOptions, onProgress: ProgressFn, t0 = performance.now()): RigResult {
  const { body, cf, canonical } = prepared;
  onProgress('skeleton', 0.1);
  const view = renderFrontView(canonical, body, FRONT_VIEW_RESOLUTION);
  const { skeleton, silhouette } = estimateSkeleton(canonical, body, cf, options.prefix ?? true, { method: 'geometric' }, view, prepared.shells);
  onProgress('skinning', 0.25);
  const rods = () => propRodPieces(canonical, view, silhouette);
  const objects = skinParts(parts, prepared, skeleton, [], (f) => onProgress('skinning', 0.25 + 0.75 * f), rods);
  return { skeleton, frame: cf.frame, facing: facingSource(cf), objects, seconds: (performance.now() - t0) / 1000, method: 'geometric' };
}

/**
 * skin with any method. geometric: skinCharacter. learned: point_rig.onnx's weights for the user's skeleton, which must
 * be our 23-joint Mixamo template (templateJoints.ts; its joints are the network's input as they are, not refined);
 * BAD_REQUEST for any other skeleton, MODEL_MISSING without the model. hybrid chooses how rig finds joints and has no
 * skinning of its own: BAD_REQUEST.
 */
export async function skinCharacterAsync(
  parts: MeshPart[],
  skeleton: Skeleton,
  locked: LockedGroup[] = [],
  options: RigOptions = {},
  onProgress: ProgressFn = () => {},
): Promise<SkinResult> {
  const method = checkMethod(options, 'geometric');
  if (method === 'geometric') return { ...skinCharacter(parts, skeleton, locked, options, onProgress), method };
  if (method === 'hybrid') {
    throw new AutoRigError('BAD_REQUEST', 'method "hybrid" only chooses how rig finds the joints; skin with "geometric" or "learned"');
  }
  const t0 = performance.now();
  checkSkeleton(skeleton);
  const slots = templateJointSlots(skeleton);
  const session = await loadModel(modelPath('pointRig'));
  const { prepared: { mesh, cf, canonical }, facing } = preparedForSkeleton(parts, skeleton, options, onProgress, () => checkLocked(parts, skeleton, locked));
  onProgress('skinning', 0.1);
  const joints = templateJointsInCanonical(skeleton, slots, cf);
  const learned = await learnedSkinning(session, canonical, mesh.triangles, joints, {
    influences: INFLUENCES,
    onProgress: (f) => onProgress('skinning', 0.1 + 0.9 * f),
  });
  keepLimbBlends(canonical, joints, learned);
  // The network's joints are the template's; the result indexes the user's skeleton. HeadTop_End is never weighted, so
  // a skeleton without it loses nothing (an unused slot keeps index 0 with weight 0).
  const indices = learned.indices.map((t, i) => (learned.weights[i] > 0 ? slots[t] : 0));
  const objects = partWeights(parts, mesh, skeleton, { indices, weights: learned.weights }, locked);
  return { skeleton, objects, facing, forward: [...cf.frame.forward], seconds: (performance.now() - t0) / 1000, method, provider: selectedProvider().name };
}

/** skin: weights for a skeleton the user supplies; locked groups keep their weights, the rest renormalise around them. */
export function skinCharacter(
  parts: MeshPart[],
  skeleton: Skeleton,
  locked: LockedGroup[] = [],
  options: RigOptions = {},
  onProgress: ProgressFn = () => {},
): SkinResult {
  const t0 = performance.now();
  if (checkMethod(options, 'geometric') !== 'geometric') {
    throw new AutoRigError('BAD_REQUEST', `method "${options.method}" runs a model: call skinCharacterAsync`);
  }
  checkSkeleton(skeleton);
  const { prepared, facing } = preparedForSkeleton(parts, skeleton, options, onProgress, () => checkLocked(parts, skeleton, locked));
  const { body, canonical } = prepared;
  onProgress('skinning', 0.1);
  const rods = () => propRodPieces(canonical, renderFrontView(canonical, body, FRONT_VIEW_RESOLUTION));
  const objects = skinParts(parts, prepared, skeleton, locked, (f) => onProgress('skinning', 0.1 + 0.9 * f), rods);
  return { skeleton, objects, facing, forward: [...prepared.cf.frame.forward], seconds: (performance.now() - t0) / 1000 };
}

/**
 * preparedForSkeleton: prepareMesh for a request that brings the character's skeleton (skin): the frame faces as the
 * skeleton's sides say when it is Mixamo-named, else as options.facing says, else as the shape does
 * (skeleton/skeletonFacing), so that the user's armature is skinned in the frame it was rigged in. → the prepared
 * mesh and how its frame faces. Throws what prepareMesh throws (a skeleton or a facing option along the mesh's up).
 */
function preparedForSkeleton(
  parts: MeshPart[], skeleton: Skeleton, options: RigOptions, onProgress: ProgressFn, checkInput: () => void,
): { prepared: PreparedMesh; facing: SkeletonFacingSource } {
  const hint = facingHintOf(skeleton, options.facing);
  const prepared = prepareMesh(parts, onProgress, checkInput, true, hint);
  return { prepared, facing: hintedFacingSource(prepared.cf, hint) };
}

/**
 * How rigPreparedAsync skins, for callers inside the sidecar (a request cannot ask for it): resolution, the voxel
 * skinning's voxels along the longest side (default SKIN_VOXEL_RESOLUTION); learnedWeights, with the hybrid method,
 * the learned network's weights for the hybrid skeleton (not refined), with the voxel skinning's rules for clothes,
 * closed pieces and held props (skinningRules.ts) on a solid of `resolution`; clouds, the network's clouds
 * (default POINT_RIG_CLOUDS); carry and sharpen, how the learned weights reach the vertices (learnedSkinning's
 * options of those names).
 */
export interface SkinStage {
  resolution?: number;
  learnedWeights?: boolean;
  clouds?: number;
  carry?: 'vertices' | 'voxels';
  sharpen?: number;
  /**
   * with learnedWeights, the surface the network's clouds are drawn from when the prepared mesh is a reduced copy of
   * it (pose/poseProxy): canonical positions #V*3 in the prepared mesh's frame and triangles #T*3. The trunk's depth
   * follows the cloud the network reads (withRefinedDepth): drawn from the copy, a spine leaned 2-3° more on a
   * procedural humanoid and its spine twist erred twice as much (docs/EVAL.md, thirty-second session). Default: the
   * prepared mesh.
   */
  cloudSurface?: { canonical: Float32Array; triangles: Uint32Array };
}

/** A mesh ready for the skeleton stage: the parts merged, the body's triangles, its canonical frame and the mesh in it. */
export interface PreparedMesh {
  /** the parts merged (mergeParts), each piece wound inside out turned (mesh/orientPieces) */
  mesh: MergedMesh;
  /** triangle indices of the body (debris left out): Uint32Array #B*3 */
  body: Uint32Array;
  /** the merged mesh's pieces (meshShells): shellOf #V, count */
  shells: { shellOf: Int32Array; count: number };
  cf: CanonicalFrame;
  /** the merged positions in the canonical frame: Float32Array #V*3 */
  canonical: Float32Array;
}

/**
 * prepareMesh: the first stages of every job: merge the parts (progress 'mesh'), bound the work, run `checkInput`
 * (checks that need the merged mesh to have passed), turn the pieces wound inside out, then the canonical frame
 * (progress 'frame'). The frame and the skeleton are read from the body alone; debris scattered around it is skinned
 * with the rest.
 * parts: MeshPart[], voxelised: whether the job will voxelise the mesh (default true: then TOO_LARGE bounds the work),
 * facing: what turns the frame found (RigOptions.facing, a skeleton's sides: mesh/facingHint frameFacing)
 * → PreparedMesh. Throws the mesh errors of mergeParts, TOO_LARGE (checkSurfaceWork), what checkInput,
 * findCanonicalFrame and frameFacing throw.
 */
export function prepareMesh(
  parts: MeshPart[], onProgress: ProgressFn = () => {}, checkInput: () => void = () => {}, voxelised = true, facing?: FacingHint | null,
): PreparedMesh {
  onProgress('mesh', 0);
  const merged = mergeParts(parts);
  // the bound is the voxel skinning's: a caller that will not voxelise (a pose through a given rig) skips it
  if (voxelised) checkSurfaceWork(merged);
  checkInput();
  onProgress('frame', 0.05);
  const shells = meshShells(merged.positions, merged.triangles);
  // every stage reads the surface wound outward: what reads the winding (point_rig's normals, the SDF's sign) sees a
  // mirrored object or a clockwise export as the same surface (mesh/orientPieces)
  const mesh = { ...merged, triangles: orientPiecesOutward(merged.positions, merged.triangles, shells) };
  const body = bodyTriangles(mesh.positions, mesh.triangles, shells);
  const found = findCanonicalFrame(mesh.positions, body);
  const cf = facing ? frameFacing(found, facing.direction, facing.source) : found;
  return { mesh, body, shells, cf, canonical: toCanonical(mesh.positions, cf) };
}

/**
 * meshInFrame: what prepareMesh gives for parts whose canonical frame is known already (prepareMesh found it for these
 * same parts before: an earlier apply's), without looking for it again, which is most of a reused apply's time (50k
 * vertices: 34-53 ms of 50-80). parts: MeshPart[], cf: their CanonicalFrame → the merged mesh, cf and the canonical
 * positions (Float32Array #V*3), the arrays prepareMesh gives. Throws the mesh errors of mergeParts.
 */
export function meshInFrame(parts: MeshPart[], cf: CanonicalFrame, onProgress: ProgressFn = () => {}): Pick<PreparedMesh, 'mesh' | 'cf' | 'canonical'> {
  onProgress('mesh', 0);
  const mesh = mergeParts(parts);
  onProgress('frame', 0.05);
  return { mesh, cf, canonical: toCanonical(mesh.positions, cf) };
}

/** Locked groups must name an object, have one weight per vertex of it, and name a bone of the skeleton. */
function checkLocked(parts: MeshPart[], skeleton: Skeleton, locked: LockedGroup[]): void {
  for (const l of locked) {
    if (l.object >= parts.length) throw new AutoRigError('BAD_INDEX', `locked group "${l.bone}" names object ${l.object}, but there are ${parts.length}`);
    if (l.weights.length !== parts[l.object].positions.length / 3) throw new AutoRigError('BAD_ARRAY', `locked group "${l.bone}" has ${l.weights.length} weights for ${parts[l.object].positions.length / 3} vertices`);
    if (!skeleton.joints.some((j) => j.name === l.bone)) throw new AutoRigError('BAD_SKELETON', `locked group "${l.bone}" is not a bone of the skeleton`);
  }
}

/** Leaves such as Mixamo's HeadTop_End mark where a chain ends; they carry no weight. */
export function isDeformingJoint(name: string): boolean {
  return !/_?end$/i.test(name);
}

/**
 * The geometric voxel skinning (skinInVoxels, at `resolution`) of the whole prepared mesh (its pieces as prepareMesh
 * found them), then split into parts (partWeights).
 * rods: each vertex's standing-rod piece (propRodPieces), asked for only when the skeleton has hands to hold them.
 */
function skinParts(
  parts: MeshPart[], prepared: PreparedMesh, skeleton: Skeleton,
  locked: LockedGroup[], onProgress: (f: number) => void, rods: () => Int32Array, resolution = SKIN_VOXEL_RESOLUTION,
): PartWeights[] {
  const { mesh, canonical, cf, shells } = prepared;
  const { bones, legs, hands, limbs, midline } = skinBones(skeleton, cf);
  const props = hands.length > 0 ? { hands, pieceOf: rods() } : undefined;
  const weights = skinInVoxels(canonical, mesh.triangles, bones, INFLUENCES, onProgress, resolution, legs, props, shells, midline);
  // a hand that rests on a thigh is a voxel or two from it: the geodesics can blend across (separateLimbs.ts)
  separateLimbs(canonical, weights, INFLUENCES, limbs);
  return partWeights(parts, mesh, skeleton, weights, locked);
}

/**
 * The skeleton as the skinning reads it: its bones in the canonical frame, the two legs' chains (legChains; none when
 * the names are not Mixamo's) and the hand bones (by template name).
 */
function skinBones(skeleton: Skeleton, cf: CanonicalFrame): { bones: SkinBone[]; legs: LegChain[]; hands: number[]; limbs: LimbChain[]; midline: number } {
  const bones: SkinBone[] = skeleton.joints.map((j) => ({
    head: pointToCanonical(j.head, cf),
    tail: pointToCanonical(j.tail, cf),
    parent: j.parent,
    deform: isDeformingJoint(j.name),
  }));
  // each bone's template name is read once: the lookups below asked a closure that parsed the joint's name on every
  // call (~460 calls per rig), which V8 compiled again every other apply (--trace-opt); legChains still takes a
  // function, now one that only reads the list
  const names = templateNames(skeleton);
  const nameOf = (b: number) => names[b];
  const hands: number[] = [];
  for (let b = 0; b < bones.length; b++) if (names[b] === 'LeftHand' || names[b] === 'RightHand') hands.push(b);
  // the body's midplane is the Hips' (the skeleton is mirrored about it), not the canonical box's centre, which arms
  // posed apart move off it; a skeleton without a Hips keeps the box's
  const hips = names.indexOf('Hips');
  const midline = hips >= 0 ? bones[hips].head[0] : 0;
  return { bones, legs: legChains(bones, nameOf), hands, limbs: skeletonLimbs(bones, nameOf), midline };
}

/** Each joint's Mixamo template name (templateIndexOf), or null for a joint not in the template: #joints. */
function templateNames(skeleton: Skeleton): (string | null)[] {
  const names: (string | null)[] = [];
  for (const j of skeleton.joints) {
    const slot = templateIndexOf(j.name);
    names.push(slot >= 0 ? MIXAMO_JOINTS[slot] : null);
  }
  return names;
}

/**
 * Top-k weights of the merged mesh (indices into skeleton.joints, #V*k each) → one PartWeights per part, the locked
 * groups of each part merged in (lockedGroups.ts).
 */
function partWeights(
  parts: MeshPart[], mesh: MergedMesh, skeleton: Skeleton, all: { indices: Uint16Array; weights: Float32Array }, locked: LockedGroup[],
): PartWeights[] {
  return parts.map((p, pi) => {
    const v0 = mesh.partOffsets[pi], v1 = mesh.partOffsets[pi + 1];
    let w: { indices: Uint16Array; weights: Float32Array } = { indices: all.indices.slice(v0 * INFLUENCES, v1 * INFLUENCES), weights: all.weights.slice(v0 * INFLUENCES, v1 * INFLUENCES) };
    const mine = locked.filter((l) => l.object === pi);
    if (mine.length) {
      const byBone = new Map<number, Float32Array>();
      for (const l of mine) byBone.set(skeleton.joints.findIndex((j) => j.name === l.bone), l.weights);
      w = mergeLockedWeights(w, byBone, INFLUENCES);
    }
    return { name: p.name, influences: INFLUENCES, indices: w.indices, weights: w.weights };
  });
}

/**
 * Bounds the work of the passes over the surface: TOO_LARGE when voxelising it on the skinning grid would take more
 * than MAX_SURFACE_SAMPLES points. Counted in O(#T) without voxelising; scale-free (the grid follows the mesh's box).
 */
export function checkSurfaceWork(mesh: MergedMesh): void {
  const [min, max] = usedBounds(mesh.positions, mesh.triangles);
  const longest = Math.max(max[0] - min[0], max[1] - min[1], max[2] - min[2]);
  if (!(longest > 0)) return;
  const samples = rasterizeSampleCount(mesh.positions, mesh.triangles, longest / SKIN_VOXEL_RESOLUTION);
  if (samples > MAX_SURFACE_SAMPLES) {
    throw new AutoRigError('TOO_LARGE', `the surface is too large to voxelise: ${samples.toExponential(1)} samples, the limit is ${MAX_SURFACE_SAMPLES.toExponential(1)} (many large triangles stacked over each other)`);
  }
}

/** The method asked for, or `fallback` when none is named (rig: DEFAULT_METHOD; skin and the synchronous calls: geometric). */
function checkMethod(options: RigOptions, fallback: Method = DEFAULT_METHOD): Method {
  const method = options.method ?? fallback;
  if (!(METHODS as readonly string[]).includes(method)) {
    throw new AutoRigError('BAD_REQUEST', `unknown method "${method}"; available: ${METHODS.join(', ')}`);
  }
  return method as Method;
}

/**
 * A usable skeleton: at least one deforming joint and at most the protocol's maxJoints (the skinning's work grows
 * with the bones; the server refuses more with the same code), parents before children, finite end points.
 */
export function checkSkeleton(skeleton: Skeleton): void {
  const js = skeleton.joints;
  if (!js.length) throw new AutoRigError('BAD_SKELETON', 'the skeleton has no joints');
  if (js.length > protocol.limits.maxJoints) {
    throw new AutoRigError('TOO_LARGE', `the skeleton has ${js.length} joints; the limit is ${protocol.limits.maxJoints}`);
  }
  js.forEach((j, i) => {
    if (!(j.parent === -1 || (Number.isInteger(j.parent) && j.parent >= 0 && j.parent < i))) {
      throw new AutoRigError('BAD_SKELETON', `joint "${j.name}" has parent ${j.parent}; parents must come before their children`);
    }
    if (![...j.head, ...j.tail, j.roll].every(Number.isFinite)) throw new AutoRigError('BAD_NUMBER', `joint "${j.name}" has a NaN or infinite coordinate`);
  });
  if (!js.some((j) => isDeformingJoint(j.name))) throw new AutoRigError('BAD_SKELETON', 'the skeleton has no deforming joint');
}
