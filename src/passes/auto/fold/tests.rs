//! Cuts of a synthetic layered training step, and the extrapolation.

use super::*;
use melior::ir::operation::OperationLike;

/// A training step of `count` layers `h = h * w` with its backward and an SGD update,
/// located as JAX locates it; `leak`: layer 2's output also feeds the head.
fn layered(count: usize, leak: bool) -> String {
    layered_as(&(0..count).collect::<Vec<_>>(), leak, true)
}

/// The same step, its layers named `labels` (`params/layers/<label>/w`), located or not.
fn layered_as(labels: &[usize], leak: bool, located: bool) -> String {
    let count = labels.len();
    let t = "tensor<8xf32>";
    let at = |layer: Option<usize>, backward: bool| {
        let scope = layer
            .map(|layer| format!("layers/{}", labels[layer]))
            .unwrap_or_default();
        if !located {
            String::new()
        } else if backward {
            format!("loc(\"jit(step)/transpose(jvp({scope}))/mul\")")
        } else {
            format!("loc(\"jit(step)/jvp({scope})/mul\")")
        }
    };
    let mut arguments = vec![format!("%x: {t} {{partir.name = \"x\"}}")];
    let mut results = Vec::new();
    for (layer, label) in labels.iter().enumerate() {
        arguments.push(format!(
            "%w{layer}: {t} {{partir.name = \"params/layers/{label}/w\"}}"
        ));
        results.push(format!("{t} {{partir.name = \"params/layers/{label}/w\"}}"));
    }
    arguments.push(format!("%head: {t} {{partir.name = \"params/head\"}}"));
    results.push(format!("{t} {{partir.name = \"out\"}}"));
    results.push(format!("{t} {{partir.name = \"dx\"}}"));
    let mut body = Vec::new();
    let input = |layer: usize| {
        if layer == 0 {
            "%x".to_string()
        } else {
            format!("%h{}", layer - 1)
        }
    };
    for layer in 0..count {
        body.push(format!(
            "%h{layer} = arith.mulf {}, %w{layer} : {t} {}",
            input(layer),
            at(Some(layer), false)
        ));
    }
    let last = format!("%h{}", count - 1);
    let head_input = if leak {
        body.push(format!(
            "%hl = arith.addf {last}, %h2 : {t} {}",
            at(None, false)
        ));
        "%hl".to_string()
    } else {
        last
    };
    body.push(format!(
        "%out = arith.mulf {head_input}, %head : {t} {}",
        at(None, false)
    ));
    body.push(format!(
        "%d{count} = arith.mulf %out, %head : {t} {}",
        at(None, true)
    ));
    for layer in (0..count).rev() {
        let next = layer + 1;
        body.push(format!(
            "%dw{layer} = arith.mulf %d{next}, {} : {t} {}",
            input(layer),
            at(Some(layer), true)
        ));
        body.push(format!(
            "%d{layer} = arith.mulf %d{next}, %w{layer} : {t} {}",
            at(Some(layer), true)
        ));
    }
    let mut returned = Vec::new();
    for layer in 0..count {
        body.push(format!(
            "%n{layer} = arith.subf %w{layer}, %dw{layer} : {t} {}",
            if located {
                "loc(\"jit(step)/sub\")"
            } else {
                ""
            }
        ));
        returned.push(format!("%n{layer}"));
    }
    returned.push("%out".into());
    returned.push("%d0".into());
    let types = vec![t; returned.len()].join(", ");
    format!(
        "func.func @main({}) -> ({}) {{\n  {}\n  return {} : {types}\n}}",
        arguments.join(", "),
        results.join(", "),
        body.join("\n  "),
        returned.join(", ")
    )
}

