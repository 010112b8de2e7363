/**
 * Progress of a pipeline run on stderr: on a terminal one bar redrawn in place with \r; into a pipe or a file one line
 * per stage (a log should not fill with carriage returns).
 */
import type { ProgressFn } from '../types.js';

/** Where progress goes: process.stderr, or a capturing stand-in in tests. */
export interface TextSink {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface ProgressReporter {
  /** pass to rigCharacter / skinCharacter */
  onProgress: ProgressFn;
  /** end the bar (a newline on a terminal) */
  finish(): void;
}

const BAR_WIDTH = 24;

/** progressReporter: a ProgressFn that draws on `sink`, prefixing lines with `label`. */
export function progressReporter(sink: TextSink, label = 'autorig'): ProgressReporter {
  const terminal = sink.isTTY === true;
  let lastStage: string | undefined;
  let lastPercent = -1;
  let drawn = false;
  let lastWidth = 0;
  return {
    onProgress(stage, fraction) {
      const percent = Math.max(0, Math.min(100, Math.round(fraction * 100)));
      if (terminal) {
        if (stage === lastStage && percent === lastPercent) return;
        const filled = Math.round((percent / 100) * BAR_WIDTH);
        const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${String(percent).padStart(3)}% ${stage}`;
        sink.write(`\r${line}${' '.repeat(Math.max(0, lastWidth - line.length))}`);
        lastWidth = line.length;
        drawn = true;
      } else if (stage !== lastStage) {
        sink.write(`${label}: ${String(percent).padStart(3)}% ${stage}\n`);
      }
      lastStage = stage;
      lastPercent = percent;
    },
    finish() {
      if (terminal && drawn) sink.write('\n');
      drawn = false;
    },
  };
}
