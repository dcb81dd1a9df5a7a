"""Partitions every op form of `tools/op_forms.py` along its batch dim with partir and runs it on 8
XLA CPU devices against JAX's own result.

    tools/.venv/bin/python tools/op_forms_check.py [FORM ...] [--partir BIN] [--json OUT]
                                                   [--write-docs] [--keep DIR]

Per form: `partir partition examples/op_forms/<f>.mlir -s examples/op_forms/<f>.toml --stage xla`
(with `--report`), then the exported SPMD program compiled by XLA with one replica per device
(`partir_jax.xla_run`, what `partir verify --xla` uses) and called on the form's example
arguments, each output compared with `jax.jit(f)(*args)`: integers exactly, floats by the
normalised error max|a-b|/max|b| <= 1e-5 (partitioning reorders float sums).

A form *passes through* when partir exits 0, propagation stops nowhere, the final program has no
all_gather, and XLA's result agrees with JAX's. The table ends with `N passed, M failed`
(forms that pass through, forms that do not). The exit status is 1 only when a form listed in
`op_forms.EXPECTED_TO_PASS` does not pass through, partir crashes on a form (an exit status
other than 0 or 1, or `internal error` on stderr), or a partitioned program that partir wrote
does not run on XLA or computes something else than JAX; otherwise 0.

`--write-docs` rewrites docs/op_forms.md from the results (run it on all forms).
The partir binary is `--partir`, else `$PARTIR`, else target/debug/partir.
"""
from __future__ import annotations

import os

# Before JAX is imported (by op_forms): 8 CPU devices, CPU only.
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))

import op_forms  # noqa: E402
from partir_jax import xla_run  # noqa: E402

ROOT = op_forms.ROOT
FIXTURES = op_forms.OUT
DOCS = ROOT / "docs" / "op_forms.md"
TOLERANCE = 1e-5

_OP = re.compile(r'^(\s*)(?:%[^=]+=\s*)?"([a-z_][a-z0-9_]*\.[a-z0-9_.]+)"(.*)$')
_NO_RULE = re.compile(r"no tile mapping rule for '([^']+)'")


def count_ops(text: str) -> int:
    """@main's ops as partir sees them once calls are inlined: the ops directly in @main's body
    (not inside their regions), a `func.call` counted as its callee's ops, `func.return` not
    counted."""
    bodies: dict[str, list[tuple[str, str]]] = {}
    current, depth = None, None
    for line in text.splitlines():
        m = _OP.match(line)
        if not m:
            continue
        indent, name, rest = len(m.group(1)), m.group(2), m.group(3)
        if name == "func.func":
            current, depth = re.search(r'sym_name = "([^"]+)"', rest).group(1), indent
            bodies[current] = []
        elif current is not None and indent == depth + 2:
            callee = re.search(r"callee = @([\w.$-]+)", rest) if name == "func.call" else None
            bodies[current].append((name, callee.group(1) if callee else ""))

    def size(function: str, seen: tuple = ()) -> int:
        total = 0
        for name, callee in bodies.get(function, []):
            if name == "func.return":
                continue
            total += size(callee, seen + (function,)) if callee and callee not in seen else 1
        return total

    return size("main")


