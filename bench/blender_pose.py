"""Benchmark inside Blender: Apply Latent Pose and Apply All Poses as the add-on runs them, on a mesh without a rig.

    blender -b --factory-startup --python bench/blender_pose.py -- ZIP NODE ENTRY MESH.obj OUT.json [--wait=S]
        [--repeat=N]

The add-on zip is installed into this Blender and starts its sidecar (NODE ENTRY serve) as it does on a user's
machine, then the bench waits S seconds (default 20: the sidecar's start-up warm-up, as while a user opens a file).
MESH.obj is imported as one object. Timed, each the whole operator call (reading the mesh, the request, the sidecar's
work, checking the answer, the shape key):
  first:   Apply Latent Pose (elbowBentLf) on N copies of the mesh, each scaled a little (nothing to reuse), median
  again:   another pose (kneeBentRt) on the last copy (the sidecar reuses its latent and auto-rig), median of N
  all:     Apply All Poses on the last copy: a shape key per pose of the menu
Writes OUT.json: {vertices, first: {seconds, runs}, again: {seconds, runs}, all: {seconds, keys}} or {error}.
"""

import json
import sys
import time
import traceback

import bpy


def option(args, name, default):
    for arg in args:
        if arg.startswith("--%s=" % name):
            return float(arg.split("=", 1)[1])
    return default


def timed(op, **props):
    start = time.monotonic()
    result = op('EXEC_DEFAULT', True, **props)
    if 'FINISHED' not in result:
        raise RuntimeError("%s ended %s" % (op.idname(), result))
    return time.monotonic() - start


def select_only(obj):
    for other in bpy.context.view_layer.objects:
        other.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj


def main(args, report):
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
        copy = source.copy()
        copy.data = source.data.copy()
        bpy.context.collection.objects.link(copy)
        scale = 1.0 + 0.01 * (k + 1)
        for v in copy.data.vertices:
            v.co *= scale
        select_only(copy)
        firsts.append(timed(bpy.ops.autorig.apply_latent_pose, pose="elbowBentLf"))
    agains = [timed(bpy.ops.autorig.apply_latent_pose, pose=pose)
              for pose in ("kneeBentRt", "kneeBentLf", "elbowBentRt")[:max(1, repeat)]]
    keys_before = len(copy.data.shape_keys.key_blocks)
    every = timed(bpy.ops.autorig.apply_all_latent_poses)
    median = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    report["first"] = {"seconds": median(firsts), "runs": firsts}
    report["again"] = {"seconds": median(agains), "runs": agains}
    report["all"] = {"seconds": every, "keys": len(copy.data.shape_keys.key_blocks) - keys_before}


if __name__ == "__main__":
    argv = sys.argv[sys.argv.index("--") + 1:]
    out = argv[4]
    report = {}
    try:
        main(argv[:4] + argv[5:], report)
    except Exception:
        report = {"error": traceback.format_exc().strip().splitlines()[-1]}
    with open(out, "w") as f:
        json.dump(report, f)
