//! Plain text shared by the command line and the simulator's reports: tensor shapes (`8x16`), and
//! tables laid out by `comfy-table`: no borders, columns two spaces apart, each line indented by
//! two.
//!
//! ```text
//!   tactic  axis
//!   BP      batch
//! ```

use comfy_table::{presets::NOTHING, CellAlignment, ContentArrangement, Table};

/// Left-aligned columns separated by two spaces, each line indented by two; `rows[0]` is laid
/// out like any other row (callers pass their header first).
/// A tensor shape as `8x16x64` (a dynamic dim, negative, as `?`; a scalar as the empty string).
pub fn shape(dims: &[i64]) -> String {
    dims.iter()
        .map(|&dim| {
            if dim < 0 {
                "?".to_string()
            } else {
                dim.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("x")
}

pub fn table(rows: &[Vec<String>]) -> String {
    let mut table = Table::new();
    table
        .load_style(NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled);
    for row in rows {
        table.add_row(row);
    }
    for column in table.column_iter_mut() {
        column.set_padding((0, 2));
        column.set_cell_alignment(CellAlignment::Left);
    }
    let mut out = String::new();
    for line in table.lines() {
        let line = format!("  {line}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn tables_align_columns() {
        let rows = vec![
            vec!["tactic".into(), "axis".into()],
            vec!["BP".into(), "batch".into()],
            vec!["(unpartitioned)".into()],
        ];
        assert_eq!(
            super::table(&rows),
            "  tactic           axis\n  BP               batch\n  (unpartitioned)\n"
        );
    }
}
