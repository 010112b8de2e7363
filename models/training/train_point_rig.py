#!/usr/bin/env python3
"""Train PointRigNet (joint refinement + skinning weights, issue 5) on a folder of training samples and export it to
ONNX with a check file and a model card.

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 models/training/train_point_rig.py --data DIR --out models/point_rig.onnx \\
      --card models/point_rig.md --curve out/point_rig.csv [--epochs E | --steps S] [--max-minutes M]
  torchrun --nproc_per_node 4 models/training/train_point_rig.py --device cuda ...   (DistributedDataParallel)
  ... --tiny   (CI: a few steps on a few samples, N = 256)

Held-out characters never enter the data folder, so nothing is excluded here. Runs are reproducible for a given seed,
device and world size (except that --max-minutes lets the clock decide where training stops and how the learning
rate decays).
"""
import os

# Before numpy/torch load BLAS: one thread each, the machine is shared (another model trains alongside).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import csv
import math
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from malloc_tuning import keep_freed_memory  # noqa: E402
from training_run import distributed, learning_rate  # noqa: E402
from point_rig.card import write_card  # noqa: E402
from point_rig.dataset import (SampleSet, character_of, make_batch, make_example, split_by_character,  # noqa: E402
                               validation_batches)
from point_rig.export import export_onnx, write_check  # noqa: E402
from point_rig.losses import (corrective_l1, dominant_joint_agreement, joint_error, joint_mse, weight_kl,  # noqa: E402
                               weight_l1)
from point_rig.skeleton import JOINT_NAMES, PARENTS  # noqa: E402
from point_rig.model import PointRigNet, parameter_count  # noqa: E402
from sample_io import list_samples  # noqa: E402

CURVE_COLUMNS = ["step", "epoch", "seconds", "lr", "split", "loss", "joint_mse", "weight_kl", "weight_l1",
                 "joint_error", "coarse_joint_error", "dominant_joint", "corrective"]

# The joints whose bend the corrective loss plays (elbows, wrists, knees, ankles): where a limb's blend sits between
# two bones, the corrective a pose carries is decided by how that blend is shaped.
CORRECTIVE_JOINT_NAMES = ("LeftForeArm", "LeftHand", "RightForeArm", "RightHand", "LeftLeg", "LeftFoot", "RightLeg",
                          "RightFoot")
CORRECTIVE_JOINTS = [JOINT_NAMES.index(n) for n in CORRECTIVE_JOINT_NAMES]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="folder of *.sample files (searched recursively)")
    p.add_argument("--out", default="models/point_rig.onnx", help="ONNX file to write (check file: .check.json beside)")
    p.add_argument("--card", default=None, help="model card (.md) to write")
    p.add_argument("--curve", default=None, help="CSV of per-step training losses and periodic validation metrics")
    p.add_argument("--epochs", type=float, default=20.0, help="passes over the training samples (ignored with --steps)")
    p.add_argument("--steps", type=int, default=None, help="optimizer steps (overrides --epochs)")
    p.add_argument("--batch", type=int, default=8, help="samples per step and process")
    p.add_argument("--points", type=int, default=2048, help="surface points per sample (multiple of 16, ≥ 256)")
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (AdamW; warm-up then cosine decay)")
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--joint-loss-weight", type=float, default=1000.0, help="loss = KL + this × joint MSE")
    p.add_argument("--corrective-loss-weight", type=float, default=0.0,
                   help="loss += this × corrective_l1 (DQS − LBS of the predicted blend against the truth's when a "
                        "joint of --corrective-joints bends, units of the canonical box); 0: not trained on, still reported")
    p.add_argument("--corrective-joints", default=",".join(CORRECTIVE_JOINT_NAMES),
                   help="comma-separated joints whose bend the corrective term trains on (default: elbows, wrists, "
                        "knees, ankles); the reported corrective is always measured at the default eight")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: the machine is shared)")
    p.add_argument("--workers", type=int, default=0, help="data-loading processes (GPU runs: the farthest-point "
                   "order is computed on the CPU)")
    p.add_argument("--max-minutes", type=float, default=None, help="stop after this long (the learning rate decays "
                   "by whichever of steps and time runs out first); validation and export follow")
    p.add_argument("--validation-fraction", type=float, default=0.1)
    p.add_argument("--headless", type=float, default=0.0, help="share of training examples shown without their head "
                   "(point_rig.dataset.cut_head: a body whose head is a separate object); 0: none")
    p.add_argument("--val-every", type=int, default=500, help="steps between validations (and at the end)")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--checkpoint", default=None, help="PyTorch checkpoint to write every 10 minutes and at the end")
    p.add_argument("--resume", default=None, help="checkpoint to continue from (model, optimizer, step)")
    p.add_argument("--limit", type=int, default=None, help="use only the first N samples (by file name)")
    p.add_argument("--tiny", action="store_true", help="CI: 40 steps, batch 2, 256 points, 6 samples")
    args = p.parse_args(argv)
    if args.tiny:
        args.steps = args.steps or 40
        args.batch = 2
        args.points = 256
        args.limit = args.limit or 6
        args.val_every = min(args.val_every, 20)
        args.log_every = 10
        if args.lr == p.get_default("lr"):
            args.lr = 3e-3
    if args.points % 16 or args.points < 256:
        p.error(f"--points must be a multiple of 16 and at least 256, got {args.points}")
    names = [n.strip() for n in args.corrective_joints.split(",") if n.strip()]
    unknown = [n for n in names if n not in JOINT_NAMES]
    if not names or unknown:
        p.error(f"--corrective-joints must name joints of the skeleton ({', '.join(JOINT_NAMES)}); got {unknown or 'none'}")
    args.corrective_joint_indices = [JOINT_NAMES.index(n) for n in names]
    if any(PARENTS[j] == j for j in args.corrective_joint_indices):
        p.error("--corrective-joints: the root has no parent bone to bend across")
    return args


