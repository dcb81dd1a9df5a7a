#!/usr/bin/env python3
"""`partir verify` on every zoo model x expert schedule, on a first optimizer step.

The zoo's stored inputs are a warm optimizer state; the first step (every `opt/...` input zero:
Adam's v = g^2, so its update m / (sqrt(v) + eps) is ill-conditioned and f32 rounding alone
moves it by ~1e-4) is where a fixed tolerance cries wolf. Each model x schedule is partitioned
and checked against the original run in f64, within the original's own rounding noise.

    tools/verify_zoo.py                       # sequential reading, every model x schedule
    tools/verify_zoo.py --ranks --jobs 1      # the PartIR:HLO program on 8 MPI ranks instead
    tools/verify_zoo.py --models mlp,gns --warm   # the stored (warm) inputs and JAX's outputs
"""
from __future__ import annotations

import argparse
import concurrent.futures
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODELS = ["mlp", "transformer", "unet", "gns", "mqa"]


def first_step(model: str, work: Path) -> Path:
    """The model's stored inputs with the optimizer state zeroed (tools/first_step_data.py)."""
    out = work / f"{model}-first-step"
    subprocess.run([str(REPO / "tools" / ".venv" / "bin" / "python"), str(REPO / "tools" / "first_step_data.py"),
                    str(REPO / "examples" / model / "data"), str(out)], check=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=lambda s: s.split(","), default=MODELS)
    ap.add_argument("--ranks", action="store_true", help="run the PartIR:HLO program on 8 MPI ranks")
    ap.add_argument("--warm", action="store_true", help="the stored inputs, not a first step")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--build", type=Path, default=REPO / "target" / "debug")
    args = ap.parse_args()
    partir = args.build / "partir"
    if not partir.exists():
        sys.exit(f"{partir} not found: run `cargo build` first (or pass --build DIR)")
    with tempfile.TemporaryDirectory(prefix="partir-verify-zoo-") as tmp:
        work = Path(tmp)
        data = {m: (REPO / "examples" / m / "data" if args.warm else first_step(m, work)) for m in args.models}
        jobs = [(m, s) for m in args.models
                for s in sorted((REPO / "examples" / m / "schedules").glob("*.toml"))]

        def verify(job):
            model, schedule = job
            mode = ["--ranks", "8"] if args.ranks else ["--sequential"]
            result = subprocess.run(
                [str(partir), "verify", str(REPO / "examples" / model / f"{model}.mlir"), "-s", str(schedule),
                 "--data", str(data[model]), *mode], capture_output=True, text=True)
            worst = re.search(r"worst: '([^']*)', (\S+) against a limit of (\S+)", result.stdout + result.stderr)
            ill = re.search(r"ill-conditioned outputs[^:]*: (.*)", result.stdout)
            verdict = "pass" if result.returncode == 0 else "FAIL"
            if result.returncode != 0 and not worst:
                verdict = "FAIL: " + next((l for l in result.stderr.splitlines() if "error" in l), "?")[:150]
            return (model, schedule.stem, verdict,
                    f"{worst.group(1)} {worst.group(2)} (limit {worst.group(3)})" if worst else "-",
                    str(ill.group(1).count("'") // 2) if ill else "0")

        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(verify, jobs))
    header = ["model", "schedule", "verdict", "worst output: partitioned vs f64", "ill-conditioned outputs"]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(c).ljust(widths[i]) for i, c in enumerate(row)).rstrip())
    failures = sum(1 for row in rows if row[2] != "pass")
    print(f"verify-zoo: {len(rows)} model x schedule pairs, {failures} failing", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
