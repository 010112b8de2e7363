"""AutoRig: one click from a bare character mesh to a Mixamo-compatible rig with skin weights.

The rigging runs in the AutoRig sidecar (Node), started by the add-on and reached over a loopback WebSocket; see
client.py for how it is found, and the add-on preferences to point at it.
Blender 3.4 to 4.1 read bl_info; 4.2+ read blender_manifest.toml (both ship in the zip).
"""

bl_info = {
    "name": "AutoRig",
    "author": "AutoRig contributors",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "View3D > Sidebar > AutoRig",
    "description": "Automatic Mixamo-compatible skeleton and skin weights for a character mesh",
    "category": "Rigging",
}

# Modules that need bpy are imported in register(), so the pure modules (msgpack, websocket, messages, client,
# weights, protocol) import and test without Blender.


def _classes():
    from . import operators, preferences, ui

    return preferences.classes + operators.classes + ui.classes


# Seconds after the add-on loads before the sidecar is started early: Blender's own start-up comes first.
START_EARLY_DELAY = 2.0


def _start_sidecar_early():
    """Timer (runs once): start the sidecar in the background when the preferences ask for it (client.start_early)."""
    import bpy
    from . import client, operators
    prefs = operators.addon_preferences(bpy.context)
    if prefs is not None and prefs.start_with_blender:
        client.start_early(operators.sidecar_config(bpy.context))
    return None


def register():
    import bpy

    from . import preferences, prepare_on_show, ui

    for cls in _classes():
        bpy.utils.register_class(cls)
    preferences.register_session_token()
    ui.register_pose_settings()
    prepare_on_show.register()
    # Not in background mode: a render farm or a script has no user waiting for a first click.
    if not bpy.app.background:
        bpy.app.timers.register(_start_sidecar_early, first_interval=START_EARLY_DELAY)


def unregister():
    import bpy

    from . import client, preferences, prepare_on_show, ui

    prepare_on_show.unregister()
    client.stop_sidecar()
    ui.unregister_pose_settings()
    preferences.unregister_session_token()
    for cls in reversed(_classes()):
        bpy.utils.unregister_class(cls)
