//! The picture's bar charts: one row per tactic, stacked segments on a linear scale from zero,
//! each drawn twice: wide (the tactic's label left of its bar, the figure after the bar's end)
//! and narrow for phones (label and figure on a line above a bar as wide as the screen). The
//! page's CSS shows one of the two by the window's width, so text keeps its reading size.
//!
//! Why the SVG is written here rather than by a plotting crate, measured: plotters 0.3 with
//! only its `svg_backend` (8 crates, about 3 s cold build) was tried on the time chart (five
//! tactic rows, three stacked segments, end labels; 6.5 KB of SVG). It draws bars and labels,
//! but it cannot attach a `<title>` tooltip to an element (0 in its output), sets text size and
//! fill per element instead of the page's CSS, and places labels in data coordinates without
//! knowing whether they fit inside a bar. This page's exact per-segment figures live in those
//! tooltips (a communication segment can be drawn at [`MIN_BAR`] pixels) and in-bar labels.
//!
//! A non-zero bar or segment is never drawn narrower than [`MIN_BAR`] so that huge ratios stay
//! visible; the exact figure is written next to the bar and in its tooltip.

use super::html::escape;
use crate::sim::{report::UNPARTITIONED, PartitionReport, TacticReport};
use std::fmt::Write;

/// The narrowest a non-zero bar or segment is drawn.
pub const MIN_BAR: f64 = 2.0;
/// A rough width of one character of 13px text, to decide where a label fits.
const CHAR: f64 = 7.6;
const CHAR_BOLD: f64 = 8.4;
/// Room below the rows, for the scale.
const AXIS: f64 = 26.0;

/// Where a chart's parts go, in its own coordinates (the chart scales with the page).
pub struct Layout {
    /// `chart-wide` or `chart-narrow`: the class the page's CSS shows by window width.
    pub class: &'static str,
    pub width: f64,
    /// Where bars start and where the scale ends.
    pub x0: f64,
    pub x1: f64,
    /// Whether the tactic's label and figure go on a line above its bar.
    pub above: bool,
    pub bar: f64,
    pub gap: f64,
    /// Room above the first row, for a note on the scale.
    pub top: f64,
}

/// Labels left of the bars and figures after them: desktops and tablets.
pub const WIDE: Layout = Layout {
    class: "chart-wide",
    width: 900.0,
    x0: 170.0,
    x1: 780.0,
    above: false,
    bar: 22.0,
    gap: 10.0,
    top: 18.0,
};

/// Labels and figures above bars as wide as the chart: phones (drawn about 1:1 at 360 px).
pub const NARROW: Layout = Layout {
    class: "chart-narrow",
    width: 360.0,
    x0: 2.0,
    x1: 336.0,
    above: true,
    bar: 16.0,
    gap: 9.0,
    top: 24.0,
};

/// The height of the label line above a bar in [`NARROW`].
const LABEL: f64 = 17.0;

impl Layout {
    /// The top of row `index` (its label line when labels go above).
    pub fn row_top(&self, index: usize) -> f64 {
        let pitch = self.bar + self.gap + if self.above { LABEL } else { 0.0 };
        self.top + index as f64 * pitch
    }

    /// The top of row `index`'s bar.
    pub fn bar_top(&self, index: usize) -> f64 {
        self.row_top(index) + if self.above { LABEL } else { 0.0 }
    }

    /// Where a value falls on `scale`.
    pub fn x(&self, scale: &Scale, value: f64) -> f64 {
        self.x0 + (self.x1 - self.x0) * value / scale.max
    }

    /// The drawn width of a bar of `value`: at least [`MIN_BAR`] when positive.
    fn bar_width(&self, scale: &Scale, value: f64) -> f64 {
        if value > 0.0 {
            ((self.x1 - self.x0) * value / scale.max).max(MIN_BAR)
        } else {
            0.0
        }
    }
}

/// A linear scale from zero to a round number at or above the largest value, with round ticks
/// (1, 2 or 5 times a power of ten; of 1024 for bytes).
pub struct Scale {
    pub max: f64,
    pub step: f64,
}

