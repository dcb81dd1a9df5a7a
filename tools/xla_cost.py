#!/usr/bin/env python3
"""XLA's own cost analysis of the zoo's training steps, unsharded and sharded per expert schedule.

For each zoo model (the `small` preset, i.e. the committed fixture examples/<model>/<model>.mlir) this
compiles the very function the importer imports (tools/partir_jax/models/<model>.py,
`jax.jit(fn, keep_unused=True)` on the same example arguments) with XLA's CPU backend:

  - `unsharded`: on one device;
  - one run per expert schedule examples/<model>/schedules/<S>.toml: on 8 fake CPU devices
    (XLA_FLAGS=--xla_force_host_platform_device_count=8), a `Mesh` with the schedule's axes in the
    schedule's order (e.g. batch=4, model=2), and `in_shardings` translated from the schedule's `tile`
    entries (below); out_shardings are left to the partitioner, as partir's propagation decides the
    results' shardings too.

and writes `compiled.cost_analysis()` (per device: XLA's SPMD-partitioned module is the program of one
device) to examples/<model>/xla_cost.json, which tools/flop_check.py compares with `partir simulate`.
Each run records: flops, transcendentals, bytes_accessed (XLA's "bytes accessed"), all_reduce_elements
(XLA counts 1 flop per all-reduce output element; included in flops) and the collectives of the
compiled module; and under "unoptimized" the same HloCostAnalysis of the program BEFORE XLA's
optimization pipeline: for the unsharded run `Lowered.cost_analysis()`, for a sharded run the module
right after the SPMD partitioner (dumped with --xla_dump_hlo_pass_re=spmd-partitioning as an HloProto
and costed with jaxlib's hlo_module_cost_analysis), i.e. partitioned but not yet simplified, CSE'd or
fused: XLA's counting rules on the program closest to the imported linalg.

Not examples/<model>/data/: tools/regen-fixtures --check reports any file there that the importer does
not write as stale.

Schedule -> in_shardings. A tile entry `"SELECTOR" = DIM` of a tactic on mesh axis A tiles every
`@main` argument whose `partir.name` (the importer's pytree path, importer.named_flat) matches SELECTOR
(Python's fnmatch, `*` also matching `/`, as partir and tools/test_models.py match them) on dimension
DIM along A. Tactics apply in file order and a dimension tiled by several tactics is split by all of
them, the first tactic's axis major: PartitionSpec entry (A1, A2, ...) — the layout partir's nested
tiling gives (MP's `model` then Z3's `batch` on w2's dim 0 = P(("model", "batch"), None)). Untiled
arguments are replicated (P()), as in partir; `replicate` lists only pin what is already replicated and
are ignored here. Sharding propagation (Shardy, JAX's default in 0.10.2) then shards the rest.

Run it (needs the venv, tools/setup-venv), from any cwd; 1-3 minutes of CPU for everything:

    tools/.venv/bin/python tools/xla_cost.py                 # all models -> examples/<model>/xla_cost.json
    tools/.venv/bin/python tools/xla_cost.py mlp gns         # some models
    tools/.venv/bin/python tools/xla_cost.py --check         # recompute, compare with the committed files
    tools/.venv/bin/python tools/xla_cost.py --hlo DIR       # also write each run's optimized HLO to DIR

===================================================================================================
How XLA's HloCostAnalysis counts (jax/jaxlib 0.10.2, CPU backend). Established by experiments with
tiny jitted functions (`jax.jit(f).lower(args).compile().cost_analysis()`, and the unoptimized
`Lowered.cost_analysis()`), matching xla/service/hlo_cost_analysis.cc:

  What is counted: the OPTIMIZED, SPMD-partitioned HLO module of one device, after XLA's CPU pipeline
  (algebraic simplifier, CSE, fusion, ...): each instruction inside a fusion is counted as if unfused.
  `flops` and `transcendentals` are separate: a transcendental op adds to `transcendentals` only.

  op kind                                  flops per op                      transcendentals
  ---------------------------------------  --------------------------------  -----------------------
  elementwise add/sub/mul/div/max/min/neg  1 per output element              0
    abs/clamp/remainder/and/or/not ...     (integer ops too: i32 add = 1)
  compare (f32 and i32)                    1 per output element              0
  select                                   1 per output element              0
  convert (i32->f32, f32->i32)             1 per output element              0
  exp, log, tanh, rsqrt, sqrt, power,      0                                 1 per output element
    erf, log1p, expm1, sin/cos/tan, cbrt,
    atan2 (also pow with a scalar)
  logistic (jax.nn.sigmoid)                lowered as 1/(1+exp(-x)): 3/elem  1 per element
  dot (incl. batch dims)                   2 x (output elements) x (product of contracting dims)
                                           (an FMA is 2); XLA rewrites a dot with contracting size 1
                                           (an outer product) into a multiply: 1 per output element
  convolution                              2 x (output elements) x Cin x (number of kernel taps that
                                           fall on the input, NOT on padding): a 3x3 SAME conv on
                                           HxW counts (3W-2)(3H-2) taps per output plane instead of
                                           9HW, e.g. 16x16: (46/48)^2 = 0.918 of 9HW; 8x8: 0.840.
                                           A jnp.pad followed by a VALID conv is folded into the
                                           conv's padding and counts the same.
  reduce (sum/max)                         (input elements - output elements) x (ops in the reducer,
                                           1 for add/max): N-1 per reduced row, not N.
  all-reduce                               1 per output element (HloCostAnalysis assumes 2 replicas)
  all-gather, all-to-all,                  0
    collective-permute
  iota, broadcast, reshape, bitcast,       0
    transpose, copy, slice, dynamic-slice,
    dynamic-update-slice, concatenate, pad,
    constant, parameter, tuple, gte
  partition-id & the SPMD partitioner's    a few scalar flops (offset arithmetic for
    dynamic-slice offsets                  dynamic-slice), < 10 per collective

  Simplifications that change counts relative to the unoptimized program (observed):
  - fusion duplicates cheap elementwise producers into each consumer fusion and every copy is counted:
    f(a) = (t*t).sum(1), 3*t with t = a - mean(a) on [8,16]: 632 flops unoptimized, 768 compiled. On
    the Transformer this adds 4.2% to the whole step: layer norm's x - mean is recomputed in 16-21
    fusions per site, other elementwise producers likewise (subtract 0.22M -> 0.58M, add 0.76M -> 2.04M,
    multiply 1.49M -> 2.51M flops; dots unchanged at 58.7M);
  - reshape(iota) is rewritten to iota*c + iota (2 flops per element where the program had 0);
  - max(x, -inf) (jax's log_softmax) and similar identities are removed;
  - a dot with a size-1 contracting dim becomes a multiply (1 instead of 2 per element);
  - CSE merges duplicates (the unoptimized program still has both of layer norm's x - mean).
  A reduce over a size-1 dim counts 0 by the reduce formula (input - output elements) even unoptimized.
  Reduce-scatter was never emitted on CPU (the partitioner gives all-reduce + dynamic-slice).

  Against partir's rule on the imported linalg (body arith/math ops x iteration space; data movement
  and collectives 0), op kind by op kind: matmul/batch_matmul agree exactly (mulf+addf = 2 per
  iteration = XLA's FMA 2); elementwise generics agree (1 per op per element; cmpf/cmpi, select,
  sitofp all count 1 in both); broadcasts/transposes/reshapes/iota-as-linalg.index are 0 in both
  (index_cast in an iota body counts 1 in partir, 0 in XLA: 10-80 elements per model); transcendentals
  agree exactly. They differ on: reductions (linalg N per reduced row from a filled init, XLA N-1: a
  2x2 average pool is 4 vs 3); convolutions on a tensor.pad (linalg iterates the padded input, all
  KhxKw taps; XLA only taps on the input: UNet +11.0% of its whole step); all-reduce (0 vs 1 per
  element); and XLA's optimizations above (fusion duplication: Transformer -4.2%). Measured on the
  unsharded zoo, partir's rule vs XLA's unoptimized count: mlp 1.000, transformer 1.000, unet 1.109,
  gns 1.000, mqa 0.998; vs XLA's compiled count: 0.996, 0.959, 1.106, 0.998, 0.992.
===================================================================================================
"""
from __future__ import annotations

