/**
 * `autorig correctives`: Pose Correctives from the command line. A character file in (.glb/.gltf rigged by Auto Rig or
 * with a Mixamo-named rig, or any unrigged .glb/.gltf/.obj, which is rigged first), a skinned .glb out with one morph
 * target per key pose and part: `<bone>_<pose>`, the rest-space displacement that makes linear blend skinning at that
 * key pose land on the pose-dependent deformation. An engine that reads morph targets drives each by its bone's
 * rotation; the key pose is in the target's accessor extras:
 *   { bone, pose, angle (degrees), axis (unit, in the joint node's space), rotation (the joint node's quaternion
 *     [x, y, z, w] at the key pose, where the weight reaches 1) }.
 * The file's joint nodes have identity rest rotations (glbWriter), so node space is the file's space. A part the key
 * does not move gets no target for it.
 */
import { extname } from 'node:path';
import type { CorrectiveExample } from '../correctives/bakeCorrectives.js';
import { CORRECTIVE_METHODS } from '../correctives/correctiveMethods.js';
import { keyPoses, KEY_POSE_NAMES, mixamoJointIndices, type KeyPose } from '../correctives/keyPoses.js';
import { AutoRigError } from '../errors.js';
import { INFLUENCES, loadCharacter, type Character, type CharacterPart } from '../io/character.js';
import { fourInfluences, writeSkinnedGlb, type MorphTarget } from '../io/glbWriter.js';
import { vertexNormals } from '../io/normals.js';
import { rigWeights, skeletonFromRig } from '../io/rigSkeleton.js';
import { METHODS } from '../methods.js';
import type { PartWeights, Skeleton } from '../types.js';
import { readPosedExampleFile } from './posedExampleFile.js';
import { progressReporter, type TextSink } from './progress.js';

export const CORRECTIVES_USAGE =
  `autorig correctives <in.glb|in.gltf|in.obj> -o <out.glb> [--poses elbowBend,kneeBend,...] [--method ${CORRECTIVE_METHODS.join('|')}]\n`
  + '                    [--rig-method geometric|learned|hybrid] [--example pose.json ...]\n'
  + '  Bakes pose correctives: for each key pose (per side: elbow and knee bend 90°, shoulder raise and forward 60°,\n'
  + '  hip flex 90°, wrist bend 60°; spine twist 45°) the difference between the pose-dependent deformation and linear\n'
  + '  blend skinning, taken back to the rest pose, written as glTF morph targets. --method: poseDependentDualQuaternion\n'
  + '  (default: the learned weight field models/pose_weights.onnx with dual-quaternion blending), poseDependent (the\n'
  + '  field with linear blending), dualQuaternion (static weights, dual-quaternion blending, no model). Targets are\n'
  + '  named <bone>_<pose> with the key pose in the target accessor\'s extras. A file with its own Mixamo-named rig keeps\n'
  + '  its skeleton and weights; a file without a rig is auto-rigged first (--rig-method, default as autorig rig).\n'
  + '  --example (repeatable): a posed example to fit to first, as the add-on\'s Fit to Examples: a JSON file\n'
  + '  {"mesh": "posed.obj", "rotations": {"<bone>": [x, y, z, w], ...}, "shapeKey": false} (sidecar/cli/posedExampleFile.ts).\n'
  + `  Poses: ${KEY_POSE_NAMES.join(', ')}`;

/** The command line of `autorig correctives`, checked. */
export interface CorrectivesArguments {
  input: string;
  output: string;
  poses: string[];
  method: string;
  rigMethod?: string;
  /** posed example files (readPosedExampleFile), in the order given */
  examples: string[];
}

/** A command line the correctives command cannot run: the caller reports it with the usage (exit 64). */
export class CorrectivesUsageError extends Error {}

/**
 * parseCorrectivesArguments: arguments after the command name → CorrectivesArguments. Throws CorrectivesUsageError for
 * an unknown option, a missing value, an unknown pose or method, or an output that is not .glb.
 */
