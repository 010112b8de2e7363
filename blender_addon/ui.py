"""The AutoRig tab of the 3D viewport's sidebar (N panel)."""

import bpy

from . import client, correctives, pose_properties, poses, prepare_on_show, scene_io

__all__ = ["AUTORIG_PT_main", "AUTORIG_PG_latent_pose", "AUTORIG_PG_correctives", "register_pose_settings",
           "unregister_pose_settings"]

_SETTINGS_PROPERTY = "autorig_pose"
_CORRECTIVES_PROPERTY = "autorig_correctives"


def _choice_changed(_settings, context):
    """A pose setting changed: the user is about to pose the meshes shown (prepare_on_show reads them ahead)."""
    prepare_on_show.note_shown(context)


class AUTORIG_PG_latent_pose(bpy.types.PropertyGroup):
    """The panel's Apply Latent Pose choices (kept with the scene)."""

    pose: bpy.props.EnumProperty(
        name="Pose", items=poses.pose_items, update=_choice_changed,
        description="The pose (Refresh asks the sidecar for its list; experimental: the rig-based baseline "
                    "measured better on this pose)")
    strength: pose_properties.strength_property(update=_choice_changed)
    strategy: pose_properties.strategy_property(update=_choice_changed)
    facing: pose_properties.facing_property(update=_choice_changed,
                                            description=pose_properties.POSE_FACING_DESCRIPTION)


class AUTORIG_PG_correctives(bpy.types.PropertyGroup):
    """The panel's Pose Correctives choices (kept with the scene)."""

    method: bpy.props.EnumProperty(
        name="Method", items=correctives.METHOD_ITEMS, default=correctives.METHOD_ITEMS[0][0],
        description="The pose-dependent deformation the corrective keys reproduce")
    fit_examples: bpy.props.BoolProperty(
        name="Fit to Examples", default=False,
        description="Fit the corrective keys to the armature's Pose Examples (meshes showing the character posed as "
                    "it should look) before baking them")


def register_pose_settings():
    """The scene's panel settings: Latent Pose's and Pose Correctives'."""
    setattr(bpy.types.Scene, _SETTINGS_PROPERTY, bpy.props.PointerProperty(type=AUTORIG_PG_latent_pose))
    setattr(bpy.types.Scene, _CORRECTIVES_PROPERTY, bpy.props.PointerProperty(type=AUTORIG_PG_correctives))


def unregister_pose_settings():
    if hasattr(bpy.types.Scene, _CORRECTIVES_PROPERTY):
        delattr(bpy.types.Scene, _CORRECTIVES_PROPERTY)
    if hasattr(bpy.types.Scene, _SETTINGS_PROPERTY):
        delattr(bpy.types.Scene, _SETTINGS_PROPERTY)


def _draw_latent_pose(layout, context):
    """The Latent Pose section: pose menu (with Refresh), strength, strategy, Apply, Apply All Poses."""
    settings = getattr(context.scene, _SETTINGS_PROPERTY, None)
    box = layout.box()
    box.label(text="Latent Pose", icon='POSE_HLT')
    if settings is None:
        return
    row = box.row(align=True)
    row.prop(settings, "pose", text="")
    row.operator("autorig.refresh_poses", text="", icon='FILE_REFRESH')
    entry = poses.pose_entry(settings.pose)
    if entry is not None and entry["experimental"]:
        box.label(text="Experimental: %s" % entry["note"], icon='ERROR')
    box.prop(settings, "strength", slider=True)
    box.prop(settings, "strategy", text="")
    box.prop(settings, "facing")
    op = box.operator("autorig.apply_latent_pose", icon='SHAPEKEY_DATA')
    if settings.pose != poses.NO_POSES:
        op.pose = settings.pose
    op.strength = settings.strength
    op.strategy = settings.strategy
    op.facing = settings.facing
    every = box.operator("autorig.apply_all_latent_poses", icon='SHAPEKEY_DATA')
    every.strength = settings.strength
    every.strategy = settings.strategy
    every.facing = settings.facing
    box.label(text=poses.list_status())
    # the panel shows these meshes: the sidecar may read them now, before Apply is clicked
    prepare_on_show.note_shown(context)
    ahead = prepare_on_show.status(context)
    if ahead is not None:
        box.label(text=ahead, icon='TIME')


def _draw_examples(box, context, settings):
    """The Pose Examples part of the section: Fit to Examples, how many examples the armature has, Add and Clear."""
    if settings is not None:
        box.prop(settings, "fit_examples")
    armature = scene_io.example_armature(context)
    if armature is not None:
        texts = scene_io.pose_example_texts(context.scene, correctives.EXAMPLE_PROPERTY)
        texts += correctives.key_example_texts(
            scene_io.pose_example_texts(context.scene, correctives.KEY_EXAMPLES_PROPERTY))
        count = correctives.count_examples(texts, armature.name)
        box.label(text="%d pose example(s) of %s" % (count, armature.name), icon='OUTLINER_OB_MESH')
    else:
        box.label(text="Pose examples: select the character", icon='INFO')
    row = box.row(align=True)
    row.operator("autorig.add_example", icon='ADD')
    row.operator("autorig.clear_example", text="", icon='X')


def _draw_correctives(layout, context):
    """The Pose Correctives section: the method (only when there is a choice), bake, preview and clear, and the
    pose examples the keys can be fitted to."""
    settings = getattr(context.scene, _CORRECTIVES_PROPERTY, None)
    box = layout.box()
    box.label(text="Pose Correctives", icon='MOD_ARMATURE')
    method = settings.method if settings is not None else correctives.METHOD_ITEMS[0][0]
    if settings is not None and len(correctives.METHOD_ITEMS) > 1:
        box.prop(settings, "method", text="")
    op = box.operator("autorig.pose_correctives", icon='SHAPEKEY_DATA')
    op.method = method
    row = box.row(align=True)
    op = row.operator("autorig.preview_correctives", icon='HIDE_OFF')
    op.method = method
    row.operator("autorig.clear_correctives_preview", text="", icon='X')
    _draw_examples(box, context, settings)


class AUTORIG_PT_main(bpy.types.Panel):
    bl_label = "AutoRig"
    bl_idname = "AUTORIG_PT_main"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "AutoRig"

    def draw(self, context):
        layout = self.layout
        meshes = scene_io.selected_meshes(context)
        column = layout.column(align=True)
        if meshes:
            column.label(text="%d mesh(es): %s" % (len(meshes), meshes[0].name), icon='MESH_DATA')
        else:
            column.label(text="Select the character's mesh(es)", icon='INFO')
        prefs = context.preferences.addons.get(__package__)
        prefix = prefs.preferences.prefix if prefs is not None else True
        op = column.operator("autorig.auto_rig", icon='ARMATURE_DATA')
        op.prefix = prefix
        if prefs is not None:
            op.method = prefs.preferences.method
            column.prop(prefs.preferences, "prefix")
            column.prop(prefs.preferences, "method")

        armature = scene_io.bound_armature(context.active_object)
        box = layout.box()
        if armature is not None:
            box.label(text="Bound to %s" % armature.name, icon='BONE_DATA')
            box.label(text="Locked vertex groups are kept", icon='LOCKED')
        box.operator("autorig.reskin", icon='MOD_VERTEX_WEIGHT')

        _draw_latent_pose(layout, context)
        _draw_correctives(layout, context)

        layout.label(text=client.sidecar_status())


classes = (AUTORIG_PG_latent_pose, AUTORIG_PG_correctives, AUTORIG_PT_main)
