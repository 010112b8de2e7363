"""Losses of both phases. Phase A: SDF reconstruction, KL, and the latent losses on Δμ (consistency across identities,
additivity of combinations, contrast between poses). Phase B: the mean anchor distance of the posed variants.
Distances are in units of the canonical box (the character's longest side)."""
import torch

# DeepSDF's clamp: only the band near the surface is learnt exactly.
SDF_CLAMP = 0.1
# A point moving less than this (0.1 ‰ of the character's size) is static in a pair (phase B's 'moving' metrics).
STATIC_DISTANCE = 1e-4


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


def anchor_distances(predicted, target):
    """Mean anchor distance of every pair and variant: predicted, target (B, V, A, 3) → (B, V)."""
    return (predicted - target).norm(dim=-1).mean(dim=-1)


def variant_loss(distances, weights):
    """Phase B's loss: the mean over pairs of the weighted mean over variants of their mean anchor distance.
    distances (B, V) (anchor_distances), weights (V,) → scalar."""
    return (distances * weights).sum(-1).mean() / weights.sum()
