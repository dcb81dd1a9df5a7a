//! The `partir` binary end to end on the MLP (a few seconds each): partition prints PartIR:HLO
//! (Core with --stage core), errors are one sentence with exit code 1, verify --sequential passes
//! (or fails when the tolerance is impossible) against the original program run by mlir-runner,
//! and verify --ranks 8 passes on MPI ranks (mpiexec.mpich).

mod common;

use common::{partir, root, text};
use std::{
    path::{Path, PathBuf},
    process::Output,
};

fn mlp() -> PathBuf {
    root().join("examples/mlp/mlp.mlir")
}

fn schedule(name: &str) -> PathBuf {
    root().join(format!("examples/mlp/schedules/{name}.toml"))
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

#[test]
fn partition_prints_core_program_and_tactic_table() {
    let out = partir(&[
        "partition",
        path(&mlp()),
        "--schedule",
        path(&schedule("BP")),
        "--stage",
        "core",
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("partir.mesh @mesh [\"batch\"=4, \"model\"=2]"),
        "{stdout}"
    );
    assert!(stdout.contains("partir.loop \"batch\""), "{stdout}");
    assert!(!stdout.contains("partir_hlo."), "{stdout}");
    assert!(stderr.contains("wrote the Core program"), "{stderr}");
    assert!(
        stderr.contains("tactic") && stderr.contains("ops partitioned"),
        "{stderr}"
    );
    assert!(
        stderr
            .lines()
            .any(|line| line.trim_start().starts_with("BP ") && line.contains("batch")),
        "{stderr}"
    );
}

#[test]
fn partition_writes_the_output_file() {
    let output = std::env::temp_dir().join(format!("partir-cli-{}.mlir", std::process::id()));
    let out = partir(&[
        "partition",
        path(&mlp()),
        "-s",
        path(&schedule("MP")),
        "-o",
        path(&output),
        "--stage",
        "core",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let written = std::fs::read_to_string(&output).unwrap();
    std::fs::remove_file(&output).ok();
    assert!(written.contains("partir.loop \"model\""), "{written}");
}

/// The last stderr line, which must be the one-sentence error.
fn error_line(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    text(&out.stderr)
        .trim_end()
        .lines()
        .last()
        .unwrap_or("")
        .to_string()
}

#[test]
fn missing_schedule_is_one_sentence_and_exit_code_1() {
    let out = partir(&[
        "partition",
        path(&mlp()),
        "--schedule",
        "no/such/schedule.toml",
    ]);
    let line = error_line(&out);
    assert_eq!(
        line,
        "partir: error: cannot read the schedule 'no/such/schedule.toml': No such file or directory"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_schedule_contents_fail_with_a_location() {
    let bad = std::env::temp_dir().join(format!("partir-cli-bad-{}.toml", std::process::id()));
    std::fs::write(
        &bad,
        "mesh = { batch = 4 }\n[[tactic]]\nname = \"BP\"\naxis = \"batch\"\ntile = { \"nothing*\" = 0 }\n",
    )
    .unwrap();
    let out = partir(&["partition", path(&mlp()), "--schedule", path(&bad)]);
    std::fs::remove_file(&bad).ok();
    let line = error_line(&out);
    // At the tactic's [[tactic]] line in the schedule.
    assert!(line.contains(".toml:2:1: error: partir-schedule"), "{line}");
    assert!(line.contains("'nothing*'"), "{line}");
}

#[test]
fn parse_errors_name_the_file_and_line() {
    let bad = std::env::temp_dir().join(format!("partir-cli-bad-{}.mlir", std::process::id()));
    std::fs::write(&bad, "func.func @main() {\n  %0 = nope.op : f32\n}\n").unwrap();
    let out = partir(&["partition", path(&bad), "--schedule", path(&schedule("BP"))]);
    std::fs::remove_file(&bad).ok();
    let line = error_line(&out);
    assert!(line.starts_with(&format!("{}:2:", bad.display())), "{line}");
    assert!(line.contains("error:"), "{line}");
}

#[test]
fn partition_prints_hlo_by_default_with_collectives() {
    let out = partir(&[
        "partition",
        path(&mlp()),
        "--schedule",
        path(&schedule("BP")),
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("partir_hlo.all_reduce sum") && stdout.contains("axes [\"batch\"]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("partir_hlo.sharding = #partir_hlo.sharding<[{\"batch\"}, {}]>"),
        "{stdout}"
    );
    assert!(!stdout.contains("partir.loop"), "{stdout}");
    // The tactic table, then the report with its collectives: kind, axes, count, bytes, ...
    assert!(
        stderr
            .lines()
            .any(|line| line.trim_start().starts_with("BP ") && line.contains("batch")),
        "{stderr}"
    );
    assert!(
        stderr.lines().any(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            words.len() > 4 && words[..4] == ["all_reduce", "sum", "batch", "1"]
        }),
        "{stderr}"
    );
    // The 5 gradient and loss sums are one combined collective, and the lowering says what
    // that did to peak memory.
    assert!(
        stdout.contains("partir_hlo.all_reduce sum %")
            && stdout.contains(":5 = partir_hlo.all_reduce"),
        "{stdout}"
    );
    assert!(
        stderr.contains("partir-combine-collectives: combined 5 all_reduce into 1; peak memory"),
        "{stderr}"
    );
    assert!(stderr.contains("wrote the PartIR:HLO program"), "{stderr}");
}

/// A scratch directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = root().join("target/tmp/cli").join(test);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

#[test]
fn partition_prices_every_tactic_and_writes_report_and_picture() {
    let dir = scratch("partition_prices");
    let (json, html, program) = (dir.join("r.json"), dir.join("r.html"), dir.join("out.mlir"));
    let out = partir(&[
        "partition",
        path(&mlp()),
        "--schedule",
        path(&schedule("BP_MP_Z3")),
        "--device",
        "a100-40gb",
        "--report",
        path(&json),
        "--html",
        path(&html),
        "-o",
        path(&program),
    ]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for expected in [
        "collectives added",
        "peak memory",
        "(unpartitioned)",
        // BP's 5 sums are one combined all_reduce; Z3 turns them into all_gathers and
        // reduce_scatters (3, combined into one per scattered dim: 2), leaving 2 sums (the
        // loss, db2), again one.
        "+1 all_reduce sum",
        "+3 all_gather, +2 reduce_scatter sum",
        "partir-simulate: a100-40gb, mesh batch=4 model=2 (8 devices), per device",
    ] {
        assert!(stderr.contains(expected), "no '{expected}' in:\n{stderr}");
    }
    let report = std::fs::read_to_string(&json).expect("the JSON report");
    for tactic in ["(unpartitioned)", "BP", "MP", "Z3"] {
        assert!(
            report.contains(&format!("\"tactic\": \"{tactic}\"")),
            "{report}"
        );
    }
    let picture = std::fs::read_to_string(&html).expect("the picture");
    assert!(picture.contains("<svg") && picture.contains("a100-40gb"));
    // Per tactic, what propagation did; at the end, how each value is split.
    assert!(picture.contains(">ops partitioned</th><th class=\"num\">conflicts</th>"));
    assert!(picture.contains("<h2>Final sharding</h2>"));
    // BP_MP_Z3: w1 split by MP on its columns and by Z3 on its rows, its momentum alike.
    assert!(picture.contains(
        "<td>params/<wbr>w1<span class=\"state\">+ opt/momentum</span></td>\
         <td><span class=\"nw\">[batch, model]</span></td><td>16x128</td>"
    ));
    // Drawn over the mesh: the largest parameter, w1 (64x256), one block per device.
    assert!(picture.contains("<option value=\"2\" selected>params/w1</option>"));
    assert!(picture.contains(
        "64x256: rows are dim 0 (64) over batch, columns dim 1 (256) over model; each device \
         holds 16x128."
    ));

    // The written program simulates to the same final numbers.
    let out = partir(&["simulate", path(&program), "--device", "a100-40gb"]);
    let simulated = text(&out.stderr);
    assert!(out.status.success(), "{simulated}");
    let step = |text: &str| {
        text.lines()
            .find(|line| line.trim_start().starts_with("step time"))
            .map(str::to_string)
    };
    assert_eq!(step(&simulated), step(&stderr), "{simulated}");
}

/// ZeRO-2 written as Adam's moments split over `batch` (the zoo Transformer's `Z2.toml`)
/// updates the parameters split too and returns them so, while they came in whole: the next
/// step gathers them back. `partition` says so and writes the cost as `deferred_seconds`; the
/// step and that cost the step ZeRO-3 takes (its gathers in the step), and BP, which returns
/// its state as it took it, defers nothing.
#[test]
fn partition_says_the_state_a_step_returns_split_for_the_next_to_gather() {
    let dir = scratch("deferred");
    let transformer = root().join("examples/transformer/transformer.mlir");
    let run = |name: &str| {
        let json = dir.join(format!("{name}.json"));
        let out = partir(&[
            "partition",
            path(&transformer),
            "--schedule",
            path(&root().join(format!("examples/transformer/schedules/{name}.toml"))),
            "--report",
            path(&json),
            "-o",
            path(&dir.join(format!("{name}.mlir"))),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let story: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).expect("the report"))
                .expect("JSON");
        let step = story["tactics"]
            .as_array()
            .expect("tactics")
            .last()
            .expect("a tactic")["report"]["totals"]["step_seconds"]
            .as_f64()
            .expect("a step time");
        let deferred = story["deferred_seconds"]
            .as_f64()
            .expect("deferred_seconds");
        (text(&out.stderr), step, deferred)
    };
    let (said, z2, z2_deferred) = run("Z2");
    assert!(
        said.contains("partir: the step returns state split otherwise than it came in (params/"),
        "{said}"
    );
    assert!(z2_deferred > 0.0);
    let (_, z3, z3_deferred) = run("Z3");
    assert_eq!(z3_deferred, 0.0);
    assert!(
        ((z2 + z2_deferred) - z3).abs() <= 1e-3 * z3,
        "Z2 {z2} + {z2_deferred} against Z3 {z3}"
    );
    let (said, _, bp_deferred) = run("BP");
    assert_eq!(bp_deferred, 0.0);
    assert!(!said.contains("returns state split"), "{said}");
}

#[test]
fn simulate_rejects_unknown_devices_in_one_sentence() {
    let out = partir(&["simulate", path(&mlp()), "--device", "tpu-v9"]);
    assert!(
        error_line(&out).starts_with("partir: error: unknown device 'tpu-v9' (presets: tpu-v3,")
    );
    let out = partir(&[
        "partition",
        path(&mlp()),
        "-s",
        path(&schedule("BP")),
        "-d",
        "nope.toml",
    ]);
    assert!(error_line(&out).contains("cannot read device file 'nope.toml'"));
}

fn verify_ranks(name: &str, ranks: &str) -> Output {
    let (model, schedule) = (mlp(), schedule(name));
    partir(&[
        "verify",
        path(&model),
        "--schedule",
        path(&schedule),
        "--ranks",
        ranks,
    ])
}

fn assert_spmd_passes(name: &str) {
    let out = verify_ranks(name, "8");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout
            .contains("PASS: all 9 outputs of the partitioned program match the original (judged against it run in f64"),
        "{stdout}"
    );
    assert!(stderr.contains("partitioned: ran on 8 ranks"), "{stderr}");
}

#[test]
fn verify_ranks_passes_on_mlp_bp() {
    assert_spmd_passes("BP");
}

#[test]
fn verify_ranks_passes_on_mlp_mp() {
    assert_spmd_passes("MP");
}

#[test]
fn verify_ranks_passes_on_mlp_bp_mp_z3() {
    assert_spmd_passes("BP_MP_Z3");
}

#[test]
fn verify_ranks_must_match_the_mesh() {
    let out = verify_ranks("BP", "3");
    assert_eq!(
        error_line(&out),
        "partir: error: --ranks 3 does not match the mesh @mesh (batch=4 x model=2): run on 8 ranks, one per device"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn verify_needs_ranks_or_sequential() {
    let out = partir(&["verify", path(&mlp()), "-s", path(&schedule("BP"))]);
    assert!(error_line(&out).contains("verify needs --ranks N"));
}

fn verify(name: &str, extra: &[&str]) -> Output {
    let (model, schedule) = (mlp(), schedule(name));
    let mut args = vec![
        "verify",
        path(&model),
        "--schedule",
        path(&schedule),
        "--sequential",
    ];
    args.extend(extra);
    partir(&args)
}

#[test]
fn verify_sequential_passes_on_mlp_bp() {
    let out = verify("BP", &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout
            .contains("PASS: all 9 outputs of the partitioned program match the original (judged against it run in f64"),
        "{stdout}"
    );
    // Every output is listed, with the comparison against JAX's stored outputs.
    for name in ["params/w1", "opt/momentum/b2", "loss"] {
        assert!(stdout.contains(name), "{stdout}");
    }
    assert!(stdout.contains("JAX vs f64"), "{stdout}");
    assert!(stdout.contains("original vs f64"), "{stdout}");
    assert!(stderr.contains("partitioned: ran in"), "{stderr}");
}

#[test]
fn verify_sequential_passes_on_mlp_bp_mp() {
    let out = verify("BP_MP", &[]);
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn verify_with_generated_inputs() {
    // A model outside its folder: no data directory, so inputs are generated.
    let dir = std::env::temp_dir().join(format!("partir-cli-gen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("mlp.mlir");
    std::fs::copy(mlp(), &model).unwrap();
    let out = partir(&[
        "verify",
        path(&model),
        "-s",
        path(&schedule("BP")),
        "--sequential",
        "--seed",
        "3",
    ]);
    std::fs::remove_dir_all(&dir).ok();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("generated inputs (seed 3"), "{stderr}");
    assert!(!stdout.contains("JAX"), "{stdout}");
}

#[test]
fn verify_fails_with_an_impossible_tolerance_and_names_the_worst_output() {
    let out = verify("BP", &["--tolerance", "0", "--noise-factor", "0"]);
    let line = error_line(&out);
    assert!(
        line.starts_with("partir: error: verification failed:"),
        "{line}"
    );
    assert!(line.contains("worst: '"), "{line}");
    assert!(text(&out.stdout).contains("FAIL"), "{}", text(&out.stdout));
}

/// The MLP partitioned with `schedule_name` as PartIR:HLO, with `edit` applied to its text,
/// checked with `verify --partitioned` on 8 ranks.
fn verify_planted(test: &str, schedule_name: &str, edit: impl Fn(&str) -> String) -> Output {
    let dir = scratch(test);
    let hlo = dir.join("hlo.mlir");
    let out = partir(&[
        "partition",
        path(&mlp()),
        "-s",
        path(&schedule(schedule_name)),
        "-o",
        path(&hlo),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let original = std::fs::read_to_string(&hlo).unwrap();
    let planted = edit(&original);
    assert_ne!(planted, original, "the edit changed nothing");
    std::fs::write(&hlo, planted).unwrap();
    partir(&[
        "verify",
        path(&mlp()),
        "--partitioned",
        path(&hlo),
        "--ranks",
        "8",
    ])
}

/// `line` of `program` (the first one containing `needle`) replaced by `with(line)`.
fn replace_line(program: &str, needle: &str, with: impl Fn(&str) -> String) -> String {
    let mut done = false;
    program
        .lines()
        .map(|line| {
            if !done && line.contains(needle) {
                done = true;
                with(line)
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A planted bug must fail verify, naming the outputs it breaks.
fn assert_caught(out: &Output, outputs: &[&str]) {
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    let line = error_line(out);
    assert!(line.contains("verification failed:"), "{line}\n{stderr}");
    for name in outputs {
        assert!(line.contains(&format!("'{name}'")), "{line}");
    }
    assert!(stdout.contains("FAIL"), "{stdout}");
}

#[test]
fn verify_partitioned_passes_an_unchanged_program() {
    let out = verify_planted("planted-none", "BP_MP_Z3", |text| format!("{text}\n"));
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn verify_catches_a_dropped_all_reduce() {
    // Megatron's forward all_reduce over model: without it each device keeps half the logits.
    let out = verify_planted("planted-drop", "BP_MP_Z3", |program| {
        replace_line(program, "partir_hlo.all_reduce sum", |line| {
            let (result, rest) = line.split_once(" = partir_hlo.all_reduce sum ").unwrap();
            let operand = rest.split_whitespace().next().unwrap();
            let ty = rest.rsplit(" : ").next().unwrap();
            format!("{result} = tensor.cast {operand} : {ty} to {ty}")
        })
    });
    assert_caught(&out, &["loss", "params/w1"]);
}

#[test]
fn verify_catches_a_wrong_reduction_kind() {
    let out = verify_planted("planted-kind", "BP_MP_Z3", |program| {
        replace_line(program, "partir_hlo.all_reduce sum", |line| {
            line.replace("all_reduce sum", "all_reduce max")
        })
    });
    assert_caught(&out, &["loss"]);
}

#[test]
fn verify_catches_swapped_shards() {
    // params/w2 arrives with its rows split over model then batch; declaring batch then model
    // hands every device another device's rows.
    let out = verify_planted("planted-swap", "BP_MP_Z3", |program| {
        replace_line(program, "partir.name = \"params/w2\"", |line| {
            line.replacen(
                r#"[{"model", "batch"}, {}]"#,
                r#"[{"batch", "model"}, {}]"#,
                1,
            )
        })
    });
    assert_caught(&out, &["params/w2", "loss"]);
}

#[test]
fn verify_catches_the_wrong_half_of_a_slice() {
    // Every device takes the first chunk instead of its own (of a slice of computed data, not
    // of an empty destination, whose contents nobody reads).
    let out = verify_planted("planted-half", "Z3", |program| {
        let computed = program
            .lines()
            .filter_map(|line| line.split_once(" = partir_hlo.all_slice "))
            .find_map(|(_, rest)| {
                let operand = rest.split_whitespace().next()?;
                let definition = program
                    .lines()
                    .find(|line| line.trim_start().starts_with(&format!("{operand} = ")))?;
                (!definition.contains("tensor.empty") && !definition.contains("linalg.fill"))
                    .then(|| format!("partir_hlo.all_slice {operand} "))
            })
            .expect("a slice of computed data");
        replace_line(program, &computed, |line| {
            let (result, rest) = line.split_once(" = partir_hlo.all_slice ").unwrap();
            let operand = rest.split_whitespace().next().unwrap();
            let types = rest.rsplit(" : ").next().unwrap();
            let (from, to) = types.split_once(" -> ").unwrap();
            let shape = |ty: &str| -> Vec<String> {
                let inner = ty
                    .trim()
                    .trim_start_matches("tensor<")
                    .trim_end_matches('>');
                let mut dims: Vec<String> = inner.split('x').map(String::from).collect();
                dims.pop();
                dims
            };
            let sizes = shape(to);
            let zeros = vec!["0"; sizes.len()].join(", ");
            let ones = vec!["1"; sizes.len()].join(", ");
            format!(
                "{result} = tensor.extract_slice {operand}[{zeros}] [{}] [{ones}] : {from} to {to}",
                sizes.join(", ")
            )
        })
    });
    assert_caught(&out, &[]);
}

/// `partir args` on every zoo model with every expert schedule: each argument is listed with
/// its shape, type and size, every selector of the schedule matches something, and the
/// arguments' sizes add up to the total line.
#[test]
fn args_lists_every_zoo_model_and_which_tactics_match() {
    let forms = ["mlp", "transformer", "unet", "gns", "mqa"]
        .into_iter()
        .flat_map(|model| {
            [
                (model, format!("{model}.mlir")),
                (model, format!("{model}.stablehlo.mlir")),
            ]
        })
        .chain([
            ("llama", "llama.stablehlo.mlir".to_string()),
            ("moe", "moe.stablehlo.mlir".to_string()),
            ("gpipe", "gpipe.stablehlo.mlir".to_string()),
            (
                "transformer_scan",
                "transformer_scan.stablehlo.mlir".to_string(),
            ),
        ]);
    for (model, file) in forms {
        let dir = root().join("examples").join(model);
        let program = dir.join(file);
        let schedules = std::fs::read_dir(dir.join("schedules")).expect("schedules");
        for entry in schedules {
            let schedule = entry.unwrap().path();
            let out = partir(&["args", path(&program), "--schedule", path(&schedule)]);
            let stdout = text(&out.stdout);
            assert!(out.status.success(), "{model}: {}", text(&out.stderr));
            assert!(stdout.contains("tactics"), "{model}: {stdout}");
            assert!(
                !stdout.contains("matches nothing"),
                "{}: {stdout}",
                schedule.display()
            );
            let rows = stdout.lines().filter(|line| line.contains(" arg ")).count();
            let total = stdout.lines().last().unwrap();
            assert!(
                total.starts_with(&format!("{rows} arguments")),
                "{model}: {total}"
            );
        }
    }
    let out = partir(&[
        "args",
        path(&mlp()),
        "--schedule",
        path(&schedule("BP_MP_Z3")),
    ]);
    let stdout = text(&out.stdout);
    let row = |name: &str| {
        stdout
            .lines()
            .find(|line| line.split_whitespace().next() == Some(name))
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    assert_eq!(
        row("params/w1"),
        "params/w1 64x256 f32 64.00 KiB arg 2 MP tile 1, Z3 tile 0"
    );
    assert_eq!(row("y"), "y 32 i32 128 B arg 9 BP tile 0");
    assert_eq!(row("params/b2"), "params/b2 10 f32 40 B arg 1 -");
}

#[test]
fn args_names_the_nearest_values_to_a_selector_that_matches_nothing() {
    let dir = scratch("args_nearest");
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "mesh = { batch = 4 }\n[[tactic]]\nname = \"MP\"\naxis = \"batch\"\ntile = { \"*w3\" = 1 }\n",
    )
    .unwrap();
    let out = partir(&["args", path(&mlp()), "--schedule", path(&bad)]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("tactic 'MP': selector '*w3' matches nothing (nearest: params/w1, params/w2, opt/momentum/w1)"),
        "{stdout}"
    );
    // The same selector in a partition fails, naming the nearest values.
    let out = partir(&["partition", path(&mlp()), "--schedule", path(&bad)]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains("nearest names: params/w1, params/w2"),
        "{stderr}"
    );
}

/// After partitioning, the report says how every argument and result is split (terminal, grouped,
/// and JSON, per value): ZeRO-3 splits w2's rows along model then batch, Megatron w1's columns.
#[test]
fn partition_reports_each_values_final_sharding() {
    let dir = scratch("final_sharding");
    let json = dir.join("report.json");
    let out = partir(&[
        "partition",
        path(&mlp()),
        "--schedule",
        path(&schedule("BP_MP_Z3")),
        "-o",
        path(&dir.join("out.mlir")),
        "--report",
        path(&json),
    ]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let row = |name: &str| {
        stderr
            .lines()
            .find(|line| line.split_whitespace().next() == Some(name))
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    // Grouped as the picture groups them: the momentum named in its parameter's row, the
    // results that repeat an argument counted, not listed.
    assert_eq!(
        row("params/w1"),
        "params/w1 + opt/momentum [batch, model] 16x128"
    );
    assert_eq!(
        row("params/w2"),
        "params/w2 + opt/momentum [model*batch, -] 32x10"
    );
    assert_eq!(row("x"), "x [batch, -] 8x64");
    assert!(stderr.contains("-> loss"), "{stderr}");
    assert!(
        stderr.contains("(10 arguments and 9 results in 7 rows:")
            && stderr.contains("8 results split like the argument of the same name not repeated"),
        "{stderr}"
    );
    let report = std::fs::read_to_string(&json).unwrap();
    assert!(
        report.contains("\"name\": \"params/w2\"") && report.contains("\"local_shape\""),
        "{report}"
    );
}

/// Propagation stops speak the model's language: in the terminal (once per reason, with the
/// count of other places), in the JSON report and in the picture, each names the value by the
/// arguments it derives from, the dim and its size, and what the stop costs.
#[test]
fn partition_explains_where_propagation_stopped() {
    let dir = scratch("partition_stops");
    let (json, html) = (dir.join("r.json"), dir.join("r.html"));
    // Splitting dim 1 (size 6) of x cannot pass the merges of [8, 6] into 48 (only the major dim
    // of a merged group carries a tile): two stops, one reason.
    let model = dir.join("merge.mlir");
    std::fs::write(
        &model,
        r#"func.func @main(%x: tensor<8x6xf32> {partir.name = "params/x"}) -> (tensor<48xf32>, tensor<48xf32>) {
  %s = arith.addf %x, %x : tensor<8x6xf32>
  %a = tensor.collapse_shape %s [[0, 1]] : tensor<8x6xf32> into tensor<48xf32>
  %b = tensor.collapse_shape %x [[0, 1]] : tensor<8x6xf32> into tensor<48xf32>
  return %a, %b : tensor<48xf32>, tensor<48xf32>
}
"#,
    )
    .expect("writable");
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        "mesh = { model = 2 }\n[[tactic]]\nname = \"MP\"\naxis = \"model\"\ntile = { \"params/x\" = 1 }\n",
    )
    .expect("writable");
    let out = partir(&[
        "partition",
        path(&model),
        "--schedule",
        path(&plan),
        "--stage",
        "core",
        "--report",
        path(&json),
        "--html",
        path(&html),
        "-o",
        path(&dir.join("out.mlir")),
    ]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stop = stderr
        .lines()
        .find(|line| line.contains("partir-propagate: stopped at"))
        .unwrap_or_else(|| panic!("no stop in:\n{stderr}"));
    for expected in [
        "stopped at 'tensor.collapse_shape' on axis 'model'",
        "(8x6 from params/x) is split on dim 1 (size 6)",
        "all_gather of 192 B per device",
        "repeats on each of the 2 'model' devices",
        "(and at 1 more place)",
    ] {
        assert!(stop.contains(expected), "no '{expected}' in: {stop}");
    }
    let report = std::fs::read_to_string(&json).expect("the JSON report");
    assert!(report.contains("\"ops_partitioned\": 1"), "{report}");
    assert!(report.contains("\"conflicts\": 2"), "{report}");
    // Both places, each in its message and its detail.
    assert_eq!(
        report.matches("from params/x").count(),
        4,
        "both places: {report}"
    );
    // Each stop as propagation found it, in fields (not only as the remark's text).
    for field in [
        "\"op\": \"tensor.collapse_shape\"",
        "\"axis\": \"model\"",
        "\"reason\": \"factor j must be replicated\"",
        "merge.mlir:3:8",
    ] {
        assert!(report.contains(field), "no {field} in: {report}");
    }
    let picture = std::fs::read_to_string(&html).expect("the picture");
    assert!(picture.contains("Where propagation stopped"));
    assert!(picture.contains("from params/x"));
}
