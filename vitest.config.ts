/**
 * How `npm test` runs the suite. Much of a test file's time is spent waiting on a child process (the sidecar, Blender,
 * PyTorch), so two files at a time use a two-core machine's second core: on the development machine the suite took
 * 699 s instead of 1 048 s with vitest's default there (one file at a time). A test file must therefore not depend on
 * running alone: it writes under its own temporary folder and listens on a port the system picks.
 *
 * The time limits catch a test that hangs; they are no speed targets (those live in `npm run bench`). With another
 * file beside it a test can take three times as long as alone (a remeshing test took 5.2 s, over vitest's default
 * 5 s, while the machine also ran other work), so the defaults are raised; a test that needs more says so itself.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
