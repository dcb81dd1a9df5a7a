//! How one value is split over the mesh, drawn as `jax.debug.visualize_array_sharding` draws it:
//! the value as a grid of blocks, each labelled with the devices holding it (devices holding a
//! replica listed together), blocks held by the same devices in the same color.
//!
//! Devices are numbered row-major over the mesh, first axis major (docs/design.md, "XLA"
//! under "Execution"): on `batch=4 model=2`, device `batch*2 + model`. A dim split over axes `[a, b]`
//! (major to minor) is cut into `size(a) * size(b)` blocks, and a device holds block
//! `coord(a) * size(b) + coord(b)`. Two dims are drawn: those split first, then the largest;
//! a 1-D value is one row, a scalar one block.

use super::html::escape;
use crate::sim::report::{AxisSize, ValueSharding};
use std::fmt::Write;

/// Light fills, one per set of devices, in order of first appearance (blocks read top-left
/// first); dark text reads on all of them.
const FILLS: [&str; 10] = [
    "#c6dbef", "#fdd0a2", "#c7e9c0", "#dadaeb", "#fcbba1", "#d9d9d9", "#fde0ef", "#e6f5d0",
    "#ffffb3", "#bcbddc",
];

/// The drawn grid: which dims are its rows and columns, and who holds each block.
#[derive(Debug, PartialEq)]
pub struct Blocks {
    /// The dim drawn down (`None`: one row) and the dim drawn across (`None`: one column).
    pub row_dim: Option<usize>,
    pub col_dim: Option<usize>,
    pub rows: usize,
    pub cols: usize,
    /// Per block, row by row: the devices holding it, ascending.
    pub devices: Vec<Vec<usize>>,
}

impl Blocks {
    pub fn of(value: &ValueSharding, mesh: &[AxisSize]) -> Self {
        let shape = value.global_shape(mesh);
        let size = |axis: &String| {
            mesh.iter()
                .find(|mesh_axis| &mesh_axis.name == axis)
                .map_or(1, |mesh_axis| mesh_axis.size.max(1) as usize)
        };
        let pieces = |dim: usize| -> usize {
            value
                .axes
                .get(dim)
                .map_or(1, |axes| axes.iter().map(size).product())
        };
        // Split dims first, then larger ones; drawn in the value's order.
        let mut dims: Vec<usize> = (0..shape.len()).collect();
        dims.sort_by_key(|&dim| (pieces(dim) == 1, std::cmp::Reverse(shape[dim]), dim));
        dims.truncate(2);
        dims.sort_unstable();
        let (row_dim, col_dim) = match dims[..] {
            [] => (None, None),
            [only] => (None, Some(only)),
            [row, col, ..] => (Some(row), Some(col)),
        };
        let rows = row_dim.map_or(1, pieces);
        let cols = col_dim.map_or(1, pieces);
        let count: usize = mesh.iter().map(|axis| axis.size.max(1) as usize).product();
        // The index of `device`'s block along `dim`: its coordinates on the dim's axes,
        // major to minor.
        let block = |device: usize, dim: Option<usize>| -> usize {
            let Some(axes) = dim.and_then(|dim| value.axes.get(dim)) else {
                return 0;
            };
            axes.iter().fold(0, |index, axis| {
                let Some(position) = mesh.iter().position(|m| &m.name == axis) else {
                    return index;
                };
                let stride: usize = mesh[position + 1..]
                    .iter()
                    .map(|m| m.size.max(1) as usize)
                    .product();
                index * size(axis) + (device / stride) % size(axis)
            })
        };
        let mut devices = vec![Vec::new(); rows * cols];
        for device in 0..count {
            devices[block(device, row_dim) * cols + block(device, col_dim)].push(device);
        }
        Self {
            row_dim,
            col_dim,
            rows,
            cols,
            devices,
        }
    }
}

/// `0-3` for a run of three or more, else `0,2`.
pub fn device_list(devices: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut index = 0;
    while index < devices.len() {
        let mut end = index;
        while end + 1 < devices.len() && devices[end + 1] == devices[end] + 1 {
            end += 1;
        }
        if end >= index + 2 {
            parts.push(format!("{}-{}", devices[index], devices[end]));
        } else {
            parts.extend(devices[index..=end].iter().map(usize::to_string));
        }
        index = end + 1;
    }
    parts.join(",")
}

