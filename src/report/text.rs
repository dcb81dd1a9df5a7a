//! The simulator's reports for people: [`Report::text`] (what `partir-simulate` and
//! `partir partition` print) and the per-tactic table [`PartitionReport::table`]. The data and
//! its JSON live in `crate::sim::report`; this is only how it reads.

use super::sharding_groups::Row;
use crate::sim::{PartitionReport, Report, TacticReport};

/// How many of the buffers live at the peak the text report lists.
const LIVE_SHOWN: usize = 5;
impl Report {
    /// The report for people:
    /// ```text
    /// partir-simulate: tpu-v3, mesh batch=4 model=2 (8 devices), per device
    ///   step time     412.3 us  (compute 301.2 us, communication 111.1 us)
    ///   ...
    /// ```
    pub fn text(&self) -> String {
        let totals = &self.totals;
        let mesh = if self.mesh.is_empty() {
            "no mesh".to_string()
        } else {
            let axes: Vec<String> = self
                .mesh
                .iter()
                .map(|axis| format!("{}={}", axis.name, axis.size))
                .collect();
            format!("mesh {}", axes.join(" "))
        };
        let mut out = format!(
            "partir-simulate: {}, {mesh} ({} device{}), per device\n",
            self.device.name,
            self.devices,
            if self.devices == 1 { "" } else { "s" }
        );
        let mut lines = vec![
            vec![
                "step time".to_string(),
                seconds(totals.step_seconds),
                if totals.overhead_seconds > 0.0 {
                    format!(
                        "compute {} (overheads {}: launch and {} kernels), communication {}",
                        seconds(totals.compute_seconds),
                        seconds(totals.overhead_seconds),
                        count(totals.kernels),
                        seconds(totals.communication_seconds)
                    )
                } else {
                    format!(
                        "compute {}, communication {}",
                        seconds(totals.compute_seconds),
                        seconds(totals.communication_seconds)
                    )
                },
            ],
            vec![
                "compute".into(),
                flops(totals.flops),
                format!(
                    "{} transcendentals, {} accessed{}",
                    count(totals.transcendentals),
                    bytes(totals.bytes_accessed),
                    if totals.padding_flops > 0.0 || totals.padding_bytes > 0.0 {
                        format!(
                            "; padding: {} ({}) and {} ({})",
                            flops(totals.padding_flops),
                            share(totals.padding_flops, totals.flops),
                            bytes(totals.padding_bytes),
                            share(totals.padding_bytes, totals.bytes_accessed),
                        )
                    } else {
                        String::new()
                    }
                ),
            ],
            vec![
                "peak memory".into(),
                bytes(totals.peak_memory_bytes),
                format!(
                    "of {} ({}); arguments {}, results {}",
                    bytes(totals.memory_capacity_bytes),
                    if totals.fits { "fits" } else { "DOES NOT FIT" },
                    bytes(self.memory.arguments_bytes),
                    bytes(self.memory.results_bytes)
                ),
            ],
        ];
        if !self.memory.peak_at.is_empty() {
            lines.push(vec![
                String::new(),
                String::new(),
                format!("peak at {}", self.memory.peak_at),
            ]);
            // The largest buffers live there: what sharding or rematerialising would relieve.
            for live in self.memory.live_at_peak.iter().take(LIVE_SHOWN) {
                lines.push(vec![
                    String::new(),
                    String::new(),
                    format!("  {:>10}  {}", bytes(live.bytes), live.defined_at),
                ]);
            }
        }
        // What a pipeline's stages spend on padding: (S-1)/(M+S-1) of its loop's compute.
        for pipeline in &self.pipelines {
            lines.push(vec![
                "pipeline".into(),
                seconds(pipeline.idle_seconds),
                format!(
                    "bubble {:.1}% = (S-1)/(M+S-1): {} stages along {}, {} microbatches in {} ticks, of {} computing",
                    100.0 * pipeline.bubble,
                    pipeline.stages,
                    pipeline.axes.join(", "),
                    pipeline.microbatches,
                    pipeline.ticks,
                    seconds(pipeline.compute_seconds)
                ),
            ]);
        }
        out.push_str(&crate::text::table(&lines));
        if !self.collectives.is_empty() {
            out.push_str("  collectives:\n");
            let mut rows = vec![vec![
                "  kind".to_string(),
                "axes".into(),
                "count".into(),
                "bytes".into(),
                "sent".into(),
                "time".into(),
            ]];
            for row in &self.collectives {
                rows.push(vec![
                    format!("  {}", row.label()),
                    row.axes.join(","),
                    row.count.to_string(),
                    bytes(row.bytes),
                    bytes(row.traffic_bytes),
                    seconds(row.seconds),
                ]);
            }
            out.push_str(&crate::text::table(&rows));
        }
        if !self.top_ops.is_empty() {
            out.push_str("  top ops:\n");
            let mut rows = vec![vec![
                "  op".to_string(),
                "time".into(),
                "bound".into(),
                "flops".into(),
                "bytes".into(),
                "at".into(),
            ]];
            for op in self.top_ops.iter().take(5) {
                rows.push(vec![
                    format!("  {}", op.label()),
                    seconds(op.seconds),
                    format!("{:?}", op.bound).to_lowercase(),
                    flops(op.flops),
                    bytes(op.bytes),
                    op.location.clone(),
                ]);
            }
            out.push_str(&crate::text::table(&rows));
        }
        for note in &self.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        out
    }
}

