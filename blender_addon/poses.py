"""Apply Latent Pose's choices in the UI (no bpy here): the pose menu filled from the sidecar's pose.list, and the
strategies.

The menu's items are cached here: Blender asks an EnumProperty's items callback on every redraw, which must not talk
to the sidecar; the Refresh operator (and Apply, when the list was never fetched) fill the cache instead. Blender
keeps pointers into the strings the callback returns, so the item tuples live on in the cache, never rebuilt per
call (a known Blender pitfall with dynamic enums).
"""

from . import messages

__all__ = ["STRATEGY_ITEMS", "strategy_value", "NO_POSES", "remember_poses", "remember_failure", "pose_items",
           "known_pose", "pose_entry", "pose_label", "list_status", "MIXAMO_JOINTS", "mixamo_rigged"]

# Identifiers are upper case (Blender's style for enum identifiers); the wire values are messages.POSE_STRATEGIES.
STRATEGY_ITEMS = (
    ('MEAN', "Mean over identities", "The pose as the training characters do it on average (smooth, general)"),
    ('NEAREST', "Nearest identity", "The pose as the training character whose shape is nearest this mesh does it"),
)
_STRATEGY_VALUES = {'MEAN': "mean", 'NEAREST': "nearest"}

# The Mixamo template's joints (sidecar/skeleton/mixamoTemplate.ts MIXAMO_JOINTS; test_latent_pose.py checks they
# agree): an armature with all of them is one the sidecar can pose the mesh through instead of auto-rigging it.
MIXAMO_JOINTS = (
    "Hips", "Spine", "Spine1", "Spine2", "Neck", "Head", "HeadTop_End",
    "LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand",
    "RightShoulder", "RightArm", "RightForeArm", "RightHand",
    "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase",
    "RightUpLeg", "RightLeg", "RightFoot", "RightToeBase",
)
_MIXAMO_PREFIX = "mixamorig:"


def mixamo_rigged(bone_names):
    """True when the bone names (an iterable of str) hold every Mixamo template joint, each bare or 'mixamorig:'-
    prefixed, as the sidecar reads them (templateSlotOf)."""
    bare = {name[len(_MIXAMO_PREFIX):] if name.startswith(_MIXAMO_PREFIX) else name for name in bone_names}
    return all(joint in bare for joint in MIXAMO_JOINTS)


# The menu's only item before the list is fetched (or when fetching failed): Apply refuses it.
NO_POSES = "NONE"

_cache = {"entries": [], "items": [(NO_POSES, "(no poses: Refresh)", "Ask the sidecar for its poses")],
          "error": None}


def strategy_value(identifier):
    """The protocol's strategy ("mean", "nearest") for an enum identifier ('MEAN', 'NEAREST'); a wire value passes."""
    if identifier in _STRATEGY_VALUES.values():
        return identifier
    try:
        return _STRATEGY_VALUES[identifier]
    except KeyError:
        raise ValueError("unknown strategy %r" % (identifier,)) from None


def pose_label(entry):
    """The menu text of one pose.list entry: its name, and "(experimental)" when the rig-based baseline measured
    better on that pose."""
    return "%s (experimental)" % entry["name"] if entry["experimental"] else entry["name"]


def remember_poses(entries):
    """Cache a checked pose.list answer (messages.check_pose_list_result) as the menu's items."""
    items = [(e["name"], pose_label(e), e["note"]) for e in entries]
    _cache["entries"] = list(entries)
    _cache["items"] = items if items else [(NO_POSES, "(the sidecar has no poses)", "No pose library is installed")]
    _cache["error"] = None


def remember_failure(code, message):
    """Keep why the list could not be fetched (shown in the panel); the last good list stays in the menu."""
    _cache["error"] = "%s: %s" % (messages.display_text(code, 40), messages.display_text(message, 160))


def pose_items(_self=None, _context=None):
    """EnumProperty items callback: (identifier, label, description) per pose, from the cache."""
    return _cache["items"]


def known_pose(name):
    """Whether `name` is a pose of the last list fetched."""
    return any(e["name"] == name for e in _cache["entries"])


def pose_names():
    """The names of the poses last fetched, in the sidecar's order (empty before any fetch)."""
    return [e["name"] for e in _cache["entries"]]


def pose_entry(name):
    """The cached pose.list entry of `name`, or None."""
    for entry in _cache["entries"]:
        if entry["name"] == name:
            return entry
    return None


def list_status():
    """One line for the panel: how many poses are known, or why fetching them failed."""
    if _cache["error"]:
        return "Poses: %s" % _cache["error"]
    if not _cache["entries"]:
        return "Poses: not fetched yet"
    experimental = sum(1 for e in _cache["entries"] if e["experimental"])
    return "%d poses (%d experimental)" % (len(_cache["entries"]), experimental)
