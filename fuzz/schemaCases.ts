/**
 * Schema-level cases: well-formed msgpack maps that break one rule of protocol.json, each with the error code the
 * sidecar must answer — wrong types, missing fields, wrong byte lengths, indices out of range, NaN/Inf, unknown
 * kinds, limits, empty meshes, bad skeletons and locked groups. The field slots come from protocol.json itself, so a
 * new field is fuzzed without touching this file. A few cases are valid requests with odd geometry that run the
 * pipeline to its end ('terminal': a result or any code but INTERNAL).
 */
import { encodeMessage } from '../shared-schema/codec.js';
import protocol from '../shared-schema/protocol.json' with { type: 'json' };
import type { ErrorCode } from '../sidecar/errors.js';
import { acceptedJob, cancelFrame, singlePhase, splitBytes, type ExpectedReply, type FuzzCase } from './cases.js';
import type { SeededRandom } from './random.js';
import { BASE_NAMES, BASE_REQUESTS, basesSending, cloneDraft, tetrahedron, tetrahedronWeights, type BaseName, type Draft } from './requests.js';
import { binaryFrame } from './wsWire.js';

type FieldMap = Record<string, string>;
const namedTypes = protocol.types as Record<string, FieldMap>;
const requestFields = protocol.requests as Record<string, FieldMap>;
const limits = protocol.limits;

/** A path into a draft: map keys and list indices. */
type Path = Array<string | number>;

/** One place in a request that has a type of its own. */
interface Slot {
  path: Path;
  spec: string;
  optional: boolean;
}

/** The bases that send a mesh (objects): every request that starts a job. */
const MESH_BASES = basesSending('objects');
/** The kinds whose valid request starts a job (answered when it ends, or CANCELLED). */
const JOB_KINDS: ReadonlySet<unknown> = new Set(MESH_BASES.map((name) => BASE_REQUESTS[name]('x').kind));
/** The bases that send a skeleton. */
const SKELETON_BASES = basesSending('skeleton');
/** The bases that send weights per object (ObjectWeights). */
const WEIGHTS_BASES = basesSending('weights');
/** The bases whose valid request, with every optional field nil or extra fields added, is still valid. */
const TOLERANT_BASES: BaseName[] = ['hello', 'rig', 'skin', 'pose.list', 'pose.apply', 'pose.prepare', 'correctives', 'correctives+examples', 'correctives.preview'];

/** A mutated request and the one reply it must get ('valid': it must be accepted). */
interface Mutation {
  draft: Draft;
  expect: ExpectedReply | 'valid';
}

/** Every typed place of `value` read against `fields` (recursing into named types and lists of them). */
function collectSlots(fields: FieldMap, value: Draft, path: Path, out: Slot[]): Slot[] {
  for (const [rawKey, spec] of Object.entries(fields)) {
    const optional = rawKey.endsWith('?');
    const key = optional ? rawKey.slice(0, -1) : rawKey;
    if (!Object.hasOwn(value, key)) continue;
    const here = [...path, key];
    out.push({ path: here, spec, optional });
    const child = value[key];
    if (spec.startsWith('list:') && Array.isArray(child)) {
      const itemSpec = spec.slice(5);
      child.forEach((item, i) => {
        out.push({ path: [...here, i], spec: itemSpec, optional: false });
        if (Object.hasOwn(namedTypes, itemSpec)) collectSlots(namedTypes[itemSpec], item as Draft, [...here, i], out);
      });
    } else if (Object.hasOwn(namedTypes, spec)) {
      collectSlots(namedTypes[spec], child as Draft, here, out);
    }
  }
  return out;
}

function slotsOf(draft: Draft): Slot[] {
  return collectSlots(requestFields[draft.kind as string], draft, [], []);
}

function getAt(draft: Draft, path: Path): unknown {
  let value: unknown = draft;
  for (const step of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, unknown>)[step];
  }
  return value;
}

function setAt(draft: Draft, path: Path, value: unknown): void {
  const parent = getAt(draft, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path[path.length - 1]] = value;
}

function deleteAt(draft: Draft, path: Path): void {
  const parent = getAt(draft, path.slice(0, -1)) as Record<string | number, unknown>;
  delete parent[path[path.length - 1]];
}

