/**
 * The process's peak resident memory over a stretch of work. Linux keeps a high-water mark (VmHWM) that writing "5"
 * to /proc/self/clear_refs resets, so one process can measure several jobs one after the other; elsewhere the mark
 * cannot be reset and Node's maxRSS (the whole life of the process) is what there is.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export const peakRss = {
  /** Start a new measurement: the high-water mark drops to what is resident now (Linux only). */
  reset(): void {
    try {
      writeFileSync('/proc/self/clear_refs', '5');
    } catch {
      // not Linux, or not allowed: read() then covers the whole process life
    }
  },
  /** Peak resident bytes since the last reset (or since the process started). */
  read(): number {
    try {
      const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
      if (match) return Number(match[1]) * 1024;
    } catch {
      // no /proc
    }
    return process.resourceUsage().maxRSS * 1024;
  },
};
