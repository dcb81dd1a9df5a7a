"""JAX -> StableHLO -> upstream MLIR (linalg/tensor/arith/math on tensors) importer.

Pipeline (see tools/README.md):
  1. jax.jit(fn, keep_unused=True).lower(*args)      -> StableHLO module (jaxlib's MLIR)
  2. name every @main argument/result: `partir.name` = its pytree path ("params/layers/0/wq")
  3. iree-opt --iree-stablehlo-input-transformation-pipeline  (IREE's StableHLO input conversion)
  4. check that only upstream dialects remain (func, linalg, tensor, arith, math, scf, affine, ...)
  5. re-print with MLIR 22's own mlir-opt (so the file is in the form MLIR 22 prints)
  6. optionally run fn on the deterministic inputs and store inputs/outputs as .npy + manifest.json
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .toolchain import llvm_prefix

TOOLS_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = TOOLS_DIR.parent
MLIR_OPT_22 = os.environ.get("PARTIR_MLIR_OPT", str(llvm_prefix() / "bin" / "mlir-opt"))

# Dialects allowed in the final module.
UPSTREAM_DIALECTS = {"builtin", "func", "linalg", "tensor", "arith", "math", "scf", "affine"}


class ImportError_(RuntimeError):
    pass


def _iree_opt() -> str:
    cand = Path(sys.executable).parent / "iree-opt"
    if cand.exists():
        return str(cand)
    found = shutil.which("iree-opt")
    if not found:
        raise ImportError_("iree-opt not found: run tools/setup-venv and use tools/.venv/bin/python")
    return found


def keypath_to_name(path) -> str:
    """('params', DictKey('layers'), SequenceKey(0), DictKey('wq')) -> 'params/layers/0/wq'."""
    import jax

    parts = []
    for k in path:
        if isinstance(k, str):
            parts.append(k)
        elif isinstance(k, jax.tree_util.DictKey):
            parts.append(str(k.key))
        elif isinstance(k, jax.tree_util.SequenceKey):
            parts.append(str(k.idx))
        elif isinstance(k, jax.tree_util.GetAttrKey):
            parts.append(str(k.name))
        elif isinstance(k, jax.tree_util.FlattenedIndexKey):
            parts.append(str(k.key))
        else:
            parts.append(str(k))
    return "/".join(parts)


def flat_names(tree, prefix: str | None) -> list[str]:
    import jax

    leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    names = []
    for path, _ in leaves:
        name = keypath_to_name(path)
        if prefix:
            name = f"{prefix}/{name}" if name else prefix
        names.append(name)
    return names


def named_flat(trees: Sequence[Any], top_names: Sequence[str] | None) -> list[str]:
    """Names of all leaves of a tuple of pytrees; the i-th tree is prefixed by top_names[i]."""
    names: list[str] = []
    for i, t in enumerate(trees):
        top = top_names[i] if top_names else (None if len(trees) == 1 else str(i))
        names.extend(flat_names(t, top))
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ImportError_(f"duplicate pytree names: {dup}")
    return names


@dataclass
class ModelSpec:
    """A JAX function with example arguments and the names of its top-level arguments/results."""

    fn: Callable
    args: tuple
    arg_names: Sequence[str] | None = None
    result_names: Sequence[str] | None = None  # names of the top-level results (tuple result)
    description: str = ""
    info: dict = field(default_factory=dict)


@contextlib.contextmanager
def _name_locations():
    """Locations are JAX's name stacks only (`jit(step)/transpose(jvp(layers/3))/dot_general`),
    without source positions: what says which layer an op belongs to, at a few bytes per op."""
    import jax

    saved = jax.config.jax_traceback_in_locations_limit
    jax.config.update("jax_traceback_in_locations_limit", 0)
    jax.clear_caches()
    try:
        yield
    finally:
        jax.config.update("jax_traceback_in_locations_limit", saved)
        jax.clear_caches()


def _stablehlo_with_names(spec: ModelSpec, in_names, out_names, generic: bool = False,
                          locations: bool = False) -> str:
    """@main in StableHLO with `partir.name` on its arguments and results, exactly as
    `jax.jit(...).lower(...)` emits it otherwise (private functions and `func.call`s kept:
    partir inlines them). `generic`: printed in generic form (what a stock MLIR 22 reads as
    unregistered ops).
    `locations`: ops keep JAX's name-stack locations (see `_name_locations`)."""
    import jax
    from jax._src.lib.mlir import ir

    with _name_locations() if locations else contextlib.nullcontext():
        lowered = jax.jit(spec.fn, keep_unused=True).lower(*spec.args)
        module = lowered.compiler_ir("stablehlo")
    with module.context:
        main = None
        for op in module.body.operations:
            if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
                main = op
        if main is None:
            raise ImportError_("no @main in the lowered module")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        if len(ftype.inputs) != len(in_names):
            raise ImportError_(f"@main has {len(ftype.inputs)} arguments, pytree has {len(in_names)} leaves")
        if len(ftype.results) != len(out_names):
            raise ImportError_(f"@main has {len(ftype.results)} results, pytree has {len(out_names)} leaves")
        main.attributes["arg_attrs"] = ir.ArrayAttr.get(
            [ir.DictAttr.get({"partir.name": ir.StringAttr.get(n)}) for n in in_names])
        main.attributes["res_attrs"] = ir.ArrayAttr.get(
            [ir.DictAttr.get({"partir.name": ir.StringAttr.get(n)}) for n in out_names])
        text = module.operation.get_asm(enable_debug_info=locations, print_generic_op_form=generic)
    return text


