"""Pose Correctives without bpy: the weights sent with the request, the driver that turns a corrective key on, the
offsets taken to an object's own space, the pose sent for a preview, and the posed examples the keys can be fitted
to (the JSON a Pose Example keeps on its object).

The driver reads no text: Blender evaluates a scripted driver expression as Python (the add-on never sets one, see
test/python/addon_audit.py), so a key's driver is an AVERAGE of one Transform Channel variable (the bone's twist
about one of its own axes, Swing and Twist mode, local space) mapped by the driver's F-curve: two linear keyframes
(0, 0) and (twist at the key pose, 1) with constant extrapolation give value = clamp(twist / key twist, 0, 1).
When the key's axis is not exactly a bone axis, the twist is read about the nearest one and the key twist is that
axis's twist of the key rotation, so the key is exactly 0 at rest and 1 at the key pose whatever the axis; between,
and for rotations about other axes, it follows the rotation's share about that bone axis (report the deviation).
"""

import json
import math
from array import array

__all__ = ["METHOD_ITEMS", "method_value", "PREVIEW_KEY", "INFLUENCES", "top_weights", "DriverChannel",
           "driver_channel", "driver_value", "inverse3", "apply_linear", "offsets_to_local", "matmul3", "transpose3",
           "orthonormalised", "own_rotation", "to_world_axes", "rows_to_floats", "EXAMPLE_PROPERTY", "example_json",
           "KEY_EXAMPLES_PROPERTY", "parse_key_examples", "key_example_texts", "with_key_example",
           "without_key_example",
           "parse_example", "example_problem", "sort_examples", "count_examples", "turned_joint_count"]

# The methods the sidecar offers (messages.CORRECTIVE_METHODS), as enum items: identifier, label, description.
METHOD_ITEMS = (
    ('POSE_DEPENDENT_DUAL_QUATERNION', "Learned + dual quaternion",
     "The learned pose-dependent weights, blended as dual quaternions: the closest to real posed bodies we measured"),
    ('POSE_DEPENDENT', "Learned",
     "The learned pose-dependent weights, blended linearly (VINECS)"),
    ('DUAL_QUATERNION', "Dual quaternion",
     "Dual-quaternion skinning with the same weights: keeps volume at bends and twists (no candy wrapper); no model"),
)
_METHOD_VALUES = {'POSE_DEPENDENT_DUAL_QUATERNION': "poseDependentDualQuaternion", 'POSE_DEPENDENT': "poseDependent",
                  'DUAL_QUATERNION': "dualQuaternion"}

# The temporary shape key Preview Correctives shows.
PREVIEW_KEY = "AUTORIG_preview"

# Weights sent per vertex (protocol.json limits.influencesPerVertex, Blender's armature modifier reads any number).
INFLUENCES = 4

_AXES = "XYZ"


def method_value(identifier):
    """The protocol's method ("dualQuaternion") for an enum identifier ('DUAL_QUATERNION'); a wire value passes."""
    if identifier in _METHOD_VALUES.values():
        return identifier
    try:
        return _METHOD_VALUES[identifier]
    except KeyError:
        raise ValueError("unknown corrective method %r" % (identifier,)) from None


def top_weights(vertex_groups_of_vertices, joint_of_group, influences=INFLUENCES):
    """The k largest bone weights of each vertex, renormalised to sum to one, as the request's ObjectWeights.

    vertex_groups_of_vertices: iterable over vertices of iterables of (group index, weight);
    joint_of_group: {group index: joint index} for the groups that name deforming bones (others are ignored, as
    Blender's armature modifier ignores them). Returns (indices array('H') #V*k, weights array('f') #V*k), a
    vertex's slots by decreasing weight; a vertex with no positive bone weight gets all-zero weights (the armature
    modifier leaves it where it is).
    """
    indices, weights = array("H"), array("f")
    pad_indices, pad_weights = [0] * influences, [0.0] * influences
    for groups in vertex_groups_of_vertices:
        pairs = [(w, joint_of_group[g]) for g, w in groups if w > 0.0 and g in joint_of_group]
        pairs.sort(key=lambda p: (-p[0], p[1]))
        pairs = pairs[:influences]
        total = sum(w for w, _ in pairs)
        if total <= 0.0:
            indices.extend(pad_indices)
            weights.extend(pad_weights)
            continue
        indices.extend([j for _, j in pairs] + pad_indices[len(pairs):])
        weights.extend([w / total for w, _ in pairs] + pad_weights[len(pairs):])
    return indices, weights


