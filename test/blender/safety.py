"""Blender safety test (background Blender): every failure leaves the scene exactly as it was, every success is one
undo step. Run by test/blender-safety.test.ts:

  blender -b --factory-startup --python test/blender/safety.py -- --zip Z --node N --entry E --character C \
      --fake test/python/fake_sidecar.py --python /usr/bin/python3 --work DIR

The scene: a real character stripped of its rig ("Hero") that has shape keys, vertex groups (one named like a
Mixamo bone, one locked, one member with weight 0) and two modifiers; an existing armature with a mesh bound to it;
a cube ("Crate") with a shape key and a group named like a bone. The cases, each compared with scene_digest.py:
  real sidecar: a non-humanoid (NOT_HUMANOID); the sidecar killed in the middle of Auto Rig, then the next click
  (a new sidecar, success, one undo step); Re-skin after moving a bone (success, one undo step); the sidecar killed
  in the middle of Re-skin;
  fake sidecar (test/python/fake_sidecar.py): malformed rig and skin results (wrong length, NaN, bad joint index,
  unknown bone, bone names that are not valid) and errors; a failure injected while the result is being applied,
  for Auto Rig and Re-skin (the add-on must roll back what it did);
  the session token is in no saved file.
Prints one line `AUTORIG_SAFETY {json}`; the vitest test asserts on it.
"""

import os
import signal
import sys
import threading
import time

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bare_character import import_bare_hero  # noqa: E402
from scene_digest import digest_differences, scene_digest  # noqa: E402
from script_run import fake_sidecar_launcher, install_addon as install_addon_zip, run_and_report, script_args, step_logger  # noqa: E402

P = "mixamorig:"
results = {"steps": [], "cases": {}}




step = step_logger(results, "safety")


def parse_args():
    return script_args("fake", "python", "work")


# --- add-on and sidecars ---------------------------------------------------------------------------------------------

def install_addon(args):
    step("install")
    install_addon_zip(args.zip)


def use_real_sidecar(args):
    prefs = bpy.context.preferences.addons["autorig"].preferences
    prefs.node_executable = args.node
    prefs.sidecar_entry = args.entry


def use_fake_sidecar(args, mode):
    """Point the add-on at a launcher of the fake sidecar in `mode` (a new entry point: the add-on starts it anew)."""
    bpy.context.preferences.addons["autorig"].preferences.sidecar_entry = fake_sidecar_launcher(args, mode)


def managed_sidecar():
    from autorig import client

    return client._managed["process"]


# --- the scene -------------------------------------------------------------------------------------------------------

def add_weights(group, weights_by_vertex):
    """Write {vertex: weight} into a vertex group, one add() per distinct weight."""
    by_weight = {}
    for vertex, weight in weights_by_vertex.items():
        by_weight.setdefault(weight, []).append(vertex)
    for weight, vertices in by_weight.items():
        group.add(vertices, weight, 'REPLACE')


def dress_hero(hero):
    """Shape keys, vertex groups (one with a bone's name, one locked, a 0-weight member) and two modifiers."""
    zs = [v.co.z for v in hero.data.vertices]
    low, high = min(zs), max(zs)
    middle = (low + high) / 2

    belt = hero.vertex_groups.new(name="Belt")
    add_weights(belt, {v.index: round(0.1 + 0.8 * (v.co.z - low) / (high - low), 3)
                       for v in hero.data.vertices if v.co.z < middle})
    spine = hero.vertex_groups.new(name=P + "Spine")  # Auto Rig will find a bone of this name: it must reuse it
    add_weights(spine, {v.index: 0.5 for v in hero.data.vertices if abs(v.co.z - middle) < 0.1 * (high - low)})
    spine.add([0], 0.0, 'REPLACE')  # a member with weight 0 stays a member
    pinned = hero.vertex_groups.new(name="Pinned")
    add_weights(pinned, {v.index: 0.25 for v in hero.data.vertices if v.index % 7 == 0})
    pinned.lock_weight = True
    hero.vertex_groups.active_index = belt.index

    hero.shape_key_add(name="Basis", from_mix=False)
    breathe = hero.shape_key_add(name="Breathe", from_mix=False)
    for i, point in enumerate(breathe.data):
        if i % 3 == 0:
            point.co.y += 0.01
    breathe.value = 0.25
    squash = hero.shape_key_add(name="Squash", from_mix=False)
    for point in squash.data:
        point.co.z *= 0.97
    squash.relative_key = breathe
    squash.vertex_group = "Belt"
    squash.slider_max = 2.0
    squash.mute = True
    hero.active_shape_key_index = 1

    # (Not Subdivision Surface: on this mesh's custom normals each evaluation takes 0.25 s, and undo re-evaluates.)
    smooth = hero.modifiers.new(name="Smooth", type='SMOOTH')
    smooth.factor = 0.3
    smooth.iterations = 2
    smooth.vertex_group = "Pinned"
    puff = hero.modifiers.new(name="Puff", type='DISPLACE')
    puff.vertex_group = "Belt"
    puff.strength = 0.002
    hero.modifiers.active = smooth


