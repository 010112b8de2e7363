/**
 * `autorig pose`: Apply Latent Pose from the command line. A character file in (.glb, .gltf or .obj, rigged or not,
 * any topology), the same vertices in the chosen pose out (.obj or .glb), in the input's count and order:
 * - .obj input: every `v` of the file, in file order, as one object (faces of all its objects and groups kept);
 * - .glb/.gltf input: one object per triangle primitive, each with the primitive's own vertices in order, in the
 *   file's bind-pose world space (any rig in the input is not written: the output is the posed mesh only).
 * A .glb/.gltf whose skin has every Mixamo template joint and weights every part is posed through that rig (an Auto
 * Rig output, a Mixamo character); any other input is auto-rigged first. The command says which.
 * Normals are recomputed on the posed mesh; texture coordinates are kept.
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname, extname } from 'node:path';
import { AutoRigError } from '../errors.js';
import { loadCharacter, type Character, type CharacterPart } from '../io/character.js';
import { vertexNormals } from '../io/normals.js';
import { checkObjSize, formatObjBytes, parseObj } from '../io/obj.js';
import { rigWeights, skeletonFromRig } from '../io/rigSkeleton.js';
import { MESH_LIMITS } from '../mesh/mergeParts.js';
import { modelsRunByPose } from '../methods.js';
import type { ApplyLatentPoseOptions, LatentPoseResult, PoseStrategy } from '../pose/applyLatentPose.js';
import { POSE_STRATEGIES } from '../pose/poseLibrary.js';
import { isPoseName, MAX_POSE_STRENGTH, POSE_NAMES } from '../pose/poseVocabulary.js';
import { missingTemplateJoints } from '../pose/templateRig.js';
import type { PartWeights } from '../types.js';
import { writeMeshGlb } from './meshGlb.js';
import { progressReporter, type TextSink } from './progress.js';

/** The command line of `autorig pose`, checked. `list`: print the installed poses instead of posing a file. */
export interface PoseArguments {
  list: boolean;
  input: string;
  output: string;
  pose: string;
  strength: number;
  strategy: PoseStrategy;
}

/** A command line the pose command cannot run: the caller reports it with the usage (exit 64). */
export class PoseUsageError extends Error {}

export const POSE_USAGE =
  'autorig pose <in.glb|in.gltf|in.obj> --pose NAME [--strength S] [--strategy mean|nearest] -o <out.obj|out.glb>\n'
  + '       autorig pose --list\n'
  + '  Predicts the character in a semantic pose (any mesh, rigged or not, any topology) with the latent pose models\n'
  + '  (models/latent_pose_*). The output has the input\'s vertices, in count and order (an .obj input is read as one\n'
  + '  object with every v of the file). --strength: 0 (unchanged) to ' + MAX_POSE_STRENGTH + ', default 1. --strategy: mean\n'
  + '  (the pose averaged over the training identities, default) or nearest (the training identity nearest the mesh).\n'
  + '  --list: the installed poses; "experimental" marks those where the rig-based baseline measured better.\n'
  + `  Poses: ${POSE_NAMES.join(', ')}`;

/**
 * parsePoseArguments: `autorig pose` arguments (after the command name) → PoseArguments. Throws PoseUsageError for an
 * unknown option, a missing value, an unknown pose, a strength outside [0, MAX_POSE_STRENGTH], an unknown strategy,
 * or an output that is neither .obj nor .glb.
 */
export function parsePoseArguments(args: string[]): PoseArguments {
  const positional: string[] = [];
  const parsed: PoseArguments = { list: false, input: '', output: '', pose: '', strength: 1, strategy: 'mean' };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => {
      const v = args[++i];
      if (v === undefined || v === '') throw new PoseUsageError(`${arg} needs a value`);
      return v;
    };
    if (arg === '--list') parsed.list = true;
    else if (arg === '-o' || arg === '--output') parsed.output = value();
    else if (arg === '--pose') parsed.pose = value();
    else if (arg === '--strength') {
      const text = value();
      const strength = Number(text);
      if (!/^[0-9.eE+-]+$/.test(text) || !(strength >= 0 && strength <= MAX_POSE_STRENGTH)) {
        throw new PoseUsageError(`--strength wants a number from 0 to ${MAX_POSE_STRENGTH}, got '${text}'`);
      }
      parsed.strength = strength;
    } else if (arg === '--strategy') {
      const strategy = value();
      if (!(POSE_STRATEGIES as readonly string[]).includes(strategy)) {
        throw new PoseUsageError(`--strategy is one of ${POSE_STRATEGIES.join(', ')}, got '${strategy}'`);
      }
      parsed.strategy = strategy as PoseStrategy;
    } else if (arg.startsWith('-') && arg !== '-') throw new PoseUsageError(`unknown option '${arg}'`);
    else positional.push(arg);
  }
  if (parsed.list) {
    if (positional.length > 0 || parsed.output || parsed.pose) throw new PoseUsageError('--list takes no file, pose or output');
    return parsed;
  }
  if (positional.length !== 1) {
    throw new PoseUsageError(positional.length === 0 ? 'no input file given' : `one input file expected, got ${positional.length}`);
  }
  parsed.input = positional[0];
  if (!parsed.pose) throw new PoseUsageError('no pose given (--pose NAME; autorig pose --list shows the installed poses)');
  if (!isPoseName(parsed.pose)) throw new PoseUsageError(`--pose: unknown pose '${parsed.pose}'`);
  if (!parsed.output) throw new PoseUsageError('no output file given (-o out.obj or out.glb)');
  const kind = extname(parsed.output).toLowerCase();
  if (kind !== '.obj' && kind !== '.glb') throw new PoseUsageError(`the output must be a .obj or .glb file, got '${parsed.output}'`);
  return parsed;
}

