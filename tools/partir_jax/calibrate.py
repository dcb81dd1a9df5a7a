"""Measures the machine it runs on as partir's simulator sees a device, and writes a device TOML
(`src/sim/device.rs`'s format) that `--device` takes: `partir calibrate` runs this module.

Every figure is measured on N XLA CPU devices running at once (one replica per device, as
`partir partition --stage xla`'s programs run; `XLA_FLAGS=--xla_force_host_platform_device_count=N`),
so a rate is what one device gets while all of them compute, as in a partitioned step: on a host
whose cores are fewer than its devices, about the host's rate divided by N. Each program is a
StableHLO module compiled by XLA for N replicas and timed through `execute_sharded` (the path of
`tools/partir_jax/xla_run.py` and `tools/predict.py`), median of its steps after warm-up; the
programs a slope compares are timed interleaved, one step of each in turn:

- `launch_overhead_us`: the step time of a program doing (almost) nothing;
- `op_overhead_us`: per kernel, from chains of K dependent 16x16 and 32x32 matmuls (XLA fuses
  none of them, and their FLOPs are negligible): the slope of step time over K;
- `matrix_tflops`: chains of a training step's f32 matmuls, each of its three forms (x . w,
  dy . w^T, x^T . dy) at two shapes: their FLOPs over the slopes of time over the chain's
  length, less the kernel overhead;
- `vector_tflops`: one fused elementwise chain (x = x * a + b, many times) over a buffer that
  stays in cache;
- `memory_gbps`: one kernel over arrays of 64 KiB to 1 MiB, streaming (x * a + b: three reads
  and a write) or transposing (transpose(a) + b): the slopes of their times over the bytes
  they move, an even mix;
- per mesh axis, `[axis.NAME]` `link_latency_us` and `link_gbps`: all_reduce, all_gather,
  reduce_scatter and collective_permute over the axis at several sizes, fitted (least squares)
  to the simulator's own ring model (src/sim/cost.rs): all_gather, reduce_scatter
  (n-1) alpha + (n-1)/n S / B, all_reduce twice that, collective_permute alpha + S / B;
- `latency_per_operand`: whether an all_reduce of 4 combined operands costs more than twice
  one of a single operand (XLA's CPU runtime runs a combined collective operand by operand);
- `memory_gib`: the host's memory over N.

    python -m partir_jax.calibrate [--devices N] [--mesh a=4,b=2] [--quick] [-o device.toml]
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import socket
import statistics
import sys
import time
from pathlib import Path

import numpy as np


# ----------------------------------------------------------------------------------------------
# Fits (pure functions, tested in tools/test_calibrate.py).

def line_fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares (intercept, slope) of ys over xs."""
    n = len(xs)
    if n < 2:
        raise ValueError("a line needs two points")
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("a line needs two distinct x")
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - slope * mx, slope


def ring_terms(kind: str, group: int, buffer_bytes: float) -> tuple[float, float]:
    """(latency steps, bytes over the link) of one collective in the simulator's ring model
    (src/sim/cost.rs `collective_cost`): its time is steps * alpha + bytes / bandwidth."""
    n = float(group)
    if kind == "collective_permute":
        return 1.0, buffer_bytes
    phases = 2.0 if kind == "all_reduce" else 1.0
    return phases * (n - 1.0), phases * (n - 1.0) / n * buffer_bytes