/** True when every field of a named type is optional (then any map conforms to it). */
function allOptional(spec: string): boolean {
  return Object.hasOwn(namedTypes, spec) && Object.keys(namedTypes[spec]).every((key) => key.endsWith('?'));
}

/** Values of the wrong type for `spec` (nil only when the slot is required: an optional nil counts as absent). */
function wrongValues(slot: Slot): unknown[] {
  const { spec } = slot;
  const bin = Buffer.from([1, 2, 3]);
  const hugeUnsigned = 2n ** 64n - 1n;
  const hugeNegative = -(2n ** 63n);
  let values: unknown[];
  if (spec === 'str') values = [7, -3, 2.5, true, bin, ['x'], { a: 1 }];
  else if (spec === 'uint') values = [-3, 2.5, true, 'x', bin, [1], { a: 1 }, hugeUnsigned, hugeNegative];
  else if (spec === 'int') values = [2.5, true, 'x', bin, [1], { a: 1 }, hugeUnsigned, hugeNegative];
  // Any number is a float, even one msgpack carries as uint64.
  else if (spec === 'float') values = [true, 'x', bin, [1.5], { a: 1 }];
  else if (spec === 'bool') values = [0, 1, 'true', 2.5, bin, [true], { a: 1 }];
  else if (spec === 'vec3') values = [[1, 2], [1, 2, 3, 4], [], 'x', 5, [1, 'a', 3], [true, 0, 0], [[0], 0, 0], bin, { a: 1 }];
  else if (spec.startsWith('bin:')) values = ['x', 5, [0, 1, 2], { a: 1 }, true, 2.5];
  else if (spec.startsWith('list:')) values = ['x', 5, { a: 1 }, bin, true];
  else values = ['x', 5, [1], bin, true, ...(allOptional(spec) ? [] : [{ a: 1 }])];
  return slot.optional ? values : [...values, null];
}

function error(code: ErrorCode, id: string | null): ExpectedReply {
  return { kind: 'error', code, id };
}

function pickBase(rng: SeededRandom, id: string, names: readonly BaseName[] = BASE_NAMES): Draft {
  return cloneDraft(BASE_REQUESTS[rng.pick(names)](id));
}

// ---- the mutations, one idea each -------------------------------------------------------------------------------

function wrongType(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id);
  const slot = rng.pick(slotsOf(draft));
  setAt(draft, slot.path, rng.pick(wrongValues(slot)));
  return { draft, expect: error('BAD_REQUEST', slot.path[0] === 'id' ? null : id) };
}

function missingField(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id);
  const required = slotsOf(draft).filter((slot) => !slot.optional && typeof slot.path[slot.path.length - 1] === 'string');
  const slot = rng.pick(required);
  deleteAt(draft, slot.path);
  return { draft, expect: error('BAD_REQUEST', slot.path[0] === 'id' ? null : id) };
}

/**
 * A bin whose byte length is not a whole number of elements (or tuples), a weight list of the wrong length, weights per
 * object that do not fit the objects, or rotations for another number of joints.
 */
function badByteLength(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, MESH_BASES);
  const choices = ['positions', 'triangles'];
  if (draft.kind === 'skin') choices.push('locked', 'lockedCount');
  if (draft.weights) choices.push('weightBytes', 'weightCount', 'weightEntries');
  if (draft.kind === 'correctives.preview') choices.push('rotationBytes', 'rotationCount');
  const which = rng.pick(choices);
  const object = (draft.objects as Draft[])[0];
  if (which === 'lockedCount') {
    const group = (draft.locked as Draft[])[0];
    const count = rng.pick([0, 1, 3, 5, 64]);
    group.weights = new Float32Array(count).fill(0.5);
  } else if (which === 'locked') {
    (draft.locked as Draft[])[0].weights = Buffer.alloc(4 * rng.range(0, 8) + rng.range(1, 3));
  } else if (which === 'weightBytes') {
    // bytes that are not whole u16 / f32 pairs (two influences)
    const entry = (draft.weights as Draft[])[0];
    const field = rng.pick(['indices', 'weights']);
    const pair = field === 'indices' ? 4 : 8;
    entry[field] = Buffer.alloc(pair * rng.range(0, 6) + rng.range(1, pair - 1));
  } else if (which === 'weightCount') {
    // whole pairs, but not one per vertex
    const entry = (draft.weights as Draft[])[0];
    const pairs = rng.pick([0, 1, 3, 5, 40]);
    if (rng.chance(0.5)) entry.indices = new Uint16Array(2 * pairs);
    else entry.weights = new Float32Array(2 * pairs).fill(0.5);
  } else if (which === 'weightEntries') {
    draft.weights = rng.chance(0.5) ? [] : [tetrahedronWeights(), tetrahedronWeights('Other')];
  } else if (which === 'rotationBytes') {
    draft.rotations = Buffer.alloc(36 * rng.range(0, 30) + rng.range(1, 35));
  } else if (which === 'rotationCount') {
    const joints = ((draft.skeleton as Draft).joints as Draft[]).length;
    draft.rotations = new Float32Array(9 * rng.pick([0, 1, joints - 1, joints + 1, 256]));
  } else {
    object[which] = rng.bytes(12 * rng.range(0, 8) + rng.range(1, 11));
  }
  return { draft, expect: error('BAD_ARRAY', id) };
}

