"""Shared helpers of the add-on's Python tests: puts the repository root on sys.path so `blender_addon` imports
without Blender (the add-on's pure modules do not import bpy)."""

import json
import os
import sys

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)


def load_protocol_json():
    """The protocol's single source of truth, read directly (not through the generated protocol.py)."""
    with open(os.path.join(REPO_ROOT, "shared-schema", "protocol.json"), encoding="utf-8") as f:
        return json.load(f)
