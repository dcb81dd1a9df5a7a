//! `partir-expand-dim{value=SELECTOR dim=D sizes=A,B,C}`: a fused dim seen as its factors, in
//! the whole program, so that a tile can split one factor (docs/design.md#fused-projections).
//!
//! GPT-2's `c_attn` kernel `[192, 64]` holds q, k and v of 2 heads of 32 on dim 0. Megatron
//! splits it by heads, so device 0 holds q, k and v of head 0: rows 0-31, 64-95 and 128-159,
//! not one block. Expanding dim 0 as `[3, 2, 32]` makes the kernel `[3, 2, 32, 64]`, and the
//! heads a dim of their own, which a contiguous tile splits. Every value the dim flows to
//! expands with it, op by op, as far as each op's family can run on the expanded value
//! ([`crate::rules::expand`]): the matmul's `[8,16,192]` becomes `[8,16,3,2,32]`, q's slice
//! `[..., 0:64]` becomes `[..., 0:1, :, :]`, the gradient's concatenate and the optimizer's
//! updates follow, as do the bias and the optimizer's moments. An op that cannot take the
//! expanded value reads it through a reshape back. The program computes what it did.
//!
//! The entry function's arguments and results that expand change type, and record the shape
//! their caller knows as `partir.view_of`: a caller's `[192, 64]` array *is* the
//! `[3, 2, 32, 64]` argument, read row-major, so runtimes reshape (free) and then shard.

use super::{
    names::EXPAND_DIM as PASS, options::ExpandDimOptions, program_location, select_values,
    PassError, PassResult,
};
use crate::{
    ffi,
    ir::{core, func, func_attrs, names::Site},
    rules::{
        expand::{self, DimSplit, Port, Splits},
        Rules, Shapes,
    },
};
use melior::{
    ir::{
        attribute::{DenseI64ArrayAttribute, TypeAttribute},
        operation::{OperationBuilder, OperationLike},
        r#type::FunctionType,
        Attribute, BlockLike, Identifier, OperationRef, RegionLike, Type, Value, ValueLike,
    },
    Context,
};
use std::collections::{HashMap, HashSet};

/// The argument or result attribute holding the shape the caller knows.
pub const VIEW_OF_ATTR: &str = "partir.view_of";

pub fn run<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    options: &ExpandDimOptions,
) -> PassResult<'c> {
    let dim = usize::try_from(options.dim).map_err(|_| {
        PassError::new(
            program_location(module),
            format!("{PASS}: no dim given (dim=N, N >= 0)"),
        )
    })?;
    let expanded = expand_dim(context, module, PASS, &options.value, dim, &options.sizes)?;
    ffi::emit(
        module.location(),
        ffi::Severity::Remark,
        &format!("{PASS}: {expanded} values expanded"),
    );
    Ok(())
}

/// Per argument (or result), the caller's shape when it is not the program's.
pub type Views = Vec<Option<Vec<i64>>>;

/// The caller's shape (`partir.view_of`) of each argument and each result of `func` (None
/// where the program's own type is the caller's).
pub fn views(func: OperationRef) -> (Views, Views) {
    entry_arrays(func, VIEW_OF_ATTR)
}

/// The `DenseI64ArrayAttribute` named `attr` of each argument and each result of `func` (None
/// where there is none).
pub fn entry_arrays(func: OperationRef, attr: &str) -> (Views, Views) {
    let read = |name: &str, count: usize| -> Views {
        func_attrs::entries(func, name, count)
            .iter()
            .map(|fields| {
                fields
                    .iter()
                    .find(|field| func_attrs::is_named(field, attr))
                    .and_then(|field| DenseI64ArrayAttribute::try_from(field.1).ok())
                    .map(|array| {
                        (0..array.len())
                            .filter_map(|i| array.element(i).ok())
                            .collect()
                    })
            })
            .collect()
    };
    let count = |name: &str| {
        func.attribute(name)
            .ok()
            .and_then(|attr| melior::ir::attribute::ArrayAttribute::try_from(attr).ok())
            .map_or(0, |array| array.len())
    };
    (
        read("arg_attrs", count("arg_attrs")),
        read("res_attrs", count("res_attrs")),
    )
}

