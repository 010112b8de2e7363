"""Benchmark inside Blender: the add-on's apply step, and Blender's own "With Automatic Weights" on the same mesh.

    blender -b --factory-startup --python bench/blender_apply.py -- MESH.bin RIG.bin OUT.json [--repeat=N]
        [--skip-apply] [--skip-auto]

MESH.bin is a mesh bundle and RIG.bin a rig bundle (bench/bundle.ts: u32 header length, JSON header, 8-aligned raw
little-endian blobs). Writes OUT.json:
  apply:        {seconds, cpu_seconds, check_seconds, vertices, bones, groups, runs} or {error}; the median of N
                runs (default 1), each on fresh copies of the meshes, removed again before the next
  auto_weights: {seconds, cpu_seconds, vertices, unweighted, failed, message} or {error}
Only the operation itself is timed: building the meshes from the bundle is not.
"""

import json
import os
import sys
import tempfile
import time
import traceback

import bpy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)
# the bundle's reader is the eval's Blender script's (the same file layout)
sys.path.insert(0, os.path.join(REPO, "sidecar", "eval"))
from blender_bone_heat import build_mesh, read_bundle, typed  # noqa: E402


def build_meshes(header, blobs, suffix):
    """One mesh object per part (positions f32 #V*3, triangles u32 #T*3 from the bundle), linked to the scene."""
    objects = []
    for i, part in enumerate(header["parts"]):
        # u32 triangle indices below 2^31: the same bits as i32
        objects.append(build_mesh(part["name"] + suffix, typed(blobs[2 * i], "f"), typed(blobs[2 * i + 1], "i")))
    # A user's mesh has been evaluated (drawn) long before they click: do that here, outside the timed part, or the
    # first operator's view-layer update would pay for it.
    bpy.context.view_layer.update()
    return objects


def rig_payload(rig_header, rig_blobs):
    """The rig result as the add-on receives it from msgpack: maps, lists, and bin fields as bytes."""
    objects = []
    for i, o in enumerate(rig_header["objects"]):
        objects.append({"name": o["name"], "influences": o["influences"],
                        "indices": rig_blobs[2 * i], "weights": rig_blobs[2 * i + 1]})
    return {"skeleton": rig_header["skeleton"], "frame": rig_header["frame"], "objects": objects,
            "seconds": rig_header["seconds"]}


def deselect_all():
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)


def measure_apply(mesh_header, mesh_blobs, rig_header, rig_blobs):
    """Time the add-on's own apply (armature + parenting + modifier + vertex groups), as the operator calls it."""
    from blender_addon import apply as addon_apply
    from blender_addon import messages

    meshes = build_meshes(mesh_header, mesh_blobs, ".apply")
    counts = [len(m.data.vertices) for m in meshes]
    deselect_all()
    t0 = time.perf_counter()
    result = messages.check_rig_result(rig_payload(rig_header, rig_blobs), counts)
    t1, c1 = time.perf_counter(), time.process_time()
    armature = addon_apply.apply_rig(bpy.context, meshes, result)
    t2, c2 = time.perf_counter(), time.process_time()
    report = {"seconds": t2 - t1, "cpu_seconds": c2 - c1, "check_seconds": t1 - t0, "vertices": sum(counts),
              "bones": len(armature.data.bones), "groups": sum(len(m.vertex_groups) for m in meshes),
              "weighted_vertices": sum(count_weighted(m) for m in meshes)}
    remove_objects(meshes + [armature])
    return report


def remove_objects(objects):
    """Delete objects and their data, so that the next run starts from the same scene."""
    for obj in objects:
        data = obj.data
        bpy.data.objects.remove(obj)
        if data.users == 0:
            (bpy.data.meshes if isinstance(data, bpy.types.Mesh) else bpy.data.armatures).remove(data)


