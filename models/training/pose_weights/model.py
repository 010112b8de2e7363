"""The pose-dependent weight field: features f (N, 28) → weights w (N, 4) over the vertex's four static slots.

Features, 7 per slot k (computed by the sidecar, see .tmp contract / sidecar correctives): f[0..2] the vertex in the
slot joint's rest bone frame (share of the skeleton's height), f[3] the static weight, f[4..6] the joint's local turn as
axis·angle in its bone frame (radians; 0 for Hips). Padded slots (static weight 0) are all zero.

  w = softmax(log(w_static + 1e-6) + m ⊙ (Δ(f) − Δ(f_rest)))

f_rest: f with every slot's pose entries zeroed, so the rest pose gives the static weights (up to the 1e-6 floor);
m: 1 on real slots, 0 on padded ones (a padded slot's joint index is a filler: it must never gain weight)."""
import math

import torch
from torch import nn

SLOTS = 4
PER_SLOT = 7
FEATURES = SLOTS * PER_SLOT
# Frequencies (× π) of the positional encoding of the slot-local point.
FREQUENCIES = (1.0, 2.0, 4.0, 8.0)
# Floor under the static weights before the log (keeps padded slots finite).
WEIGHT_FLOOR = 1e-6


def parameter_count(module):
    return sum(p.numel() for p in module.parameters())


def encoded_size(frequencies=FREQUENCIES):
    """Per slot: the point (3), its sin and cos per frequency (6 each), static weight (1), pose (3)."""
    return 3 + 6 * len(frequencies) + 1 + 3


def encode_slots(features, frequencies=FREQUENCIES):
    """features (N, 28) → (N, 4 · encoded_size): per slot [point, sin(πω·point), cos(πω·point) per ω, weight, pose]."""
    n = features.shape[0]
    slots = features.reshape(n, SLOTS, PER_SLOT)
    point, rest = slots[..., 0:3], slots[..., 3:7]
    scaled = torch.cat([point * (math.pi * w) for w in frequencies], dim=-1)
    encoded = torch.cat([point, torch.sin(scaled), torch.cos(scaled), rest], dim=-1)
    return encoded.reshape(n, -1)


def rest_features(features):
    """The same features with every slot's pose entries (f[4..6]) set to zero: (N, 28) → (N, 28)."""
    keep = torch.tensor([1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0] * SLOTS, dtype=features.dtype, device=features.device)
    return features * keep


class PoseWeightField(nn.Module):
    """features (N, 28) → weights (N, 4), rows summing to one; the rest pose returns the static weights.

    One MLP (SiLU) over the concatenated encodings of the four slots gives a logit offset Δ (N, 4) per slot; its last
    layer starts at zero, so an untrained field is the static weights in every pose (VINECS starts from its static
    heat weights the same way)."""

    def __init__(self, width=128, layers=3, frequencies=FREQUENCIES):
        super().__init__()
        self.config = {"width": width, "layers": layers, "frequencies": list(frequencies)}
        self.frequencies = tuple(frequencies)
        widths = [SLOTS * encoded_size(frequencies)] + [width] * layers
        body = []
        for a, b in zip(widths[:-1], widths[1:]):
            body += [nn.Linear(a, b), nn.SiLU()]
        self.body = nn.Sequential(*body)
        self.head = nn.Linear(width, SLOTS)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def delta(self, features):
        """Δ(f): the raw logit offsets, (N, 28) → (N, 4)."""
        return self.head(self.body(encode_slots(features, self.frequencies)))

    def offsets(self, features):
        """m ⊙ (Δ(f) − Δ(f_rest)): (N, 28) → (N, 4); zero at rest and on padded slots. Both evaluations go through
        one batch so that they share every rounding."""
        n = features.shape[0]
        both = self.delta(torch.cat([features, rest_features(features)], dim=0))
        real = (features[:, 3::PER_SLOT] > 0).to(features.dtype)
        return (both[:n] - both[n:]) * real

    def forward(self, features):
        return reweight(features[:, 3::PER_SLOT], self.offsets(features))


def reweight(static, offsets):
    """softmax(log(w_static + floor) + offsets): static (N, 4), offsets (N, 4) → weights (N, 4), rows summing to one."""
    return torch.softmax(torch.log(static + WEIGHT_FLOOR) + offsets, dim=-1)
