"""LatentReRig (issue 6, "Apply Latent Pose"): an SDF variational autoencoder whose latent differences between posed
and neutral states condition a vertex decoder. Trained by models/training/train_latent_pose.py in two phases: A (the
encoder, SDF decoder and latent losses) and B (the vertex decoder on the frozen encoder)."""
