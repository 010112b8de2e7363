/**
 * The answer to `hello`: what this sidecar is and what it can do, so that the add-on can show it and refuse early.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROTOCOL_VERSION, REQUEST_KINDS, type Limits } from '../../shared-schema/validate.js';
import { selectedProvider, type ProviderSelection } from '../learned/executionProvider.js';

/** Skeleton templates rig can produce. */
const TEMPLATES = ['mixamo22'];

/**
 * The package root: the nearest folder above this module holding the `autorig` package.json.
 * Found by walking up, because this module runs both from sidecar/server/ (sources) and dist/sidecar/server/ (built).
 */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'autorig') return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('autorig: cannot find the package root (package.json named "autorig")');
    dir = parent;
  }
}

/** The sidecar's version, from package.json. */
export function sidecarVersion(root: string = packageRoot()): string {
  return String(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
}

/** Names of the ONNX models present in models/ (sorted; empty when the folder is missing). */
export function installedModels(root: string = packageRoot()): string[] {
  const folder = join(root, 'models');
  if (!existsSync(folder)) return [];
  return readdirSync(folder).filter((name) => name.endsWith('.onnx')).sort();
}

/**
 * The fields of a hello result (protocol.json results.hello). executionProvider/providerFallback: where the learned
 * models run and which providers failed before it (sidecar/learned/executionProvider.ts). The provider is chosen on
 * the first call unless the server chose it at start-up (selectProvider()); choosing here blocks this thread once (0.3–1 s here).
 */
export function helloResult(limits: Limits, provider: ProviderSelection = selectedProvider()): Record<string, unknown> {
  const root = packageRoot();
  return {
    protocol: PROTOCOL_VERSION,
    sidecar: sidecarVersion(root),
    templates: [...TEMPLATES],
    models: installedModels(root),
    executionProvider: provider.name,
    providerFallback: [...provider.fallbackFrom],
    requests: [...REQUEST_KINDS],
    limits: { ...limits },
  };
}
