"""Benchmark inside Blender: Apply Latent Pose and Apply All Poses as the add-on runs them, on a mesh without a rig.

    blender -b --factory-startup --python bench/blender_pose.py -- ZIP NODE ENTRY MESH.obj OUT.json [--wait=S]
        [--repeat=N]
    xvfb-run -a blender --factory-startup --python bench/blender_pose.py -- ... --click

The add-on zip is installed into this Blender and starts its sidecar (NODE ENTRY serve) as it does on a user's
machine, then the bench waits S seconds (default 20: the sidecar's start-up warm-up, as while a user opens a file).
MESH.obj is imported as one object. Timed:
  first:   Apply Latent Pose (elbowBentLf) on N copies of the mesh, each scaled a little (nothing to reuse), median
  again:   another pose (kneeBentRt, ...) on the last copy (the sidecar reuses its latent and auto-rig), median of N
  all:     Apply All Poses on the last copy: a shape key per pose of the menu
  ahead:   (--click only) Apply Latent Pose on N new copies, each clicked once the Latent Pose panel has shown it
           and the add-on's read ahead (pose.prepare, prepare_on_show) has finished, median
  soon:    (--click only) the same, each clicked SOON seconds after the panel showed it (the read ahead still
           running: the sidecar holds the click's request until it is done), median
Without --click each is the operator's whole blocking call (EXEC_DEFAULT: reading the mesh, the request, the
sidecar's work, checking the answer, the shape key). With --click, in a Blender with a window (under Xvfb), each is
what a click runs: the operator invoked (INVOKE_DEFAULT: modal, its timer polling the sidecar), timed from the
invoke to the shape keys being on the mesh, read every 2 ms from Blender's event loop. The 3D viewport is switched
to an outliner first: Xvfb draws it on the CPU (Mesa's software rasteriser), beside the sidecar, where a user's
Blender draws on a GPU.
Writes OUT.json: {vertices, mode, first: {seconds, runs}, again: {seconds, runs}, all: {seconds, keys}, ahead: {seconds,
runs, read: the read aheads' own seconds as the sidecar answered them, settle}, soon: {seconds, runs, after: SOON,
settle}} or {error}; settle: the add-on's wait before it reads a shown mesh (pose_prepare.SETTLE).
"""

import json
import sys
import time
import traceback

import bpy

AGAIN_POSES = ("kneeBentRt", "kneeBentLf", "elbowBentRt", "spineTwistLf", "neckTurnRt")
CLICK_TIMEOUT = 120.0
# "soon": seconds from the panel showing a mesh to the click (a user who goes straight for the Apply button)
SOON = 0.5


def option(args, name, default):
    for arg in args:
        if arg.startswith("--%s=" % name):
            return float(arg.split("=", 1)[1])
    return default


def select_only(obj):
    for other in bpy.context.view_layer.objects:
        other.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj


def key_count(obj):
    keys = obj.data.shape_keys
    return 0 if keys is None else len(keys.key_blocks)


def scaled_copy(source, scale):
    """A new object with a copy of source's mesh scaled by `scale` (nothing the sidecar knows), selected alone and
    evaluated before any clock starts, as a mesh the user selects has been long since (bpy.ops, which the bench calls,
    would evaluate the new copy inside the timed call: a click on the panel's button does not go through it)."""
    copy = source.copy()
    copy.data = source.data.copy()
    bpy.context.collection.objects.link(copy)
    for v in copy.data.vertices:
        v.co *= scale
    select_only(copy)
    bpy.context.view_layer.update()
    return copy


def scenario(args, report):
    """The bench's steps: a generator that yields each timed operator call as (operator, properties, mesh) and is
    sent back its seconds."""
    zip_path, node, entry, mesh_path = args[:4]
    wait, repeat = option(args, "wait", 20.0), int(option(args, "repeat", 3))
    bpy.ops.preferences.addon_install(filepath=zip_path, overwrite=True)
    bpy.ops.preferences.addon_enable(module="autorig")
    prefs = bpy.context.preferences.addons["autorig"].preferences
    prefs.node_executable, prefs.sidecar_entry, prefs.port, prefs.auto_start = node, entry, 0, True
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    bpy.ops.import_scene.obj(filepath=mesh_path, split_mode='OFF')
    source = [o for o in bpy.data.objects if o.type == 'MESH'][0]
    report["vertices"] = len(source.data.vertices)
    # as Blender does when the add-on loads (the timer's function, which background mode never runs by itself)
    import autorig
    from autorig import client

    autorig._start_sidecar_early()
    process = client._managed["process"]
    if process is None or not process.ready.wait(120):
        raise RuntimeError("the sidecar did not start")
    time.sleep(wait)
    if 'FINISHED' not in bpy.ops.autorig.refresh_poses('EXEC_DEFAULT'):
        raise RuntimeError("the pose list could not be fetched")
    firsts = []
    copy = None
    for k in range(repeat):
        copy = scaled_copy(source, 1.0 + 0.01 * (k + 1))
        firsts.append((yield bpy.ops.autorig.apply_latent_pose, {"pose": "elbowBentLf"}, copy))
    agains = []
    for pose in AGAIN_POSES[:max(1, repeat)]:
        agains.append((yield bpy.ops.autorig.apply_latent_pose, {"pose": pose}, copy))
    keys_before = key_count(copy)
    every = yield bpy.ops.autorig.apply_all_latent_poses, {}, copy
    median = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    report["first"] = {"seconds": median(firsts), "runs": firsts}
    report["again"] = {"seconds": median(agains), "runs": agains}
    report["all"] = {"seconds": every, "keys": key_count(copy) - keys_before}
    if report.get("mode") != "click":
        return
    # the panel shows a new mesh ("show": prepare_on_show.note_shown, what its draw calls), then the click: once the
    # read ahead is done, or SOON seconds after
    from autorig import prepare_on_show

    for name, wait in (("ahead", "done"), ("soon", SOON)):
        runs, reads = [], []
        for k in range(repeat):
            copy = scaled_copy(source, (1.1 if name == "ahead" else 1.2) + 0.01 * (k + 1))
            yield "show", wait, copy
            outcome = prepare_on_show._preparer.outcome
            if wait == "done":
                if outcome is None or outcome[0] != "done":
                    raise RuntimeError("the read ahead ended %r" % (outcome,))
                reads.append(outcome[1]["seconds"])
            runs.append((yield bpy.ops.autorig.apply_latent_pose, {"pose": "elbowBentLf"}, copy))
        from autorig import pose_prepare

        report[name] = {"seconds": median(runs), "runs": runs, "settle": pose_prepare.SETTLE,
                        **({"read": reads} if reads else {"after": SOON})}


