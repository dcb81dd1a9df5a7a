//! Lowering `partir.permute`: a chunk read from another device along the loop's axis.
//!
//! ```text
//! partir.permute d %v[%r] from S   (loop over A)
//! ==>  %c = %v resharded so that A splits dim d (as `partir.slice d %v[%r]` would be)
//!      partir_hlo.collective_permute %c axes [A] from S
//! ```

use super::scope::{rank_of, Local, Lowering, Scope};
use crate::ir::{core, sharding::Sharding};
use melior::ir::{operation::OperationLike, OperationRef, Value};

impl<'c, 'a> Lowering<'c, 'a, '_, '_> {
    /// `partir.permute d %v[%r] from S`: this device's chunk of `%v` (as a `partir.slice`
    /// materialises it) sent to the device that reads it, one `collective_permute` along the
    /// range's axis.
    pub(super) fn lower_permute(&mut self, permute: OperationRef<'c, 'a>, scope: &Scope<'c, 'a>) {
        let result = Value::from(permute.result(0).expect("one result"));
        let axis = core::slice_axis(permute).expect("a verified permute has a range");
        let sources = core::permute_sources(permute).expect("a verified permute has sources");
        self.record_slice(permute);
        let whole = Sharding::replicated(rank_of(result));
        let chunk = self.materialise(result, scope, &whole);
        let moved = self.emitter().collective_permute(
            scope.anchor(),
            permute.location(),
            chunk,
            &axis,
            &sources,
        );
        self.set_local(
            result,
            Local {
                value: moved,
                sharding: whole,
                pending: None,
                depth: scope.depth(),
            },
        );
    }
}
