"""Pose Correctives in the scene: reading what the request needs (weights, the pose) and writing the answer (corrective
shape keys with drivers on their bones' rotation; the temporary preview key).

Writes follow apply.py's rule: every foreseeable failure is checked before the first change, and every change is
journalled so that an unforeseen one is taken back (APPLY_FAILED, scene as it was); the operator's UNDO flag makes
the whole bake one undo step.
"""

from array import array

import bpy
from mathutils import Matrix

from . import apply, correctives
from .apply import ApplyFailed

__all__ = ["DRIVER_VARIABLE", "deform_bone_names", "mesh_bone_weights", "pose_rotations", "corrective_driver",
           "check_armature", "local_offsets_of", "bake_corrective_keys", "show_preview", "remove_preview"]

# The one variable of a corrective key's driver (a name the add-on recognises its own drivers by).
DRIVER_VARIABLE = "twist"


def deform_bone_names(armature_obj):
    """Names of the armature's deforming bones (the ones Blender's armature modifier reads vertex groups for)."""
    return {bone.name for bone in armature_obj.data.bones if bone.use_deform}


def mesh_bone_weights(obj, joints, deforming):
    """A mesh's weights as the request wants them: (indices array('H') #V*4, weights array('f') #V*4), indices into
    `joints` (Joint maps), from the vertex groups named after deforming bones (`deforming`: set of names)."""
    joint_index = {joint["name"]: i for i, joint in enumerate(joints)}
    joint_of_group = {group.index: joint_index[group.name] for group in obj.vertex_groups
                      if group.name in joint_index and group.name in deforming}
    return correctives.top_weights(([(g.group, g.weight) for g in v.groups] for v in obj.data.vertices),
                                   joint_of_group)


def _rows(matrix):
    return [list(row) for row in matrix]


def pose_rotations(armature_obj, joints):
    """The armature's current pose as the request's rotations: array('f') #J*9, per joint (in `joints`' order) its
    own rotation relative to rest in world axes, from the evaluated pose matrices (constraints included)."""
    bones = armature_obj.pose.bones
    skinning = []
    for joint in joints:
        pose_bone = bones[joint["name"]]
        rest = pose_bone.bone.matrix_local.to_3x3()
        skinning.append(correctives.matmul3(_rows(pose_bone.matrix.to_3x3()), _rows(rest.transposed())))
    world = correctives.orthonormalised(_rows(armature_obj.matrix_world.to_3x3()))
    identity = _rows(Matrix.Identity(3))
    rotations = []
    for joint, own_skinning in zip(joints, skinning):
        parent = skinning[joint["parent"]] if joint["parent"] >= 0 else identity
        rotations.append(correctives.to_world_axes(world, correctives.own_rotation(parent, own_skinning)))
    return correctives.rows_to_floats(rotations)


# --- drivers ---------------------------------------------------------------------------------------------------------

def _key_path(name):
    return 'key_blocks["%s"].value' % name.replace("\\", "\\\\").replace('"', '\\"')


def _driver_of(shape_keys, name):
    """The driver F-curve of key block `name`'s value, or None."""
    if shape_keys.animation_data is None:
        return None
    return shape_keys.animation_data.drivers.find(_key_path(name))


def corrective_driver(fcurve):
    """What a driver made by _add_driver reads: {"armature", "bone", "axis", "key_twist"}; None when the driver is not
    of that kind (scripted, other variables, other keyframes): the add-on leaves such a driver alone."""
    driver = fcurve.driver
    if driver.type != 'AVERAGE' or len(driver.variables) != 1 or len(fcurve.keyframe_points) != 2 \
            or len(fcurve.modifiers) != 0:
        return None
    variable = driver.variables[0]
    if variable.name != DRIVER_VARIABLE or variable.type != 'TRANSFORMS':
        return None
    target = variable.targets[0]
    axis = target.rotation_mode[-1:]
    if not target.rotation_mode.startswith("SWING_TWIST_") or target.transform_type != "ROT_" + axis:
        return None
    # Blender keeps keyframes sorted by x: a negative key twist comes first
    points = sorted((tuple(p.co) for p in fcurve.keyframe_points), key=lambda co: co[1])
    if points[0] != (0.0, 0.0) or points[1][1] != 1.0:
        return None
    return {"armature": target.id, "bone": target.bone_target, "axis": axis, "key_twist": points[1][0]}