export function parseCorrectivesArguments(args: string[]): CorrectivesArguments {
  const positional: string[] = [];
  const parsed: CorrectivesArguments = { input: '', output: '', poses: [...KEY_POSE_NAMES], method: CORRECTIVE_METHODS[0], examples: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => {
      const v = args[++i];
      if (v === undefined || v === '') throw new CorrectivesUsageError(`${arg} needs a value`);
      return v;
    };
    if (arg === '-o' || arg === '--output') parsed.output = value();
    else if (arg === '--poses') {
      parsed.poses = value().split(',').map((p) => p.trim()).filter((p) => p !== '');
      const unknown = parsed.poses.filter((p) => !(KEY_POSE_NAMES as readonly string[]).includes(p));
      if (unknown.length > 0 || parsed.poses.length === 0) {
        throw new CorrectivesUsageError(`--poses: names from ${KEY_POSE_NAMES.join(', ')}; got '${unknown.join(',') || '(none)'}'`);
      }
    } else if (arg === '--method') {
      parsed.method = value();
      if (!(CORRECTIVE_METHODS as readonly string[]).includes(parsed.method)) {
        throw new CorrectivesUsageError(`--method: one of ${CORRECTIVE_METHODS.join(', ')}, got '${parsed.method}'`);
      }
    } else if (arg === '--example') {
      parsed.examples.push(value());
    } else if (arg === '--rig-method') {
      parsed.rigMethod = value();
      if (!(METHODS as readonly string[]).includes(parsed.rigMethod)) {
        throw new CorrectivesUsageError(`--rig-method: one of ${METHODS.join(', ')}, got '${parsed.rigMethod}'`);
      }
    } else if (arg.startsWith('-') && arg !== '-') throw new CorrectivesUsageError(`unknown option '${arg}'`);
    else positional.push(arg);
  }
  if (positional.length !== 1) {
    throw new CorrectivesUsageError(positional.length === 0 ? 'no input file given' : `one input file expected, got ${positional.length}`);
  }
  parsed.input = positional[0];
  if (!parsed.output) throw new CorrectivesUsageError('no output file given (-o out.glb)');
  if (extname(parsed.output).toLowerCase() !== '.glb') throw new CorrectivesUsageError(`the output must be a .glb file, got '${parsed.output}'`);
  return parsed;
}

/**
 * runCorrectivesCommand: load, take the file's rig or auto-rig, bake, write the .glb with morph targets; prints one
 * summary line. Throws AutoRigError (exit 2) for an input that cannot be read, rigged or given key poses, e.g. a rig
 * without the Mixamo joints (BAD_SKELETON) or parts its rig does not skin.
 */
export async function runCorrectivesCommand(parsed: CorrectivesArguments, io: { stdout: TextSink; stderr: TextSink }, generator: string): Promise<number> {
  // the bake (and the auto-rig) load only when the command runs: its usage and argument checks need neither
  const { bakeCorrectives } = await import('../correctives/bakeCorrectives.js');
  const character = await loadCharacter(parsed.input);
  const found = await skeletonAndWeights(character, parsed, io.stderr);
  const { skeleton, rigged } = found;
  // Bake against the weights the file will hold (4 per vertex, renormalised), so the targets fit the file's skinning.
  const weights: PartWeights[] = found.weights.map((w, p) => ({
    name: w.name, influences: INFLUENCES, ...fourInfluences(w, character.parts[p].positions.length / 3, skeleton.joints.length),
  }));
  const examples: CorrectiveExample[] = [];
  for (const file of parsed.examples) examples.push(await readPosedExampleFile(file, skeleton));
  const progress = progressReporter(io.stderr);
  let result;
  try {
    result = await bakeCorrectives(character.parts, skeleton, weights, { method: parsed.method, poses: parsed.poses }, progress.onProgress, examples);
  } finally {
    progress.finish();
  }
  const keys = new Map(keyPoses(skeleton, parsed.poses).map((key) => [key.name, key]));
  const morphTargets: MorphTarget[][] = character.parts.map(() => []);
  for (const baked of result.keys) {
    const extras = keyPoseExtras(keys.get(baked.name)!);
    baked.objects.forEach((object, p) => {
      if (movesAny(object.offsets, character.parts[p].positions)) morphTargets[p].push({ name: baked.name, displacements: object.offsets, extras });
    });
  }
  const parts: CharacterPart[] = character.parts.map((part) => (part.normals ? part : { ...part, normals: vertexNormals(part.positions, part.triangles) }));
  await writeSkinnedGlb(parsed.output, { parts, skeleton, weights, morphTargets, generator, ...(character.looks ? { looks: character.looks } : {}) });
  const targets = morphTargets.reduce((n, list) => n + list.length, 0);
  io.stdout.write(
    `${parsed.input}: ${rigged ? 'auto-rigged, then ' : ''}baked ${result.keys.length} corrective keys (${result.method}) as ${targets} morph targets`
    + ` over ${character.parts.length} part${character.parts.length === 1 ? '' : 's'} in ${result.seconds.toFixed(2)} s`
    + (result.fit ? `, fitted to ${result.fit.examples} example${result.fit.examples === 1 ? '' : 's'} first (mean distance ${result.fit.before.toPrecision(4)} → ${result.fit.after.toPrecision(4)})` : '')
    + ` → ${parsed.output}\n`,
  );
  return 0;
}

