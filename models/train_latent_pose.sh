#!/usr/bin/env bash
# Reproduces the committed LatentReRig models (issue 6, "Apply Latent Pose") from nothing but this repository and the
# dev characters:
#   1. the training identities (autorig data --kind pose, seed 1: 240 asked; the folder the committed models trained on
#      holds all 240, an earlier run wrote 227; neutral + 34 poses × 3 variants; the held-out dev characters never enter),
#   2. phase A, the SDF encoder   → models/latent_pose_encoder.{onnx,check.json,curve.csv,md}, latent_pose_library.bin
#   3. phase B, the rig-structured vertex decoder (joint rotations from the latent, posed through each identity's
#      rig: the *.poserig side files `autorig data --kind pose` writes beside every .pose)
#      → models/latent_pose_decoder.{onnx,check.json,curve.csv,md}
#   4. the corrective shares (autorig eval corrective-share, development identities) and the experimental marks
#      (autorig eval poses --write-marks, test identities) → models/latent_pose_corrective_share.json, latent_pose_eval.json
# The committed models (v7, 2026-12-07) were made from nothing by exactly these two phases on that data, as step 1
# makes it today: phase A 12000 steps (51 minutes on one thread), then phase B 45 minutes (37,677 steps) on its frozen
# encoder; see latent_pose_encoder.md and latent_pose_decoder.md. Each phase is
# also bounded by the clock (AUTORIG_LATENT_A_MINUTES, default 110, and AUTORIG_LATENT_MINUTES, default 45; the
# learning rate decays to the end either way), so a slower machine trains fewer steps and gets somewhat different
# numbers.
# Environment: AUTORIG_POSE_DATA (default ../data/pose-train), AUTORIG_CHARACTERS (default ../shared/data/characters), AUTORIG_TRAIN_JOBS (data processes, default 2),
# AUTORIG_LATENT_A_MINUTES, AUTORIG_LATENT_MINUTES, AUTORIG_LATENT_THREADS (torch threads, default 1),
# AUTORIG_LATENT_DEVICE (cpu or cuda, default cpu).
# Needs /usr/bin/python3 with torch and onnx (apt-get install python3-torch python3-onnx libopenblas0-pthread).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${AUTORIG_POSE_DATA:-../data/pose-train}
JOBS=${AUTORIG_TRAIN_JOBS:-2}
A_MINUTES=${AUTORIG_LATENT_A_MINUTES:-110}
MINUTES=${AUTORIG_LATENT_MINUTES:-45}
THREADS=${AUTORIG_LATENT_THREADS:-1}
DEVICE=${AUTORIG_LATENT_DEVICE:-cpu}

npm run build >/dev/null
node bin/autorig.js data --kind pose --out "$DATA" --count 240 --seed 1 --augmented-fraction 0.25 \
  --procedural-vertices 15000,40000 --augmented-vertices 15000,40000 --jobs "$JOBS"

# phase A (learning rate 1e-3, at most 12000 steps), then phase B on its checkpoint (out/latent_pose/phase_a.pt,
# learning rate 1e-3, at most 60000 steps: a rig decoder step is short, so the clock decides on a small machine)
for PHASE in a:1e-3:12000:$A_MINUTES b:1e-3:60000:$MINUTES; do
  IFS=: read -r NAME LR STEPS LIMIT <<< "$PHASE"
  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 models/training/train_latent_pose.py --data "$DATA" --phase "$NAME" \
    --lr "$LR" --steps "$STEPS" --max-minutes "$LIMIT" --device "$DEVICE" --threads "$THREADS" --seed 1 --models models \
    --work out/latent_pose
done

# what the apply path measures of the new models (docs/EVAL.md): each pose's corrective share on development
# identities (models/latent_pose_corrective_share.json), then the pose menu's experimental marks on the test identities
# (models/latent_pose_eval.json), which are posed with those shares
CHARACTERS=${AUTORIG_CHARACTERS:-../shared/data/characters}
node bin/autorig.js eval corrective-share --data "$CHARACTERS" --write
node bin/autorig.js eval poses --data "$CHARACTERS" --procedural 10 --train "$DATA" --write-marks
