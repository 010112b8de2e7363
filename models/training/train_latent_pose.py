#!/usr/bin/env python3
"""Train LatentReRig (issue 6, "Apply Latent Pose") on a folder of latent-pose identities (*.pose) in two phases and
export what the sidecar runs.

  Phase A: SDF encoder (samples → μ, log σ²), SDF decoder D(z, x), identity classifier on μ, pose classifier on the
           normalised Δμ, latent losses (same-pose consistency across identities, additivity of combinations,
           contrast between poses) and a small KL.
           → models/latent_pose_encoder.{onnx,check.json,curve.csv,md}, models/latent_pose_library.json
  Phase B: the encoder frozen; the vertex decoder (virtual bones, latent mask, kNN refinement, detail branch).
           → models/latent_pose_decoder.{onnx,check.json,curve.csv,md}

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 models/training/train_latent_pose.py --data DIR --phase a --max-minutes 35
  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 models/training/train_latent_pose.py --data DIR --phase b --max-minutes 35
  torchrun --nproc_per_node 4 models/training/train_latent_pose.py --device cuda ...   (DistributedDataParallel)
  ... --tiny   (CI: a few steps, small batches)

Phase A leaves a checkpoint (--work, default out/latent_pose/phase_a.pt) with the encoder and the latents of every
identity, which phase B starts from. Validation identities: every 10th file by sorted name. Runs are reproducible for
a given seed, device and world size (except that --max-minutes lets the clock decide where training stops).
"""
import os

# Before numpy/torch load BLAS: one thread each, the machine is shared.
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
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))

from latent_pose import losses as L  # noqa: E402
from latent_pose.card import table, write_card  # noqa: E402
from latent_pose.dataset import (PoseSet, all_neighbours, combo_components, condition_delta, nearest_neighbours,  # noqa: E402
                                 phase_a_batch, phase_b_batch)
from latent_pose.export import encoder_module, export_decoder, export_encoder, write_check  # noqa: E402
from latent_pose.latents import (build_library, cross_identity_cosine, encode_all, farthest_identities,  # noqa: E402
                                 write_library)
from latent_pose.model import LatentHeads, SdfDecoder, SdfEncoder, VertexDecoder, parameter_count  # noqa: E402
from latent_pose.pose_io import VARIANTS, list_pose_files, split_by_identity  # noqa: E402
from malloc_tuning import keep_freed_memory  # noqa: E402

CURVE_A = ["step", "seconds", "lr", "split", "loss", "sdf_l1", "kl", "identity_ce", "pose_ce", "consistency",
           "additivity", "contrast", "pose_accuracy", "cosine"]
CURVE_B = ["step", "seconds", "lr", "split", "loss", "position", "knn", "static", "mask_bce", "smooth", "error",
           "no_motion"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="folder of *.pose files (searched recursively)")
    p.add_argument("--phase", choices=["a", "b", "both"], default="both")
    p.add_argument("--models", default="models", help="folder the ONNX files, check files, cards, curves and the "
                   "library go to (latent_pose_*)")
    p.add_argument("--work", default="out/latent_pose", help="folder of the checkpoints (phase_a.pt, phase_b.pt)")
    p.add_argument("--latent", type=int, default=128, help="latent size L")
    p.add_argument("--knn", type=int, default=12, help="K, neighbours per anchor (itself excluded)")
    p.add_argument("--steps", type=int, default=4000, help="optimizer steps per phase (the clock may stop it first)")
    p.add_argument("--max-minutes", type=float, default=None, help="stop a phase after this long; the learning "
                   "rate decays by whichever of steps and time runs out first; validation and export follow")
    p.add_argument("--batch-identities", type=int, default=3, help="phase A: identities per step (and process)")
    p.add_argument("--extra-poses", type=int, default=2, help="phase A: poses per step besides a combination and "
                   "its components")
    p.add_argument("--decode-points", type=int, default=256, help="phase A: SDF samples scored per shape")
    p.add_argument("--batch-pairs", type=int, default=6, help="phase B: (neutral → state) pairs per step")
    p.add_argument("--motion-floor", type=float, default=0.005, help="phase B: added to a pair's mean motion where "
                   "the losses are normalised by it (smaller: millimetre corrective pairs weigh more)")
    p.add_argument("--corrective-weight", type=float, default=2.0, help="phase B: weight of corrective pairs")
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (AdamW; warm-up then cosine decay)")
    p.add_argument("--weight-decay", type=float, default=1e-5)
    p.add_argument("--library-identities", type=int, default=16, help="training identities whose Δμ the library "
                   "stores for the 'nearest' strategy (farthest-point picks in μ)")
    p.add_argument("--eval-identities", type=int, default=8, help="phase B's final metrics: this many validation "
                   "identities (every pose and variant of each), to bound the time they take")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    p.add_argument("--val-every", type=int, default=250)
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--limit", type=int, default=None, help="use only the first N files (by name)")
    p.add_argument("--tiny", action="store_true", help="CI: 30 steps per phase, 2 identities and one extra pose a "
                   "phase A step, 128 decode points, 2 pairs a phase B step, final decoder metrics on 1 identity")
    args = p.parse_args(argv)
    if args.tiny:
        if "--steps" not in argv:
            args.steps = 30
        args.extra_poses = 1
        args.decode_points = 128
        args.batch_identities = 2
        args.batch_pairs = 2
        args.eval_identities = 1
        args.val_every = 10 ** 9
        args.log_every = 5
        args.library_identities = min(args.library_identities, 4)
        if args.lr == p.get_default("lr"):
            args.lr = 2e-3
    return args