class DriverChannel:
    """How a corrective key's driver reads its bone: `axis` 'X', 'Y' or 'Z' (the bone axis whose twist is read:
    rotation mode SWING_TWIST_<axis>, channel ROT_<axis>), `key_twist` (radians: that twist at the key pose, where
    the key reaches 1) and `deviation` (radians between the key's axis and that bone axis, sign ignored)."""

    __slots__ = ("axis", "key_twist", "deviation")

    def __init__(self, axis, key_twist, deviation):
        self.axis = axis
        self.key_twist = key_twist
        self.deviation = deviation

    @property
    def rotation_mode(self):
        return "SWING_TWIST_" + self.axis

    @property
    def transform_type(self):
        return "ROT_" + self.axis

    def __repr__(self):
        return "DriverChannel(%r, %r, %r)" % (self.axis, self.key_twist, self.deviation)


def driver_channel(axis, angle):
    """The driver channel of a key turning its bone by `angle` (radians, 0 < |angle| <= pi) about unit `axis`
    (x, y, z in the bone's rest frame): the bone axis nearest `axis` (either sign), and the twist about it of the key
    rotation, 2 atan2(sin(angle / 2) a_i, cos(angle / 2)) (the twist of a swing-twist split, as Blender computes it).
    """
    length = math.sqrt(sum(v * v for v in axis))
    if not length > 0.0:
        raise ValueError("a corrective key's axis must not be zero")
    unit = [v / length for v in axis]
    index = max(range(3), key=lambda i: abs(unit[i]))
    half = 0.5 * angle
    key_twist = 2.0 * math.atan2(math.sin(half) * unit[index], math.cos(half))
    deviation = math.acos(min(1.0, abs(unit[index])))
    return DriverChannel(_AXES[index], key_twist, deviation)


def driver_value(twist, key_twist):
    """What the driver gives for a bone twist (radians): clamp(twist / key_twist, 0, 1); the F-curve's two keyframes
    compute the same in Blender (the tests compare the two)."""
    return min(1.0, max(0.0, twist / key_twist))


# --- offsets ---------------------------------------------------------------------------------------------------------

def inverse3(m):
    """Inverse of a 3x3 matrix (rows); raises ValueError when it is (nearly) singular."""
    (a, b, c), (d, e, f), (g, h, i) = m
    co = (e * i - f * h, f * g - d * i, d * h - e * g)
    det = a * co[0] + b * co[1] + c * co[2]
    scale = max(abs(v) for row in m for v in row)
    if not (abs(det) > 1e-12 * max(scale, 1e-300) ** 3):
        raise ValueError("the matrix cannot be inverted (a zero scale?)")
    return [[co[0] / det, (c * h - b * i) / det, (b * f - c * e) / det],
            [co[1] / det, (a * i - c * g) / det, (c * d - a * f) / det],
            [co[2] / det, (b * g - a * h) / det, (a * e - b * d) / det]]


def apply_linear(m, values):
    """m (3x3 rows) applied to every vector of values (array('f') #V*3) → a new array('f') #V*3."""
    (a, b, c), (d, e, f), (g, h, i) = m
    xs, ys, zs = values[0::3], values[1::3], values[2::3]
    out = array("f", bytes(len(values) * 4))
    out[0::3] = array("f", [a * x + b * y + c * z for x, y, z in zip(xs, ys, zs)])
    out[1::3] = array("f", [d * x + e * y + f * z for x, y, z in zip(xs, ys, zs)])
    out[2::3] = array("f", [g * x + h * y + i * z for x, y, z in zip(xs, ys, zs)])
    return out


def offsets_to_local(offsets, world_linear):
    """World-space offsets (array('f') #V*3: displacements, not points) in an object's own space: the inverse of the
    object's world matrix's linear part (world_linear, 3x3 rows) applied, no translation. Raises ValueError when the
    object's transform cannot be inverted."""
    return apply_linear(inverse3(world_linear), offsets)


# --- the pose sent for a preview -----------------------------------------------------------------------------------

