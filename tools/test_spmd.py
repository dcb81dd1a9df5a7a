#!/usr/bin/env python3
"""SPMD equivalence on MPI ranks (docs/design.md#8-execution): every zoo model x every expert schedule, partitioned
(`partir-schedule`, `partir-lower-to-hlo`, `cse`), run on 8 ranks (mpiexec.mpich + mlir-runner via
`partir-to-mpi`, see partir_jax/run_spmd.py) on the fixture's stored inputs, and compared with JAX's
stored outputs: every output's normalised error max|a-b|/max|b| must be within the bound (1e-5; the
UNet 1e-3, the bound tools/test_models.py uses for its own unpartitioned run of that model, whose
conv-gradient sums cancel heavily). The Transformer also runs on 2x2x2 meshes (schedules under
test/Collectives/Inputs/).

Run from anywhere: tools/.venv/bin/python tools/test_spmd.py [-k SUBSTRING] [--lib LIBPARTIR]
[--ranks N] [--keep DIR] [--reuse]. --keep DIR keeps the lowered programs in DIR; with --reuse, a
lowered program already in DIR is run as it is (its lowering time is then reported as 0). The plugin defaults to $PARTIR_LIB, else the newest of target/{release,debug}.
Prints one line per run with the wall time of lowering and of the MPI run, the worst output and its
error, and finally `N passed, M failed`.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parent
sys.path.insert(0, str(TOOLS))

from partir_jax import run_spmd  # noqa: E402

EXAMPLES = REPO / "examples"
MODELS = ["mlp", "transformer", "unet", "gns", "mqa"]
BOUND = {"unet": 1e-3}
DEFAULT_BOUND = 1e-5
EXTRA = [("transformer", REPO / "test/Collectives/Inputs/transformer-BP_MP_Z3-2x2x2.toml"),
         ("transformer", REPO / "test/Collectives/Inputs/transformer-BP_MP-2x2x2.toml")]


def default_lib() -> str:
    if os.environ.get("PARTIR_LIB"):
        return os.environ["PARTIR_LIB"]
    found = [p for p in (REPO / "target/release/libpartir.so", REPO / "target/debug/libpartir.so") if p.exists()]
    if not found:
        sys.exit("libpartir.so not found: cargo build, or pass --lib / set PARTIR_LIB")
    return str(max(found, key=lambda p: p.stat().st_mtime))


def cases():
    for model in MODELS:
        for schedule in sorted((EXAMPLES / model / "schedules").glob("*.toml")):
            yield model, schedule
    yield from EXTRA


def lower(model: str, schedule: Path, lib: str, out: Path) -> None:
    opt = [str(run_spmd.LLVM / "bin/mlir-opt"), f"--load-dialect-plugin={lib}", f"--load-pass-plugin={lib}"]
    pipeline = f"builtin.module(partir-schedule{{file={schedule}}}, partir-lower-to-hlo, cse)"
    r = subprocess.run(opt + ["-p", pipeline, str(EXAMPLES / model / f"{model}.mlir"), "-o", str(out)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"lowering failed:\n{r.stderr[-3000:]}")


def main() -> int:
    args = sys.argv[1:]

    def option(name, default):
        if name in args:
            return args[args.index(name) + 1]
        return default

    only = option("-k", None)
    lib = option("--lib", None) or default_lib()
    ranks = int(option("--ranks", "8"))
    keep = option("--keep", None)
    workdir = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="partir-spmd-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"plugin {lib}, {ranks} ranks")
    passed = failed = 0
    total = time.time()
    for model, schedule in cases():
        label = f"{model}/{schedule.stem}"
        if only and only not in label:
            continue
        bound = BOUND.get(model, DEFAULT_BOUND)
        hlo = workdir / f"{model}-{schedule.stem}.mlir"
        try:
            t0 = time.time()
            if not ("--reuse" in args and hlo.exists()):
                lower(model, schedule, lib, hlo)
            t1 = time.time()
            errs = run_spmd.compare(hlo, EXAMPLES / model / "data", ranks, lib)
            t2 = time.time()
            name, worst = max(errs, key=lambda e: e[1])
            bad = [(n, e) for n, e in errs if not e <= bound]  # NaN fails too
            line = (f"{label:32s} lower {t1 - t0:6.1f}s  run {t2 - t1:6.1f}s  worst {worst:.1e} ({name}), "
                    f"bound {bound:.0e}")
            if bad:
                raise AssertionError(f"{line}\n  outside the bound: {bad}")
        except Exception:
            failed += 1
            print(f"FAIL {label}")
            traceback.print_exc(limit=1)
        else:
            passed += 1
            print(f"ok   {line}")
        sys.stdout.flush()
    if not keep:
        for f in workdir.glob("*.mlir"):
            f.unlink()
        workdir.rmdir()
    print(f"total {time.time() - total:.0f}s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
