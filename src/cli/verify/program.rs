//! The programs a check runs: `@main`'s signature, the sequential reading of a Core program,
//! the f64 reference, each made into a harness that calls the model as `@partir_model`.

use crate::cli::{
    args::VerifyArgs,
    error::CliError,
    padding,
    pipeline::{describe, Session},
    progress::{shown, Step},
    runner::{self, Input, TensorType},
};
use crate::{ffi, ir::names, passes::names as pass_names};
use melior::{
    ir::{
        attribute::{ArrayAttribute, DictionaryAttribute, StringAttribute, TypeAttribute},
        operation::OperationLike,
        r#type::FunctionType,
        Module, OperationRef,
    },
    Context,
};

/// The signature of `@main`.
#[derive(Clone, Debug)]
pub struct Signature {
    pub inputs: Vec<TensorType>,
    pub outputs: Vec<TensorType>,
    /// Each result's `partir.name`, else `result#j`.
    pub output_names: Vec<String>,
}

/// The sequential reading of a Core program, as a harness.
pub(super) fn sequential_harness(
    session: &Session,
    args: &VerifyArgs,
    partitioned: &mut Module,
    inputs: &[Input],
    original: &Signature,
) -> Result<(String, Vec<super::Unpad>), CliError> {
    // Arguments and results padded (`partir.padding`): the inputs are padded for it, and its
    // results' padding dropped.
    let (arg_padding, res_padding) = crate::passes::expand_dim::entry_arrays(
        main_function(partitioned)?,
        crate::passes::pad_dim::PADDING_ATTR,
    );
    let padded = |types: &[TensorType], padding: &crate::passes::expand_dim::Views| {
        types
            .iter()
            .zip(padding.iter().chain(std::iter::repeat(&None)))
            .map(|(ty, steps)| match steps {
                Some(steps) => TensorType {
                    shape: padding::padded_shape(&ty.shape, steps),
                    elem: ty.elem,
                },
                None => ty.clone(),
            })
            .collect::<Vec<TensorType>>()
    };
    let (padded_inputs, padded_outputs) = (
        padded(&original.inputs, &arg_padding),
        padded(&original.outputs, &res_padding),
    );
    let step = Step::start("making it sequential (partir-sequential)");
    let result = session
        .run(
            partitioned,
            &format!("builtin.module({})", pass_names::SEQUENTIAL),
        )
        .and_then(|()| remove_partir_ops(partitioned, &shown(&args.model)));
    match result {
        Ok(()) => {
            step.done();
        }
        Err(error) => {
            step.failed();
            return Err(error);
        }
    }
    // Remarks of partir-sequential, if any, are not news.
    session.take();
    let local = signature(partitioned)?;
    if local.inputs != padded_inputs || local.outputs != padded_outputs {
        return Err(CliError::new(
            "the partitioned program's @main has another signature than the original's",
        ));
    }
    make_main_private(session.context(), partitioned)?;
    let text = partitioned.as_operation().to_string();
    if let Some(at) = text.find("#partir.").or_else(|| text.find("!partir.")) {
        let end = text[at..]
            .find([' ', '>', ',', '\n'])
            .map_or(text.len(), |e| at + e);
        return Err(CliError::new(format!(
            "the partitioned program still uses partir attributes or types ({}...) after partir-sequential",
            &text[at..end]
        )));
    }
    let inputs: Vec<Input> = inputs
        .iter()
        .zip(arg_padding.iter().chain(std::iter::repeat(&None)))
        .map(|(input, steps)| match steps {
            Some(steps) => padding::pad_input(input, steps),
            None => input.clone(),
        })
        .collect();
    let unpad = padded_outputs
        .iter()
        .zip(res_padding.iter().chain(std::iter::repeat(&None)))
        .map(|(ty, steps)| {
            steps
                .as_ref()
                .map(|steps| (ty.shape.clone(), steps.clone()))
        })
        .collect();
    Ok((runner::harness(&text, &inputs, &padded_outputs)?, unpad))
}

