//! Uneven tiles (docs/design.md#uneven-dims): JAX training steps whose dims the mesh's axes do
//! not divide (a batch of 6 on 4 devices, 12 heads on 8), padded and run by XLA equal to the
//! original; with the neutralisation planted away, the check fails.

mod common;

use common::{partir, root, text, verify_on_xla};
use std::process::Command;

/// `partir verify ORIGINAL --partitioned PATH ENGINE..`: its exit code and what it said.
fn verify_partitioned(
    program: &str,
    partitioned: &std::path::Path,
    engine: &[&str],
) -> (Option<i32>, String) {
    let mut args = vec![
        "verify",
        program,
        "--partitioned",
        partitioned.to_str().unwrap(),
    ];
    args.extend_from_slice(engine);
    let out = partir(&args);
    (out.status.code(), text(&out.stdout) + &text(&out.stderr))
}

#[test]
fn the_fixtures_are_what_jax_emits() {
    let out = Command::new(root().join("tools/.venv/bin/python"))
        .args(["tools/uneven_fixtures.py", "--check"])
        .current_dir(root())
        .output()
        .expect("the JAX venv runs tools/uneven_fixtures.py");
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn uneven_splits_pad_and_run_on_xla_equal_to_the_original() {
    for (program, schedule, remark) in [
        (
            "examples/uneven/mlp_batch6.mlir",
            "examples/uneven/schedules/BP.toml",
            "dim 0 of 'x' (size 6) padded to 8 to split it 4 ways along 'batch'",
        ),
        (
            "examples/uneven/attention_heads12.mlir",
            "examples/uneven/schedules/MP.toml",
            "dim 1 of 'wq' (size 12) padded to 16 to split it 8 ways along 'model'",
        ),
    ] {
        let (passed, said) = verify_on_xla(program, schedule);
        assert!(passed, "{program}: {said}");
        assert!(said.contains(remark), "{program}: {said}");
    }
}

#[test]
fn padding_that_reaches_a_sum_is_caught() {
    let dir = root().join("target/tmp/uneven");
    std::fs::create_dir_all(&dir).unwrap();
    let (good, bad) = (dir.join("mlp-bp.mlir"), dir.join("mlp-bp-unmasked.mlir"));
    let program = "examples/uneven/mlp_batch6.mlir";
    let out = partir(&[
        "partition",
        program,
        "-s",
        "examples/uneven/schedules/BP.toml",
        "-o",
        good.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Each device's rows are real below 6: the masks compare its rows' indices with 6. Moving
    // the limit to 8 lets the padded rows into the loss's mean and the weights' gradients.
    let text_of = std::fs::read_to_string(&good).unwrap();
    let limit = "dense<6> : tensor<2xi32>";
    assert!(text_of.contains(limit), "{text_of}");
    std::fs::write(&bad, text_of.replace(limit, "dense<8> : tensor<2xi32>")).unwrap();
    let (code, said) = verify_partitioned(program, &good, &["--xla"]);
    assert_eq!(code, Some(0), "{said}");
    let (code, said) = verify_partitioned(program, &bad, &["--xla"]);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("FAIL"), "{said}");
}

/// The zoo Transformer with a prime vocabulary (251, as GPT-2's 50257 is prime) split on
/// `model`: it runs on XLA equal to the original, and its plan moves what the same plan moves
/// on a vocabulary of 252, which divides.
#[test]
fn a_prime_vocabulary_splits_like_a_divisible_one() {
    let dir = root().join("target/tmp/uneven");
    std::fs::create_dir_all(&dir).unwrap();
    let schedule = "examples/uneven/schedules/EMB_BP.toml";
    let mut collectives = Vec::new();
    for vocab in [251, 252] {
        let program = dir.join(format!("transformer-vocab{vocab}.mlir"));
        let out = Command::new(root().join("tools/import-jax"))
            .args(["--model", "transformer", "--stablehlo", "--set"])
            .arg(format!("vocab={vocab}"))
            .arg("-o")
            .arg(&program)
            .current_dir(root())
            .output()
            .expect("tools/import-jax runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let report = dir.join(format!("transformer-vocab{vocab}.json"));
        let out = partir(&[
            "partition",
            program.to_str().unwrap(),
            "-s",
            schedule,
            "-o",
            "/dev/null",
            "--report",
            report.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        let last = &json["tactics"].as_array().unwrap().last().unwrap()["report"];
        // Communication: an all_slice moves nothing (the masks' row indices, sliced locally).
        let moving: Vec<String> = last["collectives"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] != "all_slice")
            .map(|c| c.to_string())
            .collect();
        collectives.push(moving);
        if vocab == 251 {
            let said = text(&out.stderr);
            assert!(
                said.contains("dim 0 of 'params/embed' (size 251) padded to 252"),
                "{said}"
            );
            let (passed, said) = verify_on_xla(program.to_str().unwrap(), schedule);
            assert!(passed, "{said}");
            // Split on `model` and then on `batch` too: each `model` tile pads from 126 to 128,
            // and the first padding's row index, which spans the whole vocabulary, pads tile by
            // tile.
            let (passed, said) = verify_on_xla(
                program.to_str().unwrap(),
                "examples/uneven/schedules/EMB_Z3.toml",
            );
            assert!(passed, "{said}");
            assert!(
                said.contains("(each of its 2 tiles along 'model' padded from 126 to 128)"),
                "{said}"
            );
        }
    }
    assert_eq!(collectives[0], collectives[1]);
}

/// A dim split along one axis and then along another that does not divide its tiles: the
/// published LLaMA's vocabulary (256) split on `model` (2) and then on `batch` (3) pads each
/// `model` tile from 128 to 129 rows. It runs on XLA equal to the original; with the table's
/// padding recorded as one block at the dim's end (the layout that moves the second tile's rows
/// by one), the check fails.
#[test]
fn a_dim_split_twice_pads_each_tile_and_runs_on_xla() {
    let dir = root().join("target/tmp/uneven");
    std::fs::create_dir_all(&dir).unwrap();
    let (good, bad) = (
        dir.join("llama-vp-z3.mlir"),
        dir.join("llama-vp-z3-at-end.mlir"),
    );
    let program = "examples/published/llama.mlir";
    let out = partir(&[
        "partition",
        program,
        "-s",
        "examples/uneven/schedules/LLAMA_VP_Z3.toml",
        "-o",
        good.to_str().unwrap(),
    ]);
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("padded to 258 to split it 6 ways along 'batch' (each of its 2 tiles along 'model' padded from 128 to 129): 43 per device"),
        "{said}"
    );
    let text_of = std::fs::read_to_string(&good).unwrap();
    let per_tile = "partir.padding = array<i64: 0, 2, 128, 129>";
    assert!(text_of.contains(per_tile), "{text_of}");
    std::fs::write(
        &bad,
        text_of.replacen(per_tile, "partir.padding = array<i64: 0, 1, 256, 258>", 1),
    )
    .unwrap();
    let (code, said) = verify_partitioned(program, &good, &["--xla"]);
    assert_eq!(code, Some(0), "{said}");
    let (code, said) = verify_partitioned(program, &bad, &["--xla"]);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("FAIL"), "{said}");
}

/// `tools/import-jax` (JAX lowered to linalg, which `verify --ranks` runs) of `source` (a zoo
/// model or a `--module` factory) with `sets`, written under target/tmp/uneven.
fn linalg_program(name: &str, source: &[&str]) -> std::path::PathBuf {
    let dir = root().join("target/tmp/uneven");
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join(format!("{name}.linalg.mlir"));
    let out = Command::new(root().join("tools/import-jax"))
        .args(source)
        .arg("-o")
        .arg(&program)
        .current_dir(root())
        .output()
        .expect("tools/import-jax runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    program
}

/// The small uneven cases on MPI ranks (their linalg forms, padded by `rules/linalg_pad.rs`):
/// a batch of 6 on 4 ranks, 12 heads on 8, and the zoo Transformer's prime vocabulary (251) on
/// `model`, each equal to the original; with the batch's mask letting the padding through, the
/// MLP's check fails.
#[test]
fn uneven_splits_pad_and_run_on_mpi_ranks_equal_to_the_original() {
    let cases = [
        (
            linalg_program(
                "mlp_batch6",
                &["--module", "tools/uneven_fixtures.py:mlp_batch6_spec"],
            ),
            "examples/uneven/schedules/BP.toml",
            "4",
            "dim 0 of 'x' (size 6) padded to 8",
        ),
        (
            linalg_program(
                "attention_heads12",
                &[
                    "--module",
                    "tools/uneven_fixtures.py:attention_heads12_spec",
                ],
            ),
            "examples/uneven/schedules/MP.toml",
            "8",
            "dim 1 of 'wq' (size 12) padded to 16",
        ),
        (
            linalg_program(
                "transformer-vocab251",
                &["--model", "transformer", "--set", "vocab=251"],
            ),
            "examples/uneven/schedules/EMB_BP.toml",
            "8",
            "dim 0 of 'params/embed' (size 251) padded to 252",
        ),
    ];
    for (program, schedule, ranks, remark) in &cases {
        let program = program.to_str().unwrap();
        let out = partir(&["verify", program, "-s", schedule, "--ranks", ranks]);
        let said = text(&out.stdout) + &text(&out.stderr);
        assert!(
            out.status.success() && said.contains("partir: PASS"),
            "{program}: {said}"
        );
        assert!(said.contains(remark), "{program}: {said}");
    }
    // The batch's flags: rows 6 and 7 are padding. All true, the loss's mean reads them.
    let dir = root().join("target/tmp/uneven");
    let (good, bad) = (
        dir.join("mlp-bp.hlo.mlir"),
        dir.join("mlp-bp-unmasked.hlo.mlir"),
    );
    let program = cases[0].0.to_str().unwrap();
    let out = partir(&[
        "partition",
        program,
        "-s",
        cases[0].1,
        "-o",
        good.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let text_of = std::fs::read_to_string(&good).unwrap();
    let flags = "dense<[true, true, true, true, true, true, false, false]>";
    assert!(text_of.contains(flags), "{text_of}");
    std::fs::write(
        &bad,
        text_of.replace(
            flags,
            "dense<[true, true, true, true, true, true, true, true]>",
        ),
    )
    .unwrap();
    let (code, said) = verify_partitioned(program, &bad, &["--ranks", "4"]);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("FAIL"), "{said}");
}

/// The padding rides through a scan's loop: the published LLaMA scanned over its layers with
/// its batch of 8 split 3 ways (padded to 9) runs on XLA equal to the original, the loop's
/// carries padded (hundreds of values, not only those before the loop), and nothing gathers
/// the batch.
#[test]
fn a_padded_batch_rides_through_a_scan() {
    let (passed, said) = verify_on_xla(
        "examples/published/llama-scan.mlir",
        "examples/uneven/schedules/SCAN_BP3.toml",
    );
    assert!(passed, "{said}");
    let values: usize = said
        .split("dim 0 of 'tokens' (size 8) padded to 9 to split it 3 ways along 'batch': 3 per device, 1 of padding (+12.5%) on ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|count| count.parse().ok())
        .unwrap_or(0);
    assert!(values > 600, "{values} values padded: {said}");
    // Partitioned through: nothing gathers the batch (the loops, reshapes, layer slices, the
    // token lookup and its gradient all run padded).
    let out = partir(&[
        "partition",
        "examples/published/llama-scan.mlir",
        "-s",
        "examples/uneven/schedules/SCAN_BP3.toml",
        "-o",
        "/dev/null",
    ]);
    let table = text(&out.stderr);
    assert!(
        out.status.success() && table.contains("all_reduce sum"),
        "{table}"
    );
    assert!(
        !table.contains("all_gather"),
        "the batch is gathered: {table}"
    );
}
