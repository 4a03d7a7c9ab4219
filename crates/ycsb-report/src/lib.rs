//! Reports of ycsb-rs results: one model, one renderer.
//!
//! A report is data: a [`Page`] of [`Section`]s, each a list of
//! [`Block`]s (notes, tables that turn or split when wide, line charts,
//! bar charts, small multiples, folds, "no data" lines that say the true
//! reason). [`render_html`] renders any page as one self-contained HTML
//! document (inline SVG, nothing fetched), [`render_svg_page`] as one SVG
//! document. Every producer builds a page and renders it through them:
//! `ycsb report` and the live view with [`Comparison`] (runs named by
//! [`runs_from_exports`]), experiment matrices with [`phase_section`] and
//! their own tables, so that a chart added here appears in all three.
//!
//! [`Comparison::page`] holds: a summary (store, build, durability,
//! workload, threads, records, target, throughput, average and p50, p95,
//! p99, p99.9 latency per operation, intended latency where a target was
//! set, errors, stability, amplification, client CPU and memory; a column
//! per run, or a row per run when they are many) with throughput bars per
//! workload; per phase the charts of the exports' time series
//! (throughput, latency and intended latency per operation, latency
//! distributions, client CPU, memory and disk I/O, database size, files
//! per level, every engine gauge by its kind), the runs grouped by what
//! they share into panels that each have their own time axis; the
//! engines' statistics texts and each run's configuration behind folds.
//!
//! [`render_svg`] draws one line chart (linear, logarithmic or byte axes,
//! lines or steps; no two series alike whatever their number, thanks to
//! palette × pattern × marker; a legend that never overlaps), and
//! [`render_bars`] a bar chart with error bars.
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

mod axis;
mod cdf;
mod compare;
mod gauges;
mod html;
mod model;
mod phase;
mod runs;
mod series;
mod style;
mod summary;
mod svg;
mod svgpage;
mod text;

#[cfg(test)]
mod testdata;
#[cfg(test)]
mod tests;

pub use axis::{format_bytes, format_value};
pub use cdf::histogram_cdf;
pub use compare::Comparison;
pub use html::{render_html, render_html_with, render_sections, TABLE_COLUMNS};
pub use model::{anchor, Block, Figure, Fold, Grid, LiveRefresh, Note, Page, Section, Table, Tone};
pub use phase::phase_section;
pub use runs::{runs_from_exports, traits_of, Run};
pub use style::{Dash, Marker};
pub use svg::{render_bars, render_svg, Bar, BarChart, Chart, Series};
pub use svgpage::render_svg_page;
pub use text::escape;

/// What a report shows beside figures measured on an engine built with
/// assertions (db_bench's warning, which `ycsb` prints too).
pub const ASSERTIONS_WARNING: &str =
    "WARNING: Assertions are enabled; benchmarks unnecessarily slow";

/// Chart width in pixels (a full-width chart; the page's width).
pub const WIDTH: u32 = 900;
/// Chart height in pixels (legend rows come below).
pub const HEIGHT: u32 = 320;
/// The space between panels of small multiples, pixels.
const PANEL_GAP: u32 = 12;

/// The size of each panel of small multiples laid out `columns` to a row
/// on a page [`WIDTH`] wide.
pub fn panel_size(columns: usize) -> (u32, u32) {
    let columns = u32::try_from(columns.max(1)).unwrap_or(1);
    let width = (WIDTH - PANEL_GAP * (columns - 1)) / columns;
    let height = match columns {
        1 => HEIGHT,
        2 => 260,
        _ => 220,
    };
    (width, height)
}