def partition(partir: str, name: str, out: Path) -> dict:
    """Runs partir on one form; what it did, from its exit status, stderr, report and output."""
    xla, report = out / f"{name}.xla.mlir", out / f"{name}.json"
    fixtures = FIXTURES.relative_to(ROOT)
    command = [partir, "partition", f"{fixtures}/{name}.mlir", "-s", f"{fixtures}/{name}.toml", "--stage", "xla"]
    reproduce = " ".join([Path(partir).relative_to(ROOT).as_posix() if partir.startswith(f"{ROOT}/") else partir,
                          *command[1:]])
    command += ["-o", str(xla), "--report", str(report)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    result = {
        "command": reproduce,
        "exit": done.returncode,
        "partir_seconds": round(time.perf_counter() - started, 3),
        "ops": count_ops((FIXTURES / f"{name}.mlir").read_text()),
        "no_rule": sorted(set(_NO_RULE.findall(done.stderr))),
        "crash": done.returncode not in (0, 1) or "internal error" in done.stderr,
        "ops_partitioned": None,
        "conflicts": None,
        "stops": [],
        "all_gathers": None,
        "collectives": {},
        "error": "",
    }
    if done.returncode < 0:
        try:
            result["error"] = f"killed by {signal.Signals(-done.returncode).name}"
        except ValueError:
            result["error"] = f"killed by signal {-done.returncode}"
    elif done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if "error" in line] or done.stderr.splitlines()[-3:]
        result["error"] = " ".join(lines)[:400]
    if done.returncode != 0:
        return result
    story = json.loads(report.read_text())
    for tactic in story["tactics"]:
        propagation = tactic.get("propagation")
        if propagation is None:
            continue
        result["ops_partitioned"] = (result["ops_partitioned"] or 0) + propagation["ops_partitioned"]
        result["conflicts"] = (result["conflicts"] or 0) + propagation["conflicts"]
        for stop in propagation["stops"]:
            message = stop["message"]
            result["stops"].append({"location": stop["location"], "reason": message.split(" \u2014 ")[0],
                                    "message": message})
    final = story["tactics"][-1]["report"].get("collectives", [])
    for c in final:
        kind = c["kind"] + (f" {c['reduction']}" if c.get("reduction") else "")
        result["collectives"][kind] = result["collectives"].get(kind, 0) + c["count"]
    program = xla.read_text()
    result["program"] = str(xla)
    result["all_gathers"] = len(re.findall(r'"?stablehlo\.all_gather"?[( ]', program))
    return result


def normalised_error(got: np.ndarray, want: np.ndarray) -> float:
    if want.size == 0:
        return 0.0
    if not np.issubdtype(want.dtype, np.floating):
        return 0.0 if np.array_equal(got, want) else float("inf")
    scale = float(np.max(np.abs(want.astype(np.float64))))
    diff = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    if not np.isfinite(diff) and np.array_equal(np.isnan(got), np.isnan(want)):
        same = ~np.isnan(want)
        diff = float(np.max(np.abs(got[same].astype(np.float64) - want[same].astype(np.float64)), initial=0.0))
    return diff / scale if scale > 0 else diff


def run_on_xla(form: op_forms.Form, program: str) -> dict:
    """The exported program on 8 XLA CPU devices against `jax.jit(f)(*args)`."""
    import jax

    want = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(jax.jit(form.fn)(*form.args))]
    try:
        compiled = xla_run.Compiled(Path(program).read_text())
        got = compiled(form.leaves())
    except Exception as error:  # XLA rejected or failed to run partir's program
        lines = [line for line in str(error).splitlines() if line.strip()]
        return {"ran": False, "correct": False, "error": (lines[0] if lines else type(error).__name__)[:300],
                "max_error": None}
    worst, problems = 0.0, []
    if len(got) != len(want):
        problems.append(f"{len(got)} outputs, JAX has {len(want)}")
    for index, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            problems.append(f"output {index}: {g.dtype}{list(g.shape)}, JAX {w.dtype}{list(w.shape)}")
            continue
        error = normalised_error(g, w)
        worst = max(worst, error)
        if not error <= TOLERANCE:
            problems.append(f"output {index}: normalised error {error:.2e}")
    return {"ran": True, "correct": not problems, "error": "; ".join(problems), "max_error": worst}


def verdict(r: dict) -> bool:
    """Passes through: exit 0, no stop, no all_gather, correct on XLA."""
    return (r["exit"] == 0 and not r["stops"] and r["all_gathers"] == 0 and r.get("xla", {}).get("correct", False))


def first_reason(r: dict) -> str:
    if r["exit"] < 0:
        return f"partir crashed: {r['error']}"
    if r["exit"] != 0:
        return f"exit {r['exit']}: {r['error']}"
    if r["stops"]:
        return r["stops"][0]["reason"].removeprefix("stopped at ")
    if r["no_rule"]:
        return "no rule for " + ", ".join(f"'{op}'" for op in r["no_rule"])
    if r["all_gathers"]:
        return "none reported; the lowering gathers"
    return ""


