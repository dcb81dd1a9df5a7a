//! Where a value's name numbers something, which is how repeated layers show in names.
//! Libraries write the number two ways:
//! ```text
//! params/layers/3/wq                        transformers, MaxText: a segment of its own
//! params/transformer/block_3/mlp/in/...     penzai, flax's Block_3, layers_3: joined by `_`
//! ```
//! Folded pricing counts layers by it, the search groups a parameter over its layers
//! (`params/layers/*/wq`), and the report folds rows the same way; all three read it here.

use std::collections::{BTreeMap, BTreeSet};

/// One number in a name: `layers/3` or `block_3` is key `layers` or `block`, index 3.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Number {
    pub key: String,
    pub index: usize,
    /// The path segment holding the digits.
    segment: usize,
    /// `block_3` rather than `layers/3`.
    joined: bool,
}

fn digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit())
}

/// `block_3` -> ("block", "3"); the key must not be a number itself.
fn joined(segment: &str) -> Option<(&str, &str)> {
    let (key, index) = segment.rsplit_once('_')?;
    (!key.is_empty() && !digits(key) && digits(index)).then_some((key, index))
}

/// The numbers of a name, in path order: `opt/mu/transformer/block_3/attention` ->
/// [("block", 3)], `params/layers/3/wq` -> [("layers", 3)].
pub fn numbers(name: &str) -> Vec<Number> {
    let segments: Vec<&str> = name.split('/').collect();
    let mut found = Vec::new();
    for (at, segment) in segments.iter().enumerate() {
        let (key, index, joined) = match joined(segment) {
            Some((key, index)) => (key, index, true),
            None if at > 0 && digits(segment) && !digits(segments[at - 1]) => {
                if segments[at - 1].is_empty() {
                    continue;
                }
                (segments[at - 1], *segment, false)
            }
            None => continue,
        };
        if let Ok(index) = index.parse() {
            found.push(Number {
                key: key.to_string(),
                index,
                segment: at,
                joined,
            });
        }
    }
    found
}

/// The key numbering the most things in `names`, with their count, when they are numbered
/// `0..count`: the layers of a program's parameters.
pub fn most_numbered<'n>(names: impl IntoIterator<Item = &'n str>) -> Option<(String, usize)> {
    let mut indices: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for name in names {
        for number in numbers(name) {
            indices.entry(number.key).or_default().insert(number.index);
        }
    }
    indices
        .into_iter()
        .filter(|(_, found)| found.iter().copied().eq(0..found.len()))
        .map(|(key, found)| (key, found.len()))
        .max_by_key(|(_, count)| *count)
}

/// `name` with its first number keyed `key` set to `index`:
/// `params/layers/1/wq` -> `params/layers/5/wq`, `t/block_1/mlp` -> `t/block_5/mlp`.
pub fn renumber(name: &str, key: &str, index: usize) -> String {
    let mut segments: Vec<String> = name.split('/').map(str::to_string).collect();
    if let Some(number) = numbers(name).into_iter().find(|number| number.key == key) {
        segments[number.segment] = if number.joined {
            format!("{key}_{index}")
        } else {
            index.to_string()
        };
    }
    segments.join("/")
}

/// `name` with its numbers as `*`: every number of a segment of its own, and the joined ones
/// keyed `joined_key` (the layers; not flax's `Dense_0`, `Dense_1` inside a layer, which are
/// different parameters). `params/layers/0/wq` -> `params/layers/*/wq`.
pub fn starred(name: &str, joined_key: Option<&str>) -> String {
    let mut segments: Vec<String> = name.split('/').map(str::to_string).collect();
    for number in numbers(name) {
        if !number.joined {
            segments[number.segment] = "*".to_string();
        } else if Some(number.key.as_str()) == joined_key {
            segments[number.segment] = format!("{}_*", number.key);
        }
    }
    segments.join("/")
}

