//! From an MLIR op to its Tile Mapping Registry rule: the one place that reads op shapes and
//! attributes for the TMR (which itself knows nothing of MLIR).
//!
//! Linalg structured ops (named or generic) get their rule from the `LinalgOp` interface:
//! indexing maps, iterator types and the combiner found in their region. Every other op is
//! looked up by name in [`Registry::with_defaults`], plus partir's own `partir.replicate`.

use crate::{
    ffi,
    ir::core::REPLICATE_OP,
    tmr::{structured_rule, FactorId, FactorKind, OpAttrs, OpShapeInfo, Registry, Rule, DYNAMIC},
};
use std::sync::Mutex;

use melior::ir::{
    attribute::{ArrayAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute, IntegerAttribute},
    operation::OperationLike,
    Attribute, OperationRef, Type, ValueLike,
};

/// The rules partir knows, with the partir-specific ones added.
pub struct Rules {
    registry: Registry,
}

/// Einsum rules registered at run time (C API, other compilers): (op name, einsum).
static REGISTERED_EINSUMS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Registers the rule of `op_name` in einsum notation, for every later propagation:
/// `register_einsum_rule("my.matmul", "ik,kj->ij reduction={k:sum}")`. Factor sizes come from
/// each op's shapes. A later registration for the same op replaces an earlier one.
pub fn register_einsum_rule(op_name: &str, einsum: &str) -> Result<(), String> {
    if op_name.trim().is_empty() {
        return Err("an einsum rule needs an op name".into());
    }
    Rule::check_einsum(einsum)
        .map_err(|error| format!("einsum rule for '{op_name}' ('{einsum}'): {error}"))?;
    let mut registered = REGISTERED_EINSUMS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    registered.retain(|(name, _)| name != op_name);
    registered.push((op_name.to_string(), einsum.to_string()));
    Ok(())
}

impl Default for Rules {
    fn default() -> Self {
        let mut registry = Registry::with_defaults();
        // A pin is elementwise on every axis but its own (propagation stops at pins along
        // their own axis before asking for a rule).
        registry.register(REPLICATE_OP, |op| {
            Ok(Rule::elementwise(op.result(0)?, 1, 1))
        });
        let registered = REGISTERED_EINSUMS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for (name, einsum) in registered.iter() {
            let einsum = einsum.clone();
            registry.register(name.clone(), move |op| {
                Rule::einsum_shapes(&einsum, &op.operands, &op.results)
            });
        }
        Self { registry }
    }
}

impl Rules {
    /// The rule of `op`: None when no rule is registered for its name, Some(Err) when the
    /// rule's builder rejects this particular op (e.g. a reshape that is not a merge/split).
    pub fn rule_for(&self, op: OperationRef) -> Option<Result<Rule, String>> {
        let mut info = shape_info(op);
        if let Some(linalg) = ffi::linalg_info(op) {
            info.attrs.indexing_maps = linalg.indexing_maps;
            info.attrs.iterator_types = linalg.iterator_types;
            info.attrs.combiner = linalg
                .combiner
                .and_then(crate::ir::attrs::reduction_of_code);
            // A loop dim the body reads with linalg.index (e.g. an iota building a one-hot) cannot
            // be split: each device would count from 0. Factor d is loop dim d.
            return Some(structured_rule(&info).map(|mut rule| {
                for dim in linalg.indexed_dims {
                    if dim < rule.factors().len() {
                        rule.set_kind(FactorId(dim), FactorKind::MustReplicate);
                    }
                }
                rule
            }));
        }
        info.attrs = attributes_of(op);
        self.registry.rule_for(&info)
    }
}

/// Operand and result shapes (non-tensors are rank 0; dynamic dims are [`DYNAMIC`]).
pub fn shape_info(op: OperationRef) -> OpShapeInfo {
    let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
    let operands = op
        .operands()
        .map(|value| shape_of(value.r#type()))
        .collect();
    let results = op.results().map(|value| shape_of(value.r#type())).collect();
    OpShapeInfo::new(name, operands, results)
}

fn shape_of(ty: Type) -> Vec<i64> {
    ffi::tensor_shape(ty)
        .map(|shape| {
            shape
                .into_iter()
                .map(|size| size.unwrap_or(DYNAMIC))
                .collect()
        })
        .unwrap_or_default()
}

/// The op-specific attributes the registry's builders read.
fn attributes_of(op: OperationRef) -> OpAttrs {
    let dense = |name: &str| -> Vec<i64> {
        op.attribute(name)
            .ok()
            .and_then(|attr| DenseI64ArrayAttribute::try_from(attr).ok())
            .map(|array| {
                (0..array.len())
                    .filter_map(|index| array.element(index).ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    let integer = |attr: Attribute| {
        IntegerAttribute::try_from(attr)
            .ok()
            .map(|value| value.value())
    };
    let mut attrs = OpAttrs::default();
    match op.name().as_string_ref().as_str().unwrap_or("") {
        "tensor.expand_shape" | "tensor.collapse_shape" => {
            if let Some(groups) = op
                .attribute("reassociation")
                .ok()
                .and_then(|attr| ArrayAttribute::try_from(attr).ok())
            {
                attrs.reassociation = (0..groups.len())
                    .filter_map(|index| groups.element(index).ok())
                    .filter_map(|group| ArrayAttribute::try_from(group).ok())
                    .map(|group| {
                        (0..group.len())
                            .filter_map(|index| group.element(index).ok().and_then(integer))
                            .map(|dim| dim as usize)
                            .collect()
                    })
                    .collect();
            }
        }
        "tensor.extract_slice" | "tensor.insert_slice" => {
            attrs.static_offsets = dense("static_offsets");
            attrs.static_sizes = dense("static_sizes");
            attrs.static_strides = dense("static_strides");
        }
        "tensor.pad" => {
            attrs.static_offsets = dense("static_low");
            attrs.static_sizes = dense("static_high");
        }
        "tosa.transpose" => {
            attrs.permutation = op
                .attribute("perms")
                .ok()
                .and_then(|attr| DenseI32ArrayAttribute::try_from(attr).ok())
                .map(|array| {
                    (0..array.len())
                        .filter_map(|index| array.element(index).ok())
                        .map(i64::from)
                        .collect()
                })
                .unwrap_or_default();
        }
        name if name.starts_with("tosa.reduce_") => {
            attrs.dims = op
                .attribute("axis")
                .ok()
                .and_then(integer)
                .into_iter()
                .collect();
        }
        "tensor.concat" => {
            attrs.dims = op
                .attribute("dim")
                .ok()
                .and_then(integer)
                .into_iter()
                .collect()
        }
        _ => {}
    }
    attrs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn einsum_registration_checks_the_notation() {
        assert!(register_einsum_rule("test.mymatmul", "ik,kj->ij reduction={k:sum}").is_ok());
        assert!(register_einsum_rule("test.bad", "ik,kj")
            .unwrap_err()
            .contains("test.bad"));
        assert!(register_einsum_rule(" ", "i->i").is_err());
    }
}
