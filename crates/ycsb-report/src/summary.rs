//! The summary table: per run its store, build, durability, workload,
//! threads, records, target, throughput, latency (average and
//! percentiles, intended latency where measured), errors, stability,
//! amplification and client resources.

use ycsb_results::{PhaseReport, RunMetadata, RunReport, SectionReport};

use crate::axis::format_bytes;
use crate::model::{Block, Note, Table};
use crate::runs::{seconds_label, workload_name, Run};
use crate::series::{full_rows, phase_seconds, too_short_reason, why_no_series, SKIPPED_SECTIONS};

/// The percentiles the summary shows beside the average.
const PERCENTILES: [(f64, &str); 4] =
    [(50.0, "p50"), (95.0, "p95"), (99.0, "p99"), (99.9, "p99.9")];

/// The phase whose latencies the summary shows: the run phase, or the
/// load phase of a load-only export.
fn latency_phase(d: &RunReport) -> Option<&PhaseReport> {
    d.phase("run").or_else(|| d.phase("load"))
}

/// The operations (not bookkeeping) any run's latency phase measured,
/// in first-seen order, and whether each has intended latency somewhere.
fn measured_operations(runs: &[Run]) -> Vec<(String, bool)> {
    let mut ops: Vec<(String, bool)> = Vec::new();
    for run in runs {
        let Some(phase) = latency_phase(&run.report) else {
            continue;
        };
        for s in phase.sections.iter().filter(|s| !s.failed) {
            let name = s.name.strip_prefix("Intended-").unwrap_or(&s.name);
            if SKIPPED_SECTIONS.contains(&name) {
                continue;
            }
            let intended = s.intended && s.operations > 0;
            match ops.iter_mut().find(|(op, _)| op == name) {
                Some((_, any)) => *any |= intended,
                None => ops.push((name.to_string(), intended)),
            }
        }
    }
    ops
}

/// `avg / p50 / p95 / p99 / p99.9` of a section, in microseconds.
fn latency_cell(section: Option<&SectionReport>) -> String {
    let Some(s) = section.filter(|s| s.operations > 0) else {
        return "—".into();
    };
    let mut parts = vec![if s.average_us.is_finite() {
        format!("{:.1}", s.average_us)
    } else {
        "?".into()
    }];
    parts.extend(PERCENTILES.iter().map(|(p, _)| {
        s.percentile_us(*p)
            .map_or_else(|| "?".into(), |v| v.to_string())
    }));
    parts.join(" / ")
}

