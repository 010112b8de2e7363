/**
 * Runs the Blender add-on's Python unit tests (test/python: msgpack, WebSocket client against a Python server,
 * sidecar management against a fake sidecar, protocol conformance, weight batching) with the system Python.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('Blender add-on Python tests', () => {
  it('all pass', () => {
    const run = spawnSync('/usr/bin/python3', ['-m', 'unittest', 'discover', '-s', 'test/python', '-p', 'test_*.py', '-v'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    const ran = /Ran (\d+) tests? in/.exec(output);
    if (run.status !== 0) console.error(output.slice(-6000));
    expect(run.status).toBe(0);
    expect(ran).not.toBeNull();
    expect(Number(ran![1])).toBeGreaterThan(50);
    expect(output).toMatch(/\nOK/);
  }, 150_000);
});
