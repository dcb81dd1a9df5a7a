//! How a value is distributed over the mesh: per tensor dim, the axes splitting it, major to
//! minor. `#partir_hlo.sharding<[{"batch"}, {}]>` is `Sharding(vec![vec!["batch"], vec![]])`.

use melior::{
    ir::{
        attribute::{ArrayAttribute, StringAttribute},
        Attribute,
    },
    Context,
};
use std::fmt;

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
