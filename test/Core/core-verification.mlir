// One case per PartIR:Core verifier (and custom-parser) diagnostic.
// RUN: mlir-opt %plugin %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// partir.mesh
//===----------------------------------------------------------------------===//

// Name/size count mismatch is only expressible in generic form.
// expected-error @+1 {{'partir.mesh' op has 2 axis names but 1 axis sizes}}
"partir.mesh"() <{sym_name = "mesh", axis_names = ["batch", "model"], axis_sizes = array<i64: 4>}> : () -> ()

// -----

// expected-error @+1 {{'partir.mesh' op must declare at least one axis}}
partir.mesh @mesh []

// -----

// expected-error @+1 {{'partir.mesh' op declares axis "batch" twice}}
partir.mesh @mesh ["batch"=4, "batch"=2]

// -----

// expected-error @+1 {{'partir.mesh' op axis "model" must have a positive size, got 0}}
partir.mesh @mesh ["batch"=4, "model"=0]

// -----

// expected-error @+1 {{'partir.mesh' op axis "batch" must have a positive size, got -2}}
partir.mesh @mesh ["batch"=-2]

// -----

// expected-error @+1 {{'partir.mesh' op axis names must be non-empty}}
partir.mesh @mesh [""=4]

// -----

partir.mesh @mesh ["batch"=4]
// expected-error @+1 {{'partir.mesh' op is a second mesh in this module; @mesh is already declared (one partir.mesh per module)}}
partir.mesh @other ["model"=2]

// -----

func.func @mesh_in_func() {
  // expected-error @+1 {{'partir.mesh' op expects parent op 'builtin.module'}}
  partir.mesh @mesh ["batch"=4]
  return
}

// -----

// expected-error @+1 {{expected '=' and a size after mesh axis "batch", as in ["batch"=4]}}
partir.mesh @mesh ["batch"]

//===----------------------------------------------------------------------===//
// partir.loop
//===----------------------------------------------------------------------===//

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @axis_not_in_mesh(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'partir.loop' op names mesh axis "seq", which is not in mesh @mesh [batch=4, model=2]}}
  %y = partir.loop "seq" [#partir.sum] (%r: !partir.range<4>) {
    partir.yield %x : tensor<8xf32>
  } : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @no_mesh(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'partir.loop' op names mesh axis "batch" but the module declares no partir.mesh (add one, e.g. with partir-mesh{axes=batch=4})}}
  %y = partir.loop "batch" [#partir.sum] (%r: !partir.range<4>) {
    partir.yield %x : tensor<8xf32>
  } : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @range_size_mismatch(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'partir.loop' op iterates over !partir.range<2> but axis "batch" has size 4}}
  %y = partir.loop "batch" [#partir.sum] (%r: !partir.range<2>) {
    partir.yield %x : tensor<8xf32>
  } : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @block_arg_not_range(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'partir.loop' op body must have exactly one argument, of type !partir.range<N>}}
  %y = partir.loop "batch" [#partir.sum] (%r: index) {
    partir.yield %x : tensor<8xf32>
  } : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Two block arguments are only expressible in generic form.
partir.mesh @mesh ["batch"=4]
func.func @two_block_args(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'partir.loop' op body must have exactly one argument, of type !partir.range<N>}}
  %y = "partir.loop"() <{axis = "batch", actions = [#partir.sum]}> ({
  ^bb0(%r: !partir.range<4>, %s: !partir.range<4>):
    partir.yield %x : tensor<8xf32>
  }) : () -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// A loop without results is only expressible in generic form.
