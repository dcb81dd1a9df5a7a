#!/usr/bin/env python3
"""partir's plans handed to XLA's own partitioner: each zoo model x expert schedule (the StableHLO
form JAX emitted, `examples/<model>/<model>.stablehlo.mlir`) partitioned by partir twice:

- `partir partition --stage sdy`: the input program annotated for Shardy (`sdy.mesh`,
  `sdy.sharding` on @main's arguments and results, `sdy.sharding_constraint` on the values the
  plan splits), compiled by XLA as one SPMD program over 8 CPU devices and partitioned by Shardy;
- `partir partition --stage xla`: partir's own device-local export (one replica per device).

Per pair: the collectives of XLA's optimized module of each (count and bytes per device, counted
as `tools/xla_side_by_side.py` counts them), and whether the Shardy program computes what the
original does (`partir verify --partitioned OUT.sdy.mlir --xla`, on the model's example inputs).
A pair is `ok` when it verifies and Shardy's collectives move no more bytes than partir's export.

    tools/.venv/bin/python tools/sdy_check.py [--jobs N] [--json OUT] [--markdown OUT] [MODEL:SCHEDULE ...]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
TOOLS = Path(__file__).resolve().parent
ROOT = TOOLS.parent
sys.path.insert(0, str(TOOLS))

from partir_jax import xla_run  # noqa: E402
from xla_side_by_side import collectives  # noqa: E402

MODELS = ["mlp", "transformer", "unet", "gns", "mqa", "llama", "moe"]


def partir_binary() -> str:
    return os.environ.get("PARTIR", str(ROOT / "target" / "debug" / "partir"))


def pairs(selected: list[str]) -> list[tuple[str, str]]:
    if selected:
        return [tuple(item.split(":", 1)) for item in selected]
    found = []
    for model in MODELS:
        for schedule in sorted((ROOT / "examples" / model / "schedules").glob("*.toml")):
            found.append((model, schedule.stem))
    return found


def optimized(text: str) -> str:
    """XLA's optimized module of a program (partir's export or a Shardy-annotated one)."""
    executable, _ = (xla_run.compile_partitions if "sdy.mesh" in text else xla_run.compile_replicas)(
        text, int(_devices(text)))
    return executable.hlo_modules()[0].to_string()


def _devices(text: str) -> int:
    import re

    for key in ("mhlo.num_partitions", "mhlo.num_replicas"):
        found = re.search(key.replace(".", r"\.") + r" = (\d+)", text)
        if found and int(found.group(1)) > 1:
            return int(found.group(1))
    return 1


def check(model: str, schedule: str, scratch: Path) -> dict:
    program = ROOT / "examples" / model / f"{model}.stablehlo.mlir"
    schedule_path = ROOT / "examples" / model / "schedules" / f"{schedule}.toml"
    row: dict = {"model": model, "schedule": schedule}
    outputs = {}
    for stage in ("sdy", "xla"):
        out = scratch / f"{model}-{schedule}.{stage}.mlir"
        run = subprocess.run([partir_binary(), "partition", str(program), "-s", str(schedule_path),
                              "--stage", stage, "-o", str(out)], capture_output=True, text=True)
        if run.returncode != 0:
            row["error"] = f"partition --stage {stage}: {run.stderr.strip().splitlines()[-1:]}"
            return row
        outputs[stage] = out.read_text()
    for stage, text in outputs.items():
        count, moved, kinds = collectives(optimized(text))
        row[stage] = {"collectives": count, "bytes": moved, "kinds": kinds}
    row["constraints"] = outputs["sdy"].count("sdy.sharding_constraint")
    verify = subprocess.run([partir_binary(), "verify", str(program), "--partitioned",
                             str(scratch / f"{model}-{schedule}.sdy.mlir"), "--xla"],
                            capture_output=True, text=True)
    row["verifies"] = verify.returncode == 0 and "partir: PASS" in verify.stdout
    if not row["verifies"]:
        row["verify"] = (verify.stdout + verify.stderr).strip().splitlines()[-3:]
    row["ok"] = row["verifies"] and row["sdy"]["bytes"] <= row["xla"]["bytes"]
    return row


def markdown(rows: list[dict]) -> str:
    lines = ["| model | schedule | constraints | Shardy: collectives, bytes | partir's export: collectives, bytes | verifies |",
             "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['model']} | {row['schedule']} | - | {row['error']} | - | no |")
            continue
        cell = lambda side: f"{row[side]['collectives']}, {row[side]['bytes']:,} B"  # noqa: E731
        lines.append(f"| {row['model']} | {row['schedule']} | {row['constraints']} | {cell('sdy')} | "
                     f"{cell('xla')} | {'yes' if row['verifies'] else 'no'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pairs", nargs="*", metavar="MODEL:SCHEDULE")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            rows = list(pool.map(lambda pair: check(*pair, Path(scratch)), pairs(args.pairs)))
    width = max(len(f"{row['model']}:{row['schedule']}") for row in rows)
    for row in rows:
        name = f"{row['model']}:{row['schedule']}".ljust(width)
        if "error" in row:
            print(f"{name}  ERROR {row['error']}")
            continue
        sdy, own = row["sdy"], row["xla"]
        verdict = "ok" if row["ok"] else "FAIL"
        print(f"{name}  shardy {sdy['collectives']:3d} / {sdy['bytes']:>10,} B   partir {own['collectives']:3d} / "
              f"{own['bytes']:>10,} B   constraints {row['constraints']:4d}   verifies {row['verifies']}   {verdict}")
    failing = [row for row in rows if not row.get("ok")]
    print(f"{len(rows)} pairs, {len(failing)} failing")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    if args.markdown:
        args.markdown.write_text(markdown(rows))
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
