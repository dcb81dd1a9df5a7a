//! The code's shape, as docs/architecture.md describes it: imports flow one way,
//! entry → cli → passes → report → ir / rules / tmr / sim → ffi, and no file grows past about 600
//! lines without saying why at its top. The import graph comes from tools/import_cycles.py.
//! And only src/rules/ decides what an op is by its dialect name: passes ask the op's model.

use std::{path::Path, process::Command};

fn import_graph(args: &[&str]) -> (bool, String) {
    let root = env!("CARGO_MANIFEST_DIR");
    let output = Command::new("python3")
        .arg(Path::new(root).join("tools/import_cycles.py"))
        .args(args)
        .output()
        .expect("python3 runs tools/import_cycles.py");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn no_import_cycle_spans_modules() {
    let (ok, report) = import_graph(&[]);
    assert!(ok, "import cycles across modules:\n{report}");
}

/// The layers, lowest first: a file may import its own layer and the ones below.
const LAYERS: &[&[&str]] = &[
    &["src/affine.rs", "src/random.rs", "src/text.rs"],
    &["src/ffi/"],
    &[
        "src/tmr/",
        "src/ir/",
        "src/rules/",
        "src/schedule.rs",
        "src/schedule/",
        "src/sim/",
    ],
    &["src/report/"],
    &["src/passes/"],
    &["src/cli/"],
    &["src/entry/", "src/lib.rs"],
];

fn layer_of(file: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.iter().any(|prefix| file.starts_with(prefix)))
        .unwrap_or_else(|| panic!("{file} is in no layer of tests/architecture.rs"))
}

#[test]
fn imports_flow_one_way_and_ffi_is_a_leaf() {
    let (_, edges) = import_graph(&["--edges"]);
    let mut upward = Vec::new();
    for line in edges.lines().filter(|line| line.contains(" -> ")) {
        let (from, to) = line.split_once(" -> ").unwrap();
        if to == "src/lib.rs" {
            continue; // `crate::` items declared at the root are module declarations
        }
        if layer_of(to) > layer_of(from) {
            upward.push(line.to_string());
        }
        if from.starts_with("src/ffi/") {
            assert!(
                to.starts_with("src/ffi/") || to == "src/affine.rs",
                "ffi must stay a leaf: {line}"
            );
        }
    }
    assert!(
        upward.is_empty(),
        "imports against the flow:\n{}",
        upward.join("\n")
    );
}

#[test]
fn long_files_say_why() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut unexplained = Vec::new();
    let mut stack = vec![root.join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let lines = text.lines().count();
            let head: String = text.lines().take(30).collect::<Vec<_>>().join("\n");
            if lines > 600 && !head.contains("This file is long because") {
                unexplained.push(format!("{} ({lines} lines)", path.display()));
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "files over 600 lines without 'This file is long because ...' at their top:\n{}",
        unexplained.join("\n")
    );
}

/// Dialects whose ops partir reads in a program: what such an op is (its rule, cost, fill,
/// layout, ...) is its op family's model in src/rules/, so only src/rules/ decides by their
/// names. (partir's own dialects, `partir.` and `partir_hlo.`, are named in src/ir/.)
const DIALECTS: &[&str] = &[
    "stablehlo",
    "chlo",
    "mhlo",
    "sdy",
    "linalg",
    "tensor",
    "tosa",
    "arith",
    "math",
    "func",
    "scf",
    "bufferization",
];

/// Files outside src/rules/ the scan skips, each with why. Files that only emit ops need no
/// entry when they name an op where it is built (`OperationBuilder::new("linalg.fill", ..)`,
/// `binary("arith.muli", ..)`, `Sum => "stablehlo.add"`): that is not a decision, so
/// `ir/builder.rs`, `export_stablehlo.rs`, `to_mpi.rs` and `sequential.rs` are scanned too.
const OP_NAME_ALLOWLIST: &[(&str, &str)] = &[
    // is_function / is_return / is_call: ir/ sits below rules/ and walks functions itself.
    ("src/ir/func.rs", "the func dialect's structure, one place"),
    // Emits random linalg programs as text: its lists are the ops it may write.
    ("src/bin/partir-fuzz/program/", "emits fuzz programs"),
];

/// The string literals of a Rust file with the code around them: comments dropped, each
/// literal (raw and byte strings too) cut out as `(line, text, byte offset in code)`, so the
/// code's tokens next to a literal can be read.
fn literals(source: &str) -> (String, Vec<(usize, String, usize)>) {
    let chars: Vec<char> = source.chars().collect();
    let (mut code, mut found) = (String::new(), Vec::new());
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && at(i + 1) == '/') {
                line += usize::from(chars[i] == '\n');
                i += 1;
            }
            i += 2;
        } else if c == '\'' && (at(i + 2) == '\'' || at(i + 1) == '\\') {
            // A char literal ('"', '\'', '\n'); a lifetime ('a) has no closing quote.
            let from = if at(i + 1) == '\\' { i + 3 } else { i + 2 };
            i = (from..chars.len())
                .find(|&j| chars[j] == '\'')
                .unwrap_or(chars.len())
                + 1;
            code.push_str("' '");
        } else if c == '"' || ((c == 'r' || c == 'b') && matches!(at(i + 1), '"' | '#' | 'r')) {
            let start_line = line;
            let mut j = i + usize::from(c != '"');
            j += usize::from(c == 'b' && at(j) == 'r');
            let hashes = (j..).take_while(|&k| at(k) == '#').count();
            let raw = c == 'r' || at(i + 1) == 'r';
            if at(j + hashes) != '"' {
                code.push(c); // an identifier starting with r or b
                i += 1;
                continue;
            }
            j += hashes + 1;
            let mut text = String::new();
            loop {
                let d = at(j);
                if d == '\0' {
                    break;
                }
                line += usize::from(d == '\n');
                if d == '\\' && !raw {
                    text.push(d);
                    text.push(at(j + 1));
                    j += 2;
                    continue;
                }
                if d == '"' && (j + 1..=j + hashes).all(|k| at(k) == '#') {
                    j += 1 + hashes;
                    break;
                }
                text.push(d);
                j += 1;
            }
            found.push((start_line, text, code.len()));
            code.push_str("\"\"");
            i = j;
        } else {
            line += usize::from(c == '\n');
            code.push(c);
            i += 1;
        }
    }
    (code, found)
}