partir.mesh @mesh ["batch"=4]
func.func @zero_results() {
  // expected-error @+1 {{'partir.loop' op must have at least one result}}
  "partir.loop"() <{axis = "batch", actions = []}> ({
  ^bb0(%r: !partir.range<4>):
    partir.yield
  }) : () -> ()
  return
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @action_count(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'partir.loop' op has 2 actions for 1 results; each result needs one action}}
  %y = partir.loop "batch" [#partir.sum, #partir.sum] (%r: !partir.range<4>) {
    partir.yield %x : tensor<8xf32>
  } : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @bad_action(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'partir.loop' op action #0 is 0 : i64; expected #partir.tile<dim>, #partir.sum or #partir.any}}
  %y = partir.loop "batch" [0] (%r: !partir.range<4>) {
    partir.yield %x : tensor<8xf32>
  } : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// `#partir.any`: every iteration yields the same value, which is the result (same type).
partir.mesh @mesh ["batch"=4]
func.func @any_changes_type(%x: tensor<8xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'partir.loop' op result #0 has type 'tensor<32xf32>' but #partir.any of values of type 'tensor<8xf32>' produces 'tensor<8xf32>'}}
  %y = partir.loop "batch" [#partir.any] (%r: !partir.range<4>) {
    partir.yield %x : tensor<8xf32>
  } : tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @tile_dim_out_of_rank(%x: tensor<8xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'partir.loop' op result #0: #partir.tile<1> needs a ranked tensor of rank > 1, but the body yields 'tensor<8xf32>'}}
  %y = partir.loop "batch" [#partir.tile<1>] (%r: !partir.range<4>) {
    partir.yield %x : tensor<8xf32>
  } : tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @tile_non_tensor(%x: f32) -> f32 {
  // expected-error @+1 {{'partir.loop' op result #0: #partir.tile<0> needs a ranked tensor of rank > 0, but the body yields 'f32'}}
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    partir.yield %x : f32
  } : f32
  return %y : f32
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @tile_result_type(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'partir.loop' op result #0 has type 'tensor<8x16xf32>' but #partir.tile<0> of 4 iterations yielding 'tensor<8x16xf32>' produces 'tensor<32x16xf32>'}}
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    partir.yield %x : tensor<8x16xf32>
  } : tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @sum_result_type(%x: tensor<8xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'partir.loop' op result #0 has type 'tensor<32xf32>' but #partir.sum<max> of values of type 'tensor<8xf32>' produces 'tensor<8xf32>'}}
  %y = partir.loop "batch" [#partir.sum<max>] (%r: !partir.range<4>) {
    partir.yield %x : tensor<8xf32>
  } : tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @yield_count(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'partir.loop' op yields 2 values but has 1 results}}
  %y = partir.loop "batch" [#partir.sum] (%r: !partir.range<4>) {
    partir.yield %x, %x : tensor<8xf32>, tensor<8xf32>
  } : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @no_yield(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'partir.loop' op body must end with partir.yield}}
  %y = partir.loop "batch" [#partir.sum] (%r: !partir.range<4>) {
    llvm.unreachable
  } : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @nested_same_axis(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-note @+1 {{enclosing loop over "batch"}}
  %y = partir.loop "batch" [#partir.sum] (%r: !partir.range<4>) {
    %z = partir.loop "model" [#partir.sum] (%m: !partir.range<2>) {
      // expected-error @+1 {{'partir.loop' op is nested in another loop over axis "batch"; an axis appears at most once on a nesting path}}
      %w = partir.loop "batch" [#partir.sum] (%s: !partir.range<4>) {
        partir.yield %x : tensor<8xf32>
      } : tensor<8xf32>
      partir.yield %w : tensor<8xf32>
    } : tensor<8xf32>
    partir.yield %z : tensor<8xf32>
  } : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @yield_outside_loop(%x: tensor<8xf32>) {
  // expected-error @+1 {{'partir.yield' op expects parent op 'partir.loop'}}
  partir.yield %x : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// partir.slice
//===----------------------------------------------------------------------===//

// -----

// A non-divisible slice is only expressible in generic form: the custom syntax infers the
// range size from the two types.
partir.mesh @mesh ["batch"=4]
func.func @slice_not_divisible(%x: tensor<30x64xf32>) -> tensor<28x64xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    // expected-error @+1 {{'partir.slice' op dim 0 of size 30 is not divisible by the range size 4}}
    %xs = "partir.slice"(%x, %r) <{dim = 0 : i64}> : (tensor<30x64xf32>, !partir.range<4>) -> tensor<7x64xf32>
    partir.yield %xs : tensor<7x64xf32>
  } : tensor<28x64xf32>
  return %y : tensor<28x64xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @slice_result_type(%x: tensor<32x64xf32>) -> tensor<32x32xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    // expected-error @+1 {{'partir.slice' op result type 'tensor<8x32xf32>' should be 'tensor<8x64xf32>' (chunk of 4 along dim 0)}}
    %xs = partir.slice 0 %x[%r] : tensor<32x64xf32> -> tensor<8x32xf32>
    partir.yield %xs : tensor<8x32xf32>
  } : tensor<32x32xf32>
  return %y : tensor<32x32xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @slice_element_type(%x: tensor<32x64xf32>) -> tensor<32x64xf16> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    // expected-error @+1 {{'partir.slice' op result type 'tensor<8x64xf16>' should be 'tensor<8x64xf32>' (chunk of 4 along dim 0)}}
    %xs = partir.slice 0 %x[%r] : tensor<32x64xf32> -> tensor<8x64xf16>
    partir.yield %xs : tensor<8x64xf16>
  } : tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

// -----

// An out-of-range dim is caught by the custom parser (below); in generic form, by the verifier.
partir.mesh @mesh ["batch"=4]
func.func @slice_dim_out_of_range(%x: tensor<32xf32>) -> tensor<32xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    // expected-error @+1 {{'partir.slice' op slices dim 1 of a rank-1 tensor}}
    %xs = "partir.slice"(%x, %r) <{dim = 1 : i64}> : (tensor<32xf32>, !partir.range<4>) -> tensor<8xf32>
    partir.yield %xs : tensor<8xf32>
  } : tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @slice_range_not_from_loop(%x: tensor<32xf32>, %r: !partir.range<4>) -> tensor<8xf32> {
  // expected-error @+1 {{'partir.slice' op range must be the index of an enclosing partir.loop}}
  %xs = partir.slice 0 %x[%r] : tensor<32xf32> -> tensor<8xf32>
  return %xs : tensor<8xf32>
}