def fit_link(samples: list[tuple[str, int, float, float]]) -> tuple[float, float]:
    """(alpha seconds, bandwidth bytes/s) fitting `seconds = steps * alpha + bytes / bandwidth`
    (ring_terms) by least squares over samples (kind, group size, buffer bytes, seconds),
    relative error weighted (each sample's equation divided by its time, so that small and
    large buffers count alike); alpha and 1/bandwidth kept non-negative."""
    rows = []
    for kind, group, size, seconds in samples:
        steps, traffic = ring_terms(kind, group, size)
        weight = 1.0 / max(seconds, 1e-12)
        rows.append((steps * weight, traffic * weight, seconds * weight))
    a = np.array([[r[0], r[1]] for r in rows])
    b = np.array([r[2] for r in rows])
    (alpha, inverse), *_ = np.linalg.lstsq(a, b, rcond=None)
    if alpha < 0 or inverse <= 0:
        # One term alone: the best non-negative fit of either.
        fits = []
        for column in (0, 1):
            x = a[:, column]
            value = float(x @ b / (x @ x)) if x @ x > 0 else 0.0
            residual = float(np.sum((b - value * x) ** 2))
            fits.append((residual, column, max(value, 0.0)))
        _, column, value = min(fits)
        alpha, inverse = (value, 0.0) if column == 0 else (0.0, value)
    if inverse > 0:
        bandwidth = 1.0 / inverse
    else:
        # The times did not resolve a per-byte term (noise on a loaded machine: a latency
        # alone fits best). The link moved each sample's bytes in its time at least, so the
        # fastest sample bounds it: finite, where 1/0 would write `link_gbps = inf`.
        bandwidth = max(ring_terms(kind, group, size)[1] / max(seconds, 1e-12)
                        for kind, group, size, seconds in samples)
    return float(alpha), float(bandwidth)


# ----------------------------------------------------------------------------------------------
# Programs: StableHLO modules of N replicas.

def module(args: list[str], body: list[str], results: list[str], replicas: int) -> str:
    params = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(args))
    return (f"module @calibrate attributes {{mhlo.num_partitions = 1 : i32, mhlo.num_replicas = {replicas} : i32}} {{\n"
            f"  func.func public @main({params}) -> ({', '.join(results)}) {{\n"
            + "\n".join("    " + line for line in body)
            + "\n  }\n}\n")


def tensor(shape: tuple[int, ...]) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def matmul_chain(n: int, count: int, replicas: int) -> str:
    """`count` dependent n x n matmuls: x = x . w."""
    t = tensor((n, n))
    body, previous = [], "%arg0"
    for i in range(count):
        body.append(f"%{i} = stablehlo.dot_general {previous}, %arg1, contracting_dims = [1] x [0] : ({t}, {t}) -> {t}")
        previous = f"%{i}"
    body.append(f"return {previous} : {t}")
    return module([t, t], body, [t], replicas)


def training_matmuls(form: str, rows: int, width: int, count: int, replicas: int) -> str:
    """`count` dependent matmuls of one of a training step's forms, on activations x (rows x
    width) and a weight w (width x width): "NN" x . w (the forward), "NT" dy . w^T (the input's
    gradient), "TN" x^T . dy (the weight's gradient, then x . that, to keep the chain's shape:
    two matmuls a step)."""
    x, w = tensor((rows, width)), tensor((width, width))
    body, previous = [], "%arg0"
    for i in range(count):
        if form == "NN":
            body.append(f"%{i} = stablehlo.dot_general {previous}, %arg1, contracting_dims = [1] x [0] : ({x}, {w}) -> {x}")
        elif form == "NT":
            body.append(f"%{i} = stablehlo.dot_general {previous}, %arg1, contracting_dims = [1] x [1] : ({x}, {w}) -> {x}")
        else:
            body.append(f"%g{i} = stablehlo.dot_general %arg0, {previous}, contracting_dims = [0] x [0] : ({x}, {x}) -> {w}")
            body.append(f"%{i} = stablehlo.dot_general %arg0, %g{i}, contracting_dims = [1] x [0] : ({x}, {w}) -> {x}")
        previous = f"%{i}"
    body.append(f"return {previous} : {x}")
    return module([x, w], body, [x], replicas)


def fused_chain(elements: int, count: int, replicas: int) -> str:
    """One loop fusion: x = x * a + b, `count` times (2 FLOPs per element each)."""
    t = tensor((elements,))
    body, previous = [], "%arg0"
    for i in range(count):
        body.append(f"%m{i} = stablehlo.multiply {previous}, %arg1 : {t}")
        body.append(f"%a{i} = stablehlo.add %m{i}, %arg2 : {t}")
        previous = f"%a{i}"
    body.append(f"return {previous} : {t}")
    return module([t, t, t], body, [t], replicas)


