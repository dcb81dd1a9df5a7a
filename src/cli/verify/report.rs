//! The verdict: a table of every output's error against the f64 reference (or the original),
//! judged within the original's own rounding noise.

use super::{
    judge::{self, compare, judge, Judgement, NoiseRule},
    program::Signature,
};
use crate::cli::{
    pipeline::table,
    runner::{Elem, TensorType},
};

/// The outputs of every run.
pub(super) struct Runs<'a> {
    pub(super) original: &'a [Vec<f64>],
    pub(super) partitioned: &'a [Vec<f64>],
    /// The original in f64, when it ran.
    pub(super) reference: Option<&'a [Vec<f64>]>,
    /// JAX's stored outputs, when present (a check of the importer, not of partitioning).
    pub(super) jax: Option<&'a [Vec<f64>]>,
}

/// Prints the comparison table on stdout; Ok(verdict) when every output passes.
pub(super) fn report(
    signature: &Signature,
    runs: &Runs,
    rule: &NoiseRule,
) -> Result<String, String> {
    let Some(reference) = runs.reference else {
        return report_against_original(signature, runs, rule.tolerance);
    };
    let mut header: Vec<String> = [
        "output",
        "type",
        "original vs f64",
        "partitioned vs f64",
        "ratio",
        "limit",
        "verdict",
        "worst element: partitioned vs f64",
    ]
    .map(String::from)
    .to_vec();
    if runs.jax.is_some() {
        header.push("JAX vs f64".into());
    }
    let mut rows = vec![header];
    let mut failures = Vec::new();
    let mut ill_conditioned = Vec::new();
    let mut importer_drift = Vec::new();
    let mut worst: Option<(usize, Judgement)> = None;
    for (j, ty) in signature.outputs.iter().enumerate() {
        let name = &signature.output_names[j];
        let judgement = judge(&runs.original[j], &runs.partitioned[j], &reference[j], rule);
        let ill = judgement.ill_conditioned(rule);
        let verdict = match (judgement.passed(), ill) {
            (false, _) => "FAIL",
            (true, true) => "ok (ill-conditioned)",
            (true, false) => "ok",
        };
        let mut row = vec![
            name.clone(),
            ty.to_string(),
            error_text(judgement.original.error),
            error_text(judgement.partitioned.error),
            ratio_text(judgement.ratio()),
            error_text(judgement.limit),
            verdict.to_string(),
            worst_text(&judgement.partitioned, ty),
        ];
        if let Some(jax) = runs.jax {
            let drift = compare(&jax[j], &reference[j]).error;
            row.push(error_text(drift));
            if drift > rule.limit(judgement.original.error) {
                importer_drift.push(format!("'{name}' ({})", error_text(drift)));
            }
        }
        rows.push(row);
        if !judgement.passed() {
            failures.push(j);
        }
        if ill {
            ill_conditioned.push(format!(
                "'{name}' (f32 rounding alone: {})",
                error_text(judgement.original.error)
            ));
        }
        if worst.as_ref().is_none_or(|(_, w)| {
            judgement.partitioned.error / judgement.limit > w.partitioned.error / w.limit
        }) {
            worst = Some((j, judgement));
        }
    }
    print!("{}", table(&rows));
    if !ill_conditioned.is_empty() {
        println!(
            "partir: ill-conditioned outputs, judged within {}x their own f32 error: {}",
            rule.factor,
            ill_conditioned.join(", ")
        );
    }
    if !importer_drift.is_empty() {
        println!(
            "partir: note: JAX's stored outputs differ from this MLIR program's f64 run beyond its f32 noise (an importer or data question, not partitioning): {}",
            importer_drift.join(", ")
        );
    }
    let worst = worst
        .map(|(j, judgement)| {
            format!(
                "worst: '{}', {} against a limit of {}",
                signature.output_names[j],
                error_text(judgement.partitioned.error),
                error_text(judgement.limit)
            )
        })
        .unwrap_or_else(|| "no outputs".into());
    let judged = format!(
        "the original (judged against it run in f64, within {}x its own f32 error or {:e})",
        rule.factor, rule.tolerance
    );
    if failures.is_empty() {
        Ok(format!(
            "partir: PASS: all {} outputs of the partitioned program match {judged}; {worst}",
            signature.outputs.len()
        ))
    } else {
        let names: Vec<String> = failures
            .iter()
            .map(|&j| format!("'{}'", signature.output_names[j]))
            .collect();
        Err(format!(
            "verification failed: {} of {} outputs of the partitioned program do not match {judged}; {worst}; failing: {}",
            failures.len(),
            signature.outputs.len(),
            names.join(", ")
        ))
    }
}

/// Without an f64 reference: the partitioned program against the original, within `tolerance`.
pub(super) fn report_against_original(
    signature: &Signature,
    runs: &Runs,
    tolerance: f64,
) -> Result<String, String> {
    let header: Vec<String> = [
        "output",
        "type",
        "partitioned vs original",
        "verdict",
        "worst element",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = vec![header];
    let mut failures = Vec::new();
    for (j, ty) in signature.outputs.iter().enumerate() {
        let comparison = compare(&runs.partitioned[j], &runs.original[j]);
        let passed = comparison.error <= tolerance;
        rows.push(vec![
            signature.output_names[j].clone(),
            ty.to_string(),
            error_text(comparison.error),
            if passed { "ok" } else { "FAIL" }.to_string(),
            worst_text(&comparison, ty),
        ]);
        if !passed {
            failures.push(format!("'{}'", signature.output_names[j]));
        }
    }
    print!("{}", table(&rows));
    if failures.is_empty() {
        Ok(format!(
            "partir: PASS: all {} outputs of the partitioned program match the original within {tolerance:e}",
            signature.outputs.len()
        ))
    } else {
        Err(format!(
            "verification failed: {} of {} outputs of the partitioned program differ from the original by more than {tolerance:e} (failing: {})",
            failures.len(),
            signature.outputs.len(),
            failures.join(", ")
        ))
    }
}

pub(super) fn worst_text(comparison: &judge::Comparison, ty: &TensorType) -> String {
    match comparison.worst {
        Some((index, a, b)) => format!(
            "{:?}: {} vs {}",
            ty.unravel(index),
            value_text(a, ty.elem),
            value_text(b, ty.elem)
        ),
        None => "(no elements)".into(),
    }
}

pub(super) fn ratio_text(ratio: f64) -> String {
    if ratio.is_infinite() {
        "inf".into()
    } else if ratio >= 100.0 {
        format!("{ratio:.0e}")
    } else {
        format!("{ratio:.2}")
    }
}

pub(super) fn error_text(error: f64) -> String {
    if error == 0.0 {
        "0".into()
    } else {
        format!("{error:.2e}")
    }
}

pub(super) fn value_text(value: f64, elem: Elem) -> String {
    match elem {
        Elem::F32 => format!("{:e}", value as f32),
        Elem::F64 => format!("{value:e}"),
        Elem::I32 | Elem::I64 => format!("{value}"),
    }
}
