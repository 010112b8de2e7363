"""Applying a checked result to the scene: the armature, parenting, the Armature modifier and the weights.

Called only after the whole result was checked (messages.check_*_result) and the meshes were found unchanged, so
every failure that can be foreseen happens before the first change; the operator's UNDO flag makes the whole
application one undo step.
"""

import bpy
from mathutils import Vector

from . import messages
from .weights import WEIGHT_STEPS, bucket_weight_values, bucket_weights

__all__ = ["SceneChanged", "find_meshes", "apply_rig", "apply_skin", "write_weights"]

_MIN_BONE_LENGTH = 1e-4


class SceneChanged(messages.AutoRigFailure):
    """The meshes changed while the sidecar worked: nothing is applied."""

    def __init__(self, message):
        super().__init__("SCENE_CHANGED", message)


def find_meshes(names, vertex_counts):
    """The mesh objects a job was started for, checked to still exist with the same vertex counts."""
    meshes = []
    for name, count in zip(names, vertex_counts):
        obj = bpy.data.objects.get(name)
        if obj is None or obj.type != 'MESH':
            raise SceneChanged("mesh '%s' is gone; nothing was changed" % name)
        if len(obj.data.vertices) != count:
            raise SceneChanged("mesh '%s' changed while rigging (%d vertices, %d sent); nothing was changed"
                               % (name, len(obj.data.vertices), count))
        meshes.append(obj)
    return meshes


def write_weights(obj, groups, indices, weights, influences, steps=WEIGHT_STEPS):
    """Write top-k weights into vertex groups in bulk. groups: VertexGroup per joint index (None = leave alone).

    The groups must be empty (weights are ADDed so that a joint repeated in two slots of a vertex sums).
    Returns the number of VertexGroup.add calls made.
    """
    calls = 0
    for joint, weight, vertices in bucket_weight_values(bucket_weights(indices, weights, influences, steps), steps):
        group = groups[joint]
        if group is not None:
            group.add(vertices, weight, 'ADD')
            calls += 1
    return calls


def _clear_group(obj, group):
    group.remove(range(len(obj.data.vertices)))


def _bone_tail(head, tail, fallback_axis):
    """Blender deletes zero-length bones when leaving edit mode: give degenerate ones a tiny length."""
    if (tail - head).length >= _MIN_BONE_LENGTH:
        return tail
    return head + fallback_axis * 0.01


def _move_modifier_first(context, obj, modifier):
    """The Armature modifier must deform the original vertices, before subdivision and the like."""
    if obj.modifiers.find(modifier.name) == 0:
        return
    with context.temp_override(object=obj, active_object=obj):
        bpy.ops.object.modifier_move_to_index(modifier=modifier.name, index=0)


def _unique_name(collection, name):
    if collection.get(name) is None:
        return name
    n = 1
    while collection.get("%s.%03d" % (name, n)) is not None:
        n += 1
    return "%s.%03d" % (name, n)


def apply_rig(context, meshes, result):
    """Create "<mesh>_Armature" from a checked rig result, bind the meshes to it and write their weights.

    meshes: the mesh objects, in the order they were sent; result: messages.check_rig_result's output.
    Returns the armature object.
    """
    joints = result["joints"]
    names = messages.sanitize_bone_names([j["name"] for j in joints])
    up = Vector(result["frame"]["up"]).normalized() if Vector(result["frame"]["up"]).length > 0 else Vector((0, 0, 1))
    base = "%s_Armature" % meshes[0].name
    created, new_groups = [], []
    saved = [(obj, obj.parent, obj.matrix_parent_inverse.copy(), obj.matrix_world.copy()) for obj in meshes]
    try:
        armature = bpy.data.armatures.new(_unique_name(bpy.data.armatures, base))
        created.append(armature)
        arm_obj = bpy.data.objects.new(_unique_name(bpy.data.objects, base), armature)
        created.append(arm_obj)
        collection = meshes[0].users_collection[0] if meshes[0].users_collection else context.scene.collection
        collection.objects.link(arm_obj)
        armature.display_type = 'STICK'
        arm_obj.show_in_front = True

        for obj in context.selected_objects:
            obj.select_set(False)
        context.view_layer.objects.active = arm_obj
        arm_obj.select_set(True)
        bpy.ops.object.mode_set(mode='EDIT')
        edit_bones = []
        for joint, name in zip(joints, names):
            bone = armature.edit_bones.new(name)
            head = Vector(joint["head"])
            bone.head = head
            bone.tail = _bone_tail(head, Vector(joint["tail"]), up)
            bone.roll = joint["roll"]
            if joint["parent"] >= 0:
                bone.parent = edit_bones[joint["parent"]]
            edit_bones.append(bone)
        bpy.ops.object.mode_set(mode='OBJECT')
        if len(armature.bones) != len(joints):
            raise RuntimeError("Blender kept %d of %d bones" % (len(armature.bones), len(joints)))

        for obj, (indices, weights, influences) in zip(meshes, result["weights"]):
            world = obj.matrix_world.copy()
            obj.parent = arm_obj
            obj.matrix_parent_inverse = arm_obj.matrix_world.inverted()
            obj.matrix_world = world
            modifier = obj.modifiers.new(name="Armature", type='ARMATURE')
            modifier.object = arm_obj
            _move_modifier_first(context, obj, modifier)
            groups = []
            for name in names:
                group = obj.vertex_groups.get(name)
                if group is None:
                    group = obj.vertex_groups.new(name=name)
                    new_groups.append((obj, group))
                else:
                    _clear_group(obj, group)
                groups.append(group)
            write_weights(obj, groups, indices, weights, influences)
            obj.select_set(True)
        return arm_obj
    except Exception:
        # Unforeseen failure half-way: take back what was done so the scene is as it was.
        if context.mode != 'OBJECT':
            bpy.ops.object.mode_set(mode='OBJECT')
        for obj, group in reversed(new_groups):
            obj.vertex_groups.remove(group)
        for obj, parent, parent_inverse, world in saved:
            obj.parent = parent
            obj.matrix_parent_inverse = parent_inverse
            obj.matrix_world = world
        for obj in meshes:
            for modifier in [m for m in obj.modifiers if m.type == 'ARMATURE' and m.object in created]:
                obj.modifiers.remove(modifier)
        for item in reversed(created):
            if isinstance(item, bpy.types.Object):
                bpy.data.objects.remove(item)
            else:
                bpy.data.armatures.remove(item)
        raise


def apply_skin(meshes, result, bone_names):
    """Replace the weights of the bones' vertex groups with a checked skin result; locked groups stay as they are.

    bone_names: the names sent, by joint index. Returns the number of groups rewritten.
    """
    rewritten = 0
    for obj, (indices, weights, influences) in zip(meshes, result["weights"]):
        groups = []
        for name in bone_names:
            group = obj.vertex_groups.get(name)
            if group is not None and group.lock_weight:
                groups.append(None)
                continue
            if group is None:
                group = obj.vertex_groups.new(name=name)
            else:
                _clear_group(obj, group)
            groups.append(group)
            rewritten += 1
        write_weights(obj, groups, indices, weights, influences)
    return rewritten
