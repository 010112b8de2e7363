/**
 * The `autorig` command line: rig or re-skin glTF/OBJ files, pose a character (Apply Latent Pose), bake pose
 * correctives, run the demo, or serve the Blender add-on.
 * bin/autorig.js calls main(). Exit codes: 0 done, 2 the input cannot be rigged (AutoRigError, its code is printed),
 * 64 bad usage (with the help text), 1 an unexpected failure.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { extname, join, relative, resolve } from 'node:path';
import { AutoRigError } from '../errors.js';
import { EXIT_CANNOT_RIG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './exitCodes.js';
import { CHARACTER_EXTENSIONS, checkOutputsPerInput, expandInputFolders, forEachInput, InputListError, NAME_PLACEHOLDER, withName } from './inputFiles.js';
import { packageRoot } from '../packageRoot.js';
import { findCanonicalFrame } from '../mesh/canonicalFrame.js';
import { mergeParts } from '../mesh/mergeParts.js';
import { DEFAULT_METHOD, METHODS } from '../methods.js';
import { loadCharacter, type Character, type CharacterPart } from '../io/character.js';
import { writeSkinnedGlb } from '../io/glbWriter.js';
import { vertexNormals } from '../io/normals.js';
import { skeletonFromRig } from '../io/rigSkeleton.js';
import type { Frame, PartWeights, Skeleton, Vec3 } from '../types.js';
import { DEMO_CHARACTER_PATH } from './demoCharacter.js';
import { conventionWarning, FACING_VALUES, facingFromText } from './facingArgument.js';
import type { EvalOptions } from '../eval/runEval.js';
import { POSE_EVAL_USAGE } from '../eval/poses/poseEvalArguments.js';
import { CORRECTIVES_EVAL_USAGE } from '../eval/correctives/correctivesEvalArguments.js';
import { SKELETON_EVAL_USAGE } from '../eval/procedural/proceduralSkeletonArguments.js';
import { CORRECTIVE_SHARE_USAGE } from '../eval/poses/correctiveShareArguments.js';
import type { DatasetKind, DatasetOptions } from '../data/makeDataset.js';
import { expandPoseInputs, parsePoseArguments, POSE_USAGE, PoseUsageError, runPoseCommand } from './poseCommand.js';
import { CORRECTIVES_USAGE, CorrectivesUsageError, parseCorrectivesArguments, runCorrectivesCommand } from './correctivesCommand.js';
import { writePreviewPng } from './preview.js';
import { progressReporter, type TextSink } from './progress.js';

/** Where a command writes: the process's streams, or capturing stand-ins in tests. */
export interface CliIo {
  stdout: TextSink;
  stderr: TextSink;
}

/** A wrong command line: reported with the command's usage, exit code 64 (EX_USAGE). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

interface Command {
  summary: string;
  usage: string;
  /** usage texts of subcommands (`autorig eval poses --help` prints the poses eval's own) */
  subcommandUsage?: Record<string, string>;
  run(args: string[], io: CliIo): Promise<number>;
}

export { EXIT_CANNOT_RIG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE };

/**
 * The subcommands. A command's own code (the pipeline, the server, the evals, the data maker) is imported when it runs,
 * not with this module: loading all of it took 0.4 s before any command started.
 */
/** How `rig` and `skin` take several files (inputFiles.ts). */
const SEVERAL_INPUTS_USAGE =
  '  Several input files (or a folder: its character files, by name) are done in one run, the models loaded once:\n'
  + '  the output (and preview) name holds {name}, the input\'s file name without its extension, e.g.\n'
  + '  -o rigged/{name}.glb. A file that fails is reported with its error code and the others go on (exit code 2).\n';

