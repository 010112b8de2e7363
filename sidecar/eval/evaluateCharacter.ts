/**
 * One character of `autorig eval`: strip the artist's rig, rig the bare mesh with our pipeline, re-skin the artist's
 * skeleton with our skinning (and, with the peer, Blender's bone heat), and score everything against the artist.
 * Runs inside a process of its own (evalWorker.ts) so that its peak memory is this character's alone.
 */
import { writeFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { AutoRigError } from '../errors.js';
import { loadCharacter } from '../io/character.js';
import { mergeParts } from '../mesh/mergeParts.js';
import { encodePng } from '../io/png.js';
import { rigCharacterAsync, skinCharacterAsync, isDeformingJoint } from '../pipeline.js';
import { isTemplateSkeleton } from '../skinning/templateJoints.js';
import { MIXAMO_JOINTS, MIXAMO_PARENTS, templateIndexOf } from '../skeleton/mixamoTemplate.js';
import type { MeshPart, PartWeights, RigResult, Skeleton, Vec3 } from '../types.js';
import { runBlenderBoneHeat } from './blenderPeer.js';
import type { CharacterEval, SkeletonScores, SkinningScores, Variant } from './evalTypes.js';
import { normalisation, normalisePoint, normalisePositions } from './normalise.js';
import { peakRss } from './peakMemory.js';
import { randomPoses } from './randomPoses.js';
import { remeshVolume } from './remeshVolume.js';
import { frontViewPicture } from './reportPictures.js';
import {
  chamferBoneToBone,
  chamferJointToBone,
  chamferJointToJoint,
  perJointErrors,
  templateLimb,
  wrongLimbJoints,
} from './skeletonMetrics.js';
import { deformationError, type PosableSkeleton, influencePrecisionRecall, unweightedCount, weightL1 } from './skinningMetrics.js';
import { mapRigToTemplate, mergeWeightsToTemplate, templateSkeleton, TemplateMappingError } from './templateMapping.js';
import { transferWeightsByClosestPoint } from './transferWeights.js';

export interface EvaluateOptions {
  variant: Variant;
  /** target vertex count of the remesh variant */
  remeshVertices?: number;
  /** run Blender's bone heat on the same mesh and skeleton */
  peer: 'blender' | null;
  blender?: string;
  method: string;
  poseSeed: number;
  poses: number;
  degrees: [number, number];
  /** where to write this character's front-view PNG, or undefined for none */
  frontViewPng?: string;
  /** progress lines */
  log?: (line: string) => void;
}

/** The 22 deforming template joints (HeadTop_End marks where the head ends and is no joint of its own). */
const SCORED_JOINTS = MIXAMO_JOINTS.filter((n) => isDeformingJoint(n));
const INFLUENCES = 4;
/** The remesh is seeded from the character's name so that every run remeshes a character the same way. */
const REMESH_SEED = 20261130;

/** evaluateCharacter: score our pipeline (and the peer) on one artist-rigged file. Never throws for a bad character: its status says why. */
export async function evaluateCharacter(file: string, options: EvaluateOptions): Promise<CharacterEval> {
  const name = basename(file, extname(file));
  const log = options.log ?? (() => {});
  const character = await loadCharacter(file);
  let parts: MeshPart[] = character.parts;
  const result: CharacterEval = {
    name,
    file,
    variant: options.variant,
    vertices: countVertices(parts),
    triangles: parts.reduce((n, p) => n + p.triangles.length / 3, 0),
    status: 'ok',
    time: { rigSeconds: 0, skinSeconds: 0, peakRssMiB: 0 },
  };
  if (!character.rig || !character.rig.skins.some((s) => s)) {
    return { ...result, status: 'unmapped', error: { code: 'NO_RIG', message: `${file} has no skinned skeleton to compare with` } };
  }

  let mapping;
  try {
    mapping = mapRigToTemplate(character.rig, character.parts);
  } catch (err) {
    if (err instanceof TemplateMappingError) return { ...result, status: 'unmapped', error: { code: 'UNMAPPED', message: err.message } };
    throw err;
  }
  const template = templateSkeleton(character.rig, mapping, character.parts);
  let artistWeights = mergeWeightsToTemplate(character, mapping, template);
  result.mapping = {
    method: mapping.method,
    joints: Object.fromEntries(
      MIXAMO_JOINTS.flatMap((t, i) => (mapping.jointOf[i] >= 0 ? [[t, character.rig!.joints[mapping.jointOf[i]].name]] : [])),
    ),
    missing: SCORED_JOINTS.filter((t) => mapping.jointOf[MIXAMO_JOINTS.indexOf(t)] < 0),
  };

  if (options.variant === 'remesh') {
    const target = options.remeshVertices ?? 200_000;
    log(`${name}: remeshing to ~${target} vertices`);
    const remeshed = remeshVolume(parts, target, REMESH_SEED);
    const carried = transferWeightsByClosestPoint({ parts, weights: artistWeights }, remeshed.positions);
    parts = [remeshed];
    artistWeights = [{ name: remeshed.name, influences: INFLUENCES, indices: carried.indices, weights: carried.weights }];
    result.vertices = countVertices(parts);
    result.triangles = remeshed.triangles.length / 3;
  }

  const norm = normalisation(parts);
  // One concatenation of the parts (vertex order kept) serves the posing and the picture.
  const merged = mergeParts(parts);
  const positions = merged.positions;
  const artist = concatWeights(artistWeights);

  // Our whole pipeline on the bare mesh. Peak memory counts from here: the character as loaded plus the rig call.
  log(`${name}: rigging ${result.vertices} vertices`);
  let rig: RigResult | undefined;
  peakRss.reset();
  try {
    rig = await rigCharacterAsync(parts, { method: options.method });
    result.time.rigSeconds = rig.seconds;
  } catch (err) {
    // The skeleton could not be found: reported as a failure, and skinning the artist's skeleton is still scored.
    if (!(err instanceof AutoRigError)) throw err;
    result.status = 'failed';
    result.error = { code: err.code, message: err.message };
  }
  // The learned method re-skins with the learned skinning where the network can read the skeleton (the artist's
  // mapped onto all 22 deforming template joints); hybrid, geometric and partial mappings use the voxel skinning.
  const skinMethod = options.method === 'learned' && isTemplateSkeleton(template.skeleton) ? 'learned' : 'geometric';
  log(`${name}: re-skinning the artist's skeleton (${skinMethod})`);
  const skin = await skinCharacterAsync(parts, template.skeleton, [], { method: skinMethod });
  result.time.skinSeconds = skin.seconds;
  result.time.peakRssMiB = peakRss.read() / 2 ** 20;

  // Skeleton: joint positions by template index, normalised.
  const ourHeads = rig ? templateHeads(rig.skeleton) : undefined;
  const artistHeads: (Vec3 | null)[] = MIXAMO_JOINTS.map((_, i) => {
    const k = template.templateIndex.indexOf(i);
    return k >= 0 ? template.skeleton.joints[k].head : null;
  });
  if (ourHeads) {
    result.skeleton = scoreSkeleton(
      ourHeads.map((h) => (h ? normalisePoint(h, norm) : null)),
      artistHeads.map((h) => (h ? normalisePoint(h, norm) : null)),
    );
  }

  // Skinning alone: the artist's skeleton, our weights vs the artist's.
  const small = randomPoses(options.poseSeed, options.poses, MIXAMO_JOINTS.length, options.degrees[0]);
  const large = randomPoses(options.poseSeed + 1, options.poses, MIXAMO_JOINTS.length, options.degrees[1]);
  const artistRig = rigOf(template.skeleton, template.templateIndex);
  const scoreWeights = (weights: PartWeights[], seconds: number, failed = false, message?: string): SkinningScores => {
    const w = concatWeights(weights);
    const { precision, recall } = influencePrecisionRecall(w.indices, w.weights, artist.indices, artist.weights, INFLUENCES);
    const deform = (poses: Float64Array[]) =>
      norm.scale * deformationError(positions, w, artistRig, artist, artistRig, poses);
    return {
      precision,
      recall,
      l1: weightL1(w.indices, w.weights, artist.indices, artist.weights, INFLUENCES, template.skeleton.joints.length),
      deformation10: deform(small),
      deformation45: deform(large),
      seconds,
      unweighted: unweightedCount(w.weights, INFLUENCES),
      failed,
      ...(message ? { message } : {}),
    };
  };
  result.skinning = { ours: scoreWeights(skin.objects, skin.seconds) };

  if (options.peer === 'blender') {
    log(`${name}: Blender bone heat`);
    try {
      const heat = await runBlenderBoneHeat(parts, template.skeleton, { blender: options.blender });
      result.skinning.blender = scoreWeights(heat.objects, heat.seconds, heat.failed, heat.message || undefined);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      result.skinning.blender = {
        precision: 0, recall: 0, l1: 2, deformation10: Number.NaN, deformation45: Number.NaN,
        seconds: 0, unweighted: result.vertices, failed: true, message: `Blender did not run: ${message}`,
      };
    }
  }

  if (!rig || !ourHeads) return result;

  // Full pipeline: our skeleton and weights vs the artist's, the same rotation on corresponding joints.
  const ours = concatWeights(rig.objects);
  const ourRig = rigOf(rig.skeleton, rig.skeleton.joints.map((j) => templateIndexOf(j.name)));
  // A template joint the artist's rig lacks turns neither skeleton: both bend only where both can.
  const shared = (poses: Float64Array[]) => poses.map((p) => keepRotations(p, (t) => artistHeads[t] !== null));
  result.pipeline = {
    deformation10: norm.scale * deformationError(positions, ours, ourRig, artist, artistRig, shared(small)),
    deformation45: norm.scale * deformationError(positions, ours, ourRig, artist, artistRig, shared(large)),
  };

  if (options.frontViewPng) {
    const picture = frontViewPicture({
      positions: normalisePositions(positions, norm),
      triangles: merged.triangles,
      up: rig.frame.up,
      left: rig.frame.left,
      artist: { heads: artistHeads.map((h) => (h ? normalisePoint(h, norm) : null)), parents: templateParents() },
      ours: { heads: ourHeads.map((h) => (h ? normalisePoint(h, norm) : null)), parents: templateParents() },
      title: `${name}${options.variant === 'remesh' ? ' (remesh)' : ''}: artist (green) vs AutoRig (red)`,
    });
    await writeFile(options.frontViewPng, encodePng(picture));
  }
  return result;
}

/** Skeleton scores over the 22 scored template joints (index = MIXAMO_JOINTS index; null where the skeleton lacks it). */
export function scoreSkeleton(ours: (Vec3 | null)[], artist: (Vec3 | null)[]): SkeletonScores {
  const scored = SCORED_JOINTS.map((n) => MIXAMO_JOINTS.indexOf(n));
  const points = (heads: (Vec3 | null)[]) => scored.flatMap((i) => (heads[i] ? [heads[i]!] : []));
  const bones = (heads: (Vec3 | null)[]) =>
    scored.flatMap((i) => {
      const parent = nearestPresentAncestor(i, heads);
      return heads[i] && parent >= 0 ? [[heads[parent]!, heads[i]!] as [Vec3, Vec3]] : [];
    });
  const names = scored.map((i) => MIXAMO_JOINTS[i]);
  const oursScored = scored.map((i) => ours[i]);
  const artistScored = scored.map((i) => artist[i]);
  const perJoint = perJointErrors(oursScored, artistScored, names);
  return {
    cdJ2J: chamferJointToJoint(points(ours), points(artist)),
    cdJ2B: chamferJointToBone(points(ours), bones(ours), points(artist), bones(artist)),
    cdB2B: chamferBoneToBone(bones(ours), bones(artist)),
    perJoint: perJoint.perJoint,
    meanJointError: perJoint.mean,
    maxJointError: perJoint.max,
    maxJoint: perJoint.maxJoint,
    wrongLimb: wrongLimbJoints(oursScored, artistScored, names, templateLimb),
  };
}

function nearestPresentAncestor(index: number, heads: (Vec3 | null)[]): number {
  let parent = MIXAMO_PARENTS[MIXAMO_JOINTS[index]];
  while (parent) {
    const p = MIXAMO_JOINTS.indexOf(parent);
    if (heads[p]) return p;
    parent = MIXAMO_PARENTS[parent];
  }
  return -1;
}


function templateHeads(skeleton: Skeleton): (Vec3 | null)[] {
  const heads: (Vec3 | null)[] = MIXAMO_JOINTS.map(() => null);
  for (const j of skeleton.joints) {
    const t = templateIndexOf(j.name);
    if (t >= 0) heads[t] = j.head;
  }
  return heads;
}

function templateParents(): number[] {
  return MIXAMO_JOINTS.map((n) => {
    const p = MIXAMO_PARENTS[n];
    return p ? MIXAMO_JOINTS.indexOf(p) : -1;
  });
}


function rigOf(skeleton: Skeleton, templateIndex: number[]): PosableSkeleton {
  const heads = new Float64Array(skeleton.joints.length * 3);
  skeleton.joints.forEach((j, i) => heads.set(j.head, i * 3));
  return { heads, parents: Int32Array.from(skeleton.joints.map((j) => j.parent)), templateIndex: Int32Array.from(templateIndex) };
}

/** pose: #23*9 rotations; joints for which keep(t) is false get the identity. */
function keepRotations(pose: Float64Array, keep: (templateIndex: number) => boolean): Float64Array {
  const out = new Float64Array(pose);
  for (let t = 0; t < MIXAMO_JOINTS.length; t++) {
    if (!keep(t)) out.set([1, 0, 0, 0, 1, 0, 0, 0, 1], t * 9);
  }
  return out;
}

function countVertices(parts: MeshPart[]): number {
  return parts.reduce((n, p) => n + p.positions.length / 3, 0);
}

/** Per-part 4-influence weights → one #V*4 pair, in the parts' order. */
export function concatWeights(weights: PartWeights[]): { indices: Uint16Array; weights: Float32Array } {
  const total = weights.reduce((n, w) => n + w.weights.length / w.influences, 0);
  const indices = new Uint16Array(total * INFLUENCES);
  const values = new Float32Array(total * INFLUENCES);
  let v0 = 0;
  for (const w of weights) {
    const count = w.weights.length / w.influences;
    for (let v = 0; v < count; v++) {
      for (let k = 0; k < Math.min(INFLUENCES, w.influences); k++) {
        indices[(v0 + v) * INFLUENCES + k] = w.indices[v * w.influences + k];
        values[(v0 + v) * INFLUENCES + k] = w.weights[v * w.influences + k];
      }
    }
    v0 += count;
  }
  return { indices, weights: values };
}
