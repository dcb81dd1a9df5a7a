//! The picture's "Automatic search" section: per searched axis, what the analysis left of the
//! action space, what was decided per group, and the best step time against plans priced (a
//! step line: the anytime curve of the search).

use super::html::{escape, table};
use crate::sim::{report::SearchSummary, PartitionReport};
use std::fmt::Write;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 180.0;
const MARGIN: f64 = 48.0;

/// The section's body, or `None` when no tactic was searched.
pub fn section(story: &PartitionReport) -> Option<String> {
    let searches: Vec<(&str, &SearchSummary)> = story
        .tactics
        .iter()
        .filter_map(|tactic| {
            tactic
                .search
                .as_ref()
                .map(|search| (tactic.tactic.as_str(), search))
        })
        .collect();
    if searches.is_empty() {
        return None;
    }
    let mut body = String::new();
    let header = [
        "tactic",
        "axis",
        "raw actions",
        "after analysis",
        "plans priced",
        "seconds",
        "best step",
    ]
    .map(String::from);
    let rows: Vec<Vec<String>> = searches
        .iter()
        .map(|(tactic, search)| {
            vec![
                escape(tactic),
                escape(&search.axis),
                search.raw_actions.to_string(),
                search.reduced_actions.to_string(),
                format!(
                    "{}{}",
                    search.evaluations,
                    if search.exhausted { " (all)" } else { "" }
                ),
                format!("{:.2}", search.seconds),
                search
                    .curve
                    .last()
                    .map(|point| super::text::seconds(point.1))
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    body += &table(&header, &rows, &[2, 3, 4, 5, 6]);
    let decisions: Vec<Vec<String>> = searches
        .iter()
        .flat_map(|(tactic, search)| {
            search.decisions.iter().map(move |decision| {
                vec![
                    escape(tactic),
                    escape(&decision.group),
                    escape(&decision.decision),
                    escape(&decision.ties.join(", ")),
                ]
            })
        })
        .collect();
    if !decisions.is_empty() {
        let header = ["tactic", "group", "decision", "propagation also tiles"].map(String::from);
        body += &table(&header, &decisions, &[]);
    }
    for (tactic, search) in &searches {
        if !search.curve.is_empty() {
            let _ = write!(
                body,
                "<p>{}: best step time against plans priced</p>",
                escape(tactic)
            );
            body += &curve(search);
        }
    }
    Some(body)
}

/// A step line of (plans priced, best step time) from the first plan priced to the last.
fn curve(search: &SearchSummary) -> String {
    let points = &search.curve;
    let last_x = search.evaluations.max(1) as f64;
    let top = points.iter().map(|point| point.1).fold(0.0, f64::max);
    let bottom = points
        .iter()
        .map(|point| point.1)
        .fold(f64::INFINITY, f64::min);
    let span = (top - bottom).max(top * 1e-3).max(1e-15);
    let x = |count: f64| MARGIN + (WIDTH - 2.0 * MARGIN) * count / last_x;
    let y = |seconds: f64| 16.0 + (HEIGHT - 48.0) * (top - seconds) / span;
    let mut path = String::new();
    for (index, &(count, seconds)) in points.iter().enumerate() {
        if index > 0 {
            let _ = write!(path, " H{:.1}", x(count as f64));
        } else {
            let _ = write!(path, "M{:.1},{:.1}", x(count as f64), y(seconds));
        }
        let _ = write!(path, " V{:.1}", y(seconds));
    }
    let _ = write!(path, " H{:.1}", x(last_x));
    format!(
        "<div class=\"chart\"><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\">\
         <title>best step time against plans priced</title>\
         <path d=\"{path}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\
         <g class=\"axis\"><text x=\"{MARGIN}\" y=\"{:.1}\">0</text><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{} plans</text>\
         <text x=\"4\" y=\"{:.1}\">{}</text><text x=\"4\" y=\"{:.1}\">{}</text></g></svg></div>\n",
        HEIGHT - 8.0,
        x(last_x),
        HEIGHT - 8.0,
        search.evaluations,
        y(top) + 4.0,
        escape(&super::text::seconds(top)),
        y(bottom) + 4.0,
        escape(&super::text::seconds(bottom)),
    )
}
