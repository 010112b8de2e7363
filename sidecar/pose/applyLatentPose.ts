/**
 * Apply Latent Pose (issue 6, LatentReRig, v2 "rig-structured decoder"): any character mesh, rigged or not, any
 * topology → its vertices in a named pose of the vocabulary.
 *
 * mesh → canonical frame (mesh/canonicalFrame) → SDF samples (pose/sdfSamples) → encoder → μ_source; the pose's
 * latent delta Δμ from the library (mean over training identities, or the nearest identity's), always the
 * skinningCorrective variant's: the decoder was conditioned on it alone, the variant only picks the blend. The
 * character's own auto-rig (the default method's skeleton, the learned weights: POSE_SKIN_STAGE) gives the skeleton
 * and the weights, unless the caller brings the mesh's rig; the decoder
 * (μ_source, Δμ/|Δμ|, |Δμ|) → each template joint's rotation in its bone frame (pose/jointFrames); those rotations,
 * scaled by the strength, pose the rest mesh through the rig (pose/posedByRig: LBS, DQS, or the corrective alone), and
 * the displacement goes back to the character's space. The strength scales every joint's angle, not |Δμ|: the decoder
 * only ever saw full-strength poses, so a |Δμ| it never met would be an extrapolation of the network, where a fraction
 * of its rotations is a real partial pose, exact at 0 and 1. The output has the input's vertices, in count and order,
 * per part. Without a rig, the SDF samples are drawn on a helper thread (pose/sdfSamplesBeside) while the auto-rig
 * runs, and the canonical frame is found once for both (pipeline prepareMesh); an apply that reuses an earlier one's
 * rig (options.reuse, or a rig given with it) takes that apply's frame too. The frame faces as a given rig's left and
 * right say, else as options.facing says, else as the shape does (skeleton/skeletonFacing); what one apply leaves for the next
 * serves only an apply that faces the same way. A mesh over POSE_PROXY_ABOVE vertices is
 * read (frame, SDF samples) and auto-rigged through a reduced copy (pose/poseProxy), whose weights are carried back to
 * every vertex; the pose is applied to the mesh itself.
 */
import { POSE_SDF_SAMPLES, POSE_VARIANTS, type PoseVariant } from '../data/poses/poseSample.js';
import { AutoRigError } from '../errors.js';
import { modelDataPath, modelPath, requireModelFile } from '../learned/modelFiles.js';
import { loadModel, runModel, selectedProvider, type ModelSession } from '../learned/onnxSession.js';
import { modelsRunByPose } from '../methods.js';
import type { CanonicalFrame } from '../mesh/canonicalFrame.js';
import { toCanonical } from '../mesh/canonicalFrame.js';
import { mergeParts, type MergedMesh } from '../mesh/mergeParts.js';
import { orientPiecesOutward } from '../mesh/orientPieces.js';
import { HYBRID_DEPTH_CLOUDS, meshInFrame, prepareMesh, rigPreparedAsync, type PreparedMesh, type SkinStage } from '../pipeline.js';
import { MIXAMO_JOINTS } from '../skeleton/mixamoTemplate.js';
import type { MeshPart, SkeletonFacingSource, ProgressFn, RigResult, Skeleton, Vec3 } from '../types.js';
import { APPLIED_VARIANT, latentDelta, POSE_STRATEGIES, readPoseLibrary, type PoseStrategy } from './poseLibrary.js';
import { posedByRig } from './posedByRig.js';
import type { FacingHint } from '../mesh/facingHint.js';
import { facingHintOf, hintedFacingSource, sameFacingHint } from '../skeleton/skeletonFacing.js';
import { reuseHolds } from './reuseHolds.js';
import { POSE_PROXY_ABOVE, poseProxyOf, rigCarriedToMesh, type PoseProxy } from './poseProxy.js';
import { correctiveShareOf } from './correctiveShare.js';
import { keepPoseJoints } from './keepPoseJoints.js';
import { isPoseName, MAX_POSE_STRENGTH } from './poseVocabulary.js';
import { sdfSamples, type SdfSamples } from './sdfSamples.js';
import { sdfSamplesBeside } from './sdfSamplesBeside.js';
import { checkTemplateJoints, templateRig } from './templateRig.js';

export { APPLIED_VARIANT, POSE_STRATEGIES, type PoseStrategy } from './poseLibrary.js';

/** Seed of the apply path's SDF samples: fixed, so one mesh always gets one answer. */
const SDF_SEED = 1;

