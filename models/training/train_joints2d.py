"""Trains the 2D joint predictor (joints2d/model.py) on samples made by `npm run data`, exports ONNX (opset 17) and
writes its model card, training curve and a check file (a fixed input and the PyTorch output, for the sidecar's test).

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 models/training/train_joints2d.py --data DIR --out models/joints2d.onnx

`--members K` trains K networks from seeds seed..seed+K-1 and exports them as one ensemble (Joints2DEnsemble; same
inputs and outputs). `--tiny` is CI's smoke run (a few steps on a few samples). `--device cuda` trains on a GPU; under torchrun
(WORLD_SIZE set) each process trains on its share of every batch with DistributedDataParallel.
"""
import argparse
import csv
import datetime
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from joints2d.data import JOINT_NAMES, augment, load_images  # noqa: E402
from joints2d.model import Joints2DEnsemble, Joints2DNet  # noqa: E402
from malloc_tuning import keep_freed_memory  # noqa: E402
from sample_io import list_samples  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="folder of *.sample files (npm run data)")
    p.add_argument("--out", default="models/joints2d.onnx")
    p.add_argument("--card", default=None, help="model card (default: --out with .md)")
    p.add_argument("--curve", default=None, help="per-step CSV (default: --out with .curve.csv)")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--members", type=int, default=1,
                   help="train this many networks, from seeds seed, seed+1, ..., and export them as one ensemble")
    p.add_argument("--val-every", type=int, default=10, help="every k-th character (by sorted name) is validation")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--max-minutes", type=float, default=120.0)
    p.add_argument("--tiny", action="store_true", help="smoke run: 8 samples, 30 steps, no card")
    return p.parse_args(argv)


def heatmap_target(joints2d, size, cells, sigma_cells=1.5):
    """Gaussian target distributions (B, J, cells*cells) around each joint: a sharper learning signal early on."""
    scale = size / cells
    centres = (torch.arange(cells, dtype=torch.float32) + 0.5) * scale - 0.5
    gx = torch.exp(-0.5 * ((centres.view(1, 1, cells) - joints2d[..., 0:1]) / (sigma_cells * scale)) ** 2)
    gy = torch.exp(-0.5 * ((centres.view(1, 1, cells) - joints2d[..., 1:2]) / (sigma_cells * scale)) ** 2)
    g = gy.unsqueeze(-1) * gx.unsqueeze(-2)
    g = g.flatten(2)
    return g / g.sum(-1, keepdim=True).clamp_min(1e-12)


def losses(model, images, joints2d):
    coords, _, logits = model(images)
    size = images.shape[-1]
    coord_loss = (coords - joints2d).abs().mean() / size
    b, j, h, w = logits.shape
    target = heatmap_target(joints2d, size, w)
    heat_loss = -(target * F.log_softmax(logits.flatten(2), dim=-1)).sum(-1).mean()
    return coord_loss, heat_loss, coords


def evaluate(model, images, joints2d, device, batch=32):
    """Mean and per-joint error in input pixels over a set."""
    model.eval()
    errs = []
    with torch.no_grad():
        for i in range(0, len(images), batch):
            x = torch.from_numpy(images[i : i + batch]).to(device)
            y = torch.from_numpy(joints2d[i : i + batch]).to(device)
            coords, _, _ = model(x)
            errs.append((coords - y).norm(dim=-1).cpu())
    model.train()
    e = torch.cat(errs)
    return float(e.mean()), e.mean(0).tolist()


