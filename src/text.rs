//! Plain-text layout shared by the command line and the simulator's reports.

/// Left-aligned columns separated by two spaces, each line indented by two.
pub fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|row| row.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::from(" ");
        for (c, cell) in row.iter().enumerate() {
            line.push(' ');
            line.push_str(cell);
            if c + 1 < row.len() {
                line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 1));
            }
        }
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
        ];
        assert_eq!(super::table(&rows), "  tactic  axis\n  BP      batch\n");
    }
}
