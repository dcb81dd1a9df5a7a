#!/usr/bin/env python3
"""Checks that a partir-simulate JSON report counts the same collectives as the IR says.

    compare_collectives.py PROGRAM.mlir REPORT.json

PROGRAM.mlir is PartIR:HLO text; its collectives are counted independently by
test/Collectives/Inputs/collectives.py (kind, reduction, axes, count, bytes per device). The
report's "collectives" rows must match exactly, and its per-axis "communication" bytes must
equal the IR's bytes of the communicating collectives over those axes. Prints one line per row
and MATCH or MISMATCH; exit 1 on a mismatch.
"""
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "Collectives", "Inputs"))
from collectives import collectives  # noqa: E402


def main() -> int:
    program, report_path = sys.argv[1:3]
    ir = defaultdict(lambda: [0, 0])
    ir_axes = defaultdict(int)
    for kind, reduction, axes, size, _, _ in collectives(open(program).read()):
        ir[(kind, reduction, tuple(axes))][0] += 1
        ir[(kind, reduction, tuple(axes))][1] += size
        if kind != "all_slice":
            ir_axes[tuple(axes)] += size
    report = json.load(open(report_path))
    # A Core program reports the whole story's last row; a plain report is the program itself.
    if "tactics" in report:
        report = report["tactics"][-1]["report"]
    simulated = {
        (row["kind"], row.get("reduction", ""), tuple(row["axes"])): [row["count"], int(row["bytes"])]
        for row in report["collectives"]
    }
    simulated_axes = {tuple(row["axes"]): int(row["bytes"]) for row in report["communication"]}
    ok = True
    for key in sorted(set(ir) | set(simulated)):
        mine, theirs = ir.get(key, [0, 0]), simulated.get(key, [0, 0])
        ok &= mine == theirs
        kind, reduction, axes = key
        print(f"{kind}{' ' + reduction if reduction else ''} {list(axes)} ir={mine} simulated={theirs}")
    ok &= dict(ir_axes) == simulated_axes
    total = sum(ir_axes.values())
    print(f"{'MATCH' if ok else 'MISMATCH'} bytes={total}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
