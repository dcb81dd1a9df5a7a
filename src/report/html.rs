//! This file is long because it is one self-contained page: the CSS, the three charts' rows and
//! the tables share the palette, the sets of axes and the escaping helpers below, and its tests
//! build whole stories (docs/architecture.md). The bar charts' drawing is `bar_chart.rs`, the
//! final sharding section `shardings.rs`.
//!
//! The picture of a [`PartitionReport`]: a self-contained HTML page (inline CSS and SVG, one
//! inline script, no network). It opens with the charts: per tactic, the step time (compute,
//! then communication per set of mesh axes), the peak memory against the device's capacity and
//! the bytes sent per set of axes. Then the tables: the per-tactic table, where propagation
//! stopped, the final sharding (one value drawn over the mesh, the rest grouped:
//! [`super::shardings`]), the search, the final program's collectives and top ops; and the
//! device's figures with their sources.
//!
//! The page reads at phone width (390 px) and on a desktop alike: tables wider than the window
//! scroll inside their own box, names of axes and tactics never wrap, and `tests/report_browser.rs`
//! checks both widths in a headless Chromium.

use super::bar_chart::{bar_chart, Scale, Segments};
use super::text::{bytes, flops, seconds};
use crate::sim::{
    report::{stop_reason, PropagationStop, UNPARTITIONED},
    PartitionReport, Report, TacticReport,
};
use std::collections::BTreeSet;
use std::fmt::Write;

const COMPUTE: &str = "#4e79a7";
/// Memory's own color: the time chart's compute blue would read as "compute" here.
const FITS: &str = "#79706e";
const NO_FIT: &str = "#d62728";
const OTHER: &str = "#bab0ac";
/// Colors of the sets of axes, in [`AxisSets`] order (compute's blue and no-fit red left out).
const PALETTE: [&str; 7] = [
    "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7",
];

