"""Apply Latent Pose in real Blender (background): the add-on zip installed into a clean Blender, a rigged dev
character imported as it is (mesh bound to its armature, moved, turned and scaled as an object), the pose menu filled
from the real sidecar (started by the add-on), then Apply Latent Pose: a shape key named after the pose, relative to a
new Basis, at value 1, moving the requested limb, in one undo step; a second pose on the same mesh; a bad pose and a
failure injected while the key is being written leave the scene exactly as it was.

Run by test/blender-latent-pose.test.ts (AUTORIG_MODELS in the environment picks the models the sidecar uses):
  blender -b --factory-startup --python test/blender/latent_pose.py -- --zip Z --node N --entry E --character C
Prints one line `AUTORIG_POSE {json}` with every measured fact; the vitest test asserts on them.
"""

import math
import os
import sys
import time

import bpy
from mathutils import Euler, Matrix

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scene_digest import digest_differences, scene_digest  # noqa: E402
from script_run import (draw_autorig_panel, install_addon as install_addon_zip, run_and_report,  # noqa: E402
                        run_operator, script_args, select_only, step_logger)

P = "mixamorig:"
results = {"steps": []}


step = step_logger(results, "latent pose")


def install_addon(args):
    step("install")
    install_addon_zip(args.zip, args.node, args.entry)
    results["registered"] = {
        "apply": hasattr(bpy.ops.autorig, "apply_latent_pose"),
        "refresh": hasattr(bpy.ops.autorig, "refresh_poses"),
        "settings": hasattr(bpy.context.scene, "autorig_pose"),
        "apply_options": sorted(bpy.ops.autorig.apply_latent_pose.get_rna_type().bl_rna.properties.keys()),
        "undo_flag": 'UNDO' in bpy.types.AUTORIG_OT_apply_latent_pose.bl_options,
    }


def import_rigged_character(path):
    """Import the rigged glTF as it is; move, turn and scale its root so that world and local space differ."""
    step("import")
    import numpy as np

    if "bool" not in np.__dict__:
        np.bool = bool  # Debian Blender 3.4's glTF importer needs it with numpy 1.24 (test shim only)
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    bpy.ops.import_scene.gltf(filepath=path)
    meshes = [o for o in bpy.data.objects if o.type == 'MESH']
    roots = [o for o in bpy.data.objects if o.parent is None]
    for root in roots:
        # A quarter turn about up: the sidecar's canonical frame expects a character standing along the axes
        # (mesh/canonicalFrame.ts), and this keeps it so while making world and local space differ.
        root.matrix_world = (Matrix.Translation((0.5, -0.25, 0.1)) @ Euler((0.0, 0.0, math.radians(90))).to_matrix()
                             .to_4x4() @ Matrix.Scale(1.3, 4) @ root.matrix_world)
    bpy.context.view_layer.update()
    mesh = max(meshes, key=lambda o: len(o.data.vertices))
    results["character"] = {"mesh": mesh.name, "vertices": len(mesh.data.vertices),
                            "rigged": any(m.type == 'ARMATURE' for m in mesh.modifiers),
                            "world_is_local": mesh.matrix_world == Matrix.Identity(4),
                            "shape_keys_before": mesh.data.shape_keys is not None}
    return mesh


def limb_vertices(mesh):
    """Vertex indices per limb, from the artist's weights: the bone groups' members with weight > 0.5."""
    limbs = {"left_forearm": ("LeftForeArm", "LeftHand"), "right_forearm": ("RightForeArm", "RightHand"),
             "left_leg": ("LeftLeg", "LeftFoot"), "right_leg": ("RightLeg", "RightFoot"), "head": ("Head",)}
    index_of = {g.name.replace(P, ""): g.index for g in mesh.vertex_groups}
    out = {}
    for limb, bones in limbs.items():
        wanted = {index_of[b] for b in bones if b in index_of}
        out[limb] = [v.index for v in mesh.data.vertices if any(g.group in wanted and g.weight > 0.5 for g in v.groups)]
    return out


def key_motion(mesh, key_name, limbs):
    """Mean world-space length of (key − its relative key) per limb: how far the shape key moves each limb."""
    keys = mesh.data.shape_keys
    block = keys.key_blocks[key_name]
    base = block.relative_key
    linear = mesh.matrix_world.to_3x3()
    out = {}
    for limb, ids in limbs.items():
        lengths = [(linear @ (block.data[i].co - base.data[i].co)).length for i in ids]
        out[limb] = sum(lengths) / len(lengths) if lengths else None
    return out


