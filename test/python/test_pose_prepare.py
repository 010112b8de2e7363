"""Apply Latent Pose read ahead, without Blender: the pose.prepare request and the check of its answer (messages),
PosePreparer's decisions (pose_prepare: when a prepare is sent, never twice for one key, a newer one closing the older,
a failure not retried), the client's view of a running sidecar and of jobs in flight, and a prepare end to end against
fake_sidecar.py followed by an apply the fake answers as reused."""

import os
import unittest

import support  # noqa: F401
from blender_addon import client, messages, pose_prepare, protocol
from test_client import fake_launcher_for, two_triangle_mesh


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class FakeJob:
    """A client.Job stand-in: poll() answers `state`; records send_request and close."""

    def __init__(self, state=client.RUNNING):
        self.state = state
        self.result = {"reused": False, "rig": "auto", "seconds": 0.4}
        self.error = ("NOT_HUMANOID", "no legs")
        self.sent = False
        self.closed = False

    def send_request(self):
        self.sent = True
        return self.state

    def poll(self, timeout=0.0):
        return self.state

    def close(self):
        self.closed = True


class Messages(unittest.TestCase):
    def test_request_and_answer_follow_the_protocol(self):
        mesh = two_triangle_mesh()
        request = messages.pose_prepare_request("p-1", [mesh])
        self.assertEqual(request, {"kind": protocol.KIND_POSE_PREPARE, "id": "p-1", "objects": [mesh], "autoRig": True})
        messages.check_message(dict(request), strict=True)
        # a mesh with its own Mixamo armature: the applies will send it, so its bones go with the prepare (their
        # left and right set the facing) and nothing is auto-rigged
        joints = [{"name": "mixamorig:Hips", "parent": -1, "head": [0, 0, 1], "tail": [0, 0, 1.1], "roll": 0.0}]
        with_rig = messages.pose_prepare_request("p-2", [mesh], joints=joints, facing=(0, 1, 0))
        self.assertEqual((with_rig["autoRig"], with_rig["skeleton"], with_rig["facing"]), (False, {"joints": joints}, [0.0, 1.0, 0.0]))
        messages.check_message(dict(with_rig), strict=True)
        with self.assertRaises(messages.AutoRigFailure) as caught:
            messages.pose_prepare_request("p-2", [mesh], facing=(0, 0, 0))
        self.assertEqual(caught.exception.code, protocol.ERROR_BAD_REQUEST)
        with self.assertRaises(messages.AutoRigFailure) as caught:
            messages.pose_prepare_request("p-2", [mesh], joints=[])
        self.assertEqual(caught.exception.code, protocol.ERROR_BAD_SKELETON)
        answer = {"reused": True, "rig": "none", "facing": "rig", "forward": [0, -1, 0], "seconds": 0.0}
        self.assertEqual(messages.check_pose_prepare_result(dict(answer)), answer)
        for bad in (dict(answer, rig="given"), dict(answer, reused="yes"), {"rig": "auto", "seconds": 0.0},
                    dict(answer, facing="sideways"), dict(answer, forward=[0, float("nan"), 0]),
                    {k: v for k, v in answer.items() if k != "forward"}):
            with self.subTest(bad):
                with self.assertRaises(messages.ProtocolError):
                    messages.check_pose_prepare_result(bad)

    def test_too_many_objects_are_refused_before_sending(self):
        with self.assertRaises(messages.AutoRigFailure) as caught:
            messages.pose_prepare_request("p-3", [two_triangle_mesh()] * (protocol.MAX_OBJECTS + 1))
        self.assertEqual(caught.exception.code, protocol.ERROR_TOO_LARGE)


class Size(unittest.TestCase):
    def test_only_meshes_of_a_size_the_ui_reads_at_once_are_read_ahead(self):
        self.assertTrue(pose_prepare.worth_reading_ahead([50_000]))
        self.assertTrue(pose_prepare.worth_reading_ahead([100_000, pose_prepare.READ_AHEAD_MAX_VERTICES - 100_000]))
        self.assertFalse(pose_prepare.worth_reading_ahead([200_000, pose_prepare.READ_AHEAD_MAX_VERTICES - 199_999]))
        self.assertFalse(pose_prepare.worth_reading_ahead([]))
        self.assertFalse(pose_prepare.worth_reading_ahead(iter([0])))


