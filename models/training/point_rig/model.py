"""PointRigNet: HumanRig's mesh–skeleton mutual attention network, small enough to train on a CPU.

points (B, N, 3) in farthest-point order (see geometry.farthest_point_order), normals (B, N, 3), coarse joints (B, 23, 3),
all in the canonical frame (unit box) → refined joints (B, 23, 3) and skinning weights (B, N, 23), rows a softmax over
the 22 deforming joints (HeadTop_End exactly 0).

  skeleton-aware vertex features: xyz, normal, distance and offset to every coarse joint
  → U-shaped point transformer: level l is the first N/4^l points; kNN attention (k neighbours) at every level,
    max-pooled kNN down-sampling, 3-NN inverse-distance up-sampling with skip connections
  skeleton encoder: an MLP over each coarse joint (position, offset to its parent) plus a learned per-joint embedding
  mutual cross-attention (skeleton reads mesh, then mesh reads skeleton) at the coarsest level and at full resolution
  → joint head: each joint votes over the points (softmax over points of learned pair scores plus a Gaussian of the
    distance to its coarse position); refined = coarse + gate · (voted centroid − coarse) + offset
  → weight head: a small MLP per point–joint pair (relative to the refined joints), softmax over joints
"""
import math

import torch
from torch import nn
from torch.nn import functional as F

from .geometry import gather_rows, nearest_neighbours
from .skeleton import HEAD_TOP, JOINT_COUNT, PARENTS

# Relative positions are multiplied by this before the position encodings (unit box → roughly decimetres), so their
# first layer starts in a useful range at every level.
POSITION_SCALE = 10.0
# Joint offsets are predicted in tenths of the box: a unit output moves a joint by 0.1.
OFFSET_SCALE = 0.1
# Initial radius (unit box) of each joint's Gaussian vote over the points: about a limb's half-thickness.
VOTE_RADIUS = 0.05
# Added to HeadTop_End's logit: exp(-1e4) is 0 in float32, and unlike -inf it cannot make a NaN.
MASKED_LOGIT = -1.0e4


def feed_forward(width):
    return nn.Sequential(nn.Linear(width, 2 * width), nn.ReLU(), nn.Linear(2 * width, width))


