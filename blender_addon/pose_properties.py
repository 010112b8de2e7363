"""The Apply Latent Pose choices as Blender properties, declared once for the panel's settings and both operators."""

import bpy

from . import messages, poses

__all__ = ["strength_property", "strategy_property"]


def strength_property():
    """How far into the pose: 0 (the mesh as it is) to messages.MAX_POSE_STRENGTH."""
    return bpy.props.FloatProperty(
        name="Strength", default=1.0, min=0.0, max=messages.MAX_POSE_STRENGTH,
        description="0: the mesh as it is; 1: the pose; up to 1.5: beyond it")


def strategy_property():
    """Whose way of doing the pose: the mean over the training identities, or the nearest one (poses.STRATEGY_ITEMS)."""
    return bpy.props.EnumProperty(
        name="Strategy", default='MEAN', items=poses.STRATEGY_ITEMS,
        description="Whose way of doing the pose the mesh gets")
