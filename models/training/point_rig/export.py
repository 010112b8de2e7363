"""PointRigNet → ONNX (opset 17, dynamic batch and point count) plus a check file: one fixed input and PyTorch's output
for it, which the TypeScript tests replay through onnxruntime-node."""
import json
import warnings

import numpy as np
import onnx
import torch

from .skeleton import HEAD_TOP, JOINT_NAMES

OPSET = 17
INPUT_NAMES = ["points", "normals", "joints"]
OUTPUT_NAMES = ["refined_joints", "weights"]
# What the sidecar must know to feed the model; also written into the ONNX file's metadata.
CONTRACT = (
    "points (B, N, 3) and normals (B, N, 3) in the canonical frame (unit box), N a multiple of 16 and at least 256, "
    "ordered by farthest_point_order (first the point nearest the centroid, then farthest-point picks; at least the "
    "first N/4 must be picks); joints (B, 23, 3) coarse joint heads, MIXAMO_JOINTS order. "
    "Outputs refined_joints (B, 23, 3), weights (B, N, 23): softmax over the 22 deforming joints, HeadTop_End 0."
)


def export_onnx(model, path, metadata=None, example_points=256):
    """Write model (a PointRigNet, put in eval mode) to path as ONNX opset 17 with dynamic batch and point axes, the
    model config, joint names and CONTRACT in its metadata; then onnx.checker. → size in bytes."""
    model.eval()
    g = torch.Generator().manual_seed(0)
    example = (
        torch.rand(1, example_points, 3, generator=g) - 0.5,
        torch.nn.functional.normalize(torch.randn(1, example_points, 3, generator=g), dim=-1),
        torch.rand(1, len(JOINT_NAMES), 3, generator=g) - 0.5,
    )
    dynamic = {
        "points": {0: "batch", 1: "points"}, "normals": {0: "batch", 1: "points"}, "joints": {0: "batch"},
        "refined_joints": {0: "batch"}, "weights": {0: "batch", 1: "points"},
    }
    # The tracer warns about every Python value it records (shape arithmetic, the return_logits branch); the exported
    # graph is run at other batch sizes and point counts by test/train-point-rig.test.ts, so here they are only noise.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, example, path, opset_version=OPSET, input_names=INPUT_NAMES,
                          output_names=OUTPUT_NAMES, dynamic_axes=dynamic, do_constant_folding=True)
    proto = onnx.load(path)
    props = {"autorig.model": "point_rig", "autorig.joint_names": json.dumps(JOINT_NAMES),
             "autorig.head_top": str(HEAD_TOP), "autorig.config": json.dumps(model.config),
             "autorig.contract": CONTRACT}
    for key, value in {**props, **(metadata or {})}.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, str(value)
    onnx.checker.check_model(proto)
    onnx.save(proto, path)
    return len(proto.SerializeToString())


def write_check(model, path, points, normals, joints):
    """The check file: inputs points (1, N, 3), normals (1, N, 3), joints (1, 23, 3) as numpy float32 and PyTorch's
    outputs for them, as JSON {opset, tolerance, inputs: {name: {dims, data}}, outputs: {name: {dims, data}}}."""
    model.eval()
    with torch.no_grad():
        refined, weights = model(torch.from_numpy(points), torch.from_numpy(normals), torch.from_numpy(joints))
    tensor = lambda a: {"dims": list(a.shape), "data": [float(v) for v in np.asarray(a, dtype=np.float32).ravel()]}
    check = {
        "opset": OPSET,
        "tolerance": 1e-4,
        "inputs": {"points": tensor(points), "normals": tensor(normals), "joints": tensor(joints)},
        "outputs": {"refined_joints": tensor(refined.numpy()), "weights": tensor(weights.numpy())},
    }
    with open(path, "w") as f:
        json.dump(check, f)
