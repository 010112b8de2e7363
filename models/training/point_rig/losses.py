"""Losses and metrics of PointRigNet. Distances are in units of the canonical unit box (the character's largest extent)."""
import torch
from torch.nn import functional as F


def joint_mse(refined, joints):
    """refined, joints (B, J, 3) → mean squared coordinate error (the joint loss)."""
    return F.mse_loss(refined, joints)


def weight_kl(logits, weights):
    """KL(ground truth ‖ prediction) per point, averaged over points: logits (B, N, J) (HeadTop_End masked), weights
    (B, N, J) ground truth, rows summing to 1 (the weight loss). 0·log 0 counts as 0."""
    log_predicted = torch.log_softmax(logits, dim=-1)
    return F.kl_div(log_predicted, weights, reduction="sum") / (weights.shape[0] * weights.shape[1])


def weight_l1(predicted, weights):
    """predicted, weights (B, N, J) → mean over points of Σ_j |w − ŵ| (0 same, 2 disjoint; as eval's weightL1)."""
    return (predicted - weights).abs().sum(-1).mean()


def joint_error(refined, joints):
    """refined, joints (B, J, 3) → mean Euclidean joint distance."""
    return (refined - joints).norm(dim=-1).mean()


def dominant_joint_agreement(predicted, weights):
    """predicted, weights (B, N, J) → share of points whose largest predicted weight is on their largest true one."""
    return (predicted.argmax(-1) == weights.argmax(-1)).float().mean()
