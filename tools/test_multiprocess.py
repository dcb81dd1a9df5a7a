#!/usr/bin/env python3
"""partir from JAX in more than one process: `partir_jax.partition` and `partir_jax.shardings`
under `jax.distributed`, 2 processes x 4 CPU devices (CPU collectives: gloo, JAX's default),
give what 1 process x 8 devices gives.

The zoo Transformer training step (1 layer, Adam; arguments drawn at its shapes) with
BP_MP_Z3 (batch parallelism, Megatron, ZeRO-3) on {batch=4, model=2}: the mesh is
jax.devices() row-major, so process 0 holds batch rows 0-1 and process 1 rows 2-3; the
gradients' all-reduces and ZeRO's gathers cross processes, and each process holds shards of
the parameters the other must get back. This script starts three processes (the pair, and the
1 x 8 reference beside them) and checks:

  - every process has the same inputs and partir's same program;
  - both processes of the pair return the same global outputs, bit for bit;
  - every output of 2 x 4 is within rounding noise of 1 x 8's, for `partition` and for a
    `jax.jit` given `shardings`' plan: the normalised difference max|a-b|/max|b| at most
    max(10 x the f32 step's own error against its f64 twin, 1e-5), the rule `partir verify
    --xla` judges partitioning by (not bit for bit: gloo's all-reduce sums in another order
    than XLA's in-process one);
  - both are within that limit of the f64 twin, and 1 x 8 within 1e-4 of `jax.jit(step)`
    (as tools/test_partir_jax.py);
  - a planted bug fails the same comparison: process 1 passes its copy of one weight with one
    element of its shard changed by 1e-3 (processes given different data);
  - `partir_jax.auto`: process 0 searches a plan for the zoo MLP step (fitted to 100 KiB per
    device), every process runs it, and the outputs match `jax.jit(step)`;
  - processes making different calls get an error, not a hang, as do global jax.Arrays and a
    search that finds no plan.

    tools/.venv/bin/python tools/test_multiprocess.py

A worker: test_multiprocess.py --worker ID --processes N --port P --out DIR.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TOOLS = Path(__file__).resolve().parent
SCHEDULE = TOOLS.parent / "examples" / "transformer" / "schedules" / "BP_MP_Z3.toml"
MESH = {"batch": 4, "model": 2}
DEVICES = 8
# A hang (a process waiting in a collective for a peer that died) fails after this long; the
# whole check takes about 35 CPU seconds (20 s on 2 idle cores, 55 s on 2 cores loaded 7x).
TIMEOUT = 150
NOISE_FACTOR, TOLERANCE = 10.0, 1e-5
JIT_TOLERANCE = 1e-4
PLANTED = 1e-3


def zoo_step(name: str, preset: str):
    """A zoo model's step, and arguments drawn at its shapes (the zoo's own init runs op by op,
    an XLA compile each: seconds of this test's budget in every process). Integers (tokens,
    labels, Adam's count) below 10; Adam's moments at the zoo's scales, the second positive."""
    import jax
    from partir_jax import models

    made = []
    shapes = jax.eval_shape(lambda: made.append(models.spec(name, preset)[0]) or made[0].args)
    rng = np.random.default_rng(0)

    def draw(path, leaf):
        if np.issubdtype(leaf.dtype, np.integer):
            return rng.integers(0, 10, leaf.shape).astype(leaf.dtype)
        value = rng.standard_normal(leaf.shape)
        moment = next((key.key for key in path if getattr(key, "key", None) in ("m", "v")), None)
        value = {"m": 1e-3 * value, "v": 1e-6 * np.abs(value)}.get(moment, 0.1 * value)
        return value.astype(leaf.dtype)

    return made[0], jax.tree_util.tree_map_with_path(draw, shapes)