function indexOutOfRange(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, MESH_BASES);
  const choices = ['triangle'];
  if (draft.skeleton) choices.push('parent');
  if (draft.kind === 'skin') choices.push('lockedObject');
  if (draft.weights) choices.push('weightJoint');
  const which = rng.pick(choices);
  if (which === 'triangle') {
    const triangles = (draft.objects as Draft[])[0].triangles as Uint32Array;
    triangles[rng.int(triangles.length)] = rng.pick([4, 5, 1000, 0x7fffffff, 0xffffffff, 4 + rng.int(1 << 20)]);
  } else if (which === 'parent') {
    const joints = (draft.skeleton as Draft).joints as Draft[];
    joints[rng.int(joints.length)].parent = rng.pick([joints.length, joints.length + 1, 255, 2 ** 31, -2, -100, -(2 ** 31)]);
  } else if (which === 'weightJoint') {
    // a weighted influence on a joint the skeleton does not have (a zero weight's index is never read)
    const joints = ((draft.skeleton as Draft).joints as Draft[]).length;
    const entry = (draft.weights as Draft[])[0];
    (entry.indices as Uint16Array)[2 * rng.int(4)] = rng.pick([joints, joints + 1, 1000, 65535]);
  } else {
    (draft.locked as Draft[])[0].object = rng.pick([1, 2, 64, 2 ** 32 - 1]);
  }
  return { draft, expect: error('BAD_INDEX', id) };
}

/** NaN or ±Inf: in a float32 bin (several bit patterns, signalling NaN included) or a float64 field. */
function nonFinite(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, MESH_BASES);
  const choices = ['positions'];
  if (draft.skeleton) choices.push('head', 'tail', 'roll');
  if (draft.kind === 'skin') choices.push('locked');
  if (draft.weights) choices.push('weights');
  if (draft.rotations) choices.push('rotations');
  if (draft.examples) choices.push('exampleRotations', 'examplePositions');
  if (draft.strength !== undefined) choices.push('strength');
  const where = rng.pick(choices);
  const bits = rng.pick([0x7fc00000, 0x7f800001, 0x7fbfffff, 0xffc00000, 0xffffffff, 0x7f800000, 0xff800000]);
  const poison = (array: Float32Array) => new DataView(array.buffer).setUint32(4 * rng.int(array.length), bits, true);
  const bad = rng.pick([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
  if (where === 'positions') poison((draft.objects as Draft[])[0].positions as Float32Array);
  else if (where === 'locked') poison((draft.locked as Draft[])[0].weights as Float32Array);
  else if (where === 'weights') poison((draft.weights as Draft[])[0].weights as Float32Array);
  else if (where === 'rotations') poison(draft.rotations as Float32Array);
  else if (where === 'exampleRotations') poison(rng.pick(draft.examples as Draft[]).rotations as Float32Array);
  else if (where === 'examplePositions') poison((rng.pick(draft.examples as Draft[]).objects as Draft[])[0].positions as Float32Array);
  else if (where === 'strength') draft.strength = bad;
  else {
    const joint = rng.pick((draft.skeleton as Draft).joints as Draft[]);
    if (where === 'roll') joint.roll = bad;
    else (joint[where] as number[])[rng.int(3)] = bad;
  }
  return { draft, expect: error('BAD_NUMBER', id) };
}

/** Kinds that are not requests: server events, reserved names, near misses, prototype names, random text. */
function unknownKind(rng: SeededRandom, id: string): Mutation {
  const named = [...(protocol.reserved as string[]), 'progress', 'result', 'error', 'Hello', 'RIG', 'hello ', '', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'rig\u0000', 'ṙig'];
  let kind = rng.chance(0.6) ? rng.pick(named) : randomText(rng, rng.range(1, 80));
  if (Object.hasOwn(requestFields, kind)) kind = 'dance';
  return { draft: { ...pickBase(rng, id), kind }, expect: error('UNKNOWN_KIND', id) };
}

function badKindType(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id);
  if (rng.chance(0.3)) delete draft.kind;
  else draft.kind = rng.pick([1, null, true, ['hello'], { kind: 'hello' }, Buffer.from('hello'), 2.5]);
  return { draft, expect: error('BAD_REQUEST', id) };
}

