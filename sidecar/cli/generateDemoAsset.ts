/**
 * Regenerates the committed demo asset: `node dist/sidecar/cli/generateDemoAsset.js` from the repository root
 * (after `npm run build`). The output is deterministic; test/cli.test.ts checks the committed file still matches.
 */
import { writeFile } from 'node:fs/promises';
import type { CharacterPart } from '../io/character.js';
import { formatObj } from '../io/obj.js';
import { buildDemoCharacter, DEMO_CHARACTER_PATH } from './demoCharacter.js';

/** The demo asset's OBJ text: 4 decimals (0.1 mm) keeps the file small. */
export function demoCharacterObj(parts: CharacterPart[] = buildDemoCharacter()): string {
  return formatObj(parts, {
    decimals: 4,
    header: 'AutoRig demo character: made procedurally by the AutoRig project (sidecar/cli/demoCharacter.ts), CC0.\n'
      + 'Regenerate: node dist/sidecar/cli/generateDemoAsset.js',
  });
}

const isMain = process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain) {
  await writeFile(DEMO_CHARACTER_PATH, demoCharacterObj());
  process.stdout.write(`wrote ${DEMO_CHARACTER_PATH}\n`);
}
