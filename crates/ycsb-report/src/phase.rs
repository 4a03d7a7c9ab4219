//! A phase's section: every chart of its time series (throughput, latency
//! and intended latency per operation, latency distributions, client CPU,
//! memory and disk I/O, database size, files per level, the engine's
//! gauges), each drawn once per panel of runs with its own time axis.

use ycsb_results::{PhaseReport, SeriesRow};

use crate::cdf;
use crate::gauges;
use crate::model::{Block, Figure, Grid, Note, Section};
use crate::runs::{Layout, Run};
use crate::series::{
    full_rows, has_intended, operations, phase_seconds, section, why_no_client, why_no_rates,
    why_no_series,
};
use crate::style::Dash;
use crate::svg::{Chart, Series};

/// Panels of more runs than this draw one line per run where they would
/// draw several (p99 alone, CPU as user + system), so they stay legible.
const FEW_RUNS: usize = 3;

/// What a chart family knows of one run when drawing it.
pub(crate) struct Look<'a> {
    /// The run's legend text.
    pub(crate) legend: &'a str,
    /// Its palette colour.
    pub(crate) colour: usize,
    /// Whether its panel has many runs (draw one line per run).
    pub(crate) crowded: bool,
}

impl Look<'_> {
    /// A series of the run, in its colour, `dash` telling its lines apart.
    pub(crate) fn series(&self, suffix: &str, points: Vec<(f64, f64)>, dash: Dash) -> Series {
        let name = if suffix.is_empty() {
            self.legend.to_string()
        } else {
            format!("{} {suffix}", self.legend)
        };
        Series::new(name, points).styled(self.colour, dash)
    }
}

/// A run's series for a chart, or why it has none.
pub(crate) type Draw<'a> = dyn Fn(&Run, &PhaseReport, &Look) -> Result<Vec<Series>, String> + 'a;

/// A chart drawn once per panel: its title and axes, and how a run's
/// series are drawn.
pub(crate) struct Family<'a> {
    pub(crate) chart: Chart,
    pub(crate) draw: Box<Draw<'a>>,
}