const commands: Record<string, Command> = {
  rig: {
    summary: 'find a Mixamo skeleton and skinning weights for a character',
    usage: 'autorig rig <in.glb|in.gltf|in.obj|folder>... -o <out.glb> [--preview <out.png>] [--no-prefix] [--method geometric|learned|hybrid]\n'
      + '                 [--facing +x|-x|+y|-y|+z|-z|X,Y,Z]\n'
      + '  Any rig already in the input is ignored. --no-prefix: bone names without "mixamorig:".\n'
      + '  --facing: the direction the character faces in the file, where its shape does not tell (its feet hidden, its\n'
      + '  front and back alike: then the file conventions are followed, +Z for +Y up, -Y for +Z up, and a warning\n'
      + '  says so) or where left and right came out swapped.\n'
      + SEVERAL_INPUTS_USAGE
      + '  --method: default hybrid. geometric reads the joints from the silhouette by rules; learned and hybrid find\n'
      + '  them with models/joints2d.onnx and refine them with models/point_rig.onnx: learned takes point_rig\'s joints\n'
      + '  and weights, hybrid only the trunk and leg joints\' depth (front to back), and skins geometrically.',
    run: rigCommand,
  },
  skin: {
    summary: "recompute the skinning weights for the file's own skeleton",
    usage: 'autorig skin <in.glb|in.gltf|folder>... -o <out.glb> [--preview <out.png>] [--method geometric|learned]\n'
      + '                 [--facing +x|-x|+y|-y|+z|-z|X,Y,Z]\n'
      + '  --method: geometric (default) or learned (models/point_rig.onnx; only for our 23-joint Mixamo skeleton).\n'
      + '  A Mixamo-named skeleton is skinned facing the way its left and right say (the frame it was rigged in); for\n'
      + '  another, --facing says it where the shape does not tell (as for rig).\n'
      + SEVERAL_INPUTS_USAGE.trimEnd(),
    run: skinCommand,
  },
  pose: {
    summary: 'put any character mesh in a semantic pose (Apply Latent Pose): the same vertices, posed',
    usage: POSE_USAGE,
    run: poseCommand,
  },
  correctives: {
    summary: 'bake pose corrective shape keys (glTF morph targets) for a rigged or unrigged character',
    usage: CORRECTIVES_USAGE,
    run: correctivesCommand,
  },
  demo: {
    summary: "rig the project's demo character into out/demo/",
    usage: 'autorig demo [-o <folder>]   (default folder: out/demo)',
    run: demoCommand,
  },
  eval: {
    summary: "measure skeleton and skinning against artists' rigs (and Blender's bone heat)",
    usage: 'autorig eval --data <folder> [--json <out.json>] [--report <out.md>] [--peer blender] [--remesh N]\n'
      + '                    [--method NAME] [--only name1,name2] [--seed N] [--blender <path>]\n'
      + '  Strips the rig of every rigged .glb in the folder, rigs the bare mesh, and scores it against the artist.\n'
      + '  --report also writes pictures into <out>-pictures/. Metrics and the JSON schema: docs/EVAL.md.\n'
      + '  Subcommands: autorig eval poses (Apply Latent Pose; see autorig eval poses --help),\n'
      + '  autorig eval correctives (pose correctives against exact posed surfaces; see autorig eval correctives --help),\n'
      + '  autorig eval corrective-share (fits Apply Latent Pose\'s corrective share per pose on development identities),\n'
      + '  autorig eval skeletons (the auto-rig\'s joints against procedural humanoids\' exact ones; see autorig eval skeletons --help).',
    subcommandUsage: { poses: POSE_EVAL_USAGE, correctives: CORRECTIVES_EVAL_USAGE, 'corrective-share': CORRECTIVE_SHARE_USAGE, skeletons: SKELETON_EVAL_USAGE },
    run: evalCommand,
  },
  data: {
    summary: 'make training samples for the learned models (procedural humanoids + re-proportioned dev characters)',
    usage: 'autorig data --out <folder> --count N [--kind rig|pose|pose-rig|correctives] [--seed S] [--augmented-fraction F] [--characters <folder>]\n'
      + '                    [--jobs N] [--procedural-vertices LO,HI] [--augmented-vertices LO,HI|0] [--asymmetric-arms F] [--resume]\n'
      + '  Sample i is a pure function of (seed, i). The held-out dev characters never enter the data.\n'
      + '  --resume: keep the samples whose files are in --out already and make the rest (finishes an interrupted run of the\n'
      + '         same command; files are renamed into place once whole).\n'
      + '  --kind rig: HumanRig samples (*.sample); pose: latent-pose identities, neutral and every pose (*.pose, with\n'
      + '         their rigs, *.poserig); pose-rig: only the *.poserig of a folder of *.pose files made with the same options;\n'
      + '         correctives: pose-dependent skinning samples (*.corr; procedural only, --augmented-fraction ignored).\n'
      + '  --asymmetric-arms F: that share of the procedural humanoids pose each arm on its own (one raised, one hanging).\n'
      + '  Defaults: seed 1, augmented fraction 0.3, characters ../shared/data/characters, jobs 1, asymmetric arms 0.',
    run: dataCommand,
  },
  serve: {
    summary: 'run the sidecar for the Blender add-on (WebSocket on 127.0.0.1)',
    usage: 'autorig serve [--port N] [--no-warm-up]   (AUTORIG_TOKEN must be set in the environment)',
    run: async (args) => (await import('../server/serveCommand.js')).runServeCommand(args),
  },
};

