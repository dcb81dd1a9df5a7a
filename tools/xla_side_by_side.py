#!/usr/bin/env python3
"""Same strategy, same engine: each zoo model x BP / MP / BP+MP partitioned by JAX itself
(`jax.jit` with `NamedSharding` in and out shardings) and by partir (`partir_jax.partition`,
StableHLO -> partir -> XLA with one replica per device), both compiled and run by XLA on 8 CPU
devices (a 4x2 mesh). JAX is given exactly the shardings partir chose for every argument and
result (read from the partitioned module's `partir.sharding`), so both run the same strategy.

Per pair: the collectives in XLA's optimized module of each (count, and bytes per device:
operand bytes of all-reduce and reduce-scatter, result bytes of all-gather and all-to-all),
XLA's compile time, the median wall time of a step (after warm-up; both executables called the
same way, `execute_sharded` plus one array per device and output; `jit_call_s` is JAX's own
C++ call path, for reference), and the worst normalised error of partir's outputs against JAX's.

The "partir" columns count XLA's optimized module of partir's export (XLA's own combiners run
on it too); the "own" columns count partir's PartIR:HLO itself (`partir partition --stage hlo`,
collectives combined by partir-combine-collectives), on both inputs: the StableHLO form and the
linalg form (`examples/<model>/<model>{.stablehlo,}.mlir`), counted as
test/Collectives/Inputs/collectives.py does (the same conventions as here). `--markdown OUT`
writes the table of issue 15 (kept in docs/communication.md): XLA against partir's own, both
forms, per model and strategy.

Published models (tools/published_models.py: transformers' GPT-2 and LLaMA, penzai's GPT-NeoX, and
their -scan / -remat variants) are cases `published/<model>:<schedule>`, with the schedules of
`examples/published/schedules/<model>/` (a -remat variant uses its model's) and, for the "own"
columns, `examples/published/<model>.mlir` (StableHLO only); `--published` runs each of them with
BP, MP and BP_MP_Z3. A published case partir cannot partition is reported and the run goes on
(exit 1).

    tools/.venv/bin/python tools/xla_side_by_side.py [--steps N] [--json OUT] [--markdown OUT] [MODEL:SCHEDULE ...]
    tools/.venv/bin/python tools/xla_side_by_side.py [--published] [published/gpt2:BP_MP_Z3 ...]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))

import jax  # noqa: E402
import numpy as np  # noqa: E402

import partir_jax  # noqa: E402
from partir_jax import models, xla_run  # noqa: E402

SCHEDULES = ["BP", "MP", "BP_MP"]
PUBLISHED = "published/"
PUBLISHED_SCHEDULES = ["BP", "MP", "BP_MP_Z3"]
BYTES = {"f32": 4, "s32": 4, "u32": 4, "pred": 1, "f64": 8, "s64": 8, "bf16": 2, "f16": 2}
_COLLECTIVE = re.compile(
    r"= (\([^()]*\)|\w+\[[\d,]*\](?:\{[\d,]*\})?) (all-reduce|all-reduce-start|all-gather|all-gather-start|"
    r"reduce-scatter|all-to-all|collective-permute|collective-permute-start)\(")
_SHAPE = re.compile(r"(\w+)\[([\d,]*)\]")
_GROUPS = re.compile(r"replica_groups=\{\{([\d,]*)\}")


_HEADER = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s*\(.*->.*\{\s*$")
_CALLED = re.compile(r"\b(body|condition|to_apply|calls|branch_computations)=(?:\{([^}]*)\}|%?([\w.\-]+))")
_TRIPS = re.compile(r'"known_trip_count":\{"n":"(\d+)"\}')


def _times_run(hlo: str) -> dict[str, int]:
    """How many times each computation of an HLO module runs per step: a while loop's body and
    condition as many times as its known trip count (XLA records it in the while's
    backend_config), anything else a computation calls as often as that computation."""
    computations: dict[str, list[str]] = {}
    entry, current = None, None
    for line in hlo.splitlines():
        header = _HEADER.match(line)
        if header:
            current = header.group(2)
            computations[current] = []
            if header.group(1):
                entry = current
        elif current is not None:
            computations[current].append(line)
    times = {name: 0 for name in computations}
    if entry is None:
        return {name: 1 for name in computations}

    def visit(name: str, count: int) -> None:
        if name not in computations:
            return
        times[name] += count
        for line in computations[name]:
            trips = _TRIPS.search(line)
            loop = " while(" in line
            for kind, listed, single in _CALLED.findall(line):
                names = listed or single
                factor = int(trips.group(1)) if loop and trips and kind in ("body", "condition") else 1
                for callee in names.split(","):
                    visit(callee.strip().lstrip("%"), count * factor)

    visit(entry, 1)
    return times


def collectives(hlo: str) -> tuple[int, int, dict[str, int]]:
    """(count, bytes per device, count per kind) of the collectives an optimized HLO module runs
    per step: one inside a while loop's body counts once per iteration (`lax.scan` over layers:
    XLA all-reduces each layer's gradients inside the loop)."""
    times = _times_run(hlo)
    count, total, kinds = 0, 0, {}
    current = None
    for line in hlo.splitlines():
        header = _HEADER.match(line)
        if header:
            current = header.group(2)
            continue
        match = _COLLECTIVE.search(line)
        if not match:
            continue
        runs = max(times.get(current, 1), 1)
        kind = match.group(2).replace("-start", "")
        result = sum(BYTES.get(ty, 4) * int(np.prod([int(d) for d in dims.split(",") if d] or [1]))
                     for ty, dims in _SHAPE.findall(match.group(1)))
        if kind == "reduce-scatter":
            groups = _GROUPS.search(line)
            result *= len(groups.group(1).split(",")) if groups else 1
        count += runs
        total += result * runs
        kinds[kind] = kinds.get(kind, 0) + runs
    return count, total, kinds