def main(argv=None):
    args = parse_args(argv)
    keep_freed_memory()
    torch.set_num_threads(args.threads)
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    rank = 0
    if distributed:
        torch.distributed.init_process_group("nccl" if args.device == "cuda" else "gloo")
        rank = torch.distributed.get_rank()
    device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if args.device == "cuda" else "cpu")

    paths = list_samples(args.data)
    if args.tiny:
        paths = paths[:8]
        args.steps = min(args.steps, 30)
    if not paths:
        raise SystemExit(f"no *.sample files under {args.data}")
    images, joints2d, names, dropped = load_images(paths)
    # Validation by character, not by sample: several samples of one source character stay on one side.
    characters = sorted(set(n.split("#")[0] for n in names))
    val_chars = set(characters[:: args.val_every]) if len(characters) >= args.val_every and not args.tiny else set()
    is_val = np.array([n.split("#")[0] in val_chars for n in names])
    tr_images, tr_joints = images[~is_val], joints2d[~is_val]
    va_images, va_joints = images[is_val], joints2d[is_val]
    if rank == 0:
        print(f"{len(paths)} samples, {len(dropped)} with a misread frame left out, {len(tr_images)} train, "
              f"{len(va_images)} validation ({len(val_chars)} characters)", flush=True)

    # Each member trains exactly as a run with its seed alone would (the same draws in the same order), one after another.
    seeds = [args.seed + k for k in range(args.members)]
    t0 = time.time()
    members, member_val, rows, steps = [], [], [], []
    for k, seed in enumerate(seeds):
        if k > 0 and (time.time() - t0) / 60 > args.max_minutes:
            print(f"--max-minutes {args.max_minutes} spent: the ensemble keeps its first {k} member(s)", flush=True)
            seeds = seeds[:k]
            break
        net, member_rows = train_member(args, seed, tr_images, tr_joints, va_images, va_joints, device, distributed, rank, t0)
        members.append(net)
        steps.append(member_rows[-1]["step"])
        member_val.append(next((r["val_px"] for r in reversed(member_rows) if r["val_px"] != ""), float("nan")))
        # one curve: the members' runs end to end (step counts on across them), each row saying whose it is
        rows += [{**r, "step": k * args.steps + r["step"], "seed": seed, "member_step": r["step"]} for r in member_rows]
    minutes = (time.time() - t0) / 60
    if rank != 0:
        return
    curve_path = Path(args.curve or str(Path(args.out).with_suffix("")) + ".curve.csv")
    curve_path.parent.mkdir(parents=True, exist_ok=True)
    with open(curve_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    net = members[0] if len(members) == 1 else Joints2DEnsemble(members)
    net = net.to("cpu").eval()
    export(net, args.out, args.seed)
    if args.tiny:
        return
    val_px, per_joint = evaluate(net, va_images, va_joints, torch.device("cpu")) if len(va_images) else (float("nan"), [])
    write_card(args, argv, paths, names, dropped, val_chars, len(tr_images), len(va_images), steps, minutes, val_px, per_joint, seeds, member_val)


def train_member(args, seed, tr_images, tr_joints, va_images, va_joints, device, distributed, rank, t0):
    """One Joints2DNet from `seed`: args.steps steps (fewer if --max-minutes, counted from t0, runs out) → the
    network (unwrapped, on the CPU, in eval mode) and its curve rows (step, loss, coord_px, heat, val_px)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = Joints2DNet().to(device)
    if distributed:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps, pct_start=0.1)
    rows = []
    for step in range(1, args.steps + 1):
        idx = rng.integers(0, len(tr_images), size=args.batch)
        x = torch.from_numpy(tr_images[idx])
        y = torch.from_numpy(tr_joints[idx])
        x, y = augment(x, y, rng)
        coord_loss, heat_loss, _ = losses(model, x.to(device), y.to(device))
        loss = coord_loss * 20.0 + heat_loss * 0.1
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        row = {"step": step, "loss": float(loss), "coord_px": float(coord_loss) * x.shape[-1], "heat": float(heat_loss), "val_px": ""}
        if len(va_images) and (step % 250 == 0 or step == args.steps):
            row["val_px"], _ = evaluate(model, va_images, va_joints, device)
        rows.append(row)
        if rank == 0 and (step % 50 == 0 or step == 1):
            print(f"seed {seed} step {step} loss {row['loss']:.4f} coord {row['coord_px']:.2f}px val {row['val_px']} {time.time() - t0:.0f}s", flush=True)
        if (time.time() - t0) / 60 > args.max_minutes:
            print(f"stopping at step {step} of seed {seed}: --max-minutes {args.max_minutes}", flush=True)
            break
    net = model.module if distributed else model
    return net.to("cpu").eval(), rows


def check_input(size=128):
    """A fixed input that both PyTorch and the TypeScript test can make without sharing a random generator: a
    standing ellipse-ish silhouette with smooth depth and normals. (1, 5, size, size) float32."""
    rows = torch.arange(size, dtype=torch.float64).view(size, 1)
    cols = torch.arange(size, dtype=torch.float64).view(1, size)
    u = (cols - size / 2) / (size / 4)
    v = (rows - size / 2) / (size / 2.2)
    inside = ((u * u + v * v) < 1.0).to(torch.float64)
    x = torch.zeros(1, 5, size, size, dtype=torch.float64)
    x[0, 0] = inside
    x[0, 1] = inside * (0.1 * torch.cos(0.05 * cols) * torch.cos(0.03 * rows))
    x[0, 2] = inside * (-0.1 + 0.02 * torch.sin(0.07 * rows + 0.01 * cols))
    x[0, 3] = inside * 0.3 * torch.sin(0.11 * cols)
    x[0, 4] = inside * 0.3 * torch.cos(0.13 * rows)
    return x.to(torch.float32)


def export(net, out, seed):
    """ONNX (opset 17, dynamic batch) + a check file: a seeded input and the PyTorch outputs on it."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    x = check_input()
    with torch.no_grad():
        coords, conf, _ = net(x)
    torch.onnx.export(
        net, (x,), str(out), opset_version=17, input_names=["image"], output_names=["coords", "confidence", "heatmaps"],
        dynamic_axes={"image": {0: "batch"}, "coords": {0: "batch"}, "confidence": {0: "batch"}, "heatmaps": {0: "batch"}},
    )
    import onnx

    onnx.checker.check_model(onnx.load(str(out)))
    check = {"input": "check_input() of train_joints2d.py: a standing blob, see test/learned-joints2d.test.ts", "input_shape": list(x.shape), "coords": coords.flatten().tolist(), "confidence": conf.flatten().tolist()}
    Path(str(out.with_suffix("")) + ".check.json").write_text(json.dumps(check))


def write_card(args, argv, paths, names, dropped, val_chars, n_train, n_val, steps, minutes, val_px, per_joint, seeds, member_val):
    from collections import Counter

    sources = Counter()
    apart = 0
    for p in paths:
        from sample_io import read_bundle

        header, _ = read_bundle(p)
        sources[header["meta"].get("source", "unknown")] += 1
        # a procedural humanoid whose arms are posed apart (autorig data --asymmetric-arms) has one pose per arm
        apart += isinstance(header["meta"].get("pose"), list)
    size_mb = Path(args.out).stat().st_size / 1e6
    params = sum(p.numel() for p in Joints2DNet().parameters())
    cmd = "OPENBLAS_NUM_THREADS=1 /usr/bin/python3 models/training/train_joints2d.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        "# joints2d.onnx: the 2D joint predictor (HumanRig's prior-guided skeleton estimator)",
        "",
        f"- **Date:** {datetime.date.today().isoformat()}",
        (f"- **Network:** U-shaped heatmap CNN (models/training/joints2d/model.py), {params:,} parameters, {size_mb:.1f} MB ONNX (opset 17)."
         if len(seeds) == 1 else
         f"- **Network:** an ensemble of {len(seeds)} U-shaped heatmap CNNs (models/training/joints2d/model.py: Joints2DNet, {params:,} parameters each; Joints2DEnsemble averages their heatmaps' probabilities, then the same soft-argmax), {size_mb:.1f} MB ONNX (opset 17)."),
        "- **Input:** `image` float32 [B, 5, 128, 128]: the canonical front view (silhouette, front depth, back depth, normal x, normal y; sidecar/skeleton/frontViewImage.ts).",
        "- **Outputs:** `coords` [B, 23, 2] joint heads in image pixels (column, row from the top), `confidence` [B, 23], `heatmaps` [B, 23, 64, 64] logits. Joint order: MIXAMO_JOINTS.",
        f"- **Data:** {len(paths)} samples from `npm run data` ({', '.join(f'{k}: {v}' for k, v in sorted(sources.items()))}{f'; {apart} of them with arms posed apart' if apart else ''}); {len(dropped)} left out because the sidecar's frame finder misread them (up or a side view: the pipeline cannot rig those either; those seen from behind are kept with left and right swapped); {n_train} train, {n_val} validation ({len(val_chars)} characters held out by name). The held-out dev characters (mixamo_ely, clonk_farmer, robot_expressive) are in no sample.",
        f"- **Command:** `{cmd}`",
        (f"- **Seed:** {seeds[0]}; {steps[0]} steps of batch {args.batch}, AdamW one-cycle lr {args.lr}, {minutes:.1f} min on {args.device} ({args.threads} thread(s))."
         if len(seeds) == 1 else
         f"- **Seeds:** {', '.join(map(str, seeds))}, one member each; {', '.join(map(str, steps))} steps of batch {args.batch}, AdamW one-cycle lr {args.lr}, {minutes:.1f} min in all on {args.device} ({args.threads} thread(s))."),
        f"- **Validation 2D error:** {val_px:.2f} px of 128 (mean over joints)"
        + ("." if len(seeds) == 1 else f"; each member alone: {', '.join(f'{v:.2f}' for v in member_val)} px."),
        "",
        "| joint | val error (px) |",
        "|---|---|",
    ]
    lines += [f"| {n} | {e:.2f} |" for n, e in zip(JOINT_NAMES, per_joint)]
    lines += ["", "Quality on the held-out dev characters comes from `autorig eval --method learned`; see docs/EVAL.md.", ""]
    Path(args.card or str(Path(args.out).with_suffix(".md"))).write_text("\n".join(lines))


if __name__ == "__main__":
    main()