/// A residual step without locations, its layers numbered the way penzai does
/// (`params/block_<label>/w`), whose layers read their input and cotangent through a
/// transform (`negf` standing for the transposes penzai puts there) while the residual adds
/// take them as they are:
/// ```text
/// forward   u = negf(h), h' = h + u * w
/// backward  n = negf(d'), dw = n * u, d = d' + negf(n * w)
/// ```
/// A mask `m = negf(x)` that every layer reads (`b = u * w * m`... as `u * w` then `* m`)
/// is shared data, not a path past the seams.
fn residual_as(labels: &[usize]) -> String {
    let count = labels.len();
    let t = "tensor<8xf32>";
    let mut arguments = vec![format!("%x: {t} {{partir.name = \"x\"}}")];
    let mut results = Vec::new();
    for (layer, label) in labels.iter().enumerate() {
        arguments.push(format!(
            "%w{layer}: {t} {{partir.name = \"params/block_{label}/w\"}}"
        ));
        results.push(format!("{t} {{partir.name = \"params/block_{label}/w\"}}"));
    }
    arguments.push(format!("%embed: {t} {{partir.name = \"params/embed\"}}"));
    arguments.push(format!("%head: {t} {{partir.name = \"params/head\"}}"));
    results.push(format!("{t} {{partir.name = \"out\"}}"));
    results.push(format!("{t} {{partir.name = \"dx\"}}"));
    let input = |layer: usize| match layer {
        0 => "%e".to_string(),
        _ => format!("%h{}", layer - 1),
    };
    // The stream starts at an embedding, read by layer 0's readers and its residual add.
    let mut body = vec![
        format!("%e = arith.mulf %x, %embed : {t}"),
        format!("%m = arith.negf %x : {t}"),
    ];
    for layer in 0..count {
        let h = input(layer);
        body.push(format!("%u{layer} = arith.negf {h} : {t}"));
        body.push(format!("%a{layer} = arith.mulf %u{layer}, %w{layer} : {t}"));
        body.push(format!("%b{layer} = arith.mulf %a{layer}, %m : {t}"));
        body.push(format!("%h{layer} = arith.addf {h}, %b{layer} : {t}"));
    }
    body.push(format!("%out = arith.mulf %h{}, %head : {t}", count - 1));
    body.push(format!("%d{count} = arith.mulf %out, %head : {t}"));
    for layer in (0..count).rev() {
        let next = layer + 1;
        body.push(format!("%n{layer} = arith.negf %d{next} : {t}"));
        body.push(format!(
            "%dw{layer} = arith.mulf %n{layer}, %u{layer} : {t}"
        ));
        body.push(format!("%e{layer} = arith.mulf %n{layer}, %w{layer} : {t}"));
        body.push(format!("%f{layer} = arith.negf %e{layer} : {t}"));
        body.push(format!("%d{layer} = arith.addf %d{next}, %f{layer} : {t}"));
    }
    let mut returned = Vec::new();
    for layer in 0..count {
        body.push(format!(
            "%new{layer} = arith.subf %w{layer}, %dw{layer} : {t}"
        ));
        returned.push(format!("%new{layer}"));
    }
    returned.push("%out".into());
    returned.push("%d0".into());
    let types = vec![t; returned.len()].join(", ");
    format!(
        "func.func @main({}) -> ({}) {{\n  {}\n  return {} : {types}\n}}",
        arguments.join(", "),
        results.join(", "),
        body.join("\n  "),
        returned.join(", ")
    )
}

fn context() -> Context {
    let registry = melior::dialect::DialectRegistry::new();
    melior::utility::register_all_dialects(&registry);
    Context::new_with_registry(&registry, false)
}

#[test]
fn a_cut_of_a_layered_step_is_the_step_with_fewer_layers() {
    let context = context();
    let program = Module::parse(&context, &layered(5, false)).expect("parses");
    let layers = Layers::of(program.as_operation()).expect("five layers");
    assert_eq!(layers.count, 5);
    for keep in [1, 2] {
        let cut = cut(
            &context,
            program.as_operation(),
            &layers,
            keep,
            Form::Located,
        )
        .expect("cuts");
        assert!(cut.as_operation().verify());
        let expected = Module::parse(&context, &layered(keep, false)).expect("parses");
        assert_eq!(
            cut.as_operation().to_string(),
            expected.as_operation().to_string()
        );
    }
    let folded = Folded::new(&context, program.as_operation()).expect("folds");
    // The larger cut's x, w0, w1, head are the whole's x, w0, w1..w4 (w1 stands for
    // the layers cut away), head.
    assert_eq!(
        folded.fold.stands_for,
        [vec![0], vec![1], vec![2, 3, 4, 5], vec![6]]
    );
}

