// A `stablehlo.while`'s rule is read off its body: `lax.scan` over 3 stacked layers
// (w: 3x4x4, b: 3x4) carrying x: 8x4. x's rows pass through every op of the body back into
// the carry, so its dim 0 is one pass-through factor (n); its dim 1 is contracted by the
// layer's matmul, and the stacked weights are read by a dynamic slice on the counter: whole.
// RUN: mlir-opt %plugin --allow-unregistered-dialect -p 'builtin.module(partir-inline-calls, partir-print-rules)' %examples/op_forms/scan_layers.mlir -o /dev/null 2>&1 | FileCheck %s
// CHECK: stablehlo.while: ([i,j,k],[l,m],[],[n,o]) -> ([i,j,k],[l,m],[],[n,o]) replicate={i,j,k,l,m,o} sizes={i=3,j=4,k=4,l=3,m=4,n=8,o=4}
