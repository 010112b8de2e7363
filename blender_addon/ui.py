"""The AutoRig tab of the 3D viewport's sidebar (N panel)."""

import bpy

from . import client, scene_io

__all__ = ["AUTORIG_PT_main"]


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

        layout.label(text=client.sidecar_status())


classes = (AUTORIG_PT_main,)