function protocolVersion(rng: SeededRandom, id: string): Mutation {
  const draft = cloneDraft(BASE_REQUESTS.hello(id));
  const version = rng.pick([0, 2, 3, 255, 65536, 2 ** 32, Number.MAX_SAFE_INTEGER, -1, -(2 ** 31)]);
  draft.protocol = version;
  return { draft, expect: error(version < 0 ? 'BAD_REQUEST' : 'UNSUPPORTED_VERSION', id) };
}

/** Ids at and past maxIdLength (UTF-8 bytes, multi-byte characters too), and the empty id (in place of the case's). */
function idLimits(rng: SeededRandom, _id: string): Mutation {
  const unit = rng.pick(['a', 'é', '漢', '😀']);
  const unitBytes = Buffer.byteLength(unit);
  const fits = Math.floor(limits.maxIdLength / unitBytes);
  const count = rng.pick([fits, fits + 1, fits + rng.range(2, 200), 0]);
  const newId = unit.repeat(count);
  const draft = pickBase(rng, newId, TOLERANT_BASES.filter((name) => name !== 'pose.list'));
  const ok = newId.length > 0 && Buffer.byteLength(newId) <= limits.maxIdLength;
  return { draft, expect: ok ? 'valid' : error('BAD_REQUEST', null) };
}

/** Object, joint, bone and weights-entry names at and past maxNameLength. */
function nameLimits(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, MESH_BASES);
  const unit = rng.pick(['n', 'ü', '字']);
  const fits = Math.floor(limits.maxNameLength / Buffer.byteLength(unit));
  const name = unit.repeat(rng.pick([fits + 1, fits + rng.range(2, 300)]));
  const choices = ['object'];
  if (draft.skeleton) choices.push('joint');
  if (draft.kind === 'skin') choices.push('bone');
  if (draft.weights) choices.push('weights');
  const where = rng.pick(choices);
  if (where === 'object') (draft.objects as Draft[])[0].name = name;
  else if (where === 'joint') rng.pick((draft.skeleton as Draft).joints as Draft[]).name = name;
  else if (where === 'weights') (draft.weights as Draft[])[0].name = name;
  else (draft.locked as Draft[])[0].bone = name;
  return { draft, expect: error('BAD_REQUEST', id) };
}

function tooMany(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, MESH_BASES);
  const what = rng.pick(draft.skeleton ? ['objects', 'joints'] : ['objects']);
  if (what === 'objects') {
    draft.objects = Array.from({ length: limits.maxObjects + rng.range(1, 20) }, (_, i) => tetrahedron(`Part${i}`));
  } else {
    const joints = ((draft.skeleton as Draft).joints as Draft[]).slice();
    while (joints.length <= limits.maxJoints + rng.int(10)) joints.push({ ...cloneDraft(joints[2]), name: `J${joints.length}`, parent: joints.length - 1 });
    (draft.skeleton as Draft).joints = joints;
  }
  return { draft, expect: error('TOO_LARGE', id) };
}

/** More vertices than maxVerticesTotal: a 24 MB message, so this one is rare. */
function tooManyVertices(_rng: SeededRandom, id: string): Mutation {
  const draft = cloneDraft(BASE_REQUESTS.rig(id));
  (draft.objects as Draft[])[0].positions = new Float32Array((limits.maxVerticesTotal + 1) * 3);
  return { draft, expect: error('TOO_LARGE', id) };
}

