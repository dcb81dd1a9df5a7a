"""Partition a JAX function with partir and run it on XLA, without touching MLIR:

    import partir_jax
    step = partir_jax.partition(train_step, (params, opt, tokens, targets),
                                mesh={"batch": 4, "model": 2}, schedule="BP_MP.toml",
                                arg_names=["params", "opt", "tokens", "targets"])
    params, opt, loss = step(params, opt, tokens, targets)   # global arrays in and out
    print(step.table)                                         # the per-tactic report

The function is exported as StableHLO as `jax.jit(fn).lower()` emits it (private functions
and calls kept: partir inlines them; arguments named by their pytree paths, e.g.
`params/layers/0/wq`), partitioned by the `partir` command line (`--stage xla`),
and compiled by XLA with one replica per mesh device; arguments are scattered and results
assembled by the shardings partir recorded. A schedule is a TOML path, or the same in Python:
a list of tactics `{"name": "BP", "axis": "batch", "tile": {"tokens": 0}}`.

Under `jax.distributed` (one process per host) every process makes the same call with the
same global values: the mesh is `jax.devices()` row-major across processes, each process
places its own devices' shards, and every process gets the whole outputs.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from . import importer, run_spmd, xla_run


def _partir_binary() -> str:
    """`$PARTIR`, else `partir` on PATH, else the repository's build (release, then debug)."""
    if os.environ.get("PARTIR"):
        return os.environ["PARTIR"]
    found = shutil.which("partir")
    if found:
        return found
    for profile in ("release", "debug"):
        candidate = importer.REPO_DIR / "target" / profile / "partir"
        if candidate.exists():
            return str(candidate)
    raise RuntimeError("partir not found: build it (cargo build --release), put it on PATH or set $PARTIR")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} in a schedule")


def schedule_toml(mesh: dict[str, int], tactics: Sequence[dict], expand: dict[str, dict] | None = None) -> str:
    """A schedule file from Python: the mesh (axes major to minor), fused dims seen as their
    factors (`expand`: selector -> {"dim": D, "sizes": [...]}) and tactics in order."""
    lines = ["mesh = " + _toml_value(dict(mesh))]
    if expand:
        lines += ["", "[expand]"] + [f"{_toml_value(selector)} = {_toml_value(dict(value))}"
                                     for selector, value in expand.items()]
    for tactic in tactics:
        lines += ["", "[[tactic]]"] + [f"{key} = {_toml_value(value)}" for key, value in tactic.items()]
    return "\n".join(lines) + "\n"


def _lowered(fn: Callable, args: tuple, arg_names: Sequence[str] | None,
             result_names: Sequence[str] | None) -> tuple[str, Any]:
    """`fn(*args)` as the StableHLO partir reads (generic form, arguments and results named by
    their pytree paths under `arg_names` / `result_names`), and its output shapes."""
    import jax

    out_shape = jax.eval_shape(fn, *args)
    outs = out_shape if isinstance(out_shape, tuple) else (out_shape,)
    in_names = importer.named_flat(args, list(arg_names) if arg_names else None)
    out_names = importer.named_flat(outs, list(result_names) if result_names
                                    else ["result"] if len(outs) == 1 else [f"result{i}" for i in range(len(outs))])
    spec = importer.ModelSpec(fn, args, list(arg_names) if arg_names else None,
                              list(result_names) if result_names else None)
    return importer._stablehlo_with_names(spec, in_names, out_names, generic=True), out_shape


