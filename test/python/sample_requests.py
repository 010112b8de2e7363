"""The requests the add-on builds (hello, rig, skin with locked groups, cancel; pose.list and pose.apply apart;
correctives and correctives.preview apart; correctives with pose examples apart), from the add-on's own builders.

Run as a script it writes them, msgpack-packed, as one msgpack array to the path given: the vitest cross-check
(test/addon-protocol.test.ts) feeds them to the sidecar's validator.
"""

import sys
from array import array

import support  # noqa: F401
from blender_addon import client, messages


def sample_objects():
    body = messages.mesh_object("Body", array("f", [0, 0, 0, 1, 0, 0, 1, 0, 2, 0, 0, 2]), array("I", [0, 1, 2, 0, 2, 3]))
    hat = messages.mesh_object("Hat", array("f", [0, 0, 2, 1, 0, 2, 0, 1, 2]), array("I", [0, 1, 2]))
    return [body, hat]


def sample_requests():
    objects = sample_objects()
    joints = [
        {"name": "mixamorig:Hips", "parent": -1, "head": [0.0, 0.0, 1.0], "tail": [0.0, 0.0, 1.2], "roll": 0.0},
        {"name": "mixamorig:Spine", "parent": 0, "head": [0.0, 0.0, 1.2], "tail": [0.0, 0.0, 1.4], "roll": 0.1},
    ]
    locked = [{"object": 0, "bone": "mixamorig:Spine", "weights": messages.le_bytes(array("f", [0, 0, 0.5, 1]))}]
    return [
        messages.hello_request(client.new_job_id("hello"), "autorig-blender/test"),
        messages.rig_request(client.new_job_id("rig"), objects, prefix=True),
        messages.rig_request(client.new_job_id("rig"), objects[:1], prefix=False, facing=(0.0, 1.0, 0.0)),
        messages.skin_request(client.new_job_id("skin"), objects, joints, locked, prefix=True),
        messages.skin_request(client.new_job_id("skin"), objects[:1], joints),
        messages.cancel_request(client.new_job_id("rig")),
    ]


def pose_sample_requests():
    """Apply Latent Pose's requests (test/pose-protocol.test.ts feeds them to the sidecar's validator)."""
    objects = sample_objects()
    return [
        messages.pose_list_request(client.new_job_id("poses")),
        messages.pose_apply_request(client.new_job_id("pose"), objects, "elbowBentLf", strength=0.5, strategy="nearest"),
        messages.pose_apply_request(client.new_job_id("pose"), objects[:1], "elbowBentLf+kneeBentRt"),
        # the user set the Latent Pose panel's Facing (+Y)
        messages.pose_apply_request(client.new_job_id("pose"), objects, "elbowBentLf", facing=(0.0, 1.0, 0.0)),
        # through the mesh's own Mixamo armature: skeleton and weights as Pose Correctives sends them
        messages.pose_apply_request(client.new_job_id("pose"), objects, "kneeBentRt", joints=mixamo_joints(), weights=[
            messages.object_weights("Body", array("H", [0, 1, 0, 0] * 4), array("f", [0.75, 0.25, 0, 0] * 4), 4),
            messages.object_weights("Hat", array("H", [1, 0, 0, 0] * 3), array("f", [1, 0, 0, 0] * 3), 4),
        ]),
        # read ahead while the panel shows the mesh: with the auto-rig, and for a mesh with its own armature
        messages.pose_prepare_request(client.new_job_id("prepare"), objects),
        messages.pose_prepare_request(client.new_job_id("prepare"), objects[:1], joints=mixamo_joints()),
        messages.pose_prepare_request(client.new_job_id("prepare"), objects, facing=(1.0, 0.0, 0.0)),
    ]


# Auto Rig's 23 template joints on a 1.8 m T-posed figure, Blender's conventions (z up, facing -y, its left on +x).
MIXAMO_HEADS = [
    ("Hips", None, (0, 0, 1.0)), ("Spine", "Hips", (0, 0, 1.1)), ("Spine1", "Spine", (0, 0, 1.2)),
    ("Spine2", "Spine1", (0, 0, 1.3)), ("Neck", "Spine2", (0, 0, 1.5)), ("Head", "Neck", (0, 0, 1.6)),
    ("HeadTop_End", "Head", (0, 0, 1.8)),
    ("LeftShoulder", "Spine2", (0.05, 0, 1.45)), ("LeftArm", "LeftShoulder", (0.2, 0, 1.45)),
    ("LeftForeArm", "LeftArm", (0.45, 0, 1.45)), ("LeftHand", "LeftForeArm", (0.7, 0, 1.45)),
    ("RightShoulder", "Spine2", (-0.05, 0, 1.45)), ("RightArm", "RightShoulder", (-0.2, 0, 1.45)),
    ("RightForeArm", "RightArm", (-0.45, 0, 1.45)), ("RightHand", "RightForeArm", (-0.7, 0, 1.45)),
    ("LeftUpLeg", "Hips", (0.1, 0, 0.95)), ("LeftLeg", "LeftUpLeg", (0.1, 0, 0.5)), ("LeftFoot", "LeftLeg", (0.1, 0, 0.08)),
    ("LeftToeBase", "LeftFoot", (0.1, -0.12, 0)),
    ("RightUpLeg", "Hips", (-0.1, 0, 0.95)), ("RightLeg", "RightUpLeg", (-0.1, 0, 0.5)),
    ("RightFoot", "RightLeg", (-0.1, 0, 0.08)), ("RightToeBase", "RightFoot", (-0.1, -0.12, 0)),
]