/**
 * The auto-rig's grid on the apply path (voxels along the longest side; a rig request uses SKIN_VOXEL_RESOLUTION,
 * 112): the learned weights are carried through it, and the rules for clothes and pieces read it. Chosen coarser
 * when the apply path still skinned by voxel geodesics, whose cost it set (42k vertices, warm: 190 ms at 112, 105 at
 * 80, 60 at 64; `autorig eval poses`: mean latent error 0.773 % of height at 112, 0.776 at 80, 0.797 at 64).
 */
export const POSE_SKIN_VOXEL_RESOLUTION = 80;

/**
 * How the apply path's auto-rig skins (pipeline SkinStage): the hybrid skeleton, the rig request's own, its trunk and
 * legs at the network's refined depth (withRefinedDepth: on the development set's procedural humanoids mean S 0.184 →
 * 0.159 % of height, on the test identities latent 0.313 → 0.301 %; docs/EVAL.md, twenty-fifth and twenty-sixth
 * sessions) with the learned network's weights
 * (point_rig.onnx on one cloud of points, carried through the voxels of a POSE_SKIN_VOXEL_RESOLUTION grid, sharpened
 * by squaring: skinning/sharpenWeights, whose exponent the artist dev set chose) and the voxel skinning's rules for
 * clothes, pieces and held props on that grid. The corrective a pose carries is a matter of weights (docs/EVAL.md,
 * diagnostics of 2026-12-01: our skeleton with the true weights erred 0.0074 % of height, with ours 0.0594).
 * `autorig eval poses` on the 13 test identities (docs/EVAL.md, seventh and eighth runs): with the voxel weights,
 * latent error 0.632 % of height and the corrective alone below no motion at 15 poses of 34; learned weights 0.406
 * and 22; sharpened 0.425 and 31. One cloud gives the same eval as two (0.410 both) for half the network's time; the
 * carry through voxels the same as to each vertex, in a time that follows the grid, not the vertex count.
 */
export const POSE_SKIN_STAGE: SkinStage = {
  // the rig request's cloud count for its depth: both paths give a mesh the same skeleton
  resolution: POSE_SKIN_VOXEL_RESOLUTION, learnedWeights: true, clouds: HYBRID_DEPTH_CLOUDS, carry: 'voxels', sharpen: 2,
};

export interface ApplyLatentPoseOptions {
  pose: string;
  /** 0 (rest) to 1.5; default 1 */
  strength?: number;
  /** default 'mean' */
  strategy?: PoseStrategy;
  /**
   * which blend poses the mesh (default APPLIED_VARIANT, what users get: DQS); the eval also asks for 'corrective'
   * (rest + DQS − LBS, the corrective alone) and 'skinning' (LBS, the pose without it). Δμ is the same for all three.
   */
  variant?: PoseVariant;
  /**
   * the share of the DQS corrective in [0, 1] (LBS + s·(DQS − LBS)); default: 1 with a rig given (options.rig), else
   * the pose's own from models/latent_pose_corrective_share.json (pose/correctiveShare; 1 without it), the auto-rig's
   * (made here or reused). The share fit asks for 1.
   */
  correctiveShare?: number;
  /**
   * the character's rig, when the caller has one already (the eval rigs each test identity once for all its poses):
   * a skeleton with every template joint and one PartWeights per part, in the parts' space. Default: auto-rig the parts.
   */
  rig?: Pick<RigResult, 'skeleton' | 'objects'>;
  /**
   * μ of these same parts as latentOfParts answers it, when the caller has it (the eval encodes each test identity
   * once for all its poses and variants). Default: encoded here. Bit for bit the same μ either way when latentOfParts
   * was given this rig's skeleton (a rig's sides turn the frame the μ is read in); a facing option reads another μ.
   */
  mu?: Float32Array;
  /**
   * what an earlier apply of these same parts left (its result's `reusable`): its μ, and its auto-rig when it made one.
   * A server keeps it per mesh, so that a user trying pose after pose on one character pays for the SDF samples, the
   * encoder and the auto-rig once. options.mu and options.rig, when given, win over it.
   */
  reuse?: LatentPoseReuse;
  /**
   * the direction the character faces, in the parts' space, where the user knows it better than the shape tells
   * (skeleton/skeletonFacing): the frame's forward becomes the nearest of its four directions across up, as a rig's facing
   * option does. Not read when options.rig is given: the rig's left and right decide then (unless they coincide).
   */
  facing?: Vec3;
}