/// The summary's rows: a label, then one cell per run.
pub(crate) fn rows(runs: &[Run]) -> Vec<(String, Vec<String>)> {
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut row = |label: &str, cell: &dyn Fn(&Run) -> String| {
        rows.push((label.to_string(), runs.iter().map(cell).collect()));
    };
    row("export", &|r| r.origin.clone());
    row("store", &|r| {
        let m = &r.report.metadata;
        match (m.engine.as_deref(), m.engine_version.as_deref()) {
            (Some(e), Some(v)) if !v.is_empty() => format!("{} ({e} {v})", r.store()),
            _ => r.store().to_string(),
        }
    });
    // Whatever the export says of how the engine library was built,
    // shown as it is: the export owns that vocabulary.
    row("engine build", &|r| engine_build(&r.report.metadata));
    row("writes synced", &|r| durability(&r.report.metadata));
    row("workload", &|r| workload_name(&r.report));
    let config =
        |key: &'static str| move |r: &Run| r.report.config_value(key).unwrap_or("?").to_string();
    row("threads", &config("threadcount"));
    row("records", &config("recordcount"));
    row("target (ops/s)", &|r| match r
        .report
        .config_value("target")
        .and_then(|t| t.trim().parse::<f64>().ok())
    {
        Some(t) if t > 0.0 => format!("{t}"),
        _ => "none (unthrottled)".into(),
    });
    row("operations", &|r| {
        r.report
            .phase("run")
            .map_or_else(|| config("operationcount")(r), |p| p.operations.to_string())
    });
    for name in ["load", "run"] {
        row(&format!("{name} throughput (ops/s)"), &|r| {
            r.report
                .phase(name)
                .map_or_else(|| "—".into(), |p| format!("{:.0}", p.throughput))
        });
    }
    let figures = PERCENTILES.map(|(_, label)| label).join(" / ");
    for (op, intended) in measured_operations(runs) {
        row(&format!("{op} avg / {figures} (µs)"), &|r| {
            latency_cell(latency_phase(&r.report).and_then(|p| p.section(&op)))
        });
        if intended {
            row(&format!("{op} intended avg / {figures} (µs)"), &|r| {
                latency_cell(
                    latency_phase(&r.report).and_then(|p| p.section(&format!("Intended-{op}"))),
                )
            });
        }
    }
    row("errors", &|r| errors(&r.report));
    row("stability (run)", &|r| stability(&r.report));
    type Ratio = fn(&ycsb_results::Amplification) -> Option<f64>;
    let ratios: [(&str, Ratio); 2] = [
        ("write amplification", |a| a.write_amplification),
        ("space amplification", |a| a.space_amplification),
    ];
    for (label, ratio) in ratios {
        row(label, &|r| {
            let parts: Vec<String> = r
                .report
                .phases
                .iter()
                .filter_map(|p| {
                    let a = ratio(p.observation.as_ref()?.amplification.as_ref()?)?;
                    Some(format!("{} {a:.2}", p.phase))
                })
                .collect();
            joined_or_dash(parts)
        });
    }
    row("client CPU (mean % of one core)", &|r| {
        client_cpu(&r.report)
    });
    row("client peak RSS", &|r| {
        r.report
            .phases
            .iter()
            .flat_map(PhaseReport::series)
            .filter_map(|row| Some(row.client.as_ref()?.peak_rss_bytes as f64))
            .reduce(f64::max)
            .map_or_else(|| "—".into(), format_bytes)
    });
    rows
}

fn joined_or_dash(parts: Vec<String>) -> String {
    if parts.is_empty() {
        "—".into()
    } else {
        parts.join(", ")
    }
}

/// The stability verdict of the run phase, or why there is none.
fn stability(d: &RunReport) -> String {
    let Some(p) = d.phase("run") else {
        return "—".into();
    };
    if let Some(reason) = why_no_series(d, p) {
        return format!("not measured: {reason}");
    }
    let s = p.observation.as_ref().and_then(|o| o.stability.as_ref());
    if let Some(reason) = too_short_reason(d, p) {
        return format!("too short to judge: {reason}");
    }
    let Some(s) = s else {
        return "not measured: no interval was measured".into();
    };
    let settled = s.steady_state.as_ref().map_or_else(
        || "did not settle".into(),
        |steady| format!("settled at {}", seconds_label(steady.time_s)),
    );
    format!("CV {:.1} %, {settled}", s.cv * 100.0)
}

/// The client's mean CPU per phase over its full intervals.
fn client_cpu(d: &RunReport) -> String {
    let mut parts = Vec::new();
    for p in &d.phases {
        let cpu: Vec<f64> = full_rows(p)
            .iter()
            .filter_map(|r| r.client.as_ref())
            .map(|c| c.cpu_user_pct + c.cpu_system_pct)
            .filter(|v| v.is_finite())
            .collect();
        if !cpu.is_empty() {
            parts.push(format!(
                "{} {:.0} %",
                p.phase,
                cpu.iter().sum::<f64>() / cpu.len() as f64
            ));
        } else if !p.series().is_empty() {
            parts.push(format!(
                "{} — ({} long, no full interval)",
                p.phase,
                seconds_label(phase_seconds(p))
            ));
        }
    }
    joined_or_dash(parts)
}

