"""LatentReRig's networks: the SDF variational autoencoder (SdfEncoder, SdfDecoder), the classifiers on its latent
(LatentHeads) and the vertex decoder (VertexDecoder). Shapes: B batch, N SDF samples, A anchor points, K neighbours,
L latent size."""
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


def gather_neighbours(features, knn):
    """features (B, A, C), knn (B, A, K) int64 indices into A → (B, A, K, C)."""
    B, A, K = knn.shape
    C = features.shape[-1]
    index = knn.reshape(B, A * K, 1).expand(B, A * K, C)
    return torch.gather(features, 1, index).reshape(B, A, K, C)


class EdgeConv(nn.Module):
    """EdgeConv over the kNN graph: h_i = max_j W2·relu(W1·[f_i, f_j − f_i, p_j − p_i]), with W1 split by term so
    that the first layer runs per point and only the sum and W2 per edge. f (B, A, Cin), p (B, A, 3), knn (B, A, K)
    → (B, A, Cout)."""

    def __init__(self, cin, cout):
        super().__init__()
        self.center = nn.Linear(cin, cout)
        self.neighbour = nn.Linear(cin, cout, bias=False)
        self.offset = nn.Linear(3, cout, bias=False)
        self.edge = nn.Linear(cout, cout)

    def forward(self, f, p, knn):
        nf, op = self.neighbour(f), self.offset(p)
        own = self.center(f) - nf - op
        theirs = gather_neighbours(nf + op, knn)
        return torch.relu(self.edge(torch.relu(own[:, :, None, :] + theirs)).max(dim=2).values)


def rotation_from_6d(r6):
    """Gram–Schmidt on two 3-vectors (…, 6) → rotation matrices (…, 3, 3) whose columns are the orthonormalised
    first, second and their cross product."""
    a1, a2 = r6[..., 0:3], r6[..., 3:6]
    b1 = a1 / a1.norm(dim=-1, keepdim=True).clamp_min(1e-8)
    a2 = a2 - (b1 * a2).sum(-1, keepdim=True) * b1
    b2 = a2 / a2.norm(dim=-1, keepdim=True).clamp_min(1e-8)
    b3 = torch.stack([b1[..., 1] * b2[..., 2] - b1[..., 2] * b2[..., 1],
                      b1[..., 2] * b2[..., 0] - b1[..., 0] * b2[..., 2],
                      b1[..., 0] * b2[..., 1] - b1[..., 1] * b2[..., 0]], dim=-1)
    return torch.stack([b1, b2, b3], dim=-1)


class VertexDecoder(nn.Module):
    """Source anchors and the pose condition → target anchor positions.

    points, normals (B, A, 3); knn (B, A, K) int64, each point's K nearest other anchors; mu_source (B, L);
    delta_direction (B, L) unit; delta_norm (B, 1); pair_kind (B, 3) one-hot (skinning, corrective,
    skinningCorrective) → positions (B, A, 3), mask (B, A) in (0, 1).

    Stages: point features (MLP, one EdgeConv, a max-pooled shape code); a coarse stage of `bones` virtual bones
    (per-point softmax assignment, per-bone rigid transform from the condition and the shape code, blended like linear
    blend skinning); `refinements` kNN refinement stages (EdgeConv over the current displacement) adding to it; a
    residual detail branch; and a per-point latent mask gating the whole displacement, so static regions stay put."""

    def __init__(self, latent=128, width=96, condition=128, bones=16, refinements=2):
        super().__init__()
        self.config = {"latent": latent, "width": width, "condition": condition, "bones": bones,
                       "refinements": refinements}
        self.bones = bones
        self.condition = mlp(2 * latent + 1 + 3, condition, condition, last_activation=True)
        self.point = mlp(6, width // 2, width // 2, last_activation=True)
        self.local = EdgeConv(width // 2, width // 2)
        self.shape = nn.Linear(width, width)
        self.feature = mlp(2 * width + condition, width, width, last_activation=True)
        self.assign = nn.Linear(width, bones)
        self.bone = mlp(condition + width, condition, bones * 9)
        self.mask = nn.Linear(width, 1)
        self.refine = nn.ModuleList([EdgeConv(width + 3, width // 2) for _ in range(refinements)])
        self.refine_out = nn.ModuleList([mlp(width + width // 2 + 3, width // 2, 3) for _ in range(refinements)])
        self.detail = mlp(width + 3, width // 2, 3)
        for head in [self.bone[-1], self.detail[-1], *[r[-1] for r in self.refine_out]]:
            nn.init.zeros_(head.bias)
            head.weight.data.mul_(0.01)
        nn.init.constant_(self.mask.bias, 0.0)

    def forward(self, points, normals, knn, mu_source, delta_direction, delta_norm, pair_kind):
        B, A = points.shape[0], points.shape[1]
        cond = self.condition(torch.cat([mu_source, delta_direction, delta_norm, pair_kind], dim=-1))
        f0 = self.point(torch.cat([points, normals], dim=-1))
        f1 = torch.cat([f0, self.local(f0, points, knn)], dim=-1)
        shape = self.shape(f1).max(dim=1).values
        h = self.feature(torch.cat([f1, shape[:, None, :].expand(-1, A, -1), cond[:, None, :].expand(-1, A, -1)], -1))
        # coarse: virtual bones, each a rotation (6D, starting at the identity) and a translation
        weights = torch.softmax(self.assign(h), dim=-1)
        params = self.bone(torch.cat([cond, shape], dim=-1)).reshape(B, self.bones, 9)
        identity6 = torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 0.0], dtype=points.dtype, device=points.device)
        rotation = rotation_from_6d(params[..., :6] + identity6)
        moved = torch.matmul(points[:, None, :, :], rotation.transpose(-1, -2)) + params[:, :, None, 6:]
        coarse = (weights.transpose(1, 2)[..., None] * moved).sum(dim=1)
        displacement = coarse - points
        for conv, out in zip(self.refine, self.refine_out):
            e = conv(torch.cat([h, displacement], dim=-1), points, knn)
            displacement = displacement + out(torch.cat([h, e, displacement], dim=-1))
        displacement = displacement + self.detail(torch.cat([h, displacement], dim=-1))
        mask = torch.sigmoid(self.mask(h)).squeeze(-1)
        return points + mask[..., None] * displacement, mask
