"""Operators: Auto Rig (rig the selected meshes as one character), Re-skin (new weights for a bound mesh), Apply
Latent Pose (a shape key with the mesh in a semantic pose), Refresh Poses (the pose menu from the sidecar), Pose
Correctives (shape keys driven by bone rotations that make skinning pose-dependent) with its Preview and Clear Preview,
and Add / Clear Pose Example (a mesh showing the character in a pose as the artist wants it, for the keys to be
fitted to).

invoke() runs the job modally: a timer polls the sidecar without blocking the UI, progress goes to the status bar,
Esc cancels. execute() runs the same job to the end in one call (background mode has no event loop, so tests and
scripts use it). Either way the scene is only changed once the result has arrived and been checked, in one undo step.
"""

import time

import bpy

from . import (apply, client, corrective_keys, correctives, messages, pose_properties, poses, preferences, protocol,
               scene_io)

__all__ = ["AUTORIG_OT_auto_rig", "AUTORIG_OT_reskin", "AUTORIG_OT_apply_latent_pose",
           "AUTORIG_OT_apply_all_latent_poses", "AUTORIG_OT_refresh_poses",
           "AUTORIG_OT_pose_correctives", "AUTORIG_OT_preview_correctives", "AUTORIG_OT_clear_correctives_preview",
           "AUTORIG_OT_add_example", "AUTORIG_OT_clear_example", "pose_examples", "addon_preferences", "sidecar_config",
           "fetch_poses", "client_name", "mixamo_armature_of"]

# How often the modal path looks for the sidecar's answer. Checking costs a select() on a socket; each tick can add up
# to one interval to what the user waits for. With 0.1 s ticks, and the handshake (connect, hello, its answer) spread
# over ticks, a click on Apply Latent Pose (50k vertices, a UI Blender under Xvfb, viewport off) took 0.78-1.03 s to
# the shape key and Apply All Poses 11.9 s; with 20 ms ticks and Job.send_request at the click, 0.53-0.73 and 3.9 s
# (.tmp measurements, 2026-12-03; `npm run bench -- --only=pose` times the click path).
TIMER_INTERVAL = 0.02
# A job's progress (status bar text, the cursor's percentage) shows once it has run this long: a shorter one ends
# before it could be read, and each change of the status text redraws the window. Under Xvfb, where Blender draws on
# the CPU, those redraws took about 0.3 s of CPU from a 0.6 s Apply Latent Pose, beside the sidecar (.tmp
# measurements, 2026-12-03: Blender's own CPU per click 360 ms against 65-87 ms for the blocking call).
PROGRESS_DELAY = 0.5


def addon_preferences(context):
    addon = context.preferences.addons.get(__package__)
    return addon.preferences if addon is not None else None


def sidecar_config(context):
    prefs = addon_preferences(context)
    if prefs is None:
        return client.SidecarConfig()
    return client.SidecarConfig(node=prefs.node_executable, entry=prefs.sidecar_entry, port=prefs.port,
                                auto_start=prefs.auto_start, token=preferences.session_token(context))


def client_name():
    return "autorig-blender (Blender %s)" % bpy.app.version_string


