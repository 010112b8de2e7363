#!/usr/bin/env python3
"""Checks the pose-dependent weight field's extra loss terms (losses.silhouette_terms, posed_laplacian,
locality_term) on a case with a known answer, so that a term that measures nothing cannot pass for one.

  /usr/bin/python3 models/training/pose_weights/check_terms.py

The case: a bent tube (two cylinders at a right angle, 1 m long in all, radius 0.05 m) sampled densely as the posed
ground truth, and the same tube's vertices as the prediction, exact or with the bent half moved 2 cm sideways.
Prints one JSON line: {silhouetteExact, silhouetteMoved (% of the height), gradientPullsBack (the moved vertices'
gradient points back towards the truth), laplacianSame, laplacianDented, localityNear, localityFar}."""
import json
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pose_weights.losses import locality_term, posed_laplacian, silhouette_terms  # noqa: E402


def tube_points(count, generator, radius=0.05):
    """Points on the bent tube's surface: the first half along +y from the origin (the upright cylinder), the second
    along +x from (0, 0.5, 0) (the bent one). → (count, 3), and a (count,) bool: on the bent half."""
    t = torch.rand(count, generator=generator, dtype=torch.float64)
    angle = torch.rand(count, generator=generator, dtype=torch.float64) * 2 * math.pi
    bent = t >= 0.5
    along = (t % 0.5)
    ring = torch.stack([torch.cos(angle), torch.sin(angle)], dim=-1) * radius
    upright = torch.stack([ring[:, 0], along, ring[:, 1]], dim=-1)
    turned = torch.stack([along, 0.5 + ring[:, 0], ring[:, 1]], dim=-1)
    return torch.where(bent[:, None], turned, upright), bent


def main():
    g = torch.Generator().manual_seed(1)
    truth, _ = tube_points(6000, g)
    vertices, bent = tube_points(3000, g)
    scale = 1.0 / 100.0  # the tube is 1 m "tall": distances in % of it
    region = bent.clone()  # the bent half is where the weights matter
    exact = silhouette_terms(vertices.clone(), truth, region, scale)
    moved = vertices.clone()
    moved[bent, 2] += 0.02
    moved.requires_grad_(True)
    term = silhouette_terms(moved, truth, region, scale)
    term.backward()
    pulls = float(moved.grad[bent, 2].sum()) > 0  # descending the gradient lowers z: back to the truth

    # Laplacian: the same posed mesh as the reference costs nothing; one vertex pushed out costs
    neighbours = torch.cdist(vertices, vertices).topk(9, largest=False).indices[:, 1:]
    dented = vertices.clone()
    dented[0] += torch.tensor([0.0, 0.0, 0.01], dtype=torch.float64)
    same = posed_laplacian(vertices, vertices, neighbours, scale)
    dent = posed_laplacian(dented, vertices, neighbours, scale)

    # locality: weight gained on a slot whose joint is near costs less than the same weight gained on a far one
    static = torch.tensor([[0.5, 0.5, 0.0, 0.0]], dtype=torch.float64)
    gained = torch.tensor([[0.7, 0.3, 0.0, 0.0]], dtype=torch.float64)
    features = torch.zeros(1, 28, dtype=torch.float64)
    features[0, 0:3] = torch.tensor([0.05, 0.0, 0.0])  # slot 0's joint 0.05 h away
    features[0, 7:10] = torch.tensor([0.3, 0.0, 0.0])  # slot 1's joint 0.3 h away
    near = locality_term(features, gained, static)
    far = locality_term(features, gained.flip(-1).roll(2, -1), static)  # slot 1 gains instead: [0.3, 0.7, 0, 0]
    print(json.dumps({"silhouetteExact": float(exact), "silhouetteMoved": float(term), "gradientPullsBack": pulls,
                      "laplacianSame": float(same), "laplacianDented": float(dent), "localityNear": float(near),
                      "localityFar": float(far)}))


if __name__ == "__main__":
    main()