def _add_driver(key_block, armature_obj, bone, axis, key_twist):
    """value = clamp(twist of `bone` about its `axis` / key_twist, 0, 1): an AVERAGE driver of one Transform Channel
    variable (local space, Swing and Twist mode) whose F-curve maps it by keyframes (0, 0) and (key_twist, 1), linear
    with constant extrapolation. No text is evaluated."""
    fcurve = key_block.driver_add("value")
    for modifier in list(fcurve.modifiers):
        fcurve.modifiers.remove(modifier)  # Blender adds a Generator, which would replace the keyframes' mapping
    driver = fcurve.driver
    driver.type = 'AVERAGE'
    while driver.variables:
        driver.variables.remove(driver.variables[0])
    variable = driver.variables.new()
    variable.name = DRIVER_VARIABLE
    variable.type = 'TRANSFORMS'
    target = variable.targets[0]
    target.id = armature_obj
    target.bone_target = bone
    target.transform_space = 'LOCAL_SPACE'
    target.rotation_mode = "SWING_TWIST_" + axis
    target.transform_type = "ROT_" + axis
    while fcurve.keyframe_points:
        fcurve.keyframe_points.remove(fcurve.keyframe_points[0], fast=True)
    fcurve.keyframe_points.add(2)
    for point, co in zip(fcurve.keyframe_points, ((0.0, 0.0), (key_twist, 1.0))):
        point.co = co
        point.interpolation = 'LINEAR'
    fcurve.extrapolation = 'CONSTANT'
    fcurve.update()
    return fcurve


def _record_driver(journal, key_block, armature_obj, bone, axis, key_twist):
    """Drive key_block (see _add_driver). A driver the key already has (the add-on's own: _check_replaceable) is
    set up again in place, keeping its place among the key's drivers (its old settings were journalled with the
    key); a new one is removed on rollback."""
    shape_keys = key_block.id_data
    name = key_block.name
    if _driver_of(shape_keys, name) is None:
        created_animation_data = shape_keys.animation_data is None

        def restore():
            block = shape_keys.key_blocks.get(name)
            if block is not None:
                block.driver_remove("value")
            if created_animation_data and shape_keys.animation_data is not None:
                shape_keys.animation_data_clear()

        journal.record(restore)
    _add_driver(key_block, armature_obj, bone, axis, key_twist)


# --- shape keys ------------------------------------------------------------------------------------------------------

def _coordinates(key_block):
    values = array("f", bytes(len(key_block.data) * 12))
    key_block.data.foreach_get("co", values)
    return values


def _record_key_state(journal, key_block):
    """A shape key about to be overwritten: its positions and settings (and its own kind of driver) are put back on
    rollback."""
    shape_keys = key_block.id_data
    name = key_block.name
    saved = (_coordinates(key_block), key_block.relative_key.name, key_block.value, key_block.slider_min,
             key_block.slider_max, key_block.mute, key_block.vertex_group, key_block.interpolation)
    fcurve = _driver_of(shape_keys, name)
    driver = corrective_driver(fcurve) if fcurve is not None else None

    def restore():
        block = shape_keys.key_blocks[name]
        if driver is not None:
            _add_driver(block, driver["armature"], driver["bone"], driver["axis"], driver["key_twist"])
        else:
            block.driver_remove("value")
        co, relative, value, low, high, mute, group, interpolation = saved
        block.data.foreach_set("co", co)
        block.relative_key = shape_keys.key_blocks[relative]
        block.slider_min, block.slider_max = low, high
        block.value, block.mute, block.vertex_group, block.interpolation = value, mute, group, interpolation

    journal.record(restore)


def _check_replaceable(obj, names):
    """Before any change: a key of the answer may replace a shape key of the same name only when that key is not the
    mesh's Basis and has no driver other than the add-on's own."""
    shape_keys = obj.data.shape_keys
    if shape_keys is None:
        return
    for name in names:
        if name == shape_keys.reference_key.name:
            raise ApplyFailed("'%s' is the Basis of '%s': rename it; nothing was changed" % (name, obj.name))
        if shape_keys.key_blocks.get(name) is None:
            continue
        fcurve = _driver_of(shape_keys, name)
        if fcurve is not None and corrective_driver(fcurve) is None:
            raise ApplyFailed("shape key '%s' of '%s' has a driver AutoRig did not make: rename or remove it; nothing "
                              "was changed" % (name, obj.name))


