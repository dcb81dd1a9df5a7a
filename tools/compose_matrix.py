#!/usr/bin/env python3
"""partir composes with upstream MLIR passes: the test matrix of issue 12.

Every zoo model with its richest schedule (BP_MP_Z3) goes through stock mlir-opt with the partir
plugin, with one upstream pass before the schedule, between the schedule and the lowering, or
after the lowering:

    before:  builtin.module(PASS, partir-schedule{file=S}, partir-lower-to-hlo, cse)
    between: builtin.module(partir-schedule{file=S}, PASS, partir-lower-to-hlo, cse)
    after:   builtin.module(partir-schedule{file=S}, partir-lower-to-hlo, PASS, cse)

Each result must lower, move no more bytes in no more collectives than the plain pipeline
(`partir-schedule, partir-lower-to-hlo, cse`), and, with --verify, pass `partir verify
--partitioned OUT --ranks 8` against the original program (identical programs are verified
once). Stdlib only; collectives are counted by test/Collectives/Inputs/collectives.py.

    tools/compose_matrix.py                      # the matrix, every model
    tools/compose_matrix.py --verify --jobs 2    # ... and run every distinct program on 8 ranks
    tools/compose_matrix.py --fused              # every model x schedule, fused vs unfused
    tools/compose_matrix.py --issue-table        # the table of issue 12, regenerated
"""
from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "test" / "Collectives" / "Inputs"))
import collectives as collective_count  # noqa: E402

sys.path.insert(0, str(REPO / "tools"))
from partir_jax.toolchain import llvm_prefix  # noqa: E402

MODELS = ["mlp", "transformer", "unet", "gns", "mqa"]
RICHEST = "BP_MP_Z3"
PASSES = [
    "cse",
    "canonicalize",
    "sccp",
    "inline",
    "loop-invariant-code-motion",
    "symbol-dce",
    "linalg-generalize-named-ops",
    "linalg-fuse-elementwise-ops",
    "linalg-fold-unit-extent-dims",
]
MODULE_PASSES = {"sccp", "inline", "symbol-dce"}
POSITIONS = ["before", "between", "after"]
LLVM = llvm_prefix()


def nested(p: str) -> str:
    """A pass as it nests in a module pipeline."""
    return p if p in MODULE_PASSES else f"func.func({p})"


def pipeline(schedule: Path, position: str | None, p: str | None) -> str:
    steps = [f"partir-schedule{{file={schedule}}}", "partir-lower-to-hlo", "cse"]
    at = {"before": 0, "between": 1, "after": 2}
    if position is not None:
        steps.insert(at[position], nested(p))
    return "builtin.module(" + ",".join(steps) + ")"


class Tools:
    def __init__(self, build: Path):
        self.plugin = build / "libpartir.so"
        self.partir = build / "partir"
        for tool in (self.plugin, self.partir):
            if not tool.exists():
                sys.exit(f"{tool} not found: run `cargo build` first (or pass --build DIR)")

    def opt(self, pipeline_text: str, model: Path, out: Path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(LLVM / "bin" / "mlir-opt"), f"--load-dialect-plugin={self.plugin}",
             f"--load-pass-plugin={self.plugin}", "-p", pipeline_text, str(model), "-o", str(out)],
            capture_output=True, text=True)

    def verify(self, model: Path, program: Path, extra: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.partir), "verify", str(model), "--partitioned", str(program), *extra],
            capture_output=True, text=True)


def summary(text: str) -> tuple[int, int]:
    """(collectives, bytes per device) of a PartIR:HLO program; local all_slices not counted."""
    count = total = 0
    for kind, _reduction, _axes, size, _attrs, _types in collective_count.collectives(text):
        if kind == "all_slice":
            continue
        count += 1
        total += size
    return count, total


def first_error(stderr: str) -> str:
    for line in stderr.splitlines():
        if "error" in line:
            return line.split("error: ", 1)[-1][:160]
    return stderr.strip().splitlines()[-1][:160] if stderr.strip() else "failed"


