"""End-to-end test inside Blender (background): install the add-on zip, strip a real character's rig, Auto Rig it
against the real sidecar (started by the add-on), pose it, Re-skin it, undo, and fail cleanly on a cube.

Run by test/blender-e2e.test.ts:
  blender -b --factory-startup --python test/blender/e2e.py -- --zip Z --node N --entry E --character C
Prints one line `AUTORIG_E2E {json}` with every measured fact; the vitest test asserts on them.
"""

import math
import os
import sys
import time

import bpy
from mathutils import Matrix, Vector

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bare_character import import_gltf_alone, strip_rig  # noqa: E402
from script_run import (evaluated_positions, install_addon as install_addon_zip, run_and_report,  # noqa: E402
                        script_args, step_logger)

MIXAMO = ["Hips", "Spine", "Spine1", "Spine2", "Neck", "Head", "HeadTop_End", "LeftShoulder", "LeftArm",
          "LeftForeArm", "LeftHand", "RightShoulder", "RightArm", "RightForeArm", "RightHand", "LeftUpLeg", "LeftLeg",
          "LeftFoot", "LeftToeBase", "RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"]
PARENT = {"Spine": "Hips", "Spine1": "Spine", "Spine2": "Spine1", "Neck": "Spine2", "Head": "Neck",
          "HeadTop_End": "Head", "LeftShoulder": "Spine2", "LeftArm": "LeftShoulder", "LeftForeArm": "LeftArm",
          "LeftHand": "LeftForeArm", "RightShoulder": "Spine2", "RightArm": "RightShoulder",
          "RightForeArm": "RightArm", "RightHand": "RightForeArm", "LeftUpLeg": "Hips", "LeftLeg": "LeftUpLeg",
          "LeftFoot": "LeftLeg", "LeftToeBase": "LeftFoot", "RightUpLeg": "Hips", "RightLeg": "RightUpLeg",
          "RightFoot": "RightLeg", "RightToeBase": "RightFoot"}
P = "mixamorig:"

results = {"steps": []}


step = step_logger(results, "e2e")


def install_addon(args):
    step("install")
    install_addon_zip(args.zip, args.node, args.entry)
    results["operators_registered"] = hasattr(bpy.ops.autorig, "auto_rig") and hasattr(bpy.ops.autorig, "reskin")
    results["panel_registered"] = hasattr(bpy.types, "AUTORIG_PT_main")


def import_bare_character(path):
    """Import a rigged glTF and strip its rig: the mesh keeps its bind-pose shape and world placement."""
    step("import")
    import_gltf_alone(path)
    meshes = [o for o in bpy.data.objects if o.type == 'MESH']
    # The artist's rig says where the character's own left hand is: remember it before stripping.
    for arm in [o for o in bpy.data.objects if o.type == 'ARMATURE']:
        bone = arm.data.bones.get(P + "LeftHand")
        if bone is not None:
            results["artist_left_hand"] = list(arm.matrix_world @ bone.head_local)
    for obj in meshes:
        strip_rig(obj)
    for obj in [o for o in bpy.data.objects if o.type != 'MESH']:
        bpy.data.objects.remove(obj)
    for arm in list(bpy.data.armatures):
        bpy.data.armatures.remove(arm)
    bpy.context.view_layer.update()
    lows, highs = [math.inf] * 3, [-math.inf] * 3
    for obj in meshes:
        for corner in obj.bound_box:
            w = obj.matrix_world @ Vector(corner)
            lows = [min(a, b) for a, b in zip(lows, w)]
            highs = [max(a, b) for a, b in zip(highs, w)]
    results["bare"] = {"meshes": [o.name for o in meshes], "vertices": sum(len(o.data.vertices) for o in meshes),
                       "size": [h - l for h, l in zip(highs, lows)]}
    return meshes


def select_only(objects):
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    bpy.context.view_layer.objects.active = objects[0]


def snapshot():
    """What 'the scene is unchanged' means here: objects, their parents, transforms, modifiers, groups, weights."""
    state = {}
    for obj in bpy.data.objects:
        entry = {"type": obj.type, "parent": obj.parent.name if obj.parent else None,
                 "matrix": [round(v, 6) for row in obj.matrix_world for v in row],
                 "modifiers": [m.type for m in obj.modifiers] if obj.type == 'MESH' else [],
                 "groups": [g.name for g in obj.vertex_groups] if obj.type == 'MESH' else []}
        if obj.type == 'MESH':
            entry["weights"] = round(sum(g.weight for v in obj.data.vertices for g in v.groups), 4)
        state[obj.name] = entry
    state["_armatures"] = sorted(a.name for a in bpy.data.armatures)
    return state