impl Scale {
    pub fn new(largest: f64, binary: bool) -> Self {
        if !(largest.is_finite() && largest > 0.0) {
            return Self {
                max: 1.0,
                step: 1.0,
            };
        }
        let unit = if binary {
            1024f64.powi((largest.log2() / 10.0).floor().max(0.0) as i32)
        } else {
            1.0
        };
        let raw = largest / unit / 5.0;
        let magnitude = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .into_iter()
            .map(|m| m * magnitude)
            .find(|step| *step >= raw * (1.0 - 1e-9))
            .unwrap_or(10.0 * magnitude)
            * unit;
        Self {
            max: (largest / step - 1e-9).ceil().max(1.0) * step,
            step,
        }
    }

    pub fn ticks(&self) -> impl Iterator<Item = f64> + '_ {
        let count = (self.max / self.step).round() as usize;
        (0..=count).map(move |i| i as f64 * self.step)
    }
}

/// One bar's segments: value, color and tooltip.
pub type Segments = Vec<(f64, &'static str, String)>;

/// One row per tactic: its label, stacked segments and figure, in both layouts. `overlay` draws
/// over the bars (a capacity line) in a layout.
pub fn bar_chart(
    story: &PartitionReport,
    scale: &Scale,
    tick_label: fn(f64) -> String,
    row: impl Fn(&TacticReport) -> (Segments, String, bool),
    overlay: impl Fn(&Layout) -> String,
) -> String {
    [WIDE, NARROW]
        .iter()
        .map(|layout| drawn(story, layout, scale, tick_label, &row, &overlay))
        .collect()
}

/// The chart in one layout: a `<div>` holding its `<svg>`.
fn drawn(
    story: &PartitionReport,
    layout: &Layout,
    scale: &Scale,
    tick_label: fn(f64) -> String,
    row: &impl Fn(&TacticReport) -> (Segments, String, bool),
    overlay: &impl Fn(&Layout) -> String,
) -> String {
    let rows_end = layout.row_top(story.tactics.len()) - layout.gap;
    let height = rows_end + AXIS;
    let width = layout.width;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" \
         role=\"img\">\n<g class=\"axis\">"
    );
    for tick in scale.ticks() {
        let x = layout.x(scale, tick);
        let _ = write!(
            svg,
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#e4e4e4\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"{}\">{}</text>",
            layout.top - 6.0,
            rows_end + 2.0,
            rows_end + 16.0,
            if x <= layout.x0 && layout.above {
                "start"
            } else {
                "middle"
            },
            escape(&round_label(&tick_label(tick)))
        );
    }
    let _ = writeln!(
        svg,
        "<line x1=\"{}\" y1=\"{:.1}\" x2=\"{}\" y2=\"{:.1}\" stroke=\"#999\"/></g>",
        layout.x0,
        rows_end + 2.0,
        layout.x1,
        rows_end + 2.0
    );
    // Figures go over the overlay (a capacity line), so they come last.
    let mut labels = String::from("<g class=\"labels\">");
    for (index, tactic) in story.tactics.iter().enumerate() {
        let y = layout.bar_top(index);
        let (segments, label, bad) = row(tactic);
        let room = if layout.above {
            // The label shares its line with the figure.
            ((layout.width - figure_width(&label, bad) - 12.0) / CHAR) as usize
        } else {
            24
        };
        let _ = write!(
            svg,
            "<g class=\"bar\">{}",
            row_label(story, index, layout, room)
        );
        let mut x = layout.x0;
        let mut last = "#fff";
        for (value, color, title) in segments {
            let width = layout.bar_width(scale, value);
            if width > 0.0 {
                let _ = write!(
                    svg,
                    "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"{}\" \
                     fill=\"{color}\"><title>{}</title></rect>",
                    layout.bar,
                    escape(&title)
                );
                last = color;
            }
            x += width;
        }
        svg.push_str("</g>\n");
        labels.push_str(&end_label(layout, index, x, &label, bad, last));
    }
    svg.push_str(&overlay(layout));
    svg.push_str(&labels);
    svg.push_str("</g>\n</svg>\n");
    // A window narrower than the wide chart's minimum scrolls it rather than shrink its text.
    format!("<div class=\"chart {}\">{svg}</div>\n", layout.class)
}

