//! Presentation of the simulator's reports: text for terminals and remarks ([`text`]), a
//! self-contained HTML page for browsers ([`html`]). The simulator (`crate::sim`) computes the
//! figures and knows nothing of how they are shown.

pub mod bar_chart;
pub mod html;
pub mod mesh_picture;
pub mod pipeline_picture;
pub mod search;
pub mod sharding_groups;
pub mod shardings;
pub mod text;

pub use text::{bytes, count, flops, seconds};
