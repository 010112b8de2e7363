"""Losses of the pose-dependent weight field for one (character, pose). Shapes: N vertices (a subsample of the rest
mesh), M ground-truth samples of the exactly posed surface, J joints (23). Distances are divided by the character's
height (through `scale`: train_pose_weights.py passes height / 100, percent of the height) so that every character
weighs the same."""
import torch

from .model import reweight

# A vertex whose largest static weight is at least this is rigid: one bone carries it, the field must leave it alone.
RIGID_WEIGHT = 0.999
# Rows of the first point set per torch.cdist call (bounds the distance matrix to CHUNK × M floats).
CHUNK = 1024


def slot_positions(rest, indices, transforms):
    """Each vertex moved rigidly by each of its slot joints: rest (N, 3), indices (N, 4) int64, transforms (J, 12)
    row-major 3x4 [r | t] per joint → (N, 4, 3), R_jk p + t_jk."""
    m = transforms.reshape(-1, 3, 4)[indices]  # (N, 4, 3, 4)
    return torch.einsum("nkab,nb->nka", m[..., :3], rest) + m[..., 3]


def skin(rest, indices, weights, transforms):
    """Linear blend skinning: rest (N, 3), indices (N, 4) int64, weights (N, 4), transforms (J, 12) → posed (N, 3)
    = Σ_k w_k (R_jk p + t_jk)."""
    return (weights[..., None] * slot_positions(rest, indices, transforms)).sum(dim=1)


# A row whose weights sum below this has no weight and stays where it is (sidecar/deform/linearBlendSkinning.ts
# UNWEIGHTED_SUM, which dual-quaternion skinning shares).
UNWEIGHTED_SUM = 1e-6


def rotation_quaternions(matrices):
    """Unit quaternions of rotation matrices, as sidecar/deform/dualQuaternionSkinning.ts rotationQuaternion: Shepperd's
    method (the branch of the largest of trace, m00, m11, m22, ties to the earlier), then divided by its norm (a nearly
    orthonormal or scaled matrix still gives a unit quaternion). matrices (J, 3, 3) → (J, 4) [w, x, y, z]."""
    m = matrices
    m00, m01, m02 = m[:, 0, 0], m[:, 0, 1], m[:, 0, 2]
    m10, m11, m12 = m[:, 1, 0], m[:, 1, 1], m[:, 1, 2]
    m20, m21, m22 = m[:, 2, 0], m[:, 2, 1], m[:, 2, 2]
    trace = m00 + m11 + m22
    root = lambda a: 2 * torch.sqrt(torch.clamp(1 + a, min=0))  # noqa: E731
    s0, s1, s2, s3 = root(trace), root(m00 - m11 - m22), root(m11 - m00 - m22), root(m22 - m00 - m11)
    cases = [
        torch.stack([s0 / 4, (m21 - m12) / s0, (m02 - m20) / s0, (m10 - m01) / s0], -1),
        torch.stack([(m21 - m12) / s1, s1 / 4, (m01 + m10) / s1, (m02 + m20) / s1], -1),
        torch.stack([(m02 - m20) / s2, (m01 + m10) / s2, s2 / 4, (m12 + m21) / s2], -1),
        torch.stack([(m10 - m01) / s3, (m02 + m20) / s3, (m12 + m21) / s3, s3 / 4], -1),
    ]
    first = (trace >= m00) & (trace >= m11) & (trace >= m22)
    second = ~first & (m00 >= m11) & (m00 >= m22)
    third = ~first & ~second & (m11 >= m22)
    q = torch.where(first[:, None], cases[0],
                    torch.where(second[:, None], cases[1], torch.where(third[:, None], cases[2], cases[3])))
    n = q.norm(dim=-1, keepdim=True)
    return q / torch.where(n > 0, n, torch.ones_like(n))


