"""Pose Correctives (issue 7): the generic pose-dependent weight field (VINECS-style, skeleton-relative). Per vertex
it re-weights the vertex's static top-4 influences for a pose: features (N, 28) → weights (N, 4). Trained by
models/training/train_pose_weights.py on `autorig data --kind correctives` files (*.corr, read by corr_io)."""
