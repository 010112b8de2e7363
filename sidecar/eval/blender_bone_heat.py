"""Blender's own "With Automatic Weights" (bone heat) on bare meshes with a given skeleton, for `autorig eval --peer blender`.

    blender -b --factory-startup --python-exit-code 1 -P sidecar/eval/blender_bone_heat.py -- IN.bin OUT.bin

Both files share one layout (sidecar/eval/blenderPeer.ts writes IN and reads OUT): u32 little-endian header length H,
H bytes of UTF-8 JSON, zero padding to a multiple of 8, then raw little-endian blobs, each starting on a multiple of 8;
the header's "blobs" lists each blob's {offset (from the data start), byteLength, type}.

IN  header: {parts: [{name}], joints: [{name, parent, head, tail, roll, deform}]};
    blobs per part: positions f32 #V*3, triangles u32 #T*3.
OUT header: {blenderVersion, seconds, failed, message, unweighted, parts: [{name, vertices}]};
    blobs per part: indices u32 #V*4 (into IN's joints), weights f32 #V*4 (top 4 of the vertex groups, descending,
    renormalised to sum 1; rows of vertices without any group weight are all 0).

Nothing but the operator is timed: building the meshes and the armature, and reading the groups back, are not.
"""

import ctypes
import json
import os
import sys
import tempfile
import time
from array import array

import bpy

INFLUENCES = 4
# Blender deletes zero-length bones when it leaves edit mode; the skeletons we feed can have coincident joints.
MIN_BONE_LENGTH = 1e-5


def read_bundle(path):
    """(header dict, [bytes per blob]) of a bundle file (layout in the module doc)."""
    with open(path, "rb") as f:
        data = f.read()
    length = int.from_bytes(data[:4], "little")
    header = json.loads(data[4:4 + length].decode("utf-8"))
    start = (4 + length + 7) & ~7
    blobs = [data[start + b["offset"]:start + b["offset"] + b["byteLength"]] for b in header["blobs"]]
    return header, blobs


def write_bundle(path, header, blobs):
    """Write header (a JSON-able dict) and blobs (array.array, little-endian on disk) in the module doc's layout."""
    entries, chunks, offset = [], [], 0
    for blob in blobs:
        raw = little_endian(blob).tobytes()
        entries.append({"offset": offset, "byteLength": len(raw), "type": {"f": "f32", "I": "u32"}[blob.typecode]})
        padding = (-len(raw)) % 8
        chunks.append(raw + b"\0" * padding)
        offset += len(raw) + padding
    head = json.dumps(dict(header, blobs=entries)).encode("utf-8")
    with open(path, "wb") as f:
        f.write(len(head).to_bytes(4, "little"))
        f.write(head)
        f.write(b"\0" * ((-(4 + len(head))) % 8))
        for chunk in chunks:
            f.write(chunk)


def little_endian(values):
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return values


def typed(blob, code):
    """bytes of a little-endian blob → array.array of typecode code."""
    values = array(code)
    values.frombytes(blob)
    return little_endian(values)


def build_mesh(name, positions, corners):
    """A mesh object linked to the scene. positions: f32 #V*3; corners: triangle vertex indices #T*3."""
    nv, nt = len(positions) // 3, len(corners) // 3
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(nv)
    mesh.vertices.foreach_set("co", positions)
    mesh.loops.add(3 * nt)
    mesh.loops.foreach_set("vertex_index", corners)
    mesh.polygons.add(nt)
    mesh.polygons.foreach_set("loop_start", array("i", range(0, 3 * nt, 3)))
    mesh.polygons.foreach_set("loop_total", array("i", [3]) * nt)
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def build_armature(joints):
    """An armature object from joints ({name, parent, head, tail, roll, deform}, parents first), built in edit mode.

    Returns (object, bone_joint): bone_joint maps each bone's final name (Blender may shorten or de-duplicate a name)
    to its index in joints.
    """
    armature = bpy.data.armatures.new("BoneHeat_Armature")
    obj = bpy.data.objects.new("BoneHeat_Armature", armature)
    bpy.context.scene.collection.objects.link(obj)
    select_only([obj], obj)
    bpy.ops.object.mode_set(mode="EDIT")
    bones = []
    for joint in joints:
        bone = armature.edit_bones.new(joint["name"])
        head, tail = joint["head"], joint["tail"]
        bone.head = head
        length = sum((t - h) ** 2 for h, t in zip(head, tail)) ** 0.5
        bone.tail = tail if length >= MIN_BONE_LENGTH else (head[0], head[1], head[2] + MIN_BONE_LENGTH * 10)
        bone.roll = joint["roll"]
        bone.use_deform = bool(joint["deform"])
        if joint["parent"] >= 0:
            bone.parent = bones[joint["parent"]]
        bones.append(bone)
    names = [bone.name for bone in bones]
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj, {name: j for j, name in enumerate(names)}


