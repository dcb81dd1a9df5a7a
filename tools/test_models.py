#!/usr/bin/env python3
"""Tests of the JAX importer, the model zoo fixtures, their data and their expert schedules.

Run: tools/.venv/bin/python tools/test_models.py [-k SUBSTRING] [--skip-regen]
Prints one line per test and finally `N passed, M failed`. Set PARTIR_TEST_LARGE=1 to also import
the 48-layer Transformer (slow: minutes).
"""
from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parent
sys.path.insert(0, str(TOOLS))

import numpy as np  # noqa: E402

from partir_jax import importer, models  # noqa: E402
from partir_jax import cli, run_mlir  # noqa: E402

MLIR_OPT = importer.MLIR_OPT_22
EXAMPLES = REPO / "examples"
MESH = {"batch": 4, "model": 2}
REQUIRED_SCHEDULES = {
    "mlp": ["BP", "MP", "Z2", "Z3", "BP_MP", "BP_MP_Z3"],
    "transformer": ["BP", "MP", "Z2", "Z3", "EMB", "BP_MP", "BP_MP_Z3"],
    "unet": ["BP", "MP", "Z2", "Z3", "BP_MP", "BP_MP_Z3"],
    "gns": ["BP", "MP", "Z2", "Z3", "BP_MP", "BP_MP_Z3"],
    "mqa": ["BP", "MP", "MQ", "EMB", "Z3", "BP_MP", "BP_MQ", "BP_MP_Z3"],
}
DTYPES = {"f32": "f32", "i32": "i32"}

TESTS = []


class Skip(Exception):
    pass


def test(fn):
    TESTS.append(fn)
    return fn


def mlir_opt(args, stdin=None):
    return subprocess.run([MLIR_OPT, *args], input=stdin, capture_output=True, text=True)


def fixture(model):
    return EXAMPLES / model / f"{model}.mlir"


def manifest(model):
    return json.loads((EXAMPLES / model / "data" / "manifest.json").read_text())


_sig_cache = {}


def main_signature(model):
    """[(name, type)] for @main's arguments and results, read from the generic form."""
    if model in _sig_cache:
        return _sig_cache[model]
    out = mlir_opt(["--mlir-print-op-generic", str(fixture(model))])
    assert out.returncode == 0, out.stderr
    line = next(l for l in out.stdout.splitlines() if '"func.func"' in l and 'sym_name = "main"' in l)
    ftype = re.search(r"function_type = \((.*?)\) -> (\(.*?\)|tensor<[^>]*>)", line)
    ins = re.findall(r"tensor<[^>]*>", ftype.group(1))
    outs = re.findall(r"tensor<[^>]*>", ftype.group(2))
    arg_attrs = re.search(r"arg_attrs = \[(.*?)\]", line).group(1)
    res_attrs = re.search(r"res_attrs = \[(.*?)\]", line).group(1)
    in_names = re.findall(r'\{partir\.name = "([^"]*)"\}', arg_attrs)
    out_names = re.findall(r'\{partir\.name = "([^"]*)"\}', res_attrs)
    assert len(in_names) == len(ins), (len(in_names), len(ins))
    assert len(out_names) == len(outs), (len(out_names), len(outs))
    _sig_cache[model] = (list(zip(in_names, ins)), list(zip(out_names, outs)))
    return _sig_cache[model]