function emptyMesh(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, MESH_BASES);
  const object = (draft.objects as Draft[])[0];
  switch (rng.pick(['noObjects', 'threeVertices', 'noTriangles', 'nothing'])) {
    case 'noObjects':
      draft.objects = [];
      if (draft.kind === 'skin') delete draft.locked;
      break;
    case 'threeVertices':
      object.positions = Float32Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0);
      object.triangles = Uint32Array.of(0, 1, 2);
      break;
    case 'noTriangles':
      object.triangles = new Uint32Array(0);
      break;
    default:
      object.positions = new Float32Array(0);
      object.triangles = new Uint32Array(0);
  }
  return { draft, expect: error('EMPTY_MESH', id) };
}

function badSkeleton(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, SKELETON_BASES);
  const joints = (draft.skeleton as Draft).joints as Draft[];
  switch (rng.pick(['noJoints', 'selfParent', 'forwardParent', 'duplicateName'])) {
    case 'noJoints':
      (draft.skeleton as Draft).joints = [];
      break;
    case 'selfParent': {
      const j = rng.int(joints.length);
      joints[j].parent = j;
      break;
    }
    case 'forwardParent':
      joints[rng.int(2)].parent = 2;
      break;
    default:
      joints[rng.range(1, 2)].name = joints[0].name;
  }
  return { draft, expect: error('BAD_SKELETON', id) };
}

function badLocked(rng: SeededRandom, id: string): Mutation {
  const draft = cloneDraft(BASE_REQUESTS.skin(id));
  const locked = draft.locked as Draft[];
  switch (rng.pick(['unknownBone', 'weightRange', 'duplicate'])) {
    case 'unknownBone':
      locked[0].bone = rng.pick(['Nope', 'hips', 'Hips ', 'mixamorig:Hips', '']);
      break;
    case 'weightRange':
      (locked[0].weights as Float32Array)[rng.int(4)] = rng.pick([-0.001, 1.001, 2, -1e30, 3e38]);
      break;
    default:
      locked.push(cloneDraft(locked[0]));
  }
  return { draft, expect: error('BAD_REQUEST', id) };
}

/** Unknown extra fields (newer clients): tolerated, so the request is valid. */
function extraFields(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, TOLERANT_BASES);
  const extras = rng.range(1, 6);
  for (let i = 0; i < extras; i++) draft[rng.pick(['x', 'future', 'priority', 'meta', `f${i}`, 'kind2'])] = rng.pick([1, 'a', null, [1, 2], { b: [] }, Buffer.alloc(3)]);
  if (draft.objects && rng.chance(0.5)) (draft.objects as Draft[])[0].uv = Buffer.alloc(32);
  return { draft, expect: 'valid' };
}

/** Optional fields sent as nil count as absent. */
function nilOptional(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, TOLERANT_BASES);
  for (const slot of slotsOf(draft)) {
    const parent = getAt(draft, slot.path.slice(0, -1));
    // A slot inside an optional field already set to nil is gone with it.
    if (slot.optional && parent !== null && typeof parent === 'object' && rng.chance(0.7)) setAt(draft, slot.path, null);
  }
  return { draft, expect: 'valid' };
}

/** A pose.apply's choice out of the vocabulary or its ranges, or half of the mesh's own rig: BAD_REQUEST. */
function badPoseChoice(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, ['pose.apply', 'pose.apply+rig']);
  switch (rng.pick(draft.skeleton ? ['pose', 'strength', 'strategy', 'halfRig'] : ['pose', 'strength', 'strategy'])) {
    case 'pose':
      draft.pose = rng.pick(['', 'elbowbentlf', 'elbowBent', 'elbowBentLf ', 'moonwalk', 'elbowBentLf+', '+kneeBentRt', 'kneeBentRt+kneeBentRt+kneeBentLf', randomText(rng, 12)]);
      break;
    case 'strength':
      draft.strength = rng.pick([-0.001, -1, 1.5001, 2, 1e9, -1e300]);
      break;
    case 'strategy':
      draft.strategy = rng.pick(['', 'Mean', 'median', 'nearest ', randomText(rng, 8)]);
      break;
    default:
      delete draft[rng.pick(['skeleton', 'weights'])];
  }
  return { draft, expect: error('BAD_REQUEST', id) };
}

