//! Naming values so schedules can address them, and selecting them with `*` globs.
//!
//! A function argument is named by its `partir.name` argument attribute (the JAX importer sets
//! it to the pytree path, e.g. `params/layers/0/wq`), else by the pytree path JAX's lowering
//! leaves as the argument's location (`%arg0: tensor<8x4xf32> loc("params['layers'][0]['wq']")`
//! is `params/layers/0/wq`), else `argN`. A value computed inside a
//! function is named by a `partir.name` attribute on its defining op: result 0 takes the name,
//! result k > 0 takes `NAME#k`. Example: `%h = linalg.matmul {partir.name = "h"} ...` is `h`.

use crate::ffi;
use melior::ir::{
    attribute::{ArrayAttribute, DictionaryAttribute},
    block::BlockLike,
    operation::OperationLike,
    Location, OperationRef, RegionLike, Value, ValueLike,
};

pub const NAME_ATTR: &str = "partir.name";

/// Where a named value is defined.
#[derive(Clone, Copy, Debug)]
pub enum Site<'c, 'a> {
    /// Argument `index` of function `func`.
    Argument {
        func: OperationRef<'c, 'a>,
        index: usize,
    },
    /// Result `index` of operation `op`.
    Result {
        op: OperationRef<'c, 'a>,
        index: usize,
    },
}

/// A value a selector can address.
#[derive(Clone, Copy, Debug)]
pub struct NamedValue<'c, 'a> {
    pub value: Value<'c, 'a>,
    pub site: Site<'c, 'a>,
}

impl<'c, 'a> NamedValue<'c, 'a> {
    pub fn location(&self) -> Location<'c> {
        match self.site {
            Site::Argument { .. } => self.value.location(),
            Site::Result { op, .. } => op.location(),
        }
    }
}

/// A `*` glob over value names: `*w1` matches `params/layers/0/w1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    pattern: String,
}

impl Selector {
    pub fn new(pattern: &str) -> Result<Self, String> {
        if pattern.trim().is_empty() {
            return Err("empty selector; name a value, e.g. value=x or value=*w1".into());
        }
        Ok(Self {
            pattern: pattern.to_string(),
        })
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    pub fn matches(&self, name: &str) -> bool {
        glob_matches(self.pattern.as_bytes(), name.as_bytes())
    }
}

/// Iterative glob matching with backtracking to the last `*` (linear in practice).
fn glob_matches(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p + 1;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&byte| byte == b'*')
}

/// The functions with bodies in `module`.
pub fn functions<'c, 'a>(module: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut found = Vec::new();
    let Some(body) = module
        .region(0)
        .ok()
        .and_then(|region| region.first_block())
    else {
        return found;
    };
    let mut next = body.first_operation();
    while let Some(op) = next {
        let is_func = super::func::is_function(op);
        if is_func
            && op
                .region(0)
                .is_ok_and(|region| region.first_block().is_some())
        {
            found.push(op);
        }
        next = op.next_in_block();
    }
    found
}

/// The functions whose values selectors name: `@main` when the module has one, else every
/// function that is not private. Helpers called from them (JAX's private functions) are not
/// addressed: tiling a helper's argument would change its signature under its callers.
pub fn entry_functions<'c, 'a>(module: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let all = functions(module);
    let attribute =
        |func: &OperationRef, name: &str| func.attribute(name).ok().and_then(ffi::string_attribute);
    if let Some(main) = all
        .iter()
        .find(|func| attribute(func, "sym_name").as_deref() == Some("main"))
    {
        return vec![*main];
    }
    all.into_iter()
        .filter(|func| attribute(func, "sym_visibility").as_deref() != Some("private"))
        .collect()
}

