/**
 * `autorig eval correctives` end to end on one held-out procedural humanoid and two key poses at 90°: the table's
 * content is what a correct run gives (at rest both skinnings sit on the exact surface; a 90° wrist twist pinches the
 * LBS wrist like a candy wrapper and loses volume there while DQS keeps both; a 90° elbow bend moves LBS off the
 * exact surface far more than it is at rest), the report is written, and bad command lines are usage errors.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_USAGE, runCli } from '../sidecar/cli/main.js';
import { CORRECTIVES_SEED_BASE, type CorrectivesReport } from '../sidecar/eval/correctives/runCorrectivesEval.js';

function capture(): { io: { stdout: { write(t: string): boolean }; stderr: { write(t: string): boolean } }; out: () => string; err: () => string } {
  let out = '', err = '';
  return {
    io: { stdout: { write: (t: string) => { out += t; return true; } }, stderr: { write: (t: string) => { err += t; return true; } } },
    out: () => out,
    err: () => err,
  };
}

describe('autorig eval correctives', { timeout: 180_000 }, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'autorig-correctives-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('measures LBS and DQS against the exact posed surface at rest, a 90° wrist twist and a 90° elbow bend', async () => {
    const c = capture();
    const reportPath = join(tmp, 'correctives.md');
    const code = await runCli(['eval', 'correctives', '--procedural', '1', '--poses', 'wristTwist,elbow', '--degrees', '90', '--json', '--report', reportPath], c.io);
    expect(code, c.err()).toBe(EXIT_OK);
    const report = JSON.parse(c.out()) as CorrectivesReport;
    expect(report.seeds).toEqual([CORRECTIVES_SEED_BASE]);
    expect(report.methods.map((m) => m.id)).toEqual(['lbs', 'dqs']);
    const at = (pose: string, method: string) => {
      const r = report.results.find((x) => x.pose === pose && x.method === method);
      expect(r, `${pose} ${method}`).toBeDefined();
      return r!;
    };
    // rest: both skinnings are the rest mesh, a few hundredths of a percent of the height from the exact surface
    for (const m of ['lbs', 'dqs']) {
      expect(at('rest', m).chamfer!).toBeLessThan(5e-4);
      expect(Math.abs(at('rest', m).volumeLoss)).toBeLessThan(1e-9);
    }
    // a 90° wrist twist: LBS pinches the wrist (about cos² 45° of its section) and loses volume there, DQS keeps both
    const lbsTwist = at('wrist twist', 'lbs'), dqsTwist = at('wrist twist', 'dqs');
    expect(lbsTwist.sectionKept!).toBeLessThan(0.75);
    expect(dqsTwist.sectionKept!).toBeGreaterThan(0.85);
    expect(lbsTwist.jointVolumeLoss).toBeGreaterThan(dqsTwist.jointVolumeLoss + 0.05);
    expect(Math.abs(at('wrist twist', 'truth').jointVolumeLoss)).toBeLessThan(0.05);
    // a 90° elbow bend: LBS is several times further from the exact surface near the elbow than at rest
    expect(at('elbow bend', 'lbs').chamfer!).toBeGreaterThan(3 * at('rest', 'lbs').chamfer!);
    expect(at('elbow bend', 'lbs').jointVolumeLoss).toBeGreaterThan(at('elbow bend', 'truth').jointVolumeLoss + 0.02);
    // the markdown report holds the same rows
    const md = readFileSync(reportPath, 'utf8');
    expect(md).toMatch(/\| wrist twist \| 90° \| static LBS \| [\d.]+ \|/);
    expect(md).toMatch(/\| rest \| 0° \| DQS \| [\d.]+ \|/);
    expect(md).toMatch(/## Means/);
  });

  it('answers bad command lines with its usage', async () => {
    for (const args of [['--poses', 'elbo'], ['--procedural', '0'], ['--report', 'x.txt'], ['--method', 'hybrid'], ['--bogus']]) {
      const c = capture();
      expect(await runCli(['eval', 'correctives', ...args], c.io)).toBe(EXIT_USAGE);
      expect(c.err()).toMatch(/autorig eval correctives/);
    }
    const help = capture();
    expect(await runCli(['eval', 'correctives', '--help'], help.io)).toBe(EXIT_OK);
    expect(help.out()).toMatch(/9200000/);
  });
});
