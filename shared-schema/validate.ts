/**
 * Run-time validation of decoded protocol messages, driven by protocol.json.
 *
 * protocol.json describes every message with a small type language; `conform` interprets it:
 *   str, uint, int, float, bool, map, nil      scalars (float: finite; uint/int: safe integers)
 *   vec3                                      a list of 3 finite numbers
 *   bin:DT:W                                  msgpack bin of little-endian DT (f32, u32, u16), #elements a multiple of W;
 *                                             W = k reads the sibling field `influences`
 *   list:T                                    a list of T
 *   A|B                                       either
 *   Name                                      a named type from `types`: a map of fields, `field?` optional
 * Bins come back as typed arrays that own their memory (copied out of the message: aligned, and transferable to a
 * worker without detaching the message buffer). Non-finite floats are BAD_NUMBER wherever they appear.
 *
 * On top of the type language, validateRequest checks what the types cannot say: triangle indices < #V (BAD_INDEX),
 * the limits (TOO_LARGE), the protocol version, the skeleton's parent order, the locked groups, a pose.apply's
 * pose, strength, strategy and rig, and a correctives request's method, poses, weights and examples (BAD_REQUEST,
 * BAD_ARRAY, BAD_INDEX, EMPTY_MESH, TOO_LARGE before any job starts; sidecar/correctives/bakeCorrectives.ts
 * checkCorrectiveInput; whether an example's rotations are rotations is the job's to say, as for a preview).
 */
import protocol from './protocol.json' with { type: 'json' };
import { AutoRigError } from '../sidecar/errors.js';
import { checkCorrectiveInput, checkWeightsFit, type CorrectiveExample, type CorrectiveOptions } from '../sidecar/correctives/bakeCorrectives.js';
import { keyPoses } from '../sidecar/correctives/keyPoses.js';
import { POSE_STRATEGIES, type PoseStrategy } from '../sidecar/pose/poseLibrary.js';
import { isPoseName, MAX_POSE_STRENGTH } from '../sidecar/pose/poseVocabulary.js';
import { checkTemplateJoints } from '../sidecar/pose/templateRig.js';
import type { LockedGroup, MeshPart, PartWeights, RigOptions, Skeleton, Vec3 } from '../sidecar/types.js';
import { describeValue, isPlainMap } from './codec.js';

export type Limits = typeof protocol.limits;

/** The limits of protocol.json (a server may lower maxMessageBytes, e.g. in tests). */
export const protocolLimits: Readonly<Limits> = Object.freeze({ ...protocol.limits });
export const PROTOCOL_VERSION: number = protocol.protocolVersion;

type FieldMap = Record<string, string>;
const namedTypes = protocol.types as Record<string, FieldMap>;
const requestFields = protocol.requests as Record<string, FieldMap>;
const eventFields = protocol.events as Record<string, FieldMap>;
const resultFields = protocol.results as Record<string, FieldMap>;

/** The request kinds a client may send, in protocol.json's order. */
export const REQUEST_KINDS: readonly string[] = Object.keys(requestFields);

