#!/usr/bin/env python3
"""Predictions checked against runs (issue 26): for each model x strategy, the simulator's step
time and peak memory per device (`partir partition --stage xla --device D --report`) against
the same exported program run by XLA on 8 CPU devices (median step wall time, as
tools/xla_side_by_side.py measures it) and XLA's own buffer assignment of it
(tools/xla_memory.py's `memory_analysis()` figures).

Cases: every zoo model (`examples/<model>/<model>.stablehlo.mlir`) with each of its
`schedules/*.toml` and "replicated" (the schedules' mesh, no tactics); with `--published`, the
published models of `examples/published/` that have schedules. Figures: Spearman's rank
correlation of predicted and measured step times over all pairs, its mean within each model
(the ranking of one model's strategies is what a user decides with), and the median of
predicted / measured.

    tools/.venv/bin/python tools/predict.py --device calibrated.toml [--steps N] [--json OUT] [--published] [MODEL[:SCHEDULE] ...]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parent
sys.path.insert(0, str(TOOLS))

import numpy as np  # noqa: E402

REPLICATED = "replicated"
ZOO = ["mlp", "transformer", "unet", "gns", "mqa", "llama", "moe"]
PUBLISHED = ["gpt2", "gpt2-scan", "gpt_neox", "gpt_neox-scan", "llama", "llama-scan"]


def spearman(a: list[float], b: list[float]) -> float:
    """Spearman's rank correlation (scipy's, ties averaged). NaN below 2 pairs or when either
    side is constant."""
    from scipy.stats import spearmanr

    if len(a) != len(b) or len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return float("nan")
    return float(spearmanr(a, b).statistic)


def cases(names: list[str], published: bool) -> list[tuple[str, str, Path, Path | None]]:
    """(model, strategy, program, schedule file or None for replicated) of each case."""
    out = []
    wanted = {}
    for name in names:
        model, _, schedule = name.partition(":")
        wanted.setdefault(model, set()).update([schedule] if schedule else [])
    models = [(m, REPO / "examples" / m / f"{m}.stablehlo.mlir", REPO / "examples" / m / "schedules") for m in ZOO]
    if published or any(m.startswith("published/") for m in wanted):
        root = REPO / "examples" / "published"
        models += [(f"published/{m}", root / f"{m}.mlir", root / "schedules" / m) for m in PUBLISHED]
    for model, program, schedules in models:
        if wanted and model not in wanted:
            continue
        if not program.exists() or not schedules.is_dir():
            continue
        files = sorted(schedules.glob("*.toml"))
        if not files:
            continue
        for strategy, schedule in [(REPLICATED, None)] + [(f.stem, f) for f in files]:
            if wanted.get(model) and strategy not in wanted[model]:
                continue
            out.append((model, strategy, program, schedule))
    return out


def mesh_of(schedule: Path) -> str:
    """The `mesh = { ... }` line of a schedule."""
    for line in schedule.read_text().splitlines():
        if line.startswith("mesh"):
            return line
    raise SystemExit(f"{schedule}: no mesh")


def partition(program: Path, schedule: Path | None, mesh_from: Path, device: str, work: Path) -> tuple[str, dict]:
    """`partir partition --stage xla` of `program`: (the exported program, the report's last
    tactic's report). A replicated case is the mesh alone."""
    from partir_jax.api import _partir_binary

    if schedule is None:
        schedule = work / "replicated.toml"
        schedule.write_text(mesh_of(mesh_from) + "\n")
    out, report = work / "program.mlir", work / "report.json"
    done = subprocess.run([_partir_binary(), "partition", str(program), "--schedule", str(schedule), "--stage", "xla",
                           "--device", device, "-o", str(out), "--report", str(report)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"partir could not partition {program.name} with {schedule.name}:\n{done.stderr}")
    return out.read_text(), json.loads(report.read_text())["tactics"][-1]["report"]


_ARG = re.compile(r"%arg\d+: tensor<((?:\d+x)*)(\w+)>")
_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i32": np.int32, "i64": np.int64,
           "i8": np.int8, "ui32": np.uint32, "i1": np.bool_}


def local_inputs(text: str) -> list[tuple[tuple[int, ...], str]]:
    """Each @main argument's local (per-device) shape and element type."""
    from partir_jax import run_spmd

    args, _ = run_spmd.signature(text)
    return [(tuple(int(d) for d in dims.split("x") if d), ty) for dims, ty in _ARG.findall(args)]


def place_local(compiled, text: str, seed: int = 0) -> list:
    """Per-device arguments of the exported program, made up: small normal floats, zero integers
    (in range as indices). A step's time does not depend on the values."""
    import jax
    import ml_dtypes

    rng = np.random.default_rng(seed)
    arrays = []
    for shape, ty in local_inputs(text):
        if ty == "bf16":
            dtype = ml_dtypes.bfloat16
        else:
            dtype = _DTYPES.get(ty)
            if dtype is None:
                raise SystemExit(f"predict: no input for element type {ty}")
        if np.issubdtype(dtype, np.floating) or ty == "bf16":
            value = (0.01 * rng.standard_normal(shape)).astype(dtype)
        else:
            value = np.zeros(shape, dtype)
        pieces = [jax.device_put(value, device) for device in compiled.devices]
        arrays.append(jax.make_array_from_single_device_arrays(shape, compiled._everywhere, pieces))
    return arrays


class Program:
    """One case's exported program compiled by XLA for its replicas (one CPU device each), with
    made-up arguments placed, and XLA's memory accounting of it (tools/xla_memory.py)."""

    def __init__(self, text: str):
        from partir_jax import xla_run
        from xla_memory import stats

        self.compiled = xla_run.Compiled(text)
        self.placed = place_local(self.compiled, text)
        self.memory = stats(self.compiled.executable)

    def step(self):
        """One step: done when every device's results are ready (calibrate.first_results)."""
        from partir_jax.calibrate import first_results

        return first_results(self.compiled.executable, self.placed)


def measure(programs: list[Program], models: list[str], steps: int, rounds: int,
            log=None) -> tuple[list[float], list[list[float]]]:
    """Each program's step wall time, every device running it. The strategies of one model are
    measured interleaved, one step of each in turn (tools/xla_side_by_side.py's
    `median_steps`), so that the load of this shared machine falls alike on the programs a
    model's ranking compares; per round the median of `steps` steps, over rounds the smallest
    median (load only ever adds time). Also each round's medians: how well one round ranks
    another is the ceiling of any prediction's ranking on this machine."""
    from xla_side_by_side import median_steps

    best = [float("inf")] * len(programs)
    per_round: list[list[float]] = [[] for _ in programs]
    groups: dict[str, list[int]] = {}
    for index, model in enumerate(models):
        groups.setdefault(model, []).append(index)
    for round_ in range(rounds):
        for indices in groups.values():
            medians = median_steps([programs[index].step for index in indices], steps)
            for index, median in zip(indices, medians):
                best[index] = min(best[index], median)
                per_round[index].append(median)
        if log:
            load = os.getloadavg()
            log(f"round {round_ + 1}/{rounds} done; load average {load[0]:.2f}")
    return best, per_round


def mesh_source(model: str, program: Path) -> Path:
    """A schedule of `model` whose mesh the replicated case takes."""
    folder = (REPO / "examples" / "published" / "schedules" / model.split("/", 1)[1]
              if model.startswith("published/") else program.parent / "schedules")
    return sorted(folder.glob("*.toml"))[0]


class Stored:
    """A case measured before (`--measured R.json`, a `--json` of this tool): its times and XLA's
    memory accounting, to price again on another device without running XLA."""

    def __init__(self, row: dict):
        self.memory, self.seconds = row["xla_memory"], row["measured_s"]
        self.rounds = row.get("rounds_s", [])


def run(cases_: list, device: str, steps: int, rounds: int, stored: dict | None = None,
        out=sys.stdout) -> list[dict]:
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    reports, programs = [], []
    for model, strategy, program, schedule in cases_:
        with tempfile.TemporaryDirectory() as work:
            text, report = partition(program, schedule, schedule or mesh_source(model, program), device, Path(work))
        reports.append(report)
        if stored is not None:
            programs.append(Stored(stored[(model, strategy)]))
            continue
        programs.append(Program(text))
        log(f"compiled {model} {strategy}")
    if stored is not None:
        measured = [program.seconds for program in programs]
        per_round = [program.rounds for program in programs]
    else:
        measured, per_round = measure(programs, [case[0] for case in cases_], steps, rounds, log)
    rows = []
    width = max([12] + [len(c[0]) for c in cases_])
    print(f"{'model':{width}s} {'strategy':11s} {'predicted':>10s} {'measured':>10s} {'ratio':>6s} "
          f"{'peak':>10s} {'XLA peak':>10s} {'memory':>6s}", file=out)
    for (model, strategy, _, _), report, program, seconds, each in zip(cases_, reports, programs, measured, per_round):
        totals = report["totals"]
        predicted, peak = totals["step_seconds"], totals["peak_memory_bytes"]
        xla_peak = program.memory["peak_bytes"]
        row = {"model": model, "strategy": strategy, "predicted_s": predicted, "measured_s": seconds,
               "ratio": predicted / seconds, "compute_s": totals["compute_seconds"],
               "communication_s": totals["communication_seconds"], "kernels": totals.get("kernels"),
               "peak_bytes": peak, "xla_peak_bytes": xla_peak, "memory_ratio": peak / xla_peak,
               "xla_memory": program.memory, "rounds_s": each}
        rows.append(row)
        print(f"{model:{width}s} {strategy:11s} {predicted * 1e3:8.3f}ms {seconds * 1e3:8.3f}ms {row['ratio']:6.2f} "
              f"{peak / 2**20:7.3f}MiB {xla_peak / 2**20:7.3f}MiB {row['memory_ratio']:6.3f}", file=out, flush=True)
    return rows


def figures(rows: list[dict]) -> dict:
    overall = spearman([r["predicted_s"] for r in rows], [r["measured_s"] for r in rows])
    within = {}
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model]
        rho = spearman([r["predicted_s"] for r in mine], [r["measured_s"] for r in mine])
        if rho == rho:  # not NaN
            within[model] = rho
    return {"spearman": overall, "within_model": within, **repeatability(rows),
            "within_model_mean": statistics.fmean(within.values()) if within else float("nan"),
            "median_ratio": statistics.median(r["ratio"] for r in rows) if rows else float("nan"),
            "memory_ratios": [r["memory_ratio"] for r in rows]}