/// Every addressable value of the entry functions (see [`entry_functions`]), with its name, in
/// program order.
pub fn named_values<'c, 'a>(module: OperationRef<'c, 'a>) -> Vec<(String, NamedValue<'c, 'a>)> {
    let mut found = Vec::new();
    for func in entry_functions(module) {
        let arg_attrs = func
            .attribute("arg_attrs")
            .ok()
            .and_then(|attr| ArrayAttribute::try_from(attr).ok());
        let entry = func
            .region(0)
            .ok()
            .and_then(|region| region.first_block())
            .expect("functions() has bodies");
        for index in 0..entry.argument_count() {
            let value = Value::from(entry.argument(index).expect("index < count"));
            let name = argument_name(arg_attrs, index, value);
            found.push((
                name,
                NamedValue {
                    value,
                    site: Site::Argument { func, index },
                },
            ));
        }
        ffi::walk(func, |op| {
            if let Some(name) = op.attribute(NAME_ATTR).ok().and_then(ffi::string_attribute) {
                for index in 0..op.result_count() {
                    let name = if index == 0 {
                        name.clone()
                    } else {
                        format!("{name}#{index}")
                    };
                    let value = Value::from(op.result(index).expect("index < count"));
                    found.push((
                        name,
                        NamedValue {
                            value,
                            site: Site::Result { op, index },
                        },
                    ));
                }
            }
        });
    }
    found
}

/// The names of `func`'s arguments, in order (see [`argument_name`]).
pub fn arguments(func: OperationRef) -> Vec<String> {
    let arg_attrs = func
        .attribute("arg_attrs")
        .ok()
        .and_then(|attr| ArrayAttribute::try_from(attr).ok());
    let Some(entry) = func.region(0).ok().and_then(|region| region.first_block()) else {
        return Vec::new();
    };
    (0..entry.argument_count())
        .map(|index| {
            let value = Value::from(entry.argument(index).expect("index < count"));
            argument_name(arg_attrs, index, value)
        })
        .collect()
}

/// Argument `index`'s name: its `partir.name`, else the pytree path of JAX's location for it
/// (see [`jax_path`]), else `argN`.
fn argument_name(arg_attrs: Option<ArrayAttribute>, index: usize, argument: Value) -> String {
    arg_attrs
        .and_then(|attrs| attrs.element(index).ok())
        .and_then(|dict| DictionaryAttribute::try_from(dict).ok())
        .and_then(|dict| dict.element_by_name(NAME_ATTR))
        .and_then(ffi::string_attribute)
        .or_else(|| {
            let location = argument.location();
            location
                .is_name()
                .then(|| jax_path(&ffi::string_ref_text(location.name_value().as_string_ref())))
                .flatten()
        })
        .unwrap_or_else(|| format!("arg{index}"))
}

/// Gives the entry functions' arguments and results without a `partir.name` the pytree path
/// JAX's lowering left for them: an argument's location (`loc("params['w']")`), a result's
/// `jax.result_info` (`"result[0]['w']"` is `result/0/w`). Every reader of names (selectors,
/// reports, the automatic partitioner's layers) then sees them. Returns how many were named.
pub fn adopt_jax_names<'c>(context: &'c melior::Context, module: OperationRef<'c, '_>) -> usize {
    use crate::ir::func_attrs;
    let mut named = 0;
    for func in entry_functions(module) {
        let Some(entry) = func.region(0).ok().and_then(|region| region.first_block()) else {
            continue;
        };
        let mut arguments = func_attrs::entries(func, "arg_attrs", entry.argument_count());
        let mut changed = false;
        for (index, fields) in arguments.iter_mut().enumerate() {
            if func_attrs::name(fields).is_some() {
                continue;
            }
            let Ok(argument) = entry.argument(index) else {
                continue;
            };
            let location = Value::from(argument).location();
            let path = location
                .is_name()
                .then(|| jax_path(&ffi::string_ref_text(location.name_value().as_string_ref())))
                .flatten();
            if let Some(path) = path {
                fields.push(name_field(context, &path));
                changed = true;
                named += 1;
            }
        }
        if changed {
            func_attrs::set_entries(context, func, "arg_attrs", &arguments);
        }
        let count = entry
            .terminator()
            .map(|terminator| terminator.operand_count())
            .unwrap_or(0);
        let mut results = func_attrs::entries(func, "res_attrs", count);
        let mut changed = false;
        for fields in results.iter_mut() {
            let info = fields
                .iter()
                .find(|field| func_attrs::is_named(field, "jax.result_info"))
                .and_then(|field| ffi::string_attribute(field.1));
            if func_attrs::name(fields).is_some() {
                continue;
            }
            if let Some(path) = info.as_deref().and_then(jax_path) {
                fields.push(name_field(context, &path));
                changed = true;
                named += 1;
            }
        }
        if changed {
            func_attrs::set_entries(context, func, "res_attrs", &results);
        }
    }
    named
}

