// One case per PartIR:HLO verifier (and sharding parser) diagnostic.
// RUN: mlir-opt %plugin %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// #partir_hlo.sharding
//===----------------------------------------------------------------------===//

// expected-error @+1 {{sharding names axis "batch" more than once}}
func.func private @sharding_repeated_axis(tensor<8x8xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {"batch"}]>})

// -----

// expected-error @+1 {{sharding names axis "model" more than once}}
func.func private @sharding_repeated_axis_one_dim() attributes {s = #partir_hlo.sharding<[{"model", "model"}]>}

// -----

// expected-error @+1 {{expected '{' to open the axes of dim 1 of a sharding, e.g. {"batch"}, or {} for a replicated dim}}
func.func private @sharding_dim_not_braced() attributes {s = #partir_hlo.sharding<[{}, "batch"]>}

// -----

// expected-error @+1 {{expected string}}
func.func private @sharding_axis_not_string() attributes {s = #partir_hlo.sharding<[{batch}]>}

//===----------------------------------------------------------------------===//
// Axes of collectives (checked the same way for every collective)
//===----------------------------------------------------------------------===//

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @unknown_axis(%x: tensor<8x64xf32>) -> tensor<32x64xf32> {
  // expected-error @+1 {{'partir_hlo.all_gather' op names mesh axis "seq", which is not in mesh @mesh [batch=4, model=2]}}
  %y = partir_hlo.all_gather %x dim 0 axes ["seq"] : tensor<8x64xf32> -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// -----

func.func @no_mesh(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'partir_hlo.all_reduce' op names mesh axis "batch" but the module declares no partir.mesh}}
  %y = partir_hlo.all_reduce sum %x axes ["batch"] : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @repeated_axis(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'partir_hlo.all_reduce' op names axis "batch" more than once}}
  %y = partir_hlo.all_reduce sum %x axes ["batch", "model", "batch"] : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @no_axes(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'partir_hlo.all_reduce' op names no mesh axes; a collective spans at least one axis}}
  %y = partir_hlo.all_reduce max %x axes [] : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @reduce_scatter_unknown_axis(%x: tensor<64xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'partir_hlo.reduce_scatter' op names mesh axis "Batch", which is not in mesh @mesh [batch=4, model=2]}}
  %y = partir_hlo.reduce_scatter sum %x dim 0 axes ["Batch"] : tensor<64xf32> -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_slice_no_axes(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'partir_hlo.all_slice' op names no mesh axes; a collective spans at least one axis}}
  %y = partir_hlo.all_slice %x dim 0 axes [] : tensor<64xf32> -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_to_all_repeated_axis(%x: tensor<8x64xf32>) -> tensor<128x4xf32> {
  // expected-error @+1 {{'partir_hlo.all_to_all' op names axis "model" more than once}}
  %y = partir_hlo.all_to_all %x split 1 concat 0 axes ["model", "model"] : tensor<8x64xf32> -> tensor<128x4xf32>
  return %y : tensor<128x4xf32>
}

