"""Runs an imported fixture with MLIR 22's own CPU pipeline (mlir-runner) on its stored inputs and
compares the results with JAX's stored outputs (a check of the importer, not of partir).

The fixture's @main becomes private; an @entry materialises each input .npy as a dense constant, calls
@main and prints every result with printMemref{F32,I32}; the printed values are parsed back.
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np

from .toolchain import llvm_prefix

LLVM = llvm_prefix()
LOWER = ("builtin.module(one-shot-bufferize{bufferize-function-boundaries},func.func(convert-linalg-to-loops),"
         "convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-to-llvm,"
         "reconcile-unrealized-casts)")


def _ty(e):
    return "tensor<" + "".join(f"{d}x" for d in e["shape"]) + e["dtype"] + ">"


def _dense(a, dtype):
    if dtype == "f32":
        return ", ".join(np.format_float_scientific(x, unique=True) for x in a.reshape(-1).astype(np.float32))
    return ", ".join(str(int(x)) for x in a.reshape(-1))


def harness(mlir_file: Path, data_dir: Path) -> str:
    man = json.loads((data_dir / "manifest.json").read_text())
    text = mlir_file.read_text().replace("func.func public @main", "func.func private @main", 1)
    L = ["  func.func @entry() {"]
    for i, e in enumerate(man["inputs"]):
        a = np.load(data_dir / e["file"])
        if a.ndim == 0:
            L.append(f"    %in{i} = arith.constant dense<{_dense(a, e['dtype'])}> : {_ty(e)}")
        else:
            L.append(f"    %flat{i} = arith.constant dense<[{_dense(a, e['dtype'])}]> : tensor<{a.size}x{e['dtype']}>")
            L.append(f"    %shp{i} = arith.constant dense<[{', '.join(map(str, a.shape))}]> : tensor<{a.ndim}xindex>")
            L.append(f"    %in{i} = tensor.reshape %flat{i}(%shp{i}) : (tensor<{a.size}x{e['dtype']}>, "
                     f"tensor<{a.ndim}xindex>) -> {_ty(e)}")
    ins = ", ".join(f"%in{i}" for i in range(len(man["inputs"])))
    outs = ", ".join(f"%out{j}" for j in range(len(man["outputs"])))
    L.append(f"    {outs} = call @main({ins}) : ({', '.join(_ty(e) for e in man['inputs'])}) -> "
             f"({', '.join(_ty(e) for e in man['outputs'])})")
    for j, e in enumerate(man["outputs"]):
        t, fn = ("f32", "printMemrefF32") if e["dtype"] == "f32" else ("i32", "printMemrefI32")
        L.append(f"    %u{j} = tensor.cast %out{j} : {_ty(e)} to tensor<*x{t}>")
        L.append(f"    %b{j} = bufferization.to_buffer %u{j} : tensor<*x{t}> to memref<*x{t}>")
        L.append(f"    call @{fn}(%b{j}) : (memref<*x{t}>) -> ()")
    L.append("    return\n  }")
    L.append("  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}")
    L.append("  func.func private @printMemrefI32(memref<*xi32>) attributes {llvm.emit_c_interface}")
    k = text.rindex("}")
    return text[:k] + "\n".join(L) + "\n}\n"


def run(mlir_file: Path, data_dir: Path) -> list[np.ndarray]:
    h = harness(mlir_file, data_dir)
    low = subprocess.run([str(LLVM / "bin/mlir-opt"), f"--pass-pipeline={LOWER}", "-"], input=h,
                         capture_output=True, text=True)
    if low.returncode != 0:
        raise RuntimeError(low.stderr[-3000:])
    libs = f"{LLVM}/lib/libmlir_c_runner_utils.so,{LLVM}/lib/libmlir_runner_utils.so"
    r = subprocess.run([str(LLVM / "bin/mlir-runner"), "-e", "entry", "-entry-point-result=void",
                        f"-shared-libs={libs}"], input=low.stdout, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-3000:])
    blocks = r.stdout.split("Unranked Memref")[1:]
    out = []
    num = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)")
    for b in blocks:
        data = b.split("data =", 1)[1]
        out.append(np.array([float(x) for x in num.findall(data)], np.float64))
    return out


def compare(mlir_file: Path, data_dir: Path) -> list[tuple[str, float]]:
    """[(result name, normalised error max|a-b|/max|b|)] for every result."""
    man = json.loads((data_dir / "manifest.json").read_text())
    got = run(mlir_file, data_dir)
    if len(got) != len(man["outputs"]):
        raise RuntimeError(f"{len(got)} printed results, {len(man['outputs'])} expected")
    errs = []
    for g, e in zip(got, man["outputs"]):
        want = np.load(data_dir / e["file"]).astype(np.float64).reshape(-1)
        if g.size != want.size:
            raise RuntimeError(f"{e['name']}: {g.size} values printed, {want.size} expected")
        scale = max(np.max(np.abs(want)), 1e-30)
        errs.append((e["name"], float(np.max(np.abs(g - want)) / scale)))
    return errs