def combined_all_reduce(operands: int, elements: int, count: int, mesh: list[tuple[str, int]], axis: str,
                        replicas: int) -> str:
    """`count` dependent all_reduces over `axis`, each of `operands` buffers of `elements` f32
    combined into one collective (as partir and XLA combine a step's gradients)."""
    attr = _groups_attr(groups(mesh, axis))
    t = tensor((elements,))
    types = ", ".join([t] * operands)
    body, previous = [], [f"%arg{i}" for i in range(operands)]
    for c in range(count):
        result = f"%c{c}:{operands}" if operands > 1 else f"%c{c}"
        body += [f'{result} = "stablehlo.all_reduce"({", ".join(previous)}) ({{'] + ["  " + line for line in _ADD_REGION] \
            + [f"}}) {{replica_groups = {attr}}} : ({types}) -> ({types})"]
        previous = [f"%c{c}#{i}" for i in range(operands)] if operands > 1 else [f"%c{c}"]
    body.append(f"return {', '.join(previous)} : {types}")
    return module([t] * operands, body, [t] * operands, replicas)


def transposing_add(side: int, replicas: int) -> str:
    """One kernel: transpose(a) + b on side x side f32 (12 B moved per element, read across
    rows: the layout changes a training step's gradients go through)."""
    t = tensor((side, side))
    body = [f"%t = stablehlo.transpose %arg0, dims = [1, 0] : ({t}) -> {t}",
            f"%s = stablehlo.add %t, %arg1 : {t}", f"return %s : {t}"]
    return module([t, t], body, [t], replicas)


def groups(mesh: list[tuple[str, int]], axis: str) -> list[list[int]]:
    """The replica groups of a collective over `axis` (devices row-major, first axis major; in
    a group, the order of the axis's coordinate): partir-export-stablehlo's."""
    sizes = [size for _, size in mesh]
    names = [name for name, _ in mesh]
    index = names.index(axis)
    strides = [int(np.prod(sizes[i + 1:])) for i in range(len(sizes))]
    devices = int(np.prod(sizes))
    out = []
    for first in range(devices):
        if (first // strides[index]) % sizes[index] == 0:
            out.append([first + k * strides[index] for k in range(sizes[index])])
    return out


def _groups_attr(groups_: list[list[int]]) -> str:
    rows = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups_)
    return f"dense<[{rows}]> : tensor<{len(groups_)}x{len(groups_[0])}xi64>"


_ADD_REGION = ["^bb0(%x: tensor<f32>, %y: tensor<f32>):",
               "  %s = stablehlo.add %x, %y : tensor<f32>",
               "  stablehlo.return %s : tensor<f32>"]