def joint_dual_quaternions(transforms):
    """Every joint's transform as a unit dual quaternion, as dualQuaternionSkinning.ts jointDualQuaternions: the 3x3
    part read as a rotation (a scale or shear is lost), the dual part d = ½ (0, t) r.
    transforms (J, 12) row-major 3x4 → (J, 8) [rw rx ry rz dw dx dy dz]."""
    m = transforms.reshape(-1, 3, 4)
    r = rotation_quaternions(m[..., :3])
    t = m[..., 3]
    w, v = r[:, :1], r[:, 1:]
    dual_w = -0.5 * (t * v).sum(-1, keepdim=True)
    dual_v = 0.5 * (w * t + torch.cross(t, v, dim=-1))
    return torch.cat([r, dual_w, dual_v], dim=-1)


def skin_dual_quaternion(rest, indices, weights, transforms):
    """Dual-quaternion skinning, differentiable in the weights, as sidecar/deform/dualQuaternionSkinning.ts
    dualQuaternionSkinning: per vertex every slot's dual quaternion is flipped to the hemisphere of the row's
    strongest slot (largest weight, the first of equal ones), blended with the weights (not renormalised: the division
    by the blend's rotation norm makes the scale irrelevant) and divided by that norm; a row whose weights sum below
    UNWEIGHTED_SUM, or with no positive weight, stays at rest. rest (N, 3), indices (N, 4) int64, weights (N, 4),
    transforms (J, 12) → posed (N, 3). The flips are fixed for the step (piecewise constant in the weights)."""
    dq = joint_dual_quaternions(transforms).to(weights.dtype)[indices]  # (N, 4, 8)
    strongest = weights.argmax(dim=1)
    pivot = dq[torch.arange(dq.shape[0], device=dq.device), strongest, :4]
    same_side = (dq[..., :4] * pivot[:, None, :]).sum(-1) >= 0
    signed = torch.where(same_side, weights, -weights)
    blend = (signed[..., None] * dq).sum(dim=1)  # (N, 8)
    # every flipped rotation is within 90° of the strongest, so a weighted row's norm is at least its largest weight;
    # the floor only keeps unweighted rows (replaced below) from dividing by zero
    norm = blend[:, :4].norm(dim=-1, keepdim=True).clamp_min(1e-12)
    blend = blend / norm
    r_w, r_v, d_w, d_v = blend[:, :1], blend[:, 1:4], blend[:, 4:5], blend[:, 5:8]
    rotated = rest + 2 * torch.cross(r_v, torch.cross(r_v, rest, dim=-1) + r_w * rest, dim=-1)
    translation = 2 * (r_w * d_v - d_w * r_v + torch.cross(r_v, d_v, dim=-1))
    weighted = (weights.sum(dim=1) >= UNWEIGHTED_SUM) & (weights.max(dim=1).values > 0)
    return torch.where(weighted[:, None], rotated + translation, rest)


SKINNINGS = {"lbs": skin, "dqs": skin_dual_quaternion}


@torch.no_grad()
def nearest(queries, points):
    """Index of the nearest of points (M, 3) for each of queries (N, 3) → (N,) int64 (cdist in chunks)."""
    out = []
    for start in range(0, queries.shape[0], CHUNK):
        out.append(torch.cdist(queries[start:start + CHUNK], points).argmin(dim=1))
    return torch.cat(out)


def surface_terms(posed, surface, normals, scale):
    """The data terms against the posed ground truth, each a mean and divided by scale:
    posed (N, 3), surface (M, 3), normals (M, 3) unit → dict
      point_to_plane: |n_q · (x − q)| for the nearest sample q of each x,
      point_to_point: ‖x − q‖ for the same pairs,
      gt_to_pred:     ‖q − x‖ for the nearest x of each sample q (the other direction of a Chamfer distance).
    Differentiable in posed (the nearest pairs are fixed for the step)."""
    q_of_x = nearest(posed, surface)
    offset = posed - surface[q_of_x]
    x_of_q = nearest(surface, posed)
    return {
        "point_to_plane": (offset * normals[q_of_x]).sum(-1).abs().mean() / scale,
        "point_to_point": offset.norm(dim=-1).mean() / scale,
        "gt_to_pred": (surface - posed[x_of_q]).norm(dim=-1).mean() / scale,
    }


