"""A digest of a Blender scene: what "the scene is exactly as before" means in the safety tests.

`scene_digest()` returns a JSON-able dict; two digests are equal exactly when everything listed here is equal:
  - datablock names: objects, meshes, armatures, shape keys, collections (an orphan left behind shows up here);
  - per object: type, data name, parent (object, type, bone), collections, visibility, location, rotation (mode and
    every representation), scale, matrix_parent_inverse (exact floats) and matrix_world (to 1e-6);
  - per mesh: vertex, edge, face and loop counts and SHA-256 digests of vertex positions, edges and face corners;
  - modifiers in stack order, each with every settable RNA property (pointers by datablock name);
  - the active vertex group, shape key and modifier (what the UI shows selected);
  - vertex groups (name, index, lock) and every weight of every vertex (a SHA-256 over the per-vertex
    (group, weight) lists, plus a count and sum per group so a difference says which group changed);
  - shape keys: the key's settings and each key block's name, value, range, mute, relative key, vertex group,
    interpolation and a SHA-256 of its positions; the key's drivers (path, type, expression, variables and their
    targets, keyframes, extrapolation, modifiers) and whether it has animation data at all;
  - armatures: display settings, each bone's name, parent, head, tail, roll, connect and deform flags, and each pose
    bone's transform;
  - optionally the selection, the active object and the mode.
Floats are compared exactly (repr) except matrix_world, which Blender recomputes from the transform channels.
A vertex's weights are sorted by group index: the order of a vertex's entries is Blender-internal, never visible.

`digest_differences(a, b)` lists where two digests differ (paths like `objects.Cube.modifiers[0].levels`).
Runs inside Blender only (imports bpy).
"""

import hashlib
import struct
from array import array

import bpy

__all__ = ["scene_digest", "digest_differences"]

_MATRIX_DECIMALS = 6


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def _floats(values):
    """Exact floats as a list (JSON keeps a double's repr exactly)."""
    return [float(v) for v in values]


def _matrix(matrix, decimals=None):
    values = [v for row in matrix for v in row]
    return [round(v, decimals) for v in values] if decimals is not None else _floats(values)


def _rna_value(value):
    """An RNA property value as plain data: datablocks by name, vectors and arrays as lists, sets sorted."""
    if isinstance(value, bpy.types.ID):
        return "ID:" + value.name
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, set):
        return sorted(value)
    if isinstance(value, bpy.types.bpy_struct):
        return "struct:" + type(value).__name__
    try:
        return [_rna_value(v) for v in value]
    except TypeError:
        return repr(value)


def _rna_settings(struct_value, skip=()):
    """Every settable (not read-only) RNA property of a struct, by identifier."""
    out = {}
    for prop in struct_value.bl_rna.properties:
        name = prop.identifier
        if name == "rna_type" or name in skip or prop.is_readonly and prop.type != 'POINTER':
            continue
        if prop.type == 'COLLECTION':
            continue
        out[name] = _rna_value(getattr(struct_value, name))
    return out


def _mesh_geometry(mesh):
    count = len(mesh.vertices)
    positions = array("f", bytes(count * 12))
    mesh.vertices.foreach_get("co", positions)
    edges = array("i", bytes(len(mesh.edges) * 8))
    mesh.edges.foreach_get("vertices", edges)
    corners = array("i", bytes(len(mesh.loops) * 4))
    mesh.loops.foreach_get("vertex_index", corners)
    starts = array("i", bytes(len(mesh.polygons) * 4))
    mesh.polygons.foreach_get("loop_start", starts)
    return {"vertices": count, "edges": len(mesh.edges), "faces": len(mesh.polygons), "loops": len(mesh.loops),
            "positions_sha": _sha(positions.tobytes()), "edges_sha": _sha(edges.tobytes()),
            "corners_sha": _sha(corners.tobytes() + starts.tobytes()),
            "uv_layers": [uv.name for uv in mesh.uv_layers]}


def _vertex_groups(obj):
    """Groups (name, index, lock) and every weight: a digest over all vertices plus count and sum per group."""
    groups = [{"name": g.name, "index": g.index, "lock_weight": g.lock_weight} for g in obj.vertex_groups]
    hasher = hashlib.sha256()
    counts = [0] * len(obj.vertex_groups)
    sums = [0.0] * len(obj.vertex_groups)
    stray = 0  # entries pointing at no group (a group removed without cleaning its weights)
    for vertex in obj.data.vertices:
        entries = sorted((g.group, g.weight) for g in vertex.groups)
        hasher.update(struct.pack("<I", len(entries)))
        for group, weight in entries:
            hasher.update(struct.pack("<if", group, weight))
            if 0 <= group < len(counts):
                counts[group] += 1
                sums[group] += weight
            else:
                stray += 1
    stats = {g.name: [counts[g.index], round(sums[g.index], 6)] for g in obj.vertex_groups}
    return {"groups": groups, "weights_sha": hasher.hexdigest(), "group_stats": stats, "stray_entries": stray}


def _shape_keys(mesh):
    key = mesh.shape_keys
    if key is None:
        return None
    blocks = []
    for block in key.key_blocks:
        data = array("f", bytes(len(block.data) * 12))
        block.data.foreach_get("co", data)
        blocks.append({"name": block.name, "value": block.value, "slider_min": block.slider_min,
                       "slider_max": block.slider_max, "mute": block.mute,
                       "relative_key": block.relative_key.name if block.relative_key else None,
                       "vertex_group": block.vertex_group, "interpolation": block.interpolation,
                       "data_sha": _sha(data.tobytes())})
    return {"name": key.name, "use_relative": key.use_relative,
            "reference_key": key.reference_key.name if key.reference_key else None, "key_blocks": blocks,
            "animation_data": key.animation_data is not None,
            "drivers": [_driver(f) for f in key.animation_data.drivers] if key.animation_data else []}