//===----------------------------------------------------------------------===//
// all_gather
//===----------------------------------------------------------------------===//

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_gather_dim(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'partir_hlo.all_gather' op gathered dim 2 is out of range for 'tensor<8x64xf32>'}}
  %y = partir_hlo.all_gather %x dim 2 axes ["batch"] : tensor<8x64xf32> -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_gather_negative_dim(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'partir_hlo.all_gather' op gathered dim -1 is out of range for 'tensor<8x64xf32>'}}
  %y = partir_hlo.all_gather %x dim -1 axes ["batch"] : tensor<8x64xf32> -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_gather_result_type(%x: tensor<8x64xf32>) -> tensor<32x64xf32> {
  // expected-error @+1 {{'partir_hlo.all_gather' op result type 'tensor<32x64xf32>' should be 'tensor<64x64xf32>' (all_gather multiplies the gathered dim by the size of its axes)}}
  %y = partir_hlo.all_gather %x dim 0 axes ["batch", "model"] : tensor<8x64xf32> -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_gather_element_type(%x: tensor<8x64xf32>) -> tensor<32x64xf16> {
  // expected-error @+1 {{'partir_hlo.all_gather' op result type 'tensor<32x64xf16>' should be 'tensor<32x64xf32>'}}
  %y = partir_hlo.all_gather %x dim 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

//===----------------------------------------------------------------------===//
// all_reduce
//===----------------------------------------------------------------------===//

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_reduce_unknown_kind(%x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{custom op 'partir_hlo.all_reduce' expected string or keyword containing one of the following enum values for attribute 'kind' [sum, max, min, mul]}}
  %y = partir_hlo.all_reduce avg %x axes ["batch"] : tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_reduce_type(%x: tensor<64xf32>) -> tensor<16xf32> {
  // Each result has its operand's type.
  // expected-error @+2 {{'partir_hlo.all_reduce' op failed to infer returned types}}
  // expected-error @+1 {{'partir_hlo.all_reduce' op inferred type(s) 'tensor<64xf32>' are incompatible with return type(s) of operation 'tensor<16xf32>'}}
  %y = "partir_hlo.all_reduce"(%x) <{kind = 0 : i32, axes = ["batch"]}> : (tensor<64xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_reduce_combined_types(%x: tensor<64xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<64xf32>) {
  // A combined all_reduce's results follow its operands' order.
  // expected-error @+2 {{'partir_hlo.all_reduce' op failed to infer returned types}}
  // expected-error @+1 {{'partir_hlo.all_reduce' op inferred type(s) 'tensor<64xf32>', 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<f32>', 'tensor<64xf32>'}}
  %y:2 = "partir_hlo.all_reduce"(%x, %s) <{kind = 0 : i32, axes = ["batch"]}> : (tensor<64xf32>, tensor<f32>) -> (tensor<f32>, tensor<64xf32>)
  return %y#0, %y#1 : tensor<f32>, tensor<64xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_reduce_nothing() {
  // expected-error @+1 {{'partir_hlo.all_reduce' op reduces nothing: it needs at least one operand}}
  "partir_hlo.all_reduce"() <{kind = 0 : i32, axes = ["batch"]}> : () -> ()
  return
}

//===----------------------------------------------------------------------===//
// reduce_scatter
//===----------------------------------------------------------------------===//

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @reduce_scatter_dim(%x: tensor<64xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'partir_hlo.reduce_scatter' op scattered dim 1 is out of range for 'tensor<64xf32>'}}
  %y = partir_hlo.reduce_scatter sum %x dim 1 axes ["batch"] : tensor<64xf32> -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @reduce_scatter_not_divisible(%x: tensor<6x64xf32>) -> tensor<1x64xf32> {
  // expected-error @+1 {{'partir_hlo.reduce_scatter' op dim 0 of size 6 is not divisible by 4, the size of axes ["batch"]}}
  %y = partir_hlo.reduce_scatter sum %x dim 0 axes ["batch"] : tensor<6x64xf32> -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @reduce_scatter_result_type(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error @+1 {{'partir_hlo.reduce_scatter' op result type 'tensor<64x256xf32>' should be 'tensor<16x256xf32>' (reduce_scatter divides the scattered dim by the size of its axes)}}
  %y = partir_hlo.reduce_scatter sum %x dim 0 axes ["batch"] : tensor<64x256xf32> -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}

//===----------------------------------------------------------------------===//
// all_slice
//===----------------------------------------------------------------------===//

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_slice_dim(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  // expected-error @+1 {{'partir_hlo.all_slice' op sliced dim 2 is out of range for 'tensor<64x256xf32>'}}
  %y = partir_hlo.all_slice %x dim 2 axes ["model"] : tensor<64x256xf32> -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_slice_not_divisible(%x: tensor<64x12xf32>) -> tensor<64x1xf32> {
  // expected-error @+1 {{'partir_hlo.all_slice' op dim 1 of size 12 is not divisible by 8, the size of axes ["batch", "model"]}}
  %y = partir_hlo.all_slice %x dim 1 axes ["batch", "model"] : tensor<64x12xf32> -> tensor<64x1xf32>
  return %y : tensor<64x1xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_slice_result_type(%x: tensor<64x256xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'partir_hlo.all_slice' op result type 'tensor<64x64xf32>' should be 'tensor<64x128xf32>' (all_slice divides the sliced dim by the size of its axes)}}
  %y = partir_hlo.all_slice %x dim 1 axes ["model"] : tensor<64x256xf32> -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}

//===----------------------------------------------------------------------===//
// all_to_all
//===----------------------------------------------------------------------===//

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_to_all_same_dim(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'partir_hlo.all_to_all' op splits and concatenates the same dim 0; that is not a redistribution}}
  %y = partir_hlo.all_to_all %x split 0 concat 0 axes ["batch"] : tensor<8x64xf32> -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_to_all_split_dim(%x: tensor<8x64xf32>) -> tensor<32x16xf32> {
  // expected-error @+1 {{'partir_hlo.all_to_all' op split dim 2 is out of range for 'tensor<8x64xf32>'}}
  %y = partir_hlo.all_to_all %x split 2 concat 0 axes ["batch"] : tensor<8x64xf32> -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_to_all_concat_dim(%x: tensor<8x64xf32>) -> tensor<32x16xf32> {
  // expected-error @+1 {{'partir_hlo.all_to_all' op concat dim 5 is out of range for 'tensor<8x64xf32>'}}
  %y = partir_hlo.all_to_all %x split 1 concat 5 axes ["batch"] : tensor<8x64xf32> -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_to_all_not_divisible(%x: tensor<8x6xf32>) -> tensor<32x1xf32> {
  // expected-error @+1 {{'partir_hlo.all_to_all' op dim 1 of size 6 is not divisible by 4, the size of axes ["batch"]}}
  %y = partir_hlo.all_to_all %x split 1 concat 0 axes ["batch"] : tensor<8x6xf32> -> tensor<32x1xf32>
  return %y : tensor<32x1xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @all_to_all_result_type(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'partir_hlo.all_to_all' op result type 'tensor<8x64xf32>' should be 'tensor<32x16xf32>' (all_to_all divides the split dim and multiplies the concat dim)}}
  %y = partir_hlo.all_to_all %x split 1 concat 0 axes ["batch"] : tensor<8x64xf32> -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

//===----------------------------------------------------------------------===//
// partir_hlo.sharding on function arguments and results
//===----------------------------------------------------------------------===//

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
// expected-error @+1 {{'func.func' op argument #1 of type 'tensor<8x64xf32>' has rank 2 but its sharding #partir_hlo.sharding<[{"batch"}]> has 1 entries; it needs one per dim}}
func.func private @arg_sharding_rank(tensor<8xf32>, tensor<8x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}]>})

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
// expected-error @+1 {{'func.func' op result #0 of type 'tensor<8xf32>' has rank 1 but its sharding #partir_hlo.sharding<[{"batch"}, {}]> has 2 entries; it needs one per dim}}
func.func private @result_sharding_rank() -> (tensor<8xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}, {}]>})

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
// expected-error @+1 {{'func.func' op argument #0 has sharding #partir_hlo.sharding<[{}, {"seq"}]>, which names axis "seq", not in mesh @mesh [batch=4, model=2]}}
func.func private @arg_sharding_unknown_axis(tensor<8x64xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{}, {"seq"}]>})

