"""Applying a checked result to the scene: the armature, parenting, the Armature modifier and the weights; for
Apply Latent Pose, a shape key.

Called only after the whole result was checked (messages.check_*_result) and the meshes were found unchanged, so
every failure that can be foreseen happens before the first change; the operator's UNDO flag makes the whole
application one undo step. An unforeseen failure half-way (out of memory, a Blender error) must still leave the scene
exactly as it was, and an operator that fails pushes no undo step to go back to: so every change made here is first
recorded in a Journal with the means to take it back, and a failure rolls the journal back before it is reported
(code APPLY_FAILED).
"""

import bpy
from mathutils import Vector

from . import messages
from .weights import WEIGHT_STEPS, bucket_weight_values, bucket_weights, group_weight_rows

__all__ = ["SceneChanged", "ApplyFailed", "Journal", "find_meshes", "apply_rig", "apply_skin", "write_weights",
           "apply_pose_shape_keys", "apply_pose_shape_key_set"]

_MIN_BONE_LENGTH = 1e-4


class SceneChanged(messages.AutoRigFailure):
    """The meshes changed while the sidecar worked: nothing is applied."""

    def __init__(self, message):
        super().__init__("SCENE_CHANGED", message)


class ApplyFailed(messages.AutoRigFailure):
    """Applying a checked result failed half-way; the changes made so far were taken back."""

    def __init__(self, message):
        super().__init__("APPLY_FAILED", message)


class Journal:
    """The inverse of each change made so far, so that a failure can take them all back (newest first)."""

    def __init__(self):
        self._inverses = []

    def record(self, inverse):
        """inverse: a function of no arguments that undoes one change."""
        self._inverses.append(inverse)

    def roll_back(self):
        """Run every inverse, newest first, even when one fails; returns the failures' messages (empty: restored)."""
        failures = []
        while self._inverses:
            inverse = self._inverses.pop()
            try:
                inverse()
            except Exception as err:  # keep restoring the rest: a partial restore beats none
                failures.append("%s: %s" % (type(err).__name__, err))
        return failures


def _apply_or_roll_back(what, change):
    """Run change(journal); on any exception roll the journal back and raise ApplyFailed saying so."""
    journal = Journal()
    try:
        return change(journal)
    except Exception as err:
        failures = journal.roll_back()
        if failures:
            raise ApplyFailed("%s failed (%s: %s) and the scene could not be fully restored (%s): press Ctrl+Z"
                              % (what, type(err).__name__, err, "; ".join(failures))) from err
        raise ApplyFailed("%s failed (%s: %s); nothing was changed" % (what, type(err).__name__, err)) from err


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


# --- recorded changes ------------------------------------------------------------------------------------------------

def _record_selection(context, journal):
    """Remember which objects are selected and which is active, to restore both."""
    view_layer = context.view_layer
    selected = [obj.name for obj in view_layer.objects if obj.select_get()]
    active = view_layer.objects.active.name if view_layer.objects.active else None

    def restore():
        for obj in view_layer.objects:
            obj.select_set(obj.name in selected)
        view_layer.objects.active = bpy.data.objects.get(active) if active else None

    journal.record(restore)


def _record_new_datablock(journal, collection, datablock):
    """A datablock this application created (an armature, its object): removed on rollback."""
    journal.record(lambda: collection.remove(datablock))
    return datablock


def _record_transform(journal, obj):
    """Parenting and transform channels of an object (exact values: re-deriving them from matrix_world is lossy)."""
    saved = (obj.parent, obj.parent_type, obj.parent_bone, obj.matrix_parent_inverse.copy(), obj.location.copy(),
             obj.rotation_mode, obj.rotation_euler.copy(), obj.rotation_quaternion.copy(),
             tuple(obj.rotation_axis_angle), obj.scale.copy())

    def restore():
        (obj.parent, obj.parent_type, obj.parent_bone, obj.matrix_parent_inverse, obj.location, obj.rotation_mode,
         obj.rotation_euler, obj.rotation_quaternion, obj.rotation_axis_angle, obj.scale) = saved

    journal.record(restore)


def _record_new_modifier(journal, obj, modifier_name):
    """A modifier about to be added: removed on rollback, and the previously active modifier made active again."""
    previous_active = obj.modifiers.active.name if obj.modifiers.active else None

    def restore():
        modifier = obj.modifiers.get(modifier_name)
        if modifier is not None:
            obj.modifiers.remove(modifier)
        if previous_active is not None and obj.modifiers.get(previous_active) is not None:
            obj.modifiers.active = obj.modifiers[previous_active]

    journal.record(restore)


def _record_active_group(journal, obj):
    index = obj.vertex_groups.active_index

    def restore():
        obj.vertex_groups.active_index = index

    journal.record(restore)