/** What one apply can hand to the next apply of the same parts (a server's cache; structured-clone safe). */
export interface LatentPoseReuse {
  /** μ of the parts as latentOfParts reads it: Float32Array #latentSize */
  mu: Float32Array;
  /** the auto-rig of the parts (skeleton + one PartWeights per part, the parts' space); absent when a rig was given */
  autoRig?: Pick<RigResult, 'skeleton' | 'objects'>;
  /**
   * the parts' canonical frame (prepareMesh's): with a rig given or reused, the next apply takes it instead of finding
   * it again (pipeline meshInFrame). Absent in what older callers kept: the frame is then found.
   */
  frame?: CanonicalFrame;
  /**
   * the direction that turned that frame (skeleton/skeletonFacing: the rig's or the caller's facing), absent when the shape
   * decided. μ, auto-rig and frame were read in that frame: an apply whose own hint differs does not reuse them.
   */
  facingHint?: Vec3;
}

export interface LatentPoseResult {
  /** per input part, in order: its vertices posed, Float32Array #V*3 in the input's space, count and order */
  objects: { name: string; positions: Float32Array }[];
  pose: string;
  strength: number;
  strategy: PoseStrategy;
  /** the training identity whose delta was used (strategy 'nearest'), else null */
  identity: string | null;
  /** which rig posed the mesh: 'given' (options.rig, the caller's) or 'auto' (the auto-rig ran) */
  rig: 'given' | 'auto';
  /** whether options.reuse served μ or the auto-rig (nothing was sampled, encoded or rigged for it) */
  reused: boolean;
  /** how the frame's forward was decided: the shape, the file convention, the caller's facing, or the rig's sides */
  facing: SkeletonFacingSource;
  /** the direction the apply took the character to face, unit, in the input's space */
  forward: Vec3;
  /** what the next apply of these same parts may reuse (options.reuse); absent at strength 0, where nothing is read */
  reusable?: LatentPoseReuse;
  seconds: number;
  provider: string;
}

/** checkPoseOptions: the options with defaults, or BAD_REQUEST. */
export function checkPoseOptions(options: ApplyLatentPoseOptions): { pose: string; strength: number; strategy: PoseStrategy } {
  if (!isPoseName(options.pose)) {
    throw new AutoRigError('BAD_REQUEST', `unknown pose "${String(options.pose)}"; ask pose.list (or see autorig pose --help) for the poses`);
  }
  const strength = options.strength ?? 1;
  if (typeof strength !== 'number' || !Number.isFinite(strength) || strength < 0 || strength > MAX_POSE_STRENGTH) {
    throw new AutoRigError('BAD_REQUEST', `strength must be a number from 0 to ${MAX_POSE_STRENGTH}, got ${String(strength)}`);
  }
  const strategy = options.strategy ?? 'mean';
  if (!(POSE_STRATEGIES as readonly string[]).includes(strategy)) {
    throw new AutoRigError('BAD_REQUEST', `strategy must be one of ${POSE_STRATEGIES.join(', ')}, got "${String(strategy)}"`);
  }
  return { pose: options.pose, strength, strategy };
}

/**
 * applyLatentPose: parts (MeshPart[], any space, any topology) + options → LatentPoseResult.
 * Throws BAD_REQUEST (pose, strength, strategy, variant; a facing that is zero or within 30° of up; skeleton/skeletonFacing
 * and mesh/facingHint), BAD_SKELETON for a given rig that faces along the mesh's up, the mesh errors of mergeParts, TOO_LARGE (pipeline
 * checkSurfaceWork, as for a rig, when the auto-rig is to run), MODEL_MISSING / MODEL_FAILED,
 * what rigCharacterAsync throws (its models, a mesh it cannot rig; none of it with options.rig), BAD_SKELETON when the
 * rig lacks a template joint (a given rig: before any work), BAD_ARRAY when a given rig's weights do not fit the parts.
 */