def collective_chain(kind: str, elements: int, count: int, mesh: list[tuple[str, int]], axis: str,
                     replicas: int) -> str:
    """`count` dependent collectives of `kind` over `axis` on a buffer of `elements` f32 (the
    simulator's buffer: the gathered result of an all_gather, the operand otherwise); a
    slice or a pad between them keeps each one's operand its size."""
    grouped = groups(mesh, axis)
    n = len(grouped[0])
    attr = _groups_attr(grouped)
    full, part = tensor((elements,)), tensor((elements // n,))
    body = []
    argument = part if kind == "all_gather" else full
    previous = "%arg0"
    for i in range(count):
        if kind == "all_reduce":
            body += [f'%c{i} = "stablehlo.all_reduce"({previous}) ({{'] + ["  " + line for line in _ADD_REGION] \
                + [f"}}) {{replica_groups = {attr}}} : ({full}) -> {full}"]
            previous = f"%c{i}"
        elif kind == "all_gather":
            body.append(f'%c{i} = "stablehlo.all_gather"({previous}) {{all_gather_dim = 0 : i64, replica_groups = {attr}}} : ({part}) -> {full}')
            body.append(f"%s{i} = stablehlo.slice %c{i} [0:{elements // n}] : ({full}) -> {part}")
            previous = f"%s{i}"
        elif kind == "reduce_scatter":
            body += [f'%c{i} = "stablehlo.reduce_scatter"({previous}) ({{'] + ["  " + line for line in _ADD_REGION] \
                + [f"}}) {{scatter_dimension = 0 : i64, replica_groups = {attr}}} : ({full}) -> {part}"]
            body.append(f"%z{i} = stablehlo.constant dense<0.0> : tensor<f32>")
            body.append(f"%s{i} = stablehlo.pad %c{i}, %z{i}, low = [0], high = [{elements - elements // n}], interior = [0] : ({part}, tensor<f32>) -> {full}")
            previous = f"%s{i}"
        elif kind == "collective_permute":
            pairs = [(g[k], g[(k + 1) % n]) for g in grouped for k in range(n)]
            table = ", ".join(f"[{a}, {b}]" for a, b in pairs)
            body.append(f'%c{i} = "stablehlo.collective_permute"({previous}) {{source_target_pairs = dense<[{table}]> : tensor<{len(pairs)}x2xi64>}} : ({full}) -> {full}')
            previous = f"%c{i}"
        else:
            raise ValueError(kind)
    body.append(f"return {previous} : {argument}")
    return module([argument], body, [argument], replicas)


# ----------------------------------------------------------------------------------------------
# Running.

def first_results(executable, placed):
    """Runs one step of `executable` on every device and returns each device's first result:
    the step is over when they are ready (an execution's results are ready together), without
    making one array per result and device, which costs the Python harness about 25 us each
    (tools/predict.py times steps the same way)."""
    return executable.execute_sharded(placed).disassemble_prefix_into_single_device_arrays(1)


class Timer:
    """Compiles and times programs on the local XLA CPU devices (all of them at once)."""

    def __init__(self, replicas: int, steps: int):
        self.replicas, self.steps = replicas, steps

    def _step(self, text: str):
        import jax

        from . import xla_run

        executable, devices = xla_run.compile_replicas(text, self.replicas)
        everywhere = jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(devices), ("replica",)),
                                                jax.sharding.PartitionSpec())
        rng = np.random.default_rng(0)
        placed = []
        for shape in _argument_shapes(text):
            value = (1.0 + 0.001 * rng.standard_normal(shape)).astype(np.float32)
            pieces = [jax.device_put(value, device) for device in devices]
            placed.append(jax.make_array_from_single_device_arrays(shape, everywhere, pieces))
        return lambda: first_results(executable, placed)

    def times(self, texts: list[str]) -> list[float]:
        """The median step time of each program (every device running it), measured
        interleaved, one step of each in turn, so that the load of a shared machine falls alike
        on the programs a slope compares."""
        import jax

        steps = [self._step(text) for text in texts]
        for step in steps:
            for _ in range(2):
                jax.block_until_ready(step())
        spent: list[list[float]] = [[] for _ in steps]
        deadline = time.perf_counter() + 30.0
        for _ in range(self.steps):
            for step, times in zip(steps, spent):
                started = time.perf_counter()
                jax.block_until_ready(step())
                times.append(time.perf_counter() - started)
            if time.perf_counter() > deadline and len(spent[0]) >= 3:
                break
        return [statistics.median(times) for times in spent]

    def seconds(self, text: str) -> float:
        return self.times([text])[0]


def _argument_shapes(text: str) -> list[tuple[int, ...]]:
    import re

    signature = text[text.index("@main("):text.index(") -> (")]
    return [tuple(int(d) for d in dims.split("x") if d)
            for dims in re.findall(r"%arg\d+: tensor<((?:\d+x)*)f32>", signature)]


