"""The template rig the rig-structured vertex decoder (RigDecoder) poses: joint frames, rotation vectors → rotations,
the chain of joint transforms, and the two skinnings. Every function is batched over B characters (torch, float32,
differentiable in the rotation vectors). Shapes: J = 23 template joints (MIXAMO_JOINTS order), A anchors.

Conventions shared with the TypeScript apply path (they MUST stay identical there):
  joint_frames    the bone frame E_j of each joint (columns e1 along the bone, e2 towards forward, e3 = e1 × e2),
  rodrigues       world rotation R_j = Rodrigues(E_j ω_local),
  pose_transforms sidecar/deform/linearBlendSkinning.ts poseTransforms (world axes, about each rest head, parents
                  first), row-major 3x4 [R | t],
  skinning        LBS as linearBlendSkinning.ts (models/training/pose_weights/losses.py `skin`), DQS as
                  dualQuaternionSkinning.ts (its dual quaternions built here from the rotations themselves, see
                  joint_dual_quaternions)."""
import torch

from pose_weights.losses import UNWEIGHTED_SUM, skin

JOINTS = ["Hips", "Spine", "Spine1", "Spine2", "Neck", "Head", "HeadTop_End",
          "LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand",
          "RightShoulder", "RightArm", "RightForeArm", "RightHand",
          "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase",
          "RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"]
_PARENT_NAMES = {"Hips": None, "Spine": "Hips", "Spine1": "Spine", "Spine2": "Spine1", "Neck": "Spine2",
                 "Head": "Neck", "HeadTop_End": "Head", "LeftShoulder": "Spine2", "LeftArm": "LeftShoulder",
                 "LeftForeArm": "LeftArm", "LeftHand": "LeftForeArm", "RightShoulder": "Spine2",
                 "RightArm": "RightShoulder", "RightForeArm": "RightArm", "RightHand": "RightForeArm",
                 "LeftUpLeg": "Hips", "LeftLeg": "LeftUpLeg", "LeftFoot": "LeftLeg", "LeftToeBase": "LeftFoot",
                 "RightUpLeg": "Hips", "RightLeg": "RightUpLeg", "RightFoot": "RightLeg", "RightToeBase": "RightFoot"}
# The child whose head is each joint's bone tail (sidecar/skeleton/mixamoTemplate.ts TAIL_CHILD); the leaves have none.
_TAIL_NAMES = {"Hips": "Spine", "Spine": "Spine1", "Spine1": "Spine2", "Spine2": "Neck", "Neck": "Head",
               "Head": "HeadTop_End", "LeftShoulder": "LeftArm", "LeftArm": "LeftForeArm", "LeftForeArm": "LeftHand",
               "RightShoulder": "RightArm", "RightArm": "RightForeArm", "RightForeArm": "RightHand",
               "LeftUpLeg": "LeftLeg", "LeftLeg": "LeftFoot", "LeftFoot": "LeftToeBase",
               "RightUpLeg": "RightLeg", "RightLeg": "RightFoot", "RightFoot": "RightToeBase"}
PARENTS = [JOINTS.index(_PARENT_NAMES[n]) if _PARENT_NAMES[n] else -1 for n in JOINTS]
TAIL_CHILD = [JOINTS.index(_TAIL_NAMES[n]) if n in _TAIL_NAMES else -1 for n in JOINTS]
# The joints whose e1 is not their own bone but the bone their poses' axes are read from
# (sidecar/pose/poseVocabulary.ts): the elbow's hinge is square to the upper arm, the knee's to the thigh, the spine
# turns about Spine → Neck and the head about Neck → HeadTop_End; the hand, a leaf, keeps the forearm's own bone
# (ForeArm → Hand), which the wrist bends about, where it would otherwise inherit the forearm's new frame. In these
# frames every pose of the vocabulary is the same local rotation on every skeleton, a bent rest elbow or a curved spine
# included (sidecar/pose/jointFrames.ts FRAME_BONES, the same table).
_FRAME_BONE_NAMES = {"LeftForeArm": ("LeftArm", "LeftForeArm"), "RightForeArm": ("RightArm", "RightForeArm"),
                     "LeftHand": ("LeftForeArm", "LeftHand"), "RightHand": ("RightForeArm", "RightHand"),
                     "LeftLeg": ("LeftUpLeg", "LeftLeg"), "RightLeg": ("RightUpLeg", "RightLeg"),
                     "Spine": ("Spine", "Neck"), "Spine1": ("Spine", "Neck"), "Spine2": ("Spine", "Neck"),
                     "Neck": ("Neck", "HeadTop_End"), "Head": ("Neck", "HeadTop_End")}
