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

# Known differences: (model, schedule) -> (low, high, reason). The row's FLOP ratio
# (partir / XLA compute flops) must then lie in [low, high] instead of BOUND; each entry says why it
# differs. "unsharded" is the single-device run.
KNOWN_DIFFERENCES: dict[tuple[str, str], tuple[float, float, str]] = {
}


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
        if ok:
            status = "ok"
            n_ok += 1
            if key in KNOWN_DIFFERENCES:
                notes.append(f"{model}/{r['schedule']}: listed in KNOWN_DIFFERENCES but within {BOUND}: drop the entry?")
        elif key in KNOWN_DIFFERENCES and within(rf, *KNOWN_DIFFERENCES[key][:2]) and within(rt, *BOUND):
            status = f"known [{KNOWN_DIFFERENCES[key][0]}, {KNOWN_DIFFERENCES[key][1]}]"
            n_known += 1
        else:
            status = "FAIL"
            n_fail += 1
            if key in KNOWN_DIFFERENCES:
                status += f" (known interval [{KNOWN_DIFFERENCES[key][0]}, {KNOWN_DIFFERENCES[key][1]}])"
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
