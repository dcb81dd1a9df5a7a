//! The input values of a check: a data directory's `.npy` files (and JAX's outputs, when
//! stored), or values generated from a seed.

use super::{program::Signature, Values};
use crate::cli::{args::VerifyArgs, error::CliError, manifest::Manifest};
use crate::random::SplitMix64;
use std::path::PathBuf;

/// The data directory: `--data`, else `<dir of MODEL>/data` when it has a manifest.json.
pub(super) fn data_dir(args: &VerifyArgs) -> Result<Option<Manifest>, CliError> {
    if let Some(dir) = &args.data {
        return Manifest::load(dir).map(Some).map_err(CliError::new);
    }
    let default: PathBuf = args
        .model
        .parent()
        .map(|dir| dir.join("data"))
        .unwrap_or_else(|| PathBuf::from("data"));
    if default.join("manifest.json").is_file() {
        Manifest::load(&default).map(Some).map_err(CliError::new)
    } else {
        Ok(None)
    }
}

pub(super) type Outputs = Option<Vec<Vec<f64>>>;

/// The input values (and JAX's outputs, when stored), and where they come from.
pub(super) fn inputs(
    signature: &Signature,
    manifest: Option<&Manifest>,
    seed: u64,
) -> Result<(Values, Outputs, String), CliError> {
    let Some(manifest) = manifest else {
        let mut random = SplitMix64(seed);
        let inputs = signature
            .inputs
            .iter()
            .map(|ty| {
                let values: Vec<f64> = (0..ty.len())
                    .map(|_| {
                        if ty.elem.is_float() {
                            random.uniform() * 2.0 - 1.0
                        } else {
                            (random.next_u64() % 8) as f64
                        }
                    })
                    .collect();
                values
            })
            .collect();
        return Ok((
            inputs,
            None,
            format!(
                "generated inputs (seed {seed}: floats uniform in [-1, 1), integers in [0, 8))"
            ),
        ));
    };
    let dir = manifest.dir.display();
    if manifest.inputs.len() != signature.inputs.len() {
        return Err(CliError::new(format!(
            "the data in '{dir}' has {} inputs but @main has {} arguments",
            manifest.inputs.len(),
            signature.inputs.len()
        )));
    }
    let mut inputs = Vec::new();
    for (i, (entry, ty)) in manifest.inputs.iter().zip(&signature.inputs).enumerate() {
        if entry.shape != ty.shape {
            return Err(CliError::new(format!(
                "input {i} '{}' in '{dir}' has shape {:?} but @main's argument {i} is {ty}",
                entry.name, entry.shape
            )));
        }
        let array = manifest.read(entry)?;
        inputs.push(array.to_f64());
    }
    let jax = if manifest.outputs.len() == signature.outputs.len() {
        let mut outputs = Vec::new();
        for (entry, ty) in manifest.outputs.iter().zip(&signature.outputs) {
            if entry.shape != ty.shape {
                return Err(CliError::new(format!(
                    "output '{}' in '{dir}' has shape {:?} but @main returns {ty}",
                    entry.name, entry.shape
                )));
            }
            outputs.push(manifest.read(entry)?.to_f64());
        }
        Some(outputs)
    } else {
        None
    };
    Ok((inputs, jax, format!("the inputs in {dir}")))
}
