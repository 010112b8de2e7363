"""Pose Examples in the add-on, without Blender: the property a Pose Example keeps on its mesh (written, read back bit
for bit, refused when broken), which objects' examples a Pose Correctives request sends for an armature and which it
skips, the correctives request carrying them (and refusing locally what the sidecar would refuse), and the check of
the answer's fit."""

import json
import math
import struct
import unittest
from array import array

import support  # noqa: F401
from blender_addon import correctives, messages, protocol
from test_client import two_triangle_mesh
from test_correctives import BONES, JOINTS, key_map, rotation_matrix, weights_maps

IDENTITY = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]


def elbow_pose():
    """LeftArm at rest, LeftForeArm bent 90 deg about world y: array('f') #2*9, as pose_rotations answers."""
    bend = [v for row in rotation_matrix((0, 1, 0), math.pi / 2) for v in row]
    return array("f", IDENTITY + bend)


class ExampleProperty(unittest.TestCase):
    def test_round_trip_is_bit_exact(self):
        rotations = elbow_pose()
        rotations[0] = 0.1  # not a float32 value as a double: must still come back as the same float32
        text = correctives.example_json("Body_Armature", BONES, rotations)
        stored = json.loads(text)
        self.assertEqual(stored["armature"], "Body_Armature")
        self.assertEqual(stored["bones"], BONES)
        self.assertEqual(len(stored["rotations"]), 18)
        back = correctives.parse_example(text)
        self.assertEqual(back["armature"], "Body_Armature")
        self.assertEqual(back["bones"], BONES)
        self.assertEqual(back["rotations"].typecode, "f")
        self.assertEqual(back["rotations"].tobytes(), rotations.tobytes())

    def test_a_pose_of_another_length_is_not_written(self):
        with self.assertRaises(ValueError):
            correctives.example_json("Arm", BONES, array("f", IDENTITY))

    def test_broken_properties_are_refused(self):
        good = json.loads(correctives.example_json("Arm", BONES, elbow_pose()))
        cases = {
            "not a string": 3,
            "not JSON": "{armature",
            "a list": "[]",
            "no armature": json.dumps(dict(good, armature="")),
            "no bones": json.dumps(dict(good, bones=[])),
            "a bone not a string": json.dumps(dict(good, bones=[BONES[0], 7])),
            "rotations not numbers": json.dumps(dict(good, rotations=["1"] * 18)),
            "a bool rotation": json.dumps(dict(good, rotations=[True] * 18)),
            "too few rotations": json.dumps(dict(good, rotations=good["rotations"][:9])),
            "NaN": json.dumps(dict(good, rotations=[float("nan")] * 18)),  # JSON from Python may carry NaN
        }
        for name, text in cases.items():
            with self.subTest(name):
                with self.assertRaises(ValueError):
                    correctives.parse_example(text)

    def test_turned_joints_are_counted(self):
        self.assertEqual(correctives.turned_joint_count(array("f", IDENTITY * 3)), 0)
        self.assertEqual(correctives.turned_joint_count(elbow_pose()), 1)
        nearly = array("f", IDENTITY * 2)
        nearly[9 + 1] = 5e-5  # below the tolerance: float noise of a bone at rest
        self.assertEqual(correctives.turned_joint_count(nearly), 0)


class SortExamples(unittest.TestCase):
    def test_only_the_armatures_examples_with_its_bones_in_order_are_sent(self):
        pose = elbow_pose()
        texts = [
            ("Bent", correctives.example_json("Arm", BONES, pose)),
            ("OtherCharacter", correctives.example_json("Other_Arm", BONES, pose)),      # not this armature: silent
            ("Reordered", correctives.example_json("Arm", BONES[::-1], pose)),
            ("Fewer", correctives.example_json("Arm", BONES[:1], array("f", IDENTITY))),
            ("Broken", json.dumps({"armature": "Arm", "bones": BONES, "rotations": [1.0]})),
            ("Junk", "not json at all"),                                                 # names no armature: silent
            ("Bent2", correctives.example_json("Arm", BONES, array("f", IDENTITY * 2))),
        ]
        accepted, skipped = correctives.sort_examples(texts, "Arm", BONES)
        self.assertEqual([name for name, _ in accepted], ["Bent", "Bent2"])
        self.assertEqual(accepted[0][1].tobytes(), pose.tobytes())
        self.assertEqual([name for name, _ in skipped], ["Reordered", "Fewer", "Broken"])
        reasons = dict(skipped)
        self.assertIn("another order", reasons["Reordered"])
        self.assertIn("other bones (1)", reasons["Fewer"])
        self.assertIn("autorig_example", reasons["Broken"])
        self.assertEqual(correctives.count_examples(texts, "Arm"), 4)  # Reordered and Fewer parse: they count
        self.assertEqual(correctives.count_examples(texts, "Other_Arm"), 1)
        self.assertEqual(correctives.count_examples(texts, "Nobody"), 0)


