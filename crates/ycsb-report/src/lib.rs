//! Charts of ycsb-rs results.
//!
//! [`runs_from_exports`] names exports (`-p exporter=json`, read typed by
//! `ycsb_results::read_export`) as runs and [`Comparison`] sets them side
//! by side: a summary table (store
//! and engine build, workload, throughput, latency percentiles, errors,
//! stability, amplification, client CPU and memory), then per phase one
//! set of charts with every run overlaid (throughput, latency percentiles
//! per operation, client CPU, memory and disk I/O, database size, files
//! per LSM level) from the time series the exports carry
//! (`phases[].observation.series`), a chart no run has data for replaced
//! by one line saying why, and each run's command line and configuration
//! behind a fold. [`Comparison::to_html`] renders it as one self-contained
//! page, [`render_svg_page`] its charts stacked in one SVG document.
//! [`render_svg`] draws one chart as hand-written SVG (linear or
//! logarithmic axes, lines or steps), [`render_bars`] a bar chart with
//! error bars in the same palette. `ycsb report` and the experiment
//! matrices (`ycsb-experiment`) draw with it.
//!
//! ```
//! use ycsb_report::{render_svg, Chart, Series};
//!
//! let mut chart = Chart::new("throughput", "time (s)", "ops/s");
//! chart.series.push(Series::new("run", vec![(1.0, 980.0), (2.0, 1010.0)]));
//! assert!(render_svg(&chart, 640, 320).contains("<path"));
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]
// Only the programs print or exit; a library reports through its return
// values, and a bug is a typed error, not a panic (tests may do both).
#![cfg_attr(
    not(test),
    deny(
        clippy::print_stdout,
        clippy::print_stderr,
        clippy::exit,
        clippy::unwrap_used
    )
)]

mod compare;
mod svg;

pub use compare::{runs_from_exports, ChartGroup, Comparison, Figure, Run};
pub use svg::{escape, format_value, render_bars, render_svg, Bar, BarChart, Chart, Dash, Series};

/// What a report shows beside figures measured on an engine built with
/// assertions (db_bench's warning, which `ycsb` prints too).
pub const ASSERTIONS_WARNING: &str =
    "WARNING: Assertions are enabled; benchmarks unnecessarily slow";

/// Chart width in pixels.
pub const WIDTH: u32 = 900;
/// Chart height in pixels (legend rows come on top).
pub const HEIGHT: u32 = 320;

/// Every group's charts stacked in one SVG document, each group under its
/// heading.
pub fn render_svg_page(title: &str, groups: &[ChartGroup]) -> String {
    let mut body = String::new();
    let mut y = 40.0;
    for group in groups {
        body.push_str(&format!(
            r#"<text x="10" y="{:.0}" font-size="16" font-weight="bold">{}</text>"#,
            y + 18.0,
            escape(&group.heading)
        ));
        y += 28.0;
        if let Some(note) = &group.note {
            body.push_str(&format!(
                r##"<text x="10" y="{:.0}" fill="#555">{}</text>"##,
                y + 14.0,
                escape(note)
            ));
            y += 22.0;
        }
        for figure in &group.figures {
            match figure {
                Figure::Drawn { chart, remark } => {
                    let svg = render_svg(chart, WIDTH, HEIGHT);
                    let height = svg_height(&svg).unwrap_or(f64::from(HEIGHT));
                    // A nested <svg> keeps each chart's own coordinates.
                    body.push_str(&svg.replacen(
                        "<svg ",
                        &format!("<svg x=\"0\" y=\"{y:.0}\" "),
                        1,
                    ));
                    y += height + 4.0;
                    if let Some(remark) = remark {
                        body.push_str(&format!(
                            r##"<text x="72" y="{:.0}" fill="#555">{}</text>"##,
                            y + 12.0,
                            escape(remark)
                        ));
                        y += 18.0;
                    }
                    y += 8.0;
                }
                Figure::Missing { title, reason } => {
                    body.push_str(&format!(
                        r##"<text x="10" y="{:.0}" fill="#555"><tspan font-weight="bold">{}</tspan>: no data: {}</text>"##,
                        y + 14.0,
                        escape(title),
                        escape(reason)
                    ));
                    y += 24.0;
                }
            }
        }
    }
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{y:.0}" viewBox="0 0 {WIDTH} {y:.0}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/><text x="10" y="24" font-size="18" font-weight="bold">{}</text>{body}</svg>"#,
        escape(title)
    )
}

fn svg_height(svg: &str) -> Option<f64> {
    let start = svg.find(" height=\"")? + " height=\"".len();
    let end = start + svg[start..].find('"')?;
    svg[start..end].parse().ok()
}