impl PartitionReport {
    /// The final shardings grouped as the picture groups them ([`sharding_groups`]): a row per
    /// pattern of values split alike, layer numbers as `*`, optimizer state with its parameter,
    /// results split like their argument not repeated; then what the rows stand for. LLaMA-3
    /// 70B's 4343 arguments and results (80 layers unrolled, Adam) are 16 rows:
    ///
    /// ```text
    ///   params/model/layers/*/mlp/down_proj/kernel x80 + opt/0/mu, opt/0/nu  [model*data, -]  28x8192
    /// ```
    ///
    /// [`sharding_groups`]: crate::report::sharding_groups
    pub fn sharding_table(&self) -> String {
        let mesh = self
            .tactics
            .last()
            .map_or(&[][..], |tactic| &tactic.report.mesh);
        let groups = super::sharding_groups::group(&self.shardings, mesh);
        let mut rows = vec![["value", "split (axes per dim)", "per device"]
            .map(String::from)
            .to_vec()];
        let times = |count: usize| {
            if count > 1 {
                format!(" x{count}")
            } else {
                String::new()
            }
        };
        for row in groups.rows() {
            rows.push(match row {
                Row::Values { group, alike } => {
                    let [_, split, local] = group.first().cells();
                    let mut name = format!(
                        "{}{}{}",
                        if group.is_result() { "-> " } else { "" },
                        group.label,
                        times(group.values.len())
                    );
                    if !alike.is_empty() {
                        let slots: Vec<String> =
                            alike.iter().map(|state| state.slots.join(", ")).collect();
                        name += &format!(" + {}", slots.join(", "));
                    }
                    vec![name, split, local]
                }
                Row::State(state) => {
                    let [split, local] = state.cells();
                    let name = format!("  + {}{}", state.slots.join(", "), times(state.count));
                    vec![name, split, local]
                }
            });
        }
        let note = groups.note(&self.shardings, rows.len() - 1);
        crate::text::table(&rows) + "  (" + &note + ")\n"
    }

    /// The header and one row per tactic, as [`PartitionReport::row`] prints them.
    pub fn table(&self) -> String {
        let pipelined = self.pipelined();
        let mut header = Self::header();
        if pipelined {
            header.push("bubble".into());
        }
        let mut rows = vec![header];
        rows.extend(self.tactics.iter().map(|tactic| {
            let mut cells = Self::cells(tactic);
            if pipelined {
                cells.push(bubble(&tactic.report.pipelines));
            }
            cells
        }));
        crate::text::table(&rows)
    }

    pub fn header() -> Vec<String> {
        [
            "tactic",
            "axis",
            "collectives added",
            "step time",
            "compute",
            "comm",
            "peak memory",
            "padding",
            "fits",
        ]
        .map(String::from)
        .to_vec()
    }

