//! The picture's "Final sharding" section: one value drawn over the mesh (a `<select>` chooses
//! which; the largest parameter first), then the arguments and results grouped into rows
//! ([`super::sharding_groups`]).

use super::html::{escape, table};
use super::mesh_picture::{figure, numbering};
use super::sharding_groups::{group, Group, Groups, Row};
use crate::sim::report::{AxisSize, ValueSharding};
use crate::sim::PartitionReport;
use std::fmt::Write;

/// Shows the chosen picture; the only script of the page, and inline.
const CHOOSE: &str = "<script>document.getElementById('mesh-value').addEventListener('change',\
function(){for(const f of document.querySelectorAll('.mesh-pic'))f.hidden=f.id!=='mesh-'+this.value})\
</script>";

/// The section's body (`story.shardings` is not empty).
pub fn section(story: &PartitionReport) -> String {
    let mesh: &[AxisSize] = story
        .tactics
        .last()
        .map_or(&[], |tactic| &tactic.report.mesh);
    let groups = group(&story.shardings, mesh);
    // The picture and the rows side by side on a desktop, one above the other on a phone.
    let mut body = String::from("<div class=\"split-view\">");
    if !mesh.is_empty() {
        body += &pictures(&groups.groups, mesh);
    }
    body.push_str("<div class=\"groups\">");
    let (table, count) = rows(&groups);
    let _ = write!(
        body,
        "<p class=\"note\">{}",
        escape(&groups.note(&story.shardings, count))
    );
    body.push_str(".</p>\n");
    body + &table + "</div></div>\n"
}

/// A path that may wrap after its slashes: `params/<wbr>layers/<wbr>*`.
pub fn path(name: &str) -> String {
    escape(name).replace('/', "/<wbr>")
}

/// `["[batch, model]", "16x32"]`.
fn split_cells(value: &ValueSharding) -> [String; 2] {
    let [_, split, local] = value.cells();
    [split, local]
}

/// ` ×2` after a row's name: how many values it stands for.
fn times(count: usize) -> String {
    if count > 1 {
        format!(" <span class=\"count\">&times;{count}</span>")
    } else {
        String::new()
    }
}

/// One row per group, results marked `->`; state split like its parameter is named under the
/// parameter's name, state split otherwise gets a row of its own below it
/// ([`Groups::rows`]). Also returns the number of rows.
fn rows(groups: &Groups) -> (String, usize) {
    let cells = |name: String, [split, local]: [String; 2]| {
        vec![
            name,
            format!("<span class=\"nw\">{}</span>", escape(&split)),
            escape(&local),
        ]
    };
    let rows: Vec<Vec<String>> = (groups.rows().into_iter())
        .map(|row| match row {
            Row::Values { group, alike } => {
                let mut name = format!(
                    "{}{}{}",
                    if group.is_result() { "-&gt; " } else { "" },
                    path(&group.label),
                    times(group.values.len())
                );
                for state in alike {
                    let _ = write!(
                        name,
                        "<span class=\"state\">+ {}</span>",
                        escape(&state.slots.join(", "))
                    );
                }
                cells(name, split_cells(group.first()))
            }
            Row::State(state) => cells(
                format!(
                    "<span class=\"state\">&#8627; {}{}</span>",
                    escape(&state.slots.join(", ")),
                    times(state.count)
                ),
                state.cells(),
            ),
        })
        .collect();
    let header = ["value", "split (axes per dim)", "per device"].map(String::from);
    (table(&header, &rows, &[]), rows.len())
}

