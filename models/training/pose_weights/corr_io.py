"""Reads the pose-dependent skinning samples written by sidecar/data/correctives/correctivesSample.ts (*.corr, a binary
bundle; the blob layout is in that file's comment): per character its rest vertex subsample with static slots, and per
pose the field's features, the bone transforms and samples of the exact posed surface."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sample_io import read_bundle  # noqa: E402

CORR_SAMPLE_FORMAT = "autorig-correctives/1"
JOINTS = 23
SLOTS = 4
FEATURES_PER_SLOT = 7


def read_corr_sample(path):
    """path → dict: header (with poses: [{keys, fractions}], P of them); rest (N, 3), restNormals (N, 3),
    indices (N, 4) uint16 (slot joints, MIXAMO_JOINTS order), weights (N, 4) (static, rows sum to 1; padded slots 0),
    features (P, N, 4, 7) (slot k's 7 numbers: point in the bone frame / height, static weight, axis·angle),
    transforms (P, 23, 3, 4) (row-major 3x4: posed = A p + b with A = [..., :3], b = [..., 3]),
    surface (P, M, 3) and normals (P, M, 3) (the exact posed surface's samples and outward unit normals).
    All float32 but indices. Raises ValueError for another format or blob sizes that disagree with the header."""
    header, blobs = read_bundle(path)
    if header.get("format") != CORR_SAMPLE_FORMAT:
        raise ValueError(f"{path}: not a {CORR_SAMPLE_FORMAT} file")
    n, m, p = header["vertexCount"], header["surfaceCount"], len(header["poses"])
    if len(blobs) != 4 + 4 * p:
        raise ValueError(f"{path}: {len(blobs)} blobs for {p} poses, expected {4 + 4 * p}")
    per_pose = [("features", (n, SLOTS, FEATURES_PER_SLOT)), ("transforms", (JOINTS, 3, 4)), ("surface", (m, 3)),
                ("normals", (m, 3))]
    out = {"header": header}
    for name, blob, shape in zip(["rest", "restNormals", "indices", "weights"], blobs[:4],
                                 [(n, 3), (n, 3), (n, SLOTS), (n, SLOTS)]):
        out[name] = _shaped(path, name, blob, shape)
    for k, (name, shape) in enumerate(per_pose):
        out[name] = np.stack([_shaped(path, name, blobs[4 + 4 * q + k], shape) for q in range(p)]) if p else \
            np.zeros((0,) + shape, np.float32)
    return out


def _shaped(path, name, blob, shape):
    if blob.size != int(np.prod(shape)):
        raise ValueError(f"{path}: {name} has {blob.size} numbers, expected {shape}")
    return blob.reshape(shape)


def list_corr_files(folder):
    """Every *.corr file under folder, sorted by name (splits by name and every run depend on this order)."""
    return sorted(str(p) for p in Path(folder).rglob("*.corr"))
