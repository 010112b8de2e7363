"""Starts the real sidecar exactly as the add-on does (blender_addon.client.SidecarProcess), reports how the token
travels, then closes the sidecar's stdin (what the OS does when Blender dies) and reports how the sidecar ended.

  python3 real_sidecar_probe.py NODE ENTRY
prints one JSON line: pid, token_on_command_line, token_in_environment, stdin_is_pipe, ready, exit_code,
exit_seconds (after stdin closed), stderr_tail. Linux only (reads /proc).
"""

import json
import os
import sys
import time

import support  # noqa: F401
from blender_addon import client


def main(node, entry):
    environ = {k: v for k, v in os.environ.items() if k != "AUTORIG_TOKEN"}
    process = client.SidecarProcess([node, entry], 0, environ)
    report = {"pid": process.process.pid, "ready": process.ready.wait(30) and process.check_ready()}
    with open("/proc/%d/cmdline" % process.process.pid, "rb") as f:
        cmdline = f.read()
    with open("/proc/%d/environ" % process.process.pid, "rb") as f:
        environ_entries = f.read().split(b"\0")
    token = process.token.encode("ascii")
    report["token_on_command_line"] = token in cmdline
    report["command_line"] = cmdline.replace(b"\0", b" ").decode("utf-8", "replace").strip()
    report["token_in_environment"] = (b"AUTORIG_TOKEN=" + token) in environ_entries
    report["stdin_is_pipe"] = os.readlink("/proc/%d/fd/0" % process.process.pid).startswith("pipe:")
    start = time.monotonic()
    process.process.stdin.close()
    try:
        report["exit_code"] = process.process.wait(15)
        report["exit_seconds"] = round(time.monotonic() - start, 3)
    except Exception:
        report["exit_code"] = None
        process.process.kill()
    time.sleep(0.1)
    report["stderr_tail"] = list(process.stderr_tail)[-5:]
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
