/**
 * `autorig pose`: Apply Latent Pose from the command line. A character file in (.glb, .gltf or .obj, rigged or not,
 * any topology), the same vertices in the chosen pose out (.obj or .glb), in the input's count and order:
 * - .obj input: every `v` of the file, in file order, as one object (faces of all its objects and groups kept); an
 *   .obj output of it is the input file itself with the posed positions (io/objRepose: materials, uv seams, objects,
 *   groups and comments as they were, normals of the posed surface, mtllib paths rebased to the output's folder);
 * - .glb/.gltf input: one object per triangle primitive, each with the primitive's own vertices in order, in the
 *   file's bind-pose world space (any rig in the input is not written: the output is the posed mesh only).
 * A .glb/.gltf whose skin has every Mixamo template joint and weights every part is posed through that rig (an Auto
 * Rig output, a Mixamo character); any other input is auto-rigged first. The command says which.
 * Normals are recomputed on the posed mesh; texture coordinates are kept, and a .glb/.gltf's materials and textures.
 * Several poses in one run (a pipeline posing a character in the whole vocabulary) rig and encode the mesh once: after
 * the first pose each costs the decoder and the skinning only. They go to one file per pose ({pose} in the output's
 * name) or, with --shape-keys, to one .glb of the unposed mesh with a morph target per pose, which Blender's glTF
 * importer makes shape keys of, named after the poses (the add-on's Apply Latent Pose makes the same key in place).
 * Several files in one run (a pipeline posing a folder of characters) share the process: the models load once, and
 * the code the apply runs is compiled on the first file, so each later file's apply costs what a running sidecar's
 * does (a fresh process's first apply runs while V8 is still compiling it). Each file's outputs are written before the
 * next file is read; a file that cannot be posed is reported with its error code and the others go on.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import { AutoRigError } from '../errors.js';
import { loadCharacter, type Character, type CharacterPart } from '../io/character.js';
import type { CharacterLooks } from '../io/gltfLooks.js';
import { vertexNormals } from '../io/normals.js';
import { checkObjSize, formatObjBytes, parseObj } from '../io/obj.js';
import { reposedObjBytes } from '../io/objRepose.js';
import { rigWeights, skeletonFromRig } from '../io/rigSkeleton.js';
import { MESH_LIMITS } from '../mesh/mergeParts.js';
import { modelsRunByPose } from '../methods.js';
import type { ApplyLatentPoseOptions, LatentPoseResult, LatentPoseReuse, PoseStrategy } from '../pose/applyLatentPose.js';
import { POSE_STRATEGIES } from '../pose/poseLibrary.js';
import { isPoseName, MAX_POSE_STRENGTH, POSE_NAMES, type PoseName } from '../pose/poseVocabulary.js';
import { missingTemplateJoints } from '../pose/templateRig.js';
import type { PartWeights, Vec3 } from '../types.js';
import { axisName, conventionWarning, FACING_VALUES, facingFromText } from './facingArgument.js';
import { writeMeshGlb } from './meshGlb.js';
import { checkOutputsPerInput, expandInputFolders, forEachInput, InputListError, NAME_PLACEHOLDER, withName } from './inputFiles.js';
import { progressReporter, type TextSink } from './progress.js';

/** The command line of `autorig pose`, checked. `list`: print the installed poses instead of posing a file. */
export interface PoseArguments {
  list: boolean;
  /** the character files, in the order they are posed (at least one unless list), each once */
  inputs: string[];
  /**
   * the output file; with several poses and no shapeKeys, a name holding POSE_PLACEHOLDER (one file per pose); with
   * several inputs, a name holding NAME_PLACEHOLDER (one file per input)
   */
  output: string;
  /** the poses asked for, in order, each once (`--pose A,B` or `--pose all`: every pose of the vocabulary) */
  poses: PoseName[];
  strength: number;
  strategy: PoseStrategy;
  /** write one .glb of the unposed mesh with one shape key (glTF morph target) per pose, instead of posed meshes */
  shapeKeys: boolean;
  /** --facing: the direction the characters face in their files (not read for a file posed through its own rig) */
  facing?: Vec3;
}

/** In an output name, stands for the pose's name: one file per pose. */
export const POSE_PLACEHOLDER = '{pose}';