def xla_cell(r: dict) -> str:
    x = r.get("xla")
    if not x:
        return "not run"
    if not x["ran"]:
        return "XLA error: " + x["error"]
    if not x["correct"]:
        return "WRONG: " + x["error"]
    return "yes"


def rows(results: list[dict]) -> list[list[str]]:
    out = []
    for r in results:
        stops = str(len(r["stops"])) + (f" ({first_reason(r)})" if first_reason(r) else "")
        out.append([r["form"], str(r["ops"]), "-" if r["ops_partitioned"] is None else str(r["ops_partitioned"]),
                    stops, "-" if r["all_gathers"] is None else str(r["all_gathers"]), xla_cell(r),
                    "yes" if r["passes"] else "no"])
    return out


HEADER = ["form", "ops", "partitioned", "stops (first reason)", "all_gathers", "runs on XLA", "passes through"]


def print_table(results: list[dict]) -> None:
    table = rows(results)
    widths = [max(len(h), *(min(len(row[i]), 60) for row in table)) for i, h in enumerate(HEADER)]
    print("  ".join(h.ljust(w) for h, w in zip(HEADER, widths)))
    for row in table:
        cells = [c if len(c) <= 60 or i == len(row) - 1 else c[:57] + "..." for i, c in enumerate(row)]
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())