fn name_field<'c>(
    context: &'c melior::Context,
    name: &str,
) -> (melior::ir::Identifier<'c>, melior::ir::Attribute<'c>) {
    (
        melior::ir::Identifier::new(context, NAME_ATTR),
        melior::ir::attribute::StringAttribute::new(context, name).into(),
    )
}

/// A JAX key path (`jax.tree_util.keystr`) as a partir name: `params['layers'][0]['wq']` is
/// `params/layers/0/wq`, `state.opt[1]` is `state/opt/1`. None for text that is not one (a
/// name location of some other producer keeps the argument's `argN`).
pub fn jax_path(text: &str) -> Option<String> {
    let head_end = text.find(['[', '.']).unwrap_or(text.len());
    let mut parts = vec![text[..head_end].to_string()];
    let mut rest = &text[head_end..];
    while !rest.is_empty() {
        if let Some(tail) = rest.strip_prefix("['") {
            let end = tail.find("']")?;
            parts.push(tail[..end].to_string());
            rest = &tail[end + 2..];
        } else if let Some(tail) = rest.strip_prefix('[') {
            let end = tail.find(']')?;
            parts.push(tail[..end].to_string());
            rest = &tail[end + 1..];
        } else if let Some(tail) = rest.strip_prefix('.') {
            let end = tail.find(['[', '.']).unwrap_or(tail.len());
            parts.push(tail[..end].to_string());
            rest = &tail[end..];
        } else {
            return None;
        }
    }
    let valid = |part: &String| !part.is_empty() && !part.contains([' ', '/', '\'', '"']);
    parts
        .iter()
        .all(valid)
        .then(|| parts.join("/"))
        .filter(|path| !path.is_empty())
}

/// The names of the function arguments and named values `value` is computed from, nearest
/// first (a named value stops the search along its path): what a user recognises a value
/// by. `%s = mulf(%q, %k)` with `%q` from `params/wq` and `%k` from `params/wk` gives
/// `["params/wq", "params/wk"]`. At most `limit` ops are visited.
pub fn derived_from(value: Value, limit: usize) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut queue = std::collections::VecDeque::from([value]);
    let mut visited = 0;
    while let Some(value) = queue.pop_front() {
        if !seen.insert(ffi::value_id(value)) || visited >= limit {
            continue;
        }
        visited += 1;
        let mut push_name = |name: String| {
            if !names.contains(&name) {
                names.push(name);
            }
        };
        if let Some(op) = ffi::result_owner(value) {
            if let Some(name) = op.attribute(NAME_ATTR).ok().and_then(ffi::string_attribute) {
                push_name(name);
                continue;
            }
            // Operands, and what the op's regions read (a loop body's captured values).
            ffi::walk(op, |inner| {
                for index in 0..inner.operand_count() {
                    if let Ok(operand) = inner.operand(index) {
                        queue.push_back(operand);
                    }
                }
            });
        } else if let Some(block) = ffi::argument_owner(value) {
            let Some(func) = block.parent_operation() else {
                continue;
            };
            if !super::func::is_function(func) {
                continue;
            }
            let Ok(argument) = melior::ir::block::BlockArgument::try_from(value) else {
                continue;
            };
            let arg_attrs = func
                .attribute("arg_attrs")
                .ok()
                .and_then(|attr| ArrayAttribute::try_from(attr).ok());
            push_name(argument_name(arg_attrs, argument.argument_number(), value));
        }
    }
    names
}

