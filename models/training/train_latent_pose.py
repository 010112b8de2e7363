#!/usr/bin/env python3
"""Train LatentReRig (issue 6, "Apply Latent Pose") on a folder of latent-pose identities (*.pose) in two phases and
export what the sidecar runs.

  Phase A: SDF encoder (samples → μ, log σ²), SDF decoder D(z, x), identity classifier on μ, pose classifier on the
           normalised Δμ, latent losses (same-pose consistency across identities, additivity of combinations,
           contrast between poses) and a small KL.
           → models/latent_pose_encoder.{onnx,check.json,curve.csv,md}, models/latent_pose_library.bin
  Phase B: the encoder frozen; the rig-structured vertex decoder (RigDecoder: the condition → each template joint's
           rotation in its bone frame), trained through each identity's true rig (its *.poserig side file: joints
           and anchor weights) by LBS and DQS against the pose's three variants.
           → models/latent_pose_decoder.{onnx,check.json,curve.csv,md}

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 models/training/train_latent_pose.py --data DIR --phase a --max-minutes 35
  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 models/training/train_latent_pose.py --data DIR --phase b --max-minutes 35
  torchrun --nproc_per_node 4 models/training/train_latent_pose.py --device cuda ...   (DistributedDataParallel)
  ... --tiny   (CI: a few steps, small batches)

Phase A leaves a checkpoint (--work, default out/latent_pose/phase_a.pt) with the encoder and the latents of every
identity, which phase B starts from (identities the checkpoint lacks are encoded with its encoder). Validation
identities: every 10th file by sorted name; phase B alone keeps phase A's held-out identities held out and splits the
ones phase A never saw the same way among themselves (pose_io.split_after_encoder). Runs are reproducible for a given
seed, device and world size (except that --max-minutes lets the clock decide where training stops).
"""
import os

# Before numpy/torch load BLAS: one thread each, the machine is shared.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import csv
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
from latent_pose.dataset import PoseSet, combo_components, condition_delta, phase_a_batch, phase_b_batch  # noqa: E402
from latent_pose.export import encoder_module, export_decoder, export_encoder, write_check  # noqa: E402
from latent_pose.latents import (build_library, cross_identity_cosine, encode_all, farthest_identities,  # noqa: E402
                                 nearest_library_deltas)
from latent_pose.library_file import write_library  # noqa: E402
from latent_pose.model import (LatentHeads, PoseRotationTable, RigDecoder, SdfDecoder, SdfEncoder,  # noqa: E402
                                parameter_count)
from latent_pose.pose_io import (VARIANTS, list_pose_files, pose_rig_path, read_identity, split_after_encoder,  # noqa: E402
                                 split_by_identity)
from latent_pose.rig import posed_variants  # noqa: E402
from malloc_tuning import keep_freed_memory  # noqa: E402
from training_run import distributed, learning_rate  # noqa: E402

CURVE_A = ["step", "seconds", "lr", "split", "loss", "sdf_l1", "kl", "identity_ce", "pose_ce", "consistency",
           "additivity", "contrast", "pose_accuracy", "cosine"]