def chamfer(posed, surface, scale):
    """Symmetric Chamfer distance, share of scale: ½ (mean nearest ‖x − q‖ over x + mean nearest over q), posed
    (N, 3), surface (M, 3) → scalar tensor."""
    a = (posed - surface[nearest(posed, surface)]).norm(dim=-1).mean()
    b = (surface - posed[nearest(surface, posed)]).norm(dim=-1).mean()
    return 0.5 * (a + b) / scale


@torch.no_grad()
def knn_graph(rest, k=8):
    """Each rest vertex's k nearest other vertices: rest (N, 3) → (N, k) int64, nearest first (itself excluded)."""
    out = []
    for start in range(0, rest.shape[0], CHUNK):
        d = torch.cdist(rest[start:start + CHUNK], rest)
        rows = torch.arange(start, start + d.shape[0])
        d[torch.arange(d.shape[0]), rows] = float("inf")
        out.append(d.topk(k, dim=1, largest=False).indices)
    return torch.cat(out)


def dense_weights(indices, weights, joints):
    """Slot weights → per-joint weights: indices (N, 4) int64, weights (N, 4) → (N, J); slots of one joint add up."""
    dense = torch.zeros(weights.shape[0], joints, dtype=weights.dtype, device=weights.device)
    return dense.scatter_add(1, indices, weights)


def laplacian_smoothness(change, neighbours):
    """Mean squared umbrella Laplacian of a per-joint field: change (N, J), neighbours (N, k) → scalar
    mean_v ‖c_v − mean_u c_u‖². Applied to the pose-dependent change of the weights (w − w_static, per joint), so
    that a pose may move weights only as a smooth field; the static weights' own shape is not penalised."""
    return (change - change[neighbours].mean(dim=1)).pow(2).sum(-1).mean()


def rigid_term(weights, static):
    """Rigid vertices (static max weight ≥ RIGID_WEIGHT) keep their static weights: weights, static (N, 4) → mean
    over those vertices of ‖w − w_static‖² (0 when there are none)."""
    rigid = static.max(dim=1).values >= RIGID_WEIGHT
    if not bool(rigid.any()):
        return weights.sum() * 0.0
    return (weights[rigid] - static[rigid]).pow(2).sum(-1).mean()


# The silhouette term looks at the vertices whose slot joints' rigid positions spread more than this share of the
# height (blend_region): where the weights matter in the pose.
SILHOUETTE_REGION = 0.01
# Views of the silhouette term: the two axes each orthographic view keeps (front: x, y; side: z, y; top: x, z).
SILHOUETTE_VIEWS = ((0, 1), (2, 1), (0, 2))
# Pixels along the longer side of a view's crop.
SILHOUETTE_PIXELS = 48
# The crop: the moving region's box grown by this share of its size and this share of the height (at least).
SILHOUETTE_MARGIN = 0.15
SILHOUETTE_MARGIN_HEIGHT = 0.02


def _closed_mask(mask, radius):
    """Morphological closing (dilate then erode, square of side 2·radius + 1) of a (R, R) 0/1 mask: fills the gaps
    between a surface's sparse samples."""
    k = 2 * radius + 1
    x = mask[None, None]
    x = torch.nn.functional.max_pool2d(x, k, stride=1, padding=radius)
    x = -torch.nn.functional.max_pool2d(-x, k, stride=1, padding=radius)
    return x[0, 0]


