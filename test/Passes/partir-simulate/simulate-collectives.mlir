// RUN: mlir-opt %plugin -p 'builtin.module(partir-simulate{device=%S/Inputs/round.toml report=%t.json})' %s -o /dev/null 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
//
// Ring alpha-beta costs on the round device (Inputs/round.toml: 100 GB/s and 1 us per step,
// but 10 GB/s on "model"). Mesh batch=4, model=2. S = the buffer (collectives.py convention).
// - all_reduce of 4 MiB (4194304 B) over batch: 2·3·1 us + 2·(3/4)·S / 1e11 = 68.9 us, sends 6 MiB;
//   it is a combined all_reduce of two 2 MiB buffers: one collective, one latency (as two it
//   would cost 6 us more)
// - all_gather to 2 MiB (512x1024 f32) over model: 1·1 us + (1/2)·2097152 / 1e10 = 105.9 us,
//   sends 1 MiB
// - reduce_scatter of 1 MiB over [batch, model] (8 devices, slowest link: model):
//   7·1 us + (7/8)·1048576 / 1e10 = 98.75 us, sends 896 KiB
// Step: 273.5 us, all communication.
// - all_slice: local, free.

// CHECK: partir-simulate: round, mesh batch=4 model=2 (8 devices), per device
// CHECK: step time    273.5 us   compute 0, communication 273.5 us
// CHECK: collectives:
// CHECK-NEXT: kind                axes         count  bytes     sent        time
// CHECK-NEXT: all_gather          model        1      2.00 MiB  1.00 MiB    105.9 us
// CHECK-NEXT: all_reduce sum      batch        1      4.00 MiB  6.00 MiB    68.9 us
// CHECK-NEXT: reduce_scatter sum  batch,model  1      1.00 MiB  896.00 KiB  98.8 us
// CHECK-NEXT: all_slice           batch        1      0 B       0 B         0

// JSON: "communication": [
// JSON-NEXT: {
// JSON-NEXT: "axes": [
// JSON-NEXT: "batch"
// JSON-NEXT: ],
// JSON-NEXT: "count": 1,
// JSON-NEXT: "bytes": 4194304.0,
// JSON-NEXT: "traffic_bytes": 6291456.0,
// JSON-NEXT: "seconds": 0.00006891456

partir.mesh @mesh ["batch"=4, "model"=2]
func.func @main(%g: tensor<1024x512xf32>, %k: tensor<1024x512xf32>, %h: tensor<256x1024xf32>, %s: tensor<1024x256xf32>, %r: tensor<64x64xf32>)
    -> (tensor<1024x512xf32>, tensor<1024x512xf32>, tensor<512x1024xf32>, tensor<128x256xf32>, tensor<16x64xf32>) {
  %0:2 = partir_hlo.all_reduce sum %g, %k axes ["batch"] : tensor<1024x512xf32>, tensor<1024x512xf32>
  %1 = partir_hlo.all_gather %h dim 0 axes ["model"] : tensor<256x1024xf32> -> tensor<512x1024xf32>
  %2 = partir_hlo.reduce_scatter sum %s dim 0 axes ["batch", "model"] : tensor<1024x256xf32> -> tensor<128x256xf32>
  %3 = partir_hlo.all_slice %r dim 0 axes ["batch"] : tensor<64x64xf32> -> tensor<16x64xf32>
  return %0#0, %0#1, %1, %2, %3 : tensor<1024x512xf32>, tensor<1024x512xf32>, tensor<512x1024xf32>, tensor<128x256xf32>, tensor<16x64xf32>
}