# The joints whose frame takes forward itself as e2 and the bone made square to forward as e1 (forward first): the
# upper arms, whose shoulderRaise turns about forward whatever the arm's tilt (jointFrames.ts FORWARD_FIRST_JOINTS).
_FORWARD_FIRST_NAMES = ("LeftArm", "RightArm")
FORWARD_FIRST = [n in _FORWARD_FIRST_NAMES for n in JOINTS]
# each joint's frame bone (from, to) as JOINTS indices: its own bone (joint → tail child) unless listed above; None
# for a leaf
FRAME_BONE = [(JOINTS.index(_FRAME_BONE_NAMES[n][0]), JOINTS.index(_FRAME_BONE_NAMES[n][1])) if n in _FRAME_BONE_NAMES
              else ((j, TAIL_CHILD[j]) if TAIL_CHILD[j] >= 0 else None) for j, n in enumerate(JOINTS)]

# A bone shorter than this (canonical units: the character's longest side is 1) has no direction of its own.
MIN_BONE_LENGTH = 1e-6
# Below this |g| the forward axis is too close to the bone to fix its roll: up is used instead.
MIN_ROLL_LEVER = 0.2
# Below this angle² the Taylor series of the rotation coefficients replace the closed forms (exact to float32 there,
# and with the right derivative at 0, where training starts).
SMALL_ANGLE_SQUARED = 1e-6


def _unit(v):
    return v / v.norm(dim=-1, keepdim=True).clamp_min(1e-30)


def joint_frames(heads):
    """Every joint's bone frame. e1: the unit direction of its frame bone (FRAME_BONE: head → tail child's head, or
    the bone its poses turn about; a leaf, or a bone shorter than MIN_BONE_LENGTH, takes its parent's e1; Hips without
    a usable Spine takes up (0, 1, 0)); e2: forward (0, 0, 1) made orthogonal to e1 and normalised, or up (0, 1, 0)
    the same way when that leaves less than MIN_ROLL_LEVER; e3 = e1 × e2. FORWARD_FIRST joints, where forward leaves
    at least MIN_ROLL_LEVER, take e2 = forward and e1 = the bone made square to forward instead.
    heads (B, J, 3) canonical rest joint heads → (B, J, 3, 3), COLUMNS e1, e2, e3."""
    B = heads.shape[0]
    up = heads.new_tensor([0.0, 1.0, 0.0]).expand(B, 3)
    forward = heads.new_tensor([0.0, 0.0, 1.0]).expand(B, 3)
    e1 = []
    for j, frame_bone in enumerate(FRAME_BONE):
        inherited = e1[PARENTS[j]] if PARENTS[j] >= 0 else up
        if frame_bone is None:
            e1.append(inherited)
            continue
        bone = heads[:, frame_bone[1]] - heads[:, frame_bone[0]]
        length = bone.norm(dim=-1, keepdim=True)
        e1.append(torch.where(length >= MIN_BONE_LENGTH, bone / length.clamp_min(MIN_BONE_LENGTH), inherited))
    e1 = torch.stack(e1, dim=1)
    g = forward[:, None] - (e1 * forward[:, None]).sum(-1, keepdim=True) * e1
    g_up = up[:, None] - (e1 * up[:, None]).sum(-1, keepdim=True) * e1
    lever = g.norm(dim=-1, keepdim=True) >= MIN_ROLL_LEVER
    e2 = _unit(torch.where(lever, g, g_up))
    # forward first: e2 = forward, e1 = the bone made square to it (only where forward is not too aligned)
    first = lever & e1.new_tensor(FORWARD_FIRST, dtype=torch.bool)[None, :, None]
    flat = _unit(e1 - (e1 * forward[:, None]).sum(-1, keepdim=True) * forward[:, None])
    e1 = torch.where(first, flat, e1)
    e2 = torch.where(first, forward[:, None].expand_as(e2), e2)
    e3 = torch.cross(e1, e2, dim=-1)
    return torch.stack([e1, e2, e3], dim=-1)