def run_matrix(args, tools: Tools, work: Path) -> int:
    rows = []
    jobs = []
    for model in args.models:
        mlir = REPO / "examples" / model / f"{model}.mlir"
        schedule = REPO / "examples" / model / "schedules" / f"{args.schedule}.toml"
        jobs.append((model, mlir, schedule, None, None))
        for p in args.passes:
            for position in args.positions:
                jobs.append((model, mlir, schedule, position, p))

    def partition(job):
        model, mlir, schedule, position, p = job
        out = work / f"{model}-{position or 'plain'}-{p or 'none'}.mlir"
        result = tools.opt(pipeline(schedule, position, p), mlir, out)
        if result.returncode != 0:
            return job, out, None, first_error(result.stderr)
        return job, out, summary(out.read_text()), None

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(partition, jobs))
    plain = {job[0]: figures for job, _, figures, _ in results if job[3] is None}

    verified: dict[str, str] = {}
    if args.verify:
        distinct = {}
        for job, out, figures, error in results:
            if error is None and (args.verify_models is None or job[0] in args.verify_models):
                digest = hashlib.sha256(out.read_bytes()).hexdigest()
                distinct.setdefault(digest, (job[1], out))

        def check(item):
            digest, (mlir, out) = item
            result = tools.verify(mlir, out, ["--ranks", "8"])
            return digest, "pass" if result.returncode == 0 else "FAIL: " + first_error(result.stderr)

        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs // 2)) as pool:
            verified = dict(pool.map(check, distinct.items()))
        print(f"compose-matrix: verified {len(distinct)} distinct programs on 8 ranks", file=sys.stderr)

    failures = 0
    for job, out, figures, error in results:
        model, _, _, position, p = job
        base = plain.get(model)
        if error is not None:
            verdict, comm = f"FAIL: {error}", "-"
        else:
            count, size = figures
            comm = f"{count} / {size:,} B"
            verdict = "ok"
            if base is not None and (count > base[0] or size > base[1]):
                verdict = f"FAIL: more than plain ({base[0]} / {base[1]:,} B)"
            digest = hashlib.sha256(out.read_bytes()).hexdigest() if args.verify else None
            if digest in verified:
                status = verified[digest]
                if status != "pass" and verdict == "ok":
                    verdict = status
                elif verdict == "ok":
                    verdict = "ok, verified"
        failures += verdict.startswith("FAIL")
        rows.append((model, position or "(plain)", p or "-", comm, verdict))
    print_table(["model", "position", "pass", "collectives / bytes per device", "verdict"], rows, args.markdown)
    print(f"compose-matrix: {len(rows)} pipelines, {failures} failing", file=sys.stderr)
    return 1 if failures else 0


def print_table(header, rows, markdown: bool):
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(str(cell) for cell in row) + " |")
        return
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)).rstrip())


FUSION = "builtin.module(func.func(linalg-generalize-named-ops,linalg-fuse-elementwise-ops,canonicalize,cse))"


def fused(args, tools: Tools, work: Path) -> int:
    """Every model x every schedule on its fused form (generalize, fuse, canonicalize, cse before
    the schedule): no more conflicts, collectives or bytes than on the unfused program."""
    rows, failures = [], 0
    for model in args.models:
        mlir = REPO / "examples" / model / f"{model}.mlir"
        fused_mlir = work / f"{model}-fused.mlir"
        subprocess.run([str(LLVM / "bin" / "mlir-opt"), "-p", FUSION, str(mlir), "-o", str(fused_mlir)], check=True)
        for schedule in sorted((REPO / "examples" / model / "schedules").glob("*.toml")):
            figures = {}
            for what, program in (("unfused", mlir), ("fused", fused_mlir)):
                out = work / f"{model}-{schedule.stem}-{what}.mlir"
                result = tools.opt(pipeline(schedule, None, None), program, out)
                if result.returncode != 0:
                    figures[what] = (None, first_error(result.stderr))
                    continue
                conflicts = result.stderr.count("partir-propagate: stopped at")
                figures[what] = ((*summary(out.read_text()), conflicts), None)
            (base, base_error), (now, error) = figures["unfused"], figures["fused"]
            if error or base_error:
                verdict = f"FAIL: {error or base_error}"
            elif now[2] > base[2] or now[0] > base[0] or now[1] > base[1]:
                verdict = "FAIL: more than unfused"
            else:
                verdict = "ok"
            failures += verdict.startswith("FAIL")
            show = lambda f: f"{f[0]} / {f[1]:,} B, {f[2]} conflicts" if f else "-"
            rows.append((model, schedule.stem, show(base), show(now), verdict))
    print_table(["model", "schedule", "unfused", "fused", "verdict"], rows, args.markdown)
    print(f"compose-matrix: {len(rows)} fused programs, {failures} failing", file=sys.stderr)
    return 1 if failures else 0