/// The original program with every f32 made f64, as a harness on the same input values, and
/// its signature; None (with a note) when the program does not widen (an op that insists on
/// f32).
pub(super) fn reference_harness(
    session: &Session,
    text: &str,
    values: &[Vec<f64>],
) -> Result<Option<(String, Signature)>, CliError> {
    let wide = session.parse(text)?;
    if !ffi::widen_f32_to_f64(wide.as_operation()) {
        session.take();
        eprintln!(
            "partir: note: the program does not run in f64 (an op insists on f32); judging against the original within --tolerance"
        );
        return Ok(None);
    }
    let wide_signature = signature(&wide)?;
    let inputs: Vec<Input> = wide_signature
        .inputs
        .iter()
        .zip(values)
        .map(|(ty, values)| Input::from_f64(ty.clone(), values))
        .collect();
    make_main_private(session.context(), &wide)?;
    let harness = runner::harness(
        &wide.as_operation().to_string(),
        &inputs,
        &wide_signature.outputs,
    )?;
    Ok(Some((harness, wide_signature)))
}

/// `@main` of a module.
pub(super) fn main_function<'c, 'a>(
    module: &'a Module<'c>,
) -> Result<OperationRef<'c, 'a>, CliError> {
    names::functions(module.as_operation())
        .into_iter()
        .find(|func| {
            func.attribute("sym_name")
                .ok()
                .and_then(ffi::string_attribute)
                .is_some_and(|name| name == "main")
        })
        .ok_or_else(|| CliError::new("the program has no func.func @main with a body"))
}

/// The types and result names of `@main`.
pub fn signature(module: &Module) -> Result<Signature, CliError> {
    let main = main_function(module)?;
    let function_type = main
        .attribute("function_type")
        .ok()
        .and_then(|attr| TypeAttribute::try_from(attr).ok())
        .and_then(|attr| FunctionType::try_from(attr.value()).ok())
        .ok_or_else(|| CliError::new("@main has no function type"))?;
    let parse = |ty: melior::ir::Type, what: String| {
        TensorType::parse(&ty.to_string())
            .map_err(|error| CliError::new(format!("@main {what}: {error}")))
    };
    let inputs = (0..function_type.input_count())
        .map(|i| {
            parse(
                function_type.input(i).expect("i < count"),
                format!("argument {i}"),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let outputs = (0..function_type.result_count())
        .map(|j| {
            parse(
                function_type.result(j).expect("j < count"),
                format!("result {j}"),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let res_attrs = main
        .attribute("res_attrs")
        .ok()
        .and_then(|attr| ArrayAttribute::try_from(attr).ok());
    let output_names = (0..outputs.len())
        .map(|j| {
            res_attrs
                .and_then(|attrs| attrs.element(j).ok())
                .and_then(|dict| DictionaryAttribute::try_from(dict).ok())
                .and_then(|dict| dict.element_by_name("partir.name"))
                .and_then(ffi::string_attribute)
                .unwrap_or_else(|| format!("result#{j}"))
        })
        .collect();
    Ok(Signature {
        inputs,
        outputs,
        output_names,
    })
}

/// `@main` becomes the private `@partir_model` that a harness calls.
pub(super) fn make_main_private(context: &Context, module: &Module) -> Result<(), CliError> {
    let main = main_function(module)?;
    ffi::set_attribute(
        main,
        "sym_visibility",
        StringAttribute::new(context, "private").into(),
    );
    ffi::set_attribute(
        main,
        "sym_name",
        StringAttribute::new(context, runner::MODEL).into(),
    );
    Ok(())
}

/// Erases the (declarative) mesh; any other partir op left after partir-sequential is an error.
pub(super) fn remove_partir_ops(module: &Module, source: &str) -> Result<(), CliError> {
    let mut meshes = Vec::new();
    let mut others = Vec::new();
    ffi::walk(module.as_operation(), |op| {
        let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
        if name == "partir.mesh" {
            meshes.push(op);
        } else if name.starts_with("partir.") || name.starts_with("partir_hlo.") {
            others.push((name, op));
        }
    });
    if let Some((name, op)) = others.first() {
        return Err(CliError::located(format!(
            "{}: error: {} partir ops are left after partir-sequential, e.g. {name}; the sequential check needs a program of upstream ops",
            describe(op.location(), source),
            others.len()
        )));
    }
    for mesh in meshes {
        // SAFETY: `mesh` is unused and no handle to it is used after this.
        unsafe { ffi::erase(mesh) };
    }
    Ok(())
}
