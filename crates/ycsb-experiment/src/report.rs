//! The experiment's report as a `ycsb_report::Page`: an overview (host,
//! failed cells), per phase the summary table, throughput bars with error
//! bars over repeats, every chart `ycsb report` draws of the cells' exports
//! (the same model and renderer: time series in panels, latency
//! distributions, engine gauges by kind), the servers' CPU, and the
//! matrix. Self-contained HTML: no scripts, no network.

use ycsb_report::{
    phase_section, render_html, Bar, BarChart, Block, Chart, Dash, Figure, Note, Page, Run,
    Section, Series, Table,
};

use crate::cells::Cell;
use crate::matrix::Matrix;
use crate::records::RunContext;
use crate::summary::{self, CellResult, Row};

/// The overview: the description, the host and what failed.
fn overview(
    m: &Matrix,
    results: &[CellResult],
    failed: &[(Cell, String)],
    context: &RunContext,
) -> Vec<Section> {
    let mut section = Section::new("Overview");
    if !m.description.is_empty() {
        section.blocks.push(Note::plain(m.description.clone()));
    }
    section
        .blocks
        .push(Note::plain(host_line(results.len(), failed.len(), context)));
    let mut sections = vec![section];
    if !failed.is_empty() {
        // Before the measurements: what is missing from them, and why.
        let mut failures = Section::new("Failed cells");
        failures.id = "failed".into();
        failures.blocks.push(Block::Table(Table::new(
            vec!["cell".into(), "reason".into()],
            failed
                .iter()
                .map(|(cell, why)| vec![cell.id.clone(), why.clone()])
                .collect(),
        )));
        sections.push(failures);
    }
    sections
}

/// The host facts the runner recorded (not an export: the experiment's
/// own record of the machine), as one line.
fn host_line(complete: usize, failed: usize, context: &RunContext) -> String {
    let host = &context.host;
    let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    format!(
        "{complete} cells complete{} · git {} · {} · {} logical CPUs · {:.1} GiB · kernel {} · DB filesystem {} ({}){}",
        if failed == 0 {
            String::new()
        } else {
            format!(" · {failed} failed (see Failed cells)")
        },
        or_unknown(&context.git),
        or_unknown(&host.cpu_model),
        host.logical_cpus,
        host.memory_bytes.unwrap_or(0) as f64 / (1u64 << 30) as f64,
        or_unknown(&host.kernel),
        or_unknown(&context.filesystem.fstype),
        or_unknown(&context.filesystem.device),
        match &context.io_ceiling {
            Some(c) => format!(" · sequential write ceiling {:.0} MB/s", c.write_bytes_per_sec / 1e6),
            None => String::new(),
        }
    )
}

/// A cell's colour: its `db` value's position on the axis.
fn db_colour(m: &Matrix, label: &str) -> usize {
    m.axes
        .iter()
        .find(|a| a.name == "db")
        .and_then(|a| a.values.iter().position(|v| v.label == label))
        .unwrap_or(0)
}

/// The summary table of a phase: the axes that vary name each row.
fn summary_table(m: &Matrix, rows: &[Row]) -> Table {
    let (header, body) = summary::display_table(m, rows);
    Table {
        caption: None,
        header,
        rows: body,
        key_columns: summary::varying_axes(m).len(),
    }
}

/// Throughput per combination, mean ± standard deviation over repeats.
fn throughput_bars(m: &Matrix, phase: &str, rows: &[Row]) -> BarChart {
    let title = if m.repeats > 1 {
        format!("{phase}: throughput, mean ± sd of {} repeats", m.repeats)
    } else {
        format!("{phase}: throughput")
    };
    let mut bars = BarChart::new(title, "ops/s");
    bars.bars = rows
        .iter()
        .map(|r| {
            let db = r
                .coords
                .iter()
                .find(|(a, _)| a == "db")
                .map_or("", |(_, l)| l.as_str());
            Bar::new(r.group.clone(), r.ops_mean, r.ops_sd, db_colour(m, db))
        })
        .collect();
    bars
}