def select_only(objects, active):
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    bpy.context.view_layer.objects.active = active


class CapturedOutput:
    """What Blender prints on fds 1 and 2 while the block runs: in background mode its warnings ("Bone Heat Weighting:
    failed to find solution for one or more bones") are printed from C, not returned to the Python caller."""

    def __enter__(self):
        flush_all()
        self.file = tempfile.TemporaryFile()
        self.saved = (os.dup(1), os.dup(2))
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        flush_all()
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        os.close(self.saved[0])
        os.close(self.saved[1])
        self.file.seek(0)
        self.text = self.file.read().decode("utf-8", "replace")
        self.file.close()
        return False


def flush_all():
    """Flush Python's streams and C's stdio buffers (a pipe makes C's stdout fully buffered)."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass


def heat_warnings(text):
    """The distinct warning/error lines about the weighting in Blender's output, each once, with a count if repeated."""
    lines = [line.strip() for line in text.splitlines()
             if "bone heat" in line.lower() or "failed to find" in line.lower() or line.strip().startswith("Error")]
    distinct = sorted(set(lines), key=lines.index)
    return [line if lines.count(line) == 1 else "%s (x%d)" % (line, lines.count(line)) for line in distinct]


def vertex_group_weights(obj, group_joint):
    """Sparse weights of obj's vertices: per vertex a list of (joint index, weight > 0); group_joint: group index → joint."""
    rows = []
    for vertex in obj.data.vertices:
        row = []
        for element in vertex.groups:
            joint = group_joint.get(element.group)
            if joint is not None and element.weight > 0.0:
                row.append((joint, element.weight))
        rows.append(row)
    return rows


def top_influences(rows, k):
    """rows: per vertex [(joint, weight)] → (indices u32 #V*k, weights f32 #V*k): the k largest weights, descending,
    renormalised to sum 1; joints repeated in a row are summed first; empty slots are (0, 0)."""
    indices, weights = array("I", [0]) * (k * len(rows)), array("f", [0.0]) * (k * len(rows))
    for v, row in enumerate(rows):
        if not row:
            continue
        merged = {}
        for joint, weight in row:
            merged[joint] = merged.get(joint, 0.0) + weight
        best = sorted(merged.items(), key=lambda item: (-item[1], item[0]))[:k]
        total = sum(weight for _, weight in best)
        for slot, (joint, weight) in enumerate(best):
            indices[v * k + slot] = joint
            weights[v * k + slot] = weight / total
    return indices, weights


def bone_heat(joints, parts, blobs):
    """Run "With Automatic Weights" on the parts with all of them selected and the armature active, as a user does."""
    meshes = [build_mesh(part["name"], typed(blobs[2 * i], "f"), typed(blobs[2 * i + 1], "i"))
              for i, part in enumerate(parts)]
    armature, bone_joint = build_armature(joints)
    # A user's meshes have been evaluated (drawn) long before they click: pay for that outside the timed part.
    bpy.context.view_layer.update()
    select_only(meshes, armature)
    error = None
    with CapturedOutput() as captured:
        t0 = time.perf_counter()
        try:
            bpy.ops.object.parent_set(type="ARMATURE_AUTO")
        except RuntimeError as err:  # an operator that reports an ERROR raises
            error = str(err).strip()
        seconds = time.perf_counter() - t0
    sys.stdout.write(captured.text)
    warnings = heat_warnings(captured.text)
    messages = ([error] if error else []) + warnings
    failed = error is not None or any("failed to find" in w.lower() for w in warnings)

    out_parts, out_blobs, unweighted = [], [], 0
    for part, mesh in zip(parts, meshes):
        group_joint = {g.index: bone_joint[g.name] for g in mesh.vertex_groups if g.name in bone_joint}
        rows = vertex_group_weights(mesh, group_joint)
        unweighted += sum(1 for row in rows if not row)
        indices, weights = top_influences(rows, INFLUENCES)
        out_parts.append({"name": part["name"], "vertices": len(rows)})
        out_blobs += [indices, weights]
    header = {"blenderVersion": bpy.app.version_string, "seconds": seconds, "failed": failed,
              "message": "; ".join(messages), "unweighted": unweighted, "parts": out_parts}
    return header, out_blobs


def main(argv):
    in_path, out_path = argv[:2]
    header, blobs = read_bundle(in_path)
    out_header, out_blobs = bone_heat(header["joints"], header["parts"], blobs)
    write_bundle(out_path, out_header, out_blobs)


if __name__ == "__main__":
    main(sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else [])
