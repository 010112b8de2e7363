"""What the Blender test scripts share. Their end (run_and_report): run main(), keep a traceback in the results instead
of losing it, stop the sidecar the add-on started, and print the one line the test reads, `<MARKER> <json>`
(test/fixtures/blenderScript.ts). Their arguments (script_args), their step log (step_logger), the add-on's install
(install_addon), a launcher of the fake sidecar (fake_sidecar_launcher), and what a user's hand does in the scene:
select one object (select_only), click an operator (run_operator), look at the panel (draw_autorig_panel) and at the
deformed mesh (evaluated_positions)."""

import json
import time
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


def select_only(obj):
    """Select obj alone and make it the active object, as a click on it in the viewport does."""
    import bpy

    for other in bpy.context.view_layer.objects:
        other.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj


def run_operator(op, **props):
    """Run an operator as a click does ('EXEC_DEFAULT', undo=True: the UI's undo push) → (finished, error, seconds)."""
    start = time.monotonic()
    try:
        finished, error = 'FINISHED' in op('EXEC_DEFAULT', True, **props), None
    except RuntimeError as err:
        finished, error = False, str(err)
    return finished, error, round(time.monotonic() - start, 3)


def evaluated_positions(obj):
    """World positions of obj's evaluated mesh (armature, shape keys and drivers applied) → [Vector], #V."""
    import bpy

    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    world = obj.matrix_world
    positions = [world @ v.co for v in mesh.vertices]
    evaluated.to_mesh_clear()
    return positions


class _LayoutRecorder:
    """Stands in for a UILayout (background mode draws no UI): records labels, properties and operator buttons."""

    def __init__(self, record):
        self._record = record

    def _nested(self, *_args, **_kwargs):
        return self

    column = row = box = split = _nested

    def label(self, text="", **_kwargs):
        self._record["labels"].append(text)

    def prop(self, data, name, **_kwargs):
        self._record["props"].append("%s.%s" % (type(data).__name__, name))

    def operator(self, idname, **_kwargs):
        button = type("OperatorButton", (), {})()
        self._record["operators"].append((idname, button))
        return button


def draw_autorig_panel():
    """Run the AutoRig panel's draw() with a recording layout: what the user would see → {"labels": [str],
    "props": ["Type.name"], "operators": [(idname, {property: value the button carries})]} in drawing order."""
    import bpy

    record = {"labels": [], "props": [], "operators": []}
    panel = type("Panel", (), {"layout": _LayoutRecorder(record)})()
    bpy.types.AUTORIG_PT_main.draw(panel, bpy.context)
    record["operators"] = [(idname, vars(button)) for idname, button in record["operators"]]
    return record
