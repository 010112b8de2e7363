"""Pose Correctives in real Blender (background): the add-on zip installed into a clean Blender, a real character
stripped of its rig, moved, turned and scaled as an object (world and local space differ), Auto Rigged by the real
sidecar, then:
  - Preview Correctives with the left elbow bent: a temporary AUTORIG_preview key at value 1 whose deformation is
    compared with Blender's own dual-quaternion skinning (the Armature modifier's Preserve Volume); Clear Preview;
  - Pose Correctives: one shape key per key pose, named <bone>_<pose>, relative to the Basis, value 0, each driven by
    its bone; the left elbow turned to its key's axis and angle drives that key to ~1 (rest ~0, half way ~0.5); the
    evaluated mesh at the key pose differs from plain LBS near the elbow (nowhere far from it) and comes close to
    Blender's dual-quaternion skinning; one undo removes every key exactly; redo brings them back;
  - running it again replaces the keys (no duplicates); a failure injected half way leaves the scene as it was;
  - the panel's Pose Correctives section; poll refuses a mesh without an Armature modifier.

Run by test/blender-correctives.test.ts:
  blender -b --factory-startup --python test/blender/correctives.py -- --zip Z --node N --entry E --character C
Prints one line `AUTORIG_CORRECTIVES {json}` with every measured fact; the vitest test asserts on them.
"""

import math
import os
import sys
import time

import bpy
from mathutils import Euler, Matrix, Quaternion, Vector

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scene_digest import digest_differences, scene_digest  # noqa: E402
from bare_character import import_gltf_alone, strip_rig  # noqa: E402
from script_run import (draw_autorig_panel, evaluated_positions, install_addon as install_addon_zip,  # noqa: E402
                        run_and_report, run_operator, script_args, select_only, step_logger)

P = "mixamorig:"
ELBOW_KEY = P + "LeftForeArm_elbowBend"
results = {"steps": []}


step = step_logger(results, "correctives")


def install_addon(args):
    step("install")
    install_addon_zip(args.zip, args.node, args.entry)
    results["registered"] = {
        "bake": hasattr(bpy.ops.autorig, "pose_correctives"),
        "preview": hasattr(bpy.ops.autorig, "preview_correctives"),
        "clear": hasattr(bpy.ops.autorig, "clear_correctives_preview"),
        "settings": hasattr(bpy.context.scene, "autorig_correctives"),
        "undo_flags": ['UNDO' in getattr(bpy.types, c).bl_options for c in (
            "AUTORIG_OT_pose_correctives", "AUTORIG_OT_preview_correctives", "AUTORIG_OT_clear_correctives_preview")],
    }


def import_bare_character(path):
    """Import a rigged glTF, strip its rig (the mesh keeps its bind-pose shape), then move, turn and scale the mesh
    as an object: a quarter turn about up keeps it standing along the axes (the sidecar's canonical frame wants that)
    while world and local space differ."""
    step("import")
    import_gltf_alone(path)
    meshes = [o for o in bpy.data.objects if o.type == 'MESH']
    for obj in meshes:
        strip_rig(obj)
    for obj in [o for o in bpy.data.objects if o.type != 'MESH']:
        bpy.data.objects.remove(obj)
    for arm in list(bpy.data.armatures):
        bpy.data.armatures.remove(arm)
    mesh = max(meshes, key=lambda o: len(o.data.vertices))
    for obj in meshes:
        if obj != mesh:
            bpy.data.objects.remove(obj)
    mesh.matrix_world = (Matrix.Translation((0.5, -0.25, 0.1)) @ Euler((0.0, 0.0, math.radians(90))).to_matrix()
                         .to_4x4() @ Matrix.Scale(1.3, 4) @ mesh.matrix_world)
    bpy.context.view_layer.update()
    results["character"] = {"mesh": mesh.name, "vertices": len(mesh.data.vertices),
                            "world_is_local": mesh.matrix_world == Matrix.Identity(4)}
    return mesh


def group_members(mesh, bone_names, threshold):
    """Vertices whose summed weight of the named bones' groups exceeds threshold."""
    wanted = {mesh.vertex_groups[n].index for n in bone_names if n in mesh.vertex_groups}
    return [v.index for v in mesh.data.vertices if sum(g.weight for g in v.groups if g.group in wanted) > threshold]


def distances(a, b, ids):
    return [(a[i] - b[i]).length for i in ids]


def stats(values):
    return {"max": max(values) if values else None, "mean": sum(values) / len(values) if values else None}


def pose_bone_to(arm, bone, axis, angle):
    pose_bone = arm.pose.bones[bone]
    pose_bone.rotation_mode = 'QUATERNION'
    pose_bone.rotation_quaternion = Quaternion(Vector(axis), angle) if angle else Quaternion()
    bpy.context.view_layer.update()


def set_preserve_volume(mesh, on):
    for modifier in mesh.modifiers:
        if modifier.type == 'ARMATURE':
            modifier.use_deform_preserve_volume = on


