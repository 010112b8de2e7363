"""The 2D joint predictor's training set: every sample's front-view image and its joints in image pixels, held in
memory (5x128x128 float32 = 320 KB a sample), with the augmentations the sidecar's renders call for."""
import numpy as np
import torch

from point_rig.skeleton import JOINT_NAMES
from sample_io import read_sample

# A mirror image swaps each Left* joint with its Right*.
MIRROR = [JOINT_NAMES.index(n.replace("Left", "#").replace("Right", "Left").replace("#", "Right")) for n in JOINT_NAMES]


def frame_reading(joints):
    """How the sidecar's canonical frame relates to the character's own, from the true joints (J, 3), canonical:
    'ok' (its left on +x, head up), 'mirrored' (seen from behind: its left on -x; a front/back-symmetric character such
    as a stack of boxes reads either way), or 'misread' (head down, or a side view with the hips on top of each other).
    The frame finder misreads a few percent of characters; the pipeline cannot rig those either."""
    j = {n: joints[i] for i, n in enumerate(JOINT_NAMES)}
    if not j["Head"][1] > j["Hips"][1] + 0.05:
        return "misread"
    hips = j["LeftUpLeg"][0] - j["RightUpLeg"][0]
    shoulders = j["LeftArm"][0] - j["RightArm"][0]
    if abs(hips) < 0.015 or hips * shoulders <= 0:
        return "misread"
    return "ok" if hips > 0 else "mirrored"


def load_images(paths):
    """paths -> images (N, 5, S, S) float32, joints2d (N, J, 2) float32, names list, dropped (names of samples whose
    frame was misread, see frame_reading). A sample seen from behind keeps its picture and has its labels swapped
    left for right, so that 'Left' always means the image's right-hand side (+x), as the sidecar reads it."""
    images, joints, names, dropped = [], [], [], []
    for p in paths:
        s = read_sample(p)
        reading = frame_reading(s["joints"])
        if reading == "misread":
            dropped.append(s["header"]["name"])
            continue
        images.append(s["image"])
        joints.append(s["joints2d"][MIRROR] if reading == "mirrored" else s["joints2d"])
        names.append(s["header"]["name"])
    return np.stack(images), np.stack(joints), names, dropped


def mirror_batch(images, joints2d):
    """Left-right mirror of images (B,5,S,S) and joints (B,J,2): flip columns, negate the normal's x, swap sides.
    The canonical frame puts the character's left on +x; mirrored, its right is there, so labels swap too."""
    s = images.shape[-1]
    images = torch.flip(images, dims=[-1]).clone()
    images[:, 3] = -images[:, 3]
    joints2d = joints2d[:, MIRROR].clone()
    joints2d[..., 0] = (s - 1) - joints2d[..., 0]
    return images, joints2d


def shift_batch(images, joints2d, dx, dy):
    """Translate by whole pixels (dx right, dy down) with empty borders: the canonical box can sit a little off-centre."""
    out = torch.zeros_like(images)
    s = images.shape[-1]
    xs0, xs1 = max(0, -dx), min(s, s - dx)
    ys0, ys1 = max(0, -dy), min(s, s - dy)
    out[:, :, ys0 + dy : ys1 + dy, xs0 + dx : xs1 + dx] = images[:, :, ys0:ys1, xs0:xs1]
    joints2d = joints2d.clone()
    joints2d[..., 0] += dx
    joints2d[..., 1] += dy
    return out, joints2d


def augment(images, joints2d, rng):
    """Random mirror and shift of up to 4 px (one draw per batch, from a seeded numpy Generator)."""
    if rng.random() < 0.5:
        images, joints2d = mirror_batch(images, joints2d)
    dx, dy = (int(v) for v in rng.integers(-4, 5, size=2))
    return shift_batch(images, joints2d, dx, dy)
