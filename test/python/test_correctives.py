"""Pose Correctives in the add-on, without Blender: the weights sent (top 4, renormalised, joint indices), the driver's
channel (which bone axis, the twist at the key pose, the clamp), offsets taken to an object's own space, the pose sent
for a preview, and the correctives / correctives.preview requests and the checks of their answers."""

import math
import struct
import unittest
from array import array

import support  # noqa: F401
from blender_addon import correctives, messages, protocol
from test_client import two_triangle_mesh

JOINTS = [
    {"name": "mixamorig:LeftArm", "parent": -1, "head": [0.0, 0.0, 1.4], "tail": [0.3, 0.0, 1.4], "roll": 0.0},
    {"name": "mixamorig:LeftForeArm", "parent": 0, "head": [0.3, 0.0, 1.4], "tail": [0.6, 0.0, 1.4], "roll": 0.0},
]


def quaternion(axis, angle):
    """(w, x, y, z) of a turn by `angle` about unit `axis`."""
    s = math.sin(angle / 2)
    return (math.cos(angle / 2), axis[0] * s, axis[1] * s, axis[2] * s)


def twist_about(q, index):
    """Twist angle about coordinate axis `index` of quaternion q (swing-twist split), computed independently:
    project the vector part on the axis, normalise (w, v_i), angle = 2 acos(w') with the sign of v_i."""
    w, v = q[0], q[1 + index]
    n = math.hypot(w, v)
    w, v = (w / n, v / n) if w >= 0 else (-w / n, -v / n)
    return math.copysign(2 * math.acos(min(1.0, w)), v)


def rotation_matrix(axis, angle):
    w, x, y, z = quaternion(axis, angle)
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]


def close(a, b, tol=1e-6):
    return all(abs(x - y) <= tol for ra, rb in zip(a, b) for x, y in zip(ra, rb))


class Weights(unittest.TestCase):
    def test_top_four_renormalised_by_decreasing_weight(self):
        # groups 0..5 are bones (joints 5..0), group 6 is not a bone
        joint_of_group = {g: 5 - g for g in range(6)}
        vertices = [
            [(0, 0.1), (1, 0.4), (2, 0.2), (3, 0.05), (4, 0.15), (6, 0.9)],  # 5 bone weights, one dropped
            [(2, 0.5)],                                                       # one bone: weight 1
            [(6, 1.0)],                                                       # no bone: all zero
            [],                                                               # no group at all
            [(1, 0.0), (3, 0.3)],                                             # a zero weight is no influence
        ]
        indices, weights = correctives.top_weights(vertices, joint_of_group)
        self.assertEqual((indices.typecode, weights.typecode, len(indices), len(weights)), ("H", "f", 20, 20))
        self.assertEqual(list(indices[0:4]), [4, 3, 1, 5])
        kept = 0.4 + 0.2 + 0.15 + 0.1
        for got, want in zip(weights[0:4], [0.4 / kept, 0.2 / kept, 0.15 / kept, 0.1 / kept]):
            self.assertAlmostEqual(got, want, places=6)
        self.assertAlmostEqual(sum(weights[0:4]), 1.0, places=6)
        self.assertEqual((list(indices[4:8]), list(weights[4:8])), ([3, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]))
        self.assertEqual(list(weights[8:16]), [0.0] * 8)
        self.assertEqual((list(indices[16:20]), list(weights[16:20])), ([2, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]))

    def test_ties_are_ordered_by_joint(self):
        indices, weights = correctives.top_weights([[(0, 0.5), (1, 0.5)]], {0: 7, 1: 2})
        self.assertEqual(list(indices), [2, 7, 0, 0])
        self.assertEqual(list(weights), [0.5, 0.5, 0.0, 0.0])