/** main: run the command line `argv` (without node and the script) and set process.exitCode. */
export async function main(argv: string[]): Promise<number> {
  const code = await runCli(argv, { stdout: process.stdout, stderr: process.stderr });
  process.exitCode = code;
  return code;
}

/** runCli: main without touching process state; resolves with the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  try {
    if (name === undefined) throw new UsageError('no command given', helpText());
    if (name === '--help' || name === '-h' || name === 'help') {
      io.stdout.write(`${helpText()}\n`);
      return EXIT_OK;
    }
    if (name === '--version' || name === '-V') {
      io.stdout.write(`autorig ${packageVersion()}\n`);
      return EXIT_OK;
    }
    const command = commands[name];
    if (!command) throw new UsageError(`unknown command '${name}'`, helpText());
    if (args.includes('--help') || args.includes('-h')) {
      io.stdout.write(`usage: ${command.subcommandUsage?.[args[0]] ?? command.usage}\n`);
      return EXIT_OK;
    }
    return await command.run(args, io);
  } catch (err) {
    return reportError(err, io);
  }
}

function reportError(err: unknown, io: CliIo): number {
  if (err instanceof UsageError) {
    io.stderr.write(`autorig: ${err.message}\n${err.usage.startsWith('usage') ? '' : 'usage: '}${err.usage}\n`);
    return EXIT_USAGE;
  }
  if (err instanceof AutoRigError) {
    io.stderr.write(`autorig: error ${err.code}: ${err.message}\n`);
    return EXIT_CANNOT_RIG;
  }
  io.stderr.write(`autorig: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return EXIT_FAILURE;
}

function helpText(): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length));
  const lines = Object.entries(commands).map(([n, c]) => `  ${n.padEnd(width)}  ${c.summary}`);
  return [
    'usage: autorig <command> [options]',
    '',
    'commands:',
    ...lines,
    '',
    "Run 'autorig <command> --help' for a command's options.",
    'Exit codes: 0 done, 2 the character cannot be rigged (the error code is printed), 64 bad usage, 1 internal error.',
  ].join('\n');
}

/** Parsed `<input>... -o <out> [--preview <png>] [flags]`. */
interface FileArguments {
  /** at least one */
  inputs: string[];
  output: string;
  preview?: string;
  method?: string;
  /** --facing (rig only) */
  facing?: Vec3;
  flags: Set<string>;
}