def median_run(runs):
    """The run with the median `seconds`, with every run's seconds listed under "runs"."""
    ordered = sorted(runs, key=lambda r: r["seconds"])
    chosen = dict(ordered[len(ordered) // 2])
    chosen["runs"] = [r["seconds"] for r in runs]
    return chosen


def count_weighted(obj):
    """Vertices of obj with some weight > 0 in any vertex group."""
    weighted = 0
    for v in obj.data.vertices:
        for g in v.groups:
            if g.weight > 0.0:
                weighted += 1
                break
    return weighted


def build_armature(joints, name):
    """An armature object from our skeleton (joints: Joint maps, parents first); *_End leaves do not deform."""
    armature = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, armature)
    bpy.context.scene.collection.objects.link(obj)
    deselect_all()
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    bones = []
    for joint in joints:
        bone = armature.edit_bones.new(joint["name"])
        bone.head = joint["head"]
        bone.tail = joint["tail"]
        bone.roll = joint["roll"]
        # Same rule as the pipeline's isDeformingJoint: *_End leaves mark a chain's end and take no weight.
        bone.use_deform = not joint["name"].lower().endswith("end")
        if joint["parent"] >= 0:
            bone.parent = bones[joint["parent"]]
        bones.append(bone)
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


class CapturedOutput:
    """Capture what Blender's C code prints (operator reports in background mode) while the block runs."""

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile()
        self.saved = (os.dup(1), os.dup(2))
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        os.close(self.saved[0])
        os.close(self.saved[1])
        self.file.seek(0)
        self.text = self.file.read().decode("utf-8", "replace")
        self.file.close()
        return False


def measure_auto_weights(mesh_header, mesh_blobs, rig_header):
    """Blender's "With Automatic Weights" (bone heat) with our skeleton, on fresh copies of the meshes."""
    meshes = build_meshes(mesh_header, mesh_blobs, ".auto")
    armature = build_armature(rig_header["skeleton"]["joints"], "Bench_Auto_Armature")
    deselect_all()
    for obj in meshes:
        obj.select_set(True)
    armature.select_set(True)
    bpy.context.view_layer.objects.active = armature
    with CapturedOutput() as captured:
        t0, c0 = time.perf_counter(), time.process_time()
        outcome = bpy.ops.object.parent_set(type="ARMATURE_AUTO")
        seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    sys.stdout.write(captured.text)
    vertices = sum(len(m.data.vertices) for m in meshes)
    unweighted = vertices - sum(count_weighted(m) for m in meshes)
    warnings = [line.strip() for line in captured.text.splitlines() if "Bone Heat" in line or "failed" in line.lower()]
    # Blender repeats its warning once per failing mesh island or bone: say each distinct one once, with a count.
    message = "; ".join("%s (x%d)" % (w, warnings.count(w)) for w in sorted(set(warnings)))
    return {"seconds": seconds, "cpu_seconds": cpu_seconds, "vertices": vertices, "unweighted": unweighted,
            "operator": sorted(outcome), "failed": bool(warnings) or unweighted == vertices or meshes[0].parent != armature,
            "message": message}


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    flags = {a.split("=")[0]: a.split("=")[1] if "=" in a else "" for a in argv if a.startswith("--")}
    repeat = max(1, int(flags.get("--repeat") or 1))
    mesh_path, rig_path, out_path = args[:3]
    mesh_header, mesh_blobs = read_bundle(mesh_path)
    rig_header, rig_blobs = read_bundle(rig_path)
    report = {"blender": bpy.app.version_string}
    if "--skip-apply" not in flags:
        try:
            report["apply"] = median_run([measure_apply(mesh_header, mesh_blobs, rig_header, rig_blobs)
                                          for _ in range(repeat)])
        except Exception as err:  # the bench reports the failure instead of losing the other row
            report["apply"] = {"error": "%s: %s" % (type(err).__name__, err), "trace": traceback.format_exc()}
    if "--skip-auto" not in flags:
        try:
            report["auto_weights"] = measure_auto_weights(mesh_header, mesh_blobs, rig_header)
        except Exception as err:
            report["auto_weights"] = {"error": "%s: %s" % (type(err).__name__, err), "trace": traceback.format_exc()}
    with open(out_path, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else [])