class DriverChannel(unittest.TestCase):
    def test_a_bone_axis_reads_its_own_twist_at_the_key_angle(self):
        for index, name in enumerate("XYZ"):
            for sign in (1, -1):
                axis = [0.0, 0.0, 0.0]
                axis[index] = 2.0 * sign  # not unit: the channel normalises
                channel = correctives.driver_channel(axis, math.radians(90))
                self.assertEqual((channel.axis, channel.rotation_mode, channel.transform_type),
                                 (name, "SWING_TWIST_" + name, "ROT_" + name))
                self.assertAlmostEqual(channel.key_twist, sign * math.radians(90), places=12)
                self.assertAlmostEqual(channel.deviation, 0.0, places=12)

    def test_an_off_axis_key_reads_the_nearest_bone_axis_calibrated_at_the_key_pose(self):
        axis = (0.2, 0.1, -0.97)
        unit = [v / math.sqrt(sum(c * c for c in axis)) for v in axis]
        angle = math.radians(60)
        channel = correctives.driver_channel(axis, angle)
        self.assertEqual(channel.axis, "Z")
        # the twist Blender reads at the key pose: computed independently from the key rotation's quaternion
        key_twist = twist_about(quaternion(unit, angle), 2)
        self.assertAlmostEqual(channel.key_twist, key_twist, places=9)
        self.assertLess(channel.key_twist, 0)  # the axis points down -Z: a positive turn twists negatively about Z
        self.assertAlmostEqual(channel.deviation, math.acos(abs(unit[2])), places=12)
        # so the key is 1 at the key pose, 0 at rest, halfway about halfway, clamped beyond
        self.assertAlmostEqual(correctives.driver_value(key_twist, channel.key_twist), 1.0, places=9)
        self.assertEqual(correctives.driver_value(0.0, channel.key_twist), 0.0)
        half = twist_about(quaternion(unit, angle / 2), 2)
        self.assertAlmostEqual(correctives.driver_value(half, channel.key_twist), 0.5, delta=0.01)
        self.assertEqual(correctives.driver_value(2 * key_twist, channel.key_twist), 1.0)
        self.assertEqual(correctives.driver_value(-key_twist, channel.key_twist), 0.0)

    def test_the_nearest_axis_wins(self):
        self.assertEqual(correctives.driver_channel((0.6, 0.0, 0.8), 1.0).axis, "Z")
        self.assertEqual(correctives.driver_channel((-0.8, 0.0, 0.6), 1.0).axis, "X")
        self.assertEqual(correctives.driver_channel((0.1, -0.9, 0.3), 1.0).axis, "Y")
        with self.assertRaises(ValueError):
            correctives.driver_channel((0.0, 0.0, 0.0), 1.0)

    def test_methods(self):
        self.assertEqual(correctives.method_value('DUAL_QUATERNION'), "dualQuaternion")
        self.assertEqual(correctives.method_value("dualQuaternion"), "dualQuaternion")
        self.assertEqual([correctives.method_value(i[0]) for i in correctives.METHOD_ITEMS],
                         list(messages.CORRECTIVE_METHODS))
        with self.assertRaises(ValueError):
            correctives.method_value("learned")


class Offsets(unittest.TestCase):
    def test_world_offsets_come_back_in_local_space(self):
        # an object turned 90 deg about z and scaled 2 (x), 0.5 (y), 1 (z): world = R S local
        turn = rotation_matrix((0, 0, 1), math.pi / 2)
        linear = correctives.matmul3(turn, [[2, 0, 0], [0, 0.5, 0], [0, 0, 1]])
        world = array("f", [1.0, 0.0, 0.0, 0.0, 2.0, -3.0])
        local = correctives.offsets_to_local(world, linear)
        self.assertEqual(local.typecode, "f")
        # world x = the local -y axis (turned), scaled by 0.5: local (0, -2, 0); world y = local x scaled by 2
        for got, want in zip(local, [0.0, -2.0, 0.0, 1.0, 0.0, -3.0]):
            self.assertAlmostEqual(got, want, places=5)
        back = correctives.apply_linear(linear, local)
        for got, want in zip(back, world):
            self.assertAlmostEqual(got, want, places=5)

    def test_a_translation_does_not_move_an_offset_and_a_zero_scale_is_refused(self):
        identity = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
        self.assertEqual(list(correctives.offsets_to_local(array("f", [1, 2, 3]), identity)), [1, 2, 3])
        with self.assertRaises(ValueError):
            correctives.offsets_to_local(array("f", [1, 2, 3]), [[1, 0, 0], [0, 0, 0], [0, 0, 1]])
        inverse = correctives.inverse3([[0, 2, 0], [-1, 0, 0], [0, 0, 4]])
        self.assertTrue(close(correctives.matmul3(inverse, [[0, 2, 0], [-1, 0, 0], [0, 0, 4]]), identity))