def run_operator(op, label):
    """Run an operator (execute path); returns (finished, error message or None, seconds).

    In background mode Blender pushes no undo step when an operator finishes (only explicit ed.undo_push does;
    checked here: an UNDO operator run from a script leaves ed.undo with nothing to undo). So, after a finished
    operator, push the step the UI would push (named like the operator). Nested operators inside an UNDO operator
    never push their own step (Blender counts op_undo_depth), so the operator's changes all land in this one step.
    """
    start = time.monotonic()
    try:
        out = op()
        finished = 'FINISHED' in out
        if finished:
            bpy.ops.ed.undo_push(message=label)
        return finished, None, time.monotonic() - start
    except RuntimeError as err:
        return False, str(err), time.monotonic() - start


def group_weights(obj, name):
    index = obj.vertex_groups[name].index
    weights = [0.0] * len(obj.data.vertices)
    for v in obj.data.vertices:
        for g in v.groups:
            if g.group == index:
                weights[v.index] = g.weight
    return weights


def segment_distance(p, a, b):
    ab = b - a
    t = max(0.0, min(1.0, (p - a).dot(ab) / max(ab.dot(ab), 1e-12)))
    return (p - (a + ab * t)).length


def check_rig(mesh, armature_name):
    step("check rig")
    arm = bpy.data.objects.get(armature_name)
    out = {"armature_found": arm is not None}
    if arm is None:
        return out
    bones = arm.data.bones
    out["bone_names"] = [b.name for b in bones]
    out["bone_count"] = len(bones)
    out["parents_ok"] = all(
        (bones[P + n].parent.name if bones[P + n].parent else None) == (P + PARENT[n] if n in PARENT else None)
        for n in MIXAMO if P + n in bones)
    out["armature_identity"] = arm.matrix_world == Matrix.Identity(4)
    out["mesh_parent"] = mesh.parent.name if mesh.parent else None
    modifiers = [m for m in mesh.modifiers if m.type == 'ARMATURE']
    out["armature_modifier"] = len(modifiers) == 1 and modifiers[0].object == arm
    out["modifier_first"] = mesh.modifiers[0].type == 'ARMATURE' if len(mesh.modifiers) else False
    out["groups_are_bones"] = sorted(g.name for g in mesh.vertex_groups) == sorted(b.name for b in bones)
    unweighted = sum(1 for v in mesh.data.vertices if sum(g.weight for g in v.groups) < 1e-6)
    out["unweighted_vertices"] = unweighted
    sums = [sum(g.weight for g in v.groups) for v in mesh.data.vertices]
    out["weight_sum_range"] = [min(sums), max(sums)]
    # left = the character's left: the LeftHand bone's side
    if P + "LeftHand" in bones:
        out["left_hand"] = list(arm.matrix_world @ bones[P + "LeftHand"].head_local)
        out["right_hand"] = list(arm.matrix_world @ bones[P + "RightHand"].head_local)
    return out