/// Expands dim `dim` of every value `selector` names into `sizes`, through the program;
/// returns how many values expanded (the selected ones and those the dim flows to).
pub fn expand_dim<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    who: &str,
    selector: &str,
    dim: usize,
    sizes: &[i64],
) -> Result<usize, PassError<'c>> {
    let named = crate::ir::names::named_values(module);
    let targets = select_values(module, &named, who, selector)?;
    let split = DimSplit {
        dim,
        sizes: sizes.to_vec(),
    };
    let mut seeds = Vec::new();
    for (name, target) in &targets {
        let error =
            |message: String| PassError::new(target.location(), format!("{who}: {message}"));
        let shape = core::static_shape(target.value.r#type()).ok_or_else(|| {
            error(format!(
                "'{name}' has type {}; only statically shaped tensors can be expanded",
                target.value.r#type()
            ))
        })?;
        if already_expanded(target, &split) {
            continue;
        }
        let size = *shape.get(dim).ok_or_else(|| {
            error(format!(
                "dim {dim} is out of range for '{name}' of type {}",
                target.value.r#type()
            ))
        })?;
        if sizes.len() < 2 || sizes.iter().any(|&s| s < 1) || sizes.iter().product::<i64>() != size
        {
            return Err(error(format!(
                "dim {dim} of '{name}' has size {size}, which sizes {sizes:?} do not make (give 2 or more positive sizes whose product is {size})"
            )));
        }
        seeds.push(target.value);
    }
    if seeds.is_empty() {
        return Ok(0);
    }
    let mut plan = Plan::new(Rules::default());
    for seed in seeds {
        plan.grow(seed, split.clone());
    }
    Ok(plan.apply(context))
}

