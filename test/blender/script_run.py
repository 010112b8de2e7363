"""What the Blender test scripts share. Their end (run_and_report): run main(), keep a traceback in the results instead
of losing it, stop the sidecar the add-on started, and print the one line the test reads, `<MARKER> <json>`
(test/fixtures/blenderScript.ts). Their arguments (script_args), their step log (step_logger), the add-on's install
(install_addon), and a launcher of the fake sidecar (fake_sidecar_launcher)."""

import json
import traceback


def run_and_report(main, results, marker):
    """main: the script's work (fills `results`); results: the dict printed; marker: e.g. "AUTORIG_E2E"."""
    try:
        main()
    except Exception:
        results["exception"] = traceback.format_exc()
    finally:
        try:
            from autorig import client

            client.stop_sidecar()
        except Exception:
            pass
        print(marker + " " + json.dumps(results), flush=True)


def script_args(*extra):
    """The script's arguments after Blender's `--`: --zip --node --entry --character (what runAddonScript passes) and
    each name in `extra` (without dashes), all required → argparse.Namespace."""
    import argparse
    import sys

    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    parser = argparse.ArgumentParser()
    for name in ("zip", "node", "entry", "character") + extra:
        parser.add_argument("--" + name, required=True)
    return parser.parse_args(argv)


def step_logger(results, label):
    """A function step(name) that appends name to results["steps"] and prints it with the seconds since this call."""
    import time

    start = time.monotonic()

    def step(name):
        results["steps"].append(name)
        print("%s: %6.2f s %s" % (label, time.monotonic() - start, name), flush=True)

    return step


def install_addon(zip_path, node=None, entry=None):
    """Installs and enables the add-on zip, set to start its own sidecar on a free port (port 0), with `node` and
    `entry` as its Node.js and sidecar entry point where given → the add-on's preferences."""
    import bpy

    bpy.ops.preferences.addon_install(filepath=zip_path, overwrite=True)
    bpy.ops.preferences.addon_enable(module="autorig")
    prefs = bpy.context.preferences.addons["autorig"].preferences
    if node is not None:
        prefs.node_executable = node
    if entry is not None:
        prefs.sidecar_entry = entry
    prefs.port = 0
    prefs.auto_start = True
    return prefs


def fake_sidecar_launcher(args, mode):
    """An executable in args.work that starts the fake sidecar (args.fake, run by args.python) in `mode`
    (FAKE_SIDECAR_MODE), written once per mode → its path, for the add-on's "Sidecar entry point"."""
    import os
    import stat

    launcher = os.path.join(args.work, "fake-sidecar-%s" % mode)
    if not os.path.exists(launcher):
        with open(launcher, "w") as f:
            f.write("#!/bin/sh\nFAKE_SIDECAR_MODE=%s exec %s %s \"$@\"\n" % (mode, args.python, args.fake))
        os.chmod(launcher, os.stat(launcher).st_mode | stat.S_IXUSR)
    return launcher