/** Parse a file command's arguments; `flags` lists the boolean flags it accepts, `facing` whether it takes --facing. */
function parseFileArguments(args: string[], usage: string, flags: string[] = [], facing = false): FileArguments {
  const positional: string[] = [];
  let output: string | undefined;
  let preview: string | undefined;
  let method: string | undefined;
  let facingHint: Vec3 | undefined;
  const seen = new Set<string>();
  forEachOption(args, usage, (arg, value) => {
    if (arg === '-o' || arg === '--output') output = value();
    else if (arg === '--preview') preview = value();
    else if (arg === '--method') method = checkMethodName(value(), usage);
    else if (arg === '--facing' && facing) facingHint = parseFacing(value(), usage);
    else if (flags.includes(arg)) seen.add(arg);
    else if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option '${arg}'`, usage);
    else positional.push(arg);
  });
  if (positional.length === 0) throw new UsageError('no input file given', usage);
  if (output === undefined) throw new UsageError('no output file given (-o out.glb)', usage);
  if (extname(output).toLowerCase() !== '.glb') {
    throw new UsageError(`the output must be a .glb file, got '${output}'`, usage);
  }
  if (preview !== undefined && extname(preview).toLowerCase() !== '.png') throw new UsageError(`the preview must be a .png file, got '${preview}'`, usage);
  return { inputs: positional, output, preview, method, facing: facingHint, flags: seen };
}

/** A --facing value (cli/facingArgument) → Vec3; UsageError otherwise. */
function parseFacing(text: string, usage: string): Vec3 {
  const facing = facingFromText(text);
  if (!facing) throw new UsageError(`--facing: ${FACING_VALUES}, got '${text}'`, usage);
  return facing;
}

/**
 * The arguments with each folder among the inputs replaced by its files with `extensions` (inputFiles.ts), and the
 * output and preview names checked to give each input its own files ({name}); UsageError otherwise.
 */
async function filesPerInput(parsed: FileArguments, usage: string, extensions: readonly string[]): Promise<FileArguments> {
  try {
    const inputs = await expandInputFolders(parsed.inputs, extensions);
    const patterns = parsed.preview === undefined ? [parsed.output] : [parsed.output, parsed.preview];
    checkOutputsPerInput(inputs, patterns, `-o out/${NAME_PLACEHOLDER}.glb${parsed.preview === undefined ? '' : ` --preview out/${NAME_PLACEHOLDER}.png`}`,
      (input) => patterns.map((pattern) => withName(pattern, input)));
    return { ...parsed, inputs };
  } catch (err) {
    throw err instanceof InputListError ? new UsageError(err.message, usage) : err;
  }
}

async function rigCommand(args: string[], io: CliIo): Promise<number> {
  const usage = commands.rig.usage;
  const parsed = await filesPerInput(parseFileArguments(args, usage, ['--no-prefix'], true), usage, CHARACTER_EXTENSIONS);
  return forEachInput(parsed.inputs, io.stderr, 'rigged', async (input) => {
    const preview = parsed.preview === undefined ? undefined : withName(parsed.preview, input);
    const report = await rigFile(input, withName(parsed.output, input), preview, !parsed.flags.has('--no-prefix'), io, parsed.method, parsed.facing);
    io.stdout.write(`${report.summary}\n`);
  });
}

/** What a rig run did, for the summary line and the demo's report. */
interface RigReport {
  parts: number;
  vertices: number;
  triangles: number;
  joints: number;
  seconds: number;
  summary: string;
}

/** Load → rig (the input's own rig, if any, is ignored) → write the glb and the optional preview. */
async function rigFile(
  input: string, output: string, preview: string | undefined, prefix: boolean, io: CliIo, method?: string, facing?: Vec3,
): Promise<RigReport> {
  const character = await loadCharacter(input);
  const progress = progressReporter(io.stderr);
  let result;
  try {
    const { rigCharacterAsync } = await import('../pipeline.js');
    result = await rigCharacterAsync(character.parts, { prefix, method, facing }, progress.onProgress);
  } finally {
    progress.finish();
  }
  if (result.facing === 'convention') io.stderr.write(conventionWarning(input, result.frame.forward));
  await writeOutputs(character, result.skeleton, result.objects, result.frame, output, preview);
  const how = result.method ? `${result.method}${result.provider ? ` on ${result.provider}` : ''}` : undefined;
  return describeRun(how ? `rigged (${how})` : 'rigged', input, character, result.skeleton, result.seconds, output, preview);
}

async function skinCommand(args: string[], io: CliIo): Promise<number> {
  const usage = commands.skin.usage;
  const parsed = await filesPerInput(parseFileArguments(args, usage, [], true), usage, ['.glb', '.gltf']);
  return forEachInput(parsed.inputs, io.stderr, 'skinned', (input) => skinFile(
    input, withName(parsed.output, input), parsed.preview === undefined ? undefined : withName(parsed.preview, input), parsed.method, io,
    parsed.facing,
  ));
}

/** Load a rigged character → new weights for its own skeleton → write the glb and the optional preview. */
async function skinFile(
  input: string, output: string, preview: string | undefined, method: string | undefined, io: CliIo, facing?: Vec3,
): Promise<void> {
  const character = await loadCharacter(input);
  if (!character.rig) throw new AutoRigError('BAD_SKELETON', `${input} has no skeleton to skin to; use 'autorig rig' to make one`);
  const skeleton = skeletonFromRig(character.rig);
  const progress = progressReporter(io.stderr);
  let result;
  try {
    const { skinCharacterAsync } = await import('../pipeline.js');
    result = await skinCharacterAsync(character.parts, skeleton, [], { method, facing }, progress.onProgress);
  } finally {
    progress.finish();
  }
  if (result.facing === 'convention') io.stderr.write(conventionWarning(input, result.forward));
  const frame = preview ? characterFrame(character.parts) : undefined;
  await writeOutputs(character, result.skeleton, result.objects, frame, output, preview);
  io.stdout.write(`${describeRun('skinned', input, character, result.skeleton, result.seconds, output, preview).summary}\n`);
}

/**
 * forEachOption: walk the arguments; `visit` gets each one (an option name or a positional) and readers of its value (the next
 * argument: `value()` any non-empty text, `integer(min)` a whole number ≥ min), either answering UsageError.
 */
function forEachOption(
  args: string[], usage: string,
  visit: (arg: string, value: () => string, integer: (min: number) => number) => void,
): void {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => {
      const v = args[++i];
      if (v === undefined || v === '') throw new UsageError(`${arg} needs a value`, usage);
      return v;
    };
    const integer = (min: number) => {
      const v = value();
      if (!/^\d+$/.test(v) || Number(v) < min) throw new UsageError(`${arg} wants a whole number ≥ ${min}, got '${v}'`, usage);
      return Number(v);
    };
    visit(arg, value, integer);
  }
}

/** checkMethodName: a --method value that names a pipeline method, else UsageError; returns it. */
function checkMethodName(method: string, usage: string): string {
  if (!(METHODS as readonly string[]).includes(method)) throw new UsageError(`--method: one of ${METHODS.join(', ')}, got '${method}'`, usage);
  return method;
}

async function evalCommand(args: string[], io: CliIo): Promise<number> {
  if (args[0] === 'poses') {
    const { poseEvalCommand } = await import('../eval/poses/poseEvalCommand.js');
    return poseEvalCommand(args.slice(1), io, packageVersion(), (m) => new UsageError(m, POSE_EVAL_USAGE));
  }
  if (args[0] === 'corrective-share') {
    const { correctiveShareCommand } = await import('../eval/poses/correctiveShareCommand.js');
    return correctiveShareCommand(args.slice(1), io, (m) => new UsageError(m, CORRECTIVE_SHARE_USAGE));
  }
  if (args[0] === 'skeletons') {
    const { parseSkeletonEvalArguments } = await import('../eval/procedural/proceduralSkeletonArguments.js');
    const { json, ...options } = parseSkeletonEvalArguments(args.slice(1), (m) => new UsageError(m, SKELETON_EVAL_USAGE));
    const { runSkeletonEval, skeletonEvalTable } = await import('../eval/procedural/runSkeletonEval.js');
    const report = await runSkeletonEval(options, (line) => io.stderr.write(`${line}\n`));
    if (json) writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
    io.stdout.write(skeletonEvalTable(report));
    if (json) io.stdout.write(`results: ${json}\n`);
    return EXIT_OK;
  }
  if (args[0] === 'correctives') {
    const { correctivesEvalCommand } = await import('../eval/correctives/correctivesEvalCommand.js');
    return correctivesEvalCommand(args.slice(1), io, (m) => new UsageError(m, CORRECTIVES_EVAL_USAGE));
  }
  const usage = commands.eval.usage;
  const options: EvalOptions = {
    data: '', peer: null, remesh: null, method: DEFAULT_METHOD, poseSeed: 1, root: repositoryRoot(), version: packageVersion(),
    log: (line) => io.stderr.write(`${line}\n`),
  };
  forEachOption(args, usage, (arg, value, integer) => {
    if (arg === '--data') options.data = value();
    else if (arg === '--json') options.json = value();
    else if (arg === '--report') options.report = value();
    else if (arg === '--peer') {
      const peer = value();
      if (peer !== 'blender') throw new UsageError(`--peer: the only peer is 'blender', got '${peer}'`, usage);
      options.peer = 'blender';
    } else if (arg === '--remesh') options.remesh = integer(1000);
    else if (arg === '--method') options.method = value();
    else if (arg === '--only') options.only = value().split(',').map((n) => n.trim()).filter(Boolean);
    else if (arg === '--seed') options.poseSeed = integer(0);
    else if (arg === '--blender') options.blender = value();
    else throw new UsageError(`unknown argument '${arg}'`, usage);
  });
  if (!options.data) throw new UsageError('no data folder given (--data <folder>)', usage);
  if (options.report && extname(options.report).toLowerCase() !== '.md') throw new UsageError(`the report must be a .md file, got '${options.report}'`, usage);
  checkMethodName(options.method, usage);
  const [{ runEval }, { formatBar }] = await Promise.all([import('../eval/runEval.js'), import('../eval/formatBar.js')]);
  const report = await runEval(options);
  io.stdout.write(`${formatBar(report)}\n`);
  if (options.json) io.stdout.write(`results: ${options.json}\n`);
  if (options.report) io.stdout.write(`report:  ${options.report}\n`);
  return EXIT_OK;
}

async function dataCommand(args: string[], io: CliIo): Promise<number> {
  const usage = commands.data.usage;
  const { DATASET_KINDS, makeDataset } = await import('../data/makeDataset.js');
  const options: DatasetOptions = {
    out: '', count: 0, seed: 1, augmentedFraction: 0.3, characters: resolve(repositoryRoot(), '../shared/data/characters'), jobs: 1,
    proceduralVertices: null, augmentedVertices: null, log: (line) => io.stderr.write(`${line}\n`),
  };
  const range = (arg: string, v: string): [number, number] => {
    if (v === '0') return [0, 0];
    const m = /^(\d+),(\d+)$/.exec(v);
    if (!m || Number(m[1]) < 1000 || Number(m[2]) < Number(m[1])) throw new UsageError(`${arg} wants LO,HI vertex counts (1000 ≤ LO ≤ HI), got '${v}'`, usage);
    return [Number(m[1]), Number(m[2])];
  };
  forEachOption(args, usage, (arg, value, integer) => {
    if (arg === '--out') options.out = value();
    else if (arg === '--kind') {
      const kind = value();
      if (!(DATASET_KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind is one of ${DATASET_KINDS.join(', ')}, got '${kind}'`, usage);
      options.kind = kind as DatasetKind;
    } else if (arg === '--count') options.count = integer(1);
    else if (arg === '--seed') options.seed = integer(0);
    else if (arg === '--jobs') options.jobs = integer(1);
    else if (arg === '--characters') options.characters = value();
    else if (arg === '--augmented-fraction') {
      const v = Number(value());
      if (!(v >= 0 && v <= 1)) throw new UsageError(`--augmented-fraction wants a number in [0, 1]`, usage);
      options.augmentedFraction = v;
    } else if (arg === '--asymmetric-arms') {
      const v = Number(value());
      if (!(v >= 0 && v <= 1)) throw new UsageError(`--asymmetric-arms wants a number in [0, 1]`, usage);
      options.asymmetricArms = v;
    } else if (arg === '--procedural-vertices') options.proceduralVertices = range(arg, value());
    else if (arg === '--augmented-vertices') options.augmentedVertices = range(arg, value());
    else if (arg === '--resume') options.resume = true;
    else throw new UsageError(`unknown argument '${arg}'`, usage);
  });
  if (!options.out) throw new UsageError('no output folder given (--out <folder>)', usage);
  if (!options.count) throw new UsageError('no sample count given (--count N)', usage);
  const summary = await makeDataset(options);
  const kept = options.resume ? `, ${summary.kept} kept from before` : '';
  io.stdout.write(`autorig data: ${summary.written} samples in ${options.out}${kept} (${summary.failed.length} failed) in ${summary.seconds.toFixed(0)} s\n`);
  for (const f of summary.failed) io.stdout.write(`  sample ${f.index} failed: ${f.error}\n`);
  return summary.written + summary.kept > 0 ? EXIT_OK : EXIT_FAILURE;
}