/** A command line the pose command cannot run: the caller reports it with the usage (exit 64). */
export class PoseUsageError extends Error {}

export const POSE_USAGE =
  'autorig pose <in.glb|in.gltf|in.obj|folder>... --pose NAME[,NAME...]|all [--strength S] [--strategy mean|nearest]\n'
  + '             [--facing +x|-x|+y|-y|+z|-z|X,Y,Z]\n'
  + '             -o <out.obj|out.glb> | -o <out_{pose}.obj|out_{pose}.glb> | --shape-keys -o <out.glb>\n'
  + '       autorig pose --list\n'
  + '  Predicts the character in a semantic pose (any mesh, rigged or not, any topology) with the latent pose models\n'
  + '  (models/latent_pose_*). The output has the input\'s vertices, in count and order (an .obj input is read as one\n'
  + '  object with every v of the file). --strength: 0 (unchanged) to ' + MAX_POSE_STRENGTH + ', default 1. --strategy: mean\n'
  + '  (the pose averaged over the training identities, default) or nearest (the training identity nearest the mesh).\n'
  + '  Several poses (a comma list, or all) are posed in one run, the mesh rigged and encoded once: one file per pose\n'
  + '  when the output name holds {pose}, or with --shape-keys one .glb of the unposed mesh with a shape key (glTF\n'
  + '  morph target, named after its pose, value 0) per pose, which Blender\'s glTF importer reads as shape keys.\n'
  + '  Several input files are posed in one run, one after the other (the models loaded once, each later file as\n'
  + '  quick as through a running sidecar): the output name holds {name}, the input\'s file name without its\n'
  + '  extension (e.g. -o posed/{name}_{pose}.glb); a folder stands for its .glb, .gltf and .obj files, by name.\n'
  + '  A file that cannot be posed is reported and the others go on; the exit code is then 2.\n'
  + '  --facing: the direction the character faces in the file, where its shape does not tell (front and back alike,\n'
  + '  feet hidden: the file\'s convention is taken, and a warning says so); a file posed through its own rig faces\n'
  + '  as the rig\'s left and right say, and --facing is not read for it.\n'
  + '  --list: the installed poses; "experimental" marks those where the rig-based baseline measured better.\n'
  + `  Poses: ${POSE_NAMES.join(', ')}`;

/**
 * parsePoseArguments: `autorig pose` arguments (after the command name) → PoseArguments. Throws PoseUsageError for an
 * unknown option, a missing value, an unknown pose, a strength outside [0, MAX_POSE_STRENGTH], an unknown strategy,
 * or an output that is neither .obj nor .glb.
 */
export function parsePoseArguments(args: string[]): PoseArguments {
  const positional: string[] = [];
  const parsed: PoseArguments = { list: false, inputs: [], output: '', poses: [], strength: 1, strategy: 'mean', shapeKeys: false };
  let poseList = '';
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => {
      const v = args[++i];
      if (v === undefined || v === '') throw new PoseUsageError(`${arg} needs a value`);
      return v;
    };
    if (arg === '--list') parsed.list = true;
    else if (arg === '-o' || arg === '--output') parsed.output = value();
    else if (arg === '--pose') poseList = value();
    else if (arg === '--shape-keys') parsed.shapeKeys = true;
    else if (arg === '--facing') {
      const text = value();
      const facing = facingFromText(text);
      if (!facing) throw new PoseUsageError(`--facing: ${FACING_VALUES}, got '${text}'`);
      parsed.facing = facing;
    }
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
    if (positional.length > 0 || parsed.output || poseList || parsed.shapeKeys || parsed.facing) throw new PoseUsageError('--list takes no file, pose, output, --shape-keys or --facing');
    return parsed;
  }
  if (positional.length === 0) throw new PoseUsageError('no input file given');
  parsed.inputs = positional;
  if (!poseList) throw new PoseUsageError('no pose given (--pose NAME; autorig pose --list shows the installed poses)');
  parsed.poses = parsePoseList(poseList);
  if (!parsed.output) throw new PoseUsageError('no output file given (-o out.obj or out.glb)');
  const kind = extname(parsed.output).toLowerCase();
  if (kind !== '.obj' && kind !== '.glb') throw new PoseUsageError(`the output must be a .obj or .glb file, got '${parsed.output}'`);
  const perPose = parsed.output.includes(POSE_PLACEHOLDER);
  if (parsed.shapeKeys) {
    if (kind !== '.glb') throw new PoseUsageError(`--shape-keys writes a .glb (an .obj has no shape keys), got '${parsed.output}'`);
    if (perPose) throw new PoseUsageError(`--shape-keys writes one file with every pose: its name cannot hold ${POSE_PLACEHOLDER}`);
  } else if (parsed.poses.length > 1 && !perPose) {
    throw new PoseUsageError(`${parsed.poses.length} poses asked for: name the output with ${POSE_PLACEHOLDER} (one file per pose, e.g. `
      + `-o out_${POSE_PLACEHOLDER}${kind}), or give --shape-keys and a .glb (one file, a shape key per pose)`);
  }
  checkOutputNames(parsed);
  return parsed;
}

