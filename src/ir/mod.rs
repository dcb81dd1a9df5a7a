//! Typed Rust views of partir IR: the mesh, named values and selectors, Core op builders.

pub mod attrs;
pub mod builder;
pub mod core;
pub mod func_attrs;
pub mod hlo;
pub mod location;
pub mod mesh;
pub mod names;
pub mod sharding;
pub mod types;

pub use mesh::{Mesh, MeshAxis};
pub use names::{NamedValue, Selector};
pub use sharding::Sharding;