def issue_table(args, tools: Tools, work: Path) -> int:
    """The rows of issue 12's table, as they run now."""
    rows = []
    transformer = REPO / "examples" / "transformer" / "transformer.mlir"
    schedules = REPO / "examples" / "transformer" / "schedules"
    bp_mp, bp = schedules / "BP_MP.toml", schedules / "BP.toml"

    def through(pipeline_text, model=transformer, name="out"):
        out = work / f"{name}.mlir"
        result = tools.opt(pipeline_text, model, out)
        if result.returncode != 0:
            return None, first_error(result.stderr), result.stderr
        return summary(out.read_text()), None, result.stderr

    plain, _, _ = through(pipeline(bp_mp, None, None), name="plain")
    rows.append(("schedule(BP+MP), lower, cse", "works", f"{plain[0]} collectives, {plain[1]:,} B"))
    for p in ["cse", "linalg-fuse-elementwise-ops", "canonicalize", "sccp", "inline",
              "loop-invariant-code-motion", "symbol-dce", "linalg-generalize-named-ops"]:
        figures, error, _ = through(pipeline(bp_mp, "between", p), name=f"between-{p}")
        state = "works" if error is None and figures == plain else (error or f"differs: {figures}")
        rows.append((f"schedule(BP+MP), {p}, lower", state,
                     f"{figures[0]} collectives, {figures[1]:,} B" if figures else "-"))

    fused = work / "fused.mlir"
    subprocess.run([str(LLVM / "bin" / "mlir-opt"), "-p",
                    "builtin.module(func.func(linalg-generalize-named-ops,linalg-fuse-elementwise-ops,canonicalize,cse))",
                    str(transformer), "-o", str(fused)], check=True)
    unfused, _, _ = through(pipeline(bp, None, None), name="unfused-bp")
    figures, error, stderr = through(pipeline(bp, None, None), model=fused, name="fused-bp")
    conflicts = stderr.count("partir-propagate: stopped at")
    rows.append(("generalize, fuse, canonicalize, cse before BP",
                 "works" if error is None and figures is not None and figures[0] <= unfused[0] and figures[1] <= unfused[1]
                 else (error or "more communication"),
                 f"{conflicts} conflicts; {figures[0]} collectives, {figures[1]:,} B (unfused: {unfused[0]}, {unfused[1]:,} B)"))

    first_step = work / "first-step"
    subprocess.run([str(REPO / "tools" / ".venv" / "bin" / "python"), str(REPO / "tools" / "first_step_data.py"),
                    str(REPO / "examples" / "transformer" / "data"), str(first_step)], check=True)
    core = work / "bp-core.mlir"
    subprocess.run([str(tools.partir), "partition", str(transformer), "-s", str(bp), "--stage", "core",
                    "-o", str(core)], capture_output=True, check=True)
    for what, extra in [("generated inputs", []), ("first Adam step (opt state zero)", ["--data", str(first_step)])]:
        model = work / "transformer.mlir"
        model.write_text(transformer.read_text())
        result = tools.verify(model, core, ["--sequential", *extra])
        ill = [line for line in result.stdout.splitlines() if "ill-conditioned" in line and line.startswith("partir:")]
        rows.append((f"partir verify, 2-layer Transformer Adam step, BP, {what}",
                     "passes" if result.returncode == 0 else "FAIL: " + first_error(result.stderr),
                     (ill[0][len("partir: "):][:150] if ill else "no ill-conditioned outputs")))
    check = subprocess.run([str(REPO / "tools" / "regen-fixtures"), "--check"], capture_output=True, text=True)
    rows.append(("zoo fixtures regenerated on this CPU", "reproduce" if check.returncode == 0 else "FAIL",
                 check.stdout.strip().splitlines()[-1][:150] if check.stdout.strip() else check.stderr[-150:]))
    print_table(["pipeline", "now", "figures"], rows, args.markdown)
    return 0 if all(not row[1].startswith("FAIL") for row in rows) else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=lambda s: s.split(","), default=MODELS)
    ap.add_argument("--passes", type=lambda s: s.split(","), default=PASSES)
    ap.add_argument("--positions", type=lambda s: s.split(","), default=POSITIONS)
    ap.add_argument("--schedule", default=RICHEST)
    ap.add_argument("--verify", action="store_true", help="run every distinct program on 8 MPI ranks")
    ap.add_argument("--verify-models", type=lambda s: s.split(","), default=None,
                    help="with --verify, only these models' programs (the rest: lowering and communication)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--build", type=Path, default=REPO / "target" / "debug")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--issue-table", action="store_true", help="regenerate issue 12's table instead")
    ap.add_argument("--fused", action="store_true",
                    help="instead, every model x schedule fused (generalize, fuse, canonicalize, cse) vs unfused")
    args = ap.parse_args()
    tools = Tools(args.build)
    with tempfile.TemporaryDirectory(prefix="partir-compose-") as tmp:
        if args.issue_table:
            return issue_table(args, tools, Path(tmp))
        if args.fused:
            return fused(args, tools, Path(tmp))
        return run_matrix(args, tools, Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