def repeatability(rows: list[dict]) -> dict:
    """How well the measurement ranks itself: Spearman of round i's medians against round j's
    (every pair of rounds, averaged), over all pairs and within each model. A prediction
    cannot rank runs better than the runs rank each other."""
    rounds = min((len(r.get("rounds_s", [])) for r in rows), default=0)
    if rounds < 2:
        return {}
    pairs = [(i, j) for i in range(rounds) for j in range(i + 1, rounds)]

    def between(mine: list[dict]) -> float:
        values = [spearman([r["rounds_s"][i] for r in mine], [r["rounds_s"][j] for r in mine]) for i, j in pairs]
        values = [v for v in values if v == v]
        return statistics.fmean(values) if values else float("nan")

    within = [between([r for r in rows if r["model"] == model]) for model in dict.fromkeys(r["model"] for r in rows)]
    within = [v for v in within if v == v]
    return {"rounds_spearman": between(rows),
            "rounds_within_model_mean": statistics.fmean(within) if within else float("nan")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="MODEL or MODEL:STRATEGY (default: every zoo model and strategy)")
    parser.add_argument("--device", default="tpu-v3", help="a preset or a device TOML (partir calibrate)")
    parser.add_argument("--steps", type=int, default=20, help="steps per round (their median)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over all cases (the smallest median)")
    parser.add_argument("--published", action="store_true", help="also the published models with schedules")
    parser.add_argument("--json", type=Path, help="write the rows and figures here")
    parser.add_argument("--measured", type=Path,
                        help="take the measured times from this --json of an earlier run (price only)")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"device {args.device}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start", flush=True)
    started = time.perf_counter()
    stored = None
    if args.measured:
        earlier = json.loads(args.measured.read_text())
        stored = {(row["model"], row["strategy"]): row for row in earlier["rows"]}
        print(f"measured times from {args.measured} (load average then: {earlier.get('load', '?')})")
    chosen = cases(args.cases, args.published)
    if stored is not None:
        chosen = [case for case in chosen if (case[0], case[1]) in stored]
    rows = run(chosen, args.device, args.steps, args.rounds, stored)
    result = figures(rows)
    end_load = os.getloadavg()
    print(f"\nSpearman over all {len(rows)} pairs: {result['spearman']:.3f}")
    print("within each model: " + ", ".join(f"{m} {rho:.2f}" for m, rho in result["within_model"].items()))
    print(f"mean within-model Spearman: {result['within_model_mean']:.3f}")
    print(f"median predicted/measured: {result['median_ratio']:.2f}")
    if "rounds_spearman" in result:
        print(f"the runs against themselves (round against round): Spearman {result['rounds_spearman']:.3f} "
              f"over all pairs, {result['rounds_within_model_mean']:.3f} within a model (the ceiling of a prediction here)")
    ratios = sorted(result["memory_ratios"])
    if ratios:
        print(f"peak memory predicted/XLA: median {statistics.median(ratios):.3f}, "
              f"range {ratios[0]:.3f}..{ratios[-1]:.3f}, within 10%: {sum(abs(r - 1) <= 0.1 for r in ratios)}/{len(ratios)}")
    print(f"load average {end_load[0]:.2f} {end_load[1]:.2f} {end_load[2]:.2f} at the end; "
          f"{time.perf_counter() - started:.0f} s")
    if args.json:
        load_text = f"{load[0]:.2f} at start, {end_load[0]:.2f} at the end"
        args.json.write_text(json.dumps({"device": args.device, "load": load_text, "rows": rows, "figures": result},
                                        indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