/// Whether an argument was expanded so already (a bias reached from its kernel, selected too).
fn already_expanded(target: &crate::ir::NamedValue, split: &DimSplit) -> bool {
    let Site::Argument { func, index } = target.site else {
        return false;
    };
    let viewed = views(func).0.into_iter().nth(index).flatten();
    viewed.is_some_and(|shape| {
        shape.get(split.dim) == Some(&split.sizes.iter().product())
            && core::static_shape(target.value.r#type()) == Some(split.expand(&shape))
    })
}

/// Which values expand, how, and which ops run on them.
struct Plan<'c, 'a> {
    rules: Rules,
    /// In the order they were reached.
    values: Vec<(Value<'c, 'a>, DimSplit)>,
    split_of: HashMap<usize, usize>,
    /// Ops that run on expanded values, with the splits of their values.
    ops: Vec<(OperationRef<'c, 'a>, Splits)>,
    /// Op → its index in `ops`.
    accepted: HashMap<usize, usize>,
    /// (op, operand) uses that read the expanded value: the operands of an op's plan, and the
    /// carries a loop body yields.
    expanded_uses: HashSet<(usize, usize)>,
    /// Values whose own type changes: results of ops that run expanded, region arguments of
    /// loops that carry expanded values (the entry function's arguments too, see `apply`).
    in_place: HashSet<usize>,
}

impl<'c, 'a> Plan<'c, 'a> {
    fn new(rules: Rules) -> Self {
        Plan {
            rules,
            values: Vec::new(),
            split_of: HashMap::new(),
            ops: Vec::new(),
            accepted: HashMap::new(),
            expanded_uses: HashSet::new(),
            in_place: HashSet::new(),
        }
    }

    fn split(&self, value: Value) -> Option<&DimSplit> {
        self.split_of
            .get(&ffi::value_id(value))
            .map(|&i| &self.values[i].1)
    }

    /// Expands `seed` and everything its split flows to.
    fn grow(&mut self, seed: Value<'c, 'a>, split: DimSplit) {
        if self.split(seed).is_some() {
            return;
        }
        let mut work = vec![self.add(seed, split)];
        while let Some(index) = work.pop() {
            let (value, split) = self.values[index].clone();
            let sites = flow_sites(value);
            for (op, port) in sites {
                if self.covers(op, port) || func::is_return(op) {
                    continue;
                }
                if let Some(more) = self.accept(op, port, &split) {
                    work.extend(more);
                }
            }
        }
    }

    /// Lets `op` run with `port` split so, if its family can and its other values agree; the
    /// values newly expanded.
    fn accept(
        &mut self,
        op: OperationRef<'c, 'a>,
        port: Port,
        split: &DimSplit,
    ) -> Option<Vec<usize>> {
        let splits = expand::expansion(&self.rules, op, port, split)?;
        let mut values = Vec::new();
        for (at, split) in &splits {
            values.push((port_value(op, *at)?, split.clone(), *at));
        }
        // A loop's carry is also its regions' argument, and what its body yields.
        let carried = crate::rules::carried_body(op);
        let mut inner = Vec::new();
        if let Some(body) = carried {
            for (at, split) in &splits {
                let Port::Operand(i) = at else { continue };
                for region in 0..op.region_count() {
                    let block = op.region(region).ok()?.first_block()?;
                    inner.push((block.argument(*i).ok()?.into(), split.clone()));
                }
                let terminator = crate::ir::last_op(op.region(body).ok()?.first_block()?)?;
                let yielded = terminator.operand(*i).ok()?;
                inner.push((yielded, split.clone()));
                self.expanded_uses
                    .insert((ffi::operation_id(terminator), *i));
            }
        }
        let agree = values
            .iter()
            .map(|(value, split, _)| (value, split))
            .chain(inner.iter().map(|(value, split)| (value, split)))
            .all(|(value, split)| self.split(*value).is_none_or(|known| known == split));
        if !agree {
            return None;
        }
        // An op may run with several of its values expanded, each by its own factor (a loop
        // carrying two fused weights): one plan, merged.
        let id = ffi::operation_id(op);
        if let Some(&index) = self.accepted.get(&id) {
            let plan = &mut self.ops[index].1;
            if splits
                .iter()
                .any(|(at, _)| plan.iter().any(|(known, _)| known == at))
            {
                return None;
            }
            plan.extend(splits);
        } else {
            self.accepted.insert(id, self.ops.len());
            self.ops.push((op, splits));
        }
        let mut added = Vec::new();
        for (value, split, at) in values {
            match at {
                Port::Operand(i) => {
                    self.expanded_uses.insert((ffi::operation_id(op), i));
                }
                Port::Result(_) => {
                    self.in_place.insert(ffi::value_id(value));
                }
            }
            if self.split(value).is_none() {
                added.push(self.add(value, split));
            }
        }
        for (index, (value, split)) in inner.into_iter().enumerate() {
            // Region arguments change type in place; the yielded value is an ordinary one.
            if carried.is_some()
                && ffi::argument_owner(value).is_some_and(|block| {
                    block
                        .parent_operation()
                        .is_some_and(|owner| ffi::same_operation(owner, op))
                })
            {
                self.in_place.insert(ffi::value_id(value));
            }
            let _ = index;
            if self.split(value).is_none() {
                added.push(self.add(value, split));
            }
        }
        Some(added)
    }

    /// Whether `op` already runs with `port` expanded.
    fn covers(&self, op: OperationRef, port: Port) -> bool {
        self.accepted
            .get(&ffi::operation_id(op))
            .is_some_and(|&index| self.ops[index].1.iter().any(|(at, _)| *at == port))
    }

    fn add(&mut self, value: Value<'c, 'a>, split: DimSplit) -> usize {
        self.split_of
            .insert(ffi::value_id(value), self.values.len());
        self.values.push((value, split));
        self.values.len() - 1
    }

    fn reads_expanded(&self, user: OperationRef, operand: usize) -> bool {
        self.expanded_uses
            .contains(&(ffi::operation_id(user), operand))
    }

    /// Rewrites the program: values retyped, reshapes where an op keeps the original shape,
    /// attributes of the ops that run expanded, and the entry functions' signatures.
    fn apply(&self, context: &'c Context) -> usize {
        let before: Vec<Shapes> = self.ops.iter().map(|(op, _)| Shapes::of(*op)).collect();
        let mut signatures: Vec<OperationRef<'c, 'a>> = Vec::new();
        for (value, split) in &self.values {
            let (value, split) = (*value, split);
            let old = value.r#type();
            let shape = core::static_shape(old).expect("planned values are static");
            let new = core::with_shape(old, &split.expand(&shape));
            let entry_argument = ffi::argument_owner(value)
                .and_then(|block| block.parent_operation())
                .filter(|owner| func::is_function(*owner));
            let in_place =
                entry_argument.is_some() || self.in_place.contains(&ffi::value_id(value));
            let uses = ffi::uses(value);
            if in_place {
                value.set_type(new);
                if let Some(func) = entry_argument {
                    mark_view(context, func, "arg_attrs", argument_index(value), &shape);
                    if !signatures.iter().any(|f| ffi::same_operation(*f, func)) {
                        signatures.push(func);
                    }
                }
                let mut back = None;
                for (user, i) in uses {
                    if self.reads_expanded(user, i) {
                        continue;
                    }
                    if func::is_return(user) && is_entry_return(user) {
                        let func = user.parent_operation().expect("a return is in a function");
                        mark_view(context, func, "res_attrs", i, &shape);
                        if !signatures.iter().any(|f| ffi::same_operation(*f, func)) {
                            signatures.push(func);
                        }
                        continue;
                    }
                    let back = *back.get_or_insert_with(|| reshape_after(context, value, old));
                    ffi::set_operand(user, i, back);
                }
            } else {
                let mut expanded = None;
                for (user, i) in uses {
                    if self.reads_expanded(user, i) {
                        let value =
                            *expanded.get_or_insert_with(|| reshape_after(context, value, new));
                        ffi::set_operand(user, i, value);
                    }
                }
            }
        }
        for ((op, splits), before) in self.ops.iter().zip(&before) {
            expand::expand_attributes(context, *op, splits, before);
        }
        for func in signatures {
            set_signature(context, func);
        }
        self.values.len()
    }
}

/// The value at `port` of `op` (None for a non-tensor).
fn port_value<'c, 'a>(op: OperationRef<'c, 'a>, port: Port) -> Option<Value<'c, 'a>> {
    let value: Value = match port {
        Port::Operand(i) => op.operand(i).ok()?,
        Port::Result(i) => op.result(i).ok()?.into(),
    };
    core::static_shape(value.r#type()).map(|_| value)
}

/// A reshape of `value` to `to`, right after its definition.
fn reshape_after<'c: 'a, 'a>(
    context: &'c Context,
    value: Value<'c, 'a>,
    to: Type<'c>,
) -> Value<'c, 'a> {
    let location = ffi::result_owner(value).map_or_else(
        || melior::ir::Location::unknown(context),
        |op| op.location(),
    );
    let op = OperationBuilder::new(expand::RESHAPE, location)
        .add_operands(&[value])
        .add_results(&[to])
        .build()
        .expect("a reshape builds");
    let op = core::insert_after_definition(value, op);
    op.result(0).expect("one result").into()
}

/// The position of `value` among its block's arguments (0 for an op result).
/// Where a dim of `value` flows on: each op using it (at that operand), its producer (at that
/// result), and a loop carrying it (at the carry's operand), from the carry's region argument
/// or from what the loop's body yields.
pub(crate) fn flow_sites<'c, 'a>(value: Value<'c, 'a>) -> Vec<(OperationRef<'c, 'a>, Port)> {
    let mut sites: Vec<(OperationRef<'c, 'a>, Port)> = ffi::uses(value)
        .into_iter()
        .map(|(op, i)| (op, Port::Operand(i)))
        .collect();
    if let Some(producer) = ffi::result_owner(value) {
        sites.push((
            producer,
            Port::Result(ffi::result_number(value).unwrap_or(0)),
        ));
    }
    let carrying = |op: Option<OperationRef<'c, 'a>>| {
        op.filter(|op| crate::rules::carried_body(*op).is_some())
    };
    if let Some(owner) = carrying(ffi::argument_owner(value).and_then(|b| b.parent_operation())) {
        sites.push((owner, Port::Operand(argument_index(value))));
    }
    for (user, i) in ffi::uses(value) {
        let loop_op = carrying(user.parent_operation());
        let body = loop_op.and_then(|op| {
            op.region(crate::rules::carried_body(op)?)
                .ok()?
                .first_block()
        });
        if let (Some(loop_op), Some(body)) = (loop_op, body) {
            if crate::ir::last_op(body).is_some_and(|last| ffi::same_operation(last, user)) {
                sites.push((loop_op, Port::Operand(i)));
            }
        }
    }
    sites
}

pub(crate) fn argument_index(value: Value) -> usize {
    melior::ir::block::BlockArgument::try_from(value)
        .map_or(0, |argument| argument.argument_number())
}

fn is_entry_return(op: OperationRef) -> bool {
    op.parent_operation().is_some_and(func::is_function)
}

/// Records `shape`, the caller's, on entry `index` of `func`'s `name` (kept if already there).
fn mark_view<'c>(
    context: &'c Context,
    func: OperationRef<'c, '_>,
    name: &str,
    index: usize,
    shape: &[i64],
) {
    mark_caller_shape(context, func, name, index, VIEW_OF_ATTR, shape);
}

