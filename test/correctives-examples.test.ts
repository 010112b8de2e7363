/**
 * Pose Correctives fitted to the character's posed examples (issue 7, correctives.examples): a dev character and one
 * example of it with the left elbow bent to its key pose, skinned with sharper weights than its own (what the artist
 * wants there). Outcomes: bakeCorrectives fits first (progress 'fit' before 'correctives'); over a real server the fit
 * brings the posed mesh closer to the example (result.fit.after < before), the elbow key then lands nearer the example
 * than the bake without examples, a bake without examples answers as before (no fit); bad examples are answered with
 * their codes (TOO_LARGE, BAD_ARRAY, BAD_REQUEST, EMPTY_MESH, their vertices counting towards the totals) while the
 * sidecar keeps serving.
 */
import { resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { validateRequest, protocolLimits } from '../shared-schema/validate.js';
import { bakeCorrectives, type CorrectiveExample, type CorrectiveKey } from '../sidecar/correctives/bakeCorrectives.js';
import { correctiveOffsets } from '../sidecar/correctives/correctiveOffsets.js';
import { keyPoseRotations, keyPoses } from '../sidecar/correctives/keyPoses.js';
import { dualQuaternionSkinning } from '../sidecar/deform/dualQuaternionSkinning.js';
import { linearBlendSkinning, poseTransforms, restSkeleton } from '../sidecar/deform/linearBlendSkinning.js';
import { AutoRigError } from '../sidecar/errors.js';
import { loadCharacter, type Character } from '../sidecar/io/character.js';
import { rigWeights, skeletonFromRig } from '../sidecar/io/rigSkeleton.js';
import { serve, type RunningServer } from '../sidecar/server/serve.js';
import type { PartWeights, Skeleton } from '../sidecar/types.js';
import { ProtocolClient } from './fixtures/protocolClient.js';

const DEV_CHARACTER = resolve(import.meta.dirname, '../../shared/data/characters/mixamo_ely.glb');
const TOKEN = 'correctives-examples-token-0123456789';
const ELBOW = 'mixamorig:LeftForeArm_elbowBend';

type Message = Record<string, unknown>;

/** A bin field of a decoded message as a Float32Array (copied: msgpack views need not be aligned). */
function floats(bytes: Uint8Array): Float32Array {
  return new Float32Array(Uint8Array.from(bytes).buffer);
}

/** Each row of weights raised to `power` and renormalised: sharper blends between the same joints. */
function sharpened(w: PartWeights, power: number): Float32Array {
  const out = new Float32Array(w.weights.length);
  for (let v = 0; v < w.weights.length / w.influences; v++) {
    let sum = 0;
    for (let i = v * w.influences; i < (v + 1) * w.influences; i++) { out[i] = w.weights[i] ** power; sum += out[i]; }
    for (let i = v * w.influences; i < (v + 1) * w.influences; i++) out[i] = sum > 0 ? out[i] / sum : 0;
  }
  return out;
}

/** Mean distance between corresponding vertices. */
function meanDistance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let v = 0; v < a.length / 3; v++) sum += Math.hypot(a[3 * v] - b[3 * v], a[3 * v + 1] - b[3 * v + 1], a[3 * v + 2] - b[3 * v + 2]);
  return sum / (a.length / 3);
}

/** One triangle: an example (or object) that is as small as can be. */
const TRIANGLE = { name: 'tri', positions: Float32Array.from([0, 0, 0, 1, 0, 0, 0, 1, 0]), triangles: Uint32Array.from([0, 1, 2]) };

