"""Protocol messages: building requests and checking what the sidecar sends back (no bpy here).

Field specs come from the generated protocol module, so a request the add-on builds and a result it accepts follow
shared-schema/protocol.json. Results are checked in full (shapes, index ranges, finite numbers) before anything in
the scene changes, so a bad answer can never leave a half-applied rig.
"""

import math
import sys
import unicodedata
from array import array

from . import protocol

__all__ = [
    "ProtocolError", "AutoRigFailure", "check_spec", "check_message",
    "hello_request", "rig_request", "skin_request", "cancel_request", "pose_list_request", "pose_apply_request",
    "pose_prepare_request",
    "object_weights", "posed_example", "correctives_request", "correctives_preview_request",
    "POSE_STRATEGIES", "MAX_POSE_STRENGTH", "CORRECTIVE_METHODS",
    "le_bytes", "from_le_bytes", "mesh_object", "result_payload",
    "check_hello_result", "check_rig_result", "check_skin_result", "check_pose_list_result", "check_pose_apply_result",
    "check_pose_prepare_result",
    "check_correctives_result", "check_correctives_preview_result",
    "bone_name_problem", "check_bone_names", "display_text",
]

# Apply Latent Pose's choices, as the sidecar checks them (sidecar/pose/poseLibrary.ts POSE_STRATEGIES,
# poseVocabulary.ts MAX_POSE_STRENGTH; test/pose-protocol.test.ts checks that they agree).
POSE_STRATEGIES = ("mean", "nearest")
MAX_POSE_STRENGTH = 1.5

# Pose Correctives' pose-dependent deformations the sidecar offers (protocol.json notes.correctives: options.method),
# the sidecar's default first.
CORRECTIVE_METHODS = ("poseDependentDualQuaternion", "poseDependent", "dualQuaternion")

_BIN_ITEM_SIZE = {"f32": 4, "u32": 4, "u16": 2}
_ARRAY_CODE = {"f32": "f", "u32": "I", "u16": "H"}


class ProtocolError(ValueError):
    """A message does not follow the protocol; `path` says where (e.g. `objects[0].positions`)."""

    def __init__(self, path, message):
        super().__init__("%s: %s" % (path, message) if path else message)
        self.path = path


class AutoRigFailure(Exception):
    """A job failed with a protocol error code (from the sidecar, or found by the add-on before sending)."""

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


# --- spec checking -------------------------------------------------------------------------------------------------

def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value):
    # msgpack encoders may write an integral float as an int: both are numbers here.
    return (isinstance(value, (int, float))) and not isinstance(value, bool)


def check_spec(value, spec, path="", context=None, strict=False):
    """Check `value` against one field spec of protocol.json ("str", "uint", "bin:f32:3", "list:Joint", a type name...).

    context: the map holding the field (a "bin:u16:k" spec reads k from its sibling `influences`).
    strict: also refuse fields the spec does not name (used for the requests the add-on builds).
    Raises ProtocolError.
    """
    if "|" in spec:
        errors = []
        for alternative in spec.split("|"):
            try:
                check_spec(value, alternative, path, context, strict)
                return
            except ProtocolError as err:
                errors.append(str(err))
        raise ProtocolError(path, "expected %s (%s)" % (spec, "; ".join(errors)))
    if spec == "nil":
        if value is not None:
            raise ProtocolError(path, "expected nil")
    elif spec == "str":
        if not isinstance(value, str):
            raise ProtocolError(path, "expected a string, got %s" % type(value).__name__)
    elif spec == "bool":
        if not isinstance(value, bool):
            raise ProtocolError(path, "expected a bool, got %s" % type(value).__name__)
    elif spec == "int":
        if not _is_int(value):
            raise ProtocolError(path, "expected an integer, got %s" % type(value).__name__)
    elif spec == "uint":
        if not _is_int(value) or value < 0:
            raise ProtocolError(path, "expected a non-negative integer, got %r" % (value,))
    elif spec == "float":
        if not _is_number(value):
            raise ProtocolError(path, "expected a number, got %s" % type(value).__name__)
    elif spec == "vec3":
        if not isinstance(value, list) or len(value) != 3 or not all(_is_number(c) for c in value):
            raise ProtocolError(path, "expected a list of 3 numbers")
    elif spec == "map":
        if not isinstance(value, dict):
            raise ProtocolError(path, "expected a map")
    elif spec.startswith("bin:"):
        _check_bin(value, spec, path, context)
    elif spec.startswith("list:"):
        if not isinstance(value, list):
            raise ProtocolError(path, "expected a list, got %s" % type(value).__name__)
        item_spec = spec[len("list:"):]
        for i, item in enumerate(value):
            check_spec(item, item_spec, "%s[%d]" % (path, i), None, strict)
    elif spec in protocol.TYPES:
        check_fields(value, protocol.TYPES[spec], path, strict)
    else:
        raise ProtocolError(path, "unknown spec %r in the schema" % spec)


