"""Runs a StableHLO module on XLA's CPU devices, as `partir verify --xla` needs it: the original
program on one device (in f32, and its f64 twin: every f32 made f64, the reference), and a
partitioned SPMD module from `partir-export-stablehlo` on N devices, one replica per device
(replica r holds the mesh coordinates of r, row-major). Inputs are global arrays; each replica
gets its shard by the argument's `partir.sharding` and the module's `partir.mesh`, and outputs
are assembled by the results' shardings.

    python -m partir_jax.xla_run --program M.mlir --inputs DIR --out DIR [--f64]

DIR holds arg0.npy, arg1.npy, ... (global, in @main's order); results are written as
res0.npy, ... (global). The number of devices is the module's `mhlo.num_replicas` (1 without).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import numpy as np

from . import run_spmd

# `partir.sharding = "[{\22batch\22}, {}]"`, as partir-export-stablehlo writes it.
_SHARDING = re.compile(r'partir\.sharding = "\[((?:[^"\\]|\\.)*)\]"')


# `partir.view_of = array<i64: 192, 64>`: the argument or result is the caller's array of this
# shape, read row-major as the program's (a fused dim seen as its factors, partir-expand-dim).
_VIEW_OF = re.compile(r"partir\.view_of = array<i64: ([0-9, ]*)>")


# `partir.padded_from = array<i64: 6, 8>`: the argument or result is the caller's array of this
# shape with zeros at the end of each dim (a dim an axis does not divide, partir-tile's padding).
_PADDED_FROM = re.compile(r"partir\.padded_from = array<i64: ([0-9, ]*)>")


# `partir.padding = array<i64: 0, 2, 128, 129>`: how the caller's array was padded, step by
# step, in groups of 4 (dim, chunks, from, to): the dim read as `chunks` equal chunks, each grown
# from `from` to `to` with zeros at its end (a dim split already, each of its tiles padded).
_PADDING = re.compile(r"partir\.padding = array<i64: ([0-9, ]*)>")


def pad_steps(value: np.ndarray, steps: tuple) -> np.ndarray:
    """The caller's `value` padded as `partir.padding`'s `steps` say."""
    for at in range(0, len(steps), 4):
        dim, chunks, start, to = steps[at:at + 4]
        shape = value.shape
        value = value.reshape(shape[:dim] + (chunks, start) + shape[dim + 1:])
        widths = [(0, 0)] * value.ndim
        widths[dim + 1] = (0, to - start)
        value = np.pad(value, widths).reshape(shape[:dim] + (chunks * to,) + shape[dim + 1:])
    return value


def unpad_steps(value: np.ndarray, steps: tuple) -> np.ndarray:
    """`value` with `partir.padding`'s `steps` undone, last first: the caller's array."""
    for at in reversed(range(0, len(steps), 4)):
        dim, chunks, start, to = steps[at:at + 4]
        shape = value.shape
        value = value.reshape(shape[:dim] + (chunks, to) + shape[dim + 1:])
        value = value[(slice(None),) * (dim + 1) + (slice(0, start),)]
        value = value.reshape(shape[:dim] + (chunks * start,) + shape[dim + 1:])
    return value


def views(text: str, attribute=_VIEW_OF) -> tuple[list, list]:
    """(per argument, per result) of @main: (its type's shape, the caller's shape
    (`partir.view_of`, or the `attribute` given) or None)."""
    args, rest = run_spmd.signature(text)
    args = args[len("@main("):]

    def each(segment: str) -> list:
        out = []
        for piece in re.split(r"(?=tensor<)", segment)[1:]:
            found = attribute.search(piece)
            shape = re.match(r"tensor<((?:\d+x)*)", piece).group(1)
            out.append((tuple(int(size) for size in shape.split("x") if size),
                        tuple(int(size) for size in found.group(1).split(",")) if found else None))
        return out

    return each(args), each(rest)


def _mesh(text: str) -> list[tuple[str, int]]:
    found = re.search(r'partir\.mesh = "([^"]*)"', text)
    if not found or not found.group(1):
        return []
    return [(name, int(size)) for name, size in (axis.split("=") for axis in found.group(1).split(","))]


def _coordinates(replica: int, mesh: list[tuple[str, int]]) -> dict[str, int]:
    coords, rest = {}, replica
    for name, size in reversed(mesh):
        coords[name] = rest % size
        rest //= size
    return coords


def _chunk(dims, mesh, replica):
    """The index ranges of `replica`'s shard: per dim, (index along the dim's axes, count)."""
    coords, sizes = _coordinates(replica, mesh), dict(mesh)
    out = []
    for axes in dims:
        index, count = 0, 1
        for axis in axes:
            index = index * sizes[axis] + coords[axis]
            count *= sizes[axis]
        out.append((index, count))
    return out


def shard(value: np.ndarray, dims, mesh, replica: int) -> np.ndarray:
    if dims is None or not dims:
        return value
    return value[_shard_index(value, dims, mesh, replica)]


def _shard_index(value: np.ndarray, dims, mesh, replica: int) -> tuple:
    slices = []
    for d, (index, count) in enumerate(_chunk(dims, mesh, replica)):
        size = value.shape[d] // count
        slices.append(slice(index * size, (index + 1) * size))
    return tuple(slices)


def assemble(shards: list[np.ndarray], dims, mesh) -> np.ndarray:
    if not dims:  # rank 0 (XLA hands a scalar out as one element)
        return shards[0].reshape(())
    if all(not axes for axes in dims):
        return shards[0]
    local = shards[0].shape
    full = [local[d] * _chunk(dims, mesh, 0)[d][1] for d in range(len(local))]
    out = np.empty(full, dtype=shards[0].dtype)
    for replica, piece in enumerate(shards):
        index = tuple(slice(i * local[d], (i + 1) * local[d]) for d, (i, _) in enumerate(_chunk(dims, mesh, replica)))
        out[index] = piece
    return out


def _compile(text: str, count: int, partitions: bool):
    """`text` compiled by XLA's CPU backend over `count` devices, as replicas (partir's export)
    or as one SPMD program's partitions (Shardy partitions it): (executable, devices).
    Replica r is `jax.devices()[r]`, the global order: under `jax.distributed` the devices of
    every process, so mesh device r is the same device however many processes hold them."""
    from jax._src import xla_bridge
    from jax._src.lib import xla_client

    backend = xla_bridge.get_backend("cpu")
    devices = backend.devices()[:count]
    if len(devices) < count:
        raise SystemExit(f"xla_run: the module needs {count} devices, XLA has {len(devices)} "
                         "(XLA_FLAGS=--xla_force_host_platform_device_count=N, per process)")
    if not any(device.process_index == backend.process_index() for device in devices):
        raise SystemExit(f"xla_run: the module's {count} devices (the first of jax.devices()) include none of "
                         f"process {backend.process_index()}'s: every process must hold some of the mesh")
    options = xla_client.CompileOptions()
    build = options.executable_build_options
    build.num_replicas = 1 if partitions else count
    build.num_partitions = count if partitions else 1
    if partitions:
        build.use_spmd_partitioning = True
        build.use_shardy_partitioner = True
    shape = (1, count) if partitions else (count, 1)
    # Device ids, not positions: another process's CPU devices are numbered from 2048 up.
    ids = np.array([device.id for device in devices])
    build.device_assignment = xla_client.DeviceAssignment.create(ids.reshape(shape))
    return backend.compile_and_load(text, xla_client.DeviceList(tuple(devices)), options), devices


def compile_replicas(text: str, replicas: int):
    """`text` compiled by XLA's CPU backend with one replica per device: (executable, devices)."""
    return _compile(text, replicas, partitions=False)


