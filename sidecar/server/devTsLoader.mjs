// Development only: lets Node run this package's TypeScript sources in a thread or process (tests run the sources
// under vitest, and a job's worker thread is a fresh Node context that vitest does not reach).
// Published builds never load this: they run dist/**/*.js. Types are erased with TypeScript's own transpiler;
// no type checking (that is `tsc -p .`'s job).
// Every worker thread gets its own loader, and loading the TypeScript compiler costs about a second, so outputs are
// cached on disk by content hash (node_modules/.cache/autorig-dev-ts) and the compiler is loaded only on a miss.
import { createHash } from 'node:crypto';
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';

const cacheDir = new URL('../../node_modules/.cache/autorig-dev-ts/', import.meta.url);
const transpilerVersion = 1;
let typescript = null;

/** `./x.js` written in a .ts source (NodeNext style) resolves to `./x.ts` when only the source exists. */
export async function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const source = new URL(specifier.slice(0, -3) + '.ts', context.parentURL);
    try {
      await access(source);
      return { url: source.href, shortCircuit: true };
    } catch {
      // no .ts beside it: a real .js file, resolve it normally
    }
  }
  return nextResolve(specifier, context);
}

/** .ts files load as ES modules with their types erased. */
export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const source = await readFile(new URL(url), 'utf8');
  const key = createHash('sha256').update(`${transpilerVersion}\0${url}\0${source}`).digest('hex');
  const cached = new URL(`${key}.js`, cacheDir);
  try {
    return { format: 'module', source: await readFile(cached, 'utf8'), shortCircuit: true };
  } catch {
    // not cached yet
  }
  typescript ??= (await import('typescript')).default;
  const output = typescript.transpileModule(source, {
    fileName: url,
    compilerOptions: {
      module: typescript.ModuleKind.ESNext,
      target: typescript.ScriptTarget.ES2022,
      inlineSourceMap: true,
    },
  }).outputText;
  try {
    await mkdir(cacheDir, { recursive: true });
    const partial = new URL(`${key}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`, cacheDir);
    await writeFile(partial, output);
    await rename(partial, cached); // atomic: parallel workers never read half a file
  } catch {
    // a read-only tree just means no cache
  }
  return { format: 'module', source: output, shortCircuit: true };
}