/**
 * expandPoseInputs: parsed arguments → the same with each input that is a folder replaced by its character files
 * (inputFiles.expandInputFolders), the output names checked again over the files. Throws PoseUsageError for a folder
 * with no character file, and as parsePoseArguments for the output's name.
 */
export async function expandPoseInputs(parsed: PoseArguments): Promise<PoseArguments> {
  if (parsed.list) return parsed;
  let inputs: string[];
  try {
    inputs = await expandInputFolders(parsed.inputs);
  } catch (err) {
    throw err instanceof InputListError ? new PoseUsageError(err.message) : err;
  }
  const expanded = { ...parsed, inputs };
  checkOutputNames(expanded);
  return expanded;
}

/**
 * checkOutputNames: throws PoseUsageError when several inputs are given and the output's name lacks NAME_PLACEHOLDER,
 * or when two inputs would write the same file, before anything is posed (inputFiles.checkOutputsPerInput).
 */
function checkOutputNames(parsed: PoseArguments): void {
  const kind = extname(parsed.output).toLowerCase();
  const example = `-o posed/${NAME_PLACEHOLDER}${parsed.shapeKeys || parsed.poses.length === 1 ? '' : `_${POSE_PLACEHOLDER}`}${kind}`;
  const posesPerFile = parsed.shapeKeys ? [parsed.poses[0]] : parsed.poses;
  try {
    checkOutputsPerInput(parsed.inputs, [parsed.output], example, (input) => posesPerFile.map((pose) => poseOutputPath(parsed.output, pose, input)));
  } catch (err) {
    throw err instanceof InputListError ? new PoseUsageError(err.message) : err;
  }
}

/**
 * parsePoseList: the value of --pose → the poses in the order given, each once: a comma list of pose names, or `all`
 * (every pose of the vocabulary, POSE_NAMES order). Throws PoseUsageError for an unknown or empty name.
 */
export function parsePoseList(text: string): PoseName[] {
  if (text.trim() === 'all') return [...POSE_NAMES];
  const poses: PoseName[] = [];
  for (const raw of text.split(',')) {
    const name = raw.trim();
    if (!name) throw new PoseUsageError(`--pose: an empty name in '${text}'`);
    if (!isPoseName(name)) throw new PoseUsageError(`--pose: unknown pose '${name}'`);
    if (!poses.includes(name)) poses.push(name);
  }
  return poses;
}

/**
 * poseOutputPath: the output file of one pose of one input: the output name with POSE_PLACEHOLDER replaced by the
 * pose's name and NAME_PLACEHOLDER by the input's file name without its folder and (last) extension.
 */
export function poseOutputPath(output: string, pose: string, input = ''): string {
  return withName(output.split(POSE_PLACEHOLDER).join(pose), input);
}

/**
 * readPoseInput: a character file → its parts, with the vertex order the output keeps: an .obj as one part holding
 * every `v` in file order (loadCharacter would split it by object and drop vertices no face uses), any other file as
 * loadCharacter reads it. Throws what loadCharacter throws (BAD_REQUEST, TOO_LARGE, EMPTY_MESH, BAD_INDEX, BAD_NUMBER).
 */
export async function readPoseInput(path: string): Promise<PoseInput> {
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
  return { ...character, objBytes: bytes };
}

