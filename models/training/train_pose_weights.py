#!/usr/bin/env python3
"""Train the pose-dependent weight field of Pose Correctives (issue 7) on `autorig data --kind correctives` files
(*.corr: procedural characters, their static top-4 weights, and per pose the field's features, the skeleton's
transforms and samples of the exactly posed surface) and export what the sidecar runs.

  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 models/training/train_pose_weights.py --data DIR --steps 6000
  ... --tiny   (CI: 30 steps, a small network)
  ... --skinning dqs   (the field's weights pose the vertices by dual-quaternion skinning, as the sidecar's
                        poseDependentDualQuaternion does; default lbs: linear blend skinning)

→ models/pose_weights.{onnx,check.json,curve.csv,md} (--models), checkpoint --work/pose_weights.pt.

Each step: one (character, pose) (--batch of them), the vertices skinned (--skinning) with the field's weights and the
pose's transforms, compared with the posed surface (no vertex correspondence: nearest samples both ways). Validation
characters: every 10th file by sorted name, the first included. Runs are reproducible for a given seed (one thread).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from latent_pose.card import table, write_card  # noqa: E402
from pose_weights.corr_io import list_corr_files, read_corr_sample  # noqa: E402
from pose_weights.export import export_field, write_check  # noqa: E402
from pose_weights.losses import (SKINNINGS, blend_region, chamfer, knn_graph, pose_losses,  # noqa: E402
                                 region_plane_distance, skin)
from pose_weights.model import PoseWeightField, parameter_count, rest_features  # noqa: E402
from training_run import learning_rate  # noqa: E402

TERMS = ["point_to_plane", "point_to_point", "gt_to_pred", "smooth", "rigid", "delta", "silhouette", "posed_laplacian",
         "locality"]
CURVE = ["step", "seconds", "lr", "split", "loss", *TERMS, "chamfer_static", "chamfer_predicted", "chamfer_static_lbs"]
# How each --skinning is named in logs and the card.
SKINNING_NAMES = {"lbs": "linear blend skinning (LBS)", "dqs": "dual-quaternion skinning (DQS)"}
SKINNING_SHORT = {"lbs": "LBS", "dqs": "DQS"}
# Distances enter the losses in percent of the character's height (the data terms are then ~0.1–1, and the small
# regularisers below stay regularisers).
PERCENT = 100.0
# The joint region of a pose (where the weights matter): slot positions spread more than this share of the height.
REGION_SPREAD = 0.01


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="folder of *.corr files (searched recursively)")
    p.add_argument("--models", default="models", help="folder of pose_weights.{onnx,check.json,curve.csv,md}")
    p.add_argument("--work", default="out/pose_weights", help="folder of the checkpoint (pose_weights.pt)")
    p.add_argument("--steps", type=int, default=8000, help="optimizer steps")
    p.add_argument("--batch", type=int, default=1, help="(character, pose) pairs per step")
    p.add_argument("--skinning", choices=sorted(SKINNINGS), default="lbs",
                   help="how the weights pose the vertices in the loss and the metrics: lbs (linear blend) or dqs "
                        "(dual quaternions, sidecar/deform/dualQuaternionSkinning.ts)")
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (Adam, cosine decay)")
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--knn", type=int, default=8, help="neighbours per vertex of the smoothness graph")
    p.add_argument("--w-plane", type=float, default=1.0, help="weight of the point-to-plane term")
    p.add_argument("--w-point", type=float, default=0.1, help="weight of the point-to-point term")
    p.add_argument("--w-gt", type=float, default=0.5, help="weight of the ground truth → prediction term")
    p.add_argument("--w-smooth", type=float, default=1e-2, help="weight of the Laplacian of the weight change")
    p.add_argument("--w-rigid", type=float, default=1.0, help="weight of the rigid-vertex term")
    p.add_argument("--w-delta", type=float, default=1e-3, help="weight of ‖Δ − Δ_rest‖²")
    p.add_argument("--w-silhouette", type=float, default=0.0,
                   help="weight of the silhouette Chamfer from three views about the posed joint (0: not computed)")
    p.add_argument("--w-laplacian", type=float, default=0.0,
                   help="weight of the posed mesh's Laplacian against static skinning's (0: not computed)")
    p.add_argument("--w-locality", type=float, default=0.0,
                   help="weight of the geodesic locality term, exponent 3 (0: not computed)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--val-every", type=int, default=1000)
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--limit", type=int, default=None, help="use only the first N files (by name)")
    p.add_argument("--tiny", action="store_true", help="CI: 30 steps at lr 5e-3, width 64, two layers, log every 5 "
                   "steps")
    args = p.parse_args(argv)
    if args.tiny:
        if "--steps" not in argv:
            args.steps = 30
        if "--width" not in argv:
            args.width = 64
        if "--layers" not in argv:
            args.layers = 2
        if "--lr" not in argv:
            args.lr = 5e-3
        args.val_every = 10 ** 9
        args.log_every = 5
    return args


def split_by_character(files, every=10):
    """files (sorted) → (train, validation): every `every`-th file, the first included, is validation; with fewer
    than 2 files nothing is held out."""
    if len(files) < 2:
        return list(files), []
    return [f for i, f in enumerate(files) if i % every != 0], [f for i, f in enumerate(files) if i % every == 0]


def pose_family(keys):
    """A pose's family: the key pose family of its one key (`<bone>_<family>`), or 'pair' for two keys."""
    return keys[0].rsplit("_", 1)[-1] if len(keys) == 1 else "pair"