/// The cells of a phase as runs of `ycsb report`'s model: the first
/// repeat of each combination, named by its combination, its traits the
/// matrix's varying axes (`db` first: what a panel compares).
fn runs(m: &Matrix, results: &[CellResult], phase: &str) -> Vec<Run> {
    let mut axes = summary::varying_axes(m);
    axes.sort_by_key(|a| a != "db");
    results
        .iter()
        .filter(|r| r.cell.repeat == 1 && r.phase(phase).is_some())
        .map(|r| {
            let mut run = Run::new(r.cell.group.clone(), r.cell.id.clone(), r.export.clone());
            run.traits = axes
                .iter()
                .filter_map(|a| {
                    let label = r.cell.label(a)?;
                    Some(if a == "db" {
                        ("store".to_string(), label.to_string())
                    } else {
                        (a.clone(), format!("{a}={label}"))
                    })
                })
                .collect();
            run
        })
        .collect()
}

/// The CPU of the servers the cells ran against, from the runner's own
/// samples (the exports know only the client); nothing without servers.
fn server_cpu(m: &Matrix, results: &[CellResult], phase: &str) -> Option<Block> {
    let mut chart = Chart::new(format!("{phase}: server CPU"), "time (s)", "% of one core");
    for r in results.iter().filter(|r| r.cell.repeat == 1) {
        let Some(s) = r.phase_series(phase) else {
            continue;
        };
        let points: Vec<(f64, f64)> = s
            .resources
            .iter()
            .filter_map(|p| Some((p.t, p.server_cpu_percent?)))
            .collect();
        if !points.is_empty() {
            let db = r.cell.label("db").unwrap_or("");
            chart.series.push(
                Series::new(r.cell.group.clone(), points).styled(db_colour(m, db), Dash::Solid),
            );
        }
    }
    (!chart.series.is_empty()).then(|| Figure::block(chart))
}

/// A phase's section: its summary, bars, every chart of its cells, and
/// the servers' CPU.
fn phase(m: &Matrix, results: &[CellResult], phase: &str, rows: &[Row]) -> Section {
    let mut section = Section::new(format!("{phase} phase"));
    section.id = phase.to_string();
    section.blocks.push(Block::Heading("Summary".into()));
    section.blocks.push(Block::Table(summary_table(m, rows)));
    if rows.iter().any(|r| r.assertions_enabled) {
        section.blocks.push(Note::warning(
            "(!) WARNING: Assertions are enabled; benchmarks unnecessarily slow: these rows ran on an engine built with assertions (`cargo xtask engines` builds release ones)",
        ));
    }
    if let Some(warning) = crate::summary::durability_warning(rows) {
        section.blocks.push(Note::warning(format!("(!) {warning}")));
    }
    section
        .blocks
        .push(Block::Bars(throughput_bars(m, phase, rows)));
    section
        .blocks
        .extend(crate::sweep::blocks(m, results, phase));
    if let Some(note) = crate::summary::too_short_note(m, results, phase) {
        section.blocks.push(Note::plain(note));
    }
    section
        .blocks
        .extend(phase_section(&runs(m, results, phase), phase).blocks);
    section.blocks.extend(server_cpu(m, results, phase));
    section
}

/// The whole report as a page.
pub fn page(
    m: &Matrix,
    results: &[CellResult],
    phases: &[(String, Vec<Row>)],
    failed: &[(Cell, String)],
    context: &RunContext,
) -> Page {
    let mut page = Page::new(m.name.clone());
    page.sections = overview(m, results, failed, context);
    for (name, rows) in phases.iter().filter(|(_, rows)| !rows.is_empty()) {
        page.sections.push(phase(m, results, name, rows));
    }
    let mut matrix = Section::new("Matrix");
    matrix.id = "matrix".into();
    matrix
        .blocks
        .push(Block::Text(crate::redact::text(&m.text)));
    page.sections.push(matrix);
    page
}

/// The whole report as one self-contained HTML page.
pub fn html(
    m: &Matrix,
    results: &[CellResult],
    phases: &[(String, Vec<Row>)],
    failed: &[(Cell, String)],
    context: &RunContext,
) -> String {
    render_html(&page(m, results, phases, failed, context))
}