/// The mesh picture of one value, a `<select>` to choose it and one hidden `<figure>` per other
/// choice (values split alike share one).
fn pictures(groups: &[Group], mesh: &[AxisSize]) -> String {
    // Each choice: its label and the value drawn (a state split otherwise is a choice too).
    let mut choices: Vec<(String, ValueSharding)> = Vec::new();
    for group in groups {
        let first = group.first();
        choices.push((
            format!(
                "{}{}",
                if group.is_result() { "-> " } else { "" },
                group.label
            ),
            first.clone(),
        ));
        for state in group.state.iter().filter(|state| !group.splits_like(state)) {
            choices.push((
                format!("{} of {}", state.slots.join(", "), group.label),
                ValueSharding {
                    name: format!("{} of {}", state.slots[0], group.label),
                    axes: state.axes.clone(),
                    local_shape: state.local_shape.clone(),
                    is_result: first.is_result,
                },
            ));
        }
    }
    let elements = |value: &ValueSharding| -> i64 { value.global_shape(mesh).iter().product() };
    let parameter = |value: &ValueSharding| !value.is_result && value.name.starts_with("params/");
    let largest = |keep: &dyn Fn(&ValueSharding) -> bool| {
        choices
            .iter()
            .enumerate()
            .filter(|(_, (_, value))| keep(value))
            .max_by_key(|(index, (_, value))| (elements(value), std::cmp::Reverse(*index)))
            .map(|(index, _)| index)
    };
    let chosen = largest(&parameter)
        .or_else(|| largest(&|value: &ValueSharding| !value.is_result))
        .unwrap_or(0);
    // Figures by what they draw: the whole shape and the split.
    let mut drawn: Vec<(Vec<i64>, &Vec<Vec<String>>)> = Vec::new();
    let mut figure_of = Vec::new();
    for (_, value) in &choices {
        let key = (value.global_shape(mesh), &value.axes);
        figure_of.push(match drawn.iter().position(|seen| *seen == key) {
            Some(index) => index,
            None => {
                drawn.push(key);
                drawn.len() - 1
            }
        });
    }
    let mut out = format!(
        "<div class=\"mesh-view\"><p class=\"note\">How a value is split over the {} devices \
         ({}): each block of the value is labelled with the devices holding it.</p>",
        mesh.iter().map(|axis| axis.size).product::<i64>(),
        escape(&numbering(mesh))
    );
    if choices.len() > 1 {
        out.push_str("<label class=\"pick\">value <select id=\"mesh-value\">");
        for (index, (label, _)) in choices.iter().enumerate() {
            let _ = write!(
                out,
                "<option value=\"{}\"{}>{}</option>",
                figure_of[index],
                if index == chosen { " selected" } else { "" },
                escape(label)
            );
        }
        out.push_str("</select></label>\n");
    } else {
        let _ = write!(out, "<p><b>{}</b></p>", escape(&choices[chosen].0));
    }
    for (index, _) in drawn.iter().enumerate() {
        let value = &choices[figure_of.iter().position(|&f| f == index).expect("drawn")].1;
        out += &figure(value, mesh, index, index == figure_of[chosen]);
    }
    if choices.len() > 1 {
        out.push_str(CHOOSE);
    }
    out.push_str("</div>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Report;

    fn value(name: &str, axes: &[&[&str]], local: &[i64], is_result: bool) -> ValueSharding {
        ValueSharding::new(name, is_result, axes, local)
    }

    fn story(shardings: Vec<ValueSharding>) -> PartitionReport {
        let mut story = PartitionReport::default();
        let mesh = AxisSize::mesh(&[("batch", 4), ("model", 2)]);
        story.push(
            "MP",
            "model",
            Report {
                mesh,
                devices: 8,
                ..Report::default()
            },
        );
        story.shardings = shardings;
        story
    }

    #[test]
    fn the_largest_parameter_is_drawn_first_and_others_can_be_chosen() {
        let section = section(&story(vec![
            value("params/layers/0/w", &[&[], &["model"]], &[64, 16], false),
            value("params/layers/1/w", &[&[], &["model"]], &[64, 16], false),
            value("params/embed", &[&["batch"], &[]], &[4, 8], false),
            value(
                "opt/m/layers/0/w",
                &[&["batch"], &["model"]],
                &[16, 16],
                false,
            ),
            value(
                "opt/m/layers/1/w",
                &[&["batch"], &["model"]],
                &[16, 16],
                false,
            ),
            value("tokens", &[&["batch"], &[]], &[2, 128], false),
            value("params/layers/0/w", &[&[], &["model"]], &[64, 16], true),
        ]));
        // Rows: the layers as one, their state (split otherwise) below, then the rest.
        assert!(section.contains(
            "<td>params/<wbr>layers/<wbr>*/<wbr>w <span class=\"count\">&times;2</span></td>"
        ));
        assert!(section.contains(
            "<span class=\"state\">&#8627; opt/m <span class=\"count\">&times;2</span></span>"
        ));
        assert!(section.contains("6 arguments and 1 result in 4 rows"));
        assert!(section.contains("1 result split like the argument of the same name not repeated"));
        // The choices: each row and the state split otherwise; the largest parameter (64x32;
        // tokens is larger but is not a parameter) chosen and shown, the others hidden.
        assert_eq!(section.matches("<option ").count(), 4);
        assert!(section.contains("<option value=\"0\" selected>params/layers/*/w</option>"));
        assert!(section.contains("<option value=\"1\">opt/m of params/layers/*/w</option>"));
        assert_eq!(section.matches("<figure ").count(), 4);
        assert_eq!(section.matches(" hidden>").count(), 3);
        assert!(section.contains("<figure class=\"mesh-pic\" id=\"mesh-0\"><div"));
        assert_eq!(section.matches("<script>").count(), 1);
        // One value: drawn, no choice and no script.
        let alone = super::section(&story(vec![value("x", &[&["batch"]], &[2], false)]));
        assert!(!alone.contains("<select") && !alone.contains("<script"));
        assert!(alone.contains("<p><b>x</b></p>"));
    }
}
