/**
 * Apply Latent Pose (issue 6, LatentReRig): any character mesh, rigged or not, any topology → its vertices in a named
 * pose of the vocabulary.
 *
 * mesh → canonical frame (mesh/canonicalFrame) → SDF samples (pose/sdfSamples) → encoder → μ_source; the pose's
 * latent delta Δμ from the library (mean over training identities, or the nearest identity's); area-weighted anchor
 * vertices with their kNN graph → vertex decoder (μ_source, Δμ/|Δμ|, |Δμ|, pair kind 'skin + corrective') → posed
 * anchors; their displacements, scaled by the strength, carried to every vertex (carryDisplacements) and taken back to
 * the character's space. The strength scales the decoded displacement (p + s·(decoded − p)), not |Δμ|: the decoder
 * only ever saw full-strength poses, so a |Δμ| it never met would be an extrapolation of the network, where scaling
 * its answer is a predictable blend that is exact at 0 and 1. The output has the input's vertices, in count and order, per part.
 */
import { areaWeightedVertices, POSE_ANCHORS, POSE_SDF_SAMPLES, POSE_VARIANTS, type PoseVariant } from '../data/poses/poseSample.js';
import { AutoRigError } from '../errors.js';
import { nearestNeighbours } from '../geometry/nearestNeighbours.js';
import { vertexNormals } from '../io/normals.js';
import { modelDataPath, modelPath } from '../learned/modelFiles.js';
import { loadModel, runModel, selectedProvider } from '../learned/onnxSession.js';
import { findCanonicalFrame, toCanonical } from '../mesh/canonicalFrame.js';
import { bodyTriangles } from '../mesh/debris.js';
import { mergeParts } from '../mesh/mergeParts.js';
import type { MeshPart, ProgressFn } from '../types.js';
import { carryDisplacements } from './carryDisplacements.js';
import { APPLIED_VARIANT, latentDelta, POSE_STRATEGIES, readPoseLibrary, type PoseStrategy } from './poseLibrary.js';
import { isPoseName, MAX_POSE_STRENGTH, POSE_NAMES } from './poseVocabulary.js';
import { sdfSamples } from './sdfSamples.js';

export { APPLIED_VARIANT, POSE_STRATEGIES, type PoseStrategy } from './poseLibrary.js';

/** Seeds of the apply path's random choices (SDF samples, anchors): fixed, so one mesh always gets one answer. */
const SDF_SEED = 1;
const ANCHOR_SEED = 2;

export interface ApplyLatentPoseOptions {
  pose: string;
  /** 0 (rest) to 1.5; default 1 */
  strength?: number;
  /** default 'mean' */
  strategy?: PoseStrategy;
  /**
   * which pair kind the decoder predicts (default APPLIED_VARIANT, what users get): the eval also asks for 'corrective'
   * (the corrective alone) and 'skinning' (the pose without it)
   */
  variant?: PoseVariant;
}

