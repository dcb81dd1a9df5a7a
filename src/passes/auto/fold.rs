//! Folded pricing: a program of L repeated layers is priced on two cuts of itself, one that
//! keeps its first layer and one that keeps its first two, and the price is extrapolated:
//! `price(L) = p1 + (L - 1) * (p2 - p1)`. That is exact for whatever each layer adds alike
//! (its ops, its collectives, its state bytes), and a plan then costs three layers to price
//! instead of L. The analysis decides repeated layers together (`params/layers/*/wq`), so
//! every layer of a plan is partitioned alike and the two cuts see what the whole would.
//!
//! Layers are found by name: arguments `params/layers/<i>/...` say how many there are, and
//! each op's location says which layer it belongs to (JAX's name stack, kept by
//! `import-jax --locations`: `jit(step)/transpose(jvp(layers/3))/dot_general`). Where no
//! location says it, the layers are found from the dataflow ([`super::seams`]), and the cuts
//! also keep the last layer (cuts of layers {0, L-1} and {0, 1, L-1}).
//!
//! A cut keeping layers `0..k` drops the others, forward and backward. With 4 layers, k = 1:
//! ```text
//! forward   x0 -> L0 -> x1 -> L1 -> x2 -> L2 -> x3 -> L3 -> y -> head
//! backward  head -> dy -> L3' -> .. -> L1' -> d1 -> L0' -> d0
//! cut       x0 -> L0 -> x1 -> head -> dy -> L0' -> d0
//! ```
//! The head reads `x1` where it read `y`, and `L0'` reads `dy` where it read `d1`. The
//! dropped layers' results go (their optimizer updates with them), then their arguments:
//! a cut's signature has only its own layers, so everything priced per argument is too.
//!
//! Anything the cut cannot match to this shape (a dropped layer whose values feed more than
//! the next layer and the head) is not folded: the search then prices the whole program.

use super::evaluate::{price_core, Priced, Quiet};
use crate::{
    ffi,
    ir::{func_attrs, numbered},
    passes::simulate,
    sim::Device,
};
use melior::{
    ir::{block::BlockLike, operation::OperationLike, Location, Module, OperationRef},
    Context,
};
use std::collections::HashMap;

use super::cut::entry_block;
pub use super::cut::{cut, Form};

/// How a search prices plans when nothing folds.
pub const WHOLE: &str = "whole program";

/// Fewer layers than this are priced whole: the two cuts together hold three layers.
pub const MIN_LAYERS: usize = 4;

/// The same for layers found from the dataflow: the cuts, which keep the last layer too,
/// hold five.
pub const MIN_STRUCTURAL_LAYERS: usize = 6;

/// The repeated layers of a program: arguments `.../<key>/<i>/...` (or `.../<key>_<i>/...`,
/// [`crate::ir::numbered`]) for `i` in `0..count`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layers {
    pub key: String,
    pub count: usize,
}

impl Layers {
    /// The layers the entry function's argument names show: the key numbering the most
    /// arguments, when they are `0..count` with `count >= MIN_LAYERS`.
    pub fn of(module: OperationRef) -> Option<Layers> {
        let names: Vec<String> = argument_names(module).into_iter().flatten().collect();
        numbered::most_numbered(names.iter().map(String::as_str))
            .map(|(key, count)| Layers { key, count })
            .filter(|layers| layers.count >= MIN_LAYERS)
    }

    /// The layer a name (`opt/m/layers/3/wq`) belongs to.
    pub(super) fn of_name(&self, name: &str) -> Option<usize> {
        numbered::numbers(name)
            .into_iter()
            .find(|number| number.key == self.key)
            .map(|number| number.index)
    }

    /// The whole program's names an argument name of the cut keeping the first two layers
    /// stands for: itself, and for layer 1's, the same name in every layer cut away, up to
    /// `end` (`params/layers/1/wq` -> `params/layers/1/wq` .. `params/layers/47/wq`).
    fn whole_names(&self, name: &str, end: usize) -> Vec<String> {
        let mut names = vec![name.to_string()];
        if self.of_name(name) == Some(1) {
            names.extend((2..end).map(|layer| numbered::renumber(name, &self.key, layer)));
        }
        names
    }

    /// Whether any op of `module`'s entry function is placed in a layer by its location.
    pub fn located_in(&self, module: OperationRef) -> bool {
        let Some(func) = simulate::entry_function(module) else {
            return false;
        };
        let mut found = false;
        ffi::walk(func, |op| {
            found = found || matches!(self.of_location(op.location()), Placed::Layer(_));
        });
        found
    }

