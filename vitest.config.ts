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
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, started first. Without the durations of an earlier run (a fresh clone, as on CI) vitest
 * starts the larger files first, and the fuzz test, a small file that runs for 200 s beside another file, came last:
 * the suite then ended with it running alone (780 s on a fresh clone).
 */
const LONGEST_FILES = ['test/fuzz.test.ts', 'test/train-joints2d.test.ts'];

class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const k = LONGEST_FILES.findIndex((name) => file.moduleId.endsWith(name));
      return k < 0 ? LONGEST_FILES.length : k;
    };
    // Array.prototype.sort is stable: the other files keep vitest's order
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    sequence: { sequencer: LongestFirstSequencer },
  },
});