def silhouette_terms(posed, surface, region, scale, pixels=SILHOUETTE_PIXELS, views=SILHOUETTE_VIEWS):
    """Silhouettes from several views, as VINECS fits to images: around the posed joint (the box of the region's
    vertices, grown), each view's ground-truth silhouette is the closed mask of the posed surface's samples; the term is
    a silhouette Chamfer distance: the mean distance of the skinned vertices outside that silhouette to it (its distance
    transform, sampled bilinearly) plus the mean distance from the silhouette's boundary pixels to the nearest skinned
    vertex in the view. posed (N, 3), surface (M, 3), region (N,) bool, scale: what distances are divided by →
    scalar tensor (0 without a region). Differentiable in posed; masks, crops and pairs are fixed for the step."""
    if not bool(region.any()):
        return posed.sum() * 0.0
    with torch.no_grad():
        moving = posed[region]
        low, high = moving.min(dim=0).values, moving.max(dim=0).values
        grow = torch.clamp(SILHOUETTE_MARGIN * (high - low), min=SILHOUETTE_MARGIN_HEIGHT * scale * 100.0)
        low, high = low - grow, high + grow
        inside_gt = ((surface >= low) & (surface <= high)).all(dim=1)
        inside_pred = ((posed >= low) & (posed <= high)).all(dim=1)
    if not bool(inside_gt.any()) or not bool(inside_pred.any()):
        return posed.sum() * 0.0
    gt, pred = surface[inside_gt], posed[inside_pred]
    # every pixel's (row, column), the same grid in each view
    centres = torch.stack(torch.meshgrid(torch.arange(pixels), torch.arange(pixels), indexing="ij"), -1)
    centres = centres.reshape(-1, 2).to(posed.dtype)
    total = posed.sum() * 0.0
    for a, b in views:
        with torch.no_grad():
            origin = torch.stack([low[a], low[b]])
            extent = float(torch.max(high[a] - low[a], high[b] - low[b]))
            size = extent / pixels
            cells = torch.floor((gt[:, [a, b]] - origin) / size).long().clamp(0, pixels - 1)
            mask = torch.zeros(pixels, pixels, dtype=posed.dtype)
            mask[cells[:, 1], cells[:, 0]] = 1.0
            mask = _closed_mask(mask, 2)
            occupied = mask.nonzero().to(posed.dtype)  # (row, column) = (b, a)
            field = torch.cdist(centres, occupied).min(dim=1).values.reshape(pixels, pixels) * size
            eroded = -torch.nn.functional.max_pool2d(-mask[None, None], 3, stride=1, padding=1)[0, 0]
            boundary = (mask - eroded).nonzero().to(posed.dtype)
            boundary_points = origin + (boundary[:, [1, 0]] + 0.5) * size
        uv = pred[:, [a, b]]
        # grid_sample's (x, y) in [-1, 1] over the pixel centres' span: x along columns (axis a), y along rows (b)
        grid = ((uv - origin) / size - 0.5) / (pixels - 1) * 2 - 1
        outside = torch.nn.functional.grid_sample(field[None, None], grid[None, None], mode="bilinear",
                                                  padding_mode="border", align_corners=True)[0, 0, 0]
        total = total + outside.mean() / scale
        if boundary_points.shape[0]:
            with torch.no_grad():
                nearest_pred = torch.cdist(boundary_points, uv.detach()).argmin(dim=1)
            total = total + (uv[nearest_pred] - boundary_points).norm(dim=-1).mean() / scale
    return total / len(views)


def posed_laplacian(posed, reference, neighbours, scale):
    """Laplacian smoothness of the posed mesh: the mean squared difference between the umbrella Laplacians of the
    posed vertices and of the same vertices posed with the static weights (the surface's detail as static skinning
    keeps it), share of scale. posed, reference (N, 3), neighbours (N, k) → scalar tensor."""
    lap = posed - posed[neighbours].mean(dim=1)
    ref = reference - reference[neighbours].mean(dim=1)
    return ((lap - ref) / scale).pow(2).sum(-1).mean()


# Geodesic locality: a slot's joint farther than this share of the height from the vertex starts to cost weight.
LOCALITY_RADIUS = 0.1