/** Weights per object that break a rule the schema alone cannot say: another object's name, a negative weight, no influences. */
function badWeights(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, WEIGHTS_BASES);
  const entry = (draft.weights as Draft[])[0];
  switch (rng.pick(['name', 'negative', 'influences'])) {
    case 'name':
      entry.name = rng.pick(['body', 'Body ', '', 'Other']);
      break;
    case 'negative':
      (entry.weights as Float32Array)[rng.int(8)] = rng.pick([-1e-6, -0.5, -3e38]);
      break;
    default:
      entry.influences = 0;
  }
  return { draft, expect: error('BAD_REQUEST', id) };
}

/** A corrective method or key pose the sidecar does not know, or an empty list of poses: BAD_REQUEST. */
function badCorrectiveOptions(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, ['correctives', 'correctives+examples', 'correctives.preview']);
  const options = draft.options as Draft;
  switch (rng.pick(['method', 'noPoses', 'pose'])) {
    case 'method':
      options.method = rng.pick(['', 'DualQuaternion', 'linear', 'poseDependent ', randomText(rng, 10)]);
      break;
    case 'noPoses':
      options.poses = [];
      break;
    default:
      options.poses = ['elbowBend', rng.pick(['elbowBent', 'kneeBendLf', '', 'ElbowBend', randomText(rng, 6)])];
  }
  return { draft, expect: error('BAD_REQUEST', id) };
}

/**
 * Posed examples that do not fit the request: rotations for another number of joints or a shape key of another object
 * count or vertex count (BAD_ARRAY), an example without triangles (EMPTY_MESH), a triangle naming a vertex the
 * example lacks (BAD_INDEX), more examples than maxExamples (TOO_LARGE).
 */
function badExamples(rng: SeededRandom, id: string): Mutation {
  const draft = cloneDraft(BASE_REQUESTS['correctives+examples'](id));
  const examples = draft.examples as Draft[];
  const [scan, sculpt] = examples;
  switch (rng.pick(['rotationCount', 'shapeKeyObjects', 'shapeKeyVertices', 'noTriangles', 'triangleIndex', 'tooMany'])) {
    case 'rotationCount':
      rng.pick(examples).rotations = new Float32Array(9 * rng.pick([0, 1, 22, 24, 256]));
      return { draft, expect: error('BAD_ARRAY', id) };
    case 'shapeKeyObjects': {
      const objects = rng.chance(0.5) ? [...(sculpt.objects as Draft[]), tetrahedron('Extra')] : [];
      sculpt.objects = objects;
      // none at all is an example without triangles
      return { draft, expect: error(objects.length === 0 ? 'EMPTY_MESH' : 'BAD_ARRAY', id) };
    }
    case 'shapeKeyVertices': {
      const object = (sculpt.objects as Draft[])[0];
      object.positions = Float32Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1);
      return { draft, expect: error('BAD_ARRAY', id) };
    }
    case 'noTriangles':
      (rng.pick(examples).objects as Draft[])[0].triangles = new Uint32Array(0);
      return { draft, expect: error('EMPTY_MESH', id) };
    case 'triangleIndex': {
      const triangles = (rng.pick([scan, sculpt]).objects as Draft[])[0].triangles as Uint32Array;
      triangles[rng.int(triangles.length)] = rng.pick([4, 7, 0xffffffff]);
      return { draft, expect: error('BAD_INDEX', id) };
    }
    default:
      draft.examples = Array.from({ length: limits.maxExamples + rng.range(1, 4) }, () => cloneDraft(scan));
      return { draft, expect: error('TOO_LARGE', id) };
  }
}

/**
 * A skeleton that lacks a joint of the Mixamo template (renamed away), where the request needs them all (Apply Latent
 * Pose's own rig, the correctives' key poses): BAD_SKELETON. correctives.preview poses any skeleton, so it is valid there.
 */
function notTemplateSkeleton(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, ['pose.apply+rig', 'correctives', 'correctives+examples', 'correctives.preview']);
  rng.pick((draft.skeleton as Draft).joints as Draft[]).name = rng.pick(['Elbow.L', 'joint_7', 'Root', 'mixamorig_Hips']);
  return { draft, expect: draft.kind === 'correctives.preview' ? 'valid' : error('BAD_SKELETON', id) };
}

// ---- jobs that run to their end ---------------------------------------------------------------------------------

