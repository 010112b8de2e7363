"""Losses of both phases. Phase A: SDF reconstruction, KL, and the latent losses on Δμ (consistency across identities,
additivity of combinations, contrast between poses). Phase B: position (normalised per pair), kNN consistency,
static regions, smoothness. Distances are in units of the canonical box (the character's longest side)."""
import torch
import torch.nn.functional as F

from .model import gather_neighbours

# DeepSDF's clamp: only the band near the surface is learnt exactly.
SDF_CLAMP = 0.1
# A point moving less than this (0.1 ‰ of the character's size) is static in a pair.
STATIC_DISTANCE = 1e-4
# Floor of a pair's mean motion in the normalised position loss (a corrective pair moves ~7e-4 on average).
MOTION_FLOOR = 2e-4
# An edge whose length changes by less than this share is preserved (rigid) in a pair.
EDGE_PRESERVED = 0.02


def sdf_l1(predicted, target, clamp=SDF_CLAMP):
    """Mean |clamp(predicted) − clamp(target)| over all samples (DeepSDF's metric); any equal shapes."""
    return (predicted.clamp(-clamp, clamp) - target.clamp(-clamp, clamp)).abs().mean()


def sdf_loss(predicted, target, clamp=SDF_CLAMP):
    """Mean |predicted − clamp(target)|: the prediction is not clamped, so a decoder that overshoots the band still
    gets a gradient back (clamping both sides leaves it stuck there, as a first large step can do)."""
    return (predicted - target.clamp(-clamp, clamp)).abs().mean()


def kl_divergence(mu, logvar):
    """KL(N(mu, exp(logvar)) ‖ N(0, 1)) per latent dimension, averaged: mu, logvar (…, L) → scalar."""
    return (-0.5 * (1.0 + logvar - mu.pow(2) - logvar.exp())).mean()


def unit(v, eps=1e-8):
    return v / v.norm(dim=-1, keepdim=True).clamp_min(eps)


def direction_consistency(directions):
    """Same pose, same variant, different identities point the same way: directions (I, S, L) unit → mean over
    identities and states of 1 − cos(direction, the states' mean direction). 0 when I < 2."""
    if directions.shape[0] < 2:
        return directions.sum() * 0.0
    mean = unit(directions.mean(dim=0, keepdim=True))
    return (1.0 - (directions * mean).sum(-1)).mean()


def additivity(delta_combo, delta_a, delta_b):
    """Δμ(a+b) ≈ Δμ(a) + Δμ(b), relative to |Δμ(a+b)|²: each (I, L) → scalar."""
    err = (delta_combo - delta_a - delta_b).pow(2).sum(-1)
    return (err / (delta_combo.pow(2).sum(-1) + delta_a.pow(2).sum(-1) + delta_b.pow(2).sum(-1) + 1e-8)).mean()


def pose_contrast(directions, related, margin=0.2):
    """Different poses point different ways: directions (I, S, L) unit; related (S, S) bool, pairs allowed to be alike
    (a combination and its components, and each state with itself) → mean over the other pairs of
    relu(cos(mean direction s, mean direction t) − margin)."""
    mean = unit(directions.mean(dim=0))
    cos = mean @ mean.T
    other = ~related
    if not other.any():
        return cos.sum() * 0.0
    return torch.relu(cos[other] - margin).mean()


def pair_motion(points, target, floor=None):
    """Mean distance a pair's points move, plus a floor (MOTION_FLOOR by default): points, target (B, A, 3) → (B,)."""
    return (target - points).norm(dim=-1).mean(dim=1) + (MOTION_FLOOR if floor is None else floor)


def position_loss(predicted, target, points, weight, floor=None):
    """Mean point error of each pair over its mean motion (so a millimetre-small corrective pair counts like a large
    skinning one), weighted per pair: predicted, target, points (B, A, 3), weight (B,) → scalar."""
    err = (predicted - target).norm(dim=-1).mean(dim=1) / pair_motion(points, target, floor)
    return (err * weight).sum() / weight.sum()


def relative_squared_error(predicted, target, points, weight, floor=None):
    """Mean squared point error of each pair over its mean squared motion (+ floor²): 1 for 'no motion' whatever the
    pair's scale, so millimetre corrective pairs count like large skinning ones, while the gradient grows with the
    error (an L1 loss sits in the 'no motion' optimum when most points are static). → scalar."""
    f = MOTION_FLOOR if floor is None else floor
    err = (predicted - target).pow(2).sum(-1).mean(1) / ((target - points).pow(2).sum(-1).mean(1) + f * f)
    return (err * weight).sum() / weight.sum()


def knn_consistency(predicted, target, points, knn, weight):
    """Neighbour offsets kept where the ground truth keeps them: over edges (i, j ∈ knn(i)) whose length changes by
    less than EDGE_PRESERVED in the target, |(p̂_j − p̂_i) − (t_j − t_i)| over the pair's mean edge length.
    predicted, target, points (B, A, 3), knn (B, A, K), weight (B,) → scalar."""
    off_p = gather_neighbours(predicted, knn) - predicted[:, :, None]
    off_t = gather_neighbours(target, knn) - target[:, :, None]
    off_s = gather_neighbours(points, knn) - points[:, :, None]
    len_s, len_t = off_s.norm(dim=-1), off_t.norm(dim=-1)
    kept = ((len_t - len_s).abs() <= EDGE_PRESERVED * len_s).float()
    err = ((off_p - off_t).norm(dim=-1) * kept).sum(dim=(1, 2)) / kept.sum(dim=(1, 2)).clamp_min(1.0)
    return (err / len_s.mean(dim=(1, 2)).clamp_min(1e-6) * weight).sum() / weight.sum()


def static_loss(predicted, target, points, mask, weight, floor=None):
    """Points the ground truth leaves in place (moving < STATIC_DISTANCE) must stay: their mean motion over the pair's
    mean motion; plus the mask's binary cross-entropy against 'moves' (its own supervision).
    → (static term, mask term), scalars."""
    moving = ((target - points).norm(dim=-1) >= STATIC_DISTANCE).float()
    still = 1.0 - moving
    drift = ((predicted - points).norm(dim=-1) * still).sum(1) / still.sum(1).clamp_min(1.0)
    static = (drift / pair_motion(points, target, floor) * weight).sum() / weight.sum()
    bce = F.binary_cross_entropy(mask.clamp(1e-6, 1 - 1e-6), moving)
    return static, bce


def laplacian(values, knn):
    """Umbrella Laplacian over the kNN graph: v_i − mean_j v_j; values (B, A, C), knn (B, A, K) → (B, A, C)."""
    return values - gather_neighbours(values, knn).mean(dim=2)


def smoothness(predicted, target, points, knn, weight, floor=None):
    """The displacement's Laplacian matches the ground truth's (smooth where it is smooth, a crease where the
    skinning makes one), over the pair's mean motion: → scalar."""
    err = (laplacian(predicted - points, knn) - laplacian(target - points, knn)).norm(dim=-1).mean(1)
    return (err / pair_motion(points, target, floor) * weight).sum() / weight.sum()
