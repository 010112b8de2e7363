/**
 * The real sidecar as a child process (`autorig serve`), so that a crash is unmistakable: the child exits.
 * Run from the TypeScript sources (tests, through devTsRegister.mjs) when this module is a .ts file, else from the
 * build (bin/autorig.js → dist/), so that `npm run fuzz` exercises exactly what ships.
 * Everything the child prints is kept (the tail) and scanned for the token.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { HELD_REQUEST_LOG } from '../sidecar/server/connection.js';
import { SecretWatch } from './rawConnection.js';

/** How much of stderr is kept for a report (the end of it). */
const STDERR_TAIL_CHARS = 64 * 1024;

/** The program and arguments that start `autorig serve --port 0`. */
export interface SidecarCommand {
  command: string;
  args: string[];
}

/** From sources when this module runs as TypeScript (vitest), else the built CLI. */
export function defaultSidecarCommand(): SidecarCommand {
  if (import.meta.url.endsWith('.ts')) {
    const register = fileURLToPath(new URL('../sidecar/server/devTsRegister.mjs', import.meta.url));
    const entry = new URL('../sidecar/server/serveCommand.ts', import.meta.url).href;
    const script = `import(${JSON.stringify(entry)}).then((m) => m.runServeCommand(['--port', '0']))`;
    return { command: process.execPath, args: ['--import', register, '--input-type=module', '-e', script] };
  }
  // Built: this module is dist/fuzz/sidecarProcess.js; the launcher is bin/autorig.js at the package root.
  return { command: process.execPath, args: [fileURLToPath(new URL('../../bin/autorig.js', import.meta.url)), 'serve', '--port', '0'] };
}

/** Resident memory of a process from /proc/<pid>/status, in KiB: now (VmRSS) and its peak so far (VmHWM). */
export interface ProcessMemory {
  rssKiB: number;
  peakKiB: number;
}

/** Read a process's memory; null where /proc is missing (not Linux) or the process is gone. */
export function processMemory(pid: number): ProcessMemory | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    const rssKiB = field('VmRSS');
    const peakKiB = field('VmHWM');
    return Number.isFinite(rssKiB) && Number.isFinite(peakKiB) ? { rssKiB, peakKiB } : null;
  } catch {
    return null;
  }
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running `autorig serve`. */
export class SidecarProcess {
  /** Set once the child has exited (by itself: a crash, unless stop() asked for it). */
  exit: ExitStatus | null = null;
  readonly exited: Promise<ExitStatus>;
  stdout = '';
  stderrTail = '';
  /** Times the token appeared in stdout or stderr. */
  readonly outputWatch: SecretWatch;
  /** Pose requests its log says were held for another job reading their mesh (server/connection.ts startOrHold). */
  heldRequests = 0;
  private stopping = false;

  private constructor(
    readonly child: ChildProcessWithoutNullStreams,
    readonly port: number,
    watch: SecretWatch,
    exited: Promise<ExitStatus>,
  ) {
    this.outputWatch = watch;
    this.exited = exited;
    void exited.then((status) => (this.exit = status));
  }

  /** Start the sidecar with `token` in AUTORIG_TOKEN; resolves once its ready line names the port. */
  static start(token: string, command: SidecarCommand = defaultSidecarCommand(), timeoutMs = 30_000): Promise<SidecarProcess> {
    const child = spawn(command.command, command.args, {
      env: { PATH: process.env.PATH, AUTORIG_TOKEN: token },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const watch = new SecretWatch(token);
    const exited = new Promise<ExitStatus>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    let stdout = '';
    let stderrTail = '';
    let stderrLine = '';
    let heldRequests = 0;
    let sidecar: SidecarProcess | null = null;
    child.stdout.on('data', (chunk: Buffer) => {
      watch.scan(chunk);
      stdout += chunk.toString('utf8');
      if (sidecar) sidecar.stdout = stdout;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      watch.scan(chunk);
      const text = chunk.toString('utf8');
      stderrTail = (stderrTail + text).slice(-STDERR_TAIL_CHARS);
      // counted by whole lines: a chunk may end inside one
      const lines = (stderrLine + text).split('\n');
      stderrLine = lines.pop()!;
      heldRequests += lines.filter((line) => line.includes(HELD_REQUEST_LOG)).length;
      if (sidecar) {
        sidecar.stderrTail = stderrTail;
        sidecar.heldRequests = heldRequests;
      }
    });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`autorig serve printed no ready line within ${timeoutMs} ms:\n${stderrTail}`));
      }, timeoutMs);
      const onData = () => {
        const newline = stdout.indexOf('\n');
        if (newline < 0) return;
        clearTimeout(timer);
        child.stdout.off('data', onData);
        try {
          const ready = JSON.parse(stdout.slice(0, newline)) as { event: string; port: number };
          if (ready.event !== 'ready' || !Number.isInteger(ready.port)) throw new Error('not a ready line');
          sidecar = new SidecarProcess(child, ready.port, watch, exited);
          sidecar.stdout = stdout;
          sidecar.stderrTail = stderrTail;
          sidecar.heldRequests = heldRequests;
          resolve(sidecar);
        } catch (err) {
          child.kill('SIGKILL');
          reject(new Error(`autorig serve's first line is not its ready line (${(err as Error).message}): ${stdout.slice(0, 200)}`));
        }
      };
      child.stdout.on('data', onData);
      void exited.then((status) => {
        clearTimeout(timer);
        if (!sidecar) reject(new Error(`autorig serve exited (${JSON.stringify(status)}) before it was ready:\n${stderrTail}`));
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** True when the child exited without being asked to: a crash. */
  get crashed(): boolean {
    return this.exit !== null && !this.stopping;
  }

  memory(): ProcessMemory | null {
    return processMemory(this.pid);
  }

  /** Ask the sidecar to stop (SIGTERM) and wait; SIGKILL after `graceMs`. Resolves with its exit status. */
  async stop(graceMs = 5000): Promise<ExitStatus> {
    if (this.exit) return this.exit;
    this.stopping = true;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    const status = await this.exited;
    clearTimeout(timer);
    return status;
  }
}
