//! Every pass's options, typed, as one declaration both languages compile against: MLIR parses
//! `partir-tile{value=x dim=0 axis=batch}` into the option fields tblgen generates from
//! `include/partir/Passes.td`, and the pass shell in `src/cxx/Passes.cpp` copies them field by
//! field (by name: `TileOptions{.value = value, .dim = dim, .axis = axis}`) into these structs,
//! which cxx lays out identically on both sides. Renaming or retyping an option on one side
//! only is a compile error.

#[cxx::bridge(namespace = "partir::options")]
mod bridge {
    /// `partir-mesh{axes=batch=4,model=2}`.
    #[derive(Debug, Default, Clone)]
    struct MeshOptions {
        /// `NAME=SIZE` per axis, major to minor.
        axes: Vec<String>,
    }

    /// `partir-tile{value=SELECTOR dim=D axis=A}`.
    #[derive(Debug, Default, Clone)]
    struct TileOptions {
        value: String,
        dim: i64,
        axis: String,
    }

    /// `partir-expand-dim{value=SELECTOR dim=D sizes=3,2,32}`.
    #[derive(Debug, Default, Clone)]
    struct ExpandDimOptions {
        value: String,
        dim: i64,
        sizes: Vec<i64>,
    }

    /// `partir-replicate{value=SELECTOR axis=A}`.
    #[derive(Debug, Default, Clone)]
    struct ReplicateOptions {
        value: String,
        axis: String,
    }

    /// `partir-propagate{axis=A reach=all|elementwise}`.
    #[derive(Debug, Default, Clone)]
    struct PropagateOptions {
        /// Empty: every axis of the mesh.
        axis: String,
        reach: String,
    }

    /// `partir-schedule{file=S.toml device=D report=R.json}`.
    #[derive(Debug, Default, Clone)]
    struct ScheduleOptions {
        file: String,
        /// Empty: do not simulate after each tactic.
        device: String,
        report: String,
    }

    /// `partir-simulate{device=D report=R.json}`.
    #[derive(Debug, Default, Clone)]
    struct SimulateOptions {
        /// Empty: the default device (`crate::sim::DEFAULT_DEVICE`).
        device: String,
        report: String,
    }

    /// `partir-combine-collectives{threshold=30MiB count=256}`.
    #[derive(Debug, Default, Clone)]
    struct CombineOptions {
        /// A size with its unit (`30MiB`).
        threshold: String,
        count: i64,
    }

    /// `partir-auto{axis=A memory=SIZE device=D time-limit=S seed=N evaluations=E}`.
    #[derive(Debug, Default, Clone)]
    struct AutoOptions {
        axis: String,
        /// Empty: the device's capacity.
        memory: String,
        /// Empty: the default device.
        device: String,
        time_limit: f64,
        seed: i64,
        evaluations: i64,
    }
}

pub use bridge::{
    AutoOptions, CombineOptions, ExpandDimOptions, MeshOptions, PropagateOptions, ReplicateOptions,
    ScheduleOptions, SimulateOptions, TileOptions,
};
