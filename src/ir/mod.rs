//! Typed Rust views of partir IR: the mesh, named values and selectors, Core op builders.

pub mod attrs;
pub mod builder;
pub mod core;
pub mod func;
pub mod func_attrs;
pub mod hlo;
pub mod location;
pub mod mesh;
pub mod names;
pub mod numbered;
pub mod sharding;
pub mod types;

pub use mesh::{Mesh, MeshAxis};
pub use names::{NamedValue, Selector};
pub use sharding::Sharding;

/// The last op of `block`: its terminator, also when its dialect is not registered (melior's
/// `terminator()` asks for the `IsTerminator` trait, which an unregistered `stablehlo.return`
/// does not declare).
pub fn last_op<'c, 'a>(
    block: melior::ir::BlockRef<'c, 'a>,
) -> Option<melior::ir::OperationRef<'c, 'a>> {
    use melior::ir::{block::BlockLike, operation::OperationLike};
    let mut last = block.first_operation()?;
    while let Some(next) = last.next_in_block() {
        last = next;
    }
    Some(last)
}

/// The ops of `block`, in order: a snapshot, so the caller may move or erase them.
pub fn block_ops<'c, 'a>(
    block: melior::ir::BlockRef<'c, 'a>,
) -> Vec<melior::ir::OperationRef<'c, 'a>> {
    use melior::ir::{block::BlockLike, operation::OperationLike};
    let mut ops = Vec::new();
    let mut next = block.first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        ops.push(op);
    }
    ops
}

/// The blocks of `region`, in order.
pub fn region_blocks<'c, 'a>(
    region: melior::ir::RegionRef<'c, 'a>,
) -> Vec<melior::ir::BlockRef<'c, 'a>> {
    use melior::ir::{block::BlockLike, RegionLike};
    let mut blocks = Vec::new();
    let mut next = region.first_block();
    while let Some(block) = next {
        next = block.next_in_region();
        blocks.push(block);
    }
    blocks
}