def _partition_text(fn: Callable, text: str, schedule, sizes: dict[str, int], stage: str, device: str,
                    keep, expand: dict[str, dict] | None = None) -> tuple[str, dict, str]:
    """`partir partition --stage STAGE` of `text` with `schedule` (a file or tactics on a mesh of
    `sizes`): (the program, the report, partir's stderr). `keep` keeps the files there."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(keep) if keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        (work / "model.mlir").write_text(text)
        if isinstance(schedule, (str, os.PathLike)):
            shutil.copy(schedule, work / "schedule.toml")
        else:
            (work / "schedule.toml").write_text(schedule_toml(sizes, schedule, expand))
        command = [_partir_binary(), "partition", str(work / "model.mlir"), "--schedule", str(work / "schedule.toml"),
                   "--stage", stage, "--device", device, "-o", str(work / "partitioned.mlir"),
                   "--report", str(work / "report.json")]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"partir could not partition {getattr(fn, '__name__', 'the function')}:\n{done.stderr}")
        return ((work / "partitioned.mlir").read_text(), json.loads((work / "report.json").read_text()),
                done.stderr)


def _tactic_table(stderr: str) -> str:
    """The per-tactic table partir printed (header `  tactic ...` and its rows)."""
    lines, inside = [], False
    for line in stderr.splitlines():
        if line.lstrip().startswith("tactic "):
            inside = True
        elif inside and not line.startswith("  "):
            break
        if inside:
            lines.append(line)
    return "\n".join(lines)


def _same_on_every_process(program: str, fn: Callable) -> None:
    """Under `jax.distributed`, every process must run the same program: partir is
    deterministic (the same StableHLO and schedule give the same text), so a difference means
    the processes were given different functions, shapes, schedules or partir builds. Checked
    by a hash all-gather, so that every process raises rather than hanging in a collective."""
    import hashlib

    import jax
    import numpy as np

    if jax.process_count() == 1:
        return
    from jax.experimental import multihost_utils

    digest = np.frombuffer(hashlib.sha256(program.encode()).digest(), np.uint8)
    digests = np.asarray(multihost_utils.process_allgather(digest))
    differ = [p for p in range(len(digests)) if not np.array_equal(digests[p], digests[0])]
    if differ:
        raise RuntimeError(f"partir partitioned {getattr(fn, '__name__', 'the function')} differently in "
                           f"processes {differ} than in process 0: every process must make the same call "
                           "(function, argument shapes, schedule, mesh) with the same partir")


def _from_process_zero(make: Callable[[], dict]) -> dict:
    """`make()` (a JSON-able dict) as process 0 makes it, in every process under
    `jax.distributed`: the others wait for it rather than make their own. A RuntimeError in
    process 0 is raised in every process (none is left waiting for the others)."""
    import jax
    import numpy as np

    if jax.process_count() == 1:
        return make()
    from jax.experimental import multihost_utils

    data = np.zeros(0, np.uint8)
    if jax.process_index() == 0:
        try:
            said = {"made": make()}
        except RuntimeError as error:
            said = {"error": str(error)}
        data = np.frombuffer(json.dumps(said).encode(), np.uint8)
    # Every process must pass the same shape: the length first, then the bytes.
    length = int(multihost_utils.broadcast_one_to_all(np.int32(data.size)))
    padded = np.zeros(length, np.uint8)
    padded[:data.size] = data
    said = json.loads(bytes(np.asarray(multihost_utils.broadcast_one_to_all(padded))).decode())
    if "error" in said:
        raise RuntimeError(f"in process 0: {said['error']}")
    return said["made"]


class Partitioned:
    """A partitioned function: call it with the original's arguments (global arrays: under
    `jax.distributed`, the same host values in every process)."""

    def __init__(self, fn, compiled: xla_run.Compiled, in_tree, out_tree, program: str, report: dict, table: str):
        self._fn, self._compiled = fn, compiled
        self._in_tree, self._out_tree = in_tree, out_tree
        self.program, self.report, self.table = program, report, table

    @property
    def compile_seconds(self) -> float:
        return self._compiled.compile_seconds

    def __call__(self, *args):
        import jax

        leaves, tree = jax.tree_util.tree_flatten(args)
        if tree != self._in_tree:
            raise TypeError(f"arguments have structure {tree}, the partitioned function takes {self._in_tree}")
        outputs = self._compiled(list(leaves))
        return jax.tree_util.tree_unflatten(self._out_tree, outputs)


def partition(fn: Callable, args: Sequence[Any], mesh: dict[str, int], schedule: str | os.PathLike | Sequence[dict],
              arg_names: Sequence[str] | None = None, result_names: Sequence[str] | None = None,
              device: str = "tpu-v3", keep: str | os.PathLike | None = None,
              expand: dict[str, dict] | None = None) -> Partitioned:
    """Partitions `fn` (jittable, called as `fn(*args)`) with `schedule` on `mesh` and compiles
    it for XLA on the mesh's devices, the first of `jax.devices()` (under `jax.distributed`,
    every process's: each process makes this call, with the same arguments). `arg_names` name
    the top-level arguments (pytree paths below them follow); `keep` writes the StableHLO,
    schedule and partitioned module there. With a schedule given as tactics, `expand` sees
    fused dims as their factors (`[expand]`): callers still pass and get arrays of the
    original shapes."""
    import jax

    args = tuple(args)
    text, out_shape = _lowered(fn, args, arg_names, result_names)
    program, report, stderr = _partition_text(fn, text, schedule, mesh, "xla", device, keep, expand)
    table = _tactic_table(stderr)
    declared = xla_run._mesh(program)
    if dict(declared) != dict(mesh):
        raise ValueError(f"the schedule's mesh {dict(declared)} is not the mesh asked for {dict(mesh)}")
    _same_on_every_process(program, fn)
    compiled = xla_run.Compiled(program)
    in_tree = jax.tree_util.tree_structure(args)
    out_tree = jax.tree_util.tree_structure(out_shape)
    return Partitioned(fn, compiled, in_tree, out_tree, program, report, table)


class Shardings:
    """A schedule's plan as `jax.jit` shardings: `in_shardings` and `out_shardings` (pytrees of
    `NamedSharding` shaped like the arguments and outputs), the Shardy-annotated program
    (`sdy_program`, `partir partition --stage sdy`) and partir's report."""

    def __init__(self, in_shardings, out_shardings, mesh, sdy_program: str, report: dict, table: str):
        self.in_shardings, self.out_shardings, self.mesh = in_shardings, out_shardings, mesh
        self.sdy_program, self.report, self.table = sdy_program, report, table