describe('correctives fitted to posed examples', { timeout: 120_000 }, () => {
  let character: Character;
  let skeleton: Skeleton;
  let weights: PartWeights[];
  let example: CorrectiveExample & { rotations: Float32Array };
  /** LBS of the rest mesh at the elbow key pose, per object */
  let lbsAtElbow: (part: number, offsets: Float32Array) => Float32Array;
  let request: Message;
  let server: RunningServer;
  let client: ProtocolClient;

  beforeAll(async () => {
    character = await loadCharacter(DEV_CHARACTER);
    skeleton = skeletonFromRig(character.rig!);
    weights = rigWeights(character).map((w) => w!);
    const key = keyPoses(skeleton, ['elbowBend']).find((k) => k.name === ELBOW)!;
    const rotations = keyPoseRotations(key, skeleton.joints.length);
    const rest = restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
    const transforms = poseTransforms(rest.heads, rest.parents, rotations);
    // the artist's elbow: the character at the key pose, blended as DQS with weights raised to the 4th power
    example = {
      name: 'elbow sculpt',
      rotations: Float32Array.from(rotations),
      objects: character.parts.map((part, p) => ({
        name: part.name,
        positions: dualQuaternionSkinning(part.positions, weights[p].indices, sharpened(weights[p], 4), weights[p].influences, transforms),
        triangles: part.triangles,
      })),
    };
    lbsAtElbow = (p, offsets) => {
      const w = weights[p];
      return linearBlendSkinning(character.parts[p].positions.map((x, i) => x + offsets[i]), w.indices, w.weights, w.influences, transforms);
    };
    request = {
      objects: character.parts.map((p) => ({ name: p.name, positions: p.positions, triangles: p.triangles })),
      skeleton: { joints: skeleton.joints },
      weights: weights.map((w) => ({ name: w.name, influences: w.influences, indices: w.indices, weights: w.weights })),
      options: { method: 'dualQuaternion', poses: ['elbowBend'] },
    };
    server = await serve({ port: 0, token: TOKEN, jobSlots: 1 });
    client = await ProtocolClient.open(server.port, TOKEN);
  });
  afterEach(() => expect(client.violations, 'messages that break protocol.json').toEqual([]));
  afterAll(async () => {
    client?.close();
    await server?.close();
  });

  it('fits before it bakes: progress \'fit\' from 0 to 1, then \'correctives\'', async () => {
    const stages: [string, number][] = [];
    const result = await bakeCorrectives(character.parts, skeleton, weights, { method: 'dualQuaternion', poses: ['elbowBend'] },
      (stage, fraction) => stages.push([stage, fraction]), [example]);
    const firstBake = stages.findIndex(([stage]) => stage === 'correctives');
    const lastFit = stages.findLastIndex(([stage]) => stage === 'fit');
    expect(stages[0]).toEqual(['fit', 0]);
    expect(stages[lastFit]).toEqual(['fit', 1]);
    expect(lastFit).toBeLessThan(firstBake);
    expect(stages.filter(([stage]) => stage === 'fit').length).toBeGreaterThan(3);
    expect(result.fit).toMatchObject({ examples: 1 });
    expect(result.keys.map((k) => k.name)).toContain(ELBOW);
  });

  it('bakes the elbow key nearer the example than without it, and reports the fit; without examples as before', async () => {
    const plain = await client.ask({ kind: 'correctives', id: 'plain', ...request });
    expect(plain, JSON.stringify(plain).slice(0, 300)).toMatchObject({ kind: 'result', request: 'correctives', method: 'dualQuaternion' });
    expect(Object.hasOwn(plain, 'fit')).toBe(false);
    const fitted = await client.ask({ kind: 'correctives', id: 'fitted', ...request, examples: [example] });
    expect(fitted, JSON.stringify(fitted).slice(0, 300)).toMatchObject({ kind: 'result', request: 'correctives', method: 'dualQuaternion' });
    expect(client.received.some((m) => m.kind === 'progress' && m.id === 'fitted' && m.stage === 'fit')).toBe(true);
    const fit = fitted.fit as { examples: number; before: number; after: number; seconds: number };
    console.log(`fit to 1 example: mean distance ${fit.before.toFixed(5)} → ${fit.after.toFixed(5)} in ${fit.seconds.toFixed(2)} s`);
    expect(fit.examples).toBe(1);
    expect(fit.before).toBeGreaterThan(0);
    expect(fit.after).toBeLessThan(0.8 * fit.before);
    expect(fit.seconds).toBeGreaterThan(0);

    type Key = Omit<CorrectiveKey, 'objects'> & { objects: { name: string; offsets: Uint8Array }[] };
    const plainKeys = plain.keys as Key[], fittedKeys = fitted.keys as Key[];
    expect(fittedKeys.map((k) => k.name)).toEqual(plainKeys.map((k) => k.name));
    const plainElbow = plainKeys.find((k) => k.name === ELBOW)!, fittedElbow = fittedKeys.find((k) => k.name === ELBOW)!;
    // every object's offsets in the count sent; the body's elbow key now reaches the example better
    let before = 0, after = 0, changed = 0, vertices = 0;
    character.parts.forEach((part, p) => {
      const a = floats(plainElbow.objects[p].offsets), b = floats(fittedElbow.objects[p].offsets);
      expect(b.length).toBe(part.positions.length);
      const n = part.positions.length / 3;
      vertices += n;
      changed += meanDistance(a, b) * n;
      before += meanDistance(lbsAtElbow(p, a), example.objects[p].positions) * n;
      after += meanDistance(lbsAtElbow(p, b), example.objects[p].positions) * n;
    });
    [before, after, changed] = [before / vertices, after / vertices, changed / vertices];
    console.log(`elbow key vs the example, mean vertex distance: without examples ${before.toExponential(3)}, with ${after.toExponential(3)}; offsets changed by ${changed.toExponential(3)} on average`);
    expect(changed).toBeGreaterThan(0);
    expect(after).toBeLessThan(0.8 * before);

    // the same request without examples again: byte for byte the first answer's keys
    const again = await client.ask({ kind: 'correctives', id: 'plain-again', ...request });
    expect(Object.hasOwn(again, 'fit')).toBe(false);
    (again.keys as Key[]).forEach((key, k) => key.objects.forEach((o, p) => expect(Buffer.compare(o.offsets, plainKeys[k].objects[p].offsets)).toBe(0)));
  });

  it('fits on the learned field for the default method', async () => {
    const reply = await client.ask({ kind: 'correctives', id: 'field', ...request, options: { poses: ['elbowBend'] }, examples: [example] });
    expect(reply, JSON.stringify(reply).slice(0, 300)).toMatchObject({ kind: 'result', request: 'correctives', method: 'poseDependentDualQuaternion' });
    const fit = reply.fit as { examples: number; before: number; after: number };
    console.log(`fit on the field: mean distance ${fit.before.toFixed(5)} → ${fit.after.toFixed(5)}`);
    expect(fit.after).toBeLessThan(fit.before);
    expect((reply.keys as unknown[]).length).toBe(2);
  });

  it('takes a shape key sculpted on the posed character as an example: posed by LBS, the same fit as the posed surface', async () => {
    // the key an artist would sculpt on the character posed at the elbow key so that it shows the example: LBS of
    // rest + key lands on the example's surface (the character's own vertices, rest space)
    const rest = restSkeleton(skeleton.joints.map((j) => j.head), skeleton.joints.map((j) => j.parent));
    const transforms = poseTransforms(rest.heads, rest.parents, Float64Array.from(example.rotations));
    const sculpted: CorrectiveExample & { rotations: Float32Array } = {
      name: 'elbow key', rotations: example.rotations, shapeKey: true,
      objects: character.parts.map((part, p) => {
        const w = weights[p];
        const key = correctiveOffsets(part.positions, w.indices, w.weights, w.influences, transforms, example.objects[p].positions);
        return { name: part.name, positions: part.positions.map((x, i) => x + key[i]), triangles: part.triangles };
      }),
    };
    const byKey = await client.ask({ kind: 'correctives', id: 'shape-key', ...request, examples: [sculpted] });
    expect(byKey, JSON.stringify(byKey).slice(0, 300)).toMatchObject({ kind: 'result', request: 'correctives' });
    const bySurface = await client.ask({ kind: 'correctives', id: 'surface', ...request, examples: [example] });
    const a = byKey.fit as { before: number; after: number }, b = bySurface.fit as { before: number; after: number };
    console.log(`shape-key example: fit ${a.before.toFixed(5)} → ${a.after.toFixed(5)}; the posed surface itself ${b.before.toFixed(5)} → ${b.after.toFixed(5)}`);
    // the sidecar's LBS of the key is the surface the other example sends, to float rounding
    expect(a.before).toBeCloseTo(b.before, 5);
    expect(a.after).toBeCloseTo(b.after, 4);
    expect(a.after).toBeLessThan(0.8 * a.before);
    // taken as a posed mesh instead (no shapeKey), the same coordinates are far from the pose: another fit
    const unposed = await client.ask({ kind: 'correctives', id: 'unposed', ...request, examples: [{ ...sculpted, shapeKey: false }] });
    expect((unposed.fit as { before: number }).before).toBeGreaterThan(2 * a.before);
    // a key must be the character's own objects, vertex for vertex
    const more = { ...sculpted, objects: [...sculpted.objects, TRIANGLE] };
    const shorter = { ...sculpted, objects: sculpted.objects.map((o, p) => (p === 0 ? { ...o, positions: o.positions.subarray(0, o.positions.length - 3), triangles: Uint32Array.from([0, 1, 2]) } : o)) };
    for (const [id, bad] of [['key-more', more], ['key-shorter', shorter]] as const) {
      const reply = await client.ask({ kind: 'correctives', id, ...request, examples: [bad] });
      expect(reply, id).toMatchObject({ kind: 'error', code: 'BAD_ARRAY' });
      expect(reply.message, id).toMatch(/shape key/);
      // and the library refuses it too, with the same code, when called without the server's check
      await expect(bakeCorrectives(character.parts, skeleton, weights, { method: 'dualQuaternion', poses: ['elbowBend'] }, () => {}, [bad]))
        .rejects.toMatchObject({ code: 'BAD_ARRAY' });
    }
  });

  it('answers bad examples with their codes and keeps serving', async () => {
    const J = skeleton.joints.length;
    const identity = Float32Array.from({ length: J * 9 }, (_, i) => (i % 9 === 0 || i % 9 === 4 || i % 9 === 8 ? 1 : 0));
    const small = { name: 'small', rotations: identity, objects: [TRIANGLE] };
    const cases: [string, Message[]][] = [
      ['TOO_LARGE', Array.from({ length: protocolLimits.maxExamples + 1 }, () => small)],
      ['BAD_ARRAY', [{ ...small, rotations: new Float32Array(9) }]],
      ['BAD_REQUEST', [{ ...small, rotations: identity.map((x) => x * 2) }]],
      ['EMPTY_MESH', [{ ...small, objects: [{ ...TRIANGLE, triangles: new Uint32Array(0) }] }]],
      ['BAD_INDEX', [{ ...small, objects: [{ ...TRIANGLE, triangles: Uint32Array.from([0, 1, 3]) }] }]],
    ];
    for (const [code, examples] of cases) {
      const reply = await client.ask({ kind: 'correctives', id: `bad-${code}`, ...request, examples });
      expect(reply, code).toMatchObject({ kind: 'error', code });
      expect(reply.message, code).toMatch(/example/);
      const again = await client.ask({ kind: 'correctives', id: `after-${code}`, ...request, options: { method: 'dualQuaternion', poses: ['kneeBend'] } });
      expect(again, code).toMatchObject({ kind: 'result', request: 'correctives' });
    }
  });

  it('counts the examples\' vertices and triangles towards the totals', () => {
    const message = { kind: 'correctives', id: 'totals', ...request, examples: [{ ...example, objects: [TRIANGLE] }] };
    const V = character.parts.reduce((n, p) => n + p.positions.length / 3, 0);
    const T = character.parts.reduce((n, p) => n + p.triangles.length / 3, 0);
    const codeWith = (limits: Partial<typeof protocolLimits>) => {
      try {
        validateRequest(message, { ...protocolLimits, ...limits });
        return 'NO ERROR';
      } catch (err) {
        if (err instanceof AutoRigError) return err.code;
        throw err;
      }
    };
    expect(codeWith({ maxVerticesTotal: V + 3, maxTrianglesTotal: T + 1 })).toBe('NO ERROR');
    expect(codeWith({ maxVerticesTotal: V + 2 })).toBe('TOO_LARGE');
    expect(codeWith({ maxTrianglesTotal: T })).toBe('TOO_LARGE');
  });
});
