"""The frozen encoder's latents of whole data sets, what phase A measures on them, and the pose library the sidecar
reads (models/latent_pose_library.bin, latent_pose/library_file.py)."""
import math

import numpy as np
import torch

from .library_file import LIBRARY_FORMAT
from .pose_io import VARIANTS

# The library's 'knn' field: the v1 vertex decoder's neighbour count. The rig decoder (v2) has no kNN graph and does
# not read it; the format keeps the field (the sidecar's reader requires an integer ≥ 1) with v1's value.
LIBRARY_KNN = 12


@torch.no_grad()
def encode_all(encoder, data, device, batch=24):
    """μ of every shape of a PoseSet, from all its SDF samples (as the sidecar encodes a mesh).
    → mu_neutral (I, L), mu_state (I, P, 3, L) float32 numpy."""
    encoder.eval()
    I, P = len(data), len(data.poses)
    shapes = [(i, p, v) for i in range(I) for p in [-1] + list(range(P)) for v in ([0] if p < 0 else range(3))]
    out = []
    for start in range(0, len(shapes), batch):
        chunk = []
        for i, p, v in shapes[start:start + batch]:
            pts, sdf = data.shape_samples(i, p, v)
            chunk.append(np.concatenate([pts, sdf[:, None]], axis=1))
        mu, _ = encoder(torch.from_numpy(np.stack(chunk)).to(device))
        out.append(mu.cpu().numpy())
    mu = np.concatenate(out).reshape(I, 1 + 3 * P, -1) if out else np.zeros((0, 1 + 3 * P, encoder.latent), np.float32)
    return mu[:, 0], mu[:, 1:].reshape(I, P, 3, -1)


def cross_identity_cosine(deltas):
    """Mean cosine between the Δμ of two different identities in one pose and variant: deltas (I, L) → float
    (nan when I < 2)."""
    if deltas.shape[0] < 2:
        return float("nan")
    u = deltas / np.maximum(np.linalg.norm(deltas, axis=1, keepdims=True), 1e-12)
    c = u @ u.T
    n = len(u)
    return float((c.sum() - np.trace(c)) / (n * (n - 1)))


def farthest_identities(mu_neutral, count):
    """`count` identity indices spread over latent space: first the one nearest the mean μ, then farthest-point picks,
    so the 'nearest' strategy has a near identity for most users. mu_neutral (I, L) → list of int."""
    I = mu_neutral.shape[0]
    if count >= I:
        return list(range(I))
    first = int(np.argmin(np.linalg.norm(mu_neutral - mu_neutral.mean(0), axis=1)))
    chosen = [first]
    dist = np.linalg.norm(mu_neutral - mu_neutral[first], axis=1)
    while len(chosen) < count:
        nxt = int(np.argmax(dist))
        chosen.append(nxt)
        dist = np.minimum(dist, np.linalg.norm(mu_neutral - mu_neutral[nxt], axis=1))
    return chosen


def nearest_library_deltas(mu_neutral, library_mu, library_delta):
    """The 'nearest' strategy's Δμ (sidecar/pose/poseLibrary.ts latentDelta): for each identity, the Δμ of the library
    identity whose neutral μ is nearest in Euclidean distance (the first of equal ones). mu_neutral (I, L),
    library_mu (K, L), library_delta (K, P, L) → (I, P, L)."""
    d = ((mu_neutral[:, None, :] - library_mu[None]) ** 2).sum(-1)
    return library_delta[np.argmin(d, axis=1)]


def significant(values, digits=5):
    """Floats rounded to `digits` significant digits (the library's values since its JSON days; kept, so that a
    retrained library's numbers mean what they meant)."""
    out = []
    for v in np.asarray(values, dtype=np.float64).ravel():
        v = float(v)
        out.append(0.0 if v == 0 or not math.isfinite(v) else round(v, digits - 1 - int(math.floor(math.log10(abs(v))))))
    return out


def build_library(names, poses, mu_neutral, mu_state, identities):
    """The pose library: for every pose and variant the mean Δμ over all training identities, and the Δμ and neutral μ
    of `identities` (indices into names) for the 'nearest' strategy. mu_neutral (I, L), mu_state (I, P, 3, L)."""
    delta = mu_state - mu_neutral[:, None, None, :]
    library = {"format": LIBRARY_FORMAT, "latentSize": int(mu_neutral.shape[1]), "knn": LIBRARY_KNN,
               "variants": list(VARIANTS), "identityCount": int(len(names)),
               "storedIdentities": int(len(identities)), "poses": {}}
    for p, pose in enumerate(poses):
        entry = {}
        for v, variant in enumerate(VARIANTS):
            entry[variant] = {
                "mean": significant(delta[:, p, v].mean(axis=0)),
                "identities": [{"identity": names[i], "muNeutral": significant(mu_neutral[i]),
                                "delta": significant(delta[i, p, v])} for i in identities],
            }
        library["poses"][pose] = entry
    return library
