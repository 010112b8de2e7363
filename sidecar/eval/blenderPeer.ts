/**
 * The peer method of `autorig eval --peer blender`: Blender's own "With Automatic Weights" (bone heat), run headless
 * on the bare meshes with a given skeleton, exactly as a user would click it (all parts selected, the armature active,
 * Object > Parent > With Automatic Weights). The work happens in sidecar/eval/blender_bone_heat.py inside
 * `blender -b`; this module hands the meshes over in a temporary file and reads the weights back.
 *
 * Hand-off file layout (both directions, see the .py's doc string): u32 LE header length H | H bytes of UTF-8 JSON |
 * zero padding to a multiple of 8 | blobs, each raw little-endian and starting on a multiple of 8; the header's
 * `blobs` lists each blob's { offset (from the data start), byteLength, type }.
 */
import { accessSync, constants, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { AutoRigError } from '../errors.js';
import { readBundle, writeBundle } from '../io/binaryBundle.js';
import { isDeformingJoint } from '../pipeline.js';
import type { MeshPart, PartWeights, Skeleton } from '../types.js';

export interface BoneHeatResult {
  /** per part, 4 influences (top-4 of Blender's vertex groups, renormalised), indices into skeleton.joints; rows of unweighted vertices are all 0 */
  objects: PartWeights[];
  /** wall time of the bone-heat operator alone (not Blender start-up, not mesh building) */
  seconds: number;
  /** vertices with no group weight at all */
  unweighted: number;
  /** Blender reported "failed to find a solution" (for any bone) or the operator raised */
  failed: boolean;
  /** Blender's warning/error text, '' when none */
  message: string;
  blenderVersion: string;
}

export interface BoneHeatOptions {
  /** the Blender executable (a path, or a command name looked up on PATH); see findBlender */
  blender?: string;
  /** kill Blender after this long (default 10 minutes: bone heat takes 20–40 s at 300k vertices on a slow machine) */
  timeoutMs?: number;
  /** aborting it kills Blender; the call then throws AutoRigError CANCELLED */
  signal?: AbortSignal;
}

const INFLUENCES = 4;
const DEFAULT_TIMEOUT_MS = 600_000;
const SCRIPT_PATH = 'sidecar/eval/blender_bone_heat.py';
/** Lines of Blender's output quoted in an error. */
const OUTPUT_TAIL_LINES = 15;

/**
 * runBlenderBoneHeat: Blender's bone-heat weights for parts (bind pose, the space of skeleton's heads/tails) and
 * skeleton (joints named *_End do not deform, as in the pipeline).
 * Throws AutoRigError BAD_REQUEST when no Blender is found, CANCELLED when options.signal aborts, INTERNAL when
 * Blender exits non-zero, times out or writes no result (with the tail of its output in the message).
 * A bone-heat failure inside Blender is not thrown: it comes back as failed = true with Blender's message.
 */
export async function runBlenderBoneHeat(
  parts: MeshPart[],
  skeleton: Skeleton,
  options: BoneHeatOptions = {},
): Promise<BoneHeatResult> {
  const blender = findBlender(options.blender);
  if (!blender) {
    throw new AutoRigError('BAD_REQUEST', `Blender not found (${options.blender ?? process.env.AUTORIG_BLENDER ?? 'blender'}): install it, put it on PATH or set AUTORIG_BLENDER`);
  }
  const folder = mkdtempSync(join(tmpdir(), 'autorig-bone-heat-'));
  try {
    const input = join(folder, 'input.bin');
    const output = join(folder, 'output.bin');
    writeBoneHeatInput(input, parts, skeleton);
    const run = await execa(blender, ['-b', '--factory-startup', '--python-exit-code', '1', '-P', boneHeatScript(), '--', input, output], {
      reject: false,
      all: true,
      timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      cancelSignal: options.signal,
      maxBuffer: 64 << 20,
      stdin: 'ignore',
    });
    if (run.isCanceled) throw new AutoRigError('CANCELLED', 'Blender bone heat was cancelled');
    const tail = outputTail(run.all ?? '');
    if (run.timedOut) throw new AutoRigError('INTERNAL', `Blender bone heat timed out after ${options.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms:\n${tail}`);
    if (run.exitCode !== 0 || !existsSync(output)) {
      const how = run.exitCode !== undefined ? `exited with code ${run.exitCode}` : `was killed (${run.signal ?? run.originalMessage ?? 'unknown'})`;
      throw new AutoRigError('INTERNAL', `Blender ${how}${existsSync(output) ? '' : ' without writing a result'}:\n${tail}`);
    }
    return readBoneHeatOutput(output, parts);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * findBlender: the Blender executable to run, or null. The first of these that is given decides: explicit (a path or
 * a command name), the AUTORIG_BLENDER environment variable, `blender` on PATH. A given one that does not resolve to
 * an executable file is null (no silent fall-back to another Blender).
 */
export function findBlender(explicit?: string): string | null {
  const wanted = explicit || process.env.AUTORIG_BLENDER || 'blender';
  if (wanted.includes('/') || wanted.includes('\\') || isAbsolute(wanted)) {
    return isExecutable(resolve(wanted)) ? resolve(wanted) : null;
  }
  const extensions = process.platform === 'win32' ? (process.env.PATHEXT ?? '.EXE').split(';').concat('') : [''];
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    if (!folder) continue;
    for (const extension of extensions) {
      const candidate = join(folder, wanted + extension);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return null;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * blenderVersion: the version of the Blender findBlender(explicit) picks, as Blender's bpy.app.version_string gives it
 * ("3.4.1"), or null when there is none or it does not answer `--version`.
 */
export async function blenderVersion(explicit?: string): Promise<string | null> {
  const blender = findBlender(explicit);
  if (!blender) return null;
  const run = await execa(blender, ['--factory-startup', '--version'], { reject: false, timeout: 60_000, stdin: 'ignore' });
  const match = /^Blender\s+(\S+)/m.exec(run.stdout ?? '');
  return run.exitCode === 0 && match ? match[1] : null;
}

/**
 * The .py beside this module's source: the compiled module lives in dist/sidecar/eval/ while the script stays in
 * sidecar/eval/, so walk up to the first folder that holds sidecar/eval/blender_bone_heat.py (the repository root).
 * Not cli/main.ts's repositoryRoot(): importing the CLI from here would make eval ↔ CLI an import cycle.
 */
function boneHeatScript(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(folder, SCRIPT_PATH);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(folder);
    if (parent === folder) throw new AutoRigError('INTERNAL', `cannot find ${SCRIPT_PATH} above ${fileURLToPath(import.meta.url)}`);
    folder = parent;
  }
}

/**
 * writeBoneHeatInput: header {parts: [{name}], joints: [{name, parent, head, tail, roll, deform}]} and, per part,
 * blobs positions (Float32Array, #V*3) and triangles (Uint32Array, #T*3).
 */
export function writeBoneHeatInput(path: string, parts: MeshPart[], skeleton: Skeleton): void {
  const joints = skeleton.joints.map((j) => ({ name: j.name, parent: j.parent, head: j.head, tail: j.tail, roll: j.roll, deform: isDeformingJoint(j.name) }));
  writeBundle(path, { parts: parts.map((p) => ({ name: p.name })), joints }, parts.flatMap((p) => [p.positions, p.triangles]));
}

interface BoneHeatOutputHeader {
  blenderVersion: string;
  seconds: number;
  failed: boolean;
  message: string;
  unweighted: number;
  parts: { name: string; vertices: number }[];
}

/**
 * readBoneHeatOutput: the result file the .py wrote (per part blobs indices u32 #V*4, weights f32 #V*4), checked
 * against the parts that were sent (same count, same vertex counts). Throws AutoRigError INTERNAL when it does not fit.
 */
export function readBoneHeatOutput(path: string, parts: MeshPart[]): BoneHeatResult {
  const { header, blobs } = readBundle<BoneHeatOutputHeader>(path);
  if (header.parts.length !== parts.length || blobs.length !== 2 * parts.length) {
    throw new AutoRigError('INTERNAL', `Blender returned ${header.parts.length} parts for the ${parts.length} sent`);
  }
  const objects = parts.map((part, p): PartWeights => {
    const vertices = part.positions.length / 3;
    const indices = blobs[2 * p];
    const weights = blobs[2 * p + 1];
    if (!(indices instanceof Uint32Array) || !(weights instanceof Float32Array)) {
      throw new AutoRigError('INTERNAL', `Blender returned part "${part.name}" with blobs of the wrong types`);
    }
    if (header.parts[p].vertices !== vertices || indices.length !== INFLUENCES * vertices || weights.length !== INFLUENCES * vertices) {
      throw new AutoRigError('INTERNAL', `Blender returned ${header.parts[p].vertices} vertices for part "${part.name}" (${vertices} sent)`);
    }
    return {
      name: part.name,
      influences: INFLUENCES,
      indices: Uint16Array.from(indices),
      weights,
    };
  });
  return {
    objects,
    seconds: header.seconds,
    unweighted: header.unweighted,
    failed: header.failed,
    message: header.message,
    blenderVersion: header.blenderVersion,
  };
}

function outputTail(text: string): string {
  return text.trim().split('\n').slice(-OUTPUT_TAIL_LINES).join('\n');
}
