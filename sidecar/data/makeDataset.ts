/**
 * `autorig data` (npm run data): the training sets of the learned models, reproducible from one seed. Sample i is a
 * pure function of (seed, i): the first `procedural` indices are procedural humanoids, the rest re-proportioned dev
 * characters (never the held-out ones) taken in turn. Work is split over child processes by index, so the output does
 * not depend on --jobs. `kind` says what is written for each character: `rig` a HumanRig training sample
 * (trainingSample.ts, *.sample), `pose` a latent-pose identity (poses/poseSample.ts, *.pose: neutral and every pose),
 * `correctives` a pose-dependent skinning sample (correctives/correctivesSample.ts, *.corr: a bare procedural humanoid,
 * its static weights and the exact posed surface at its key poses). A correctives dataset is procedural only: its
 * ground truth needs the generator's shapes, so augmentedFraction is ignored for it (proceduralCount = count).
 * A `pose` identity also gets its rig (poses/poseRig.ts, *.poserig); `pose-rig` writes only that side file, for a
 * folder of *.pose files made before it existed (the character is made again from (seed, i) and checked against the
 * *.pose file, which must be there).
 * With `resume`, a sample whose files are all there already is kept as it is (writeBundle renames a finished file into
 * place, so a file that is there is whole): an interrupted run is finished by running the same command again.
 */
import { fork } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { augmentDevCharacter } from './augment/augmentDevCharacter.js';
import { devCharacterName, loadDevCharacter, type DevCharacter } from './augment/devCharacter.js';
import { trainingDevCharacters } from './augment/heldOut.js';
import { CORRECTIVES_TRAIN_VERTICES, makeCorrectivesSample, writeCorrectivesSample } from './correctives/correctivesSample.js';
import { generateProceduralHumanoid } from './procedural/proceduralHumanoid.js';
import { makePoseRig, poseRigPath, writePoseRig } from './poses/poseRig.js';
import { makePoseSample, readPoseSample, writePoseSample } from './poses/poseSample.js';
import { makeTrainingSample, writeTrainingSample, type RiggedCharacter } from './trainingSample.js';

/** What the dataset is for: HumanRig's rigging networks, the latent-pose model (issue 6), or the pose-dependent
 * weight field of Pose Correctives (issue 7). */
export const DATASET_KINDS = ['rig', 'pose', 'pose-rig', 'correctives'] as const;
export type DatasetKind = (typeof DATASET_KINDS)[number];

export interface DatasetOptions {
  /** what each sample is (default 'rig') */
  kind?: DatasetKind;
  out: string;
  count: number;
  seed: number;
  /** share of the samples that are re-proportioned dev characters (0..1) */
  augmentedFraction: number;
  /** folder of the dev characters (artist-rigged .glb) */
  characters: string;
  jobs: number;
  /** vertex-count range [lo, hi] of procedural characters (log-uniform); null: the generator's default */
  proceduralVertices: [number, number] | null;
  /** remesh target range for augmented characters; null: the generator's default; [0, 0]: keep the artist's mesh */
  augmentedVertices: [number, number] | null;
  /**
   * share (0..1) of the procedural humanoids whose arms are posed apart (generateProceduralHumanoid's asymmetricArms;
   * rig and pose kinds); absent or 0: none, and every sample is as it was before the option
   */
  asymmetricArms?: number;
  /** keep the samples whose files (sampleFiles) are all in `out` already, and make only the others */
  resume?: boolean;
  log: (line: string) => void;
}

export interface DatasetSummary {
  written: number;
  /** samples found made and kept (resume) */
  kept: number;
  failed: { index: number; error: string }[];
  seconds: number;
}

/** Seed of sample i: distinct for every (seed, i), unrelated bits for neighbours. */
export function sampleSeed(seed: number, index: number): number {
  let h = Math.imul((seed ^ 0x5bd1e995) >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca77);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return (h ^ (h >>> 15)) >>> 0;
}

/** Number of procedural samples among `count`: all of them for a correctives dataset (augmentedFraction ignored). */
export function proceduralCount(options: Pick<DatasetOptions, 'count' | 'augmentedFraction' | 'kind'>): number {
  if (options.kind === 'correctives') return options.count;
  return options.count - Math.round(options.count * options.augmentedFraction);
}