class BatchStream(torch.utils.data.IterableDataset):
    """Endless training batches of one process: its shard of the training samples (every world-th), shuffled anew
    each pass, made into examples by make_batch. Each data-loading worker draws from its own seeded stream."""

    def __init__(self, samples, indices, batch, points, seed, rank, world, headless=0.0):
        super().__init__()
        self.samples, self.indices = samples, list(indices)[rank::world] or list(indices)
        self.batch, self.points, self.seed, self.rank, self.headless = batch, points, seed, rank, headless

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        worker = info.id if info else 0
        rng = np.random.default_rng([self.seed, self.rank, worker])
        queue = []
        while True:
            if len(queue) < self.batch:
                queue.extend(rng.permutation(self.indices).tolist())
            chosen, queue = queue[: self.batch], queue[self.batch:]
            yield {k: torch.from_numpy(v) for k, v in make_batch(self.samples, chosen, self.points, rng, headless=self.headless).items()}


def batch_losses(model, batch, joint_loss_weight, corrective_loss_weight=0.0, generator=None, corrective_joints=None):
    """One batch through the model → (loss tensor, dict of float metrics). generator: the random bends of the
    corrective term (validation passes a fixed one so that its figures compare across steps). corrective_joints: the
    joints the corrective term trains on (default CORRECTIVE_JOINTS); the reported corrective is CORRECTIVE_JOINTS'
    so that runs compare."""
    refined, logits = model(batch["points"], batch["normals"], batch["coarse"], True)
    mse = joint_mse(refined, batch["joints"])
    kl = weight_kl(logits, batch["weights"])
    loss = kl + joint_loss_weight * mse
    predicted = torch.softmax(logits, dim=-1)
    trained_joints = corrective_joints if corrective_joints is not None else CORRECTIVE_JOINTS
    with torch.set_grad_enabled(corrective_loss_weight > 0 and torch.is_grad_enabled()):
        trained = corrective_l1(predicted, batch["weights"], batch["points"], batch["joints"], trained_joints,
                                PARENTS, generator)
    corrective = trained
    if list(trained_joints) != CORRECTIVE_JOINTS:
        with torch.no_grad():
            corrective = corrective_l1(predicted, batch["weights"], batch["points"], batch["joints"], CORRECTIVE_JOINTS,
                                       PARENTS, generator)
    if corrective_loss_weight > 0:
        loss = loss + corrective_loss_weight * trained
    with torch.no_grad():
        metrics = {
            "loss": loss.item(), "joint_mse": mse.item(), "weight_kl": kl.item(),
            "weight_l1": weight_l1(predicted, batch["weights"]).item(),
            "joint_error": joint_error(refined, batch["joints"]).item(),
            "coarse_joint_error": joint_error(batch["coarse"], batch["joints"]).item(),
            "dominant_joint": dominant_joint_agreement(predicted, batch["weights"]).item(),
            "corrective": corrective.item(),
        }
    return loss, metrics


