"""HumanRig's 2D joint predictor for the prior-guided skeleton estimator: a small U-shaped heatmap network on the
front-view render (silhouette, front/back depth, normals; sidecar/skeleton/frontViewImage.ts), one heatmap per joint,
read out by a spatial soft-argmax so that the exported model returns pixel coordinates directly (no arg-max post-
processing to port) plus a confidence per joint (the heatmap's peak probability mass around its mean)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

IN_CHANNELS = 5
JOINTS = 23


def conv_block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


class Joints2DNet(nn.Module):
    """image (B, 5, S, S) -> coords (B, J, 2) in input pixels (column, row; centres at integers), confidence (B, J),
    heatmap logits (B, J, S/2, S/2). S must be a multiple of 32."""

    def __init__(self, widths=(24, 32, 48, 64, 96), joints=JOINTS):
        super().__init__()
        w = widths
        self.stem = nn.Sequential(nn.Conv2d(IN_CHANNELS, w[0], 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(w[0]), nn.ReLU(inplace=True))
        self.enc = nn.ModuleList([conv_block(w[0], w[1]), conv_block(w[1], w[2]), conv_block(w[2], w[3]), conv_block(w[3], w[4])])
        self.dec = nn.ModuleList([conv_block(w[4] + w[3], w[3]), conv_block(w[3] + w[2], w[2]), conv_block(w[2] + w[1], w[1])])
        self.head = nn.Conv2d(w[1], joints, 1)
        # The soft-argmax is sharp only if the logits can grow large; a learned temperature lets them.
        self.log_temperature = nn.Parameter(torch.tensor(1.5))

    def forward(self, image):
        x = self.stem(image)  # S/2
        skips = []
        for i, block in enumerate(self.enc):
            x = block(x)
            if i < len(self.enc) - 1:
                skips.append(x)
                x = F.max_pool2d(x, 2)
        for block in self.dec:
            skip = skips.pop()
            x = F.interpolate(x, scale_factor=2.0, mode="nearest")
            x = block(torch.cat([x, skip], dim=1))
        logits = self.head(x) * torch.exp(self.log_temperature)  # (B, J, S/2, S/2)
        return soft_argmax(logits, image.shape[-1])


def soft_argmax(logits, input_size):
    """logits (B, J, H, W) -> coords (B, J, 2) in input pixels, confidence (B, J), logits."""
    b, j, h, w = logits.shape
    prob = torch.softmax(logits.reshape(b, j, h * w), dim=-1).reshape(b, j, h, w)
    scale = input_size / w
    # heatmap cell c covers input pixels [c*scale, (c+1)*scale): its centre in input pixel coordinates
    xs = (torch.arange(w, dtype=logits.dtype) + 0.5) * scale - 0.5
    ys = (torch.arange(h, dtype=logits.dtype) + 0.5) * scale - 0.5
    px = prob.sum(dim=2)  # (B, J, W)
    py = prob.sum(dim=3)  # (B, J, H)
    cx = (px * xs).sum(-1)
    cy = (py * ys).sum(-1)
    coords = torch.stack([cx, cy], dim=-1)
    # confidence: probability mass within ~2 heatmap cells of the mean
    dx = xs.view(1, 1, w) - cx.unsqueeze(-1)
    dy = ys.view(1, 1, h) - cy.unsqueeze(-1)
    near_x = (dx.abs() <= 2.0 * scale).to(logits.dtype)
    near_y = (dy.abs() <= 2.0 * scale).to(logits.dtype)
    confidence = (prob * near_y.unsqueeze(-1) * near_x.unsqueeze(-2)).sum(dim=(2, 3))
    return coords, confidence, logits


class Joints2DEnsemble(nn.Module):
    """Several Joints2DNet trained from different seeds, read as one: their heatmaps' probabilities averaged, then the
    same soft-argmax. One network's joints move by a few pixels from seed to seed, and where it is sure of a joint
    decides whether the hybrid skeleton takes it (HYBRID_MIN_CONFIDENCE): a joint the members disagree on spreads its
    probability, so the average is sure only where they agree. Same inputs and outputs as Joints2DNet; the heatmaps
    output is the log of the averaged probabilities."""

    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, image):
        prob = None
        for member in self.members:
            _, _, logits = member(image)
            b, j, h, w = logits.shape
            p = torch.softmax(logits.reshape(b, j, h * w), dim=-1)
            prob = p if prob is None else prob + p
        prob = prob / len(self.members)
        return soft_argmax(torch.log(prob.clamp_min(1e-30)).reshape(b, j, h, w), image.shape[-1])