def _partition_spec(dims):
    """`[["batch"], [], ["model", "x"]]` -> `PartitionSpec("batch", None, ("model", "x"))`."""
    from jax.sharding import PartitionSpec

    return PartitionSpec(*[None if not axes else axes[0] if len(axes) == 1 else tuple(axes) for axes in dims])


def shardings(fn: Callable, args: Sequence[Any], schedule: str | os.PathLike | Sequence[dict],
              mesh: dict[str, int] | Any, arg_names: Sequence[str] | None = None,
              result_names: Sequence[str] | None = None, device: str = "tpu-v3",
              keep: str | os.PathLike | None = None) -> Shardings:
    """The plan partir makes of `schedule` for `fn(*args)`, as what a user's own `jax.jit` takes:

        plan = partir_jax.shardings(step, args, "BP_MP.toml", mesh)
        step = jax.jit(step, in_shardings=plan.in_shardings, out_shardings=plan.out_shardings)

    `mesh` is a `jax.sharding.Mesh` (its axis names and sizes must be the schedule's) or a dict
    of axis sizes (a mesh of the first devices of `jax.devices()`, row-major, is made). XLA's
    partitioner then places everything between; `sdy_program` is the same plan with every split
    value constrained, for XLA to compile as it is. Under `jax.distributed` the jitted function
    takes global arrays, as any: `jax.device_put(args, plan.in_shardings)`."""
    import jax
    import numpy as np

    if isinstance(mesh, dict):
        count = int(np.prod(list(mesh.values())))
        devices = np.array(jax.devices()[:count])
        if devices.size < count:
            raise ValueError(f"the mesh {mesh} needs {count} devices, JAX has {devices.size}")
        mesh = jax.sharding.Mesh(devices.reshape(tuple(mesh.values())), tuple(mesh.keys()))
    sizes = dict(zip(mesh.axis_names, mesh.devices.shape))
    args = tuple(args)
    text, out_shape = _lowered(fn, args, arg_names, result_names)
    program, report, stderr = _partition_text(fn, text, schedule, sizes, "sdy", device, keep)
    declared = dict(xla_run._mesh(program))
    if declared != sizes:
        raise ValueError(f"the schedule's mesh {declared} is not the mesh given {sizes}")
    _same_on_every_process(program, fn)
    arg_dims, res_dims = run_spmd.shardings(program, xla_run._SHARDING)
    # jax.jit's shardings split dims evenly; a plan that pads a dim (docs/design.md#uneven-dims)
    # runs through `partition`, which pads and unpads around XLA.
    for what, tree, dims_of in (("argument", args, arg_dims), ("result", out_shape, res_dims)):
        leaves = jax.tree_util.tree_leaves(tree)
        names = importer.named_flat(tree, arg_names if what == "argument" else result_names)
        for name, leaf, dims in zip(names, leaves, dims_of):
            for dim, axes in enumerate(dims):
                ways = int(np.prod([sizes[axis] for axis in axes])) if axes else 1
                if np.shape(leaf)[dim] % ways:
                    raise ValueError(
                        f"{what} '{name}': the plan splits dim {dim} (size {np.shape(leaf)[dim]}) {ways} ways "
                        f"along {', '.join(axes)}, which does not divide it; partir pads it, but jax.jit's "
                        "shardings must divide the dims they split: run the plan with partir_jax.partition")
    named = lambda dims: jax.sharding.NamedSharding(mesh, _partition_spec(dims))  # noqa: E731
    in_shardings = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(args), [named(d) for d in arg_dims])
    out_shardings = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(out_shape),
                                                 [named(d) for d in res_dims])
    return Shardings(in_shardings, out_shardings, mesh, program, report, _tactic_table(stderr))


