"""A stand-in for `autorig serve` used by the client tests and the Blender safety test: same command line, token,
ready line and protocol, but a trivial two-joint "rig" (joints at the bounding box's bottom and top, each vertex
weighted to the nearer one), a trivial "skin" (every vertex weighted to the sent skeleton's first bone), and trivial
latent poses: pose.list names FAKE_POSES (kneeBentRt experimental), pose.apply lifts every vertex by
0.1 * strength along world z (+ 1 cm per object index, so objects cannot be swapped unnoticed); pose.prepare
remembers the mesh sent (its bytes), and an apply or prepare of a remembered mesh answers reused true, as the real
sidecar's cache does.

FAKE_SIDECAR_MODE selects a behaviour:
  normal | crash (exits before ready) | error (rig and skin answer NOT_HUMANOID / INTERNAL) |
  slow (progress, then waits for cancel) | nested (result nested under `result`);
  malformed results, which the add-on must refuse (rig and skin alike unless noted):
  badresult (weights for one vertex too many) | nan (a NaN weight) | badindex (a joint index past the skeleton) |
  nanjoint (a NaN bone head) | unknownbone (skin: a bone that was not sent) |
  badname (rig: a name with a control character) | slashname (rig: a path separator) |
  longname (rig: 64 UTF-8 bytes) | dupname (rig: two joints with one name) |
  posecount (pose.apply: one vertex short) | posenan (pose.apply: a NaN coordinate) |
  posewrong (pose.apply: the answer names another pose) | poseconvention (pose.apply, pose.prepare: facing
  'convention' where no skeleton or facing is sent); in mode error pose.list and pose.apply answer MODEL_MISSING.
"""

import hashlib
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import support  # noqa: E402,F401
from blender_addon.msgpack import packb, unpackb  # noqa: E402
from ws_test_server import TestServer  # noqa: E402

MODE = os.environ.get("FAKE_SIDECAR_MODE", "normal")

_BAD_NAMES = {"badname": "Head\x07", "slashname": "Left/Head", "longname": "H" * 64, "dupname": None}