// -----

// expected-error @+1 {{'func.func' op argument #0 has sharding #partir_hlo.sharding<[{"batch"}]> but the module declares no partir.mesh}}
func.func private @arg_sharding_no_mesh(tensor<8xf32> {partir_hlo.sharding = #partir_hlo.sharding<[{"batch"}]>})

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
// expected-error @+1 {{'func.func' op argument #0 has type 'f32', but a partir_hlo.sharding needs a ranked tensor}}
func.func private @arg_sharding_scalar(f32 {partir_hlo.sharding = #partir_hlo.sharding<[]>})

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
// expected-error @+1 {{'func.func' op argument #0: partir_hlo.sharding must be a #partir_hlo.sharding<[...]>, got "batch"}}
func.func private @arg_sharding_not_sharding(tensor<8xf32> {partir_hlo.sharding = "batch"})

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
// expected-error @+1 {{'func.func' op result #0 has unknown attribute "partir_hlo.shardng"; the only partir_hlo attribute there is partir_hlo.sharding}}
func.func private @result_unknown_hlo_attr() -> (tensor<8xf32> {partir_hlo.shardng = #partir_hlo.sharding<[{"batch"}]>})

//===----------------------------------------------------------------------===//
// collective_permute
//===----------------------------------------------------------------------===//

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @collective_permute_two_axes(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'partir_hlo.collective_permute' op permutes along 2 axes; a collective_permute names one}}
  %y = partir_hlo.collective_permute %x axes ["batch", "model"] from [1, 2, 3, 4, 5, 6, 7, 0] : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @collective_permute_twice(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'partir_hlo.collective_permute' op reads source 0 twice (each sends to at most one other)}}
  %y = partir_hlo.collective_permute %x axes ["batch"] from [0, 0, 1, 2] : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
