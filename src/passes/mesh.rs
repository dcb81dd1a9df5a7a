//! `partir-mesh{axes=batch=4,model=2}`: declare the device mesh.

use super::{names::MESH as PASS, options::MeshOptions, program_location, PassError, PassResult};
use crate::ir::Mesh;
use melior::{
    ir::{block::BlockLike, operation::OperationLike, OperationRef, RegionLike},
    Context,
};

pub fn run<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    options: &MeshOptions,
) -> PassResult<'c> {
    let spec: Vec<&str> = options.axes.iter().map(String::as_str).collect();
    let axes = Mesh::parse_axes(&spec).map_err(|message| {
        PassError::new(program_location(module), format!("{PASS}: {message}"))
    })?;
    let wanted = Mesh {
        symbol: "mesh".into(),
        axes,
    };
    if let Some((existing, location)) = Mesh::find(module) {
        if existing.axes == wanted.axes {
            return Ok(()); // Declaring the same mesh again is a no-op.
        }
        return Err(PassError::new(
            location,
            format!(
                "{PASS}: the module already declares mesh {existing}; cannot declare {wanted} too"
            ),
        ));
    }
    let body = module
        .region(0)
        .ok()
        .and_then(|region| region.first_block())
        .expect("a module has a body");
    let mesh = wanted.build(context, program_location(module));
    match body.first_operation() {
        Some(first) => body.insert_operation_before(first, mesh),
        None => body.append_operation(mesh),
    };
    Ok(())
}
