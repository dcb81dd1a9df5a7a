"""Runs a PartIR:HLO module on MPI ranks (mpiexec + mlir-runner) on a fixture's stored inputs and
compares with the expected outputs: the equivalence check of docs/design.md#8-execution for partitioned programs.

The harness @entry initialises MPI, materialises each full input, keeps this device's shard of it
(`partir_hlo.all_slice` per the argument's `partir_hlo.sharding`), calls @main, reassembles every
result from its shards (`partir_hlo.all_gather` per the result's sharding) and prints it on rank 0.
`partir-to-mpi` then lowers all collectives, the harness's included.
Usage: run_spmd.py HLO.mlir DATA_DIR RANKS LIBPARTIR
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from . import run_mlir

LLVM = run_mlir.LLVM


def _mpich() -> str:
    """MPICH's shared library, wherever this machine's multiarch directory puts it (mlir-runner
    needs a path: it does not search like the dynamic loader)."""
    import glob
    for pattern in ("/usr/lib/*/libmpich.so.12", "/usr/lib64/libmpich.so.12", "/usr/lib/libmpich.so.12"):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    raise SystemExit("MPICH not found: run scripts/setup (apt-get install mpich libmpich-dev)")


SHARDING = re.compile(r'partir_hlo\.sharding = #partir_hlo\.sharding<\[(.*?)\]>')


def _dims(body: str) -> list[list[str]]:
    """`{"batch"}, {}` → [["batch"], []] (quotes also as MLIR escapes them in strings, `\\22`)."""
    body = body.replace("\\22", '"').replace('\\"', '"')
    return [re.findall(r'"([^"]+)"', d) for d in re.findall(r"\{([^}]*)\}", body)]


def signature(text: str) -> tuple[str, str]:
    """@main's signature as text: (its arguments `(%arg0: ...)`, its results `-> (...)`)."""
    start = text.index("@main(")
    depth, i = 0, start + len("@main")
    while True:
        depth += text[i] == "("
        depth -= text[i] == ")"
        i += 1
        if depth == 0:
            break
    return text[start:i], text[i:text.index("{\n", i)]


def shardings(text: str, pattern: re.Pattern = SHARDING) -> tuple[list[list[list[str]]], list[list[list[str]]]]:
    """(argument shardings, result shardings) of @main, from its signature: each
    `partir_hlo.sharding` attribute (or what `pattern` matches, its group 1 the dims)."""
    args, rest = signature(text)
    return [_dims(m) for m in pattern.findall(args)], [_dims(m) for m in pattern.findall(rest)]


def harness(hlo_file: Path, data_dir: Path) -> str:
    man = json.loads((data_dir / "manifest.json").read_text())
    text = hlo_file.read_text().replace("func.func public @main", "func.func private @main", 1)
    arg_sh, res_sh = shardings(text)
    L = ["  func.func @entry() {", "    %mpi_init = mpi.init : !mpi.retval"]
    for i, e in enumerate(man["inputs"]):
        a = np.load(data_dir / e["file"])
        ty = run_mlir._ty(e)
        if a.ndim == 0:
            L.append(f"    %full{i} = arith.constant dense<{run_mlir._dense(a, e['dtype'])}> : {ty}")
        else:
            L.append(f"    %flat{i} = arith.constant dense<[{run_mlir._dense(a, e['dtype'])}]> : tensor<{a.size}x{e['dtype']}>")
            L.append(f"    %shp{i} = arith.constant dense<[{', '.join(map(str, a.shape))}]> : tensor<{a.ndim}xindex>")
            L.append(f"    %full{i} = tensor.reshape %flat{i}(%shp{i}) : (tensor<{a.size}x{e['dtype']}>, tensor<{a.ndim}xindex>) -> {ty}")
        cur, shape = f"%full{i}", list(a.shape)
        for d, axes in enumerate(arg_sh[i] if i < len(arg_sh) else []):
            if not axes:
                continue
            before = "tensor<" + "".join(f"{s}x" for s in shape) + e["dtype"] + ">"
            shape[d] //= int(np.prod([MESH[x] for x in axes]))
            after = "tensor<" + "".join(f"{s}x" for s in shape) + e["dtype"] + ">"
            L.append(f'    %in{i}_{d} = partir_hlo.all_slice {cur} dim {d} axes [{", ".join(chr(34)+x+chr(34) for x in axes)}] : {before} -> {after}')
            cur = f"%in{i}_{d}"
        L.append(f"    %in{i} = tensor.cast {cur} : " + "tensor<" + "".join(f"{s}x" for s in shape) + e["dtype"] + "> to " +
                 "tensor<" + "".join(f"{s}x" for s in shape) + e["dtype"] + ">")
        INS.append(("tensor<" + "".join(f"{s}x" for s in shape) + e["dtype"] + ">"))
    ins = ", ".join(f"%in{i}" for i in range(len(man["inputs"])))
    outs_local = []
    for j, e in enumerate(man["outputs"]):
        shape = list(e["shape"])
        for d, axes in enumerate(res_sh[j] if j < len(res_sh) else []):
            for x in axes:
                shape[d] //= MESH[x]
        outs_local.append(shape)
    lty = lambda s, dt: "tensor<" + "".join(f"{x}x" for x in s) + dt + ">"
    outs = ", ".join(f"%out{j}" for j in range(len(man["outputs"])))
    L.append(f"    {outs} = func.call @main({ins}) : ({', '.join(INS)}) -> "
             f"({', '.join(lty(s, e['dtype']) for s, e in zip(outs_local, man['outputs']))})")
    for j, e in enumerate(man["outputs"]):
        cur, shape = f"%out{j}", list(outs_local[j])
        for d, axes in enumerate(res_sh[j] if j < len(res_sh) else []):
            if not axes:
                continue
            before = lty(shape, e["dtype"])
            shape[d] *= int(np.prod([MESH[x] for x in axes]))
            L.append(f'    %g{j}_{d} = partir_hlo.all_gather {cur} dim {d} axes [{", ".join(chr(34)+x+chr(34) for x in axes)}] : {before} -> {lty(shape, e["dtype"])}')
            cur = f"%g{j}_{d}"
        t = "f32" if e["dtype"] == "f32" else "i32"
        L.append(f"    %u{j} = tensor.cast {cur} : {lty(shape, e['dtype'])} to tensor<*x{t}>")
        L.append(f"    %b{j} = bufferization.to_buffer %u{j} : tensor<*x{t}> to memref<*x{t}>")
    L.append("    %world = mpi.comm_world : !mpi.comm")
    L.append("    %rank = mpi.comm_rank(%world) : i32")
    L.append("    %c0_i32 = arith.constant 0 : i32")
    L.append("    %is0 = arith.cmpi eq, %rank, %c0_i32 : i32")
    L.append("    scf.if %is0 {")
    for j, e in enumerate(man["outputs"]):
        fn = "printMemrefF32" if e["dtype"] == "f32" else "printMemrefI32"
        t = "f32" if e["dtype"] == "f32" else "i32"
        L.append(f"      func.call @{fn}(%b{j}) : (memref<*x{t}>) -> ()")
    L.append("    }")
    L.append("    %mpi_fin = mpi.finalize : !mpi.retval")
    L.append("    return\n  }")
    L.append("  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}")
    L.append("  func.func private @printMemrefI32(memref<*xi32>) attributes {llvm.emit_c_interface}")
    k = text.rindex("}")
    return text[:k] + "\n".join(L) + "\n}\n"