export async function applyLatentPose(parts: MeshPart[], options: ApplyLatentPoseOptions, onProgress: ProgressFn = () => {}): Promise<LatentPoseResult> {
  const t0 = performance.now();
  const { pose, strength, strategy } = checkPoseOptions(options);
  const variant = options.variant ?? APPLIED_VARIANT;
  if (!(POSE_VARIANTS as readonly string[]).includes(variant)) throw new AutoRigError('BAD_REQUEST', `unknown variant "${String(variant)}"`);
  const rigGiven = options.rig !== undefined;
  // the shares were fitted for the auto-rig's weights (where they blend a joint unlike the truth's); a caller's own rig
  // (an artist's weights, a Mixamo rig) carries its corrective whole
  const share = options.correctiveShare ?? (rigGiven ? 1 : correctiveShareOf(pose));
  if (typeof share !== 'number' || !(share >= 0 && share <= 1)) throw new AutoRigError('BAD_REQUEST', `correctiveShare must be a number from 0 to 1, got ${String(share)}`);
  const library = readPoseLibrary(modelDataPath('latentPoseLibrary'));
  const hint = facingHintOf(options.rig?.skeleton, options.facing);
  const reuse = reuseFacing(options.reuse, hint);
  const shape = framedForPose(parts, { rig: options.rig, reuse }, hint, onProgress);
  const { cf, mesh, canonical } = shape;
  const result = (positions: (part: number) => Float32Array, identity: string | null, reusable?: LatentPoseReuse, reused = false): LatentPoseResult => ({
    objects: parts.map((part, k) => ({ name: part.name, positions: positions(k) })),
    pose, strength, strategy, identity, rig: rigGiven ? 'given' : 'auto', reused,
    facing: hintedFacingSource(cf, hint), forward: [...cf.frame.forward],
    ...(reusable ? { reusable } : {}), seconds: (performance.now() - t0) / 1000, provider: selectedProvider().name,
  });
  if (strength === 0) return result((k) => Float32Array.from(parts[k].positions), null);

  const { mu, rig, reusable, reused } = await readForPose(shape, { mu: options.mu, reuse }, library.latentSize, onProgress);
  // the decoder learned from skinningCorrective deltas only: every variant is conditioned on that one
  const { delta, identity } = latentDelta(library, pose, APPLIED_VARIANT, strategy, mu);
  let norm = 0;
  for (const x of delta) norm += x * x;
  norm = Math.sqrt(norm);
  const direction = norm > 0 ? delta.map((x) => x / norm) : delta;
  const { heads, weights } = templateRig(rig, cf, mesh.partOffsets);

  onProgress('decode', 0.85);
  const decoded = await runModel(await loadModel(modelPath('latentPoseDecoder')), {
    mu_source: { data: mu, dims: [1, mu.length] },
    delta_direction: { data: direction, dims: [1, direction.length] },
    delta_norm: { data: Float32Array.of(norm), dims: [1, 1] },
  });
  const local = decoded.local_rotations?.data as Float32Array | undefined;
  const J = MIXAMO_JOINTS.length;
  if (!local || local.length !== J * 3) throw new AutoRigError('MODEL_FAILED', `the decoder gave ${local ? local.length / 3 : 'no'} local rotations for ${J} joints`);
  if (!local.every(Number.isFinite)) throw new AutoRigError('MODEL_FAILED', 'the decoder gave a NaN or infinite rotation');

  onProgress('skin', 0.9);
  const posed = posedByRig(canonical, weights, heads, keepPoseJoints(local, pose), strength, variant, share);
  // canonical = s·R·(p − c), R's rows left, up, forward: a canonical displacement d is Rᵀd / s in the input's space
  const { left, up, forward } = cf.frame;
  const s = cf.scale;
  return result((k) => {
    const own = parts[k].positions;
    const out = new Float32Array(own.length);
    const base = 3 * mesh.partOffsets[k];
    for (let i = 0; i < own.length; i += 3) {
      const dx = posed[base + i] - canonical[base + i], dy = posed[base + i + 1] - canonical[base + i + 1], dz = posed[base + i + 2] - canonical[base + i + 2];
      out[i] = own[i] + (left[0] * dx + up[0] * dy + forward[0] * dz) / s;
      out[i + 1] = own[i + 1] + (left[1] * dx + up[1] * dy + forward[1] * dz) / s;
      out[i + 2] = own[i + 2] + (left[2] * dx + up[2] * dy + forward[2] * dz) / s;
    }
    return out;
  }, identity, reusable, reused);
}

/** A mesh in the apply's canonical frame, with what was made to find it (framedForPose). */
interface FramedForPose {
  /** the mesh to read and auto-rig, or null when nothing is to be read or rigged from it (a known frame stands) */
  work: PoseWorkMesh | null;
  cf: CanonicalFrame;
  /** the input's parts merged, and their positions in the frame #V*3: the mesh the pose is applied to */
  mesh: MergedMesh;
  canonical: Float32Array;
  /** the rig the apply poses through when it is not auto-rigged here: the caller's, or an earlier apply's */
  givenRig?: Pick<RigResult, 'skeleton' | 'objects'>;
  /** options.rig was given */
  rigGiven: boolean;
  /** what turned the frame (skeleton/skeletonFacing), or null: the shape decided */
  hint: FacingHint | null;
}

