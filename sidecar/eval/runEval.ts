/**
 * `autorig eval` as a function: every rigged .glb of a folder, each in a child process of its own (evalWorker.ts),
 * then the means, the quality bar and the outputs (JSON, markdown report, pictures).
 */
import { fork } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, platform } from 'node:os';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import { AutoRigError } from '../errors.js';
import { encodePng } from '../io/png.js';
import { selectProvider } from '../learned/executionProvider.js';
import { findBlender, blenderVersion } from './blenderPeer.js';
import type { EvaluateOptions } from './evaluateCharacter.js';
import { EVAL_SCHEMA, EVAL_SCHEMA_VERSION, type CharacterEval, type EvalReport, type Variant } from './evalTypes.js';
import { checkBar, summarise } from './qualityBar.js';
import { renderMarkdownReport } from './reportMarkdown.js';
import { deformationBarChart } from './reportPictures.js';

export interface EvalOptions {
  data: string;
  json?: string;
  report?: string;
  peer: 'blender' | null;
  blender?: string;
  remesh: number | null;
  method: string;
  /** character names (file names without extension) to evaluate; all when undefined */
  only?: string[];
  poseSeed: number;
  /** repository root: where dist/sidecar/eval/evalWorker.js lives */
  root: string;
  version: string;
  log: (line: string) => void;
}

/** A child that takes longer than this is stopped and its character reported as failed. */
const CHARACTER_TIMEOUT_MS = 20 * 60 * 1000;