def world_rotation_vectors(frames, local):
    """ω = E_j ω_local: frames (B, J, 3, 3) (joint_frames), local (B, J, 3) → (B, J, 3) in world (canonical) axes."""
    return torch.einsum("bjrc,bjc->bjr", frames, local)


def _angle_coefficients(omega):
    """θ² = |ω|² and the Rodrigues coefficients sin θ / θ, (1 − cos θ) / θ², smooth through θ = 0.
    omega (…, 3) → three tensors (…, 1)."""
    theta2 = (omega * omega).sum(-1, keepdim=True)
    small = theta2 < SMALL_ANGLE_SQUARED
    theta = torch.where(small, torch.ones_like(theta2), theta2).sqrt()
    a = torch.where(small, 1.0 - theta2 / 6.0, torch.sin(theta) / theta)
    b = torch.where(small, 0.5 - theta2 / 24.0, (1.0 - torch.cos(theta)) / (theta * theta))
    return theta2, a, b


def rodrigues(omega):
    """Rotation matrices of rotation vectors (angle |ω| about ω / |ω|, identity at 0): R = I + a K + b K², K the cross
    product matrix of ω, a = sin θ / θ, b = (1 − cos θ) / θ². omega (…, 3) → (…, 3, 3)."""
    _, a, b = _angle_coefficients(omega)
    x, y, z = omega.unbind(-1)
    zero = torch.zeros_like(x)
    K = torch.stack([torch.stack([zero, -z, y], -1), torch.stack([z, zero, -x], -1),
                     torch.stack([-y, x, zero], -1)], -2)
    eye = torch.eye(3, dtype=omega.dtype, device=omega.device)
    return eye + a[..., None] * K + b[..., None] * (K @ K)


def rotation_quaternions(omega):
    """Unit quaternions of rotation vectors: (cos θ/2, sin(θ/2)/θ · ω), smooth through θ = 0.
    omega (…, 3) → (…, 4) [w, x, y, z]."""
    theta2 = (omega * omega).sum(-1, keepdim=True)
    small = theta2 < SMALL_ANGLE_SQUARED
    theta = torch.where(small, torch.ones_like(theta2), theta2).sqrt()
    w = torch.where(small, 1.0 - theta2 / 8.0, torch.cos(0.5 * theta))
    s = torch.where(small, 0.5 - theta2 / 48.0, torch.sin(0.5 * theta) / theta)
    return torch.cat([w, s * omega], dim=-1)


def quaternion_product(p, q):
    """Hamilton product p·q: (…, 4) [w, x, y, z] each → (…, 4)."""
    pw, pv = p[..., :1], p[..., 1:]
    qw, qv = q[..., :1], q[..., 1:]
    return torch.cat([pw * qw - (pv * qv).sum(-1, keepdim=True),
                      pw * qv + qw * pv + torch.cross(pv, qv, dim=-1)], dim=-1)


def pose_transforms(heads, rotations):
    """World transform of every joint, as poseTransforms: T_j = T_parent · [R_j | h_j − R_j h_j], Hips' its own local
    transform. heads (B, J, 3) rest heads, rotations (B, J, 3, 3) world rotations relative to rest → (B, J, 3, 4)
    row-major [R | t]."""
    local_t = heads - torch.einsum("bjrc,bjc->bjr", rotations, heads)
    out = []
    for j, p in enumerate(PARENTS):
        R, t = rotations[:, j], local_t[:, j]
        if p >= 0:
            Rp, tp = out[p][..., :3], out[p][..., 3]
            R, t = Rp @ R, torch.einsum("brc,bc->br", Rp, t) + tp
        out.append(torch.cat([R, t[..., None]], dim=-1))
    return torch.stack(out, dim=1)


def joint_dual_quaternions(omega, transforms):
    """Every joint's transform as a unit dual quaternion [rw rx ry rz dw dx dy dz], d = ½ (0, t) r, like
    dualQuaternionSkinning.ts jointDualQuaternions. The rotation r is composed down the chain from the rotation
    vectors (r_j = r_parent · q(ω_j)) instead of read back from the matrix: Shepperd's branches (pose_weights/losses.py
    rotation_quaternions) give NaN gradients at the rest pose, where training starts. The result is the same transform
    (possibly −q, which DQS's hemisphere flip makes irrelevant). omega (B, J, 3) world rotation vectors, transforms
    (B, J, 3, 4) (pose_transforms of the same rotations) → (B, J, 8)."""
    q = rotation_quaternions(omega)
    r = []
    for j, p in enumerate(PARENTS):
        r.append(q[:, j] if p < 0 else quaternion_product(r[p], q[:, j]))
    r = torch.stack(r, dim=1)
    t = transforms[..., 3]
    w, v = r[..., :1], r[..., 1:]
    dual_w = -0.5 * (t * v).sum(-1, keepdim=True)
    dual_v = 0.5 * (w * t + torch.cross(t, v, dim=-1))
    return torch.cat([r, dual_w, dual_v], dim=-1)


