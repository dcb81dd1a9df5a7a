//! partir's plans handed to XLA's own partitioner (`partir partition --stage sdy`, docs/design.md
//! "Export to Shardy"): the Shardy-annotated input, compiled by XLA with Shardy on 8 CPU devices,
//! computes what the original does and moves no more bytes in its collectives than partir's own
//! export of the same plan (`tools/sdy_check.py`). The bytes are what the annotations decide:
//! without the `unreduced` marks on Megatron's partial gradients, the transformer's BP_MP moves
//! 269,828 B through Shardy against partir's 237,060 B, and this test fails.

mod common;

use common::{root, text};
use std::process::Command;

#[test]
fn shardy_runs_partir_s_plans_with_no_more_communication() {
    let python = root().join("tools/.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `scripts/setup --with-python`",
        python.display()
    );
    let out = Command::new(python)
        .args([
            "tools/sdy_check.py",
            "--jobs",
            "2",
            "mlp:BP_MP_Z3",
            "transformer:BP_MP",
            "mqa:BP_MP",
            "llama:BP_MP",
        ])
        .env("PARTIR", env!("CARGO_BIN_EXE_partir"))
        .current_dir(root())
        .output()
        .expect("the JAX venv runs tools/sdy_check.py");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("4 pairs, 0 failing"), "{stdout}");
    assert_eq!(stdout.matches("verifies True").count(), 4, "{stdout}");
}