def _collectives_py():
    path = TOOLS.parent / "test" / "Collectives" / "Inputs" / "collectives.py"
    spec = importlib.util.spec_from_file_location("collectives_py", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _published(model: str):
    """A published model's case (tools/published_models.py) as a ModelSpec, its schedules'
    directory and its StableHLO program."""
    import published_models
    from partir_jax import importer

    case = model[len(PUBLISHED):]
    built = published_models.warm(published_models.build(case))  # warm optimizer state
    spec = importer.ModelSpec(built.fn, built.args, published_models.ARG_NAMES, published_models.RESULT_NAMES)
    schedules = published_models.OUT_DIR / "schedules" / case.replace("-remat", "")
    return spec, schedules, published_models.destination(case, None, 0)


def own(model: str, schedule: str, form: str) -> dict | None:
    """partir's own PartIR:HLO collectives for one input form ("stablehlo" or "linalg"):
    count and bytes per device of everything that communicates (all_slice is local)."""
    if model.startswith(PUBLISHED):
        if form != "stablehlo":
            return None
        _, schedules, program = _published(model)
        return _own(program, schedules / f"{schedule}.toml")
    name = f"{model}.stablehlo.mlir" if form == "stablehlo" else f"{model}.mlir"
    program = TOOLS.parent / "examples" / model / name
    schedule_path = TOOLS.parent / "examples" / model / "schedules" / f"{schedule}.toml"
    return _own(program, schedule_path)


def _own(program: Path, schedule_path: Path) -> dict | None:
    if not program.exists():
        return None
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "hlo.mlir"
        done = subprocess.run([partir_jax.api._partir_binary(), "partition", str(program), "--schedule",
                               str(schedule_path), "--stage", "hlo", "-o", str(out)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"partir failed on {program} with {schedule}:\n{done.stderr}")
        text = out.read_text()
    count, total, kinds = 0, 0, {}
    for kind, _reduction, _axes, size, _attrs, _types in _collectives_py().collectives(text):
        if kind == "all_slice":
            continue
        count += 1
        total += size
        kinds[kind] = kinds.get(kind, 0) + 1
    return {"collectives": count, "bytes": total, "kinds": kinds}


def own_cells(figures: dict | None, width: int) -> str:
    if figures is None:
        return f"{'-':>{width}s} {'-':>10s}"
    return f"{figures['collectives']:{width}d} {figures['bytes']:10d}"


def markdown(rows: list[dict]) -> str:
    """Issue 15's table: XLA against partir's own PartIR:HLO, both input forms."""
    def cell(figures: dict | None) -> str:
        if figures is None:
            return "-"
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(figures["kinds"].items()))
        return f"{figures['collectives']} ({kinds or 'none'}), {figures['bytes']:,} B"

    def within(figures: dict | None, xla: dict) -> str:
        if figures is None:
            return "-"
        ok = figures["collectives"] <= xla["collectives"] and figures["bytes"] <= xla["bytes"]
        return "yes" if ok else "**no**"

    lines = ["| model | strategy | XLA: collectives, bytes per device | partir (StableHLO in) | <= XLA | "
             "partir (linalg in) | <= XLA |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        x = r["xla"]
        lines.append(f"| {r['model']} | {r['schedule'].replace('_', '+')} | {cell(x)} | {cell(r['own_stablehlo'])} | "
                     f"{within(r['own_stablehlo'], x)} | {cell(r['own_linalg'])} | {within(r['own_linalg'], x)} |")
    return "\n".join(lines) + "\n"


def median_steps(calls, steps: int) -> list[float]:
    """The median wall time of each call, measured interleaved (one step of each in turn), so
    that both see the same machine load: 8 CPU "devices" share the cores."""
    for call in calls:
        jax.block_until_ready(call())  # warm-up
    times = [[] for _ in calls]
    for _ in range(steps):
        for call, spent in zip(calls, times):
            started = time.perf_counter()
            jax.block_until_ready(call())
            spent.append(time.perf_counter() - started)
    return [statistics.median(spent) for spent in times]


def spec_of(axes: list[list[str]]) -> jax.sharding.PartitionSpec:
    return jax.sharding.PartitionSpec(*[tuple(a) if len(a) > 1 else (a[0] if a else None) for a in axes])


def for_caller(dims: list[list[str]] | None, view, sizes: dict[str, int]) -> list[list[str]] | None:
    """A sharding of an expanded argument or result (`partir.view_of`: a fused dim seen as its
    factors) as JAX can give it on the caller's array: each of the caller's dims split on the
    axes of the factors it holds, as one contiguous block (what XLA's partitioner can express
    for GPT-2's fused c_attn split by heads)."""
    local, caller = view
    if caller is None or not dims:
        return dims
    expanded = [size * int(np.prod([sizes.get(axis, 1) for axis in axes])) for size, axes in zip(local, dims)]
    out, d = [], 0
    for size in caller:
        axes, product = [], 1
        while product < size and d < len(expanded):
            axes += dims[d]
            product *= expanded[d]
            d += 1
        out.append(axes)
    return out


def compare(model: str, schedule: str, steps: int, hlo_dir: Path | None = None) -> dict:
    if model.startswith(PUBLISHED):
        spec, schedules, _ = _published(model)
        path = schedules / f"{schedule}.toml"
    else:
        spec, _ = models.spec(model)
        path = TOOLS.parent / "examples" / model / "schedules" / f"{schedule}.toml"
    step = partir_jax.partition(spec.fn, spec.args, mesh={"batch": 4, "model": 2}, schedule=path,
                                arg_names=spec.arg_names, result_names=spec.result_names)
    compiled: xla_run.Compiled = step._compiled
    partir_hlo = compiled.executable.hlo_modules()[0].to_string()
    placed = compiled.place(jax.tree_util.tree_leaves(spec.args))
    partir_out = compiled.gather(compiled.execute(placed))

    mesh = jax.sharding.Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("batch", "model"))
    args_tree = jax.tree_util.tree_structure(spec.args)
    named = lambda dims: jax.sharding.NamedSharding(mesh, spec_of(dims) if dims else jax.sharding.PartitionSpec())
    in_shardings = jax.tree_util.tree_unflatten(
        args_tree, [named(for_caller(d, v, dict(compiled.mesh))) for d, v in zip(compiled.arg_shardings, compiled.arg_views)])
    out_tree = jax.tree_util.tree_structure(jax.eval_shape(spec.fn, *spec.args))
    out_shardings = jax.tree_util.tree_unflatten(
        out_tree, [named(for_caller(d, v, dict(compiled.mesh))) for d, v in zip(compiled.res_shardings, compiled.res_views)])
    jitted = jax.jit(spec.fn, in_shardings=in_shardings, out_shardings=out_shardings)
    sharded_args = jax.device_put(spec.args, in_shardings)
    started = time.perf_counter()
    jax_compiled = jitted.lower(*sharded_args).compile()
    jax_compile = time.perf_counter() - started
    jax_hlo = jax_compiled.as_text()
    # JAX's executable also through the runner partir's goes through (execute_sharded, then
    # one array per device and output), so that the ratio compares programs, not dispatch paths.
    jax_executable = jax_compiled.runtime_executable()
    jax_leaves = jax.tree_util.tree_leaves(sharded_args)
    jit_time, jax_time, partir_time = median_steps(
        [lambda: jax_compiled(*sharded_args),
         lambda: jax_executable.execute_sharded(jax_leaves).disassemble_into_single_device_arrays(),
         lambda: compiled.execute(placed)], steps)
    jax_out = jax.tree_util.tree_leaves(jax_compiled(*sharded_args))
    error = max(float(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)).max(initial=0)
                      / max(float(np.abs(np.asarray(b, np.float64)).max(initial=0)), 1e-30))
                for a, b in zip(partir_out, jax_out))
    if hlo_dir:
        hlo_dir.mkdir(parents=True, exist_ok=True)
        stem = model.replace("/", "-")
        (hlo_dir / f"{stem}-{schedule}-xla.hlo").write_text(jax_hlo)
        (hlo_dir / f"{stem}-{schedule}-partir.hlo").write_text(partir_hlo)
    xla_count, xla_bytes, xla_kinds = collectives(jax_hlo)
    partir_count, partir_bytes, partir_kinds = collectives(partir_hlo)
    return {"model": model, "schedule": schedule,
            "xla": {"collectives": xla_count, "bytes": xla_bytes, "kinds": xla_kinds,
                    "compile_s": jax_compile, "step_s": jax_time, "jit_call_s": jit_time},
            "partir": {"collectives": partir_count, "bytes": partir_bytes, "kinds": partir_kinds,
                       "compile_s": compiled.compile_seconds, "step_s": partir_time},
            "own_stablehlo": own(model, schedule, "stablehlo"), "own_linalg": own(model, schedule, "linalg"),
            "ratio": partir_time / jax_time, "max_error": error}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path, help="write issue 15's table (XLA vs partir's own) here")
    parser.add_argument("--hlo", type=Path, help="write both optimized HLO modules of each pair here")
    parser.add_argument("--published", action="store_true",
                        help="also every published model (tools/published_models.py) x BP, MP, BP_MP_Z3")
    args = parser.parse_args(argv)
    cases = list(args.cases)
    if args.published:
        import published_models

        cases += [f"{PUBLISHED}{m}:{s}" for m in published_models.ALL for s in PUBLISHED_SCHEDULES]
    cases = cases or [f"{m}:{s}" for m in models.ALL for s in SCHEDULES]
    rows, failed = [], []
    width = max([12] + [len(c.split(":")[0]) for c in cases])
    print(f"{'model':{width}s} {'schedule':9s} | {'XLA: coll':>9s} {'bytes':>10s} {'compile':>8s} {'step':>9s} | "
          f"{'partir: coll':>12s} {'bytes':>10s} {'compile':>8s} {'step':>9s} | {'step ratio':>10s} {'max err':>8s} | "
          f"{'own: shlo':>9s} {'bytes':>10s} {'linalg':>6s} {'bytes':>10s}")
    for case in cases:
        model, schedule = case.split(":")
        try:
            r = compare(model, schedule, args.steps, args.hlo)
        except (RuntimeError, SystemExit) as error:
            if not model.startswith(PUBLISHED):
                raise
            # a published model partir cannot partition (yet): say so, go on with the others
            lines = [line.strip() for line in str(error).splitlines() if line.strip()]
            print(f"{model:{width}s} {schedule:9s} | FAILED: {(lines[-1] if lines else '')[:160]}",
                  flush=True)
            failed.append({"model": model, "schedule": schedule, "error": str(error)})
            continue
        rows.append(r)
        x, p = r["xla"], r["partir"]
        print(f"{model:{width}s} {schedule:9s} | {x['collectives']:9d} {x['bytes']:10d} {x['compile_s']:7.2f}s "
              f"{x['step_s'] * 1e3:7.2f}ms | {p['collectives']:12d} {p['bytes']:10d} {p['compile_s']:7.2f}s "
              f"{p['step_s'] * 1e3:7.2f}ms | {r['ratio']:9.2f}x {r['max_error']:8.1e} | "
              f"{own_cells(r['own_stablehlo'], 9)} {own_cells(r['own_linalg'], 6)}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows + failed, indent=1) + "\n")
    if args.markdown:
        args.markdown.write_text(markdown(rows))
    return 0 if all(r["max_error"] < 1e-4 for r in rows) and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
