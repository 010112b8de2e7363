"""A stand-in for `autorig serve` used by the client tests: same command line, token, ready line and protocol,
but a trivial two-joint "rig" (joints at the bounding box's bottom and top, each vertex weighted to the nearer one).

FAKE_SIDECAR_MODE selects a behaviour: normal | crash (exits before ready) | error (rig answers NOT_HUMANOID) |
slow (progress, then waits for cancel) | badresult (weights for the wrong vertex count) | nested (result nested).
"""

import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import support  # noqa: E402,F401
from blender_addon.msgpack import packb, unpackb  # noqa: E402
from ws_test_server import TestServer  # noqa: E402

MODE = os.environ.get("FAKE_SIDECAR_MODE", "normal")


def rig_result(request):
    objects = request["objects"]
    zs = []
    for obj in objects:
        data = obj["positions"]
        zs.extend(struct.unpack("<%df" % (len(data) // 4), data)[2::3])
    low, high = min(zs), max(zs)
    joints = [
        {"name": "mixamorig:Hips" if request.get("options", {}).get("prefix", True) else "Hips", "parent": -1,
         "head": [0.0, 0.0, low], "tail": [0.0, 0.0, (low + high) / 2], "roll": 0.0},
        {"name": "Head\x07", "parent": 0, "head": [0.0, 0.0, (low + high) / 2], "tail": [0.0, 0.0, high], "roll": 0.5},
    ]
    result_objects = []
    for obj in objects:
        data = obj["positions"]
        count = len(data) // 12
        if MODE == "badresult":
            count += 1
        z = struct.unpack("<%df" % (len(data) // 4), data)[2::3]
        indices, weights = [], []
        for i in range(count):
            upper = i < len(z) and z[i] > (low + high) / 2
            indices += [1 if upper else 0, 0, 0, 0]
            weights += [1.0, 0.0, 0.0, 0.0]
        result_objects.append({"name": obj["name"], "influences": 4, "indices": struct.pack("<%dH" % len(indices), *indices),
                               "weights": struct.pack("<%df" % len(weights), *weights)})
    return {"skeleton": {"joints": joints}, "frame": {"up": [0, 0, 1], "forward": [0, -1, 0], "left": [1, 0, 0]},
            "objects": result_objects, "seconds": 0.01}


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
                                    "requests": ["hello", "rig", "skin", "cancel"], "limits": {}}))
        elif kind == "rig":
            conn.send_binary(packb({"kind": "progress", "id": rid, "stage": "mesh", "fraction": 0.25}))
            if MODE == "error":
                conn.send_binary(packb({"kind": "error", "id": rid, "code": "NOT_HUMANOID", "message": "no legs"}))
            elif MODE == "slow":
                nxt = conn.read_message()
                cancel = unpackb(nxt[1]) if nxt else None
                if cancel and cancel["kind"] == "cancel" and cancel["id"] == rid:
                    conn.send_binary(packb({"kind": "error", "id": rid, "code": "CANCELLED", "message": "cancelled"}))
            elif MODE == "nested":
                conn.send_binary(packb({"kind": "result", "id": rid, "request": "rig", "result": rig_result(request)}))
            else:
                conn.send_binary(packb(dict({"kind": "result", "id": rid, "request": "rig"}, **rig_result(request))))
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