/** Valid requests with strange geometry; the pipeline must end with a result or a coded error, never INTERNAL. */
function pipelineRun(rng: SeededRandom, id: string): Mutation {
  const draft = cloneDraft(BASE_REQUESTS.rig(id));
  const object = (draft.objects as Draft[])[0];
  const shape = rng.pick(['scaled', 'collapsed', 'collinear', 'soup', 'scattered', 'duplicateTriangles']);
  if (shape === 'scaled') {
    const s = rng.pick([1e-30, 1e-20, 1e20, 1e30, 3e38 / 2]);
    object.positions = (object.positions as Float32Array).map((x) => x * s);
  } else if (shape === 'collapsed') {
    object.positions = new Float32Array(12).fill(rng.pick([0, 1, -3e38]));
  } else if (shape === 'collinear') {
    object.positions = Float32Array.of(0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3);
  } else if (shape === 'soup') {
    const vertices = rng.range(4, 400);
    const positions = new Float32Array(vertices * 3);
    for (let i = 0; i < positions.length; i++) positions[i] = (rng.float() - 0.5) * (i % 3 === 2 ? 4 : 1);
    const triangles = new Uint32Array(3 * rng.range(1, 800));
    for (let i = 0; i < triangles.length; i++) triangles[i] = rng.int(vertices);
    object.positions = positions;
    object.triangles = triangles;
  } else if (shape === 'scattered') {
    draft.objects = Array.from({ length: rng.range(2, limits.maxObjects) }, (_, i) => {
      const part = tetrahedron(`P${i}`);
      const offset = [rng.float() * 2 - 1, rng.float() * 0.4, rng.float() * 2];
      part.positions = (part.positions as Float32Array).map((x, k) => x * 0.1 + offset[k % 3]);
      return part;
    });
  } else {
    object.triangles = new Uint32Array(3 * 500).map((_, i) => (object.triangles as Uint32Array)[i % 3]);
  }
  return { draft, expect: { kind: 'terminal', id } };
}

/** A method the pipeline does not know: accepted by the schema, refused by the job with BAD_REQUEST. */
function unknownMethod(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, ['rig', 'skin']);
  draft.options = { method: rng.pick(['telepathy', '', 'GEOMETRIC', 'geometric ', randomText(rng, 20)]) };
  return { draft, expect: error('BAD_REQUEST', id) };
}

/**
 * Valid pose, pose.prepare, correctives and pose.list requests run to their end on small or strange meshes: a result
 * or a coded error (NOT_HUMANOID, MODEL_MISSING…), never INTERNAL.
 */
function poseAndCorrectivesRun(rng: SeededRandom, id: string): Mutation {
  const draft = pickBase(rng, id, ['pose.list', 'pose.apply', 'pose.apply+rig', 'pose.prepare', 'correctives', 'correctives+examples', 'correctives.preview']);
  if (draft.objects) {
    const object = (draft.objects as Draft[])[0];
    // Moved somewhere of its own, so that what a pose job learns of this mesh (kept by its digest) is never the base
    // tetrahedron's: a later valid pose.prepare of that one must still start a job (the cases cancel it).
    const offset = [rng.float() + 0.5, rng.float(), rng.float()];
    object.positions = (object.positions as Float32Array).map((x, k) => x + offset[k % 3]);
    const shape = rng.pick(['tetrahedron', 'scaled', 'flat', 'soup']);
    if (shape === 'scaled') {
      const s = rng.pick([1e-30, 1e-6, 1e6, 1e30]);
      object.positions = (object.positions as Float32Array).map((x) => x * s);
    } else if (shape === 'flat') {
      object.positions = Float32Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0);
    } else if (shape === 'soup') {
      const positions = new Float32Array(12);
      for (let i = 0; i < positions.length; i++) positions[i] = (rng.float() - 0.5) * 2;
      object.positions = positions;
    }
  }
  if (draft.kind === 'pose.apply') {
    draft.pose = rng.pick(['elbowBentLf', 'kneeBentRt', 'spineTwistLf+elbowBentRt', 'headNodDown']);
    draft.strength = rng.pick([0, 0.5, 1, 1.5]);
    draft.strategy = rng.pick(['mean', 'nearest']);
  }
  if (draft.kind === 'pose.prepare') draft.autoRig = rng.chance(0.5);
  return { draft, expect: { kind: 'terminal', id } };
}

