//! `partir args MODEL.mlir [--schedule S.toml]`: what a schedule can address. One row per
//! function argument and named value of the entry functions (see `ir::names`): its selector
//! name, shape, element type and size, and, with a schedule, the tactics whose selectors
//! match it. Selectors that match nothing are listed with the nearest names.
//!
//! ```text
//!   name                 shape     type  size       tactics
//!   params/layers/0/w1   64x256    f32   64.00 KiB  MP tile 1, Z3 tile 0
//!   tokens               32x64     f32   8.00 KiB   BP tile 0
//! ```

use super::{
    args::ArgsArgs,
    error::CliError,
    partition::read_model,
    pipeline::{table, Session},
    progress::shown,
};
use crate::{
    ffi,
    ir::{
        names::{named_values, nearest, Site},
        types::tensor_bytes,
        Selector,
    },
    report::bytes,
    schedule::{Schedule, Tactic},
};
use melior::ir::{operation::OperationLike, Type, ValueLike};

/// One addressable value.
struct Row {
    name: String,
    /// `64x256`, `scalar`, or the type itself when it is not a ranked tensor.
    shape: String,
    element: String,
    bytes: f64,
    /// `arg 3` or the defining op's name.
    defined_by: String,
}

pub fn args_command(args: &ArgsArgs) -> Result<i32, CliError> {
    let source = shown(&args.model);
    let session = Session::new(&source);
    let text = read_model(&args.model)?;
    let module = session.parse(&text)?;
    let schedule = match &args.schedule {
        Some(path) => Some(Schedule::load(path).map_err(CliError::new)?),
        None => None,
    };
    let rows: Vec<Row> = named_values(module.as_operation())
        .into_iter()
        .map(|(name, named)| {
            let ty = named.value.r#type();
            let (shape, element) = shape_and_element(ty);
            Row {
                name,
                shape,
                element,
                bytes: tensor_bytes(ty),
                defined_by: match named.site {
                    Site::Argument { index, .. } => format!("arg {index}"),
                    Site::Result { op, .. } => {
                        op.name().as_string_ref().as_str().unwrap_or("?").into()
                    }
                },
            }
        })
        .collect();
    if rows.is_empty() {
        return Err(CliError::new(format!(
            "{source}: no function argument or named value to address (the module has no function with a body)"
        )));
    }
    let tactics = schedule
        .as_ref()
        .map(|s| s.tactics.as_slice())
        .unwrap_or(&[]);
    let mut lines = vec![["name", "shape", "type", "size", "defined by"]
        .map(String::from)
        .to_vec()];
    if schedule.is_some() {
        lines[0].push("tactics".into());
    }
    for row in &rows {
        let mut line = vec![
            row.name.clone(),
            row.shape.clone(),
            row.element.clone(),
            bytes(row.bytes),
            row.defined_by.clone(),
        ];
        if schedule.is_some() {
            line.push(matching_tactics(tactics, &row.name)?);
        }
        lines.push(line);
    }
    print!("{}", table(&lines));
    let total: f64 = rows
        .iter()
        .filter(|row| row.defined_by.starts_with("arg "))
        .map(|row| row.bytes)
        .sum();
    let arguments = rows
        .iter()
        .filter(|row| row.defined_by.starts_with("arg "))
        .count();
    println!(
        "{arguments} arguments ({} in all), {} named values",
        bytes(total),
        rows.len() - arguments
    );
    let names: Vec<&str> = rows.iter().map(|row| row.name.as_str()).collect();
    for (tactic, pattern) in selectors(tactics) {
        let selector = Selector::new(pattern).map_err(CliError::new)?;
        if !names.iter().any(|name| selector.matches(name)) {
            println!(
                "tactic '{}': selector '{pattern}' matches nothing (nearest: {})",
                tactic.name,
                nearest(pattern, &names, 3).join(", ")
            );
        }
    }
    Ok(0)
}

/// `MP tile 1, Z3 tile 0`, or `-`.
fn matching_tactics(tactics: &[Tactic], name: &str) -> Result<String, CliError> {
    let mut found = Vec::new();
    for tactic in tactics {
        for (pattern, dim) in &tactic.tile {
            if Selector::new(pattern).map_err(CliError::new)?.matches(name) {
                found.push(format!("{} tile {dim}", tactic.name));
            }
        }
        for pattern in &tactic.replicate {
            if Selector::new(pattern).map_err(CliError::new)?.matches(name) {
                found.push(format!("{} replicate", tactic.name));
            }
        }
    }
    Ok(if found.is_empty() {
        "-".into()
    } else {
        found.join(", ")
    })
}

/// Every (tactic, selector) of the schedule, in file order.
fn selectors(tactics: &[Tactic]) -> impl Iterator<Item = (&Tactic, &str)> {
    tactics.iter().flat_map(|tactic| {
        let tiles = tactic.tile.iter().map(|(pattern, _)| pattern.as_str());
        let pins = tactic.replicate.iter().map(String::as_str);
        tiles.chain(pins).map(move |pattern| (tactic, pattern))
    })
}

fn shape_and_element(ty: Type) -> (String, String) {
    match ffi::shaped_dims(ty) {
        Some(dims) if ty.to_string().starts_with("tensor<") => {
            let shape = if dims.is_empty() {
                "scalar".to_string()
            } else {
                crate::text::shape(&dims)
            };
            (shape, ffi::shaped_element(ty).to_string())
        }
        _ => ("-".into(), ty.to_string()),
    }
}
