/**
 * The development characters (artist-rigged .glb files in ../shared/data/characters/, next to the project): where they
 * are and how a generator loads one. They are read in place and never copied into the repository.
 */
import { basename, extname, resolve } from 'node:path';
import { loadCharacter, type Character } from '../../io/character.js';
import { packageRoot } from '../../packageRoot.js';

/** A dev character as loaded, with its name (the file name without extension): the name decides whether it is held out. */
export interface DevCharacter extends Character {
  name: string;
}

/** The folder of the dev characters: ../shared/data/characters/ beside the project root. */
export const DEV_CHARACTERS_DIR: string = resolve(packageRoot(), '../shared/data/characters');

/** The name a dev character goes by: its file name without folder or extension ("clonk" for ".../clonk.glb"). */
export function devCharacterName(path: string): string {
  return basename(path, extname(path));
}

/**
 * loadDevCharacter: a dev character file → DevCharacter (parts, the artist's rig, name). Throws what loadCharacter
 * throws (BAD_REQUEST for a missing or unreadable file).
 */
export async function loadDevCharacter(path: string): Promise<DevCharacter> {
  const character = await loadCharacter(path);
  return { ...character, name: devCharacterName(path) };
}