import argparse
import atexit
import fnmatch
import json
import os
import re
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

# Must happen before jax is imported: 8 CPU devices, and a dump of each module right after SPMD
# partitioning (as HloProto) to cost it before XLA's optimization pipeline.
_DUMP = Path(tempfile.mkdtemp(prefix="xla_cost-"))
atexit.register(shutil.rmtree, _DUMP, True)
os.environ["XLA_FLAGS"] = " ".join([
    os.environ.get("XLA_FLAGS", ""), "--xla_force_host_platform_device_count=8", f"--xla_dump_to={_DUMP}",
    "--xla_dump_hlo_as_proto", "--xla_dump_hlo_pass_re=spmd-partitioning"]).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parent
EXAMPLES = REPO / "examples"
sys.path.insert(0, str(TOOLS))

FORMAT = "partir-xla-cost-v1"
MODELS = ["mlp", "transformer", "unet", "gns", "mqa"]


def cost_path(model: str) -> Path:
    """Where the recorded costs of a model live (tools/flop_check.py reads the same path)."""
    return EXAMPLES / model / "xla_cost.json"


def tile_specs(schedule: dict, names: list[str]) -> dict[str, list[list[str]]]:
    """partir.name -> per-dimension list of mesh axes (major first), for the tiled arguments only."""
    mesh = schedule["mesh"]
    out: dict[str, dict[int, list[str]]] = {}
    for tactic in schedule.get("tactic", []):
        axis = tactic["axis"]
        if axis not in mesh:
            raise ValueError(f"tactic {tactic.get('name')}: axis {axis!r} is not in the mesh {mesh}")
        chosen: dict[str, int] = {}
        for sel, dim in tactic.get("tile", {}).items():
            hits = fnmatch.filter(names, sel)
            if not hits:
                raise ValueError(f"tactic {tactic.get('name')}: selector {sel!r} matches no argument")
            for n in hits:
                if n in chosen and chosen[n] != dim:
                    raise ValueError(f"tactic {tactic.get('name')}: {n} tiled on dims {chosen[n]} and {dim}")
                chosen[n] = dim
        for n, dim in chosen.items():
            out.setdefault(n, {}).setdefault(dim, []).append(axis)
    return {n: [dims.get(d, []) for d in range(max(dims) + 1)] for n, dims in out.items()}


