//! Calls out of Rust: the C++ glue (a `cxx` bridge, [`glue`]) and the few raw MLIR C API calls
//! melior does not offer, each behind a safe function over melior's typed references. A leaf:
//! it imports nothing of partir but the plain [`crate::affine`] vocabulary. Calls into Rust
//! (plugin entry points, pass entry points, the C API) are `crate::entry`'s.
//!
//! melior pitfall: its fallible accessors (`operand(i)`, `result(i)`, `region(i)`,
//! `BlockLike::argument(i)`) print the operation (or block) into the error on a miss, and
//! printing a nested op numbers every value of its module. Check counts or op names before
//! probing, or a walk becomes quadratic.

pub mod glue;
mod names;
mod origin;
mod signature;
pub mod threads;

pub use names::{op_is, op_name_starts_with, string_attribute, string_attribute_is};
pub use origin::{argument_owner, result_number, result_owner};
pub use signature::{erase_unused_argument, set_operands};

use crate::affine::{AffineExprLite, AffineMapLite, IteratorType};
use melior::{
    dialect::DialectRegistry,
    ir::{
        Attribute, AttributeLike, Location, OperationRef, RegionLike, Type, TypeLike, Value,
        ValueLike,
    },
    Context, ContextRef,
};
use mlir_sys::{
    mlirOperationGetContext, mlirValueReplaceAllUsesExcept, MlirOperation, MlirStringRef,
};

pub use glue::bridge::Severity;

/// Runs `body` on the operation and context behind a raw handle that C++ hands to Rust (a pass
/// entry point), with melior's typed references.
///
/// # Safety
/// `op` is a live operation, not destroyed or moved to another context while `body` runs.
pub unsafe fn with_operation<R>(
    op: glue::Operation,
    body: impl for<'c> FnOnce(&'c Context, OperationRef<'c, '_>) -> R,
) -> R {
    // SAFETY: the caller's promise; the context outlives its operations. The ContextRef stays
    // in this frame: a `to_ref()` of a temporary dangles.
    let context_ref = unsafe { ContextRef::from_raw(mlirOperationGetContext(op.0)) };
    let context: &Context = unsafe { context_ref.to_ref() };
    let module = unsafe { OperationRef::from_raw(op.0) };
    body(context, module)
}

/// The text of a C string ref, "" when null.
///
/// # Safety
/// A non-null `raw.data` points to `raw.length` readable bytes.
pub unsafe fn string_ref(raw: MlirStringRef) -> String {
    if raw.data.is_null() {
        return String::new();
    }
    let bytes = unsafe { std::slice::from_raw_parts(raw.data as *const u8, raw.length) };
    String::from_utf8_lossy(bytes).into_owned()
}

fn to_string_ref(text: &str) -> MlirStringRef {
    MlirStringRef {
        data: text.as_ptr() as *const std::ffi::c_char,
        length: text.len(),
    }
}

/// Reports `message` at `location` through the context's diagnostic engine (so that
/// `-verify-diagnostics` and every host's handler see it).
pub fn emit(location: Location, severity: Severity, message: &str) {
    // SAFETY: a live location; the message is copied by MLIR before this returns.
    unsafe { glue::bridge::emit_diagnostic(glue::Location(location.to_raw()), severity, message) }
}

/// `#partir.tile<dim>`.
pub fn tile_attr<'c>(context: &'c Context, dim: i64) -> Attribute<'c> {
    // SAFETY: the C++ side returns a valid attribute owned by the context.
    unsafe {
        Attribute::from_raw(glue::bridge::tile_attr_get(glue::Context(context.to_raw()), dim).0)
    }
}

/// The dim of a `#partir.tile<dim>`, or None for any other attribute.
pub fn tile_dim(attr: Attribute) -> Option<i64> {
    // SAFETY: `attr` is a valid attribute; the cast is checked first.
    let raw = glue::Attribute(attr.to_raw());
    unsafe { glue::bridge::attr_is_tile(raw).then(|| glue::bridge::tile_attr_dim(raw)) }
}

/// `#partir.sum<kind>`; kind as in `mlir::partir::ReductionKind` (0 sum, 1 max, 2 min, 3 mul).
pub fn sum_attr(context: &Context, kind: i32) -> Attribute<'_> {
    // SAFETY: as for tile_attr.
    unsafe {
        Attribute::from_raw(glue::bridge::sum_attr_get(glue::Context(context.to_raw()), kind).0)
    }
}

