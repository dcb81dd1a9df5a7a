// A `while` whose body reads the batch-split x from above (not a carried operand): a loop's rule
// ties its carries only, so partir does not slice the captured value, and says so rather than
// leave the gather to the lowering. (`case`/`if` take their captures as inputs:
// test/Passes/partir-schedule/schedule-cond-captures.test.)
// RUN: mlir-opt --allow-unregistered-dialect %plugin -p 'builtin.module(partir-mesh{axes=batch=4}, partir-tile{value=x dim=0 axis=batch}, partir-propagate)' %s -o /dev/null 2>&1 | FileCheck %s
// CHECK: remark: partir-propagate: stopped at 'stablehlo.while' on axis 'batch': its regions read a value from above (not an operand) that is split on dim 0 along 'batch'; partir does not slice captured values, so the op runs whole and reads it gathered — the captured value derives from x
func.func @main(%x: tensor<8x4xf32> {partir.name = "x"}, %acc: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %r:2 = "stablehlo.while"(%zero, %acc) ({
  ^bb0(%i: tensor<i32>, %a: tensor<8x4xf32>):
    %n = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %c = "stablehlo.compare"(%i, %n) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %a: tensor<8x4xf32>):
    %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %j = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %s = "stablehlo.add"(%a, %x) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    "stablehlo.return"(%j, %s) : (tensor<i32>, tensor<8x4xf32>) -> ()
  }) : (tensor<i32>, tensor<8x4xf32>) -> (tensor<i32>, tensor<8x4xf32>)
  return %r#1 : tensor<8x4xf32>
}