def worker(ident: int, processes: int, port: int, out: Path) -> None:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={DEVICES // processes}"
    sys.path.insert(0, str(TOOLS))
    import jax

    if processes > 1:
        jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=processes, process_id=ident,
                                   initialization_timeout=TIMEOUT, shutdown_timeout_seconds=30)
    import partir_jax
    from jax.experimental import multihost_utils
    from partir_jax import xla_run

    started = time.perf_counter()
    # The contract: every process passes the same global values (host arrays).
    spec, args = zoo_step("transformer", "1layer")
    leaves = lambda tree: [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(tree)]  # noqa: E731
    step = partir_jax.partition(spec.fn, args, MESH, SCHEDULE, arg_names=spec.arg_names,
                                result_names=spec.result_names)
    ran = time.perf_counter()
    outputs = step(*args)
    step_seconds = time.perf_counter() - ran
    results = {f"partition/{i}": value for i, value in enumerate(leaves(outputs))}

    # A user's own jax.jit with partir's plan: global jax.Arrays in (device_put of the same
    # host values on every process), global arrays out, gathered to every process.
    plan = partir_jax.shardings(spec.fn, args, SCHEDULE, MESH, arg_names=spec.arg_names,
                                result_names=spec.result_names)
    jitted = jax.jit(spec.fn, in_shardings=plan.in_shardings, out_shardings=plan.out_shardings)
    placed = jax.device_put(args, plan.in_shardings)
    outs = jitted(*placed)
    results |= {f"shardings/{i}": value for i, value in
                enumerate(leaves(multihost_utils.process_allgather(outs, tiled=True) if processes > 1 else outs))}

    # partir auto's plan for the zoo MLP step, fitted to 100 KiB per device (the search splits
    # b1 on batch): process 0 searches, every process compiles its plan.
    mlp, mlp_args = zoo_step("mlp", "small")
    searched = lambda memory: partir_jax.auto(mlp.fn, mlp_args, MESH, arg_names=mlp.arg_names,  # noqa: E731
                                              result_names=mlp.result_names, memory=memory, evaluations=30)
    jitted, in_shardings, _, report = searched("100KiB")
    outs = jitted(*jax.device_put(mlp_args, in_shardings))
    results |= {f"auto/{i}": value for i, value in
                enumerate(leaves(multihost_utils.process_allgather(outs, tiled=True) if processes > 1 else outs))}

    errors = {}
    if processes > 1:
        # The planted bug: the last process's copy of one weight differs in one element, of
        # its own shard (ZeRO splits wq's rows over batch: the last rows are process 1's).
        planted = jax.tree_util.tree_map(np.copy, args)
        if ident == processes - 1:
            planted[0]["layers"][0]["wq"][-1, -1] += PLANTED
        results |= {f"planted/{i}": value for i, value in enumerate(leaves(step(*planted)))}
        # Misuse: the last process's schedule adds Megatron's MLP split (a different
        # program), and global jax.Arrays passed to a partitioned function.
        tactics = [{"name": "BP", "axis": "batch", "tile": {"tokens": 0}}]
        if ident == processes - 1:
            tactics.append({"name": "MP", "axis": "model", "tile": {"params/layers/*/w1": 1}})
        for case, call in [("different calls", lambda: partir_jax.partition(
                                spec.fn, args, MESH, tactics, arg_names=spec.arg_names,
                                result_names=spec.result_names)),
                           ("global jax.Arrays", lambda: step(*placed)),
                           ("no plan fits", lambda: searched("16KiB"))]:
            try:
                call()
                errors[case] = None
            except (RuntimeError, TypeError) as error:
                errors[case] = str(error)
    else:
        results |= {f"jit/{i}": value for i, value in enumerate(leaves(jax.jit(spec.fn)(*args)))}
        results |= {f"auto-jit/{i}": value for i, value in enumerate(leaves(jax.jit(mlp.fn)(*mlp_args)))}
        # The f64 twin of the unpartitioned step: the rounding-noise reference.
        wide = xla_run.widen(partir_jax.stablehlo_text(jax.jit(spec.fn).lower(*args)))
        jax.config.update("jax_enable_x64", True)
        inputs = [leaf.astype(np.float64) if leaf.dtype == np.float32 else leaf
                  for leaf in jax.tree_util.tree_leaves(args)]
        results |= {f"f64/{i}": np.asarray(value) for i, value in enumerate(xla_run.run(wide, inputs))}

    tag = f"{processes}x{DEVICES // processes}-{ident}"
    np.savez(out / f"{tag}.npz", **results)
    digest = hashlib.sha256()
    for leaf in jax.tree_util.tree_leaves(args):
        digest.update(np.ascontiguousarray(leaf).tobytes())
    (out / f"{tag}.json").write_text(json.dumps({
        "names": partir_jax.importer.named_flat(outputs, spec.result_names),
        "inputs": digest.hexdigest(),
        "program": hashlib.sha256(step.program.encode()).hexdigest(),
        "devices": [device.id for device in step._compiled.devices],
        "mine": [device.id for device in jax.local_devices()],
        "errors": errors,
        "auto": report["schedule"],
        "seconds": {"total": time.perf_counter() - started, "step": step_seconds,
                    "compile": step.compile_seconds},
    }))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_all(out: Path) -> float:
    """Runs the 2 x 4 pair and the 1 x 8 reference side by side: the wall time. As soon as one
    fails the others are stopped (a peer would wait for it in a collective)."""
    port = free_port()
    runs = {f"2x4-{i}": ["--worker", str(i), "--processes", "2"] for i in range(2)}
    runs["1x8-0"] = ["--worker", "0", "--processes", "1"]
    started = time.perf_counter()
    # Each process writes to a file (a pipe nobody reads while waiting could fill and block it).
    procs = {tag: subprocess.Popen([sys.executable, __file__, *flags, "--port", str(port), "--out", str(out)],
                                   stdout=(out / f"{tag}.log").open("w"), stderr=subprocess.STDOUT)
             for tag, flags in runs.items()}
    try:
        while any(proc.poll() is None for proc in procs.values()):
            for tag, proc in procs.items():
                if proc.poll() not in (None, 0):
                    said = "\n".join(line for line in (out / f"{tag}.log").read_text().splitlines()
                                     if not line.startswith("[Gloo]"))
                    raise SystemExit(f"FAIL process {tag} exited with {proc.returncode}:\n{said}")
            if time.perf_counter() - started > TIMEOUT:
                running = [tag for tag, proc in procs.items() if proc.poll() is None]
                raise SystemExit(f"FAIL still running after {TIMEOUT} s: {running}")
            time.sleep(0.1)
        failed = [tag for tag, proc in procs.items() if proc.returncode != 0]
        if failed:
            raise SystemExit(f"FAIL processes {failed} failed:\n" + (out / f"{failed[0]}.log").read_text())
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return time.perf_counter() - started


