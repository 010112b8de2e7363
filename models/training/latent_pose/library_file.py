"""The pose library's file (models/latent_pose_library.bin; read by sidecar/pose/poseLibrary.ts): a JSON header that
names every vector by its offset into a block of little-endian float64s. The sidecar reads it on every fresh
process; as JSON (format 1, 4 MiB of decimal numbers) parsing and checking it took 0.10–0.15 s there, as this file
a few milliseconds.

Layout:
    8 bytes   magic b"ARPOSLIB"
    4 bytes   uint32 LE: the header's length in bytes, H
    H bytes   the header, UTF-8 JSON: the library as build_library makes it (format 2), each vector (a pose's mean,
              an identity's muNeutral and delta) replaced by the index of its first float64 in the data block
    padding   zero bytes up to a multiple of 8 from the file's start
    data      float64 LE, to the end of the file; every vector is latentSize long

Convert a format-1 JSON library: /usr/bin/python3 -m latent_pose.library_file in.json out.bin (from models/training).
"""
import json
import struct
import sys

import numpy as np

LIBRARY_FORMAT = "autorig-latent-pose-library/2"
LIBRARY_MAGIC = b"ARPOSLIB"


def encode_library(library):
    """library: the dict build_library makes (vectors as lists of floats, format 1 or 2) → the file's bytes."""
    data = []
    offset = 0

    def place(values):
        nonlocal offset
        values = np.asarray(values, dtype="<f8").ravel()
        if values.shape[0] != library["latentSize"]:
            raise ValueError("a vector of %d values in a library of latentSize %d" % (values.shape[0], library["latentSize"]))
        data.append(values)
        at = offset
        offset += values.shape[0]
        return at

    header = {"format": LIBRARY_FORMAT}
    header.update({k: v for k, v in library.items() if k not in ("format", "poses")})
    header["poses"] = {}
    for pose, variants in library["poses"].items():
        header["poses"][pose] = {}
        for variant, entry in variants.items():
            header["poses"][pose][variant] = {
                "mean": place(entry["mean"]),
                "identities": [{"identity": i["identity"], "muNeutral": place(i["muNeutral"]), "delta": place(i["delta"])}
                               for i in entry.get("identities", [])],
            }
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    start = len(LIBRARY_MAGIC) + 4 + len(head)
    pad = (-start) % 8
    block = np.concatenate(data).astype("<f8").tobytes() if data else b""
    return LIBRARY_MAGIC + struct.pack("<I", len(head)) + head + b"\0" * pad + block


def write_library(path, library):
    with open(path, "wb") as f:
        f.write(encode_library(library))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python3 -m latent_pose.library_file in.json out.bin")
    with open(sys.argv[1]) as f:
        write_library(sys.argv[2], json.load(f))
