//! What JAX hands over, as it hands it over: `jax.jit(f).lower(...)` and `jax.export`'s
//! `Exported`, turned into the text partir reads by `partir_jax.stablehlo_text` (MLIR's generic
//! form; arguments named by JAX's pytree paths), partitioned by a schedule that names those
//! paths and run on XLA. StableHLO in JAX's own syntax gets an error that says what to do.

mod common;

use common::{partir, root, text};
use std::process::Command;

const STEP: &str = r#"
import sys
sys.path.insert(0, "tools")
import jax, jax.numpy as jnp, partir_jax
def step(params, batch):
    def loss(p):
        h = jnp.where(batch["x"] > 0, batch["x"], 0.0) @ p["w"]
        return jnp.mean(jax.nn.relu(h) ** 2)
    l, g = jax.value_and_grad(loss)(params)
    return jax.tree.map(lambda a, b: a - 0.1 * b, params, g), l
params = {"w": jnp.zeros((8, 4), jnp.float32)}
batch = {"x": jnp.ones((16, 8), jnp.float32)}
out = sys.argv[1]
open(out + "/lowered.mlir", "w").write(partir_jax.stablehlo_text(jax.jit(step).lower(params, batch)))
exported = jax.export.export(jax.jit(step))(params, batch)
open(out + "/exported.mlir", "w").write(partir_jax.stablehlo_text(exported))
open(out + "/pretty.mlir", "w").write(jax.jit(step).lower(params, batch).as_text())
"#;

#[test]
fn lowered_and_exported_steps_partition_by_their_pytree_paths() {
    let dir = root().join("target/tmp/jax_text");
    std::fs::create_dir_all(&dir).expect("writable");
    let done = Command::new(root().join("tools/.venv/bin/python"))
        .args(["-c", STEP, dir.to_str().expect("utf-8")])
        .current_dir(root())
        .output()
        .expect("the JAX venv runs (tools/setup-venv)");
    assert!(done.status.success(), "{}", text(&done.stderr));
    let schedule = dir.join("bp.toml");
    std::fs::write(
        &schedule,
        "mesh = { batch = 4 }\n[[tactic]]\nname = \"BP\"\naxis = \"batch\"\ntile = { \"batch/x\" = 0 }\n",
    )
    .expect("writable");
    for form in ["lowered", "exported"] {
        let program = dir.join(format!("{form}.mlir"));
        let program = program.to_str().expect("utf-8");
        let names = partir(&["args", program]);
        let listed = text(&names.stdout);
        assert!(
            listed.contains("params/w") && listed.contains("batch/x"),
            "{form}: {listed}"
        );
        let run = partir(&[
            "verify",
            program,
            "-s",
            schedule.to_str().expect("utf-8"),
            "--xla",
        ]);
        let said = text(&run.stdout) + &text(&run.stderr);
        assert!(
            run.status.success() && said.contains("partir: PASS"),
            "{form}: {said}"
        );
        // The calls JAX emitted (`@_where`, `@relu`) are inlined, not left as walls.
        assert!(said.contains("calls inlined"), "{form}: {said}");
    }
    // JAX's own syntax: an error that says how to write the generic form.
    let pretty = dir.join("pretty.mlir");
    let run = partir(&["args", pretty.to_str().expect("utf-8")]);
    let said = text(&run.stderr);
    assert!(!run.status.success(), "{said}");
    assert!(
        said.contains("generic form") && said.contains("partir_jax.stablehlo_text"),
        "{said}"
    );
}
