"""The add-on's side of the protocol follows shared-schema/protocol.json: the generated constants match the JSON,
every request the add-on builds passes a strict check against the JSON's field specs, and results are checked in
full before they may touch the scene."""

import math
import struct
import unittest

import support
from blender_addon import messages, protocol
from blender_addon.msgpack import packb, unpackb
from sample_requests import sample_requests

SCHEMA = support.load_protocol_json()


def as_python(value):
    """JSON arrays become tuples in protocol.py: compare like with like."""
    if isinstance(value, list):
        return tuple(as_python(v) for v in value)
    if isinstance(value, dict):
        return {k: as_python(v) for k, v in value.items()}
    return value


class GeneratedConstants(unittest.TestCase):
    def test_match_protocol_json(self):
        self.assertEqual(protocol.PROTOCOL_VERSION, SCHEMA["protocolVersion"])
        self.assertEqual(protocol.LIMITS, SCHEMA["limits"])
        self.assertEqual(protocol.ERROR_CODES, SCHEMA["errorCodes"])
        self.assertEqual(protocol.TYPES, SCHEMA["types"])
        self.assertEqual(protocol.REQUESTS, SCHEMA["requests"])
        self.assertEqual(protocol.EVENTS, SCHEMA["events"])
        self.assertEqual(protocol.RESULTS, SCHEMA["results"])
        self.assertEqual(protocol.RESERVED_KINDS, as_python(SCHEMA["reserved"]))
        self.assertEqual(protocol.REQUEST_KINDS, tuple(SCHEMA["requests"]))
        self.assertEqual(protocol.MAX_MESSAGE_BYTES, SCHEMA["limits"]["maxMessageBytes"])
        self.assertEqual(protocol.ERROR_NOT_HUMANOID, "NOT_HUMANOID")


class Requests(unittest.TestCase):
    def test_every_request_kind_is_built(self):
        kinds = {r["kind"] for r in sample_requests()}
        self.assertEqual(kinds, set(SCHEMA["requests"]))

    def test_requests_follow_the_schema_strictly(self):
        for request in sample_requests():
            with self.subTest(kind=request["kind"]):
                decoded = unpackb(packb(request))  # what goes over the wire
                messages.check_message(decoded, strict=True)
                fields = SCHEMA["requests"][decoded["kind"]]
                required = {k for k in fields if not k.endswith("?")}
                allowed = {k.rstrip("?") for k in fields} | {"kind"}
                self.assertTrue(required <= set(decoded), required - set(decoded))
                self.assertTrue(set(decoded) <= allowed, set(decoded) - allowed)
                self.assertLessEqual(len(decoded["id"]), protocol.MAX_ID_LENGTH)

    def test_typed_arrays_are_little_endian_bin(self):
        rig = [r for r in sample_requests() if r["kind"] == "rig"][0]
        body = rig["objects"][0]
        self.assertIsInstance(body["positions"], bytes)
        self.assertEqual(struct.unpack("<12f", body["positions"])[6:9], (1.0, 0.0, 2.0))
        self.assertEqual(struct.unpack("<6I", body["triangles"]), (0, 1, 2, 0, 2, 3))
        self.assertEqual(rig["options"], {"prefix": True})

    def test_strict_check_catches_mistakes(self):
        good = sample_requests()[1]
        cases = {
            "missing id": {k: v for k, v in good.items() if k != "id"},
            "extra field": dict(good, colour="red"),
            "wrong type": dict(good, id=5),
            "positions not bin": dict(good, objects=[dict(good["objects"][0], positions=[0.0] * 12)]),
            "positions not xyz": dict(good, objects=[dict(good["objects"][0], positions=b"\0" * 16)]),
            "prefix not bool": dict(good, options={"prefix": 1}),
            "unknown kind": dict(good, kind="dance"),
        }
        for name, message in cases.items():
            with self.subTest(name):
                with self.assertRaises(messages.ProtocolError):
                    messages.check_message(message, strict=True)


def rig_payload(count=2, joints=None, weights=None, indices=None):
    joints = joints or [
        {"name": "A", "parent": -1, "head": [0, 0, 0], "tail": [0, 0, 1], "roll": 0},
        {"name": "B", "parent": 0, "head": [0, 0, 1], "tail": [0, 0, 2], "roll": 0.5},
    ]
    indices = indices if indices is not None else [0, 1, 0, 0] * count
    weights = weights if weights is not None else [0.75, 0.25, 0.0, 0.0] * count
    return {"skeleton": {"joints": joints}, "frame": {"up": [0, 0, 1], "forward": [0, 1, 0], "left": [1, 0, 0]},
            "objects": [{"name": "Body", "influences": 4, "indices": struct.pack("<%dH" % len(indices), *indices),
                         "weights": struct.pack("<%df" % len(weights), *weights)}], "seconds": 1}


