"""Add-on preferences: where Node and the sidecar are, which port, and whether to start the sidecar automatically.

The token of a sidecar the user started by hand is deliberately not a preference: preferences are saved in
userpref.blend, which other users of the machine can usually read. It lives on the window manager instead, which
Blender never writes to any file, so it lasts for the session only (or comes from AUTORIG_TOKEN in the environment).
"""

import bpy

from . import client

__all__ = ["AUTORIG_AddonPreferences", "session_token", "register_session_token", "unregister_session_token"]

_TOKEN_PROPERTY = "autorig_session_token"


def session_token(context):
    """The token typed for this session ("" when none: the client then reads AUTORIG_TOKEN)."""
    return getattr(context.window_manager, _TOKEN_PROPERTY, "")


def register_session_token():
    setattr(bpy.types.WindowManager, _TOKEN_PROPERTY, bpy.props.StringProperty(
        name="Token", subtype='PASSWORD', default="",
        description="Only for a sidecar you started yourself: its AUTORIG_TOKEN. Kept for this session only, never "
                    "saved (empty: AUTORIG_TOKEN from Blender's environment)"))


def unregister_session_token():
    if hasattr(bpy.types.WindowManager, _TOKEN_PROPERTY):
        delattr(bpy.types.WindowManager, _TOKEN_PROPERTY)



# Auto Rig's methods (shared-schema RigOptions.method); DEFAULT leaves the choice to the sidecar.
METHOD_ITEMS = (
    ('DEFAULT', "Default", "The sidecar's default method"),
    ('GEOMETRIC', "Geometric", "Joints read from the silhouette by rules"),
    ('LEARNED', "Learned", "Joints and weights from the trained networks (models/joints2d.onnx, models/point_rig.onnx)"),
    ('HYBRID', "Hybrid", "The 2D network's joints where it is confident, the rules' elsewhere; each joint's depth from point_rig"),
)

class AUTORIG_AddonPreferences(bpy.types.AddonPreferences):
    bl_idname = __package__

    node_executable: bpy.props.StringProperty(
        name="Node executable", subtype='FILE_PATH', default="",
        description="Node.js 20 or newer; empty: `node` on PATH")
    sidecar_entry: bpy.props.StringProperty(
        name="Sidecar entry point", subtype='FILE_PATH', default="",
        description="bin/autorig.js of your AutoRig checkout (after `npm install`); empty: the AUTORIG_SIDECAR "
                    "environment variable, else `autorig` on PATH")
    port: bpy.props.IntProperty(
        name="Port", default=0, min=0, max=65535,
        description="0: the sidecar picks a free port. Else connect to a sidecar on this port (or start one there)")
    auto_start: bpy.props.BoolProperty(
        name="Start automatically", default=True,
        description="Start the sidecar when none answers; it stops when Blender quits")
    start_with_blender: bpy.props.BoolProperty(
        name="Start with Blender", default=True,
        description="With 'Start automatically': start the sidecar in the background as soon as Blender has loaded "
                    "the add-on (never in background mode), so that its models are loaded and its code warmed before "
                    "the first Auto Rig or Apply Latent Pose")
    prepare_poses: bpy.props.BoolProperty(
        name="Read meshes ahead for Latent Pose", default=True,
        description="While the Latent Pose panel shows a mesh, a running sidecar reads it (its latent and auto-rig) "
                    "in the background, so that Apply Latent Pose answers in a fraction of the time. Uses the CPU "
                    "once per mesh; never starts the sidecar")
    prefix: bpy.props.BoolProperty(
        name="mixamorig: prefix", default=True, description="Default for Auto Rig's bone names")
    method: bpy.props.EnumProperty(
        name="Method", default='DEFAULT', items=METHOD_ITEMS,
        description="How Auto Rig finds the skeleton (the sidecar's default is the one that measured best)")

    def draw(self, context):
        layout = self.layout
        layout.prop(self, "node_executable")
        layout.prop(self, "sidecar_entry")
        row = layout.row()
        row.prop(self, "auto_start")
        row.prop(self, "port")
        if self.auto_start:
            layout.prop(self, "start_with_blender")
        if self.port:
            layout.prop(context.window_manager, _TOKEN_PROPERTY)
            layout.label(text="The token is kept for this session only, never saved", icon='LOCKED')
        layout.prop(self, "prepare_poses")
        layout.prop(self, "prefix")
        layout.prop(self, "method")
        try:
            argv = client.resolve_command(client.SidecarConfig(node=self.node_executable, entry=self.sidecar_entry))
            layout.label(text="Starts: %s serve" % " ".join(argv), icon='CHECKMARK')
        except client.SidecarError as err:
            layout.label(text=err.message, icon='ERROR')
        layout.label(text=client.sidecar_status())


classes = (AUTORIG_AddonPreferences,)
