"""Reading what the sidecar needs from Blender: meshes in world space, an armature's bones, locked vertex groups.

Only reads: nothing here changes the scene.
"""

from array import array

import bpy
from mathutils import Matrix

try:  # Blender ships numpy: 50k vertices move in ~1 ms instead of ~30 ms of Python loops (the same floats either way)
    import numpy as _np
except ImportError:  # a Blender built without it takes the plain-Python path
    _np = None

from . import messages
from .weights import locked_weight_rows

__all__ = ["selected_meshes", "meshes_active_first", "mesh_world_arrays", "mesh_objects", "evaluated_mesh_object", "world_to_local",
           "bound_armature", "deforming_armature", "armature_joints", "locked_groups", "pose_example_texts",
           "selected_armature", "example_armature"]


def selected_meshes(context):
    """The character's meshes: the active mesh first, then the other selected meshes (one character)."""
    return meshes_active_first(context.active_object, context.selected_objects)


def meshes_active_first(active, selected):
    """selected_meshes from an active object (or None) and the selected objects, as a view layer has them too (a
    timer has no screen context)."""
    meshes = [active] if active is not None and active.type == 'MESH' else []
    for obj in selected:
        if obj.type == 'MESH' and obj not in meshes:
            meshes.append(obj)
    return meshes


def _transform_positions(positions, matrix, use_numpy=True):
    """Apply an affine 4x4 `matrix` to positions (array('f'), #V*3): a new array('f'). Each coordinate is
    ((m0·x + m1·y) + m2·z) + m3 in doubles, rounded to float32, with numpy (when Blender has it and use_numpy) or
    without: the same floats."""
    if matrix == Matrix.Identity(4):
        return positions
    (a, b, c, d), (e, f, g, h), (i, j, k, l) = [tuple(row) for row in matrix[:3]]
    if _np is not None and use_numpy:
        xyz = _np.frombuffer(positions, dtype=_np.float32).reshape(-1, 3).astype(_np.float64)
        x, y, z = xyz[:, 0], xyz[:, 1], xyz[:, 2]
        out = _np.empty(xyz.shape, dtype=_np.float32)
        out[:, 0] = a * x + b * y + c * z + d
        out[:, 1] = e * x + f * y + g * z + h
        out[:, 2] = i * x + j * y + k * z + l
        return array("f", out.tobytes())
    xs, ys, zs = positions[0::3], positions[1::3], positions[2::3]
    out = array("f", bytes(len(positions) * 4))
    out[0::3] = array("f", [a * x + b * y + c * z + d for x, y, z in zip(xs, ys, zs)])
    out[1::3] = array("f", [e * x + f * y + g * z + h for x, y, z in zip(xs, ys, zs)])
    out[2::3] = array("f", [i * x + j * y + k * z + l for x, y, z in zip(xs, ys, zs)])
    return out


def _mesh_arrays(mesh, matrix):
    """positions array('f') #V*3 of a Mesh datablock with the 4x4 `matrix` applied, triangles array('I') #T*3 from
    its loop triangles (n-gons triangulated as Blender draws them)."""
    positions = array("f", bytes(len(mesh.vertices) * 12))
    mesh.vertices.foreach_get("co", positions)
    mesh.calc_loop_triangles()
    corners = array("i", bytes(len(mesh.loop_triangles) * 12))
    mesh.loop_triangles.foreach_get("vertices", corners)
    triangles = array("I", corners.tobytes())  # indices are never negative: same bits
    return _transform_positions(positions, matrix), triangles


def mesh_world_arrays(obj):
    """positions: array('f') #V*3 in world space (matrix_world applied, modifiers not: the weights go onto these
    vertices); triangles: array('I') #T*3 from the mesh's loop triangles."""
    return _mesh_arrays(obj.data, obj.matrix_world)


def shape_key_world_arrays(obj, key_name):
    """The mesh's vertices as shape key `key_name` holds them (rest + the key, modifiers not applied) in world space,
    and its triangles: (positions array('f') #V*3, triangles array('I') #T*3), as mesh_world_arrays gives the Basis.
    Raises KeyError when the mesh has no such key."""
    keys = obj.data.shape_keys
    if keys is None or key_name not in keys.key_blocks:
        raise KeyError(key_name)
    positions, triangles = mesh_world_arrays(obj)
    co = array("f", bytes(len(obj.data.vertices) * 12))
    keys.key_blocks[key_name].data.foreach_get("co", co)
    return _transform_positions(co, obj.matrix_world), triangles


def mesh_objects(meshes):
    """MeshObject maps for the request, and the vertex count of each (to check the result against)."""
    objects, counts = [], []
    for obj in meshes:
        positions, triangles = mesh_world_arrays(obj)
        objects.append(messages.mesh_object(obj.name, positions, triangles))
        counts.append(len(obj.data.vertices))
    return objects, counts


