"""Scatters as loops: every `stablehlo.scatter` of a program replaced by a call of a function that
applies its updates one element at a time, in a `stablehlo.while`, as the StableHLO spec defines
a scatter. Why: IREE's StableHLO input pipeline lowers a scatter only into its own dialect
(`iree_linalg_ext.scatter`), which MLIR 22's CPU pipeline cannot lower, so a program with one (a
published model's embedding gradient, `take_along_axis`'s transpose) could not run on MPI ranks;
a while of dynamic slices and updates is StableHLO that IREE converts to `scf` and `tensor`.

For each element `u` of the updates (row-major), with the spec's names:

    update_scatter_index = u at the dims not in update_window_dims
    start_index          = the index vector of scatter_indices at update_scatter_index
    result_index[d]      = start_index[j]           if d = scatter_dims_to_operand_dims[j]
                         + update_scatter_index[.]  if d is an input batching dim
                         + u[update_window_dims[w]] if d is the w-th window dim of the operand
    result[result_index] = combiner(result[result_index], updates[u])   when in bounds

The combiner is the scatter's body when it is one binary op of (current, update) or returns one
of them (`.at[].set`); anything else is left to IREE (and refused there, with its reason). One
element per iteration is slow for big scatters and fine for what runs on ranks (tests, small
widths); a scatter of N updates takes N iterations.

    python -m partir_jax.scatter_loops --check PROGRAM.mlir ... [--plant]

checks the rewrite on XLA: each program's outputs with its scatters as loops against the program
as it is, on random inputs, judged against the program's own f32 rounding (its f64 twin as the
reference). `--plant` plants a bug (every combiner made an overwrite), which the check must catch.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

I64 = "tensor<i64>"
I1 = "tensor<i1>"


def _tensor(shape, element: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def _i64s(values) -> str:
    values = list(values)
    return "array<i64: " + ", ".join(map(str, values)) + ">" if values else "array<i64>"


class _Text:
    """Generic-form StableHLO lines with fresh SSA names."""

    def __init__(self):
        self.lines: list[str] = []
        self.count = 0

    def value(self, rhs: str) -> str:
        self.count += 1
        name = f"%v{self.count}"
        self.lines.append(f"      {name} = {rhs}")
        return name

    def constant(self, value, ty: str = I64) -> str:
        return self.value(f'"stablehlo.constant"() <{{value = dense<{value}> : {ty}}}> : () -> {ty}')

    def binary(self, op: str, a: str, b: str, ty: str = I64) -> str:
        return self.value(f'"{op}"({a}, {b}) : ({ty}, {ty}) -> {ty}')

    def compare(self, direction: str, a: str, b: str) -> str:
        return self.value(f'"stablehlo.compare"({a}, {b}) <{{comparison_direction = '
                          f'#stablehlo<comparison_direction {direction}>}}> : ({I64}, {I64}) -> {I1}')

    def element(self, x: str, shape, element: str, at: list[str]) -> str:
        """`x[at]` as a scalar tensor."""
        ones = [1] * len(shape)
        block = self.value(f'"stablehlo.dynamic_slice"({", ".join([x, *at])}) <{{slice_sizes = {_i64s(ones)}}}> : '
                           f'({", ".join([_tensor(shape, element), *[I64] * len(at)])}) -> {_tensor(ones, element)}')
        return self.value(f'"stablehlo.reshape"({block}) : ({_tensor(ones, element)}) -> {_tensor([], element)}')

    def sum(self, terms: list[str]) -> str:
        if not terms:
            return self.constant(0)
        total = terms[0]
        for term in terms[1:]:
            total = self.binary("stablehlo.add", total, term)
        return total


class Unsupported(Exception):
    pass


def _combiner(op) -> str:
    """How the scatter's body combines `%old` (the operand's element) and `%new` (the update):
    an expression template with {old} and {new}, and {ty}."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    old, new = block.arguments[0], block.arguments[1]
    returned = ops[-1].operands[0] if ops and len(ops[-1].operands) == 1 else None
    if len(ops) == 1 and returned in (old, new):
        return "{new}" if returned == new else "{old}"
    if len(ops) == 2 and len(ops[0].operands) == 2 and returned == ops[0].results[0]:
        names = {old: "{old}", new: "{new}"}
        if all(operand in names for operand in ops[0].operands):
            a, b = (names[operand] for operand in ops[0].operands)
            return f'"{ops[0].name}"({a}, {b}) : ({{ty}}, {{ty}}) -> {{ty}}'
    raise Unsupported("its combiner is not one binary op of the current value and the update")


