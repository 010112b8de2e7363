"""The Latent Pose panel's meshes read ahead (pose_prepare.PosePreparer driven from Blender): when the panel shows
meshes all in Object Mode (at most pose_prepare.READ_AHEAD_MAX_VERTICES in all), or one of its pose settings changes, a timer sends a pose.prepare of them once they have stayed
the same a moment (pose_prepare.SETTLE), to a sidecar that is already running (never one started for it), and only
while no other AutoRig request is in flight. Apply Latent Pose then finds them read (or waits on the sidecar for the
read under way) instead of reading them itself.

The meshes are named by a key of what the request would send: object and mesh names, vertex and face counts, world
matrices, a counter of geometry updates (a depsgraph handler: an edit, an undo, a new shape key), the panel's Facing
and the Mixamo armature's bones when there is one. A key that changes is a new prepare; the sidecar keys on the bytes
sent (and the facing they set), so a prepare of unchanged bytes answers at once.
"""

import bpy
from bpy.app.handlers import persistent

from . import client, messages, operators, pose_prepare, scene_io

__all__ = ["note_shown", "status", "register", "unregister"]

# How often the timer drives the prepare in flight (and looks whether the noted meshes have settled).
TICK = 0.05

_preparer = pose_prepare.PosePreparer()
_geometry = {"updates": 0}


def _key_of(meshes, facing):
    """The key naming exactly what a request of `meshes` would send (see the module's doc), with the panel's Facing
    and the Mixamo armature that would go with it (the sidecar reads a mesh per facing, and an armature's sides set
    it): a renamed bone, a bone moved in Edit Mode or an armature added or removed is a new key."""
    return (_geometry["updates"], facing, _armature_key(meshes)) + tuple(
        (obj.name, obj.data.name, len(obj.data.vertices), len(obj.data.polygons),
         tuple(tuple(row) for row in obj.matrix_world)) for obj in meshes)


def _armature_key(meshes):
    """What of the meshes' Mixamo armature a prepare would send (its name, transform and bones' rest heads), or None
    when they have none (they are auto-rigged). Reads no weights."""
    armature = operators.mixamo_armature_of(meshes)
    if armature is None:
        return None
    return (armature.name, tuple(tuple(row) for row in armature.matrix_world),
            tuple((bone.name, tuple(bone.head_local)) for bone in armature.data.bones))


def _read_ahead_key(meshes, facing):
    """The key of `meshes` read with the panel's `facing` when they are to be read ahead (some, all in Object Mode,
    not too large), else None."""
    if any(obj.mode != 'OBJECT' for obj in meshes):
        return None
    worth = pose_prepare.worth_reading_ahead(len(obj.data.vertices) for obj in meshes)
    return _key_of(meshes, facing) if worth else None


def shown_key(context):
    """The key of the meshes the panel shows (the active and selected ones), or None: none, not in Object Mode, or too
    large to read ahead."""
    if context.mode != 'OBJECT':
        return None
    return _read_ahead_key(scene_io.selected_meshes(context), _panel_facing(context))


def _panel_facing(context):
    """The Latent Pose panel's Facing (a FACING_ITEMS identifier)."""
    settings = getattr(context.scene, "autorig_pose", None)
    return settings.facing if settings is not None else "AUTO"


def _enabled(context):
    prefs = operators.addon_preferences(context)
    return prefs is not None and prefs.prepare_poses and client.sidecar_running(operators.sidecar_config(context))


def note_shown(context):
    """The panel shows its meshes, or a pose setting changed: have them prepared once they settle. Cheap enough for a
    panel's draw (no mesh is read here; the timer reads it)."""
    if not _enabled(context):
        return
    if _preparer.note(shown_key(context)) and not bpy.app.timers.is_registered(_tick):
        bpy.app.timers.register(_tick, first_interval=TICK)


def status(context):
    """The panel's line about its meshes' prepare, or None."""
    return _preparer.status(shown_key(context)) if _enabled(context) else None


def _prepare_job(context, meshes):
    """A client.Job of a pose.prepare of `meshes`, read as Apply Latent Pose reads them (their Basis, world space, the
    panel's Facing); the auto-rig is asked for unless they have a Mixamo armature (Apply then sends it, and its bones
    go with the prepare: their left and right set the facing the mesh is read in)."""
    objects, _counts = scene_io.mesh_objects(meshes)
    armature = operators.mixamo_armature_of(meshes)
    joints = scene_io.armature_joints(armature) if armature is not None else None
    facing = operators.FACING_DIRECTIONS.get(_panel_facing(context))
    request = messages.pose_prepare_request(client.new_job_id("prepare"), objects, joints=joints, facing=facing)
    return client.Job(operators.sidecar_config(context), request, messages.check_pose_prepare_result,
                      client_name=operators.client_name())


def _redraw_sidebars(context):
    """The panel's status line follows the prepare: redraw the 3D views' sidebars (a draw is cheap; nothing else asks)."""
    for window in context.window_manager.windows:
        for area in window.screen.areas:
            if area.type == 'VIEW_3D':
                for region in area.regions:
                    if region.type == 'UI':
                        region.tag_redraw()


def _tick():
    """Timer: drive the prepare in flight; send the noted one once it has settled. Runs while either remains."""
    context = bpy.context
    was_in_flight = _preparer.job is not None
    in_flight = _preparer.poll()
    key = _preparer.due()
    if key is not None and _enabled(context) and not client.jobs_in_flight(besides=_preparer.job):
        layer = context.view_layer
        meshes = scene_io.meshes_active_first(layer.objects.active, layer.objects.selected)
        now = _read_ahead_key(meshes, _panel_facing(context))
        if now != key:
            # the scene moved on since it was noted (another selection, an edit, the depsgraph's first evaluation of
            # a new mesh): what is selected now waits its turn, or nothing is sent
            _preparer.note(now)
        else:
            try:
                _preparer.start(key, _prepare_job(context, meshes))
                in_flight = True
            except messages.AutoRigFailure as err:
                _preparer.failed_to_start(key, err.code, err.message)
            except Exception as err:  # unforeseen: not sent, and not tried again on every redraw (Apply will say)
                _preparer.failed_to_start(key, "INTERNAL", "%s: %s" % (type(err).__name__, err))
    elif key is not None and not _enabled(context):
        _preparer.forget_pending()
    if in_flight != was_in_flight:
        _redraw_sidebars(context)
    return TICK if in_flight or _preparer.pending_key is not None else None


@persistent
def _count_geometry_updates(_scene, depsgraph):
    for update in depsgraph.updates:
        if update.is_updated_geometry and isinstance(update.id, (bpy.types.Object, bpy.types.Mesh)):
            _geometry["updates"] += 1
            return


@persistent
def _forget_on_load(*_args):
    _preparer.reset()


def register():
    bpy.app.handlers.depsgraph_update_post.append(_count_geometry_updates)
    bpy.app.handlers.load_post.append(_forget_on_load)


def unregister():
    _preparer.reset()
    if bpy.app.timers.is_registered(_tick):
        bpy.app.timers.unregister(_tick)
    for handlers, handler in ((bpy.app.handlers.depsgraph_update_post, _count_geometry_updates),
                              (bpy.app.handlers.load_post, _forget_on_load)):
        if handler in handlers:
            handlers.remove(handler)