/// A chart with what its runs drew, or the one line saying why none did;
/// `missing` holds per run without data its legend and the reason.
fn finish(chart: Chart, missing: &[(String, String)]) -> Block {
    let reasons = || {
        missing
            .iter()
            .map(|(run, why)| format!("{run}: {why}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    if chart.is_empty() {
        let all_same = missing.windows(2).all(|w| w[0].1 == w[1].1);
        let reason = match missing.first() {
            Some((_, why)) if all_same => why.clone(),
            _ => reasons(),
        };
        Block::Missing {
            title: chart.title,
            reason,
        }
    } else {
        Block::Chart(Figure {
            remark: (!missing.is_empty()).then(|| format!("no data for {}", reasons())),
            chart,
        })
    }
}

/// The family drawn in each panel of `layout`: one full-width chart for
/// one panel, else a heading and the panels side by side (one line when
/// none has data, for the same reason).
pub(crate) fn family_blocks(
    runs: &[Run],
    phase: &str,
    layout: &Layout,
    family: &Family,
) -> Vec<Block> {
    let crowded = layout.largest_panel() > FEW_RUNS;
    let panels: Vec<Block> = layout
        .panels
        .iter()
        .map(|panel| {
            let mut chart = family.chart.clone();
            if !panel.key.is_empty() {
                chart.title = format!("{}: {}", chart.title, panel.key);
            }
            let mut missing = Vec::new();
            for &i in &panel.members {
                let (run, legend) = (&runs[i], layout.legends[i].as_str());
                let Some(p) = run.report.phase(phase) else {
                    continue;
                };
                let look = Look {
                    legend,
                    colour: layout.colours[i],
                    crowded,
                };
                match (family.draw)(run, p, &look) {
                    Ok(series) if series.iter().any(Series::has_data) => {
                        chart.series.extend(series);
                    }
                    Ok(_) => missing.push((legend.to_string(), "no data".to_string())),
                    Err(why) => missing.push((legend.to_string(), why)),
                }
            }
            finish(chart, &missing)
        })
        .collect();
    match panels.as_slice() {
        [one] => vec![one.clone()],
        _ => {
            let reasons: Vec<&str> = panels
                .iter()
                .filter_map(|b| match b {
                    Block::Missing { reason, .. } => Some(reason.as_str()),
                    _ => None,
                })
                .collect();
            if reasons.len() == panels.len() && reasons.windows(2).all(|w| w[0] == w[1]) {
                return vec![Block::Missing {
                    title: family.chart.title.clone(),
                    reason: reasons[0].to_string(),
                }];
            }
            vec![
                Block::Heading(family.chart.title.clone()),
                Block::Grid(Grid { columns: 2, panels }),
            ]
        }
    }
}

fn time_chart(title: &str, y_label: &str) -> Chart {
    Chart::new(title, "time (s)", y_label)
}

/// Throughput per full interval.
fn throughput<'a>() -> Family<'a> {
    Family {
        chart: time_chart("Throughput", "operations/s"),
        draw: Box::new(|run, p, look| {
            let points: Vec<_> = full_rows(p)
                .iter()
                .map(|r| (r.time_s, r.throughput))
                .collect();
            if points.is_empty() {
                return Err(why_no_rates(&run.report, p));
            }
            Ok(vec![look.series("", points, Dash::Solid)])
        }),
    }
}

/// Latency of `op` over time (service time, or intended latency): p50,
/// p99 and p99.9 per run, p99 alone in crowded panels.
fn latency<'a>(op: &'a str, intended: bool, crowded: bool) -> Family<'a> {
    let what = if intended {
        "intended latency"
    } else {
        "latency"
    };
    let title = if crowded {
        format!("{op} p99 {what}")
    } else {
        format!("{op} {what}")
    };
    type Percentile = fn(&ycsb_results::SeriesSection) -> u64;
    Family {
        chart: time_chart(&title, "latency (µs)").with_log_y(),
        draw: Box::new(move |run, p, look| {
            if let Some(why) = why_no_series(&run.report, p) {
                return Err(why);
            }
            if intended && !has_intended(p, op) {
                return Err(if run.report.config_value("target").is_none() {
                    "it ran without a target rate (-target), so no intended latency was measured"
                        .into()
                } else {
                    "no interval performed it".into()
                });
            }
            let percentiles: &[(Percentile, &str, Dash)] = if look.crowded {
                &[(|s| s.p99_us, "", Dash::Solid)]
            } else {
                &[
                    (|s| s.p50_us, "p50", Dash::Solid),
                    (|s| s.p99_us, "p99", Dash::Dashed),
                    (|s| s.p999_us, "p99.9", Dash::Dotted),
                ]
            };
            let series: Vec<Series> = percentiles
                .iter()
                .map(|(figure, label, dash)| {
                    let points = p
                        .series()
                        .iter()
                        .map(|r| {
                            // An idle interval has no latency: a gap, not 0.
                            let y = section(r, op, intended)
                                .filter(|s| s.operations > 0)
                                .map_or(f64::NAN, |s| figure(s) as f64);
                            (r.time_s, y)
                        })
                        .collect();
                    look.series(label, points, *dash)
                })
                .collect();
            if !series.iter().any(Series::has_data) {
                return Err("no interval performed it".into());
            }
            Ok(series)
        }),
    }
}

/// A figure of the client's resources in a row (NaN when not sampled).
fn client(row: &SeriesRow, figure: impl Fn(&ycsb_results::ResourceUsage) -> f64) -> f64 {
    row.client.as_ref().map_or(f64::NAN, figure)
}

/// The client's CPU over its full intervals.
fn cpu<'a>() -> Family<'a> {
    Family {
        chart: time_chart("Client CPU", "% of one core"),
        draw: Box::new(|run, p, look| {
            let rows = full_rows(p);
            let line = |figure: fn(&ycsb_results::ResourceUsage) -> f64| {
                rows.iter()
                    .map(|r| (r.time_s, client(r, figure)))
                    .collect::<Vec<_>>()
            };
            let series = if look.crowded {
                vec![look.series("", line(|c| c.cpu_user_pct + c.cpu_system_pct), Dash::Solid)]
            } else {
                vec![
                    look.series("user", line(|c| c.cpu_user_pct), Dash::Solid),
                    look.series("system", line(|c| c.cpu_system_pct), Dash::Dashed),
                ]
            };
            if !series.iter().any(Series::has_data) {
                return Err(why_no_client(&run.report, p, true));
            }
            Ok(series)
        }),
    }
}

/// The client's resident memory.
fn rss<'a>() -> Family<'a> {
    Family {
        chart: time_chart("Client memory (RSS)", "RSS").with_bytes(),
        draw: Box::new(|run, p, look| {
            let points: Vec<_> = p
                .series()
                .iter()
                .map(|r| (r.time_s, client(r, |c| c.rss_bytes as f64)))
                .collect();
            let series = vec![look.series("", points, Dash::Solid)];
            if !series.iter().any(Series::has_data) {
                return Err(why_no_client(&run.report, p, false));
            }
            Ok(series)
        }),
    }
}

