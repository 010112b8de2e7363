"""The encoder and the rig-structured vertex decoder → ONNX (opset 17), each with a check file: one fixed input and
PyTorch's output for it, which test/train-latent-pose.test.ts replays through onnxruntime-node.

Contract (the sidecar's, sidecar/pose): names and shapes below, L = latentSize, N dynamic, batch 1 (other batch sizes
also run).
  latent_pose_encoder.onnx: sdf_samples f32 (1, N, 4) [x, y, z, signed distance] → mu (1, L), logvar (1, L)
  latent_pose_decoder.onnx: mu_source f32 (1, L) (the source's μ), delta_direction f32 (1, L) (the pose's
    skinningCorrective Δμ, unit), delta_norm f32 (1, 1) (its norm) → local_rotations f32 (1, 23, 3): every template
    joint's rotation vector (radians) in its bone frame (models/training/latent_pose/rig.py joint_frames; MIXAMO_JOINTS
    order); world rotation vector = E_j · local, posed by poseTransforms and LBS / DQS / rest + DQS − LBS."""
import json
import warnings

import numpy as np
import onnx
import torch

from .rig import JOINTS

OPSET = 17
ENCODER_INPUTS, ENCODER_OUTPUTS = ["sdf_samples"], ["mu", "logvar"]
DECODER_INPUTS = ["mu_source", "delta_direction", "delta_norm"]
DECODER_OUTPUTS = ["local_rotations"]
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


def export_decoder(decoder, path, metadata):
    """Write the rig decoder (dynamic batch) → size in bytes."""
    g = torch.Generator().manual_seed(0)
    L = decoder.config["latent"]
    direction = torch.nn.functional.normalize(torch.randn(1, L, generator=g), dim=-1)
    example = (torch.randn(1, L, generator=g), direction, torch.ones(1, 1))
    dynamic = {name: {0: "batch"} for name in DECODER_INPUTS + DECODER_OUTPUTS}
    meta = {"autorig.model": "latent_pose_decoder", "autorig.config": json.dumps(decoder.config),
            "autorig.joints": json.dumps(JOINTS), "autorig.rotations": "local rotation vectors, joint bone frames",
            **metadata}
    return _export(decoder, example, path, DECODER_INPUTS, DECODER_OUTPUTS, dynamic, meta)


def _tensor(a):
    a = np.asarray(a)
    kind = "int64" if a.dtype.kind in "iu" else "float32"
    data = [int(v) for v in a.ravel()] if kind == "int64" else [float(v) for v in a.astype(np.float32).ravel()]
    return {"type": kind, "dims": list(a.shape), "data": data}


def write_check(module, path, inputs):
    """The check file: inputs {name: numpy array} (float32, or int64) and PyTorch's outputs for them, as JSON
    {opset, tolerance, inputs: {name: {type, dims, data}}, outputs: {name: {type, dims, data}}}."""
    module.eval()
    with torch.no_grad():
        result = module(*[torch.from_numpy(np.asarray(v)) for v in inputs.values()])
    result = (result,) if isinstance(result, torch.Tensor) else result
    names = ENCODER_OUTPUTS if list(inputs) == ENCODER_INPUTS else DECODER_OUTPUTS
    check = {"opset": OPSET, "tolerance": 1e-4, "inputs": {k: _tensor(v) for k, v in inputs.items()},
             "outputs": {k: _tensor(r.numpy()) for k, r in zip(names, result)}}
    with open(path, "w") as f:
        json.dump(check, f)


def encoder_module(encoder):
    """The exported view of an encoder (for write_check)."""
    return _Encoder(encoder)