/// How many entries `func`'s `name` (`arg_attrs` or `res_attrs`) has: its arguments, or what
/// its return returns.
pub(crate) fn entry_count(func: OperationRef, name: &str) -> usize {
    let block = func.region(0).ok().and_then(|region| region.first_block());
    match name {
        "arg_attrs" => block.map_or(0, |block| block.argument_count()),
        _ => block
            .and_then(crate::ir::last_op)
            .map_or(0, |ret| ret.operand_count()),
    }
}

/// Records `shape` as attribute `attr` of entry `index` of `func`'s `name` (`arg_attrs` or
/// `res_attrs`), kept if already there: the shape the caller knows.
pub(crate) fn mark_caller_shape<'c>(
    context: &'c Context,
    func: OperationRef<'c, '_>,
    name: &str,
    index: usize,
    attr: &str,
    shape: &[i64],
) {
    let mut entries = func_attrs::entries(func, name, entry_count(func, name));
    if let Some(fields) = entries.get_mut(index) {
        if !fields.iter().any(|field| func_attrs::is_named(field, attr)) {
            fields.push((
                Identifier::new(context, attr),
                DenseI64ArrayAttribute::new(context, shape).into(),
            ));
        }
    }
    func_attrs::set_entries(context, func, name, &entries);
}

/// `func`'s `function_type` from its body's argument and returned types.
pub(crate) fn set_signature<'c>(context: &'c Context, func: OperationRef<'c, '_>) {
    let Some(body) = func.region(0).ok().and_then(|region| region.first_block()) else {
        return;
    };
    let inputs: Vec<Type> = (0..body.argument_count())
        .filter_map(|i| body.argument(i).ok())
        .map(|argument| argument.r#type())
        .collect();
    let results: Vec<Type> = crate::ir::last_op(body)
        .map(|ret| ret.operands().map(|value| value.r#type()).collect())
        .unwrap_or_default();
    let ty: Attribute =
        TypeAttribute::new(FunctionType::new(context, &inputs, &results).into()).into();
    ffi::set_attribute(func, "function_type", ty);
}