def _z_values(objects):
    zs = []
    for obj in objects:
        data = obj["positions"]
        zs.extend(struct.unpack("<%df" % (len(data) // 4), data)[2::3])
    return zs


def _weights_message(name, joint_of_vertex, count):
    """ObjectWeights with k=4: each vertex fully on one joint; malformed as MODE asks."""
    if MODE == "badresult":
        count += 1
    indices, weights = [], []
    for i in range(count):
        indices += [joint_of_vertex(i), 0, 0, 0]
        weights += [1.0, 0.0, 0.0, 0.0]
    if MODE == "nan" and weights:
        weights[-4] = float("nan")
    if MODE == "badindex" and indices:
        indices[0] = 200
    return {"name": name, "influences": 4, "indices": struct.pack("<%dH" % len(indices), *indices),
            "weights": struct.pack("<%df" % len(weights), *weights)}


def _spoil_joints(joints):
    if MODE in _BAD_NAMES:
        joints[1]["name"] = _BAD_NAMES[MODE] if _BAD_NAMES[MODE] is not None else joints[0]["name"]
    if MODE == "nanjoint":
        joints[-1]["head"] = [0.0, float("nan"), 0.0]
    return joints


def rig_result(request):
    objects = request["objects"]
    zs = _z_values(objects)
    low, high = min(zs), max(zs)
    middle = (low + high) / 2
    joints = _spoil_joints([
        {"name": "mixamorig:Hips" if request.get("options", {}).get("prefix", True) else "Hips", "parent": -1,
         "head": [0.0, 0.0, low], "tail": [0.0, 0.0, middle], "roll": 0.0},
        {"name": "Head", "parent": 0, "head": [0.0, 0.0, middle], "tail": [0.0, 0.0, high], "roll": 0.5},
    ])
    result_objects = []
    for obj in objects:
        z = struct.unpack("<%df" % (len(obj["positions"]) // 4), obj["positions"])[2::3]
        result_objects.append(_weights_message(obj["name"], lambda i: 1 if i < len(z) and z[i] > middle else 0,
                                               len(z)))
    facing = "option" if "facing" in request.get("options", {}) else "shape"
    return {"skeleton": {"joints": joints}, "frame": {"up": [0, 0, 1], "forward": [0, -1, 0], "left": [1, 0, 0]},
            "facing": facing, "objects": result_objects, "seconds": 0.01}


def skin_result(request):
    joints = _spoil_joints([dict(j) for j in request["skeleton"]["joints"]])
    if MODE == "unknownbone":
        joints[0]["name"] = "NotSentBone"
    objects = [_weights_message(obj["name"], lambda i: 0, len(obj["positions"]) // 12) for obj in request["objects"]]
    return {"skeleton": {"joints": joints}, "objects": objects, "facing": "shape", "forward": [0.0, -1.0, 0.0],
            "seconds": 0.01}


FAKE_POSES = [
    {"name": "elbowBentLf", "components": ["elbowBentLf"], "experimental": False, "note": "measured 1.0 mm (rig 2.0 mm)"},
    {"name": "kneeBentRt", "components": ["kneeBentRt"], "experimental": True, "note": "measured 3.0 mm (rig 2.0 mm)"},
    {"name": "elbowBentLf+kneeBentRt", "components": ["elbowBentLf", "kneeBentRt"], "experimental": True,
     "note": "not measured yet"},
]


# digests of the meshes prepared or posed (all connections, as the real sidecar's PoseReuseCache)
_known_meshes = set()


def _mesh_digest(request):
    """The mesh sent and what sets its facing (as the sidecar keys what it read of a mesh: pose.apply.facing)."""
    digest = hashlib.sha256()
    facing = "rig" if "skeleton" in request else repr([float(x) for x in request.get("facing", ())])
    digest.update(facing.encode("utf-8"))
    for obj in request["objects"]:
        for field in (obj["name"].encode("utf-8"), obj["positions"], obj["triangles"]):
            digest.update(struct.pack("<I", len(field)))
            digest.update(field)
    return digest.hexdigest()


def _remember(request):
    """Whether the mesh of this request was known; it is from now on."""
    key = _mesh_digest(request)
    known = key in _known_meshes
    _known_meshes.add(key)
    return known


def _pose_facing(request):
    """A pose request's facing and forward as the sidecar answers them: the skeleton's ('rig', taken to face -y here),
    else the facing sent ('option'), else the shape's (-y), or the convention's in mode poseconvention."""
    if "skeleton" in request:
        return {"facing": "rig", "forward": [0.0, -1.0, 0.0]}
    if "facing" in request:
        return {"facing": "option", "forward": [float(x) for x in request["facing"]]}
    return {"facing": "convention" if MODE == "poseconvention" else "shape", "forward": [0.0, -1.0, 0.0]}


def prepare_result(request):
    auto_rig = request.get("autoRig", "skeleton" not in request)
    return dict({"reused": _remember(request), "rig": "auto" if auto_rig else "none", "seconds": 0.01},
                **_pose_facing(request))


def pose_result(request):
    strength = request.get("strength", 1.0)
    objects = []
    for k, obj in enumerate(request["objects"]):
        values = list(struct.unpack("<%df" % (len(obj["positions"]) // 4), obj["positions"]))
        for i in range(2, len(values), 3):
            values[i] += 0.1 * strength + 0.01 * k
        if MODE == "posecount":
            values = values[:-3]
        if MODE == "posenan" and values:
            values[0] = float("nan")
        objects.append({"name": obj["name"], "positions": struct.pack("<%df" % len(values), *values)})
    pose = request["pose"]
    if MODE == "posewrong":
        pose = "elbowBentLf" if pose != "elbowBentLf" else "kneeBentRt"
    return {"objects": objects, "pose": pose, "strength": float(strength), "strategy": request.get("strategy", "mean"),
            "identity": "fakeIdentity" if request.get("strategy") == "nearest" else None,
            "rig": "given" if "skeleton" in request else "auto", "reused": _remember(request), "seconds": 0.01,
            "provider": "cpu", **_pose_facing(request)}


def answer_job(conn, kind, rid, request):
    conn.send_binary(packb({"kind": "progress", "id": rid, "stage": "mesh", "fraction": 0.25}))
    if MODE == "error":
        code, text = {"rig": ("NOT_HUMANOID", "no legs"), "pose.apply": ("MODEL_MISSING", "no pose models"),
                      "pose.prepare": ("NOT_HUMANOID", "no legs")}.get(
            kind, ("INTERNAL", "the skinning failed"))
        conn.send_binary(packb({"kind": "error", "id": rid, "code": code, "message": text}))
    elif MODE == "slow":
        nxt = conn.read_message()
        cancel = unpackb(nxt[1]) if nxt else None
        if cancel and cancel["kind"] == "cancel" and cancel["id"] == rid:
            conn.send_binary(packb({"kind": "error", "id": rid, "code": "CANCELLED", "message": "cancelled"}))
    else:
        result = {"rig": rig_result, "skin": skin_result, "pose.apply": pose_result,
                  "pose.prepare": prepare_result}[kind](request)
        if MODE == "nested":
            conn.send_binary(packb({"kind": "result", "id": rid, "request": kind, "result": result}))
        else:
            conn.send_binary(packb(dict({"kind": "result", "id": rid, "request": kind}, **result)))


def behaviour(conn):
    while True:
        msg = conn.read_message()
        if msg is None:
            conn.send_close(1000)
            return
        request = unpackb(msg[1])
        kind, rid = request["kind"], request["id"]
        if kind == "hello":
            conn.send_binary(packb({"kind": "result", "id": rid, "request": "hello", "protocol": 1, "sidecar": "fake",
                                    "templates": ["mixamo"], "models": [], "executionProvider": "cpu",
                                    "providerFallback": ["cuda: libcudart.so.12: cannot open shared object file"],
                                    "requests": ["hello", "rig", "skin", "cancel", "pose.list", "pose.apply",
                                                 "pose.prepare"],
                                    "limits": {}}))
        elif kind in ("rig", "skin", "pose.apply", "pose.prepare"):
            answer_job(conn, kind, rid, request)
        elif kind == "pose.list":
            if MODE == "error":
                conn.send_binary(packb({"kind": "error", "id": rid, "code": "MODEL_MISSING", "message": "no library"}))
            else:
                conn.send_binary(packb({"kind": "result", "id": rid, "request": "pose.list", "poses": FAKE_POSES}))
        elif kind == "cancel":
            pass
        else:
            conn.send_binary(packb({"kind": "error", "id": rid, "code": "UNKNOWN_KIND", "message": kind}))


def main(argv):
    assert argv[:2] == ["serve", "--port"], argv
    if MODE == "crash":
        sys.stderr.write("fake sidecar: cannot start (as asked)\n")
        return 3
    server = TestServer(behaviour, token=os.environ["AUTORIG_TOKEN"], port=int(argv[2]))
    print('{"event":"ready","port":%d,"protocol":1}' % server.port, flush=True)
    # Exit when the parent closes stdin, like the real sidecar.
    import threading
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
