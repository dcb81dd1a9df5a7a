//! Moving a local value from one sharding to another with PartIR:HLO collectives.
//!
//! Per dim, axes both shardings share as a common prefix stay; the rest of the source's axes
//! are gathered (all_gather) and the rest of the target's are sliced (all_slice, local). A
//! gather and a slice over the same axes on two dims is one all_to_all.
//!
//! ```text
//! from [{"batch"}, {}] to [{}, {"batch"}]   ->  all_to_all split 1 concat 0 axes ["batch"]
//! from [{"batch"}, {}] to [{}, {}]          ->  all_gather dim 0 axes ["batch"]
//! from [{}, {}]        to [{}, {"model"}]   ->  all_slice dim 1 axes ["model"]
//! ```

use crate::{
    ir::{
        core::{static_shape, with_dim},
        hlo,
        sharding::Sharding,
        Mesh,
    },
    tmr::ReductionKind,
};
use melior::{
    ir::{
        attribute::IntegerAttribute,
        block::BlockLike,
        operation::{OperationBuilder, OperationLike},
        r#type::IntegerType,
        Attribute, Identifier, Location, OperationRef, Value, ValueLike,
    },
    Context,
};

/// Emits collectives in front of an anchor op.
pub struct Emitter<'c, 'm> {
    pub context: &'c Context,
    pub mesh: &'m Mesh,
}