def mixamo_joints():
    """The joints of an Auto Rig armature as the add-on sends them: tails at the first child, leaves extended."""
    names = [name for name, _, _ in MIXAMO_HEADS]
    joints = []
    for name, parent, head in MIXAMO_HEADS:
        child = next((h for n, p, h in MIXAMO_HEADS if p == name), None)
        tail = child if child is not None else (head[0], head[1], head[2] + 0.05)
        joints.append({"name": "mixamorig:" + name, "parent": names.index(parent) if parent else -1,
                       "head": [float(v) for v in head], "tail": [float(v) for v in tail], "roll": 0.0})
    return joints


def sample_weights():
    """sample_objects' static weights: the Body split 3:1 between the first two joints, the Hat on the second (top 4
    per vertex, indices into the skeleton)."""
    return [
        messages.object_weights("Body", array("H", [0, 1, 0, 0] * 4), array("f", [0.75, 0.25, 0, 0] * 4), 4),
        messages.object_weights("Hat", array("H", [1, 0, 0, 0] * 3), array("f", [1, 0, 0, 0] * 3), 4),
    ]


def correctives_sample_requests():
    """Pose Correctives' requests: both objects weighted to the first two joints (top 4 per vertex, indices into the
    skeleton), all poses or a few, the method given or left to the sidecar, and a preview with the Spine turned."""
    objects = sample_objects()
    joints = mixamo_joints()
    weights = sample_weights()
    identity = [1, 0, 0, 0, 1, 0, 0, 0, 1]
    quarter_turn = [0, -1, 0, 1, 0, 0, 0, 0, 1]
    rotations = identity + quarter_turn + identity * (len(joints) - 2)
    return [
        messages.correctives_request(client.new_job_id("correctives"), objects, joints, weights),
        messages.correctives_request(client.new_job_id("correctives"), objects[:1], joints, weights[:1],
                                     method="dualQuaternion", poses=["elbowBend", "kneeBend"]),
        messages.correctives_preview_request(client.new_job_id("preview"), objects, joints, weights,
                                             array("f", rotations), method="dualQuaternion"),
    ]


def examples_sample_requests():
    """Pose Correctives with Fit to Examples: two examples (one of two surfaces, one of one) with the left forearm
    bent a quarter turn about world y, and the same request without them."""
    objects = sample_objects()
    joints = mixamo_joints()
    weights = sample_weights()
    identity = [1, 0, 0, 0, 1, 0, 0, 0, 1]
    forearm = [name for name, _, _ in MIXAMO_HEADS].index("LeftForeArm")
    bent = identity * forearm + [0, 0, 1, 0, 1, 0, -1, 0, 0] + identity * (len(joints) - forearm - 1)
    posed_body = messages.mesh_object("BodyBent", array("f", [0, 0, 0, 1, 0, 0, 1, 0, 2, 0, 0, 2, 0.5, 0.5, 1]),
                                      array("I", [0, 1, 2, 0, 2, 3, 1, 2, 4]))
    examples = [
        messages.posed_example("BodyBent", array("f", bent), [posed_body, objects[1]]),
        messages.posed_example("AtRest", array("f", identity * len(joints)), objects[:1]),
    ]
    return [
        messages.correctives_request(client.new_job_id("correctives"), objects, joints, weights,
                                     method="dualQuaternion", examples=examples),
        messages.correctives_request(client.new_job_id("correctives"), objects, joints, weights, examples=[]),
    ]


if __name__ == "__main__":
    from blender_addon.msgpack import packb

    # --pose: Apply Latent Pose's requests instead of the rig ones; --correctives: Pose Correctives' requests;
    # --examples: Pose Correctives' requests with and without pose examples
    if "--pose" in sys.argv[2:]:
        chosen = pose_sample_requests()
    elif "--examples" in sys.argv[2:]:
        chosen = examples_sample_requests()
    elif "--correctives" in sys.argv[2:]:
        chosen = correctives_sample_requests()
    else:
        chosen = sample_requests()
    with open(sys.argv[1], "wb") as f:
        f.write(packb([packb(r) for r in chosen]))
