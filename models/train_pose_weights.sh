#!/usr/bin/env bash
# Reproduces the committed pose-dependent weight field of Pose Correctives (issue 7) from nothing but this repository:
#   1. the training characters (autorig data --kind correctives, seeds 7 and 8: 2 × 48 procedural characters, bare, ~12k
#      vertices; per character 4000 rest vertices with their static top-4 weights and 16 poses: the 13 key poses at
#      random fractions and 3 pairs, each with the exactly posed surface's samples),
#   2. the field → models/pose_weights.{onnx,check.json,curve.csv,md} (checkpoint out/pose_weights/pose_weights.pt).
# Validation characters: every 10th file by name, the first included. One thread; about 0.1 s a step on a 2020s CPU.
# Environment: AUTORIG_CORRECTIVES_DATA (default ../data/correctives), AUTORIG_TRAIN_JOBS (data processes,
# default 2), AUTORIG_POSE_WEIGHTS_STEPS (default 8000), AUTORIG_POSE_WEIGHTS_SKINNING (lbs|dqs: the skinning in the
# loss; default the committed model's).
# Needs /usr/bin/python3 with torch and onnx (apt-get install python3-torch python3-onnx libopenblas0-pthread).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${AUTORIG_CORRECTIVES_DATA:-../data/correctives}
JOBS=${AUTORIG_TRAIN_JOBS:-2}
STEPS=${AUTORIG_POSE_WEIGHTS_STEPS:-8000}
SKINNING=${AUTORIG_POSE_WEIGHTS_SKINNING:-dqs}

npm run build >/dev/null
# 96 characters in two runs of 48 (seeds 7 and 8: the committed model was trained on exactly these)
node bin/autorig.js data --kind correctives --out "$DATA/train" --count 48 --seed 7 --jobs "$JOBS"
node bin/autorig.js data --kind correctives --out "$DATA/train2" --count 48 --seed 8 --jobs "$JOBS"
OPENBLAS_NUM_THREADS=1 /usr/bin/python3 models/training/train_pose_weights.py --data "$DATA" --steps "$STEPS" \
  --seed 1 --skinning "$SKINNING" --models models --work out/pose_weights