export interface LatentPoseResult {
  /** per input part, in order: its vertices posed, Float32Array #V*3 in the input's space, count and order */
  objects: { name: string; positions: Float32Array }[];
  pose: string;
  strength: number;
  strategy: PoseStrategy;
  /** the training identity whose delta was used (strategy 'nearest'), else null */
  identity: string | null;
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
 * Throws BAD_REQUEST (pose, strength, strategy), the mesh errors of mergeParts, MODEL_MISSING / MODEL_FAILED.
 */
export async function applyLatentPose(parts: MeshPart[], options: ApplyLatentPoseOptions, onProgress: ProgressFn = () => {}): Promise<LatentPoseResult> {
  const t0 = performance.now();
  const { pose, strength, strategy } = checkPoseOptions(options);
  const variant = options.variant ?? APPLIED_VARIANT;
  if (!(POSE_VARIANTS as readonly string[]).includes(variant)) throw new AutoRigError('BAD_REQUEST', `unknown variant "${String(variant)}"`);
  const library = readPoseLibrary(modelDataPath('latentPoseLibrary'));
  const encoder = await loadModel(modelPath('latentPoseEncoder'));
  const decoder = await loadModel(modelPath('latentPoseDecoder'));
  onProgress('mesh', 0);
  const mesh = mergeParts(parts);
  const cf = findCanonicalFrame(mesh.positions, bodyTriangles(mesh.positions, mesh.triangles));
  const canonical = toCanonical(mesh.positions, cf);
  const result = (positions: (part: number) => Float32Array, identity: string | null): LatentPoseResult => ({
    objects: parts.map((part, k) => ({ name: part.name, positions: positions(k) })),
    pose, strength, strategy, identity, seconds: (performance.now() - t0) / 1000, provider: selectedProvider().name,
  });
  if (strength === 0) return result((k) => Float32Array.from(parts[k].positions), null);

  onProgress('encode', 0.1);
  const samples = sdfSamples(canonical, mesh.triangles, { count: POSE_SDF_SAMPLES, seed: SDF_SEED });
  const N = POSE_SDF_SAMPLES;
  const encoderInput = new Float32Array(N * 4);
  for (let i = 0; i < N; i++) {
    encoderInput.set(samples.points.subarray(3 * i, 3 * i + 3), 4 * i);
    encoderInput[4 * i + 3] = samples.sdf[i];
  }
  const encoded = await runModel(encoder, { sdf_samples: { data: encoderInput, dims: [1, N, 4] } });
  const mu = encoded.mu.data as Float32Array;
  if (mu.length !== library.latentSize) throw new AutoRigError('MODEL_FAILED', `the encoder gives ${mu.length} latents, the library holds ${library.latentSize}`);

  const { delta, identity } = latentDelta(library, pose, variant, strategy, mu);
  let norm = 0;
  for (const x of delta) norm += x * x;
  norm = Math.sqrt(norm);
  const direction = norm > 0 ? delta.map((x) => x / norm) : delta;

  onProgress('decode', 0.4);
  const anchorIndex = areaWeightedVertices(canonical, mesh.triangles, POSE_ANCHORS, ANCHOR_SEED);
  const A = anchorIndex.length;
  const normals = vertexNormals(canonical, mesh.triangles);
  const anchors = new Float32Array(A * 3);
  const anchorNormals = new Float32Array(A * 3);
  anchorIndex.forEach((v, i) => {
    anchors.set(canonical.subarray(3 * v, 3 * v + 3), 3 * i);
    anchorNormals.set(normals.subarray(3 * v, 3 * v + 3), 3 * i);
  });
  const K = library.knn;
  const graph = nearestNeighbours(anchors, anchors, K, !library.knnIncludesSelf);
  const knn = BigInt64Array.from(graph.indices, (i, n) => BigInt(i >= 0 ? i : Math.floor(n / K)));
  const kind = new Float32Array(POSE_VARIANTS.length);
  kind[POSE_VARIANTS.indexOf(variant)] = 1;
  const decoded = await runModel(decoder, {
    points: { data: anchors, dims: [1, A, 3] },
    normals: { data: anchorNormals, dims: [1, A, 3] },
    knn: { data: knn, dims: [1, A, K] },
    mu_source: { data: mu, dims: [1, mu.length] },
    delta_direction: { data: direction, dims: [1, direction.length] },
    delta_norm: { data: Float32Array.of(norm), dims: [1, 1] },
    pair_kind: { data: kind, dims: [1, kind.length] },
  });
  const posedAnchors = decoded.positions.data as Float32Array;
  if (posedAnchors.length !== A * 3) throw new AutoRigError('MODEL_FAILED', `the decoder gave ${posedAnchors.length / 3} points for ${A} anchors`);
  const anchorMotion = posedAnchors.map((x, i) => strength * (x - anchors[i]));

  onProgress('carry', 0.8);
  const motion = carryDisplacements(canonical, normals, anchors, anchorNormals, anchorMotion);
  // canonical = s·R·(p − c), R's rows left, up, forward: a canonical displacement d is Rᵀd / s in the input's space
  const { left, up, forward } = cf.frame;
  const s = cf.scale;
  return result((k) => {
    const own = parts[k].positions;
    const out = new Float32Array(own.length);
    const base = 3 * mesh.partOffsets[k];
    for (let i = 0; i < own.length; i += 3) {
      const dx = motion[base + i], dy = motion[base + i + 1], dz = motion[base + i + 2];
      out[i] = own[i] + (left[0] * dx + up[0] * dy + forward[0] * dz) / s;
      out[i + 1] = own[i + 1] + (left[1] * dx + up[1] * dy + forward[1] * dz) / s;
      out[i + 2] = own[i + 2] + (left[2] * dx + up[2] * dy + forward[2] * dz) / s;
    }
    return out;
  }, identity);
}