def matmul3(a, b):
    """a b, 3x3 rows."""
    return [[sum(a[r][k] * b[k][c] for k in range(3)) for c in range(3)] for r in range(3)]


def transpose3(m):
    return [[m[c][r] for c in range(3)] for r in range(3)]


def orthonormalised(m):
    """The rotation nearest a 3x3 matrix with positive determinant (Gram-Schmidt on its columns, the first kept):
    strips scale and shear that a pose may carry."""
    cols = [[m[r][c] for r in range(3)] for c in range(3)]

    def unit(v):
        n = math.sqrt(sum(x * x for x in v))
        if not n > 0.0:
            raise ValueError("a bone matrix has a zero axis")
        return [x / n for x in v]

    x = unit(cols[0])
    y = [cols[1][k] - sum(cols[1][j] * x[j] for j in range(3)) * x[k] for k in range(3)]
    y = unit(y)
    z = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]]
    return [[x[r], y[r], z[r]] for r in range(3)]


def own_rotation(parent_skinning, skinning):
    """A joint's own rotation relative to rest, in armature axes: the rotation of parent⁻¹ · skinning, where
    skinning = pose matrix · rest matrix⁻¹ (3x3 rows, what the armature modifier turns the joint's vertices by) and
    parent_skinning the parent's (identity for a root). Parents compose as in linear blend skinning, so this is what
    protocol.json's rotations want, before the change to world axes."""
    return orthonormalised(matmul3(transpose3(orthonormalised(parent_skinning)), skinning))


def to_world_axes(world_rotation, rotation):
    """A rotation in armature axes seen in world axes: W R Wᵀ, W the armature's world rotation (3x3 rows)."""
    return matmul3(matmul3(world_rotation, rotation), transpose3(world_rotation))


def rows_to_floats(rotations):
    """Row-major 3x3 rotations, one per joint → array('f') #J*9 (the request's rotations)."""
    return array("f", [v for m in rotations for row in m for v in row])


# --- posed examples --------------------------------------------------------------------------------------------------

# The custom property a Pose Example keeps on its mesh object: a JSON string (example_json).
EXAMPLE_PROPERTY = "autorig_example"
# The custom property the character's mesh keeps for its shape keys sculpted as Pose Examples: a JSON object
# {shape key name: example_json's object} (a ShapeKey is not an ID: it cannot hold properties of its own).
KEY_EXAMPLES_PROPERTY = "autorig_key_examples"


def example_json(armature_name, bone_names, rotations):
    """The Pose Example property: {"armature": name, "bones": [names in skeleton order], "rotations": [#J*9 floats,
    the correctives.preview convention]} as a JSON string. rotations: array('f') #J*9 (pose_rotations' answer); its
    float32 values are written as the doubles they are, so they read back bit for bit."""
    bones = [str(name) for name in bone_names]
    if len(rotations) != 9 * len(bones):
        raise ValueError("%d rotation values for %d bones" % (len(rotations), len(bones)))
    return json.dumps({"armature": str(armature_name), "bones": bones, "rotations": [float(v) for v in rotations]})


def _json_value(text):
    """A custom property's JSON text read: the value, or ValueError when it is not a string or not JSON."""
    if not isinstance(text, str):
        raise ValueError("not a string")
    try:
        return json.loads(text)
    except ValueError as err:
        raise ValueError("not JSON (%s)" % err) from None


def parse_example(text):
    """A Pose Example property read back: {"armature": str, "bones": [str], "rotations": array('f') #J*9}.
    Raises ValueError when it is not one (not JSON, fields missing or of the wrong type, wrong length, NaN)."""
    value = _json_value(text)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    armature, bones, rotations = value.get("armature"), value.get("bones"), value.get("rotations")
    if not isinstance(armature, str) or not armature:
        raise ValueError("no armature name")
    if not isinstance(bones, list) or not bones or not all(isinstance(b, str) for b in bones):
        raise ValueError("no bone list")
    if not isinstance(rotations, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                  for v in rotations):
        raise ValueError("no rotation list")
    if len(rotations) != 9 * len(bones):
        raise ValueError("%d rotation values for %d bones" % (len(rotations), len(bones)))
    if not all(math.isfinite(v) for v in rotations):
        raise ValueError("a rotation is NaN or infinite")
    return {"armature": armature, "bones": list(bones), "rotations": array("f", rotations)}


