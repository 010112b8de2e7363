"""Sidecar management and jobs, against fake_sidecar.py started exactly as the real sidecar would be
(`<entry> serve --port 0`, AUTORIG_TOKEN in the environment, ready line on stdout, Bearer token on the upgrade)."""

import os
import stat
import struct
import sys
import tempfile
import time
import unittest
from array import array

import support
from blender_addon import client, messages

HERE = os.path.dirname(os.path.abspath(__file__))


def make_launcher(folder):
    """An executable that starts fake_sidecar.py (the client runs non-.js entries directly)."""
    path = os.path.join(folder, "fake-autorig")
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexec %s %s \"$@\"\n" % (sys.executable, os.path.join(HERE, "fake_sidecar.py")))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def fake_launcher_for(test):
    """A launcher of fake_sidecar.py in a temporary folder for `test` (a TestCase, in its setUp): the folder is removed
    and the add-on's sidecar stopped when the test ends. Returns the launcher's path."""
    tmp = tempfile.TemporaryDirectory()
    test.addCleanup(tmp.cleanup)
    test.addCleanup(client.stop_sidecar)
    return make_launcher(tmp.name)


def two_triangle_mesh():
    """A 4-vertex quad standing up along z: 2 vertices low, 2 high."""
    positions = array("f", [0, 0, 0, 1, 0, 0, 1, 0, 2, 0, 0, 2])
    triangles = array("I", [0, 1, 2, 0, 2, 3])
    return messages.mesh_object("Quad", positions, triangles)


def rig_job(config, timeout=20):
    obj = two_triangle_mesh()
    request = messages.rig_request(client.new_job_id("rig"), [obj], prefix=True)
    return client.Job(config, request, lambda payload: messages.check_rig_result(payload, [4]), timeout=timeout)


def skin_job(config, timeout=20):
    """Re-skin the quad with a two-bone skeleton (what a bound mesh sends)."""
    obj = two_triangle_mesh()
    joints = [{"name": "Root", "parent": -1, "head": [0.0, 0.0, 0.0], "tail": [0.0, 0.0, 1.0], "roll": 0.0},
              {"name": "Top", "parent": 0, "head": [0.0, 0.0, 1.0], "tail": [0.0, 0.0, 2.0], "roll": 0.0}]
    request = messages.skin_request(client.new_job_id("skin"), [obj], joints, [], prefix=None)
    return client.Job(config, request, lambda payload: messages.check_skin_result(payload, [4], ["Root", "Top"]),
                      timeout=timeout)