def partition_spec(axes_per_dim: list[list[str]], rank: int):
    from jax.sharding import PartitionSpec as P

    if len(axes_per_dim) > rank:
        raise ValueError(f"tiling dim {len(axes_per_dim) - 1} of a rank-{rank} argument")
    entries = [None if not a else (a[0] if len(a) == 1 else tuple(a)) for a in axes_per_dim]
    return P(*entries)


_COLLECTIVE_RE = re.compile(
    r"= (\([^=]*?\)|[a-z0-9]+\[[0-9,]*\](?:\{[^}]*\})?) "
    r"(all-reduce|all-reduce-start|all-gather|all-gather-start|reduce-scatter|all-to-all|"
    r"collective-permute|collective-permute-start)\(")
_ARRAY_RE = re.compile(r"[a-z0-9]+\[([0-9,]*)\]")


def collectives(hlo_text: str) -> tuple[dict[str, int], int]:
    """Counts of collective ops in an HLO module and the elements of all all-reduce results (XLA counts
    one flop per all-reduce output element)."""
    counts: dict[str, int] = {}
    ar_elems = 0
    hlo_text = re.sub(r"/\*index=\d+\*/", "", hlo_text)  # tuple shapes carry /*index=5*/ comments
    for m in _COLLECTIVE_RE.finditer(hlo_text):
        kind = m.group(2).removesuffix("-start")
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "all-reduce":
            for dims in _ARRAY_RE.findall(m.group(1)):
                n = 1
                for d in filter(None, dims.split(",")):
                    n *= int(d)
                ar_elems += n
    return dict(sorted(counts.items())), ar_elems


def _costs(ca) -> dict:
    if isinstance(ca, (list, tuple)):  # older JAX returned one dict per computation
        ca = ca[0]
    return {"flops": float(ca.get("flops", 0.0)),
            "transcendentals": float(ca.get("transcendentals", 0.0)),
            "bytes_accessed": float(ca.get("bytes accessed", 0.0))}


def _proto_field1(buf: bytes) -> bytes:
    """HloProto -> its field 1, the HloModuleProto (protobuf wire format: all fields length-delimited)."""
    def varint(i):
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v, i
    i = 0
    while i < len(buf):
        key, i = varint(i)
        if key & 7 != 2:
            raise ValueError(f"unexpected wire type {key & 7} in an HloProto")
        n, i = varint(i)
        if key >> 3 == 1:
            return buf[i:i + n]
        i += n
    raise ValueError("no HloModuleProto in the HloProto")


_seen_dumps: set[Path] = set()


def partitioned_costs_reset() -> None:
    _seen_dumps.update(_DUMP.glob("*after_spmd-partitioning*.hlo.pb"))


def partitioned_costs() -> dict:
    """HloCostAnalysis of the module just compiled, right after SPMD partitioning (per device, before
    XLA's CPU optimization pipeline: no CSE, simplification or fusion yet)."""
    import jax
    from jax._src.lib import _jax, xla_client

    new = sorted(p for p in _DUMP.glob("*after_spmd-partitioning*.hlo.pb") if p not in _seen_dumps)
    _seen_dumps.update(new)
    if len(new) != 1:
        raise RuntimeError(f"expected one module dumped after SPMD partitioning, found {len(new)} in {_DUMP}")
    comp = xla_client.XlaComputation(_proto_field1(new[0].read_bytes()))
    counts, ar = collectives(comp.as_hlo_text())
    return {**_costs(_jax.hlo_module_cost_analysis(jax.devices()[0].client, comp.as_hlo_module())),
            "all_reduce_elements": float(ar), "collectives": counts}