class PreviewRotations(unittest.TestCase):
    def test_a_childs_own_rotation_is_relative_to_its_parent(self):
        parent_turn = rotation_matrix((0, 0, 1), 0.7)
        own = rotation_matrix((1, 0, 0), math.radians(90))
        child_skinning = correctives.matmul3(parent_turn, own)  # parents compose as in linear blend skinning
        self.assertTrue(close(correctives.own_rotation(parent_turn, child_skinning), own))
        identity = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
        self.assertTrue(close(correctives.own_rotation(identity, parent_turn), parent_turn))

    def test_a_scaled_pose_keeps_only_its_rotation(self):
        turn = rotation_matrix((0, 1, 0), 0.4)
        scaled = correctives.matmul3(turn, [[1.5, 0, 0], [0, 1.5, 0], [0, 0, 1.5]])
        self.assertTrue(close(correctives.orthonormalised(scaled), turn))

    def test_world_axes_conjugate_by_the_armature_rotation(self):
        # an armature turned 90 deg about z: a bend about its x axis is a bend about world y
        world = rotation_matrix((0, 0, 1), math.pi / 2)
        bend = rotation_matrix((1, 0, 0), 0.5)
        self.assertTrue(close(correctives.to_world_axes(world, bend), rotation_matrix((0, 1, 0), 0.5)))
        flat = correctives.rows_to_floats([bend, world])
        self.assertEqual((flat.typecode, len(flat)), ("f", 18))
        self.assertAlmostEqual(flat[9 + 1], world[0][1], places=6)


def weights_maps(count=4):
    return [messages.object_weights("Quad", array("H", [1, 0, 0, 0] * count), array("f", [1, 0, 0, 0] * count), 4)]


def key_map(name="mixamorig:LeftForeArm_elbowBend", count=4, **fields):
    offsets = [0.0, 0.0, 0.01] * count
    key = {"name": name, "bone": "mixamorig:LeftForeArm", "pose": "elbowBend", "axis": [2.0, 0.0, 0.0],
           "angle": math.pi / 2, "objects": [{"name": "Quad", "offsets": struct.pack("<%df" % len(offsets), *offsets)}]}
    key.update(fields)
    return key


BONES = [j["name"] for j in JOINTS]