class ResolveCommand(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.js = os.path.join(self.tmp.name, "autorig.js")
        open(self.js, "w").close()

    def tearDown(self):
        self.tmp.cleanup()

    def test_preference_wins_and_js_runs_with_node(self):
        config = client.SidecarConfig(node="/usr/bin/env", entry=self.js, environ={"AUTORIG_SIDECAR": "/nope"})
        self.assertEqual(client.resolve_command(config, which=lambda n: None), ["/usr/bin/env", os.path.realpath(self.js)])

    def test_environment_then_path(self):
        config = client.SidecarConfig(environ={"AUTORIG_SIDECAR": self.js})
        self.assertEqual(client.resolve_command(config, which=lambda n: "/usr/bin/env" if n == "node" else None),
                         ["/usr/bin/env", os.path.realpath(self.js)])
        config = client.SidecarConfig(environ={})
        self.assertEqual(client.resolve_command(config, which=lambda n: {"node": "/usr/bin/env", "autorig": self.js}.get(n)),
                         ["/usr/bin/env", os.path.realpath(self.js)])

    def test_executable_launcher_runs_directly(self):
        launcher = make_launcher(self.tmp.name)
        config = client.SidecarConfig(entry=launcher, environ={})
        self.assertEqual(client.resolve_command(config, which=lambda n: None), [launcher])

    def test_nothing_found_says_what_to_set(self):
        with self.assertRaises(client.SidecarError) as ctx:
            client.resolve_command(client.SidecarConfig(environ={}), which=lambda n: None)
        self.assertIn("Sidecar entry point", ctx.exception.message)
        with self.assertRaises(client.SidecarError) as ctx:
            client.resolve_command(client.SidecarConfig(entry=self.js, environ={}), which=lambda n: None)
        self.assertIn("Node", ctx.exception.message)
        with self.assertRaises(client.SidecarError):
            client.resolve_command(client.SidecarConfig(entry="/does/not/exist.js", environ={}), which=lambda n: None)


class StatusLine(unittest.TestCase):
    def test_provider_text(self):
        hello = {"executionProvider": "cpu"}
        self.assertEqual(client.provider_text(hello), "cpu")
        self.assertEqual(client.provider_text(dict(hello, providerFallback=[])), "cpu")
        self.assertEqual(client.provider_text({"executionProvider": "cuda", "providerFallback": ["tensorrt: no libs"]}),
                         "cuda; tensorrt unavailable")
        many = ["cuda: a", "webgpu: b: c", "tensorrt: d", "dml: e"]
        self.assertEqual(client.provider_text(dict(hello, providerFallback=many)),
                         "cpu; cuda, webgpu, tensorrt, ... unavailable")
        # text from the sidecar is shown made safe: no control characters, bounded length
        shown = client.provider_text({"executionProvider": "c\x1bpu\n" + "x" * 100})
        self.assertNotIn("\x1b", shown)
        self.assertNotIn("\n", shown)
        self.assertLessEqual(len(shown), 24)


class Jobs(unittest.TestCase):
    def setUp(self):
        self.launcher = fake_launcher_for(self)

    def config(self, mode="normal"):
        env = dict(os.environ, FAKE_SIDECAR_MODE=mode)
        return client.SidecarConfig(entry=self.launcher, port=0, environ=env)

    def test_rig_round_trip_with_started_sidecar(self):
        job = rig_job(self.config())
        self.assertEqual(job.run(), client.DONE, job.error)
        result = job.result
        self.assertEqual([j["name"] for j in result["joints"]], ["mixamorig:Hips", "Head"])
        indices, weights, k = result["weights"][0]
        self.assertEqual(k, 4)
        # the fake weights the two high vertices (z=2) to joint 1, the low ones to joint 0
        self.assertEqual(list(indices[0::4]), [0, 0, 1, 1])
        self.assertEqual(list(weights[0::4]), [1.0] * 4)
        self.assertEqual(job.hello["sidecar"], "fake")
        # the panel shows where the models run, and that the sidecar fell back from cuda
        self.assertEqual(client.sidecar_status(),
                         "Sidecar ready on port %d (cpu; cuda unavailable)" % client._managed["process"].port)

    def test_sidecar_is_reused_then_stopped(self):
        config = self.config()
        first = rig_job(config)
        self.assertEqual(first.run(), client.DONE)
        process = client._managed["process"]
        second = rig_job(config)
        self.assertEqual(second.run(), client.DONE)
        self.assertIs(client._managed["process"], process, "the running sidecar is reused")
        client.stop_sidecar()
        self.assertIsNotNone(process.process.poll(), "the sidecar process has exited")
        self.assertEqual(client.sidecar_status(), "Sidecar: not started")

    def test_start_early_starts_the_sidecar_the_first_job_then_uses(self):
        config = self.config()
        process = client.start_early(config)
        self.assertIsNotNone(process)
        self.assertTrue(process.ready.wait(10), "the early sidecar printed its ready line")
        self.assertTrue(process.check_ready())
        job = rig_job(config)
        self.assertEqual(job.run(), client.DONE, job.error)
        self.assertIs(client._managed["process"], process, "the first job ran on the sidecar started early")
        self.assertIs(client.start_early(config), process, "starting early again keeps the running sidecar")

    def test_one_poll_runs_every_step_that_is_ready(self):
        config = self.config()
        self.assertTrue(client.start_early(config).ready.wait(10))
        job = rig_job(config)
        # connect, hello, its answer and the request in one call, not one call (one timer tick) per step; the call
        # returns with the first messages of the job (its progress, or its result)
        self.assertIn(job.poll(10.0), (client.RUNNING, client.DONE), job.error)
        self.assertEqual(job.run(), client.DONE, job.error)
        self.assertEqual(len(job.result["joints"]), 2)

    def test_send_request_sends_it_at_once_to_a_running_sidecar(self):
        config = self.config("slow")
        self.assertTrue(client.start_early(config).ready.wait(10))
        job = rig_job(config)
        self.assertEqual(job.send_request(), client.RUNNING, job.error)
        # the sidecar has the request: its progress arrives on the next polls
        deadline = time.monotonic() + 10
        while job.stage != "mesh":
            job.poll(0.02)
            self.assertLess(time.monotonic(), deadline)
        job.cancel()
        self.assertEqual(job.run(), client.CANCELLED)

    def test_send_request_leaves_a_starting_sidecar_to_the_timer(self):
        slow = os.path.join(os.path.dirname(self.launcher), "slow-autorig")
        with open(slow, "w") as f:
            f.write("#!/bin/sh\nsleep 1\nexec %s \"$@\"\n" % self.launcher)
        os.chmod(slow, 0o755)
        job = rig_job(client.SidecarConfig(entry=slow, port=0, environ=dict(os.environ)))
        start = time.monotonic()
        self.assertEqual(job.send_request(), client.STARTING)
        self.assertLess(time.monotonic() - start, 1.0, "a click does not wait for the sidecar to start")
        self.assertEqual(job.run(), client.DONE, job.error)

    def test_start_early_starts_nothing_without_auto_start_or_a_sidecar_to_start(self):
        off = client.SidecarConfig(entry=self.launcher, port=0, auto_start=False, environ=dict(os.environ))
        self.assertIsNone(client.start_early(off))
        self.assertIsNone(client._managed["process"])
        missing = client.SidecarConfig(entry="/does/not/exist.js", port=0, environ={})
        self.assertIsNone(client.start_early(missing), "no sidecar to start: nothing raised, the first job says why")
        self.assertIsNone(client._managed["process"])

    def external_sidecar(self):
        """A sidecar the user started by hand (not managed by the add-on): (port, token)."""
        process = client.SidecarProcess([self.launcher], 0, dict(os.environ, FAKE_SIDECAR_MODE="normal"))
        self.addCleanup(process.stop)
        self.assertTrue(process.ready.wait(10))
        self.assertTrue(process.check_ready())
        return process.port, process.token

    def test_token_is_required(self):
        port, _ = self.external_sidecar()
        external = client.SidecarConfig(port=port, auto_start=False, token="not-the-token", environ={})
        job = rig_job(external)
        self.assertEqual(job.run(), client.FAILED)
        self.assertEqual(job.error[0], "SIDECAR")
        self.assertIn("401", job.error[1])
        self.assertIsNone(client._managed["process"], "no sidecar was started")

    def test_external_sidecar_with_token_from_environment(self):
        port, token = self.external_sidecar()
        external = client.SidecarConfig(port=port, auto_start=False, environ={"AUTORIG_TOKEN": token})
        job = rig_job(external)
        self.assertEqual(job.run(), client.DONE, job.error)
        self.assertIsNone(client._managed["process"], "no sidecar was started")

    def test_no_sidecar_and_no_auto_start(self):
        job = rig_job(client.SidecarConfig(port=0, auto_start=False, environ={}))
        self.assertEqual(job.run(), client.FAILED)
        self.assertIn("Start automatically", job.error[1])

    def test_nested_result_is_accepted(self):
        job = rig_job(self.config("nested"))
        self.assertEqual(job.run(), client.DONE, job.error)

    def test_sidecar_error_is_reported_with_its_code(self):
        job = rig_job(self.config("error"))
        self.assertEqual(job.run(), client.FAILED)
        self.assertEqual(job.error, ("NOT_HUMANOID", "no legs"))
        self.assertIsNone(job.result)

    def test_bad_result_is_refused(self):
        job = rig_job(self.config("badresult"))
        self.assertEqual(job.run(), client.FAILED)
        self.assertEqual(job.error[0], "BAD_RESULT")
        self.assertIn("weights for 4 vertices", job.error[1])

    def test_malformed_rig_results_are_refused(self):
        expected = {"nan": "weights", "badindex": "indices", "nanjoint": "NaN", "badname": "U+0007",
                    "slashname": "path separator", "longname": "63 UTF-8 bytes", "dupname": "earlier joint"}
        for mode, why in expected.items():
            with self.subTest(mode=mode):
                job = rig_job(self.config(mode))
                self.assertEqual(job.run(), client.FAILED)
                self.assertEqual(job.error[0], "BAD_RESULT")
                self.assertIn(why, job.error[1])
                self.assertIsNone(job.result)
                client.stop_sidecar()  # the mode is read at start: the next one needs a fresh fake

    def test_skin_results_must_name_the_bones_sent(self):
        job = skin_job(self.config("normal"))
        self.assertEqual(job.run(), client.DONE, job.error)
        client.stop_sidecar()
        for mode, why in {"unknownbone": "bones differ", "nan": "weights", "badresult": "weights for 4"}.items():
            with self.subTest(mode=mode):
                job = skin_job(self.config(mode))
                self.assertEqual(job.run(), client.FAILED)
                self.assertEqual(job.error[0], "BAD_RESULT")
                self.assertIn(why, job.error[1])
                client.stop_sidecar()

    def test_sidecar_killed_during_a_job(self):
        job = rig_job(self.config("slow"))
        deadline = time.monotonic() + 20
        while job.poll(0.02) != client.RUNNING or job.stage != "mesh":
            self.assertLess(time.monotonic(), deadline)
        process = client._managed["process"]
        process.process.kill()
        self.assertEqual(job.run(), client.FAILED)
        self.assertEqual(job.error[0], "SIDECAR")
        self.assertIn("stopped during the job", job.error[1])
        # the next job starts a new sidecar
        again = rig_job(self.config("normal"))
        self.assertEqual(again.run(), client.DONE, again.error)
        self.assertIsNot(client._managed["process"], process)

    def test_crash_before_ready(self):
        job = rig_job(self.config("crash"))
        self.assertEqual(job.run(), client.FAILED)
        self.assertEqual(job.error[0], "SIDECAR")
        self.assertIn("cannot start (as asked)", job.error[1])

    def test_cancel_nonblocking(self):
        job = rig_job(self.config("slow"))
        deadline = time.monotonic() + 20
        while job.poll(0.02) != client.RUNNING or job.stage != "mesh":
            self.assertLess(time.monotonic(), deadline)
        self.assertAlmostEqual(job.fraction, 0.25)
        job.cancel()
        self.assertEqual(job.state, client.CANCELLING)
        while job.poll(0.02) not in client.TERMINAL:
            self.assertLess(time.monotonic(), deadline)
        self.assertEqual(job.state, client.CANCELLED)
        self.assertEqual(job.error[0], "CANCELLED")

    def test_poll_does_not_block(self):
        job = rig_job(self.config("slow"))
        deadline = time.monotonic() + 20
        while job.state != client.RUNNING:
            job.poll(0.02)
            self.assertLess(time.monotonic(), deadline)
        start = time.monotonic()
        for _ in range(50):
            self.assertEqual(job.poll(0), client.RUNNING)
        self.assertLess(time.monotonic() - start, 0.25)
        job.cancel()
        job.run()

    def test_timeout(self):
        job = rig_job(self.config("slow"), timeout=1.5)
        start = time.monotonic()
        self.assertEqual(job.run(), client.FAILED)
        self.assertEqual(job.error[0], "TIMEOUT")
        self.assertLess(time.monotonic() - start, 5)


class LocalChecks(unittest.TestCase):
    def test_empty_selection_fails_before_sending(self):
        with self.assertRaises(messages.AutoRigFailure) as ctx:
            messages.rig_request("r", [messages.mesh_object("P", array("f", [0] * 9), array("I"))])
        self.assertEqual(ctx.exception.code, "EMPTY_MESH")
        with self.assertRaises(messages.AutoRigFailure) as ctx:
            messages.rig_request("r", [])
        self.assertEqual(ctx.exception.code, "BAD_REQUEST")

    def test_too_many_objects(self):
        obj = messages.mesh_object("P", array("f", [0] * 12), array("I", [0, 1, 2]))
        with self.assertRaises(messages.AutoRigFailure) as ctx:
            messages.rig_request("r", [obj] * 65)
        self.assertEqual(ctx.exception.code, "TOO_LARGE")

    def test_method_is_sent_only_when_chosen(self):
        obj = messages.mesh_object("P", array("f", [0] * 12), array("I", [0, 1, 2]))
        self.assertNotIn("method", messages.rig_request("r", [obj])["options"])
        self.assertEqual(messages.rig_request("r", [obj], method="learned")["options"], {"prefix": True, "method": "learned"})


if __name__ == "__main__":
    unittest.main()
