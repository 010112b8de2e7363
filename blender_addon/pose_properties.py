"""The Apply Latent Pose choices as Blender properties, declared once for the panel's settings and both operators, and
the Facing choice Auto Rig shares with them."""

import bpy

from . import messages, poses

__all__ = ["strength_property", "strategy_property", "facing_property", "FACING_ITEMS", "FACING_DIRECTIONS"]

# Facing: the world direction each choice sends as the request's facing (AUTO sends none: the sidecar reads the shape,
# and follows Blender's front view, -Y, where the shape does not tell).
FACING_DIRECTIONS = {'NEG_Y': (0.0, -1.0, 0.0), 'POS_Y': (0.0, 1.0, 0.0),
                     'POS_X': (1.0, 0.0, 0.0), 'NEG_X': (-1.0, 0.0, 0.0)}
FACING_ITEMS = [
    ('AUTO', "Auto", "Read from the character's shape (its feet)"),
    ('NEG_Y', "-Y", "Faces -Y, Blender's front view"),
    ('POS_Y', "+Y", "Faces +Y (Blender's back view)"),
    ('POS_X', "+X", "Faces +X"),
    ('NEG_X', "-X", "Faces -X"),
]


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


# Apply Latent Pose's Facing tooltip: an armature the pose goes through overrules it
POSE_FACING_DESCRIPTION = ("Which way the character faces: read from its shape, or set where the shape does not tell "
                           "(the pose came out on the other side). A Mixamo armature's left and right decide instead")


def facing_property(update=None, description="Which way the character faces: read from its shape, or set where the "
                                             "shape does not tell (left and right came out swapped)"):
    """Which way the character faces (FACING_ITEMS; FACING_DIRECTIONS gives the direction sent). update: Blender's
    update callback."""
    return bpy.props.EnumProperty(name="Facing", default='AUTO', items=FACING_ITEMS, update=update,
                                  description=description)