def distributed():
    """(rank, world size, local rank) from torchrun's environment; (0, 1, 0) for a plain run."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 0, 1, 0
    return int(os.environ["RANK"]), world, int(os.environ.get("LOCAL_RANK", "0"))


def learning_rate(progress, peak, warmup=0.03, floor=0.05):
    """Linear warm-up over the first `warmup` of training, then cosine decay to floor × peak; progress in [0, 1]."""
    if progress < warmup:
        return peak * (0.1 + 0.9 * progress / warmup)
    t = min(1.0, (progress - warmup) / (1.0 - warmup))
    return peak * (floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * t)))


class Curve:
    """The per-step CSV of one phase (written by the lead process only)."""

    def __init__(self, path, columns):
        self.columns = columns
        self.file = open(path, "w", newline="") if path else None
        self.writer = csv.DictWriter(self.file, fieldnames=columns, extrasaction="ignore") if self.file else None
        if self.writer:
            self.writer.writeheader()

    def row(self, **values):
        if self.writer:
            self.writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in values.items()})
            self.file.flush()

    def close(self):
        if self.file:
            self.file.close()


class Clock:
    """Training progress in [0, 1] by steps or time, whichever is further; agreed on by all processes."""

    def __init__(self, steps, max_minutes, device, world):
        self.steps, self.max_seconds = steps, (max_minutes * 60 if max_minutes else None)
        self.t0, self.device, self.world = time.time(), device, world

    def progress(self, step):
        p = step / self.steps
        if self.max_seconds:
            p = max(p, (time.time() - self.t0) / self.max_seconds)
        if self.world > 1:
            flag = torch.tensor([p], device=self.device)
            torch.distributed.all_reduce(flag, op=torch.distributed.ReduceOp.MAX)
            p = flag.item()
        return p

    def seconds(self):
        return time.time() - self.t0


def set_lr(optimizer, lr):
    for group in optimizer.param_groups:
        group["lr"] = lr


def average_metrics(metrics, device, world):
    if world <= 1:
        return metrics
    vector = torch.tensor(list(metrics.values()), device=device)
    torch.distributed.all_reduce(vector)
    return dict(zip(metrics, (vector / world).tolist()))


# ---------------------------------------------------------------------------------------------------- phase A

class PhaseA(torch.nn.Module):
    """Phase A's modules together (one DDP wrapper): encoder, SDF decoder, classifiers."""

    def __init__(self, latent, identities, poses):
        super().__init__()
        self.encoder = SdfEncoder(latent)
        self.decoder = SdfDecoder(latent)
        self.heads = LatentHeads(latent, identities, poses)

    def forward(self, batch):
        """A phase A batch (dataset.phase_a_batch) → (loss, metrics dict)."""
        enc = batch["encode"]
        I, S = enc.shape[0], enc.shape[1]
        mu, logvar = self.encoder(enc.reshape(I * S, *enc.shape[2:]))
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp() if self.training else mu
        x = batch["decode_points"].reshape(I * S, -1, 3)
        sdf = self.decoder(z, x)
        sdf_target = batch["decode_sdf"].reshape(I * S, -1)
        sdf_fit = L.sdf_loss(sdf, sdf_target)
        with torch.no_grad():
            sdf_l1 = L.sdf_l1(sdf, sdf_target)
        kl = L.kl_divergence(mu, logvar)
        identity_ce = F.cross_entropy(self.heads.forward_identity(mu), batch["identity"].repeat_interleave(S))
        mu = mu.reshape(I, S, -1)
        delta = mu[:, 1:] - mu[:, :1]
        directions = L.unit(delta)
        pose_logits = self.heads.forward_pose(directions.reshape(I * (S - 1), -1))
        pose_labels = batch["pose"].repeat(I)
        pose_ce = F.cross_entropy(pose_logits, pose_labels)
        consistency = L.direction_consistency(directions)
        related = torch.eye(S - 1, dtype=torch.bool, device=mu.device)
        c, a, b = batch["combo"].tolist()
        if c > 0:
            additivity = L.additivity(delta[:, c - 1], delta[:, a - 1], delta[:, b - 1])
            for s, t in [(c, a), (c, b)]:
                related[s - 1, t - 1] = related[t - 1, s - 1] = True
        else:
            additivity = mu.sum() * 0.0
        contrast = L.pose_contrast(directions, related)
        loss = (50.0 * sdf_fit + 1e-3 * kl + 0.1 * identity_ce + 0.2 * pose_ce + 1.0 * consistency
                + 0.5 * additivity + 0.5 * contrast)
        with torch.no_grad():
            accuracy = (pose_logits.argmax(-1) == pose_labels).float().mean()
        metrics = {"loss": loss.item(), "sdf_l1": sdf_l1.item(), "kl": kl.item(), "identity_ce": identity_ce.item(),
                   "pose_ce": pose_ce.item(), "consistency": consistency.item(), "additivity": additivity.item(),
                   "contrast": contrast.item(), "pose_accuracy": accuracy.item()}
        return loss, metrics


