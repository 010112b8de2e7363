#!/usr/bin/env node
// Thin launcher: the CLI is compiled from sidecar/cli/main.ts by `npm run build` (run automatically by `npm install`).
import('../dist/sidecar/cli/main.js').then((m) => m.main(process.argv.slice(2))).catch((err) => {
  process.stderr.write(`autorig: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
