//! Rewriting a function's per-argument / per-result attribute dictionaries (`arg_attrs`,
//! `res_attrs`), which several passes adjust (shardings added, exported or dropped).

use crate::ffi;
use melior::{
    ir::{
        attribute::{ArrayAttribute, DictionaryAttribute},
        operation::OperationLike,
        Attribute, Identifier, OperationRef,
    },
    Context,
};

/// How many entries `func`'s `name` (`arg_attrs` or `res_attrs`) lists (0 when it is absent).
pub fn listed(func: OperationRef, name: &str) -> usize {
    func.attribute(name)
        .ok()
        .and_then(|attr| melior::ir::attribute::ArrayAttribute::try_from(attr).ok())
        .map_or(0, |array| array.len())
}

/// The fields of each entry of `func`'s `name` (`arg_attrs` or `res_attrs`), `count` entries
/// (missing ones are empty).
pub fn entries<'c>(
    func: OperationRef<'c, '_>,
    name: &str,
    count: usize,
) -> Vec<Vec<(Identifier<'c>, Attribute<'c>)>> {
    let array = func
        .attribute(name)
        .ok()
        .and_then(|attr| ArrayAttribute::try_from(attr).ok());
    (0..count)
        .map(|index| {
            array
                .and_then(|array| array.element(index).ok())
                .and_then(|dict| DictionaryAttribute::try_from(dict).ok())
                .map(|dict| {
                    (0..dict.len())
                        .filter_map(|field| dict.element(field).ok())
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect()
}

/// Sets `func`'s `name` (`arg_attrs` or `res_attrs`) to these per-entry fields.
pub fn set_entries<'c>(
    context: &'c Context,
    func: OperationRef<'c, '_>,
    name: &str,
    entries: &[Vec<(Identifier<'c>, Attribute<'c>)>],
) {
    let dictionaries: Vec<Attribute> = entries
        .iter()
        .map(|fields| DictionaryAttribute::new(context, fields).into())
        .collect();
    ffi::set_attribute(
        func,
        name,
        ArrayAttribute::new(context, &dictionaries).into(),
    );
}

/// Whether a field is named `key`.
pub fn is_named(field: &(Identifier, Attribute), key: &str) -> bool {
    field.0.as_string_ref().as_str() == Ok(key)
}

/// The `partir.name` among one entry's fields (an argument's or a result's), if any.
pub fn name(fields: &[(Identifier, Attribute)]) -> Option<String> {
    fields
        .iter()
        .find(|field| is_named(field, crate::ir::names::NAME_ATTR))
        .and_then(|field| ffi::string_attribute(field.1))
}