class _SidecarJobOperator:
    """What the two operators share: start a job, drive it (modal or blocking), apply its result."""

    _job = None
    _timer = None
    _apply = None
    _shown = None
    _progress_from = 0.0

    def prepare(self, context):
        """Subclasses: read the scene and return (request, check_result, apply_result)."""
        raise NotImplementedError

    def continue_with(self, context, result):
        """Operators that send several requests: keep `result` (checked) and return the next (request, check_result),
        or None when it was the last (finish then applies). The others send one."""
        return None

    def _advance(self, context):
        """After a job ended DONE: start the operator's next request, if it has one. Returns whether one started."""
        job = self._job
        if job is None or job.state != client.DONE:
            return False
        following = self.continue_with(context, job.result)
        if following is None:
            return False
        job.close()
        request, check_result = following
        self._job = client.Job(sidecar_config(context), request, check_result, client_name=client_name())
        self._job.send_request()
        return True

    def start(self, context):
        request, check_result, apply_result = self.prepare(context)
        self._job = client.Job(sidecar_config(context), request, check_result, client_name=client_name())
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
        while self._advance(context):
            self._job.run()
        return self.finish(context)

    # --- modal path ---

    def invoke(self, context, event):
        try:
            self.start(context)
        except messages.AutoRigFailure as err:
            self._report_failure(err.code, err.message)
            return {'CANCELLED'}
        # the request goes out now when the sidecar is up, not on the timer's next ticks
        if self._job.send_request() in client.TERMINAL:
            return self.finish(context)
        wm = context.window_manager
        self._timer = wm.event_timer_add(TIMER_INTERVAL, window=context.window)
        wm.modal_handler_add(self)
        self._shown = None
        self._progress_from = time.monotonic() + PROGRESS_DELAY
        return {'RUNNING_MODAL'}

    def modal(self, context, event):
        if event.type == 'ESC' and event.value == 'PRESS':
            self._job.cancel()
            return {'RUNNING_MODAL'}
        if event.type != 'TIMER' or self._job is None:
            return {'PASS_THROUGH'}
        state = self._job.poll(0.0)
        if state not in client.TERMINAL or self._advance(context):
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
        if time.monotonic() < self._progress_from:
            return
        job = self._job
        text = "AutoRig: %s%s (%d%%)  Esc to cancel" % (self.progress_prefix(), job.stage, job.fraction * 100)
        # every tick asks, the status bar is redrawn only when what it says changes
        if text == self._shown:
            return
        wm = context.window_manager
        if self._shown is None:
            wm.progress_begin(0, 100)
        self._shown = text
        wm.progress_update(int(job.fraction * 100))
        if context.workspace is not None:
            context.workspace.status_text_set(text)

    def progress_prefix(self):
        """Put before the job's stage in the status bar (which of several requests runs)."""
        return ""

    def _end_modal(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        if self._shown is not None:
            self._shown = None
            wm.progress_end()
            if context.workspace is not None:
                context.workspace.status_text_set(None)


# Auto Rig's Facing: the world direction each choice sends as options.facing (pose_properties)
FACING_DIRECTIONS = pose_properties.FACING_DIRECTIONS


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
    facing: pose_properties.facing_property()

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
        request = messages.rig_request(client.new_job_id("rig"), objects, prefix=self.prefix, method=method,
                                       facing=FACING_DIRECTIONS.get(self.facing))

        def check(payload):
            return messages.check_rig_result(payload, counts)

        def apply_result(context, result):
            found = apply.find_meshes(names, counts)
            armature = apply.apply_rig(context, found, result)
            warning = messages.facing_warning(result)
            if warning is not None:
                self.report({'WARNING'}, warning)
            return "AutoRig: %s with %d bones, %d mesh(es) bound (%.1f s in the sidecar)" % (
                armature.name, len(armature.data.bones), len(found), result["seconds"])

        return request, check, apply_result


class AUTORIG_OT_reskin(_SidecarJobOperator, bpy.types.Operator):
    """Compute new skin weights for the active mesh from the bones of its armature (locked vertex groups are kept)"""

    bl_idname = "autorig.reskin"
    bl_label = "Re-skin"
    bl_options = {'REGISTER', 'UNDO'}

    facing: pose_properties.facing_property(
        description="Which way the character faces, for an armature whose bones are not Mixamo-named (a Mixamo "
                    "armature's left and right decide): read from its shape, or set where the shape does not tell")

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
        request = messages.skin_request(client.new_job_id("skin"), objects, joints, locked, prefix=None,
                                        facing=FACING_DIRECTIONS.get(self.facing))

        def check(payload):
            return messages.check_skin_result(payload, counts, bone_names)

        def apply_result(context, result):
            found = apply.find_meshes(names, counts)
            rewritten = apply.apply_skin(found, result, bone_names)
            warning = messages.facing_warning(result)
            if warning is not None:
                self.report({'WARNING'}, warning)
            return "AutoRig: re-skinned %d mesh(es), %d vertex groups rewritten, %d locked kept (%.1f s)" % (
                len(found), rewritten, len(locked), result["seconds"])

        return request, check, apply_result


def fetch_poses(context, timeout=60.0):
    """Ask the sidecar for its poses (pose.list, blocking: it answers at once once the sidecar runs) and cache them
    for the pose menu. Returns None, or (code, message) when the list could not be fetched (the cache keeps the
    last good list and the reason, for the panel)."""
    request = messages.pose_list_request(client.new_job_id("poses"))
    job = client.Job(sidecar_config(context), request, messages.check_pose_list_result, client_name=client_name(),
                     timeout=timeout)
    if job.run() == client.DONE:
        poses.remember_poses(job.result)
        return None
    poses.remember_failure(*job.error)
    return job.error


class AUTORIG_OT_refresh_poses(bpy.types.Operator):
    """Ask the sidecar which latent poses are installed (fills the pose menu)"""

    bl_idname = "autorig.refresh_poses"
    bl_label = "Refresh Poses"
    bl_options = {'REGISTER'}  # changes no Blender data: nothing to undo

    def execute(self, context):
        error = fetch_poses(context)
        if error is not None:
            self.report({'ERROR'}, "AutoRig %s: %s" % (messages.display_text(error[0], 40),
                                                       messages.display_text(error[1])))
            return {'CANCELLED'}
        self.report({'INFO'}, "AutoRig: %s" % poses.list_status())
        return {'FINISHED'}


class AUTORIG_OT_apply_latent_pose(_SidecarJobOperator, bpy.types.Operator):
    """Add a shape key with the selected mesh(es) in the chosen pose, predicted by the latent pose model (any mesh,
    rigged or not)"""

    bl_idname = "autorig.apply_latent_pose"
    bl_label = "Apply Latent Pose"
    bl_options = {'REGISTER', 'UNDO'}

    pose: bpy.props.StringProperty(
        name="Pose", default="",
        description="A pose of the sidecar's list (empty: the one chosen in the AutoRig panel)")
    strength: pose_properties.strength_property()
    strategy: pose_properties.strategy_property()
    facing: pose_properties.facing_property(description=pose_properties.POSE_FACING_DESCRIPTION)

    @classmethod
    def poll(cls, context):
        return (context.mode == 'OBJECT' and bool(scene_io.selected_meshes(context))
                and client.sidecar_reachable(sidecar_config(context)))

    def _choices_from_panel(self, context):
        """Fill the properties the caller left unset from the panel's settings (fetching the pose list first when
        it never was)."""
        settings = getattr(context.scene, "autorig_pose", None)
        if settings is None:
            return
        if not self.properties.is_property_set("pose"):
            if settings.pose in ("", poses.NO_POSES):
                error = fetch_poses(context)
                if error is not None:
                    raise messages.AutoRigFailure(*error)
            self.pose = "" if settings.pose == poses.NO_POSES else settings.pose
        _pose_choices_from_panel(self, settings)

    def prepare(self, context):
        self._choices_from_panel(context)
        pose = self.pose
        meshes = scene_io.selected_meshes(context)
        # The mesh's own vertices (its Basis when it has shape keys), in world space, as Auto Rig sends them: the
        # key is relative to the Basis, so the pose must be predicted from it; the evaluated mesh would carry the
        # armature's pose, other keys and modifiers into the key (and a generative modifier changes the count).
        objects, counts = scene_io.mesh_objects(meshes)
        names = [obj.name for obj in meshes]
        armature, joints, weights = mixamo_rig_of(meshes)
        # its name now: the object may be gone by the time the answer comes
        armature_name = armature.name if armature is not None else ""
        request, check = _pose_request(objects, counts, pose, self.strength, self.strategy, joints, weights,
                                       self.facing)

        def apply_result(context, result):
            found = apply.find_meshes(names, counts)
            keys = apply.apply_pose_shape_keys(found, _local_positions(found, result), pose)
            entry = poses.pose_entry(pose)
            experimental = " (experimental)" if entry is not None and entry["experimental"] else ""
            who = ", identity %s" % messages.display_text(result["identity"], 63) if result["identity"] else ""
            through = ("through %s" % messages.display_text(armature_name, 63) if result["rig"] == "given"
                       else "through the auto-rig")
            if result["reused"]:
                through += " (mesh read earlier, reused)"
            _warn_facing(self, result)
            return "AutoRig: shape key '%s'%s on %d mesh(es) %s: strength %.2f, %s%s (%.1f s on %s)" % (
                keys[0], experimental, len(found), through, result["strength"],
                messages.display_text(result["strategy"], 16), who, result["seconds"],
                messages.display_text(result["provider"], 24))

        return request, check, apply_result


class AUTORIG_OT_apply_all_latent_poses(_SidecarJobOperator, bpy.types.Operator):
    """Add a shape key for every pose of the sidecar's list to the selected mesh(es), at value 0, to mix with the
    sliders (one request per pose: after the first the sidecar reuses the mesh's latent and rig)"""

    bl_idname = "autorig.apply_all_latent_poses"
    bl_label = "Apply All Poses"
    bl_options = {'REGISTER', 'UNDO'}

    strength: pose_properties.strength_property()
    strategy: pose_properties.strategy_property()
    facing: pose_properties.facing_property(description=pose_properties.POSE_FACING_DESCRIPTION)

    @classmethod
    def poll(cls, context):
        return AUTORIG_OT_apply_latent_pose.poll(context)

    def prepare(self, context):
        settings = getattr(context.scene, "autorig_pose", None)
        if settings is not None:
            _pose_choices_from_panel(self, settings)
        if not poses.pose_names():
            error = fetch_poses(context)
            if error is not None:
                raise messages.AutoRigFailure(*error)
        self._poses = poses.pose_names()
        if not self._poses:
            raise messages.AutoRigFailure(protocol.ERROR_BAD_REQUEST, "the sidecar has no poses")
        meshes = scene_io.selected_meshes(context)
        # the Basis in world space, as Apply Latent Pose sends it; one read of the scene for every request
        self._objects, self._counts = scene_io.mesh_objects(meshes)
        self._names = [obj.name for obj in meshes]
        armature, self._joints, self._weights = mixamo_rig_of(meshes)
        self._through = "through %s" % messages.display_text(armature.name, 63) if armature is not None else None
        self._results = []
        request, check = self._request(0)
        return request, check, self._apply_all

    def _request(self, index):
        return _pose_request(self._objects, self._counts, self._poses[index], self.strength, self.strategy,
                             self._joints, self._weights, self.facing)

    def continue_with(self, context, result):
        self._results.append(result)
        if len(self._results) == len(self._poses):
            return None
        return self._request(len(self._results))

    def progress_prefix(self):
        return "pose %d of %d: " % (len(self._results) + 1, len(self._poses))

    def _apply_all(self, context, _last):
        found = apply.find_meshes(self._names, self._counts)
        keys = [(pose, _local_positions(found, result)) for pose, result in zip(self._poses, self._results)]
        names = apply.apply_pose_shape_key_set(found, keys)
        _warn_facing(self, self._results[0])
        seconds = sum(result["seconds"] for result in self._results)
        through = self._through if self._results[0]["rig"] == "given" else "through the auto-rig"
        return "AutoRig: %d shape keys (%s ... %s) at value 0 on %d mesh(es) %s: strength %.2f, %s (%.1f s)" % (
            len(names), names[0], names[-1], len(found), through, self._results[0]["strength"],
            messages.display_text(self._results[0]["strategy"], 16), seconds)


def _pose_choices_from_panel(operator, settings):
    """Strength, strategy and facing from the panel's settings where the caller left them unset."""
    if not operator.properties.is_property_set("strength"):
        operator.strength = settings.strength
    if not operator.properties.is_property_set("strategy"):
        operator.strategy = settings.strategy
    if not operator.properties.is_property_set("facing"):
        operator.facing = settings.facing


def _warn_facing(operator, result):
    """Report, as a warning, that a pose's facing was taken from the file convention (messages.facing_warning)."""
    warning = messages.facing_warning(result, where="the Latent Pose panel")
    if warning is not None:
        operator.report({'WARNING'}, warning)


def _pose_request(objects, counts, pose, strength, strategy, joints, weights, facing='AUTO'):
    """A pose.apply request for `pose` (strategy: a STRATEGY_ITEMS identifier, facing: a FACING_ITEMS one) and the
    check of its answer: (request, check_result)."""
    request = messages.pose_apply_request(client.new_job_id("pose"), objects, pose, strength=strength,
                                          strategy=poses.strategy_value(strategy), joints=joints, weights=weights,
                                          facing=FACING_DIRECTIONS.get(facing))

    def check(payload):
        return messages.check_pose_apply_result(payload, counts, pose)

    return request, check


def _local_positions(found, result):
    """A pose.apply answer's world-space positions in each found mesh's own space (ApplyFailed for a transform that
    cannot be inverted: nothing is changed then)."""
    try:
        return [scene_io.world_to_local(obj, p) for obj, p in zip(found, result["positions"])]
    except ValueError as err:
        raise apply.ApplyFailed("%s; nothing was changed" % err) from err


def mixamo_armature_of(meshes):
    """The armature that deforms every one of `meshes` through an Armature modifier, when its deforming bones hold
    every Mixamo template joint (Apply Latent Pose poses the meshes through it), else None (the sidecar auto-rigs
    them). Reads no weights."""
    return _mixamo_deforming(meshes)[0]


def _mixamo_deforming(meshes):
    """mixamo_armature_of's armature and its deforming bones' names, or (None, None)."""
    armatures = [scene_io.deforming_armature(obj) for obj in meshes]
    armature = armatures[0] if armatures else None
    if armature is None or any(other != armature for other in armatures):
        return None, None
    deforming = corrective_keys.deform_bone_names(armature)
    return (armature, deforming) if poses.mixamo_rigged(deforming) else (None, None)


def mixamo_rig_of(meshes):
    """mixamo_armature_of's armature with what Apply Latent Pose sends of it: (armature object, its Joint maps in world
    space, one ObjectWeights map per mesh), as Pose Correctives reads them. Else (None, None, None): the sidecar
    auto-rigs the meshes."""
    armature, deforming = _mixamo_deforming(meshes)
    if armature is None:
        return None, None, None
    joints = scene_io.armature_joints(armature)
    weights = [messages.object_weights(obj.name, *corrective_keys.mesh_bone_weights(obj, joints, deforming),
                                       correctives.INFLUENCES) for obj in meshes]
    return armature, joints, weights


def corrective_meshes(context):
    """The active mesh's deforming armature and the meshes it deforms among the active and selected ones (active
    first): (armature object, [mesh objects]), or (None, [])."""
    armature = scene_io.deforming_armature(context.active_object)
    if armature is None:
        return None, []
    return armature, [obj for obj in scene_io.selected_meshes(context)
                      if scene_io.deforming_armature(obj) == armature]


class _CorrectivesInputs:
    """What both corrective requests send, read from the scene: the meshes' Basis in world space, the armature's
    rest skeleton in world space and the meshes' bone weights (top 4, renormalised, indices into the skeleton)."""

    def __init__(self, context):
        self.armature, meshes = corrective_meshes(context)
        if self.armature is None:
            raise messages.AutoRigFailure(protocol.ERROR_BAD_REQUEST,
                                          "the active mesh has no Armature modifier with deforming bones")
        self.armature_name = self.armature.name
        self.joints = scene_io.armature_joints(self.armature)
        self.bone_names = [j["name"] for j in self.joints]
        deforming = corrective_keys.deform_bone_names(self.armature)
        self.objects, self.counts = scene_io.mesh_objects(meshes)
        self.names = [obj.name for obj in meshes]
        self.weights = []
        for obj in meshes:
            indices, weights = corrective_keys.mesh_bone_weights(obj, self.joints, deforming)
            self.weights.append(messages.object_weights(obj.name, indices, weights, correctives.INFLUENCES))
        # The offsets undo linear blend skinning; with Preserve Volume the modifier blends dual quaternions instead.
        self.preserve_volume = [obj.name for obj in meshes if any(
            m.type == 'ARMATURE' and m.object == self.armature and m.use_deform_preserve_volume for m in obj.modifiers)]

    def found(self):
        """The armature and meshes, checked to be unchanged (SceneChanged otherwise)."""
        armature = corrective_keys.check_armature(self.armature_name, self.bone_names)
        return armature, apply.find_meshes(self.names, self.counts)

    def warning(self):
        if not self.preserve_volume:
            return ""
        return "; turn off Preserve Volume on the Armature modifier of %s (the keys assume linear blending)" % (
            ", ".join(self.preserve_volume[:3]))


def _method_from_panel(operator, context):
    settings = getattr(context.scene, "autorig_correctives", None)
    if settings is not None and not operator.properties.is_property_set("method"):
        operator.method = settings.method


def _fit_from_panel(operator, context):
    settings = getattr(context.scene, "autorig_correctives", None)
    if settings is not None and not operator.properties.is_property_set("fit_examples"):
        operator.fit_examples = settings.fit_examples


def pose_examples(context, inputs):
    """The Pose Examples of the inputs' armature as PosedExample maps: every mesh object of the scene whose
    Pose Example property names that armature and whose bones are the skeleton sent (inputs.bone_names, in order),
    its evaluated mesh (as the viewport shows it) in world space, triangulated; then the shape keys of the meshes the
    keys go on that were made examples (key_examples). → (examples, skipped [(object name, why)]): an example of
    another skeleton, a broken property, or one of the meshes the keys go on is skipped."""
    texts = scene_io.pose_example_texts(context.scene, correctives.EXAMPLE_PROPERTY)
    accepted, skipped = correctives.sort_examples(texts, inputs.armature_name, inputs.bone_names)
    depsgraph = context.evaluated_depsgraph_get()
    examples = []
    for name, rotations in accepted:
        if name in inputs.names:
            skipped.append((name, "it is one of the meshes the keys are baked on"))
            continue
        surface = scene_io.evaluated_mesh_object(context.scene.objects[name], depsgraph)
        examples.append(messages.posed_example(name, rotations, [surface]))
    key_examples, key_skipped = shape_key_examples(context, inputs)
    return examples + key_examples, skipped + key_skipped


def shape_key_examples(context, inputs):
    """The shape keys sculpted as Pose Examples on the meshes the keys go on, one PosedExample per key name (a key of
    that name on several of the meshes is one sculpt of one pose; the first mesh's pose is sent): every mesh in the
    request's order, at rest with that key where it has it and as its Basis where not, flagged shapeKey.
    → (examples, skipped [(name, why)])."""
    meshes = [context.scene.objects[name] for name in inputs.names]
    poses, skipped = {}, []
    for obj in meshes:
        text = obj.get(correctives.KEY_EXAMPLES_PROPERTY)
        if text is None:
            continue
        try:
            entries = correctives.parse_key_examples(text)
        except ValueError as err:
            skipped.append((obj.name, "its %s is broken: %s" % (correctives.KEY_EXAMPLES_PROPERTY, err)))
            continue
        for key in entries:
            if not _has_shape_key(obj, key):
                skipped.append(("%s: %s" % (obj.name, key), "the shape key is gone"))
        candidates = [("%s: %s" % (obj.name, key), entry) for key, entry in entries.items() if _has_shape_key(obj, key)]
        accepted, problems = correctives.sort_examples(candidates, inputs.armature_name, inputs.bone_names)
        skipped += problems
        for label, rotations in accepted:
            poses.setdefault(label.split(": ", 1)[1], rotations)
    examples = []
    for key, rotations in poses.items():
        objects = []
        for obj in meshes:
            positions, triangles = (scene_io.shape_key_world_arrays(obj, key) if _has_shape_key(obj, key)
                                    else scene_io.mesh_world_arrays(obj))
            objects.append(messages.mesh_object(obj.name, positions, triangles))
        examples.append(messages.posed_example(key, rotations, objects, shape_key=True))
    return examples, skipped


def _has_shape_key(obj, key):
    return obj.data.shape_keys is not None and key in obj.data.shape_keys.key_blocks


def _fit_summary(fit):
    if fit is None:
        return ""
    return "; fitted to %d examples: mean distance %.4g \u2192 %.4g (%.1f s)" % (
        fit["examples"], fit["before"], fit["after"], fit["seconds"])


class AUTORIG_OT_pose_correctives(_SidecarJobOperator, bpy.types.Operator):
    """Add corrective shape keys, driven by the bones' rotations, that turn the armature's linear blend skinning into
    pose-dependent skinning at key poses (elbow and knee bends, shoulder raise and forward, hip flex, wrist bend,
    spine twist); running it again replaces them"""

    bl_idname = "autorig.pose_correctives"
    bl_label = "Pose Correctives"
    bl_options = {'REGISTER', 'UNDO'}

    method: bpy.props.EnumProperty(
        name="Method", default=correctives.METHOD_ITEMS[0][0], items=correctives.METHOD_ITEMS,
        description="The pose-dependent deformation the keys reproduce")
    poses: bpy.props.StringProperty(
        name="Poses", default="",
        description="Key poses to bake, comma-separated (empty: every key pose the sidecar knows)")
    fit_examples: bpy.props.BoolProperty(
        name="Fit to Examples", default=False,
        description="Fit the keys to the armature's Pose Examples (meshes showing the character posed as it should "
                    "look) before baking them")

    @classmethod
    def poll(cls, context):
        return (context.mode == 'OBJECT' and scene_io.deforming_armature(context.active_object) is not None
                and client.sidecar_reachable(sidecar_config(context)))

    def prepare(self, context):
        _method_from_panel(self, context)
        _fit_from_panel(self, context)
        inputs = _CorrectivesInputs(context)
        wanted = [p.strip() for p in self.poses.split(",") if p.strip()]
        examples, skipped = pose_examples(context, inputs) if self.fit_examples else ([], [])
        for name, why in skipped:
            self.report({'WARNING'}, "AutoRig: pose example '%s' skipped: %s" % (name, why))
        if self.fit_examples and not examples:
            self.report({'WARNING'}, "AutoRig: no pose example of %s to fit to; baking without a fit"
                        % inputs.armature_name)
        request = messages.correctives_request(client.new_job_id("correctives"), inputs.objects, inputs.joints,
                                               inputs.weights, method=correctives.method_value(self.method),
                                               poses=wanted, examples=examples)
        skipped_note = "; %d pose example(s) skipped (see the warnings)" % len(skipped) if skipped else ""

        def check(payload):
            return messages.check_correctives_result(payload, inputs.counts, inputs.bone_names, len(examples))

        def apply_result(context, result):
            armature, found = inputs.found()
            keys = result["keys"]
            if not keys:
                raise messages.AutoRigFailure(protocol.ERROR_BAD_REQUEST,
                                              "the sidecar found no key pose for this skeleton; nothing was changed")
            local = [corrective_keys.local_offsets_of(found, key["offsets"]) for key in keys]
            channels = corrective_keys.bake_corrective_keys(found, keys, local, armature)
            worst = max(channel.deviation for channel in channels)
            return ("AutoRig: %d corrective keys on %d mesh(es), driven by %s (%s, %.1f s; key axes within %.0f deg "
                    "of bone axes)%s%s%s" % (len(keys), len(found), armature.name, result["method"], result["seconds"],
                                             worst * 57.29577951308232, _fit_summary(result["fit"]), skipped_note,
                                             inputs.warning()))

        return request, check, apply_result


class AUTORIG_OT_preview_correctives(_SidecarJobOperator, bpy.types.Operator):
    """Show the pose-dependent correction of the armature's current pose as a temporary shape key (AUTORIG_preview,
    replaced each time; Clear Preview removes it)"""

    bl_idname = "autorig.preview_correctives"
    bl_label = "Preview Correctives"
    bl_options = {'REGISTER', 'UNDO'}

    method: bpy.props.EnumProperty(
        name="Method", default=correctives.METHOD_ITEMS[0][0], items=correctives.METHOD_ITEMS,
        description="The pose-dependent deformation shown")

    @classmethod
    def poll(cls, context):
        return AUTORIG_OT_pose_correctives.poll(context)

    def prepare(self, context):
        _method_from_panel(self, context)
        inputs = _CorrectivesInputs(context)
        try:
            rotations = corrective_keys.pose_rotations(inputs.armature, inputs.joints)
        except ValueError as err:
            raise messages.AutoRigFailure(protocol.ERROR_BAD_SKELETON, "the pose cannot be read: %s" % err)
        request = messages.correctives_preview_request(client.new_job_id("preview"), inputs.objects, inputs.joints,
                                                       inputs.weights, rotations,
                                                       method=correctives.method_value(self.method))

        def check(payload):
            return messages.check_correctives_preview_result(payload, inputs.counts)

        def apply_result(context, result):
            _armature, found = inputs.found()
            local = corrective_keys.local_offsets_of(found, result["offsets"])
            corrective_keys.show_preview(found, local)
            return "AutoRig: shape key '%s' on %d mesh(es) shows %s at this pose (%.1f s); Clear Preview removes it%s" % (
                correctives.PREVIEW_KEY, len(found), result["method"], result["seconds"], inputs.warning())

        return request, check, apply_result


class AUTORIG_OT_clear_correctives_preview(bpy.types.Operator):
    """Remove the temporary preview shape key (AUTORIG_preview) from the selected meshes"""

    bl_idname = "autorig.clear_correctives_preview"
    bl_label = "Clear Preview"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return context.mode == 'OBJECT' and any(
            obj.data.shape_keys is not None and obj.data.shape_keys.key_blocks.get(correctives.PREVIEW_KEY) is not None
            for obj in scene_io.selected_meshes(context))

    def execute(self, context):
        removed = corrective_keys.remove_preview(scene_io.selected_meshes(context))
        self.report({'INFO'}, "AutoRig: preview removed from %d mesh(es)" % removed)
        return {'FINISHED'}


class AUTORIG_OT_add_example(bpy.types.Operator):
    """Make the active mesh a Pose Example: it shows the character in the selected armature's current pose as it
    should look (a sculpted duplicate, a scan), and Pose Correctives with Fit to Examples fits its keys to it. On the
    character itself, the active shape key (sculpted while the armature was posed) becomes the example"""

    bl_idname = "autorig.add_example"
    bl_label = "Add Pose Example"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return (context.mode == 'OBJECT' and obj is not None and obj.type == 'MESH'
                and scene_io.selected_armature(context) is not None)

    def execute(self, context):
        obj = context.active_object
        armature = scene_io.selected_armature(context)
        joints = scene_io.armature_joints(armature)
        try:
            rotations = corrective_keys.pose_rotations(armature, joints)
        except ValueError as err:
            self.report({'ERROR'}, "AutoRig %s: the pose cannot be read: %s" % (protocol.ERROR_BAD_SKELETON, err))
            return {'CANCELLED'}
        turned = correctives.turned_joint_count(rotations)
        key = _sculpted_key(obj, armature)
        if key is not None:
            obj[correctives.KEY_EXAMPLES_PROPERTY] = correctives.with_key_example(
                obj.get(correctives.KEY_EXAMPLES_PROPERTY), key.name, armature.name, [j["name"] for j in joints],
                rotations)
            if turned == 0:
                self.report({'WARNING'}, "AutoRig: %s is at rest: pose it as shape key '%s' was sculpted"
                            % (armature.name, key.name))
            self.report({'INFO'}, "AutoRig: shape key '%s' of '%s' is a pose example of %s (%d of %d bones turned)" % (
                key.name, obj.name, armature.name, turned, len(joints)))
            return {'FINISHED'}
        obj[correctives.EXAMPLE_PROPERTY] = correctives.example_json(armature.name, [j["name"] for j in joints],
                                                                     rotations)
        if scene_io.deforming_armature(obj) == armature:
            self.report({'WARNING'}, "AutoRig: '%s' follows %s through its Armature modifier: apply the modifier so "
                        "the example keeps this pose, or sculpt a shape key on it and make that the example" % (
                            obj.name, armature.name))
        if turned == 0:
            self.report({'WARNING'}, "AutoRig: %s is at rest: pose it as '%s' shows it" % (armature.name, obj.name))
        self.report({'INFO'}, "AutoRig: '%s' is a pose example of %s (%d of %d bones turned)" % (
            obj.name, armature.name, turned, len(joints)))
        return {'FINISHED'}


def _sculpted_key(obj, armature):
    """The shape key of `obj` that Add Pose Example records: its active key, when the mesh follows `armature` through an
    Armature modifier and that key is not the reference (Basis) key; else None."""
    keys = obj.data.shape_keys
    if keys is None or scene_io.deforming_armature(obj) != armature:
        return None
    key = obj.active_shape_key
    if key is None or key == keys.reference_key:
        return None
    return key


def _active_key_example(obj):
    """The active shape key's name when it is one of `obj`'s shape-key Pose Examples, else None."""
    if obj is None or obj.type != 'MESH' or obj.active_shape_key is None:
        return None
    try:
        entries = correctives.parse_key_examples(obj.get(correctives.KEY_EXAMPLES_PROPERTY))
    except ValueError:
        return None
    return obj.active_shape_key.name if obj.active_shape_key.name in entries else None


def _example_objects(context):
    """The active and selected objects that carry a Pose Example property."""
    objects = [context.active_object] if context.active_object is not None else []
    objects += [obj for obj in context.selected_objects if obj not in objects]
    return [obj for obj in objects if obj.get(correctives.EXAMPLE_PROPERTY) is not None]


class AUTORIG_OT_clear_example(bpy.types.Operator):
    """Make the active and selected meshes plain meshes again (or, on the character, its active shape key a plain
    key again): Pose Correctives no longer fits to them"""

    bl_idname = "autorig.clear_example"
    bl_label = "Clear Pose Example"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return context.mode == 'OBJECT' and (bool(_example_objects(context))
                                             or _active_key_example(context.active_object) is not None)

    def execute(self, context):
        obj = context.active_object
        key = _active_key_example(obj)
        if key is not None:
            left = correctives.without_key_example(obj.get(correctives.KEY_EXAMPLES_PROPERTY), key)
            if left is None:
                del obj[correctives.KEY_EXAMPLES_PROPERTY]
            else:
                obj[correctives.KEY_EXAMPLES_PROPERTY] = left
            self.report({'INFO'}, "AutoRig: shape key '%s' of '%s' is no longer a pose example" % (key, obj.name))
            return {'FINISHED'}
        objects = _example_objects(context)
        for obj in objects:
            del obj[correctives.EXAMPLE_PROPERTY]
        self.report({'INFO'}, "AutoRig: %d pose example(s) cleared: %s" % (
            len(objects), ", ".join(obj.name for obj in objects[:3]) + (", ..." if len(objects) > 3 else "")))
        return {'FINISHED'}


classes = (AUTORIG_OT_auto_rig, AUTORIG_OT_reskin, AUTORIG_OT_refresh_poses, AUTORIG_OT_apply_latent_pose,
           AUTORIG_OT_apply_all_latent_poses, AUTORIG_OT_pose_correctives, AUTORIG_OT_preview_correctives,
           AUTORIG_OT_clear_correctives_preview, AUTORIG_OT_add_example, AUTORIG_OT_clear_example)