/**
 * reuseFacing: an earlier apply's reuse, or undefined when it was read in a frame turned otherwise than this apply's
 * hint turns it (its μ, auto-rig and frame would be another frame's).
 */
function reuseFacing(reuse: LatentPoseReuse | undefined, hint: FacingHint | null): LatentPoseReuse | undefined {
  return reuse && sameFacingHint(reuse.facingHint, hint?.direction) ? reuse : undefined;
}

/**
 * framedForPose: the parts in the apply's canonical frame. options: the apply's rig, mu and reuse. Checks every model
 * the apply runs (MODEL_MISSING; their sessions start loading) and a given rig's joints (BAD_SKELETON), then finds the
 * frame, or takes an earlier apply's when a rig is given or reused. Throws the mesh errors of mergeParts and what
 * prepareMesh throws (TOO_LARGE when the auto-rig is to run).
 */
function framedForPose(
  parts: MeshPart[], options: Pick<ApplyLatentPoseOptions, 'rig' | 'reuse'>, hint: FacingHint | null, onProgress: ProgressFn,
): FramedForPose {
  const rigGiven = options.rig !== undefined;
  // an auto-rig left by an earlier apply of these parts stands in for running it again; a caller's rig wins over it
  const reusedRig = rigGiven ? undefined : options.reuse?.autoRig;
  // every model the job runs (modelsRunByPose: encoder, decoder, and the auto-rig's unless the caller brings the rig),
  // in that order: a missing one is MODEL_MISSING whatever the strength, before any work. Their sessions load
  // meanwhile and are awaited where first run (sessions are cached): behind a model host (the one-shot command's, the
  // sidecar's) they load on its thread while this one works; one that fails to load is MODEL_FAILED there.
  const models = modelsRunByPose(rigGiven || reusedRig !== undefined);
  for (const model of models) requireModelFile(modelPath(model));
  for (const model of models) loadModel(modelPath(model)).catch(() => {});
  if (rigGiven) checkTemplateJoints(options.rig!.skeleton);
  // the frame the auto-rig would find again: found once, shared with it (a reused auto-rig passed the voxel bound);
  // with nothing to rig, an earlier apply's frame of these parts stands (found again, it is the same)
  const knownFrame = rigGiven || reusedRig !== undefined ? options.reuse?.frame : undefined;
  // a large mesh is auto-rigged and read through a reduced copy (pose/poseProxy), and posed itself
  const work = knownFrame ? null : poseWorkMesh(parts, !rigGiven && reusedRig === undefined, hint, onProgress);
  const { cf } = work?.prepared ?? { cf: knownFrame! };
  const { mesh, canonical } = work?.posed ?? meshInFrame(parts, knownFrame!, onProgress);
  const givenRig = options.rig ?? reusedRig;
  return { work, cf, mesh, canonical, ...(givenRig ? { givenRig } : {}), rigGiven, hint };
}

/**
 * readForPose: what an apply reads from the mesh alone (framedForPose's shape): μ (options.mu, an earlier apply's, or
 * SDF samples and the encoder) and the rig (the given or reused one, else the auto-rig), with what the next apply of
 * these parts may reuse and whether options.reuse served any of it. Throws MODEL_FAILED, what the auto-rig throws.
 */