const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#222;max-width:1040px;margin:24px auto;padding:0 16px}
h1{font-size:22px;margin:0 0 2px;overflow-wrap:anywhere}
h2{font-size:16px;margin:28px 0 6px;padding-bottom:3px;border-bottom:1px solid #ddd}
.sub{color:#555;margin:0 0 12px;overflow-wrap:anywhere}
.headline{font-size:15px;margin:0 0 8px}
.wide{overflow-x:auto;margin:4px 0}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:3px 8px;text-align:left;border-bottom:1px solid #eee;vertical-align:top;overflow-wrap:break-word}
th{background:#f5f6f8;font-weight:600;white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.nw{white-space:nowrap}
.state{display:block;color:#666;font-size:12px}
.count{color:#666;white-space:nowrap}
code{font-size:12px}
.split-view{display:flex;flex-wrap:wrap;gap:4px 28px;align-items:flex-start}
.mesh-view{flex:0 1 400px;min-width:0;margin:4px 0 10px}
.groups{flex:1 1 460px;min-width:0}
.pick{display:block;margin:6px 0}
.pick select{font:inherit;max-width:100%}
.mesh-pic{margin:8px 0}
.mesh-grid{display:grid;width:100%;gap:2px;background:#fff;border:2px solid #555}
.mesh-grid div{display:flex;align-items:center;justify-content:center;text-align:center;font-size:13px;line-height:1.2;padding:2px;overflow:hidden;overflow-wrap:anywhere;font-variant-numeric:tabular-nums;color:#222}
figcaption{color:#555;font-size:13px;margin-top:4px}
.bad{color:#d62728;font-weight:700}
.legend{display:flex;flex-wrap:wrap;gap:2px 18px;font-size:13px;margin:2px 0 4px}
.swatch{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.chart{overflow-x:auto}
svg{display:block;width:100%;height:auto;font-family:inherit}
.chart svg{min-width:640px}
.chart-narrow{display:none}
#tactics th{white-space:normal}
.pipeline-pic{overflow-x:auto}
.pipeline-pic svg{width:auto;height:auto}
@media (max-width:600px){.chart-wide{display:none}.chart-narrow{display:block}.chart-narrow svg{min-width:0}th,td{padding:3px 6px}}
svg text{font-size:13px;fill:#333;font-variant-numeric:tabular-nums}
svg .muted{fill:#888}
svg .labels text{paint-order:stroke;stroke-width:3px;stroke-linejoin:round}
svg .in{fill:#fff;font-weight:600}
svg text.bad{fill:#d62728}
svg .axis text{fill:#666;font-size:11px}
.note{color:#555;font-size:13px}
footer{margin-top:32px;padding-top:8px;border-top:1px solid #ddd;font-size:12px;color:#555;overflow-wrap:anywhere}
footer ul{margin:4px 0;padding-left:18px}
";

/// A self-contained HTML page (one inline script, no network) showing `story`.
pub fn page(story: &PartitionReport) -> String {
    let axes = AxisSets::of(story);
    let last = story.tactics.last();
    let mut page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>partir: {}</title><style>{STYLE}</style></head><body>\n",
        escape(&story.model)
    );
    let _ = writeln!(
        page,
        "<h1>{}</h1>\n<p class=\"sub\">schedule <b>{}</b> &middot; device <b>{}</b> &middot; {}; \
         figures per device</p>",
        super::shardings::path(&story.model),
        super::shardings::path(&story.schedule),
        escape(&story.device),
        escape(
            &last
                .map(|tactic| mesh(&tactic.report))
                .unwrap_or_else(|| "no mesh".into())
        )
    );
    match last {
        None => page.push_str("<p class=\"note\">No tactics were reported.</p>\n"),
        Some(last) => {
            page.push_str(&headline(last));
            // The charts first: what a reader looks for; the tables after them.
            section(
                &mut page,
                "Step time",
                &(legend(&axes, true) + &time_chart(story, &axes)),
            );
            section(&mut page, "Peak memory", &memory_chart(story));
            section(&mut page, "Bytes sent", &communication_chart(story, &axes));
            section(&mut page, "Tactics", &tactic_table(story));
            if let Some(schedule) = super::pipeline_picture::section(&last.report) {
                section(&mut page, "Pipeline schedule", &schedule);
            }
            if let Some(stops) = stops_table(story) {
                section(&mut page, "Where propagation stopped", &stops);
            }
            if !story.shardings.is_empty() {
                section(
                    &mut page,
                    "Final sharding",
                    &super::shardings::section(story),
                );
            }
            if let Some(search) = super::search::section(story) {
                section(&mut page, "Automatic search", &search);
            }
            let (after, last) = (&last.tactic, &last.report);
            section(
                &mut page,
                &format!("Collectives after {after}"),
                &collectives_table(last, &axes),
            );
            section(
                &mut page,
                &format!("Top ops after {after}"),
                &ops_table(last),
            );
            if !last.notes.is_empty() {
                let notes: String = last
                    .notes
                    .iter()
                    .map(|note| format!("<li>{}</li>", escape(note)))
                    .collect();
                section(
                    &mut page,
                    "Notes",
                    &format!("<ul class=\"note\">{notes}</ul>"),
                );
            }
        }
    }
    page.push_str(&footer(story, last.map(|tactic| &tactic.report)));
    page.push_str("</body></html>\n");
    page
}

/// `mesh batch=4 model=2 (8 devices)`.
fn mesh(report: &Report) -> String {
    let plural = if report.devices == 1 { "" } else { "s" };
    if report.mesh.is_empty() {
        return format!("no mesh ({} device{plural})", report.devices);
    }
    let axes: Vec<String> = report
        .mesh
        .iter()
        .map(|axis| format!("{}={}", axis.name, axis.size))
        .collect();
    format!(
        "mesh {} ({} device{plural})",
        axes.join(" "),
        report.devices
    )
}

/// `after BP+MP+Z3: step time 127.9 us (compute 9.0 us, communication 118.9 us); peak memory
/// 776.50 KiB of 32.00 GiB per device`: the answer before the charts that explain it.
fn headline(last: &TacticReport) -> String {
    let totals = &last.report.totals;
    let mut capacity = String::new();
    if totals.memory_capacity_bytes > 0.0 {
        capacity = format!(" of {}", bytes(totals.memory_capacity_bytes));
    }
    format!(
        "<p class=\"headline\">{}: step time <b>{}</b> (compute {}, communication {}); \
         peak memory <b{}>{}</b>{capacity}{}.</p>\n",
        if last.tactic == UNPARTITIONED {
            "Unpartitioned".to_string()
        } else {
            format!("After {}", escape(&last.tactic))
        },
        escape(&seconds(totals.step_seconds)),
        escape(&seconds(totals.compute_seconds)),
        escape(&seconds(totals.communication_seconds)),
        if totals.fits { "" } else { " class=\"bad\"" },
        escape(&bytes(totals.peak_memory_bytes)),
        if totals.fits { "" } else { ": does not fit" },
    )
}

/// A titled section; its id is the title's first word in lower case (`#tactics`, `#step`).
fn section(page: &mut String, title: &str, body: &str) {
    let id: String = title
        .split_whitespace()
        .next()
        .unwrap_or("section")
        .to_lowercase();
    let _ = writeln!(
        page,
        "<section id=\"{}\"><h2>{}</h2>\n{body}</section>",
        escape(&id),
        escape(title)
    );
}

/// The sets of mesh axes any tactic communicates over, each with its color: smaller sets
/// first, so single axes keep their colors whatever else appears.
struct AxisSets(Vec<Vec<String>>);

impl AxisSets {
    fn of(story: &PartitionReport) -> Self {
        let sets: BTreeSet<(usize, Vec<String>)> = story
            .tactics
            .iter()
            .flat_map(|tactic| &tactic.report.communication)
            .map(|axis| (axis.axes.len(), axis.axes.clone()))
            .collect();
        Self(sets.into_iter().map(|(_, axes)| axes).collect())
    }

    fn color(&self, axes: &[String]) -> &'static str {
        match self.0.iter().position(|set| set == axes) {
            Some(index) => PALETTE[index % PALETTE.len()],
            None => OTHER,
        }
    }
}

fn axes_label(axes: &[String]) -> String {
    if axes.is_empty() {
        "no axes".into()
    } else {
        axes.join("+")
    }
}

fn swatch(color: &str) -> String {
    format!("<span class=\"swatch\" style=\"background:{color}\"></span>")
}

fn legend(axes: &AxisSets, compute: bool) -> String {
    let mut out = String::from("<div class=\"legend\">");
    if compute {
        let _ = write!(out, "<span>{}compute</span>", swatch(COMPUTE));
    }
    for set in &axes.0 {
        let _ = write!(
            out,
            "<span>{}communication over {}</span>",
            swatch(axes.color(set)),
            escape(&axes_label(set))
        );
    }
    out.push_str("</div>\n");
    out
}

/// Step time: compute, then communication per set of axes (and any the sets do not cover).
fn time_chart(story: &PartitionReport, axes: &AxisSets) -> String {
    let largest = story
        .tactics
        .iter()
        .map(|tactic| tactic.report.totals.step_seconds)
        .fold(0.0, f64::max);
    let scale = Scale::new(largest, false);
    bar_chart(
        story,
        &scale,
        seconds,
        |tactic| {
            let report = &tactic.report;
            let totals = &report.totals;
            let mut segments: Segments = vec![(
                totals.compute_seconds,
                COMPUTE,
                format!(
                    "{}: compute {}",
                    tactic.tactic,
                    seconds(totals.compute_seconds)
                ),
            )];
            for set in &axes.0 {
                if let Some(axis) = report.communication.iter().find(|c| &c.axes == set) {
                    segments.push((
                        axis.seconds,
                        axes.color(set),
                        format!(
                            "{}: {} collective{} over {}, {}",
                            tactic.tactic,
                            axis.count,
                            if axis.count == 1 { "" } else { "s" },
                            axes_label(set),
                            seconds(axis.seconds)
                        ),
                    ));
                }
            }
            let covered: f64 = report.communication.iter().map(|c| c.seconds).sum();
            let rest = totals.communication_seconds - covered;
            if rest > 1e-9 * totals.step_seconds.max(f64::MIN_POSITIVE) {
                segments.push((
                    rest,
                    OTHER,
                    format!("{}: other communication {}", tactic.tactic, seconds(rest)),
                ));
            }
            (segments, seconds(totals.step_seconds), false)
        },
        |_| String::new(),
    )
}

/// Peak memory against the capacity: a dashed line at the capacity, red bars above it.
fn memory_chart(story: &PartitionReport) -> String {
    let capacity = |tactic: &TacticReport| tactic.report.totals.memory_capacity_bytes;
    let largest_peak = story
        .tactics
        .iter()
        .map(|tactic| tactic.report.totals.peak_memory_bytes)
        .fold(0.0, f64::max);
    let smallest_capacity = story
        .tactics
        .iter()
        .map(capacity)
        .filter(|capacity| *capacity > 0.0)
        .fold(f64::INFINITY, f64::min);
    // Peaks far below the capacity would be slivers: scale to the peaks and say where the
    // capacity is instead of drawing it.
    let zoomed = largest_peak > 0.0 && largest_peak * 10.0 < smallest_capacity;
    let largest = if zoomed {
        largest_peak
    } else {
        largest_peak.max(story.tactics.iter().map(capacity).fold(0.0, f64::max))
    };
    let scale = Scale::new(largest, true);
    bar_chart(
        story,
        &scale,
        bytes,
        |tactic| {
            let totals = &tactic.report.totals;
            let peak = totals.peak_memory_bytes;
            let share = match 100.0 * peak / totals.memory_capacity_bytes {
                share if !share.is_finite() || share == 0.0 => String::new(),
                share if share < 1.0 => " (<1%)".into(),
                share => format!(" ({share:.0}%)"),
            };
            let mut label = format!("{}{share}", bytes(peak));
            if !totals.fits {
                label.push_str(" DOES NOT FIT");
            }
            let mut title = format!("{}: peak {}", tactic.tactic, bytes(peak));
            if !tactic.report.memory.peak_at.is_empty() {
                let _ = write!(title, " at {}", tactic.report.memory.peak_at);
            }
            let color = if totals.fits { FITS } else { NO_FIT };
            (vec![(peak, color, title)], label, !totals.fits)
        },
        |layout| {
            let mut lines = String::new();
            // The note goes above the first row.
            let note_y = layout.row_top(0) - layout.gap / 2.0 - 2.0;
            if zoomed {
                let share = 100.0 * largest_peak / smallest_capacity;
                let capacity = escape(&bytes(smallest_capacity));
                let _ = if layout.above {
                    write!(
                        lines,
                        "<text x=\"{:.1}\" y=\"{note_y:.1}\">the largest peak uses {share:.2}% \
                         of {capacity}</text>",
                        layout.x0,
                    )
                } else {
                    write!(
                        lines,
                        "<text x=\"{:.1}\" y=\"{note_y:.1}\" text-anchor=\"end\">capacity \
                         {capacity} is off this scale: the largest peak uses {share:.2}% of it</text>",
                        layout.x(&scale, largest_peak),
                    )
                };
                return lines;
            }
            for (index, tactic) in story.tactics.iter().enumerate() {
                let capacity = capacity(tactic);
                if capacity <= 0.0 {
                    continue;
                }
                let x = layout.x(&scale, capacity);
                let y = layout.bar_top(index);
                let _ = write!(
                    lines,
                    "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#222\" \
                     stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>",
                    y - layout.gap / 2.0,
                    y + layout.bar + layout.gap / 2.0
                );
                if index == 0 {
                    let _ = write!(
                        lines,
                        "<text x=\"{:.1}\" y=\"{note_y:.1}\" text-anchor=\"end\">capacity {}</text>",
                        x - 4.0,
                        escape(&bytes(capacity))
                    );
                }
            }
            lines
        },
    )
}

/// Bytes each device sends per set of axes.
fn communication_chart(story: &PartitionReport, axes: &AxisSets) -> String {
    let sent = |tactic: &TacticReport| -> f64 {
        tactic
            .report
            .communication
            .iter()
            .map(|c| c.traffic_bytes)
            .sum()
    };
    let largest = story.tactics.iter().map(sent).fold(0.0, f64::max);
    if largest <= 0.0 {
        return "<p class=\"note\">No communication: no program sends anything.</p>\n".into();
    }
    let chart = bar_chart(
        story,
        &Scale::new(largest, true),
        bytes,
        |tactic| {
            let mut segments: Segments = Vec::new();
            let mut count = 0;
            for set in &axes.0 {
                if let Some(axis) = tactic.report.communication.iter().find(|c| &c.axes == set) {
                    count += axis.count;
                    segments.push((
                        axis.traffic_bytes,
                        axes.color(set),
                        format!(
                            "{}: {} sent over {} ({} in buffers, {} collective{})",
                            tactic.tactic,
                            bytes(axis.traffic_bytes),
                            axes_label(set),
                            bytes(axis.bytes),
                            axis.count,
                            if axis.count == 1 { "" } else { "s" }
                        ),
                    ));
                }
            }
            let total = sent(tactic);
            let label = if count == 0 {
                "none".into()
            } else {
                format!(
                    "{} in {count} collective{}",
                    bytes(total),
                    if count == 1 { "" } else { "s" }
                )
            };
            (segments, label, false)
        },
        |_| String::new(),
    );
    legend(axes, false) + &chart
}

/// An HTML table of already-escaped cells; columns in `numeric` are right-aligned. A table
/// wider than the window scrolls in its own box, not the page.
pub(super) fn table(header: &[String], rows: &[Vec<String>], numeric: &[usize]) -> String {
    table_with(header, rows, numeric, &[])
}

/// [`table`], with the columns in `nowrap` never wrapped (names of tactics and axes).
fn table_with(
    header: &[String],
    rows: &[Vec<String>],
    numeric: &[usize],
    nowrap: &[usize],
) -> String {
    let class = |column: usize| {
        if numeric.contains(&column) {
            " class=\"num\""
        } else if nowrap.contains(&column) {
            " class=\"nw\""
        } else {
            ""
        }
    };
    let mut out = String::from("<div class=\"wide\"><table><tr>");
    for (column, cell) in header.iter().enumerate() {
        let _ = write!(out, "<th{}>{}</th>", class(column), escape(cell));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for (column, cell) in row.iter().enumerate() {
            let _ = write!(out, "<td{}>{cell}</td>", class(column));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    out
}

fn tactic_table(story: &PartitionReport) -> String {
    let pipelined = story.pipelined();
    let rows: Vec<Vec<String>> = story
        .tactics
        .iter()
        .map(|tactic| {
            let mut cells: Vec<String> = PartitionReport::cells(tactic)
                .iter()
                .map(|cell| escape(cell))
                .collect();
            if !tactic.report.totals.fits {
                if let Some(fits) = cells.last_mut() {
                    *fits = format!("<span class=\"bad\">{fits}</span>");
                }
            }
            // What propagation did: ops partitioned and conflicts, after the axis.
            let (partitioned, conflicts) = match &tactic.propagation {
                Some(propagation) => (
                    propagation.ops_partitioned.to_string(),
                    propagation.conflicts.to_string(),
                ),
                None => ("-".into(), "-".into()),
            };
            cells.splice(2..2, [partitioned, conflicts]);
            if pipelined {
                // The largest bubble; all of them (per loop, with ticks) on hover: the full
                // text wrapped the column and made the table scroll on a desktop.
                let pipelines = &tactic.report.pipelines;
                cells.push(match pipelines.iter().map(|p| p.bubble).reduce(f64::max) {
                    Some(largest) => format!(
                        "<span title=\"{}\">{:.1}%</span>",
                        escape(&super::text::bubble(pipelines)),
                        100.0 * largest
                    ),
                    None => "-".into(),
                });
            }
            cells
        })
        .collect();
    let mut header = PartitionReport::header();
    header.splice(2..2, ["ops partitioned".into(), "conflicts".into()]);
    if pipelined {
        header.push("bubble".into());
    }
    table_with(&header, &rows, &[2, 3, 5, 6, 7, 8, 9], &[0, 1, 10, 11])
}

/// Per tactic, each reason propagation stopped for (once, with how many places), explained at
/// its first place: which value, dim and size, and what it costs. None when nothing stopped.
fn stops_table(story: &PartitionReport) -> Option<String> {
    let mut rows = Vec::new();
    for tactic in &story.tactics {
        let Some(propagation) = &tactic.propagation else {
            continue;
        };
        let mut groups: Vec<(&str, &PropagationStop, usize)> = Vec::new();
        for stop in &propagation.stops {
            let reason = stop_reason(&stop.message);
            match groups.iter_mut().find(|(first, _, _)| *first == reason) {
                Some((_, _, count)) => *count += 1,
                None => groups.push((reason, stop, 1)),
            }
        }
        for (_, stop, count) in groups {
            rows.push(vec![
                escape(&tactic.tactic),
                escape(&stop.location),
                escape(&stop.message),
                count.to_string(),
            ]);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let header = ["tactic", "at", "why, and what it costs", "places"].map(String::from);
    Some(table(&header, &rows, &[3]))
}

fn collectives_table(report: &Report, axes: &AxisSets) -> String {
    if report.collectives.is_empty() {
        return "<p class=\"note\">None.</p>\n".into();
    }
    let header = ["kind", "axes", "count", "bytes", "sent", "time"].map(String::from);
    let rows: Vec<Vec<String>> = report
        .collectives
        .iter()
        .map(|row| {
            vec![
                escape(&row.label()),
                format!(
                    "{}{}",
                    swatch(axes.color(&row.axes)),
                    escape(&axes_label(&row.axes))
                ),
                row.count.to_string(),
                escape(&bytes(row.bytes)),
                escape(&bytes(row.traffic_bytes)),
                escape(&seconds(row.seconds)),
            ]
        })
        .collect();
    table(&header, &rows, &[2, 3, 4, 5])
        + "<p class=\"note\"><b>bytes</b>: the buffer each device hands to the collective (an \
           all_gather's gathered result; a combined all_reduce's operands together). <b>sent</b>: what \
           each device puts on the wire with ring algorithms, (n&minus;1)/n of the buffer over n \
           devices, twice for an all_reduce.</p>\n"
}

fn ops_table(report: &Report) -> String {
    if report.top_ops.is_empty() {
        return "<p class=\"note\">None.</p>\n".into();
    }
    let header = ["op", "time", "bound", "flops", "bytes", "at"].map(String::from);
    let rows: Vec<Vec<String>> = report
        .top_ops
        .iter()
        .map(|op| {
            vec![
                escape(&op.label()),
                escape(&seconds(op.seconds)),
                format!("{:?}", op.bound).to_lowercase(),
                escape(&flops(op.flops)),
                escape(&bytes(op.bytes)),
                escape(&op.location),
            ]
        })
        .collect();
    table(&header, &rows, &[1, 3, 4])
}

/// The device's figures and where they come from.
fn footer(story: &PartitionReport, last: Option<&Report>) -> String {
    let Some(report) = last else {
        return format!("<footer>device {}</footer>\n", escape(&story.device));
    };
    let device = &report.device;
    let figures = format!(
        "{}: matrix {}/s, vector {}/s, memory {} at {:.0} GB/s, link {:.0} GB/s with {} latency",
        device.name,
        flops(device.matrix_flops),
        flops(device.vector_flops),
        bytes(device.memory_bytes),
        device.memory_bandwidth / 1e9,
        device.link_bandwidth / 1e9,
        seconds(device.link_latency)
    );
    let sources: String = device
        .sources
        .iter()
        .map(|source| format!("<li>{}</li>", escape(source)))
        .collect();
    format!(
        "<footer>Device {}. Step time = compute + communication (no overlap).\
         <ul>{sources}</ul></footer>\n",
        escape(&figures)
    )
}

pub(super) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::bar_chart::MIN_BAR;
    use crate::sim::report::{
        AxisCommunication, AxisSize, CollectiveRow, DeviceSummary, Memory, OpRow, Totals,
    };
    use crate::sim::{device, Bound, CollectiveKind};

    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

    fn communication(axes: &[&str], count: usize, traffic: f64, seconds: f64) -> AxisCommunication {
        AxisCommunication {
            axes: axes.iter().map(|axis| axis.to_string()).collect(),
            count,
            bytes: traffic * 4.0 / 3.0,
            traffic_bytes: traffic,
            seconds,
        }
    }

    /// A report on tpu-v3 over batch=4 model=2 (8 devices unless `mesh` is false).
    fn report(
        compute: f64,
        peak_gib: f64,
        communication: Vec<AxisCommunication>,
        mesh: bool,
    ) -> Report {
        let device = device::preset("tpu-v3").unwrap();
        let communication_seconds = communication.iter().map(|c| c.seconds).sum::<f64>();
        let mesh: Vec<AxisSize> = if mesh {
            AxisSize::mesh(&[("batch", 4), ("model", 2)])
        } else {
            Vec::new()
        };
        let collectives = communication
            .iter()
            .map(|c| CollectiveRow {
                kind: if c.axes.len() > 1 {
                    CollectiveKind::AllGather
                } else {
                    CollectiveKind::AllReduce
                },
                reduction: (c.axes.len() == 1).then(|| "sum".to_string()),
                axes: c.axes.clone(),
                count: c.count,
                bytes: c.bytes,
                traffic_bytes: c.traffic_bytes,
                seconds: c.seconds,
            })
            .collect();
        Report {
            device: DeviceSummary::of(&device),
            devices: mesh.iter().map(|axis| axis.size).product(),
            mesh,
            totals: Totals {
                flops: compute * 100e12,
                compute_seconds: compute,
                communication_seconds,
                step_seconds: compute + communication_seconds,
                peak_memory_bytes: peak_gib * GIB,
                memory_capacity_bytes: device.memory_bytes,
                fits: peak_gib * GIB <= device.memory_bytes,
                ..Totals::default()
            },
            memory: Memory {
                peak_bytes: peak_gib * GIB,
                peak_at: "stablehlo.dot_general at model.mlir:12:5".into(),
                ..Memory::default()
            },
            communication,
            collectives,
            top_ops: vec![OpRow {
                op: "stablehlo.dot_general".into(),
                count: 1,
                location: "model.mlir:12:5".into(),
                flops: 3e12,
                bytes: 2.0 * GIB,
                seconds: compute / 3.0,
                bound: Bound::Compute,
            }],
            notes: Vec::new(),
            pipelines: Vec::new(),
        }
    }

    /// unpartitioned, BP, MP, Z3 on batch=4 model=2; the unpartitioned program does not fit.
    fn story(model: &str) -> PartitionReport {
        let mut story = PartitionReport {
            model: model.into(),
            schedule: "BP+MP+Z3".into(),
            device: "tpu-v3".into(),
            ..PartitionReport::default()
        };
        story.push("(unpartitioned)", "", report(0.040, 41.5, vec![], true));
        story.push(
            "BP",
            "batch",
            report(
                0.010,
                12.0,
                vec![communication(&["batch"], 24, 1.5 * GIB, 0.0042)],
                true,
            ),
        );
        story.push(
            "MP",
            "model",
            report(
                0.005,
                6.5,
                vec![
                    communication(&["batch"], 24, 0.75 * GIB, 0.0021),
                    communication(&["model"], 48, 0.5 * GIB, 0.0035),
                ],
                true,
            ),
        );
        story.push(
            "Z3",
            "batch",
            report(
                0.005,
                2.25,
                vec![
                    communication(&["batch"], 60, 1.1 * GIB, 0.0032),
                    communication(&["model"], 48, 0.5 * GIB, 0.0035),
                    communication(&["batch", "model"], 1, 4096.0, 2e-6),
                ],
                true,
            ),
        );
        story
    }

    /// Every tag in `tags` is closed as often as it is opened.
    fn assert_balanced(page: &str) {
        for tag in [
            "svg",
            "g",
            "text",
            "tspan",
            "title",
            "rect",
            "table",
            "tr",
            "td",
            "th",
            "section",
            "ul",
            "li",
            "span",
            "footer",
            "p",
            "h1",
            "h2",
            "div",
            "style",
            "html",
            "body",
            "figure",
            "figcaption",
            "select",
            "option",
            "label",
            "script",
            "code",
        ] {
            let opened = page.matches(&format!("<{tag} ")).count()
                + page.matches(&format!("<{tag}>")).count();
            let closed = page.matches(&format!("</{tag}>")).count();
            assert_eq!(opened, closed, "<{tag}> opened {opened}, closed {closed}");
        }
        for bad in ["NaN", "\"inf", "\"-inf", ">inf"] {
            assert!(!page.contains(bad), "{bad} in {page}");
        }
    }

    #[test]
    fn the_page_is_well_formed_and_escapes_names() {
        let page = super::page(&story("<script>alert(1)</script> & \"co\""));
        assert_balanced(&page);
        assert!(!page.contains("<script>alert"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;co&quot;"));
        assert!(page.contains("mesh batch=4 model=2 (8 devices)"));
        for outside in ["src=", "href=", "url(", "import("] {
            assert!(!page.contains(outside), "self-contained: {outside}");
        }
        assert!(
            page.contains("Jouppi"),
            "the device's sources are in the footer"
        );
    }

    #[test]
    fn one_bar_per_tactic_in_each_chart() {
        let story = story("mlp");
        let page = super::page(&story);
        // Each chart twice: wide, and narrow for phones.
        assert_eq!(page.matches("<svg").count(), 6);
        assert_eq!(
            page.matches("<div class=\"chart chart-narrow\">").count(),
            3
        );
        assert_eq!(
            page.matches("<g class=\"bar\">").count(),
            6 * story.tactics.len()
        );
        for tactic in &story.tactics {
            let step = seconds(tactic.report.totals.step_seconds);
            assert!(page.contains(&format!(">{step}</text>")), "{step}");
        }
        for axes in [
            "communication over batch<",
            "over model<",
            "over batch+model<",
        ] {
            assert!(page.contains(axes), "legend {axes}");
        }
    }

    #[test]
    fn bars_are_labelled_by_every_tactic_so_far() {
        let page = super::page(&story("mlp"));
        // Each bar is the program after all tactics so far, not after one tactic alone.
        for label in [
            ">(unpartitioned)<",
            ">after BP<",
            ">after BP+MP<",
            ">after BP+MP+Z3<",
        ] {
            assert!(page.contains(label), "no {label} in the page");
        }
        assert!(page.contains("<title>after BP (batch), MP (model)</title>"));
        // Memory has its own color, not compute's; charts scroll rather than shrink their
        // text; the collectives table says what bytes and sent are.
        assert!(page.contains(&format!("fill=\"{FITS}\"")) && FITS != COMPUTE);
        assert!(page.contains("<div class=\"chart chart-wide\"><svg"));
        assert!(page.contains("<b>bytes</b>: the buffer each device hands"));
    }

    #[test]
    fn a_program_that_does_not_fit_is_red() {
        let page = super::page(&story("mlp"));
        assert_eq!(page.matches("DOES NOT FIT").count(), 2);
        assert!(page.contains(&format!("fill=\"{NO_FIT}\"")));
        assert!(page.contains("<span class=\"bad\">NO</span>"));
        let mut fitting = story("mlp");
        fitting.tactics.remove(0);
        let page = super::page(&fitting);
        assert!(!page.contains("DOES NOT FIT"));
        assert!(!page.contains(&format!("fill=\"{NO_FIT}\"")));
    }

    #[test]
    fn tiny_bars_stay_visible() {
        let page = super::page(&story("mlp"));
        // The 2 us over batch+model next to milliseconds.
        assert!(page.contains(&format!("width=\"{MIN_BAR:.1}\"")), "{page}");
        for rect in page.split("<rect ").skip(1) {
            let width = &rect[rect.find(" width=\"").unwrap() + 8..];
            let width: f64 = width[..width.find('"').unwrap()].parse().unwrap();
            assert!(width >= MIN_BAR, "{width}");
        }
    }

    #[test]
    fn edge_cases_draw_without_gaps() {
        // One tactic, no mesh, no communication.
        let mut alone = PartitionReport {
            model: "m".into(),
            ..PartitionReport::default()
        };
        alone.push("(unpartitioned)", "", report(0.001, 1.0, vec![], false));
        let page = super::page(&alone);
        assert_balanced(&page);
        assert!(page.contains("no mesh (1 device)"));
        assert!(page.contains("<p class=\"headline\">Unpartitioned: step time"));
        assert!(page.contains("No communication"));
        assert_eq!(page.matches("<g class=\"bar\">").count(), 4);
        // Nothing at all.
        let page = super::page(&PartitionReport::default());
        assert_balanced(&page);
        assert!(page.contains("No tactics"));
        // All zero.
        let mut zero = PartitionReport::default();
        zero.push("(unpartitioned)", "", Report::default());
        assert_balanced(&super::page(&zero));
    }

    /// Writes /tmp/partir-picture.html to look at.
    #[test]
    #[ignore]
    fn write_example() {
        std::fs::write("/tmp/partir-picture.html", page(&story("transformer"))).unwrap();
        let mut alone = PartitionReport {
            model: "<one> & only".into(),
            schedule: "(none)".into(),
            device: "tpu-v3".into(),
            ..PartitionReport::default()
        };
        alone.push("(unpartitioned)", "", report(0.001, 0.01, vec![], false));
        std::fs::write("/tmp/partir-picture-edge.html", page(&alone)).unwrap();
    }
}