def pose_forearm(mesh, arm):
    """Rotate the left forearm 60 degrees: left-hand vertices must move, right-hand ones must not."""
    step("pose")
    bones = arm.data.bones
    world = arm.matrix_world

    def near(name, radius):
        bone = bones[name]
        a, b = world @ bone.head_local, world @ bone.tail_local
        return [i for i, v in enumerate(mesh.data.vertices)
                if segment_distance(mesh.matrix_world @ v.co, a, b) < radius]

    height = results["bare"]["size"][2] if results["bare"]["size"][2] > 0 else 1.0
    left_hand = near(P + "LeftHand", 0.04 * height)
    right_hand = near(P + "RightHand", 0.04 * height)
    before = evaluated_positions(mesh)
    pose_bone = arm.pose.bones[P + "LeftForeArm"]
    pose_bone.rotation_mode = 'XYZ'
    pose_bone.rotation_euler = (0.0, 0.0, math.radians(60))
    bpy.context.view_layer.update()
    after = evaluated_positions(mesh)
    pose_bone.rotation_euler = (0.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    moved = lambda ids: [(after[i] - before[i]).length for i in ids]  # noqa: E731
    left, right = moved(left_hand), moved(right_hand)
    return {"left_hand_vertices": len(left_hand), "right_hand_vertices": len(right_hand),
            "left_hand_min_move": min(left) if left else None, "right_hand_max_move": max(right) if right else None,
            "height": height}


def main():
    args = script_args()
    t0 = time.monotonic()
    install_addon(args)
    meshes = import_bare_character(args.character)
    mesh_name = meshes[0].name
    armature_name = mesh_name + "_Armature"
    select_only(meshes)

    # --- one undo step: undo right after Auto Rig restores the bare scene ---
    bpy.ops.ed.undo_push(message="before Auto Rig")
    bare = snapshot()
    ok, error, seconds = run_operator(bpy.ops.autorig.auto_rig, "Auto Rig")
    results["auto_rig"] = {"finished": ok, "error": error, "seconds": seconds}
    if not ok:
        return
    results["rigged_differs"] = snapshot() != bare
    step("undo auto rig")
    try:
        bpy.ops.ed.undo()
        results["undo"] = {"ran": True, "restored": snapshot() == bare,
                           "armature_gone": bpy.data.objects.get(armature_name) is None}
    except RuntimeError as err:
        results["undo"] = {"ran": False, "error": str(err)}
    results["undo_steps_setting"] = bpy.context.preferences.edit.undo_steps

    # --- rig again (the undo may have restored the bare mesh) and check it ---
    if bpy.data.objects.get(armature_name) is None:
        mesh = bpy.data.objects[mesh_name]
        select_only([mesh])
        ok, error, seconds = run_operator(bpy.ops.autorig.auto_rig, "Auto Rig")
        results["auto_rig_again"] = {"finished": ok, "error": error, "seconds": seconds}
    mesh = bpy.data.objects[mesh_name]
    results["rig"] = check_rig(mesh, armature_name)
    arm = bpy.data.objects.get(armature_name)
    if arm is None:
        return
    results["pose"] = pose_forearm(mesh, arm)

    # --- re-skin: move the left elbow, lock the head group, re-skin; weights follow the bone, the lock holds ---
    step("reskin")
    forearm_before = group_weights(mesh, P + "LeftForeArm")
    head_before = group_weights(mesh, P + "Head")
    mesh.vertex_groups[P + "Head"].lock_weight = True
    select_only([arm])
    bpy.ops.object.mode_set(mode='EDIT')
    edit_bone = arm.data.edit_bones[P + "LeftForeArm"]
    direction = (edit_bone.tail - edit_bone.head)
    shift = direction * 0.35
    edit_bone.head = edit_bone.head + shift  # the elbow moves toward the hand (connected parent tail follows)
    arm.data.edit_bones[P + "LeftArm"].tail = edit_bone.head
    bpy.ops.object.mode_set(mode='OBJECT')
    select_only([mesh])
    bpy.ops.ed.undo_push(message="before Re-skin")
    ok, error, seconds = run_operator(bpy.ops.autorig.reskin, "Re-skin")
    forearm_after = group_weights(mesh, P + "LeftForeArm")
    head_after = group_weights(mesh, P + "Head")
    changed = sum(1 for a, b in zip(forearm_before, forearm_after) if abs(a - b) > 0.05)
    results["reskin"] = {"finished": ok, "error": error, "seconds": seconds, "forearm_vertices_changed": changed,
                         "locked_head_max_change": max(abs(a - b) for a, b in zip(head_before, head_after)),
                         "head_weight_total": sum(head_before)}
    step("undo reskin")
    try:
        bpy.ops.ed.undo()
        mesh = bpy.data.objects[mesh_name]
        restored = group_weights(mesh, P + "LeftForeArm")
        results["reskin_undo"] = {"ran": True,
                                  "max_difference_to_before": max(abs(a - b) for a, b in zip(restored, forearm_before))}
    except RuntimeError as err:
        results["reskin_undo"] = {"ran": False, "error": str(err)}

    # --- a job that fails leaves the scene as it was ---
    step("cube")
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(5.0, 0.0, 0.5))
    cube = bpy.context.active_object
    select_only([cube])
    before = snapshot()
    ok, error, seconds = run_operator(bpy.ops.autorig.auto_rig, "Auto Rig")
    results["cube"] = {"finished": ok, "error": error, "seconds": seconds, "unchanged": snapshot() == before}

    # --- Facing set by the user (Adjust Last Operation): a bare copy rigged facing +Y has its left on the other side ---
    step("facing")
    copy = bpy.data.objects.new("FacingCopy", mesh.data.copy())
    copy.matrix_world = mesh.matrix_world.copy()
    bpy.context.scene.collection.objects.link(copy)
    select_only([copy])
    ok, error, seconds = run_operator(lambda: bpy.ops.autorig.auto_rig(facing='POS_Y'), "Auto Rig")
    results["facing"] = {"finished": ok, "error": error}
    if ok:
        results["facing"].update(check_rig(copy, "FacingCopy_Armature"))

    results["total_seconds"] = time.monotonic() - t0


run_and_report(main, results, "AUTORIG_E2E")