    /// Where a location places an op: in a layer, outside any (it has a name), or nowhere
    /// (no name: an op partir made, which belongs where its operands do).
    pub(super) fn of_location(&self, location: Location) -> Placed {
        if location.is_name() {
            let name = location.name_value();
            let text = name.as_string_ref().as_str().unwrap_or_default();
            if let Some(layer) = numbered::in_text(text, &self.key) {
                return Placed::Layer(layer);
            }
            return match self.of_location(location.name_child_location()) {
                Placed::Nowhere => Placed::Outside,
                placed => placed,
            };
        }
        let mut parts = Vec::new();
        if location.is_call_site() {
            parts = vec![location.call_site_callee(), location.call_site_caller()];
        } else if location.is_fused() {
            parts = (0..location.fused_num_locations())
                .map(|index| location.fused_location(index))
                .collect();
        }
        let mut placed = Placed::Nowhere;
        for part in parts {
            match self.of_location(part) {
                Placed::Layer(layer) => return Placed::Layer(layer),
                Placed::Outside => placed = Placed::Outside,
                Placed::Nowhere => {}
            }
        }
        placed
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Placed {
    Layer(usize),
    Outside,
    Nowhere,
}

/// A program priced on two cuts of its layers.
pub struct Folded<'c> {
    pub fold: Fold,
    /// Keeping the first layer, and the first two.
    pub cuts: [Module<'c>; 2],
}

/// What the cuts stand for (plain data: the threads that price plans share it).
#[derive(Clone, Debug)]
pub struct Fold {
    pub layers: Layers,
    /// How the cuts were found, and so which layers they hold.
    pub form: Form,
    /// Per argument of the larger cut: the whole program's arguments it stands for (itself,
    /// and for an argument of its last layer, the same argument of every layer cut away).
    pub stands_for: Vec<Vec<usize>>,
    /// (step, peak): the whole price over the extrapolated one, on the base program. Plans
    /// of a phase share most of its base, and most of what the line misses (collectives
    /// combined across layers, where the peak falls).
    pub calibration: (f64, f64),
}

impl<'c> Folded<'c> {
    /// The two cuts of `module`, or why it cannot be folded.
    pub fn new(context: &'c Context, module: OperationRef<'c, '_>) -> Result<Self, String> {
        let layers = Layers::of(module).ok_or_else(|| {
            format!("fewer than {MIN_LAYERS} layers named in the arguments (params/layers/<i>/...)")
        })?;
        let form = if layers.located_in(module) {
            Form::Located
        } else if layers.count >= MIN_STRUCTURAL_LAYERS {
            Form::Structural
        } else {
            return Err(format!(
                "no op is located in a layer, and {} layers found from the dataflow are fewer \
                 than the {MIN_STRUCTURAL_LAYERS} its cuts would pay for",
                layers.count
            ));
        };
        let two = cut(context, module, &layers, 2, form)?;
        // The smaller cut from the larger: one layer less to cut, not forty-seven.
        let one = cut(context, two.as_operation(), &layers, 1, form)?;
        let mut fold = Fold {
            layers,
            form,
            stands_for: Vec::new(),
            calibration: (1.0, 1.0),
        };
        let whole = argument_names(module);
        let index_of: HashMap<&str, usize> = whole
            .iter()
            .enumerate()
            .filter_map(|(index, name)| Some((name.as_deref()?, index)))
            .collect();
        let stands_for = argument_names(two.as_operation())
            .iter()
            .map(|name| {
                let name = name.as_deref().ok_or("a cut's argument has no name")?;
                index_of
                    .get(name)
                    .ok_or("a cut's argument is not the program's")?;
                Ok(fold
                    .whole_names(name)
                    .iter()
                    .filter_map(|name| index_of.get(name.as_str()).copied())
                    .collect())
            })
            .collect::<Result<_, &str>>()?;
        fold.stands_for = stands_for;
        Ok(Folded {
            fold,
            cuts: [one, two],
        })
    }
}

impl Fold {
    /// The whole program's price from its cuts' (keeping one layer, and two), calibrated.
    pub fn extrapolate(&self, one: Priced, two: Priced) -> Priced {
        let times = (self.layers.count - self.form.held(1, self.layers.count)) as f64;
        let line = |a: f64, b: f64| (a + times * (b - a)).max(0.0);
        Priced {
            score: super::mcts::Score {
                seconds: line(one.score.seconds, two.score.seconds) * self.calibration.0,
                peak_bytes: line(one.score.peak_bytes, two.score.peak_bytes) * self.calibration.1,
            },
            deferred: line(one.deferred, two.deferred),
            state_bytes: line(one.state_bytes, two.state_bytes),
        }
    }

    /// The whole program's names an argument name of the larger cut stands for (see
    /// [`Layers::whole_names`]): layer 1's stands for every layer cut away.
    pub fn whole_names(&self, name: &str) -> Vec<String> {
        self.layers
            .whole_names(name, self.form.dropped_end(self.layers.count))
    }

    /// (argument, dim) pairs of the larger cut as the whole program's.
    pub fn tiled(&self, cut: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let mut whole: Vec<(usize, usize)> = cut
            .iter()
            .flat_map(|&(argument, dim)| {
                self.stands_for[argument]
                    .iter()
                    .map(move |&index| (index, dim))
            })
            .collect();
        whole.sort_unstable();
        whole
    }
}

/// The entry function's argument names, by index.
fn argument_names(module: OperationRef) -> Vec<Option<String>> {
    let Some(func) = simulate::entry_function(module) else {
        return Vec::new();
    };
    let count = entry_block(func).argument_count();
    func_attrs::entries(func, "arg_attrs", count)
        .iter()
        .map(|fields| func_attrs::name(fields))
        .collect()
}

/// How far off the extrapolation may price the base program (step time, peak) for plans to
/// be priced folded (then calibrated to it). Step times add up layer by layer: the
/// extrapolation meets the unpartitioned Transformer's to the last bits, and comes within 0.5%
/// once batch-split (gradient all-reduces combine across layers); the 48-layer one after
/// Megatron on `model` then BP on `batch` is 1.76% off, and its memory phases, priced whole
/// at 1% (3 plans per second), made its search 7x the 4-layer one's (1.8x at 2%, the same
/// plan). A peak does not add up as well (which
/// buffers are live at once shifts with the layer count: 2 to 10% on the Transformer), and
/// the plan found is priced whole.
const FOLD_TOLERANCE: (f64, f64) = (0.02, 0.10);

/// The cuts of `base` when it folds and their extrapolation prices `base` itself within
/// [`FOLD_TOLERANCE`], and how plans are priced, said for the summary. `known`: `base`'s
/// whole price when the phase before priced it (its plan, applied).
pub fn checked<'c>(
    context: &'c Context,
    base: OperationRef<'c, '_>,
    device: &Device,
    known: Option<Priced>,
) -> (Option<Folded<'c>>, String) {
    let whole = WHOLE.to_string();
    if Layers::of(base).is_none() {
        return (None, whole);
    }
    let folded = match Folded::new(context, base) {
        Ok(folded) => folded,
        Err(why) => return (None, format!("{whole} (not folded: {why})")),
    };
    let _quiet = Quiet::new(context);
    let price = |op: OperationRef<'c, '_>| {
        let copy = Module::from_operation(ffi::clone_operation(op)).expect("a module's clone");
        price_core(context, copy, device).ok()
    };
    let (Some(exact), Some(one), Some(two)) = (
        known.or_else(|| price(base)),
        price(folded.cuts[0].as_operation()),
        price(folded.cuts[1].as_operation()),
    ) else {
        return (
            None,
            format!("{whole} (not folded: a cut cannot be priced)"),
        );
    };
    let estimate = folded.fold.extrapolate(one, two);
    let off = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-30);
    let time = off(estimate.score.seconds, exact.score.seconds);
    let peak = off(estimate.score.peak_bytes, exact.score.peak_bytes);
    let layers = folded.fold.layers.count;
    let form = folded.fold.form;
    let held = |keep| form.held(keep, layers);
    let found = match folded.fold.form {
        Form::Located => "",
        Form::Structural => ", layers found from the dataflow",
    };
    let errors = format!(
        "step {:.2}% and peak {:.1}% off on the base",
        100.0 * time,
        100.0 * peak
    );
    if time > FOLD_TOLERANCE.0 || peak > FOLD_TOLERANCE.1 {
        return (None, format!("{whole} (folding {layers} layers: {errors})"));
    }
    let mut folded = folded;
    let ratio = |exact: f64, estimate: f64| {
        if estimate > 0.0 {
            exact / estimate
        } else {
            1.0
        }
    };
    folded.fold.calibration = (
        ratio(exact.score.seconds, estimate.score.seconds),
        ratio(exact.score.peak_bytes, estimate.score.peak_bytes),
    );
    (
        Some(folded),
        format!(
            "{layers} layers folded into cuts of {} and {}{found} ({errors}, calibrated to it)",
            held(1),
            held(2)
        ),
    )
}

#[cfg(test)]
mod tests;
