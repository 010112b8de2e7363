"""The Apply Latent Pose choices as Blender properties, declared once for the panel's settings and both operators."""

import bpy

from . import messages, poses

__all__ = ["strength_property", "strategy_property"]


def strength_property(update=None):
    """How far into the pose: 0 (the mesh as it is) to messages.MAX_POSE_STRENGTH. update: Blender's update callback."""
    return bpy.props.FloatProperty(
        name="Strength", default=1.0, min=0.0, max=messages.MAX_POSE_STRENGTH, update=update,
        description="0: the mesh as it is; 1: the pose; up to 1.5: beyond it")


def strategy_property(update=None):
    """Whose way of doing the pose: the mean over the training identities, or the nearest one (poses.STRATEGY_ITEMS).
    update: Blender's update callback."""
    return bpy.props.EnumProperty(
        name="Strategy", default='MEAN', items=poses.STRATEGY_ITEMS, update=update,
        description="Whose way of doing the pose the mesh gets")
