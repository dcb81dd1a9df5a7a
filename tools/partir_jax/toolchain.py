"""The LLVM/MLIR 22 prefix for the Python tools and lit: `$PARTIR_LLVM_PREFIX` (tests/lit.rs sets
it to what build.rs used), else `$MLIR_SYS_220_PREFIX`, else the value .cargo/config.toml gives the
Rust build. One place to change it: .cargo/config.toml."""
from __future__ import annotations

import os
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def llvm_prefix() -> Path:
    for name in ("PARTIR_LLVM_PREFIX", "MLIR_SYS_220_PREFIX"):
        if os.environ.get(name):
            return Path(os.environ[name])
    with open(ROOT / ".cargo" / "config.toml", "rb") as config:
        return Path(tomllib.load(config)["env"]["MLIR_SYS_220_PREFIX"])
