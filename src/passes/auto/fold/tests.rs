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

#[test]
fn without_locations_a_cut_keeps_the_last_layer_and_finds_the_seams_from_the_dataflow() {
    let context = context();
    let plain = |labels: &[usize]| layered_as(labels, false, false);
    let program = Module::parse(&context, &plain(&[0, 1, 2, 3, 4, 5])).expect("parses");
    let layers = Layers::of(program.as_operation()).expect("six layers");
    assert!(!layers.located_in(program.as_operation()));
    // Layers 2..5 go: layer 5 reads layer 1's output (h1), and layer 1's backward reads
    // the cotangent layer 5's backward hands on (d5).
    for (keep, labels) in [(2, vec![0, 1, 5]), (1, vec![0, 5])] {
        let cut = cut(
            &context,
            program.as_operation(),
            &layers,
            keep,
            Form::Structural,
        )
        .expect("cuts");
        assert!(cut.as_operation().verify());
        let expected = Module::parse(&context, &plain(&labels)).expect("parses");
        assert_eq!(
            cut.as_operation().to_string(),
            expected.as_operation().to_string()
        );
    }
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
fn without_locations_a_layer_that_feeds_more_than_the_next_is_not_cut() {
    let context = context();
    let program =
        Module::parse(&context, &layered_as(&[0, 1, 2, 3, 4, 5], true, false)).expect("parses");
    let layers = Layers::of(program.as_operation()).expect("six layers");
    // Layer 2's output feeds the head as well as layer 3: once the layers are cut it is
    // still used, and so is its argument.
    let error = cut(
        &context,
        program.as_operation(),
        &layers,
        2,
        Form::Structural,
    )
    .expect_err("refused");
    assert!(
        error.contains("argument 'params/layers/2/w' is still used once the layers are cut"),
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
            segment: "layers".into(),
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
        segment: "layers".into(),
        count: 4,
    }
}

#[test]
fn a_name_stack_says_its_layer() {
    let layers = layers();
    assert_eq!(
        layers.of_text("jit(step)/jvp(layers/3)/dot_general"),
        Some(3)
    );
    assert_eq!(
        layers.of_text("jit(step)/transpose(jvp(layers/12))/add"),
        Some(12)
    );
    assert_eq!(layers.of_text("jit(step)/jvp()/dot_general"), None);
    assert_eq!(layers.of_text("jit(step)/mylayers/3/add"), None);
    assert_eq!(layers.of_text("jit(step)/layers/3x/add"), None);
    assert_eq!(layers.of_name("opt/m/layers/2/wq"), Some(2));
    assert_eq!(layers.of_name("params/embed"), None);
    assert_eq!(layers.rename("opt/v/layers/1/wq", 7), "opt/v/layers/7/wq");
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

#[test]
fn indexed_segments_pair_a_segment_with_its_index() {
    assert_eq!(
        indexed_segments("opt/m/layers/3/ln1/scale"),
        [("layers".to_string(), 3)]
    );
    assert!(indexed_segments("params/embed").is_empty());
}
