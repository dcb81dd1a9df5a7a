//! The pipelined form put in place: the stage function's body (a retyped copy of the loop) and
//! the loop replaced by a call of the ticks, which `partir-inline-calls` then inlines.

use super::{form::Form, BODY};
use crate::{
    ffi,
    rules::{
        regions::{blocks, localize, ops_of},
        Shapes,
    },
};
use melior::{
    ir::{
        block::BlockLike, operation::OperationLike, Attribute, Module, OperationRef, RegionLike,
        Value, ValueLike,
    },
    Context,
};

/// Builds the per-stage function's body: a copy of the loop on its arguments (one
/// microbatch, one stage's layers), retyped to them.
pub(super) fn fill_stage<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    op: OperationRef<'c, '_>,
    form: &Form,
) -> Result<(), String> {
    let name = form.stage_name();
    let func = ops_of(
        module
            .region(0)
            .ok()
            .and_then(|r| r.first_block())
            .ok_or("an empty module")?,
    )
    .into_iter()
    .find(|f| {
        f.attribute("sym_name")
            .ok()
            .and_then(ffi::string_attribute)
            .is_some_and(|s| s == name)
    })
    .ok_or("the stage function was not added")?;
    let entry = func
        .region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or("an empty stage function")?;
    let ret = ops_of(entry).pop().ok_or("no return")?;
    let before = Shapes::of(op);
    let copy = entry.insert_operation_before(ret, ffi::clone_operation(op));
    for i in 0..copy.operand_count() {
        let argument = Value::from(entry.argument(i).map_err(|e| e.to_string())?);
        ffi::set_operand(copy, i, argument);
        copy.result(i)
            .map_err(|e| e.to_string())?
            .set_type(argument.r#type());
        ffi::set_operand(ret, i, copy.result(i).map_err(|e| e.to_string())?.into());
    }
    ffi::set_attribute(
        copy,
        crate::rules::pipeline::STAGE_LOOP_ATTR,
        Attribute::unit(context),
    );
    localize(context, copy, &before, copy.operand_count(), BODY);
    // An update of a stack keeps the stack's (now one stage's) type.
    for block in blocks(copy) {
        for inner in ops_of(block) {
            if ffi::op_is(inner, "stablehlo.dynamic_update_slice") {
                let ty = inner.operand(0).map_err(|e| e.to_string())?.r#type();
                inner.result(0).map_err(|e| e.to_string())?.set_type(ty);
            }
        }
    }
    // A forward loop counts to its stage's layers; a reversed one reads `L - 1 - i` and counts
    // from `L - Ls` to L.
    if !form.reversed {
        let cond = copy
            .region(0)
            .ok()
            .and_then(|r| r.first_block())
            .ok_or("no condition")?;
        let compare = ffi::result_owner(
            ops_of(cond)
                .pop()
                .and_then(|r| r.operand(0).ok())
                .ok_or("no predicate")?,
        )
        .ok_or("no compare")?;
        let limit =
            ffi::result_owner(compare.operand(1).map_err(|e| e.to_string())?).ok_or("no limit")?;
        let ty = limit.result(0).map_err(|e| e.to_string())?.r#type();
        let value = Attribute::parse(context, &format!("dense<{}> : {ty}", form.per_stage()))
            .ok_or("a limit")?;
        ffi::set_attribute(limit, "value", value);
    }
    Ok(())
}

/// Replaces `op` by the one call written in `call` (operands `%a0..`), through a parsed
/// function whose body is that call: the call is moved next to `op`.
pub(super) fn replace_by_call<'c>(
    context: &'c Context,
    op: OperationRef<'c, '_>,
    call: &str,
    types: &[String],
) -> Result<(), String> {
    let n = types.len();
    let args: Vec<String> = (0..n).map(|i| format!("%a{i}: {}", types[i])).collect();
    // The callee declared, so that the call verifies.
    let callee = call
        .split('@')
        .nth(1)
        .and_then(|rest| rest.split('(').next())
        .ok_or("a call names its callee")?;
    let text = format!(
        "func.func private @{callee}({}) -> ({})\nfunc.func private @caller({}) -> ({}) {{\n  {call}\n  return {} : {}\n}}\n",
        types.join(", "),
        types.join(", "),
        args.join(", "),
        types.join(", "),
        (0..n).map(|i| format!("%r#{i}")).collect::<Vec<_>>().join(", "),
        types.join(", ")
    );
    let parsed = Module::parse(context, &text)
        .ok_or_else(|| format!("a call that does not parse:\n{text}"))?;
    let func = ops_of(parsed.body()).pop().ok_or("no function")?;
    let entry = func
        .region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or("no body")?;
    let parsed_call = ops_of(entry).into_iter().next().ok_or("no call")?;
    let block = op.block().ok_or("the loop is in no block")?;
    let new = block.insert_operation_before(op, ffi::clone_operation(parsed_call));
    // The copy reads the parsed function's arguments until it reads the loop's operands: set
    // them before the parsed module (and its arguments' use lists) is destroyed.
    for i in 0..n {
        ffi::set_operand(new, i, op.operand(i).map_err(|e| e.to_string())?);
    }
    drop(parsed);
    for i in 0..n {
        ffi::replace_all_uses(
            op.result(i).map_err(|e| e.to_string())?.into(),
            new.result(i).map_err(|e| e.to_string())?.into(),
        );
    }
    // SAFETY: every use of `op` was replaced and no handle to it is used after this.
    unsafe { ffi::erase(op) };
    Ok(())
}