/// The kind of a `#partir.sum`, or None for any other attribute.
pub fn sum_kind(attr: Attribute) -> Option<i32> {
    // SAFETY: checked cast.
    let raw = glue::Attribute(attr.to_raw());
    unsafe { glue::bridge::attr_is_sum(raw).then(|| glue::bridge::sum_attr_kind(raw)) }
}

/// `#partir_hlo.sharding<...>` of `dims`: an array attribute per tensor dim, each an array of
/// string attributes (the axes, major to minor). Built, not parsed, so any axis name is safe.
pub fn sharding_attr<'c>(dims: Attribute<'c>) -> Attribute<'c> {
    // SAFETY: the C++ side checks nothing beyond the casts; callers pass arrays of string
    // arrays (`Sharding::to_attribute`), and the result is owned by the context.
    unsafe {
        Attribute::from_raw(glue::bridge::sharding_attr_get(glue::Attribute(dims.to_raw())).0)
    }
}

/// The dims of a `#partir_hlo.sharding` (an array attribute per tensor dim, each an array of
/// string attributes), or None for any other attribute.
pub fn sharding_dims(attr: Attribute) -> Option<Attribute> {
    // SAFETY: a live attribute; the C++ side checks its kind and returns a context-owned one.
    let dims = unsafe { glue::bridge::sharding_attr_dims(glue::Attribute(attr.to_raw())).0 };
    // SAFETY: non-null is a valid attribute of the same context.
    (!dims.ptr.is_null()).then(|| unsafe { Attribute::from_raw(dims) })
}

/// `!partir.range<size>`.
pub fn range_type(context: &Context, size: i64) -> Type<'_> {
    // SAFETY: the C++ side returns a valid type owned by the context.
    unsafe { Type::from_raw(glue::bridge::range_type_get(glue::Context(context.to_raw()), size).0) }
}

/// The size of a `!partir.range<size>`, or None for any other type.
pub fn range_size(ty: Type) -> Option<i64> {
    // SAFETY: checked cast.
    let raw = glue::Type(ty.to_raw());
    unsafe { glue::bridge::type_is_range(raw).then(|| glue::bridge::range_type_size(raw)) }
}

/// The shape of a ranked tensor type, `None` per dynamic dim; `None` for any other type.
/// (melior does not re-export its `DimSize`.)
pub fn tensor_shape(ty: Type) -> Option<Vec<Option<i64>>> {
    // SAFETY: type queries on a valid type, each guarded by the type check before it.
    unsafe {
        let raw = ty.to_raw();
        if !mlir_sys::mlirTypeIsARankedTensor(raw) {
            return None;
        }
        let rank = mlir_sys::mlirShapedTypeGetRank(raw);
        Some(
            (0..rank)
                .map(|dim| {
                    let size = mlir_sys::mlirShapedTypeGetDimSize(raw, dim as isize);
                    (!mlir_sys::mlirShapedTypeIsDynamicSize(size)).then_some(size)
                })
                .collect(),
        )
    }
}

/// The static dims of any ranked shaped type (tensor or memref); None when not static.
pub fn shaped_dims(ty: Type) -> Option<Vec<i64>> {
    // SAFETY: shaped-type queries guarded by the kind checks before them.
    unsafe {
        let raw = ty.to_raw();
        if !mlir_sys::mlirTypeIsAShaped(raw)
            || !mlir_sys::mlirShapedTypeHasRank(raw)
            || !mlir_sys::mlirShapedTypeHasStaticShape(raw)
        {
            return None;
        }
        Some(
            (0..mlir_sys::mlirShapedTypeGetRank(raw))
                .map(|dim| mlir_sys::mlirShapedTypeGetDimSize(raw, dim as isize))
                .collect(),
        )
    }
}

/// The element type of a shaped type (the type itself otherwise).
pub fn shaped_element(ty: Type) -> Type {
    // SAFETY: guarded by the kind check.
    unsafe {
        if mlir_sys::mlirTypeIsAShaped(ty.to_raw()) {
            Type::from_raw(mlir_sys::mlirShapedTypeGetElementType(ty.to_raw()))
        } else {
            ty
        }
    }
}

/// Replaces every use of `of` by `with`, except the uses inside `except`.
pub fn replace_all_uses_except(of: Value, with: Value, except: OperationRef) {
    let mut exceptions = [except.to_raw()];
    // SAFETY: all handles are live; MLIR only reads `exceptions` during the call.
    unsafe { mlirValueReplaceAllUsesExcept(of.to_raw(), with.to_raw(), 1, exceptions.as_mut_ptr()) }
}