class Character:
    """One .corr file as tensors, with its kNN graph: rest (N, 3), indices (N, 4) int64, weights (N, 4), neighbours
    (N, k), features (P, N, 28), transforms (P, J, 12), surface (P, M, 3), normals (P, M, 3); height in metres; per
    pose its keys and fractions."""

    def __init__(self, path, knn):
        s = read_corr_sample(path)
        h = s["header"]
        self.name = h["name"]
        self.height = float(h["heightMetres"])
        self.poses = h["poses"]
        t = lambda a, dtype=torch.float32: torch.from_numpy(np.ascontiguousarray(a)).to(dtype)  # noqa: E731
        self.rest, self.weights = t(s["rest"]), t(s["weights"])
        self.indices = t(s["indices"].astype(np.int64), torch.int64)
        P, N = s["features"].shape[:2]
        self.features = t(s["features"].reshape(P, N, 28))
        self.transforms = t(s["transforms"].reshape(P, -1, 12))
        self.surface, self.normals = t(s["surface"]), t(s["normals"])
        self.neighbours = knn_graph(self.rest, knn)

    def sample(self, p):
        """The tensors of pose p for losses.pose_losses (distances scaled to percent of the height)."""
        return {"rest": self.rest, "indices": self.indices, "weights": self.weights, "neighbours": self.neighbours,
                "features": self.features[p], "transforms": self.transforms[p], "surface": self.surface[p],
                "normals": self.normals[p], "scale": self.height / PERCENT}


class Curve:
    """The per-step CSV (training rows and validation rows)."""

    def __init__(self, path):
        self.file = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=CURVE, extrasaction="ignore", lineterminator="\n")
        self.writer.writeheader()

    def row(self, **values):
        self.writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in values.items()})
        self.file.flush()

    def close(self):
        self.file.close()


@torch.no_grad()
def evaluate(field, characters, skinning="lbs"):
    """Per (character, pose), with the --skinning (SKINNINGS key): symmetric Chamfer (percent of the height) of the
    static weights and of the field's weights, the point-to-plane distance of both over the pose's joint region
    (losses.blend_region: the vertices whose slot joints disagree by more than REGION_SPREAD of the height), the pose's
    family and largest key fraction; for another skinning than LBS also static LBS's Chamfer and region distance (the
    issue's baseline); and the largest |field − static| at rest over all vertices.
    → (list of dicts, rest error)."""
    posing = SKINNINGS[skinning]
    field.eval()
    rows, rest_error = [], 0.0
    for c in characters:
        rest_weights = field(rest_features(c.features[0]))
        rest_error = max(rest_error, float((rest_weights - c.weights).abs().max()))
        for p, keys in enumerate(c.poses):
            scale = c.height / PERCENT
            static = posing(c.rest, c.indices, c.weights, c.transforms[p])
            predicted = posing(c.rest, c.indices, field(c.features[p]), c.transforms[p])
            region = blend_region(c.rest, c.indices, c.weights, c.transforms[p], REGION_SPREAD * c.height)
            plane = lambda x: region_plane_distance(x, c.surface[p], c.normals[p], region, scale)  # noqa: E731
            rows.append({"character": c.name, "family": pose_family(keys["keys"]),
                         "fraction": max(keys["fractions"]),
                         "static": float(chamfer(static, c.surface[p], scale)),
                         "predicted": float(chamfer(predicted, c.surface[p], scale)),
                         "region": int(region.sum()), "region_static": plane(static),
                         "region_predicted": plane(predicted)})
            if skinning != "lbs":
                static_lbs = skin(c.rest, c.indices, c.weights, c.transforms[p])
                rows[-1].update({"static_lbs": float(chamfer(static_lbs, c.surface[p], scale)),
                                 "region_static_lbs": plane(static_lbs)})
    field.train()
    return rows, rest_error