def compile_partitions(text: str, partitions: int):
    """`text` (annotated for XLA's partitioner: `sdy.mesh`, `sdy.sharding`) compiled by XLA's
    CPU backend as one SPMD program over `partitions` devices, partitioned by Shardy:
    (executable, devices). Partition r is device r, at the mesh's row-major coordinates."""
    return _compile(text, partitions, partitions=True)


class Compiled:
    """A StableHLO module compiled by XLA for its replicas (`mhlo.num_replicas`, one CPU device
    each), called with global arrays: each replica gets its shard by the arguments'
    `partir.sharding`, and results are assembled by theirs. `compile_seconds` is XLA's time."""

    def __init__(self, text: str):
        import time

        import jax

        replicas_match = re.search(r"mhlo\.num_replicas = (\d+)", text)
        self.replicas = int(replicas_match.group(1)) if replicas_match else 1
        # A Shardy-annotated program (`partir partition --stage sdy`) is one program over
        # partitions; its devices are numbered as the replicas of partir's own export.
        # (A program that only carries a user's own annotations, no partir mesh, is an
        # original: it runs on one device.)
        self.shardy = "sdy.mesh" in text and "partir.mesh = " in text
        if self.shardy:
            self.replicas = int(re.search(r"mhlo\.num_partitions = (\d+)", text).group(1))
        self.mesh = _mesh(text)
        if "partir.sharding" in text:
            self.arg_shardings, self.res_shardings = run_spmd.shardings(text, _SHARDING)
        else:  # one device (the original): every value whole
            self.arg_shardings, self.res_shardings = None, None
        self.arg_views, self.res_views = views(text) if "@main(" in text else ([], [])
        self.arg_pads, self.res_pads = views(text, _PADDED_FROM) if "@main(" in text else ([], [])
        self.arg_steps, self.res_steps = views(text, _PADDING) if "@main(" in text else ([], [])
        started = time.perf_counter()
        compile_for = compile_partitions if self.shardy else compile_replicas
        self.executable, self.devices = compile_for(text, self.replicas)
        self.compile_seconds = time.perf_counter() - started
        # Each device's buffer is its replica's argument: declared "replicated" over a 1-D mesh
        # of the replicas (JAX does not look at the contents), which is how the executable,
        # compiled with one replica per device, reads per-device buffers.
        replicas = jax.sharding.Mesh(np.array(self.devices), ("replica",))
        self._everywhere = jax.sharding.NamedSharding(replicas, jax.sharding.PartitionSpec())
        # Under `jax.distributed` a process places and reads only its own devices' replicas
        # (`_mine`); results are gathered as one array split by replica (`_stacked`).
        self._mine = [r for r, device in enumerate(self.devices) if device.process_index == jax.process_index()]
        self._stacked = jax.sharding.NamedSharding(replicas, jax.sharding.PartitionSpec("replica"))
        self._gather_all = None

    def place(self, inputs: list[np.ndarray]) -> list:
        """The per-device arguments, ready for `execute`."""
        import jax

        shardings = self.arg_shardings or [None] * len(inputs)
        arrays = []
        for index, (value, dims) in enumerate(zip(inputs, shardings)):
            if isinstance(value, jax.Array) and not value.is_fully_addressable:
                raise TypeError(f"argument {index} is a jax.Array spread over processes: each process passes "
                                "the whole (global) value, e.g. multihost_utils.process_allgather(x)")
            value = np.asarray(value)
            if index < len(self.arg_views) and self.arg_views[index][1] is not None:
                # The caller's array is the argument read row-major: its expanded shape is
                # the local shape times the devices splitting each dim.
                local = self.arg_views[index][0]
                counts = [c for _, c in _chunk(dims, self.mesh, 0)] if dims else [1] * len(local)
                value = value.reshape([size * count for size, count in zip(local, counts)])
            if index < len(self.arg_steps) and self.arg_steps[index][1] is not None:
                value = pad_steps(value, self.arg_steps[index][1])
            elif index < len(self.arg_pads) and self.arg_pads[index][1] is not None:
                # The caller's array with zeros at the end of each padded dim: the program's
                # global shape is the local shape times the devices splitting each dim.
                local = self.arg_pads[index][0]
                counts = [c for _, c in _chunk(dims, self.mesh, 0)] if dims else [1] * len(local)
                value = np.pad(value, [(0, size * count - have)
                                       for size, count, have in zip(local, counts, value.shape)])
            pieces = [jax.device_put(shard(value, dims, self.mesh, r), self.devices[r]) for r in self._mine]
            shape = shard(value, dims, self.mesh, 0).shape
            arrays.append(jax.make_array_from_single_device_arrays(shape, self._everywhere, pieces))
        return arrays

    def execute(self, placed: list) -> list[list]:
        """One step on placed arguments: per result, this process's per-device buffers (not yet
        copied; in replica order in one process)."""
        return self.executable.execute_sharded(placed).disassemble_into_single_device_arrays()

    def _all_replicas(self, results: list[list]) -> list[list[np.ndarray]]:
        """Per result, every replica's piece: copied from this process's devices, and under
        `jax.distributed` the other processes' too (every process gets all of them)."""
        if len(self._mine) == self.replicas:
            return [[np.asarray(piece) for piece in per_device] for per_device in results]
        import jax

        # One all-gather of bytes: each replica's pieces end to end as one row of a
        # [replicas, bytes] array split by replica, gathered to every device. (One array per
        # result, as multihost_utils.process_allgather does, costs a collective each.)
        owner = {device: r for r, device in enumerate(self.devices)}
        mine = [{owner[piece.device]: np.asarray(piece) for piece in per_device} for per_device in results]
        layout = [(pieces[self._mine[0]].shape, pieces[self._mine[0]].dtype) for pieces in mine]
        rows = [jax.device_put(np.concatenate([pieces[r].reshape(-1).view(np.uint8) for pieces in mine])[None],
                               self.devices[r]) for r in self._mine]
        stacked = jax.make_array_from_single_device_arrays((self.replicas, rows[0].shape[1]), self._stacked, rows)
        if self._gather_all is None:
            self._gather_all = jax.jit(lambda value: value, out_shardings=self._everywhere)
        every = np.asarray(self._gather_all(stacked).addressable_data(0))
        out, offset = [], 0
        for shape, dtype in layout:
            size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            # Copies: a view would be unaligned and keep all of `every` alive.
            out.append([every[r, offset:offset + size].view(dtype).reshape(shape).copy()
                        for r in range(self.replicas)])
            offset += size
        return out

    def gather(self, results: list[list]) -> list[np.ndarray]:
        if self.res_shardings is None:
            return [np.asarray(per_device[0]) for per_device in results]
        out = [assemble(pieces, dims, self.mesh)
               for pieces, dims in zip(self._all_replicas(results), self.res_shardings)]
        out = [unpad_steps(value, self.res_steps[index][1])
               if index < len(self.res_steps) and self.res_steps[index][1]
               else value[tuple(slice(0, size) for size in self.res_pads[index][1])]
               if index < len(self.res_pads) and self.res_pads[index][1] else value
               for index, value in enumerate(out)]
        return [value.reshape(self.res_views[index][1])
                if index < len(self.res_views) and self.res_views[index][1] else value
                for index, value in enumerate(out)]

    def __call__(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return self.gather(self.execute(self.place(inputs)))


def run(text: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return Compiled(text)(inputs)


# A constant JAX prints as raw little-endian bytes: `dense<"0x0000803F..."> : tensor<4x8xf32>`.
_HEX_F32 = re.compile(r'dense<"0x([0-9A-Fa-f]+)">(\s*:\s*tensor<(?:[0-9]+x)*)f32>')


def _widen_hex(match: re.Match) -> str:
    wide = np.frombuffer(bytes.fromhex(match.group(1)), dtype="<f4").astype("<f8")
    return f'dense<"0x{wide.tobytes().hex().upper()}">{match.group(2)}f64>'


def widen(text: str) -> str:
    """The f64 twin: every f32 made f64 (types, constants, converts)."""
    # Raw-byte constants first: their bytes must become f64's, not just their type.
    text = _HEX_F32.sub(_widen_hex, text)
    # `f32` alone or as a shaped type's element (`32x64xf32`).
    return re.sub(r"(?<![A-Za-wyz0-9_])f32\b", "f64", text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--program", required=True)
    parser.add_argument("--inputs", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--f64", action="store_true", help="run the f64 twin (inputs widened)")
    args = parser.parse_args(argv)
    text = Path(args.program).read_text()
    count = len(list(args.inputs.glob("arg*.npy")))
    inputs = [np.load(args.inputs / f"arg{i}.npy") for i in range(count)]
    if args.f64:
        import jax
        jax.config.update("jax_enable_x64", True)
        text = widen(text)
        inputs = [x.astype(np.float64) if x.dtype == np.float32 else x for x in inputs]
    args.out.mkdir(parents=True, exist_ok=True)
    for i, value in enumerate(run(text, inputs)):
        np.save(args.out / f"res{i}.npy", np.ascontiguousarray(value))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    sys.exit(main())