def add_old_rig():
    """An armature that was there before ("OldRig", three bones, one posed) with a cylinder bound to it ("Prop")."""
    armature = bpy.data.armatures.new("OldRig")
    rig = bpy.data.objects.new("OldRig", armature)
    bpy.context.scene.collection.objects.link(rig)
    rig.location = (3.0, 0.0, 0.0)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode='EDIT')
    parent = None
    for i, name in enumerate(("Base", "Middle", "Tip")):
        bone = armature.edit_bones.new(name)
        bone.head = (0.0, 0.0, 0.5 * i)
        bone.tail = (0.0, 0.0, 0.5 * (i + 1))
        bone.roll = 0.1 * i
        bone.parent = parent
        bone.use_connect = parent is not None
        parent = bone
    bpy.ops.object.mode_set(mode='OBJECT')
    rig.pose.bones["Middle"].rotation_mode = 'XYZ'
    rig.pose.bones["Middle"].rotation_euler = (0.3, 0.0, 0.0)

    bpy.ops.mesh.primitive_cylinder_add(radius=0.1, depth=1.5, location=(3.0, 0.0, 0.75))
    prop = bpy.context.active_object
    prop.name = "Prop"
    prop.parent = rig
    prop.matrix_parent_inverse = rig.matrix_world.inverted()
    modifier = prop.modifiers.new(name="Armature", type='ARMATURE')
    modifier.object = rig
    for i, name in enumerate(("Base", "Middle", "Tip")):
        group = prop.vertex_groups.new(name=name)
        add_weights(group, {v.index: 1.0 for v in prop.data.vertices
                            if 0.5 * i <= v.co.z + 0.75 < 0.5 * (i + 1) + 1e-6})


def add_crate():
    """A cube: not a humanoid. A shape key and a group named like the fake sidecar's first bone."""
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(-3.0, 0.0, 0.5))
    crate = bpy.context.active_object
    crate.name = "Crate"
    crate.shape_key_add(name="Basis", from_mix=False)
    lid = crate.shape_key_add(name="Lid", from_mix=False)
    lid.data[0].co.z += 0.2
    lid.value = 0.5
    hips = crate.vertex_groups.new(name=P + "Hips")
    add_weights(hips, {0: 0.75, 3: 0.125})
    return crate


def select_only(names):
    """Select these objects (the first active) and push an undo step, as a click in the viewport would."""
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj.name in names)
    bpy.context.view_layer.objects.active = bpy.data.objects[names[0]]
    bpy.ops.ed.undo_push(message="select %s" % names[0])


def build_scene(args):
    step("build scene")
    hero = import_bare_hero(args.character)
    dress_hero(hero)
    add_old_rig()
    add_crate()
    bpy.ops.object.select_all(action='DESELECT')
    bpy.ops.ed.undo_push(message="scene built")
    results["hero_vertices"] = len(bpy.data.objects["Hero"].data.vertices)


# --- running cases ---------------------------------------------------------------------------------------------------

def run_operator(op):
    """Run an operator as a click does (undo=True: the UI's undo push); returns (finished, error, seconds, when it
    returned)."""
    start = time.monotonic()
    try:
        finished, error = 'FINISHED' in op('EXEC_DEFAULT', True), None
    except RuntimeError as err:
        finished, error = False, str(err)
    returned_at = time.monotonic()
    return finished, error, returned_at - start, returned_at


def run_case(name, op):
    """Run one operator call and record whether the scene digest changed (and where)."""
    step(name)
    before = scene_digest()
    finished, error, seconds, returned_at = run_operator(op)
    after = scene_digest()
    differences = digest_differences(before, after)
    case = {"finished": finished, "error": error, "seconds": round(seconds, 3), "unchanged": not differences,
            "differences": differences[:8], "returned_at": returned_at}
    results["cases"][name] = case
    return case, before, after


