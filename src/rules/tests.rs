//! Each family's entries on real ops: parse a function, ask for the rule of one of its ops.

use super::{register_einsum_rule, Rules};
use crate::ffi;
use melior::{
    dialect::DialectRegistry,
    ir::{block::BlockLike, operation::OperationLike, Module, OperationRef, RegionLike},
    utility::register_all_dialects,
    Context,
};

fn context() -> Context {
    let registry = DialectRegistry::new();
    register_all_dialects(&registry);
    ffi::register_dialects(&registry);
    let context = Context::new_with_registry(&registry, false);
    context.set_allow_unregistered_dialects(true);
    context
}

/// The rule (printed; `{:#}` with sizes when `sizes`) of the first `op` in
/// `func.func @f(ARGS) { BODY return }`; None when partir knows no rule for it.
fn rule_with(args: &str, body: &str, op: &str, sizes: bool) -> Option<Result<String, String>> {
    let context = context();
    let text = format!("func.func @f({args}) {{\n{body}\n  return\n}}");
    let module = Module::parse(&context, &text).unwrap_or_else(|| panic!("parses:\n{text}"));
    let func = module.body().first_operation().expect("a function");
    let block = func.region(0).unwrap().first_block().unwrap();
    let mut next = block.first_operation();
    let mut found: Option<OperationRef> = None;
    while let Some(candidate) = next {
        if candidate.name().as_string_ref().as_str() == Ok(op) {
            found = Some(candidate);
            break;
        }
        next = candidate.next_in_block();
    }
    let found = found.unwrap_or_else(|| panic!("no {op} in\n{text}"));
    Rules::default().rule_for(found).map(|rule| {
        rule.map(|rule| match sizes {
            true => format!("{rule:#}"),
            false => rule.to_string(),
        })
    })
}

fn rule(args: &str, body: &str, op: &str) -> String {
    rule_with(args, body, op, false)
        .expect("a rule")
        .expect("builds")
}

#[test]
fn arith_math_and_func() {
    let args = "%a: tensor<4x8xf32>, %b: tensor<4x8xf32>";
    assert_eq!(
        rule(
            args,
            "%r = arith.addf %a, %b : tensor<4x8xf32>",
            "arith.addf"
        ),
        "([i,j],[i,j]) -> ([i,j])"
    );
    assert_eq!(
        rule(
            "",
            "%c = arith.constant dense<1.0> : tensor<4xf32>",
            "arith.constant"
        ),
        "() -> ([i])"
    );
    let context = context();
    let text = "func.func @f(%a: tensor<4xf32>, %s: f32) -> (tensor<4xf32>, f32) {\n  return %a, %s : tensor<4xf32>, f32\n}";
    let module = Module::parse(&context, text).unwrap();
    let func = module.body().first_operation().unwrap();
    let ret = func
        .region(0)
        .unwrap()
        .first_block()
        .unwrap()
        .terminator()
        .unwrap();
    assert_eq!(
        Rules::default().rule_for(ret).unwrap().unwrap().to_string(),
        "([i],[]) -> ()"
    );
}

#[test]
fn unknown_ops_have_no_rule() {
    assert!(rule_with(
        "%a: tensor<4xf32>",
        "%r = \"foo.bar\"(%a) : (tensor<4xf32>) -> tensor<4xf32>",
        "foo.bar",
        false
    )
    .is_none());
}