def draw_panel():
    drawn = draw_autorig_panel()
    return {"labels": drawn["labels"], "props": drawn["props"],
            "operators": [idname for idname, _ in drawn["operators"]],
            "corrective_buttons": {idname: button for idname, button in drawn["operators"] if "correctives" in idname}}


def capture_checked_results():
    """Keep what the add-on checked from each correctives answer (the keys' bones, axes and angles): the test poses
    the bone by them, independently of the drivers the add-on made."""
    from autorig import messages

    captured = []
    original = messages.check_correctives_result

    def capture(payload, *args):
        checked = original(payload, *args)
        captured.append(checked)
        return checked

    messages.check_correctives_result = capture
    return captured


def key_facts(mesh):
    keys = mesh.data.shape_keys
    if keys is None:
        return {"keys": []}
    drivers = {}
    if keys.animation_data is not None:
        for fcurve in keys.animation_data.drivers:
            variable = fcurve.driver.variables[0] if len(fcurve.driver.variables) else None
            target = variable.targets[0] if variable is not None else None
            drivers[fcurve.data_path] = {
                "type": fcurve.driver.type, "bone": target.bone_target if target else None,
                "rotation_mode": target.rotation_mode if target else None,
                "space": target.transform_space if target else None,
                "keyframes": [list(p.co) for p in fcurve.keyframe_points]}
    return {"keys": [b.name for b in keys.key_blocks], "values": [b.value for b in keys.key_blocks],
            "relative_to": [b.relative_key.name for b in keys.key_blocks], "reference": keys.reference_key.name,
            "drivers": drivers}