class Requests(unittest.TestCase):
    def test_correctives_request_carries_skeleton_weights_and_options(self):
        request = messages.correctives_request("c1", [two_triangle_mesh()], JOINTS, weights_maps(),
                                               method="dualQuaternion", poses=["elbowBend"])
        messages.check_message(request, strict=True)
        self.assertEqual(request["kind"], protocol.KIND_CORRECTIVES)
        self.assertEqual(request["options"], {"method": "dualQuaternion", "poses": ["elbowBend"]})
        self.assertEqual(struct.unpack("<16H", request["weights"][0]["indices"])[:4], (1, 0, 0, 0))
        plain = messages.correctives_request("c2", [two_triangle_mesh()], JOINTS, weights_maps())
        self.assertNotIn("options", plain)

    def test_preview_request_carries_the_rotations(self):
        rotations = array("f", [1, 0, 0, 0, 1, 0, 0, 0, 1] * 2)
        request = messages.correctives_preview_request("p1", [two_triangle_mesh()], JOINTS, weights_maps(), rotations)
        messages.check_message(request, strict=True)
        self.assertEqual(len(request["rotations"]), 2 * 9 * 4)

    def test_bad_requests_are_refused_before_sending(self):
        mesh = [two_triangle_mesh()]
        cases = {
            "unknown method": lambda: messages.correctives_request("c", mesh, JOINTS, weights_maps(), method="vinecs"),
            "no bones": lambda: messages.correctives_request("c", mesh, [], weights_maps()),
            "weights per object": lambda: messages.correctives_request("c", mesh, JOINTS, []),
            "rotation count": lambda: messages.correctives_preview_request("c", mesh, JOINTS, weights_maps(),
                                                                           array("f", [1.0] * 9)),
            "NaN rotation": lambda: messages.correctives_preview_request("c", mesh, JOINTS, weights_maps(),
                                                                         array("f", [float("nan")] * 18)),
        }
        codes = {}
        for name, build in cases.items():
            with self.subTest(name):
                with self.assertRaises(messages.AutoRigFailure) as caught:
                    build()
                codes[name] = caught.exception.code
        self.assertEqual(codes["unknown method"], protocol.ERROR_BAD_REQUEST)
        self.assertEqual(codes["no bones"], protocol.ERROR_BAD_SKELETON)
        self.assertEqual(codes["NaN rotation"], protocol.ERROR_BAD_NUMBER)


class Results(unittest.TestCase):
    def test_good_correctives_result(self):
        payload = {"keys": [key_map(), key_map("mixamorig:LeftForeArm_other", angle=-0.5)],
                   "method": "dualQuaternion", "seconds": 0.25}
        checked = messages.check_correctives_result(payload, [4], BONES)
        first = checked["keys"][0]
        self.assertEqual(first["axis"], (1.0, 0.0, 0.0))  # made unit length
        self.assertEqual(first["bone"], "mixamorig:LeftForeArm")
        self.assertEqual(len(first["offsets"]), 1)
        self.assertEqual(list(first["offsets"][0][:3]), [0.0, 0.0, 0.009999999776482582])
        self.assertEqual(checked["keys"][1]["angle"], -0.5)
        self.assertEqual((checked["method"], checked["seconds"]), ("dualQuaternion", 0.25))

    def test_bad_correctives_results(self):
        nan = float("nan")
        cases = {
            "duplicate name": [key_map(), key_map()],
            "name with a slash": [key_map("a/b")],
            "name too long": [key_map("k" * 64)],
            "unknown bone": [key_map(bone="mixamorig:Tail")],
            "zero axis": [key_map(axis=[0, 0, 0])],
            "nan axis": [key_map(axis=[nan, 0, 1])],
            "zero angle": [key_map(angle=0.0)],
            "angle beyond a half turn": [key_map(angle=3.5)],
            "nan angle": [key_map(angle=nan)],
            "offsets for another count": [key_map(count=3)],
            "nan offset": [dict(key_map(), objects=[{"name": "Quad", "offsets": struct.pack("<12f", *[nan] * 12)}])],
            "two objects for one sent": [dict(key_map(), objects=key_map()["objects"] * 2)],
        }
        for name, keys in cases.items():
            with self.subTest(name):
                with self.assertRaises(messages.ProtocolError):
                    messages.check_correctives_result({"keys": keys, "method": "dualQuaternion", "seconds": 1}, [4],
                                                      BONES)
        with self.assertRaises(messages.ProtocolError):
            messages.check_correctives_result({"keys": [key_map()], "seconds": 1}, [4], BONES)  # no method

    def test_preview_result(self):
        offsets = struct.pack("<12f", *([0.5] * 12))
        checked = messages.check_correctives_preview_result(
            {"objects": [{"name": "Quad", "offsets": offsets}], "method": "dualQuaternion", "seconds": 0.1}, [4])
        self.assertEqual(list(checked["offsets"][0]), [0.5] * 12)
        with self.assertRaises(messages.ProtocolError):
            messages.check_correctives_preview_result(
                {"objects": [{"name": "Quad", "offsets": offsets}], "method": "dualQuaternion", "seconds": 0.1}, [5])


if __name__ == "__main__":
    unittest.main()
