"""The add-on's operators as a click runs them, in a Blender with a window (xvfb-run): INVOKE_DEFAULT, the modal path
(its timer polling the sidecar, Esc cancelling), which background Blender cannot run. Run by test/blender-click.test.ts:

  xvfb-run -a blender --factory-startup --enable-event-simulate --python test/blender/click.py -- --zip Z --node N \
      --entry E --character C --fake test/python/fake_sidecar.py --python /usr/bin/python3 --work DIR

The fake sidecar (test/python/fake_sidecar.py) answers at once, so what is tested is the add-on's modal path:
  auto_rig:  a click on Auto Rig rigs the character (armature, vertex groups, modifier), one undo step;
  pose:      a click on Apply Latent Pose adds the pose's shape key at value 1, every vertex 0.1 higher in the world
             (what the fake answers);
  all_poses: a click on Apply All Poses adds every pose's key at value 0, over three chained requests;
  error:     a sidecar answering an error: the scene is exactly as before;
  cancel:    Esc (simulated) while the sidecar works: the job is cancelled, the scene exactly as before;
  handshake: a click's request is on its way when the click returns (the sidecar already running): no timer tick is
             spent connecting or greeting it;
  prepared:  the Latent Pose section drawn sends one pose.prepare of the shown mesh once it settles (none with the
             preference off), a setting changed sends none more for the same mesh, one for the mesh moved; the
             click that follows sends only its pose.apply, answered as reused.
Each case ends when the operator's finish() has run (the script wraps it to hear of it). Prints one line
`AUTORIG_CLICK {json}`; the vitest test asserts on it.
"""

import os
import sys
import time
import traceback

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bare_character import import_bare_hero  # noqa: E402
from scene_digest import digest_differences, scene_digest  # noqa: E402
from script_run import fake_sidecar_launcher, install_addon, run_and_report, script_args, step_logger  # noqa: E402

MARKER = "AUTORIG_CLICK"
CASE_TIMEOUT = 60.0
results = {"steps": [], "cases": {}}


step = step_logger(results, "click")


def parse_args():
    return script_args("fake", "python", "work")


def use_fake_sidecar(args, mode):
    """Point the add-on at a launcher of the fake sidecar in `mode` (a new entry point: the add-on starts it anew)."""
    from autorig import client

    client.stop_sidecar()
    bpy.context.preferences.addons["autorig"].preferences.sidecar_entry = fake_sidecar_launcher(args, mode)


def start_sidecar():
    """Start the add-on's sidecar now (as Blender does when the add-on loads) and wait until it is ready, so that a case
    is about its answer, not its start."""
    import autorig
    from autorig import client

    autorig._start_sidecar_early()
    process = client._managed["process"]
    if process is None or not process.ready.wait(30):
        raise RuntimeError("the sidecar did not start")


def import_bare_character(path):
    """The character's mesh alone, without its rig, named "Hero", selected and active."""
    hero = import_bare_hero(path)
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj is hero)
    bpy.context.view_layer.objects.active = hero
    bpy.ops.ed.undo_push(message="scene built")
    return hero


def hear_finishes(finished):
    """Wrap the add-on's operators' finish() so that the script hears when a modal operator ends (its return value is
    appended to `finished`): Blender 3.4 offers no other way to see a modal operator end."""
    from autorig import operators

    base = operators._SidecarJobOperator
    original = base.finish

    def finish(self, context):
        result = original(self, context)
        finished.append(sorted(result))
        return result

    base.finish = finish


def hear_sends(sent):
    """Record the kind of each message the add-on's jobs send (hello, then the request), with the facing it carries
    when it carries one ("pose.prepare facing [0.0, 1.0, 0.0]")."""
    from autorig import client

    original = client.Job._send

    def send(self, message):
        sent.append(message["kind"] + (" facing %s" % message["facing"] if "facing" in message else ""))
        return original(self, message)

    client.Job._send = send