#[test]
fn tosa() {
    assert_eq!(
        rule(
            "%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>, %z: tensor<1xf32>",
            "%m = tosa.matmul %a, %b, %z, %z : (tensor<2x4x8xf32>, tensor<2x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x16xf32>",
            "tosa.matmul"
        ),
        "([b,i,k],[b,k,j],[_],[_]) -> ([b,i,j]) reduction={k:sum}"
    );
    assert_eq!(
        rule(
            "%a: tensor<2x3xf32>",
            "%t = tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>",
            "tosa.transpose"
        ),
        "([i,j]) -> ([j,i])"
    );
    let reshape = |from: &str, to: &str, shape: &str| {
        rule_with(
            &format!("%a: tensor<{from}xf32>"),
            &format!(
                "%s = tosa.const_shape {{values = dense<[{shape}]> : tensor<{n}xindex>}} : () -> !tosa.shape<{n}>\n\
                 %r = tosa.reshape %a, %s : (tensor<{from}xf32>, !tosa.shape<{n}>) -> tensor<{to}xf32>",
                n = shape.split(',').count()
            ),
            "tosa.reshape",
            false,
        )
        .unwrap()
    };
    assert_eq!(
        reshape("4x8", "32", "32").unwrap(),
        "([i,j],[]) -> ([i]) replicate={j}"
    );
    assert!(reshape("4x6", "6x4", "6, 4")
        .unwrap_err()
        .contains("not a pure merge"));
    assert_eq!(
        rule(
            "%a: tensor<4x8xf32>",
            "%r = tosa.reduce_max %a {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>",
            "tosa.reduce_max"
        ),
        "([i,j]) -> ([i,_]) reduction={j:max}"
    );
}

#[test]
fn tensor() {
    assert_eq!(
        rule(
            "%a: tensor<32xf32>",
            "%e = tensor.expand_shape %a [[0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>",
            "tensor.expand_shape"
        ),
        "([i]) -> ([i,j]) replicate={j}"
    );
    assert_eq!(
        rule(
            "%a: tensor<2x8xf32>, %b: tensor<2x8xf32>",
            "%c = tensor.concat dim(1) %a, %b : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x16xf32>",
            "tensor.concat"
        ),
        "([i,j],[i,j]) -> ([i,j]) replicate={j}"
    );
    assert_eq!(
        rule(
            "%a: tensor<4x8xf32>, %z: f32",
            "%p = tensor.pad %a low[1, 0] high[1, 0] {\n^bb0(%i: index, %j: index):\n  tensor.yield %z : f32\n} : tensor<4x8xf32> to tensor<6x8xf32>",
            "tensor.pad"
        ),
        "([i,j]) -> ([i,j]) replicate={i}"
    );
    assert_eq!(
        rule(
            "%a: tensor<8x4xf32>",
            "%s = tensor.extract_slice %a[2, 0] [2, 4] [1, 1] : tensor<8x4xf32> to tensor<2x4xf32>",
            "tensor.extract_slice"
        ),
        "([i,j]) -> ([i,j]) replicate={i}"
    );
}

#[test]
fn linalg_from_the_interface() {
    assert_eq!(
        rule_with(
            "%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>",
            "%m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>",
            "linalg.matmul",
            true
        )
        .unwrap()
        .unwrap(),
        "([i,k],[k,j],[i,j]) -> ([i,j]) reduction={k:sum} sizes={i=4,j=16,k=8}"
    );
    // A generic whose region does not combine partial results recognisably: never split.
    assert_eq!(
        rule(
            "%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>",
            "%g = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = [\"parallel\", \"parallel\", \"reduction\"]} ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) {\n^bb0(%x: f32, %y: f32, %acc: f32):\n  %p = arith.mulf %x, %y : f32\n  %s = arith.subf %acc, %p : f32\n  linalg.yield %s : f32\n} -> tensor<4x16xf32>",
            "linalg.generic"
        ),
        "([i,k],[k,j],[i,j]) -> ([i,j]) reduction={k:other}"
    );
    assert_eq!(
        rule(
            "%a: tensor<4x8xf32>, %i: tensor<4xf32>",
            "%r = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%i : tensor<4xf32>) dimensions = [1]\n  (%x: f32, %acc: f32) {\n    %s = arith.addf %x, %acc : f32\n    linalg.yield %s : f32\n  }",
            "linalg.reduce"
        ),
        "([i,j],[i]) -> ([i]) reduction={j:sum}"
    );
    assert_eq!(
        rule(
            "%a: tensor<4xf32>, %i: tensor<4x8xf32>",
            "%r = linalg.broadcast ins(%a : tensor<4xf32>) outs(%i : tensor<4x8xf32>) dimensions = [1]",
            "linalg.broadcast"
        ),
        "([i],[i,j]) -> ([i,j])"
    );
    assert_eq!(
        rule(
            "%s: f32, %i: tensor<4xf32>",
            "%r = linalg.fill ins(%s : f32) outs(%i : tensor<4xf32>) -> tensor<4xf32>",
            "linalg.fill"
        ),
        "([],[i]) -> ([i])"
    );
}

