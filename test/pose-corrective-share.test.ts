/**
 * The corrective share of Apply Latent Pose (sidecar/pose/correctiveShare.ts): LBS + s·(DQS − LBS) per pose, fitted on
 * development identities by `autorig eval corrective-share` (sidecar/eval/poses/fitCorrectiveShare.ts). The fit's
 * pieces, the file's reader, the shipped file's honesty (fitted on development identities only, and the argmin of what
 * it recorded), and the apply path on a held-out dev character with the installed models.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELD_OUT_CHARACTERS } from '../sidecar/data/augment/heldOut.js';
import { PROCEDURAL_DEVELOPMENT_SEED_BASE } from '../sidecar/eval/poses/correctiveShareArguments.js';
import { correctiveErrorsByShare } from '../sidecar/eval/poses/fitCorrectiveShare.js';
import { PROCEDURAL_TEST_SEED_BASE } from '../sidecar/eval/poses/testIdentities.js';
import { loadCharacter, type Character } from '../sidecar/io/character.js';
import { MODEL_DATA_FILES, MODEL_FILES, modelDataPath, modelsFolder } from '../sidecar/learned/modelFiles.js';
import { applyLatentPose, latentOfParts, latentPoseAutoRig } from '../sidecar/pose/applyLatentPose.js';
import {
  bestCorrectiveShare, CORRECTIVE_SHARE_FORMAT, CORRECTIVE_SHARE_GRID, correctiveShareOf, mirrorPoseName, type CorrectiveShareFile,
} from '../sidecar/pose/correctiveShare.js';
import { POSE_NAMES } from '../sidecar/pose/poseVocabulary.js';
import type { RigResult } from '../sidecar/types.js';

const ROOT = resolve(import.meta.dirname, '..');
const DEV_CHARACTER = resolve(ROOT, '../shared/data/characters/mixamo_ely.glb');
const INSTALLED = modelsFolder();
const installed = [MODEL_FILES.latentPoseEncoder, MODEL_FILES.latentPoseDecoder, MODEL_DATA_FILES.latentPoseLibrary, MODEL_FILES.joints2d, MODEL_FILES.pointRig]
  .every((name) => existsSync(join(INSTALLED, name)));

const ON_CI = process.env.CI === 'true';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('the share fit', () => {
  // the tests below that need the models or the shipped file skip without them on a developer's machine; on CI (a
  // clean clone, where both are committed) a missing one is a failure, never a skip
  it.runIf(ON_CI)('has the apply path\'s models and the shipped share file installed on CI', () => {
    expect(installed).toBe(true);
    expect(existsSync(modelDataPath('latentPoseCorrectiveShare'))).toBe(true);
  });

  it('mirrors a pose by swapping its sides, a pose without a side and a symmetric combination being their own', () => {
    expect(mirrorPoseName('elbowBentLf')).toBe('elbowBentRt');
    expect(mirrorPoseName('wristBendRt')).toBe('wristBendLf');
    expect(mirrorPoseName('elbowBentLf+kneeBentRt')).toBe('elbowBentRt+kneeBentLf');
    expect(mirrorPoseName('elbowBentLf+elbowBentRt')).toBe('elbowBentLf+elbowBentRt');
    expect(mirrorPoseName('spineBendForward')).toBe('spineBendForward');
    for (const pose of POSE_NAMES) expect(mirrorPoseName(mirrorPoseName(pose))).toBe(pose);
  });

  it('measures the corrective at every share from one prediction: zero error where s·d is the truth', () => {
    // truth moves two of three vertices by t; the prediction moves them by 2t and the third (still in truth) by u
    // (float32 arrays: compared to 1e-7)
    const rest = Float32Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0);
    const t = [0.01, -0.02, 0.005];
    const truth = rest.map((x, i) => (i < 6 ? x + t[i % 3] : x));
    const predicted = rest.map((x, i) => (i < 6 ? x + 2 * t[i % 3] : i === 6 ? x + 0.004 : x));
    const grid = [0, 0.25, 0.5, 1];
    const errors = correctiveErrorsByShare(rest, truth, predicted, grid);
    const nt = Math.hypot(...t);
    expect(errors[0]).toBeCloseTo((2 * nt) / 3, 7);
    expect(errors[2]).toBeCloseTo(0.002 / 3, 7); // s = 0.5: only the still vertex's 0.5·u is left
    expect(errors[3]).toBeCloseTo((2 * nt + 0.004) / 3, 7);
    expect(errors[1]).toBeCloseTo((2 * 0.5 * nt + 0.001) / 3, 7);
    expect(() => correctiveErrorsByShare(rest, truth.subarray(3), predicted, grid)).toThrow(/same vertices/);
  });

  it('picks the share with the least mean error over identities, the larger one on a tie, 1 with nothing measured', () => {
    const grid = [0, 0.5, 1];
    expect(bestCorrectiveShare([[3, 2, 4], [3, 1, 1]], grid)).toEqual({ share: 0.5, meanError: [3, 1.5, 2.5] });
    expect(bestCorrectiveShare([[2, 1, 1]], grid).share).toBe(1);
    expect(bestCorrectiveShare([[1, 2, 3]], grid).share).toBe(0);
    expect(bestCorrectiveShare([], grid).share).toBe(1);
    expect(CORRECTIVE_SHARE_GRID[0]).toBe(0);
    expect(CORRECTIVE_SHARE_GRID[CORRECTIVE_SHARE_GRID.length - 1]).toBe(1);
  });
});

describe('the share file', () => {
  const write = (content: unknown) => {
    const dir = mkdtempSync(join(tmpdir(), 'autorig-share-'));
    dirs.push(dir);
    const path = join(dir, MODEL_DATA_FILES.latentPoseCorrectiveShare);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  const file = (poses: Record<string, unknown>) => ({ format: CORRECTIVE_SHARE_FORMAT, date: '', command: '', identities: [], grid: [], poses });

  it('reads a pose\'s share, 1 for a pose it does not hold or without the file', () => {
    const path = write(file({ elbowBentLf: { share: 0.4, meanError: [] } }));
    expect(correctiveShareOf('elbowBentLf', path)).toBe(0.4);
    expect(correctiveShareOf('kneeBentLf', path)).toBe(1);
    expect(correctiveShareOf('elbowBentLf', join(tmpdir(), 'no-such-folder-autorig', 'share.json'))).toBe(1);
  });

  it('refuses a file that is not a share file, or a share outside [0, 1], with MODEL_FAILED', () => {
    expect(() => correctiveShareOf('elbowBentLf', write('{ not json'))).toThrow(expect.objectContaining({ code: 'MODEL_FAILED' }));
    expect(() => correctiveShareOf('elbowBentLf', write({ format: 'something/1', poses: {} }))).toThrow(expect.objectContaining({ code: 'MODEL_FAILED' }));
    expect(() => correctiveShareOf('elbowBentLf', write(file({ wristBendLf: { share: 1.5 } })))).toThrow(expect.objectContaining({ code: 'MODEL_FAILED' }));
  });

  const shipped = modelDataPath('latentPoseCorrectiveShare');
  it.skipIf(!existsSync(shipped))('ships a share for every pose, fitted on development identities only, each the least of its own recorded errors', () => {
    const content = JSON.parse(readFileSync(shipped, 'utf8')) as CorrectiveShareFile;
    expect(content.format).toBe(CORRECTIVE_SHARE_FORMAT);
    expect(content.grid).toEqual([...CORRECTIVE_SHARE_GRID]);
    expect(content.identities.length).toBeGreaterThanOrEqual(10);
    for (const name of content.identities) {
      expect(HELD_OUT_CHARACTERS, name).not.toContain(name);
      const seed = /^procedural-(\d+)$/.exec(name);
      if (seed) {
        expect(Number(seed[1])).toBeGreaterThanOrEqual(PROCEDURAL_DEVELOPMENT_SEED_BASE);
        expect(Number(seed[1]) >= PROCEDURAL_TEST_SEED_BASE && Number(seed[1]) < PROCEDURAL_DEVELOPMENT_SEED_BASE).toBe(false);
      }
    }
    for (const pose of POSE_NAMES) {
      const entry = content.poses[pose];
      expect(entry, pose).toBeDefined();
      expect(content.poses[mirrorPoseName(pose)].share, pose).toBe(entry.share);
      const least = Math.min(...entry.meanError);
      expect(entry.meanError[content.grid.indexOf(entry.share)], pose).toBe(least);
      expect(correctiveShareOf(pose)).toBe(entry.share);
    }
  });
});

describe('Apply Latent Pose with a corrective share, on a held-out dev character', { timeout: 240_000 }, () => {
  let character: Character;
  let rig: Pick<RigResult, 'skeleton' | 'objects'>;
  let mu: Float32Array;
  beforeAll(async () => {
    if (!installed) return;
    character = await loadCharacter(DEV_CHARACTER);
    rig = await latentPoseAutoRig(character.parts);
    mu = await latentOfParts(character.parts);
  });
  const apply = async (pose: string, variant: 'skinning' | 'skinningCorrective' | 'corrective', correctiveShare?: number) =>
    (await applyLatentPose(character.parts, { pose, rig, mu, variant, correctiveShare })).objects.map((o) => o.positions);

  it.skipIf(!installed)('blends LBS and DQS linearly in the share: 0 is LBS to the bit, the corrective alone scales with it', async () => {
    const lbs = await apply('elbowBentLf', 'skinning');
    const atZero = await apply('elbowBentLf', 'skinningCorrective', 0);
    atZero.forEach((p, k) => expect(Array.from(p)).toEqual(Array.from(lbs[k])));
    const dqs = await apply('elbowBentLf', 'skinningCorrective', 1);
    const half = await apply('elbowBentLf', 'skinningCorrective', 0.5);
    const whole = await apply('elbowBentLf', 'corrective', 1);
    const halfAlone = await apply('elbowBentLf', 'corrective', 0.5);
    let moved = 0, worst = 0, worstAlone = 0;
    character.parts.forEach((part, k) => {
      for (let i = 0; i < part.positions.length; i++) {
        if (Math.abs(dqs[k][i] - lbs[k][i]) > 1e-4) moved++;
        worst = Math.max(worst, Math.abs(half[k][i] - (lbs[k][i] + dqs[k][i]) / 2));
        worstAlone = Math.max(worstAlone, Math.abs(halfAlone[k][i] - (part.positions[i] + whole[k][i]) / 2));
      }
    });
    expect(moved, 'DQS and LBS differ somewhere at a bent elbow').toBeGreaterThan(10);
    expect(worst).toBeLessThan(1e-5);
    expect(worstAlone).toBeLessThan(1e-5);
  });

  it.skipIf(!installed)('poses the auto-rig with the shipped share of the pose, a given rig with the whole corrective, and refuses a share outside [0, 1]', async () => {
    const share = correctiveShareOf('wristBendLf');
    // the auto-rig as an earlier apply left it (what a mesh without a rig gets from the second apply on)
    const auto = async (correctiveShare?: number) =>
      (await applyLatentPose(character.parts, { pose: 'wristBendLf', reuse: { mu, autoRig: rig }, variant: 'corrective', correctiveShare })).objects.map((o) => o.positions);
    const byDefault = await auto();
    const told = await auto(share);
    byDefault.forEach((p, k) => expect(Array.from(p)).toEqual(Array.from(told[k])));
    // the same skeleton and weights handed over as the character's own rig: the share was fitted for the auto-rig only
    const given = await apply('wristBendLf', 'corrective');
    const whole = await auto(1);
    given.forEach((p, k) => expect(Array.from(p)).toEqual(Array.from(whole[k])));
    expect(share, 'the shipped fit gives the wrists a part of the corrective').toBeLessThan(1);
    expect(whole.some((p, k) => p.some((x, i) => x !== byDefault[k][i]))).toBe(true);
    for (const bad of [1.5, -0.1, Number.NaN]) {
      await expect(applyLatentPose(character.parts, { pose: 'wristBendLf', rig, mu, correctiveShare: bad })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    }
  });
});

describe('autorig eval corrective-share', { timeout: 240_000 }, () => {
  const cli = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin/autorig.js'), 'eval', 'corrective-share', ...args], { encoding: 'utf8' });

  it('refuses bad usage with exit code 64', () => {
    expect(cli().status).toBe(64);
    expect(cli('--data', ROOT, '--procedural', 'some').status).toBe(64);
    expect(cli('--data', ROOT, '--fit-harder').status).toBe(64);
    expect(cli('--help').stdout).toMatch(/usage: autorig eval corrective-share --data/);
  });

  it.skipIf(!installed)('fits on one procedural development humanoid without touching the shipped file unless told to write', () => {
    const empty = mkdtempSync(join(tmpdir(), 'autorig-share-data-'));
    dirs.push(empty);
    const shipped = modelDataPath('latentPoseCorrectiveShare');
    const before = existsSync(shipped) ? statSync(shipped).mtimeMs : null;
    const run = cli('--data', empty, '--procedural', '1');
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^corrective share fitted on 1 development identities/);
    expect(run.stderr).toMatch(new RegExp(`procedural-${PROCEDURAL_DEVELOPMENT_SEED_BASE}: 34 poses`));
    expect(run.stdout).not.toMatch(/written:/);
    expect(existsSync(shipped) ? statSync(shipped).mtimeMs : null).toBe(before);
  });

  it.skipIf(!installed)('writes the share file into the models folder it runs with (AUTORIG_MODELS), which Apply Latent Pose then reads', () => {
    const empty = mkdtempSync(join(tmpdir(), 'autorig-share-data-'));
    const models = mkdtempSync(join(tmpdir(), 'autorig-share-models-'));
    dirs.push(empty, models);
    for (const name of readdirSync(INSTALLED)) {
      if (name !== MODEL_DATA_FILES.latentPoseCorrectiveShare && lstatSync(join(INSTALLED, name)).isFile()) symlinkSync(join(INSTALLED, name), join(models, name));
    }
    const run = spawnSync(process.execPath, [join(ROOT, 'bin/autorig.js'), 'eval', 'corrective-share', '--data', empty, '--procedural', '1', '--write'], {
      encoding: 'utf8', env: { ...process.env, AUTORIG_MODELS: models },
    });
    expect(run.status, run.stderr).toBe(0);
    const written = join(models, MODEL_DATA_FILES.latentPoseCorrectiveShare);
    expect(run.stdout).toContain(`written: ${written}`);
    const content = JSON.parse(readFileSync(written, 'utf8')) as CorrectiveShareFile;
    expect(content).toMatchObject({ format: CORRECTIVE_SHARE_FORMAT, identities: [`procedural-${PROCEDURAL_DEVELOPMENT_SEED_BASE}`], grid: [...CORRECTIVE_SHARE_GRID] });
    expect(content.command).toBe(`autorig eval corrective-share --data ${empty} --procedural 1 --write`);
    for (const pose of POSE_NAMES) {
      const { share, meanError } = content.poses[pose];
      expect(meanError).toHaveLength(CORRECTIVE_SHARE_GRID.length);
      expect(meanError[CORRECTIVE_SHARE_GRID.indexOf(share)]).toBe(Math.min(...meanError));
      expect(correctiveShareOf(pose, written)).toBe(share);
    }
  });
});
