"""The model card written next to the ONNX file: what it was trained on, how, and how well it did."""
import datetime


def write_card(path, *, command, seed, data_dir, counts_train, counts_val, characters_val, parameters, onnx_path,
               onnx_bytes, config, training, metrics, coarse_metrics):
    """Markdown model card. counts_*: meta.source → samples; metrics / coarse_metrics: validation metrics of the
    model and of the coarse joints it was given; training: dict of steps, epochs, seconds, device, world size..."""
    fmt = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)
    lines = [
        "# point_rig: joint refinement and skinning weights",
        "",
        "HumanRig's mesh–skeleton mutual attention network (models/training/point_rig/): surface points + coarse "
        "joints → refined joints and per-point skinning weights over the 22 deforming Mixamo joints.",
        "",
        f"- Date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- File: `{onnx_path}` ({onnx_bytes / 2**20:.2f} MiB, ONNX opset 17, dynamic batch and point count)",
        f"- Parameters: {parameters:,}",
        f"- Config: `{config}`",
        f"- Seed: {seed}",
        f"- Command: `{command}`",
        "",
        "## Data",
        "",
        f"Folder `{data_dir}`; validation holds whole characters (samples of one character never straddle the split).",
        "",
        "| source | training | validation |",
        "|---|---:|---:|",
    ]
    for source in sorted(set(counts_train) | set(counts_val)):
        lines.append(f"| {source} | {counts_train.get(source, 0)} | {counts_val.get(source, 0)} |")
    lines.append(f"| **all** | {sum(counts_train.values())} | {sum(counts_val.values())} |")
    lines += ["", f"Validation characters: {', '.join(characters_val) or '(none)'}", "", "## Training", ""]
    lines += [f"- {k}: {fmt(v)}" for k, v in training.items()]
    lines += [
        "", "## Validation (distances in units of the canonical box, the character's largest extent)", "",
        "| metric | model | coarse input |", "|---|---:|---:|",
    ]
    for k, v in metrics.items():
        lines.append(f"| {k} | {fmt(v)} | {fmt(coarse_metrics.get(k, '')) if k in coarse_metrics else ''} |")
    lines += [
        "",
        "Coarse input: the ground-truth joints with the training noise (Gaussian σ 0.005–0.02 per joint, depth ×1.5, "
        "whole limbs shifted by σ 0.03 half the time), fixed per validation sample. Weight L1: mean over points of "
        "Σ_j |w − ŵ| (0 same, 2 disjoint). Dominant joint: share of points whose largest weight is on the right joint.",
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines))