async function readForPose(
  shape: FramedForPose, options: Pick<ApplyLatentPoseOptions, 'mu' | 'reuse'>, latentSize: number, onProgress: ProgressFn,
): Promise<{ mu: Float32Array; rig: Pick<RigResult, 'skeleton' | 'objects'>; reusable: LatentPoseReuse; reused: boolean }> {
  const { work, cf, mesh, canonical, givenRig, rigGiven, hint } = shape;
  const knownMu = options.mu ?? options.reuse?.mu;
  const reused = (!rigGiven && givenRig !== undefined) || (options.mu === undefined && options.reuse?.mu !== undefined);
  // The SDF samples and the auto-rig are the two costly stages and need nothing from each other: without a rig the
  // samples are drawn on a helper thread (pose/sdfSamplesBeside, kept warm between applies) while this one rigs. A
  // given or reused rig leaves nothing to overlap.
  onProgress('encode', 0.05);
  const samplesAside = !knownMu && !givenRig;
  const encoded = knownMu
    ? Promise.resolve(checkedLatent(knownMu, latentSize))
    : (samplesAside
      ? sdfSamplesBeside(work!.prepared.canonical, work!.prepared.mesh.triangles, { count: POSE_SDF_SAMPLES, seed: SDF_SEED })
      : Promise.resolve(samplesOf(work?.prepared ?? { canonical, mesh }))
    ).then(async (samples) => encodeSamples(await loadModel(modelPath('latentPoseEncoder')), samples, latentSize));
  // handled here so that a failure while the rig still runs is not an unhandled rejection; awaited below
  encoded.catch(() => {});
  onProgress('rig', 0.15);
  // work is null only with a rig given or reused: nothing to rig then
  const rig = givenRig ?? await autoRigOfWork(work!, (_, f) => onProgress('rig', 0.15 + 0.65 * f));
  const mu = await encoded;
  const facingHint = hint ? { facingHint: hint.direction } : {};
  const reusable: LatentPoseReuse = rigGiven ? { mu, frame: cf, ...facingHint } : { mu, autoRig: rig, frame: cf, ...facingHint };
  return { mu, rig, reusable, reused };
}

/** What prepareLatentPose made ready for the applies of one mesh. */
export interface LatentPosePrepared {
  /** what an apply of these same parts may reuse (ApplyLatentPoseOptions.reuse) */
  reusable: LatentPoseReuse;
  /** whether options.reuse already held all of it (nothing was read) */
  reused: boolean;
  /** 'auto': the auto-rig is part of it; 'none': the latent and frame only (the applies will bring the mesh's rig) */
  rig: 'auto' | 'none';
  /** how the frame's forward was decided (LatentPoseResult.facing) */
  facing: SkeletonFacingSource;
  /** the direction the frame takes the character to face, unit, in the input's space */
  forward: Vec3;
  seconds: number;
}

/**
 * prepareLatentPose: the part of applyLatentPose that depends on the parts alone (the canonical frame, the SDF samples
 * and the encoder's μ, and the auto-rig unless options.autoRig is false), done before any pose is asked for, so that
 * the apply that follows reuses it (a client that sees the user about to pose a mesh: the add-on's panel). parts:
 * MeshPart[]; options: PrepareLatentPoseOptions (what the applies will bring: their facing, their rig's skeleton).
 * The reusable is what a cold apply of the parts with that facing and rig would leave, bit for bit. Throws what
 * applyLatentPose throws before its decoder runs (the mesh's errors, TOO_LARGE, MODEL_MISSING / MODEL_FAILED, the
 * auto-rig's, a facing's BAD_REQUEST or a skeleton's BAD_SKELETON), and BAD_REQUEST for a skeleton with autoRig true.
 */
export async function prepareLatentPose(
  parts: MeshPart[], options: PrepareLatentPoseOptions = {}, onProgress: ProgressFn = () => {},
): Promise<LatentPosePrepared> {
  const t0 = performance.now();
  const autoRig = options.autoRig ?? options.skeleton === undefined;
  if (autoRig && options.skeleton) {
    throw new AutoRigError('BAD_REQUEST', 'a prepare given the skeleton its applies will bring auto-rigs nothing: autoRig must be false');
  }
  const rig = autoRig ? 'auto' : 'none';
  const hint = facingHintOf(options.skeleton, options.facing);
  const reuse = reuseFacing(options.reuse, hint);
  const done = (reusable: LatentPoseReuse, reused: boolean): LatentPosePrepared => ({
    reusable, reused, rig, facing: hintedFacingSource(reusable.frame!, hint), forward: [...reusable.frame!.frame.forward],
    seconds: (performance.now() - t0) / 1000,
  });
  if (reuseHolds(reuse, autoRig)) return done(reuse!, true);
  if (autoRig) {
    const library = readPoseLibrary(modelDataPath('latentPoseLibrary'));
    const shape = framedForPose(parts, { reuse }, hint, onProgress);
    const { reusable } = await readForPose(shape, { reuse }, library.latentSize, onProgress);
    return done(reusable, false);
  }
  // the applies bring their rig: the models they run then, checked as they would check them
  for (const model of modelsRunByPose(true)) requireModelFile(modelPath(model));
  onProgress('encode', 0.05);
  const { mu, frame } = await latentAndFrameOf(parts, onProgress, hint);
  return done({ ...reuse, mu, frame, ...(hint ? { facingHint: hint.direction } : {}) }, false);
}

