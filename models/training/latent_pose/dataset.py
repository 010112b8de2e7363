"""The latent-pose identities in memory, and the batches of both training phases.

Phase A batches hold, for a few identities, the neutral and the same few states (one combination 'a+b', its two
components and some other poses, one variant), so that every latent loss (same-pose consistency across identities,
additivity, contrast) has what it compares in every batch. Phase B batches are (identity, pose) pairs with the
identity's rig and the pose's three variants."""
from pathlib import Path

import numpy as np
import torch

from .pose_io import VARIANTS, pose_rig_path, read_pose_rig, read_pose_sample
from .rig import JOINTS


class PoseSet:
    """The identities of a list of *.pose files, every blob kept (float32, about 6 MB an identity at A = N = 2048),
    and their rigs when every file has its *.poserig side file.
    Attributes: names [I], sources [I], poses [P] (the same list in every file), neutral_points (I, N, 3), neutral_sdf
    (I, N), state_points (I, P, 3, N, 3), state_sdf (I, P, 3, N), anchors (I, A, 3), normals (I, A, 3),
    state_anchors (I, P, 3, A, 3); joints (I, J, 3), weight_indices (I, A, 4) int64, weights (I, A, 4) from the
    side files, or None when any is missing (missing_rigs lists those .pose files)."""

    def __init__(self, files):
        self.files = list(files)
        samples = [read_pose_sample(f) for f in self.files]
        self.poses = samples[0]["header"]["poses"] if samples else []
        for f, s in zip(self.files, samples):
            if s["header"]["poses"] != self.poses:
                raise ValueError(f"{f}: its pose list differs from {self.files[0]}'s")
        self.names = [s["header"]["identity"] for s in samples]
        self.sources = [str(s["header"].get("meta", {}).get("source", "unknown")) for s in samples]
        stack = lambda key: np.stack([s[key] for s in samples]) if samples else np.zeros((0,), np.float32)
        self.neutral_points, self.neutral_sdf = stack("neutralSdfPoints"), stack("neutralSdf")
        self.state_points, self.state_sdf = stack("stateSdfPoints"), stack("stateSdf")
        self.anchors, self.normals, self.state_anchors = stack("anchorPositions"), stack("anchorNormals"), stack("stateAnchors")
        self.missing_rigs = [f for f in self.files if not Path(pose_rig_path(f)).exists()]
        self.joints = self.weight_indices = self.weights = None
        if samples and not self.missing_rigs:
            rigs = [read_pose_rig(pose_rig_path(f), JOINTS) for f in self.files]
            for f, s, r in zip(self.files, samples, rigs):
                if r["header"]["identity"] != s["header"]["identity"] or r["weights"].shape[0] != s["anchorPositions"].shape[0]:
                    raise ValueError(f"{pose_rig_path(f)}: identity {r['header']['identity']} with "
                                     f"{r['weights'].shape[0]} anchors does not fit {f} ({s['header']['identity']}, "
                                     f"{s['anchorPositions'].shape[0]} anchors)")
            self.joints = np.stack([r["joints"] for r in rigs])
            self.weight_indices = np.stack([r["weightIndices"] for r in rigs])
            self.weights = np.stack([r["weights"] for r in rigs])

    def __len__(self):
        return len(self.names)

    def subset(self, indices):
        """The identities at `indices` (a view: the arrays are indexed, names and sources listed)."""
        out = PoseSet.__new__(PoseSet)
        idx = list(indices)
        out.files, out.poses = [self.files[i] for i in idx], self.poses
        out.names, out.sources = [self.names[i] for i in idx], [self.sources[i] for i in idx]
        for key in ("neutral_points", "neutral_sdf", "state_points", "state_sdf", "anchors", "normals", "state_anchors"):
            setattr(out, key, getattr(self, key)[idx])
        out.missing_rigs = [f for f in self.missing_rigs if f in out.files]
        for key in ("joints", "weight_indices", "weights"):
            setattr(out, key, None if getattr(self, key) is None else getattr(self, key)[idx])
        return out

    def counts_by_source(self):
        out = {}
        for s in self.sources:
            out[s] = out.get(s, 0) + 1
        return dict(sorted(out.items()))

    def shape_samples(self, i, p, v):
        """SDF samples of identity i in pose p, variant v; p = −1 is the neutral. → points (N, 3), sdf (N,)"""
        if p < 0:
            return self.neutral_points[i], self.neutral_sdf[i]
        return self.state_points[i, p, v], self.state_sdf[i, p, v]


