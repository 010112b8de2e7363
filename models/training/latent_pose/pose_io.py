"""Reads the latent-pose identities written by sidecar/data/poses/poseSample.ts (*.pose, a binary bundle; the blob
layout is in that file's comment) and splits them by identity."""
from pathlib import Path

from sample_io import read_bundle

POSE_SAMPLE_FORMAT = "autorig-pose-sample/1"
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
