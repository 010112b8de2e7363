"""Pose Correctives fitted to a posed example in real Blender (background): the add-on zip installed into a clean
Blender, a real character stripped of its rig, moved/turned/scaled as an object and Auto Rigged by the real sidecar
(as test/blender/correctives.py does, whose helpers this reuses), then:
  - the left forearm bent 90 deg; the evaluated posed mesh duplicated as a plain mesh and moved a little at the
    elbow: the artist's example of that pose;
  - Add Pose Example on it (the armature selected): its autorig_example property holds the armature, its bones in
    skeleton order and the pose's rotations exactly as Preview Correctives sends them; one undo step;
  - a second example with its bones in another order (skipped with a warning); Clear Pose Example;
  - the panel: Fit to Examples, the armature's example count, Add and Clear;
  - Pose Correctives with Fit to Examples off (the request carries no examples) and on (the example, its evaluated
    mesh in world space, its pose), then on for real: the keys baked, the report tells the fit, one undo removes the
    keys.

Run by test/blender-correctives-examples.test.ts:
  blender -b --factory-startup --python test/blender/correctives_examples.py -- --zip Z --node N --entry E --character C
Prints one line `AUTORIG_EXAMPLES {json}` with every measured fact; the vitest test asserts on them.
"""

import contextlib
import ctypes
import json
import math
import os
import sys
import tempfile
import time

import bpy
from mathutils import Vector

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import correctives as harness  # noqa: E402  (test/blender/correctives.py: its main() only runs as a script)
from scene_digest import digest_differences, scene_digest  # noqa: E402
from script_run import run_and_report, script_args  # noqa: E402

P = harness.P
FOREARM = P + "LeftForeArm"
EXAMPLE = "ElbowExample"
WRONG = "ReorderedExample"
SCULPT_KEY = "ElbowSculpt"
results = {"steps": []}


def step(name):
    results["steps"].append(name)
    print("examples: " + name, flush=True)


@contextlib.contextmanager
def blender_output():
    """What Blender prints meanwhile (an operator's reports go to stdout in background mode), as a list of lines
    filled on exit: file descriptor 1 is pointed at a temporary file (Blender prints from C, not through sys.stdout)."""
    lines = []
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), 1)
        try:
            yield lines
        finally:
            sys.stdout.flush()
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
            capture.seek(0)
            lines.extend(capture.read().decode("utf-8", "replace").splitlines())


def run_with_reports(op, **props):
    """harness.run_operator, also keeping the operator's reports: (finished, error, seconds, [report lines])."""
    with blender_output() as lines:
        finished, error, seconds = harness.run_operator(op, **props)
    reports = [line for line in lines if line.startswith(("Info:", "Warning:", "Error:"))]
    return finished, error, seconds, reports


def duplicate_posed(mesh, name, push, members):
    """A plain mesh object with `mesh`'s evaluated (posed) surface and world matrix, `members` vertices moved by
    `push` (object space): an example as an artist would make it by applying the pose and sculpting a little."""
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    data = bpy.data.meshes.new_from_object(mesh.evaluated_get(depsgraph))
    data.name = name
    for index in members:
        data.vertices[index].co += Vector(push)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    obj.matrix_world = mesh.matrix_world.copy()
    bpy.context.view_layer.update()
    return obj


def select(active, *others):
    harness.select_only(active)
    for obj in others:
        obj.select_set(True)


def capture_requests(stop):
    """Keep every correctives request the add-on builds (whether it carries examples, and theirs); with stop, end the
    operator there (an AutoRigFailure before any sidecar job: what is sent is all these runs look at)."""
    from autorig import messages

    captured = []
    original = messages.correctives_request

    def capture(*args, **kwargs):
        request = original(*args, **kwargs)
        captured.append(request)
        if stop:
            raise messages.AutoRigFailure("TEST_STOP", "request captured")
        return request

    messages.correctives_request = capture
    return captured, lambda: setattr(messages, "correctives_request", original)