/// `device = batch*2 + model`: how a device's number follows from its mesh coordinates.
pub fn numbering(mesh: &[AxisSize]) -> String {
    let terms: Vec<String> = mesh
        .iter()
        .enumerate()
        .map(|(index, axis)| {
            let stride: i64 = mesh[index + 1..].iter().map(|m| m.size).product();
            if stride == 1 {
                axis.name.clone()
            } else {
                format!("{}*{stride}", axis.name)
            }
        })
        .collect();
    format!("device = {}", terms.join(" + "))
}

/// One dim as the caption names it: `dim 0 (64) over batch`, `dim 1 (10), not split`.
fn describe(value: &ValueSharding, shape: &[i64], dim: usize) -> String {
    let axes = value.axes.get(dim).cloned().unwrap_or_default();
    if axes.is_empty() {
        format!("dim {dim} ({}), not split", shape[dim])
    } else {
        format!("dim {dim} ({}) over {}", shape[dim], axes.join("*"))
    }
}

/// What the grid shows: `64x256: rows are dim 0 (64) over batch, columns dim 1 (256) over
/// model; each device holds 16x128.`, saying which dims are not drawn.
fn caption(value: &ValueSharding, shape: &[i64], blocks: &Blocks) -> String {
    let mut text = match (blocks.row_dim, blocks.col_dim) {
        (Some(row), Some(col)) => format!(
            "{}: rows are {}, columns {}",
            crate::text::shape(shape),
            describe(value, shape, row),
            describe(value, shape, col)
        ),
        (_, Some(only)) => format!(
            "{}: {}, drawn as one row",
            crate::text::shape(shape),
            describe(value, shape, only)
        ),
        _ => return "A scalar: every device holds it.".into(),
    };
    let hidden: Vec<String> = (0..shape.len())
        .filter(|&dim| Some(dim) != blocks.row_dim && Some(dim) != blocks.col_dim)
        .map(
            |dim| match value.axes.get(dim).filter(|axes| !axes.is_empty()) {
                Some(axes) => format!("dim {dim} ({}) over {}", shape[dim], axes.join("*")),
                None => format!("dim {dim} ({})", shape[dim]),
            },
        )
        .collect();
    if !hidden.is_empty() {
        text += &format!(" ({} not drawn)", hidden.join("; "));
    }
    text + &format!(
        "; each device holds {}.",
        crate::text::shape(&value.local_shape)
    )
}