export interface HelloRequest {
  kind: 'hello';
  id: string;
  protocol: number;
  client?: string;
}
export interface RigRequest {
  kind: 'rig';
  id: string;
  objects: MeshPart[];
  options: RigOptions;
}
export interface SkinRequest {
  kind: 'skin';
  id: string;
  objects: MeshPart[];
  skeleton: Skeleton;
  locked: LockedGroup[];
  options: RigOptions;
}
export interface CancelRequest {
  kind: 'cancel';
  id: string;
}
export interface PoseListRequest {
  kind: 'pose.list';
  id: string;
}
/** pose.apply with its defaults filled in: strength 1, strategy 'mean'. */
export interface PoseApplyRequest {
  kind: 'pose.apply';
  id: string;
  objects: MeshPart[];
  pose: string;
  strength: number;
  strategy: PoseStrategy;
  /** the mesh's own rig when the client sent skeleton + weights (weights as PartWeights per object); absent: auto-rig */
  rig?: { skeleton: Skeleton; objects: PartWeights[] };
  /** the direction the character faces, client space, when sent (not read with a rig: its sides decide) */
  facing?: Vec3;
}
/** pose.prepare with its default filled in: autoRig true. */
export interface PosePrepareRequest {
  kind: 'pose.prepare';
  id: string;
  objects: MeshPart[];
  /** false: the latent and frame only (the applies will send the mesh's own rig); default: no skeleton sent */
  autoRig: boolean;
  /** the skeleton the applies will send (its sides set the facing), checked as theirs */
  skeleton?: Skeleton;
  /** the applies' facing, when sent */
  facing?: Vec3;
}
/** A correctives request's posed example, its rotations #J*9 as sent. */
export type CorrectivesExample = CorrectiveExample & { rotations: Float32Array };
/**
 * correctives: the static weights per object (same order as objects), the checked options, and the posed examples to
 * fit to (empty when none were sent).
 */
export interface CorrectivesRequest {
  kind: 'correctives';
  id: string;
  objects: MeshPart[];
  skeleton: Skeleton;
  weights: PartWeights[];
  options: CorrectiveOptions;
  examples: CorrectivesExample[];
}
/** correctives.preview: a correctives request plus the armature's current pose, rotations #J*9. */
export interface CorrectivesPreviewRequest {
  kind: 'correctives.preview';
  id: string;
  objects: MeshPart[];
  skeleton: Skeleton;
  weights: PartWeights[];
  rotations: Float32Array;
  options: CorrectiveOptions;
}
export type ProtocolRequest =
  | HelloRequest | RigRequest | SkinRequest | CancelRequest | PoseListRequest | PoseApplyRequest | PosePrepareRequest
  | CorrectivesRequest | CorrectivesPreviewRequest;

/** How strictly `conform` reads: requests tolerate unknown fields (newer clients), the server's own output does not. */
interface Reading {
  strict: boolean;
  limits: Limits;
}

/**
 * The id of a decoded message when it can be read (a string within maxIdLength), else null:
 * error replies carry it so that the client knows which request failed.
 */
export function readMessageId(message: unknown, limits: Limits = protocolLimits): string | null {
  if (!isPlainMap(message) || !Object.hasOwn(message, 'id')) return null;
  const id = message.id;
  return typeof id === 'string' && id.length > 0 && utf8Length(id) <= limits.maxIdLength ? id : null;
}

/**
 * Validate a decoded client message (codec.decodeMessage's output) and convert it to a typed request.
 * Throws AutoRigError with the protocol's code: BAD_REQUEST, BAD_ARRAY, BAD_INDEX, BAD_NUMBER, TOO_LARGE,
 * UNKNOWN_KIND, UNSUPPORTED_VERSION, EMPTY_MESH, BAD_SKELETON.
 */
