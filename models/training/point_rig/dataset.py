"""Training samples → batches for PointRigNet: a random subset of each sample's surface points in farthest-point order,
mirrored at random, and coarse joints made from the ground truth with errors like the 2D joint predictor's."""
import zlib
from collections import Counter

import numpy as np

from sample_io import read_sample

from .geometry import farthest_point_order
from .skeleton import JOINT_COUNT, JOINT_NAMES, LIMB_INDICES

# Left↔right: the joint each joint becomes in the mirror image (x → −x).
MIRROR = [JOINT_NAMES.index(n.replace("Left", "#").replace("Right", "Left").replace("#", "Right")) for n in JOINT_NAMES]


class SampleSet:
    """The samples of a list of files, in memory: per sample points (P, 3) f32, normals (P, 3) f32, weights (P, J) f16
    (the dense weights are most of the memory: about 0.3 MB a sample at P = 4096), joints (J, 3) f32, name, meta."""

    def __init__(self, files):
        self.files = list(files)
        self.points, self.normals, self.weights, self.joints, self.names, self.meta = [], [], [], [], [], []
        for f in self.files:
            s = read_sample(f)
            if s["header"]["jointNames"] != JOINT_NAMES:
                raise ValueError(f"{f}: joints {s['header']['jointNames']} are not the 23-joint template")
            self.points.append(s["points"])
            self.normals.append(s["pointNormals"])
            self.weights.append(s["pointWeights"].astype(np.float16))
            self.joints.append(s["joints"])
            self.names.append(s["header"]["name"])
            self.meta.append(s["header"].get("meta", {}))

    def __len__(self):
        return len(self.files)

    def subset(self, indices):
        """A view of some samples (shares the arrays)."""
        out = SampleSet.__new__(SampleSet)
        for key in ("files", "points", "normals", "weights", "joints", "names", "meta"):
            setattr(out, key, [getattr(self, key)[i] for i in indices])
        return out

    def counts_by_source(self):
        """meta.source → number of samples ('unknown' where a generator did not say)."""
        return dict(sorted(Counter(str(m.get("source", "unknown")) for m in self.meta).items()))


def character_of(name):
    """The character a sample shows: its name up to a '#' (`autorig data` names the variants of one dev character
    'aug-<source>#<index>'), else the whole name."""
    return name.split("#", 1)[0]


def split_by_character(names, validation_fraction):
    """Training and validation indices such that every sample of one character (character_of its name) falls on the
    same side, the validation side holding at least validation_fraction of the samples: characters are taken in the
    order of a hash of their name, so the split is the same on every machine. At least one character stays for
    training; with a single character, its samples are split instead (every 1/fraction-th one to validation).
    names: list of str → (train indices, validation indices)"""
    groups = {}
    for i, n in enumerate(names):
        groups.setdefault(character_of(n), []).append(i)
    if validation_fraction <= 0 or not names:
        return list(range(len(names))), []
    if len(groups) == 1:
        every = max(2, round(1 / validation_fraction))
        val = list(range(0, len(names), every))
        return [i for i in range(len(names)) if i % every], val
    order = sorted(groups, key=lambda n: (zlib.crc32(n.encode("utf-8")), n))
    wanted = validation_fraction * len(names)
    val = []
    for n in order[:-1]:  # at least one character stays for training
        if len(val) >= wanted:
            break
        val.extend(groups[n])
    train = sorted(set(range(len(names))) - set(val))
    return train, sorted(val)


def coarse_joints(joints, rng, sigma_range=(0.005, 0.02), limb_shift=0.03, limb_chance=0.5, depth_factor=1.5):
    """Ground-truth joints (J, 3) → what the 2D predictor and its lifting might give: every joint off by Gaussian noise
    (σ drawn per sample from sigma_range, in units of the unit box; depth × depth_factor, being lifted rather than
    seen), and with probability limb_chance (then again with half that) a whole limb or part of one shifted together
    by Gaussian limb_shift (the predictor's typical failure: a chain placed consistently wrong).
    rng: numpy Generator → (J, 3) float32"""
    sigma = rng.uniform(*sigma_range)
    noise = rng.normal(0.0, sigma, size=joints.shape) * np.array([1.0, 1.0, depth_factor])
    out = joints + noise
    chance = limb_chance
    while rng.random() < chance:
        limb = LIMB_INDICES[rng.integers(len(LIMB_INDICES))]
        out[limb] += rng.normal(0.0, limb_shift, size=3)
        chance *= 0.5
    return out.astype(np.float32)