def _loop_function(name: str, op, plant: bool) -> str:
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo

    if len(op.operands) != 3 or len(op.results) != 1:
        raise Unsupported("it scatters several operands at once")
    types = [ir.RankedTensorType(operand.type) for operand in op.operands]
    if not all(t.has_static_shape for t in types):
        raise Unsupported("a shape is dynamic")
    (operand, indices, updates) = [list(t.shape) for t in types]
    element, index_element = str(types[0].element_type), str(types[1].element_type)
    numbers = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    window_dims = list(numbers.update_window_dims)
    inserted = list(numbers.inserted_window_dims)
    operand_batching = list(numbers.input_batching_dims)
    indices_batching = list(numbers.scatter_indices_batching_dims)
    to_operand = list(numbers.scattered_dims_to_operand_dims)
    vector_dim = numbers.index_vector_dim
    combine = "{new}" if plant else _combiner(op)

    ot, it, ut = (_tensor(operand, element), _tensor(indices, index_element), _tensor(updates, element))
    scalar = _tensor([], element)
    body = _Text()
    k = "%k"
    # The update's coordinates, row-major from the counter.
    u = []
    for d, size in enumerate(updates):
        stride = math.prod(updates[d + 1:])
        q = k if stride == 1 else body.binary("stablehlo.divide", k, body.constant(stride))
        u.append(q if d == 0 else body.binary("stablehlo.remainder", q, body.constant(size)))
    scatter_index = [u[d] for d in range(len(updates)) if d not in window_dims]
    # The index vector's components.
    start = []
    for component in range(len(to_operand)):
        coordinates, rest = [], iter(scatter_index)
        for j in range(len(indices)):
            coordinates.append(body.constant(component) if j == vector_dim else next(rest))
        value = body.element("%indices", indices, index_element, coordinates)
        if index_element != "i64":
            value = body.value(f'"stablehlo.convert"({value}) : ({_tensor([], index_element)}) -> {I64}')
        start.append(value)
    window_operand_dims = [d for d in range(len(operand)) if d not in inserted and d not in operand_batching]
    at, fits = [], []
    for d in range(len(operand)):
        terms = []
        if d in to_operand:
            terms.append(start[to_operand.index(d)])
        if d in operand_batching:
            j = indices_batching[operand_batching.index(d)]
            terms.append(scatter_index[j if j < vector_dim else j - 1])
        if d in window_operand_dims:
            terms.append(u[window_dims[window_operand_dims.index(d)]])
        index = body.sum(terms)
        at.append(index)
        fits.append(body.compare("GE", index, body.constant(0)))
        fits.append(body.compare("LT", index, body.constant(operand[d])))
    inside = fits[0] if fits else body.constant("true", I1)
    for fit in fits[1:]:
        inside = body.binary("stablehlo.and", inside, fit, I1)
    old = body.element("%r", operand, element, at)
    new = body.element("%updates", updates, element, u)
    if combine in ("{new}", "{old}"):
        combined = new if combine == "{new}" else old
    else:
        combined = body.value(combine.format(old=old, new=new, ty=scalar))
    chosen = body.value(f'"stablehlo.select"({inside}, {combined}, {old}) : ({I1}, {scalar}, {scalar}) -> {scalar}')
    ones = _tensor([1] * len(operand), element)
    block = body.value(f'"stablehlo.reshape"({chosen}) : ({scalar}) -> {ones}')
    written = body.value(f'"stablehlo.dynamic_update_slice"({", ".join(["%r", block, *at])}) : '
                         f'({", ".join([ot, ones, *[I64] * len(at)])}) -> {ot}')
    following = body.binary("stablehlo.add", k, body.constant(1))
    total = math.prod(updates)
    return "\n".join([
        f'  "func.func"() <{{function_type = ({ot}, {it}, {ut}) -> {ot}, sym_name = "{name}", '
        f'sym_visibility = "private"}}> ({{',
        f"  ^bb0(%operand: {ot}, %indices: {it}, %updates: {ut}):",
        f'    %start = "stablehlo.constant"() <{{value = dense<0> : {I64}}}> : () -> {I64}',
        f'    %loop:2 = "stablehlo.while"(%start, %operand) ({{',
        f"    ^bb0(%k: {I64}, %r: {ot}):",
        f'      %n = "stablehlo.constant"() <{{value = dense<{total}> : {I64}}}> : () -> {I64}',
        f'      %more = "stablehlo.compare"(%k, %n) <{{comparison_direction = #stablehlo<comparison_direction LT>}}> : '
        f"({I64}, {I64}) -> {I1}",
        f'      "stablehlo.return"(%more) : ({I1}) -> ()',
        "    }, {",
        f"    ^bb0(%k: {I64}, %r: {ot}):",
        *body.lines,
        f'      "stablehlo.return"({following}, {written}) : ({I64}, {ot}) -> ()',
        f"    }}) : ({I64}, {ot}) -> ({I64}, {ot})",
        f'    "func.return"(%loop#1) : ({ot}) -> ()',
        "  }) : () -> ()",
    ])


