//! The module's `partir.mesh`: read it, describe it, build it.

use melior::{
    ir::{
        attribute::{ArrayAttribute, DenseI64ArrayAttribute, StringAttribute},
        block::BlockLike,
        operation::{OperationBuilder, OperationLike},
        Attribute, Identifier, Location, Operation, OperationRef, RegionLike,
    },
    Context,
};
use std::fmt;

pub const MESH_OP: &str = "partir.mesh";

/// One named axis of the device mesh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeshAxis {
    pub name: String,
    pub size: i64,
}

/// The mesh declared by a module: `partir.mesh @mesh ["batch"=4, "model"=2]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mesh {
    pub symbol: String,
    pub axes: Vec<MeshAxis>,
}

impl Mesh {
    /// The first `partir.mesh` in the module body (the verifier allows only one).
    pub fn find<'c>(module: OperationRef<'c, '_>) -> Option<(Mesh, Location<'c>)> {
        let body = module.region(0).ok()?.first_block()?;
        let mut next = body.first_operation();
        while let Some(op) = next {
            if crate::ffi::op_is(op, MESH_OP) {
                return Some((Self::from_op(op)?, op.location()));
            }
            next = op.next_in_block();
        }
        None
    }

    fn from_op(op: OperationRef) -> Option<Mesh> {
        let symbol = crate::ffi::string_attribute(op.attribute("sym_name").ok()?)?;
        let names = ArrayAttribute::try_from(op.attribute("axis_names").ok()?).ok()?;
        let sizes = DenseI64ArrayAttribute::try_from(op.attribute("axis_sizes").ok()?).ok()?;
        let axes = (0..names.len())
            .map(|index| {
                Some(MeshAxis {
                    name: crate::ffi::string_attribute(names.element(index).ok()?)?,
                    size: sizes.element(index).ok()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Mesh { symbol, axes })
    }

    /// The coordinates of `flat` over `sizes`, row-major (the first size major): a device's
    /// coordinates on the mesh's axes, a tile's index in a grid. `unravel(5, &[4, 2])` is
    /// `[2, 1]`.
    pub fn unravel(flat: i64, sizes: &[i64]) -> Vec<i64> {
        let mut rest = flat;
        let mut coords = vec![0; sizes.len()];
        for (at, &size) in sizes.iter().enumerate().rev() {
            coords[at] = rest % size;
            rest /= size;
        }
        coords
    }

    /// How many devices the mesh has: the product of its axis sizes.
    pub fn devices(&self) -> i64 {
        self.axes.iter().map(|axis| axis.size).product()
    }

    pub fn axis_size(&self, axis: &str) -> Option<i64> {
        self.axes
            .iter()
            .find(|candidate| candidate.name == axis)
            .map(|found| found.size)
    }

    /// Checks that an axis name can be written everywhere partir writes it (diagnostics,
    /// attributes, schedules, exported XLA attributes): non-empty, printable, no quote or
    /// backslash.
    pub fn check_axis_name(name: &str) -> Result<(), String> {
        if name.is_empty() {
            return Err(
                "a mesh axis has an empty name; name axes with printable text (batch, model, ...)"
                    .into(),
            );
        }
        if name
            .chars()
            .any(|c| c == '"' || c == '\\' || c.is_control())
        {
            return Err(format!(
                "mesh axis name {name:?} holds a quote, a backslash or a control character; name axes with printable text (batch, model, ...)"
            ));
        }
        Ok(())
    }

    /// Parses the `partir-mesh` option `batch=4,model=2` (major to minor).
    pub fn parse_axes(spec: &[&str]) -> Result<Vec<MeshAxis>, String> {
        let mut axes: Vec<MeshAxis> = Vec::new();
        for item in spec
            .iter()
            .map(|item| item.trim())
            .filter(|item| !item.is_empty())
        {
            let (name, size) = item.split_once('=').ok_or_else(|| {
                format!("mesh axis '{item}' must be written NAME=SIZE, e.g. batch=4")
            })?;
            let name = name.trim();
            if name.is_empty() {
                return Err(format!("mesh axis '{item}' has no name"));
            }
            Self::check_axis_name(name)?;
            let size: i64 = size.trim().parse().map_err(|_| {
                format!(
                    "mesh axis '{name}' has size '{}', which is not an integer",
                    size.trim()
                )
            })?;
            if size <= 0 {
                return Err(format!(
                    "mesh axis '{name}' must have a positive size, got {size}"
                ));
            }
            if axes.iter().any(|axis| axis.name == name) {
                return Err(format!("mesh axis '{name}' is declared twice"));
            }
            axes.push(MeshAxis {
                name: name.to_string(),
                size,
            });
        }
        if axes.is_empty() {
            return Err("no mesh axes given; write e.g. partir-mesh{axes=batch=4,model=2}".into());
        }
        Ok(axes)
    }

    /// The `partir.mesh` operation for this mesh.
    pub fn build<'c>(&self, context: &'c Context, location: Location<'c>) -> Operation<'c> {
        let names: Vec<Attribute> = self
            .axes
            .iter()
            .map(|axis| StringAttribute::new(context, &axis.name).into())
            .collect();
        let sizes: Vec<i64> = self.axes.iter().map(|axis| axis.size).collect();
        OperationBuilder::new(MESH_OP, location)
            .add_attributes(&[
                (
                    Identifier::new(context, "sym_name"),
                    StringAttribute::new(context, &self.symbol).into(),
                ),
                (
                    Identifier::new(context, "axis_names"),
                    ArrayAttribute::new(context, &names).into(),
                ),
                (
                    Identifier::new(context, "axis_sizes"),
                    DenseI64ArrayAttribute::new(context, &sizes).into(),
                ),
            ])
            .build()
            .expect("partir.mesh is registered")
    }
}

impl fmt::Display for Mesh {
    /// `@mesh [batch=4, model=2]`, as diagnostics show it.
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|axis| format!("{}={}", axis.name, axis.size))
            .collect();
        write!(formatter, "@{} [{}]", self.symbol, axes.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_axes_major_to_minor() {
        let axes = Mesh::parse_axes(&["batch=4", " model = 2 "]).unwrap();
        assert_eq!(
            axes,
            vec![
                MeshAxis {
                    name: "batch".into(),
                    size: 4
                },
                MeshAxis {
                    name: "model".into(),
                    size: 2
                }
            ]
        );
    }

    #[test]
    fn rejects_malformed_axes() {
        assert!(Mesh::parse_axes(&["batch"])
            .unwrap_err()
            .contains("NAME=SIZE"));
        assert!(Mesh::parse_axes(&["batch=0"])
            .unwrap_err()
            .contains("positive"));
        assert!(Mesh::parse_axes(&["batch=x"])
            .unwrap_err()
            .contains("not an integer"));
        assert!(Mesh::parse_axes(&["a=2", "a=2"])
            .unwrap_err()
            .contains("twice"));
        assert!(Mesh::parse_axes(&[]).unwrap_err().contains("no mesh axes"));
    }

    #[test]
    fn displays_like_diagnostics() {
        let mesh = Mesh {
            symbol: "mesh".into(),
            axes: Mesh::parse_axes(&["batch=4", "model=2"]).unwrap(),
        };
        assert_eq!(mesh.to_string(), "@mesh [batch=4, model=2]");
    }
}