def combo_components(poses):
    """For every combination 'a+b' in poses whose components are both in poses: (index of a+b, index of a, index of
    b). poses: list of names → list of int triples."""
    out = []
    for c, name in enumerate(poses):
        parts = name.split("+")
        if len(parts) == 2 and all(q in poses for q in parts):
            out.append((c, poses.index(parts[0]), poses.index(parts[1])))
    return out


def phase_a_batch(data, identities, rng, extra_poses=2, encode_points=1024, decode_points=512):
    """One phase A batch. identities: identity indices (I); the states are the same for all of them: a combination,
    its two components (when the data has combinations) and extra_poses other poses, all in one variant drawn at
    random, after the neutral (state 0). Each shape's samples are shuffled: the first encode_points feed the encoder,
    the next decode_points are where the SDF decoder is scored (disjoint, so the decoder must generalise).
    → dict of tensors: encode (I, S, n, 4), decode_points (I, S, m, 3), decode_sdf (I, S, m), identity (I,) int64,
    pose (S − 1,) int64 (pose of states 1..S−1), variant () int64, combo (3,) int64 (state indices of a+b, a, b, or
    −1 when there is no combination)."""
    P = len(data.poses)
    combos = combo_components(data.poses)
    chosen = []
    combo = [-1, -1, -1]
    if combos:
        c, a, b = combos[rng.integers(len(combos))]
        chosen = [c, a, b]
        combo = [1, 2, 3]
    others = [p for p in range(P) if p not in chosen]
    chosen += list(rng.choice(others, size=min(extra_poses, len(others)), replace=False))
    v = int(rng.integers(len(VARIANTS)))
    N = data.neutral_points.shape[1]
    n = min(encode_points, N)
    m = min(decode_points, N - n) if N > n else min(decode_points, N)
    enc, dec_x, dec_s = [], [], []
    for i in identities:
        row_e, row_x, row_s = [], [], []
        for p in [-1] + chosen:
            pts, sdf = data.shape_samples(i, p, v)
            order = rng.permutation(N)
            e, d = order[:n], order[n:n + m] if N > n else order[:m]
            row_e.append(np.concatenate([pts[e], sdf[e, None]], axis=1))
            row_x.append(pts[d])
            row_s.append(sdf[d])
        enc.append(row_e)
        dec_x.append(row_x)
        dec_s.append(row_s)
    as_t = lambda a, dt=torch.float32: torch.as_tensor(np.asarray(a), dtype=dt)
    return {"encode": as_t(enc), "decode_points": as_t(dec_x), "decode_sdf": as_t(dec_s),
            "identity": as_t(identities, torch.int64), "pose": as_t(chosen, torch.int64),
            "variant": torch.tensor(v, dtype=torch.int64), "combo": as_t(combo, torch.int64)}


def condition_delta(delta, own, mean, rng, own_share=0.4, mean_share=0.3):
    """The Δμ a phase B pair is conditioned on: its own identity's (own_share of the time), the training mean of its
    pose and variant (mean_share, the sidecar's 'mean' strategy), else another training identity's (the 'nearest'
    strategy gives another identity's Δμ). delta: (I, P, 3, L) array of the training identities; own: (i, p, v)."""
    i, p, v = own
    u = rng.random()
    if u < own_share:
        return delta[i, p, v]
    if u < own_share + mean_share:
        return mean[p, v]
    return delta[rng.integers(delta.shape[0]), p, v]


def phase_b_batch(data, pairs, mu_neutral, deltas):
    """One phase B batch of (identity, pose) pairs, each with its three variants as targets. pairs: list of
    (identity, pose); mu_neutral (I, L) of data's identities; deltas: the Δμ each pair is conditioned on, (B, L).
    → dict of tensors: rest (B, A, 3) neutral anchors, heads (B, J, 3), weight_indices (B, A, 4) int64, weights
    (B, A, 4), target (B, 3, A, 3) (VARIANTS order), mu_source, delta_direction (B, L), delta_norm (B, 1), pose (B,)
    int64."""
    ids = [i for i, _ in pairs]
    deltas = torch.as_tensor(np.asarray(deltas), dtype=torch.float32)
    norm = deltas.norm(dim=1, keepdim=True)
    return {
        "rest": torch.from_numpy(data.anchors[ids]), "heads": torch.from_numpy(data.joints[ids]),
        "weight_indices": torch.from_numpy(data.weight_indices[ids]), "weights": torch.from_numpy(data.weights[ids]),
        "target": torch.from_numpy(np.stack([data.state_anchors[i, p] for i, p in pairs])),
        "mu_source": torch.as_tensor(mu_neutral[ids], dtype=torch.float32),
        "delta_direction": deltas / norm.clamp_min(1e-8), "delta_norm": norm,
        "pose": torch.tensor([p for _, p in pairs], dtype=torch.int64),
    }
