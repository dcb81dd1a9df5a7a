// RUN: not mlir-opt %plugin -p 'builtin.module(partir-simulate{device=tpu-v9})' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-simulate{device=%S/Inputs/missing.toml})' %s 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-simulate{device=%S/Inputs/bad-device.toml})' %s 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-simulate{report=/nonexistent/dir/r.json})' %s 2>&1 | FileCheck %s --check-prefix=REPORT

// UNKNOWN: simulate-errors.mlir:[[@LINE+5]]:1: error: partir-simulate: unknown device 'tpu-v9' (presets: tpu-v3, tpu-v4, tpu-v5e, tpu-v5p, a100-40gb, a100-80gb, h100-sxm, a100-dgx, h100-dgx; or a TOML file)
// MISSING: error: partir-simulate: cannot read device file '{{.*}}missing.toml'
// BAD: error: partir-simulate: device file '{{.*}}bad-device.toml': memory_gbps must be a positive number, not -1
// REPORT: error: partir-simulate: cannot write the report '/nonexistent/dir/r.json'
partir.mesh @mesh ["batch"=4]
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