def mirror_sample(points, normals, weights, joints):
    """The mirror image (x → −x) with left and right swapped: points (P, 3), normals (P, 3), weights (P, J), joints
    (J, 3) → the same shapes."""
    flip = np.array([-1.0, 1.0, 1.0], dtype=np.float32)
    return points * flip, normals * flip, weights[:, MIRROR], joints[MIRROR] * flip


HEAD = JOINT_NAMES.index("Head")
HEAD_TOP = JOINT_NAMES.index("HeadTop_End")
# y is up in the samples' unit box
UP = 1


def cut_head(points, normals, weights, joints):
    """The same body without its head, as a character whose head is a separate object the user did not send (mixamo_ely
    is one): the points whose Head weight is under one half, and HeadTop_End moved down to the top of what is left
    (never below the Head joint), where the skeleton estimate puts it on such a mesh; the other joints and every kept
    point's weights as they were. points (P, 3), normals (P, 3), weights (P, J), joints (J, 3) → the same, fewer points;
    None when cutting would leave less than half the points (the sample's head is most of it)."""
    keep = np.asarray(weights[:, HEAD], dtype=np.float32) < 0.5
    if keep.sum() < len(points) / 2:
        return None
    out = joints.copy()
    top = float(points[keep, UP].max())
    out[HEAD_TOP] = out[HEAD]
    out[HEAD_TOP, UP] = max(top, float(joints[HEAD, UP]))
    return points[keep], normals[keep], weights[keep], out


def make_example(samples, i, point_count, rng, augment=True, noise=True, headless=0.0):
    """One training example from sample i: point_count of its points at random, mirrored with probability 1/2 and
    stretched per axis by up to ±10 % (augment), in farthest-point order (the first point_count/4 by farthest-point
    sampling, which is all the network's levels read), coarse joints from coarse_joints (noise, else exact). With
    augment, a share `headless` of the examples are the body without its head (cut_head; 0: none, and no random draw).
    → dict of float32 arrays: points (N, 3), normals (N, 3), weights (N, J), joints (J, 3), coarse (J, 3)."""
    pts, nrm, w, j = samples.points[i], samples.normals[i], samples.weights[i], samples.joints[i]
    if augment and headless > 0 and rng.random() < headless:
        cut = cut_head(pts, nrm, w, j)
        if cut is not None:
            pts, nrm, w, j = cut
    chosen = rng.choice(len(pts), size=point_count, replace=len(pts) < point_count)
    pts, nrm, w = pts[chosen], nrm[chosen], w[chosen].astype(np.float32)
    j = j.copy()
    if augment:
        if rng.random() < 0.5:
            pts, nrm, w, j = mirror_sample(pts, nrm, w, j)
        stretch = rng.uniform(0.9, 1.1, size=3).astype(np.float32)
        pts, j = pts * stretch, j * stretch
        nrm = nrm / stretch  # normals transform by the inverse transpose
        nrm = nrm / np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-12)
    order = farthest_point_order(pts, point_count // 4)
    pts, nrm, w = pts[order], nrm[order], w[order]
    coarse = coarse_joints(j, rng) if noise else j.copy()
    return {"points": pts.astype(np.float32), "normals": nrm.astype(np.float32), "weights": w,
            "joints": j.astype(np.float32), "coarse": coarse}


def make_batch(samples, indices, point_count, rng, augment=True, noise=True, headless=0.0):
    """Examples for the given sample indices (make_example), stacked: points (B, N, 3), normals (B, N, 3), weights
    (B, N, J), joints (B, J, 3), coarse (B, J, 3)."""
    examples = [make_example(samples, i, point_count, rng, augment, noise, headless) for i in indices]
    return {k: np.stack([e[k] for e in examples]) for k in examples[0]}


def validation_batches(samples, point_count, batch_size, seed):
    """The validation set as fixed batches (the same points and coarse-joint noise on every call, no augmentation),
    so that metrics compare across steps and runs."""
    rng = np.random.default_rng(seed)
    batches = []
    for start in range(0, len(samples), batch_size):
        batches.append(make_batch(samples, range(start, min(start + batch_size, len(samples))), point_count, rng,
                                  augment=False, noise=True))
    return batches


assert len(MIRROR) == JOINT_COUNT and sorted(MIRROR) == list(range(JOINT_COUNT))