/// Every use of `value`: the using operation and the operand number (melior has no use
/// iteration).
pub fn uses<'c: 'a, 'a>(value: Value<'c, 'a>) -> Vec<(OperationRef<'c, 'a>, usize)> {
    let mut found = Vec::new();
    // SAFETY: walking the use list of a live value; owners are live operations.
    unsafe {
        let mut operand = mlir_sys::mlirValueGetFirstUse(value.to_raw());
        while !mlir_sys::mlirOpOperandIsNull(operand) {
            let owner = OperationRef::from_raw(mlir_sys::mlirOpOperandGetOwner(operand));
            found.push((
                owner,
                mlir_sys::mlirOpOperandGetOperandNumber(operand) as usize,
            ));
            operand = mlir_sys::mlirOpOperandGetNextUse(operand);
        }
    }
    found
}

/// Sets (or replaces) attribute `name` of `op`, inherent or discardable.
pub fn set_attribute(op: OperationRef, name: &str, attr: Attribute) {
    // SAFETY: live handles; MLIR copies the name.
    unsafe {
        mlir_sys::mlirOperationSetAttributeByName(op.to_raw(), to_string_ref(name), attr.to_raw())
    }
}

/// Removes attribute `name` from `op` (nothing when it has none).
pub fn remove_attribute(op: OperationRef, name: &str) {
    // SAFETY: a live handle; MLIR reads the name during the call.
    unsafe {
        mlir_sys::mlirOperationRemoveAttributeByName(op.to_raw(), to_string_ref(name));
    }
}

/// For a splat dense elements attribute, the same splat with type `ty`; None otherwise.
pub fn resplat<'c>(attr: Attribute<'c>, ty: Type<'c>) -> Option<Attribute<'c>> {
    // SAFETY: type-checked accessors on a live attribute.
    unsafe {
        let raw = attr.to_raw();
        if !mlir_sys::mlirAttributeIsADenseElements(raw)
            || !mlir_sys::mlirDenseElementsAttrIsSplat(raw)
        {
            return None;
        }
        let element = mlir_sys::mlirDenseElementsAttrGetSplatValue(raw);
        Some(Attribute::from_raw(
            mlir_sys::mlirDenseElementsAttrSplatGet(ty.to_raw(), element),
        ))
    }
}

/// The text of a melior string ref, "" when MLIR gives a null pointer (melior's `as_str`
/// would build a slice from it: undefined behaviour).
pub fn string_ref_text(text: melior::StringRef) -> String {
    let raw = text.to_raw();
    if raw.data.is_null() || raw.length == 0 {
        return String::new();
    }
    // SAFETY: a non-null MLIR string ref points to `length` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(raw.data as *const u8, raw.length) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// The value of a scalar (or splat) float or integer attribute; None otherwise.
pub fn scalar_value(attr: Attribute) -> Option<f64> {
    // SAFETY: type-checked accessors on a live attribute.
    unsafe {
        let raw = attr.to_raw();
        if mlir_sys::mlirAttributeIsAFloat(raw) {
            Some(mlir_sys::mlirFloatAttrGetValueDouble(raw))
        } else if mlir_sys::mlirAttributeIsAInteger(raw) {
            Some(mlir_sys::mlirIntegerAttrGetValueInt(raw) as f64)
        } else if mlir_sys::mlirAttributeIsADenseElements(raw)
            && mlir_sys::mlirDenseElementsAttrIsSplat(raw)
        {
            scalar_value(Attribute::from_raw(
                mlir_sys::mlirDenseElementsAttrGetSplatValue(raw),
            ))
        } else {
            None
        }
    }
}

/// Visits `root` and every op nested in it in pre-order, with refs that live as long as the IR
/// (melior's `walk` hands out refs that cannot leave the callback).
pub fn walk<'c: 'a, 'a>(root: OperationRef<'c, 'a>, mut visit: impl FnMut(OperationRef<'c, 'a>)) {
    unsafe extern "C" fn trampoline(
        op: MlirOperation,
        data: *mut std::ffi::c_void,
    ) -> mlir_sys::MlirWalkResult {
        // SAFETY: `data` is the `&mut dyn FnMut` below, alive for the whole walk.
        let visit = unsafe { &mut *(data as *mut &mut dyn FnMut(MlirOperation)) };
        visit(op);
        mlir_sys::MlirWalkResult_MlirWalkResultAdvance
    }
    let mut raw_visit = |op: MlirOperation| visit(unsafe { OperationRef::from_raw(op) });
    let mut dynamic: &mut dyn FnMut(MlirOperation) = &mut raw_visit;
    // SAFETY: the trampoline only calls the closure, which outlives the walk.
    unsafe {
        mlir_sys::mlirOperationWalk(
            root.to_raw(),
            Some(trampoline),
            &mut dynamic as *mut _ as *mut std::ffi::c_void,
            mlir_sys::MlirWalkOrder_MlirWalkPreOrder,
        )
    }
}

