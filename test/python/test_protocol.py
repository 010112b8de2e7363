"""The add-on's side of the protocol follows shared-schema/protocol.json: the generated constants match the JSON,
every request the add-on builds passes a strict check against the JSON's field specs, and results are checked in
full before they may touch the scene."""

import math
import struct
import unittest

import support
from blender_addon import messages, protocol
from blender_addon.msgpack import packb, unpackb
from sample_requests import correctives_sample_requests, pose_sample_requests, sample_requests
from test_client import two_triangle_mesh

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
        kinds = {r["kind"] for r in sample_requests() + pose_sample_requests() + correctives_sample_requests()}
        self.assertEqual(kinds, set(SCHEMA["requests"]))

    def test_requests_follow_the_schema_strictly(self):
        for request in sample_requests() + pose_sample_requests() + correctives_sample_requests():
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
            "facing": "shape", "objects": [{"name": "Body", "influences": 4, "indices": struct.pack("<%dH" % len(indices), *indices),
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

    def test_skin_request_sends_the_facing_chosen_and_its_result_warns_where_the_convention_stood(self):
        joints = [{"name": "Root", "parent": -1, "head": [0, 0, 0], "tail": [0, 0, 1], "roll": 0.0}]
        mesh = two_triangle_mesh()
        request = messages.skin_request("s-1", [mesh], joints, prefix=None, facing=(0, 1, 0))
        self.assertEqual(request["options"], {"facing": [0.0, 1.0, 0.0]})
        messages.check_message(dict(request), strict=True)
        self.assertNotIn("options", messages.skin_request("s-2", [mesh], joints, prefix=None))
        self.assertEqual(messages.skin_request("s-3", [mesh], joints)["options"], {"prefix": True})
        with self.assertRaises(messages.AutoRigFailure):
            messages.skin_request("s-4", [mesh], joints, facing=(0, 0, 0))
        payload = rig_payload()
        del payload["frame"]
        payload.update(facing="convention", forward=[0, -1, 0])
        warning = messages.facing_warning(messages.check_skin_result(payload, [2], ["A", "B"]))
        self.assertIn("taken to face -Y (Blender's front view)", warning)
        payload["facing"] = "rig"
        self.assertIsNone(messages.facing_warning(messages.check_skin_result(payload, [2], ["A", "B"])))

    def test_skin_result_must_keep_the_skeleton(self):
        payload = rig_payload()
        del payload["frame"]
        payload.update(facing="rig", forward=[0, -1, 0])
        checked = messages.check_skin_result(payload, [2], ["A", "B"])
        self.assertEqual(len(checked["weights"]), 1)
        self.assertEqual((checked["facing"], checked["forward"]), ("rig", [0, -1, 0]))
        with self.assertRaises(messages.ProtocolError):
            messages.check_skin_result(payload, [2], ["A", "C"])
        for bad in (dict(payload, facing="sideways"), {k: v for k, v in payload.items() if k != "forward"}):
            with self.assertRaises(messages.ProtocolError):
                messages.check_skin_result(bad, [2], ["A", "B"])

    def test_hello_version_mismatch(self):
        hello = {"protocol": 2, "sidecar": "x", "templates": [], "models": [], "executionProvider": "cpu",
                 "requests": [], "limits": {}}
        with self.assertRaises(messages.AutoRigFailure) as ctx:
            messages.check_hello_result(hello)
        self.assertEqual(ctx.exception.code, "UNSUPPORTED_VERSION")

    def test_hello_execution_provider(self):
        hello = {"protocol": 1, "sidecar": "x", "templates": [], "models": [], "executionProvider": "cpu",
                 "requests": [], "limits": {}}
        # providerFallback is optional (a sidecar that tried nothing else may leave it out) ...
        self.assertEqual(messages.check_hello_result(dict(hello))["executionProvider"], "cpu")
        with_fallback = dict(hello, providerFallback=["cuda: Failed to load shared library", "webgpu: no adapter"])
        self.assertEqual(messages.check_hello_result(with_fallback)["providerFallback"][1], "webgpu: no adapter")
        # ... but when present it is a list of strings, and executionProvider is required
        for bad in (dict(hello, providerFallback="cuda"), dict(hello, providerFallback=[3])):
            with self.assertRaises(messages.ProtocolError):
                messages.check_hello_result(bad)
        without = {k: v for k, v in hello.items() if k != "executionProvider"}
        with self.assertRaises(messages.ProtocolError):
            messages.check_hello_result(without)

    def test_events_are_checked(self):
        messages.check_message({"kind": "error", "id": None, "code": "BAD_MESSAGE", "message": "x"})
        messages.check_message({"kind": "progress", "id": "a", "stage": "s", "fraction": 1})
        with self.assertRaises(messages.ProtocolError):
            messages.check_message({"kind": "progress", "id": "a", "stage": "s", "fraction": "half"})
        with self.assertRaises(messages.ProtocolError):
            messages.check_message({"kind": "error", "id": 3, "code": "X", "message": "x"})


class BoneNames(unittest.TestCase):
    """Names from the sidecar become bone and vertex-group names only when Blender would keep them exactly."""

    def test_valid_names_pass(self):
        for name in ["mixamorig:Hips", "Hips", "LeftHand.001", "x" * 63, "é" * 31, "Kopf (Mitte)"]:
            self.assertIsNone(messages.bone_name_problem(name), name)
        messages.check_bone_names(["mixamorig:Hips", "mixamorig:Spine"], "result.skeleton")

    def test_invalid_names_are_refused(self):
        cases = {
            "": "empty",
            " Hips": "white space",
            "Hips\t": "white space",
            "Head\x07": "U+0007",
            "Hi\x00ps": "U+0000",
            "Hi\x7fps": "U+007F",
            "Spine\u202e": "U+202E",  # right-to-left override: spoofs how the name reads
            "Neck\u200b": "U+200B",  # zero-width space: two names that look the same
            "a\u2028b": "U+2028",
            "Left/Hand": "path separator",
            "Left\\Hand": "path separator",
            "x" * 64: "63 UTF-8 bytes",
            "é" * 32: "63 UTF-8 bytes",  # 64 bytes in 32 characters
            3: "not a string",
        }
        for name, why in cases.items():
            problem = messages.bone_name_problem(name)
            self.assertIsNotNone(problem, repr(name))
            self.assertIn(why, problem, repr(name))

    def test_duplicates_and_paths_in_errors(self):
        with self.assertRaises(messages.ProtocolError) as ctx:
            messages.check_bone_names(["Hips", "Spine", "Hips"], "result.skeleton")
        self.assertEqual(ctx.exception.path, "result.skeleton.joints[2].name")
        self.assertIn("earlier joint", str(ctx.exception))
        with self.assertRaises(messages.ProtocolError) as ctx:
            messages.check_bone_names(["Hips", "Head\x07"], "result.skeleton")
        self.assertIn("'Head\\x07'", str(ctx.exception))  # shown escaped, never raw

    def test_rig_result_with_a_bad_name_is_refused(self):
        payload = {"skeleton": {"joints": [
            {"name": "Hips", "parent": -1, "head": [0, 0, 0], "tail": [0, 0, 1], "roll": 0.0},
            {"name": "../../etc/passwd", "parent": 0, "head": [0, 0, 1], "tail": [0, 0, 2], "roll": 0.0}]},
            "frame": {"up": [0, 0, 1], "forward": [0, -1, 0], "left": [1, 0, 0]}, "facing": "shape",
            "objects": [], "seconds": 0.0}
        with self.assertRaises(messages.ProtocolError) as ctx:
            messages.check_rig_result(payload, [])
        self.assertIn("path separator", str(ctx.exception))

    def test_facing_warning_only_where_the_facing_was_assumed(self):
        payload = {"skeleton": {"joints": [
            {"name": "Hips", "parent": -1, "head": [0, 0, 0], "tail": [0, 0, 1], "roll": 0.0}]},
            "frame": {"up": [0, 0, 1], "forward": [0, -1, 0], "left": [1, 0, 0]}, "facing": "convention",
            "objects": [], "seconds": 0.0}
        warning = messages.facing_warning(messages.check_rig_result(payload, []))
        self.assertIn("face -Y (Blender's front view)", warning)
        self.assertIn("Facing", warning)
        payload["frame"] = {"up": [0, 1, 0], "forward": [0, 0, 1], "left": [1, 0, 0]}
        warning = messages.facing_warning(messages.check_rig_result(payload, []))
        self.assertIn("face +Z.", warning)
        self.assertNotIn("front view", warning)
        for facing in ("shape", "option"):
            payload["facing"] = facing
            self.assertIsNone(messages.facing_warning(messages.check_rig_result(payload, [])))
        del payload["facing"]
        with self.assertRaises(messages.ProtocolError) as ctx:
            messages.check_rig_result(payload, [])
        self.assertEqual(ctx.exception.path, "result.facing")

    def test_rig_result_with_a_nan_frame_is_refused(self):
        payload = {"skeleton": {"joints": [
            {"name": "Hips", "parent": -1, "head": [0, 0, 0], "tail": [0, 0, 1], "roll": 0.0}]},
            "frame": {"up": [0, 0, float("nan")], "forward": [0, -1, 0], "left": [1, 0, 0]}, "facing": "shape",
            "objects": [], "seconds": 0.0}
        with self.assertRaises(messages.ProtocolError) as ctx:
            messages.check_rig_result(payload, [])
        self.assertEqual(ctx.exception.path, "result.frame")

    def test_names_are_data_only(self):
        evil = "__import__('os').system('echo hacked')"
        self.assertIsNone(messages.bone_name_problem(evil))  # valid characters: kept as a plain string, never run


class DisplayText(unittest.TestCase):
    def test_sidecar_messages_are_shown_as_plain_text(self):
        self.assertEqual(messages.display_text("no legs\x1b[31m\u202e"), "no legs [31m ")
        self.assertEqual(messages.display_text("line one\nline two"), "line one\nline two")
        self.assertEqual(len(messages.display_text("x" * 10000)), 500)


if __name__ == "__main__":
    unittest.main()
