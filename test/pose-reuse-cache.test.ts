/**
 * The server's memory of pose.apply meshes (server/poseReuseCache.ts): keyed by exactly the mesh sent, bounded by
 * entries and bytes, least recently used first out, an auto-rig and a canonical frame kept when a later apply brings
 * μ alone.
 */
import { describe, expect, it } from 'vitest';
import { meshDigest, PoseReuseCache } from '../sidecar/server/poseReuseCache.js';
import type { LatentPoseReuse } from '../sidecar/pose/applyLatentPose.js';
import type { MeshPart } from '../sidecar/types.js';

const part = (name: string, shift = 0): MeshPart => ({
  name, positions: Float32Array.of(0, 0, 0, 1, 0, 0, 0, 1 + shift, 0), triangles: Uint32Array.of(0, 1, 2),
});
const reuse = (value: number, rigBytes = 0): LatentPoseReuse => ({
  mu: new Float32Array(4).fill(value),
  ...(rigBytes ? { autoRig: { skeleton: { joints: [] }, objects: [{ name: 'a', influences: 1, indices: new Uint16Array(rigBytes / 6), weights: new Float32Array(rigBytes / 6) }] } } : {}),
});

describe('meshDigest', () => {
  it('is the same for the same parts and differs for a moved vertex, a renamed part, another order or a split', () => {
    const a = part('body'), b = part('head');
    expect(meshDigest([a, b])).toBe(meshDigest([part('body'), part('head')]));
    const keys = [
      meshDigest([a, b]), meshDigest([part('body', 1e-6), b]), meshDigest([part('torso'), b]), meshDigest([b, a]), meshDigest([a]),
      // the same bytes cut differently between name and positions must not collide
      meshDigest([{ ...a, positions: a.positions.subarray(3), triangles: Uint32Array.of(0, 1, 0) }, b]),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('differs by the facing that turns the frame, and is the same for the same facing', () => {
    const a = part('body');
    const keys = [meshDigest([a]), meshDigest([a], [0, 0, 1]), meshDigest([a], [0, 0, -1]), meshDigest([a], [0, 0.1, 1])];
    expect(new Set(keys).size).toBe(keys.length);
    expect(meshDigest([a], [0, 0, 1])).toBe(meshDigest([part('body')], [0, 0, 1]));
  });

  it('reads the typed arrays\' own bytes, not the whole buffer behind a view', () => {
    const big = new Float32Array(12);
    big.set(part('x').positions, 3);
    const view = { name: 'x', positions: big.subarray(3, 12), triangles: Uint32Array.of(0, 1, 2) };
    expect(meshDigest([view])).toBe(meshDigest([part('x')]));
  });
});

describe('PoseReuseCache', () => {
  it('answers what was set, and nothing for an unknown mesh', () => {
    const cache = new PoseReuseCache();
    cache.set('k', reuse(1));
    expect(Array.from(cache.get('k')!.mu)).toEqual([1, 1, 1, 1]);
    expect(cache.get('other')).toBeUndefined();
  });

  it('drops the least recently used mesh beyond its entry bound', () => {
    const cache = new PoseReuseCache(2);
    cache.set('a', reuse(1));
    cache.set('b', reuse(2));
    cache.get('a'); // a is now the most recently used
    cache.set('c', reuse(3));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')!.mu[0]).toBe(1);
    expect(cache.get('c')!.mu[0]).toBe(3);
  });

  it('stays within its byte bound and refuses an entry larger than the bound alone', () => {
    const cache = new PoseReuseCache(10, 1000);
    cache.set('a', reuse(1, 600));
    cache.set('b', reuse(2, 600)); // a + b > 1000 bytes: a goes
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeDefined();
    cache.set('huge', reuse(3, 1200));
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.get('b')).toBeDefined();
  });

  it('keeps the canonical frame when a later entry for the same mesh has none, and takes a new one', () => {
    const cache = new PoseReuseCache();
    const frame = (scale: number) => ({
      frame: { left: [1, 0, 0], up: [0, 1, 0], forward: [0, 0, 1] }, center: [0, 0, 0], scale,
      evidence: { lateralSymmetry: 1, upScore: 1, forwardScore: 1, upByConvention: false, forwardByConvention: false },
    }) as unknown as NonNullable<LatentPoseReuse['frame']>;
    cache.set('k', { ...reuse(1, 60), frame: frame(2) });
    cache.set('k', reuse(2));
    expect(cache.get('k')!.frame!.scale).toBe(2);
    cache.set('k', { ...reuse(3), frame: frame(3) });
    expect(cache.get('k')!.frame!.scale).toBe(3);
    expect(cache.get('k')!.autoRig).toBeDefined();
  });

  it('keeps the facing hint its entry was read with', () => {
    const cache = new PoseReuseCache();
    cache.set('k', { ...reuse(1, 60), facingHint: [0, 0, -1] });
    expect(cache.get('k')!.facingHint).toEqual([0, 0, -1]);
    cache.set('s', reuse(1));
    expect(cache.get('s')).not.toHaveProperty('facingHint');
  });

  it('keeps an auto-rig when a later reading of the same mesh (a prepare of the latent alone) brings μ alone', () => {
    const cache = new PoseReuseCache();
    cache.set('k', reuse(1, 60));
    cache.set('k', reuse(2));
    const entry = cache.get('k')!;
    expect(entry.mu[0]).toBe(2);
    expect(entry.autoRig?.objects[0].indices.length).toBe(10);
  });
});