def _check_bin(value, spec, path, context):
    _, item_type, group = spec.split(":")
    if not isinstance(value, (bytes, bytearray)):
        raise ProtocolError(path, "expected bin (raw %s bytes), got %s" % (item_type, type(value).__name__))
    if group == "k":
        k = (context or {}).get("influences")
        if not _is_int(k) or k <= 0:
            raise ProtocolError(path, "no valid `influences` beside it")
    else:
        k = int(group)
    if len(value) % (_BIN_ITEM_SIZE[item_type] * k):
        raise ProtocolError(path, "%d bytes is not a whole number of %d x %s" % (len(value), k, item_type))


def check_fields(value, fields, path="", strict=False):
    """Check a map against {"name": spec, "optional?": spec}; `kind` is allowed on every message."""
    if not isinstance(value, dict):
        raise ProtocolError(path, "expected a map, got %s" % type(value).__name__)
    known = {"kind"}
    for key, spec in fields.items():
        optional = key.endswith("?")
        name = key[:-1] if optional else key
        known.add(name)
        field_path = "%s.%s" % (path, name) if path else name
        if name not in value:
            if not optional:
                raise ProtocolError(field_path, "missing")
            continue
        check_spec(value[name], spec, field_path, value, strict)
    if strict:
        extra = sorted(str(k) for k in value if k not in known)
        if extra:
            raise ProtocolError(path, "fields the schema does not name: %s" % ", ".join(extra))


def check_message(message, strict=False):
    """Check a whole message by its `kind` (request or event) against the schema."""
    if not isinstance(message, dict):
        raise ProtocolError("", "a message must be a map")
    kind = message.get("kind")
    if kind in protocol.REQUESTS:
        check_fields(message, protocol.REQUESTS[kind], "", strict)
    elif kind in protocol.EVENTS:
        check_fields(message, protocol.EVENTS[kind], "", strict=False)
    else:
        raise ProtocolError("kind", "unknown message kind %r" % (kind,))


# --- typed arrays ----------------------------------------------------------------------------------------------------

def le_bytes(values):
    """Raw little-endian bytes of an array.array (the wire format of typed arrays)."""
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def from_le_bytes(data, item_type):
    """array.array of `item_type` ("f32", "u32", "u16") from raw little-endian bytes."""
    values = array(_ARRAY_CODE[item_type])
    if values.itemsize != _BIN_ITEM_SIZE[item_type]:
        raise RuntimeError("this Python's array(%r) is not %d bytes" % (values.typecode, _BIN_ITEM_SIZE[item_type]))
    values.frombytes(data)
    if sys.byteorder == "big":
        values.byteswap()
    return values


# --- requests --------------------------------------------------------------------------------------------------------

def mesh_object(name, positions, triangles):
    """A MeshObject: positions array('f') #V*3 (world space), triangles array('I') #T*3."""
    return {"name": name, "positions": le_bytes(positions), "triangles": le_bytes(triangles)}


def hello_request(job_id, client):
    return {"kind": protocol.KIND_HELLO, "id": job_id, "protocol": protocol.PROTOCOL_VERSION, "client": client}


