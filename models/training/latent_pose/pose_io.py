"""Reads the latent-pose identities written by sidecar/data/poses/poseSample.ts (*.pose, a binary bundle; the blob
layout is in that file's comment), their rigs (*.poserig side files, sidecar/data/poses/poseRig.ts), and splits them
by identity."""
import json
import struct
from pathlib import Path

from sample_io import read_bundle

POSE_SAMPLE_FORMAT = "autorig-pose-sample/1"
POSE_RIG_FORMAT = "autorig-pose-rig/1"
VARIANTS = ["skinning", "corrective", "skinningCorrective"]


def read_pose_sample(path):
    """path → dict: header; neutralSdfPoints (N, 3), neutralSdf (N,), anchorPositions (A, 3), anchorNormals (A, 3),
    stateSdfPoints (P, 3, N, 3), stateSdf (P, 3, N), stateAnchors (P, 3, A, 3) (pose p, variant v as in the header),
    anchorIndices (A,) u32. All float32 but the indices, canonical frame of the neutral."""
    header, blobs = read_bundle(path)
    if header.get("format") != POSE_SAMPLE_FORMAT or len(blobs) != 8:
        raise ValueError(f"{path}: not a {POSE_SAMPLE_FORMAT} file")
    if header["variants"] != VARIANTS:
        raise ValueError(f"{path}: variants {header['variants']}, expected {VARIANTS}")
    n, a, p = header["sdfCount"], header["anchorCount"], len(header["poses"])
    names = ["neutralSdfPoints", "neutralSdf", "anchorPositions", "anchorNormals", "stateSdfPoints", "stateSdf",
             "stateAnchors", "anchorIndices"]
    shapes = [(n, 3), (n,), (a, 3), (a, 3), (p, 3, n, 3), (p, 3, n), (p, 3, a, 3), (a,)]
    out = {"header": header}
    for name, blob, shape in zip(names, blobs, shapes):
        out[name] = blob.reshape(shape)
    return out


def pose_rig_path(pose_path):
    """The *.poserig side file of a *.pose path (same folder and stem)."""
    return str(Path(pose_path).with_suffix(".poserig"))


def read_pose_rig(path, joints=None):
    """path (*.poserig) → dict: header; joints (J, 3) float32 rest joint heads (canonical frame of the neutral, the
    .pose file's), weightIndices (A, k) int64 joint indices, weights (A, k) float32 (rows sum to 1, zero padding).
    joints: the joint names the file must list (in order), or None to accept any."""
    header, blobs = read_bundle(path)
    if header.get("format") != POSE_RIG_FORMAT or len(blobs) != 3:
        raise ValueError(f"{path}: not a {POSE_RIG_FORMAT} file")
    if joints is not None and header["joints"] != list(joints):
        raise ValueError(f"{path}: joints {header['joints']}, expected {list(joints)}")
    j, k, a = len(header["joints"]), header["influences"], header["anchorCount"]
    return {"header": header, "joints": blobs[0].reshape(j, 3), "weightIndices": blobs[1].reshape(a, k).astype("int64"),
            "weights": blobs[2].reshape(a, k)}


def read_identity(path):
    """The identity name in a *.pose file's header, without reading its blobs."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<I", f.read(4))
        return json.loads(f.read(length).decode("utf-8"))["identity"]


def list_pose_files(folder):
    """Every *.pose file under folder, sorted by name (the split and every run depend on this order)."""
    return sorted(str(p) for p in Path(folder).rglob("*.pose"))


def split_by_identity(files, every=10):
    """Deterministic split by identity (one file = one identity): every `every`-th file by sorted name, starting with
    the first, is validation; with fewer than 2 files nothing is held out. files (sorted) → (train, validation)."""
    if len(files) < 2:
        return list(files), []
    val = [f for i, f in enumerate(files) if i % every == 0]
    train = [f for i, f in enumerate(files) if i % every != 0]
    return train, val


def split_after_encoder(files, names, encoder_train, encoder_val, every=10):
    """Phase B's split when the frozen encoder was trained on another set of identities: the ones the encoder held
    out stay held out, the ones it trained on train, and the ones it never saw are split by split_by_identity among
    themselves. So validation identities are unseen by both networks, and on phase A's own data this is phase A's
    split. files (sorted), names: their identities; encoder_train, encoder_val: phase A's names → (train, val)."""
    seen_train, seen_val = set(encoder_train), set(encoder_val)
    unseen = [f for f, n in zip(files, names) if n not in seen_train and n not in seen_val]
    _, unseen_val = split_by_identity(unseen, every)
    held_out = set(unseen_val) | {f for f, n in zip(files, names) if n in seen_val}
    return [f for f in files if f not in held_out], [f for f in files if f in held_out]