def summarise(rows):
    """Evaluation rows → table rows [group, poses, Chamfer static, predicted, improvement %, joint region vertices,
    region point-to-plane static, predicted, improvement %], followed, when the rows have static LBS (another
    skinning than LBS), by [Chamfer static LBS, improvement over it %, region static LBS, region improvement over it
    %]: all, strong bends (largest key fraction ≥ 0.9), then each family. Region means skip poses without a region."""
    groups = [("all", rows), ("fraction ≥ 0.9", [r for r in rows if r["fraction"] >= 0.9])]
    for family in sorted({r["family"] for r in rows}):
        groups.append((family, [r for r in rows if r["family"] == family]))
    out = []
    for name, members in groups:
        if not members:
            continue
        s = float(np.mean([r["static"] for r in members]))
        q = float(np.mean([r["predicted"] for r in members]))
        regional = [r for r in members if r["region"] > 0]
        rs = float(np.mean([r["region_static"] for r in regional])) if regional else float("nan")
        rq = float(np.mean([r["region_predicted"] for r in regional])) if regional else float("nan")
        out.append([name, len(members), s, q, improvement(s, q), float(np.mean([r["region"] for r in members])), rs, rq,
                    improvement(rs, rq) if regional else float("nan")])
        if "static_lbs" in members[0]:
            ls = float(np.mean([r["static_lbs"] for r in members]))
            lr = float(np.mean([r["region_static_lbs"] for r in regional])) if regional else float("nan")
            out[-1] += [ls, improvement(ls, q), lr, improvement(lr, rq) if regional else float("nan")]
    return out


def improvement(before, after):
    """How much smaller after is than before, percent of before (0 when before is not positive)."""
    return 100.0 * (before - after) / before if before > 0 else 0.0


def check_input(characters, seed, count=256):
    """A fixed check input: `count` vertices of the first character's first pose (the pose entries as they are) and
    the same vertices at rest → (2·count, 28) float32."""
    c = characters[0]
    pick = np.sort(np.random.default_rng(seed).choice(c.rest.shape[0], min(count, c.rest.shape[0]), replace=False))
    posed = c.features[0][torch.from_numpy(pick)]
    return torch.cat([posed, rest_features(posed)]).numpy()