/** The draw in [0, 1) that decides whether a procedural sample's arms are posed apart: its seed mixed again (u reads it plain). */
function armsApartDraw(seed: number): number {
  let h = Math.imul(seed ^ 0x61c88647, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0) / 2 ** 32;
}

/** logUniform: a value in [lo, hi] from u in [0, 1), even on a log scale. */
function logUniform(u: number, [lo, hi]: [number, number]): number {
  return Math.round(Math.exp(Math.log(lo) + u * (Math.log(hi) - Math.log(lo))));
}

/**
 * makeSample: sample `index` of the dataset → its written path (in options.out). Dev characters are loaded once per
 * process through `cache`.
 */
export async function makeSample(index: number, options: DatasetOptions, cache: Map<string, DevCharacter>): Promise<string> {
  const seed = sampleSeed(options.seed, index);
  if (options.kind === 'correctives') {
    // the generator's vertex target (the --procedural-vertices range when given), not a RiggedCharacter: the sample
    // needs the character's plan, which only the generator's own parameters give
    const u = (seed % 1_000_003) / 1_000_003;
    const targetVertices = options.proceduralVertices ? logUniform(u, options.proceduralVertices) : CORRECTIVES_TRAIN_VERTICES;
    const name = `proc-${String(index).padStart(6, '0')}`;
    const path = join(options.out, `${name}.corr`);
    writeCorrectivesSample(path, await makeCorrectivesSample(seed, { targetVertices, name }));
    return path;
  }
  const { character, stem } = await datasetCharacter(index, seed, options, cache);
  if (options.kind === 'pose') {
    const path = join(options.out, `${stem}.pose`);
    const sample = makePoseSample(character, seed);
    writePoseSample(path, sample);
    writePoseRig(poseRigPath(path), makePoseRig(character, sample.header, sample.anchorIndices, sample.anchorPositions));
    return path;
  }
  if (options.kind === 'pose-rig') {
    const posePath = join(options.out, `${stem}.pose`);
    if (!existsSync(posePath)) throw new Error(`${stem}: no ${posePath} to add a rig to`);
    const sample = readPoseSample(posePath);
    const path = poseRigPath(posePath);
    writePoseRig(path, makePoseRig(character, sample.header, sample.anchorIndices, sample.anchorPositions));
    return path;
  }
  const path = join(options.out, `${stem}.sample`);
  writeTrainingSample(path, makeTrainingSample(character, seed));
  return path;
}

/**
 * sampleStem: the file name sample `index` is written under, without extension (procedural `proc-000042`, augmented
 * `aug-<dev character>-000042`); `devs`: trainingDevCharacters(options.characters), read only for augmented samples.
 */
export function sampleStem(index: number, options: Pick<DatasetOptions, 'count' | 'augmentedFraction' | 'kind'>, devs: () => string[]): string {
  const number = String(index).padStart(6, '0');
  if (index < proceduralCount(options)) return `proc-${number}`;
  return `aug-${devCharacterName(augmentedSource(index, options, devs()))}-${number}`;
}

/** sampleFiles: the paths in options.out that sample `index` writes (a pose identity: its *.pose and its *.poserig). */
export function sampleFiles(index: number, options: DatasetOptions): string[] {
  const stem = join(options.out, sampleStem(index, options, () => trainingDevCharacters(options.characters)));
  if (options.kind === 'correctives') return [`${stem}.corr`];
  if (options.kind === 'pose') return [`${stem}.pose`, poseRigPath(`${stem}.pose`)];
  if (options.kind === 'pose-rig') return [poseRigPath(`${stem}.pose`)];
  return [`${stem}.sample`];
}

/** isSampleMade: whether every file of sample `index` is in options.out (see resume). */
export function isSampleMade(index: number, options: DatasetOptions): boolean {
  return sampleFiles(index, options).every((path) => existsSync(path));
}

