// RUN: mlir-opt %plugin -p 'builtin.module(partir-simulate{device=%S/Inputs/round.toml report=%t.json})' %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=TEXT
// RUN: FileCheck %s --check-prefix=JSON < %t.json
//
// One 256x512 · 512x1024 f32 matmul into a zero fill, on the round device (Inputs/round.toml).
// matmul: factors i=256 j=1024 k=512, body mulf+addf → 2·256·1024·512 = 268435456 FLOP on the
//   matrix units: 2.684 us; bytes A 524288 + B 2097152 + C 1048576 = 3670016: 0.367 us →
//   compute bound, 2.684 us.
// fill: 0 FLOP, writes 1048576 B: 0.105 us, memory bound.
// Memory: arguments 2621440 B live throughout; the fill's buffer (1 MiB), which the matmul
// writes in place (its destination dies there) → peak 3670016 B = 3.50 MiB.

// TEXT: partir-simulate: round, no mesh (1 device), per device
// TEXT: step time    2.8 us
// TEXT: compute      268.44 MFLOP
// TEXT: peak memory  3.50 MiB    of 1.00 GiB (fits); arguments 2.50 MiB, results 1.00 MiB
// TEXT-NEXT: peak at linalg.fill at {{.*}}simulate-matmul.mlir:[[@LINE+21]]:11
// TEXT: top ops:
// TEXT-NEXT: op
// TEXT-NEXT: linalg.matmul  2.7 us    compute  268.44 MFLOP  3.50 MiB  {{.*}}simulate-matmul.mlir:[[@LINE+19]]:8
// TEXT-NEXT: linalg.fill    104.9 ns  memory   0 FLOP        1.00 MiB  {{.*}}simulate-matmul.mlir:[[@LINE+17]]:11

// JSON: "totals": {
// JSON-NEXT: "flops": 268435456.0,
// JSON-NEXT: "transcendentals": 0.0,
// JSON-NEXT: "bytes_accessed": 4718592.0,
// JSON-NEXT: "padding_flops": 0.0,
// JSON-NEXT: "padding_bytes": 0.0,
// JSON-NEXT: "compute_seconds": 2.78921216e-6,
// JSON-NEXT: "communication_seconds": 0.0,
// JSON: "peak_memory_bytes": 3670016.0,
// JSON: "fits": true
// JSON: "collectives": [],

func.func @main(%a: tensor<256x512xf32>, %b: tensor<512x1024xf32>) -> tensor<256x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<256x1024xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %c = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x1024xf32>) outs(%init : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  return %c : tensor<256x1024xf32>
}