/** A character read for posing; an .obj's own bytes too (objBytes), whose posed copy keeps all but the positions. */
export type PoseInput = Character & { objBytes?: Uint8Array };

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
  return partsAt(parts, (k) => result.objects[k].positions);
}

/** restParts: the input parts unposed, normals computed on them, uvs kept (the base of a shape-key file). */
export function restParts(parts: CharacterPart[]): CharacterPart[] {
  return partsAt(parts, (k) => parts[k].positions);
}

/** The parts with part k's vertices at positionsOf(k) (#V_k*3), their normals computed there, faces and uvs kept. */
function partsAt(parts: CharacterPart[], positionsOf: (k: number) => Float32Array): CharacterPart[] {
  return parts.map((part, k) => {
    const positions = positionsOf(k);
    const out: CharacterPart = { name: part.name, positions, triangles: part.triangles, normals: vertexNormals(positions, part.triangles) };
    if (part.uvs) out.uvs = part.uvs;
    if (part.material !== undefined) out.material = part.material;
    return out;
  });
}

/**
 * writePosedFile: the posed parts to `path`, .obj (one `o` per part) or .glb (one mesh node per part, with the input's
 * materials and textures when `looks` has them).
 */
export async function writePosedFile(path: string, parts: CharacterPart[], header: string, looks?: CharacterLooks): Promise<void> {
  if (extname(path).toLowerCase() === '.glb') {
    await writeMeshGlb(path, parts, header, [], looks);
    return;
  }
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, formatObjBytes(parts, { header }));
}

/**
 * runPoseCommand: `autorig pose` (arguments already parsed). Per input file, in order: writes the posed file (one per
 * pose, or one .glb of shape keys) and one summary line per pose; or prints the list of installed poses. Several poses
 * of a file share one reading, one rig and one encoding of its mesh (applyLatentPose's reuse); several files share the
 * models (one model thread) and nothing else. Resolves with the exit code: 0, or EXIT_CANNOT_RIG when some of several
 * files could not be posed (each reported on stderr with its error code, the others posed). With one input, model and
 * mesh errors are thrown as AutoRigError, before any file is written.
 */
export async function runPoseCommand(parsed: PoseArguments, io: { stdout: TextSink; stderr: TextSink }, generator: string): Promise<number> {
  // The apply path loads the mesh and model code: imported only when the command runs.
  const { listLatentPoses } = await import('../pose/listLatentPoses.js');
  if (parsed.list) {
    const poses = listLatentPoses();
    const width = Math.max(...poses.map((p) => p.name.length), 4);
    for (const p of poses) io.stdout.write(`${p.name.padEnd(width)}  ${p.experimental ? 'experimental' : 'measured   '}  ${p.note}\n`);
    return 0;
  }
  const { startModelThread } = await import('./modelThread.js');
  // as the add-on's message and the pose menu say it: a pose the rig-based baseline measured better (or not measured)
  const experimental = new Set(listLatentPoses().filter((p) => p.experimental).map((p) => p.name));
  // the models load on their own thread while the first file is read: the latent pair whatever the file holds, the
  // auto-rig's once a file proves to have no rig of its own, or at once when it is an .obj (which has no skin)
  const objFirst = extname(parsed.inputs[0]).toLowerCase() === '.obj';
  const starting = startModelThread(modelsRunByPose(!objFirst));
  try {
    let autoRigWarmed = objFirst;
    const warmAutoRig = async () => {
      if (!autoRigWarmed) (await starting).warm(modelsRunByPose(false));
      autoRigWarmed = true;
    };
    return await forEachInput(parsed.inputs, io.stderr, 'posed', (input) => poseFile(input, parsed, { io, generator, experimental, models: starting, warmAutoRig }));
  } finally {
    await (await starting).close();
  }
}

/** What poseFile shares with the other files of a run. */
interface PoseRun {
  io: { stdout: TextSink; stderr: TextSink };
  generator: string;
  /** the poses marked experimental (listLatentPoses) */
  experimental: ReadonlySet<string>;
  models: Promise<{ close(): Promise<void> }>;
  /** start loading the auto-rig's models (once per run) */
  warmAutoRig: () => Promise<void>;
}