# loss: the decoder's anchor loss; rest_loss: the same loss of answering the rest pose; table_loss: the rotation
# table's; guide: the squared rotation distance decoder → table, weighted by guide_weight in the total
CURVE_B = ["step", "seconds", "lr", "split", "loss", "rest_loss", "table_loss", "guide", "guide_weight", *VARIANTS,
           "error", "no_motion", "mean_delta_error"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="folder of *.pose files (searched recursively)")
    p.add_argument("--phase", choices=["a", "b", "both"], default="both")
    p.add_argument("--models", default="models", help="folder the ONNX files, check files, cards, curves and the "
                   "library go to (latent_pose_*)")
    p.add_argument("--work", default="out/latent_pose", help="folder of the checkpoints (phase_a.pt, phase_b.pt)")
    p.add_argument("--latent", type=int, default=128, help="latent size L")
    p.add_argument("--steps", type=int, default=4000, help="optimizer steps per phase (the clock may stop it first)")
    p.add_argument("--max-minutes", type=float, default=None, help="stop a phase after this long; the learning "
                   "rate decays by whichever of steps and time runs out first; validation and export follow")
    p.add_argument("--batch-identities", type=int, default=3, help="phase A: identities per step (and process)")
    p.add_argument("--extra-poses", type=int, default=2, help="phase A: poses per step besides a combination and "
                   "its components")
    p.add_argument("--decode-points", type=int, default=256, help="phase A: SDF samples scored per shape")
    p.add_argument("--batch-pairs", type=int, default=16, help="phase B: (identity, pose) pairs per step, each "
                   "scored in its three variants")
    p.add_argument("--corrective-weight", type=float, default=30.0, help="phase B: loss weight of the corrective "
                   "variant (the others 1): it moves ~60× less than they do")
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (AdamW; warm-up then cosine decay)")
    p.add_argument("--table-lr", type=float, default=1e-2, help="phase B: peak learning rate of the per-pose rotation "
                   "table (the training aid; same schedule)")
    p.add_argument("--guide-weight", type=float, default=1.0, help="phase B: initial weight of the decoder's "
                   "rotation-space guide towards the per-pose table (squared radians)")
    p.add_argument("--guide-until", type=float, default=0.6, help="phase B: share of training after which the guide "
                   "is 0 (it decays linearly)")
    p.add_argument("--own-share", type=float, default=0.4, help="phase B: share of pairs conditioned on their own "
                   "identity's Δμ")
    p.add_argument("--mean-share", type=float, default=0.3, help="phase B: share conditioned on the training mean Δμ "
                   "of the pose (what the sidecar's default 'mean' strategy feeds); the rest on another identity's Δμ")
    p.add_argument("--weight-decay", type=float, default=1e-5)
    p.add_argument("--library-identities", type=int, default=16, help="training identities whose Δμ the library "
                   "stores for the 'nearest' strategy (farthest-point picks in μ)")
    p.add_argument("--eval-identities", type=int, default=None, help="phase B's final metrics: this many "
                   "validation identities (every pose and variant of each; default all)")
    p.add_argument("--check-identities", type=int, default=8, help="phase B's periodic validation: this many "
                   "validation identities (every pose)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    p.add_argument("--val-every", type=int, default=250)
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--limit", type=int, default=None, help="use only the first N files (by name)")
    p.add_argument("--tiny", action="store_true", help="CI: 30 steps per phase, 2 identities and one extra pose a "
                   "phase A step, 128 decode points, 34 pairs a phase B step (each pose about once), final decoder metrics on 1 "
                   "identity")
    args = p.parse_args(argv)
    if args.tiny:
        if "--steps" not in argv:
            args.steps = 30
        args.extra_poses = 1
        args.decode_points = 128
        args.batch_identities = 2
        if "--batch-pairs" not in argv:
            args.batch_pairs = 34
        args.eval_identities = 1
        args.check_identities = 0
        args.val_every = 10 ** 9
        args.log_every = 5
        args.library_identities = min(args.library_identities, 4)
        if args.lr == p.get_default("lr"):
            args.lr = 2e-3
    return args


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
    library = build_library(train.names, train.poses, *mu_train, library_ids)
    write_library(f"{args.models}/latent_pose_library.bin", library)
    lib_bytes = Path(f"{args.models}/latent_pose_library.bin").stat().st_size
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
                    "vertex decoder (latent_pose_decoder.onnx); models/latent_pose_library.bin holds the training "
                    "identities' Δμ per pose and variant.",
            facts={"File": f"`{out}` ({size / 2**20:.2f} MiB, ONNX opset 17): sdf_samples (1, N, 4) → mu, logvar (1, L)",
                   "Latent size L": args.latent,
                   "Parameters": f"encoder {parameter_count(core.encoder):,} (exported); trained with the SDF decoder "
                                 f"{parameter_count(core.decoder):,} and the classifiers {parameter_count(core.heads):,}",
                   "Config": f"`{core.encoder.config}`, SDF decoder `{core.decoder.config}`",
                   "Library": f"`{args.models}/latent_pose_library.bin` ({lib_bytes / 2**20:.2f} MiB): mean Δμ over "
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

# The pose condition is always a pose's skinningCorrective Δμ, whatever variant is asked for: the variant only picks
# the blend (skinning: LBS, skinningCorrective: DQS, corrective: rest + DQS − LBS), as the sidecar does.
CONDITION_VARIANT = VARIANTS.index("skinningCorrective")


def variant_weights(corrective_weight, device):
    """The loss weight of each variant (VARIANTS order): 1, corrective_weight, 1 → (3,) tensor."""
    w = [corrective_weight if v == "corrective" else 1.0 for v in VARIANTS]
    return torch.tensor(w, device=device)


class PhaseB(torch.nn.Module):
    """Phase B's modules together (one DDP wrapper): the rig decoder and its training aid, the per-pose rotation
    table."""

    def __init__(self, latent, poses):
        super().__init__()
        self.decoder = RigDecoder(latent)
        self.table = PoseRotationTable(poses)

    def forward(self, batch, weights, guide):
        """A phase B batch (dataset.phase_b_batch) → (loss, metrics dict). The decoder's rotations and the table's
        pose the anchors with the identity's rig in the three variants; each is scored by losses.variant_loss of their
        mean anchor distances (weights (3,)); plus guide × the mean squared distance of the decoder's rotation vectors
        to the table's (the table held fixed there, so only its own anchor loss moves it)."""
        posed = lambda local: posed_variants(batch["heads"], local, batch["rest"], batch["weight_indices"],  # noqa: E731
                                             batch["weights"])
        local = self.decoder(batch["mu_source"], batch["delta_direction"], batch["delta_norm"])
        table = self.table(batch["pose"])
        distances = L.anchor_distances(posed(local), batch["target"])
        decoder_loss = L.variant_loss(distances, weights)
        table_loss = L.variant_loss(L.anchor_distances(posed(table), batch["target"]), weights)
        guide_loss = (local - table.detach()).pow(2).sum(-1).mean()
        loss = decoder_loss + table_loss + guide * guide_loss
        with torch.no_grad():
            still = L.anchor_distances(batch["rest"][:, None].expand_as(batch["target"]), batch["target"])
            per_variant = distances.mean(0).tolist()
        return loss, {"loss": decoder_loss.item(), **dict(zip(VARIANTS, per_variant)),
                      "error": float(np.mean(per_variant)), "no_motion": still.mean().item(),
                      "rest_loss": L.variant_loss(still, weights).item(), "table_loss": table_loss.item(),
                      "guide": guide_loss.item()}


def guide_weight(progress, peak, until):
    """The rotation-space guide's weight: peak at the start, linearly down to 0 at progress `until` (so the decoder
    ends on the anchor loss alone)."""
    return peak * max(0.0, 1.0 - progress / until) if until > 0 else 0.0


@torch.no_grad()
def decoder_errors(rotations, data, mu_neutral, deltas, device, batch=17):
    """Mean anchor error of a rotation source and of 'no motion' (the neutral as the answer) per pose and variant, over
    every identity of data, each pose conditioned on deltas[i, p] (I, P, L). rotations: a phase B batch → local
    rotation vectors (B, J, 3) (the decoder on the batch's condition, or the rotation table on its pose), called in
    eval mode. → dict of (P, 3) arrays: 'error', 'no_motion', 'moving_error', 'moving_no_motion' (moving: the anchors
    the truth moves ≥ losses.STATIC_DISTANCE only; nan where none moves)."""
    P = len(data.poses)
    sums = np.zeros((4, P, 3))
    counts = np.zeros((2, P, 3))
    pairs = [(i, p) for i in range(len(data)) for p in range(P)]
    for start in range(0, len(pairs), batch):
        chunk = pairs[start:start + batch]
        b = phase_b_batch(data, chunk, mu_neutral, np.stack([deltas[i, p] for i, p in chunk]))
        b = {k: t.to(device) for k, t in b.items()}
        posed = posed_variants(b["heads"], rotations(b), b["rest"], b["weight_indices"], b["weights"])
        err = (posed - b["target"]).norm(dim=-1)
        still = (b["rest"][:, None] - b["target"]).norm(dim=-1)
        moving = (still >= L.STATIC_DISTANCE).float()
        for k, (_, p) in enumerate(chunk):
            sums[:, p] += torch.stack([err[k].sum(-1), still[k].sum(-1), (err[k] * moving[k]).sum(-1),
                                       (still[k] * moving[k]).sum(-1)]).cpu().numpy()
            counts[:, p] += [np.full(3, err.shape[-1]), moving[k].sum(-1).cpu().numpy()]
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"error": sums[0] / counts[0], "no_motion": sums[1] / counts[0], "moving_error": sums[2] / counts[1],
                "moving_no_motion": sums[3] / counts[1]}


def decoder_rotations(decoder):
    """decoder_errors' rotation source for a RigDecoder: the batch's condition → its rotations."""
    return lambda b: decoder(b["mu_source"], b["delta_direction"], b["delta_norm"])


def frozen_encoder(state):
    """Phase A's encoder from its checkpoint, in eval mode on the CPU."""
    encoder = SdfEncoder(state["config"]["latent"])
    encoder.load_state_dict({k[len("encoder."):]: v for k, v in state["model"].items() if k.startswith("encoder.")})
    return encoder.eval()


def latents_of(data, state, device, say):
    """μ of every shape of data under phase A's encoder: the checkpoint's for the identities it encoded, the others
    encoded now. → mu_neutral (I, L), mu_state (I, P, 3, L)."""
    stored = {}
    for names, (mu_n, mu_s) in [(state["train_names"], state["mu_train"]), (state["val_names"], state["mu_val"])]:
        stored.update({n: (mu_n[k], mu_s[k]) for k, n in enumerate(names)})
    new = [i for i, n in enumerate(data.names) if n not in stored]
    if new:
        t = time.time()
        mu_n, mu_s = encode_all(frozen_encoder(state).to(device), data.subset(new), device)
        stored.update({data.names[i]: (mu_n[k], mu_s[k]) for k, i in enumerate(new)})
        say(f"  encoded {len(new)} identities phase A did not see in {time.time() - t:.0f} s")
    if not len(data):
        return np.zeros((0, state["config"]["latent"]), np.float32), None
    return np.stack([stored[n][0] for n in data.names]), np.stack([stored[n][1] for n in data.names])


def require_rigs(data, role):
    """Phase B poses every identity with its rig: refuse a set where some *.poserig side file is missing."""
    if data.missing_rigs:
        raise SystemExit(
            f"phase B needs each identity's rig: {len(data.missing_rigs)} of the {len(data)} {role} identities have no "
            f"*.poserig side file beside their *.pose (first: {pose_rig_path(data.missing_rigs[0])}). Write them "
            "(sidecar/data/poses/poseRig.ts writePoseRig) or leave those identities out of --data.")


def run_phase_b(args, train, val, device, rank, world, say):
    lead = rank == 0
    require_rigs(train, "training")
    require_rigs(val, "validation")
    state = torch.load(f"{args.work}/phase_a.pt", map_location="cpu")
    if state["poses"] != train.poses:
        raise SystemExit(f"{args.work}/phase_a.pt was trained on other poses: run phase A on this data")
    latent = state["config"]["latent"]
    mu_train_n, mu_train_s = latents_of(train, state, device, say)
    mu_val_n, mu_val_s = latents_of(val, state, device, say)
    c = CONDITION_VARIANT
    delta_train = mu_train_s - mu_train_n[:, None, None]
    delta_val = mu_val_s - mu_val_n[:, None, None] if len(val) else None
    # the 'mean' strategy's Δμ: the library's, the mean over phase A's training identities
    delta_mean = (state["mu_train"][1] - state["mu_train"][0][:, None, None]).mean(0)
    P = len(train.poses)
    model = PhaseB(latent, P)
    own = torch.from_numpy(delta_train[:, :, c].reshape(-1, latent))
    norm = own.norm(dim=-1, keepdim=True)
    model.decoder.set_input_statistics(torch.from_numpy(np.repeat(mu_train_n, P, axis=0)), own / norm.clamp_min(1e-8),
                                       norm)
    model.to(device)
    core = model.decoder
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if args.device == "cuda" else None)
    groups = [{"params": core.parameters(), "peak": args.lr},
              {"params": model.module.table.parameters() if world > 1 else model.table.parameters(),
               "peak": args.table_lr, "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=args.lr, weight_decay=args.weight_decay)
    weights = variant_weights(args.corrective_weight, device)
    say(f"phase B: rig decoder {parameter_count(core):,} parameters, config {core.config}; {len(train)} training, "
        f"{len(val)} validation identities; variant weights {weights.tolist()}; rotation guide {args.guide_weight} "
        f"→ 0 at {args.guide_until:.0%} of training")
    curve = Curve(f"{args.models}/latent_pose_decoder.curve.csv" if lead else None, CURVE_B)
    rng = np.random.default_rng([args.seed, 17, rank])
    n_check = min(args.check_identities, len(val))
    clock = Clock(args.steps, args.max_minutes, device, world)
    step, window = 0, []
    while True:
        progress = clock.progress(step)
        if progress >= 1.0:
            break
        lr = learning_rate(progress, args.lr)
        for group in optimizer.param_groups:
            group["lr"] = lr * group["peak"] / args.lr
        guide = guide_weight(progress, args.guide_weight, args.guide_until)
        pairs = [(int(rng.integers(len(train))), int(rng.integers(P))) for _ in range(args.batch_pairs)]
        deltas = np.stack([condition_delta(delta_train, (i, p, c), delta_mean, rng, args.own_share, args.mean_share)
                           for i, p in pairs])
        batch = {k: v.to(device) for k, v in phase_b_batch(train, pairs, mu_train_n, deltas).items()}
        loss, metrics = model(batch, weights, guide)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(core.parameters(), 1.0)
        optimizer.step()
        step += 1
        metrics = average_metrics(metrics, device, world)
        window.append(metrics)
        curve.row(step=step, seconds=round(clock.seconds(), 1), lr=lr, split="train", guide_weight=guide, **metrics)
        if step % args.log_every == 0 or step == 1:
            mean = {k: np.mean([m[k] for m in window]) for k in window[0]}
            say(f"B step {step} loss {mean['loss']:.5f} (rest {mean['rest_loss']:.5f}, table {mean['table_loss']:.5f}) "
                + ", ".join(f"{v} {mean[v]:.5f}" for v in VARIANTS) + f"; guide {mean['guide']:.4f} ×{guide:.2f}, "
                f"lr {lr:.2g}, {clock.seconds() / step:.3f} s/step")
            window = []
        if lead and n_check and step % args.val_every == 0:
            core.eval()
            e = decoder_errors(decoder_rotations(core), val.subset(range(n_check)), mu_val_n[:n_check],
                               delta_val[:n_check, :, c], device)
            core.train()
            per_variant = np.nanmean(e["error"], axis=0)
            curve.row(step=step, seconds=round(clock.seconds(), 1), lr=lr, split="val", error=float(per_variant.mean()),
                      no_motion=float(np.nanmean(e["no_motion"])), **dict(zip(VARIANTS, per_variant.tolist())))
            say(f"  validation, {n_check} identities, own Δμ: " + ", ".join(
                f"{v} {per_variant[k]:.5f} (no motion {np.nanmean(e['no_motion'][:, k]):.5f})" for k, v in enumerate(VARIANTS)))
    seconds = clock.seconds()
    if not lead:
        return
    Path(args.work).mkdir(parents=True, exist_ok=True)
    torch.save({"config": core.config, "model": core.state_dict(), "step": step,
                "table": (model.module if world > 1 else model).table.state_dict(), "poses": train.poses},
               f"{args.work}/phase_b.pt")
    exported = core.to("cpu").eval()
    out = f"{args.models}/latent_pose_decoder.onnx"
    size = export_decoder(exported, out, {"autorig.seed": args.seed, "autorig.steps": step})
    # check input: the first validation identity's μ and its own Δμ of a pose that bends a joint
    source, mu_n, delta = (val, mu_val_n, delta_val) if len(val) else (train, mu_train_n, delta_train)
    p = source.poses.index("elbowBentLf") if "elbowBentLf" in source.poses else 0
    d = delta[0, p, c]
    write_check(exported, f"{args.models}/latent_pose_decoder.check.json", {
        "mu_source": mu_n[0][None].astype(np.float32), "delta_direction": (d / np.linalg.norm(d))[None].astype(np.float32),
        "delta_norm": np.array([[np.linalg.norm(d)]], np.float32)})
    say(f"wrote {out} ({size / 2**20:.2f} MiB) and its check file; {step} steps in {seconds / 60:.1f} min")
    core.to(device)
    metric_set = (val, mu_val_n, delta_val) if len(val) else (train, mu_train_n, delta_train)
    metric_name = "validation" if len(val) else "training (no validation identities)"
    n_eval = len(metric_set[0]) if args.eval_identities is None else min(args.eval_identities, len(metric_set[0]))
    data, mu_n, delta = metric_set[0].subset(range(n_eval)), metric_set[1][:n_eval], metric_set[2][:n_eval]
    # the library's identities for the 'nearest' strategy (phase A picks them so from its training identities)
    library_ids = farthest_identities(state["mu_train"][0], args.library_identities)
    library_delta = state["mu_train"][1][library_ids][:, :, c] - state["mu_train"][0][library_ids][:, None]
    pose_table = (model.module if world > 1 else model).table.eval()
    t = time.time()
    results = {
        "own": decoder_errors(decoder_rotations(core), data, mu_n, delta[:, :, c], device),
        "mean": decoder_errors(decoder_rotations(core), data, mu_n,
                               np.broadcast_to(delta_mean[:, c], delta[:, :, c].shape), device),
        "nearest": decoder_errors(decoder_rotations(core), data, mu_n,
                                  nearest_library_deltas(mu_n, state["mu_train"][0][library_ids], library_delta),
                                  device),
        "table": decoder_errors(lambda b: pose_table(b["pose"]), data, mu_n, delta[:, :, c], device),
    }
    say(f"  final {metric_name} metrics in {time.time() - t:.0f} s")
    own = results["own"]
    curve.row(step=step, seconds=round(seconds, 1), lr="", split="val", error=float(np.nanmean(own["error"])),
              no_motion=float(np.nanmean(own["no_motion"])),
              mean_delta_error=float(np.nanmean(results["mean"]["error"])),
              **dict(zip(VARIANTS, np.nanmean(own["error"], axis=0).tolist())))
    curve.close()
    rows = []
    for k, v in enumerate(VARIANTS):
        col = lambda name, key="error": float(np.nanmean(results[name][key][:, k]))  # noqa: E731
        rows.append([v, col("own", "no_motion"), col("own"), col("mean"), col("nearest"), col("table"),
                     col("own", "moving_no_motion"), col("own", "moving_error"), col("mean", "moving_error"),
                     col("nearest", "moving_error")])
        say(f"final {metric_name} {v}: no motion {col('own', 'no_motion'):.5f}; error with own Δμ {col('own'):.5f}, "
            f"mean Δμ {col('mean'):.5f}, nearest Δμ {col('nearest'):.5f}; pose table {col('table'):.5f}")
    pose_rows = [[pose, *[results[name][key][q, k] for k in range(3)
                          for name, key in [("own", "no_motion"), ("own", "error"), ("mean", "error"),
                                            ("nearest", "error")]]] for q, pose in enumerate(data.poses)]
    if args.card_b:
        write_card(
            args.card_b, title="latent_pose_decoder: LatentReRig rig-structured vertex decoder (phase B, v2)",
            summary="Vertex decoder of issue 6 (models/training/latent_pose/model.py RigDecoder): μ of the source "
                    "(latent_pose_encoder.onnx), the normalised skinningCorrective Δμ of a pose and its norm → a "
                    "rotation vector per template joint (23, MIXAMO_JOINTS order) in that joint's frame "
                    "(latent_pose/rig.py joint_frames: along its frame bone, in which every pose of the vocabulary "
                    "is one local rotation on every skeleton). The character's rig does the rest, as fixed geometry: world "
                    "rotations, poseTransforms, then by pair kind LBS (skinning), DQS (skinningCorrective) or rest + "
                    "DQS − LBS (corrective). In training the rig is the identity's true one (*.poserig); at apply "
                    "time the sidecar's auto-rig.",
            facts={"File": f"`{out}` ({size / 2**20:.2f} MiB, ONNX opset 17): mu_source (1, L), delta_direction "
                           "(1, L), delta_norm (1, 1) → local_rotations (1, 23, 3) radians; batch dynamic",
                   "Latent size L": latent, "Parameters": f"{parameter_count(core):,}",
                   "Config": f"`{core.config}` (MLP, 3 hidden layers, inputs standardised by the training set's "
                             "statistics, last layer zero at the start: the rest pose)",
                   "Seed": args.seed, "Command": f"`{args.command}`",
                   "Encoder": f"frozen, from {args.work}/phase_a.pt (phase A step {state['step']}); identities it "
                              "did not encode are encoded with it"},
            data_lines=[f"Folder `{args.data}`: {len(train)} training identities, {len(val)} validation identities "
                        "(phase A's held-out ones, and every 10th by sorted name of those phase A never saw); each "
                        f"with its rig (`*.poserig`: 23 rest joints, top-4 weights of its {train.anchors.shape[1]} "
                        f"anchors); pairs (identity, pose), {len(train.poses)} poses, each scored in its 3 variants.",
                        "Conditioning Δμ (always the pose's skinningCorrective Δμ) during training: the pair's own "
                        f"identity's {args.own_share:.0%} of the time, the mean over phase A's training identities "
                        f"{args.mean_share:.0%} (the library's mean, the sidecar's 'mean' strategy), another training "
                        f"identity's {max(0.0, 1 - args.own_share - args.mean_share):.0%} (what 'nearest' gives)."],
            training={"steps": step, "minutes": round(seconds / 60, 1), "seconds per step": round(seconds / max(step, 1), 3),
                      "pairs per step": args.batch_pairs, "device": args.device, "world size": world,
                      "peak lr": args.lr,
                      "loss": "weighted mean over the variants of the mean anchor distance to the truth: skinning 1, "
                              f"corrective {args.corrective_weight}, skinningCorrective 1. The corrective variant "
                              "moves ~60× less than the others (no motion ≈ 4e-4 against ≈ 0.027 on the data), so it "
                              "is weighted up to count about half as much as a skinning variant at the rest pose.",
                      "rotation guide": "a per-pose rotation table (one set of local rotations per training pose, the "
                                        "same for every identity; a training aid, not exported) is fitted by the same "
                                        f"anchor loss at peak lr {args.table_lr}; the decoder is pulled towards it by "
                                        f"{args.guide_weight} × the mean squared distance of their rotation vectors "
                                        "(radians², summed over x, y, z), a weight that falls linearly to 0 at "
                                        f"{args.guide_until:.0%} of training. Without it the decoder stayed at rest for "
                                        "most poses: the shared weights get pulled back to rest by every pose that "
                                        "does not turn a joint as soon as one that does moves it."},
            sections=[(f"Metrics on {n_eval} {metric_name} identities", [
                "Mean anchor error in units of the canonical box (the character's longest side), over every "
                "identity, pose and anchor; 'no motion' answers the neutral. 'own Δμ': the identity's own encoded "
                "Δμ; 'mean Δμ': the mean over phase A's training identities (the sidecar's 'mean' strategy); "
                f"'nearest Δμ': the Δμ of the library identity (the {args.library_identities} phase A stores) whose "
                "neutral μ is nearest (the 'nearest' strategy). 'pose table': the training aid's rotations of the "
                "pose, the same for every identity (what the pose's name alone gives through the rig; not "
                f"exported). 'moving': only anchors the truth moves by at least {L.STATIC_DISTANCE:g}. Rig: the "
                "identity's true one (the sidecar's auto-rig adds its own error).", "",
                *table(["variant", "no motion", "own Δμ", "mean Δμ", "nearest Δμ", "pose table", "moving: no motion",
                        "moving: own Δμ", "moving: mean Δμ", "moving: nearest Δμ"], rows), "",
                "Per pose (no motion / own Δμ / mean Δμ / nearest Δμ, per variant):", "",
                *table(["pose", *[f"{v} {m}" for v in ["skin", "corr", "skin+corr"]
                                  for m in ("still", "own", "mean", "nearest")]], pose_rows)])])
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
    if args.phase == "b":
        if not Path(f"{args.work}/phase_a.pt").exists():
            raise SystemExit(f"phase B starts from phase A's checkpoint, {args.work}/phase_a.pt: run phase A first")
        state = torch.load(f"{args.work}/phase_a.pt", map_location="cpu")
        train_files, val_files = split_after_encoder(files, [read_identity(f) for f in files], state["train_names"],
                                                     state["val_names"])
    else:
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
