//! Typed views of partir's own attributes and types, in melior's style: a wrapper per kind,
//! built from typed values, read back with `TryFrom`.
//!
//! ```text
//! #partir.tile<1>       TileAttr::new(context, 1).dim() == 1
//! #partir.sum<max>      SumAttr::new(context, ReductionKind::Max).kind() == ReductionKind::Max
//! !partir.range<4>      RangeType::new(context, 4).size() == 4
//! a loop's action       Action::try_from(attribute) == Action::Tile(1) / Action::Sum(kind)
//! ```
//! The reduction kind has one Rust type, `tmr::ReductionKind`; its ODS encoding
//! (`Partir_ReductionKind` in include/partir/Common/Enums.td: sum 0, max 1, min 2, mul 3) is read
//! and written here only.

use crate::{ffi, tmr::ReductionKind};
use melior::{
    ir::{Attribute, Type},
    Context,
};

/// The ODS value of a reduction kind (`Other` is never built: it is never partitioned).
pub fn reduction_code(kind: ReductionKind) -> i32 {
    match kind {
        ReductionKind::Sum | ReductionKind::Other => 0,
        ReductionKind::Max => 1,
        ReductionKind::Min => 2,
        ReductionKind::Mul => 3,
    }
}

/// The reduction kind of an ODS value.
pub fn reduction_of_code(code: i32) -> Option<ReductionKind> {
    Some(match code {
        0 => ReductionKind::Sum,
        1 => ReductionKind::Max,
        2 => ReductionKind::Min,
        3 => ReductionKind::Mul,
        _ => return None,
    })
}

/// `#partir.tile<dim>`: a loop result concatenated along `dim`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileAttr<'c> {
    attribute: Attribute<'c>,
}

impl<'c> TileAttr<'c> {
    pub fn new(context: &'c Context, dim: usize) -> Self {
        Self {
            attribute: ffi::tile_attr(context, dim as i64),
        }
    }

    pub fn dim(&self) -> usize {
        ffi::tile_dim(self.attribute).unwrap_or(0) as usize
    }
}

impl<'c> TryFrom<Attribute<'c>> for TileAttr<'c> {
    type Error = Attribute<'c>;

    fn try_from(attribute: Attribute<'c>) -> Result<Self, Self::Error> {
        match ffi::tile_dim(attribute) {
            Some(_) => Ok(Self { attribute }),
            None => Err(attribute),
        }
    }
}

impl<'c> From<TileAttr<'c>> for Attribute<'c> {
    fn from(tile: TileAttr<'c>) -> Self {
        tile.attribute
    }
}

/// `#partir.sum<kind>`: loop results combined with `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SumAttr<'c> {
    attribute: Attribute<'c>,
}

impl<'c> SumAttr<'c> {
    pub fn new(context: &'c Context, kind: ReductionKind) -> Self {
        Self {
            attribute: ffi::sum_attr(context, reduction_code(kind)),
        }
    }

    pub fn kind(&self) -> ReductionKind {
        ffi::sum_kind(self.attribute)
            .and_then(reduction_of_code)
            .unwrap_or(ReductionKind::Sum)
    }
}

impl<'c> TryFrom<Attribute<'c>> for SumAttr<'c> {
    type Error = Attribute<'c>;

    fn try_from(attribute: Attribute<'c>) -> Result<Self, Self::Error> {
        match ffi::sum_kind(attribute) {
            Some(_) => Ok(Self { attribute }),
            None => Err(attribute),
        }
    }
}

impl<'c> From<SumAttr<'c>> for Attribute<'c> {
    fn from(sum: SumAttr<'c>) -> Self {
        sum.attribute
    }
}

/// What a `partir.loop` does with the per-iteration values of one result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Concatenated along this dim (`#partir.tile<d>`).
    Tile(usize),
    /// Combined with this reduction (`#partir.sum<kind>`).
    Sum(ReductionKind),
    /// The same value from every iteration (`#partir.any`).
    Any,
}

/// How `#partir.any` prints (it has no parameters).
const ANY: &str = "#partir.any";

impl Action {
    pub fn to_attribute(self, context: &Context) -> Attribute<'_> {
        match self {
            Action::Tile(dim) => TileAttr::new(context, dim).into(),
            Action::Sum(kind) => SumAttr::new(context, kind).into(),
            Action::Any => Attribute::parse(context, ANY).expect("the partir dialect is loaded"),
        }
    }
}

impl<'c> TryFrom<Attribute<'c>> for Action {
    type Error = Attribute<'c>;

    fn try_from(attribute: Attribute<'c>) -> Result<Self, Self::Error> {
        if let Ok(tile) = TileAttr::try_from(attribute) {
            return Ok(Action::Tile(tile.dim()));
        }
        if attribute.to_string() == ANY {
            return Ok(Action::Any);
        }
        SumAttr::try_from(attribute).map(|sum| Action::Sum(sum.kind()))
    }
}

/// `!partir.range<size>`: the iteration index of a loop over an axis of that size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeType<'c> {
    r#type: Type<'c>,
}

impl<'c> RangeType<'c> {
    pub fn new(context: &'c Context, size: i64) -> Self {
        Self {
            r#type: ffi::range_type(context, size),
        }
    }

    pub fn size(&self) -> i64 {
        ffi::range_size(self.r#type).unwrap_or(0)
    }
}

impl<'c> TryFrom<Type<'c>> for RangeType<'c> {
    type Error = Type<'c>;

    fn try_from(r#type: Type<'c>) -> Result<Self, Self::Error> {
        match ffi::range_size(r#type) {
            Some(_) => Ok(Self { r#type }),
            None => Err(r#type),
        }
    }
}

impl<'c> From<RangeType<'c>> for Type<'c> {
    fn from(range: RangeType<'c>) -> Self {
        range.r#type
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_codes_round_trip() {
        for kind in [
            ReductionKind::Sum,
            ReductionKind::Max,
            ReductionKind::Min,
            ReductionKind::Mul,
        ] {
            assert_eq!(reduction_of_code(reduction_code(kind)), Some(kind));
        }
        assert_eq!(reduction_of_code(7), None);
    }
}