def describe_examples(request):
    """What a request sends as examples: None when the field is absent, else per example its name, its pose's
    forearm rotation and its surfaces' names, vertex counts and first vertex."""
    from autorig import messages

    if "examples" not in request:
        return None
    joints = [j["name"] for j in request["skeleton"]["joints"]]
    described = []
    for example in request["examples"]:
        rotations = messages.from_le_bytes(example["rotations"], "f32")
        forearm = joints.index(FOREARM)
        described.append({
            "name": example["name"], "rotation_count": len(rotations),
            "forearm": list(rotations[9 * forearm:9 * forearm + 9]),
            "objects": [{"name": o["name"], "vertices": len(o["positions"]) // 12, "triangles": len(o["triangles"]) // 12,
                         "first": list(messages.from_le_bytes(o["positions"][:12], "f32"))}
                        for o in example["objects"]]})
    return described


def main():
    args = script_args()
    t0 = time.monotonic()
    harness.install_addon(args)
    scene = bpy.context.scene
    results["registered"] = {
        "add": hasattr(bpy.ops.autorig, "add_example"), "clear": hasattr(bpy.ops.autorig, "clear_example"),
        "undo_flags": ['UNDO' in getattr(bpy.types, c).bl_options for c in (
            "AUTORIG_OT_add_example", "AUTORIG_OT_clear_example")],
        "fit_setting_default": scene.autorig_correctives.fit_examples,
    }
    mesh = harness.import_bare_character(args.character)
    mesh_name = mesh.name
    harness.select_only(mesh)
    step("auto rig")
    finished, error, seconds = harness.run_operator(bpy.ops.autorig.auto_rig)
    results["auto_rig"] = {"finished": finished, "error": error, "seconds": seconds}
    if not finished:
        return
    mesh = bpy.data.objects[mesh_name]
    arm = bpy.data.objects[mesh_name + "_Armature"]
    arm_name = arm.name

    # --- the example: the forearm bent 90 deg, the posed surface applied and pushed 8 mm (object space) at the elbow ---
    step("example")
    elbow = harness.group_members(mesh, [FOREARM, P + "LeftArm"], 0.3)
    harness.pose_bone_to(arm, FOREARM, (1.0, 0.0, 0.0), math.radians(90))
    example = duplicate_posed(mesh, EXAMPLE, (0.0, 0.0, 0.008), elbow)
    results["example"] = {"vertices": len(example.data.vertices), "character_vertices": len(mesh.data.vertices),
                          "elbow": len(elbow)}
    harness.select_only(example)
    poll_without_armature = bpy.ops.autorig.add_example.poll()
    select(example, arm)
    poll_with_armature = bpy.ops.autorig.add_example.poll()
    bpy.ops.ed.undo_push(message="example made")
    before = scene_digest()
    finished, error, _, reports = run_with_reports(bpy.ops.autorig.add_example)
    after = scene_digest()
    example = bpy.data.objects[EXAMPLE]
    arm = bpy.data.objects[arm_name]
    stored = json.loads(example["autorig_example"]) if "autorig_example" in example else None
    from autorig import corrective_keys, scene_io

    joints = scene_io.armature_joints(arm)
    preview_rotations = list(corrective_keys.pose_rotations(arm, joints))  # what Preview Correctives sends now
    add = {"finished": finished, "error": error, "reports": reports, "poll_without_armature": poll_without_armature,
           "poll_with_armature": poll_with_armature, "stored_keys": sorted(stored) if stored else None}
    if stored is not None:
        rotations = stored["rotations"]
        forearm = stored["bones"].index(FOREARM)
        turned = [stored["bones"][j] for j in range(len(stored["bones"])) if any(
            abs(rotations[9 * j + k] - (1.0 if k in (0, 4, 8) else 0.0)) > 1e-5 for k in range(9))]
        add.update({
            "armature": stored["armature"], "armature_name": arm_name,
            "bones_are_skeleton_order": stored["bones"] == [j["name"] for j in joints],
            "bone_count": len(stored["bones"]), "rotation_count": len(rotations),
            "same_as_preview": rotations == preview_rotations,
            "forearm_trace": rotations[9 * forearm] + rotations[9 * forearm + 4] + rotations[9 * forearm + 8],
            "turned": turned})
    bpy.ops.ed.undo()
    undone = digest_differences(before, scene_digest())
    add["undo_removes"] = "autorig_example" not in bpy.data.objects[EXAMPLE]
    add["undo_differences"] = undone[:8]
    bpy.ops.ed.redo()
    add["redo_differences"] = digest_differences(after, scene_digest())[:8]
    add["redo_restores"] = "autorig_example" in bpy.data.objects[EXAMPLE]
    results["add"] = add
    if stored is None:
        return

    # --- a second example of the same armature with its bones in another order: counted, skipped when sending ---
    step("reordered example")
    example = bpy.data.objects[EXAMPLE]
    wrong = bpy.data.objects.new(WRONG, example.data.copy())
    scene = bpy.context.scene  # undo replaced the scene's Python object
    scene.collection.objects.link(wrong)
    wrong.matrix_world = example.matrix_world.copy()
    wrong["autorig_example"] = json.dumps(dict(stored, bones=stored["bones"][::-1]))

    arm = bpy.data.objects[arm_name]
    harness.pose_bone_to(arm, FOREARM, (1.0, 0.0, 0.0), 0.0)
    mesh = bpy.data.objects[mesh_name]
    harness.select_only(mesh)
    results["panel"] = harness.draw_panel()

    # --- Fit to Examples off (the scene's default) and on: what the request carries ---
    step("requests")
    sent = {}
    captured, restore = capture_requests(stop=True)
    try:
        for label, setting, props in (("off", False, {}), ("on", True, {}), ("on_overridden", True,
                                                                            {"fit_examples": False})):
            bpy.context.scene.autorig_correctives.fit_examples = setting
            harness.select_only(bpy.data.objects[mesh_name])
            finished, error, _, reports = run_with_reports(bpy.ops.autorig.pose_correctives, **props)
            sent[label] = {"finished": finished, "error": error, "reports": reports,
                           "examples": describe_examples(captured[-1]) if captured else "no request"}
            captured.clear()
    finally:
        restore()
    example = bpy.data.objects[EXAMPLE]
    sent["example_first_world"] = list(example.matrix_world @ example.data.vertices[0].co)
    results["requests"] = sent

    # --- Clear Pose Example on the reordered one ---
    step("clear")
    harness.select_only(bpy.data.objects[WRONG])
    finished, error, _, reports = run_with_reports(bpy.ops.autorig.clear_example)
    results["clear"] = {"finished": finished, "error": error, "reports": reports,
                        "left": "autorig_example" in bpy.data.objects[WRONG],
                        "example_kept": "autorig_example" in bpy.data.objects[EXAMPLE]}

    # --- the bake fitted to the example, one undo step ---
    step("bake with fit")
    bpy.context.scene.autorig_correctives.fit_examples = True
    mesh = bpy.data.objects[mesh_name]
    harness.select_only(mesh)
    bpy.ops.ed.undo_push(message="before bake")
    before = scene_digest()
    finished, error, seconds, reports = run_with_reports(bpy.ops.autorig.pose_correctives, method='DUAL_QUATERNION')
    mesh = bpy.data.objects[mesh_name]
    bake = {"finished": finished, "error": error, "seconds": seconds, "reports": reports}
    bake.update(harness.key_facts(mesh))
    results["bake"] = bake
    if finished:
        step("undo")
        bpy.ops.ed.undo()
        undone = digest_differences(before, scene_digest())
        results["undo"] = {"restores": not undone, "differences": undone[:8],
                           "shape_keys_after_undo": bpy.data.objects[mesh_name].data.shape_keys is not None}
    shape_key_example(mesh_name, arm_name)
    results["total_seconds"] = round(time.monotonic() - t0, 2)