/** Random printable-and-not text of n UTF-16 units (lone surrogates included). */
export function randomText(rng: SeededRandom, n: number): string {
  let text = '';
  for (let i = 0; i < n; i++) {
    text += String.fromCharCode(rng.chance(0.8) ? rng.range(0x20, 0x7e) : rng.range(0, 0xffff));
  }
  return text;
}

/** The schema generators and how often each is drawn. */
const GENERATORS: ReadonlyArray<readonly [string, (rng: SeededRandom, id: string) => Mutation, number]> = [
  ['wrong-type', wrongType, 22],
  ['missing-field', missingField, 8],
  ['bad-byte-length', badByteLength, 9],
  ['index-out-of-range', indexOutOfRange, 9],
  ['non-finite', nonFinite, 10],
  ['unknown-kind', unknownKind, 6],
  ['bad-kind-type', badKindType, 2],
  ['protocol-version', protocolVersion, 4],
  ['id-limits', idLimits, 5],
  ['name-limits', nameLimits, 4],
  ['too-many', tooMany, 2],
  ['too-many-vertices', tooManyVertices, 0.03],
  ['empty-mesh', emptyMesh, 4],
  ['bad-skeleton', badSkeleton, 4],
  ['bad-locked', badLocked, 5],
  ['extra-fields', extraFields, 3],
  ['nil-optional', nilOptional, 2],
  ['pipeline-run', pipelineRun, 0.25],
  ['unknown-method', unknownMethod, 0.06],
  ['bad-pose-choice', badPoseChoice, 4],
  ['bad-weights', badWeights, 3],
  ['bad-corrective-options', badCorrectiveOptions, 3],
  ['not-template-skeleton', notTemplateSkeleton, 2],
  ['bad-examples', badExamples, 3],
  ['pose-and-correctives-run', poseAndCorrectivesRun, 0.25],
];

/** Mutations whose job runs to its end (or whose message is huge): kept out of bursts, which must stay quick. */
export const SLOW_MUTATIONS: ReadonlySet<string> = new Set(['pipeline-run', 'unknown-method', 'too-many-vertices', 'pose-and-correctives-run']);

/** One mutated request and its expected reply: the building block of schema cases (and of bursts). */
export function schemaMutation(rng: SeededRandom, id: string): SchemaMutation {
  const [name, generate] = rng.weighted(GENERATORS.map(([n, g, w]) => [[n, g] as const, w] as const));
  const { draft, expect } = generate(rng, id);
  return { name, payload: encodeMessage(draft), expect, kind: draft.kind, id: draft.id };
}

/** An encoded schema mutation: `kind` and `id` as the draft had them (id-limits and unknown-kind change them). */
export interface SchemaMutation {
  name: string;
  payload: Buffer;
  expect: ExpectedReply | 'valid';
  kind: unknown;
  id: unknown;
}

/**
 * The frames and replies of one mutation on a connection with no job running: a valid job is cancelled at once
 * (what matters here is that it was accepted: CANCELLED, or its result where it ended first), a valid hello answered
 * with its result.
 */
export function mutationExchange(mutation: SchemaMutation): { frames: Buffer[]; replies: ExpectedReply[] } {
  const frames = [binaryFrame(mutation.payload)];
  if (mutation.expect !== 'valid') return { frames, replies: [mutation.expect] };
  const acceptedId = mutation.id as string;
  if (JOB_KINDS.has(mutation.kind)) {
    frames.push(cancelFrame(acceptedId));
    return { frames, replies: [acceptedJob(acceptedId)] };
  }
  // pose.list: the installed library's poses, or its coded error where the sidecar has no models
  return { frames, replies: [{ kind: mutation.kind === 'pose.list' ? 'terminal' : 'result', id: acceptedId }] };
}

/** A schema-level case: one mutated request, sent whole or split across TCP segments. */
export function schemaCase(rng: SeededRandom, index: number): FuzzCase {
  const id = `s${index}`;
  const mutation = schemaMutation(rng, id);
  const { name } = mutation;
  const { frames, replies } = mutationExchange(mutation);
  const bytes = Buffer.concat(frames);
  const chunks = rng.chance(0.2) ? splitBytes(bytes, rng.range(2, 6), (n) => rng.int(n)) : [bytes];
  return singlePhase('schema', name, chunks, replies);
}
