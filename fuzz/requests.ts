/**
 * Valid requests for the fuzzer to start from, small enough that tens of thousands encode in a blink.
 * A mesh here is a tetrahedron (4 vertices, 4 triangles): the smallest closed mesh the validator accepts. The requests
 * that bring a rig (correctives, correctives.preview, pose.apply with the mesh's own rig) carry the Mixamo template
 * skeleton, which those requests need, and two influences per vertex.
 */
import { buildMixamoSkeleton, MIXAMO_JOINTS, type MixamoJointName } from '../sidecar/skeleton/mixamoTemplate.js';
import type { Vec3 } from '../sidecar/types.js';

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

/**
 * The Mixamo template's 23 joints in a T-pose about 1.9 units tall: Z up, facing −Y (Blender's front), the character's
 * left at +X.
 */
export function templateSkeleton(): Draft {
  const side = (x: number, z: number, y = 0): Vec3 => [x, y, z];
  const heads: Record<MixamoJointName, Vec3> = {
    Hips: side(0, 1), Spine: side(0, 1.1), Spine1: side(0, 1.2), Spine2: side(0, 1.3), Neck: side(0, 1.5), Head: side(0, 1.6),
    HeadTop_End: side(0, 1.85),
    LeftShoulder: side(0.05, 1.45), LeftArm: side(0.18, 1.45), LeftForeArm: side(0.45, 1.45), LeftHand: side(0.7, 1.45),
    RightShoulder: side(-0.05, 1.45), RightArm: side(-0.18, 1.45), RightForeArm: side(-0.45, 1.45), RightHand: side(-0.7, 1.45),
    LeftUpLeg: side(0.1, 0.95), LeftLeg: side(0.1, 0.5), LeftFoot: side(0.1, 0.08), LeftToeBase: side(0.1, 0.02, -0.12),
    RightUpLeg: side(-0.1, 0.95), RightLeg: side(-0.1, 0.5), RightFoot: side(-0.1, 0.08), RightToeBase: side(-0.1, 0.02, -0.12),
  };
  const ends = { LeftHand: side(0.85, 1.45), RightHand: side(-0.85, 1.45), LeftToeBase: side(0.1, 0.02, -0.2), RightToeBase: side(-0.1, 0.02, -0.2) };
  return buildMixamoSkeleton(heads, ends, { up: [0, 0, 1], forward: [0, -1, 0] }, false) as unknown as Draft;
}

/** The weights of a tetrahedron named `name` as an ObjectWeights: two influences per vertex (Hips 0.75, Spine 0.25). */
export function tetrahedronWeights(name = 'Body'): Draft {
  return { name, influences: 2, indices: Uint16Array.of(0, 1, 0, 1, 0, 1, 0, 1), weights: Float32Array.of(0.75, 0.25, 0.75, 0.25, 0.75, 0.25, 0.75, 0.25) };
}

export function poseListRequest(id: string): Draft {
  return { kind: 'pose.list', id };
}

/** pose.apply on a mesh without a rig (the sidecar auto-rigs it). */
export function poseApplyRequest(id: string): Draft {
  return { kind: 'pose.apply', id, objects: [tetrahedron()], pose: 'elbowBentLf', strength: 1, strategy: 'mean' };
}

/** pose.apply with the mesh's own rig: the template skeleton and its weights. */
export function poseApplyWithRigRequest(id: string): Draft {
  return { ...poseApplyRequest(id), pose: 'kneeBentRt', strategy: 'nearest', skeleton: templateSkeleton(), weights: [tetrahedronWeights()] };
}

export function posePrepareRequest(id: string): Draft {
  return { kind: 'pose.prepare', id, objects: [tetrahedron()], autoRig: true };
}

export function correctivesRequest(id: string): Draft {
  return {
    kind: 'correctives', id, objects: [tetrahedron()], skeleton: templateSkeleton(), weights: [tetrahedronWeights()],
    options: { method: 'dualQuaternion', poses: ['elbowBend'] },
  };
}

/** One 3×3 rotation per template joint (#J*9, row-major), every one the identity: the armature at rest. */
export function restRotations(): Float32Array {
  const rotations = new Float32Array(MIXAMO_JOINTS.length * 9);
  for (let j = 0; j < MIXAMO_JOINTS.length; j++) rotations.set([1, 0, 0, 0, 1, 0, 0, 0, 1], j * 9);
  return rotations;
}

/**
 * correctives fitted to two posed examples: a separate mesh at the left elbow bent 90° about X, and a sculpted shape
 * key of the character's own object (shapeKey: its vertices, one for one).
 */
export function correctivesWithExamplesRequest(id: string): Draft {
  const bent = restRotations();
  bent.set([1, 0, 0, 0, 0, -1, 0, 1, 0], MIXAMO_JOINTS.indexOf('LeftForeArm') * 9);
  const sculpted = tetrahedron();
  sculpted.positions = Float32Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0, 0.1, 0.1, 1.1);
  return {
    ...correctivesRequest(id),
    examples: [
      { name: 'elbow', rotations: bent, objects: [tetrahedron('Scan')] },
      { name: 'sculpt', rotations: restRotations(), objects: [sculpted], shapeKey: true },
    ],
  };
}

/** correctives.preview with the armature at rest. */
export function correctivesPreviewRequest(id: string): Draft {
  const rotations = restRotations();
  return {
    kind: 'correctives.preview', id, objects: [tetrahedron()], skeleton: templateSkeleton(), weights: [tetrahedronWeights()], rotations,
    options: { method: 'dualQuaternion' },
  };
}

/**
 * A valid request of each kind (pose.apply without a rig and with the mesh's own, correctives without and with posed
 * examples), by a name that is its kind but for 'pose.apply+rig' and 'correctives+examples'.
 */
export const BASE_REQUESTS = {
  hello: helloRequest,
  rig: rigRequest,
  skin: skinRequest,
  cancel: cancelRequest,
  'pose.list': poseListRequest,
  'pose.apply': poseApplyRequest,
  'pose.apply+rig': poseApplyWithRigRequest,
  'pose.prepare': posePrepareRequest,
  correctives: correctivesRequest,
  'correctives+examples': correctivesWithExamplesRequest,
  'correctives.preview': correctivesPreviewRequest,
} as const satisfies Record<string, (id: string) => Draft>;

/** A name of BASE_REQUESTS. */
export type BaseName = keyof typeof BASE_REQUESTS;

/** The names of BASE_REQUESTS, in its order. */
export const BASE_NAMES = Object.keys(BASE_REQUESTS) as BaseName[];

/** The names of the bases whose request has `field` (objects: those that send a mesh, and start a job), in BASE_NAMES order. */
export function basesSending(field: string): BaseName[] {
  return BASE_NAMES.filter((name) => Object.hasOwn(BASE_REQUESTS[name]('x'), field));
}

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