def rewrite(text: str, plant: bool = False) -> tuple[str, list[str]]:
    """`text` with its scatters as loops (generic form), and why any scatter was left as it is.
    A program without scatters comes back unchanged."""
    if '"stablehlo.scatter"' not in text and "stablehlo.scatter " not in text:
        return text, []
    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import func

    context = jax_mlir.make_ir_context()
    context.allow_unregistered_dialects = True
    left = []
    with context, ir.Location.unknown():
        module = ir.Module.parse(text)
        scatters = []

        def find(op):
            if op.name == "stablehlo.scatter":
                scatters.append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(find)
        for number, scatter in enumerate(scatters):
            name = f"partir_scatter_loop_{number}"
            try:
                function = _loop_function(name, scatter, plant)
            except Unsupported as reason:
                left.append(f"{scatter.location}: {reason}")
                continue
            parsed = ir.Module.parse('"builtin.module"() ({\n' + function + "\n}) : () -> ()")
            callee = parsed.body.operations[0]
            callee.detach_from_parent()
            module.body.append(callee)
            with ir.InsertionPoint(scatter), scatter.location:
                call = func.CallOp([scatter.results[0].type], ir.FlatSymbolRefAttr.get(name),
                                   list(scatter.operands))
            scatter.results[0].replace_all_uses_with(call.results[0])
            scatter.erase()
        return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True), left


def _check(path: Path, plant: bool, seed: int = 0) -> tuple[bool, str]:
    import jax

    from . import xla_run

    jax.config.update("jax_enable_x64", True)  # the f64 twin
    text = path.read_text()
    looped, left = rewrite(text, plant)
    if left:
        return False, f"{path}: scatters left: {left}"
    if looped == text:
        return False, f"{path}: no scatter to rewrite"
    from jaxlib.mlir import ir
    from jax._src.interpreters import mlir as jax_mlir

    with jax_mlir.make_ir_context() as context:
        context.allow_unregistered_dialects = True
        # The module is held while its ops are read: an op outlives a temporary module's
        # memory in the bindings, and reading it then crashed (a SIGSEGV, now and then).
        module = ir.Module.parse(text)
        main = next(op for op in module.body.operations
                    if ir.StringAttr(op.attributes["sym_name"]).value == "main")
        inputs = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).inputs
        shapes = [(list(ir.RankedTensorType(t).shape), str(ir.RankedTensorType(t).element_type)) for t in inputs]
    rng = np.random.default_rng(seed)
    arrays = []
    for shape, element in shapes:
        if element.startswith("i") or element.startswith("ui"):
            # Indices: small, some out of range and negative (dropped by a scatter).
            arrays.append(rng.integers(-2, 12, size=shape).astype(np.int64 if element == "i64" else np.int32))
        else:
            arrays.append(rng.standard_normal(shape).astype(np.float32))
    wide = [a.astype(np.float64) if a.dtype == np.float32 else a for a in arrays]
    reference = xla_run.run(xla_run.widen(text), wide)
    original = xla_run.run(text, arrays)
    ours = xla_run.run(looped, arrays)
    worst = []
    for index, (ref, base, got) in enumerate(zip(reference, original, ours)):
        # Random inputs may overflow a model's step: where the original is not finite, ours
        # must not be either; the rest is compared.
        base, got, ref = (np.asarray(x, dtype=np.float64) for x in (base, got, ref))
        finite = np.isfinite(base) & np.isfinite(ref)
        if not np.array_equal(np.isfinite(got), np.isfinite(base)):
            return False, f"{path}: result {index} is not finite where the original is, or the other way"
        base, got, ref = base[finite], got[finite], ref[finite]
        noise = float(np.max(np.abs(base.astype(np.float64) - ref), initial=0.0))
        scale = float(np.max(np.abs(ref), initial=0.0))
        limit = max(10 * noise, 1e-6 * max(scale, 1.0))
        error = float(np.max(np.abs(got.astype(np.float64) - ref), initial=0.0))
        if not error <= limit:
            return False, f"{path}: result {index} differs: {error:.3g} against a limit of {limit:.3g}"
        worst.append(error / limit if limit else 0.0)
    return True, f"{path}: {len(original)} results match (worst {max(worst, default=0):.2f} of the limit)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", nargs="+", type=Path, required=True)
    parser.add_argument("--plant", action="store_true", help="every combiner made an overwrite")
    args = parser.parse_args(argv)
    failed = 0
    for path in args.check:
        ok, said = _check(path, args.plant)
        print(("PASS " if ok else "FAIL ") + said)
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