/**
 * poseFile: one input of `autorig pose`: reads it, poses it in every pose asked for (rigged and encoded once), writes
 * its outputs (names from poseOutputPath) and says one line per pose. Throws AutoRigError (the file's or the models'
 * error) before writing anything of this file.
 */
async function poseFile(input: string, parsed: PoseArguments, run: PoseRun): Promise<void> {
  const { applyLatentPose } = await import('../pose/applyLatentPose.js');
  const { io, generator } = run;
  const character = await readPoseInput(input);
  await run.models;
  const { rig, why } = ownRig(character);
  if (!rig) await run.warmAutoRig();
  io.stderr.write(rig
    ? `autorig: ${prefix(parsed, input)}posing through the file's own rig (${rig.skeleton.joints.length} joints)\n`
    : `autorig: ${prefix(parsed, input)}auto-rigging first (${why})\n`);
  const results: LatentPoseResult[] = [];
  let reuse: LatentPoseReuse | undefined;
  for (const pose of parsed.poses) {
    // the first pose rigs and encodes the mesh and reports its steps; the later ones reuse that and are quick
    const progress = results.length === 0 ? progressReporter(io.stderr) : null;
    try {
      const options: ApplyLatentPoseOptions = {
        pose, strength: parsed.strength, strategy: parsed.strategy, ...(rig ? { rig } : {}), ...(reuse ? { reuse } : {}),
        ...(parsed.facing ? { facing: parsed.facing } : {}),
      };
      const result = await applyLatentPose(character.parts, options, progress?.onProgress);
      reuse = result.reusable ?? reuse;
      results.push(result);
    } finally {
      progress?.finish();
    }
  }
  if (results[0].facing === 'convention') io.stderr.write(conventionWarning(input, results[0].forward));
  if (rig && parsed.facing && results[0].facing === 'rig') {
    io.stderr.write(`autorig: ${prefix(parsed, input)}--facing is not read: the file's own rig faces ${axisName(results[0].forward)}\n`);
  }
  const mark = (result: LatentPoseResult) => (run.experimental.has(result.pose) ? ' [experimental]' : '');
  const vertices = character.parts.reduce((n, p) => n + p.positions.length / 3, 0);
  const count = `${character.parts.length} part${character.parts.length === 1 ? '' : 's'}, ${vertices} vertices`;
  const through = results[0].rig === 'given' ? 'its own rig' : 'the auto-rig';
  const say = (result: LatentPoseResult, output: string) => io.stdout.write(`autorig: posed ${input} as ${result.pose} through ${through} `
    + `(strength ${result.strength}, ${result.strategy}${result.identity ? `, identity ${result.identity}` : ''}): ${count} in ${result.seconds.toFixed(2)} s on ${result.provider}${output ? ` → ${output}` : ''}${mark(result)}\n`);
  if (parsed.shapeKeys) {
    const output = poseOutputPath(parsed.output, '', input);
    const keys = results.map((result) => ({ name: result.pose, positions: result.objects.map((o) => o.positions) }));
    await writeMeshGlb(output, restParts(character.parts), `${generator}: ${input} with a shape key per pose (strength ${parsed.strength}, ${parsed.strategy})`, keys, character.looks);
    for (const result of results) say(result, '');
    io.stdout.write(`autorig: ${results.length} shape key${results.length === 1 ? '' : 's'} → ${output}\n`);
    return;
  }
  for (const result of results) {
    const output = poseOutputPath(parsed.output, result.pose, input);
    const header = `${generator}: ${input} in pose ${result.pose} (strength ${result.strength}, ${result.strategy})`;
    if (character.objBytes !== undefined && extname(output).toLowerCase() === '.obj') {
      // .obj to .obj: the input file with the posed positions, its materials, uv seams and groups kept
      await mkdir(dirname(resolve(output)), { recursive: true });
      await writeFile(output, reposedObjBytes(character.objBytes, result.objects[0].positions, { header, fromFolder: dirname(resolve(input)), toFolder: dirname(resolve(output)) }));
    } else {
      await writePosedFile(output, posedParts(character.parts, result), header, character.looks);
    }
    say(result, output);
  }
}

/** With several inputs, a stderr line names its file ("in.obj: "); with one, it needs not. */
function prefix(parsed: PoseArguments, input: string): string {
  return parsed.inputs.length > 1 ? `${input}: ` : '';
}