async function poseCommand(args: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = await expandPoseInputs(parsePoseArguments(args));
  } catch (err) {
    if (err instanceof PoseUsageError) throw new UsageError(err.message, commands.pose.usage);
    throw err;
  }
  return runPoseCommand(parsed, io, `AutoRig ${packageVersion()}`);
}

async function correctivesCommand(args: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseCorrectivesArguments(args);
  } catch (err) {
    if (err instanceof CorrectivesUsageError) throw new UsageError(err.message, commands.correctives.usage);
    throw err;
  }
  return runCorrectivesCommand(parsed, io, `AutoRig ${packageVersion()}`);
}

async function demoCommand(args: string[], io: CliIo): Promise<number> {
  let folder = 'out/demo';
  for (let i = 0; i < args.length; i++) {
    if ((args[i] === '-o' || args[i] === '--output') && args[i + 1]) folder = args[++i];
    else throw new UsageError(`unknown argument '${args[i]}'`, commands.demo.usage);
  }
  const input = join(repositoryRoot(), DEMO_CHARACTER_PATH);
  const output = join(folder, 'demo_rigged.glb');
  const preview = join(folder, 'demo_preview.png');
  io.stdout.write(`autorig demo: rigging the project's demo character (${relative(process.cwd(), input) || input})\n`);
  const report = await rigFile(input, output, preview, true, io);
  io.stdout.write(
    [
      `  parts:     ${report.parts} (${report.vertices} vertices, ${report.triangles} triangles)`,
      `  skeleton:  ${report.joints} joints (Mixamo names)`,
      `  time:      ${report.seconds.toFixed(2)} s`,
      `  rigged:    ${output}  (open it in Blender: File > Import > glTF 2.0)`,
      `  preview:   ${preview}`,
    ].join('\n') + '\n',
  );
  return EXIT_OK;
}

