#!/usr/bin/env python3
"""partir's per-device FLOP count (`partir simulate`) against XLA's own cost analysis.

For each zoo model and each run recorded in examples/<model>/xla_cost.json (written by
tools/xla_cost.py: XLA's `compiled.cost_analysis()` of the same JAX training step, unsharded and
sharded per expert schedule on a 4x2 mesh of CPU devices), this runs

    partir partition examples/<m>/<m>.mlir --schedule examples/<m>/schedules/<S>.toml -o OUT.mlir
    partir simulate OUT.mlir --device tpu-v3 --report R.json      (the unsharded run: <m>.mlir itself)

and compares R.json["totals"]["flops"] (per device) with XLA's per-device flops, and
["totals"]["transcendentals"] with XLA's transcendentals. Python 3 standard library only (no JAX).

The `unopt` column (shown, not checked) compares with XLA's count of its program before XLA's
optimization pipeline (tools/xla_cost.py's "unoptimized": the unsharded lowering, or the module right
after SPMD partitioning): it separates counting-rule differences from XLA's rewrites and fusion.

What is compared. XLA's `flops` include one flop per element of every all-reduce result (an
HloCostAnalysis convention: "assume 2 replicas"); partir counts collectives as 0 FLOPs, so the
ratio is   partir flops / (XLA flops - XLA all-reduce elements)   and the table shows both XLA
figures. Transcendentals (exp, log, tanh, rsqrt, sqrt, pow) are counted separately by both and are
compared as they are (a row with none on both sides passes).

A row passes when both ratios are within [0.95, 1.05], or when it is in KNOWN_DIFFERENCES below
and its ratios are within the interval given there (so a known difference still fails if it moves).
Exit status: 0 when every row passes, 1 otherwise, 2 on a usage/setup error.

    python3 tools/flop_check.py [MODEL ...] [--partir BIN] [-k SUBSTRING] [--keep DIR] [-j N]

--partir defaults to $PARTIR_BIN, else target/debug/partir (e.g. --partir /tmp/target-xla/release/partir).
tests/flops.rs runs this with the binary cargo just built.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
MODELS = ["mlp", "transformer", "unet", "gns", "mqa"]
FORMAT = "partir-xla-cost-v1"
BOUND = (0.95, 1.05)
DEVICE = "tpu-v3"

# Known differences: (model, schedule) -> {"flops": (low, high), "trans": (low, high), "why": reason}.
# The row's FLOP ratio (partir / XLA compute flops) and transcendentals ratio must then lie in the given
# intervals instead of BOUND (a missing key means BOUND). "unsharded" is the single-device run.
# Measured with partir at e36dff4 against the committed xla_cost.json; intervals are the measured
# ratio +-0.02. Two kinds: (1) a counting difference (UNet convolutions), (2) XLA and partir partition
# the step differently, so their per-device programs do different work (the counts of each are right).
_ZERO = ("partitioning: partir's Z2/Z3 alone are ZeRO (`propagate = \"elementwise\"`): the shards "
         "reach the optimizer update only, every device runs the whole forward and backward (data "
         "parallelism is BP's job), so partir's per-device work is about the unsharded program's; "
         "XLA pushes the state shardings into the computation, about 1/4 of the work for 2.5-25x the "
         "communication (test/Collectives/*-Z3.test)")
_FUSION = ("counting: partir matches XLA's module before optimization (unopt 1.000); XLA's optimized "
           "module counts the ops its fusions duplicate, about 7% more on the attention-heavy steps")
KNOWN_DIFFERENCES: dict[tuple[str, str], dict] = {
    ("unet", "BP_MP_Z3"): {"flops": (0.73, 0.77), "trans": (0.66, 0.71), "why":
        "partitioning: XLA's partitioner replicates part of the conv work over `batch` (about 1.34x "
        "partir's) and shards Adam's sqrt less (4801 vs 3283)"},
    ("transformer", "MP"): {"flops": (0.91, 0.95), "why": _FUSION},
    ("transformer", "BP_MP"): {"flops": (0.89, 0.93), "why": _FUSION},
    ("transformer", "BP_MP_Z3"): {"flops": (0.77, 0.81), "trans": (0.75, 0.80), "why":
        "partitioning: XLA resolves Z3's `batch` tiling of the parameters against BP's `batch` tiling "
        "of the activations by replicating work: layer norms unsharded (rsqrt 640 vs partir's 160) "
        "and more dot FLOPs; plus " + _FUSION},
    ("gns", "BP_MP_Z3"): {"trans": (0.72, 0.77), "why":
        "partitioning: XLA shards part of Adam's sqrt only 4 ways (3129 vs partir's 2317 per device); "
        "FLOPs agree (0.983)"},
    ("mqa", "BP_MP_Z3"): {"trans": (0.69, 0.74), "why":
        "partitioning: XLA's BP_MP_Z3 computes more softmax than its own BP_MP (8832 vs 6304) while "
        "partir's Z3 changes nothing for an inference step (6304 as BP_MP); FLOPs agree (0.953)"},
    ("mlp", "Z2"): {"flops": (3.26, 3.30), "why": _ZERO},
    ("mlp", "Z3"): {"flops": (3.85, 3.89), "why": _ZERO},
    ("transformer", "Z2"): {"flops": (3.57, 3.61), "trans": (1.90, 1.94), "why": _ZERO},
    ("transformer", "Z3"): {"flops": (3.76, 3.80), "trans": (1.90, 1.94), "why": _ZERO},
    ("unet", "Z2"): {"flops": (2.01, 2.05), "why": _ZERO},
    ("unet", "Z3"): {"flops": (3.96, 4.00), "why": _ZERO},
    ("gns", "Z2"): {"flops": (3.87, 3.91), "why": _ZERO},
    ("gns", "Z3"): {"flops": (3.88, 3.92), "why": _ZERO},
    ("mqa", "Z3"): {"flops": (3.94, 3.98), "trans": (3.83, 3.87), "why": _ZERO},
}


def bounds(key: tuple[str, str], what: str) -> tuple[float, float]:
    return KNOWN_DIFFERENCES.get(key, {}).get(what, BOUND)


def cost_path(model: str) -> Path:
    return EXAMPLES / model / "xla_cost.json"


def default_partir() -> Path:
    if os.environ.get("PARTIR_BIN"):
        return Path(os.environ["PARTIR_BIN"])
    return REPO / "target/debug/partir"


class Failure(RuntimeError):
    pass


def run(cmd: list[str]) -> None:
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-5:]
        raise Failure(f"`{' '.join(cmd)}` exited {p.returncode}: " + " | ".join(tail))


def partir_counts(partir: Path, model: str, schedule: str, work: Path) -> tuple[float, float]:
    """(flops, transcendentals) per device from `partir simulate` on the partitioned program."""
    module = EXAMPLES / model / f"{model}.mlir"
    tag = f"{model}-{schedule}"
    if schedule == "unsharded":
        program = module
    else:
        program = work / f"{tag}.mlir"
        run([str(partir), "partition", str(module), "--schedule",
             str(EXAMPLES / model / "schedules" / f"{schedule}.toml"), "-o", str(program)])
    report = work / f"{tag}.json"
    run([str(partir), "simulate", str(program), "--device", DEVICE, "--report", str(report)])
    try:
        totals = json.loads(report.read_text())["totals"]
        return float(totals["flops"]), float(totals.get("transcendentals", 0.0))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise Failure(f"{report}: no totals.flops ({e})") from e


def ratio(a: float, b: float) -> float:
    if b == 0:
        return 1.0 if a == 0 else float("inf")
    return a / b


def within(r: float, lo: float, hi: float) -> bool:
    return lo <= r <= hi


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="partir simulate's per-device FLOPs against XLA's cost analysis.")
    ap.add_argument("models", nargs="*", default=MODELS)
    ap.add_argument("--partir", type=Path, default=None, help="the partir binary (default: $PARTIR_BIN, else target/debug/partir)")
    ap.add_argument("-k", metavar="SUBSTRING", help="only rows whose 'model/schedule' contains SUBSTRING")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="keep the partitioned programs and reports in DIR")
    ap.add_argument("-j", type=int, default=2, help="rows run in parallel (default 2)")
    a = ap.parse_args(argv)
    partir = (a.partir or default_partir()).resolve()
    if not partir.exists():
        print(f"flop_check: {partir} not found: build partir (cargo build) or pass --partir / set PARTIR_BIN",
              file=sys.stderr)
        return 2

    rows = []
    for model in a.models:
        if model not in MODELS:
            print(f"flop_check: unknown model {model!r} (known: {', '.join(MODELS)})", file=sys.stderr)
            return 2
        data = json.loads(cost_path(model).read_text())
        if data.get("format") != FORMAT:
            print(f"flop_check: {cost_path(model)}: format {data.get('format')!r}, expected {FORMAT}", file=sys.stderr)
            return 2
        for r in data["runs"]:
            if a.k and a.k not in f"{model}/{r['schedule']}":
                continue
            rows.append((model, r))
    for key in KNOWN_DIFFERENCES:
        if not any((m, r["schedule"]) == key for m, r in rows) and key[0] in a.models and not a.k:
            print(f"flop_check: KNOWN_DIFFERENCES entry {key} matches no recorded run", file=sys.stderr)
            return 2

    ctx = tempfile.TemporaryDirectory(prefix="flop_check-") if a.keep is None else None
    work = Path(ctx.name) if ctx else a.keep
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.j)) as pool:
        futures = [pool.submit(partir_counts, partir, m, r["schedule"], work) for m, r in rows]
        results = []
        for f in futures:
            try:
                results.append(f.result())
            except Failure as e:
                results.append(e)

    head = (f"{'model':12s} {'schedule':10s} {'XLA flops':>13s} {'XLA all-red':>11s} {'partir flops':>13s} "
            f"{'ratio':>7s} {'unopt':>7s} {'XLA trans':>10s} {'partir trans':>12s} {'ratio':>7s}  status")
    print(head)
    print("-" * len(head))
    n_ok = n_known = n_fail = 0
    notes = []
    for (model, r), res in zip(rows, results):
        key = (model, r["schedule"])
        xla_compute = r["flops"] - r.get("all_reduce_elements", 0.0)
        if isinstance(res, Exception):
            n_fail += 1
            print(f"{model:12s} {r['schedule']:10s} {r['flops']:>13.0f} {r.get('all_reduce_elements', 0):>11.0f} "
                  f"{'-':>13s} {'-':>7s} {'-':>7s} {r['transcendentals']:>10.0f} {'-':>12s} {'-':>7s}  ERROR")
            notes.append(f"{model}/{r['schedule']}: {res}")
            continue
        flops, trans = res
        rf = ratio(flops, xla_compute)
        rt = ratio(trans, r["transcendentals"])
        un = r.get("unoptimized")
        ru = f"{ratio(flops, un['flops'] - un.get('all_reduce_elements', 0.0)):>7.3f}" if un else f"{'-':>7s}"
        ok = within(rf, *BOUND) and within(rt, *BOUND)
        known = within(rf, *bounds(key, "flops")) and within(rt, *bounds(key, "trans"))
        if ok:
            status = "ok"
            n_ok += 1
            if key in KNOWN_DIFFERENCES:
                notes.append(f"{model}/{r['schedule']}: listed in KNOWN_DIFFERENCES but within {BOUND}: drop the entry?")
        elif key in KNOWN_DIFFERENCES and known:
            status = "known"
            n_known += 1
            notes.append(f"known {model}/{r['schedule']}: {KNOWN_DIFFERENCES[key]['why']}")
        else:
            status = "FAIL"
            n_fail += 1
            if key in KNOWN_DIFFERENCES:
                status += f" (known: flops {bounds(key, 'flops')}, trans {bounds(key, 'trans')})"
        print(f"{model:12s} {r['schedule']:10s} {r['flops']:>13.0f} {r.get('all_reduce_elements', 0):>11.0f} "
              f"{flops:>13.0f} {rf:>7.3f} {ru} {r['transcendentals']:>10.0f} {trans:>12.0f} {rt:>7.3f}  {status}")
    print(f"\nratio = partir / (XLA flops - XLA all-reduce elements), XLA's compiled module; unopt = the same "
          f"against XLA's module before its optimizations (not checked); transcendentals as they are. "
          f"Bound {BOUND}, device {DEVICE}, {partir}, {time.time() - t0:.1f} s")
    for n in notes:
        print("note: " + n)
    print(f"{n_ok} within {BOUND[0]}..{BOUND[1]}, {n_known} known differences, {n_fail} failed")
    if ctx:
        ctx.cleanup()
    return 0 if n_fail == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
