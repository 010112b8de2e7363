/**
 * `autorig pose`: Apply Latent Pose from the command line. A character file in (.glb, .gltf or .obj, rigged or not,
 * any topology), the same vertices in the chosen pose out (.obj or .glb), in the input's count and order:
 * - .obj input: every `v` of the file, in file order, as one object (faces of all its objects and groups kept);
 * - .glb/.gltf input: one object per triangle primitive, each with the primitive's own vertices in order, in the
 *   file's bind-pose world space (any rig in the input is not written: the output is the posed mesh only).
 * A .glb/.gltf whose skin has every Mixamo template joint and weights every part is posed through that rig (an Auto
 * Rig output, a Mixamo character); any other input is auto-rigged first. The command says which.
 * Normals are recomputed on the posed mesh; texture coordinates are kept.
 * Several poses in one run (a pipeline posing a character in the whole vocabulary) rig and encode the mesh once: after
 * the first pose each costs the decoder and the skinning only. They go to one file per pose ({pose} in the output's
 * name) or, with --shape-keys, to one .glb of the unposed mesh with a morph target per pose, which Blender's glTF
 * importer makes shape keys of, named after the poses (the add-on's Apply Latent Pose makes the same key in place).
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
import type { ApplyLatentPoseOptions, LatentPoseResult, LatentPoseReuse, PoseStrategy } from '../pose/applyLatentPose.js';
import { POSE_STRATEGIES } from '../pose/poseLibrary.js';
import { isPoseName, MAX_POSE_STRENGTH, POSE_NAMES, type PoseName } from '../pose/poseVocabulary.js';
import { missingTemplateJoints } from '../pose/templateRig.js';
import type { PartWeights } from '../types.js';
import { writeMeshGlb } from './meshGlb.js';
import { progressReporter, type TextSink } from './progress.js';

/** The command line of `autorig pose`, checked. `list`: print the installed poses instead of posing a file. */
export interface PoseArguments {
  list: boolean;
  input: string;
  /** the output file; with several poses and no shapeKeys, a name holding POSE_PLACEHOLDER (one file per pose) */
  output: string;
  /** the poses asked for, in order, each once (`--pose A,B` or `--pose all`: every pose of the vocabulary) */
  poses: PoseName[];
  strength: number;
  strategy: PoseStrategy;
  /** write one .glb of the unposed mesh with one shape key (glTF morph target) per pose, instead of posed meshes */
  shapeKeys: boolean;
}

/** In an output name, stands for the pose's name: one file per pose. */
export const POSE_PLACEHOLDER = '{pose}';

/** A command line the pose command cannot run: the caller reports it with the usage (exit 64). */
export class PoseUsageError extends Error {}

export const POSE_USAGE =
  'autorig pose <in.glb|in.gltf|in.obj> --pose NAME[,NAME...]|all [--strength S] [--strategy mean|nearest]\n'
  + '             -o <out.obj|out.glb> | -o <out_{pose}.obj|out_{pose}.glb> | --shape-keys -o <out.glb>\n'
  + '       autorig pose --list\n'
  + '  Predicts the character in a semantic pose (any mesh, rigged or not, any topology) with the latent pose models\n'
  + '  (models/latent_pose_*). The output has the input\'s vertices, in count and order (an .obj input is read as one\n'
  + '  object with every v of the file). --strength: 0 (unchanged) to ' + MAX_POSE_STRENGTH + ', default 1. --strategy: mean\n'
  + '  (the pose averaged over the training identities, default) or nearest (the training identity nearest the mesh).\n'
  + '  Several poses (a comma list, or all) are posed in one run, the mesh rigged and encoded once: one file per pose\n'
  + '  when the output name holds {pose}, or with --shape-keys one .glb of the unposed mesh with a shape key (glTF\n'
  + '  morph target, named after its pose, value 0) per pose, which Blender\'s glTF importer reads as shape keys.\n'
  + '  --list: the installed poses; "experimental" marks those where the rig-based baseline measured better.\n'
  + `  Poses: ${POSE_NAMES.join(', ')}`;

/**
 * parsePoseArguments: `autorig pose` arguments (after the command name) → PoseArguments. Throws PoseUsageError for an
 * unknown option, a missing value, an unknown pose, a strength outside [0, MAX_POSE_STRENGTH], an unknown strategy,
 * or an output that is neither .obj nor .glb.
 */
