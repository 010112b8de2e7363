"""Operators: Auto Rig (rig the selected meshes as one character) and Re-skin (new weights for a bound mesh).

invoke() runs the job modally: a timer polls the sidecar without blocking the UI, progress goes to the status bar,
Esc cancels. execute() runs the same job to the end in one call (background mode has no event loop, so tests and
scripts use it). Either way the scene is only changed once the result has arrived and been checked, in one undo step.
"""

import bpy

from . import apply, client, messages, preferences, scene_io

__all__ = ["AUTORIG_OT_auto_rig", "AUTORIG_OT_reskin", "addon_preferences", "sidecar_config"]

TIMER_INTERVAL = 0.1


def addon_preferences(context):
    addon = context.preferences.addons.get(__package__)
    return addon.preferences if addon is not None else None


def sidecar_config(context):
    prefs = addon_preferences(context)
    if prefs is None:
        return client.SidecarConfig()
    return client.SidecarConfig(node=prefs.node_executable, entry=prefs.sidecar_entry, port=prefs.port,
                                auto_start=prefs.auto_start, token=preferences.session_token(context))


def _client_name():
    return "autorig-blender (Blender %s)" % bpy.app.version_string


class _SidecarJobOperator:
    """What the two operators share: start a job, drive it (modal or blocking), apply its result."""

    _job = None
    _timer = None
    _apply = None

    def prepare(self, context):
        """Subclasses: read the scene and return (request, check_result, apply_result)."""
        raise NotImplementedError

    def start(self, context):
        request, check_result, apply_result = self.prepare(context)
        self._job = client.Job(sidecar_config(context), request, check_result, client_name=_client_name())
        self._apply = apply_result

    def finish(self, context):
        job, self._job = self._job, None
        if job.state == client.CANCELLED:
            self.report({'WARNING'}, "AutoRig: cancelled; nothing was changed")
            return {'CANCELLED'}
        if job.state != client.DONE:
            self._report_failure(*job.error)
            return {'CANCELLED'}
        try:
            summary = self._apply(context, job.result)
        except messages.AutoRigFailure as err:
            self._report_failure(err.code, err.message)
            return {'CANCELLED'}
        self.report({'INFO'}, summary)
        return {'FINISHED'}

    def _report_failure(self, code, message):
        # The code and message may come from the sidecar: shown as plain text, never interpreted.
        self.report({'ERROR'}, "AutoRig %s: %s" % (messages.display_text(code, 40), messages.display_text(message)))

    # --- blocking path ---

    def execute(self, context):
        try:
            self.start(context)
        except messages.AutoRigFailure as err:
            self._report_failure(err.code, err.message)
            return {'CANCELLED'}
        self._job.run()
        return self.finish(context)

    # --- modal path ---

    def invoke(self, context, event):
        try:
            self.start(context)
        except messages.AutoRigFailure as err:
            self._report_failure(err.code, err.message)
            return {'CANCELLED'}
        wm = context.window_manager
        self._timer = wm.event_timer_add(TIMER_INTERVAL, window=context.window)
        wm.modal_handler_add(self)
        wm.progress_begin(0, 100)
        self._show_progress(context)
        return {'RUNNING_MODAL'}

    def modal(self, context, event):
        if event.type == 'ESC' and event.value == 'PRESS':
            self._job.cancel()
            return {'RUNNING_MODAL'}
        if event.type != 'TIMER' or self._job is None:
            return {'PASS_THROUGH'}
        state = self._job.poll(0.0)
        if state not in client.TERMINAL:
            self._show_progress(context)
            return {'RUNNING_MODAL'}
        self._end_modal(context)
        return self.finish(context)

    def cancel(self, context):
        # Blender ends the modal operator (file load, window closed): stop the job on the sidecar too.
        if self._job is not None:
            self._job.cancel()
            self._job.close()
            self._job = None
        self._end_modal(context)

    def _show_progress(self, context):
        job = self._job
        context.window_manager.progress_update(int(job.fraction * 100))
        if context.workspace is not None:
            context.workspace.status_text_set("AutoRig: %s (%d%%)  Esc to cancel" % (job.stage, job.fraction * 100))

    def _end_modal(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        if context.workspace is not None:
            context.workspace.status_text_set(None)


class AUTORIG_OT_auto_rig(_SidecarJobOperator, bpy.types.Operator):
    """Find a Mixamo-compatible skeleton and skin weights for the selected mesh(es), as one character"""

    bl_idname = "autorig.auto_rig"
    bl_label = "Auto Rig"
    bl_options = {'REGISTER', 'UNDO'}

    prefix: bpy.props.BoolProperty(
        name="mixamorig: Prefix", default=True,
        description="Name the bones mixamorig:Hips, mixamorig:Spine... (as Mixamo does); off: Hips, Spine...")
    method: bpy.props.EnumProperty(
        name="Method", default='DEFAULT', items=preferences.METHOD_ITEMS,
        description="How the skeleton is found")

    @classmethod
    def poll(cls, context):
        return context.mode == 'OBJECT' and bool(scene_io.selected_meshes(context))

    def prepare(self, context):
        prefs = addon_preferences(context)
        if prefs is not None and not self.properties.is_property_set("prefix"):
            self.prefix = prefs.prefix
        if prefs is not None and not self.properties.is_property_set("method"):
            self.method = prefs.method
        meshes = scene_io.selected_meshes(context)
        objects, counts = scene_io.mesh_objects(meshes)
        names = [obj.name for obj in meshes]
        method = None if self.method == 'DEFAULT' else self.method.lower()
        request = messages.rig_request(client.new_job_id("rig"), objects, prefix=self.prefix, method=method)

        def check(payload):
            return messages.check_rig_result(payload, counts)

        def apply_result(context, result):
            found = apply.find_meshes(names, counts)
            armature = apply.apply_rig(context, found, result)
            return "AutoRig: %s with %d bones, %d mesh(es) bound (%.1f s in the sidecar)" % (
                armature.name, len(armature.data.bones), len(found), result["seconds"])

        return request, check, apply_result


class AUTORIG_OT_reskin(_SidecarJobOperator, bpy.types.Operator):
    """Compute new skin weights for the active mesh from the bones of its armature (locked vertex groups are kept)"""

    bl_idname = "autorig.reskin"
    bl_label = "Re-skin"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return context.mode == 'OBJECT' and scene_io.bound_armature(context.active_object) is not None

    def prepare(self, context):
        armature = scene_io.bound_armature(context.active_object)
        meshes = [obj for obj in scene_io.selected_meshes(context) if scene_io.bound_armature(obj) == armature]
        joints = scene_io.armature_joints(armature)
        bone_names = [j["name"] for j in joints]
        objects, counts = scene_io.mesh_objects(meshes)
        names = [obj.name for obj in meshes]
        locked = scene_io.locked_groups(meshes, bone_names)
        request = messages.skin_request(client.new_job_id("skin"), objects, joints, locked, prefix=None)

        def check(payload):
            return messages.check_skin_result(payload, counts, bone_names)

        def apply_result(context, result):
            found = apply.find_meshes(names, counts)
            rewritten = apply.apply_skin(found, result, bone_names)
            return "AutoRig: re-skinned %d mesh(es), %d vertex groups rewritten, %d locked kept (%.1f s)" % (
                len(found), rewritten, len(locked), result["seconds"])

        return request, check, apply_result


classes = (AUTORIG_OT_auto_rig, AUTORIG_OT_reskin)