def auto(fn: Callable, args: Sequence[Any], mesh: dict[str, int] | Any,
         arg_names: Sequence[str] | None = None, result_names: Sequence[str] | None = None,
         device: str = "tpu-v3", memory: str | None = None, seed: int = 0,
         evaluations: int | None = None, keep: str | os.PathLike | None = None):
    """The automatic partitioner JAX no longer has: `partir auto` searches a plan for
    `fn(*args)` on `mesh` (priced on `device`, fitting `memory` per device, e.g. "16GiB"), and
    the plan comes back as what `jax.jit` takes:

        step, in_shardings, out_shardings, report = partir_jax.auto(step, args, mesh={"batch": 4, "model": 2})
        out = step(*args)            # jax.jit(step, in_shardings=..., out_shardings=...)

    `report` holds the searched schedule (`report["schedule"]`, TOML text a user can keep and
    edit), partir's report of it and the Shardy-annotated program. `evaluations` caps the plans
    priced per search phase (`partir auto --evaluations`). Under `jax.distributed` process 0
    searches and the others take its plan."""
    import jax

    if not isinstance(mesh, dict):
        mesh_sizes = dict(zip(mesh.axis_names, mesh.devices.shape))
    else:
        mesh_sizes = dict(mesh)
    args = tuple(args)
    text, out_shape = _lowered(fn, args, arg_names, result_names)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(keep) if keep else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        (work / "model.mlir").write_text(text)

        def search() -> dict:
            command = [_partir_binary(), "auto", str(work / "model.mlir"),
                       "--mesh", ",".join(f"{name}={size}" for name, size in mesh_sizes.items()),
                       "--device", device, "--seed", str(seed), "-o", str(work / "plan.toml")]
            if memory:
                command += ["--memory", memory]
            if evaluations:
                command += ["--evaluations", str(evaluations)]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"partir auto found no plan for {getattr(fn, '__name__', 'the function')}:\n"
                                   f"{done.stderr}")
            return {"schedule": (work / "plan.toml").read_text(), "search": done.stderr}

        # The search stops at a time limit, so processes searching each could find different
        # plans: process 0 searches, and every process takes its plan.
        searched = _from_process_zero(search)
        (work / "plan.toml").write_text(searched["schedule"])
        plan = shardings(fn, args, work / "plan.toml", mesh, arg_names=arg_names, result_names=result_names,
                         device=device)
    jitted = jax.jit(fn, in_shardings=plan.in_shardings, out_shardings=plan.out_shardings)
    report = {"schedule": searched["schedule"], "partir": plan.report, "sdy_program": plan.sdy_program,
              "table": plan.table, "search": searched["search"]}
    return jitted, plan.in_shardings, plan.out_shardings, report


