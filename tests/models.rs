//! Runs the model zoo's checks (tools/test_models.py): every fixture parses with MLIR 22,
//! names match the pytree, schedules select real arguments, fixtures regenerate byte for byte,
//! and each fixture run by MLIR 22 reproduces JAX's outputs. Needs `scripts/setup --with-python`.

use std::{path::Path, process::Command};

#[test]
fn model_zoo() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join("tools/.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `scripts/setup --with-python` (the importer's virtual environment)",
        python.display()
    );
    let status = Command::new(python)
        .arg(root.join("tools/test_models.py"))
        .current_dir(root)
        .status()
        .expect("the model tests run");
    assert!(
        status.success(),
        "tools/test_models.py reported failures (see above)"
    );
}