def _driver(fcurve):
    """A driver F-curve: what it drives, how it computes and maps its value."""
    driver = fcurve.driver
    variables = [{"name": v.name, "type": v.type,
                  "targets": [{"id": t.id.name if t.id else None, "bone": t.bone_target, "data_path": t.data_path,
                               "transform_type": t.transform_type, "transform_space": t.transform_space,
                               "rotation_mode": t.rotation_mode} for t in v.targets]}
                 for v in driver.variables]
    return {"data_path": fcurve.data_path, "index": fcurve.array_index, "mute": fcurve.mute, "type": driver.type,
            "expression": driver.expression, "use_self": driver.use_self, "variables": variables,
            "keyframes": [_floats(p.co) + [p.interpolation] for p in fcurve.keyframe_points],
            "extrapolation": fcurve.extrapolation, "modifiers": [m.type for m in fcurve.modifiers]}


def _bone_roll(bone):
    """A rest bone's roll, as an edit bone would show it."""
    axis = bone.tail_local - bone.head_local
    if axis.length == 0.0:
        return 0.0
    _, roll = bpy.types.Bone.AxisRollFromMatrix(bone.matrix_local.to_3x3(), axis=axis.normalized())
    return round(float(roll), _MATRIX_DECIMALS)


def _armature(obj):
    data = obj.data
    bones = [{"name": b.name, "parent": b.parent.name if b.parent else None,
              "head": _floats(b.head_local), "tail": _floats(b.tail_local), "roll": _bone_roll(b),
              "use_connect": b.use_connect, "use_deform": b.use_deform} for b in data.bones]
    pose = [{"name": p.name, "location": _floats(p.location), "rotation_mode": p.rotation_mode,
             "rotation_quaternion": _floats(p.rotation_quaternion), "rotation_euler": _floats(p.rotation_euler),
             "scale": _floats(p.scale), "constraints": [c.type for c in p.constraints]}
            for p in (obj.pose.bones if obj.pose else [])]
    return {"display_type": data.display_type, "pose_position": data.pose_position, "bones": bones, "pose": pose}


def _object(obj):
    entry = {
        "type": obj.type,
        "data": obj.data.name if obj.data is not None else None,
        "parent": obj.parent.name if obj.parent else None,
        "parent_type": obj.parent_type,
        "parent_bone": obj.parent_bone,
        "collections": sorted(c.name for c in obj.users_collection),
        "hide_viewport": obj.hide_viewport,
        "hide_render": obj.hide_render,
        "location": _floats(obj.location),
        "rotation_mode": obj.rotation_mode,
        "rotation_euler": _floats(obj.rotation_euler),
        "rotation_quaternion": _floats(obj.rotation_quaternion),
        "rotation_axis_angle": _floats(obj.rotation_axis_angle),
        "scale": _floats(obj.scale),
        "matrix_parent_inverse": _matrix(obj.matrix_parent_inverse),
        "matrix_world": _matrix(obj.matrix_world, _MATRIX_DECIMALS),
        "modifiers": [dict({"name": m.name, "type": m.type}, settings=_rna_settings(m)) for m in obj.modifiers],
    }
    if obj.type == 'MESH':
        entry["active_vertex_group"] = obj.vertex_groups.active_index
        entry["active_shape_key"] = obj.active_shape_key_index
        entry["mesh"] = _mesh_geometry(obj.data)
        entry["vertex_groups"] = _vertex_groups(obj)
        entry["shape_keys"] = _shape_keys(obj.data)
    elif obj.type == 'ARMATURE':
        entry["armature"] = _armature(obj)
    return entry


def scene_digest(include_selection=True):
    """The digest of the current file (all objects, not only the active scene's), as described in the module doc."""
    bpy.context.view_layer.update()
    digest = {
        "datablocks": {
            "objects": sorted(o.name for o in bpy.data.objects),
            "meshes": sorted(m.name for m in bpy.data.meshes),
            "armatures": sorted(a.name for a in bpy.data.armatures),
            "shape_keys": sorted(k.name for k in bpy.data.shape_keys),
            "collections": sorted(c.name for c in bpy.data.collections),
        },
        "objects": {obj.name: _object(obj) for obj in bpy.data.objects},
    }
    if include_selection:
        view_layer = bpy.context.view_layer
        digest["selection"] = {
            "selected": sorted(o.name for o in view_layer.objects if o.select_get()),
            "active": view_layer.objects.active.name if view_layer.objects.active else None,
            "mode": bpy.context.mode,
        }
    return digest


def digest_differences(before, after, path="", limit=20):
    """Paths where two digests differ, with both values (short), at most `limit` of them."""
    out = []

    def walk(a, b, where):
        if len(out) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b), key=str):
                walk(a.get(key, "<missing>"), b.get(key, "<missing>"), "%s.%s" % (where, key) if where else str(key))
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, "%s[%d]" % (where, i))
        elif a != b:
            out.append("%s: %s -> %s" % (where, repr(a)[:120], repr(b)[:120]))

    walk(before, after, path)
    return out
