"""What the training scripts' runs share: the process's place in a torchrun launch (distributed) and the learning
rate's schedule (learning_rate)."""
import math
import os


def distributed():
    """(rank, world size, local rank) from torchrun's environment; (0, 1, 0) for a plain run."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 0, 1, 0
    return int(os.environ["RANK"]), world, int(os.environ.get("LOCAL_RANK", "0"))


def learning_rate(progress, peak, warmup=0.03, floor=0.05):
    """Linear warm-up from 0.1 × peak over the first `warmup` of training (none at 0), then cosine decay to
    floor × peak; progress in [0, 1] → the learning rate."""
    if progress < warmup:
        return peak * (0.1 + 0.9 * progress / warmup)
    t = min(1.0, max(0.0, (progress - warmup) / (1.0 - warmup)))
    return peak * (floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * t)))