class ClickDriver:
    """Runs the cases, a generator, from a timer so that Blender's event loop runs the modal operators between steps.
    The generator yields ("click", operator, props) or ("click_then_esc", operator, props): the operator is invoked
    in the window (INVOKE_DEFAULT, as a click); for the second, Esc is pressed (simulated) once the request has been
    sent. The generator resumes, once the operator's finish() has run, with {"invoke": what invoke returned,
    "sent_when_click_returned": the requests sent by then, "answer": what finish() returned}."""

    def __init__(self, cases, done, finished, sent):
        self.cases, self.done, self.finished, self.sent = cases, done, finished, sent
        self.pending = None
        window = bpy.context.window_manager.windows[0]
        area = max(window.screen.areas, key=lambda a: a.width * a.height)
        self.window = window
        self.override = {"window": window, "screen": window.screen, "area": area,
                         "region": next(r for r in area.regions if r.type == 'WINDOW')}
        _override.update(self.override)

    def tick(self):
        try:
            if self.pending is None:
                self.click(next(self.cases))
            elif not self.advance():
                return 0.01
            else:
                self.click(self.cases.send(self.pending.pop("resume")))
            return 0.01
        except StopIteration:
            self.done()
        except Exception:
            results["exception"] = traceback.format_exc()
            self.done()
        return None

    def click(self, command):
        kind, op, props = command
        if kind == "wait":
            # op: a predicate; the generator resumes with {} once it holds
            self.pending = {"wait": op, "until": time.monotonic() + CASE_TIMEOUT, "result": {}}
            return
        count = len(self.finished)
        del self.sent[:]
        with bpy.context.temp_override(**self.override):
            invoked = op('INVOKE_DEFAULT', True, **props)
        self.pending = {"esc": kind == "click_then_esc", "count": count, "until": time.monotonic() + CASE_TIMEOUT,
                        "result": {"invoke": sorted(invoked), "sent_when_click_returned": list(self.sent)}}

    def advance(self):
        """Whether the pending click has ended (then its result is under "resume")."""
        p = self.pending
        if time.monotonic() > p["until"]:
            raise RuntimeError("the operator did not finish within %d s" % CASE_TIMEOUT)
        if "wait" in p:
            if not p["wait"]():
                return False
            p["resume"] = p["result"]
            return True
        if p["esc"] and "pose.apply" in self.sent:
            # the slow fake answers a request with progress, then waits for the cancel
            self.window.event_simulate(type='ESC', value='PRESS')
            self.window.event_simulate(type='ESC', value='RELEASE')
            p["esc"] = False
        if len(self.finished) <= p["count"]:
            return False
        p["result"]["answer"] = self.finished[-1]
        p["resume"] = p["result"]
        return True


# Longer than pose_prepare.SETTLE: what a prepare waits before it is sent.
SETTLE_WAIT = 0.6
_override = {}


def driver_override():
    """The window, screen and area the clicks run in (as a property changed in the panel has)."""
    return _override


def hear_pose_answers(applied):
    """Record each pose.apply answer's `reused` as the add-on checks it."""
    from autorig import messages

    original = messages.check_pose_apply_result

    def check(payload, counts, pose):
        result = original(payload, counts, pose)
        applied.append(result["reused"])
        return result

    messages.check_pose_apply_result = check


applied = []


def world_z(obj, key=None):
    """Each vertex's world z: of the mesh, or of a shape key's positions."""
    data = key.data if key is not None else obj.data.vertices
    matrix = obj.matrix_world
    return [(matrix @ v.co).z for v in data]