@torch.no_grad()
def sdf_error(model, data, device, points=512, seed=0):
    """Mean clamped SDF L1 of every shape of data, encoded from all its samples and decoded (μ) at `points` of them."""
    model.eval()
    rng = np.random.default_rng(seed)
    total, count = 0.0, 0
    P = len(data.poses)
    for i in range(len(data)):
        shapes = [data.shape_samples(i, -1, 0)] + [data.shape_samples(i, p, v) for p in range(P) for v in range(3)]
        for start in range(0, len(shapes), 26):
            chunk = shapes[start:start + 26]
            enc = torch.from_numpy(np.stack([np.concatenate([s[0], s[1][:, None]], 1) for s in chunk])).to(device)
            pick = rng.choice(enc.shape[1], size=min(points, enc.shape[1]), replace=False)
            mu, _ = model.encoder(enc)
            sdf = model.decoder(mu, enc[:, pick, :3])
            total += L.sdf_l1(sdf, enc[:, pick, 3]).item() * len(chunk)
            count += len(chunk)
    model.train()
    return total / max(count, 1)


@torch.no_grad()
def latent_metrics(heads, poses, mu_neutral, mu_state, device):
    """On one set of identities: Δμ cross-identity cosine and pose-classifier accuracy per pose and variant, and the
    additivity error of each combination. → dict with 'cosine' (P, 3), 'accuracy' (P, 3), 'additivity' {combo: (3,)}."""
    delta = mu_state - mu_neutral[:, None, None, :]
    P = len(poses)
    cosine = np.array([[cross_identity_cosine(delta[:, p, v]) for v in range(3)] for p in range(P)])
    d = torch.from_numpy(delta).to(device)
    logits = heads.forward_pose(L.unit(d))
    accuracy = (logits.argmax(-1).cpu().numpy() == np.arange(P)[None, :, None]).mean(axis=0)
    additivity = {}
    for c, a, b in combo_components(poses):
        err = np.linalg.norm(delta[:, c] - delta[:, a] - delta[:, b], axis=-1)
        additivity[poses[c]] = (err / np.maximum(np.linalg.norm(delta[:, c], axis=-1), 1e-12)).mean(axis=0)
    return {"cosine": cosine, "accuracy": accuracy, "additivity": additivity}