def check_one_undo_step(name, before, after):
    """One Ctrl+Z gives back `before` exactly; Ctrl+Shift+Z gives back `after` exactly."""
    bpy.ops.ed.undo()
    undone = digest_differences(before, scene_digest())
    bpy.ops.ed.redo()
    redone = digest_differences(after, scene_digest())
    results["cases"][name]["undo_restores"] = not undone
    results["cases"][name]["undo_differences"] = undone[:8]
    results["cases"][name]["redo_restores"] = not redone
    results["cases"][name]["redo_differences"] = redone[:8]


class SidecarKiller:
    """Kills the add-on's sidecar (SIGKILL) `delay` seconds after it logs that a `kind` job started, from a thread,
    while the operator waits for the job. Records the pid, when it was killed, and whether the job had ended first."""

    def __init__(self, kind, delay):
        self.kind, self.delay = kind, delay
        process = managed_sidecar()
        self.old_lines = set(process.stderr_tail) if process is not None else set()
        self.pid = None
        self.killed_at = None
        self.job_ended_first = False
        self.lines_at_kill = []
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _new_lines(self, process):
        return [line for line in list(process.stderr_tail) if line not in self.old_lines]

    def _started_job(self, process):
        """The id of a `kind` job the sidecar logged as started since this killer was made, or None."""
        for line in self._new_lines(process):
            marker = "%s '" % self.kind
            if marker in line and "' started" in line:
                return line.split(marker, 1)[1].split("'", 1)[0]
        return None

    def _watch(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            process = managed_sidecar()
            job_id = self._started_job(process) if process is not None else None
            if job_id is not None:
                time.sleep(self.delay)
                self.lines_at_kill = self._new_lines(process)
                # (only this job's lines: an earlier job's last line may still be on its way through the pipe)
                self.job_ended_first = any("'%s' done in " % job_id in line or "'%s' failed: " % job_id in line
                                           for line in self.lines_at_kill)
                self.pid = process.process.pid
                os.kill(self.pid, signal.SIGKILL)
                self.killed_at = time.monotonic()
                return
            time.sleep(0.005)

    def report(self, returned_at):
        self.thread.join(5)
        return {"killed_pid": self.pid, "job_ended_first": self.job_ended_first, "lines_at_kill": self.lines_at_kill,
                "notice_seconds": round(returned_at - self.killed_at, 3) if self.killed_at else None}


def killed_case(name, op, kind, delay):
    """run_case while a SidecarKiller waits for the job; adds what the killer saw and whether the process is gone."""
    killer = SidecarKiller(kind, delay)
    case, _, _ = run_case(name, op)
    case.update(killer.report(case["returned_at"]))
    case["killed_process_gone"] = killer.pid is not None and not _process_exists(killer.pid)
    return case


def _process_exists(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def sidecar_process_facts():
    """The running sidecar's pid, whether its token is on its command line or in its environment, stdin a pipe."""
    process = managed_sidecar()
    pid = process.process.pid
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        cmdline = f.read()
    with open("/proc/%d/environ" % pid, "rb") as f:
        environ = f.read().split(b"\0")
    token = process.token.encode("ascii")
    return {"pid": pid, "token_on_command_line": token in cmdline,
            "token_in_environment": (b"AUTORIG_TOKEN=" + token) in environ,
            "stdin_is_pipe": os.readlink("/proc/%d/fd/0" % pid).startswith("pipe:")}


def failing_write_weights(apply_module):
    """A write_weights that writes everything and then fails: what an unforeseen error late in applying looks like."""
    original = apply_module.write_weights

    def fail_after_writing(*args, **kwargs):
        original(*args, **kwargs)
        raise RuntimeError("injected failure after writing the weights")

    return original, fail_after_writing


def move_left_elbow(armature_name):
    """Move the left elbow toward the hand (an edit the artist makes before Re-skin), then push an undo step."""
    arm = bpy.data.objects[armature_name]
    select_only([armature_name])
    bpy.ops.object.mode_set(mode='EDIT')
    forearm = arm.data.edit_bones[P + "LeftForeArm"]
    forearm.head = forearm.head + (forearm.tail - forearm.head) * 0.35
    arm.data.edit_bones[P + "LeftArm"].tail = forearm.head
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.ops.ed.undo_push(message="move elbow")


def token_persistence(args):
    """A session token typed in the add-on's field ends up in no file Blender saves (preferences, .blend)."""
    step("token persistence")
    prefs = bpy.context.preferences.addons["autorig"].preferences
    secret = "sessiontoken-" + os.urandom(12).hex()
    bpy.context.window_manager.autorig_session_token = secret
    from autorig import operators

    config_token = operators.sidecar_config(bpy.context).token
    bpy.context.preferences.use_preferences_save = True
    bpy.ops.wm.save_userpref()
    blend = os.path.join(args.work, "scene.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend, copy=True)
    userpref = os.path.join(bpy.utils.user_resource('CONFIG'), "userpref.blend")
    found_in = []
    for path in (userpref, blend):
        with open(path, "rb") as f:
            if secret.encode("ascii") in f.read():
                found_in.append(os.path.basename(path))
    results["token"] = {"config_uses_session_token": config_token == secret, "found_in_saved_files": found_in,
                        "userpref_saved": os.path.exists(userpref),
                        "preference_properties": sorted(p.identifier for p in prefs.bl_rna.properties
                                                        if p.identifier != "rna_type")}


# --- the test --------------------------------------------------------------------------------------------------------

def main():
    args = parse_args()
    t0 = time.monotonic()
    install_addon(args)
    build_scene(args)
    import autorig.apply as apply_module

    use_real_sidecar(args)
    # (a) the sidecar answers an error
    select_only(["Crate"])
    run_case("real_not_humanoid", bpy.ops.autorig.auto_rig)
    results["sidecar_process"] = sidecar_process_facts()

    # (b) the sidecar is killed in the middle of Auto Rig; the next click starts a new sidecar and succeeds
    select_only(["Hero"])
    first_pid = managed_sidecar().process.pid
    killed_case("real_killed_during_rig", bpy.ops.autorig.auto_rig, "rig", 0.3)
    case, before, after = run_case("real_rig_after_kill", bpy.ops.autorig.auto_rig)
    case["new_sidecar"] = managed_sidecar() is not None and managed_sidecar().process.pid != first_pid
    armature_name = "Hero_Armature"
    arm = bpy.data.objects.get(armature_name)
    case["bones"] = len(arm.data.bones) if arm else 0
    hero = bpy.data.objects["Hero"]
    case["hero_groups"] = sorted(g.name for g in hero.vertex_groups)
    case["hero_modifiers"] = [m.type for m in hero.modifiers]
    check_one_undo_step("real_rig_after_kill", before, after)

    # Re-skin after moving a bone: a success, one undo step
    move_left_elbow(armature_name)
    hero = bpy.data.objects["Hero"]
    hero.vertex_groups[P + "Head"].lock_weight = True
    select_only(["Hero"])
    case, before, after = run_case("real_reskin", bpy.ops.autorig.reskin)
    check_one_undo_step("real_reskin", before, after)

    # (d) Re-skin fails on the rigged mesh: the sidecar killed in the middle of the job
    killed_case("real_killed_during_reskin", bpy.ops.autorig.reskin, "skin", 0.0)

    # (c) malformed results from a fake sidecar: refused, nothing changed
    select_only(["Crate"])
    for mode in ("badresult", "nan", "badindex", "nanjoint", "badname", "slashname", "longname", "dupname"):
        use_fake_sidecar(args, mode)
        run_case("fake_rig_" + mode, bpy.ops.autorig.auto_rig)
    # a failure while applying the result: everything done so far is taken back
    use_fake_sidecar(args, "normal")
    original, failing = failing_write_weights(apply_module)
    apply_module.write_weights = failing
    try:
        run_case("rig_apply_fails", bpy.ops.autorig.auto_rig)
    finally:
        apply_module.write_weights = original
    case, before, after = run_case("fake_rig_normal", bpy.ops.autorig.auto_rig)
    check_one_undo_step("fake_rig_normal", before, after)
    bpy.ops.ed.undo()

    # (d) Re-skin failures on the rigged mesh: errors, malformed answers, a failure while applying
    select_only(["Hero"])
    for mode in ("error", "unknownbone", "nan", "badresult", "badindex"):
        use_fake_sidecar(args, mode)
        run_case("fake_skin_" + mode, bpy.ops.autorig.reskin)
    use_fake_sidecar(args, "normal")
    apply_module.write_weights = failing
    try:
        run_case("skin_apply_fails", bpy.ops.autorig.reskin)
    finally:
        apply_module.write_weights = original
    case, before, after = run_case("fake_skin_normal", bpy.ops.autorig.reskin)
    check_one_undo_step("fake_skin_normal", before, after)

    token_persistence(args)
    results["total_seconds"] = round(time.monotonic() - t0, 2)


run_and_report(main, results, "AUTORIG_SAFETY")
