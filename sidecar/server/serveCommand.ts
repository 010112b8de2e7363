/**
 * `autorig serve [--port N] [--no-warm-up]`: run the sidecar until told to stop.
 *
 * The token comes from the environment (AUTORIG_TOKEN), never from the command line (other users can read argv).
 * There is no token-less mode: without one any local process, or a browser page, could drive the sidecar.
 * When listening, stdout gets exactly one JSON line, {"event":"ready","port":N,"protocol":1}; notes go to stderr.
 * At start it loads the installed models and warms a job thread on the demo character in the background
 * (warmJobThread), so that the first request does not wait for either; --no-warm-up skips the thread's warm-up (a
 * machine that starts sidecars by the dozen, or measures the cold path).
 * Stops cleanly (exit code 0) on SIGTERM, SIGINT, and when stdin is a pipe that closes: the parent (Blender) went away.
 */
import { fstatSync } from 'node:fs';
import { PROTOCOL_VERSION } from '../../shared-schema/validate.js';
import { serve } from './serve.js';

/** Shortest token accepted: the add-on generates 64 hex digits; anything this short is a typo or a toy. */
export const MIN_TOKEN_LENGTH = 16;

const usage = 'usage: autorig serve [--port N] [--no-warm-up]   (AUTORIG_TOKEN must be set in the environment)';

export interface ServeArguments {
  port: number;
  /** warm a job thread at start (false with --no-warm-up) */
  warmUp: boolean;
}

/** Parse the arguments after `serve`. Throws an Error with a message for the user. */
export function parseServeArguments(args: string[]): ServeArguments {
  let port = 0;
  let warmUp = true;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    let value: string | undefined;
    if (arg === '--no-warm-up') {
      warmUp = false;
      continue;
    }
    if (arg === '--port') value = args[++i];
    else if (arg.startsWith('--port=')) value = arg.slice('--port='.length);
    else throw new Error(`unknown argument '${arg}'\n${usage}`);
    if (value === undefined || !/^\d{1,5}$/.test(value) || Number(value) > 65535) {
      throw new Error(`--port needs a number from 0 to 65535 (0 picks a free port)\n${usage}`);
    }
    port = Number(value);
  }
  return { port, warmUp };
}

/** The line announcing that the server listens: a parent process reads the port from it. */
export function readyLine(port: number): string {
  return JSON.stringify({ event: 'ready', port, protocol: PROTOCOL_VERSION });
}

/** True when stdin is a pipe or socket from a parent process (not a terminal, a file or /dev/null). */
function stdinIsParentPipe(): boolean {
  if (process.stdin.isTTY) return false;
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/**
 * Run `autorig serve` with the arguments after `serve`. Resolves with the exit code once the server has stopped
 * (0 after a signal or stdin closing; 2 for bad usage or a missing token; 1 when it cannot listen) and sets
 * process.exitCode to it. Leaves no handle open, so the process then exits by itself.
 */
export async function runServeCommand(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const fail = (code: number, message: string) => {
    process.stderr.write(`autorig serve: ${message}\n`);
    process.exitCode = code;
    return code;
  };
  let parsed: ServeArguments;
  try {
    parsed = parseServeArguments(args);
  } catch (err) {
    return fail(2, (err as Error).message);
  }
  const token = env.AUTORIG_TOKEN ?? '';
  if (token.length === 0) {
    return fail(2, 'AUTORIG_TOKEN is not set. Set it to a random secret (e.g. `openssl rand -hex 32`); clients send it as `Authorization: Bearer <token>`.');
  }
  if (token.length < MIN_TOKEN_LENGTH) return fail(2, `AUTORIG_TOKEN is too short (at least ${MIN_TOKEN_LENGTH} characters)`);

  const log = (line: string) => process.stderr.write(`autorig serve: ${line}\n`);
  let server;
  try {
    server = await serve({ port: parsed.port, token, log, warmModels: true, warmJobs: parsed.warmUp });
  } catch (err) {
    return fail(1, `cannot listen on 127.0.0.1:${parsed.port}: ${(err as Error).message}`);
  }
  process.stdout.write(`${readyLine(server.port)}\n`);

  const reason = await stopRequested();
  log(`stopping (${reason})`);
  await server.close();
  process.exitCode = 0;
  return 0;
}

/**
 * Resolves with the reason once the process is asked to stop: SIGTERM, SIGINT, or the end of stdin when stdin is a
 * parent's pipe. Its listeners are removed before it resolves, so that nothing holds the process open afterwards.
 */
function stopRequested(): Promise<string> {
  return new Promise<string>((resolve) => {
    const watchStdin = stdinIsParentPipe();
    const stop = (reason: string) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      if (watchStdin) process.stdin.destroy();
      resolve(reason);
    };
    const onSignal = (signal: NodeJS.Signals) => stop(signal);
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    if (watchStdin) {
      process.stdin.on('data', () => {}); // the input means nothing; reading it is how the end is noticed
      process.stdin.once('end', () => stop('stdin closed'));
      process.stdin.once('error', () => stop('stdin failed'));
    }
  });
}
