//! The code's shape, as docs/architecture.md describes it: imports flow one way,
//! entry → cli → passes → report → ir / rules / tmr / sim → ffi, and no file grows past about 600
//! lines without saying why at its top. The import graph comes from tools/import_cycles.py.

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
