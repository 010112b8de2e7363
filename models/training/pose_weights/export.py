"""The weight field → ONNX (models/pose_weights.onnx) and its check file (one fixed input and PyTorch's output for
it, replayed through onnxruntime-node by test/train-pose-weights.test.ts; here through onnxruntime when installed).

Contract: input `features` float32 (N, 28), output `weights` float32 (N, 4) (rows sum to one), N dynamic; the graph
holds the positional encoding, the MLP, the rest-pose subtraction and the softmax (models/training/pose_weights/
model.py)."""
import json
import warnings

import numpy as np
import onnx
import torch

OPSET = 17
INPUTS, OUTPUTS = ["features"], ["weights"]
TOLERANCE = 1e-5
CONTRACT = __doc__.split("Contract: ", 1)[1].strip()


def export_field(field, path, metadata):
    """Write the field (N dynamic) with metadata {key: value} → size in bytes."""
    field.eval()
    example = torch.zeros(64, 28)
    example[:, 3] = 1.0
    # The tracer warns about every Python value it records; the test runs the graph at other sizes.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(field, (example,), path, opset_version=OPSET, input_names=INPUTS, output_names=OUTPUTS,
                          dynamic_axes={"features": {0: "vertices"}, "weights": {0: "vertices"}},
                          do_constant_folding=True)
    proto = onnx.load(path)
    # the tracer leaves the slot axis of the softmax symbolic; the contract fixes it at 4
    proto.graph.output[0].type.tensor_type.shape.dim[1].dim_value = 4
    meta = {"autorig.contract": CONTRACT, "autorig.model": "pose_weights", "autorig.config": json.dumps(field.config),
            **metadata}
    for key, value in meta.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, str(value)
    onnx.checker.check_model(proto)
    onnx.save(proto, path)
    return len(proto.SerializeToString())


def _tensor(a):
    a = np.asarray(a, dtype=np.float32)
    return {"type": "float32", "dims": list(a.shape), "data": [float(v) for v in a.ravel()]}


def onnxruntime_difference(path, features, expected):
    """Largest |ONNX − PyTorch| on the check input through onnxruntime, or None when onnxruntime is not installed."""
    try:
        import onnxruntime
    except ImportError:
        return None
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    (got,) = session.run(OUTPUTS, {"features": features})
    return float(np.abs(got - expected).max())


def write_check(field, onnx_path, check_path, features):
    """The check file for features (C, 28) float32: JSON {opset, tolerance, inputs: {features}, outputs: {weights}}
    with PyTorch's output; returns the onnxruntime difference (None when it cannot be run here)."""
    field.eval()
    features = np.ascontiguousarray(features, dtype=np.float32)
    with torch.no_grad():
        weights = field(torch.from_numpy(features)).numpy()
    check = {"opset": OPSET, "tolerance": TOLERANCE, "inputs": {"features": _tensor(features)},
             "outputs": {"weights": _tensor(weights)}}
    with open(check_path, "w") as f:
        json.dump(check, f)
    return onnxruntime_difference(onnx_path, features, weights)