/** What prepareLatentPose is asked to make ready. */
export interface PrepareLatentPoseOptions {
  /** whether the auto-rig is made too; default true, false when the applies will bring the mesh's own rig */
  autoRig?: boolean;
  /** what is already known of these parts (returned as it is when it holds everything asked for) */
  reuse?: LatentPoseReuse;
  /** the applies' facing hint (ApplyLatentPoseOptions.facing): the frame is turned as theirs will be */
  facing?: Vec3;
  /**
   * the skeleton of the rig the applies will bring (autoRig false, its default then): its left and right turn the
   * frame as theirs will (skeleton/skeletonFacing), so that what is made here is what those applies reuse
   */
  skeleton?: Skeleton;
}

/**
 * latentPoseAutoRig: the auto-rig applyLatentPose makes for a mesh without a rig (the default method's skeleton,
 * POSE_SKIN_STAGE's weights): parts → skeleton + one PartWeights per part, the parts' space. For callers that pose
 * one character many times the way a user without a rig gets it (the eval: pass it as options.rig). Throws what
 * rigCharacterAsync throws.
 */
export async function latentPoseAutoRig(parts: MeshPart[], facing?: Vec3): Promise<Pick<RigResult, 'skeleton' | 'objects'>> {
  return autoRigOfWork(poseWorkMesh(parts, true, facingHintOf(undefined, facing)));
}

/** The mesh an apply reads its shape from and auto-rigs: the parts themselves, or their reduced copy (pose/poseProxy). */
interface PoseWorkMesh {
  /** the input's parts */
  input: MeshPart[];
  /** the parts the auto-rig and the SDF samples read: the input's or the proxy's */
  parts: MeshPart[];
  /** prepareMesh of those parts (their frame is the apply's) */
  prepared: PreparedMesh;
  /** the reduced copy, when the input is large (poseProxyOf), else null */
  proxy: PoseProxy | null;
  /** the mesh the pose is applied to, the input's, in the prepared frame: merged and canonical positions #V*3 */
  posed: { mesh: MergedMesh; canonical: Float32Array };
  /** what turned the frame, or null (skeleton/skeletonFacing) */
  hint: FacingHint | null;
}

/**
 * poseWorkMesh: parts → the mesh to read and rig (PoseWorkMesh). voxelised: whether the auto-rig will run (the work
 * bound, TOO_LARGE, then applies to the mesh it reads: the proxy's, where there is one). Throws the mesh errors of
 * mergeParts and what prepareMesh throws.
 */
function poseWorkMesh(parts: MeshPart[], voxelised: boolean, hint: FacingHint | null, onProgress: ProgressFn = () => {}): PoseWorkMesh {
  // the input is checked (mergeParts) before any copy is made of it; the copy serves the SDF samples with a rig given
  // too, so that a mesh has one μ whoever rigs it
  let vertices = 0;
  for (const part of parts) vertices += part.positions.length / 3;
  const proxy = vertices > POSE_PROXY_ABOVE ? poseProxyOf(parts, mergeParts(parts)) : null;
  const read = proxy?.parts ?? parts;
  const prepared = prepareMesh(read, onProgress, () => {}, voxelised, hint);
  const posed = proxy ? { mesh: proxy.merged, canonical: toCanonical(proxy.merged.positions, prepared.cf) } : prepared;
  return { input: parts, parts: read, prepared, proxy, posed, hint };
}

/** The apply path's auto-rig of the work mesh, its weights carried to the input's vertices when it is a proxy. */
async function autoRigOfWork(work: PoseWorkMesh, onProgress: ProgressFn = () => {}): Promise<Pick<RigResult, 'skeleton' | 'objects'>> {
  // the network's clouds come from the mesh itself: where they are drawn moves the trunk's depth (SkinStage.cloudSurface)
  const stage: SkinStage = work.proxy
    ? { ...POSE_SKIN_STAGE, cloudSurface: { canonical: work.posed.canonical, triangles: orientPiecesOutward(work.proxy.merged.positions, work.proxy.merged.triangles) } }
    : POSE_SKIN_STAGE;
  let rig: RigResult;
  try {
    rig = await rigPreparedAsync(work.parts, work.prepared, {}, onProgress, stage);
  } catch (err) {
    if (!work.proxy || !(err instanceof AutoRigError)) throw err;
    // the copy's silhouette is a little thinner at its tips (each cluster sits at its vertices' mean): a hand the
    // skeleton stage barely finds on the mesh can be lost on the copy (procedural 9 100 006 at 50k vertices, a cape
    // to the ground, NOT_HUMANOID). The mesh itself is then rigged, as it would be without a copy.
    return rigPreparedAsync(work.input, prepareMesh(work.input, onProgress, () => {}, true, work.hint), {}, onProgress, POSE_SKIN_STAGE);
  }
  return work.proxy ? rigCarriedToMesh(rig, work.proxy) : rig;
}

