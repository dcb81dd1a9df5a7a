//! How a value is distributed over the mesh: per tensor dim, the axes splitting it, major to
//! minor. `#partir_hlo.sharding<[{"batch"}, {}]>` is `Sharding(vec![vec!["batch"], vec![]])`.

use super::{func_attrs, Mesh};
use melior::{
    ir::{
        attribute::{ArrayAttribute, StringAttribute},
        operation::OperationLike,
        Attribute, OperationRef,
    },
    Context,
};
use std::fmt;

/// The argument / result attribute holding a value's sharding in PartIR:HLO.
pub const SHARDING_ATTR: &str = "partir_hlo.sharding";

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sharding(pub Vec<Vec<String>>);

impl Sharding {
    pub fn replicated(rank: usize) -> Self {
        Sharding(vec![Vec::new(); rank])
    }

    pub fn rank(&self) -> usize {
        self.0.len()
    }

    pub fn is_replicated(&self) -> bool {
        self.0.iter().all(Vec::is_empty)
    }

    /// Splits dim `dim` further along `axis` (as the new minor-most axis of that dim).
    pub fn with_axis(mut self, dim: usize, axis: &str) -> Self {
        self.0[dim].push(axis.to_string());
        self
    }

    /// The same sharding with `axis` removed from every dim.
    pub fn without_axis(mut self, axis: &str) -> Self {
        for axes in &mut self.0 {
            axes.retain(|candidate| candidate != axis);
        }
        self
    }

    /// The dim `axis` splits, if any.
    pub fn dim_of(&self, axis: &str) -> Option<usize> {
        self.0
            .iter()
            .position(|axes| axes.iter().any(|candidate| candidate == axis))
    }

    /// The local (per-device) shape of a value of global `shape` with this sharding.
    pub fn local_shape(&self, shape: &[i64], axis_size: impl Fn(&str) -> i64) -> Vec<i64> {
        shape
            .iter()
            .zip(&self.0)
            .map(|(&size, axes)| axes.iter().fold(size, |size, axis| size / axis_size(axis)))
            .collect()
    }

    /// The local shape on `mesh`, or what does not divide:
    /// `dim 0 of 30x8 does not divide over 4 devices`.
    pub fn local_shape_on(&self, shape: &[i64], mesh: &Mesh) -> Result<Vec<i64>, String> {
        let shown = || crate::text::shape(shape);
        if self.rank() > shape.len() {
            return Err(format!("a sharding of rank {} on {}", self.rank(), shown()));
        }
        let mut local = shape.to_vec();
        for (dim, axes) in self.0.iter().enumerate() {
            let mut devices = 1;
            for axis in axes {
                devices *= mesh
                    .axis_size(axis)
                    .ok_or_else(|| format!("axis '{axis}' is not in mesh {mesh}"))?;
            }
            if local[dim] % devices != 0 {
                return Err(format!(
                    "dim {dim} of {} does not divide over {devices} devices",
                    shown()
                ));
            }
            local[dim] /= devices;
        }
        Ok(local)
    }

    /// The global shape of a `local` shape under this sharding: each dim times the devices
    /// of its axes (the inverse of [`Self::local_shape_on`]; axes not in `mesh` count 1).
    pub fn global_shape_on(&self, local: &[i64], mesh: &Mesh) -> Vec<i64> {
        let mut global = local.to_vec();
        for (dim, axes) in self.0.iter().enumerate().take(global.len()) {
            global[dim] *= axes
                .iter()
                .filter_map(|axis| mesh.axis_size(axis))
                .product::<i64>();
        }
        global
    }

    /// The sharding a `#partir_hlo.sharding` attribute holds; None for any other attribute.
    pub fn from_attribute(attr: Attribute) -> Option<Self> {
        let dims = ArrayAttribute::try_from(crate::ffi::sharding_dims(attr)?).ok()?;
        let mut sharding = Vec::new();
        for dim in 0..dims.len() {
            let axes = ArrayAttribute::try_from(dims.element(dim).ok()?).ok()?;
            sharding.push(
                (0..axes.len())
                    .map(|axis| crate::ffi::string_attribute(axes.element(axis).ok()?))
                    .collect::<Option<Vec<_>>>()?,
            );
        }
        Some(Sharding(sharding))
    }

    /// The sharding of each entry of `func`'s `arg_attrs` or `res_attrs` (`list`); None where
    /// an entry has none (empty when the function has no such list).
    pub fn of_function(func: OperationRef, list: &str) -> Vec<Option<Self>> {
        let count = func
            .attribute(list)
            .ok()
            .and_then(|attr| ArrayAttribute::try_from(attr).ok())
            .map_or(0, |array| array.len());
        func_attrs::entries(func, list, count)
            .iter()
            .map(|fields| {
                fields
                    .iter()
                    .find(|field| func_attrs::is_named(field, SHARDING_ATTR))
                    .and_then(|(_, attr)| Self::from_attribute(*attr))
            })
            .collect()
    }

    /// The `#partir_hlo.sharding` attribute.
    pub fn to_attribute<'c>(&self, context: &'c Context) -> Attribute<'c> {
        let dims: Vec<Attribute> = self
            .0
            .iter()
            .map(|axes| {
                let axes: Vec<Attribute> = axes
                    .iter()
                    .map(|axis| StringAttribute::new(context, axis).into())
                    .collect();
                ArrayAttribute::new(context, &axes).into()
            })
            .collect();
        crate::ffi::sharding_attr(ArrayAttribute::new(context, &dims).into())
    }
}

impl fmt::Display for Sharding {
    /// `[{"batch"}, {}]`, the body of the attribute.
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        let dims: Vec<String> = self
            .0
            .iter()
            .map(|axes| {
                let axes: Vec<String> = axes.iter().map(|axis| format!("\"{axis}\"")).collect();
                format!("{{{}}}", axes.join(", "))
            })
            .collect();
        write!(formatter, "[{}]", dims.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_the_attribute() {
        let sharding = Sharding::replicated(2)
            .with_axis(0, "batch")
            .with_axis(0, "model");
        assert_eq!(sharding.to_string(), r#"[{"batch", "model"}, {}]"#);
    }

    #[test]
    fn local_shape_on_a_mesh_names_what_does_not_divide() {
        let mesh = Mesh {
            symbol: "mesh".into(),
            axes: Mesh::parse_axes(&["batch=4", "model=2"]).unwrap(),
        };
        let sharding = Sharding::replicated(2)
            .with_axis(0, "batch")
            .with_axis(1, "model");
        assert_eq!(
            sharding.local_shape_on(&[32, 64], &mesh).unwrap(),
            vec![8, 32]
        );
        assert_eq!(
            sharding.local_shape_on(&[30, 64], &mesh).unwrap_err(),
            "dim 0 of 30x64 does not divide over 4 devices"
        );
        let unknown = Sharding::replicated(1).with_axis(0, "data");
        assert!(unknown
            .local_shape_on(&[8], &mesh)
            .unwrap_err()
            .contains("axis 'data' is not in mesh"));
    }

    #[test]
    fn local_shape_divides_by_every_axis_of_a_dim() {
        let sharding = Sharding::replicated(2)
            .with_axis(0, "batch")
            .with_axis(1, "model");
        let sizes = |axis: &str| if axis == "batch" { 4 } else { 2 };
        assert_eq!(sharding.local_shape(&[32, 64], sizes), vec![8, 32]);
        assert_eq!(sharding.dim_of("model"), Some(1));
        assert!(!sharding.is_replicated());
        assert!(Sharding::replicated(3).is_replicated());
    }
}