def _record_new_group(journal, obj, name):
    """Create vertex group `name`; removed on rollback."""
    group = obj.vertex_groups.new(name=name)
    created = group.name

    def restore():
        found = obj.vertex_groups.get(created)
        if found is not None:
            obj.vertex_groups.remove(found)

    journal.record(restore)
    return group


def _record_cleared_groups(journal, obj, groups):
    """Empty existing vertex groups, keeping their weights to write back on rollback (one pass over the vertices:
    about 0.6 s at 300k vertices with 4 weights each, paid back by removing only the members)."""
    if not groups:
        return
    rows = group_weight_rows(([(g.group, g.weight) for g in v.groups] for v in obj.data.vertices),
                             [g.index for g in groups])
    names = {g.index: g.name for g in groups}
    all_vertices = range(len(obj.data.vertices))

    def restore():
        for index, (vertices, weights) in rows.items():
            group = obj.vertex_groups[names[index]]
            group.remove(all_vertices)
            by_weight = {}
            for vertex, weight in zip(vertices, weights):
                by_weight.setdefault(weight, []).append(vertex)
            for weight, members in by_weight.items():
                group.add(members, weight, 'REPLACE')

    journal.record(restore)
    for group in groups:
        group.remove(rows[group.index][0])  # only the members: far fewer than all vertices on a rigged character


def _bone_groups(journal, obj, names, keep_locked):
    """The vertex group for each bone name (created when missing, emptied when present), or None for a locked group
    when keep_locked. Every change is journalled."""
    _record_active_group(journal, obj)
    groups, to_clear = [], []
    for name in names:
        group = obj.vertex_groups.get(name)
        if group is not None and keep_locked and group.lock_weight:
            groups.append(None)
        elif group is not None:
            to_clear.append(group)
            groups.append(group)
        else:
            groups.append(_record_new_group(journal, obj, name))
    _record_cleared_groups(journal, obj, to_clear)
    return groups


# --- rig -------------------------------------------------------------------------------------------------------------

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


def _up_axis(frame):
    up = Vector(frame["up"])
    return up.normalized() if up.length > 0 else Vector((0.0, 0.0, 1.0))


def _build_armature(context, journal, meshes, joints, up):
    """Create the armature object "<first mesh>_Armature" with one bone per joint; returns the object."""
    base = "%s_Armature" % meshes[0].name
    armature = _record_new_datablock(journal, bpy.data.armatures,
                                     bpy.data.armatures.new(_unique_name(bpy.data.armatures, base)))
    arm_obj = _record_new_datablock(journal, bpy.data.objects,
                                    bpy.data.objects.new(_unique_name(bpy.data.objects, base), armature))
    collection = meshes[0].users_collection[0] if meshes[0].users_collection else context.scene.collection
    collection.objects.link(arm_obj)
    armature.display_type = 'STICK'
    arm_obj.show_in_front = True

    for obj in context.selected_objects:
        obj.select_set(False)
    context.view_layer.objects.active = arm_obj
    arm_obj.select_set(True)
    journal.record(lambda: context.mode != 'OBJECT' and bpy.ops.object.mode_set(mode='OBJECT'))
    bpy.ops.object.mode_set(mode='EDIT')
    edit_bones = []
    for joint in joints:
        bone = armature.edit_bones.new(joint["name"])
        head = Vector(joint["head"])
        bone.head = head
        bone.tail = _bone_tail(head, Vector(joint["tail"]), up)
        bone.roll = joint["roll"]
        if joint["parent"] >= 0:
            bone.parent = edit_bones[joint["parent"]]
        edit_bones.append(bone)
    bpy.ops.object.mode_set(mode='OBJECT')
    if [b.name for b in armature.bones] != [j["name"] for j in joints]:
        raise RuntimeError("Blender kept %d of %d bones, or renamed some" % (len(armature.bones), len(joints)))
    return arm_obj


def _bind_mesh(context, journal, obj, arm_obj):
    """Parent a mesh to the armature (keeping its world placement) and put an Armature modifier first."""
    _record_transform(journal, obj)
    world = obj.matrix_world.copy()
    obj.parent = arm_obj
    obj.parent_type = 'OBJECT'
    obj.matrix_parent_inverse = arm_obj.matrix_world.inverted()
    obj.matrix_world = world
    name = _unique_name(obj.modifiers, "Armature")
    _record_new_modifier(journal, obj, name)
    modifier = obj.modifiers.new(name=name, type='ARMATURE')
    modifier.object = arm_obj
    _move_modifier_first(context, obj, modifier)