/** Write the skinned glb (normals computed for parts that came without) and, when asked, the preview PNG. */
async function writeOutputs(
  character: Character,
  skeleton: Skeleton,
  weights: PartWeights[],
  frame: Frame | undefined,
  output: string,
  preview: string | undefined,
): Promise<void> {
  const parts: CharacterPart[] = character.parts.map((part) =>
    part.normals ? part : { ...part, normals: vertexNormals(part.positions, part.triangles) },
  );
  await writeSkinnedGlb(output, { parts, skeleton, weights, generator: `AutoRig ${packageVersion()}`, ...(character.looks ? { looks: character.looks } : {}) });
  if (preview && frame) await writePreviewPng(preview, { parts: character.parts, skeleton, weights, frame });
}

/** The character's own frame, found the way rig finds it (for skin, whose result carries none). */
function characterFrame(parts: CharacterPart[]): Frame {
  const merged = mergeParts(parts);
  return findCanonicalFrame(merged.positions, merged.triangles).frame;
}

function describeRun(
  verb: string,
  input: string,
  character: Character,
  skeleton: Skeleton,
  seconds: number,
  output: string,
  preview: string | undefined,
): RigReport {
  const vertices = character.parts.reduce((n, p) => n + p.positions.length / 3, 0);
  const triangles = character.parts.reduce((n, p) => n + p.triangles.length / 3, 0);
  const parts = character.parts.length;
  const summary =
    `autorig: ${verb} ${input}: ${parts} part${parts === 1 ? '' : 's'}, ${vertices} vertices, ${skeleton.joints.length} joints `
    + `in ${seconds.toFixed(2)} s → ${output}${preview ? ` (preview ${preview})` : ''}`;
  return { parts, vertices, triangles, joints: skeleton.joints.length, seconds, summary };
}

/** The repository (package) root: see packageRoot.ts. */
export const repositoryRoot = packageRoot;

function packageVersion(): string {
  try {
    return JSON.parse(readFileSync(resolve(repositoryRoot(), 'package.json'), 'utf8')).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