/// The structural cuts of the 6-layer `program` are the steps `step` writes with layers
/// {0, 1, 5} and {0, 5}, printed IR compared.
fn assert_structural_cuts_are(
    context: &Context,
    program: &Module,
    layers: &Layers,
    step: impl Fn(&[usize]) -> String,
) {
    for (keep, labels) in [(2, vec![0, 1, 5]), (1, vec![0, 5])] {
        let cut = cut(
            context,
            program.as_operation(),
            layers,
            keep,
            Form::Structural,
        )
        .expect("cuts");
        assert!(cut.as_operation().verify());
        let expected = Module::parse(context, &step(&labels)).expect("parses");
        assert_eq!(
            cut.as_operation().to_string(),
            expected.as_operation().to_string()
        );
    }
}

#[test]
fn without_locations_a_cut_keeps_the_last_layer_and_finds_the_seams_from_the_dataflow() {
    let context = context();
    let plain = |labels: &[usize]| layered_as(labels, false, false);
    let program = Module::parse(&context, &plain(&[0, 1, 2, 3, 4, 5])).expect("parses");
    let layers = Layers::of(program.as_operation()).expect("six layers");
    assert!(!layers.located_in(program.as_operation()));
    // Layers 2..5 go: layer 5 reads layer 1's output (h1), and layer 1's backward reads
    // the cotangent layer 5's backward hands on (d5).
    assert_structural_cuts_are(&context, &program, &layers, plain);
    let folded = Folded::new(&context, program.as_operation()).expect("folds");
    assert_eq!(folded.fold.form, Form::Structural);
    // x, w0, w1 (standing for w1..w4), w5, head.
    assert_eq!(
        folded.fold.stands_for,
        [vec![0], vec![1], vec![2, 3, 4, 5], vec![6], vec![7]]
    );
    // Fewer than six layers found from the dataflow are priced whole: the cuts would hold
    // five.
    let five = Module::parse(&context, &plain(&[0, 1, 2, 3, 4])).expect("parses");
    let error = Folded::new(&context, five.as_operation())
        .err()
        .expect("refused");
    assert!(error.contains("fewer than the 6"), "{error}");
}

#[test]
fn the_seams_of_a_residual_stream_read_through_a_transform_are_the_stream() {
    // The values that only the layer's readers pass through (u, n) are not the seams: the
    // residual adds bypass them, and cutting there would keep the dropped layers alive.
    let context = context();
    let program = Module::parse(&context, &residual_as(&[0, 1, 2, 3, 4, 5])).expect("parses");
    let layers = Layers::of(program.as_operation()).expect("six layers");
    assert_eq!(layers.key, "block");
    assert_structural_cuts_are(&context, &program, &layers, residual_as);
}

#[test]
fn without_locations_a_layer_that_feeds_more_than_the_next_is_not_cut() {
    let context = context();
    let program =
        Module::parse(&context, &layered_as(&[0, 1, 2, 3, 4, 5], true, false)).expect("parses");
    let layers = Layers::of(program.as_operation()).expect("six layers");
    // Layer 2's output feeds the head as well as layer 3: no value the layers pass on
    // separates layer 5 from it.
    let error = cut(
        &context,
        program.as_operation(),
        &layers,
        2,
        Form::Structural,
    )
    .expect_err("refused");
    assert!(
        error.contains("no single value hands layer 4's forward result to layer 5"),
        "{error}"
    );
}

#[test]
fn a_layer_that_feeds_more_than_the_next_is_not_cut() {
    let context = context();
    let program = Module::parse(&context, &layered(5, true)).expect("parses");
    let layers = Layers::of(program.as_operation()).expect("five layers");
    let error =
        cut(&context, program.as_operation(), &layers, 1, Form::Located).expect_err("refused");
    assert!(
        error.contains("hand the rest of the program 2 values"),
        "{error}"
    );
    // The program itself is untouched: cuts are copies.
    assert_eq!(
        program.as_operation().to_string(),
        Module::parse(&context, &layered(5, true))
            .unwrap()
            .as_operation()
            .to_string()
    );
}