def cases(args, sent):
    """The cases (see the module doc string), as ClickDriver's generator."""
    from autorig import poses

    hero = bpy.data.objects["Hero"]
    mesh = hero.data

    step("auto_rig")
    use_fake_sidecar(args, "normal")
    before = scene_digest()
    answer = (yield ("click", bpy.ops.autorig.auto_rig, {}))["answer"]
    after = scene_digest()
    arm = hero.find_armature()
    case = results["cases"]["auto_rig"] = {
        "answer": answer, "armature": arm.name if arm else None, "bones": len(arm.data.bones) if arm else 0,
        "groups": sorted(g.name for g in hero.vertex_groups),
        "modifier": [m.type for m in hero.modifiers], "changed": bool(digest_differences(before, after)),
    }
    bpy.ops.ed.undo()
    case["undo_restores"] = not digest_differences(before, scene_digest())
    bpy.ops.ed.redo()
    case["redo_restores"] = not digest_differences(after, scene_digest())
    hero = bpy.data.objects["Hero"]
    mesh = hero.data

    step("pose")
    if 'FINISHED' not in bpy.ops.autorig.refresh_poses('EXEC_DEFAULT'):
        raise RuntimeError("the pose list could not be fetched")
    names = poses.pose_names()
    rest = world_z(hero)
    answer = (yield ("click", bpy.ops.autorig.apply_latent_pose, {"pose": names[0]}))["answer"]
    keys = mesh.shape_keys.key_blocks if mesh.shape_keys else []
    key = keys.get(names[0]) if keys else None
    lifts = [b - a for a, b in zip(rest, world_z(hero, key))] if key else []
    results["cases"]["pose"] = {
        "answer": answer, "pose": names[0], "keys": [k.name for k in keys], "value": key.value if key else None,
        "lift_min": min(lifts) if lifts else None, "lift_max": max(lifts) if lifts else None,
    }

    step("all_poses")
    keys_before = [k.name for k in mesh.shape_keys.key_blocks]
    answer = (yield ("click", bpy.ops.autorig.apply_all_latent_poses, {}))["answer"]
    keys = mesh.shape_keys.key_blocks
    results["cases"]["all_poses"] = {
        "answer": answer, "poses": names, "added": [k.name for k in keys][len(keys_before):],
        "values": [k.value for k in keys][len(keys_before):], "requests": sent.count("pose.apply"),
    }

    for mode, name, command in (("error", "error", "click"), ("slow", "cancel", "click_then_esc")):
        step(name)
        use_fake_sidecar(args, mode)
        start_sidecar()
        before = scene_digest()
        click = yield (command, bpy.ops.autorig.apply_latent_pose, {"pose": names[0]})
        results["cases"][name] = dict(click, differences=digest_differences(before, scene_digest())[:8])

    step("handshake")
    use_fake_sidecar(args, "normal")
    start_sidecar()
    results["cases"]["handshake"] = yield ("click", bpy.ops.autorig.apply_latent_pose, {"pose": names[-1]})

    step("prepared")
    from autorig import prepare_on_show
    use_fake_sidecar(args, "normal")  # a new fake: it knows no mesh yet
    start_sidecar()
    prefs = bpy.context.preferences.addons["autorig"].preferences
    settings = bpy.context.scene.autorig_pose
    preparer = prepare_on_show._preparer
    hero = bpy.data.objects["Hero"]
    preparer.reset()
    case = results["cases"]["prepared"] = {}
    prefs.prepare_poses = False
    del sent[:]
    with bpy.context.temp_override(**driver_override()):
        settings.strength = 0.8
    until = time.monotonic() + 2 * SETTLE_WAIT
    yield ("wait", lambda: time.monotonic() > until, None)
    case["sent_with_preference_off"] = list(sent)
    prefs.prepare_poses = True
    # the panel's Latent Pose section drawn (in a popup: the sidebar is closed), as when the user opens the panel
    drawn = []

    def draw_section(menu, context):
        from autorig import ui
        ui._draw_latent_pose(menu.layout, context)
        drawn.append(True)

    with bpy.context.temp_override(**driver_override()):
        bpy.context.window_manager.popup_menu(draw_section, title="AutoRig")
    yield ("wait", lambda: preparer.outcome is not None and preparer.job is None, None)
    case["panel_drawn"] = bool(drawn)
    case["sent_from_panel"] = list(sent)
    case["outcome"] = [preparer.outcome[0], preparer.outcome[1] if preparer.outcome[0] == "done" else None]
    with bpy.context.temp_override(**driver_override()):
        case["status"] = prepare_on_show.status(bpy.context)
    window = bpy.context.window_manager.windows[0]
    window.event_simulate(type='ESC', value='PRESS')  # close the popup
    window.event_simulate(type='ESC', value='RELEASE')
    del sent[:]
    with bpy.context.temp_override(**driver_override()):
        settings.strength = 0.7  # the same mesh: nothing more to read
    until = time.monotonic() + 2 * SETTLE_WAIT
    yield ("wait", lambda: time.monotonic() > until, None)
    case["sent_after_a_change_of_setting"] = list(sent)
    # the panel's Facing changed: the mesh is read again in that facing (the sidecar keeps a reading per facing)
    del sent[:]
    with bpy.context.temp_override(**driver_override()):
        settings.facing = 'POS_Y'
    yield ("wait", lambda: preparer.outcome is not None and preparer.job is None and len(sent) >= 2, None)
    case["sent_after_a_change_of_facing"] = list(sent)
    del sent[:]
    # the mesh moved: what Apply would send changed, so it is read again once a setting changes
    hero.location.x += 0.01
    bpy.context.view_layer.update()
    with bpy.context.temp_override(**driver_override()):
        settings.strength = 0.9  # the user moves the slider: the shown mesh is read ahead once it settles
        settings.strength = 1.0
    yield ("wait", lambda: preparer.outcome is not None and preparer.job is None and len(sent) >= 2, None)
    case["sent_after_the_mesh_moved"] = list(sent)
    del sent[:]
    del applied[:]
    click = yield ("click", bpy.ops.autorig.apply_latent_pose, {"pose": names[0]})
    case.update(click, reused=list(applied))


def main():
    """Once the window is up (a timer's first call): install the add-on, build the scene, then click through the cases."""
    args = parse_args()
    step("install")
    install_addon(args.zip, args.node)
    import_bare_character(args.character)
    results["hero_vertices"] = len(bpy.data.objects["Hero"].data.vertices)
    sent = []
    finished = []
    hear_finishes(finished)
    hear_sends(sent)
    hear_pose_answers(applied)

    def end():
        run_and_report(lambda: None, results, MARKER)
        bpy.ops.wm.quit_blender()

    clicks = ClickDriver(cases(args, sent), end, finished, sent)
    bpy.app.timers.register(clicks.tick, first_interval=0.01)


def begin():
    try:
        main()
    except Exception:
        results["exception"] = traceback.format_exc()
        run_and_report(lambda: None, results, MARKER)
        bpy.ops.wm.quit_blender()
    return None


if __name__ == "__main__":
    bpy.app.timers.register(begin, first_interval=0.5)
