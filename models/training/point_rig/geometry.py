"""Point-cloud helpers: the farthest-point order that makes the network's levels plain prefixes, and the kNN search and
gathers it runs on (written with matmul, TopK and GatherElements only, so that they export to ONNX opset 17 with a
dynamic point count and no loops)."""
import numpy as np
import torch


def farthest_point_order(points, count=None):
    """Farthest-point order of a cloud, so that every prefix is spread over the whole surface.

    points: (N, 3) float array; count: how many points to pick by farthest-point sampling (default N).
    Returns an int64 permutation of range(N): first the point nearest the centroid, then each next point the one
    farthest (squared Euclidean, float64) from all picked so far, `count` in all; the points never picked follow in their
    original order. Ties go to the lowest index (numpy argmin/argmax), so the order is a pure function of the input:
    the sidecar's TypeScript port must reproduce it exactly.
    """
    p = np.asarray(points, dtype=np.float64)
    n = len(p)
    count = n if count is None else min(int(count), n)
    if n == 0 or count == 0:
        return np.arange(n, dtype=np.int64)
    centroid = p.mean(axis=0)
    first = int(np.argmin(((p - centroid) ** 2).sum(axis=1)))
    picked = np.empty(count, dtype=np.int64)
    picked[0] = first
    nearest = ((p - p[first]) ** 2).sum(axis=1)
    for i in range(1, count):
        nxt = int(np.argmax(nearest))
        picked[i] = nxt
        np.minimum(nearest, ((p - p[nxt]) ** 2).sum(axis=1), out=nearest)
    rest = np.ones(n, dtype=bool)
    rest[picked] = False
    return np.concatenate([picked, np.nonzero(rest)[0]])


def square_distances(query, reference):
    """query (B, N, 3), reference (B, M, 3) -> (B, N, M) squared distances, never negative.
    |q|² + |r|² − 2 q·r: a matmul instead of a (B, N, M, 3) difference tensor."""
    qq = (query * query).sum(-1, keepdim=True)
    return torch.clamp(qq + neighbour_scores(query, reference), min=0.0)


def neighbour_scores(query, reference):
    """query (B, N, 3), reference (B, M, 3) -> (B, N, M): |r|² − 2 q·r, the squared distance less |q|², which ranks
    each query's neighbours the same at a third of the cost (the (B, N, M) matrix is the largest in the network)."""
    rr = (reference * reference).sum(-1).unsqueeze(1)
    return torch.baddbmm(rr, query, reference.transpose(1, 2), alpha=-2.0)


def nearest_neighbours(query, reference, k):
    """query (B, N, 3), reference (B, M, 3), k ≤ M -> (squared distances (B, N, k), indices (B, N, k) into M)."""
    scores, idx = torch.topk(neighbour_scores(query, reference), k, dim=-1, largest=False, sorted=False)
    d2 = torch.clamp(scores + (query * query).sum(-1, keepdim=True), min=0.0)
    return d2, idx


def gather_rows(features, idx):
    """features (B, M, C), idx (B, N, k) int64 into M -> (B, N, k, C): row idx[b, n, j] of features[b].
    One row gather over the flattened batch (Gather on axis 0 in ONNX): far faster on a CPU than an element-wise
    gather with the index broadcast over the channels."""
    b, m, c = features.shape
    n, k = idx.shape[1], idx.shape[2]
    flat = (idx + (torch.arange(b, device=idx.device) * m).reshape(b, 1, 1)).reshape(-1)
    return torch.index_select(features.reshape(b * m, c), 0, flat).reshape(b, n, k, c)
