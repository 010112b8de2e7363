"""LatentReRig's networks: the SDF variational autoencoder (SdfEncoder, SdfDecoder), the classifiers on its latent
(LatentHeads), the rig-structured vertex decoder (RigDecoder) and its training aid (PoseRotationTable). Shapes:
B batch, N SDF samples, L latent size, J = 23 template joints."""
import torch
from torch import nn

# The signed distances of a unit-box character are a few hundredths near the surface: scaled up so that the encoder's
# first layer sees them on the scale of the coordinates.
SDF_INPUT_SCALE = 10.0
# Initial log σ² of the encoder.
LOGVAR_START = -6.0


def mlp(*widths, last_activation=False):
    """Linear layers of the given widths with ReLU between them (and after the last when last_activation)."""
    layers = []
    for i in range(len(widths) - 1):
        layers.append(nn.Linear(widths[i], widths[i + 1]))
        if i < len(widths) - 2 or last_activation:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def parameter_count(module):
    return sum(p.numel() for p in module.parameters())


class SdfEncoder(nn.Module):
    """SDF samples (B, N, 4: x, y, z, signed distance) → mu (B, L), logvar (B, L). A two-stage PointNet: per-sample
    features, their max over the samples fed back to every sample, then max and mean pooling and a head. Independent
    of N and of the samples' order."""

    def __init__(self, latent=128, width=64, feature=128, head=256):
        super().__init__()
        self.config = {"latent": latent, "width": width, "feature": feature, "head": head}
        self.local = mlp(4, width // 2, width, last_activation=True)
        self.shared = mlp(2 * width, feature, feature, last_activation=True)
        self.head = mlp(2 * feature, head, 2 * latent)
        self.latent = latent
        # start with σ ≈ 0.05: a unit σ would drown the decoder's input in noise before the KL has any say
        nn.init.constant_(self.head[-1].bias[latent:], LOGVAR_START)

    def forward(self, samples):
        scale = torch.tensor([1.0, 1.0, 1.0, SDF_INPUT_SCALE], dtype=samples.dtype, device=samples.device)
        f = self.local(samples * scale)
        g = f.max(dim=1, keepdim=True).values.expand_as(f)
        h = self.shared(torch.cat([f, g], dim=-1))
        pooled = torch.cat([h.max(dim=1).values, h.mean(dim=1)], dim=-1)
        out = self.head(pooled)
        mu, logvar = out[:, : self.latent], out[:, self.latent:]
        return mu, logvar.clamp(-12.0, 6.0)


class SdfDecoder(nn.Module):
    """D(z, x): latent codes z (B, L) and query points x (B, M, 3) → signed distances (B, M). DeepSDF-style MLP with
    the input fed again half way."""

    def __init__(self, latent=128, width=256):
        super().__init__()
        self.config = {"latent": latent, "width": width}
        self.first = mlp(latent + 3, width, width, last_activation=True)
        self.second = mlp(width + latent + 3, width, width, 1)

    def forward(self, z, x):
        zx = torch.cat([z[:, None, :].expand(-1, x.shape[1], -1), x], dim=-1)
        return self.second(torch.cat([self.first(zx), zx], dim=-1)).squeeze(-1)


class LatentHeads(nn.Module):
    """Linear classifiers: identity from mu (training identities only), pose from the normalised Δμ."""

    def __init__(self, latent, identities, poses):
        super().__init__()
        self.identity = nn.Linear(latent, max(identities, 1))
        self.pose = nn.Linear(latent, max(poses, 1))
        # a unit vector's dot products are small: a fixed gain lets the pose logits reach confident values early
        self.pose_gain = 8.0

    def forward_identity(self, mu):
        return self.identity(mu)

    def forward_pose(self, direction):
        return self.pose(direction * self.pose_gain)


class RigDecoder(nn.Module):
    """The pose condition → every template joint's rotation in its own bone frame (latent_pose/rig.py joint_frames):
    mu_source (B, L), delta_direction (B, L) unit, delta_norm (B, 1) → local rotation vectors (B, J, 3), radians.

    The rest of the vertex decoder is fixed geometry: the character's rig (at training time its true one, at apply
    time the sidecar's auto-rig) turns these rotations into posed vertices by LBS and DQS (rig.posed_variants), so the
    network only learns WHICH joints a pose turns and by how much, never where a character bends. An MLP; its last
    layer starts at zero, so training starts at the rest pose. Hips is an output like the others (no joint is masked:
    the data never turns Hips, and the network learns ≈ 0 there). The inputs are standardised by fixed statistics of
    the training set (set_input_statistics; buffers, part of the exported graph): μ's entries are a few hundredths,
    too small for the first layer to tell identities apart at its initial scale."""

    def __init__(self, latent=128, width=256, joints=23):
        super().__init__()
        self.config = {"latent": latent, "width": width, "joints": joints}
        self.joints = joints
        self.register_buffer("input_shift", torch.zeros(2 * latent + 1))
        self.register_buffer("input_scale", torch.ones(2 * latent + 1))
        self.net = mlp(2 * latent + 1, width, width, width, 3 * joints)
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)

    @torch.no_grad()
    def set_input_statistics(self, mu_source, delta_direction, delta_norm):
        """Centre each input entry on its mean over examples and scale each input (μ, direction, norm) by one factor,
        the root mean square of its centred entries: (S, L), (S, L), (S, 1) tensors (the training identities' μ and
        conditions). One factor per input, not per entry: an entry that barely varies over the training identities
        would otherwise blow up on a new character."""
        parts = [mu_source, delta_direction, delta_norm]
        x = torch.cat(parts, dim=-1).to(self.input_shift)
        shift = x.mean(0)
        scale, start = [], 0
        for part in parts:
            centred = x[:, start:start + part.shape[-1]] - shift[start:start + part.shape[-1]]
            rms = float(centred.pow(2).mean().sqrt()) if x.shape[0] > 1 else 0.0
            scale.append(torch.full((part.shape[-1],), 1.0 / rms if rms > 1e-8 else 1.0))
            start += part.shape[-1]
        self.input_shift.copy_(shift)
        self.input_scale.copy_(torch.cat(scale))

    def forward(self, mu_source, delta_direction, delta_norm):
        x = torch.cat([mu_source, delta_direction, delta_norm], dim=-1)
        out = self.net((x - self.input_shift) * self.input_scale)
        return out.reshape(-1, self.joints, 3)


class PoseRotationTable(nn.Module):
    """A training aid of phase B, never exported: one set of local rotation vectors per training pose, the same for
    every identity (pose indices (B,) int64 → (B, J, 3)), starting at rest.

    Fitted through the rigs by the same anchor loss as the decoder, each pose's entry sees only that pose, so it finds
    the pose's rotations quickly; the decoder, whose shared weights the poses pull different ways (and whose mean
    anchor distance pushes every joint back to rest as soon as a pose that does not turn it is disturbed), is guided
    towards it in rotation space early in training (train_latent_pose.py phase B)."""

    def __init__(self, poses, joints=23):
        super().__init__()
        self.rotations = nn.Parameter(torch.zeros(poses, joints, 3))

    def forward(self, pose):
        return self.rotations[pose]
