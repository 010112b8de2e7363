#!/usr/bin/env python3
"""Replays a dual-quaternion skinning case computed by the sidecar (sidecar/deform/dualQuaternionSkinning.ts, written by
test/train-pose-weights.test.ts) through losses.skin_dual_quaternion, so that training poses vertices exactly as the
sidecar does at inference.

  /usr/bin/python3 models/training/pose_weights/check_dqs.py CASE.json

CASE.json: {rest: #N*3, indices: #N*4, weights: #N*4, transforms: #J*12 (row-major 3x4), posed: #N*3 (the sidecar's
answer)}. Prints one JSON line: {vertices, difference: largest |torch − sidecar| in float64, difference32: the same
with float32 inputs (as in training), lbsDifference: largest |LBS − sidecar| (how far the other skinning is, so that a
small difference means something)}."""
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pose_weights.losses import skin, skin_dual_quaternion  # noqa: E402


def largest_difference(case, dtype):
    """case: the parsed CASE.json, dtype: torch float type → (largest |DQS − sidecar|, largest |LBS − sidecar|)."""
    t = lambda key: torch.tensor(case[key], dtype=torch.float64).to(dtype)  # noqa: E731
    rest, weights, transforms = t("rest").reshape(-1, 3), t("weights").reshape(-1, 4), t("transforms").reshape(-1, 12)
    indices = torch.tensor(case["indices"], dtype=torch.int64).reshape(-1, 4)
    expected = torch.tensor(case["posed"], dtype=torch.float64).reshape(-1, 3)
    dqs = skin_dual_quaternion(rest, indices, weights, transforms).to(torch.float64)
    lbs = skin(rest, indices, weights / weights.sum(dim=1, keepdim=True).clamp_min(1e-12), transforms).to(torch.float64)
    return float((dqs - expected).abs().max()), float((lbs - expected).abs().max())


def main(argv):
    case = json.loads(Path(argv[0]).read_text())
    difference, lbs_difference = largest_difference(case, torch.float64)
    difference32, _ = largest_difference(case, torch.float32)
    print(json.dumps({"vertices": len(case["rest"]) // 3, "difference": difference, "difference32": difference32,
                      "lbsDifference": lbs_difference}))


if __name__ == "__main__":
    main(sys.argv[1:])