#[test]
fn fewer_than_four_layers_do_not_fold() {
    let context = context();
    let program = Module::parse(&context, &layered(3, false)).expect("parses");
    assert_eq!(Layers::of(program.as_operation()), None);
}

#[test]
fn the_extrapolation_is_a_line_through_the_cuts() {
    let fold = Fold {
        layers: Layers {
            key: "layers".into(),
            count: 48,
        },
        form: Form::Located,
        stands_for: Vec::new(),
        calibration: (1.0, 1.0),
    };
    let priced = |seconds: f64, bytes: f64| Priced {
        score: crate::passes::auto::mcts::Score {
            seconds,
            peak_bytes: bytes,
        },
        deferred: 0.0,
        state_bytes: bytes,
    };
    // 3 + 2 per layer.
    let whole = fold.extrapolate(priced(5.0, 50.0), priced(7.0, 60.0));
    assert_eq!(whole.score.seconds, 5.0 + 47.0 * 2.0);
    assert_eq!(whole.score.peak_bytes, 50.0 + 47.0 * 10.0);
    // Calibrated on the base program: scaled by what the line missed there.
    let calibrated = Fold {
        calibration: (1.5, 0.5),
        ..fold.clone()
    }
    .extrapolate(priced(5.0, 50.0), priced(7.0, 60.0));
    assert_eq!(calibrated.score.seconds, 1.5 * whole.score.seconds);
    assert_eq!(calibrated.score.peak_bytes, 0.5 * whole.score.peak_bytes);
    assert_eq!(calibrated.state_bytes, whole.state_bytes);
    // Found from the dataflow, the cuts hold layers {0, 47} and {0, 1, 47}: 4 + 2 per layer,
    // 46 times more.
    let structural = Fold {
        form: Form::Structural,
        ..fold
    }
    .extrapolate(priced(5.0, 50.0), priced(7.0, 60.0));
    assert_eq!(structural.score.seconds, 5.0 + 46.0 * 2.0);
}

fn layers() -> Layers {
    Layers {
        key: "layers".into(),
        count: 4,
    }
}

#[test]
fn a_name_says_its_layer() {
    let layers = layers();
    assert_eq!(layers.of_name("opt/m/layers/2/wq"), Some(2));
    assert_eq!(layers.of_name("params/embed"), None);
    // penzai's joined form.
    let blocks = Layers {
        key: "block".into(),
        count: 6,
    };
    assert_eq!(
        blocks.of_name("opt/0/mu/transformer/block_4/mlp/in"),
        Some(4)
    );
    assert_eq!(blocks.of_name("params/transformer/blocks/4/mlp"), None);
}

#[test]
fn a_name_of_the_larger_cut_stands_for_the_layers_cut_away() {
    // `layers()` has 4: the cut keeping two stands layer 1 for layers 1, 2 and 3; found from
    // the dataflow, the cut also keeps layer 3, so layer 1 stands for 1 and 2.
    let fold = |form| Fold {
        layers: layers(),
        form,
        stands_for: Vec::new(),
        calibration: (1.0, 1.0),
    };
    let located = fold(Form::Located);
    assert_eq!(
        located.whole_names("opt/m/layers/1/wq"),
        [
            "opt/m/layers/1/wq",
            "opt/m/layers/2/wq",
            "opt/m/layers/3/wq"
        ]
    );
    assert_eq!(
        fold(Form::Structural).whole_names("opt/m/layers/1/wq"),
        ["opt/m/layers/1/wq", "opt/m/layers/2/wq"]
    );
    assert_eq!(
        fold(Form::Structural).whole_names("opt/m/layers/3/wq"),
        ["opt/m/layers/3/wq"]
    );
    assert_eq!(
        located.whole_names("opt/m/layers/0/wq"),
        ["opt/m/layers/0/wq"]
    );
    assert_eq!(located.whole_names("params/embed"), ["params/embed"]);
}