def slope(timer: Timer, make, counts: list[int]) -> tuple[float, list[float]]:
    """Seconds per unit of `make(count)` (the least-squares slope of step time over count,
    the programs timed interleaved), and the times."""
    times = timer.times([make(count) for count in counts])
    return line_fit([float(c) for c in counts], times)[1], times


def calibrate(replicas: int, mesh: list[tuple[str, int]], quick: bool, log=print) -> dict:
    """Every figure of the device, with how it was measured (`sources`)."""
    timer = Timer(replicas, steps=7 if quick else 25)
    sources: list[str] = []
    out: dict = {}

    empty = timer.seconds(module([tensor((8,))], ["%0 = stablehlo.add %arg0, %arg0 : tensor<8xf32>",
                                                   "return %0 : tensor<8xf32>"], [tensor((8,))], replicas))
    out["launch_overhead_us"] = empty * 1e6
    sources.append(f"launch_overhead_us: step time of one 8-element add on every device: {empty * 1e6:.1f} us")
    log(f"calibrate: launch {empty * 1e6:.1f} us")

    counts = [1, 9, 17] if quick else [1, 9, 17, 33]
    slopes, shown = [], []
    for n in (16, 32):
        per, times = slope(timer, lambda k: matmul_chain(n, k, replicas), counts)
        slopes.append(per)
        shown.append(f"{n}x{n}: {', '.join(f'{t * 1e6:.0f}' for t in times)} us, {per * 1e6:.2f} us per matmul")
    per_op = max(statistics.fmean(slopes), 0.0)
    out["op_overhead_us"] = per_op * 1e6
    sources.append(f"op_overhead_us: chains of K dependent tiny f32 matmuls (a kernel each, their FLOPs "
                   f"negligible), K = {counts}: {'; '.join(shown)}; the mean slope")
    log(f"calibrate: op overhead {per_op * 1e6:.2f} us")

    # A training step's matmuls: the forward's, the input gradient's and the weight gradient's
    # forms, at two shapes; the rate is their FLOPs over their time, less the kernel overhead.
    shapes = [(128, 128)] if quick else [(128, 128), (512, 128)]
    counts = [1, 3] if quick else [1, 4, 7]
    flops = seconds = 0.0
    shown = []
    for rows, width in shapes:
        for form in ("NN", "NT", "TN"):
            per, _ = slope(timer, lambda k: training_matmuls(form, rows, width, k, replicas), counts)
            matmuls = 2 if form == "TN" else 1
            flops += matmuls * 2.0 * rows * width * width
            seconds += max(per - matmuls * per_op, 1e-9)
            shown.append(f"{rows}x{width} {form} {per * 1e6:.0f} us")
    out["matrix_tflops"] = flops / seconds / 1e12
    sources.append(f"matrix_tflops: chains of a training step's f32 matmuls (x.w, dy.w^T, x^T.dy on x of rows x "
                   f"width, w of width x width), per step of a chain (R = {counts}): {'; '.join(shown)}; "
                   f"{flops / 1e6:.1f} MFLOP in {seconds * 1e6:.0f} us less the kernel overheads")
    log(f"calibrate: matrix {out['matrix_tflops'] * 1e3:.2f} GFLOP/s per device")

    elements = 1 << 14
    counts = [8, 40] if quick else [8, 40, 72]
    per_link, times = slope(timer, lambda k: fused_chain(elements, k, replicas), counts)
    out["vector_tflops"] = 2.0 * elements / max(per_link, 1e-12) / 1e12
    sources.append(f"vector_tflops: one fused chain x = x * a + b, C times, on {elements} f32 (64 KiB), C = {counts}: "
                   f"{', '.join(f'{t * 1e6:.0f}' for t in times)} us; {per_link * 1e9:.0f} ns per {2 * elements} FLOP")
    log(f"calibrate: vector {out['vector_tflops'] * 1e3:.2f} GFLOP/s per device")

    # One kernel at sizes the programs' tensors have, of each kind a step moves data with: a
    # streaming x * a + b (three reads, one write) and a transposing add (two reads across
    # layouts, one write); the bandwidth of an even mix of their bytes.
    sides = [256, 512] if quick else [128, 256, 512]
    per_stream, stream = slope(timer, lambda b: fused_chain(b // 16, 1, replicas), [16 * side * side for side in sides])
    per_transpose, transposed = slope(timer, lambda b: transposing_add(int(round((b // 12) ** 0.5)), replicas),
                                      [12 * side * side for side in sides])
    per_byte = (max(per_stream, 1e-15) + max(per_transpose, 1e-15)) / 2.0
    out["memory_gbps"] = 1.0 / per_byte / 1e9
    sources.append(f"memory_gbps: one kernel on {', '.join(f'{side}x{side}' for side in sides)} f32: x * a + b "
                   f"{', '.join(f'{t * 1e3:.3f}' for t in stream)} ms ({1 / max(per_stream, 1e-15) / 1e9:.2f} GB/s, "
                   f"the slope over bytes), transpose(a) + b {', '.join(f'{t * 1e3:.3f}' for t in transposed)} ms "
                   f"({1 / max(per_transpose, 1e-15) / 1e9:.2f} GB/s); an even mix of their bytes")
    log(f"calibrate: memory {out['memory_gbps']:.2f} GB/s per device")

    kinds = ["all_reduce", "all_gather", "reduce_scatter", "collective_permute"]
    sizes = [1 << 8, 1 << 14, 1 << 17] if quick else [1 << 8, 1 << 12, 1 << 15, 1 << 18, 1 << 20]
    counts = [1, 3] if quick else [1, 3, 5]
    links = {}
    for axis, size in mesh:
        if size <= 1:
            continue
        samples, shown = [], []
        for kind in kinds:
            for elements in sizes:
                if elements % size:
                    continue
                per, _ = slope(timer, lambda k: collective_chain(kind, elements, k, mesh, axis, replicas), counts)
                per = max(per, 1e-9)
                samples.append((kind, size, 4.0 * elements, per))
                shown.append(f"{kind} {4 * elements} B {per * 1e6:.0f} us")
        alpha, bandwidth = fit_link(samples)
        links[axis] = (alpha, bandwidth)
        sources.append(f"[axis.{axis}] ({size} devices): chains of R = {counts} dependent collectives (slope per "
                       f"collective): {'; '.join(shown)}; fitted to the ring model: alpha {alpha * 1e6:.2f} us, "
                       f"{bandwidth / 1e9:.3f} GB/s")
        log(f"calibrate: axis {axis}: alpha {alpha * 1e6:.1f} us, {bandwidth / 1e9:.3f} GB/s")
    out["links"] = links
    # A combined collective: one latency (NCCL, the TPU) or one per operand (XLA's CPU runtime)?
    out["latency_per_operand"] = False
    axis = next((name for name, size in mesh if size > 1), None)
    if axis is not None:
        per = {}
        for operands in (1, 4):
            per[operands], _ = slope(timer, lambda k: combined_all_reduce(operands, 1024, k, mesh, axis, replicas),
                                     counts)
        out["latency_per_operand"] = per[4] > 2.0 * max(per[1], 1e-9)
        sources.append(f"latency_per_operand: an all_reduce over {axis} of 4 operands of 4 KiB combined "
                       f"{per[4] * 1e6:.0f} us, of one {per[1] * 1e6:.0f} us (chains, slope per collective): "
                       f"{'each operand pays the latency' if out['latency_per_operand'] else 'one latency'}")
        log(f"calibrate: combined all_reduce of 4 operands {per[4] * 1e6:.0f} us, of 1 {per[1] * 1e6:.0f} us")
    try:
        host_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        host_bytes = 16 << 30
    out["memory_gib"] = host_bytes / replicas / 2 ** 30
    sources.append(f"memory_gib: host memory {host_bytes / 2 ** 30:.1f} GiB over {replicas} devices")
    out["sources"] = sources
    return out


def toml(figures: dict, host: str, replicas: int, mesh: list[tuple[str, int]], note: str) -> str:
    """The device TOML of the figures, each source also a comment."""
    links = figures["links"]
    slowest = max(links.values(), key=lambda link: link[0]) if links else (5e-6, 1e9)
    lines = [f"# partir calibrate: {host}, {replicas} XLA CPU devices at once, mesh "
             f"{','.join(f'{a}={s}' for a, s in mesh)}; {note}"]
    lines += [f"# {source}" for source in figures["sources"]]
    lines += [
        f'name = "calibrated-{host}"',
        f"matrix_tflops = {_float(figures['matrix_tflops'], 6)}",
        f"vector_tflops = {_float(figures['vector_tflops'], 6)}",
        f"memory_gib = {_float(figures['memory_gib'], 4)}",
        f"memory_gbps = {_float(figures['memory_gbps'], 6)}",
        f"op_overhead_us = {_float(figures['op_overhead_us'], 4)}",
        f"launch_overhead_us = {_float(figures['launch_overhead_us'], 4)}",
        f"latency_per_operand = {'true' if figures.get('latency_per_operand') else 'false'}",
        "# the link of any axis not listed below: the slowest measured",
        f"link_gbps = {_float(slowest[1] / 1e9, 6)}",
        f"link_latency_us = {_float(slowest[0] * 1e6, 4)}",
        "sources = [",
    ]
    lines += [f"  {_string(source)}," for source in [lines[0][2:]] + figures["sources"]]
    lines.append("]")
    for axis, (alpha, bandwidth) in links.items():
        lines += ["", f"[axis.{axis}]", f"link_gbps = {_float(bandwidth / 1e9, 6)}", f"link_latency_us = {_float(alpha * 1e6, 4)}"]
    return "\n".join(lines) + "\n"


def _float(value: float, digits: int) -> str:
    """`value` to `digits` significant digits as a TOML float: `158.0`, not the integer `158`
    that `:.4g` writes and a float field rejects."""
    text = f"{value:.{digits}g}"
    return text if any(mark in text for mark in ".eninf") else text + ".0"


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_mesh(text: str) -> list[tuple[str, int]]:
    out = []
    for part in text.split(","):
        name, _, size = part.partition("=")
        if not name.strip() or not size.strip().isdigit() or int(size) < 1:
            raise SystemExit(f"calibrate: bad mesh axis '{part}' (expected NAME=SIZE)")
        out.append((name.strip(), int(size)))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--mesh", help="axes major to minor, NAME=SIZE,... (default batch=N/2,model=2; batch=N if N is odd)")
    parser.add_argument("--quick", action="store_true", help="fewer sizes and steps (seconds, not minutes)")
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args(argv)
    replicas = args.devices
    mesh = parse_mesh(args.mesh) if args.mesh else (
        [("batch", replicas // 2), ("model", 2)] if replicas % 2 == 0 and replicas > 2 else [("batch", replicas)])
    if int(np.prod([size for _, size in mesh])) != replicas:
        raise SystemExit(f"calibrate: the mesh has {int(np.prod([s for _, s in mesh]))} devices, not --devices {replicas}")
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:  # before JAX starts
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={replicas}".strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    if len(jax.devices("cpu")) < replicas:
        raise SystemExit(f"calibrate: XLA has {len(jax.devices('cpu'))} CPU devices, not {replicas} "
                         "(XLA_FLAGS=--xla_force_host_platform_device_count=N)")
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    load = os.getloadavg()
    started = time.perf_counter()
    figures = calibrate(replicas, mesh, args.quick, log)
    host = socket.gethostname().split(".")[0] or "host"
    note = (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load average {load[0]:.2f}, "
            f"{'quick, ' if args.quick else ''}{datetime.date.today().isoformat()}, "
            f"{time.perf_counter() - started:.0f} s")
    text = toml(figures, host, replicas, mesh, note)
    if args.output:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