MESH: dict[str, int] = {}
INS: list[str] = []


def run(hlo_file: Path, data_dir: Path, ranks: int, lib: str) -> list[np.ndarray]:
    text = hlo_file.read_text()
    MESH.clear()
    INS.clear()
    m = re.search(r"partir\.mesh @\w+ \[(.*?)\]", text)
    for name, size in re.findall(r'"([^"]+)"=(\d+)', m.group(1)):
        MESH[name] = int(size)
    h = harness(hlo_file, data_dir)
    opt = [str(LLVM / "bin/mlir-opt"), f"--load-dialect-plugin={lib}", f"--load-pass-plugin={lib}"]
    mpi = subprocess.run(opt + ["-p", "builtin.module(partir-to-mpi)", "-"], input=h, capture_output=True, text=True)
    if mpi.returncode != 0:
        raise RuntimeError(mpi.stderr[-3000:])
    low = subprocess.run([str(LLVM / "bin/mlir-opt"), f"--pass-pipeline={run_mlir.LOWER}", "-"], input=mpi.stdout,
                         capture_output=True, text=True)
    if low.returncode != 0:
        raise RuntimeError(low.stderr[-3000:])
    # Ops left over (not the `partir.name` argument/result attributes, which LLVM keeps on a
    # single-result function such as MQA's @main).
    code = re.sub(r'partir\.name = "[^"]*"', "", low.stdout)
    left = [w for w in ("mpi.", "partir", "unrealized_conversion_cast") if w in code]
    if left:
        raise RuntimeError(f"lowering left {left} in the program")
    ll = re.sub(r' attributes \{dlti\.map = [^}]*\}', "", low.stdout, count=1)
    libs = f"{_mpich()},{LLVM}/lib/libmlir_c_runner_utils.so,{LLVM}/lib/libmlir_runner_utils.so"
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as program:
        program.write(ll)
    try:
        r = subprocess.run(["mpiexec.mpich", "-n", str(ranks), str(LLVM / "bin/mlir-runner"), program.name, "-e", "entry",
                            "-entry-point-result=void", f"-shared-libs={libs}"], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
    finally:
        Path(program.name).unlink()
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-3000:])
    blocks = r.stdout.split("Unranked Memref")[1:]
    num = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)")
    return [np.array([float(x) for x in num.findall(b.split("data =", 1)[1])], np.float64) for b in blocks]


def compare(hlo_file: Path, data_dir: Path, ranks: int, lib: str) -> list[tuple[str, float]]:
    man = json.loads((data_dir / "manifest.json").read_text())
    got = run(hlo_file, data_dir, ranks, lib)
    if len(got) != len(man["outputs"]):
        raise RuntimeError(f"{len(got)} printed results, {len(man['outputs'])} expected")
    errs = []
    for g, e in zip(got, man["outputs"]):
        want = np.load(data_dir / e["file"]).astype(np.float64).reshape(-1)
        scale = max(np.max(np.abs(want)), 1e-30)
        errs.append((e["name"], float(np.max(np.abs(g - want)) / scale)))
    return errs


if __name__ == "__main__":
    hlo, data, ranks, lib = sys.argv[1:5]
    for name, err in compare(Path(hlo), Path(data), int(ranks), lib):
        print(f"{name:32s} {err:.2e}")
