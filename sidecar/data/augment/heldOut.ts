/**
 * The dev characters that no training data may ever come from: the learned models are measured on them, so a
 * generator refuses them by name and also by shape (a renamed copy is still refused).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AutoRigError } from '../../errors.js';
import type { Character } from '../../io/character.js';
import { DEV_CHARACTERS_DIR, devCharacterName } from './devCharacter.js';

/** Held out of every training set (issue 5): the eval of the learned methods runs on these. */
export const HELD_OUT_CHARACTERS: readonly string[] = Object.freeze(['mixamo_ely', 'clonk_farmer', 'robot_expressive']);

/**
 * What the held-out files hold, counted on their loaded parts and rig: parts, vertices, triangles, rig joints. A
 * character with the same counts is taken for the same one, whatever its name.
 */
const HELD_OUT_SHAPES: readonly (readonly [number, number, number, number])[] = [
  [1, 5040, 8770, 67], // mixamo_ely
  [1, 2131, 3233, 53], // clonk_farmer
  [19, 7214, 3237, 43], // robot_expressive
];

/**
 * isHeldOutCharacter: whether a character must stay out of training data: its name is held out, or its parts and rig
 * have a held-out file's counts. name: dev character name (or a path: folder and extension are ignored).
 */
export function isHeldOutCharacter(name: string, character?: Character): boolean {
  if (HELD_OUT_CHARACTERS.includes(devCharacterName(name))) return true;
  if (!character) return false;
  const shape = [
    character.parts.length,
    character.parts.reduce((n, p) => n + p.positions.length / 3, 0),
    character.parts.reduce((n, p) => n + p.triangles.length / 3, 0),
    character.rig?.joints.length ?? 0,
  ];
  return HELD_OUT_SHAPES.some((held) => held.every((x, i) => x === shape[i]));
}

/** assertTrainable: throws BAD_REQUEST when the character is held out (see isHeldOutCharacter). */
export function assertTrainable(name: string, character?: Character): void {
  if (isHeldOutCharacter(name, character)) {
    throw new AutoRigError('BAD_REQUEST', `${devCharacterName(name)} is a held-out dev character (or a copy of one): it must never be part of training data`);
  }
}

/**
 * trainingDevCharacters: the dev character files that training data may be made from: every .glb in dir except the
 * held-out ones, sorted by name. dir: folder (default DEV_CHARACTERS_DIR) → absolute or dir-relative paths.
 * Throws BAD_REQUEST when the folder cannot be read.
 */
export function trainingDevCharacters(dir: string = DEV_CHARACTERS_DIR): string[] {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch (err) {
    throw new AutoRigError('BAD_REQUEST', `the dev characters folder ${dir} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return files
    .filter((f) => f.toLowerCase().endsWith('.glb') && !isHeldOutCharacter(f))
    .sort()
    .map((f) => join(dir, f));
}