def run_model(model: str, hlo_dir: Path | None = None) -> dict:
    import jax
    import jaxlib
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    from partir_jax import importer, models

    spec, kw = models.spec(model, "small")
    names = importer.named_flat(spec.args, spec.arg_names)
    leaves, treedef = jax.tree_util.tree_flatten(spec.args)
    assert len(leaves) == len(names)
    shapes = {n: list(np.shape(a)) for n, a in zip(names, leaves)}

    def record(tag, compiled, extra):
        text = compiled.as_text()
        counts, ar = collectives(text)
        if hlo_dir:
            hlo_dir.mkdir(parents=True, exist_ok=True)
            (hlo_dir / f"{model}-{tag}.hlo").write_text(text)
        return {**extra, **_costs(compiled.cost_analysis()), "all_reduce_elements": float(ar),
                "collectives": counts}

    runs = []
    lowered = jax.jit(spec.fn, keep_unused=True).lower(*spec.args)
    runs.append(record("unsharded", lowered.compile(), {
        "schedule": "unsharded", "devices": 1, "mesh": {},
        # HloCostAnalysis of the unoptimized (StableHLO -> HLO) program: the same rules, before XLA's
        # simplifications and fusion; the closest XLA figure to what the imported linalg computes.
        "unoptimized": {**_costs(lowered.cost_analysis()), "all_reduce_elements": 0.0, "collectives": {}}}))

    for sched in sorted((EXAMPLES / model / "schedules").glob("*.toml")):
        s = tomllib.loads(sched.read_text())
        mesh_shape = s["mesh"]
        ndev = int(np.prod(list(mesh_shape.values())))
        devices = jax.devices()
        if len(devices) < ndev:
            raise RuntimeError(f"{sched}: needs {ndev} devices, have {len(devices)} (XLA_FLAGS?)")
        mesh = Mesh(np.array(devices[:ndev]).reshape(tuple(mesh_shape.values())), tuple(mesh_shape))
        tiles = tile_specs(s, names)
        pspecs = [partition_spec(tiles[n], len(shapes[n])) if n in tiles else P() for n in names]
        shardings = jax.tree_util.tree_unflatten(treedef, [NamedSharding(mesh, p) for p in pspecs])
        partitioned_costs_reset()
        compiled = jax.jit(spec.fn, keep_unused=True, in_shardings=shardings).lower(*spec.args).compile()
        runs.append(record(sched.stem, compiled, {
            "schedule": sched.stem, "devices": ndev, "mesh": mesh_shape,
            "in_specs": {n: str(p) for n, p in zip(names, pspecs) if p != P()},
            # the per-device module right after SPMD partitioning, before XLA's optimizations
            "unoptimized": partitioned_costs()}))

    return {
        "format": FORMAT,
        "generated_by": "tools/xla_cost.py",
        "model": model, "preset": "small", "preset_values": kw,
        "module": f"{model}.mlir",
        "jax": jax.__version__, "jaxlib": jaxlib.__version__, "backend": jax.default_backend(),
        "partitioner": "shardy" if jax.config.jax_use_shardy_partitioner else "gspmd",
        "note": "cost_analysis() of the compiled (optimized, SPMD-partitioned) module: per device. "
                "flops exclude transcendentals; all_reduce_elements are included in flops (1 per element).",
        "runs": runs,
    }


def dumps(obj) -> str:
    return json.dumps(obj, indent=1) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", default=MODELS)
    ap.add_argument("--check", action="store_true",
                    help="recompute and compare with the committed files (exit 1 on a difference)")
    ap.add_argument("--hlo", metavar="DIR", type=Path, help="also write each run's optimized HLO text here")
    a = ap.parse_args(argv)
    bad = []
    for model in a.models:
        res = run_model(model, a.hlo)
        path = cost_path(model)
        for r in res["runs"]:
            print(f"{model:12s} {r['schedule']:10s} flops {r['flops']:>14.0f}  transcendentals "
                  f"{r['transcendentals']:>10.0f}  bytes {r['bytes_accessed']:>14.0f}  "
                  f"all-reduce elems {r['all_reduce_elements']:>9.0f}  {r['collectives']}", flush=True)
        if a.check:
            if not path.exists() or path.read_text() != dumps(res):
                bad.append(str(path.relative_to(REPO)))
        else:
            path.write_text(dumps(res))
    if a.check:
        if bad:
            print("xla_cost --check: differs from the committed files: " + ", ".join(bad))
            return 1
        print(f"xla_cost --check: {len(a.models)} models reproduce")
    return 0


if __name__ == "__main__":
    sys.exit(main())