def example_problem(example, bone_names):
    """Why a parsed example (parse_example) cannot be sent with a skeleton of `bone_names` (its order), or None."""
    if list(example["bones"]) == list(bone_names):
        return None
    if sorted(example["bones"]) == sorted(bone_names):
        return "its bones are in another order than the armature's"
    return "posed with other bones (%d) than the armature has now (%d)" % (len(example["bones"]), len(bone_names))


def _names_armature(text, armature_name):
    """Whether a property text looks meant for `armature_name` (so that a broken one is warned about, not ignored)."""
    try:
        return parse_example(text)["armature"] == armature_name
    except ValueError:
        try:
            value = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            return False
        return isinstance(value, dict) and value.get("armature") == armature_name


def sort_examples(candidates, armature_name, bone_names):
    """The Pose Examples of one armature among objects' properties, those that can be sent and those that cannot.

    candidates: iterable of (object name, property text); armature_name, bone_names: the armature and its skeleton
    as sent (bone_names in skeleton order). An example naming another armature is not this one's: left out, silently.
    Returns (accepted [(object name, rotations array('f') #J*9)], skipped [(object name, why)]), in candidates' order.
    """
    accepted, skipped = [], []
    for name, text in candidates:
        if not _names_armature(text, armature_name):
            continue
        try:
            example = parse_example(text)
        except ValueError as err:
            skipped.append((name, "its %s is broken: %s" % (EXAMPLE_PROPERTY, err)))
            continue
        problem = example_problem(example, bone_names)
        if problem is not None:
            skipped.append((name, problem))
        else:
            accepted.append((name, example["rotations"]))
    return accepted, skipped


def count_examples(candidates, armature_name):
    """How many of candidates' properties ((object name, text) pairs) are Pose Examples of `armature_name`."""
    count = 0
    for _name, text in candidates:
        try:
            count += parse_example(text)["armature"] == armature_name
        except ValueError:
            pass
    return count


def _key_entries(text):
    """KEY_EXAMPLES_PROPERTY read: {key name: its example as stored (a JSON object, unchecked)}; ValueError when the
    property is not a JSON object of non-empty key names."""
    value = _json_value(text)
    if not isinstance(value, dict) or not all(isinstance(k, str) and k for k in value):
        raise ValueError("not a JSON object of shape key names")
    return value


def parse_key_examples(text):
    """The shape-key Pose Examples of a mesh read back: {key name: property text of that key's example (example_json)}.
    Raises ValueError when the property is not a JSON object of such entries (each entry is checked later, by
    sort_examples, like an object's)."""
    return {key: json.dumps(entry) for key, entry in _key_entries(text).items()}


def key_example_texts(meshes_with_property):
    """(mesh name: key name, example text) for every shape-key Pose Example among (mesh name, KEY_EXAMPLES_PROPERTY)
    pairs, in their order; broken properties give nothing here (pose_examples reports them)."""
    out = []
    for name, text in meshes_with_property:
        try:
            out += [("%s: %s" % (name, key), entry) for key, entry in parse_key_examples(text).items()]
        except ValueError:
            pass
    return out


def with_key_example(text, key_name, armature_name, bone_names, rotations):
    """The mesh's KEY_EXAMPLES_PROPERTY with `key_name`'s example set (added or replaced): text (the property as it is,
    or None) → new JSON text. A broken property is replaced by one holding this key alone."""
    try:
        entries = _key_entries(text)
    except ValueError:
        entries = {}
    entries[str(key_name)] = json.loads(example_json(armature_name, bone_names, rotations))
    return json.dumps(entries)


def without_key_example(text, key_name):
    """The mesh's KEY_EXAMPLES_PROPERTY without `key_name`'s example → new JSON text, or None when no example is left
    (the property is then removed). Raises ValueError when the property is broken."""
    entries = _key_entries(text)
    entries.pop(key_name, None)
    return json.dumps(entries) if entries else None


def turned_joint_count(rotations, tolerance=1e-4):
    """How many joints of a pose (rotations array('f') #J*9) are turned from rest: some entry off the identity's by
    more than `tolerance` (tells the artist whether the armature was posed at all)."""
    identity = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    return sum(any(abs(rotations[9 * j + k] - identity[k]) > tolerance for k in range(9))
               for j in range(len(rotations) // 9))
