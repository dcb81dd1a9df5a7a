//===- Passes.td - every partir pass and its options ---------------------===//
//
// Each pass is a thin C++ shell (src/cxx/Passes.cpp) that hands the module and its options to
// the Rust module of the same name (src/passes/<name>.rs). A pass that is declared here but not
// built yet fails with an explicit "not implemented" error, never a silent success.
//
// The examples in the descriptions are real output of partir-opt, trimmed (`...`). A `}]`
// would end a [{ }] block, so where the IR has one (every #partir_hlo.sharding does) the
// description is spliced: [{ ...{"model"}] # "}]" # [{>} ... }].
//
//===----------------------------------------------------------------------===//
#ifndef PARTIR_PASSES
#define PARTIR_PASSES

include "mlir/Pass/PassBase.td"

def PartirMesh : Pass<"partir-mesh", "::mlir::ModuleOp"> {
  let summary = "Declare the device mesh: partir-mesh{axes=batch=4,model=2}";
  let description = [{
    Declares the logical device mesh that every later partir pass partitions over, by
    inserting `partir.mesh @mesh [...]` as the first operation of the module. The mesh is
    purely declarative: it changes no computation.

    The `axes` option lists the mesh axes as `NAME=SIZE`, comma-separated, major to minor
    (the order in which a device's coordinates form its rank). Sizes are positive integers;
    names are unique and may not contain a quote, a backslash or a control character.

    Running the pass on a module that already declares the same mesh changes nothing, so a
    pipeline may declare its mesh defensively. Diagnostics (each an error; the pass fails):

    * `mesh axis 'batch' must be written NAME=SIZE, e.g. batch=4`, `... must have a positive
      size, got 0`, `... has size 'two', which is not an integer`, `mesh axis 'a' is
      declared twice`: a malformed `axes` item;
    * `no mesh axes given; write e.g. partir-mesh{axes=batch=4,model=2}`: `axes` is empty;
    * `the module already declares mesh @mesh [batch=4]; cannot declare @mesh [batch=8] too`
      (at the existing mesh): a module has one mesh.

    Example, with `partir-mesh{axes=batch=4,model=2}`:

    ```mlir
    // Before:
    func.func @main(%x: tensor<8x16xf32> {partir.name = "x"}, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
      ...
    }

    // After:
    partir.mesh @mesh ["batch"=4, "model"=2]
    func.func @main(%arg0: tensor<8x16xf32> {partir.name = "x"}, %arg1: tensor<8x16xf32>) -> tensor<8x16xf32> {
      ...
    }
    ```
  }];
  let options = [
    ListOption<"axes", "axes", "std::string",
               "mesh axes as NAME=SIZE, major to minor (e.g. batch=4,model=2)">,
  ];
}

def PartirUnmergeBatchDims : Pass<"partir-unmerge-batch-dims", "::mlir::ModuleOp"> {
  let summary = "Restore batch dims that a reshape merged in front of a batched contraction";
  let description = [{
    Importers (StableHLO -> linalg) run attention's matmuls as `linalg.batch_matmul` on
    [batch*heads, q, k]: a `tensor.collapse_shape` merges batch and heads, and an
    `expand_shape` splits them again after. A tiling cannot split the merged dim on heads
    (its minor factor) while batch (its major factor) is split on another axis: Megatron's
    heads would stop there (`stopped at 'tensor.collapse_shape' on axis 'model'`). This pass
    folds such collapses into the op (upstream's reshape-by-expansion patterns on the
    generalized op), so the contraction runs over [batch, heads, q, k] and every dim can be
    tiled on its own. `partir partition` runs it before the schedule.

    Only named linalg ops fed by a merging collapse_shape are rewritten (into
    `linalg.generic`); the reshapes left without use fold away. A reshape pair that only
    moves unit dims (`16x1x1x4 -> 64 -> 1x1x16x4`) is split into one that keeps each non-unit
    dim (`16x1x1x4 -> 16x4 -> 1x1x16x4`), so the 4 can still carry a tile. The pass has no options and
    takes a program before partitioning. It reports how many ops it expanded as a remark.
    Diagnostics (errors; the pass fails): `expects a program before partitioning` when
    `partir.loop`s are present.

    Example, with `partir-unmerge-batch-dims`:

    ```mlir
    // Before:
    %a = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<8x4x16x16xf32> into tensor<32x16x16xf32>
    %b = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<8x4x16x16xf32> into tensor<32x16x16xf32>
    %s = linalg.batch_matmul ins(%a, %b : tensor<32x16x16xf32>, tensor<32x16x16xf32>) outs(%zero : tensor<32x16x16xf32>) -> tensor<32x16x16xf32>
    %e = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [8, 4, 16, 16] : tensor<32x16x16xf32> into tensor<8x4x16x16xf32>

    // After:
    %zero4 = linalg.fill ins(%cst : f32) outs(%empty : tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
    %e = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, r) -> (b, h, m, r)>, ...],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
        ins(%q, %k : tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>) outs(%zero4 : tensor<8x4x16x16xf32>) {...}
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect", "::mlir::linalg::LinalgDialect"];
}

def PartirInlineCalls : Pass<"partir-inline-calls", "::mlir::ModuleOp"> {
  let summary = "Inline calls to the module's functions, in any dialect, registered or not";
  let description = [{
    `jax.jit(step).lower(...)` calls private functions: `jnp.where`'s `@_where`,
    `jax.nn.relu`'s `@relu`, a library's `__call__`s, a nested `jax.jit` called twice.
    Propagation has no rule for `func.call`, so this pass gives every call site its own copy of
    the callee (upstream's `inlineCall`, with every op legal to clone: the stock `inline` pass
    asks each op's dialect, and StableHLO read in generic form by a stock mlir-opt has none).
    A function called twice with different shardings is then partitioned once per call site.
    Inlined ops keep their locations as call sites (`callsite("relu" at "step")`); private
    functions left without a use are erased. `partir-schedule`, `partir-auto`,
    `partir partition` and `partir auto` run it first.

    Diagnostics: a remark with the number of calls inlined; a warning at each call left (to a
    declaration, or recursive), which nothing is partitioned through.

    Example, with `partir-inline-calls`:

    ```mlir
    // Before:
    func.func @main(%x: tensor<16x4xf32>) -> tensor<16x4xf32> {
      %0 = func.call @relu(%x) : (tensor<16x4xf32>) -> tensor<16x4xf32>
      return %0 : tensor<16x4xf32>
    }
    func.func private @relu(%a: tensor<16x4xf32>) -> tensor<16x4xf32> {
      %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<16x4xf32>}> : () -> tensor<16x4xf32>
      %m = "stablehlo.maximum"(%a, %z) : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
      return %m : tensor<16x4xf32>
    }

    // After:
    func.func @main(%x: tensor<16x4xf32>) -> tensor<16x4xf32> {
      %z = "stablehlo.constant"() <{value = dense<0.0> : tensor<16x4xf32>}> : () -> tensor<16x4xf32>
      %m = "stablehlo.maximum"(%x, %z) : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
      return %m : tensor<16x4xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def PartirTile : Pass<"partir-tile", "::mlir::ModuleOp"> {
  let summary = "The tile action: tile a value along a mesh axis on one dimension";
  let description = [{
    The tile action: decides that the selected values are split on tensor dimension `dim`
    into as many chunks as mesh axis `axis` has devices. Each selected value `%v` gets,
    right after its definition, the tile identity

    `%t = partir.loop "axis" [#partir.tile<dim>] (%r) { partir.slice dim %v[%r] }`

    and every other use of `%v` is replaced by `%t`. The program computes exactly what it
    did before; `partir-propagate` then pushes the tiling into the users and producers of
    `%v`, and removes the identity where they read `%v` chunk by chunk.

    Options:

    * `value`: a selector naming the values to tile. A function argument is named by its
      `partir.name` argument attribute, else `argN`; an op result by a `partir.name`
      attribute on the op (result `k > 0` is `NAME#k`). `*` matches any run of characters
      (`*w1` matches `params/layers/0/w1`). Only the entry functions are searched: `@main`
      if there is one, else every non-private function. Every match is tiled.
    * `dim`: the tensor dimension to split (required; the default -1 means "not given").
    * `axis`: the mesh axis to split along (required; run `partir-mesh` first).

    Every selected value is checked before anything is rewritten, so a failing pass leaves
    the module as it was. Diagnostics (errors; the pass fails): `no dim given (dim=N, N >=
    0)`; `no axis given (axis=NAME)`; `empty selector; ...`; `the module declares no
    partir.mesh; run partir-mesh{axes=...} first`; `axis 'nope' is not in mesh @mesh
    [batch=4]`; `selector 'y*' matches no function argument or named value (names are: x,
    arg1)`; and, at the value: `'x' has type tensor<8x?xf32>; only statically shaped tensors
    can be tiled`, `dim 1 is out of range for 'x' ...`, `dim 0 of 'x' (size 8) is not
    divisible by axis 'batch' (size 3)`, `... is already split 2 ways (along 'model');
    splitting it along 'batch' (size 4) too needs a multiple of 8`, `'x' is pinned to stay
    whole along axis 'batch' (partir.replicate)`, `'x' is already tiled along axis 'batch'`.

    Example, with `partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=batch}`:

    ```mlir
    // Before:
    func.func @main(%x: tensor<8x16xf32> {partir.name = "x"}, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
      %z = arith.addf %x, %y : tensor<8x16xf32>
      return %z : tensor<8x16xf32>
    }

    // After:
    partir.mesh @mesh ["batch"=4]
    func.func @main(%arg0: tensor<8x16xf32> {partir.name = "x"}, %arg1: tensor<8x16xf32>) -> tensor<8x16xf32> {
      %0 = partir.loop "batch" [#partir.tile<0>] (%arg2: !partir.range<4>) {
        %2 = partir.slice 0 %arg0[%arg2] : tensor<8x16xf32> -> tensor<2x16xf32>
        partir.yield %2 : tensor<2x16xf32>
      } : tensor<8x16xf32>
      %1 = arith.addf %0, %arg1 : tensor<8x16xf32>
      return %1 : tensor<8x16xf32>
    }
    ```
  }];
  let options = [
    Option<"value", "value", "std::string", "\"\"", "selector of the values to tile">,
    Option<"dim", "dim", "int64_t", "-1", "tensor dimension to tile">,
    Option<"axis", "axis", "std::string", "\"\"", "mesh axis to tile along">,
  ];
}

def PartirExpandDim : Pass<"partir-expand-dim", "::mlir::ModuleOp"> {
  let summary = "See a fused dim as its factors, through the program, so a tile can split one factor";
  let description = [{
    Expands dimension `dim` of the selected values into `sizes` (their product is the dim's
    size), and with it every value the dim flows to, op by op, as far as each op's family can
    run on the expanded value; an op that cannot reads it through a reshape back. The program
    computes what it did. Arguments and results of the entry function that expand change type
    and record the caller's shape as `partir.view_of` (the caller's array, read row-major, is
    the expanded argument). This is how Megatron splits a fused projection by heads: GPT-2's
    `c_attn` kernel `[192, 64]` holds q, k and v of 2 heads of 32; with `dim=0 sizes=3,2,32`
    it is `[3, 2, 32, 64]`, and `partir-tile{dim=1}` splits the heads with contiguous tiles.

    Diagnostics (errors; the module is left as it was): the selector's, `'x' has type ...;
    only statically shaped tensors can be expanded`, `dim 2 is out of range for 'x' ...`,
    `dim 0 of 'x' has size 192, which sizes [3, 2, 30] do not make ...`.

    Example, with `partir-expand-dim{value=w dim=1 sizes=2,4}`:

    ```mlir
    // Before:
    func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {partir.name = "w"}) -> tensor<4x8xf32> {
      %y = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
      return %y : tensor<4x8xf32>
    }
    // After:
    func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x2x4xf32> {partir.name = "w", partir.view_of = array<i64: 8, 8>}) -> (tensor<4x2x4xf32> {partir.view_of = array<i64: 4, 8>}) {
      %y = "stablehlo.dot_general"(%x, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4x8xf32>, tensor<8x2x4xf32>) -> tensor<4x2x4xf32>
      return %y : tensor<4x2x4xf32>
    }
    ```
  }];
  let options = [
    Option<"value", "value", "std::string", "\"\"", "selector of the values to expand">,
    Option<"dim", "dim", "int64_t", "-1", "tensor dimension to expand">,
    ListOption<"sizes", "sizes", "int64_t", "the sizes the dim is seen as, major to minor">,
  ];
}

def PartirReplicate : Pass<"partir-replicate", "::mlir::ModuleOp"> {
  let summary = "The replicate action: pin values to stay whole along a mesh axis";
  let description = [{
    The replicate action: decides that the selected values stay whole (replicated on every
    device) along mesh axis `axis`. Each selected value `%v` gets, right after its
    definition, the pin `%p = partir.replicate "axis" %v`, and every use of `%v` goes
    through `%p` instead. Propagation along `axis` never partitions the pinned value: it
    stops at the pin (with a remark) instead of tiling through it, and never partitions the
    value's producer on behalf of the pin's users. A user that is partitioned along `axis`
    by its other operands may still read its own chunk of the whole value (no
    communication). Pins are identities: `partir-sequential` and `partir-lower-to-hlo`
    drop them.

    Options: `value` selects the values, with the same selectors as `partir-tile`; `axis`
    is the mesh axis along which they stay whole. Pinning a value that is already pinned
    on that axis changes nothing.

    Diagnostics (errors; the pass fails, leaving the module unchanged): `no axis given
    (axis=NAME)`; `the module declares no partir.mesh; run partir-mesh{axes=...} first`;
    `axis 'model' is not in mesh @mesh [batch=4]`; `empty selector; ...`; `selector 'b'
    matches no function argument or named value (names are: c)`; `'x' is already tiled
    along axis 'batch'; it cannot also stay whole there`.

    Example, with `partir-mesh{axes=batch=4,model=2}, partir-replicate{value=x axis=model}`:

    ```mlir
    // Before:
    func.func @main(%x: tensor<8x16xf32> {partir.name = "x"}, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
      %z = arith.addf %x, %y : tensor<8x16xf32>
      return %z : tensor<8x16xf32>
    }

    // After:
    partir.mesh @mesh ["batch"=4, "model"=2]
    func.func @main(%arg0: tensor<8x16xf32> {partir.name = "x"}, %arg1: tensor<8x16xf32>) -> tensor<8x16xf32> {
      %0 = partir.replicate "model" %arg0 : tensor<8x16xf32>
      %1 = arith.addf %0, %arg1 : tensor<8x16xf32>
      return %1 : tensor<8x16xf32>
    }
    ```
  }];
  let options = [
    Option<"value", "value", "std::string", "\"\"", "selector of the values to pin">,
    Option<"axis", "axis", "std::string", "\"\"", "mesh axis along which they stay whole">,
  ];
}

def PartirPrintRules : Pass<"partir-print-rules", "::mlir::ModuleOp"> {
  let summary = "Report each op's Tile Mapping Registry rule in einsum notation (as remarks)";
  let description = [{
    A debugging aid that answers "how can partir partition this op?". For every op of
    every function (inside `partir.loop` bodies too, but not inside other ops' regions such
    as a `linalg.generic` body), emits a remark with the op's Tile Mapping Registry (TMR)
    rule in einsum notation: one list of factors per operand (inputs, then inits), `->`,
    one per result; the reduction factors with their combiner; and each factor's size.
    Inside a `partir.loop`, sizes are those of the loop body's (local) shapes. An op the
    TMR does not know gets `no rule`; an op whose rule does not fit this instance gets
    `rule does not apply: REASON`.

    The pass has no options, does not change the IR and never fails.

    Example, with `partir-print-rules` (and `-allow-unregistered-dialect`, for `foo.bar`);
    the remarks of the other ops are left out:

    ```mlir
    func.func @main(%x: tensor<32x64xf32>, %w: tensor<64x16xf32>) -> tensor<32x16xf32> {
      ...
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
      %y = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
      %u = "foo.bar"(%y) : (tensor<32x16xf32>) -> tensor<32x16xf32>
      ...
    }

    // Remarks:
    // remark: partir-print-rules: linalg.fill: ([],[i,j]) -> ([i,j]) sizes={i=32,j=16}
    // remark: partir-print-rules: linalg.matmul: ([i,k],[k,j],[i,j]) -> ([i,j]) reduction={k:sum} sizes={i=32,j=16,k=64}
    // remark: partir-print-rules: foo.bar: no rule
    ```
  }];
}

def PartirPropagate : Pass<"partir-propagate", "::mlir::ModuleOp"> {
  let summary = "Propagate tiling decisions through the program with the Tile Mapping Registry";
  let options = [
    Option<"axis", "axis", "std::string", "\"\"", "mesh axis to propagate (all axes if empty)">,
    Option<"reach", "reach", "std::string", "\"all\"",
           "all: through every op with a rule; elementwise: only through elementwise ops (ZeRO)">,
  ];
  let description = [{
    Spreads the tiling decisions of `partir-tile` through the program, using each op's Tile
    Mapping Registry rule, until nothing changes along the axis:

    * forward: an op using a value tiled along the axis is wrapped in a `partir.loop` over
      the axis, its other operands sliced as its rule says; a factor the op reduces over
      gives a `#partir.sum` loop (with the reduction's kind) instead of a `#partir.tile`;
    * backward: when every consumer of an op's result reads it in chunks on the same
      dimension, the op itself is wrapped, so they read a tiled value;
    * slices of a tile identity on its own axis and dimension read its source directly.

    Earlier decisions win: an op already partitioned along an axis is not partitioned
    along it again. The result is a PartIR:Core program, with the same meaning as the input.

    Options:

    * `axis`: the mesh axis to propagate; empty (the default) propagates every axis of the
      mesh, in mesh order.
    * `reach`: `all` (the default) spreads through every op with a rule (batch and model
      parallelism); `elementwise` only through elementwise ops, so tiled state and its
      elementwise update are split while every other user reads it whole (ZeRO / FSDP).

    Diagnostics. Errors (the pass fails): `the module declares no partir.mesh; run
    partir-mesh{axes=...} first`; `axis 'model' is not in mesh @mesh [batch=4]`; `propagate
    = "somewhere" is not a propagation reach; use "all" (the default) or "elementwise" ...`
    for a bad `reach`. Propagation stopping is not an error: where operands disagree, or a
    value is pinned by `partir.replicate`, the op is left whole with a remark such as
    `partir-propagate: stopped at 'arith.addf' on axis 'batch': operand 1 is tiled on dim 1,
    but this partitioning needs it on dim 0`; an op without a rule is left whole with one
    warning per op name, `partir-propagate: no tile mapping rule for 'test.foo'; nothing is
    partitioned through it`.

    Example, after `partir-mesh{axes=model=2}, partir-tile{value=x dim=1 axis=model}`
    (tiling the contracted dimension), with `partir-propagate`:

    ```mlir
    // Before:
    func.func @main(%arg0: tensor<32x64xf32> {partir.name = "x"}, %arg1: tensor<64x16xf32> {partir.name = "w"}) -> tensor<32x16xf32> {
      %0 = partir.loop "model" [#partir.tile<1>] (%arg2: !partir.range<2>) {
        %4 = partir.slice 1 %arg0[%arg2] : tensor<32x64xf32> -> tensor<32x32xf32>
        partir.yield %4 : tensor<32x32xf32>
      } : tensor<32x64xf32>
      ...
      %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<32x16xf32>) -> tensor<32x16xf32>
      %3 = linalg.matmul ins(%0, %arg1 : tensor<32x64xf32>, tensor<64x16xf32>) outs(%2 : tensor<32x16xf32>) -> tensor<32x16xf32>
      return %3 : tensor<32x16xf32>
    }

    // After: each device multiplies its chunks; the partial products are summed.
    func.func @main(%arg0: tensor<32x64xf32> {partir.name = "x"}, %arg1: tensor<64x16xf32> {partir.name = "w"}) -> tensor<32x16xf32> {
      ...
      %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<32x16xf32>) -> tensor<32x16xf32>
      %2 = partir.loop "model" [#partir.sum] (%arg2: !partir.range<2>) {
        %3 = partir.slice 1 %arg0[%arg2] : tensor<32x64xf32> -> tensor<32x32xf32>
        %4 = partir.slice 0 %arg1[%arg2] : tensor<64x16xf32> -> tensor<32x16xf32>
        %5 = linalg.matmul ins(%3, %4 : tensor<32x32xf32>, tensor<32x16xf32>) outs(%1 : tensor<32x16xf32>) -> tensor<32x16xf32>
        partir.yield %5 : tensor<32x16xf32>
      } : tensor<32x16xf32>
      return %2 : tensor<32x16xf32>
    }
    ```
  }];
}

def PartirSchedule : Pass<"partir-schedule", "::mlir::ModuleOp"> {
  let summary = "Apply a schedule of tactics (TOML) in order, propagating after each";
  let options = [
    Option<"file", "file", "std::string", "\"\"", "path of the schedule TOML file">,
    Option<"device", "device", "std::string", "\"\"",
           "after each tactic, simulate the program on this device (preset or TOML file)">,
    Option<"report", "report", "std::string", "\"\"",
           "with device: write the per-tactic JSON report to this path">,
  ];
  let description = [{
    Applies a schedule: a mesh and a list of tactics, read from a TOML file. Each tactic,
    in file order, pins its `replicate` selectors (`partir-replicate`), tiles its `tile`
    selectors (`partir-tile`), then propagates along its axis (`partir-propagate`, with the
    tactic's `propagate` reach); earlier tactics' decisions are never undone. The result is
    the same as that pipeline of actions written by hand. If the module has no mesh, the
    schedule's is declared; if both have one they must be equal.

    ```toml
    mesh = { batch = 4, model = 2 }   # axes major to minor, as partir-mesh
    [[tactic]]
    name = "MP"                       # optional: used in remarks and errors
    axis = "model"
    tile = { "*w1" = 1, "*w2" = 0 }   # selector = dim
    replicate = ["*b1"]               # optional
    propagate = "elementwise"         # optional: "all" (default) or "elementwise" (ZeRO)
    ```

    After each tactic a remark summarises it: `partir-schedule: tactic 'BP' on axis
    'batch': 1 values tiled, 0 pinned, 3 ops partitioned, 0 conflicts`.

    Options:

    * `file`: the schedule (required). A relative path is relative to the current
      directory.
    * `device`: when set, the program before the first tactic and after each one is
      lowered on a copy and simulated as `partir-simulate` does, and a second remark gives
      its cost: `partir-simulate: after 'BP' on tpu-v3: collectives -, step 8.0 ns (compute
      8.0 ns, communication 0), peak memory 6.50 KiB, fits: yes`. A preset name or a device
      TOML file (see `partir-simulate`).
    * `report`: with `device`, write all those simulations as one JSON report to this path.

    Diagnostics (errors; the pass fails): `no schedule given (file=PATH)`; `cannot read
    schedule 'S.toml': ...`; `schedule 'S.toml': ...` for a TOML syntax error or an unknown
    key (with its line), a schedule without `[[tactic]]`, a tactic axis not in the
    schedule's mesh, a negative tile dim, a tactic that neither tiles nor replicates, a bad
    `propagate`; `the module declares mesh @mesh [batch=4, model=2] but the schedule asks
    for @mesh [batch=8]`; `neither the module nor the schedule declares a mesh ...`; any
    error of the actions, prefixed with the tactic (`partir-schedule: tactic 'MP': dim 1 of
    'params/w1' (size 16) is not divisible by axis 'model' (size 3)`); `report=PATH needs
    device=NAME`; and the device and report errors of `partir-simulate`.

    Example, with `partir-schedule{file=bp_mp.toml}` where bp_mp.toml is

    ```toml
    mesh = { batch = 4, model = 2 }
    [[tactic]]
    name = "BP"
    axis = "batch"
    tile = { "x" = 0 }
    [[tactic]]
    name = "MP"
    axis = "model"
    tile = { "w" = 1 }
    ```

    ```mlir
    // Before:
    func.func @main(%x: tensor<32x64xf32> {partir.name = "x"}, %w: tensor<64x16xf32> {partir.name = "w"}) -> tensor<32x16xf32> {
      ...
      %y = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
      return %y : tensor<32x16xf32>
    }

    // After (remarks: tactic 'BP' ... 3 ops partitioned; tactic 'MP' ... 3 ops partitioned):
    partir.mesh @mesh ["batch"=4, "model"=2]
    func.func @main(%arg0: tensor<32x64xf32> {partir.name = "x"}, %arg1: tensor<64x16xf32> {partir.name = "w"}) -> tensor<32x16xf32> {
      ... // the accumulator's tensor.empty and linalg.fill, nested the same way
      %2 = partir.loop "batch" [#partir.tile<0>] (%arg2: !partir.range<4>) {
        %3 = partir.slice 0 %arg0[%arg2] : tensor<32x64xf32> -> tensor<8x64xf32>
        %4 = partir.slice 0 %1[%arg2] : tensor<32x16xf32> -> tensor<8x16xf32>
        %5 = partir.loop "model" [#partir.tile<1>] (%arg3: !partir.range<2>) {
          %6 = partir.slice 1 %arg1[%arg3] : tensor<64x16xf32> -> tensor<64x8xf32>
          %7 = partir.slice 1 %4[%arg3] : tensor<8x16xf32> -> tensor<8x8xf32>
          %8 = linalg.matmul ins(%3, %6 : tensor<8x64xf32>, tensor<64x8xf32>) outs(%7 : tensor<8x8xf32>) -> tensor<8x8xf32>
          partir.yield %8 : tensor<8x8xf32>
        } : tensor<8x16xf32>
        partir.yield %5 : tensor<8x16xf32>
      } : tensor<32x16xf32>
      return %2 : tensor<32x16xf32>
    }
    ```
  }];
}

def PartirSequential : Pass<"partir-sequential", "::mlir::ModuleOp"> {
  let summary = "Lower PartIR:Core loops to scf.for: the sequential reading of a Core program";
  let description = [{
    Gives a PartIR:Core program its sequential meaning with upstream ops only, so that it
    can be checked against the unpartitioned program on one process (e.g. under
    `mlir-runner` after the usual bufferization and lowering). Loops are lowered innermost
    first:

    * `partir.loop "a" [...] (%r: !partir.range<N>)` becomes an `scf.for` from 0 to N;
    * a `#partir.tile<d>` result starts as a `tensor.empty` and each iteration inserts its
      chunk at offset `r * chunk` with `tensor.insert_slice`;
    * a `#partir.sum` result starts as a `linalg.fill` of the reduction's identity and each
      iteration combines into it (`linalg.add`, `linalg.max`, `linalg.min`, `linalg.mul`);
    * `partir.slice d %x[%r]` becomes a `tensor.extract_slice` at offset `r * chunk`;
    * `partir.replicate` pins become their operand, and the `partir.mesh` is removed.

    The pass has no options and reports no diagnostics of its own. It expects a Core
    program: on a PartIR:HLO program (after `partir-lower-to-hlo`) it removes the mesh but
    not the collectives, and the verifier then rejects the module ("... has sharding ...
    but the module declares no partir.mesh").

    Example, with `partir-sequential`:

    ```mlir
    // Before:
    partir.mesh @mesh ["batch"=4]
    func.func @main(%arg0: tensor<8x16xf32> {partir.name = "x"}, %arg1: tensor<8x16xf32>) -> tensor<8x16xf32> {
      %0 = partir.loop "batch" [#partir.tile<0>] (%arg2: !partir.range<4>) {
        %1 = partir.slice 0 %arg0[%arg2] : tensor<8x16xf32> -> tensor<2x16xf32>
        %2 = partir.slice 0 %arg1[%arg2] : tensor<8x16xf32> -> tensor<2x16xf32>
        %3 = arith.addf %1, %2 : tensor<2x16xf32>
        partir.yield %3 : tensor<2x16xf32>
      } : tensor<8x16xf32>
      return %0 : tensor<8x16xf32>
    }

    // After:
    func.func @main(%arg0: tensor<8x16xf32> {partir.name = "x"}, %arg1: tensor<8x16xf32>) -> tensor<8x16xf32> {
      %0 = tensor.empty() : tensor<8x16xf32>
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c1 = arith.constant 1 : index
      %1 = scf.for %arg2 = %c0 to %c4 step %c1 iter_args(%arg3 = %0) -> (tensor<8x16xf32>) {
        %c2 = arith.constant 2 : index
        %2 = arith.muli %arg2, %c2 : index
        %extracted_slice = tensor.extract_slice %arg0[%2, 0] [2, 16] [1, 1] : tensor<8x16xf32> to tensor<2x16xf32>
        ... // the same offset for %arg1
        %extracted_slice_1 = tensor.extract_slice %arg1[%3, 0] [2, 16] [1, 1] : tensor<8x16xf32> to tensor<2x16xf32>
        %4 = arith.addf %extracted_slice, %extracted_slice_1 : tensor<2x16xf32>
        ... // and for the result
        %inserted_slice = tensor.insert_slice %4 into %arg3[%5, 0] [2, 16] [1, 1] : tensor<2x16xf32> into tensor<8x16xf32>
        scf.yield %inserted_slice : tensor<8x16xf32>
      }
      return %1 : tensor<8x16xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect"];
}

def PartirLowerToHlo : Pass<"partir-lower-to-hlo", "::mlir::ModuleOp"> {
  let summary = "Lower PartIR:Core to device-local PartIR:HLO with optimised collectives";
  let description = [{
    Turns a PartIR:Core program (global shapes, `partir.loop` nests) into the program one
    device runs (SPMD form: local shapes, explicit collectives), in the `partir_hlo`
    dialect:

    * each partitioned op leaves its loop nest and computes on local operands;
    * a function argument takes the sharding all its consumers agree on (else it is
      replicated) and its local type; a result keeps the sharding it has; both are recorded
      as `partir_hlo.sharding` argument/result attributes;
    * a `#partir.sum` loop result becomes a `partir_hlo.all_reduce` (with the reduction's
      kind) over the loop's axes, and where a value's sharding differs from the one its
      consumer reads it with, `all_gather`, `all_slice` (local, no communication) or
      `all_to_all` redistribute it;
    * then, to a fixed point: the all_reduce sums of an add's (or sub's) operands move after
      it (one reduction), `all_slice` of an `all_reduce` becomes a `reduce_scatter`, and an
      `all_slice` of an `all_gather` on the same dim and axes cancels out.

    `partir.replicate` pins are dropped; the mesh stays (the collectives name its axes).
    Running `cse` afterwards shares identical collectives.

    The pass has no options. It expects a Core program and does not check that the module
    is not already lowered: run it once. Diagnostics (errors; the pass fails): `the module
    declares no partir.mesh`; `'partir.loop' inside 'scf.for' cannot be lowered:
    partitioned ops must sit in a function body or in partir.loop bodies`; and
    `internal error: ...` for a program propagation should never produce.

    Example, with `partir-lower-to-hlo` on the output of the `partir-propagate` example:

    ```mlir
    // Before:
    partir.mesh @mesh ["model"=2]
    func.func @main(%arg0: tensor<32x64xf32> {partir.name = "x"}, %arg1: tensor<64x16xf32> {partir.name = "w"}) -> tensor<32x16xf32> {
      ...
      %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<32x16xf32>) -> tensor<32x16xf32>
      %2 = partir.loop "model" [#partir.sum] (%arg2: !partir.range<2>) {
        %3 = partir.slice 1 %arg0[%arg2] : tensor<32x64xf32> -> tensor<32x32xf32>
        %4 = partir.slice 0 %arg1[%arg2] : tensor<64x16xf32> -> tensor<32x16xf32>
        %5 = linalg.matmul ins(%3, %4 : tensor<32x32xf32>, tensor<32x16xf32>) outs(%1 : tensor<32x16xf32>) -> tensor<32x16xf32>
        partir.yield %5 : tensor<32x16xf32>
      } : tensor<32x16xf32>
      return %2 : tensor<32x16xf32>
    }

    // After:
    partir.mesh @mesh ["model"=2]
    func.func @main(
        %arg0: tensor<32x32xf32> {partir.name = "x", partir_hlo.sharding = #partir_hlo.sharding<[{}, {"model"}] # "}]" # [{>},
        %arg1: tensor<32x16xf32> {partir.name = "w", partir_hlo.sharding = #partir_hlo.sharding<[{"model"}, {}] # "}]" # [{>})
        -> (tensor<32x16xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}] # "}]" # [{>}) {
      ...
      %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<32x16xf32>) -> tensor<32x16xf32>
      %2 = linalg.matmul ins(%arg0, %arg1 : tensor<32x32xf32>, tensor<32x16xf32>) outs(%1 : tensor<32x16xf32>) -> tensor<32x16xf32>
      %3 = partir_hlo.all_reduce sum %2 axes ["model"] : tensor<32x16xf32>
      return %3 : tensor<32x16xf32>
    }
    ```
  }];
}

def PartirCombineCollectives : Pass<"partir-combine-collectives", "::mlir::ModuleOp"> {
  let summary = "Issue independent all_reduces (reduce_scatters) of the same kind and axes as one collective";
  let description = [{
    XLA's all-reduce and reduce-scatter combiners and PyTorch DDP's gradient buckets for
    PartIR:HLO: one collective pays one latency, so independent `partir_hlo.all_reduce`s with
    the same reduction, axes and element type become one variadic `partir_hlo.all_reduce` (one
    packed buffer on MPI, one `stablehlo.all_reduce` on XLA), e.g. all the gradient all_reduces
    of a batch-parallel step; independent `partir_hlo.reduce_scatter`s that also share their
    scattered dim (ZeRO's gradient shards) become one variadic `partir_hlo.reduce_scatter`
    (one packed `stablehlo.reduce_scatter` on XLA).

    Walking each function body in order, an all_reduce joins the open group of its kind, axes
    and element type unless its operand depends on a result of that group (it then starts a
    new group), or the group would exceed `threshold` bytes or `count` operands. The combined
    op sits where the group's last member was (its operands are all ready there); ops that
    used an earlier member's result before that point move after it, in their order. That
    delay can hold buffers longer: the pass reports each function's peak live bytes before and
    after as a remark (`combined 30 all_reduce into 1; peak memory 1.50 MiB -> 1.62 MiB`, or
    `combined 1 all_reduce into 1, 29 reduce_scatter into 2; ...`).

    Options: `threshold` (default `30MiB`, XLA's default; units B, KiB, MiB, GiB) and `count`
    (default 256). Diagnostics (errors; the pass fails): `expects a PartIR:HLO program` on a
    Core program; `threshold '...' is not a size`; `count must be at least 1`.

    Example, with `partir-combine-collectives`:

    ```mlir
    // Before:
    %0 = linalg.matmul ins(%x, %dy : ...) outs(%z : tensor<64x256xf32>) -> tensor<64x256xf32>
    %1 = partir_hlo.all_reduce sum %0 axes ["batch"] : tensor<64x256xf32>
    %2 = arith.subf %w, %1 : tensor<64x256xf32>
    %3 = linalg.reduce ins(%dy : ...) outs(%zb : tensor<256xf32>) dimensions = [0] ...
    %4 = partir_hlo.all_reduce sum %3 axes ["batch"] : tensor<256xf32>

    // After:
    %0 = linalg.matmul ins(%x, %dy : ...) outs(%z : tensor<64x256xf32>) -> tensor<64x256xf32>
    %3 = linalg.reduce ins(%dy : ...) outs(%zb : tensor<256xf32>) dimensions = [0] ...
    %g:2 = partir_hlo.all_reduce sum %0, %3 axes ["batch"] : tensor<64x256xf32>, tensor<256xf32>
    %2 = arith.subf %w, %g#0 : tensor<64x256xf32>
    ```
  }];
  let options = [
    Option<"threshold", "threshold", "std::string", "\"30MiB\"",
           "most bytes one combined all_reduce carries">,
    Option<"count", "count", "int64_t", "256", "most operands one combined all_reduce carries">,
  ];
}

def PartirSimulate : Pass<"partir-simulate", "::mlir::ModuleOp"> {
  let summary = "Estimate step time, peak memory and communication on a described device";
  let options = [
    Option<"device", "device", "std::string", "\"\"",
           "device preset or TOML file (empty: the default device, tpu-v3)">,
    Option<"report", "report", "std::string", "\"\"", "write the JSON report to this path">,
  ];
  let description = [{
    Estimates, per device of the mesh, what one run of the entry function (`@main`, else
    the first public function) costs: compute time per op (a roofline of its FLOPs and
    bytes, from its TMR rule, against the device's peaks), the time of each collective (a
    ring alpha-beta model along its mesh axes) and the peak memory (liveness of the local
    buffers). The report is printed on stderr; the IR is not changed. A PartIR:Core program
    (one with `partir.loop`s) is lowered on a copy first (`partir-lower-to-hlo`, `cse`);
    a module without a mesh is one device.

    Options:

    * `device`: a preset (`tpu-v3`, the default, `tpu-v4`, `tpu-v5e`, `tpu-v5p`, `a100-40gb`,
      `a100-80gb`, `h100-sxm`; `a100-dgx`, `h100-dgx`: nodes of 8 on NVLink with InfiniBand
      between them) or a TOML file describing one: `name`, `matrix_tflops`,
      `vector_tflops`, `memory_gib`, `memory_gbps`, `link_gbps`, `link_latency_us`,
      optional `[axis.NAME]` tables overriding the link of one mesh axis, and an optional
      `[nodes]` table (`devices`, `link_gbps`, `link_latency_us`): a collective whose group
      crosses nodes (devices numbered row-major over the mesh) runs at that link.
    * `report`: also write the report, with the device's figures and their sources, as
      JSON to this path.

    Diagnostics (errors; the pass fails): `unknown device 'tpu-v9' (presets: ...; or a TOML
    file)`; `cannot read device file '...'`; `device file '...': memory_gbps must be a
    positive number, not -1` (and the like); `cannot write the report '...'`; `collective
    over axis 'a', which the module's mesh does not declare`; `the module has no function`;
    and the errors of `partir-lower-to-hlo` for a Core program.

    Example, with `partir-simulate` (the report on stderr; the IR is printed unchanged):

    ```mlir
    partir.mesh @mesh ["model"=2]
    func.func @main(%x: tensor<32x32xf32>, %w: tensor<32x16xf32>) -> tensor<32x16xf32> {
      ...
      %y = linalg.matmul ins(%x, %w : tensor<32x32xf32>, tensor<32x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
      %r = partir_hlo.all_reduce sum %y axes ["model"] : tensor<32x16xf32>
      return %r : tensor<32x16xf32>
    }
    ```

    ```text
    partir-simulate: tpu-v3, mesh model=2 (2 devices), per device
      step time    2.0 us       compute 11.4 ns, communication 2.0 us
      compute      32.77 kFLOP  0 transcendentals, 10.00 KiB accessed
      peak memory  10.00 KiB    of 32.00 GiB (fits); arguments 6.00 KiB, results 2.00 KiB
                                peak at partir_hlo.all_reduce at hlo.mlir:7:8
      collectives:
        kind            axes   count  bytes     sent      time
        all_reduce sum  model  1      2.00 KiB  2.00 KiB  2.0 us
      top ops:
        op             time    bound   flops        bytes     at
        linalg.matmul  9.1 ns  memory  32.77 kFLOP  8.00 KiB  hlo.mlir:6:8
        linalg.fill    2.3 ns  memory  0 FLOP       2.00 KiB  hlo.mlir:5:8
    ```
  }];
}

def PartirExportShard : Pass<"partir-export-shard", "::mlir::ModuleOp"> {
  let summary = "Export PartIR:HLO to upstream MLIR's shard dialect";
  let description = [{
    Rewrites a PartIR:HLO program (after `partir-lower-to-hlo`) with upstream MLIR's
    `shard` dialect only, for upstream passes such as `convert-shard-to-mpi`:

    * `partir.mesh @mesh ["batch"=4, "model"=2]` becomes the private
      `shard.grid @mesh(shape = 4x2) {shard.axis_names = ["batch", "model"]}`;
    * each `partir_hlo` collective becomes the `shard` collective of the same kind on
      `@mesh`, with `grid_axes` the indices of its axes (in its order), the same tensor
      dimensions and reduction;
    * argument and result `partir_hlo.sharding` attributes become `shard.split_axes`
      attributes (e.g. `#shard<axisarray[[0], []]>`). The program stays in SPMD form (local
      shapes, as `shard-partition` leaves it), so these are not `shard.shard` annotations,
      which describe the global program and which `convert-shard-to-mpi` rejects;
    * `partir.name` attributes are dropped.

    The pass has no options. Diagnostics (errors; the pass fails): `the module declares no
    partir.mesh; export a partir-lower-to-hlo program`; `cannot export PartIR:Core op
    'partir.loop'; run partir-lower-to-hlo first`; `cannot express attribute 'partir.tag' =
    1 : i64 of 'arith.addf' in upstream MLIR` for any other partir attribute; `axis 'a' is
    not in mesh ...` and malformed-collective errors.

    Example, with `partir-export-shard` on the output of the `partir-lower-to-hlo` example:

    ```mlir
    // Before:
    partir.mesh @mesh ["model"=2]
    func.func @main(
        %arg0: tensor<32x32xf32> {partir.name = "x", partir_hlo.sharding = #partir_hlo.sharding<[{}, {"model"}] # "}]" # [{>},
        %arg1: tensor<32x16xf32> {partir.name = "w", partir_hlo.sharding = #partir_hlo.sharding<[{"model"}, {}] # "}]" # [{>})
        -> (tensor<32x16xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {}] # "}]" # [{>}) {
      ...
      %3 = partir_hlo.all_reduce sum %2 axes ["model"] : tensor<32x16xf32>
      return %3 : tensor<32x16xf32>
    }

    // After:
    shard.grid @mesh(shape = 2) {shard.axis_names = ["model"], sym_visibility = "private"}
    func.func @main(
        %arg0: tensor<32x32xf32> {shard.split_axes = #shard<axisarray[[], [0]]>},
        %arg1: tensor<32x16xf32> {shard.split_axes = #shard<axisarray[[0], []]>})
        -> (tensor<32x16xf32> {shard.split_axes = #shard<axisarray[[], []]>}) {
      ...
      %all_reduce = shard.all_reduce %2 on @mesh grid_axes = [0] : tensor<32x16xf32> -> tensor<32x16xf32>
      return %all_reduce : tensor<32x16xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def PartirExportStablehlo : Pass<"partir-export-stablehlo", "::mlir::ModuleOp"> {
  let summary = "Export PartIR:HLO to a StableHLO SPMD module that XLA compiles and runs";
  let description = [{
    Rewrites a PartIR:HLO program (after `partir-lower-to-hlo`) whose payload is StableHLO
    into a StableHLO SPMD module with one replica per device, which XLA compiles with
    `num_replicas = N, num_partitions = 1`:

    * each `partir_hlo` collective becomes `stablehlo.all_reduce`, `all_gather`,
      `reduce_scatter` or `all_to_all` (generic form), with `replica_groups` computed from
      its mesh axes: replica r holds the mesh coordinates of r in row-major order, first axis
      major (on batch=4 x model=2, r = b*2 + m), and a group lists its devices in the order
      of the in-group index formed from the op's axes, major to minor;
    * `partir_hlo.all_slice` (no communication) becomes a `stablehlo.dynamic_slice` at this
      device's index, computed from `stablehlo.replica_id`;
    * argument and result `partir_hlo.sharding` attributes become strings,
      `partir.sharding = "[{\"batch\"}, {}] # "}]" # [{"`, and the mesh is recorded on the module as
      `partir.mesh = "batch=4,model=2"` next to `mhlo.num_replicas = 8 : i32` and
      `mhlo.num_partitions = 1 : i32`: a runtime scatters inputs and assembles outputs by them.

    Diagnostics (errors; the pass fails): `the module declares no partir.mesh; export a
    partir-lower-to-hlo program`; `expects a PartIR:HLO program, but this module still has
    'partir.loop'`; a collective with an unknown axis or a reduction without a StableHLO
    combiner; any other partir attribute or type left.

    Example, on batch=4 with a contracted dim tiled:

    ```mlir
    // Before:
    %p = "stablehlo.dot_general"(%x, %w) <{...}> : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %s = partir_hlo.all_reduce sum %p axes ["batch"] : tensor<8x4xf32>
    // After:
    %s = "stablehlo.all_reduce"(%p) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %0 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%0) : (tensor<f32>) -> ()
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    ```
  }];
}

def PartirToMpi : Pass<"partir-to-mpi", "::mlir::ModuleOp"> {
  let summary = "Lower PartIR:HLO collectives to the mpi dialect on per-axis communicators";
  let description = [{
    Lowers the collectives of a PartIR:HLO program to upstream's `mpi` dialect, so that
    each MPI rank runs one device of the mesh. Rank `r` sits at mesh coordinates
    `(r / stride(a)) % size(a)` per axis `a`, axes major to minor (on `["batch"=4,
    "model"=2]`, `r = 2 * batch + model`). A collective over axes S runs on
    `mpi.comm_split(world, color, key)`, `color` numbering the coordinates off S and `key`
    those on S, so `key` is the device's position in its group; communicators are created
    once per set of axes, at the top of the function. Then:

    * `all_reduce`: `mpi.allreduce` of the flattened buffer;
    * `all_gather`: an allreduce-sum of a zero buffer holding the local chunk at
      `key * chunk`;
    * `all_slice`: the local `tensor.extract_slice` at `key * chunk` (no communication);
    * `reduce_scatter`: all_reduce then all_slice; `all_to_all`: all_gather then all_slice.

    The mesh and the `partir_hlo.sharding` attributes are removed and the module gets the
    `dlti.map` the MPI lowering needs (MPICH's ABI). The result needs `mpi.init` and
    `mpi.finalize` around it (a harness) and runs under `mpiexec -n <devices> mlir-runner`
    after the usual lowering to LLVM.

    The pass has no options. Diagnostics (errors; the pass fails): `the module declares no
    partir.mesh`; `cannot lower '...' to MPI`. It expects a PartIR:HLO program: on a Core
    program it removes the mesh but not the loops, and the verifier then rejects the module
    ("'partir.loop' op names mesh axis ... but the module declares no partir.mesh").

    Example, with `partir-to-mpi`:

    ```mlir
    // Before:
    partir.mesh @mesh ["model"=2]
    func.func @main(%x: tensor<32x32xf32>, %w: tensor<32x16xf32>) -> tensor<32x16xf32> {
      ...
      %y = linalg.matmul ins(%x, %w : tensor<32x32xf32>, tensor<32x16xf32>) outs(%f : tensor<32x16xf32>) -> tensor<32x16xf32>
      %r = partir_hlo.all_reduce sum %y axes ["model"] : tensor<32x16xf32>
      return %r : tensor<32x16xf32>
    }

    // After:
    module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
      func.func @main(%arg0: tensor<32x32xf32>, %arg1: tensor<32x16xf32>) -> tensor<32x16xf32> {
        %0 = mpi.comm_world : !mpi.comm
        %rank = mpi.comm_rank(%0) : i32
        ... // key = (rank / 1) % 2, color = 0
        %newcomm = mpi.comm_split(%0, %c0_i32_1, %4) : !mpi.comm
        ...
        %8 = linalg.matmul ins(%arg0, %arg1 : tensor<32x32xf32>, tensor<32x16xf32>) outs(%7 : tensor<32x16xf32>) -> tensor<32x16xf32>
        %9 = bufferization.to_buffer %8 : tensor<32x16xf32> to memref<32x16xf32>
        %collapse_shape = memref.collapse_shape %9 [[0, 1]] : memref<32x16xf32> into memref<512xf32>
        %alloc = memref.alloc() : memref<512xf32>
        mpi.allreduce(%collapse_shape, %alloc, MPI_SUM, %newcomm) : memref<512xf32>, memref<512xf32>
        %expand_shape = memref.expand_shape %alloc [[0, 1]] output_shape [32, 16] : memref<512xf32> into memref<32x16xf32>
        %10 = bufferization.to_tensor %expand_shape restrict writable : memref<32x16xf32> to tensor<32x16xf32>
        return %10 : tensor<32x16xf32>
      }
    }
    ```
  }];
  let dependentDialects = ["::mlir::mpi::MPIDialect", "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::DLTIDialect",
                           "::mlir::tensor::TensorDialect", "::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect"];
}

def PartirAuto : Pass<"partir-auto", "::mlir::ModuleOp"> {
  let summary = "Automatic partitioning along an axis (Monte Carlo tree search)";
  let description = [{
    Chooses the tile and replicate actions along mesh axis `axis` by a goal-oriented Monte
    Carlo tree search (UCT), as in the PartIR papers, and applies them as a tactic would:
    the module comes out as `partir-schedule` leaves it, a PartIR:Core program.

    Candidates are the arguments of the entry functions. Repeated layers
    (`params/layers/0/wq`, `params/layers/1/wq`, same shape) are decided together; tiles
    that propagation ties together (a weight, its Adam moments) are one action; tiles that
    propagation refuses or that change nothing are dropped. Each plan is priced by partir's
    simulator on `device` (as `partir-simulate` prices it, plus the gathers the next step
    would need when state comes out split differently from how it went in) and must fit
    `memory` per device (default: the device's capacity). A compute search (tiles through
    every op, replicates) is followed by a memory search (tiles through elementwise ops only:
    ZeRO) on top of its plan. Speed first: when the result does not fit, the compute search
    runs again judging plans by the peak ZeRO could still reach. Each search stops after
    `evaluations` distinct plans or `time-limit` seconds; it is deterministic under `seed`
    when it stops by evaluations. When the host's context is multithreaded (mlir-opt's is,
    unless `--mlir-disable-threading`), plans are priced on every core (at most 8, or
    `PARTIR_THREADS`); the plan found does not depend on how many.

    Remarks say what was searched and found (here on a forward MLP with 4096 tokens):

    ```
    remark: partir-auto: axis 'batch': 13 raw actions, 10 after analysis, 26 plans priced (+10 probes) in 0.01 s (2740/s) (all of them); step 200.3 us, peak 68.00 MiB
    remark: partir-auto: tactic 'auto' on 'batch': tile { x = 0 }
    ```

    Errors: an unknown axis, a module without a mesh, a bad size, or no plan within the
    memory budget (the error names the smallest peak found).
  }];
  let options = [
    Option<"axis", "axis", "std::string", "\"\"", "mesh axis to search over">,
    Option<"memory", "memory", "std::string", "\"\"",
           "memory budget per device with its unit (16GiB); default: the device's capacity">,
    Option<"device", "device", "std::string", "\"\"",
           "device to price plans on: a preset or a device TOML file (default tpu-v3)">,
    Option<"timeLimit", "time-limit", "double", "60.0", "seconds per search phase">,
    Option<"seed", "seed", "int64_t", "0", "seed of the search">,
    Option<"evaluations", "evaluations", "int64_t", "100",
           "most distinct plans priced per search phase">,
  ];
}

#endif // PARTIR_PASSES