/// The values `selector` matches, or an error that lists what names exist.
pub fn select<'c, 'a>(
    all: &[(String, NamedValue<'c, 'a>)],
    selector: &Selector,
) -> Result<Vec<(String, NamedValue<'c, 'a>)>, String> {
    let (matched, unmatched): (Vec<_>, Vec<_>) =
        all.iter().partition(|(name, _)| selector.matches(name));
    let matched: Vec<_> = matched.into_iter().cloned().collect();
    if matched.is_empty() {
        let names: Vec<&str> = unmatched.iter().map(|(name, _)| name.as_str()).collect();
        let listing = if names.is_empty() {
            "the module has no functions with arguments".to_string()
        } else {
            format!(
                "nearest names: {} ({} in all; `partir args MODEL` lists them)",
                nearest(selector.pattern(), &names, 5).join(", "),
                names.len()
            )
        };
        return Err(format!(
            "selector '{}' matches no function argument or named value ({listing})",
            selector.pattern()
        ));
    }
    Ok(matched)
}

/// The `count` names nearest to a selector that matched nothing, nearest first (program order
/// among equals). A name is as near as its closest `/`-suffix, so `*wq1` finds
/// `params/layers/0/wq` (suffix `wq`, one edit) before `params/embed`.
pub fn nearest<'n>(pattern: &str, names: &[&'n str], count: usize) -> Vec<&'n str> {
    let wanted: String = pattern.chars().filter(|&c| c != '*').collect();
    let distance = |name: &str| {
        let suffixes = name
            .match_indices('/')
            .map(|(at, _)| &name[at + 1..])
            .chain(std::iter::once(name));
        suffixes
            .map(|suffix| strsim::levenshtein(&wanted, suffix))
            .min()
            .unwrap_or(usize::MAX)
    };
    let mut ranked: Vec<(usize, usize, &str)> = names
        .iter()
        .enumerate()
        .map(|(order, name)| (distance(name), order, *name))
        .collect();
    ranked.sort();
    let mut seen = std::collections::HashSet::new();
    ranked
        .into_iter()
        .filter(|(_, _, name)| seen.insert(*name))
        .take(count)
        .map(|(_, _, name)| name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, name: &str) -> bool {
        Selector::new(pattern).unwrap().matches(name)
    }

    #[test]
    fn jax_key_paths_are_names() {
        let path = |text| jax_path(text);
        assert_eq!(
            path("params['layers'][0]['wq']").as_deref(),
            Some("params/layers/0/wq")
        );
        assert_eq!(path("x").as_deref(), Some("x"));
        assert_eq!(path("state.opt[1]").as_deref(), Some("state/opt/1"));
        assert_eq!(
            path("params['transformer']['h']['0']['attn']['c_attn']['kernel']").as_deref(),
            Some("params/transformer/h/0/attn/c_attn/kernel")
        );
        // Not a key path: the argument keeps `argN`.
        assert_eq!(path("reduce sum"), None);
        assert_eq!(path("['w']"), None);
        assert_eq!(path("a['b"), None);
        assert_eq!(path(""), None);
    }

    #[test]
    fn exact_names_match_only_themselves() {
        assert!(matches("x", "x"));
        assert!(!matches("x", "xs"));
        assert!(!matches("x", "params/x"));
    }

    #[test]
    fn stars_match_any_run() {
        assert!(matches("*w1", "params/layers/0/w1"));
        assert!(matches("params/*/wq", "params/layers/0/wq"));
        assert!(matches("*bias*", "params/bias/0"));
        assert!(matches("*", ""));
        assert!(!matches("*w1", "params/w12"));
        assert!(matches("a*b*c", "aXbYbZc"));
        assert!(!matches("a*b*c", "aXbYbZ"));
    }

    #[test]
    fn empty_selector_is_an_error() {
        assert!(Selector::new("  ").is_err());
    }

    #[test]
    fn nearest_names_rank_by_the_closest_path_suffix() {
        let names = [
            "params/embed",
            "params/layers/0/wq",
            "params/layers/0/wk",
            "opt/mu/layers/0/wq",
            "tokens",
        ];
        assert_eq!(
            nearest("*wq1", &names, 2),
            ["params/layers/0/wq", "opt/mu/layers/0/wq"]
        );
        assert_eq!(nearest("tokns", &names, 1), ["tokens"]);
        assert_eq!(nearest("x", &[], 3), Vec::<&str>::new());
    }
}
