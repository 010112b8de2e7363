"""The encoder and the vertex decoder → ONNX (opset 17), each with a check file: one fixed input and PyTorch's output
for it, which test/train-latent-pose.test.ts replays through onnxruntime-node.

Contract (the sidecar's, sidecar/pose): names and shapes below, L = latentSize, K fixed per model (metadata
autorig.knn), A and N dynamic, batch 1 (other batch sizes also run).
  latent_pose_encoder.onnx: sdf_samples f32 (1, N, 4) [x, y, z, signed distance] → mu (1, L), logvar (1, L)
  latent_pose_decoder.onnx: points, normals f32 (1, A, 3); knn int64 (1, A, K): each point's K nearest OTHER points
    by Euclidean distance in the neutral (itself excluded), nearest first; mu_source, delta_direction (unit) f32
    (1, L); delta_norm f32 (1, 1); pair_kind f32 (1, 3) one-hot [skinning, corrective, skinningCorrective]
    → positions (1, A, 3), mask (1, A)."""
import json
import warnings

import numpy as np
import onnx
import torch

OPSET = 17
ENCODER_INPUTS, ENCODER_OUTPUTS = ["sdf_samples"], ["mu", "logvar"]
DECODER_INPUTS = ["points", "normals", "knn", "mu_source", "delta_direction", "delta_norm", "pair_kind"]
DECODER_OUTPUTS = ["positions", "mask"]
CONTRACT = __doc__.split("Contract", 1)[1].strip()


class _Encoder(torch.nn.Module):
    """The encoder as exported: (sdf_samples) → (mu, logvar)."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, sdf_samples):
        return self.encoder(sdf_samples)


def _export(module, args, path, inputs, outputs, dynamic, metadata):
    module.eval()
    # The tracer warns about every Python value it records; the graphs are run at other sizes by the tests.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, path, opset_version=OPSET, input_names=inputs, output_names=outputs,
                          dynamic_axes=dynamic, do_constant_folding=True)
    proto = onnx.load(path)
    for key, value in {"autorig.contract": CONTRACT, **metadata}.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, str(value)
    onnx.checker.check_model(proto)
    onnx.save(proto, path)
    return len(proto.SerializeToString())


def export_encoder(encoder, path, metadata):
    """Write the encoder (dynamic batch and N) → size in bytes."""
    g = torch.Generator().manual_seed(0)
    example = torch.rand(1, 300, 4, generator=g) - 0.5
    dynamic = {"sdf_samples": {0: "batch", 1: "samples"}, "mu": {0: "batch"}, "logvar": {0: "batch"}}
    meta = {"autorig.model": "latent_pose_encoder", "autorig.config": json.dumps(encoder.config), **metadata}
    return _export(_Encoder(encoder), (example,), path, ENCODER_INPUTS, ENCODER_OUTPUTS, dynamic, meta)


def export_decoder(decoder, path, knn_k, metadata):
    """Write the vertex decoder (dynamic batch and A, K fixed) → size in bytes."""
    g = torch.Generator().manual_seed(0)
    A, L = 300, decoder.config["latent"]
    points = torch.rand(1, A, 3, generator=g) - 0.5
    knn = torch.stack([torch.randperm(A, generator=g)[:knn_k] for _ in range(A)])[None]
    direction = torch.nn.functional.normalize(torch.randn(1, L, generator=g), dim=-1)
    example = (points, torch.nn.functional.normalize(torch.randn(1, A, 3, generator=g), dim=-1), knn,
               torch.randn(1, L, generator=g), direction, torch.ones(1, 1), torch.tensor([[1.0, 0.0, 0.0]]))
    dynamic = {"points": {0: "batch", 1: "anchors"}, "normals": {0: "batch", 1: "anchors"},
               "knn": {0: "batch", 1: "anchors"}, "mu_source": {0: "batch"}, "delta_direction": {0: "batch"},
               "delta_norm": {0: "batch"}, "pair_kind": {0: "batch"}, "positions": {0: "batch", 1: "anchors"},
               "mask": {0: "batch", 1: "anchors"}}
    meta = {"autorig.model": "latent_pose_decoder", "autorig.config": json.dumps(decoder.config),
            "autorig.knn": str(knn_k), "autorig.knn_self": "excluded", **metadata}
    return _export(decoder, example, path, DECODER_INPUTS, DECODER_OUTPUTS, dynamic, meta)


def _tensor(a):
    a = np.asarray(a)
    kind = "int64" if a.dtype.kind in "iu" else "float32"
    data = [int(v) for v in a.ravel()] if kind == "int64" else [float(v) for v in a.astype(np.float32).ravel()]
    return {"type": kind, "dims": list(a.shape), "data": data}


def write_check(module, path, inputs):
    """The check file: inputs {name: numpy array} (float32, or int64 for knn) and PyTorch's outputs for them, as JSON
    {opset, tolerance, inputs: {name: {type, dims, data}}, outputs: {name: {type, dims, data}}}."""
    module.eval()
    with torch.no_grad():
        result = module(*[torch.from_numpy(np.asarray(v)) for v in inputs.values()])
    names = ENCODER_OUTPUTS if list(inputs) == ENCODER_INPUTS else DECODER_OUTPUTS
    check = {"opset": OPSET, "tolerance": 1e-4, "inputs": {k: _tensor(v) for k, v in inputs.items()},
             "outputs": {k: _tensor(r.numpy()) for k, r in zip(names, result)}}
    with open(path, "w") as f:
        json.dump(check, f)


def encoder_module(encoder):
    """The exported view of an encoder (for write_check)."""
    return _Encoder(encoder)