def normalised(a: np.ndarray, b: np.ndarray) -> float:
    """max|a-b| / max|b| (b the reference), in f64."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.abs(a - b).max(initial=0) / max(np.abs(b).max(initial=0), 1e-30))


def beyond_noise(got: dict, kind: str, want: dict, against: str, names: list[str], noise: list[float]) -> list[str]:
    """The outputs `kind` in `got` further from `against` in `want` than rounding noise allows:
    per output, max(NOISE_FACTOR x the f32 step's own error, TOLERANCE)."""
    bad = []
    for i, name in enumerate(names):
        error, limit = normalised(got[f"{kind}/{i}"], want[f"{against}/{i}"]), max(NOISE_FACTOR * noise[i], TOLERANCE)
        if not error <= limit:
            bad.append(f"{name}: {error:.2e} > {limit:.2e}")
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", type=int)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--out", type=Path)
    options = parser.parse_args()
    if options.worker is not None:
        worker(options.worker, options.processes, options.port, options.out)
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        wall = start_all(Path(tmp))
        tags = ("2x4-0", "2x4-1", "1x8-0")
        data = {tag: dict(np.load(Path(tmp) / f"{tag}.npz")) for tag in tags}
        info = {tag: json.loads((Path(tmp) / f"{tag}.json").read_text()) for tag in tags}
    one, two, other = data["1x8-0"], data["2x4-0"], data["2x4-1"]
    names = info["1x8-0"]["names"]
    noise = [normalised(one[f"jit/{i}"], one[f"f64/{i}"]) for i in range(len(names))]
    failed = []

    def check(ok: bool, label: str, problems=()) -> None:
        print(f"{'ok  ' if ok else 'FAIL'} {label}", flush=True)
        for problem in list(problems)[:5]:
            print(f"       {problem}")
        failed.extend([] if ok else [label])

    for key in ("inputs", "program"):
        seen = {tag: info[tag][key][:12] for tag in tags}
        check(len(set(seen.values())) == 1, f"every process has the same {key}: {seen}")
    check(info["2x4-0"]["devices"] == info["2x4-0"]["mine"] + info["2x4-1"]["mine"],
          f"the mesh's devices are jax.devices(), process 0's then process 1's: {info['2x4-0']['devices']}")
    differ = [key for key in two if not np.array_equal(two[key], other[key])]
    check(not differ, "both processes get the same global outputs, bit for bit", differ)
    for kind in ("partition", "shardings"):
        same = sum(np.array_equal(two[f"{kind}/{i}"], one[f"{kind}/{i}"]) for i in range(len(names)))
        worst, i, name = max((normalised(two[f"{kind}/{i}"], one[f"{kind}/{i}"]), i, name)
                             for i, name in enumerate(names))
        problems = beyond_noise(two, kind, one, kind, names, noise)
        check(not problems, f"{kind}: 2x4 matches 1x8 within rounding noise ({same}/{len(names)} outputs bit for bit; "
              f"worst {worst:.1e} at {name}, whose f32 error is {noise[i]:.1e})", problems)
        problems = beyond_noise(two, kind, one, "f64", names, noise) + beyond_noise(one, kind, one, "f64", names, noise)
        check(not problems, f"{kind}: 2x4 and 1x8 are within rounding noise of the f64 twin", problems)
    worst_jit = max(normalised(one[f"partition/{i}"], one[f"jit/{i}"]) for i in range(len(names)))
    check(worst_jit <= JIT_TOLERANCE, f"1x8 partition matches jax.jit (worst {worst_jit:.1e} <= {JIT_TOLERANCE:.0e})")
    # The plan without its comments (which name the search's scratch files).
    plans = {tag: "\n".join(line for line in info[tag]["auto"].splitlines() if not line.startswith("#"))
             for tag in tags}
    tiles = [line for line in plans["2x4-0"].splitlines() if line.startswith("tile")]
    check(len(set(plans.values())) == 1 and bool(tiles), f"auto: every process has process 0's plan ({tiles}), "
          "and 1x8 searches the same")
    count = sum(key.startswith("auto/") for key in one)
    worst_auto = max(normalised(got[f"auto/{i}"], one[f"auto-jit/{i}"]) for i in range(count) for got in (one, two))
    check(worst_auto <= JIT_TOLERANCE,
          f"auto: 2x4 and 1x8 match jax.jit (worst {worst_auto:.1e} <= {JIT_TOLERANCE:.0e})")
    planted = beyond_noise(two, "planted", one, "partition", names, noise)
    check(bool(planted), f"a planted bug (process 1's copy of wq[-1, -1] + {PLANTED:g}) fails the comparison: "
          f"{len(planted)} outputs differ, e.g. {planted[:1]}")
    for case, expected in [("different calls", "partitioned"), ("global jax.Arrays", "each process passes"),
                           ("no plan fits", "in process 0: partir auto found no plan")]:
        said = [info[tag]["errors"].get(case) for tag in ("2x4-0", "2x4-1")]
        check(all(message and expected in message for message in said),
              f"{case}: every process raises ({(said[0] or 'nothing').splitlines()[0][:90]}...)")
    seconds = {tag: info[tag]["seconds"] for tag in tags}
    timings = "; ".join(f"{tag} {took['total']:.1f} s (XLA compile {took['compile']:.1f} s, step {took['step']:.2f} s)"
                        for tag, took in seconds.items())
    print(f"     wall {wall:.1f} s: {timings}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