def run_phase_a(args, train, val, device, rank, world, say):
    lead = rank == 0
    P = len(train.poses)
    model = PhaseA(args.latent, len(train), P).to(device)
    core = model
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if args.device == "cuda" else None)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    say(f"phase A: encoder {parameter_count(core.encoder):,}, SDF decoder {parameter_count(core.decoder):,}, "
        f"heads {parameter_count(core.heads):,} parameters; L {args.latent}, device {args.device}, world {world}")
    curve = Curve(f"{args.models}/latent_pose_encoder.curve.csv" if lead else None, CURVE_A)
    rng = np.random.default_rng([args.seed, rank])
    clock = Clock(args.steps, args.max_minutes, device, world)
    step, window = 0, []
    per_batch = min(args.batch_identities, len(train))
    while True:
        progress = clock.progress(step)
        if progress >= 1.0:
            break
        lr = learning_rate(progress, args.lr)
        set_lr(optimizer, lr)
        ids = rng.choice(len(train), size=per_batch, replace=False)
        batch = {k: v.to(device) for k, v in phase_a_batch(train, ids, rng, args.extra_poses, 2048,
                                                            args.decode_points).items()}
        loss, metrics = model(batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        metrics = average_metrics(metrics, device, world)
        window.append(metrics)
        curve.row(step=step, seconds=round(clock.seconds(), 1), lr=lr, split="train", **metrics)
        if step % args.log_every == 0 or step == 1:
            mean = {k: np.mean([m[k] for m in window]) for k in window[0]}
            say(f"A step {step} loss {mean['loss']:.4f} sdf {mean['sdf_l1']:.4f} id {mean['identity_ce']:.3f} "
                f"pose {mean['pose_ce']:.3f} cons {mean['consistency']:.3f} add {mean['additivity']:.3f} "
                f"contrast {mean['contrast']:.3f} kl {mean['kl']:.3f} lr {lr:.2g} "
                f"{clock.seconds() / step:.2f} s/step")
            window = []
        if lead and len(val) and step % args.val_every == 0:
            mu_n, mu_s = encode_all(core.encoder, val, device)
            lm = latent_metrics(core.heads, val.poses, mu_n, mu_s, device)
            core.train()
            cos, acc = float(np.nanmean(lm["cosine"])), float(lm["accuracy"].mean())
            curve.row(step=step, seconds=round(clock.seconds(), 1), lr=lr, split="val", cosine=cos, pose_accuracy=acc)
            say(f"  validation: Δμ cosine {cos:.3f} (skinning {np.nanmean(lm['cosine'][:, 0]):.3f}), "
                f"pose accuracy {acc:.3f}")
    seconds = clock.seconds()
    if not lead:
        return
    core.eval()
    say(f"phase A: {step} steps in {seconds / 60:.1f} min; encoding every identity ...")
    t = time.time()
    mu_train = encode_all(core.encoder, train, device)
    mu_val = encode_all(core.encoder, val, device)
    say(f"  encoded {len(train) + len(val)} identities in {time.time() - t:.0f} s")
    Path(args.work).mkdir(parents=True, exist_ok=True)
    torch.save({"config": {"latent": args.latent, "identities": len(train), "poses": P},
                "model": core.state_dict(), "train_names": train.names, "val_names": val.names, "poses": train.poses,
                "mu_train": mu_train, "mu_val": mu_val, "step": step}, f"{args.work}/phase_a.pt")
    encoder = core.encoder.to("cpu").eval()
    out = f"{args.models}/latent_pose_encoder.onnx"
    size = export_encoder(encoder, out, {"autorig.seed": args.seed, "autorig.steps": step,
                                         "autorig.latent": args.latent})
    source = val if len(val) else train
    check_in = np.concatenate([source.neutral_points[0], source.neutral_sdf[0][:, None]], 1)[None].astype(np.float32)
    write_check(encoder_module(encoder), f"{args.models}/latent_pose_encoder.check.json", {"sdf_samples": check_in})
    library_ids = farthest_identities(mu_train[0], args.library_identities)
    library = build_library(train.names, train.poses, *mu_train, args.knn, library_ids)
    write_library(f"{args.models}/latent_pose_library.json", library)
    lib_bytes = Path(f"{args.models}/latent_pose_library.json").stat().st_size
    say(f"wrote {out} ({size / 2**20:.2f} MiB), its check file, the library ({lib_bytes / 2**20:.2f} MiB, "
        f"{len(library_ids)} identities stored)")

    # validation metrics, on held-out identities (training identities where there are none)
    core.to(device)
    metric_set, metric_mu = (val, mu_val) if len(val) else (train, mu_train)
    metric_name = "validation" if len(val) else "training (no validation identities)"
    sdf_val = sdf_error(core, metric_set, device)
    lm = latent_metrics(core.heads, train.poses, *metric_mu, device)
    # cosine of each validation Δμ to the training mean of its pose (what the 'mean' strategy feeds the decoder)
    mean_train = (mu_train[1] - mu_train[0][:, None, None]).mean(0)
    d_val = metric_mu[1] - metric_mu[0][:, None, None]
    to_mean = (L.unit(torch.from_numpy(d_val)) * L.unit(torch.from_numpy(mean_train))[None]).sum(-1).mean(0).numpy()
    curve.row(step=step, seconds=round(seconds, 1), lr="", split="val", sdf_l1=sdf_val,
              cosine=float(np.nanmean(lm["cosine"])), pose_accuracy=float(lm["accuracy"].mean()))
    curve.close()
    say(f"final {metric_name}: SDF L1 {sdf_val:.5f}, Δμ cosine {np.nanmean(lm['cosine']):.3f} "
        f"(per variant {np.nanmean(lm['cosine'], axis=0).round(3).tolist()}), pose accuracy "
        f"{lm['accuracy'].mean():.3f} (per variant {lm['accuracy'].mean(0).round(3).tolist()})")
    rows = [[pose, *lm["cosine"][p], *to_mean[p], *lm["accuracy"][p]] for p, pose in enumerate(train.poses)]
    rows.append(["**mean**", *np.nanmean(lm["cosine"], 0), *to_mean.mean(0), *lm["accuracy"].mean(0)])
    v3 = ["skin", "corr", "skin+corr"]
    add_rows = [[name, *err] for name, err in lm["additivity"].items()]
    if args.card_a:
        write_card(
            args.card_a, title="latent_pose_encoder: LatentReRig SDF encoder (phase A)",
            summary="SDF variational autoencoder of issue 6 (models/training/latent_pose/): SDF samples of a mesh in "
                    "its canonical frame → latent μ, log σ². Its Δμ between posed and neutral states condition the "
                    "vertex decoder (latent_pose_decoder.onnx); models/latent_pose_library.json holds the training "
                    "identities' Δμ per pose and variant.",
            facts={"File": f"`{out}` ({size / 2**20:.2f} MiB, ONNX opset 17): sdf_samples (1, N, 4) → mu, logvar (1, L)",
                   "Latent size L": args.latent,
                   "Parameters": f"encoder {parameter_count(core.encoder):,} (exported); trained with the SDF decoder "
                                 f"{parameter_count(core.decoder):,} and the classifiers {parameter_count(core.heads):,}",
                   "Config": f"`{core.encoder.config}`, SDF decoder `{core.decoder.config}`",
                   "Library": f"`{args.models}/latent_pose_library.json` ({lib_bytes / 2**20:.2f} MiB): mean Δμ over "
                              f"all {len(train)} training identities; per-identity Δμ and μ for {len(library_ids)} of "
                              "them (farthest-point picks in μ)",
                   "Seed": args.seed, "Command": f"`{args.command}`"},
            data_lines=[f"Folder `{args.data}`: {len(train)} training identities {train.counts_by_source()}, "
                        f"{len(val)} validation identities {val.counts_by_source()} (every 10th file by sorted name). "
                        f"Each identity: neutral + {len(train.poses)} poses × 3 variants, {train.neutral_points.shape[1]} "
                        "SDF samples per shape."],
            training={"steps": step, "minutes": round(seconds / 60, 1), "seconds per step": round(seconds / max(step, 1), 3),
                      "identities per step": per_batch, "shapes per identity per step": 4 + args.extra_poses,
                      "device": args.device, "world size": world, "peak lr": args.lr,
                      "loss": "50·|D(z, x) − clamp(s, ±0.1)| + 1e-3·KL + 0.1·identity CE + 0.2·pose CE + consistency + "
                              "0.5·additivity + 0.5·contrast (margin 0.2)"},
            sections=[(f"Metrics on the {metric_name} identities", [
                f"SDF L1 (clamped at 0.1, μ decoded at 512 samples of every shape): {sdf_val:.5f}", "",
                "Δμ cross-identity cosine (mean over pairs of different identities; LatentReRig reports 0.958 for "
                "elbowBentLf), cosine to the training mean Δμ of the pose, and pose-classifier accuracy on the "
                "normalised Δμ, per pose and variant:", "",
                *table(["pose", *[f"cos {v}" for v in v3], *[f"to mean {v}" for v in v3], *[f"acc {v}" for v in v3]], rows),
                "", "Additivity, |Δμ(a+b) − Δμ(a) − Δμ(b)| / |Δμ(a+b)|:", "",
                *table(["combination", *v3], add_rows)])])
        say(f"wrote {args.card_a}")


# ---------------------------------------------------------------------------------------------------- phase B

def phase_b_losses(decoder, batch, floor=None, corrective_weight=2.0):
    """A phase B batch (dataset.phase_b_batch) → (loss, metrics dict). floor: added to each pair's mean motion where
    losses are normalised by it (losses.MOTION_FLOOR by default)."""
    predicted, mask = decoder(batch["points"], batch["normals"], batch["knn"], batch["mu_source"],
                              batch["delta_direction"], batch["delta_norm"], batch["pair_kind"])
    target, points, knn = batch["target"], batch["points"], batch["knn"]
    weight = torch.tensor([1.0, corrective_weight, 1.0], device=points.device)[batch["variant"]]
    position = L.relative_squared_error(predicted, target, points, weight, floor)
    knn_term = L.knn_consistency(predicted, target, points, knn, weight)
    static, mask_bce = L.static_loss(predicted, target, points, mask, weight, floor)
    smooth = L.smoothness(predicted, target, points, knn, weight, floor)
    # the static and smoothness terms are L1-like: weighted low, or they hold the decoder in the 'no motion' optimum
    loss = position + 0.2 * knn_term + 0.1 * static + 0.1 * mask_bce + 0.1 * smooth
    with torch.no_grad():
        error = (predicted - target).norm(dim=-1).mean()
        no_motion = (points - target).norm(dim=-1).mean()
    return loss, {"loss": loss.item(), "position": position.item(), "knn": knn_term.item(), "static": static.item(),
                  "mask_bce": mask_bce.item(), "smooth": smooth.item(), "error": error.item(),
                  "no_motion": no_motion.item()}


@torch.no_grad()
def decoder_errors(decoder, data, knn, mu_neutral, deltas, device, poses=None, batch=8):
    """Mean anchor error per variant of the decoder and of 'no motion' (the neutral as the answer), over every
    identity of data and the given poses (all by default), conditioned on deltas (I, P, 3, L).
    → dict variant → {'error', 'no_motion', 'moving_error', 'moving_no_motion'} (moving: points the truth moves
    ≥ 1e-4 only)."""
    decoder.eval()
    poses = range(len(data.poses)) if poses is None else poses
    sums = {v: np.zeros(4) for v in range(3)}
    counts = {v: np.zeros(2) for v in range(3)}
    pairs = [(i, p, v) for i in range(len(data)) for p in poses for v in range(3)]
    for start in range(0, len(pairs), batch):
        chunk = pairs[start:start + batch]
        b = phase_b_batch(data, chunk, knn, mu_neutral, np.stack([deltas[i, p, v] for i, p, v in chunk]))
        b = {k: t.to(device) for k, t in b.items()}
        pred, _ = decoder(b["points"], b["normals"], b["knn"], b["mu_source"], b["delta_direction"], b["delta_norm"],
                          b["pair_kind"])
        err = (pred - b["target"]).norm(dim=-1)
        still = (b["points"] - b["target"]).norm(dim=-1)
        moving = (still >= L.STATIC_DISTANCE).float()
        for k, (_, _, v) in enumerate(chunk):
            sums[v] += [err[k].sum().item(), still[k].sum().item(), (err[k] * moving[k]).sum().item(),
                        (still[k] * moving[k]).sum().item()]
            counts[v] += [err.shape[1], moving[k].sum().item()]
    decoder.train()
    out = {}
    for v in range(3):
        n, m = max(counts[v][0], 1), max(counts[v][1], 1)
        out[VARIANTS[v]] = {"error": sums[v][0] / n, "no_motion": sums[v][1] / n, "moving_error": sums[v][2] / m,
                            "moving_no_motion": sums[v][3] / m}
    return out


def run_phase_b(args, train, val, device, rank, world, say):
    lead = rank == 0
    state = torch.load(f"{args.work}/phase_a.pt", map_location="cpu")
    if state["train_names"] != train.names or state["poses"] != train.poses:
        raise SystemExit(f"{args.work}/phase_a.pt was trained on other identities or poses: run phase A on this data")
    mu_train_n, mu_train_s = state["mu_train"]
    mu_val_n, mu_val_s = state["mu_val"]
    latent = state["config"]["latent"]
    delta_train = mu_train_s - mu_train_n[:, None, None]
    delta_val = mu_val_s - mu_val_n[:, None, None]
    delta_mean = delta_train.mean(0)
    t = time.time()
    knn_train, knn_val = all_neighbours(train, args.knn), all_neighbours(val, args.knn)
    say(f"phase B: neighbours of {len(train) + len(val)} identities in {time.time() - t:.0f} s")
    decoder = VertexDecoder(latent).to(device)
    core = decoder
    if world > 1:
        decoder = torch.nn.parallel.DistributedDataParallel(decoder, device_ids=[device.index] if args.device == "cuda" else None)
    optimizer = torch.optim.AdamW(decoder.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    say(f"phase B: vertex decoder {parameter_count(core):,} parameters, K {args.knn}, config {core.config}")
    curve = Curve(f"{args.models}/latent_pose_decoder.curve.csv" if lead else None, CURVE_B)
    rng = np.random.default_rng([args.seed, 17, rank])
    P = len(train.poses)
    # a fixed validation subset for the periodic check: every identity, a few poses
    val_poses = list(range(0, P, max(1, P // 4)))
    clock = Clock(args.steps, args.max_minutes, device, world)
    step, window = 0, []
    while True:
        progress = clock.progress(step)
        if progress >= 1.0:
            break
        lr = learning_rate(progress, args.lr)
        set_lr(optimizer, lr)
        pairs = [(int(rng.integers(len(train))), int(rng.integers(P)), int(rng.integers(3)))
                 for _ in range(args.batch_pairs)]
        deltas = np.stack([condition_delta(delta_train, pair, delta_mean, rng) for pair in pairs])
        batch = {k: v.to(device) for k, v in phase_b_batch(train, pairs, knn_train, mu_train_n, deltas).items()}
        loss, metrics = phase_b_losses(decoder, batch, args.motion_floor, args.corrective_weight)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(decoder.parameters(), 1.0)
        optimizer.step()
        step += 1
        metrics = average_metrics(metrics, device, world)
        window.append(metrics)
        curve.row(step=step, seconds=round(clock.seconds(), 1), lr=lr, split="train", **metrics)
        if step % args.log_every == 0 or step == 1:
            mean = {k: np.mean([m[k] for m in window]) for k in window[0]}
            say(f"B step {step} loss {mean['loss']:.4f} pos {mean['position']:.3f} knn {mean['knn']:.3f} "
                f"static {mean['static']:.3f} mask {mean['mask_bce']:.3f} smooth {mean['smooth']:.3f} "
                f"err {mean['error']:.5f} (no motion {mean['no_motion']:.5f}) lr {lr:.2g} "
                f"{clock.seconds() / step:.2f} s/step")
            window = []
        if lead and len(val) and step % args.val_every == 0:
            e = decoder_errors(core, val, knn_val, mu_val_n, delta_val, device, val_poses)
            mean_err = float(np.mean([e[v]["error"] for v in VARIANTS]))
            curve.row(step=step, seconds=round(clock.seconds(), 1), lr=lr, split="val", error=mean_err,
                      no_motion=float(np.mean([e[v]["no_motion"] for v in VARIANTS])))
            say("  validation (own Δμ): " + ", ".join(f"{v} {e[v]['error']:.5f} (no motion {e[v]['no_motion']:.5f})"
                                                     for v in VARIANTS))
    seconds = clock.seconds()
    if not lead:
        return
    Path(args.work).mkdir(parents=True, exist_ok=True)
    torch.save({"config": core.config, "knn": args.knn, "model": core.state_dict(), "step": step},
               f"{args.work}/phase_b.pt")
    exported = core.to("cpu").eval()
    out = f"{args.models}/latent_pose_decoder.onnx"
    size = export_decoder(exported, out, args.knn, {"autorig.seed": args.seed, "autorig.steps": step})
    # check input: 512 anchors of the first validation identity, their own neighbours, its own Δμ of pose 0
    source, mu_n, delta = (val, mu_val_n, delta_val) if len(val) else (train, mu_train_n, delta_train)
    A = source.anchors.shape[1]
    pick = np.sort(np.random.default_rng(args.seed).choice(A, min(512, A), replace=False))
    pts = source.anchors[0][pick]
    knn = nearest_neighbours(torch.from_numpy(pts), args.knn).numpy().astype(np.int64)
    d = delta[0, 0, 0]
    write_check(exported, f"{args.models}/latent_pose_decoder.check.json", {
        "points": pts[None], "normals": source.normals[0][pick][None], "knn": knn[None],
        "mu_source": mu_n[0][None].astype(np.float32), "delta_direction": (d / np.linalg.norm(d))[None].astype(np.float32),
        "delta_norm": np.array([[np.linalg.norm(d)]], np.float32), "pair_kind": np.array([[1.0, 0.0, 0.0]], np.float32)})
    say(f"wrote {out} ({size / 2**20:.2f} MiB) and its check file; {step} steps in {seconds / 60:.1f} min")
    core.to(device)
    metric_set = (val, knn_val, mu_val_n, delta_val) if len(val) else (train, knn_train, mu_train_n, delta_train)
    metric_name = "validation" if len(val) else "training (no validation identities)"
    n_eval = min(args.eval_identities, len(metric_set[0]))
    metric_set = (metric_set[0].subset(range(n_eval)), metric_set[1][:n_eval], metric_set[2][:n_eval],
                  metric_set[3][:n_eval])
    t = time.time()
    own = decoder_errors(core, *metric_set, device)
    mean = decoder_errors(core, *metric_set[:3], np.broadcast_to(delta_mean, metric_set[3].shape), device)
    say(f"  final validation in {time.time() - t:.0f} s")
    curve.row(step=step, seconds=round(seconds, 1), lr="", split="val",
              error=float(np.mean([own[v]["error"] for v in VARIANTS])),
              no_motion=float(np.mean([own[v]["no_motion"] for v in VARIANTS])))
    curve.close()
    rows = []
    for v in VARIANTS:
        rows.append([v, own[v]["no_motion"], own[v]["error"], mean[v]["error"], own[v]["moving_no_motion"],
                     own[v]["moving_error"], mean[v]["moving_error"]])
        say(f"final {metric_name} {v}: error own Δμ {own[v]['error']:.5f}, mean Δμ {mean[v]['error']:.5f}, "
            f"no motion {own[v]['no_motion']:.5f}")
    if args.card_b:
        write_card(
            args.card_b, title="latent_pose_decoder: LatentReRig vertex decoder (phase B)",
            summary="Vertex decoder of issue 6 (models/training/latent_pose/model.py VertexDecoder): source anchor "
                    "positions and normals, their kNN graph, μ of the source (latent_pose_encoder.onnx), the "
                    "normalised Δμ of a pose, its norm and the pair kind → target anchor positions and a per-point "
                    "motion mask. Stages: point features + one EdgeConv + a max-pooled shape code; "
                    f"{core.config['bones']} virtual bones (soft assignment, rigid transforms, blended); "
                    f"{core.config['refinements']} kNN (EdgeConv) refinement stages; a residual detail branch; a "
                    "sigmoid mask gating the displacement.",
            facts={"File": f"`{out}` ({size / 2**20:.2f} MiB, ONNX opset 17); A dynamic, batch dynamic",
                   "K": f"{args.knn} (knn input: each anchor's {args.knn} nearest OTHER anchors by Euclidean distance "
                        "in the neutral, itself excluded, nearest first; int64 (1, A, K))",
                   "Latent size L": latent, "Parameters": f"{parameter_count(core):,}",
                   "Config": f"`{core.config}`", "Seed": args.seed, "Command": f"`{args.command}`",
                   "Encoder": f"frozen, from {args.work}/phase_a.pt (phase A step {state['step']})"},
            data_lines=[f"Folder `{args.data}`: {len(train)} training identities, {len(val)} validation identities "
                        "(every 10th file by sorted name); pairs (neutral → pose, variant), "
                        f"{len(train.poses)} poses × 3 variants, {train.anchors.shape[1]} anchors each.",
                        "Conditioning Δμ during training: the pair's own identity's 40 % of the time, the training "
                        "mean of the pose and variant 30 % (the sidecar's 'mean' strategy), another training "
                        "identity's 30 % (what 'nearest' gives)."],
            training={"steps": step, "minutes": round(seconds / 60, 1), "seconds per step": round(seconds / max(step, 1), 3),
                      "pairs per step": args.batch_pairs, "device": args.device, "world size": world,
                      "peak lr": args.lr,
                      "loss": f"position (mean squared error / (the pair's mean squared motion + {args.motion_floor}²); "
                              "the other terms normalised by the pair's mean motion + the same floor; corrective pairs "
                              f"×{args.corrective_weight}) + 0.2·kNN "
                              "consistency (edges whose length the truth keeps within 2 %) + 0.1·static (points the "
                              "truth moves < 1e-4) + 0.1·mask BCE + 0.1·smoothness (displacement Laplacian vs the "
                              "truth's). No normal loss (not trained: normals are recomputed from the posed mesh)."},
            sections=[(f"Metrics on {n_eval} {metric_name} identities ({', '.join(metric_set[0].names)})", [
                "Mean anchor error in units of the canonical box (the character's longest side), over every "
                "identity, pose and anchor; 'no motion' answers the neutral. 'own Δμ': the identity's own encoded "
                "Δμ; 'mean Δμ': the training mean of the pose (the sidecar's 'mean' strategy). 'moving': only "
                "anchors the truth moves by at least 1e-4.", "",
                *table(["variant", "no motion", "own Δμ", "mean Δμ", "moving: no motion", "moving: own Δμ",
                        "moving: mean Δμ"], rows)])])
        say(f"wrote {args.card_b}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    args.command = "OPENBLAS_NUM_THREADS=1 /usr/bin/python3 " + shlex.join(["models/training/train_latent_pose.py", *argv])
    args.card_a = f"{args.models}/latent_pose_encoder.md"
    args.card_b = f"{args.models}/latent_pose_decoder.md"
    rank, world, local_rank = distributed()
    device = torch.device(f"cuda:{local_rank}" if args.device == "cuda" else "cpu")
    if args.device == "cuda":
        torch.cuda.set_device(device)
    else:
        keep_freed_memory()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed + rank)
    np.random.seed(args.seed)
    if world > 1:
        torch.distributed.init_process_group(backend="nccl" if args.device == "cuda" else "gloo")
        args.command = f"torchrun --nproc_per_node {world} " + args.command.split(" ", 2)[2]
    say = (lambda *a: print(*a, flush=True)) if rank == 0 else (lambda *a: None)
    files = list_pose_files(args.data)
    if args.limit:
        files = files[: args.limit]
    if not files:
        raise SystemExit(f"no *.pose files in {args.data}")
    train_files, val_files = split_by_identity(files)
    t = time.time()
    train, val = PoseSet(train_files), PoseSet(val_files)
    say(f"{len(files)} identities ({time.time() - t:.0f} s to load): {len(train)} training {train.counts_by_source()}, "
        f"{len(val)} validation {val.counts_by_source()}; {len(train.poses)} poses")
    Path(args.models).mkdir(parents=True, exist_ok=True)
    if args.phase in ("a", "both"):
        torch.manual_seed(args.seed + rank)
        run_phase_a(args, train, val, device, rank, world, say)
        if world > 1:
            torch.distributed.barrier()
    if args.phase in ("b", "both"):
        torch.manual_seed(args.seed + 1000 + rank)
        run_phase_b(args, train, val, device, rank, world, say)
    if world > 1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
