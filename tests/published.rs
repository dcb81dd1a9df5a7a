//! Published models as their PyPI packages ship them (tools/published_models.py: transformers'
//! GPT-2 and LLaMA, penzai's GPT-NeoX; each as written, scanned over its layers and
//! rematerialised), each training step exactly as `jax.jit(step).lower()` emits it (private
//! functions and calls kept). partir partitions them with batch parallelism with no stop, no
//! all_gather and one all_reduce (the gradients, combined), Megatron and BP+Megatron+ZeRO-3
//! without crashing, and partitioned programs compute what the original does on 8 XLA devices.

mod common;

use common::{
    generated_program, generated_program_with, partir, published_schedule, root, text,
    verify_on_xla,
};
use std::{
    path::Path,
    process::{Command, Output},
};

/// Every published program, with the folder of its schedules.
const MODELS: &[(&str, &str)] = &[
    ("gpt2", "gpt2"),
    ("gpt2-scan", "gpt2-scan"),
    ("gpt2-remat", "gpt2"),
    ("llama", "llama"),
    ("llama-scan", "llama-scan"),
    ("llama-remat", "llama"),
    ("gpt_neox", "gpt_neox"),
    ("gpt_neox-scan", "gpt_neox-scan"),
    ("gpt_neox-remat", "gpt_neox"),
];

fn program(model: &str) -> String {
    root()
        .join(format!("examples/published/{model}.mlir"))
        .display()
        .to_string()
}

/// `partir partition PROGRAM -s SCHEDULE --stage xla -o OUT`: how it ended, and what it said.
fn partition_for_xla(program: &str, schedule: &str, out: &Path) -> (Output, String) {
    let done = partir(&[
        "partition",
        program,
        "-s",
        schedule,
        "--stage",
        "xla",
        "-o",
        out.to_str().expect("utf-8"),
    ]);
    let stderr = text(&done.stderr);
    (done, stderr)
}

/// Batch parallelism on every variant: the step partitions through (no stop, no all_gather)
/// and its gradients are one combined all_reduce.
#[test]
fn batch_parallelism_partitions_every_published_model_through() {
    let dir = root().join("target/tmp/published");
    std::fs::create_dir_all(&dir).expect("writable");
    for (model, folder) in MODELS {
        let out = dir.join(format!("{model}-BP.mlir"));
        let (done, stderr) =
            partition_for_xla(&program(model), &published_schedule(folder, "BP"), &out);
        assert!(done.status.success(), "{model}: {stderr}");
        assert!(!stderr.contains("stopped at"), "{model} stops: {stderr}");
        assert!(
            !stderr.contains("no tile mapping rule"),
            "{model} has ops without rules: {stderr}"
        );
        let hlo = std::fs::read_to_string(&out).expect("the partitioned program");
        assert!(!hlo.contains("stablehlo.all_gather"), "{model}: {hlo}");
        assert_eq!(
            hlo.matches("\"stablehlo.all_reduce\"").count(),
            1,
            "{model}: one combined gradient all_reduce"
        );
    }
}

/// Every library, as written, scanned and rematerialised, under BP, Megatron and
/// BP+Megatron+ZeRO-3, computes what the original computes, on 8 XLA devices.
#[test]
fn published_models_run_partitioned_on_xla() {
    // Each library and each form of its layers at least once (13 runs, about 2 minutes); GPT-2's
    // fused c_attn split by heads as written, scanned and rematerialised.
    let cases: [(&str, &str, &str); 13] = [
        ("gpt2", "gpt2", "BP"),
        ("gpt2-scan", "gpt2-scan", "BP"),
        ("gpt2-remat", "gpt2", "BP"),
        ("gpt2", "gpt2", "MP"),
        ("gpt2-scan", "gpt2-scan", "MP"),
        ("gpt2-remat", "gpt2", "BP_MP_Z3"),
        ("llama", "llama", "BP_MP_Z3"),
        ("llama-scan", "llama-scan", "BP"),
        ("llama-scan", "llama-scan", "BP_MP_Z3"),
        ("llama-remat", "llama", "MP"),
        ("gpt_neox", "gpt_neox", "MP"),
        ("gpt_neox-scan", "gpt_neox-scan", "BP_MP_Z3"),
        ("gpt_neox-remat", "gpt_neox", "BP"),
    ];
    for (model, folder, name) in cases {
        let (passed, said) = verify_on_xla(&program(model), &published_schedule(folder, name));
        assert!(passed, "{model} {name}: {said}");
    }
}