export function validateRequest(message: Record<string, unknown>, limits: Limits = protocolLimits): ProtocolRequest {
  const kind = readKind(message);
  if (!Object.hasOwn(requestFields, kind)) {
    const reserved = (protocol.reserved as string[]).includes(kind);
    throw new AutoRigError('UNKNOWN_KIND', reserved ? `'${kind}' is reserved for a later protocol version` : `unknown message kind ${quoteClientText(kind)}`);
  }
  const reading: Reading = { strict: false, limits };
  const fields = conformFields(requestFields[kind], message, '', reading);
  switch (kind) {
    case 'hello':
      return checkHello({ kind, ...fields } as unknown as HelloRequest);
    case 'rig': {
      const objects = checkMesh(fields.objects as MeshPart[], limits);
      return { kind, id: fields.id as string, objects, options: (fields.options ?? {}) as RigOptions };
    }
    case 'skin': {
      const objects = checkMesh(fields.objects as MeshPart[], limits);
      const skeleton = checkSkeleton(fields.skeleton as Skeleton);
      const locked = checkLocked((fields.locked ?? []) as LockedGroup[], objects, skeleton);
      return { kind, id: fields.id as string, objects, skeleton, locked, options: (fields.options ?? {}) as RigOptions };
    }
    case 'cancel':
    case 'pose.list':
      return { kind, id: fields.id as string };
    case 'pose.apply': {
      const objects = checkMesh(fields.objects as MeshPart[], limits);
      const choice = checkPoseChoice(fields);
      const rig = checkGivenRig(fields, objects);
      const facing = fields.facing as Vec3 | undefined;
      return { kind, id: fields.id as string, objects, ...choice, ...(rig ? { rig } : {}), ...(facing ? { facing } : {}) };
    }
    case 'pose.prepare': {
      const objects = checkMesh(fields.objects as MeshPart[], limits);
      const skeleton = fields.skeleton === undefined ? undefined : checkSkeleton(fields.skeleton as Skeleton);
      if (skeleton) checkTemplateJoints(skeleton);
      const autoRig = (fields.autoRig ?? skeleton === undefined) as boolean;
      if (autoRig && skeleton) {
        throw new AutoRigError('BAD_REQUEST', 'pose.prepare: a skeleton is the one the applies will send; autoRig must then be false');
      }
      const facing = fields.facing as Vec3 | undefined;
      return { kind, id: fields.id as string, objects, autoRig, ...(skeleton ? { skeleton } : {}), ...(facing ? { facing } : {}) };
    }
    case 'correctives':
    case 'correctives.preview': {
      const objects = checkMesh(fields.objects as MeshPart[], limits);
      const skeleton = checkSkeleton(fields.skeleton as Skeleton);
      const weights = fields.weights as PartWeights[];
      const options = (fields.options ?? {}) as CorrectiveOptions;
      const { poses } = checkCorrectiveInput(objects, skeleton, weights, options);
      const request = { id: fields.id as string, objects, skeleton, weights, options };
      if (kind === 'correctives') {
        // a skeleton without the template's joints or a frame has no key poses: BAD_SKELETON before a job starts
        keyPoses(skeleton, poses);
        const examples = checkExamples((fields.examples ?? []) as CorrectivesExample[], objects, skeleton, limits);
        return { kind, ...request, examples };
      }
      const rotations = fields.rotations as Float32Array;
      if (rotations.length !== skeleton.joints.length * 9) {
        throw new AutoRigError('BAD_ARRAY', `rotations has ${rotations.length} numbers; ${skeleton.joints.length} joints need ${skeleton.joints.length * 9}`);
      }
      return { kind, ...request, rotations };
    }
    default:
      throw new AutoRigError('INTERNAL', `protocol.json names request '${kind}' but the sidecar does not handle it`);
  }
}

/**
 * Validate a message the server sends (progress, result, error) strictly against protocol.json: no missing and no
 * extra fields. A result's fields are the event's (`id`, `request`) plus results[request]'s.
 * Accepts typed arrays or bin Buffers for bins; returns the fields with bins as typed arrays.
 * Used by the server before it sends a result (a pipeline bug becomes INTERNAL, not a malformed reply) and by tests.
 */
export function validateServerMessage(message: unknown, limits: Limits = protocolLimits): Record<string, unknown> {
  if (!isPlainMap(message)) throw new AutoRigError('BAD_MESSAGE', `a message must be a map, got ${describeValue(message)}`);
  const kind = readKind(message);
  if (!Object.hasOwn(eventFields, kind)) throw new AutoRigError('UNKNOWN_KIND', `'${kind}' is not a server message`);
  let fields: FieldMap = eventFields[kind];
  if (kind === 'result') {
    const request = message.request;
    if (typeof request !== 'string' || !Object.hasOwn(resultFields, request)) {
      throw new AutoRigError('BAD_REQUEST', `result.request must name a request with a result, got ${describeValue(request)}`);
    }
    fields = { ...fields, ...resultFields[request] };
  }
  return { kind, ...conformFields(fields, message, '', { strict: true, limits }, ['kind']) };
}

