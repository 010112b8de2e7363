/**
 * The input files of a command that takes several (`autorig pose`, `autorig rig`): folders stand for the character
 * files in them, and each input's outputs are named from a pattern holding {name}, the input's file name without its
 * folder and extension. A pipeline gives a folder (or a shell's glob) and gets one output per character, in one
 * process: the models load once and V8 compiles the pipeline's code on the first files.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { AutoRigError } from '../errors.js';
import { EXIT_CANNOT_RIG, EXIT_OK } from './exitCodes.js';
import type { TextSink } from './progress.js';

/** In an output name, stands for the input file's name without its folder and extension: one file per input. */
export const NAME_PLACEHOLDER = '{name}';

/** The character files a folder given as input stands for: these extensions, directly in it (not its subfolders). */
export const CHARACTER_EXTENSIONS: readonly string[] = ['.glb', '.gltf', '.obj'];

/** A list of inputs or outputs the command cannot take: the caller reports it with its usage. */
export class InputListError extends Error {}

/** nameOf: an input's file name without its folder and (last) extension: "chars/ely.v2.glb" → "ely.v2". */
export function nameOf(input: string): string {
  return basename(input, extname(input));
}

/** withName: an output pattern with every NAME_PLACEHOLDER replaced by nameOf(input). */
export function withName(pattern: string, input: string): string {
  return pattern.split(NAME_PLACEHOLDER).join(nameOf(input));
}

/**
 * expandInputFolders: inputs (files or folders) → files: each folder replaced by its files with one of `extensions`
 * (case-insensitive; hidden files left out), sorted by name. An input that does not exist is kept (reading it reports
 * the file's error). Throws InputListError for a folder with none of them.
 */
export async function expandInputFolders(inputs: readonly string[], extensions: readonly string[] = CHARACTER_EXTENSIONS): Promise<string[]> {
  const files: string[] = [];
  for (const input of inputs) {
    let folder = false;
    try {
      folder = (await stat(input)).isDirectory();
    } catch {
      // not there (or unreadable): the command says so, with the file's error code
    }
    if (!folder) {
      files.push(input);
      continue;
    }
    const names = (await readdir(input))
      .filter((name) => !name.startsWith('.') && extensions.includes(extname(name).toLowerCase()))
      .sort();
    if (names.length === 0) throw new InputListError(`${input} is a folder without ${extensions.join(', ')} files`);
    files.push(...names.map((name) => join(input, name)));
  }
  return files;
}

/**
 * checkOutputsPerInput: throws InputListError when several inputs are given and a pattern lacks NAME_PLACEHOLDER
 * (`example` names one that would do), when two inputs would write the same file (the same input given twice, or
 * two inputs of one name in different folders or with different extensions), or when an input's output is another
 * input (it would be overwritten before it is read: a folder holding an earlier run's outputs, written into again).
 * outputsOf(input): the files it writes.
 */
export function checkOutputsPerInput(inputs: readonly string[], patterns: readonly string[], example: string, outputsOf: (input: string) => string[]): void {
  if (inputs.length > 1) {
    for (const pattern of patterns) {
      if (!pattern.includes(NAME_PLACEHOLDER)) {
        throw new InputListError(`${inputs.length} input files given: name the output with ${NAME_PLACEHOLDER} (one file per input, e.g. ${example})`);
      }
    }
  }
  const writer = new Map<string, string>();
  const given = new Map(inputs.map((input) => [resolve(input), input]));
  for (const input of inputs) {
    for (const output of outputsOf(input)) {
      const target = resolve(output);
      const overwritten = given.get(target);
      if (overwritten !== undefined && target !== resolve(input)) {
        throw new InputListError(`${input} would write ${output}, which is also an input: write the outputs to another folder`);
      }
      const other = writer.get(target);
      if (other !== undefined) {
        throw new InputListError(other === input
          ? `${input} is given twice`
          : `${other} and ${input} would both write ${output}: the output name's ${NAME_PLACEHOLDER} is the file name without its folder and extension`);
      }
      writer.set(target, input);
    }
  }
}

/**
 * forEachInput: runs work(input) for each input in order. With several inputs, an input whose work throws an
 * AutoRigError is reported on stderr ("autorig: error CODE: input: message") and the others still run; then one line
 * says which failed, and the result is EXIT_CANNOT_RIG. With one input its error is thrown (the command line reports
 * it as for any command); any other error is thrown at once. `done` says what the work does ("posed", "rigged").
 * → EXIT_OK, or EXIT_CANNOT_RIG when some failed.
 */
export async function forEachInput(inputs: readonly string[], stderr: TextSink, done: string, work: (input: string) => Promise<void>): Promise<number> {
  const failed: string[] = [];
  for (const input of inputs) {
    try {
      await work(input);
    } catch (err) {
      if (inputs.length === 1 || !(err instanceof AutoRigError)) throw err;
      const message = err.message.startsWith(input) ? err.message : `${input}: ${err.message}`;
      stderr.write(`autorig: error ${err.code}: ${message}\n`);
      failed.push(input);
    }
  }
  if (failed.length === 0) return EXIT_OK;
  stderr.write(`autorig: ${failed.length} of ${inputs.length} files could not be ${done}: ${failed.join(', ')}\n`);
  return EXIT_CANNOT_RIG;
}