def _write_key(journal, obj, basis, name, local_offsets, value):
    """Shape key `name` (new, or the existing one overwritten) holding Basis + offsets, relative to the Basis."""
    shape_keys = obj.data.shape_keys
    block = shape_keys.key_blocks.get(name)
    if block is None:
        block = apply._record_new_shape_key(journal, obj, name)
        if block.name != name:
            raise RuntimeError("Blender named the key '%s', not '%s'" % (block.name, name))
    else:
        _record_key_state(journal, block)
    base = _coordinates(basis)
    block.data.foreach_set("co", array("f", [b + o for b, o in zip(base, local_offsets)]))
    block.relative_key = basis
    block.slider_min, block.slider_max = 0.0, 1.0
    block.value = value
    return block


def bake_corrective_keys(meshes, keys, local_offsets, armature_obj):
    """One shape key per corrective key on every mesh, relative to its Basis (created when missing), value 0, driven
    by its bone's rotation (see correctives.driver_channel); a key of the same name is replaced, not duplicated.

    meshes: mesh objects in the order sent; keys: check_correctives_result's keys; local_offsets: per key, per mesh
    array('f') #V*3 in the mesh's own space. Returns the DriverChannel of each key.
    Raises ApplyFailed, with every mesh as it was, when anything fails.
    """
    names = [key["name"] for key in keys]
    for obj in meshes:
        _check_replaceable(obj, names)
    for key in keys:
        if armature_obj.pose.bones.get(key["bone"]) is None:
            raise ApplyFailed("bone '%s' is gone from '%s'; nothing was changed" % (key["bone"], armature_obj.name))
    channels = [correctives.driver_channel(key["axis"], key["angle"]) for key in keys]

    def change(journal):
        for obj_index, obj in enumerate(meshes):
            apply._record_active_shape_key(journal, obj)
            basis = apply._basis_key(journal, obj)
            for key, channel, per_mesh in zip(keys, channels, local_offsets):
                block = _write_key(journal, obj, basis, key["name"], per_mesh[obj_index], 0.0)
                _record_driver(journal, block, armature_obj, key["bone"], channel.axis, channel.key_twist)
            obj.data.update()
        return channels

    return apply._apply_or_roll_back("Pose Correctives", change)


def show_preview(meshes, local_offsets):
    """The preview key (correctives.PREVIEW_KEY) on every mesh: Basis + offsets, value 1, active; replaced when it is
    there. Raises ApplyFailed, with every mesh as it was, when anything fails."""
    for obj in meshes:
        _check_replaceable(obj, [correctives.PREVIEW_KEY])

    def change(journal):
        for obj, offsets in zip(meshes, local_offsets):
            apply._record_active_shape_key(journal, obj)
            basis = apply._basis_key(journal, obj)
            block = _write_key(journal, obj, basis, correctives.PREVIEW_KEY, offsets, 1.0)
            obj.active_shape_key_index = list(obj.data.shape_keys.key_blocks).index(block)
            obj.data.update()
        return len(meshes)

    return apply._apply_or_roll_back("Preview Correctives", change)


def remove_preview(meshes):
    """Remove the preview key from the meshes that have one; returns how many had it."""
    removed = 0
    for obj in meshes:
        shape_keys = obj.data.shape_keys
        block = shape_keys.key_blocks.get(correctives.PREVIEW_KEY) if shape_keys is not None else None
        if block is not None and block != shape_keys.reference_key:
            obj.shape_key_remove(block)
            obj.data.update()
            removed += 1
    return removed


def check_armature(armature_name, bone_names):
    """The armature a job was started for, checked to still exist with the same bones (SceneChanged otherwise)."""
    armature_obj = bpy.data.objects.get(armature_name)
    if armature_obj is None or armature_obj.type != 'ARMATURE':
        raise apply.SceneChanged("armature '%s' is gone; nothing was changed" % armature_name)
    if sorted(b.name for b in armature_obj.data.bones) != sorted(bone_names):
        raise apply.SceneChanged("the bones of '%s' changed while the sidecar worked; nothing was changed"
                                 % armature_name)
    return armature_obj


def local_offsets_of(meshes, offsets):
    """Per mesh, world-space offsets (array('f') #V*3) in the mesh's own space; ApplyFailed when a transform cannot be
    inverted."""
    out = []
    for obj, values in zip(meshes, offsets):
        try:
            out.append(correctives.offsets_to_local(values, _rows(obj.matrix_world.to_3x3())))
        except ValueError as err:
            raise ApplyFailed("the transform of '%s' cannot be inverted (%s); nothing was changed"
                              % (obj.name, err)) from err
    return out
