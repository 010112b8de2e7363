/**
 * Valid requests for the fuzzer to start from, small enough that tens of thousands encode in a blink.
 * A mesh here is a tetrahedron (4 vertices, 4 triangles): the smallest closed mesh the validator accepts.
 */

/** A message before encoding: plain objects, arrays, typed arrays (sent as bin), strings, numbers. */
export type Draft = Record<string, unknown>;

/** Positions (#V*3 f32) and triangles (#T*3 u32) of a unit tetrahedron, outward-facing. */
export function tetrahedron(name = 'Body'): Draft {
  return {
    name,
    positions: Float32Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1),
    triangles: Uint32Array.of(0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3),
  };
}

/** A 3-joint chain Hips → Spine → Head along +Z, parents before children. */
export function smallSkeleton(): Draft {
  const joint = (name: string, parent: number, z0: number, z1: number) => ({ name, parent, head: [0, 0, z0], tail: [0, 0, z1], roll: 0 });
  return { joints: [joint('Hips', -1, 0, 0.3), joint('Spine', 0, 0.3, 0.6), joint('Head', 1, 0.6, 1)] };
}

export const HELLO_CLIENT = 'autorig-fuzz';

export function helloRequest(id: string): Draft {
  return { kind: 'hello', id, protocol: 1, client: HELLO_CLIENT };
}

export function rigRequest(id: string): Draft {
  return { kind: 'rig', id, objects: [tetrahedron()], options: { prefix: true, method: 'geometric' } };
}

/** A skin request with one locked group (object 0, bone Hips, one weight per vertex). */
export function skinRequest(id: string): Draft {
  return {
    kind: 'skin',
    id,
    objects: [tetrahedron()],
    skeleton: smallSkeleton(),
    locked: [{ object: 0, bone: 'Hips', weights: Float32Array.of(0.5, 0.25, 1, 0) }],
    options: { prefix: false },
  };
}

export function cancelRequest(id: string): Draft {
  return { kind: 'cancel', id };
}

/** The valid request of each kind. */
export const BASE_REQUESTS: Record<'hello' | 'rig' | 'skin' | 'cancel', (id: string) => Draft> = {
  hello: helloRequest,
  rig: rigRequest,
  skin: skinRequest,
  cancel: cancelRequest,
};

/** A deep copy of a draft (typed arrays copied too), so a mutation never touches a shared base. */
export function cloneDraft<T>(value: T): T {
  if (ArrayBuffer.isView(value)) return (value as unknown as { slice(): T }).slice();
  if (Array.isArray(value)) return value.map((item) => cloneDraft(item)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = cloneDraft(item);
    return out as T;
  }
  return value;
}