/// `10 ms` for `10.00 ms`: ticks are round numbers.
fn round_label(label: &str) -> String {
    match label.split_once(' ') {
        Some((number, unit)) if number.contains('.') => {
            format!(
                "{} {unit}",
                number.trim_end_matches('0').trim_end_matches('.')
            )
        }
        _ => label.to_string(),
    }
}

/// What a bar shows: the program after every tactic so far (bars are cumulative), so the row
/// reads `after BP+MP` with the last tactic's axis in grey, in at most `room` characters; the
/// tooltip lists each tactic with its axis.
fn row_label(story: &PartitionReport, index: usize, layout: &Layout, room: usize) -> String {
    let tactic = &story.tactics[index];
    let applied: Vec<&TacticReport> = story.tactics[..=index]
        .iter()
        .filter(|tactic| tactic.tactic != UNPARTITIONED)
        .collect();
    let (name, title) = if applied.is_empty() {
        (tactic.tactic.clone(), tactic.tactic.clone())
    } else {
        let names: Vec<&str> = applied.iter().map(|t| t.tactic.as_str()).collect();
        let steps: Vec<String> = applied
            .iter()
            .map(|t| format!("{} ({})", t.tactic, t.axis))
            .collect();
        (
            format!("after {}", names.join("+")),
            format!("after {}", steps.join(", ")),
        )
    };
    let name = shorten(&name, 20.min(room.max(8)));
    let axis = shorten(&tactic.axis, room.saturating_sub(name.chars().count()));
    let (x, y, anchor) = if layout.above {
        (layout.x0, layout.row_top(index) + 12.0, "start")
    } else {
        (
            layout.x0 - 8.0,
            layout.bar_top(index) + layout.bar / 2.0 + 4.0,
            "end",
        )
    };
    format!(
        "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\"><title>{}</title>{}\
         <tspan class=\"muted\"> {}</tspan></text>",
        escape(&title),
        escape(&name),
        escape(&axis)
    )
}

fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_string()
    } else if limit == 0 {
        String::new()
    } else {
        let kept: String = text.chars().take(limit - 1).collect();
        kept + "…"
    }
}

fn figure_width(text: &str, bad: bool) -> f64 {
    text.chars().count() as f64 * if bad { CHAR_BOLD } else { CHAR }
}

/// The figure of row `index`, whose bar ends at `end`: after the bar's end, or inside it in
/// white when it would leave the chart; on the label line's right end when labels go above. A
/// halo of the background's color keeps lines under the text out of the way.
fn end_label(layout: &Layout, index: usize, end: f64, text: &str, bad: bool, bar: &str) -> String {
    let class = if bad { " class=\"bad\"" } else { "" };
    let (x, baseline, anchor, class, halo) = if layout.above {
        let baseline = layout.row_top(index) + 12.0;
        (layout.width - 2.0, baseline, "end", class, "#fff")
    } else {
        let baseline = layout.bar_top(index) + layout.bar / 2.0 + 4.0;
        if end + 6.0 + figure_width(text, bad) <= layout.width - 2.0 {
            (end + 6.0, baseline, "start", class, "#fff")
        } else {
            (end - 6.0, baseline, "end", " class=\"in\"", bar)
        }
    };
    format!(
        "<text x=\"{x:.1}\" y=\"{baseline:.1}\" text-anchor=\"{anchor}\"{class} \
         style=\"stroke:{halo}\">{}</text>",
        escape(text)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

    #[test]
    fn scales_end_on_round_ticks() {
        let scale = Scale::new(0.0173, false);
        assert!((scale.step - 0.005).abs() < 1e-12 && (scale.max - 0.02).abs() < 1e-12);
        let scale = Scale::new(41.5 * GIB, true);
        assert_eq!((scale.step / GIB, scale.max / GIB), (10.0, 50.0));
        assert_eq!(Scale::new(0.0, true).ticks().count(), 2);
    }

    #[test]
    fn narrow_rows_put_the_label_above_the_bar() {
        for layout in [WIDE, NARROW] {
            assert!(layout.bar_top(1) > layout.row_top(1) || !layout.above);
            assert!(layout.row_top(1) >= layout.bar_top(0) + layout.bar);
            assert!(layout.x1 < layout.width && layout.x0 >= 0.0);
        }
        assert_eq!(shorten("after BP+MP", 6), "after…");
        assert_eq!(shorten("batch", 0), "");
    }
}