def write_docs(results: list[dict]) -> None:
    passed = sum(r["passes"] for r in results)

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = [
        "# Op forms: what partir partitions of JAX's StableHLO",
        "",
        "`tools/op_forms.py` holds small JAX functions, one StableHLO op form each, lowered exactly as",
        "`jax.jit(f, keep_unused=True).lower(*args)` emits them: private functions and `func.call`s kept,",
        "no lowering rule patched, nothing inlined. Each form's per-example arguments have the batch (8)",
        "on one dim, and its schedule tiles them along the mesh axis `batch` (`mesh = { batch = 8 }`).",
        "The fixtures are `examples/op_forms/<form>.mlir` (generic form; `partir.name` on @main's",
        "arguments, which also keep JAX's pytree-path locations) and `<form>.toml`.",
        "",
        "`tools/op_forms_check.py` partitions each form with `partir partition --stage xla`, runs the",
        "SPMD program on 8 XLA CPU devices (`partir_jax.xla_run`) and compares with `jax.jit(f)` (integers",
        "exactly, floats within a normalised error of 1e-5). A form *passes through* when partir exits 0,",
        "propagation stops nowhere, the program has no all_gather and XLA agrees with JAX. Unless the",
        "form's description says otherwise, every op of a form is per-example along the batch, so a",
        "perfect partitioner passes every form through (a sum over the batch is an all_reduce).",
        "`cargo test --test op_forms` fails when a form of `EXPECTED_TO_PASS` (in `tools/op_forms.py`)",
        "stops passing through, when partir crashes on a form, and when a partitioned program does",
        "not run on XLA or computes something else than JAX.",
        "",
        "Regenerate:",
        "",
        "```sh",
        "tools/.venv/bin/python tools/op_forms.py                    # the fixtures (--check compares)",
        "tools/.venv/bin/python tools/op_forms_check.py --write-docs # this table (needs target/debug/partir)",
        "tools/.venv/bin/python tools/op_forms_check.py cond gelu   # some forms; --json OUT for details",
        "```",
        "",
        f"{len(results)} forms, {passed} pass through. Columns: `ops`, @main's ops once calls are",
        "inlined (not counting ops inside regions, nor the return); `partitioned`, the ops the BP tactic",
        "partitioned; `stops`, where propagation stopped and the first reason (else the ops that have no",
        "rule); `all_gathers`, in the final program.",
        "",
        "| form | what | ops | partitioned | stops (first reason) | all_gathers | runs on XLA | passes through |",
        "| --- | --- | ---: | ---: | --- | ---: | --- | --- |",
    ]
    forms = op_forms.FORMS
    for r, row in zip(results, rows(results)):
        f = forms[r["form"]]
        what = f.what + (f" *Not per-example: {f.note}.*" if f.note else "")
        lines.append("| " + " | ".join(cell(c) for c in [f"`{r['form']}`", what, *row[1:]]) + " |")
    lines.append("")
    DOCS.write_text("\n".join(lines))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("forms", nargs="*", help="only these forms (default: all)")
    parser.add_argument("--partir", help="the partir binary (default: $PARTIR, else target/debug/partir)")
    parser.add_argument("--json", type=Path, help="write the per-form results there")
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/op_forms.md")
    parser.add_argument("--keep", type=Path, help="keep partir's programs and reports in this directory")
    args = parser.parse_args(argv)
    unknown = [name for name in args.forms if name not in op_forms.FORMS]
    if unknown:
        parser.error(f"unknown forms {unknown} (tools/op_forms.py --list names them)")
    if args.write_docs and args.forms:
        parser.error("--write-docs needs every form (name none)")
    partir = args.partir or os.environ.get("PARTIR") or str(ROOT / "target" / "debug" / "partir")
    if not Path(partir).exists():
        raise SystemExit(f"op_forms_check: no partir binary at {partir} (cargo build, or --partir)")
    names = args.forms or list(op_forms.FORMS)
    missing = [n for n in names if not (FIXTURES / f"{n}.mlir").exists() or not (FIXTURES / f"{n}.toml").exists()]
    if missing:
        raise SystemExit(f"op_forms_check: no fixture for {missing}: run tools/op_forms.py")
    started = time.perf_counter()
    scratch = None
    if args.keep:
        out = args.keep
        out.mkdir(parents=True, exist_ok=True)
    else:
        scratch = tempfile.TemporaryDirectory(prefix="partir-op-forms-")
        out = Path(scratch.name)
    results = []
    # partir runs in the background (two at a time) while XLA compiles and runs in this process.
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = [pool.submit(partition, partir, name, out) for name in names]
        for name, job in zip(names, jobs):
            r = {"form": name, **job.result()}
            if r["exit"] == 0:
                t0 = time.perf_counter()
                r["xla"] = run_on_xla(op_forms.FORMS[name], r["program"])
                r["xla_seconds"] = round(time.perf_counter() - t0, 3)
            r["passes"] = verdict(r)
            r["expected_to_pass"] = name in op_forms.EXPECTED_TO_PASS
            results.append(r)
    elapsed = time.perf_counter() - started
    print_table(results)
    problems = []
    for r in results:
        if r["crash"]:
            problems.append(f"{r['form']}: partir crashed (exit {r['exit']}): {r['error']}\n    reproduce: {r['command']}")
        if r.get("xla") and not r["xla"]["correct"]:
            problems.append(f"{r['form']}: the partitioned program {xla_cell(r)}\n    reproduce: {r['command']}")
        if r["expected_to_pass"] and not r["passes"]:
            problems.append(f"{r['form']}: expected to pass through (EXPECTED_TO_PASS), but: "
                            f"{first_reason(r) or xla_cell(r) or 'all_gathers'}")
    newly = sorted(r["form"] for r in results if r["passes"] and not r["expected_to_pass"])
    if newly:
        print(f"passing through but not in EXPECTED_TO_PASS (add them): {', '.join(newly)}")
    for line in problems:
        print("FAIL " + line)
    if args.json:
        args.json.write_text(json.dumps({"seconds": round(elapsed, 2), "forms": results}, indent=1) + "\n")
    if args.write_docs:
        write_docs(results)
        print(f"wrote {DOCS.relative_to(ROOT)}")
    if scratch:
        scratch.cleanup()
    passed = sum(r["passes"] for r in results)
    print(f"checked {len(results)} forms in {elapsed:.1f} s")
    print(f"{passed} passed, {len(results) - passed} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
