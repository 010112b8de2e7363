/**
 * Where a worker thread's code comes from. Built, a module of dist/sidecar/server/ starts its sibling `<name>.js`.
 * Run from sources (vitest imports .ts files), it starts `<name>.ts` with devTsLoader.mjs registered in the thread, so
 * tests always exercise the current sources, never a stale dist/.
 */
const runningFromSources = import.meta.url.endsWith('.ts');

/** The entry module of the worker `name` (a file of sidecar/server/, without extension) and the Node options it needs. */
export function workerEntry(name: string): { url: URL; execArgv?: string[] } {
  if (!runningFromSources) return { url: new URL(`./${name}.js`, import.meta.url) };
  // Only the loader: the parent's own options (vitest's, or `--input-type` of `node -e`) may not be valid in a worker.
  const register = new URL('./devTsRegister.mjs', import.meta.url).href;
  return { url: new URL(`./${name}.ts`, import.meta.url), execArgv: ['--import', register] };
}