/// Why the literal at `offset` in `code` decides by an op's name (None: it only names one, as
/// data or to emit it).
fn deciding(code: &str, offset: usize) -> Option<&'static str> {
    let before = code[..offset].trim_end();
    let after = code[offset + 2..].trim_start();
    let alternative = |text: &str| text.starts_with('|') && !text.starts_with("||");
    if before.ends_with("==")
        || before.ends_with("!=")
        || after.starts_with("==")
        || after.starts_with("!=")
    {
        return Some("compared");
    }
    if after.starts_with("=>")
        || alternative(after)
        || (before.ends_with('|') && !before.ends_with("||"))
    {
        return Some("a match pattern");
    }
    // The innermost bracket the literal sits in, and what calls it.
    let mut depth = 0i32;
    for (index, c) in before.char_indices().rev() {
        match c {
            ')' | ']' | '}' => depth += 1,
            '(' | '[' | '{' if depth > 0 => depth -= 1,
            '[' => return Some("in a list of names"),
            '(' => {
                let callee = before[..index].trim_end().trim_end_matches('!');
                let name = callee
                    .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next();
                const TESTS: &[&str] = &[
                    "starts_with",
                    "ends_with",
                    "strip_prefix",
                    "strip_suffix",
                    "contains",
                    "op_is",
                    "op_name_starts_with",
                    "matches",
                    "eq",
                    "ne",
                ];
                return name
                    .filter(|name| TESTS.contains(name))
                    .map(|_| "a name test");
            }
            '{' | ';' => break,
            _ => {}
        }
    }
    let statement = before
        .rsplit([';', '{', '}'])
        .next()
        .unwrap_or("")
        .trim_start();
    let constant = [
        "const ",
        "static ",
        "pub const ",
        "pub static ",
        "pub(crate) const ",
    ];
    constant
        .iter()
        .any(|prefix| statement.starts_with(prefix))
        .then_some("a named op to test against")
}

/// Whether `text` is a dialect op's name (`tensor.pad`) or a dialect's prefix (`tensor.`).
fn is_op_name(text: &str) -> bool {
    text.split_once('.').is_some_and(|(dialect, op)| {
        DIALECTS.contains(&dialect)
            && op
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    })
}

/// Every deciding dialect op-name literal in the .rs files under `dir`, outside src/rules/
/// and the allowlist: `file:line: "name" (why)`.
fn op_name_decisions(root: &Path, dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let file = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if file.starts_with("src/rules/")
                || OP_NAME_ALLOWLIST
                    .iter()
                    .any(|(allowed, _)| file.starts_with(allowed))
            {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let (code, literals) = literals(&std::fs::read_to_string(&path).unwrap());
            for (line, text, offset) in literals {
                if let Some(why) = is_op_name(&text).then(|| deciding(&code, offset)).flatten() {
                    found.push(format!("{file}:{line}: \"{text}\" ({why})"));
                }
            }
        }
    }
    found.sort();
    found
}

#[test]
fn only_rules_decide_by_op_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (allowed, _) in OP_NAME_ALLOWLIST {
        assert!(
            root.join(allowed).exists(),
            "allowlisted {allowed} is gone: drop it"
        );
    }
    let found = op_name_decisions(root, &root.join("src"));
    assert!(
        found.is_empty(),
        "deciding by a dialect op's name outside src/rules/ (ask the op's model there: \
         rules::cost, fill, is_layout, ...; func structure: ir::func):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_op_name_scan_sees_each_kind_of_decision() {
    let decisions = [
        "if name == \"stablehlo.add\" {}",
        "let x = \"tensor.empty\" != name;",
        "match name { \"linalg.fill\" => 1, _ => 0 }",
        "matches!(name, \"tensor.cast\" | \"tensor.bitcast\")",
        "name.starts_with(\"tensor.\")",
        "ffi::op_is(op, \"func.return\")",
        "[\"stablehlo.reshape\", \"stablehlo.transpose\"].contains(&name)",
        "const ADD: &str = \"arith.addf\";",
    ];
    // Whether the scan finds a deciding op-name literal in `source`.
    let decides = |source: &str| {
        let (code, literals) = literals(source);
        literals
            .iter()
            .any(|(_, text, offset)| is_op_name(text) && deciding(&code, *offset).is_some())
    };
    for source in decisions {
        assert!(decides(source), "not seen as deciding: {source}");
    }
    let emits = [
        "OperationBuilder::new(\"stablehlo.add\", location)",
        "builder.binary(\"arith.muli\", a, b)",
        "ReductionKind::Sum => \"stablehlo.add\",",
        "// name == \"stablehlo.add\"",
        "op(\"linalg.matmul\", 1e9, 1)",
        "format!(\"func.call @{}\", name) == text",
        "let c = '\"'; let q = '\\''; let s = r#\"x == \"tosa.add\"\"#;",
    ];
    for source in emits {
        assert!(!decides(source), "seen as deciding: {source}");
    }
}