/// The index a name stack numbers `key` with: 3 in `jit(step)/transpose(jvp(layers/3))/add`
/// or `jit(step)/block_3/add`. The key starts a scope (after `/`, `(` or at the start) and the
/// index ends one. A pytree path (`params['t/block_3/w']`, which JAX leaves as an argument's
/// location and partir's ops around that argument inherit) is not a name stack: it says
/// nothing about where an op runs.
pub fn in_text(text: &str, key: &str) -> Option<usize> {
    if text.contains('[') {
        return None;
    }
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = text[from..].find(key) {
        let at = from + found;
        from = at + 1;
        let starts = at == 0 || matches!(bytes[at - 1], b'/' | b'(');
        let after = at + key.len();
        if !starts || !matches!(bytes.get(after), Some(b'/' | b'_')) {
            continue;
        }
        let count = text[after + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let ends = matches!(bytes.get(after + 1 + count), None | Some(b'/' | b')'));
        if count > 0 && ends {
            return text[after + 1..after + 1 + count].parse().ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyed(name: &str) -> Vec<(String, usize)> {
        numbers(name)
            .into_iter()
            .map(|number| (number.key, number.index))
            .collect()
    }

    #[test]
    fn both_ways_of_writing_a_number_are_read() {
        assert_eq!(keyed("opt/m/layers/3/ln1/scale"), [("layers".into(), 3)]);
        assert_eq!(
            keyed("opt/0/mu/transformer/block_12/mlp/in/Linear.weights"),
            [("opt".into(), 0), ("block".into(), 12)]
        );
        assert_eq!(
            keyed("params/Block_3/Dense_0/kernel"),
            [("Block".into(), 3), ("Dense".into(), 0)]
        );
        // `opt/0` numbers `opt`; a number after a number, or a key of digits, numbers nothing.
        assert_eq!(keyed("opt/0/1/x"), [("opt".into(), 0)]);
        assert!(keyed("params/embed").is_empty());
        assert!(keyed("params/_3/x").is_empty());
        assert!(keyed("params/12_3/x").is_empty());
    }

    #[test]
    fn the_layers_are_the_key_numbering_most() {
        let names = [
            "params/block_0/Dense_0/w",
            "params/block_0/Dense_1/w",
            "params/block_1/Dense_0/w",
            "params/block_1/Dense_1/w",
            "params/block_2/Dense_0/w",
        ];
        assert_eq!(most_numbered(names), Some(("block".into(), 3)));
        // Numbered 0, 2: not a run of layers.
        assert_eq!(most_numbered(["a/layers/0/w", "a/layers/2/w"]), None);
    }

    #[test]
    fn a_renumbered_name_keeps_its_form() {
        assert_eq!(
            renumber("params/layers/1/wq", "layers", 5),
            "params/layers/5/wq"
        );
        assert_eq!(
            renumber("opt/mu/t/block_1/mlp", "block", 47),
            "opt/mu/t/block_47/mlp"
        );
        assert_eq!(renumber("params/embed", "layers", 5), "params/embed");
    }

    #[test]
    fn only_the_layers_are_starred_when_joined() {
        assert_eq!(starred("params/layers/0/wq", None), "params/layers/*/wq");
        assert_eq!(
            starred("params/Block_3/Dense_0/kernel", Some("Block")),
            "params/Block_*/Dense_0/kernel"
        );
        assert_eq!(
            starred("params/Block_3/Dense_0/kernel", None),
            "params/Block_3/Dense_0/kernel"
        );
    }

    #[test]
    fn a_name_stack_says_its_number() {
        let text = "jit(step)/transpose(jvp(layers/12))/add";
        assert_eq!(in_text(text, "layers"), Some(12));
        assert_eq!(
            in_text("jit(step)/jvp(block_3)/dot_general", "block"),
            Some(3)
        );
        assert_eq!(in_text("jit(step)/jvp()/dot_general", "layers"), None);
        assert_eq!(in_text("jit(step)/mylayers/3/add", "layers"), None);
        assert_eq!(in_text("jit(step)/layers/3x/add", "layers"), None);
        assert_eq!(in_text("jit(step)/layers_3x/add", "layers"), None);
        assert_eq!(in_text("params['t/block_3/w']", "block"), None);
    }
}
