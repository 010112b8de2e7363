"""The latent-pose identities in memory, and the batches of both training phases.

Phase A batches hold, for a few identities, the neutral and the same few states (one combination 'a+b', its two
components and some other poses, one variant), so that every latent loss (same-pose consistency across identities,
additivity, contrast) has what it compares in every batch. Phase B batches are (neutral → state) pairs."""
import numpy as np
import torch

from .pose_io import VARIANTS, read_pose_sample


class PoseSet:
    """The identities of a list of *.pose files, every blob kept (float32, about 6 MB an identity at A = N = 2048).
    Attributes: names [I], sources [I], poses [P] (the same list in every file), neutral_points (I, N, 3), neutral_sdf
    (I, N), state_points (I, P, 3, N, 3), state_sdf (I, P, 3, N), anchors (I, A, 3), normals (I, A, 3),
    state_anchors (I, P, 3, A, 3)."""

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


def nearest_neighbours(points, k, chunk=1024):
    """Each point's k nearest other points (itself excluded), by Euclidean distance, nearest first.
    points (A, 3) float32 tensor → (A, k) int64."""
    out = []
    for start in range(0, points.shape[0], chunk):
        d = torch.cdist(points[start:start + chunk], points)
        rows = torch.arange(start, min(start + chunk, points.shape[0]))
        d[rows - start, rows] = float("inf")
        out.append(torch.topk(d, k, dim=1, largest=False).indices)
    return torch.cat(out)


def all_neighbours(data, k):
    """nearest_neighbours of every identity's neutral anchors → (I, A, k) int64 tensor."""
    return torch.stack([nearest_neighbours(torch.from_numpy(a), k) for a in data.anchors]) if len(data) else None


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


def phase_b_batch(data, pairs, knn, mu_neutral, deltas):
    """One phase B batch of (neutral → state) pairs. pairs: list of (identity, pose, variant); knn (I, A, K);
    mu_neutral (I, L); deltas: the Δμ each pair is conditioned on, (B, L) array.
    → dict of tensors: points, normals, target (B, A, 3), knn (B, A, K) int64, mu_source, delta_direction (B, L),
    delta_norm (B, 1), pair_kind (B, 3) one-hot, variant (B,) int64."""
    ids = [i for i, _, _ in pairs]
    deltas = torch.as_tensor(np.asarray(deltas), dtype=torch.float32)
    norm = deltas.norm(dim=1, keepdim=True)
    kind = torch.zeros(len(pairs), 3)
    for b, (_, _, v) in enumerate(pairs):
        kind[b, v] = 1.0
    return {
        "points": torch.from_numpy(data.anchors[ids]), "normals": torch.from_numpy(data.normals[ids]),
        "target": torch.from_numpy(np.stack([data.state_anchors[i, p, v] for i, p, v in pairs])),
        "knn": knn[ids], "mu_source": torch.as_tensor(mu_neutral[ids], dtype=torch.float32),
        "delta_direction": deltas / norm.clamp_min(1e-8), "delta_norm": norm, "pair_kind": kind,
        "variant": torch.tensor([v for _, _, v in pairs], dtype=torch.int64),
    }