def _flatten_rows(indices, joints):
    """Batched slot indices (B, A, 4) into one joint table of B·J rows: → (B·A, 4), batch b's joint j at b·J + j."""
    B = indices.shape[0]
    offset = torch.arange(B, device=indices.device)[:, None, None] * joints
    return (indices + offset).reshape(-1, indices.shape[-1])


def linear_blend_skinning(rest, indices, weights, transforms):
    """LBS of every character's points: rest (B, A, 3), indices (B, A, 4) int64, weights (B, A, 4), transforms
    (B, J, 3, 4) → (B, A, 3). pose_weights/losses.py `skin` over all characters at once."""
    B, A, J = rest.shape[0], rest.shape[1], transforms.shape[1]
    posed = skin(rest.reshape(B * A, 3), _flatten_rows(indices, J), weights.reshape(B * A, -1),
                 transforms.reshape(B * J, 12))
    return posed.reshape(B, A, 3)


def dual_quaternion_skinning(rest, indices, weights, dual_quaternions):
    """DQS of every character's points, as dualQuaternionSkinning.ts (and pose_weights/losses.py
    skin_dual_quaternion, from which it differs only by taking the dual quaternions): per point each slot's dual
    quaternion flipped to the hemisphere of the row's strongest slot (the first of equal weights), blended with the
    weights, divided by the blend's rotation norm; a row whose weights sum below UNWEIGHTED_SUM, or with no positive
    weight, stays at rest. rest (B, A, 3), indices (B, A, 4) int64, weights (B, A, 4), dual_quaternions (B, J, 8)
    (joint_dual_quaternions) → (B, A, 3)."""
    B, A, J = rest.shape[0], rest.shape[1], dual_quaternions.shape[1]
    dq = dual_quaternions.reshape(B * J, 8)[_flatten_rows(indices, J)]  # (B·A, 4, 8)
    w = weights.reshape(B * A, -1)
    p = rest.reshape(B * A, 3)
    strongest = w.argmax(dim=1)
    pivot = dq[torch.arange(dq.shape[0], device=dq.device), strongest, :4]
    signed = torch.where((dq[..., :4] * pivot[:, None, :]).sum(-1) >= 0, w, -w)
    blend = (signed[..., None] * dq).sum(dim=1)
    blend = blend / blend[:, :4].norm(dim=-1, keepdim=True).clamp_min(1e-12)
    r_w, r_v, d_w, d_v = blend[:, :1], blend[:, 1:4], blend[:, 4:5], blend[:, 5:8]
    rotated = p + 2 * torch.cross(r_v, torch.cross(r_v, p, dim=-1) + r_w * p, dim=-1)
    translation = 2 * (r_w * d_v - d_w * r_v + torch.cross(r_v, d_v, dim=-1))
    weighted = (w.sum(dim=1) >= UNWEIGHTED_SUM) & (w.max(dim=1).values > 0)
    return torch.where(weighted[:, None], rotated + translation, p).reshape(B, A, 3)


def posed_variants(heads, local, rest, indices, weights):
    """The three pair kinds of a pose given as local rotation vectors: skinning (LBS), corrective (rest + DQS − LBS)
    and skinningCorrective (DQS), in VARIANTS order. heads (B, J, 3), local (B, J, 3) radians in joint_frames,
    rest (B, A, 3), indices (B, A, 4) int64, weights (B, A, 4) → (B, 3, A, 3)."""
    omega = world_rotation_vectors(joint_frames(heads), local)
    transforms = pose_transforms(heads, rodrigues(omega))
    lbs = linear_blend_skinning(rest, indices, weights, transforms)
    dqs = dual_quaternion_skinning(rest, indices, weights, joint_dual_quaternions(omega, transforms))
    return torch.stack([lbs, rest + (dqs - lbs), dqs], dim=1)
