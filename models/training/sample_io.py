"""Reads the training samples written by sidecar/data/trainingSample.ts (a binary bundle: u32 header length, JSON
header, zero padding to 8, then little-endian blobs each starting on a multiple of 8; see sidecar/io/binaryBundle.ts).
"""
import json
import struct
from pathlib import Path

import numpy as np

SAMPLE_FORMAT = "autorig-sample/1"
_DTYPES = {"f32": np.float32, "u32": np.uint32, "u16": np.uint16}
BLOB_NAMES = ["image", "joints", "joints2d", "points", "pointWeights", "pointNormals"]


def read_bundle(path):
    """path -> (header dict, list of numpy arrays, one per blob, flat)."""
    data = Path(path).read_bytes()
    (length,) = struct.unpack_from("<I", data, 0)
    header = json.loads(data[4 : 4 + length].decode("utf-8"))
    start = (4 + length + 7) & ~7
    blobs = []
    for entry in header["blobs"]:
        dtype = _DTYPES[entry["type"]]
        a = start + entry["offset"]
        blobs.append(np.frombuffer(data, dtype=dtype, count=entry["byteLength"] // np.dtype(dtype).itemsize, offset=a).copy())
    return header, blobs


def read_sample(path):
    """path -> dict: header, image (5,S,S), joints (J,3), joints2d (J,2), points (P,3), pointWeights (P,J),
    pointNormals (P,3); all float32, canonical frame (x left, y up, z forward, inside [-0.5, 0.5])."""
    header, blobs = read_bundle(path)
    if header.get("format") != SAMPLE_FORMAT:
        raise ValueError(f"{path}: not a {SAMPLE_FORMAT} file")
    s = header["imageSize"]
    p = header["pointCount"]
    j = len(header["jointNames"])
    image, joints, joints2d, points, weights, normals = blobs
    return {
        "header": header,
        "image": image.reshape(5, s, s),
        "joints": joints.reshape(j, 3),
        "joints2d": joints2d.reshape(j, 2),
        "points": points.reshape(p, 3),
        "pointWeights": weights.reshape(p, j),
        "pointNormals": normals.reshape(p, 3),
    }


def list_samples(folder):
    """Every sample file (*.sample) under folder, sorted by name so runs are reproducible."""
    return sorted(str(p) for p in Path(folder).rglob("*.sample"))
