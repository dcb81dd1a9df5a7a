// Fuzz classes 3 and 4: an empty axis name panicked (an empty string read through melior),
// and names holding a quote, a backslash or a control character panicked when printed into a
// sharding. Such names are rejected with a located error; any other name is escaped where it
// is printed.
// RUN: mlir-opt %plugin -p 'builtin.module(partir-schedule{file=%S/Inputs/empty-axis.toml})' %s -verify-diagnostics
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-schedule{file=%S/Inputs/quote-axis.toml})' %s 2>&1 | FileCheck %s --check-prefix=QUOTE
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-schedule{file=%S/Inputs/newline-axis.toml})' %s 2>&1 | FileCheck %s --check-prefix=NEWLINE
// RUN: not mlir-opt %plugin -p 'builtin.module(partir-mesh{axes=a\"b=2})' %s 2>&1 | FileCheck %s --check-prefix=OPTION

// QUOTE: error: partir-schedule: schedule '{{.*}}quote-axis.toml': mesh axis name "q\"t" holds a quote, a backslash or a control character; name axes with printable text (batch, model, ...)
// NEWLINE: error: partir-schedule: schedule '{{.*}}newline-axis.toml': mesh axis name "new\nline" holds a quote
// OPTION: error: partir-mesh: mesh axis name {{.*}} holds a quote

// expected-error @+1 {{a mesh axis has an empty name}}
func.func @main(%x: tensor<8xf32> {partir.name = "x"}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
