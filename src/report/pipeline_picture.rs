//! The schedule a pipelined loop runs, as the simulator priced it: stages down, ticks across,
//! each cell the microbatch that stage works on in that tick, the bubble's idle cells grey.
//! GPipe over 2 stages, 4 microbatches (forward: stage 0 first; a reversed loop, JAX's
//! transpose, starts at the last stage), drawn at its own size (24 px a cell) at every window
//! width, in a box that scrolls sideways when the ticks are more than a phone shows:
//!
//! ```text
//!           t0 t1 t2 t3 t4
//! stage 0   0  1  2  3  .
//! stage 1   .  0  1  2  3
//! ```

use super::html::escape;
use crate::sim::report::{Pipeline, Report};
use std::fmt::Write;

const FORWARD: &str = "#4e79a7";
const BACKWARD: &str = "#f28e2b";
const IDLE: &str = "#e6e6e6";
const CELL: i64 = 24;
const LABEL: i64 = 64;

/// One picture per pipelined loop of `report` (None when nothing pipelines).
pub(super) fn section(report: &Report) -> Option<String> {
    if report.pipelines.is_empty() {
        return None;
    }
    let mut out = String::new();
    for (index, pipeline) in report.pipelines.iter().enumerate() {
        let _ = write!(out, "{}", picture(index, pipeline));
    }
    Some(out)
}

/// The microbatch stage `stage` works on at `tick` (None: idle).
pub fn microbatch(pipeline: &Pipeline, stage: i64, tick: i64) -> Option<i64> {
    let first = if pipeline.reversed == Some(true) {
        pipeline.stages - 1 - stage
    } else {
        stage
    };
    let m = tick - first;
    (0..pipeline.microbatches).contains(&m).then_some(m)
}

fn picture(index: usize, pipeline: &Pipeline) -> String {
    let (stages, ticks) = (pipeline.stages, pipeline.ticks);
    let (width, height) = (LABEL + ticks * CELL, CELL + stages * CELL);
    let backward = pipeline.reversed == Some(true);
    let color = if backward { BACKWARD } else { FORWARD };
    let way = match pipeline.reversed {
        Some(true) => "backward: the last stage first".to_string(),
        Some(false) => "forward: stage 0 first".to_string(),
        None => format!(
            "{} stages: the rotation does not tell which stage starts; drawn stage 0 first",
            stages
        ),
    };
    let mut svg = format!(
        "<p>Loop {}: {} stages along {}, {} microbatches in {} ticks, bubble {:.1}% ({way})</p>\
         <div class=\"pipeline-pic\"><svg viewBox=\"0 0 {width} {height}\" width=\"{width}\" \
         height=\"{height}\" role=\"img\" aria-label=\"pipeline schedule {}\">",
        index + 1,
        stages,
        escape(&pipeline.axes.join(",")),
        pipeline.microbatches,
        ticks,
        100.0 * pipeline.bubble,
        index + 1
    );
    for tick in 0..ticks {
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">t{tick}</text>",
            LABEL + tick * CELL + CELL / 2,
            CELL - 8
        );
    }
    for stage in 0..stages {
        let y = CELL + stage * CELL;
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{}\" font-size=\"11\">stage {stage}</text>",
            y + CELL / 2 + 4
        );
        for tick in 0..ticks {
            let x = LABEL + tick * CELL;
            let work = microbatch(pipeline, stage, tick);
            let fill = if work.is_some() { color } else { IDLE };
            let title = match work {
                Some(m) => format!("stage {stage}, tick {tick}: microbatch {m}"),
                None => format!("stage {stage}, tick {tick}: idle (the bubble)"),
            };
            let _ = write!(
                svg,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"><title>{title}</title></rect>",
                x + 1,
                y + 1,
                CELL - 2,
                CELL - 2
            );
            if let Some(m) = work {
                let _ = write!(
                    svg,
                    "<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#fff\" text-anchor=\"middle\">{m}</text>",
                    x + CELL / 2,
                    y + CELL / 2 + 4
                );
            }
        }
    }
    svg.push_str("</svg></div>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpipe(reversed: Option<bool>) -> Pipeline {
        Pipeline {
            axes: vec!["stage".into()],
            stages: 4,
            ticks: 7,
            microbatches: 4,
            reversed,
            bubble: 3.0 / 7.0,
            ..Pipeline::default()
        }
    }

    #[test]
    fn each_stage_works_every_microbatch_once_and_idles_the_bubble() {
        for reversed in [Some(false), Some(true)] {
            let pipeline = gpipe(reversed);
            for stage in 0..4 {
                let worked: Vec<i64> = (0..7)
                    .filter_map(|t| microbatch(&pipeline, stage, t))
                    .collect();
                assert_eq!(worked, vec![0, 1, 2, 3]);
            }
        }
        // Forward, stage 3 starts at tick 3; reversed, stage 0 does.
        assert_eq!(microbatch(&gpipe(Some(false)), 3, 3), Some(0));
        assert_eq!(microbatch(&gpipe(Some(true)), 0, 3), Some(0));
        assert_eq!(microbatch(&gpipe(Some(true)), 3, 0), Some(0));
    }

    #[test]
    fn the_picture_has_a_cell_per_stage_and_tick() {
        let svg = picture(0, &gpipe(Some(true)));
        assert_eq!(svg.matches("<rect").count(), 28);
        assert_eq!(svg.matches("idle (the bubble)").count(), 12);
        assert!(svg.contains("backward: the last stage first"));
    }
}