def tensor_type(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + DTYPES[dtype] + ">"


def parse_type(t):
    body = t[len("tensor<"):-1].split("x")
    return [int(d) for d in body[:-1]], body[-1]


# ---------------------------------------------------------------------------------------------------
# fixtures


def per_model(fn):
    for m in models.MODELS:
        def t(m=m):
            fn(m)
        t.__name__ = f"{fn.__name__}[{m}]"
        TESTS.append(t)
    return fn


@per_model
def fixture_parses_in_mlir22(m):
    r = mlir_opt([str(fixture(m))])
    assert r.returncode == 0, r.stderr[-2000:]
    # and round-trips through MLIR 22's generic form
    g = mlir_opt(["--mlir-print-op-generic", str(fixture(m))])
    r2 = mlir_opt(["-"], stdin=g.stdout)
    assert r2.returncode == 0 and r2.stdout == r.stdout, "generic form does not round-trip"


@per_model
def fixture_only_upstream_f32(m):
    text = fixture(m).read_text()
    hist = importer.op_histogram(text)
    dialects = {k.split(".")[0] for k in hist}
    assert dialects <= importer.UPSTREAM_DIALECTS, dialects - importer.UPSTREAM_DIALECTS
    body = "\n".join(l for l in text.splitlines() if not l.startswith("//"))
    for bad in ("f16", "bf16", "f64", "iree", "util.", "flow.", "hal.", "stablehlo", "chlo", "mhlo"):
        assert bad not in body, f"{bad!r} in {m}.mlir"
    assert re.search(r"func\.func (public )?@main\(", body)
    assert fixture(m).stat().st_size < 1_000_000


@per_model
def fixture_names_match_manifest_and_pytree(m):
    ins, outs = main_signature(m)
    man = manifest(m)
    assert man["function"] == "main"
    assert [n for n, _ in ins] == [e["name"] for e in man["inputs"]]
    assert [n for n, _ in outs] == [e["name"] for e in man["outputs"]]
    for (n, t), e in zip(ins + outs, man["inputs"] + man["outputs"]):
        assert t == tensor_type(e["shape"], e["dtype"]), (n, t, e)
    # names equal the pytree paths of the zoo model's arguments and results
    spec, _ = models.spec(m, "small")
    pin, pout = cli._names(spec)
    assert [n for n, _ in ins] == pin
    assert [n for n, _ in outs] == pout
    assert len(set(pin)) == len(pin)


@per_model
def data_files_match_manifest(m):
    d = EXAMPLES / m / "data"
    man = manifest(m)
    files = {e["file"] for e in man["inputs"] + man["outputs"]}
    assert files == {p.name for p in d.glob("*.npy")}, "stray or missing .npy files"
    total = 0
    for e in man["inputs"] + man["outputs"]:
        raw = (d / e["file"]).read_bytes()
        total += len(raw)
        assert raw[:8] == b"\x93NUMPY\x01\x00", "not NumPy format v1.0"
        a = np.load(d / e["file"], allow_pickle=False)
        want = {"f32": "<f4", "i32": "<i4"}[e["dtype"]]
        assert a.dtype.str == want, (e, a.dtype.str)
        assert list(a.shape) == e["shape"], (e, a.shape)
        assert a.flags.c_contiguous and np.all(np.isfinite(a))
        assert len(raw) < 200_000, f"{e['file']} is {len(raw)} bytes"
    assert total < 3_000_000, f"data of {m} is {total} bytes"


# Normalised error bound (max|a-b|/max|b|) of MLIR 22's naive CPU loops against JAX's outputs. The UNet's
# conv-gradient sums (2048 terms with heavy cancellation) reach ~2e-4 in naive f32 loops, while XLA's
# result is within 1e-7 of an f64 reference; a wrong lowering gives errors of order 1.
RUN_BOUND = {"unet": 1e-3}


@per_model
def fixture_computes_jax_outputs(m):
    """Run the fixture with MLIR 22 (bufferize, loops, LLVM, mlir-runner) on the stored inputs."""
    errs = run_mlir.compare(fixture(m), EXAMPLES / m / "data")
    bound = RUN_BOUND.get(m, 1e-4)
    name, worst = max(errs, key=lambda t: t[1])
    print(f"    worst normalised error {worst:.1e} ({name}), bound {bound:.0e}")
    assert worst <= bound, errs


# ---------------------------------------------------------------------------------------------------
# schedules


def check_schedule(path: Path, arg_shapes: dict[str, list[int]]):
    text = path.read_text()
    assert text.startswith("#"), "schedule has no explanatory comment at the top"
    s = tomllib.loads(text)
    assert set(s) <= {"mesh", "tactic"}, set(s)
    assert s["mesh"] == MESH, s["mesh"]
    assert s["tactic"], "no tactic"
    split = {}  # (arg, dim) -> product of axis sizes tiled on it
    for t in s["tactic"]:
        assert set(t) <= {"name", "axis", "tile", "replicate", "propagate"}, set(t)
        assert t.get("propagate", "all") in {"all", "elementwise"}, t
        assert isinstance(t["name"], str) and t["axis"] in MESH, t
        for sel, dim in t.get("tile", {}).items():
            hits = fnmatch.filter(arg_shapes, sel)
            assert hits, f"{path.name}: selector {sel!r} matches no argument"
            assert isinstance(dim, int)
            for h in hits:
                shape = arg_shapes[h]
                assert 0 <= dim < len(shape), f"{path.name}: {sel!r} dim {dim} out of range for {h} {shape}"
                f = split.get((h, dim), 1) * MESH[t["axis"]]
                assert shape[dim] % f == 0, f"{path.name}: {h} dim {dim} ({shape[dim]}) not divisible by {f}"
                split[(h, dim)] = f
        for sel in t.get("replicate", []):
            assert fnmatch.filter(arg_shapes, sel), f"{path.name}: replicate {sel!r} matches no argument"
    return s


@per_model
def schedules_valid(m):
    ins, _ = main_signature(m)
    shapes = {n: parse_type(t)[0] for n, t in ins}
    files = sorted((EXAMPLES / m / "schedules").glob("*.toml"))
    names = {f.stem for f in files}
    missing = set(REQUIRED_SCHEDULES[m]) - names
    assert not missing, f"missing schedules {missing}"
    for f in files:
        check_schedule(f, shapes)


@test
def schedule_checker_rejects_bad_schedules():
    shapes = {"x": [32, 64], "params/w1": [64, 10]}
    bad = [
        'mesh = { batch = 4, model = 2 }\n[[tactic]]\nname = "BP"\naxis = "batch"\ntile = { "nothing*" = 0 }\n',
        'mesh = { batch = 4, model = 2 }\n[[tactic]]\nname = "MP"\naxis = "batch"\ntile = { "*w1" = 1 }\n',
        'mesh = { batch = 4, model = 2 }\n[[tactic]]\nname = "BP"\naxis = "nope"\ntile = { "x" = 0 }\n',
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for i, b in enumerate(bad):
            p = Path(tmp) / f"bad{i}.toml"
            p.write_text("# bad\n" + b)
            try:
                check_schedule(p, shapes)
            except (AssertionError, KeyError):
                continue
            raise AssertionError(f"bad schedule {i} accepted")


# ---------------------------------------------------------------------------------------------------
# importer


MLP_STABLEHLO = None


def small_stablehlo():
    import jax.numpy as jnp

    def f(p, x):
        h = jnp.tanh(x @ p["w"] + p["b"])
        return {"y": h, "s": jnp.sum(h * h)}

    spec = importer.ModelSpec(f, ({"w": jnp.ones((4, 8), jnp.float32), "b": jnp.zeros((8,), jnp.float32)},
                                  jnp.ones((2, 4), jnp.float32)), ["p", "x"], None)
    names_in, names_out = cli._names(spec)
    return spec, names_in, names_out, importer._stablehlo_with_names(spec, names_in, names_out)


@test
def iree_output_parses_in_mlir22():
    """IREE's raw output, in both its pretty and generic forms, parses in MLIR 22 unchanged."""
    _, names_in, names_out, shlo = small_stablehlo()
    assert "stablehlo." in shlo and 'partir.name = "p/w"' in shlo
    for extra in ([], ["--mlir-print-op-generic"]):
        r = subprocess.run([importer._iree_opt(), "--iree-stablehlo-input-transformation-pipeline", *extra, "-"],
                           input=shlo, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "stablehlo." not in r.stdout
        r22 = mlir_opt(["-"], stdin=r.stdout)
        assert r22.returncode == 0, r22.stderr
        for n in names_in + names_out:
            assert f'partir.name = "{n}"' in r22.stdout, n


@test
def importer_names_results_and_rejects_non_upstream():
    spec, names_in, names_out, _ = small_stablehlo()
    assert names_in == ["p/b", "p/w", "x"], names_in
    assert names_out == ["result/s", "result/y"], names_out
    try:
        importer.check_upstream('%0 = "iree_linalg_ext.scatter"(%a) : () -> ()\n')
    except importer.ImportError_ as e:
        assert "iree_linalg_ext.scatter" in str(e)
    else:
        raise AssertionError("iree_linalg_ext op accepted")


@test
def import_custom_module_cli():
    """tools/import-jax --module FILE.py imports a user's JAX function, from any cwd."""
    src = '''
import jax, jax.numpy as jnp
def make_spec(n=8):
    def step(params, batch):
        loss = lambda p: jnp.mean((batch["x"] @ p["w"] - batch["y"]) ** 2)
        l, g = jax.value_and_grad(loss)(params)
        return jax.tree.map(lambda a, b: a - 0.1 * b, params, g), l
    params = {"w": jnp.full((n, 4), 0.5, jnp.float32)}
    batch = {"x": jnp.arange(16 * n, dtype=jnp.float32).reshape(16, n) / 100, "y": jnp.ones((16, 4), jnp.float32)}
    return step, (params, batch), ["params", "batch"], ["params", "loss"]
'''
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "mine.py").write_text(src)
        r = subprocess.run([str(TOOLS / "import-jax"), "--module", "mine.py", "--set", "n=12", "-o", "out/m.mlir",
                            "--data", "out/data"], cwd=tmp, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        text = (Path(tmp) / "out/m.mlir").read_text()
        assert mlir_opt([str(Path(tmp) / "out/m.mlir")]).returncode == 0
        for n in ("params/w", "batch/x", "batch/y", "loss"):
            assert f'partir.name = "{n}"' in text, n
        assert "tensor<12x4xf32>" in text
        man = json.loads((Path(tmp) / "out/data/manifest.json").read_text())
        assert [e["name"] for e in man["inputs"]] == ["params/w", "batch/x", "batch/y"]
        w = np.load(Path(tmp) / "out/data" / man["outputs"][0]["file"])
        assert w.shape == (12, 4) and not np.allclose(w, 0.5)


@test
def regenerate_reproduces_fixtures_byte_for_byte():
    """The fixtures, their data and manifests are reproduced exactly (JAX on CPU is deterministic)."""
    if "--skip-regen" in sys.argv:
        raise Skip("--skip-regen")
    r = subprocess.run([str(TOOLS / "regen-fixtures"), "--check"], capture_output=True, text=True, cwd="/")
    assert r.returncode == 0, r.stdout + r.stderr


def large_transformer_on_demand():
    spec, kw = models.spec("transformer", "48layers")
    with tempfile.TemporaryDirectory() as tmp:
        info = importer.import_spec(spec, Path(tmp) / "t48.mlir")
        assert info["ops"] > 20000, info
        assert mlir_opt([str(Path(tmp) / "t48.mlir")]).returncode == 0


if os.environ.get("PARTIR_TEST_LARGE"):
    test(large_transformer_on_demand)


@test
def lit_tests_exist_for_every_model():
    for m in models.MODELS:
        t = REPO / "test" / "Models" / f"{m}-parses.test"
        assert t.exists(), t
        text = t.read_text()
        assert "RUN:" in text and "CHECK" in text
        for line in text.splitlines():
            if re.match(r"^\s*(//|#)\s*(RUN|CHECK[A-Z-]*)\b", line):
                assert re.match(r"^\s*(//|#)\s*(RUN|CHECK[A-Z-]*):", line), f"directive without colon: {line}"


def main():
    only = None
    if "-k" in sys.argv:
        only = sys.argv[sys.argv.index("-k") + 1]
    passed = failed = skipped = 0
    for t in TESTS:
        if only and only not in t.__name__:
            continue
        t0 = time.time()
        try:
            t()
        except Skip as e:
            skipped += 1
            print(f"skip {t.__name__} ({e})")
        except Exception:
            failed += 1
            print(f"FAIL {t.__name__}")
            traceback.print_exc()
        else:
            passed += 1
            print(f"ok   {t.__name__} ({time.time() - t0:.1f}s)")
        sys.stdout.flush()
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