def draw_panel():
    """What the user would see in the AutoRig panel, and what the Apply button carries."""
    drawn = draw_autorig_panel()
    return {"labels": drawn["labels"], "props": drawn["props"],
            "operators": [idname for idname, _ in drawn["operators"]],
            "apply_button": [button for idname, button in drawn["operators"] if idname == "autorig.apply_latent_pose"]}


def check_undo(before, after):
    """One Ctrl+Z gives back `before` exactly, Ctrl+Shift+Z `after`."""
    bpy.ops.ed.undo()
    undone = digest_differences(before, scene_digest())
    shape_keys_after_undo = bpy.data.objects[results["character"]["mesh"]].data.shape_keys is not None
    bpy.ops.ed.redo()
    redone = digest_differences(after, scene_digest())
    return {"restores": not undone, "differences": undone[:8], "shape_keys_after_undo": shape_keys_after_undo,
            "redo_restores": not redone, "redo_differences": redone[:8]}


def main():
    args = script_args()
    t0 = time.monotonic()
    install_addon(args)
    mesh = import_rigged_character(args.character)
    mesh_name = mesh.name
    select_only(mesh)
    limbs = limb_vertices(mesh)
    results["limb_vertices"] = {k: len(v) for k, v in limbs.items()}
    bpy.ops.ed.undo_push(message="scene built")

    # Starting the sidecar early: never by itself in background mode; the timer's function starts it (from the
    # preferences), and the first job below then runs on that very process.
    step("start early")
    import autorig
    from autorig import client
    early = {"timer_in_background": bpy.app.timers.is_registered(autorig._start_sidecar_early),
             "default": type(bpy.context.preferences.addons["autorig"].preferences).bl_rna.properties[
                 "start_with_blender"].default,
             "before": client._managed["process"] is not None}
    autorig._start_sidecar_early()
    early_process = client._managed["process"]
    early["started"] = early_process is not None
    early["ready"] = bool(early_process and early_process.ready.wait(60) and early_process.check_ready())
    results["start_early"] = early

    step("poll")
    results["poll"] = bpy.ops.autorig.apply_latent_pose.poll()

    step("refresh poses")
    before = scene_digest()
    finished, error, seconds = run_operator(bpy.ops.autorig.refresh_poses)
    settings = bpy.context.scene.autorig_pose
    from autorig import poses

    # A dynamic enum's items are not in bl_rna: the menu shows what the items callback gives, labels as the UI does.
    identifiers = [item[0] for item in poses.pose_items(settings, bpy.context)]
    labels = [bpy.types.UILayout.enum_item_name(settings, "pose", i) for i in identifiers]
    settings.pose = "kneeBentRt"
    results["start_early"]["first_job_reused_it"] = client._managed["process"] is early_process
    results["refresh"] = {"finished": finished, "error": error, "seconds": round(seconds, 2),
                          "identifiers": identifiers, "labels": labels, "settable": settings.pose == "kneeBentRt",
                          "scene_unchanged": not digest_differences(before, scene_digest())}

    step("panel")
    results["panel"] = draw_panel()

    # Which rig the sidecar posed through ('given': the mesh's Mixamo armature, 'auto'), read off each checked answer.
    import autorig.messages as messages_module

    rigs = []
    reuses = []
    facings = []
    check_result = messages_module.check_pose_apply_result

    def recording_check(payload, vertex_counts, pose):
        result = check_result(payload, vertex_counts, pose)
        rigs.append(result["rig"])
        reuses.append(result["reused"])
        facings.append((result["facing"], [round(x, 3) for x in result["forward"]]))
        return result

    messages_module.check_pose_apply_result = recording_check

    # --- Apply Latent Pose from the panel's settings: one undo step ---
    step("apply elbowBentLf")
    settings.pose = "elbowBentLf"
    settings.strength = 1.0
    settings.strategy = 'MEAN'
    bpy.ops.ed.undo_push(message="settings")
    before = scene_digest()
    finished, error, seconds = run_operator(bpy.ops.autorig.apply_latent_pose)
    after = scene_digest()
    mesh = bpy.data.objects[mesh_name]
    keys = mesh.data.shape_keys
    applied = {"finished": finished, "error": error, "seconds": round(seconds, 2), "rigs": rigs[:], "reuses": reuses[:],
               "facings": facings[:]}
    if keys is not None:
        blocks = keys.key_blocks
        applied.update({
            "keys": [b.name for b in blocks],
            "values": [b.value for b in blocks],
            "relative_to": [b.relative_key.name for b in blocks],
            "reference": keys.reference_key.name,
            "active": mesh.active_shape_key.name if mesh.active_shape_key else None,
            "use_relative": keys.use_relative,
        })
        if "elbowBentLf" in blocks:
            applied["motion"] = key_motion(mesh, "elbowBentLf", limbs)
            basis = blocks["Basis"]
            applied["basis_max_offset"] = max((basis.data[i].co - mesh.data.vertices[i].co).length
                                              for i in range(len(mesh.data.vertices)))
    results["apply"] = applied
    if finished:
        step("undo apply")
        results["apply"]["undo"] = check_undo(before, after)

    # --- a second pose on the same mesh: one more key, the same Basis ---
    step("apply kneeBentRt")
    mesh = bpy.data.objects[mesh_name]
    select_only(mesh)
    finished, error, seconds = run_operator(bpy.ops.autorig.apply_latent_pose, pose="kneeBentRt", strength=1.5,
                                            strategy='NEAREST')
    mesh = bpy.data.objects[mesh_name]
    keys = mesh.data.shape_keys
    second = {"finished": finished, "error": error, "seconds": round(seconds, 2)}
    if keys is not None:
        second["keys"] = [b.name for b in keys.key_blocks]
        if "kneeBentRt" in keys.key_blocks:
            second["motion"] = key_motion(mesh, "kneeBentRt", limbs)
            second["value"] = keys.key_blocks["kneeBentRt"].value
    results["second"] = second

    # --- failures leave the scene exactly as it was ---
    step("unknown pose")
    before = scene_digest()
    finished, error, seconds = run_operator(bpy.ops.autorig.apply_latent_pose, pose="moonwalk")
    results["unknown_pose"] = {"finished": finished, "error": error,
                               "differences": digest_differences(before, scene_digest())[:8]}

    step("failure while writing the key")
    import autorig.apply as apply_module

    original = apply_module._record_new_shape_key

    def failing_new_key(journal, obj, name):
        original(journal, obj, name)
        raise RuntimeError("injected failure after adding the key")

    apply_module._record_new_shape_key = failing_new_key
    try:
        before = scene_digest()
        finished, error, seconds = run_operator(bpy.ops.autorig.apply_latent_pose, pose="elbowBentRt")
        results["apply_fails"] = {"finished": finished, "error": error,
                                  "differences": digest_differences(before, scene_digest())[:8]}
    finally:
        apply_module._record_new_shape_key = original

    # --- the armature no longer has every Mixamo joint: the sidecar auto-rigs the mesh instead ---
    step("apply through the auto-rig")
    mesh = bpy.data.objects[mesh_name]
    select_only(mesh)
    from autorig import scene_io

    from autorig import prepare_on_show

    armature = scene_io.deforming_armature(mesh)
    # the read ahead's key of the mesh names its armature's bones: a renamed bone (the armature no longer Mixamo's)
    # is another prepare, as the sidecar reads the mesh in another facing then
    key_before = prepare_on_show._read_ahead_key([mesh], 'AUTO')
    bone = next(b for b in armature.data.bones if b.name.endswith("LeftForeArm"))
    bone.name = "ForeArm.L"
    key_after = prepare_on_show._read_ahead_key([mesh], 'AUTO')
    results["read_ahead_key"] = {"armature_before": key_before is not None and key_before[2] is not None,
                                 "armature_after": key_after is not None and key_after[2] is not None,
                                 "changed": key_before != key_after}
    del rigs[:]
    del reuses[:]
    del facings[:]
    finished, error, seconds = run_operator(bpy.ops.autorig.apply_latent_pose, pose="kneeBentLf")
    results["auto_rig"] = {"finished": finished, "error": error, "rigs": rigs[:], "reuses": reuses[:], "facings": facings[:],
                           "keys": [b.name for b in mesh.data.shape_keys.key_blocks] if mesh.data.shape_keys else []}
    # the same mesh again: the sidecar answers from what it kept of the last apply (its latent and auto-rig)
    step("apply again through the auto-rig")
    del rigs[:]
    del reuses[:]
    finished, error, seconds = run_operator(bpy.ops.autorig.apply_latent_pose, pose="elbowBentRt")
    again = {"finished": finished, "error": error, "rigs": rigs[:], "reuses": reuses[:], "seconds": round(seconds, 2)}
    if finished and "elbowBentRt" in mesh.data.shape_keys.key_blocks:
        again["motion"] = key_motion(mesh, "elbowBentRt", limbs)
    results["auto_rig_again"] = again

    # --- the panel's Facing set half a turn from the way the shape faces: the other arm is the right one now ---
    step("apply with the panel's Facing")
    shape_forward = facings[0][1] if facings else [1.0, 0.0, 0.0]
    from autorig import pose_properties

    # the Facing choice nearest the back of the character as the shape reads it
    behind = max(pose_properties.FACING_DIRECTIONS.items(),
                 key=lambda item: -sum(a * b for a, b in zip(item[1], shape_forward)))
    # fetched again: an undo since the panel's settings were read leaves the old reference dangling
    settings = bpy.context.scene.autorig_pose
    settings.facing = behind[0]
    mesh = bpy.data.objects[mesh_name]
    keys_before = [b.name for b in mesh.data.shape_keys.key_blocks]
    del facings[:]
    finished, error, seconds = run_operator(bpy.ops.autorig.apply_latent_pose, pose="elbowBentRt")
    mesh = bpy.data.objects[mesh_name]
    added = [b.name for b in mesh.data.shape_keys.key_blocks if b.name not in keys_before]
    turned = {"finished": finished, "error": error, "chosen": behind[0], "shape_forward": shape_forward,
              "facings": facings[:], "added": added}
    if finished and added:
        turned["motion"] = key_motion(mesh, added[0], limbs)
    results["facing"] = turned
    bpy.context.scene.autorig_pose.facing = 'AUTO'

    # --- every pose at once: a key per pose at value 0, one undo step ---
    step("apply all poses")
    mesh = bpy.data.objects[mesh_name]
    select_only(mesh)
    bpy.ops.ed.undo_push(message="before all poses")
    keys_before = [b.name for b in mesh.data.shape_keys.key_blocks]
    before = scene_digest()
    del rigs[:]
    del reuses[:]
    finished, error, seconds = run_operator(bpy.ops.autorig.apply_all_latent_poses)
    after = scene_digest()
    mesh = bpy.data.objects[mesh_name]
    blocks = mesh.data.shape_keys.key_blocks
    added = [b for b in blocks if b.name not in keys_before]
    every = {"finished": finished, "error": error, "seconds": round(seconds, 2), "keys_before": keys_before,
             "added": [b.name for b in added], "values": [b.value for b in added],
             "relative_to": sorted({b.relative_key.name for b in added}), "rigs": sorted(set(rigs)), "reuses": reuses[:]}
    # the new kneeBentRt key (a second one of that name: Blender adds a suffix), which the stub makes bend the knee
    knee = next((b.name for b in added if b.name.split(".")[0] == "kneeBentRt"), None)
    if knee is not None:
        every["motion"] = key_motion(mesh, knee, limbs)
    if finished:
        every["undo"] = check_undo(before, after)
    results["apply_all"] = every

    # a request failing half-way (the second of three poses is unknown to the sidecar): no key at all
    step("apply all poses, one failing")
    original_names = poses.pose_names
    poses.pose_names = lambda: ["elbowBentLf", "moonwalk", "kneeBentLf"]
    try:
        before = scene_digest()
        finished, error, seconds = run_operator(bpy.ops.autorig.apply_all_latent_poses)
        results["apply_all_fails"] = {"finished": finished, "error": error,
                                      "differences": digest_differences(before, scene_digest())[:8]}
    finally:
        poses.pose_names = original_names

    # the add-on's transforms with Blender's numpy and without: the same floats
    step("transforms with and without numpy")
    from autorig import scene_io as scene_io_module

    mesh = bpy.data.objects[mesh_name]
    positions, _ = scene_io_module.mesh_world_arrays(mesh)
    inverse = mesh.matrix_world.inverted()
    results["transforms"] = {
        "numpy": scene_io_module._np is not None,
        "world_same": scene_io_module._transform_positions(positions, mesh.matrix_world) == scene_io_module._transform_positions(
            positions, mesh.matrix_world, use_numpy=False),
        "local_same": scene_io_module._transform_positions(positions, inverse) == scene_io_module._transform_positions(
            positions, inverse, use_numpy=False),
        "moved": max(abs(p - q) for p, q in zip(positions, scene_io_module._transform_positions(positions, inverse))),
    }

    step("no selection")
    for other in bpy.context.view_layer.objects:
        other.select_set(False)
    bpy.context.view_layer.objects.active = None
    results["poll_without_mesh"] = bpy.ops.autorig.apply_latent_pose.poll()
    results["total_seconds"] = round(time.monotonic() - t0, 2)


run_and_report(main, results, "AUTORIG_POSE")