def run(cmd: list[str], stdin: str | None = None) -> str:
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if p.returncode != 0:
        raise ImportError_(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-4000:]}")
    return p.stdout


def stablehlo_to_linalg(stablehlo: str, locations: bool = False, unregistered: bool = False) -> str:
    """IREE's StableHLO input pipeline; returns IREE's (LLVM-24-era) textual output.
    `unregistered`: ops of other dialects (partir's collectives) pass through as they are."""
    flags = ["--allow-unregistered-dialect"] if unregistered else []
    return run([_iree_opt(), *flags, "--iree-stablehlo-input-transformation-pipeline", "--mlir-print-op-generic",
                f"--mlir-print-debuginfo={str(locations).lower()}", "-"], stdin=stablehlo)


_OP_RE = re.compile(r'^\s*(?:%[^=]+=\s*)?"([a-z_][a-z0-9_]*)\.([a-z0-9_.]+)"', re.M)


def dialects_used(generic_text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for m in _OP_RE.finditer(generic_text):
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def check_upstream(generic_text: str, also: Sequence[str] = ()) -> None:
    used = dialects_used(generic_text)
    bad = {d: n for d, n in used.items() if d not in UPSTREAM_DIALECTS and d not in also}
    if bad:
        ops = sorted({m.group(1) + "." + m.group(2) for m in _OP_RE.finditer(generic_text)
                      if m.group(1) in bad})
        raise ImportError_(f"non-upstream ops after IREE's pipeline: {ops} (see tools/README.md)")
    # IREE attributes such as #iree_* / #util.* / #flow.* / #hal.*
    m = re.search(r"#(iree_[a-z_]+|util|flow|hal|stream)\.", generic_text)
    if m:
        raise ImportError_(f"non-upstream attribute after IREE's pipeline: {m.group(0)}")


_MIXED_RE = re.compile(r"linalg\.(?:\w*matmul\w*|\w*matvec\w*|\w*vecmat\w*|dot|conv\w*|depthwise\w*|pooling\w*|"
                       r"contract)\b[^\n]*?ins\(([^)]*)\)\s*outs\(([^)]*)\)")


def check_no_mixed_contractions(text: str) -> None:
    """Reject named linalg ops whose inputs' element type differs from the output's: their implicit
    cast is interpreted differently by IREE's and MLIR 22's linalg (e.g. i1 -> f32 becomes -1.0)."""
    for m in _MIXED_RE.finditer(text):
        ins = re.findall(r"x?(i\d+|f\d+|bf16)>", m.group(1).split(":", 1)[-1])
        outs = re.findall(r"x?(i\d+|f\d+|bf16)>", m.group(2).split(":", 1)[-1])
        if outs and any(t != outs[0] for t in ins):
            raise ImportError_("mixed-type linalg contraction (implicit cast differs between IREE and "
                               f"MLIR 22; cast explicitly in the model): {m.group(0)[:300]}")


def reprint_mlir22(text: str, extra_passes: Sequence[str] = (), locations: bool = False,
                   unregistered: bool = False) -> str:
    cmd = [MLIR_OPT_22, f"--mlir-print-debuginfo={str(locations).lower()}"]
    if unregistered:
        cmd.append("--allow-unregistered-dialect")
    if extra_passes:
        cmd.append("--pass-pipeline=builtin.module(" + ",".join(extra_passes) + ")")
    cmd.append("-")
    return run(cmd, stdin=text)


def count_main_ops(text: str) -> tuple[int, int]:
    """(top-level ops in @main, all ops nested in @main incl. linalg bodies and terminators)."""
    out = run([MLIR_OPT_22, "--allow-unregistered-dialect", "--mlir-print-op-generic", "-"], stdin=text)
    top = total = 0
    depth_main, inside = None, False
    for line in out.splitlines():
        m = re.match(r'^(\s*)(?:%[^=]+=\s*)?"([a-z_][a-z0-9_]*\.[a-z0-9_.]+)"', line)
        if not m:
            continue
        indent, name = len(m.group(1)), m.group(2)
        if name == "func.func":
            inside = 'sym_name = "main"' in line
            depth_main = indent
            continue
        if inside and indent > depth_main:
            total += 1
            if indent == depth_main + 2:
                top += 1
        elif inside:
            inside = False
    return top, total


def op_histogram(text: str) -> dict[str, int]:
    """Op name -> count over the whole module (generic form)."""
    out = run([MLIR_OPT_22, "--allow-unregistered-dialect", "--mlir-print-op-generic", "-"], stdin=text)
    hist: dict[str, int] = {}
    for m in _OP_RE.finditer(out):
        k = m.group(1) + "." + m.group(2)
        hist[k] = hist.get(k, 0) + 1
    return hist


def to_mlir(spec: ModelSpec, dialect: str = "linalg",
            locations: bool = False) -> tuple[str, list[str], list[str]]:
    """Returns (MLIR 22 text, argument names, result names): upstream linalg (through IREE's
    StableHLO input pipeline) or, with dialect="stablehlo", JAX's own StableHLO in generic form,
    as a stock mlir-opt 22 reads and prints it (`--allow-unregistered-dialect`). `locations`:
    ops keep JAX's name-stack locations (the automatic partitioner folds layers by them)."""
    import jax

    in_names = named_flat(spec.args, spec.arg_names)
    out_shape = jax.eval_shape(spec.fn, *spec.args)
    outs = out_shape if isinstance(out_shape, tuple) else (out_shape,)
    if spec.result_names is not None:
        if not isinstance(out_shape, tuple) or len(out_shape) != len(spec.result_names):
            raise ImportError_("result_names must name each element of the function's tuple result")
        out_names = named_flat(outs, spec.result_names)
    else:
        out_names = named_flat(outs, ["result"] if len(outs) == 1 else [f"result{i}" for i in range(len(outs))])
    for leaf in jax.tree_util.tree_leaves((spec.args, out_shape)):
        if np.dtype(leaf.dtype) not in (np.dtype("float32"), np.dtype("int32"), np.dtype("bool")):
            raise ImportError_(f"unsupported dtype {leaf.dtype}: use f32/i32")
    if dialect == "stablehlo":
        shlo = _stablehlo_with_names(spec, in_names, out_names, generic=True, locations=locations)
        text = run([MLIR_OPT_22, "--allow-unregistered-dialect", "--mlir-print-op-generic",
                    f"--mlir-print-debuginfo={str(locations).lower()}", "-"], stdin=shlo)
        return text, in_names, out_names
    shlo = _stablehlo_with_names(spec, in_names, out_names, locations=locations)
    generic = stablehlo_to_linalg(shlo, locations)
    check_upstream(generic)
    # MLIR 22 re-prints the module; CSE merges the many identical `tensor.empty` ops that IREE's
    # pipeline creates (one per op), roughly halving the op count without changing the computation.
    text = reprint_mlir22(generic, ["func.func(cse)"], locations)
    check_no_mixed_contractions(text)
    if "f64" in text or "bf16" in text or "f16" in text:
        raise ImportError_("module has a non-f32 floating-point type")
    return text, in_names, out_names


def dump_manifest(manifest: dict) -> str:
    """JSON with one line per tensor entry (diff-friendly)."""
    out = ["{"]
    keys = list(manifest)
    for i, k in enumerate(keys):
        sep = "," if i + 1 < len(keys) else ""
        v = manifest[k]
        if isinstance(v, list):
            out.append(f' "{k}": [')
            out += ["  " + json.dumps(e) + ("," if j + 1 < len(v) else "") for j, e in enumerate(v)]
            out.append(" ]" + sep)
        else:
            out.append(f" {json.dumps(k)}: {json.dumps(v)}{sep}")
    out.append("}")
    return "\n".join(out) + "\n"


def write_data(spec: ModelSpec, in_names, out_names, data_dir: Path, mlir_file: str | None = None) -> dict:
    """Runs the function on spec.args, stores inputs/outputs as .npy (format v1.0) + manifest.json."""
    import jax

    data_dir.mkdir(parents=True, exist_ok=True)
    for old in data_dir.glob("*.npy"):
        old.unlink()
    flat_in = jax.tree_util.tree_leaves(spec.args)
    result = jax.jit(spec.fn)(*spec.args)
    flat_out = jax.tree_util.tree_leaves(result)

    def entries(kind, names, leaves):
        rows = []
        for i, (n, v) in enumerate(zip(names, leaves)):
            a = np.array(v, order="C")  # (np.ascontiguousarray would make 0-d arrays 1-d)
            if a.dtype == np.bool_:
                a = a.astype(np.int32)
            a = a.astype(a.dtype.newbyteorder("<"))
            fname = f"{kind}{i}.npy"
            with open(data_dir / fname, "wb") as f:
                np.lib.format.write_array(f, a, version=(1, 0), allow_pickle=False)
            rows.append({"index": i, "name": n, "file": fname, "shape": list(a.shape),
                         "dtype": {"float32": "f32", "int32": "i32"}[a.dtype.name]})
        return rows

    manifest = {
        "format": "partir-data-v1",
        "module": mlir_file,
        "function": "main",
        "inputs": entries("arg", in_names, flat_in),
        "outputs": entries("res", out_names, flat_out),
    }
    with open(data_dir / "manifest.json", "w") as f:
        f.write(dump_manifest(manifest))
    return manifest


def import_spec(spec: ModelSpec, out: Path, data_dir: Path | None = None, header: str | None = None,
                dialect: str = "linalg", locations: bool = False) -> dict:
    text, in_names, out_names = to_mlir(spec, dialect, locations)
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    if header:
        lines += ["// " + l if l else "//" for l in header.splitlines()]
    out.write_text("\n".join(lines) + ("\n" if lines else "") + text)
    top, total = count_main_ops(text)
    info = {"ops": top, "ops_total": total, "args": len(in_names), "results": len(out_names),
            "bytes": len(text.encode())}
    if data_dir is not None:
        rel = os.path.relpath(out, data_dir)
        write_data(spec, in_names, out_names, data_dir, rel)
    return info
