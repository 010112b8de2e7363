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


def subtree_masks(parents):
    """parents #J (the root its own parent) → (J, J) float mask: row j marks j and every joint below it."""
    count = len(parents)
    mask = torch.zeros(count, count)
    for j in range(count):
        k = j
        while True:
            mask[k, j] = 1.0  # j lies below k (or is k)
            if parents[k] == k:
                break
            k = parents[k]
    return mask


def rotate_about_axis(vectors, axis, angle):
    """Rodrigues: vectors (..., 3) turned by angle (...) radians about unit axis (..., 3) → (..., 3)."""
    cos, sin = torch.cos(angle)[..., None], torch.sin(angle)[..., None]
    along = (axis * vectors).sum(-1, keepdim=True)
    return vectors * cos + torch.cross(axis, vectors, dim=-1) * sin + axis * along * (1.0 - cos)


def blend_corrective(points, centre, axis, angle, share):
    """What dual-quaternion skinning adds to linear blend skinning when one joint turns and a point gives `share` of its
    weight to that joint's subtree (the rest to bones that stay still). Both blends then turn the point about the
    joint's centre: LBS by the chord, rel + s·(R·rel − rel); DQS by the normalised quaternion blend of identity and R,
    which for two rotations about one centre is the rotation by 2·atan2(s·sin(θ/2), 1 − s + s·cos(θ/2)).
    points (B, N, 3), centre (B, K, 3), axis (B, K, 3) unit, angle (B, K) radians, share (B, N, K) in [0, 1]
    → (B, N, K, 3) DQS − LBS, zero where share is 0 or 1."""
    rel = points[:, :, None, :] - centre[:, None, :, :]
    axis = axis[:, None, :, :].expand_as(rel)
    theta = angle[:, None, :].expand_as(share)
    half = theta / 2
    blended = 2.0 * torch.atan2(share * torch.sin(half), 1.0 - share + share * torch.cos(half))
    dqs = rotate_about_axis(rel, axis, blended)
    lbs = rel + share[..., None] * (rotate_about_axis(rel, axis, theta) - rel)
    return dqs - lbs


def corrective_l1(predicted, weights, points, joints, turning, parents, generator=None, angles=(40.0, 100.0)):
    """The blend's corrective against the truth's: each joint of `turning` in turn bends by a random angle (degrees in
    `angles`, either sign) about a random axis across its parent bone, at its true position; the loss is the mean over
    points and joints of |corrective(predicted) − corrective(truth)| (blend_corrective), what a pose's corrective
    inherits from where the weights blend. The KL loss weighs a point's weights alike wherever it lies; this one weighs
    them by how far the joint's turn carries the point, so a blend that is too wide or off-centre costs what it costs
    the deformation.
    predicted, weights (B, N, J) rows summing to 1; points (B, N, 3); joints (B, J, 3) true; turning: list of joint
    indices; parents #J → scalar."""
    subtree = subtree_masks(parents).to(weights)[turning]  # (K, J)
    centre = joints[:, turning, :]  # (B, K, 3)
    bone = centre - joints[:, [parents[j] for j in turning], :]
    bone = bone / bone.norm(dim=-1, keepdim=True).clamp_min(1e-9)
    b, k = centre.shape[0], len(turning)
    random = torch.randn(b, k, 3, generator=generator).to(weights)
    axis = random - bone * (random * bone).sum(-1, keepdim=True)
    axis = axis / axis.norm(dim=-1, keepdim=True).clamp_min(1e-9)
    lo, hi = angles
    magnitude = torch.deg2rad(lo + (hi - lo) * torch.rand(b, k, generator=generator)).to(weights)
    sign = torch.where(torch.rand(b, k, generator=generator) < 0.5, -1.0, 1.0).to(weights)
    angle = magnitude * sign
    share_true = (weights @ subtree.T).clamp(0.0, 1.0)
    share_pred = (predicted @ subtree.T).clamp(0.0, 1.0)
    truth = blend_corrective(points, centre, axis, angle, share_true)
    guess = blend_corrective(points, centre, axis, angle, share_pred)
    return ((guess - truth).pow(2).sum(-1) + 1e-12).sqrt().mean()