/** runEval: evaluate the folder, write the outputs asked for, return the report. */
export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const files = rigFiles(options.data, options.only);
  if (options.peer === 'blender' && !findBlender(options.blender)) {
    throw new AutoRigError('BAD_REQUEST', 'Blender was not found (set AUTORIG_BLENDER or put blender on PATH); it is needed for --peer blender');
  }
  const created = new Date().toISOString();
  const pictureDir = options.report ? join(dirname(options.report), `${basename(options.report, extname(options.report))}-pictures`) : undefined;
  if (pictureDir) await mkdir(pictureDir, { recursive: true });

  const provider = await modelProvider(options.method);
  const variants: Variant[] = options.remesh ? ['original', 'remesh'] : ['original'];
  const characters: CharacterEval[] = [];
  const frontViews: Record<string, string> = {};
  for (const file of files) {
    for (const variant of variants) {
      const name = basename(file, extname(file));
      const key = `${name}${variant === 'remesh' ? '-remesh' : ''}`;
      const png = pictureDir ? join(pictureDir, `${key}-front.png`) : undefined;
      const t0 = performance.now();
      options.log(`eval: ${name}${variant === 'remesh' ? ` (remeshed to ~${options.remesh} vertices)` : ''}`);
      const result = await evaluateInChild(file, {
        variant,
        remeshVertices: options.remesh ?? undefined,
        peer: options.peer,
        blender: options.blender,
        method: options.method,
        poseSeed: options.poseSeed,
        poses: 10,
        degrees: [10, 45],
        frontViewPng: png,
      }, options.root);
      characters.push(result);
      if (png && existsSync(png)) frontViews[key] = relative(dirname(options.report!), png);
      options.log(`eval: ${name}: ${describe(result)} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    }
  }

  const summary = summarise(characters);
  const report: EvalReport = {
    schema: EVAL_SCHEMA,
    version: EVAL_SCHEMA_VERSION,
    created,
    data: options.data,
    method: options.method,
    peer: options.peer,
    remesh: options.remesh,
    settings: { poseSeed: options.poseSeed, poses: 10, degrees: [10, 45] },
    environment: {
      node: process.version,
      platform: `${platform()} ${process.arch}`,
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      blender: options.peer === 'blender' ? await blenderVersion(options.blender) : null,
      autorig: options.version,
      ...provider,
    },
    characters,
    summary,
    bar: checkBar(characters, summary),
  };

  if (options.json) {
    await mkdir(dirname(resolve(options.json)), { recursive: true });
    await writeFile(options.json, `${JSON.stringify(report, jsonNumbers, 2)}\n`);
  }
  if (options.report && pictureDir) {
    const charts: Record<string, string> = {};
    for (const variant of variants) {
      const path = join(pictureDir, `deformation-${variant}.png`);
      await writeFile(path, encodePng(deformationBarChart(report, variant)));
      charts[variant] = relative(dirname(options.report), path);
    }
    await writeFile(options.report, renderMarkdownReport(report, { charts, frontViews }));
  }
  return report;
}

/**
 * Where the method's models run (environment.provider/providerFallback): none for the geometric method, else the
 * sidecar's provider, chosen here before any character is evaluated so that the evaluating processes adopt it.
 */
async function modelProvider(method: string): Promise<{ provider: string | null; providerFallback: string[] }> {
  if (method === 'geometric') return { provider: null, providerFallback: [] };
  const selection = await selectProvider();
  return { provider: selection.name, providerFallback: [...selection.fallbackFrom] };
}

/** The .glb files of the folder (sorted), restricted to `only` when given; a name in `only` that is not there is an error. */
export function rigFiles(data: string, only?: string[]): string[] {
  if (!existsSync(data) || !statSync(data).isDirectory()) throw new AutoRigError('BAD_REQUEST', `--data ${data}: not a folder`);
  const all = readdirSync(data).filter((f) => extname(f).toLowerCase() === '.glb').sort();
  const chosen = only ? all.filter((f) => only.includes(basename(f, extname(f)))) : all;
  const missing = (only ?? []).filter((n) => !all.some((f) => basename(f, extname(f)) === n));
  if (missing.length) throw new AutoRigError('BAD_REQUEST', `--only: no ${missing.map((n) => `${n}.glb`).join(', ')} in ${data}`);
  if (!chosen.length) throw new AutoRigError('BAD_REQUEST', `--data ${data}: no .glb files`);
  return chosen.map((f) => join(data, f));
}

function evaluateInChild(file: string, options: Omit<EvaluateOptions, 'log'>, root: string): Promise<CharacterEval> {
  const worker = join(root, 'dist', 'sidecar', 'eval', 'evalWorker.js');
  const name = basename(file, extname(file));
  const failed = (code: string, message: string): CharacterEval => ({
    name, file, variant: options.variant, vertices: 0, triangles: 0, status: 'failed', error: { code, message },
    time: { rigSeconds: 0, skinSeconds: 0, peakRssMiB: 0 },
  });
  return new Promise((done) => {
    const child = fork(worker, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let answered = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), CHARACTER_TIMEOUT_MS);
    child.on('message', (message: { result?: CharacterEval; error?: { message: string; code?: string; stack?: string } }) => {
      answered = true;
      if (message.result) done(message.result);
      else done(failed(message.error?.code ?? 'INTERNAL', message.error?.stack ?? message.error?.message ?? 'unknown error'));
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (!answered) done(failed('INTERNAL', `the evaluation process ended without a result (exit ${code ?? signal})`));
    });
    child.send({ file, options });
  });
}

function describe(c: CharacterEval): string {
  if (c.status !== 'ok') return `${c.status}: ${c.error?.message.split('\n')[0]}`;
  const s = c.skinning!;
  return [
    `CD-J2J ${c.skeleton!.cdJ2J.toFixed(4)}`,
    `ours ±45° ${s.ours.deformation45.toFixed(4)} L1 ${s.ours.l1.toFixed(3)}`,
    s.blender ? `Blender ±45° ${s.blender.deformation45.toFixed(4)} L1 ${s.blender.l1.toFixed(3)}${s.blender.failed ? ' FAILED' : ''}` : '',
    `pipeline ±45° ${c.pipeline!.deformation45.toFixed(4)}`,
  ].filter(Boolean).join(', ');
}

/** JSON has no NaN: a value that could not be measured is written as null. */
function jsonNumbers(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? null : value;
}