export function parsePoseArguments(args: string[]): PoseArguments {
  const positional: string[] = [];
  const parsed: PoseArguments = { list: false, input: '', output: '', poses: [], strength: 1, strategy: 'mean', shapeKeys: false };
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
    if (positional.length > 0 || parsed.output || poseList || parsed.shapeKeys) throw new PoseUsageError('--list takes no file, pose, output or --shape-keys');
    return parsed;
  }
  if (positional.length !== 1) {
    throw new PoseUsageError(positional.length === 0 ? 'no input file given' : `one input file expected, got ${positional.length}`);
  }
  parsed.input = positional[0];
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
  return parsed;
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

/** The output file of one pose: the output name with POSE_PLACEHOLDER replaced by the pose's name. */
export function poseOutputPath(output: string, pose: string): string {
  return output.split(POSE_PLACEHOLDER).join(pose);
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
    return out;
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
 * runPoseCommand: `autorig pose` (arguments already parsed). Writes the posed file (one per pose, or one .glb of shape
 * keys) and one summary line per pose, or the list of installed poses. Several poses share one reading, one rig and one
 * encoding of the mesh (applyLatentPose's reuse). Resolves with the exit code (0); model and mesh errors are thrown as
 * AutoRigError, before any file is written.
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
  let character: Character;
  const results: LatentPoseResult[] = [];
  try {
    character = await readPoseInput(parsed.input);
    const models = await starting;
    const { rig, why } = ownRig(character);
    if (!rig) models.warm(modelsRunByPose(false));
    io.stderr.write(rig
      ? `autorig: posing through the file's own rig (${rig.skeleton.joints.length} joints)\n`
      : `autorig: auto-rigging first (${why})\n`);
    let reuse: LatentPoseReuse | undefined;
    for (const pose of parsed.poses) {
      // the first pose rigs and encodes the mesh and reports its steps; the later ones reuse that and are quick
      const progress = results.length === 0 ? progressReporter(io.stderr) : null;
      try {
        const options = { pose, strength: parsed.strength, strategy: parsed.strategy, ...(rig ? { rig } : {}), ...(reuse ? { reuse } : {}) };
        const result = await applyLatentPose(character.parts, options, progress?.onProgress);
        reuse = result.reusable ?? reuse;
        results.push(result);
      } finally {
        progress?.finish();
      }
    }
  } finally {
    await (await starting).close();
  }
  // as the add-on's message and the pose menu say it: a pose the rig-based baseline measured better (or not measured)
  const { listLatentPoses } = await import('../pose/listLatentPoses.js');
  const experimental = new Set(listLatentPoses().filter((p) => p.experimental).map((p) => p.name));
  const mark = (result: LatentPoseResult) => (experimental.has(result.pose) ? ' [experimental]' : '');
  const vertices = character.parts.reduce((n, p) => n + p.positions.length / 3, 0);
  const count = `${character.parts.length} part${character.parts.length === 1 ? '' : 's'}, ${vertices} vertices`;
  const through = results[0].rig === 'given' ? 'its own rig' : 'the auto-rig';
  const say = (result: LatentPoseResult, output: string) => io.stdout.write(`autorig: posed ${parsed.input} as ${result.pose} through ${through} `
    + `(strength ${result.strength}, ${result.strategy}${result.identity ? `, identity ${result.identity}` : ''}): ${count} in ${result.seconds.toFixed(2)} s on ${result.provider}${output ? ` → ${output}` : ''}${mark(result)}\n`);
  if (parsed.shapeKeys) {
    const keys = results.map((result) => ({ name: result.pose, positions: result.objects.map((o) => o.positions) }));
    await writeMeshGlb(parsed.output, restParts(character.parts), `${generator}: ${parsed.input} with a shape key per pose (strength ${parsed.strength}, ${parsed.strategy})`, keys);
    for (const result of results) say(result, '');
    io.stdout.write(`autorig: ${results.length} shape key${results.length === 1 ? '' : 's'} → ${parsed.output}\n`);
    return 0;
  }
  for (const result of results) {
    const output = poseOutputPath(parsed.output, result.pose);
    await writePosedFile(output, posedParts(character.parts, result), `${generator}: ${parsed.input} in pose ${result.pose} (strength ${result.strength}, ${result.strategy})`);
    say(result, output);
  }
  return 0;
}