class PointAttention(nn.Module):
    """Pre-norm transformer block whose attention looks at each point's k nearest neighbours only (dot-product heads).
    Geometry enters twice, both cheap: a learned bias per head from the neighbour's relative position (its features
    computed once per level, see PointRigNet), and each head's attention-weighted mean neighbour offset joining the
    output, so that a block sees the local shape and not only features.
    features (B, N, C), neighbours (B, N, k), rel (B, N, k, 3) the neighbours' scaled offsets, position (B, N, k, P)
    their shared position features → (B, N, C).

    Heads are summed and broadcast with one matmul against a channel→head indicator instead of (..., H, C/H) views:
    on a CPU, element-wise products with C/H-long inner loops or millions of tiny batched matmuls cost several times
    more than a (B·N·k, C) × (C, H) product."""

    def __init__(self, width, heads, position_width):
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(width // heads)
        self.norm = nn.LayerNorm(width)
        self.query = nn.Linear(width, width)
        self.key_value = nn.Linear(width, 2 * width)
        self.position_bias = nn.Linear(position_width, heads)
        self.out = nn.Linear(width + 3 * heads, width)
        self.norm_ffn = nn.LayerNorm(width)
        self.ffn = feed_forward(width)
        # head_of[c, h] = 1 where channel c belongs to head h
        self.register_buffer("head_of", torch.repeat_interleave(torch.eye(heads), width // heads, dim=0), persistent=False)

    def forward(self, features, neighbours, rel, position):
        b, n, c = features.shape
        h = self.norm(features)
        q = self.query(h) * self.scale
        keys, values = torch.split(gather_rows(self.key_value(h), neighbours), c, dim=-1)  # (B, N, k, C) each
        logits = torch.matmul(keys * q.unsqueeze(2), self.head_of) + self.position_bias(position)  # (B, N, k, H)
        attention = torch.softmax(logits, dim=2)  # over the neighbours, per head
        mixed = (torch.matmul(attention, self.head_of.transpose(0, 1)) * values).sum(2)  # (B, N, C)
        where = (attention.unsqueeze(-1) * rel.unsqueeze(3)).sum(2).reshape(b, n, 3 * self.heads)
        features = features + self.out(torch.cat([mixed, where], dim=-1))
        return features + self.ffn(self.norm_ffn(features))


class Downsample(nn.Module):
    """Features of the next level's points (a prefix of this level's): max over each one's k nearest points of this
    level of a linear map of (feature, relative position). features (B, N, Cin), points (B, N, 3), coarse (B, M, 3),
    neighbours (B, M, k) into N → (B, M, Cout)."""

    def __init__(self, width_in, width_out):
        super().__init__()
        self.mix = nn.Linear(width_in + 3, width_out)
        self.norm = nn.LayerNorm(width_out)

    def forward(self, features, points, coarse, neighbours):
        rel = (gather_rows(points, neighbours) - coarse.unsqueeze(2)) * POSITION_SCALE
        h = self.mix(torch.cat([gather_rows(features, neighbours), rel], dim=-1))
        return F.relu(self.norm(h)).max(dim=2).values


class Upsample(nn.Module):
    """Back to a finer level: the coarse features at each fine point's 3 nearest coarse points, blended by inverse
    distance, plus the fine level's own (skip) features. coarse_features (B, M, Cin), skip (B, N, Cout),
    nearest_d2 / nearest (B, N, 3) → (B, N, Cout)."""

    def __init__(self, width_in, width_out):
        super().__init__()
        self.coarse = nn.Linear(width_in, width_out)
        self.skip = nn.Linear(width_out, width_out)
        self.norm = nn.LayerNorm(width_out)

    def forward(self, coarse_features, skip, nearest_d2, nearest):
        inverse = 1.0 / (torch.sqrt(nearest_d2 + 1e-12) + 1e-4)
        blend = inverse / inverse.sum(-1, keepdim=True)
        up = (gather_rows(self.coarse(coarse_features), nearest) * blend.unsqueeze(-1)).sum(2)
        return self.norm(self.skip(skip) + up)


class SkeletonEncoder(nn.Module):
    """joints (B, J, 3) → joint tokens (B, J, C): an MLP of each joint's position and offset from its parent, plus a
    learned embedding of which joint it is."""

    def __init__(self, width, joints=JOINT_COUNT):
        super().__init__()
        self.register_buffer("parents", torch.tensor(PARENTS, dtype=torch.long), persistent=False)
        self.first = nn.Linear(6, width)
        self.identity = nn.Parameter(torch.randn(joints, width) * 0.1)
        self.rest = nn.Sequential(nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))

    def forward(self, joints):
        from_parent = joints - torch.index_select(joints, 1, self.parents)
        h = self.first(torch.cat([joints, from_parent * POSITION_SCALE], dim=-1)) + self.identity
        return self.rest(h)


class CrossAttention(nn.Module):
    """Pre-norm block in which every query token attends to every context token (multi-head), then a feed-forward.
    queries (B, Q, C), context (B, K, C) → (B, Q, C)."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(width // heads)
        self.norm_query = nn.LayerNorm(width)
        self.norm_context = nn.LayerNorm(width)
        self.query = nn.Linear(width, width)
        self.key_value = nn.Linear(width, 2 * width)
        self.out = nn.Linear(width, width)
        self.norm_ffn = nn.LayerNorm(width)
        self.ffn = feed_forward(width)

    def forward(self, queries, context):
        b, nq, c = queries.shape
        nk = context.shape[1]
        d = c // self.heads
        q = self.query(self.norm_query(queries)).reshape(b, nq, self.heads, d).transpose(1, 2)
        kv = self.key_value(self.norm_context(context))
        k = kv[..., :c].reshape(b, nk, self.heads, d).transpose(1, 2)
        v = kv[..., c:].reshape(b, nk, self.heads, d).transpose(1, 2)
        attention = torch.softmax(torch.matmul(q, k.transpose(2, 3)) * self.scale, dim=-1)
        mixed = torch.matmul(attention, v).transpose(1, 2).reshape(b, nq, c)
        queries = queries + self.out(mixed)
        return queries + self.ffn(self.norm_ffn(queries))


class MutualAttention(nn.Module):
    """Mesh → skeleton (each joint gathers the surface around it), then skeleton → mesh (each point reads the updated
    joints). mesh (B, N, C), skeleton (B, J, C) → both updated."""

    def __init__(self, width, heads):
        super().__init__()
        self.skeleton_reads_mesh = CrossAttention(width, heads)
        self.mesh_reads_skeleton = CrossAttention(width, heads)

    def forward(self, mesh, skeleton):
        skeleton = self.skeleton_reads_mesh(skeleton, mesh)
        mesh = self.mesh_reads_skeleton(mesh, skeleton)
        return mesh, skeleton


class PairHead(nn.Module):
    """A small MLP on every point–joint pair: its hidden layer sums a map of the point's features, one of the joint's,
    and one of their offset and distance (so scores follow the joints wherever they are).
    mesh (B, N, C), skeleton (B, J, C), points (B, N, 3), joints (B, J, 3) → scores (B, N, J), squared distances (B, N, J)."""

    def __init__(self, width, hidden):
        super().__init__()
        self.point = nn.Linear(width, hidden)
        self.joint = nn.Linear(width, hidden, bias=False)
        self.geometry = nn.Linear(4, hidden, bias=False)
        self.out = nn.Linear(hidden, 1)

    def forward(self, mesh, skeleton, points, joints):
        offsets = points.unsqueeze(2) - joints.unsqueeze(1)  # (B, N, J, 3)
        d2 = (offsets * offsets).sum(-1, keepdim=True)
        geometry = torch.cat([offsets, torch.sqrt(d2 + 1e-12)], dim=-1) * POSITION_SCALE
        hidden = self.point(mesh).unsqueeze(2) + self.joint(skeleton).unsqueeze(1) + self.geometry(geometry)
        return self.out(F.relu(hidden)).squeeze(-1), d2.squeeze(-1)


def vertex_features(points, normals, joints):
    """Skeleton-aware vertex features: points (B, N, 3), normals (B, N, 3), joints (B, J, 3) →
    (B, N, 6 + 4J): xyz, normal, distance to each joint, offset from each joint."""
    b, n, _ = points.shape
    j = joints.shape[1]
    offsets = points.unsqueeze(2) - joints.unsqueeze(1)  # (B, N, J, 3)
    distances = torch.sqrt((offsets * offsets).sum(-1) + 1e-12)
    return torch.cat([points, normals, distances, offsets.reshape(b, n, 3 * j)], dim=-1)


class PointRigNet(nn.Module):
    """See the module doc. widths: channels per level (level l has N/4^l points), blocks: attention blocks per level
    on the way down (one on the way up), neighbours: k of the kNN attention, heads: attention heads, head_width:
    channels of the full-resolution mutual attention and the heads, pair_width: hidden units of the point–joint pair
    MLPs (joint votes, weights), position_width: hidden units of the neighbours' position features."""

    def __init__(self, widths=(32, 64, 128), blocks=2, neighbours=16, heads=4, head_width=64, pair_width=16, position_width=16,
                 joints=JOINT_COUNT):
        super().__init__()
        self.config = dict(widths=list(widths), blocks=blocks, neighbours=neighbours, heads=heads,
                           head_width=head_width, pair_width=pair_width, position_width=position_width, joints=joints)
        self.neighbours = neighbours
        self.levels = len(widths)
        w0 = widths[0]
        self.embed = nn.Sequential(nn.Linear(6 + 4 * joints, w0), nn.LayerNorm(w0), nn.ReLU(), nn.Linear(w0, w0))
        # per level, the position features of each point's neighbours that all its attention blocks read
        self.position = nn.ModuleList(nn.Linear(3, position_width) for _ in widths)
        self.encoder = nn.ModuleList(
            nn.ModuleList(PointAttention(w, heads, position_width) for _ in range(blocks)) for w in widths)
        self.down = nn.ModuleList(Downsample(widths[l], widths[l + 1]) for l in range(self.levels - 1))
        self.up = nn.ModuleList(Upsample(widths[l + 1], widths[l]) for l in range(self.levels - 1))
        self.decoder = nn.ModuleList(PointAttention(widths[l], heads, position_width) for l in range(self.levels - 1))
        self.skeleton = SkeletonEncoder(widths[-1], joints)
        self.coarse_mutual = MutualAttention(widths[-1], heads)
        self.mesh_to_head = nn.Linear(w0, head_width)
        self.skeleton_to_head = nn.Linear(widths[-1], head_width)
        self.fine_mutual = MutualAttention(head_width, heads)
        # Joints: each joint votes over the points (a Gaussian around its coarse position, reshaped by learned scores);
        # the voted centroid is blended in by a learned gate and a small offset is added.
        self.vote = PairHead(head_width, pair_width)
        nn.init.zeros_(self.vote.out.weight)
        nn.init.zeros_(self.vote.out.bias)
        self.vote_log_radius = nn.Parameter(torch.full((joints,), math.log(VOTE_RADIUS)))
        self.vote_gate = nn.Linear(head_width, 1)
        nn.init.zeros_(self.vote_gate.weight)
        nn.init.zeros_(self.vote_gate.bias)
        self.offset_head = nn.Sequential(nn.Linear(head_width, head_width), nn.ReLU(), nn.Linear(head_width, 3))
        nn.init.zeros_(self.offset_head[-1].weight)
        nn.init.zeros_(self.offset_head[-1].bias)
        self.weight_head = PairHead(head_width, pair_width)
        mask = torch.zeros(joints)
        mask[HEAD_TOP] = MASKED_LOGIT
        self.register_buffer("logit_mask", mask, persistent=False)

    def forward_logits(self, points, normals, joints):
        """→ refined joints (B, J, 3) and weight logits (B, N, J) (HeadTop_End masked); see forward."""
        level_points = [points]
        for _ in range(1, self.levels):
            level_points.append(points[:, : level_points[-1].shape[1] // 4])
        with torch.no_grad():
            within = [nearest_neighbours(p, p, self.neighbours)[1] for p in level_points]
        # The neighbours' offsets serve every block of a level: gathered once.
        within_rel = [(gather_rows(p, i) - p.unsqueeze(2)) * POSITION_SCALE for p, i in zip(level_points, within)]
        position = [F.relu(encode(rel)) for encode, rel in zip(self.position, within_rel)]

        f = self.embed(vertex_features(points, normals, joints))
        skips = []
        for l in range(self.levels):
            if l > 0:
                with torch.no_grad():
                    into_finer = nearest_neighbours(level_points[l], level_points[l - 1], self.neighbours)[1]
                f = self.down[l - 1](f, level_points[l - 1], level_points[l], into_finer)
            for block in self.encoder[l]:
                f = block(f, within[l], within_rel[l], position[l])
            skips.append(f)

        skeleton = self.skeleton(joints)
        f, skeleton = self.coarse_mutual(f, skeleton)
        for l in reversed(range(self.levels - 1)):
            with torch.no_grad():
                d2, nearest = nearest_neighbours(level_points[l], level_points[l + 1], 3)
            f = self.up[l](f, skips[l], d2, nearest)
            f = self.decoder[l](f, within[l], within_rel[l], position[l])

        mesh, skeleton = self.fine_mutual(self.mesh_to_head(f), self.skeleton_to_head(skeleton))
        vote_scores, d2 = self.vote(mesh, skeleton, points, joints)
        radius = torch.exp(self.vote_log_radius)
        votes = torch.softmax(vote_scores - d2 / (2.0 * radius * radius), dim=1)  # (B, N, J), over the points
        centroid = torch.matmul(votes.transpose(1, 2), points)  # (B, J, 3)
        gate = torch.sigmoid(self.vote_gate(skeleton))  # (B, J, 1)
        refined = joints + gate * (centroid - joints) + OFFSET_SCALE * self.offset_head(skeleton)

        # Weights relate each point to the refined joints; their loss must not move the joints (that is the MSE's job).
        scores, _ = self.weight_head(mesh, skeleton, points, refined.detach())
        logits = scores + self.logit_mask
        return refined, logits

    def forward(self, points, normals, joints, return_logits=False):
        """points (B, N, 3) farthest-point ordered, N a multiple of 16 and ≥ 256, normals (B, N, 3), joints (B, 23, 3)
        coarse → refined joints (B, 23, 3), weights (B, N, 23) (rows sum to 1, HeadTop_End 0); with return_logits
        (training) the weights' logits instead of the weights."""
        refined, logits = self.forward_logits(points, normals, joints)
        return refined, (logits if return_logits else torch.softmax(logits, dim=-1))


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())