// -----

// The range size the types imply must match the range's type.
partir.mesh @mesh ["batch"=4]
func.func @slice_range_size(%x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-note @+1 {{prior use here}}
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    // expected-error @+1 {{use of value '%r' expects different type than prior uses: '!partir.range<2>' vs '!partir.range<4>'}}
    %xs = partir.slice 0 %x[%r] : tensor<32xf32> -> tensor<16xf32>
    partir.yield %xs : tensor<16xf32>
  } : tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @slice_parse_dim(%x: tensor<32xf32>) -> tensor<32xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    // expected-error @+1 {{partir.slice needs ranked tensor types with a dim 1 to slice}}
    %xs = partir.slice 1 %x[%r] : tensor<32xf32> -> tensor<8xf32>
    partir.yield %xs : tensor<8xf32>
  } : tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @slice_parse_unranked(%x: tensor<*xf32>) -> tensor<32xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    // expected-error @+1 {{partir.slice needs ranked tensor types with a dim 0 to slice}}
    %xs = partir.slice 0 %x[%r] : tensor<*xf32> -> tensor<8xf32>
    partir.yield %xs : tensor<8xf32>
  } : tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @slice_parse_not_whole_chunk(%x: tensor<30xf32>) -> tensor<28xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    // expected-error @+1 {{partir.slice of dim 0: size 7 is not a whole chunk of size 30 (the result's dim must divide the source's dim into equal chunks)}}
    %xs = partir.slice 0 %x[%r] : tensor<30xf32> -> tensor<7xf32>
    partir.yield %xs : tensor<7xf32>
  } : tensor<28xf32>
  return %y : tensor<28xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @slice_parse_dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    // expected-error @+1 {{partir.slice of dim 0 needs static sizes there to infer the range size, got 'tensor<?xf32>' -> 'tensor<?xf32>'}}
    %xs = partir.slice 0 %x[%r] : tensor<?xf32> -> tensor<?xf32>
    partir.yield %xs : tensor<?xf32>
  } : tensor<?xf32>
  return %y : tensor<?xf32>
}

//===----------------------------------------------------------------------===//
// partir.replicate
//===----------------------------------------------------------------------===//

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @replicate_unknown_axis(%w: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'partir.replicate' op names mesh axis "seq", which is not in mesh @mesh [batch=4, model=2]}}
  %p = partir.replicate "seq" %w : tensor<64xf32>
  return %p : tensor<64xf32>
}

// -----

func.func @replicate_no_mesh(%w: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'partir.replicate' op names mesh axis "model" but the module declares no partir.mesh}}
  %p = partir.replicate "model" %w : tensor<64xf32>
  return %p : tensor<64xf32>
}

//===----------------------------------------------------------------------===//
// Types and attributes
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{!partir.range size must be positive, got 0}}
func.func private @range_zero(!partir.range<0>)

// -----

// expected-error @+1 {{!partir.range size must be positive, got -3}}
func.func private @range_negative(!partir.range<-3>)

// -----

// expected-error @+1 {{#partir.tile dim must be non-negative, got -1}}
func.func private @tile_negative() attributes {a = #partir.tile<-1>}

// -----

// expected-error @+2 {{expected one of [sum, max, min, mul] for combiner of partial results, got: avg}}
// expected-error @+1 {{failed to parse Partir_SumAttr parameter 'kind' which is to be a `::mlir::partir::ReductionKind`}}
func.func private @sum_unknown_kind() attributes {a = #partir.sum<avg>}

//===----------------------------------------------------------------------===//
// partir.permute
//===----------------------------------------------------------------------===//

// -----

partir.mesh @mesh ["batch"=4]
func.func @permute_reads_twice(%x: tensor<32xf32>) -> tensor<32xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    // expected-error @+1 {{'partir.permute' op reads source 1 twice (each sends to at most one other)}}
    %c = partir.permute 0 %x[%r] from [1, 1, -1, -1] : tensor<32xf32> -> tensor<8xf32>
    partir.yield %c : tensor<8xf32>
  } : tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @permute_source_out_of_range(%x: tensor<32xf32>) -> tensor<32xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    // expected-error @+1 {{'partir.permute' op source 4 is not in [-1, 4)}}
    %c = partir.permute 0 %x[%r] from [4, 0, 1, 2] : tensor<32xf32> -> tensor<8xf32>
    partir.yield %c : tensor<8xf32>
  } : tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

partir.mesh @mesh ["batch"=4]
func.func @permute_too_few_sources(%x: tensor<32xf32>) -> tensor<32xf32> {
  %y = partir.loop "batch" [#partir.tile<0>] (%r: !partir.range<4>) {
    // expected-error @+1 {{'partir.permute' op lists 2 sources for 4 devices}}
    %c = partir.permute 0 %x[%r] from [1, 0] : tensor<32xf32> -> tensor<8xf32>
    partir.yield %c : tensor<8xf32>
  } : tensor<32xf32>
  return %y : tensor<32xf32>
}