impl<'c> Emitter<'c, '_> {
    fn group_size(&self, axes: &[String]) -> i64 {
        axes.iter()
            .map(|axis| self.mesh.axis_size(axis).unwrap_or(1))
            .product()
    }

    fn axes_attr(&self, axes: &[String]) -> Attribute<'c> {
        crate::ir::hlo::axes_attribute(self.context, axes)
    }

    fn integer(&self, value: usize) -> Attribute<'c> {
        IntegerAttribute::new(IntegerType::new(self.context, 64).into(), value as i64).into()
    }

    /// Builds `name` with `operand`, `attributes` and a result type from `resize` of the
    /// operand's local shape, before `anchor`.
    fn emit<'a>(
        &self,
        anchor: OperationRef<'c, 'a>,
        location: Location<'c>,
        name: &str,
        operand: Value<'c, 'a>,
        attributes: Vec<(&str, Attribute<'c>)>,
        resize: impl Fn(&mut Vec<i64>),
    ) -> Value<'c, 'a> {
        let mut shape = static_shape(operand.r#type()).expect("collectives move static tensors");
        resize(&mut shape);
        let mut ty = operand.r#type();
        for (dim, &size) in shape.iter().enumerate() {
            ty = with_dim(ty, dim, size);
        }
        let attributes: Vec<(Identifier, Attribute)> = attributes
            .into_iter()
            .map(|(key, value)| (Identifier::new(self.context, key), value))
            .collect();
        let op = OperationBuilder::new(name, location)
            .add_operands(&[operand])
            .add_attributes(&attributes)
            .add_results(&[ty])
            .build()
            .expect("partir_hlo collectives are registered");
        let block = anchor.block().expect("anchors live in blocks");
        Value::from(
            block
                .insert_operation_before(anchor, op)
                .result(0)
                .expect("one result"),
        )
    }

    pub fn all_gather<'a>(
        &self,
        anchor: OperationRef<'c, 'a>,
        location: Location<'c>,
        value: Value<'c, 'a>,
        dim: usize,
        axes: &[String],
    ) -> Value<'c, 'a> {
        let factor = self.group_size(axes);
        let attrs = vec![("dim", self.integer(dim)), ("axes", self.axes_attr(axes))];
        self.emit(
            anchor,
            location,
            "partir_hlo.all_gather",
            value,
            attrs,
            |shape| shape[dim] *= factor,
        )
    }

    pub fn all_slice<'a>(
        &self,
        anchor: OperationRef<'c, 'a>,
        location: Location<'c>,
        value: Value<'c, 'a>,
        dim: usize,
        axes: &[String],
    ) -> Value<'c, 'a> {
        let factor = self.group_size(axes);
        let attrs = vec![("dim", self.integer(dim)), ("axes", self.axes_attr(axes))];
        self.emit(
            anchor,
            location,
            "partir_hlo.all_slice",
            value,
            attrs,
            |shape| shape[dim] /= factor,
        )
    }

    pub fn all_to_all<'a>(
        &self,
        anchor: OperationRef<'c, 'a>,
        location: Location<'c>,
        value: Value<'c, 'a>,
        split: usize,
        concat: usize,
        axes: &[String],
    ) -> Value<'c, 'a> {
        let factor = self.group_size(axes);
        let attrs = vec![
            ("split_dim", self.integer(split)),
            ("concat_dim", self.integer(concat)),
            ("axes", self.axes_attr(axes)),
        ];
        self.emit(
            anchor,
            location,
            "partir_hlo.all_to_all",
            value,
            attrs,
            |shape| {
                shape[split] /= factor;
                shape[concat] *= factor;
            },
        )
    }

    /// `partir_hlo.collective_permute`: device r along `axis` receives device `sources[r]`'s
    /// `value` (zeros where -1).
    pub fn collective_permute<'a>(
        &self,
        anchor: OperationRef<'c, 'a>,
        location: Location<'c>,
        value: Value<'c, 'a>,
        axis: &str,
        sources: &[i64],
    ) -> Value<'c, 'a> {
        let attrs = vec![
            ("axes", self.axes_attr(&[axis.to_string()])),
            (
                "sources",
                melior::ir::attribute::DenseI64ArrayAttribute::new(self.context, sources).into(),
            ),
        ];
        self.emit(
            anchor,
            location,
            "partir_hlo.collective_permute",
            value,
            attrs,
            |_| {},
        )
    }

    /// `partir_hlo.all_reduce <kind>`.
    pub fn all_reduce<'a>(
        &self,
        anchor: OperationRef<'c, 'a>,
        location: Location<'c>,
        value: Value<'c, 'a>,
        kind: ReductionKind,
        axes: &[String],
    ) -> Value<'c, 'a> {
        let kind = hlo::kind_attribute(self.context, kind);
        self.emit(
            anchor,
            location,
            "partir_hlo.all_reduce",
            value,
            vec![("kind", kind), ("axes", self.axes_attr(axes))],
            |_| {},
        )
    }

    /// `value` (local, distributed as `from`) redistributed as `to`, emitted before `anchor`.
    pub fn reshard<'a>(
        &self,
        anchor: OperationRef<'c, 'a>,
        location: Location<'c>,
        value: Value<'c, 'a>,
        from: &Sharding,
        to: &Sharding,
    ) -> Value<'c, 'a> {
        if from == to || from.rank() == 0 {
            return value;
        }
        let rank = from.rank();
        let common: Vec<usize> = (0..rank)
            .map(|dim| {
                from.0[dim]
                    .iter()
                    .zip(&to.0[dim])
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .collect();
        let mut gathers: Vec<(usize, Vec<String>)> = (0..rank)
            .map(|dim| (dim, from.0[dim][common[dim]..].to_vec()))
            .filter(|(_, axes)| !axes.is_empty())
            .collect();
        let mut slices: Vec<(usize, Vec<String>)> = (0..rank)
            .map(|dim| (dim, to.0[dim][common[dim]..].to_vec()))
            .filter(|(_, axes)| !axes.is_empty())
            .collect();
        let mut current = value;
        // A dim that is re-split must first be gathered whole: from [{"model"}, {"batch"}] to
        // [{"batch"}, {}] the rows are gathered over model before batch splits them (local rows
        // 3 of 6 do not split 2 ways; all 6 do), then batch moves from columns to rows.
        gathers.retain(|(dim, axes)| {
            if slices.iter().any(|(split, _)| split == dim) {
                current = self.all_gather(anchor, location, current, *dim, axes);
                false
            } else {
                true
            }
        });
        // A gather on one dim and a slice on another over the same axes is an all_to_all.
        gathers.retain(|(concat, axes)| {
            if let Some(position) = slices
                .iter()
                .position(|(split, slice_axes)| slice_axes == axes && split != concat)
            {
                let (split, _) = slices.remove(position);
                current = self.all_to_all(anchor, location, current, split, *concat, axes);
                false
            } else {
                true
            }
        });
        // Slice before gathering where that is the same value: a slice on a dim no gather
        // touches, over axes no gather runs on (every member of a gather group then takes the
        // same chunk). The gathers then move only the sliced buffer: from [{"batch"}, {}] to
        // [{}, {"model"}] is all_slice model (local) then all_gather of half the bytes.
        let (early, late): (Vec<_>, Vec<_>) = slices.into_iter().partition(|(dim, axes)| {
            gathers.iter().all(|(gather_dim, gather_axes)| {
                gather_dim != dim && axes.iter().all(|axis| !gather_axes.contains(axis))
            })
        });
        for (dim, axes) in early {
            current = self.all_slice(anchor, location, current, dim, &axes);
        }
        for (dim, axes) in gathers {
            current = self.all_gather(anchor, location, current, dim, &axes);
        }
        for (dim, axes) in late {
            current = self.all_slice(anchor, location, current, dim, &axes);
        }
        current
    }
}