/// What the TMR needs from an op implementing linalg's `LinalgOp` interface.
#[derive(Clone, Debug)]
pub struct LinalgInfo {
    pub indexing_maps: Vec<AffineMapLite>,
    pub num_inputs: usize,
    pub iterator_types: Vec<IteratorType>,
    /// The combiner of every result's reduction, as `mlir::partir::ReductionKind` (0 sum,
    /// 1 max, 2 min, 3 mul), when recognised and common to all results.
    pub combiner: Option<i32>,
    /// Loop dims the body reads with `linalg.index`: splitting them would be wrong.
    pub indexed_dims: Vec<usize>,
}

/// Indexing maps, iterator types and combiner of a linalg structured op (None otherwise).
pub fn linalg_info(op: OperationRef) -> Option<LinalgInfo> {
    // SAFETY: a live operation; the C++ side only reads it.
    let facts = unsafe { glue::bridge::linalg_facts(glue::Operation(op.to_raw())) };
    if !facts.is_linalg {
        return None;
    }
    let maps = facts.indexing_maps.0;
    let iterator_types = facts
        .iterators
        .bytes()
        .map(|byte| match byte {
            b'r' => IteratorType::Reduction,
            _ => IteratorType::Parallel,
        })
        .collect();
    // SAFETY: `maps` is an ArrayAttr of AffineMapAttr (LinalgOp::getIndexingMaps).
    let indexing_maps = unsafe {
        (0..mlir_sys::mlirArrayAttrGetNumElements(maps))
            .map(|index| {
                affine_map_lite(mlir_sys::mlirAffineMapAttrGetValue(
                    mlir_sys::mlirArrayAttrGetElement(maps, index),
                ))
            })
            .collect()
    };
    Some(LinalgInfo {
        indexing_maps,
        num_inputs: facts.num_inputs,
        iterator_types,
        combiner: (facts.combiner >= 0).then_some(facts.combiner),
        indexed_dims: (0..64)
            .filter(|dim| facts.indexed_dims & (1u64 << dim) != 0)
            .collect(),
    })
}

/// # Safety
/// `map` must be a valid affine map.
unsafe fn affine_map_lite(map: mlir_sys::MlirAffineMap) -> AffineMapLite {
    unsafe {
        AffineMapLite {
            num_dims: mlir_sys::mlirAffineMapGetNumDims(map) as usize,
            results: (0..mlir_sys::mlirAffineMapGetNumResults(map))
                .map(|index| affine_expr_lite(mlir_sys::mlirAffineMapGetResult(map, index)))
                .collect(),
        }
    }
}