/// The client's storage I/O rates.
fn disk<'a>() -> Family<'a> {
    Family {
        chart: time_chart("Client disk I/O", "{bytes}/s").with_bytes(),
        draw: Box::new(|run, p, look| {
            let rows = full_rows(p);
            let rate = |v: Option<f64>| v.unwrap_or(f64::NAN);
            let line = |figure: &dyn Fn(&ycsb_results::ResourceUsage) -> f64| {
                rows.iter()
                    .map(|r| (r.time_s, client(r, figure)))
                    .collect::<Vec<_>>()
            };
            let series = if look.crowded {
                vec![look.series(
                    "read + write",
                    line(&|c| rate(c.read_bytes_per_s) + rate(c.write_bytes_per_s)),
                    Dash::Solid,
                )]
            } else {
                vec![
                    look.series("write", line(&|c| rate(c.write_bytes_per_s)), Dash::Solid),
                    look.series("read", line(&|c| rate(c.read_bytes_per_s)), Dash::Dashed),
                ]
            };
            if !series.iter().any(Series::has_data) {
                return Err(why_no_client(&run.report, p, true));
            }
            Ok(series)
        }),
    }
}

/// The database directory's size on disk.
fn db_size<'a>() -> Family<'a> {
    Family {
        chart: time_chart("Database size on disk", "size").with_bytes(),
        draw: Box::new(|run, p, look| {
            if let Some(why) = why_no_series(&run.report, p) {
                return Err(why);
            }
            let points: Vec<_> = p
                .series()
                .iter()
                .map(|r| (r.time_s, r.db_size_bytes.map_or(f64::NAN, |b| b as f64)))
                .collect();
            let series = vec![look.series("", points, Dash::Solid)];
            if !series.iter().any(Series::has_data) {
                return Err("no data directory was sized (the store keeps none here; monitor.dir names one to size)".into());
            }
            Ok(series)
        }),
    }
}

/// The operations any run measured in the phase, in first-seen order.
fn phase_operations(runs: &[Run], phase: &str) -> Vec<String> {
    let mut ops: Vec<String> = Vec::new();
    for p in runs.iter().filter_map(|r| r.report.phase(phase)) {
        for op in operations(p) {
            if !ops.contains(&op) {
                ops.push(op);
            }
        }
    }
    ops
}

/// The section of one phase: a note on what rate charts leave out, then
/// every chart family over the layout's panels, files per level, and the
/// engine's gauges by store.
pub fn phase_section(runs: &[Run], phase: &str) -> Section {
    let present: Vec<usize> = (0..runs.len())
        .filter(|&i| runs[i].report.phase(phase).is_some())
        .collect();
    let seconds: Vec<f64> = runs
        .iter()
        .map(|r| r.report.phase(phase).map_or(0.0, phase_seconds))
        .collect();
    let layout = Layout::new(runs, &present, &seconds);
    let crowded = layout.largest_panel() > FEW_RUNS;
    let mut section = Section::new(format!("{phase} phase"));
    let blocks = &mut section.blocks;
    let partial = present.iter().any(|&i| {
        runs[i]
            .report
            .phase(phase)
            .is_some_and(|p| full_rows(p).len() < p.series().len())
    });
    if partial {
        blocks.push(Note::plain(
            "Rate charts (throughput, CPU, disk I/O) leave out each run's last, partial interval: a few milliseconds' rate is not an interval's.",
        ));
    }
    if layout.panels.len() > 1 {
        blocks.push(Note::plain(format!(
            "{} runs in {} panels, each with its own time axis: runs are grouped by what they share, and runs of very different lengths are kept apart.",
            present.len(),
            layout.panels.len()
        )));
    }
    let ops = phase_operations(runs, phase);
    let any_intended = present.iter().any(|&i| {
        runs[i]
            .report
            .phase(phase)
            .is_some_and(|p| ops.iter().any(|op| has_intended(p, op)))
    });
    let mut families = vec![throughput()];
    for op in &ops {
        families.push(latency(op, false, crowded));
        if any_intended {
            families.push(latency(op, true, crowded));
        }
    }
    for family in &families {
        blocks.extend(family_blocks(runs, phase, &layout, family));
    }
    if any_intended {
        blocks.push(Note::plain(
            "Intended latency counts from when each operation was due under the target rate (-target), not from when it started: it includes the wait a stalled store imposes on the operations queued behind (coordinated omission corrected).",
        ));
    }
    for op in &ops {
        blocks.extend(family_blocks(runs, phase, &layout, &cdf::family(op)));
    }
    for family in [cpu(), rss(), disk(), db_size()] {
        blocks.extend(family_blocks(runs, phase, &layout, &family));
    }
    blocks.extend(gauges::level_blocks(runs, phase, &layout));
    blocks.extend(gauges::gauge_blocks(runs, phase, &layout));
    section
}