/// The `<figure>` for `value` (`hidden` unless `shown`), with the id `mesh-{id}`.
pub fn figure(value: &ValueSharding, mesh: &[AxisSize], id: usize, shown: bool) -> String {
    let blocks = Blocks::of(value, mesh);
    let shape = value.global_shape(mesh);
    let along = |dim: Option<usize>| dim.map_or(1, |dim| shape[dim].max(1)) as f64;
    // The grid keeps the value's proportions within reason: a 1-D value is a strip.
    let ratio = match (blocks.row_dim, blocks.col_dim) {
        (Some(_), Some(_)) => (along(blocks.col_dim) / along(blocks.row_dim)).clamp(0.6, 3.0),
        (None, Some(_)) => (blocks.cols as f64 * 1.5).clamp(4.0, 8.0),
        _ => 3.0,
    };
    let mut fills: Vec<&Vec<usize>> = Vec::new();
    let mut cells = String::new();
    for devices in &blocks.devices {
        let fill = match fills.iter().position(|seen| *seen == devices) {
            Some(index) => index,
            None => {
                fills.push(devices);
                fills.len() - 1
            }
        };
        let listed = device_list(devices);
        let _ = write!(
            cells,
            "<div style=\"background:{}\" title=\"device{} {listed}\">{listed}</div>",
            FILLS[fill % FILLS.len()],
            if devices.len() == 1 { "" } else { "s" },
        );
    }
    format!(
        "<figure class=\"mesh-pic\" id=\"mesh-{id}\"{}>\
         <div class=\"mesh-grid\" role=\"img\" aria-label=\"{} split into {} blocks\" \
         style=\"grid-template-columns:repeat({},minmax(0,1fr));grid-template-rows:repeat({},minmax(2.2em,1fr));\
         aspect-ratio:{ratio:.2};max-width:{:.0}px\">{cells}</div>\
         <figcaption>{}</figcaption></figure>\n",
        if shown { "" } else { " hidden" },
        escape(&value.name),
        blocks.rows * blocks.cols,
        blocks.cols,
        blocks.rows,
        // Wide values fill the width; tall ones are 420 px tall.
        if ratio >= 1.0 {
            560.0
        } else {
            (420.0 * ratio).max(240.0)
        },
        escape(&caption(value, &shape, &blocks)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh() -> Vec<AxisSize> {
        AxisSize::mesh(&[("batch", 4), ("model", 2)])
    }

    fn value(axes: &[&[&str]], local: &[i64]) -> ValueSharding {
        ValueSharding {
            name: "params/w".into(),
            is_result: false,
            axes: axes
                .iter()
                .map(|dim| dim.iter().map(|axis| axis.to_string()).collect())
                .collect(),
            local_shape: local.to_vec(),
        }
    }

    #[test]
    fn blocks_are_held_by_the_devices_at_their_coordinates() {
        // [batch, model] on batch=4 model=2: device b*2+m holds block (b, m), alone.
        let blocks = Blocks::of(&value(&[&["batch"], &["model"]], &[16, 32]), &mesh());
        assert_eq!((blocks.rows, blocks.cols), (4, 2));
        let expected: Vec<Vec<usize>> = (0..8).map(|device| vec![device]).collect();
        assert_eq!(blocks.devices, expected);
        // [-, model]: two columns, each replicated over batch.
        let blocks = Blocks::of(&value(&[&[], &["model"]], &[64, 32]), &mesh());
        assert_eq!((blocks.rows, blocks.cols), (1, 2));
        assert_eq!(blocks.devices, [vec![0, 2, 4, 6], vec![1, 3, 5, 7]]);
        // [model*batch]: model major, so block m*4 + b.
        let blocks = Blocks::of(&value(&[&["model", "batch"]], &[2]), &mesh());
        assert_eq!((blocks.row_dim, blocks.col_dim), (None, Some(0)));
        let order: Vec<usize> = blocks.devices.iter().map(|held| held[0]).collect();
        assert_eq!(order, [0, 2, 4, 6, 1, 3, 5, 7]);
        // A replicated scalar: one block on every device.
        let blocks = Blocks::of(&value(&[], &[]), &mesh());
        assert_eq!(blocks.devices, [(0..8).collect::<Vec<_>>()]);
    }

    #[test]
    fn split_dims_are_drawn_before_larger_ones() {
        // dim 2 is split, dim 0 the largest of the rest.
        let blocks = Blocks::of(&value(&[&[], &[], &["model"]], &[64, 8, 16]), &mesh());
        assert_eq!((blocks.row_dim, blocks.col_dim), (Some(0), Some(2)));
        assert_eq!((blocks.rows, blocks.cols), (1, 2));
    }

    #[test]
    fn device_lists_and_numbering_read_short() {
        assert_eq!(device_list(&[0, 1, 2, 3, 6, 7]), "0-3,6,7");
        assert_eq!(device_list(&[1, 3, 5]), "1,3,5");
        assert_eq!(numbering(&mesh()), "device = batch*2 + model");
        let figure = figure(
            &value(&[&["batch"], &["model"]], &[16, 32]),
            &mesh(),
            3,
            false,
        );
        assert!(figure.starts_with("<figure class=\"mesh-pic\" id=\"mesh-3\" hidden>"));
        assert_eq!(figure.matches("<div style=").count(), 8);
        assert!(figure.contains(
            "64x64: rows are dim 0 (64) over batch, columns dim 1 (64) over model; each device \
             holds 16x32."
        ));
        let blocks = Blocks::of(&value(&[&[], &[], &["model"]], &[64, 8, 16]), &mesh());
        let three = value(&[&[], &[], &["model"]], &[64, 8, 16]);
        assert_eq!(
            caption(&three, &three.global_shape(&mesh()), &blocks),
            "64x8x32: rows are dim 0 (64), not split, columns dim 2 (32) over model (dim 1 (8) \
             not drawn); each device holds 64x8x16."
        );
        let scalar = value(&[], &[]);
        assert_eq!(
            caption(&scalar, &[], &Blocks::of(&scalar, &mesh())),
            "A scalar: every device holds it."
        );
    }
}
