"""How the add-on hands the sidecar its token, and the static audit's rules (addon_audit.py) on planted code.

The token travels in the sidecar's environment only: never on its command line (any local user can read argv with
`ps`), never in a file. The sidecar's stdin is a pipe from the add-on, so the sidecar sees Blender go away.
"""

import os
import sys
import tempfile
import unittest

import support
from addon_audit import audit_folder, audit_source
from blender_addon import client
from test_client import make_launcher


def _proc(pid, name):
    with open("/proc/%d/%s" % (pid, name), "rb") as f:
        return f.read()


@unittest.skipUnless(sys.platform.startswith("linux"), "reads /proc")
class TokenTravel(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.launcher = make_launcher(self.tmp.name)

    def start(self):
        process = client.SidecarProcess([self.launcher], 0, dict(os.environ, FAKE_SIDECAR_MODE="normal"))
        self.addCleanup(process.stop)
        self.assertTrue(process.ready.wait(10))
        self.assertTrue(process.check_ready())
        return process

    def test_token_in_environment_not_on_command_line(self):
        process = self.start()
        token = process.token.encode("ascii")
        cmdline = _proc(process.process.pid, "cmdline")
        self.assertIn(b"serve", cmdline)  # it is the sidecar's command line that was read
        self.assertNotIn(token, cmdline)
        environ = _proc(process.process.pid, "environ").split(b"\0")
        self.assertIn(b"AUTORIG_TOKEN=" + token, environ)

    def test_token_is_fresh_and_long(self):
        first, second = self.start(), self.start()
        self.assertNotEqual(first.token, second.token)
        self.assertRegex(first.token, r"^[0-9a-f]{64}$")

    def test_stdin_is_a_pipe_from_the_add_on(self):
        process = self.start()
        self.assertTrue(os.readlink("/proc/%d/fd/0" % process.process.pid).startswith("pipe:"))
        process.process.stdin.close()  # what the OS does when Blender dies: the sidecar must exit by itself
        self.assertEqual(process.process.wait(10), 0)


class AuditRules(unittest.TestCase):
    """Each rule of the audit fires on planted code (so a clean add-on report means something)."""

    def rules(self, source):
        return [f["rule"] for f in audit_source(source)]

    def test_dynamic_code(self):
        self.assertEqual(self.rules("eval(name)"), ["dynamic-code"])
        self.assertEqual(self.rules("exec(code)"), ["dynamic-code"])
        self.assertEqual(self.rules("compile(s, 'f', 'exec')"), ["dynamic-code"])
        self.assertEqual(self.rules("__import__(module)"), ["dynamic-code"])
        self.assertEqual(self.rules("bpy.utils.execfile(path)"), ["dynamic-code"])

    def test_deserialisers_and_modules(self):
        self.assertEqual(self.rules("import pickle"), ["module"])
        self.assertEqual(self.rules("from marshal import loads"), ["module"])
        self.assertEqual(self.rules("import importlib.util"), ["module"])
        self.assertEqual(self.rules("yaml.load(text)"), ["deserialiser"])

    def test_shells(self):
        self.assertEqual(self.rules("subprocess.Popen(cmd, shell=True)"), ["shell"])
        self.assertEqual(self.rules("subprocess.run(cmd, shell=flag)"), ["shell"])
        self.assertEqual(self.rules("subprocess.run(cmd, shell=False)"), [])
        self.assertEqual(self.rules("os.system(cmd)"), ["shell"])
        self.assertEqual(self.rules("os.execvp(a, b)"), ["shell"])

    def test_attributes_chosen_by_data(self):
        self.assertEqual(self.rules("getattr(bpy.ops, name)"), ["dynamic-attribute"])
        self.assertEqual(self.rules("setattr(obj, message['field'], 1)"), ["dynamic-attribute"])
        self.assertEqual(self.rules("getattr(subprocess, 'CREATE_NO_WINDOW', 0)"), [])
        self.assertEqual(self.rules("_P = 'x'\ngetattr(wm, _P, '')"), [])

    def test_text_evaluated_by_blender(self):
        self.assertEqual(self.rules("driver.expression = name"), ["evaluates-text"])
        self.assertEqual(self.rules("bpy.app.driver_namespace['f'] = f"), ["evaluates-text"])

    def test_files(self):
        self.assertEqual(self.rules("open(path, 'w')"), ["writes-file"])
        self.assertEqual(self.rules("open(path, mode='a+')"), ["writes-file"])
        self.assertEqual(self.rules("open(path)"), [])
        self.assertEqual(self.rules("os.open(path, flags)"), ["writes-file"])
        self.assertEqual(self.rules("import tempfile"), ["module"])

    def test_the_add_on_is_clean(self):
        files, findings = audit_folder(os.path.join(support.REPO_ROOT, "blender_addon"))
        self.assertIn("client.py", files)
        self.assertGreaterEqual(len(files), 10)
        self.assertEqual(findings, [])


if __name__ == "__main__":
    unittest.main()