def example(name="Bent", rotations=None, objects=None):
    return messages.posed_example(name, elbow_pose() if rotations is None else rotations,
                                  [two_triangle_mesh()] if objects is None else objects)


class ExamplesRequest(unittest.TestCase):
    def test_examples_go_with_the_request_as_the_schema_says(self):
        request = messages.correctives_request("c1", [two_triangle_mesh()], JOINTS, weights_maps(),
                                               examples=[example(), example("Other")])
        messages.check_message(request, strict=True)
        self.assertEqual([e["name"] for e in request["examples"]], ["Bent", "Other"])
        sent = struct.unpack("<18f", request["examples"][0]["rotations"])
        self.assertEqual(sent, tuple(elbow_pose()))
        self.assertEqual(request["examples"][0]["objects"][0]["name"], "Quad")

    def test_without_examples_the_request_is_as_before(self):
        plain = messages.correctives_request("c2", [two_triangle_mesh()], JOINTS, weights_maps())
        empty = messages.correctives_request("c2", [two_triangle_mesh()], JOINTS, weights_maps(), examples=[])
        self.assertNotIn("examples", plain)
        self.assertEqual(plain, empty)

    def test_what_the_sidecar_would_refuse_is_refused_before_sending(self):
        mesh = [two_triangle_mesh()]
        no_faces = messages.mesh_object("Flat", array("f", [0, 0, 0] * 4), array("I"))
        # one example of as many vertices as the objects may have: with the objects' 4, over the total
        huge = {"name": "Huge", "positions": bytes(12 * protocol.MAX_VERTICES_TOTAL),
                "triangles": struct.pack("<3I", 0, 1, 2)}
        nan = array("f", elbow_pose())
        nan[4] = float("nan")
        cases = {
            "too many": ([example("E%d" % i) for i in range(protocol.MAX_EXAMPLES + 1)], protocol.ERROR_TOO_LARGE),
            "rotation count": ([example(rotations=array("f", IDENTITY))], protocol.ERROR_BAD_ARRAY),
            "NaN rotation": ([example(rotations=nan)], protocol.ERROR_BAD_NUMBER),
            "no faces": ([example(objects=[no_faces])], protocol.ERROR_EMPTY_MESH),
            "no objects": ([example(objects=[])], protocol.ERROR_EMPTY_MESH),
            "vertices in all": ([example(objects=[huge])], protocol.ERROR_TOO_LARGE),
        }
        for name, (examples, code) in cases.items():
            with self.subTest(name):
                with self.assertRaises(messages.AutoRigFailure) as caught:
                    messages.correctives_request("c", mesh, JOINTS, weights_maps(), examples=examples)
                self.assertEqual(caught.exception.code, code)
        # at the limit it goes
        at_limit = [example("E%d" % i) for i in range(protocol.MAX_EXAMPLES)]
        request = messages.correctives_request("c", mesh, JOINTS, weights_maps(), examples=at_limit)
        self.assertEqual(len(request["examples"]), protocol.MAX_EXAMPLES)


def result(fit=None):
    payload = {"keys": [key_map()], "method": "dualQuaternion", "seconds": 0.5}
    if fit is not None:
        payload["fit"] = fit
    return payload


