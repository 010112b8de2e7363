/**
 * The AutoRig package root (the folder of its package.json), found by climbing from this module: the same from the
 * TypeScript sources (tests) and from dist/, whatever the working directory. Models, the demo asset and the dev
 * characters' folder are found from it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** packageRoot: the nearest folder above this module whose package.json is the autorig package's. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if (JSON.parse(readFileSync(manifest, 'utf8')).name === 'autorig') return dir;
      } catch {
        // not ours; keep climbing
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the autorig package root above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}