def apply_rig(context, meshes, result):
    """Create "<mesh>_Armature" from a checked rig result, bind the meshes to it and write their weights.

    meshes: the mesh objects, in the order they were sent; result: messages.check_rig_result's output (bone names
    already checked to be valid, unique Blender names). Returns the armature object.
    Raises ApplyFailed, with the scene as it was, when anything fails half-way.
    """
    joints = result["joints"]
    names = [j["name"] for j in joints]

    def change(journal):
        _record_selection(context, journal)
        arm_obj = _build_armature(context, journal, meshes, joints, _up_axis(result["frame"]))
        for obj, (indices, weights, influences) in zip(meshes, result["weights"]):
            _bind_mesh(context, journal, obj, arm_obj)
            write_weights(obj, _bone_groups(journal, obj, names, keep_locked=False), indices, weights, influences)
            obj.select_set(True)
        return arm_obj

    return _apply_or_roll_back("Auto Rig", change)


def apply_skin(meshes, result, bone_names):
    """Replace the weights of the bones' vertex groups with a checked skin result; locked groups stay as they are.

    bone_names: the names sent, by joint index. Returns the number of groups rewritten.
    Raises ApplyFailed, with every group and weight as it was, when anything fails half-way.
    """

    def change(journal):
        rewritten = 0
        for obj, (indices, weights, influences) in zip(meshes, result["weights"]):
            groups = _bone_groups(journal, obj, bone_names, keep_locked=True)
            rewritten += sum(1 for g in groups if g is not None)
            write_weights(obj, groups, indices, weights, influences)
        return rewritten

    return _apply_or_roll_back("Re-skin", change)


# --- latent pose -----------------------------------------------------------------------------------------------------

def _record_active_shape_key(journal, obj):
    index = obj.active_shape_key_index

    def restore():
        obj.active_shape_key_index = index

    journal.record(restore)


def _basis_key(journal, obj):
    """The mesh's reference shape key; a "Basis" holding the mesh as it is is created (and journalled) when the mesh
    has no shape keys yet."""
    if obj.data.shape_keys is not None:
        return obj.data.shape_keys.reference_key
    basis = obj.shape_key_add(name="Basis", from_mix=False)
    # Every key of the mesh is then ours: clearing them all restores a mesh without shape keys exactly.
    journal.record(lambda: obj.shape_key_clear())
    return basis


def _record_new_shape_key(journal, obj, name):
    """Add shape key `name` (Blender adds .001 when the name is taken); removed on rollback. Returns it."""
    key = obj.shape_key_add(name=name, from_mix=False)
    created = key.name

    def restore():
        keys = obj.data.shape_keys
        found = keys.key_blocks.get(created) if keys is not None else None
        if found is not None:
            obj.shape_key_remove(found)

    journal.record(restore)
    return key


def apply_pose_shape_keys(meshes, local_positions, name):
    """Add a shape key `name` to each mesh, relative to its Basis (created when missing), holding the posed
    positions, at value 1, and make it the active key.

    meshes: the mesh objects, in the order they were sent; local_positions: per mesh, array('f') #V*3 in the object's
    own (local) space. Returns the shape keys' names (Blender may have added a suffix).
    Raises ApplyFailed, with every mesh as it was, when anything fails half-way.
    """

    def change(journal):
        names = []
        for obj, positions in zip(meshes, local_positions):
            key = _add_pose_key(journal, obj, positions, name, 1.0)
            obj.active_shape_key_index = list(obj.data.shape_keys.key_blocks).index(key)
            obj.data.update()
            names.append(key.name)
        return names

    return _apply_or_roll_back("Apply Latent Pose", change)


def apply_pose_shape_key_set(meshes, keys):
    """Add a shape key per pose to each mesh, as apply_pose_shape_keys does but at value 0 (a set of poses to mix
    with the sliders), all in one change: when anything fails half-way every mesh is as it was (ApplyFailed).

    meshes: the mesh objects, in the order they were sent; keys: [(name, per mesh array('f') #V*3 in the object's
    local space)], in the order they are added. Returns each key's name on the first mesh (Blender may add a suffix).
    """

    def change(journal):
        names = []
        for name, local_positions in keys:
            added = [_add_pose_key(journal, obj, positions, name, 0.0)
                     for obj, positions in zip(meshes, local_positions)]
            names.append(added[0].name)
        for obj in meshes:
            obj.data.update()
        return names

    return _apply_or_roll_back("Apply All Poses", change)


def _add_pose_key(journal, obj, positions, name, value):
    """A new shape key `name` on obj relative to its Basis (made when missing), holding `positions`, at `value`; the
    active key index journalled first. Returns the key."""
    _record_active_shape_key(journal, obj)
    basis = _basis_key(journal, obj)
    key = _record_new_shape_key(journal, obj, name)
    key.relative_key = basis
    key.data.foreach_set("co", positions)
    key.value = value
    return key