/** The dev character file augmented sample `index` re-proportions: the training dev characters taken in turn. */
function augmentedSource(index: number, options: Pick<DatasetOptions, 'count' | 'augmentedFraction' | 'kind'>, devs: string[]): string {
  if (!devs.length) throw new Error('no training dev characters to augment');
  return devs[(index - proceduralCount(options)) % devs.length];
}

/** The character of sample `index` (seed: its sampleSeed) and the file name it is written under, without extension. */
async function datasetCharacter(
  index: number, seed: number, options: DatasetOptions, cache: Map<string, DevCharacter>,
): Promise<{ character: RiggedCharacter; stem: string }> {
  const nProc = proceduralCount(options);
  // the dev characters' folder is read once, and only for an augmented sample
  const devs = index < nProc ? [] : trainingDevCharacters(options.characters);
  if (index >= nProc && !devs.length) throw new Error(`no training dev characters in ${options.characters}`);
  const stem = sampleStem(index, options, () => devs);
  let character: RiggedCharacter;
  const u = (seed % 1_000_003) / 1_000_003;
  if (index < nProc) {
    const targetVertices = options.proceduralVertices ? logUniform(u, options.proceduralVertices) : undefined;
    const asymmetricArms = options.asymmetricArms !== undefined && options.asymmetricArms > 0 && armsApartDraw(seed) < options.asymmetricArms;
    character = generateProceduralHumanoid(seed, { ...(targetVertices ? { targetVertices } : {}), ...(asymmetricArms ? { asymmetricArms } : {}) });
    character.meta = { ...character.meta, source: 'procedural' };
    character.name = stem;
  } else {
    const path = augmentedSource(index, options, devs);
    let dev = cache.get(path);
    if (!dev) { dev = await loadDevCharacter(path); cache.set(path, dev); }
    const range = options.augmentedVertices;
    const remeshVertices = range === null ? undefined : range[1] === 0 ? null : logUniform(u, range);
    character = augmentDevCharacter(dev, seed, remeshVertices === undefined ? {} : { remeshVertices });
    character.meta = { ...character.meta, source: 'augmented' };
    // Samples of one source character share the part of the name before '#': validation splits keep them together.
    character.name = `aug-${dev.name}#${String(index).padStart(6, '0')}`;
  }
  return { character, stem };
}

/** makeDataset: every sample of the dataset into options.out, over options.jobs child processes. */
export async function makeDataset(options: DatasetOptions): Promise<DatasetSummary> {
  const t0 = performance.now();
  if (!existsSync(options.out)) mkdirSync(options.out, { recursive: true });
  const jobs = Math.max(1, Math.min(options.jobs, options.count));
  const worker = fileURLToPath(new URL('./datasetWorker.js', import.meta.url));
  const results = await Promise.all(
    Array.from({ length: jobs }, (_, k) => new Promise<DatasetSummary>((resolve, reject) => {
      const child = fork(worker, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      let summary: DatasetSummary | null = null;
      child.on('message', (m: { kind: string; line?: string; summary?: DatasetSummary }) => {
        if (m.kind === 'log' && m.line) options.log(m.line);
        if (m.kind === 'done' && m.summary) summary = m.summary;
      });
      child.on('exit', (code) => (summary ? resolve(summary) : reject(new Error(`data worker ${k} exited with ${code}`))));
      const { log: _log, ...plain } = options;
      child.send({ options: plain, first: k, stride: jobs });
    })),
  );
  const summary: DatasetSummary = {
    written: results.reduce((n, r) => n + r.written, 0),
    kept: results.reduce((n, r) => n + r.kept, 0),
    failed: results.flatMap((r) => r.failed).sort((a, b) => a.index - b.index),
    seconds: (performance.now() - t0) / 1000,
  };
  // a side-file run must not overwrite the summary of the data it adds to
  writeFileSync(join(options.out, options.kind === 'pose-rig' ? 'dataset-pose-rig.json' : 'dataset.json'), JSON.stringify({ ...withoutLog(options), ...summary }, null, 2));
  return summary;
}

function withoutLog(options: DatasetOptions): Omit<DatasetOptions, 'log'> {
  const { log: _log, ...rest } = options;
  return rest;
}