def _check_mesh_limits(objects):
    """Refuse locally what the sidecar would refuse anyway, with the same codes and no upload."""
    if not objects:
        raise AutoRigFailure(protocol.ERROR_BAD_REQUEST, "no mesh objects to send")
    if len(objects) > protocol.MAX_OBJECTS:
        raise AutoRigFailure(protocol.ERROR_TOO_LARGE, "%d objects; at most %d" % (len(objects), protocol.MAX_OBJECTS))
    vertices = sum(len(o["positions"]) // 12 for o in objects)
    triangles = sum(len(o["triangles"]) // 12 for o in objects)
    if vertices > protocol.MAX_VERTICES_TOTAL:
        raise AutoRigFailure(protocol.ERROR_TOO_LARGE,
                             "%d vertices; at most %d" % (vertices, protocol.MAX_VERTICES_TOTAL))
    if triangles > protocol.MAX_TRIANGLES_TOTAL:
        raise AutoRigFailure(protocol.ERROR_TOO_LARGE,
                             "%d triangles; at most %d" % (triangles, protocol.MAX_TRIANGLES_TOTAL))
    if vertices < protocol.MIN_VERTICES_TOTAL or triangles == 0:
        raise AutoRigFailure(protocol.ERROR_EMPTY_MESH, "the selection has no faces to rig")


def rig_request(job_id, objects, prefix=True, method=None, facing=None):
    """rig: objects are MeshObject maps (see mesh_object); method: "geometric", "learned", "hybrid" or None (the
    sidecar's default); facing: the direction (x, y, z) in world space the character faces, or None to let the
    sidecar read it from the shape."""
    _check_mesh_limits(objects)
    options = {"prefix": bool(prefix)}
    if method is not None:
        options["method"] = str(method)
    if facing is not None:
        options["facing"] = [float(x) for x in facing]
    return {"kind": protocol.KIND_RIG, "id": job_id, "objects": objects, "options": options}


def facing_warning(result, where="Adjust Last Operation (F9)"):
    """The warning to show after a rig or a pose whose facing the sidecar took from the file conventions (its shape
    did not tell), else None. result: a checked rig result (check_rig_result: its frame's forward) or pose result
    (check_pose_apply_result, check_pose_prepare_result: its forward); where: where the user sets Facing."""
    if result.get("facing") != "convention":
        return None
    forward = result["frame"]["forward"] if "frame" in result else result["forward"]
    axis = max(range(3), key=lambda a: abs(forward[a]))
    taken = ("-" if forward[axis] < 0 else "+") + "XYZ"[axis]
    # -Y is the convention for a Z-up mesh, the way Blender's scenes stand; other ups follow the file's (glTF: +Z)
    return ("AutoRig: the shape does not show which way the character faces; it was taken to face %s%s. If left "
            "and right are swapped, set Facing in %s to the other side"
            % (taken, " (Blender's front view)" if taken == "-Y" else "", where))


def skin_request(job_id, objects, joints, locked=(), prefix=True, facing=None):
    """skin: joints are Joint maps (name, parent, head, tail, roll) in world space; locked are LockedGroup maps;
    prefix None leaves it out of the options (the bones keep the names sent); facing: the direction (x, y, z) in world
    space the character faces, or None to let the sidecar read it (a Mixamo-named armature's sides decide anyway)."""
    _check_mesh_limits(objects)
    message = {"kind": protocol.KIND_SKIN, "id": job_id, "objects": objects, "skeleton": _skeleton_field(joints)}
    options = {}
    if prefix is not None:
        options["prefix"] = bool(prefix)
    if facing is not None:
        options["facing"] = _facing_field(facing)
    if options:
        message["options"] = options
    if locked:
        message["locked"] = list(locked)
    return message


def cancel_request(job_id):
    return {"kind": protocol.KIND_CANCEL, "id": job_id}


def pose_list_request(job_id):
    """pose.list: the poses the sidecar's installed pose library holds."""
    return {"kind": protocol.KIND_POSE_LIST, "id": job_id}


def pose_apply_request(job_id, objects, pose, strength=1.0, strategy="mean", joints=None, weights=None, facing=None):
    """pose.apply: objects are MeshObject maps (world space); pose a name from pose.list; strength 0..1.5;
    strategy "mean" or "nearest"; joints (Joint maps, world space, parents first) and weights (one ObjectWeights map
    per object, indices into joints), both or neither: the mesh's own Mixamo armature to pose it through (neither: the
    sidecar auto-rigs it); facing: the direction (x, y, z) in world space the character faces, or None to let the
    sidecar read it (not read with an armature: its left and right decide). Refuses locally (BAD_REQUEST) what the
    sidecar would refuse anyway."""
    _check_mesh_limits(objects)
    if (joints is None) != (weights is None):
        raise AutoRigFailure(protocol.ERROR_BAD_REQUEST, "the armature's bones and the mesh's weights go together")
    if not isinstance(pose, str) or not pose:
        raise AutoRigFailure(protocol.ERROR_BAD_REQUEST, "no pose chosen: refresh the pose list and pick one")
    strength = float(strength)
    if not (0.0 <= strength <= MAX_POSE_STRENGTH):
        raise AutoRigFailure(protocol.ERROR_BAD_REQUEST,
                             "strength must be from 0 to %s, got %s" % (MAX_POSE_STRENGTH, strength))
    if strategy not in POSE_STRATEGIES:
        raise AutoRigFailure(protocol.ERROR_BAD_REQUEST,
                             "strategy must be one of %s, got %r" % (", ".join(POSE_STRATEGIES), strategy))
    message = {"kind": protocol.KIND_POSE_APPLY, "id": job_id, "objects": objects, "pose": pose,
               "strength": strength, "strategy": strategy}
    if joints is not None:
        rig = _corrective_fields(objects, joints, weights, None, ())
        message["skeleton"] = rig["skeleton"]
        message["weights"] = rig["weights"]
    if facing is not None:
        message["facing"] = _facing_field(facing)
    return message


def pose_prepare_request(job_id, objects, joints=None, facing=None):
    """pose.prepare: objects are MeshObject maps (world space), as the pose.apply that will follow sends them;
    joints: the Joint maps of the mesh's own Mixamo armature when that apply will send it (only the latent is
    prepared then, in the armature's facing), else None (the auto-rig is prepared too); facing: as that apply's."""
    _check_mesh_limits(objects)
    message = {"kind": protocol.KIND_POSE_PREPARE, "id": job_id, "objects": objects, "autoRig": joints is None}
    if joints is not None:
        message["skeleton"] = _skeleton_field(joints)
    if facing is not None:
        message["facing"] = _facing_field(facing)
    return message


def _skeleton_field(joints):
    """Joint maps as the protocol's Skeleton, refused locally as the sidecar would: no bones (BAD_SKELETON), more than
    MAX_JOINTS (TOO_LARGE)."""
    if not joints:
        raise AutoRigFailure(protocol.ERROR_BAD_SKELETON, "the armature has no bones")
    if len(joints) > protocol.MAX_JOINTS:
        raise AutoRigFailure(protocol.ERROR_TOO_LARGE, "%d bones; at most %d" % (len(joints), protocol.MAX_JOINTS))
    return {"joints": list(joints)}


def _facing_field(facing):
    """A facing direction as the protocol's vec3: three finite numbers, not all zero (else BAD_REQUEST)."""
    values = [float(x) for x in facing]
    if len(values) != 3 or not _finite(values) or not any(values):
        raise AutoRigFailure(protocol.ERROR_BAD_REQUEST, "facing must be a direction (x, y, z), got %r" % (facing,))
    return values


def object_weights(name, indices, weights, influences):
    """An ObjectWeights map: indices array('H') #V*k (joint indices), weights array('f') #V*k, k influences."""
    return {"name": name, "influences": int(influences), "indices": le_bytes(indices), "weights": le_bytes(weights)}


def _corrective_fields(objects, joints, weights, method, poses):
    """The fields correctives and correctives.preview share, refused locally (BAD_REQUEST and the like) where the
    sidecar would refuse them anyway."""
    _check_mesh_limits(objects)
    skeleton = _skeleton_field(joints)
    if len(weights) != len(objects):
        raise AutoRigFailure(protocol.ERROR_BAD_REQUEST, "%d weight sets for %d objects" % (len(weights), len(objects)))
    if method is not None and method not in CORRECTIVE_METHODS:
        raise AutoRigFailure(protocol.ERROR_BAD_REQUEST,
                             "method must be one of %s, got %r" % (", ".join(CORRECTIVE_METHODS), method))
    fields = {"objects": objects, "skeleton": skeleton, "weights": list(weights)}
    options = {}
    if method is not None:
        options["method"] = method
    if poses:
        options["poses"] = [str(p) for p in poses]
    if options:
        fields["options"] = options
    return fields


def posed_example(name, rotations, objects, shape_key=False):
    """A PosedExample map: the character's surface in one pose as the artist wants it. rotations array('f') #J*9
    (the pose, correctives.preview's convention); objects MeshObject maps (world space, taken together as one
    surface; any topology). shape_key: the objects are instead the character's own, at rest with a shape key sculpted
    in that pose applied (same order and vertex counts as the request's objects); the sidecar poses them."""
    example = {"name": name, "rotations": le_bytes(rotations), "objects": list(objects)}
    if shape_key:
        example["shapeKey"] = True
    return example


def _check_examples(examples, objects, joint_count):
    """Refuse locally what the sidecar would refuse in correctives' examples, with its codes (protocol.json
    notes["correctives.examples"]): their count, each pose's length and numbers, a surface without triangles, a
    shape key's objects that are not the meshes' vertex for vertex, and their vertices and triangles counted with the
    objects' towards the totals."""
    if len(examples) > protocol.MAX_EXAMPLES:
        raise AutoRigFailure(protocol.ERROR_TOO_LARGE,
                             "%d pose examples; at most %d" % (len(examples), protocol.MAX_EXAMPLES))
    vertices = sum(len(o["positions"]) // 12 for o in objects)
    triangles = sum(len(o["triangles"]) // 12 for o in objects)
    for example in examples:
        rotations = example["rotations"]
        if len(rotations) != 9 * 4 * joint_count:
            raise AutoRigFailure(protocol.ERROR_BAD_ARRAY, "pose example '%s' has %d rotation values for %d joints"
                                 % (example["name"], len(rotations) // 4, joint_count))
        if not _finite(from_le_bytes(rotations, "f32")):
            raise AutoRigFailure(protocol.ERROR_BAD_NUMBER,
                                 "a bone rotation of pose example '%s' is NaN or infinite" % example["name"])
        example_triangles = sum(len(o["triangles"]) // 12 for o in example["objects"])
        if example_triangles == 0:
            raise AutoRigFailure(protocol.ERROR_EMPTY_MESH, "pose example '%s' has no faces" % example["name"])
        if example.get("shapeKey") and [len(o["positions"]) for o in example["objects"]] != [
                len(o["positions"]) for o in objects]:
            raise AutoRigFailure(protocol.ERROR_BAD_ARRAY, "shape key pose example '%s' does not match the meshes "
                                 "vertex for vertex" % example["name"])
        vertices += sum(len(o["positions"]) // 12 for o in example["objects"])
        triangles += example_triangles
    if vertices > protocol.MAX_VERTICES_TOTAL:
        raise AutoRigFailure(protocol.ERROR_TOO_LARGE, "%d vertices with the pose examples; at most %d"
                             % (vertices, protocol.MAX_VERTICES_TOTAL))
    if triangles > protocol.MAX_TRIANGLES_TOTAL:
        raise AutoRigFailure(protocol.ERROR_TOO_LARGE, "%d triangles with the pose examples; at most %d"
                             % (triangles, protocol.MAX_TRIANGLES_TOTAL))


def correctives_request(job_id, objects, joints, weights, method=None, poses=(), examples=()):
    """correctives: objects MeshObject maps (world space, the Basis), joints Joint maps (world space, parents
    first), weights one ObjectWeights map per object (indices into joints); method one of CORRECTIVE_METHODS or None
    (the sidecar's default); poses: pose names to bake (empty: all); examples: PosedExample maps (posed_example) the
    keys are fitted to (empty: no fit, no `examples` field: the request as without them)."""
    message = {"kind": protocol.KIND_CORRECTIVES, "id": job_id}
    message.update(_corrective_fields(objects, joints, weights, method, poses))
    if examples:
        _check_examples(examples, objects, len(joints))
        message["examples"] = list(examples)
    return message


def correctives_preview_request(job_id, objects, joints, weights, rotations, method=None):
    """correctives.preview: as correctives, plus rotations array('f') #J*9 (per joint its own rotation relative to
    rest, world axes, row-major)."""
    if len(rotations) != 9 * len(joints):
        raise AutoRigFailure(protocol.ERROR_BAD_REQUEST,
                             "%d rotation values for %d joints" % (len(rotations), len(joints)))
    if not _finite(rotations):
        raise AutoRigFailure(protocol.ERROR_BAD_NUMBER, "a bone rotation is NaN or infinite")
    message = {"kind": protocol.KIND_CORRECTIVES_PREVIEW, "id": job_id}
    message.update(_corrective_fields(objects, joints, weights, method, ()))
    message["rotations"] = le_bytes(rotations)
    return message


# --- results ---------------------------------------------------------------------------------------------------------

def result_payload(message):
    """The result fields of a `result` event: nested under `result` when the sidecar nests them, else the event itself."""
    nested = message.get("result")
    return nested if isinstance(nested, dict) else message


def check_hello_result(payload):
    check_fields(payload, protocol.RESULTS["hello"], "result")
    if payload["protocol"] != protocol.PROTOCOL_VERSION:
        raise AutoRigFailure(protocol.ERROR_UNSUPPORTED_VERSION,
                             "the sidecar speaks protocol %s, this add-on %d: update one of them"
                             % (payload["protocol"], protocol.PROTOCOL_VERSION))
    return payload


def _finite(values):
    """Whether every value is finite. For an array('f') (a mesh's coordinates) one C loop: float32 values never
    overflow a double's sum, so it is NaN or infinite exactly when one of them is."""
    if isinstance(values, array) and values.typecode == "f":
        return math.isfinite(sum(values))
    return all(math.isfinite(v) for v in values)


def _check_skeleton(skeleton, path):
    joints = skeleton["joints"]
    if not 1 <= len(joints) <= protocol.MAX_JOINTS:
        raise ProtocolError(path, "%d joints (1..%d allowed)" % (len(joints), protocol.MAX_JOINTS))
    for i, joint in enumerate(joints):
        jpath = "%s.joints[%d]" % (path, i)
        if not -1 <= joint["parent"] < i:
            raise ProtocolError(jpath + ".parent", "%d does not name an earlier joint" % joint["parent"])
        if not _finite(joint["head"]) or not _finite(joint["tail"]) or not math.isfinite(joint["roll"]):
            raise ProtocolError(jpath, "NaN or infinite coordinates")
        if not joint["name"]:
            raise ProtocolError(jpath + ".name", "empty")
    return joints


def _check_weights(objects, vertex_counts, joint_count, path):
    """Per object: (indices array('H') #V*k, weights array('f') #V*k, k), in the order of the objects sent."""
    if len(objects) != len(vertex_counts):
        raise ProtocolError(path, "%d objects in the result for %d sent" % (len(objects), len(vertex_counts)))
    checked = []
    for i, (obj, count) in enumerate(zip(objects, vertex_counts)):
        opath = "%s[%d]" % (path, i)
        k = obj["influences"]
        if not 1 <= k <= 16:
            raise ProtocolError(opath + ".influences", "%d influences per vertex" % k)
        if len(obj["indices"]) != count * k * 2 or len(obj["weights"]) != count * k * 4:
            raise ProtocolError(opath, "weights for %d vertices expected, got %d"
                                % (count, len(obj["weights"]) // (4 * k)))
        indices = from_le_bytes(obj["indices"], "u16")
        weights = from_le_bytes(obj["weights"], "f32")
        if indices and max(indices) >= joint_count:
            raise ProtocolError(opath + ".indices", "joint index %d out of range" % max(indices))
        # Weights lie in [0, 1] (rows sum to 1); the small slack allows f32 rounding. weights.py relies on it.
        if not _finite(weights) or (weights and (min(weights) < 0.0 or max(weights) > 1.0001)):
            raise ProtocolError(opath + ".weights", "weight outside [0, 1], NaN or infinite")
        checked.append((indices, weights, k))
    return checked


def check_rig_result(payload, vertex_counts):
    """A rig result checked in full. vertex_counts: #V of each object sent, in order.

    Returns {"joints": [Joint maps], "frame": Frame map, "facing": how the frame's forward was decided ("shape",
    "convention" or "option"), "weights": [(indices, weights, k)], "seconds": float}.
    """
    check_fields(payload, protocol.RESULTS["rig"], "result")
    joints = _check_skeleton(payload["skeleton"], "result.skeleton")
    check_bone_names([j["name"] for j in joints], "result.skeleton")
    frame = payload["frame"]
    if not all(_finite(frame[axis]) for axis in ("up", "forward", "left")):
        raise ProtocolError("result.frame", "NaN or infinite axis")
    weights = _check_weights(payload["objects"], vertex_counts, len(joints), "result.objects")
    return {"joints": joints, "frame": frame, "facing": payload["facing"], "weights": weights, "seconds": payload["seconds"]}


def check_skin_result(payload, vertex_counts, sent_joint_names):
    """A skin result checked in full; its skeleton must be the one sent (same bones, same order). Returns {"joints",
    "weights", "facing" (how the frame faces: FACING_SOURCES, 'rig' when the armature's sides said), "forward",
    "seconds"}."""
    check_fields(payload, protocol.RESULTS["skin"], "result")
    joints = _check_skeleton(payload["skeleton"], "result.skeleton")
    names = [j["name"] for j in joints]
    if names != list(sent_joint_names):
        raise ProtocolError("result.skeleton", "the bones differ from the skeleton sent")
    weights = _check_weights(payload["objects"], vertex_counts, len(joints), "result.objects")
    facing, forward = _facing_fields(payload)
    return {"joints": joints, "weights": weights, "facing": facing, "forward": forward, "seconds": payload["seconds"]}


def check_pose_list_result(payload):
    """A pose.list result checked in full: [{"name", "components", "experimental", "note"}], in the sidecar's order.

    Names become enum identifiers and shape key names: each must be a valid, unique name (bone_name_problem's rules).
    """
    check_fields(payload, protocol.RESULTS["pose.list"], "result")
    seen = set()
    poses = []
    for i, entry in enumerate(payload["poses"]):
        name = entry["name"]
        problem = bone_name_problem(name)
        if problem is None and name in seen:
            problem = "listed twice"
        if problem is not None:
            raise ProtocolError("result.poses[%d].name" % i, "%s: %s" % (problem, ascii(name)[:80]))
        seen.add(name)
        poses.append({"name": name, "components": list(entry["components"]),
                      "experimental": entry["experimental"], "note": display_text(entry["note"], 200)})
    return poses


def check_pose_apply_result(payload, vertex_counts, pose):
    """A pose.apply result checked in full: one object per object sent, each with #V*3 finite positions.

    Returns {"positions": [array('f') #V*3 per object, world space], "pose", "strength", "strategy", "identity",
    "rig" ('given': posed through the armature sent, 'auto': auto-rigged), "reused" (the sidecar reused the latent and
    auto-rig of an earlier apply of the same mesh), "facing" (how the way the character faces was decided:
    FACING_SOURCES), "forward" (the direction taken, world space), "seconds", "provider"}.
    """
    check_fields(payload, protocol.RESULTS["pose.apply"], "result")
    if payload["pose"] != pose:
        raise ProtocolError("result.pose", "the answer is for pose %s, %s was asked"
                            % (ascii(payload["pose"])[:80], ascii(pose)[:80]))
    objects = payload["objects"]
    if len(objects) != len(vertex_counts):
        raise ProtocolError("result.objects", "%d objects in the result for %d sent" % (len(objects), len(vertex_counts)))
    positions = []
    for i, (obj, count) in enumerate(zip(objects, vertex_counts)):
        opath = "result.objects[%d].positions" % i
        if len(obj["positions"]) != count * 12:
            raise ProtocolError(opath, "%d vertices expected, got %d" % (count, len(obj["positions"]) // 12))
        values = from_le_bytes(obj["positions"], "f32")
        if not _finite(values):
            raise ProtocolError(opath, "NaN or infinite coordinates")
        positions.append(values)
    facing, forward = _facing_fields(payload)
    return {"positions": positions, "pose": payload["pose"], "strength": payload["strength"],
            "strategy": payload["strategy"], "identity": payload["identity"], "rig": payload["rig"],
            "reused": payload["reused"], "facing": facing, "forward": forward, "seconds": payload["seconds"],
            "provider": payload["provider"]}


# How a pose or skin result's facing was decided: the shape, the file convention (the shape did not tell), the facing
# sent, or the armature's left and right.
FACING_SOURCES = ("shape", "convention", "option", "rig")


def _facing_fields(payload):
    """A pose or skin result's facing (one of FACING_SOURCES) and forward (three finite numbers), or ProtocolError."""
    if payload["facing"] not in FACING_SOURCES:
        raise ProtocolError("result.facing", "one of %s expected, got %s"
                            % (", ".join(FACING_SOURCES), ascii(payload["facing"])[:80]))
    if not _finite(payload["forward"]):
        raise ProtocolError("result.forward", "NaN or infinite")
    return payload["facing"], list(payload["forward"])


def check_pose_prepare_result(payload):
    """A pose.prepare result checked in full: {"reused" (the sidecar held the mesh's latent (and auto-rig) already),
    "rig" ('auto', or 'none' when only the latent was asked for), "facing", "forward" (as check_pose_apply_result's),
    "seconds"}."""
    check_fields(payload, protocol.RESULTS["pose.prepare"], "result")
    if payload["rig"] not in ("auto", "none"):
        raise ProtocolError("result.rig", "'auto' or 'none' expected, got %s" % ascii(payload["rig"])[:80])
    facing, forward = _facing_fields(payload)
    return {"reused": payload["reused"], "rig": payload["rig"], "facing": facing, "forward": forward,
            "seconds": payload["seconds"]}


def _check_offsets(objects, vertex_counts, path):
    """Per object sent: its rest-space offsets array('f') #V*3 (world axes), finite, in the order sent."""
    if len(objects) != len(vertex_counts):
        raise ProtocolError(path, "%d objects in the result for %d sent" % (len(objects), len(vertex_counts)))
    offsets = []
    for i, (obj, count) in enumerate(zip(objects, vertex_counts)):
        opath = "%s[%d].offsets" % (path, i)
        if len(obj["offsets"]) != count * 12:
            raise ProtocolError(opath, "%d vertices expected, got %d" % (count, len(obj["offsets"]) // 12))
        values = from_le_bytes(obj["offsets"], "f32")
        if not _finite(values):
            raise ProtocolError(opath, "NaN or infinite offset")
        offsets.append(values)
    return offsets


# A key angle's magnitude: above a thousandth of a radian (the driver divides by it), at most half a turn (a larger
# one is the same rotation the other way round).
_MIN_KEY_ANGLE = 1e-3


def _check_fit(fit, examples_sent):
    """result.fit against the examples sent: present exactly when examples were sent (else the sidecar ignored
    them, or answers another request), for all of them, its distances and seconds finite and not negative."""
    if fit is None:
        if examples_sent:
            raise ProtocolError("result.fit", "missing: %d pose examples were sent and none was fitted (is the "
                                "sidecar older than the add-on?)" % examples_sent)
        return None
    if not examples_sent:
        raise ProtocolError("result.fit", "a fit although no pose example was sent")
    if fit["examples"] != examples_sent:
        raise ProtocolError("result.fit.examples", "%d examples fitted, %d sent" % (fit["examples"], examples_sent))
    for name in ("before", "after", "seconds"):
        if not (math.isfinite(fit[name]) and fit[name] >= 0):
            raise ProtocolError("result.fit." + name, "%r is not a distance or time" % (fit[name],))
    return {"examples": fit["examples"], "before": float(fit["before"]), "after": float(fit["after"]),
            "seconds": float(fit["seconds"])}


def check_correctives_result(payload, vertex_counts, bone_names, examples_sent=0):
    """A correctives result checked in full. vertex_counts: #V per object sent; bone_names: the skeleton's bones;
    examples_sent: how many pose examples the request carried.

    Key names become shape key names (bone_name_problem's rules, unique); each key's bone is a bone of the skeleton,
    its axis finite and not zero (returned unit length), its angle finite, not ~0 and within a half turn; `fit` is
    there exactly when examples were sent, for all of them (_check_fit).
    Returns {"keys": [{"name", "bone", "pose", "axis": (x, y, z), "angle", "offsets": [array('f') #V*3 per
    object]}], "method", "seconds", "fit": None or {"examples", "before", "after", "seconds"}}.
    """
    check_fields(payload, protocol.RESULTS["correctives"], "result")
    fit = _check_fit(payload.get("fit"), examples_sent)
    bones = set(bone_names)
    seen = set()
    keys = []
    for i, key in enumerate(payload["keys"]):
        kpath = "result.keys[%d]" % i
        name = key["name"]
        problem = bone_name_problem(name)
        if problem is None and name in seen:
            problem = "listed twice"
        if problem is not None:
            raise ProtocolError(kpath + ".name", "%s: %s" % (problem, ascii(name)[:80]))
        seen.add(name)
        if key["bone"] not in bones:
            raise ProtocolError(kpath + ".bone", "%s is not a bone of the armature" % ascii(key["bone"])[:80])
        axis = [float(v) for v in key["axis"]]
        length = math.sqrt(sum(v * v for v in axis)) if _finite(axis) else float("nan")
        if not (length > 1e-6):
            raise ProtocolError(kpath + ".axis", "zero, NaN or infinite")
        angle = float(key["angle"])
        if not (math.isfinite(angle) and _MIN_KEY_ANGLE <= abs(angle) <= math.pi):
            raise ProtocolError(kpath + ".angle", "%r is not a key angle (0 < |angle| <= pi)" % angle)
        keys.append({"name": name, "bone": key["bone"], "pose": display_text(key["pose"], 63),
                     "axis": tuple(v / length for v in axis), "angle": angle,
                     "offsets": _check_offsets(key["objects"], vertex_counts, kpath + ".objects")})
    return {"keys": keys, "method": display_text(payload["method"], 40), "seconds": payload["seconds"], "fit": fit}


def check_correctives_preview_result(payload, vertex_counts):
    """A correctives.preview result checked in full → {"offsets": [array('f') #V*3 per object], "method",
    "seconds"}."""
    check_fields(payload, protocol.RESULTS["correctives.preview"], "result")
    return {"offsets": _check_offsets(payload["objects"], vertex_counts, "result.objects"),
            "method": display_text(payload["method"], 40), "seconds": payload["seconds"]}


# --- names and texts ------------------------------------------------------------------------------------------------

# Refused in a bone name from the sidecar: control, format (invisible, or reordering text as U+202E does), surrogate
# and private-use characters, line/paragraph separators, and path separators (exporters turn bone names into paths).
_REFUSED_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")
_PATH_SEPARATORS = ("/", "\\")


def bone_name_problem(name, max_bytes=protocol.MAX_NAME_LENGTH):
    """Why `name` (from the sidecar) cannot become a Blender bone and vertex-group name, or None when it can.

    Blender silently cuts names to 63 UTF-8 bytes and renames duplicates, which would break the bone <-> group
    pairing; so a name is refused rather than repaired. Names are only ever used as data, never evaluated.
    """
    if not isinstance(name, str):
        return "not a string"
    if not name:
        return "empty"
    if name != name.strip():
        return "leading or trailing white space"
    if len(name.encode("utf-8", "surrogatepass")) > max_bytes:
        return "longer than %d UTF-8 bytes" % max_bytes
    for char in name:
        if char in _PATH_SEPARATORS:
            return "contains a path separator %r" % char
        if unicodedata.category(char) in _REFUSED_CATEGORIES:
            return "contains the invisible or control character U+%04X" % ord(char)
    return None


def check_bone_names(names, path):
    """Raise ProtocolError unless every name is a valid Blender bone name and no two are the same."""
    seen = set()
    for i, name in enumerate(names):
        problem = bone_name_problem(name)
        if problem is None and name in seen:
            problem = "used by an earlier joint too"
        if problem is not None:
            raise ProtocolError("%s.joints[%d].name" % (path, i), "%s: %s" % (problem, ascii(name)[:80]))
        seen.add(name)


def display_text(text, limit=500):
    """A text from the sidecar (an error message) made safe to show: control and format characters become spaces
    (line breaks are kept), at most `limit` characters."""
    text = str(text)
    cleaned = "".join(c if c == "\n" or unicodedata.category(c) not in _REFUSED_CATEGORIES else " " for c in text)
    return cleaned if len(cleaned) <= limit else cleaned[:limit - 3] + "..."
