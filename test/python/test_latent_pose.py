"""Apply Latent Pose in the add-on, without Blender: the pose.list / pose.apply requests and the checks of their
answers (messages), the pose menu's cache and the strategies (poses), whether a sidecar is reachable (client), and
both requests end to end against fake_sidecar.py, including the malformed answers the add-on must refuse."""

import math
import os
import struct
import tempfile
import unittest
from array import array

import support  # noqa: F401
from blender_addon import client, messages, poses, protocol
from test_client import fake_launcher_for, two_triangle_mesh


def pose_payload(objects, pose="elbowBentLf", **fields):
    """A well-formed pose.apply result for `objects` [(name, [x, y, z, ...])]."""
    payload = {"objects": [{"name": n, "positions": struct.pack("<%df" % len(v), *v)} for n, v in objects],
               "pose": pose, "strength": 1.0, "strategy": "mean", "identity": None, "rig": "auto", "reused": False, "seconds": 0.5,
               "provider": "cpu", "facing": "shape", "forward": [0.0, -1.0, 0.0]}
    payload.update(fields)
    return payload


LIST = [
    {"name": "elbowBentLf", "components": ["elbowBentLf"], "experimental": False, "note": "1.0 mm (rig 2.0 mm)"},
    {"name": "kneeBentRt", "components": ["kneeBentRt"], "experimental": True, "note": "3.0 mm (rig 2.0 mm)"},
]


class Requests(unittest.TestCase):
    def test_pose_apply_request_carries_the_choice(self):
        request = messages.pose_apply_request("p1", [two_triangle_mesh()], "kneeBentRt", strength=1.25,
                                              strategy="nearest")
        self.assertEqual(request["kind"], protocol.KIND_POSE_APPLY)
        self.assertEqual((request["pose"], request["strength"], request["strategy"]), ("kneeBentRt", 1.25, "nearest"))
        messages.check_message(request, strict=True)
        self.assertEqual(messages.pose_list_request("l1"), {"kind": "pose.list", "id": "l1"})

    def test_pose_apply_request_carries_the_armature_both_or_neither(self):
        mesh = two_triangle_mesh()
        count = len(mesh["positions"]) // 12
        joints = [{"name": "mixamorig:Hips", "parent": -1, "head": [0, 0, 1], "tail": [0, 0, 1.1], "roll": 0.0}]
        weights = [messages.object_weights(mesh["name"], array("H", [0, 0, 0, 0] * count),
                                           array("f", [1, 0, 0, 0] * count), 4)]
        request = messages.pose_apply_request("p2", [mesh], "kneeBentRt", joints=joints, weights=weights)
        self.assertEqual(request["skeleton"], {"joints": joints})
        self.assertEqual(request["weights"], weights)
        messages.check_message(request, strict=True)
        plain = messages.pose_apply_request("p3", [mesh], "kneeBentRt")
        self.assertNotIn("skeleton", plain)
        self.assertNotIn("weights", plain)
        for kwargs in (dict(joints=joints), dict(weights=weights)):
            with self.subTest(sorted(kwargs)):
                with self.assertRaises(messages.AutoRigFailure) as caught:
                    messages.pose_apply_request("p", [mesh], "kneeBentRt", **kwargs)
                self.assertEqual(caught.exception.code, protocol.ERROR_BAD_REQUEST)

    def test_mixamo_rigged_needs_every_template_joint(self):
        self.assertTrue(poses.mixamo_rigged(poses.MIXAMO_JOINTS))
        self.assertTrue(poses.mixamo_rigged(["mixamorig:" + n for n in poses.MIXAMO_JOINTS] + ["Extra"]))
        self.assertFalse(poses.mixamo_rigged([n for n in poses.MIXAMO_JOINTS if n != "LeftForeArm"]))
        self.assertFalse(poses.mixamo_rigged(["Bone", "Bone.001"]))

    def test_bad_choices_are_refused_before_sending(self):
        mesh = [two_triangle_mesh()]
        cases = {
            "strength above 1.5": dict(objects=mesh, pose="kneeBentRt", strength=1.51),
            "negative strength": dict(objects=mesh, pose="kneeBentRt", strength=-0.1),
            "NaN strength": dict(objects=mesh, pose="kneeBentRt", strength=float("nan")),
            "unknown strategy": dict(objects=mesh, pose="kneeBentRt", strategy="median"),
            "no pose": dict(objects=mesh, pose=""),
        }
        for name, kwargs in cases.items():
            with self.subTest(name):
                with self.assertRaises(messages.AutoRigFailure) as caught:
                    messages.pose_apply_request("p", **kwargs)
                self.assertEqual(caught.exception.code, protocol.ERROR_BAD_REQUEST)
        with self.assertRaises(messages.AutoRigFailure) as caught:
            messages.pose_apply_request("p", [], "kneeBentRt")
        self.assertEqual(caught.exception.code, protocol.ERROR_BAD_REQUEST)