def evaluated_mesh_object(obj, depsgraph):
    """A MeshObject of the mesh as the viewport shows it (modifiers, shape keys and the armature's pose applied), in
    world space and triangulated: what a Pose Example's surface is (it needs no correspondence with the character's
    vertices, so generative modifiers may change the count)."""
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        positions, triangles = _mesh_arrays(mesh, evaluated.matrix_world)
    finally:
        evaluated.to_mesh_clear()
    return messages.mesh_object(obj.name, positions, triangles)


def world_to_local(obj, positions):
    """World-space positions (array('f') #V*3, as the sidecar answers) in `obj`'s own space: array('f') #V*3.

    Raises ValueError when the object's transform cannot be inverted (a zero scale): nothing can be placed then.
    """
    matrix = obj.matrix_world
    if abs(matrix.determinant()) < 1e-12:
        raise ValueError("the transform of '%s' cannot be inverted (a zero scale?)" % obj.name)
    return _transform_positions(positions, matrix.inverted())


def bound_armature(obj):
    """The armature object a mesh is bound to: its first Armature modifier's object, else an armature parent."""
    if obj is None or obj.type != 'MESH':
        return None
    for modifier in obj.modifiers:
        if modifier.type == 'ARMATURE' and modifier.object is not None and modifier.object.type == 'ARMATURE':
            return modifier.object
    if obj.parent is not None and obj.parent.type == 'ARMATURE':
        return obj.parent
    return None


def deforming_armature(obj):
    """The armature that deforms a mesh through an Armature modifier (the first one with an armature object that has
    deforming bones), or None: what Pose Correctives needs (its drivers read that armature's bones)."""
    if obj is None or obj.type != 'MESH':
        return None
    for modifier in obj.modifiers:
        target = modifier.object if modifier.type == 'ARMATURE' else None
        if target is not None and target.type == 'ARMATURE' and any(b.use_deform for b in target.data.bones):
            return target
    return None


def _bones_parents_first(armature):
    ordered = []

    def visit(bone):
        ordered.append(bone)
        for child in bone.children:
            visit(child)

    for bone in armature.data.bones:
        if bone.parent is None:
            visit(bone)
    return ordered


def armature_joints(armature_obj):
    """Joint maps of an armature in world space (head, tail, edit-bone roll), parents before children."""
    bones = _bones_parents_first(armature_obj)
    index = {bone.name: i for i, bone in enumerate(bones)}
    world = armature_obj.matrix_world
    joints = []
    for bone in bones:
        head = world @ bone.head_local
        tail = world @ bone.tail_local
        # Roll is defined against the bone's axis: recover it from the bone's world rest orientation.
        rest = (world @ bone.matrix_local).to_3x3().normalized()
        _, roll = bpy.types.Bone.AxisRollFromMatrix(rest, axis=(tail - head).normalized())
        joints.append({
            "name": bone.name,
            "parent": index[bone.parent.name] if bone.parent is not None else -1,
            "head": [float(v) for v in head],
            "tail": [float(v) for v in tail],
            "roll": float(roll),
        })
    return joints


def locked_groups(meshes, bone_names):
    """LockedGroup maps: every vertex group with lock_weight whose name is a bone, with its weights (#V)."""
    bones = set(bone_names)
    locked = []
    for object_index, obj in enumerate(meshes):
        wanted = {vg.index: vg.name for vg in obj.vertex_groups if vg.lock_weight and vg.name in bones}
        if not wanted:
            continue
        rows = locked_weight_rows(([(g.group, g.weight) for g in v.groups] for v in obj.data.vertices),
                                  list(wanted), len(obj.data.vertices))
        for group_index, name in wanted.items():
            locked.append({"object": object_index, "bone": name,
                           "weights": messages.le_bytes(array("f", rows[group_index]))})
    return locked


def pose_example_texts(scene, property_name):
    """(object name, property value) of every mesh object in the scene that carries the Pose Example property (its
    value as stored: parsing and checking it is correctives.sort_examples' work)."""
    return [(obj.name, obj.get(property_name)) for obj in scene.objects
            if obj.type == 'MESH' and obj.get(property_name) is not None]


def selected_armature(context):
    """The one armature among the selected objects (the character's, posed for a Pose Example), or None when none
    or several are selected."""
    armatures = [obj for obj in context.selected_objects if obj.type == 'ARMATURE']
    return armatures[0] if len(armatures) == 1 else None


def example_armature(context):
    """The armature whose Pose Examples the panel counts: the active mesh's deforming armature (the one Pose
    Correctives bakes for), else the one selected armature (the one Add Pose Example reads), else None."""
    return deforming_armature(context.active_object) or selected_armature(context)