class ShapeKeyExamples(unittest.TestCase):
    def test_keys_are_added_replaced_and_removed_one_by_one(self):
        bend = elbow_pose()
        text = correctives.with_key_example(None, "elbow fix", "Arm", BONES, bend)
        text = correctives.with_key_example(text, "knee fix", "Arm", BONES, array("f", IDENTITY * 2))
        entries = correctives.parse_key_examples(text)
        self.assertEqual(sorted(entries), ["elbow fix", "knee fix"])
        back = correctives.parse_example(entries["elbow fix"])
        self.assertEqual(back["rotations"].tobytes(), bend.tobytes())
        # the same key again replaces its pose
        text = correctives.with_key_example(text, "knee fix", "Arm", BONES, bend)
        self.assertEqual(correctives.parse_example(correctives.parse_key_examples(text)["knee fix"])["rotations"].tobytes(),
                         bend.tobytes())
        text = correctives.without_key_example(text, "elbow fix")
        self.assertEqual(list(correctives.parse_key_examples(text)), ["knee fix"])
        self.assertIsNone(correctives.without_key_example(text, "knee fix"))

    def test_a_broken_property_is_refused_and_replaced_when_a_key_is_added(self):
        for broken in (3, "{", "[]", json.dumps({"": {}})):
            with self.subTest(broken=broken), self.assertRaises(ValueError):
                correctives.parse_key_examples(broken)
        text = correctives.with_key_example("{", "elbow fix", "Arm", BONES, elbow_pose())
        self.assertEqual(list(correctives.parse_key_examples(text)), ["elbow fix"])

    def test_key_examples_are_counted_and_sorted_like_objects(self):
        body = correctives.with_key_example(None, "elbow fix", "Arm", BONES, elbow_pose())
        body = correctives.with_key_example(body, "other rig", "Other", BONES, elbow_pose())
        texts = correctives.key_example_texts([("Body", body), ("Broken", "{")])
        self.assertEqual([name for name, _ in texts], ["Body: elbow fix", "Body: other rig"])
        self.assertEqual(correctives.count_examples(texts, "Arm"), 1)
        accepted, skipped = correctives.sort_examples(texts, "Arm", BONES)
        self.assertEqual([name for name, _ in accepted], ["Body: elbow fix"])
        self.assertEqual(skipped, [])

    def test_a_shape_key_example_is_flagged_in_the_request(self):
        mesh = two_triangle_mesh()
        example = messages.posed_example("elbow fix", elbow_pose(), [mesh], shape_key=True)
        self.assertIs(example["shapeKey"], True)
        self.assertNotIn("shapeKey", messages.posed_example("scan", elbow_pose(), [mesh]))
        self.assertIn("shapeKey?", protocol.TYPES["PosedExample"])
        request = messages.correctives_request("k1", [mesh], JOINTS, weights_maps(), examples=[example])
        messages.check_message(request, strict=True)

    def test_a_shape_key_that_is_not_the_characters_vertex_for_vertex_is_refused_before_sending(self):
        mesh = two_triangle_mesh()
        positions, triangles = array("f", [0, 0, 0, 1, 0, 0, 0, 1, 0]), array("I", [0, 1, 2])
        cases = {"another vertex count": [messages.mesh_object("Quad", positions, triangles)],
                 "another object count": [mesh, mesh]}
        for name, objects in cases.items():
            with self.subTest(name), self.assertRaises(messages.AutoRigFailure) as caught:
                messages.correctives_request("k2", [mesh], JOINTS, weights_maps(),
                                             examples=[messages.posed_example("fix", elbow_pose(), objects,
                                                                              shape_key=True)])
            self.assertEqual(caught.exception.code, protocol.ERROR_BAD_ARRAY)


class FitReport(unittest.TestCase):
    def test_the_fit_is_returned_when_examples_were_sent(self):
        checked = messages.check_correctives_result(
            result({"examples": 2, "before": 0.0123, "after": 0.0045, "seconds": 3}), [4], BONES, 2)
        self.assertEqual(checked["fit"], {"examples": 2, "before": 0.0123, "after": 0.0045, "seconds": 3.0})
        self.assertEqual(len(checked["keys"]), 1)
        self.assertIsNone(messages.check_correctives_result(result(), [4], BONES)["fit"])

    def test_a_fit_that_does_not_answer_the_request_is_refused(self):
        good = {"examples": 2, "before": 0.01, "after": 0.005, "seconds": 1.0}
        cases = {
            "no fit for examples sent": (None, 2),
            "a fit for none sent": (good, 0),
            "another count": (dict(good, examples=1), 2),
            "NaN before": (dict(good, before=float("nan")), 2),
            "infinite after": (dict(good, after=float("inf")), 2),
            "negative seconds": (dict(good, seconds=-1.0), 2),
            "a field missing": ({"examples": 2, "before": 0.01, "seconds": 1.0}, 2),
            "a string": (dict(good, after="0.005"), 2),
        }
        for name, (fit, sent) in cases.items():
            with self.subTest(name):
                with self.assertRaises(messages.ProtocolError):
                    messages.check_correctives_result(result(fit), [4], BONES, sent)


if __name__ == "__main__":
    unittest.main()