class Results(unittest.TestCase):
    def test_pose_list_is_checked_and_made_safe(self):
        checked = messages.check_pose_list_result({"poses": LIST})
        self.assertEqual([p["name"] for p in checked], ["elbowBentLf", "kneeBentRt"])
        self.assertEqual([p["experimental"] for p in checked], [False, True])
        noisy = dict(LIST[0], note="a\x1b[31m note")
        self.assertNotIn("\x1b", messages.check_pose_list_result({"poses": [noisy]})[0]["note"])
        for name, poses_field in {
            "duplicate": [LIST[0], LIST[0]],
            "control character": [dict(LIST[0], name="elbow\x07")],
            "path separator": [dict(LIST[0], name="a/b")],
            "too long": [dict(LIST[0], name="p" * 64)],
            "experimental not bool": [dict(LIST[0], experimental=1)],
        }.items():
            with self.subTest(name):
                with self.assertRaises(messages.ProtocolError):
                    messages.check_pose_list_result({"poses": poses_field})

    def test_pose_apply_result_says_which_rig(self):
        mesh = two_triangle_mesh()
        values = list(struct.unpack("<%df" % (len(mesh["positions"]) // 4), mesh["positions"]))
        result = messages.check_pose_apply_result(pose_payload([(mesh["name"], values)], rig="given"),
                                                  [len(values) // 3], "elbowBentLf")
        self.assertEqual(result["rig"], "given")
        payload = pose_payload([(mesh["name"], values)])
        del payload["rig"]
        with self.assertRaises(messages.ProtocolError):
            messages.check_pose_apply_result(payload, [len(values) // 3], "elbowBentLf")

    def test_pose_apply_result_says_how_the_facing_was_decided_and_warns_for_the_convention(self):
        good = [("Body", [0.0] * 12)]
        for facing in ("shape", "option", "rig"):
            result = messages.check_pose_apply_result(pose_payload(good, facing=facing), [4], "elbowBentLf")
            self.assertEqual((result["facing"], result["forward"]), (facing, [0.0, -1.0, 0.0]))
            self.assertIsNone(messages.facing_warning(result, where="the Latent Pose panel"))
        assumed = messages.check_pose_apply_result(pose_payload(good, facing="convention", forward=[0, 0, 1]), [4],
                                                   "elbowBentLf")
        warning = messages.facing_warning(assumed, where="the Latent Pose panel")
        self.assertIn("taken to face +Z.", warning)
        self.assertIn("set Facing in the Latent Pose panel", warning)
        self.assertNotIn("front view", warning)

    def test_pose_apply_request_sends_the_facing_chosen(self):
        mesh = two_triangle_mesh()
        request = messages.pose_apply_request("f-1", [mesh], "elbowBentLf", facing=(0, 1, 0))
        self.assertEqual(request["facing"], [0.0, 1.0, 0.0])
        messages.check_message(dict(request), strict=True)
        self.assertNotIn("facing", messages.pose_apply_request("f-2", [mesh], "elbowBentLf"))
        for bad in ((0, 0, 0), (0, float("nan"), 1), (1, 0)):
            with self.subTest(bad):
                with self.assertRaises(messages.AutoRigFailure) as caught:
                    messages.pose_apply_request("f-3", [mesh], "elbowBentLf", facing=bad)
                self.assertEqual(caught.exception.code, protocol.ERROR_BAD_REQUEST)

    def test_pose_apply_result_gives_positions_per_object(self):
        payload = pose_payload([("Body", [0, 0, 0, 1, 0, 0, 1, 0, 2, 0, 0, 2]), ("Hat", [0, 0, 3, 1, 0, 3, 0, 1, 3])])
        checked = messages.check_pose_apply_result(payload, [4, 3], "elbowBentLf")
        self.assertEqual([len(p) for p in checked["positions"]], [12, 9])
        self.assertEqual(list(checked["positions"][1][6:9]), [0.0, 1.0, 3.0])
        self.assertIsNone(checked["identity"])

    def test_malformed_pose_apply_results_are_refused(self):
        good = [("Body", [0.0] * 12)]
        cases = {
            "a vertex short": (pose_payload([("Body", [0.0] * 9)]), [4]),
            "a vertex too many": (pose_payload([("Body", [0.0] * 15)]), [4]),
            "NaN": (pose_payload([("Body", [math.nan] + [0.0] * 11)]), [4]),
            "infinite": (pose_payload([("Body", [math.inf] + [0.0] * 11)]), [4]),
            "one object for two": (pose_payload(good), [4, 4]),
            "another pose": (pose_payload(good, pose="kneeBentRt"), [4]),
            "positions not bin": (dict(pose_payload(good), objects=[{"name": "Body", "positions": [0.0] * 12}]), [4]),
            "identity not str": (pose_payload(good, identity=3), [4]),
            "unknown facing": (pose_payload(good, facing="behind"), [4]),
            "NaN forward": (pose_payload(good, forward=[0.0, math.nan, 0.0]), [4]),
            "forward not vec3": (pose_payload(good, forward=[0.0, 1.0]), [4]),
        }
        for name, (payload, counts) in cases.items():
            with self.subTest(name):
                with self.assertRaises(messages.ProtocolError):
                    messages.check_pose_apply_result(payload, counts, "elbowBentLf")


class PoseMenu(unittest.TestCase):
    def setUp(self):
        self.addCleanup(poses.remember_poses, [])

    def test_items_mark_experimental_poses(self):
        poses.remember_poses(messages.check_pose_list_result({"poses": LIST}))
        items = poses.pose_items(None, None)
        self.assertEqual([i[0] for i in items], ["elbowBentLf", "kneeBentRt"])
        self.assertEqual([i[1] for i in items], ["elbowBentLf", "kneeBentRt (experimental)"])
        self.assertIs(items, poses.pose_items(None, None))  # the same objects every redraw (Blender keeps pointers)
        self.assertTrue(poses.known_pose("kneeBentRt"))
        self.assertFalse(poses.known_pose("armForwardLf"))
        self.assertEqual(poses.list_status(), "2 poses (1 experimental)")

    def test_failure_keeps_the_last_list_and_says_why(self):
        poses.remember_poses(messages.check_pose_list_result({"poses": LIST}))
        poses.remember_failure("MODEL_MISSING", "no library\x1b here")
        self.assertEqual(len(poses.pose_items()), 2)
        self.assertTrue(poses.list_status().startswith("Poses: MODEL_MISSING: no library"))
        self.assertNotIn("\x1b", poses.list_status())

    def test_empty_list_offers_only_the_placeholder(self):
        poses.remember_poses([])
        self.assertEqual([i[0] for i in poses.pose_items()], [poses.NO_POSES])

    def test_strategies_map_to_the_wire_values(self):
        self.assertEqual([poses.strategy_value(i[0]) for i in poses.STRATEGY_ITEMS], list(messages.POSE_STRATEGIES))
        self.assertEqual(poses.strategy_value("nearest"), "nearest")
        with self.assertRaises(ValueError):
            poses.strategy_value("MEDIAN")


class Reachable(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.js = os.path.join(self.tmp.name, "autorig.js")
        open(self.js, "w").close()

    def test_depends_on_what_could_be_reached(self):
        node = lambda name: "/usr/bin/node" if name == "node" else None  # noqa: E731
        nothing = lambda name: None  # noqa: E731
        self.assertTrue(client.sidecar_reachable(client.SidecarConfig(entry=self.js, environ={}), which=node))
        self.assertFalse(client.sidecar_reachable(client.SidecarConfig(entry=self.js, environ={}), which=nothing))
        self.assertFalse(client.sidecar_reachable(client.SidecarConfig(environ={}), which=nothing))
        self.assertFalse(client.sidecar_reachable(client.SidecarConfig(auto_start=False, environ={}), which=node))
        self.assertTrue(client.sidecar_reachable(client.SidecarConfig(auto_start=False, port=5000, environ={}),
                                                 which=nothing))


class RoundTrips(unittest.TestCase):
    def setUp(self):
        self.launcher = fake_launcher_for(self)

    def config(self, mode="normal"):
        return client.SidecarConfig(entry=self.launcher, port=0, environ=dict(os.environ, FAKE_SIDECAR_MODE=mode))

    def apply_job(self, mode="normal", strategy="mean"):
        mesh = two_triangle_mesh()
        request = messages.pose_apply_request(client.new_job_id("pose"), [mesh], "kneeBentRt", strength=0.5,
                                              strategy=strategy)
        return client.Job(self.config(mode), request,
                          lambda payload: messages.check_pose_apply_result(payload, [4], "kneeBentRt"), timeout=20)

    def test_pose_list_round_trip(self):
        job = client.Job(self.config(), messages.pose_list_request("poses-1"), messages.check_pose_list_result)
        self.assertEqual(job.run(), client.DONE, job.error)
        self.assertEqual([p["name"] for p in job.result], ["elbowBentLf", "kneeBentRt", "elbowBentLf+kneeBentRt"])
        self.assertTrue(client.sidecar_reachable(self.config()))  # the started sidecar is running

    def test_pose_apply_round_trip(self):
        job = self.apply_job(strategy="nearest")
        self.assertEqual(job.run(), client.DONE, job.error)
        positions = job.result["positions"][0]
        sent = array("f", [0, 0, 0, 1, 0, 0, 1, 0, 2, 0, 0, 2])
        # the fake lifts every vertex by 0.1 * strength along z, in the order sent
        self.assertEqual([round(a - b, 5) for a, b in zip(positions, sent)], [0.0, 0.0, 0.05] * 4)
        self.assertEqual(job.result["identity"], "fakeIdentity")

    def test_model_errors_reach_the_operator_with_their_code(self):
        job = self.apply_job("error")
        self.assertEqual(job.run(), client.FAILED)
        self.assertEqual(job.error[0], protocol.ERROR_MODEL_MISSING)
        listing = client.Job(self.config("error"), messages.pose_list_request("poses-2"),
                             messages.check_pose_list_result)
        self.assertEqual(listing.run(), client.FAILED)
        self.assertEqual(listing.error[0], protocol.ERROR_MODEL_MISSING)

    def test_malformed_answers_are_refused(self):
        for mode in ("posecount", "posenan", "posewrong"):
            with self.subTest(mode):
                job = self.apply_job(mode)
                self.assertEqual(job.run(), client.FAILED)
                self.assertEqual(job.error[0], "BAD_RESULT")
                client.stop_sidecar()


if __name__ == "__main__":
    unittest.main()
