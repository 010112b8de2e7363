"""The 23-joint template (sidecar/skeleton/mixamoTemplate.ts, MIXAMO_JOINTS order) as the network sees it."""

JOINT_NAMES = [
    "Hips", "Spine", "Spine1", "Spine2", "Neck", "Head", "HeadTop_End",
    "LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand",
    "RightShoulder", "RightArm", "RightForeArm", "RightHand",
    "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase",
    "RightUpLeg", "RightLeg", "RightFoot", "RightToeBase",
]
JOINT_COUNT = len(JOINT_NAMES)

_PARENT_NAMES = {
    "Hips": None, "Spine": "Hips", "Spine1": "Spine", "Spine2": "Spine1", "Neck": "Spine2", "Head": "Neck",
    "HeadTop_End": "Head",
    "LeftShoulder": "Spine2", "LeftArm": "LeftShoulder", "LeftForeArm": "LeftArm", "LeftHand": "LeftForeArm",
    "RightShoulder": "Spine2", "RightArm": "RightShoulder", "RightForeArm": "RightArm", "RightHand": "RightForeArm",
    "LeftUpLeg": "Hips", "LeftLeg": "LeftUpLeg", "LeftFoot": "LeftLeg", "LeftToeBase": "LeftFoot",
    "RightUpLeg": "Hips", "RightLeg": "RightUpLeg", "RightFoot": "RightLeg", "RightToeBase": "RightFoot",
}
# The root is its own parent so that "offset to the parent" is zero there rather than undefined.
PARENTS = [JOINT_NAMES.index(_PARENT_NAMES[n]) if _PARENT_NAMES[n] else i for i, n in enumerate(JOINT_NAMES)]

# HeadTop_End marks where the head ends: it is refined like any joint but never carries skinning weight.
HEAD_TOP = JOINT_NAMES.index("HeadTop_End")

# The chains a 2D predictor tends to get wrong as a whole (a limb placed on the wrong side of a fold, a torso too short).
LIMBS = [
    ["Spine", "Spine1", "Spine2", "Neck", "Head", "HeadTop_End"],
    ["LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand"],
    ["RightShoulder", "RightArm", "RightForeArm", "RightHand"],
    ["LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"],
    ["RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"],
    ["LeftForeArm", "LeftHand"],
    ["RightForeArm", "RightHand"],
    ["LeftLeg", "LeftFoot", "LeftToeBase"],
    ["RightLeg", "RightFoot", "RightToeBase"],
]
LIMB_INDICES = [[JOINT_NAMES.index(n) for n in limb] for limb in LIMBS]