def locality_term(features, weights, static):
    """Weights far from a joint's region penalised with exponent 3 (VINECS): per vertex and slot, the weight gained over
    the static one times (distance to the slot's joint / LOCALITY_RADIUS)³, the distance read from the features (the
    vertex in the slot joint's rest frame, share of the height; straight, as the region a slot joint's bones span).
    features (N, 28), weights, static (N, 4) → scalar tensor."""
    local = features.reshape(features.shape[0], 4, 7)[..., 0:3]
    reach = (local.norm(dim=-1) / LOCALITY_RADIUS).pow(3)
    return (torch.relu(weights - static) * reach).sum(-1).mean()


def pose_losses(field, sample, terms_weights, skinning=skin):
    """Every term for one (character, pose). sample: dict of tensors rest (N, 3), indices (N, 4) int64, weights (N, 4),
    neighbours (N, k), features (N, 28), transforms (J, 12), surface (M, 3), normals (M, 3), scale (what distances
    are divided by); terms_weights: dict term → factor; skinning: how the field's weights pose the vertices (skin or
    skin_dual_quaternion, SKINNINGS). → (loss, dict term → float)."""
    offsets = field.offsets(sample["features"])
    static = sample["weights"]
    weights = reweight(static, offsets)
    posed = skinning(sample["rest"], sample["indices"], weights, sample["transforms"])
    terms = surface_terms(posed, sample["surface"], sample["normals"], sample["scale"])
    joints = sample["transforms"].shape[0]
    change = dense_weights(sample["indices"], weights - static, joints)
    terms["smooth"] = laplacian_smoothness(change, sample["neighbours"])
    terms["rigid"] = rigid_term(weights, static)
    terms["delta"] = offsets.pow(2).sum(-1).mean()
    # the extra terms cost a pass each: computed only when weighted
    if terms_weights.get("silhouette", 0.0) > 0:
        region = blend_region(sample["rest"], sample["indices"], static, sample["transforms"],
                              SILHOUETTE_REGION * sample["scale"] * 100.0)
        terms["silhouette"] = silhouette_terms(posed, sample["surface"], region, sample["scale"])
    if terms_weights.get("posed_laplacian", 0.0) > 0:
        with torch.no_grad():
            reference = skinning(sample["rest"], sample["indices"], static, sample["transforms"])
        terms["posed_laplacian"] = posed_laplacian(posed, reference, sample["neighbours"], sample["scale"])
    if terms_weights.get("locality", 0.0) > 0:
        terms["locality"] = locality_term(sample["features"], weights, static)
    loss = sum(terms_weights.get(k, 0.0) * v for k, v in terms.items())
    return loss, {"loss": loss.item(), **{k: v.item() for k, v in terms.items()}}


@torch.no_grad()
def blend_region(rest, indices, static, transforms, threshold):
    """Where the weights matter in a pose: vertices whose real slots' rigidly moved positions spread more than
    threshold from their static LBS position (a vertex carried by joints that move together is not in it).
    rest (N, 3), indices (N, 4), static (N, 4), transforms (J, 12) → (N,) bool."""
    moved = slot_positions(rest, indices, transforms)
    blended = (static[..., None] * moved).sum(dim=1, keepdim=True)
    spread = (moved - blended).norm(dim=-1) * (static > 0)
    return spread.max(dim=1).values > threshold


@torch.no_grad()
def region_plane_distance(posed, surface, normals, region, scale):
    """Mean point-to-plane distance |n_q · (x − q)| to the nearest sample q over the region's vertices, share of scale:
    posed (N, 3), surface, normals (M, 3), region (N,) bool → float (nan for an empty region)."""
    if not bool(region.any()):
        return float("nan")
    x = posed[region]
    q = nearest(x, surface)
    return float(((x - surface[q]) * normals[q]).sum(-1).abs().mean() / scale)