/** The apply path's SDF samples of a prepared mesh (its canonical positions and triangles). */
function samplesOf(prepared: { canonical: Float32Array; mesh: { triangles: Uint32Array } }): SdfSamples {
  return sdfSamples(prepared.canonical, prepared.mesh.triangles, { count: POSE_SDF_SAMPLES, seed: SDF_SEED });
}

/**
 * latentOfParts: the encoder's μ of a character as applyLatentPose reads it (the same canonical frame, samples and
 * seed): parts → Float32Array #latentSize. skeleton: the rig's the applies will be given (options.rig), whose sides
 * turn the frame (skeleton/skeletonFacing); none for applies through the auto-rig. For callers that pose one character many
 * times (pass it as options.mu). Throws what applyLatentPose throws before its rig stage.
 */
export async function latentOfParts(parts: MeshPart[], skeleton?: Skeleton): Promise<Float32Array> {
  return (await latentAndFrameOf(parts, () => {}, facingHintOf(skeleton, undefined))).mu;
}

/** latentOfParts' μ with the canonical frame it was read in (the apply's frame of these parts). */
async function latentAndFrameOf(parts: MeshPart[], onProgress: ProgressFn, hint: FacingHint | null = null): Promise<{ mu: Float32Array; frame: CanonicalFrame }> {
  const library = readPoseLibrary(modelDataPath('latentPoseLibrary'));
  const encoder = loadModel(modelPath('latentPoseEncoder'));
  encoder.catch(() => {});
  // the mesh an apply reads (a large one's proxy); the work bound is the auto-rig's, not the samples'
  const { prepared } = poseWorkMesh(parts, false, hint, onProgress);
  return { mu: await encodeSamples(await encoder, samplesOf(prepared), library.latentSize), frame: prepared.cf };
}

/** A caller's μ, or BAD_ARRAY when it is not a finite latent of the library's size. mu: Float32Array → mu */
function checkedLatent(mu: Float32Array, latentSize: number): Float32Array {
  if (!(mu instanceof Float32Array) || mu.length !== latentSize || !mu.every(Number.isFinite)) {
    throw new AutoRigError('BAD_ARRAY', `mu must be ${latentSize} finite numbers (latentOfParts), got ${mu?.length ?? 'none'}`);
  }
  return mu;
}

/**
 * encodeSdfSamples: the encoder's μ of SDF samples (the apply path's, the eval's, a training file's). encoder: the
 * latent pose encoder's session, points: Float32Array #N*3 (canonical frame), sdf: Float32Array #N → Float32Array #L.
 * Throws MODEL_FAILED when the encoder answers no μ.
 */
export async function encodeSdfSamples(encoder: ModelSession, points: Float32Array, sdf: Float32Array): Promise<Float32Array> {
  const N = sdf.length;
  const input = new Float32Array(N * 4);
  for (let i = 0; i < N; i++) {
    input.set(points.subarray(3 * i, 3 * i + 3), 4 * i);
    input[4 * i + 3] = sdf[i];
  }
  const out = await runModel(encoder, { sdf_samples: { data: input, dims: [1, N, 4] } });
  if (!out.mu) throw new AutoRigError('MODEL_FAILED', 'the latent pose encoder gives no output "mu"');
  return Float32Array.from(out.mu.data as Float32Array);
}

/** One mesh's μ for the library: encodeSdfSamples of its samples, MODEL_FAILED when μ and library differ in size. */
async function encodeSamples(encoder: ModelSession, samples: SdfSamples, latentSize: number): Promise<Float32Array> {
  const mu = await encodeSdfSamples(encoder, samples.points, samples.sdf);
  if (mu.length !== latentSize) throw new AutoRigError('MODEL_FAILED', `the encoder gives ${mu.length} latents, the library holds ${latentSize}`);
  return mu;
}