def run_blocking(steps):
    """Each call blocking (EXEC_DEFAULT, with the UI's undo push), timed around it."""
    try:
        call = next(steps)
        while True:
            op, props, _ = call
            start = time.monotonic()
            result = op('EXEC_DEFAULT', True, **props)
            if 'FINISHED' not in result:
                raise RuntimeError("%s ended %s" % (op.idname(), result))
            call = steps.send(time.monotonic() - start)
    except StopIteration:
        pass


def run_clicks(steps, done):
    """Each call as a click (INVOKE_DEFAULT in the window), timed until its shape keys are on the mesh; driven from
    timers so that Blender's event loop runs the modal operator. done(error or None) when the steps are over."""
    window = bpy.context.window_manager.windows[0]
    for area in window.screen.areas:
        if area.type == 'VIEW_3D':
            area.type = 'OUTLINER'
    area = window.screen.areas[0]
    region = next(r for r in area.regions if r.type == 'WINDOW')
    state = {"call": None}

    def start(seconds=None):
        call = next(steps) if seconds is None else steps.send(seconds)
        if call[0] == "show":
            # the panel shows the selected mesh (its draw's call), then the click waits: until the read ahead of it
            # is done, or a number of seconds
            from autorig import prepare_on_show

            _, wait, _obj = call
            preparer = prepare_on_show._preparer
            preparer.reset()
            with bpy.context.temp_override(window=window, screen=window.screen, area=area, region=region):
                prepare_on_show.note_shown(bpy.context)
            if preparer.pending_key is None:
                raise RuntimeError("the panel's read ahead did not start (is the sidecar running?)")
            began = time.monotonic()
            until = (lambda: time.monotonic() - began >= wait) if wait != "done" else (
                lambda: preparer.outcome is not None and preparer.job is None and preparer.pending_key is None)
            state["call"] = ("show", until, began)
            return
        op, props, obj = call
        before = key_count(obj)
        from autorig import poses

        # Apply Latent Pose adds the pose's key (and Basis on a mesh without keys); Apply All Poses every pose's, together
        added = 1 if "pose" in props else len(poses.pose_names())
        want = before + added + (1 if before == 0 else 0)
        began = time.monotonic()
        with bpy.context.temp_override(window=window, screen=window.screen, area=area, region=region):
            result = op('INVOKE_DEFAULT', True, **props)
        if 'RUNNING_MODAL' not in result and 'FINISHED' not in result:
            raise RuntimeError("%s ended %s" % (op.idname(), result))
        state["call"] = (obj, want, began)

    def tick():
        try:
            if state["call"] is None:
                start()
                return 0.002
            obj, want, began = state["call"]
            now = time.monotonic()
            if obj == "show":
                if not want():
                    if now - began > CLICK_TIMEOUT:
                        raise RuntimeError("the read ahead did not end %d s after the panel showed the mesh" % CLICK_TIMEOUT)
                    return 0.002
                start(0.0)
                return 0.002
            if key_count(obj) < want:
                if now - began > CLICK_TIMEOUT:
                    raise RuntimeError("no shape key %d s after the click" % CLICK_TIMEOUT)
                return 0.002
            start(now - began)
            return 0.002
        except StopIteration:
            done(None)
        except Exception:
            done(traceback.format_exc().strip().splitlines()[-1])
        return None

    bpy.app.timers.register(tick, first_interval=0.5)


def write(out, report):
    with open(out, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    argv = sys.argv[sys.argv.index("--") + 1:]
    out = argv[4]
    args = argv[:4] + argv[5:]
    report = {"mode": "click" if "--click" in args else "call"}
    if report["mode"] == "call":
        try:
            run_blocking(scenario(args, report))
        except Exception:
            report = {"error": traceback.format_exc().strip().splitlines()[-1]}
        write(out, report)
    else:
        def done(error):
            write(out, report if error is None else {"error": error})
            bpy.ops.wm.quit_blender()

        def begin():
            # the scenario's set-up (add-on, mesh, sidecar) runs in the first step, once the window is up
            try:
                run_clicks(scenario(args, report), done)
            except Exception:
                done(traceback.format_exc().strip().splitlines()[-1])
            return None

        bpy.app.timers.register(begin, first_interval=1.0)