class Preparer(unittest.TestCase):
    def setUp(self):
        self.clock = Clock()
        self.preparer = pose_prepare.PosePreparer(clock=self.clock)

    def test_sends_once_the_shown_meshes_have_settled_and_never_twice(self):
        p = self.preparer
        self.assertTrue(p.note("A"))
        self.assertIsNone(p.due())
        self.clock.now += pose_prepare.SETTLE / 2
        self.assertTrue(p.note("A"))  # the same meshes shown again: the wait goes on, not restarts
        self.clock.now += pose_prepare.SETTLE / 2 + 1e-9
        self.assertEqual(p.due(), "A")
        job = FakeJob()
        p.start("A", job)
        self.assertTrue(job.sent)
        self.assertEqual(p.status("A"), "Reading the mesh for posing...")
        self.assertFalse(p.note("A"))  # in flight
        self.assertTrue(p.poll())
        job.state = client.DONE
        self.assertFalse(p.poll())
        self.assertTrue(job.closed)
        self.assertEqual(p.outcome, (client.DONE, job.result))
        self.assertEqual(p.status("A"), "Mesh read: posing is quick")
        self.assertIsNone(p.status("B"))
        self.assertFalse(p.note("A"))  # done
        self.clock.now += 10
        self.assertIsNone(p.due())

    def test_a_key_that_changes_restarts_the_wait_and_nothing_shown_sends_nothing(self):
        p = self.preparer
        p.note("A")
        self.clock.now += pose_prepare.SETTLE * 0.9
        p.note("B")  # another selection before A settled: A is never sent
        self.clock.now += pose_prepare.SETTLE * 0.9
        self.assertIsNone(p.due())
        self.clock.now += pose_prepare.SETTLE * 0.2
        self.assertEqual(p.due(), "B")
        self.assertFalse(p.note(None))
        self.assertIsNone(p.due())

    def test_other_meshes_shown_wait_for_the_prepare_in_flight(self):
        p = self.preparer
        first = FakeJob()
        p.start("A", first)
        self.assertTrue(p.note("B"))
        self.clock.now += 10
        self.assertIsNone(p.due())  # A's prepare is let finish: cancelling it would end the sidecar's job thread
        with self.assertRaises(RuntimeError):
            p.start("B", FakeJob())
        self.assertFalse(first.closed)
        first.state = client.DONE
        self.assertFalse(p.poll())
        self.assertEqual(p.due(), "B")
        second = FakeJob()
        p.start("B", second)
        self.assertEqual(p.job_key, "B")
        self.assertFalse(p.note("A"))  # A was read

    def test_drop_closes_the_prepare_in_flight(self):
        p = self.preparer
        job = FakeJob()
        p.start("A", job)
        p.drop()
        self.assertTrue(job.closed)  # the sidecar cancels it when its connection closes
        self.assertTrue(p.note("A"))  # never finished: wanted again when shown again

    def test_a_failed_prepare_is_not_retried_and_says_nothing(self):
        p = self.preparer
        job = FakeJob()
        p.start("A", job)
        job.state = client.FAILED
        self.assertFalse(p.poll())
        self.assertEqual(p.outcome, (client.FAILED, ("NOT_HUMANOID", "no legs")))
        self.assertFalse(p.note("A"))
        self.assertIsNone(p.status("A"))
        p.failed_to_start("B", protocol.ERROR_TOO_LARGE, "too many objects")
        self.assertFalse(p.note("B"))

    def test_reset_forgets_everything_and_closes_the_job(self):
        p = self.preparer
        job = FakeJob()
        p.start("A", job)
        p.note("B")
        p.reset()
        self.assertTrue(job.closed)
        self.assertIsNone(p.job)
        self.assertIsNone(p.pending_key)
        self.assertTrue(p.note("A"))


class EndToEnd(unittest.TestCase):
    def setUp(self):
        self.config = client.SidecarConfig(entry=fake_launcher_for(self), port=0, environ=dict(os.environ))

    def test_running_sidecar_and_jobs_in_flight(self):
        self.assertFalse(client.sidecar_running(self.config))  # nothing started, and a prepare must not start one
        self.assertFalse(client.sidecar_running(client.SidecarConfig(auto_start=True, port=5000, environ={})))
        self.assertTrue(client.sidecar_running(client.SidecarConfig(auto_start=False, port=5000, environ={})))
        listing = client.Job(self.config, messages.pose_list_request("poses-1"), messages.check_pose_list_result)
        self.assertTrue(client.jobs_in_flight())
        self.assertFalse(client.jobs_in_flight(besides=listing))
        self.assertEqual(listing.run(), client.DONE, listing.error)
        self.assertFalse(client.jobs_in_flight())
        self.assertTrue(client.sidecar_running(self.config))

    def test_a_prepared_mesh_is_posed_as_reused(self):
        mesh = two_triangle_mesh()
        preparer = pose_prepare.PosePreparer(clock=Clock())
        request = messages.pose_prepare_request(client.new_job_id("prepare"), [mesh])
        preparer.start("Quad", client.Job(self.config, request, messages.check_pose_prepare_result, timeout=20))
        while preparer.poll():
            pass
        self.assertEqual(preparer.outcome, (client.DONE, {"reused": False, "rig": "auto", "facing": "shape",
                                                          "forward": [0.0, -1.0, 0.0], "seconds": 0.01}))
        apply = client.Job(self.config, messages.pose_apply_request("pose-1", [mesh], "kneeBentRt"),
                           lambda payload: messages.check_pose_apply_result(payload, [4], "kneeBentRt"), timeout=20)
        self.assertEqual(apply.run(), client.DONE, apply.error)
        self.assertTrue(apply.result["reused"])


if __name__ == "__main__":
    unittest.main()