def main():
    args = script_args()
    t0 = time.monotonic()
    install_addon(args)
    mesh = import_bare_character(args.character)
    mesh_name = mesh.name
    select_only(mesh)
    results["poll_unrigged"] = bpy.ops.autorig.pose_correctives.poll()

    step("auto rig")
    finished, error, seconds = run_operator(bpy.ops.autorig.auto_rig)
    results["auto_rig"] = {"finished": finished, "error": error, "seconds": seconds}
    if not finished:
        return
    mesh = bpy.data.objects[mesh_name]
    arm = bpy.data.objects[mesh_name + "_Armature"]
    arm_name = arm.name
    select_only(mesh)
    results["poll"] = bpy.ops.autorig.pose_correctives.poll()
    results["panel"] = draw_panel()
    elbow = group_members(mesh, [P + "LeftForeArm", P + "LeftArm"], 0.3)
    far = group_members(mesh, [P + "Head", P + "RightLeg", P + "RightFoot"], 0.5)
    results["regions"] = {"elbow": len(elbow), "far": len(far)}
    rest = evaluated_positions(mesh)

    # --- preview: the elbow bent 60 deg about the bone's x: the preview key brings LBS near Blender's DQS ---
    step("preview")
    pose_bone_to(arm, P + "LeftForeArm", (1.0, 0.0, 0.0), math.radians(60))
    lbs = evaluated_positions(mesh)
    set_preserve_volume(mesh, True)
    dqs = evaluated_positions(mesh)
    set_preserve_volume(mesh, False)
    bpy.ops.ed.undo_push(message="posed")
    finished, error, seconds = run_operator(bpy.ops.autorig.preview_correctives, method='DUAL_QUATERNION')
    mesh = bpy.data.objects[mesh_name]
    preview = {"finished": finished, "error": error, "seconds": seconds}
    keys = mesh.data.shape_keys
    if finished and keys is not None and keys.key_blocks.get("AUTORIG_preview") is not None:
        block = keys.key_blocks["AUTORIG_preview"]
        shown = evaluated_positions(mesh)
        preview.update({"keys": [b.name for b in keys.key_blocks], "value": block.value,
                        "relative_to": block.relative_key.name,
                        "lbs_to_dqs": stats(distances(lbs, dqs, elbow)),
                        "preview_to_dqs": stats(distances(shown, dqs, elbow)),
                        "preview_far_moved": stats(distances(shown, lbs, far))})
    step("preview again")
    finished, error, _ = run_operator(bpy.ops.autorig.preview_correctives, method='DUAL_QUATERNION')
    keys = bpy.data.objects[mesh_name].data.shape_keys
    preview["again"] = {"finished": finished, "error": error, "keys": [b.name for b in keys.key_blocks] if keys else []}
    step("clear preview")
    finished, error, _ = run_operator(bpy.ops.autorig.clear_correctives_preview)
    keys = bpy.data.objects[mesh_name].data.shape_keys
    preview["cleared"] = {"finished": finished, "error": error,
                          "keys": [b.name for b in keys.key_blocks] if keys else []}
    results["preview"] = preview

    # --- Pose Correctives at rest: one undo step ---
    step("bake")
    arm = bpy.data.objects[arm_name]
    pose_bone_to(arm, P + "LeftForeArm", (1.0, 0.0, 0.0), 0.0)
    mesh = bpy.data.objects[mesh_name]
    select_only(mesh)
    # the Basis was made by the preview: start the bake from a mesh without keys (the undo below must remove all)
    mesh.shape_key_clear()
    bpy.ops.ed.undo_push(message="before bake")
    captured = capture_checked_results()
    before = scene_digest()
    finished, error, seconds = run_operator(bpy.ops.autorig.pose_correctives, method='DUAL_QUATERNION')
    after = scene_digest()
    mesh = bpy.data.objects[mesh_name]
    arm = bpy.data.objects[arm_name]
    bake = {"finished": finished, "error": error, "seconds": seconds}
    bake.update(key_facts(mesh))
    results["bake"] = bake
    if not finished or not captured:
        return

    # --- one undo removes every key (the scene as before the bake), redo brings them back ---
    step("undo")
    bpy.ops.ed.undo()
    undone = digest_differences(before, scene_digest())
    mesh = bpy.data.objects[mesh_name]
    undo = {"restores": not undone, "differences": undone[:8], "shape_keys_after_undo": mesh.data.shape_keys is not None}
    bpy.ops.ed.redo()
    redone = digest_differences(after, scene_digest())
    undo.update({"redo_restores": not redone, "redo_differences": redone[:8]})
    results["undo"] = undo

    mesh = bpy.data.objects[mesh_name]
    arm = bpy.data.objects[arm_name]
    answer = {k["name"]: k for k in captured[-1]["keys"]}
    results["answer"] = {name: {"bone": k["bone"], "pose": k["pose"], "axis": list(k["axis"]), "angle": k["angle"]}
                         for name, k in answer.items()}
    if ELBOW_KEY not in answer:
        return

    # --- the elbow key follows the bone: 0 at rest, ~0.5 half way, ~1 at the key pose ---
    step("drive")
    key = answer[ELBOW_KEY]
    block = mesh.data.shape_keys.key_blocks[ELBOW_KEY]
    drive = {}
    for label, fraction in (("rest", 0.0), ("half", 0.5), ("key", 1.0), ("beyond", 1.3)):
        pose_bone_to(arm, key["bone"], key["axis"], fraction * key["angle"])
        drive[label] = block.value
    others = [b.value for b in mesh.data.shape_keys.key_blocks if b.name not in (ELBOW_KEY, "Basis")]
    drive["others_at_key_max"] = max(others) if others else None
    # at the key pose (left as it is from "beyond" back to key): with the key vs plain LBS vs Blender's DQS
    pose_bone_to(arm, key["bone"], key["axis"], key["angle"])
    corrected = evaluated_positions(mesh)
    block.mute = True
    plain = evaluated_positions(mesh)
    set_preserve_volume(mesh, True)
    dqs = evaluated_positions(mesh)
    set_preserve_volume(mesh, False)
    block.mute = False
    drive["corrected_vs_lbs_elbow"] = stats(distances(corrected, plain, elbow))
    drive["corrected_vs_lbs_far"] = stats(distances(corrected, plain, far))
    drive["lbs_vs_dqs_elbow"] = stats(distances(plain, dqs, elbow))
    drive["corrected_vs_dqs_elbow"] = stats(distances(corrected, dqs, elbow))
    pose_bone_to(arm, key["bone"], key["axis"], 0.0)
    drive["rest_unchanged"] = max(distances(evaluated_positions(mesh), rest, range(len(rest))))
    results["drive"] = drive

    # --- again, with the default method (the learned field + dual quaternions): the same keys replaced, not duplicated ---
    step("again")
    mesh = bpy.data.objects[mesh_name]
    select_only(mesh)
    count_before = len(mesh.data.shape_keys.key_blocks)
    finished, error, seconds = run_operator(bpy.ops.autorig.pose_correctives)
    mesh = bpy.data.objects[mesh_name]
    again = {"finished": finished, "error": error, "seconds": seconds, "count_before": count_before}
    again.update(key_facts(mesh))
    results["again"] = again

    # --- a failure half way (the third driver) leaves the scene exactly as it was ---
    step("failure while adding drivers")
    import autorig.corrective_keys as corrective_keys_module

    original = corrective_keys_module._add_driver
    calls = []

    def failing_add_driver(*a, **k):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("injected failure at the third driver")
        return original(*a, **k)

    corrective_keys_module._add_driver = failing_add_driver
    try:
        select_only(bpy.data.objects[mesh_name])
        before = scene_digest()
        finished, error, _ = run_operator(bpy.ops.autorig.pose_correctives)
        results["fails"] = {"finished": finished, "error": error, "driver_calls": len(calls),
                            "differences": digest_differences(before, scene_digest())[:8]}
    finally:
        corrective_keys_module._add_driver = original

    step("a mesh without an armature")
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(5.0, 0.0, 0.5))
    select_only(bpy.context.active_object)
    results["poll_cube"] = bpy.ops.autorig.pose_correctives.poll()
    results["total_seconds"] = round(time.monotonic() - t0, 2)


if __name__ == "__main__":  # imported by correctives_examples.py for its helpers
    run_and_report(main, results, "AUTORIG_CORRECTIVES")