def logical_schedule(logical: Any, rules: Sequence[tuple[str, Any]], mesh: dict[str, int] | Any,
                     names: Sequence[str] | None = None, storage: Sequence[str] = ()) -> list[dict]:
    """MaxText's `logical_axis_rules` (Flax's `logical_to_mesh_axes`) as a schedule's tactics.

    `logical` is a pytree shaped like the function's arguments whose leaves name each dim's
    logical axis (a tuple or `PartitionSpec` such as `("batch", "length")`, `("embed", "mlp")`;
    `None` for an argument left whole), `names` the top-level argument names (as
    `partition`'s `arg_names`); `rules` map logical axes to mesh axes
    (`[("batch", "data"), ("embed", "fsdp"), ("mlp", "tensor"), ("heads", "tensor")]`, a
    logical axis to several mesh axes with a tuple, the first rule of a logical axis naming a
    mesh axis of the mesh winning, as in Flax). One tactic per mesh axis, in the mesh's order,
    tiles every dim the rules put on it. The tactics on `storage` axes (FSDP's `"fsdp"`) tile
    only what is stored: `propagate = "elementwise"` (ZeRO), so a weight split there is
    gathered where it is used rather than splitting the computation.

        tactics = partir_jax.logical_schedule(logical_specs, rules, mesh, names=["params", "x"], storage=["fsdp"])
        step = partir_jax.partition(step, args, mesh, tactics, arg_names=["params", "x"])
    """
    import jax

    sizes = dict(mesh) if isinstance(mesh, dict) else dict(zip(mesh.axis_names, mesh.devices.shape))
    is_leaf = lambda leaf: leaf is None or isinstance(leaf, (tuple, jax.sharding.PartitionSpec))  # noqa: E731
    selectors, leaves = _logical_leaves(tuple(logical), names, is_leaf)
    table: dict[str, list[str]] = {}
    for logical_axis, mesh_axes in rules:
        if logical_axis in table:
            continue
        axes = [mesh_axes] if isinstance(mesh_axes, str) else list(mesh_axes or [])
        axes = [axis for axis in axes if axis in sizes]
        if axes:
            table[logical_axis] = axes
    tiles: dict[str, dict[str, int]] = {axis: {} for axis in sizes}
    for selector, leaf in zip(selectors, leaves):
        if leaf is None:
            continue
        for dim, logical_axis in enumerate(leaf):
            for axis in table.get(logical_axis, []) if isinstance(logical_axis, str) else []:
                tiles[axis][selector] = dim
    tactics = []
    for axis in sizes:
        if not tiles[axis]:
            continue
        tactic = {"name": f"logical-{axis}", "axis": axis, "tile": tiles[axis]}
        if axis in storage:
            tactic["propagate"] = "elementwise"
        tactics.append(tactic)
    return tactics


def _logical_leaves(logical: tuple, names: Sequence[str] | None, is_leaf) -> tuple[list[str], list]:
    """(selector, leaf) of every leaf of `logical` (one pytree per top-level argument), named as
    `importer.named_flat` names arguments: `names[i]` then the pytree path below it."""
    import jax

    selectors, leaves = [], []
    for index, tree in enumerate(logical):
        top = names[index] if names else (None if len(logical) == 1 else str(index))
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree, is_leaf=is_leaf)[0]:
            below = importer.keypath_to_name(path)
            selectors.append("/".join(part for part in (top, below) if part))
            leaves.append(leaf)
    return selectors, leaves