/// # Safety
/// `expr` must be a valid affine expression.
unsafe fn affine_expr_lite(expr: mlir_sys::MlirAffineExpr) -> AffineExprLite {
    unsafe {
        if mlir_sys::mlirAffineExprIsADim(expr) {
            AffineExprLite::Dim(mlir_sys::mlirAffineDimExprGetPosition(expr) as usize)
        } else if mlir_sys::mlirAffineExprIsAConstant(expr) {
            AffineExprLite::Constant(mlir_sys::mlirAffineConstantExprGetValue(expr))
        } else if mlir_sys::mlirAffineExprIsAAdd(expr) {
            AffineExprLite::Add(vec![
                affine_expr_lite(mlir_sys::mlirAffineBinaryOpExprGetLHS(expr)),
                affine_expr_lite(mlir_sys::mlirAffineBinaryOpExprGetRHS(expr)),
            ])
        } else if mlir_sys::mlirAffineExprIsAMul(expr)
            && mlir_sys::mlirAffineExprIsAConstant(mlir_sys::mlirAffineBinaryOpExprGetLHS(expr))
        {
            let factor = mlir_sys::mlirAffineConstantExprGetValue(
                mlir_sys::mlirAffineBinaryOpExprGetLHS(expr),
            );
            AffineExprLite::Mul(
                factor,
                Box::new(affine_expr_lite(mlir_sys::mlirAffineBinaryOpExprGetRHS(
                    expr,
                ))),
            )
        } else if mlir_sys::mlirAffineExprIsAMul(expr)
            && mlir_sys::mlirAffineExprIsAConstant(mlir_sys::mlirAffineBinaryOpExprGetRHS(expr))
        {
            let factor = mlir_sys::mlirAffineConstantExprGetValue(
                mlir_sys::mlirAffineBinaryOpExprGetRHS(expr),
            );
            AffineExprLite::Mul(
                factor,
                Box::new(affine_expr_lite(mlir_sys::mlirAffineBinaryOpExprGetLHS(
                    expr,
                ))),
            )
        } else {
            let dims = (0..64)
                .filter(|&dim| mlir_sys::mlirAffineExprIsFunctionOfDim(expr, dim))
                .map(|dim| dim as usize)
                .collect();
            AffineExprLite::Other(dims)
        }
    }
}

/// Rewrites every f32 type and attribute in `module` to f64 (a higher-precision copy of a
/// program, for reference runs); false when the result does not verify.
pub fn widen_f32_to_f64(module: OperationRef) -> bool {
    // SAFETY: a live operation; the C++ side only rewrites types and attributes in place.
    unsafe { glue::bridge::widen_f32_to_f64(glue::Operation(module.to_raw())) }
}

/// Restores the batch dims that collapse_shapes merged in front of batched linalg ops under
/// `root` (see `unmerge_batch_dims` in src/cxx/Glue.cpp); how many ops were expanded.
pub fn unmerge_batch_dims(root: OperationRef) -> usize {
    // SAFETY: a live operation; the C++ side rewrites ops under it with a rewriter.
    let expanded = unsafe { glue::bridge::unmerge_batch_dims(glue::Operation(root.to_raw())) };
    usize::try_from(expanded).unwrap_or(0)
}

/// Inlines the calls under `root` to functions with a body, in any dialect (see
/// `inline_calls` in src/cxx/Glue.cpp); how many calls were inlined.
pub fn inline_calls(root: OperationRef) -> usize {
    // SAFETY: a live operation; the C++ side clones callees' bodies and erases calls and
    // unused private functions under it, and no handle to those is kept by the caller.
    let inlined = unsafe { glue::bridge::inline_calls(glue::Operation(root.to_raw())) };
    usize::try_from(inlined).unwrap_or(0)
}

/// Upstream CSE's hash of `op` (name, operands, attributes, properties, result types;
/// locations aside): ops [`operations_equivalent`] hash equal.
pub fn operation_hash(op: OperationRef) -> u64 {
    // SAFETY: a live operation, only read.
    unsafe { glue::bridge::operation_hash(glue::Operation(op.to_raw())) }
}

/// Whether `a` and `b` compute the same values by upstream CSE's test, locations aside.
pub fn operations_equivalent(a: OperationRef, b: OperationRef) -> bool {
    // SAFETY: live operations, only read.
    unsafe {
        glue::bridge::operations_equivalent(
            glue::Operation(a.to_raw()),
            glue::Operation(b.to_raw()),
        )
    }
}

/// True for a ranked tensor type (without printing it: the simulator asks for every value).
pub fn is_ranked_tensor(ty: Type) -> bool {
    // SAFETY: a live type; a pure query.
    unsafe { mlir_sys::mlirTypeIsARankedTensor(ty.to_raw()) }
}

/// Bits of one element of an integer, float or index type (index: 64); None for others.
pub fn element_bits(ty: Type) -> Option<u32> {
    let raw = ty.to_raw();
    // SAFETY: a live type; each width query runs only on the kind it is for.
    unsafe {
        if mlir_sys::mlirTypeIsAIndex(raw) {
            Some(64)
        } else if mlir_sys::mlirTypeIsAInteger(raw) {
            Some(mlir_sys::mlirIntegerTypeGetWidth(raw))
        } else if mlir_sys::mlirTypeIsAFloat(raw) {
            Some(mlir_sys::mlirFloatTypeGetWidth(raw))
        } else {
            None
        }
    }
}