def evaluate(model, batches, device, joint_loss_weight, corrective_loss_weight=0.0, corrective_joints=None):
    """Validation metrics averaged over samples: the model's, and the coarse joints' own (joint metrics only)."""
    model.eval()
    totals, count = {}, 0
    bends = torch.Generator().manual_seed(4099)
    with torch.no_grad():
        for batch in batches:
            batch = {k: torch.from_numpy(v).to(device) for k, v in batch.items()}
            _, metrics = batch_losses(model, batch, joint_loss_weight, corrective_loss_weight, bends, corrective_joints)
            size = batch["points"].shape[0]
            for k, v in metrics.items():
                totals[k] = totals.get(k, 0.0) + v * size
            count += size
    model.train()
    return {k: v / max(count, 1) for k, v in totals.items()}


def open_curve(path):
    if not path:
        return None, None
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    f = open(path, "w", newline="")
    writer = csv.DictWriter(f, fieldnames=CURVE_COLUMNS)
    writer.writeheader()
    return f, writer


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    rank, world, local_rank = distributed()
    device = torch.device(f"cuda:{local_rank}" if args.device == "cuda" else "cpu")
    if args.device == "cuda":
        torch.cuda.set_device(device)
    else:
        keep_freed_memory()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    if world > 1:
        torch.distributed.init_process_group(backend="nccl" if args.device == "cuda" else "gloo")
    lead = rank == 0
    say = (lambda *a: print(*a, flush=True)) if lead else (lambda *a: None)

    files = list_samples(args.data)
    if args.limit:
        files = files[: args.limit]
    if not files:
        raise SystemExit(f"no *.sample files in {args.data}")
    t_load = time.time()
    samples = SampleSet(files)
    train_idx, val_idx = split_by_character(samples.names, args.validation_fraction)
    train, val = samples.subset(train_idx), samples.subset(val_idx)
    say(f"{len(samples)} samples ({time.time() - t_load:.0f} s to load): {len(train)} training, {len(val)} validation "
        f"{samples.counts_by_source()}")

    model = PointRigNet().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    start_step = 0
    if args.resume:
        state = torch.load(args.resume, map_location=device)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_step = state["step"]
        say(f"resumed from {args.resume} at step {start_step}")
    core = model
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank] if args.device == "cuda" else None)
    say(f"PointRigNet: {parameter_count(core):,} parameters, device {args.device}, world {world}")

    steps_per_epoch = max(1, math.ceil(len(train) / (args.batch * world)))
    total_steps = args.steps if args.steps else max(1, round(args.epochs * steps_per_epoch))
    max_seconds = args.max_minutes * 60 if args.max_minutes else None
    stream = BatchStream(train, range(len(train)), args.batch, args.points, args.seed, rank, world, args.headless)
    loader = torch.utils.data.DataLoader(stream, batch_size=None, num_workers=args.workers,
                                         persistent_workers=args.workers > 0)
    val_batches = validation_batches(val, args.points, args.batch, args.seed + 7919) if lead and len(val) else []
    curve_file, curve = open_curve(args.curve) if lead else (None, None)

    t0 = time.time()
    last_checkpoint = t0
    step = start_step
    metrics = {}
    val_metrics = {}
    window = []
    model.train()
    batches = iter(loader)
    # the corrective term's random bends have their own stream: the rest of training draws what it drew before
    bends = torch.Generator().manual_seed(args.seed + 31)
    while step < total_steps:
        elapsed = time.time() - t0
        progress = step / total_steps
        if max_seconds:
            progress = max(progress, elapsed / max_seconds)
        stop = progress >= 1.0
        if world > 1:  # every process stops at the same step
            flag = torch.tensor([1.0 if stop else 0.0], device=device)
            torch.distributed.all_reduce(flag, op=torch.distributed.ReduceOp.MAX)
            stop = flag.item() > 0
        if stop:
            break
        lr = learning_rate(progress, args.lr)
        for group in optimizer.param_groups:
            group["lr"] = lr
        batch = {k: v.to(device, non_blocking=True) for k, v in next(batches).items()}
        loss, metrics = batch_losses(model, batch, args.joint_loss_weight, args.corrective_loss_weight, bends,
                                     args.corrective_joint_indices)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        if world > 1:
            vector = torch.tensor([metrics[k] for k in metrics], device=device)
            torch.distributed.all_reduce(vector)
            metrics = dict(zip(metrics, (vector / world).tolist()))
        window.append(metrics["loss"])
        if curve:
            curve.writerow({"step": step, "epoch": f"{step / steps_per_epoch:.3f}", "seconds": f"{time.time() - t0:.1f}",
                            "lr": f"{lr:.3g}", "split": "train", **{k: f"{v:.6g}" for k, v in metrics.items()}})
        if lead and (step % args.log_every == 0 or step == 1):
            per_step = (time.time() - t0) / (step - start_step)
            say(f"step {step}/{total_steps} loss {np.mean(window):.4f} kl {metrics['weight_kl']:.4f} "
                f"joint err {metrics['joint_error']:.4f} (coarse {metrics['coarse_joint_error']:.4f}) "
                f"L1 {metrics['weight_l1']:.3f} corr {metrics['corrective']:.2e} lr {lr:.2g} {per_step:.2f} s/step")
            window = []
        if lead and val_batches and step % args.val_every == 0:
            val_metrics = evaluate(core, val_batches, device, args.joint_loss_weight, args.corrective_loss_weight,
                                   args.corrective_joint_indices)
            if curve:
                curve.writerow({"step": step, "epoch": f"{step / steps_per_epoch:.3f}", "seconds": f"{time.time() - t0:.1f}",
                                "lr": f"{lr:.3g}", "split": "val", **{k: f"{v:.6g}" for k, v in val_metrics.items()}})
            say(f"  validation: joint err {val_metrics['joint_error']:.4f} (coarse {val_metrics['coarse_joint_error']:.4f}) "
                f"weight L1 {val_metrics['weight_l1']:.3f} KL {val_metrics['weight_kl']:.3f} "
                f"dominant {val_metrics['dominant_joint']:.3f} corrective {val_metrics['corrective']:.3e}")
        if lead and args.checkpoint and time.time() - last_checkpoint > 600:
            torch.save({"model": core.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, args.checkpoint)
            last_checkpoint = time.time()
        if curve_file and step % 20 == 0:
            curve_file.flush()
    seconds = time.time() - t0

    if lead:
        if args.checkpoint:
            torch.save({"model": core.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, args.checkpoint)
        if val_batches:
            val_metrics = evaluate(core, val_batches, device, args.joint_loss_weight, args.corrective_loss_weight,
                                   args.corrective_joint_indices)
            if curve:
                curve.writerow({"step": step, "epoch": f"{step / steps_per_epoch:.3f}", "seconds": f"{seconds:.1f}",
                                "lr": "", "split": "val", **{k: f"{v:.6g}" for k, v in val_metrics.items()}})
            say(f"final validation: {', '.join(f'{k} {v:.4f}' for k, v in val_metrics.items())}")
        if curve_file:
            curve_file.close()
        exported = core.to("cpu").eval()
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        size = export_onnx(exported, args.out, {"autorig.seed": args.seed, "autorig.steps": step})
        check_path = str(Path(args.out).with_suffix("")) + ".check.json"
        source = val if len(val) else train
        example = make_example(source, 0, 256, np.random.default_rng(args.seed + 104729), augment=False, noise=True)
        write_check(exported, check_path, example["points"][None], example["normals"][None], example["coarse"][None])
        say(f"wrote {args.out} ({size / 2**20:.2f} MiB) and {check_path}; {step} steps in {seconds / 60:.1f} min "
            f"({seconds / max(step - start_step, 1):.2f} s/step)")
        if args.card:
            launcher = f"torchrun --nproc_per_node {world} " if world > 1 else "OPENBLAS_NUM_THREADS=1 /usr/bin/python3 "
            coarse = {k: val_metrics[k] for k in ("coarse_joint_error",)} if val_metrics else {}
            shown = {k: v for k, v in val_metrics.items() if k != "coarse_joint_error"}
            write_card(
                args.card, command=launcher + shlex.join(["models/training/train_point_rig.py", *sys.argv[1:]]),
                seed=args.seed, data_dir=args.data, counts_train=train.counts_by_source(),
                counts_val=val.counts_by_source(),
                characters_val=sorted({character_of(n) for n in val.names}), parameters=parameter_count(core),
                onnx_path=args.out, onnx_bytes=size, config=core.config,
                training={"steps": step, "epochs": round(step / steps_per_epoch, 2), "batch per process": args.batch,
                          "points": args.points, "world size": world, "device": args.device, "peak lr": args.lr,
                          "joint loss weight": args.joint_loss_weight,
                          "corrective loss weight": args.corrective_loss_weight,
                          "corrective joints": ", ".join(JOINT_NAMES[j] for j in args.corrective_joint_indices),
                          "headless share": args.headless, "minutes": round(seconds / 60, 1),
                          "seconds per step": round(seconds / max(step - start_step, 1), 3)},
                metrics=shown, coarse_metrics={"joint_error": coarse.get("coarse_joint_error")} if coarse else {})
    if world > 1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
