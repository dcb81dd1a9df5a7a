#!/usr/bin/env python3
"""Writes the data directory of a *first* optimizer step: a zoo model's inputs with every
optimizer state (`opt/...`: Adam's moments, momentum, the step count) zeroed, and no stored
outputs (JAX's outputs were for the warm state).

    tools/first_step_data.py examples/transformer/data /tmp/first-step

The first Adam step is ill-conditioned (the update is m / (sqrt(v) + eps) with v = g^2, so
f32 rounding alone moves it by ~1e-4): `partir verify` must pass it by judging outputs
against the program's own rounding noise, not a fixed tolerance.
"""
import json
import shutil
import sys
from pathlib import Path

import numpy as np


def main(source: str, target: str) -> None:
    source, target = Path(source), Path(target)
    manifest = json.loads((source / "manifest.json").read_text())
    target.mkdir(parents=True, exist_ok=True)
    for entry in manifest["inputs"]:
        array = np.load(source / entry["file"])
        if entry["name"].startswith("opt/"):
            array = np.zeros_like(array)
        np.save(target / entry["file"], array)
    manifest["outputs"] = []
    (target / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