/// A copy of `op` (with its regions), not yet in any block.
pub fn clone_operation<'c>(op: OperationRef<'c, '_>) -> melior::ir::Operation<'c> {
    // SAFETY: cloning a live operation gives a new owned operation.
    unsafe { melior::ir::Operation::from_raw(mlir_sys::mlirOperationClone(op.to_raw())) }
}

/// Moves the blocks of `source` into the (empty) region `target`.
pub fn take_body(target: &melior::ir::Region, source: melior::ir::RegionRef) {
    // SAFETY: both regions are live; MLIR moves the block list.
    unsafe { mlir_sys::mlirRegionTakeBody(target.to_raw(), source.to_raw()) }
}

/// Fills the body of a freshly built named linalg op (e.g. `linalg.add`) with its builtin
/// region.
pub fn fill_linalg_named_region(op: OperationRef) {
    // SAFETY: `op` is a live named linalg op with one empty region.
    unsafe { mlir_sys::mlirLinalgFillBuiltinNamedOpRegion(op.to_raw()) }
}

/// Moves `op` right before `anchor` (possibly out of a region), with melior's
/// `OperationMutLike::move_before` (melior hands out mutable op references only from walks and
/// owners; a pass holds plain references).
pub fn move_before<'c, 'a>(op: OperationRef<'c, 'a>, anchor: OperationRef<'c, 'a>) {
    // SAFETY: `op` is live (a reference); the mutable view only relinks it.
    let mut op = unsafe { melior::ir::operation::OperationRefMut::from_raw(op.to_raw()) };
    melior::ir::operation::OperationMutLike::move_before(&mut op, anchor);
}

/// Erases `op` from its block and destroys it, with everything nested in it.
///
/// # Safety
/// `op` is live, none of its results has a use left, and no handle to `op` or to anything
/// nested in it (an op, a block, a value) is used afterwards: handles are `Copy`, so the type
/// system cannot see them dangle.
pub unsafe fn erase(op: OperationRef) {
    // SAFETY: the caller's promise above.
    unsafe { mlir_sys::mlirOperationDestroy(op.to_raw()) }
}

/// Replaces every use of `of` by `with`.
pub fn replace_all_uses(of: Value, with: Value) {
    // SAFETY: both values are live.
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(of.to_raw(), with.to_raw()) }
}

/// Sets operand `index` of `op` to `value`, with melior's `OperationMutLike::set_operand`;
/// an index out of range is a no-op (MLIR would assert).
pub fn set_operand<'c, 'a>(op: OperationRef<'c, 'a>, index: usize, value: Value<'c, 'a>) {
    if index >= melior::ir::operation::OperationLike::operand_count(&op) {
        return;
    }
    // SAFETY: `op` is live (a reference); the mutable view only rewires one operand.
    let mut op = unsafe { melior::ir::operation::OperationRefMut::from_raw(op.to_raw()) };
    melior::ir::operation::OperationMutLike::set_operand(&mut op, index, value);
}

/// True when the two handles are the same operation.
pub fn same_operation(a: OperationRef, b: OperationRef) -> bool {
    a.to_raw().ptr == b.to_raw().ptr
}

/// A stable identity for an operation while it is alive (its address).
pub fn operation_id(op: OperationRef) -> usize {
    op.to_raw().ptr as usize
}

/// A stable identity for a value while it is alive (its address).
pub fn value_id(value: Value) -> usize {
    value.to_raw().ptr as usize
}

/// Registers the partir dialects into `registry`.
pub fn register_dialects(registry: &DialectRegistry) {
    // SAFETY: a live registry.
    unsafe { glue::bridge::register_dialects(glue::DialectRegistry(registry.to_raw())) }
}

/// Registers every partir pass with MLIR's global pass registry (idempotent).
pub fn register_passes() {
    glue::bridge::register_passes();
}

/// Runs the partir-opt driver on the process arguments; returns its exit code.
pub fn opt_main() -> i32 {
    let args: Vec<String> = std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    glue::bridge::opt_main(&args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_ref_round_trips_utf8() {
        let text = "params/layers/0/wq";
        // SAFETY: the ref points into `text`, alive for the call.
        assert_eq!(unsafe { string_ref(to_string_ref(text)) }, text);
    }

    #[test]
    fn null_string_ref_is_empty() {
        let raw = MlirStringRef {
            data: std::ptr::null(),
            length: 0,
        };
        // SAFETY: null is handled before any read.
        assert_eq!(unsafe { string_ref(raw) }, "");
    }
}