#[test]
fn einsum_rules_registered_at_run_time() {
    register_einsum_rule("test.outer", "i,j->ij").unwrap();
    assert_eq!(
        rule(
            "%a: tensor<4xf32>, %b: tensor<8xf32>",
            "%r = \"test.outer\"(%a, %b) : (tensor<4xf32>, tensor<8xf32>) -> tensor<4x8xf32>",
            "test.outer"
        ),
        "([i],[j]) -> ([i,j])"
    );
    assert!(register_einsum_rule("test.bad", "ik,kj")
        .unwrap_err()
        .contains("test.bad"));
    assert!(register_einsum_rule(" ", "i->i").is_err());
}

/// Each family's model beyond its rule, asked of real ops as the passes ask it.
#[test]
fn op_models() {
    use super::{
        broadcasts_scalars, cost, fill, fresh_accumulator, is_empty, is_layout, is_multiply,
        layout_source_dim, tileable, zero_padding, Cost, Fill, Padding,
    };
    // A dialect's default cost stands for ops that register none of their own.
    assert_eq!(cost("tensor.pad"), Some(Cost::Moves));
    assert_eq!(cost("tensor.expand_shape"), Some(Cost::View));
    assert_eq!(cost("tensor.empty"), Some(Cost::Empty));
    assert_eq!(cost("bufferization.to_tensor"), Some(Cost::Moves));
    assert_eq!(cost("math.cbrt"), Some(Cost::Transcendental));
    assert_eq!(cost("arith.addui_extended"), Some(Cost::Flops(1.0)));
    assert_eq!(cost("foo.bar"), None);
    assert!(is_multiply("arith.mulf") && !is_multiply("arith.addf"));
    let context = context();
    let text = "func.func @f(%x: tensor<1x16xf32>) {
  %z = arith.constant 0.0 : f32
  %s = arith.constant dense<2.0> : tensor<4xf32>
  %v = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<1x16xf32> into tensor<16xf32>
  %p = tensor.pad %x low[0, 1] high[0, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<1x16xf32> to tensor<1x19xf32>
  return
}";
    let module = Module::parse(&context, text).unwrap_or_else(|| panic!("parses:\n{text}"));
    let func = module.body().first_operation().unwrap();
    let ops = crate::ir::block_ops(func.region(0).unwrap().first_block().unwrap());
    let [_, splat, dense, empty, filled, collapse, pad, _] = ops[..] else {
        panic!("8 ops");
    };
    assert_eq!(fill(splat), Some(Fill::Scalar(2.0)));
    assert_eq!(fill(filled), Some(Fill::Operand(0)));
    assert_eq!(fill(collapse), Some(Fill::Operand(0)));
    assert_eq!((fill(dense), fill(empty)), (None, None));
    assert!(tileable(splat).is_ok() && tileable(empty).is_ok());
    assert_eq!(
        tileable(dense),
        Err("only splat constants can be tiled".into())
    );
    assert!(is_layout(collapse) && !is_layout(filled));
    assert_eq!(layout_source_dim(collapse, 0), Some(1));
    assert!(is_empty(empty) && !is_empty(filled));
    assert_eq!(broadcasts_scalars(filled), Some(super::Remake::Into(1)));
    assert!(fresh_accumulator(filled) && !fresh_accumulator(collapse));
    let padding = Padding {
        low: vec![0, 1],
        high: vec![0, 2],
        source: vec![1, 16],
    };
    assert_eq!(zero_padding(pad), Some(padding));
}