/**
 * readPoseInput: a character file → its parts, with the vertex order the output keeps: an .obj as one part holding
 * every `v` in file order (loadCharacter would split it by object and drop vertices no face uses), any other file as
 * loadCharacter reads it. Throws what loadCharacter throws (BAD_REQUEST, TOO_LARGE, EMPTY_MESH, BAD_INDEX, BAD_NUMBER).
 */
export async function readPoseInput(path: string): Promise<Character> {
  if (extname(path).toLowerCase() !== '.obj') return loadCharacter(path);
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new AutoRigError('BAD_REQUEST', `${path}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const counted = checkObjSize(bytes, MESH_LIMITS, path);
  const character = parseObj(new TextDecoder('utf-8').decode(bytes), { source: path, groupBy: 'none', counted });
  if (character.parts.length === 0 || character.parts.every((part) => part.triangles.length === 0)) {
    throw new AutoRigError('EMPTY_MESH', `${path}: the file holds no faces`);
  }
  return character;
}

/**
 * ownRig: a character read from a file → its rig as Apply Latent Pose's rig option (skeleton, one PartWeights per part)
 * when the file's skin has every Mixamo template joint and weights every part; else null and `why` says what is
 * missing (the command then auto-rigs: a pose needs a rig, not this one).
 */
export function ownRig(character: Character): { rig: NonNullable<ApplyLatentPoseOptions['rig']> | null; why: string } {
  if (!character.rig) return { rig: null, why: 'the file has no skin' };
  const skeleton = skeletonFromRig(character.rig);
  const missing = missingTemplateJoints(skeleton);
  if (missing.length > 0) return { rig: null, why: `its skin lacks the Mixamo joint${missing.length === 1 ? '' : 's'} ${missing.join(', ')}` };
  const weights = rigWeights(character);
  const unskinned = character.parts.filter((_, p) => weights[p] === null).map((part) => part.name);
  if (unskinned.length > 0) return { rig: null, why: `its skin does not weight ${unskinned.join(', ')}` };
  return { rig: { skeleton, objects: weights as PartWeights[] }, why: '' };
}

/**
 * posedParts: the input parts with the posed positions of `result` (same count and order), normals recomputed on the
 * posed surface, uvs kept.
 */
export function posedParts(parts: CharacterPart[], result: LatentPoseResult): CharacterPart[] {
  return parts.map((part, k) => {
    const positions = result.objects[k].positions;
    const posed: CharacterPart = { name: part.name, positions, triangles: part.triangles, normals: vertexNormals(positions, part.triangles) };
    if (part.uvs) posed.uvs = part.uvs;
    return posed;
  });
}

/** writePosedFile: the posed parts to `path`, .obj (one `o` per part) or .glb (one mesh node per part). */
export async function writePosedFile(path: string, parts: CharacterPart[], header: string): Promise<void> {
  if (extname(path).toLowerCase() === '.glb') {
    await writeMeshGlb(path, parts, header);
    return;
  }
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, formatObjBytes(parts, { header }));
}

/**
 * runPoseCommand: `autorig pose` (arguments already parsed). Writes the posed file and one summary line, or the list
 * of installed poses. Resolves with the exit code (0); model and mesh errors are thrown as AutoRigError.
 */
export async function runPoseCommand(parsed: PoseArguments, io: { stdout: TextSink; stderr: TextSink }, generator: string): Promise<number> {
  // The apply path loads the mesh and model code: imported only when the command runs.
  if (parsed.list) {
    const { listLatentPoses } = await import('../pose/listLatentPoses.js');
    const poses = listLatentPoses();
    const width = Math.max(...poses.map((p) => p.name.length), 4);
    for (const p of poses) io.stdout.write(`${p.name.padEnd(width)}  ${p.experimental ? 'experimental' : 'measured   '}  ${p.note}\n`);
    return 0;
  }
  const { applyLatentPose } = await import('../pose/applyLatentPose.js');
  const { startModelThread } = await import('./modelThread.js');
  // the models load on their own thread while the file is read: the latent pair whatever the file holds, the
  // auto-rig's once it proves to have no rig of its own
  const starting = startModelThread(modelsRunByPose(true));
  let character: Character, result: LatentPoseResult;
  try {
    character = await readPoseInput(parsed.input);
    const models = await starting;
    const { rig, why } = ownRig(character);
    if (!rig) models.warm(modelsRunByPose(false));
    io.stderr.write(rig
      ? `autorig: posing through the file's own rig (${rig.skeleton.joints.length} joints)\n`
      : `autorig: auto-rigging first (${why})\n`);
    const progress = progressReporter(io.stderr);
    try {
      const options = { pose: parsed.pose, strength: parsed.strength, strategy: parsed.strategy, ...(rig ? { rig } : {}) };
      result = await applyLatentPose(character.parts, options, progress.onProgress);
    } finally {
      progress.finish();
    }
  } finally {
    await (await starting).close();
  }
  const parts = posedParts(character.parts, result);
  await writePosedFile(parsed.output, parts, `${generator}: ${parsed.input} in pose ${result.pose} (strength ${result.strength}, ${result.strategy})`);
  const vertices = parts.reduce((n, p) => n + p.positions.length / 3, 0);
  const who = result.identity ? `, identity ${result.identity}` : '';
  const through = result.rig === 'given' ? 'its own rig' : 'the auto-rig';
  io.stdout.write(`autorig: posed ${parsed.input} as ${result.pose} through ${through} (strength ${result.strength}, ${result.strategy}${who}): `
    + `${parts.length} part${parts.length === 1 ? '' : 's'}, ${vertices} vertices in ${result.seconds.toFixed(2)} s on ${result.provider} → ${parsed.output}\n`);
  return 0;
}
