//! What a step defers to the next one: state it returns split otherwise than it came in.
//! A training step's results are the next step's arguments (`params/w1` out is `params/w1`
//! in), so a plan that returns a parameter split where it took it whole leaves the next step
//! to gather it back. One step's simulation does not see that cost; `partir auto` adds it to
//! every plan's price, and `partir partition` says it.

use super::{cost, report::ValueSharding, CollectiveKind, Device};
use crate::ir::MeshAxis;

/// The state results (a result named like an argument: `params/w1` in, `params/w1` out) split
/// along axes their argument is not split along on that dim, with those axes.
pub fn resharded(shardings: &[ValueSharding]) -> Vec<(&ValueSharding, Vec<String>)> {
    state_pairs(shardings)
        .filter_map(|(argument, result)| {
            let extra: Vec<String> = (result.axes.iter().enumerate())
                .flat_map(|(dim, axes)| {
                    let wanted = argument.axes.get(dim).cloned().unwrap_or_default();
                    axes.iter()
                        .filter(move |axis| !wanted.contains(axis))
                        .cloned()
                        .collect::<Vec<_>>()
                })
                .collect();
            (!extra.is_empty()).then_some((result, extra))
        })
        .collect()
}

/// The seconds of all_gathers that would bring each [`resharded`] state result back to its
/// argument's split for the next step. Zero for consistent plans (BP, Megatron, ZeRO-3 all
/// return state split as it came in). Without it a search would prefer plans that split only
/// the optimizer's update and return the parameters split (`all_slice`, free), leaving the
/// gather to the next step; and ZeRO-2 written as moments split on an axis returns the
/// parameters it updates split on it while they came in whole.
pub fn state_resharding(shardings: &[ValueSharding], mesh: &[MeshAxis], device: &Device) -> f64 {
    let size_of = |axis: &String| {
        mesh.iter()
            .find(|known| &known.name == axis)
            .map_or(1, |known| known.size)
    };
    let mut seconds = 0.0;
    for (result, extra) in resharded(shardings) {
        let group: i64 = extra.iter().map(size_of).product();
        let local: i64 = result.local_shape.iter().product();
        // f32 state: the gathered buffer's bytes.
        let bytes = 4.0 * (local * group) as f64;
        seconds += cost::collective_on(
            CollectiveKind::AllGather,
            &extra,
            mesh,
            group,
            bytes,
            device,
        )
        .seconds;
    }
    seconds
}

/// The state of a step: (argument, result) pairs of one name (`params/w1` in, `params/w1` out).
pub fn state_pairs(
    shardings: &[ValueSharding],
) -> impl Iterator<Item = (&ValueSharding, &ValueSharding)> {
    shardings
        .iter()
        .filter(|value| value.is_result)
        .filter_map(|result| {
            shardings
                .iter()
                .find(|value| !value.is_result && value.name == result.name)
                .map(|argument| (argument, result))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(name: &str, is_result: bool, axes: &[&[&str]], local_shape: &[i64]) -> ValueSharding {
        ValueSharding::new(name, is_result, axes, local_shape)
    }

    #[test]
    fn state_returned_split_as_it_came_costs_nothing_and_otherwise_a_gather() {
        let device = Device::resolve("tpu-v3").unwrap();
        let mesh = [MeshAxis {
            name: "batch".into(),
            size: 4,
        }];
        // ZeRO: split in, split out.
        let zero = [
            value("params/w", false, &[&["batch"], &[]], &[16, 64]),
            value("params/w", true, &[&["batch"], &[]], &[16, 64]),
        ];
        assert_eq!(state_resharding(&zero, &mesh, &device), 0.0);
        // Whole in, split out: the next step gathers 64x64 f32 over 4 devices.
        let skewed = [
            value("params/w", false, &[&[], &[]], &[64, 64]),
            value("params/w", true, &[&["batch"], &[]], &[16, 64]),
            value("loss", true, &[], &[]),
        ];
        let expected = cost::collective_on(
            CollectiveKind::AllGather,
            &["batch".to_string()],
            &mesh,
            4,
            4.0 * 64.0 * 64.0,
            &device,
        )
        .seconds;
        assert!(expected > 0.0);
        assert_eq!(state_resharding(&skewed, &mesh, &device), expected);
    }
}