def shape_key_example(mesh_name, arm_name):
    """A shape key sculpted on the character itself while the forearm is bent becomes a Pose Example (Add Pose
    Example with the character active and the armature selected), is sent flagged shapeKey with the character's
    vertices, is fitted to with the other example, and Clear Pose Example makes it a plain key again."""
    step("shape key example")
    mesh = bpy.data.objects[mesh_name]
    arm = bpy.data.objects[arm_name]
    harness.pose_bone_to(arm, FOREARM, (1.0, 0.0, 0.0), math.radians(90))
    if mesh.data.shape_keys is None:
        mesh.shape_key_add(name="Basis", from_mix=False)
    key = mesh.shape_key_add(name=SCULPT_KEY, from_mix=False)
    for index in harness.group_members(mesh, [FOREARM, P + "LeftArm"], 0.3):
        key.data[index].co += Vector((0.0, 0.0, 0.008))
    key.value = 1.0
    mesh.active_shape_key_index = list(mesh.data.shape_keys.key_blocks).index(key)
    select(mesh, arm)
    finished, error, _, reports = run_with_reports(bpy.ops.autorig.add_example)
    mesh = bpy.data.objects[mesh_name]
    stored = json.loads(mesh["autorig_key_examples"]) if "autorig_key_examples" in mesh else None
    out = {"finished": finished, "error": error, "reports": reports,
           "stored_keys": sorted(stored) if stored else None,
           "object_property": "autorig_example" in mesh, "panel_labels": harness.draw_panel()["labels"]}

    captured, restore = capture_requests(stop=True)
    try:
        bpy.context.scene.autorig_correctives.fit_examples = True
        harness.select_only(bpy.data.objects[mesh_name])
        run_with_reports(bpy.ops.autorig.pose_correctives)
        request = captured[-1] if captured else None
    finally:
        restore()
    if request is not None:
        from autorig import messages

        sent = [e for e in request.get("examples", []) if e.get("shapeKey")]
        out["sent"] = [{"name": e["name"], "objects": len(e["objects"]),
                        "vertices": [len(o["positions"]) // 12 for o in e["objects"]]} for e in sent]
        out["character_vertices"] = [len(o["positions"]) // 12 for o in request["objects"]]
        if sent:
            basis = messages.from_le_bytes(request["objects"][0]["positions"], "f32")
            sculpt = messages.from_le_bytes(sent[0]["objects"][0]["positions"], "f32")
            out["moved_vertices"] = sum(1 for i in range(0, len(basis), 3) if any(
                abs(basis[i + c] - sculpt[i + c]) > 1e-6 for c in range(3)))

    harness.pose_bone_to(bpy.data.objects[arm_name], FOREARM, (1.0, 0.0, 0.0), 0.0)
    harness.select_only(bpy.data.objects[mesh_name])
    finished, error, seconds, reports = run_with_reports(bpy.ops.autorig.pose_correctives, method='DUAL_QUATERNION')
    out["bake"] = {"finished": finished, "error": error, "seconds": seconds, "reports": reports}

    mesh = bpy.data.objects[mesh_name]
    mesh.active_shape_key_index = list(mesh.data.shape_keys.key_blocks).index(mesh.data.shape_keys.key_blocks[SCULPT_KEY])
    harness.select_only(mesh)
    clear_poll = bpy.ops.autorig.clear_example.poll()
    finished, error, _, reports = run_with_reports(bpy.ops.autorig.clear_example)
    out["clear"] = {"poll": clear_poll, "finished": finished, "error": error, "reports": reports,
                    "left": "autorig_key_examples" in bpy.data.objects[mesh_name]}
    results["shape_key"] = out


run_and_report(main, results, "AUTORIG_EXAMPLES")
