//! Tests of `evaluate`: the partitioning digest, returned splits (state resharding's are in
//! `sim::deferred`).
use super::*;

/// `x @ w` on a mesh of 2, parsed into `context`.
fn matmul_program(context: &Context) -> Module<'_> {
    let text = r#"
partir.mesh @mesh ["a"=2]
func.func @main(%x: tensor<8x16xf32> {partir.name = "x"}, %w: tensor<16x16xf32> {partir.name = "w"}) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %m : tensor<8x16xf32>
}"#;
    Module::parse(context, text).expect("parses")
}

fn context() -> Context {
    let registry = melior::dialect::DialectRegistry::new();
    melior::utility::register_all_dialects(&registry);
    ffi::register_dialects(&registry);
    Context::new_with_registry(&registry, false)
}

/// The digest after tiling `selector` on `dim` along `a` (on a copy).
fn tiled(context: &Context, module: &Module, selector: &str, dim: usize) -> u64 {
    let tactic = Tactic {
        name: "t".into(),
        axis: "a".into(),
        tile: vec![(selector.into(), dim)],
        replicate: Vec::new(),
        reach: crate::schedule::Reach::All,
        auto: None,
        pipeline: None,
        comment: Vec::new(),
        line: 0,
    };
    let copy = Module::from_operation(ffi::clone_operation(module.as_operation())).unwrap();
    let mut propagation = Propagation::new(context);
    let location = program_location(copy.as_operation());
    apply_tactic(
        context,
        copy.as_operation(),
        &tactic,
        location,
        &mut propagation,
    )
    .expect("the tile applies");
    partitioning_digest(copy.as_operation(), "a")
}

#[test]
fn the_partitioning_digest_tells_apart_plans_that_partition_different_ops() {
    let context = context();
    let module = matmul_program(&context);
    let base = partitioning_digest(module.as_operation(), "a");
    let by_rows = tiled(&context, &module, "x", 0);
    // The same plan, the same digest; another plan or none, another digest.
    assert_eq!(by_rows, tiled(&context, &module, "x", 0));
    assert_ne!(by_rows, base);
    assert_ne!(by_rows, tiled(&context, &module, "w", 1));
    // Along another axis nothing is partitioned.
    assert_eq!(
        partitioning_digest(module.as_operation(), "b"),
        partitioning_digest(module.as_operation(), "a")
    );
}

/// A step that updates state `m` (in and out under one name) by an input `g`: tiling `g`
/// ties `m` (propagation tiles it in too), so nothing comes out skewed; with `m` pinned
/// whole, the update still runs split and returns `m` split on dim 0 while it came in
/// whole, which `returned_splits` names (the analysis then tiles `m` in too).
#[test]
fn returned_splits_names_the_state_a_plan_returns_split_but_takes_whole() {
    let context = context();
    // Lowering makes partir_hlo attributes, and runs upstream passes (cse).
    context.load_all_available_dialects();
    melior::utility::register_all_passes();
    let text = r#"
partir.mesh @mesh ["a"=2]
func.func @main(%m: tensor<8x16xf32> {partir.name = "m"}, %g: tensor<8x16xf32> {partir.name = "g"}) -> (tensor<8x16xf32> {partir.name = "m"}) {
  %e = tensor.empty() : tensor<8x16xf32>
  %u = linalg.add ins(%m, %g : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %u : tensor<8x16xf32>
}"#;
    let module = Module::parse(&context, text).expect("parses");
    let device = Device::resolve("tpu-v3").unwrap();
    let evaluator = Evaluator::new(&context, module.as_operation(), &device, "a", None);
    let tactic = |replicate: &[&str]| Tactic {
        name: "t".into(),
        axis: "a".into(),
        tile: vec![("g".to_string(), 0)],
        replicate: replicate.iter().map(|name| name.to_string()).collect(),
        reach: crate::schedule::Reach::All,
        auto: None,
        pipeline: None,
        comment: Vec::new(),
        line: 0,
    };
    assert!(evaluator.returned_splits(&[tactic(&[])]).is_empty());
    assert_eq!(
        evaluator.returned_splits(&[tactic(&["m"])]),
        vec![("m".to_string(), 0)]
    );
}