/// Hybrid sharding on the published FlaxLlama (`HSDP.toml`: the batch over `batch` and `fsdp`,
/// the layers' kernels and moments sharded over `batch` only): each kernel's gradient, summed
/// over both batch axes and consumed sharded over `batch`, is reduce_scattered over `batch` and
/// its chunk all-reduced over `fsdp` (14 gradients, each kind combined into one), not
/// all-reduced whole over both; and the step computes what the original does on 8 XLA devices.
#[test]
fn hybrid_sharding_scatters_over_one_batch_axis_and_sums_the_chunk_over_the_other() {
    let dir = root().join("target/tmp/published");
    std::fs::create_dir_all(&dir).expect("writable");
    let out = dir.join("llama-HSDP.mlir");
    let schedule = published_schedule("llama", "HSDP");
    let done = partir(&[
        "partition",
        &program("llama"),
        "-s",
        &schedule,
        "-o",
        out.to_str().expect("utf-8"),
    ]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    let hlo = std::fs::read_to_string(&out).expect("the partitioned program");
    let lines = |collective: &str, axes: &str| -> Vec<String> {
        hlo.lines()
            .filter(|line| line.contains(collective) && line.contains(axes))
            .map(str::to_string)
            .collect()
    };
    let scatters = lines("partir_hlo.reduce_scatter", "axes [\"batch\"]");
    let [scatter] = &scatters[..] else {
        panic!("one combined reduce_scatter over batch: {scatters:?}\n{hlo}");
    };
    assert_eq!(scatter.matches("tensor<").count(), 2 * 14, "{scatter}");
    let sums = lines("partir_hlo.all_reduce", "axes [\"fsdp\"]");
    let [sum] = &sums[..] else {
        panic!("one combined all_reduce over fsdp: {sums:?}\n{hlo}");
    };
    assert_eq!(sum.matches("tensor<").count(), 14, "{sum}");
    let (passed, said) = verify_on_xla(&program("llama"), &schedule);
    assert!(passed, "{said}");
}

/// `partir auto` on `program` over `batch=4,model=2` on slow-compute (where splitting pays: on
/// the TPU presets these widths are fastest whole), 10 plans a phase: its log, and its plan's
/// lines but comments.
fn searched(program: &Path) -> (String, Vec<String>) {
    let plan = program.with_extension("toml");
    let done = partir(&[
        "auto",
        program.to_str().expect("utf-8"),
        "--mesh",
        "batch=4,model=2",
        "--device",
        root()
            .join("tests/devices/slow-compute.toml")
            .to_str()
            .expect("utf-8"),
        "--evaluations",
        "10",
        "-o",
        plan.to_str().expect("utf-8"),
    ]);
    let log = text(&done.stderr);
    assert!(done.status.success(), "{log}");
    let tactics = std::fs::read_to_string(&plan)
        .expect("the plan")
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(str::to_string)
        .collect();
    (log, tactics)
}

/// GPT-2 as transformers ships it with 6 layers written out, once with JAX's locations and
/// once without (re-printed by mlir-opt, as a tool that keeps none writes it): `partir auto`
/// prices plans on cuts of its layers either way, without locations finding them from the
/// dataflow (passes/auto/seams.rs: tied embeddings, private functions inlined), and finds the
/// same plan.
#[test]
fn gpt2_without_locations_is_folded_from_its_dataflow_to_the_located_plan() {
    let six = ["--layers", "6"];
    let (located_log, located_plan) =
        searched(&generated_program_with("gpt2", "gpt2-6-located", &six));
    let (plain_log, plain_plan) = searched(&generated_program_with(
        "gpt2",
        "gpt2-6-plain",
        &[six[0], six[1], "--plain"],
    ));
    assert!(
        located_log.contains("6 layers folded into cuts of 1 and 2 ("),
        "{located_log}"
    );
    assert!(
        plain_log
            .contains("6 layers folded into cuts of 2 and 3, layers found from the dataflow ("),
        "{plain_log}"
    );
    assert_eq!(plain_plan, located_plan);
    // A plan that splits the layers, not every value kept whole.
    assert!(
        located_plan
            .iter()
            .any(|line| line.starts_with("tile = {") && line.contains("/h/*/")),
        "{located_plan:?}"
    );
}

/// penzai's GPT-NeoX with 6 layers: it numbers its layers `block_<i>`
/// (`params/transformer/block_3/mlp/in/Linear.weights`), and its name stack places an op by
/// its position in the model (`transpose(jvp(3))`), not by a layer's name. `partir auto`
/// reads the joined number (ir/numbered.rs), so it prices plans on cuts of the layers it
/// finds from the dataflow (the residual stream's cotangent reaches the layer before past
/// this layer's readers, which take it transposed) and decides each parameter for every
/// layer at once (`block_*`). Before, nothing here was a layer: every plan was priced whole,
/// 1.8x slower, to the same plan (the same search priced whole, measured by hand).
#[test]
fn gpt_neox_numbering_its_layers_block_i_is_folded_and_decided_for_all_layers() {
    let program = generated_program_with("gpt_neox", "gpt_neox-6", &["--layers", "6"]);
    let (log, plan) = searched(&program);
    let phases: Vec<&str> = log
        .lines()
        .filter(|line| line.starts_with("partir: axis '"))
        .collect();
    // Two axes in two orders at least.
    assert!(phases.len() >= 4, "{log}");
    for phase in phases {
        assert!(
            phase
                .contains("6 layers folded into cuts of 2 and 3, layers found from the dataflow ("),
            "{phase}"
        );
    }
    assert!(
        plan.iter()
            .any(|line| line.contains("\"params/transformer/block_*/")),
        "no parameter decided over every layer: {plan:?}"
    );
}

/// The committed programs are what the generator makes (a sample of them: all nine take a
/// minute; each model builder and each variant path at least once: `gpt2-scan` caught a
/// GPT-2 variant builder that no longer ran).
#[test]
fn published_programs_regenerate_byte_for_byte() {
    let python = root().join("tools/.venv/bin/python");
    let done = Command::new(python)
        .args([
            "tools/published_models.py",
            "--check",
            "gpt2",
            "gpt2-scan",
            "llama-scan",
            "gpt_neox-remat",
        ])
        .current_dir(root())
        .output()
        .expect("the JAX venv runs (tools/setup-venv)");
    assert!(
        done.status.success(),
        "{}\n{}",
        text(&done.stdout),
        text(&done.stderr)
    );
}

/// As MaxText trains by default: FlaxLlama's layers under `nn.remat` inside `nn.scan`
/// (`llama-scan-remat`, generated here: not a committed fixture). Megatron partitions inside
/// the forward and the backward scan, whose body recomputes the layer: by hand, per layer 2
/// all_reduces forward, 1 in the recomputation (the attention block's output, which the MLP's
/// recomputation reads; the MLP's own output is not needed again) and 2 backward, so 2 layers
/// x 5 = 10, and nothing gathered. MP and BP+MP+ZeRO-3 (per-layer gathers) run on 8 XLA
/// devices as the original does.
#[test]
fn scanned_and_rematerialised_llama_partitions_inside_its_loops() {
    let generated = generated_program("llama-scan-remat", "published");
    let model = generated.display().to_string();
    let out = generated.with_file_name("llama-scan-remat-MP.mlir");
    let (done, stderr) = partition_for_xla(&model, &published_schedule("llama-scan", "MP"), &out);
    assert!(done.status.success(), "{stderr}");
    assert!(!stderr.contains("stopped at"), "stops: {stderr}");
    let hlo = std::fs::read_to_string(&out).expect("the partitioned program");
    assert!(!hlo.contains("stablehlo.all_gather"), "{hlo}");
    // Each all_reduce sits in a loop body: 2 in the forward scan's, 3 in the backward's.
    assert_eq!(hlo.matches("stablehlo.all_reduce").count(), 5, "{hlo}");
    assert!(
        stderr.contains("+10 all_reduce sum"),
        "per step, 2 layers x 5: {stderr}"
    );
    for schedule in ["MP", "BP_MP_Z3"] {
        let (passed, said) = verify_on_xla(&model, &published_schedule("llama-scan", schedule));
        assert!(passed, "{schedule}: {said}");
    }
}

/// GPT-2's fused `c_attn` (q, k and v of 4 heads of 16 on one dim of 192), seen as [3, 4, 16]
/// (`[expand]`) and split by heads: Megatron's textbook collectives (per layer, one all_reduce
/// after the attention and one after the MLP, forward and backward: 8 for 2 layers), no
/// all_gather or all_to_all, and each device holds q, k and v of its own heads; the caller
/// still passes and gets `[192, 64]` arrays (`partir.view_of`), and the step runs right on XLA
/// (`published_models_run_partitioned_on_xla`: gpt2 MP, gpt2-scan MP, gpt2-remat BP_MP_Z3). A partitioned program whose slice reads
/// k's rows for q's fails verification: the check sees a wrong expansion.
#[test]
fn fused_projection_splits_by_heads() {
    let dir = root().join("target/tmp/published");
    std::fs::create_dir_all(&dir).expect("writable");
    let out = dir.join("gpt2-MP-fused.mlir");
    let (done, stderr) =
        partition_for_xla(&program("gpt2"), &published_schedule("gpt2", "MP"), &out);
    assert!(done.status.success(), "{stderr}");
    assert!(!stderr.contains("stopped at"), "{stderr}");
    let hlo = std::fs::read_to_string(&out).expect("the partitioned program");
    assert_eq!(
        hlo.matches("\"stablehlo.all_reduce\"").count(),
        8,
        "{stderr}"
    );
    assert!(!hlo.contains("stablehlo.all_gather") && !hlo.contains("stablehlo.all_to_all"));
    let kernel = "tensor<3x2x16x64xf32> {partir.name = \"params/transformer/h/0/attn/c_attn/kernel\", partir.sharding = \"[{}, {\\22model\\22}, {}, {}]\", partir.view_of = array<i64: 192, 64>}";
    assert!(
        hlo.contains(kernel),
        "c_attn's kernel is [3, 4, 16, 64] split on heads, the caller's [192, 64]"
    );

    let inputs = root().join("test/Passes/partir-expand-dim/Inputs");
    let (fused, schedule) = (inputs.join("fused.mlir"), inputs.join("fused.toml"));
    let (fused, schedule) = (
        fused.to_str().expect("utf-8"),
        schedule.to_str().expect("utf-8"),
    );
    let core = dir.join("fused-core.mlir");
    let done = partir(&[
        "partition",
        fused,
        "-s",
        schedule,
        "--stage",
        "core",
        "-o",
        core.to_str().expect("utf-8"),
    ]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    let check = |program: &Path| {
        let done = partir(&[
            "verify",
            fused,
            "--partitioned",
            program.to_str().expect("utf-8"),
            "--xla",
        ]);
        let said = text(&done.stdout) + &text(&done.stderr);
        (done.status.success() && said.contains("partir: PASS"), said)
    };
    let (passed, said) = check(&core);
    assert!(passed, "{said}");
    let good = std::fs::read_to_string(&core).expect("the Core program");
    let q = "limit_indices = array<i64: 4, 2, 1, 2>, start_indices = array<i64: 0, 1, 0, 0>";
    assert!(
        good.contains(q),
        "q's slice of the expanded program: {good}"
    );
    let planted = dir.join("fused-core-planted.mlir");
    let k = "limit_indices = array<i64: 4, 3, 1, 2>, start_indices = array<i64: 0, 2, 0, 0>";
    std::fs::write(&planted, good.replacen(q, k, 1)).expect("writable");
    let (passed, said) = check(&planted);
    assert!(!passed, "a slice moved to k's rows must fail: {said}");
}
