"""The requests the add-on builds (hello, rig, skin with locked groups, cancel; pose.list and pose.apply apart), from
the add-on's own builders.

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
        messages.rig_request(client.new_job_id("rig"), objects[:1], prefix=False),
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
    ]


if __name__ == "__main__":
    from blender_addon.msgpack import packb

    # --pose: Apply Latent Pose's requests instead of the rig ones
    chosen = pose_sample_requests() if "--pose" in sys.argv[2:] else sample_requests()
    with open(sys.argv[1], "wb") as f:
        f.write(packb([packb(r) for r in chosen]))