    /// One row: `BP  batch  +5 all_reduce sum  412.3 us  ...  1.2 GiB  yes`.
    pub fn cells(tactic: &TacticReport) -> Vec<String> {
        let added = if tactic.collectives_added.is_empty() {
            "-".to_string()
        } else {
            tactic
                .collectives_added
                .iter()
                .map(|(label, delta)| format!("{delta:+} {label}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let totals = &tactic.report.totals;
        vec![
            tactic.tactic.clone(),
            tactic.axis.clone(),
            added,
            seconds(totals.step_seconds),
            seconds(totals.compute_seconds),
            seconds(totals.communication_seconds),
            bytes(totals.peak_memory_bytes),
            padding(totals),
            if totals.fits { "yes" } else { "NO" }.into(),
        ]
    }

    /// Whether some tactic's program pipelines: the tables then add a `bubble` column
    /// ([`bubble`]).
    pub fn pipelined(&self) -> bool {
        self.tactics
            .iter()
            .any(|tactic| !tactic.report.pipelines.is_empty())
    }
}

/// The pipelines' bubbles: `20.0% of 5 ticks x2` (the share of the pipelined loops' compute on
/// padding; GPipe's forward ticks and JAX's transpose of them), `-` without a pipeline.
pub fn bubble(pipelines: &[crate::sim::report::Pipeline]) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for pipeline in pipelines {
        let text = format!(
            "{:.1}% of {} ticks",
            100.0 * pipeline.bubble,
            pipeline.ticks
        );
        match seen.iter_mut().find(|(known, _)| *known == text) {
            Some((_, count)) => *count += 1,
            None => seen.push((text, 1)),
        }
    }
    if seen.is_empty() {
        return "-".into();
    }
    seen.into_iter()
        .map(|(text, count)| {
            if count > 1 {
                format!("{text} x{count}")
            } else {
                text
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The padding's share of the FLOPs and of the bytes: `0.6% FLOP, 0.4% bytes`, `-` for none.
fn padding(totals: &crate::sim::report::Totals) -> String {
    if totals.padding_flops <= 0.0 && totals.padding_bytes <= 0.0 {
        return "-".into();
    }
    format!(
        "{} FLOP, {} bytes",
        share(totals.padding_flops, totals.flops),
        share(totals.padding_bytes, totals.bytes_accessed)
    )
}

/// `part` of `whole` in percent: `0.62%`.
fn share(part: f64, whole: f64) -> String {
    if whole <= 0.0 {
        return "0%".into();
    }
    let percent = 100.0 * part / whole;
    if percent > 0.0 && percent < 0.001 {
        "<0.001%".into()
    } else if percent < 0.1 {
        format!("{percent:.3}%")
    } else {
        format!("{percent:.1}%")
    }
}

/// `1.50 GiB`, `12.0 KiB`, `512 B`.
pub fn bytes(value: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut scaled = value;
    let mut unit = 0;
    while scaled.abs() >= 1024.0 && unit + 1 < UNITS.len() {
        scaled /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{scaled:.0} B")
    } else {
        format!("{scaled:.2} {}", UNITS[unit])
    }
}

/// `3.2 ns`, `412.3 us`, `1.25 ms`, `2.00 s`.
pub fn seconds(value: f64) -> String {
    if value == 0.0 {
        "0".into()
    } else if value < 1e-6 {
        format!("{:.1} ns", value * 1e9)
    } else if value < 1e-3 {
        format!("{:.1} us", value * 1e6)
    } else if value < 1.0 {
        format!("{:.2} ms", value * 1e3)
    } else {
        format!("{value:.2} s")
    }
}

/// `1.23 GFLOP`.
pub fn flops(value: f64) -> String {
    format!("{}FLOP", si(value))
}

/// `3.4 M`.
pub fn count(value: f64) -> String {
    si(value).trim_end().to_string()
}

fn si(value: f64) -> String {
    const UNITS: [(f64, &str); 5] = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    for (scale, unit) in UNITS {
        if value.abs() >= scale {
            return format!("{:.2} {unit}", value / scale);
        }
    }
    format!("{value:.0} ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_naturally() {
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1.5 * 1024.0 * 1024.0 * 1024.0), "1.50 GiB");
        assert_eq!(seconds(412.34e-6), "412.3 us");
        assert_eq!(seconds(1.25e-3), "1.25 ms");
        assert_eq!(flops(1.234e9), "1.23 GFLOP");
        assert_eq!(count(12.0), "12");
    }

    #[test]
    fn the_table_shows_the_collectives_each_tactic_adds() {
        let with = crate::sim::report::tests::with_collectives;
        let mut story = PartitionReport::default();
        story.push("(unpartitioned)", "", with(&[]));
        story.push("BP", "batch", with(&[("all_reduce", 5)]));
        story.push("Z3", "batch", with(&[("all_reduce", 2), ("all_gather", 6)]));
        let table = story.table();
        assert!(table.contains("+6 all_gather, -3 all_reduce"), "{table}");
        let header = table.lines().next().unwrap();
        assert!(header.trim_start().starts_with("tactic"), "{table}");
    }

    /// Two layers' weights split alike are one row with their Adam moments; the step's
    /// results that repeat an argument are counted, not listed; a moment split otherwise
    /// (ZeRO on one slot only) gets its own row.
    #[test]
    fn the_sharding_table_groups_layers_state_and_repeated_results() {
        use crate::sim::report::{AxisSize, ValueSharding};
        let mut story = PartitionReport::default();
        let mut report = crate::sim::report::tests::with_collectives(&[]);
        report.mesh = AxisSize::mesh(&[("batch", 4), ("model", 2)]);
        story.push("MP", "model", report);
        let value = |name: &str, axes: &[&[&str]], is_result| {
            ValueSharding::new(
                name,
                is_result,
                axes,
                &[16, if axes[1].is_empty() { 32 } else { 16 }],
            )
        };
        for layer in 0..2 {
            for (slot, axes) in [
                ("params", [&[][..], &["model"][..]]),
                ("opt/m", [&[], &["model"]]),
                ("opt/v", [&[], &[]]),
            ] {
                let name = format!("{slot}/layers/{layer}/wq");
                story.shardings.push(value(&name, &axes, false));
                story.shardings.push(value(&name, &axes, true));
            }
        }
        let table = story.sharding_table();
        let rows: Vec<String> = (table.lines().skip(1))
            .map(|row| row.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(rows.len(), 3, "{table}");
        assert!(
            rows[0].starts_with("params/layers/*/wq x2 + opt/m [-, model] 16x16"),
            "{table}"
        );
        assert!(rows[1].starts_with("+ opt/v x2 [-, -] 16x32"), "{table}");
        assert!(
            rows[2].starts_with("(6 arguments and 6 results in 2 rows:")
                && rows[2]
                    .contains("6 results split like the argument of the same name not repeated"),
            "{table}"
        );
    }
}