/** The file's own rig when it has the Mixamo joints and skins every part; no rig → Auto Rig; anything else refused. */
async function skeletonAndWeights(
  character: Character, parsed: CorrectivesArguments, stderr: TextSink,
): Promise<{ skeleton: Skeleton; weights: PartWeights[]; rigged: boolean }> {
  if (character.rig) {
    const skeleton = skeletonFromRig(character.rig);
    try {
      mixamoJointIndices(skeleton);
    } catch (err) {
      if (err instanceof AutoRigError) {
        throw new AutoRigError('BAD_SKELETON', `${err.message}; rig ${parsed.input} with 'autorig rig' first (or give it an unrigged mesh)`);
      }
      throw err;
    }
    const weights = rigWeights(character);
    const unskinned = character.parts.filter((_, p) => weights[p] === null).map((part) => part.name);
    if (unskinned.length > 0) {
      throw new AutoRigError('BAD_SKELETON', `the rig of ${parsed.input} does not skin ${unskinned.join(', ')}; re-skin it with 'autorig skin' first`);
    }
    return { skeleton, weights: weights as PartWeights[], rigged: false };
  }
  const progress = progressReporter(stderr);
  try {
    const { rigCharacterAsync } = await import('../pipeline.js');
    const result = await rigCharacterAsync(character.parts, { prefix: true, method: parsed.rigMethod }, progress.onProgress);
    return { skeleton: result.skeleton, weights: result.objects, rigged: true };
  } finally {
    progress.finish();
  }
}

/**
 * The key pose as an engine drives the target: the joint node's rotation at weight 1 ([x, y, z, w], about the key's
 * axis in the file's space, which is node space for the identity-rotation joints the writer makes).
 */
function keyPoseExtras(key: KeyPose): Record<string, unknown> {
  const half = key.angle / 2;
  const [x, y, z] = key.worldAxis;
  return {
    bone: key.bone,
    pose: key.pose,
    angle: (key.angle * 180) / Math.PI,
    axis: [x, y, z],
    rotation: [x * Math.sin(half), y * Math.sin(half), z * Math.sin(half), Math.cos(half)],
  };
}

/** Whether a displacement field moves any vertex by more than a millionth of the part's size. */
function movesAny(offsets: Float32Array, positions: Float32Array): boolean {
  let size = 0;
  for (let a = 0; a < 3; a++) {
    let lo = Infinity, hi = -Infinity;
    for (let i = a; i < positions.length; i += 3) {
      lo = Math.min(lo, positions[i]);
      hi = Math.max(hi, positions[i]);
    }
    size = Math.max(size, hi - lo);
  }
  const tiny = 1e-6 * size;
  for (let i = 0; i < offsets.length; i++) if (Math.abs(offsets[i]) > tiny) return true;
  return false;
}
