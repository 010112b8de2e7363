// Development only: `node --import ./sidecar/server/devTsRegister.mjs` runs TypeScript sources (see devTsLoader.mjs).
import { register } from 'node:module';

register('./devTsLoader.mjs', import.meta.url);