class Results(unittest.TestCase):
    def test_good_rig_result(self):
        checked = messages.check_rig_result(rig_payload(), [2])
        indices, weights, k = checked["weights"][0]
        self.assertEqual((list(indices), k), ([0, 1, 0, 0, 0, 1, 0, 0], 4))
        self.assertEqual(weights[0], 0.75)

    def test_bad_rig_results(self):
        nan = float("nan")
        bad_parent = [{"name": "A", "parent": 1, "head": [0, 0, 0], "tail": [0, 0, 1], "roll": 0},
                      {"name": "B", "parent": 0, "head": [0, 0, 1], "tail": [0, 0, 2], "roll": 0}]
        nan_joint = [{"name": "A", "parent": -1, "head": [nan, 0, 0], "tail": [0, 0, 1], "roll": 0}]
        cases = {
            "vertex count": (rig_payload(count=3), [2]),
            "object count": (rig_payload(), [2, 2]),
            "parent after child": (rig_payload(joints=bad_parent), [2]),
            "nan head": (rig_payload(joints=nan_joint, indices=[0] * 8), [2]),
            "index out of range": (rig_payload(indices=[0, 2, 0, 0] * 2), [2]),
            "negative weight": (rig_payload(weights=[1.25, -0.25, 0, 0] * 2), [2]),
            "nan weight": (rig_payload(weights=[nan, 0, 0, 0] * 2), [2]),
            "no frame": ({k: v for k, v in rig_payload().items() if k != "frame"}, [2]),
        }
        for name, (payload, counts) in cases.items():
            with self.subTest(name):
                with self.assertRaises(messages.ProtocolError):
                    messages.check_rig_result(payload, counts)

    def test_skin_result_must_keep_the_skeleton(self):
        payload = rig_payload()
        del payload["frame"]
        self.assertEqual(len(messages.check_skin_result(payload, [2], ["A", "B"])["weights"]), 1)
        with self.assertRaises(messages.ProtocolError):
            messages.check_skin_result(payload, [2], ["A", "C"])

    def test_hello_version_mismatch(self):
        hello = {"protocol": 2, "sidecar": "x", "templates": [], "models": [], "executionProvider": "cpu",
                 "requests": [], "limits": {}}
        with self.assertRaises(messages.AutoRigFailure) as ctx:
            messages.check_hello_result(hello)
        self.assertEqual(ctx.exception.code, "UNSUPPORTED_VERSION")

    def test_events_are_checked(self):
        messages.check_message({"kind": "error", "id": None, "code": "BAD_MESSAGE", "message": "x"})
        messages.check_message({"kind": "progress", "id": "a", "stage": "s", "fraction": 1})
        with self.assertRaises(messages.ProtocolError):
            messages.check_message({"kind": "progress", "id": "a", "stage": "s", "fraction": "half"})
        with self.assertRaises(messages.ProtocolError):
            messages.check_message({"kind": "error", "id": 3, "code": "X", "message": "x"})


class BoneNames(unittest.TestCase):
    def test_sanitised(self):
        names = messages.sanitize_bone_names(
            ["mixamorig:Hips", "bad\x00\x1fname\x7f", "", "  ", "x" * 80, "é" * 40, "dup", "dup", "dup"])
        self.assertEqual(names[0], "mixamorig:Hips")
        self.assertEqual(names[1], "badname")
        self.assertEqual(names[2], "Bone")
        self.assertEqual(names[3], "Bone.001")
        self.assertEqual(names[4], "x" * 63)
        self.assertLessEqual(len(names[5].encode("utf-8")), 63)
        self.assertEqual(names[5], "é" * 31)
        self.assertEqual(names[6:], ["dup", "dup.001", "dup.002"])
        self.assertEqual(len(set(names)), len(names))

    def test_names_are_data_only(self):
        evil = "__import__('os').system('echo hacked')"
        self.assertEqual(messages.sanitize_bone_names([evil]), [evil])


if __name__ == "__main__":
    unittest.main()