/** The `kind` field: a string, or BAD_REQUEST. */
function readKind(message: Record<string, unknown>): string {
  if (!Object.hasOwn(message, 'kind')) throw new AutoRigError('BAD_REQUEST', 'the message has no `kind`');
  const kind = message.kind;
  if (typeof kind !== 'string') throw new AutoRigError('BAD_REQUEST', `\`kind\` must be a str, got ${describeValue(kind)}`);
  return kind;
}

/**
 * Read a map against a field map (`name: spec`, `name?: spec` optional; an optional field sent as nil counts as absent).
 * Returns the converted fields. `allowed` names extra keys the caller handles itself (e.g. `kind`).
 */
function conformFields(
  fields: FieldMap,
  value: Record<string, unknown>,
  path: string,
  reading: Reading,
  allowed: string[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const known = new Set(allowed);
  for (const [rawKey, spec] of Object.entries(fields)) {
    const optional = rawKey.endsWith('?');
    const key = optional ? rawKey.slice(0, -1) : rawKey;
    known.add(key);
    const fieldPath = path ? `${path}.${key}` : key;
    const present = Object.hasOwn(value, key) && !(optional && value[key] === null);
    if (!present) {
      if (optional) continue;
      throw new AutoRigError('BAD_REQUEST', `${fieldPath} is missing`);
    }
    out[key] = conform(spec, value[key], fieldPath, key, value, reading);
  }
  if (reading.strict) {
    for (const key of Object.keys(value)) {
      if (!known.has(key)) throw new AutoRigError('BAD_REQUEST', `${path ? path + '.' : ''}${key} is not a field of this message`);
    }
  }
  return out;
}

/**
 * Read one value against a spec of the type language. `key` is the field's name (names, ids and lists have limits
 * by name), `siblings` the map holding it (bin:…:k reads `influences` there). Returns the converted value.
 */
function conform(spec: string, value: unknown, path: string, key: string, siblings: Record<string, unknown>, reading: Reading): unknown {
  if (spec.includes('|')) return conformEither(spec.split('|'), value, path, key, siblings, reading);
  if (spec.startsWith('list:')) return conformList(spec.slice(5), value, path, key, reading);
  if (spec.startsWith('bin:')) return conformBin(spec, value, path, siblings);
  switch (spec) {
    case 'str':
      return conformString(value, path, key, reading.limits);
    case 'uint':
    case 'int':
      return conformInteger(value, path, spec === 'uint');
    case 'float':
      return conformFloat(value, path);
    case 'bool':
      if (typeof value !== 'boolean') throw wrongType(path, 'bool', value);
      return value;
    case 'nil':
      if (value !== null && value !== undefined) throw wrongType(path, 'nil', value);
      return null;
    case 'map':
      if (!isPlainMap(value)) throw wrongType(path, 'map', value);
      return value;
    case 'vec3':
      return conformVec3(value, path);
  }
  if (Object.hasOwn(namedTypes, spec)) {
    if (!isPlainMap(value)) throw wrongType(path, `map (${spec})`, value);
    return conformFields(namedTypes[spec], value, path, reading);
  }
  throw new AutoRigError('INTERNAL', `protocol.json uses an unknown type '${spec}' at ${path}`);
}

/** A|B: the first alternative that reads; else BAD_REQUEST naming all of them. */
function conformEither(specs: string[], value: unknown, path: string, key: string, siblings: Record<string, unknown>, reading: Reading): unknown {
  for (const spec of specs) {
    try {
      return conform(spec, value, path, key, siblings, reading);
    } catch (err) {
      if (!(err instanceof AutoRigError)) throw err;
    }
  }
  throw wrongType(path, specs.join(' or '), value);
}

/** Maximum list lengths by field name; beyond them the message is TOO_LARGE (checked before reading the elements). */
function listLimit(key: string, limits: Limits): number {
  switch (key) {
    case 'objects':
      return limits.maxObjects;
    case 'joints':
      return limits.maxJoints;
    case 'locked':
      return limits.maxObjects * limits.maxJoints;
    case 'examples':
      return limits.maxExamples;
    default:
      return Number.POSITIVE_INFINITY;
  }
}

function conformList(itemSpec: string, value: unknown, path: string, key: string, reading: Reading): unknown[] {
  if (!Array.isArray(value)) throw wrongType(path, `list of ${itemSpec}`, value);
  const limit = listLimit(key, reading.limits);
  if (value.length > limit) throw new AutoRigError('TOO_LARGE', `${path} has ${value.length} entries; the limit is ${limit}`);
  return value.map((item, i) => conform(itemSpec, item, `${path}[${i}]`, '', {}, reading));
}

/** Maximum string lengths (UTF-8 bytes, as Blender counts them) by field name. */
function stringLimit(key: string, limits: Limits): number {
  switch (key) {
    case 'id':
      return limits.maxIdLength;
    case 'name':
    case 'bone':
      return limits.maxNameLength;
    default:
      return Number.POSITIVE_INFINITY;
  }
}

function conformString(value: unknown, path: string, key: string, limits: Limits): string {
  if (typeof value !== 'string') throw wrongType(path, 'str', value);
  const limit = stringLimit(key, limits);
  if (key === 'id' && value.length === 0) throw new AutoRigError('BAD_REQUEST', `${path} must not be empty`);
  if (utf8Length(value) > limit) throw new AutoRigError('BAD_REQUEST', `${path} is longer than ${limit} bytes`);
  return value;
}

function conformInteger(value: unknown, path: string, unsigned: boolean): number {
  // msgpackr decodes (u)int64 beyond 2^53 as bigint; such values are out of range for every field anyway.
  const n = typeof value === 'bigint' && value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
  const want = unsigned ? 'uint' : 'int';
  if (typeof n !== 'number' && typeof n !== 'bigint') throw wrongType(path, want, value);
  if (typeof n === 'bigint' || !Number.isSafeInteger(n) || (unsigned && n < 0)) {
    throw new AutoRigError('BAD_REQUEST', `${path} must be a${unsigned ? ' non-negative' : 'n'} integer, got ${String(value)}`);
  }
  return n;
}

function conformFloat(value: unknown, path: string): number {
  if (typeof value !== 'number') throw wrongType(path, 'float', value);
  if (!Number.isFinite(value)) throw new AutoRigError('BAD_NUMBER', `${path} is ${value}`);
  return value;
}

function conformVec3(value: unknown, path: string): [number, number, number] {
  if (!Array.isArray(value) || value.length !== 3) throw wrongType(path, 'vec3 (a list of 3 numbers)', value);
  return [conformFloat(value[0], `${path}[0]`), conformFloat(value[1], `${path}[1]`), conformFloat(value[2], `${path}[2]`)];
}

type BinArray = Float32Array | Uint32Array | Uint16Array;
const binTypes = {
  f32: Float32Array,
  u32: Uint32Array,
  u16: Uint16Array,
} as const;

/**
 * bin:DT:W → a typed array of DT that owns its memory. Accepts msgpack bin (a Buffer: its bytes are copied, which also
 * aligns them) or, for the server's own output, a typed array of exactly DT (returned as is).
 * BAD_ARRAY when the byte length is not a whole number of W-tuples; BAD_NUMBER for non-finite f32.
 */
function conformBin(spec: string, value: unknown, path: string, siblings: Record<string, unknown>): BinArray {
  const [, dtype, widthSpec] = spec.split(':');
  const ArrayType = binTypes[dtype as keyof typeof binTypes];
  if (!ArrayType || widthSpec === undefined) throw new AutoRigError('INTERNAL', `protocol.json uses an unknown array type '${spec}'`);
  const width = widthSpec === 'k' ? readInfluences(siblings, path) : Number(widthSpec);
  let array: BinArray;
  if (value instanceof ArrayType) {
    array = value;
  } else if (value instanceof Uint8Array && !(value instanceof Uint8ClampedArray)) {
    const tupleBytes = ArrayType.BYTES_PER_ELEMENT * width;
    if (value.byteLength % tupleBytes !== 0) {
      throw new AutoRigError('BAD_ARRAY', `${path} has ${value.byteLength} bytes, not a multiple of ${tupleBytes} (${width} × ${dtype})`);
    }
    array = new ArrayType(value.byteLength / ArrayType.BYTES_PER_ELEMENT);
    new Uint8Array(array.buffer).set(value);
  } else {
    throw wrongType(path, `bin of ${dtype}`, value);
  }
  if (array.length % width !== 0) throw new AutoRigError('BAD_ARRAY', `${path} has ${array.length} values, not a multiple of ${width}`);
  if (array instanceof Float32Array) {
    for (let i = 0; i < array.length; i++) {
      if (!Number.isFinite(array[i])) throw new AutoRigError('BAD_NUMBER', `${path}[${i}] is ${array[i]}`);
    }
  }
  return array;
}

/** k of bin:…:k: the sibling `influences`, a positive integer. */
function readInfluences(siblings: Record<string, unknown>, path: string): number {
  const k = siblings.influences;
  if (typeof k !== 'number' || !Number.isSafeInteger(k) || k < 1) {
    throw new AutoRigError('BAD_REQUEST', `${path} needs a positive integer \`influences\` beside it`);
  }
  return k;
}

function wrongType(path: string, want: string, value: unknown): AutoRigError {
  return new AutoRigError('BAD_REQUEST', `${path} must be ${want}, got ${describeValue(value)}`);
}

/** Longest piece of a client's own text echoed in an error message (a kind has no length limit of its own). */
const ECHO_LIMIT = 64;

/** A client's text for an error message: cut to ECHO_LIMIT characters and quoted, so control characters show as escapes. */
function quoteClientText(text: string): string {
  return JSON.stringify(text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}…` : text);
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** hello: the client must speak our protocol version. */
function checkHello(request: HelloRequest): HelloRequest {
  if (request.protocol !== PROTOCOL_VERSION) {
    throw new AutoRigError('UNSUPPORTED_VERSION', `the client speaks protocol ${request.protocol}; this sidecar speaks ${PROTOCOL_VERSION}`);
  }
  return request;
}

/**
 * The vertices and triangles of `parts` together, held to limits.maxVerticesTotal / maxTrianglesTotal (TOO_LARGE; the
 * message names the counts, then `what` they include). → { vertices, triangles }
 */
function checkTotals(parts: MeshPart[], limits: Limits, what: string): { vertices: number; triangles: number } {
  let vertices = 0;
  let triangles = 0;
  for (const part of parts) {
    vertices += part.positions.length / 3;
    triangles += part.triangles.length / 3;
  }
  if (vertices > limits.maxVerticesTotal) throw new AutoRigError('TOO_LARGE', `${vertices} vertices${what}; the limit is ${limits.maxVerticesTotal}`);
  if (triangles > limits.maxTrianglesTotal) throw new AutoRigError('TOO_LARGE', `${triangles} triangles${what}; the limit is ${limits.maxTrianglesTotal}`);
  return { vertices, triangles };
}

/**
 * The mesh of a rig/skin request: triangle indices within each part (BAD_INDEX), totals within the limits (TOO_LARGE),
 * and something to rig at all (EMPTY_MESH).
 */
function checkMesh(objects: MeshPart[], limits: Limits): MeshPart[] {
  const { vertices, triangles } = checkTotals(objects, limits, '');
  if (objects.length === 0) throw new AutoRigError('EMPTY_MESH', 'no objects were sent');
  if (vertices < limits.minVerticesTotal || triangles === 0) {
    throw new AutoRigError('EMPTY_MESH', `${vertices} vertices and ${triangles} triangles are too few to rig`);
  }
  objects.forEach((part, p) => checkTriangleIndices(part, `objects[${p}] (${part.name})`));
  return objects;
}

/**
 * A correctives request's examples: each one's rotations #J*9 (BAD_ARRAY), objects with triangles (EMPTY_MESH) whose
 * indices name their own vertices (BAD_INDEX), a shape key's objects the character's vertex for vertex (BAD_ARRAY),
 * and their vertices and triangles within the totals together with the character's objects (TOO_LARGE). The list's length is held to maxExamples as it is read (listLimit).
 */
function checkExamples(examples: CorrectivesExample[], objects: MeshPart[], skeleton: Skeleton, limits: Limits): CorrectivesExample[] {
  checkTotals([...objects, ...examples.flatMap((example) => example.objects)], limits, " with the examples'");
  const want = skeleton.joints.length * 9;
  examples.forEach((example, e) => {
    const label = `examples[${e}]`;
    if (example.rotations.length !== want) {
      throw new AutoRigError('BAD_ARRAY', `${label}.rotations has ${example.rotations.length} numbers; ${skeleton.joints.length} joints need ${want}`);
    }
    if (!example.objects.some((part) => part.triangles.length > 0)) throw new AutoRigError('EMPTY_MESH', `${label} has no triangles`);
    example.objects.forEach((part, p) => checkTriangleIndices(part, `${label}.objects[${p}] (${part.name})`));
    // a sculpted shape key is the character's own objects, vertex for vertex (notes.correctives.examples.shapeKey)
    if (example.shapeKey) {
      if (example.objects.length !== objects.length) {
        throw new AutoRigError('BAD_ARRAY', `${label} is a shape key with ${example.objects.length} objects; the character has ${objects.length}`);
      }
      example.objects.forEach((part, p) => {
        if (part.positions.length !== objects[p].positions.length) {
          throw new AutoRigError('BAD_ARRAY', `${label}.objects[${p}] is a shape key of ${part.positions.length / 3} vertices; objects[${p}] has ${objects[p].positions.length / 3}`);
        }
      });
    }
  });
  return examples;
}

/** Every triangle index of a part must name one of its vertices. */
function checkTriangleIndices(part: MeshPart, label: string): void {
  const vertexCount = part.positions.length / 3;
  const tris = part.triangles;
  for (let i = 0; i < tris.length; i++) {
    if (tris[i] >= vertexCount) {
      throw new AutoRigError('BAD_INDEX', `${label}: triangle ${Math.floor(i / 3)} uses vertex ${tris[i]}, but the object has ${vertexCount} vertices`);
    }
  }
}

/**
 * A supplied skeleton: at least one joint, unique names, each parent -1 or an earlier joint.
 * A parent outside [-1, #J) is BAD_INDEX; one that does not precede its child (a cycle or a wrong order) is BAD_SKELETON.
 */
function checkSkeleton(skeleton: Skeleton): Skeleton {
  const joints = skeleton.joints;
  if (joints.length === 0) throw new AutoRigError('BAD_SKELETON', 'the skeleton has no joints');
  const names = new Set<string>();
  joints.forEach((joint, j) => {
    if (joint.parent < -1 || joint.parent >= joints.length) {
      throw new AutoRigError('BAD_INDEX', `skeleton.joints[${j}] (${joint.name}) has parent ${joint.parent}; there are ${joints.length} joints`);
    }
    if (joint.parent >= j) {
      throw new AutoRigError('BAD_SKELETON', `skeleton.joints[${j}] (${joint.name}): its parent ${joint.parent} must come before it`);
    }
    if (names.has(joint.name)) throw new AutoRigError('BAD_SKELETON', `two joints are named '${joint.name}'`);
    names.add(joint.name);
  });
  return skeleton;
}

/**
 * A pose.apply's choice: a pose of the vocabulary, a strength in [0, MAX_POSE_STRENGTH] (default 1), a strategy of
 * POSE_STRATEGIES (default 'mean'); anything else is BAD_REQUEST. Whether the installed library holds the pose is the
 * job's to say (MODEL_MISSING).
 */
function checkPoseChoice(fields: Record<string, unknown>): { pose: string; strength: number; strategy: PoseStrategy } {
  const pose = fields.pose as string;
  if (!isPoseName(pose)) throw new AutoRigError('BAD_REQUEST', `pose: unknown pose ${quoteClientText(pose)}; pose.list names the poses`);
  const strength = (fields.strength ?? 1) as number;
  if (strength < 0 || strength > MAX_POSE_STRENGTH) {
    throw new AutoRigError('BAD_REQUEST', `strength must be from 0 to ${MAX_POSE_STRENGTH}, got ${strength}`);
  }
  const strategy = (fields.strategy ?? 'mean') as string;
  if (!(POSE_STRATEGIES as readonly string[]).includes(strategy)) {
    throw new AutoRigError('BAD_REQUEST', `strategy must be one of ${POSE_STRATEGIES.join(', ')}, got ${quoteClientText(strategy)}`);
  }
  return { pose, strength, strategy: strategy as PoseStrategy };
}

/**
 * The rig a pose.apply may bring: skeleton and weights together (one without the other is BAD_REQUEST), the skeleton
 * well ordered, holding every Mixamo template joint (BAD_SKELETON), the weights fitting the objects as for correctives.
 * Returns it as applyLatentPose's rig option, or null when the client sent neither (the sidecar auto-rigs).
 */
function checkGivenRig(fields: Record<string, unknown>, objects: MeshPart[]): { skeleton: Skeleton; objects: PartWeights[] } | null {
  const hasSkeleton = fields.skeleton !== undefined, hasWeights = fields.weights !== undefined;
  if (!hasSkeleton && !hasWeights) return null;
  if (!hasSkeleton || !hasWeights) {
    throw new AutoRigError('BAD_REQUEST', `pose.apply: ${hasSkeleton ? 'skeleton without weights' : 'weights without a skeleton'}; send both (the mesh's own rig) or neither (auto-rig)`);
  }
  const skeleton = checkSkeleton(fields.skeleton as Skeleton);
  checkTemplateJoints(skeleton);
  const weights = fields.weights as PartWeights[];
  checkWeightsFit(objects, weights, skeleton.joints.length);
  return { skeleton, objects: weights };
}

/** Locked groups: an existing object (BAD_INDEX), one weight per vertex (BAD_ARRAY) in [0, 1], a bone of the skeleton, no repeats. */
function checkLocked(locked: LockedGroup[], objects: MeshPart[], skeleton: Skeleton): LockedGroup[] {
  const bones = new Set(skeleton.joints.map((joint) => joint.name));
  const seen = new Set<string>();
  locked.forEach((group, g) => {
    const label = `locked[${g}]`;
    if (group.object >= objects.length) {
      throw new AutoRigError('BAD_INDEX', `${label}.object is ${group.object}; there are ${objects.length} objects`);
    }
    const vertexCount = objects[group.object].positions.length / 3;
    if (group.weights.length !== vertexCount) {
      throw new AutoRigError('BAD_ARRAY', `${label}.weights has ${group.weights.length} values; object ${group.object} has ${vertexCount} vertices`);
    }
    for (let i = 0; i < group.weights.length; i++) {
      const w = group.weights[i];
      if (w < 0 || w > 1) throw new AutoRigError('BAD_REQUEST', `${label}.weights[${i}] is ${w}, outside [0, 1]`);
    }
    if (!bones.has(group.bone)) throw new AutoRigError('BAD_REQUEST', `${label}.bone '${group.bone}' is not a joint of the skeleton`);
    const pair = `${group.object}\u0000${group.bone}`;
    if (seen.has(pair)) throw new AutoRigError('BAD_REQUEST', `${label}: object ${group.object} locks '${group.bone}' twice`);
    seen.add(pair);
  });
  return locked;
}