/// Whether the run's writes were synced, and the setting that says so.
fn durability(metadata: &RunMetadata) -> String {
    match &metadata.durability {
        Some(d) => format!(
            "{} ({}={})",
            if d.durable { "yes" } else { "no" },
            d.property,
            d.value
        ),
        None => "—".into(),
    }
}

/// How the engine library was built, as `key: value` lines.
fn engine_build(metadata: &RunMetadata) -> String {
    let Some(build) = &metadata.engine_build else {
        return "—".into();
    };
    let mut parts = vec![
        format!("library: {}", build.library),
        format!("assertions: {}", build.assertions),
    ];
    if !build.evidence.is_empty() {
        parts.push(format!("evidence: {}", build.evidence));
    }
    parts.join("\n")
}

/// How the engine library was built, in short: the library's file name
/// (or `static`) and the state of its assertions.
fn engine_build_short(metadata: &RunMetadata) -> String {
    let Some(build) = &metadata.engine_build else {
        return "—".into();
    };
    let file = build.library.rsplit('/').next().unwrap_or(&build.library);
    format!("{file}, assertions {}", build.assertions)
}

/// Non-OK returns over every phase, by status.
fn errors(doc: &RunReport) -> String {
    let mut by_status: Vec<(String, u64)> = Vec::new();
    for p in &doc.phases {
        for s in p.sections.iter().filter(|s| !s.intended) {
            for r in &s.returns {
                let (status, count) = (r.status.as_str(), r.count);
                if status == "OK" || count == 0 {
                    continue;
                }
                match by_status.iter_mut().find(|(s, _)| s == status) {
                    Some((_, c)) => *c += count,
                    None => by_status.push((status.to_string(), count)),
                }
            }
        }
    }
    let total: u64 = by_status.iter().map(|(_, c)| c).sum();
    if total == 0 {
        return "0".into();
    }
    let detail: Vec<String> = by_status.iter().map(|(s, c)| format!("{s} {c}")).collect();
    format!("{total} ({})", detail.join(", "))
}

/// The summary as blocks: a table with a column per run (its name
/// heading it) when they are few, else a row per run, so that each figure
/// is one column to compare down (split into several tables when wide),
/// the figures every run shares then said once in a note.
pub(crate) fn blocks(runs: &[Run], columns: usize) -> Vec<Block> {
    let rows = rows(runs);
    let mut header = vec![String::new()];
    header.extend(runs.iter().map(|r| r.name.clone()));
    if runs.len() <= columns {
        let table = Table::new(
            header,
            rows.into_iter()
                .map(|(label, cells)| std::iter::once(label).chain(cells).collect())
                .collect(),
        );
        return vec![Block::Table(table)];
    }
    // A row per run: its name says what the export's file did, and the
    // build fits a column in short.
    let rows = rows
        .into_iter()
        .filter(|(label, _)| label != "export")
        .map(|(label, cells)| {
            if label == "engine build" {
                let short = runs
                    .iter()
                    .map(|r| engine_build_short(&r.report.metadata))
                    .collect();
                (label, short)
            } else {
                (label, cells)
            }
        });
    let (shared, varying): (Vec<_>, Vec<_>) =
        rows.partition(|(_, cells)| cells.windows(2).all(|w| w[0] == w[1]));
    let table = Table::new(
        header,
        varying
            .into_iter()
            .map(|(label, cells)| std::iter::once(label).chain(cells).collect())
            .collect(),
    );
    let mut by_run = table.transposed();
    if let Some(first) = by_run.header.first_mut() {
        *first = "run".into();
    }
    let mut blocks = vec![Block::Table(by_run)];
    if !shared.is_empty() {
        let said: Vec<String> = shared
            .iter()
            .map(|(label, cells)| {
                format!(
                    "{label}: {}",
                    cells
                        .first()
                        .map_or("—", String::as_str)
                        .replace('\n', ", ")
                )
            })
            .collect();
        blocks.push(Note::plain(format!("Every run: {}.", said.join("; "))));
    }
    blocks
}