@torch.no_grad()
def milliseconds_per_vertices(field, features, vertices=30000, repeats=5):
    """PyTorch CPU time of the field on `vertices` rows (features tiled to that many) → milliseconds (best of
    repeats)."""
    field.eval()
    rows = features[torch.arange(vertices) % features.shape[0]]
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        field(rows)
        best = min(best, time.perf_counter() - t)
    field.train()
    return 1000.0 * best


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    command = "OPENBLAS_NUM_THREADS=1 /usr/bin/python3 " + shlex.join(["models/training/train_pose_weights.py", *argv])
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    say = lambda *a: print(*a, flush=True)  # noqa: E731
    files = list_corr_files(args.data)
    if args.limit:
        files = files[: args.limit]
    if not files:
        raise SystemExit(f"no *.corr files in {args.data}")
    train_files, val_files = split_by_character(files)
    t = time.time()
    train = [Character(f, args.knn) for f in train_files]
    val = [Character(f, args.knn) for f in val_files]
    say(f"{len(files)} characters ({time.time() - t:.0f} s to load): {len(train)} training, {len(val)} validation; "
        f"{train[0].rest.shape[0]} vertices, {train[0].surface.shape[1]} surface samples, "
        f"{len(train[0].poses)} poses each")
    Path(args.models).mkdir(parents=True, exist_ok=True)
    Path(args.work).mkdir(parents=True, exist_ok=True)

    field = PoseWeightField(args.width, args.layers)
    optimizer = torch.optim.Adam(field.parameters(), lr=args.lr)
    factors = {"point_to_plane": args.w_plane, "point_to_point": args.w_point, "gt_to_pred": args.w_gt,
               "smooth": args.w_smooth, "rigid": args.w_rigid, "delta": args.w_delta, "silhouette": args.w_silhouette,
               "posed_laplacian": args.w_laplacian, "locality": args.w_locality}
    say(f"field: {parameter_count(field):,} parameters, config {field.config}; loss factors {factors}; skinning "
        f"{SKINNING_NAMES[args.skinning]}")
    skinning, short = SKINNINGS[args.skinning], SKINNING_SHORT[args.skinning]
    curve = Curve(f"{args.models}/pose_weights.curve.csv")
    rng = np.random.default_rng(args.seed)
    pairs = [(i, p) for i, c in enumerate(train) for p in range(len(c.poses))]
    t0, window = time.time(), []
    for step in range(1, args.steps + 1):
        lr = learning_rate((step - 1) / args.steps, args.lr, warmup=0.0)
        for group in optimizer.param_groups:
            group["lr"] = lr
        picks = rng.choice(len(pairs), size=min(args.batch, len(pairs)), replace=False)
        loss, metrics = 0.0, {}
        for k in picks:
            i, p = pairs[k]
            one, m = pose_losses(field, train[i].sample(p), factors, skinning)
            loss = loss + one / len(picks)
            for name, v in m.items():
                metrics[name] = metrics.get(name, 0.0) + v / len(picks)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        window.append(metrics)
        curve.row(step=step, seconds=round(time.time() - t0, 1), lr=lr, split="train", **metrics)
        if step % args.log_every == 0 or step == 1:
            mean = {k: np.mean([m[k] for m in window]) for k in window[0]}
            say(f"step {step} " + " ".join(f"{k} {v:.4g}" for k, v in mean.items())
                + f" lr {lr:.2g} {(time.time() - t0) / step:.3f} s/step")
            window = []
        if val and step % args.val_every == 0 and step < args.steps:
            rows, _ = evaluate(field, val, args.skinning)
            s, q = np.mean([r["static"] for r in rows]), np.mean([r["predicted"] for r in rows])
            lbs = float(np.mean([r["static_lbs"] for r in rows])) if "static_lbs" in rows[0] else ""
            curve.row(step=step, seconds=round(time.time() - t0, 1), lr=lr, split="val", chamfer_static=float(s),
                      chamfer_predicted=float(q), chamfer_static_lbs=lbs)
            say(f"  validation Chamfer (% of height): static {short} {s:.4f}, field + {short} {q:.4f}"
                + (f" (static LBS {lbs:.4f})" if lbs != "" else ""))
    seconds = time.time() - t0

    torch.save({"config": field.config, "model": field.state_dict(), "step": args.steps, "seed": args.seed},
               f"{args.work}/pose_weights.pt")
    metric_set, metric_name = (val, "validation") if val else (train, "training (no validation characters)")
    rows, rest_error = evaluate(field, metric_set, args.skinning)
    summary = summarise(rows)
    curve.row(step=args.steps, seconds=round(seconds, 1), lr="", split="val", chamfer_static=summary[0][2],
              chamfer_predicted=summary[0][3], chamfer_static_lbs=summary[0][9] if len(summary[0]) > 9 else "")
    curve.close()
    for r in summary:
        say(f"final {metric_name} {r[0]} ({r[1]} poses): Chamfer static {short} {r[2]:.4f}, field + {short} "
            f"{r[3]:.4f} ({r[4]:+.1f} %); joint region ({r[5]:.0f} vertices) point-to-plane static {short} "
            f"{r[6]:.4f}, field + {short} {r[7]:.4f} ({r[8]:+.1f} %) (% of height)"
            + (f"; static LBS Chamfer {r[9]:.4f} ({r[10]:+.1f} %), region {r[11]:.4f} ({r[12]:+.1f} %)"
               if len(r) > 9 else ""))
    say(f"rest pose: largest |field − static| {rest_error:.2e}")

    field.eval()
    onnx_path = f"{args.models}/pose_weights.onnx"
    size = export_field(field, onnx_path, {"autorig.seed": args.seed, "autorig.steps": args.steps,
                                           "autorig.skinning": args.skinning})
    ort = write_check(field, onnx_path, f"{args.models}/pose_weights.check.json", check_input(metric_set, args.seed))
    ms = milliseconds_per_vertices(field, metric_set[0].features[0])
    say(f"wrote {onnx_path} ({size / 2**20:.3f} MiB) and its check file (onnxruntime: "
        f"{'not installed here' if ort is None else f'max difference {ort:.2e}'}); {ms:.0f} ms per 30k vertices")
    write_card(
        f"{args.models}/pose_weights.md", title="pose_weights: pose-dependent skinning weight field (Pose Correctives)",
        summary="Issue 7's generic weight field (VINECS-style, skeleton-relative; models/training/pose_weights/"
                "model.py): per vertex and pose, its four static influences re-weighted as softmax(log(w_static + "
                "1e-6) + Δ(f) − Δ(f_rest)), Δ an MLP (SiLU) over the four slots' features (the vertex in the slot "
                "bone's rest frame with sin/cos encoding at 1, 2, 4, 8 × π, the static weight, the joint's local turn "
                "as axis·angle in the bone frame); f_rest zeroes the turns, so the rest pose gives the static "
                "weights; padded slots never gain weight.",
        facts={"File": f"`{onnx_path}` ({size / 2**20:.3f} MiB, ONNX opset 17); input features f32 (N, 28), output "
                       "weights f32 (N, 4), N dynamic",
               "Skinning": f"{SKINNING_NAMES[args.skinning]} (`--skinning {args.skinning}`): how the weights pose "
                           "the vertices in the training loss and in the metrics below",
               "Parameters": f"{parameter_count(field):,}", "Config": f"`{field.config}`", "Seed": args.seed,
               "Command": f"`{command}`",
               "Speed": f"{ms:.0f} ms per 30k vertices (PyTorch, CPU, {args.threads} thread)",
               "Check": "pose_weights.check.json: PyTorch's output on a fixed input (256 vertices posed and at "
                        f"rest), tolerance 1e-5; onnxruntime here: "
                        f"{'not installed (replayed by test/train-pose-weights.test.ts)' if ort is None else f'{ort:.1e}'}"},
        data_lines=[f"Folder `{args.data}`: {len(train)} training characters, {len(val)} validation characters "
                    "(every 10th file by sorted name, the first included); per character "
                    f"{train[0].rest.shape[0]} rest vertices, {len(train[0].poses)} poses, "
                    f"{train[0].surface.shape[1]} samples of each exactly posed surface."],
        training={"steps": args.steps, "minutes": round(seconds / 60, 1),
                  "seconds per step": round(seconds / args.steps, 3), "(character, pose) per step": args.batch,
                  "optimizer": f"Adam, lr {args.lr} with cosine decay to 5 %",
                  "skinning": SKINNING_NAMES[args.skinning],
                  "loss": f"{args.w_plane}·point-to-plane + {args.w_point}·point-to-point ({short}-skinned vertex → "
                          f"nearest posed-surface sample) + {args.w_gt}·(sample → nearest skinned vertex), in % of the "
                          f"height; {args.w_smooth}·Laplacian² of the weight change over a {args.knn}-NN graph of "
                          f"the rest vertices; {args.w_rigid}·‖w − w_static‖² on rigid vertices (static max ≥ "
                          f"0.999); {args.w_delta}·‖Δ − Δ_rest‖²"
                          + (f"; {args.w_silhouette}·silhouette Chamfer (front, side and top views about the posed "
                             "joint, % of the height)" if args.w_silhouette else "")
                          + (f"; {args.w_laplacian}·‖L(posed) − L(static-posed)‖² (posed mesh Laplacian, % of the "
                             "height)" if args.w_laplacian else "")
                          + (f"; {args.w_locality}·Σ gained weight × (joint distance / 0.1 h)³ (geodesic locality)"
                             if args.w_locality else "")},
        sections=[(f"Metrics on the {metric_name} characters", [
            "Symmetric Chamfer distance (mean of both nearest-neighbour directions) between the skinned vertices "
            "and the exactly posed surface, percent of the character's height, mean over characters and poses; "
            f"static {short}: {short} with the static weights; field + {short}: {short} with the field's weights"
            + ("; static LBS: linear blend skinning with the static weights (the issue's baseline), and the field + "
               f"{short}'s improvement over it" if args.skinning != "lbs" else "") + ". 'fraction ≥ 0.9': poses "
            "whose key angle is at least 0.9 of the key's (90° bends...). Families: the key pose of single-key "
            "poses; 'pair': two keys of different joints. Joint region: the vertices whose slot joints' rigid "
            f"positions spread more than {REGION_SPREAD:g} of the height in the pose (where weights matter; mean "
            "count per pose), scored by the point-to-plane distance to the nearest posed-surface sample (free of "
            "the sampling floor that dominates the whole-body Chamfer).", "",
            *table(["poses", "count", f"Chamfer static {short}", f"Chamfer field + {short}", "improvement %",
                    "region vertices", f"region static {short}", f"region field + {short}", "region improvement %"]
                   + (["Chamfer static LBS", "improvement over LBS %", "region static LBS",
                       "region improvement over LBS %"] if args.skinning != "lbs" else []), summary), "",
            f"Rest pose: largest |field − static weight| {rest_error:.1e}."])])
    say(f"wrote {args.models}/pose_weights.md; {args.steps} steps in {seconds / 60:.1f} min")


if __name__ == "__main__":
    main()
