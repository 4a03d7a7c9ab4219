//! Runs side by side: a summary table of each export's figures, then
//! per phase one set of charts with every run overlaid, then each run's
//! command line and configuration behind a fold.

use std::fmt::Write as _;

use ycsb_results::{PhaseReport, RunMetadata, RunReport, SeriesRow, SeriesSection};

use crate::svg::{escape, render_svg, Chart, Dash, Series};
use crate::{HEIGHT, WIDTH};

/// Sections that are bookkeeping, not workload operations.
const SKIPPED_SECTIONS: [&str; 2] = ["CLEANUP", "VERIFY"];

/// A rate interval shorter than this share of the granularity (a phase's
/// last, partial interval) is left out of rate charts: its few operations
/// over a few milliseconds are noise that a full-width point would
/// present as a full interval's rate.
const FULL_INTERVAL: f64 = 0.9;

/// One run: a JSON export and the name the report gives it.
#[derive(Clone, Debug)]
pub struct Run {
    /// What names the run in headings, legends and the table: the store,
    /// the workload and whatever else tells it apart from the other runs.
    pub name: String,
    /// The file (or source) the export came from.
    pub origin: String,
    /// The export.
    pub report: RunReport,
}

impl Run {
    /// Whether the export says its engine library was built with
    /// assertions (`metadata.engine_build.assertions`): its figures are
    /// slower than a release build's, and the report says so.
    pub fn assertions_enabled(&self) -> bool {
        self.report
            .metadata
            .engine_build
            .as_ref()
            .is_some_and(|b| b.assertions_enabled())
    }
}

/// One chart of a [`ChartGroup`], or the one line saying why it has none.
#[derive(Clone, Debug, PartialEq)]
pub enum Figure {
    /// A chart with data; `remark` names runs that had none, and why.
    Drawn {
        /// The chart.
        chart: Chart,
        /// Runs left out of it, and why.
        remark: Option<String>,
    },
    /// A chart no run had data for.
    Missing {
        /// The chart's title.
        title: String,
        /// Why there is no data (`timeseries.granularity=0 turns ...`).
        reason: String,
    },
}

/// The charts of one phase, every run overlaid.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartGroup {
    /// The heading (`run phase`).
    pub heading: String,
    /// A note on what the charts leave out, if anything.
    pub note: Option<String>,
    /// The charts, in order.
    pub figures: Vec<Figure>,
}

impl ChartGroup {
    /// The drawn charts.
    pub fn charts(&self) -> impl Iterator<Item = &Chart> {
        self.figures.iter().filter_map(|f| match f {
            Figure::Drawn { chart, .. } => Some(chart),
            Figure::Missing { .. } => None,
        })
    }
}

/// The value of `key` in an export's effective configuration.
fn config<'a>(doc: &'a RunReport, key: &str) -> Option<&'a str> {
    doc.config_value(key)
}

/// The workload a run ran: the first `-P` file named like a workload
/// (`workloads/workloada`), else the first `-P` file, else the class.
fn workload_name(doc: &RunReport) -> String {
    let args: Vec<&str> = doc
        .metadata
        .command_line
        .iter()
        .map(String::as_str)
        .collect();
    let files: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "-P")
        .map(|w| w[1].rsplit('/').next().unwrap_or(w[1]))
        .collect();
    files
        .iter()
        .find(|f| f.starts_with("workload"))
        .or(files.first())
        .map(|f| f.to_string())
        .or_else(|| config(doc, "workload").map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn store_name(doc: &RunReport) -> String {
    doc.metadata.store.as_deref().unwrap_or("?").to_string()
}

fn file_stem(origin: &str) -> String {
    let file = origin.rsplit('/').next().unwrap_or(origin);
    file.strip_suffix(".json").unwrap_or(file).to_string()
}

/// Names exports as runs, each by its store and workload plus what
/// tells it apart from the others (engine version, threads, records, and
/// as a last resort its file name).
pub fn runs_from_exports(exports: Vec<(String, RunReport)>) -> Vec<Run> {
    /// A property of a run that may tell it apart (`8 threads`).
    type Trait<'a> = &'a dyn Fn(&RunReport) -> Option<String>;
    let differs = |trait_of: Trait| {
        let values: Vec<Option<String>> = exports.iter().map(|(_, d)| trait_of(d)).collect();
        values.iter().any(|v| v != &values[0]).then_some(values)
    };
    let versions = differs(&|d| d.metadata.engine_version.clone());
    let mut names: Vec<String> = exports
        .iter()
        .enumerate()
        .map(|(i, (_, d))| {
            let version = versions
                .as_ref()
                .and_then(|v| v[i].as_ref())
                .map_or_else(String::new, |v| format!(" {v}"));
            format!("{}{version} · {}", store_name(d), workload_name(d))
        })
        .collect();
    let others: [Trait; 2] = [
        &|d| config(d, "threadcount").map(|t| format!("{t} threads")),
        &|d| config(d, "recordcount").map(|r| format!("{r} records")),
    ];
    for trait_of in others {
        if let Some(values) = differs(trait_of) {
            for (name, value) in names.iter_mut().zip(values) {
                name.push_str(&format!(" · {}", value.unwrap_or_else(|| "?".into())));
            }
        }
    }
    let duplicated: Vec<bool> = names
        .iter()
        .map(|n| names.iter().filter(|m| *m == n).count() > 1)
        .collect();
    for ((name, (origin, _)), duplicate) in names.iter_mut().zip(&exports).zip(duplicated) {
        if duplicate {
            name.push_str(&format!(" · {}", file_stem(origin)));
        }
    }
    exports
        .into_iter()
        .zip(names)
        .map(|((origin, report), name)| Run {
            name,
            origin,
            report,
        })
        .collect()
}

/// A phase's workload operations (no bookkeeping, no intended-latency
/// twins), from its final sections.
fn operations(phase: &PhaseReport) -> Vec<String> {
    phase
        .sections
        .iter()
        .filter(|s| !s.intended)
        .map(|s| s.name.as_str())
        .filter(|n| !SKIPPED_SECTIONS.contains(n))
        .map(str::to_string)
        .collect()
}

/// Why a phase has no time series.
fn no_series_reason(doc: &RunReport, phase: &PhaseReport) -> Option<String> {
    if !phase.series().is_empty() {
        return None;
    }
    let granularity = config(doc, "timeseries.granularity");
    if granularity.and_then(|g| g.parse::<f64>().ok()) == Some(0.0) {
        return Some("timeseries.granularity=0 turns the time series off".into());
    }
    Some(if phase.observation.is_some() {
        format!(
            "the phase ended before its first interval of timeseries.granularity={} s",
            granularity.unwrap_or("?")
        )
    } else {
        "the export has no time series for this phase (phases[].observation.series)".into()
    })
}

/// Whether a phase's stability figures are too few to judge from.
fn too_short(doc: &RunReport, intervals: usize) -> bool {
    let window = config(doc, "steadystate.window")
        .and_then(|w| w.parse::<usize>().ok())
        .unwrap_or(5)
        .max(1);
    intervals < ycsb_results::JUDGED_WINDOWS * window
}

/// The level of a files-per-level gauge name (`...num-files-at-level3`).
pub(crate) fn level_of(gauge: &str) -> Option<u32> {
    gauge
        .rsplit_once("files-at-level")
        .and_then(|(_, level)| level.parse().ok())
}

fn mib(bytes: f64) -> String {
    format!("{:.1} MiB", bytes / 1_048_576.0)
}

/// The summary table: one column per run, one row per figure.
fn summary_rows(runs: &[Run]) -> Vec<(String, Vec<String>)> {
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut row = |label: &str, cell: &dyn Fn(&RunReport) -> String| {
        rows.push((
            label.to_string(),
            runs.iter().map(|r| cell(&r.report)).collect(),
        ));
    };
    row("export", &|_| String::new());
    row("store", &|d| {
        let m = &d.metadata;
        match (m.engine.as_deref(), m.engine_version.as_deref()) {
            (Some(e), Some(v)) if !v.is_empty() => format!("{} ({e} {v})", store_name(d)),
            _ => store_name(d),
        }
    });
    // Whatever the export says of how the engine library was built,
    // shown as it is: the export owns that vocabulary.
    row("engine build", &|d| engine_build(&d.metadata));
    row("writes synced", &|d| durability(&d.metadata));
    row("workload", &|d| workload_name(d));
    row("threads", &|d| {
        config(d, "threadcount").unwrap_or("?").into()
    });
    row("records", &|d| {
        config(d, "recordcount").unwrap_or("?").into()
    });
    row("operations", &|d| {
        d.phase("run").map_or_else(
            || config(d, "operationcount").unwrap_or("?").to_string(),
            |p| p.operations.to_string(),
        )
    });
    for name in ["load", "run"] {
        row(&format!("{name} throughput (ops/s)"), &|d| {
            d.phase(name)
                .map_or_else(|| "—".into(), |p| format!("{:.0}", p.throughput))
        });
    }
    // Latency of every operation any run performed in its run phase (or
    // its load phase, for a load-only export).
    fn latency_phase(d: &RunReport) -> Option<&PhaseReport> {
        d.phase("run").or_else(|| d.phase("load"))
    }
    let mut ops: Vec<String> = Vec::new();
    for run in runs {
        for op in latency_phase(&run.report)
            .map(operations)
            .unwrap_or_default()
        {
            if !ops.contains(&op) {
                ops.push(op);
            }
        }
    }
    for op in &ops {
        row(&format!("{op} p50 / p99 / p99.9 (µs)"), &|d| {
            let section = latency_phase(d)
                .and_then(|p| p.sections.iter().find(|s| s.name == *op && !s.intended));
            section.map_or_else(
                || "—".into(),
                |s| {
                    [50.0, 99.0, 99.9]
                        .map(|p| {
                            s.percentile_us(p)
                                .map_or_else(|| "?".into(), |v| v.to_string())
                        })
                        .join(" / ")
                },
            )
        });
    }
    row("errors", &|d| errors(d));
    row("stability (run)", &|d| {
        let Some(p) = d.phase("run") else {
            return "—".into();
        };
        if let Some(reason) = no_series_reason(d, p) {
            return format!("not measured: {reason}");
        }
        let s = p.observation.as_ref().and_then(|o| o.stability.as_ref());
        let intervals = s.map_or(0, |s| s.intervals);
        let Some(s) = s.filter(|_| !too_short(d, intervals)) else {
            return format!("too short to judge ({intervals} intervals)");
        };
        let settled = s.steady_state.as_ref().map_or_else(
            || "did not settle".into(),
            |steady| format!("settled at {:.1} s", steady.time_s),
        );
        format!("CV {:.1} %, {settled}", s.cv * 100.0)
    });
    type Ratio = fn(&ycsb_results::Amplification) -> Option<f64>;
    let ratios: [(&str, Ratio); 2] = [
        ("write amplification", |a| a.write_amplification),
        ("space amplification", |a| a.space_amplification),
    ];
    for (label, ratio) in ratios {
        row(label, &|d| {
            let parts: Vec<String> = d
                .phases
                .iter()
                .filter_map(|p| {
                    let a = ratio(p.observation.as_ref()?.amplification.as_ref()?)?;
                    Some(format!("{} {a:.2}", p.phase))
                })
                .collect();
            if parts.is_empty() {
                "—".into()
            } else {
                parts.join(", ")
            }
        });
    }
    row("client CPU (mean % of one core)", &|d| {
        let mut parts = Vec::new();
        for p in &d.phases {
            let cpu: Vec<f64> = full_rows(p)
                .iter()
                .map(|r| {
                    r.client
                        .as_ref()
                        .map_or(f64::NAN, |c| c.cpu_user_pct + c.cpu_system_pct)
                })
                .filter(|v| v.is_finite())
                .collect();
            if !cpu.is_empty() {
                parts.push(format!(
                    "{} {:.0} %",
                    p.phase,
                    cpu.iter().sum::<f64>() / cpu.len() as f64
                ));
            }
        }
        if parts.is_empty() {
            "—".into()
        } else {
            parts.join(", ")
        }
    });
    row("client peak RSS", &|d| {
        d.phases
            .iter()
            .flat_map(PhaseReport::series)
            .filter_map(|r| Some(r.client.as_ref()?.peak_rss_bytes as f64))
            .reduce(f64::max)
            .map_or_else(|| "—".into(), mib)
    });
    rows
}

/// The names of the gauges ending in `suffix` that some row gives a value
/// other than 0, sorted (a gauge that stayed 0 is no line worth drawing).
fn suffixed_gauges(rows: &[SeriesRow], suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for row in rows {
        for name in row.gauges.keys() {
            if name.ends_with(suffix) && !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    names.sort();
    names.retain(|name| rows.iter().any(|r| gauge(r, name) > 0.0));
    names
}

/// A gauge's value in a row (NaN when the row lacks it: a gap).
fn gauge(row: &SeriesRow, name: &str) -> f64 {
    row.gauges.get(name).copied().unwrap_or(f64::NAN)
}

/// A figure of the client's resources in a row (NaN when not sampled).
fn client(row: &SeriesRow, figure: impl Fn(&ycsb_results::ResourceUsage) -> f64) -> f64 {
    row.client.as_ref().map_or(f64::NAN, figure)
}

/// A rate that may not have been measured (NaN then).
fn rate(value: Option<f64>) -> f64 {
    value.unwrap_or(f64::NAN)
}

/// How the engine library was built, as `key: value` lines.
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

/// A phase's rows whose interval is full enough to chart as a rate.
fn full_rows(phase: &PhaseReport) -> Vec<&SeriesRow> {
    let granularity = phase.observation.as_ref().map_or(0.0, |o| o.granularity_s);
    phase
        .series()
        .iter()
        .filter(|r| r.interval_s.is_nan() || r.interval_s >= granularity * FULL_INTERVAL)
        .collect()
}

fn section<'a>(row: &'a SeriesRow, name: &str) -> Option<&'a SeriesSection> {
    row.sections.iter().find(|s| s.name == name && !s.intended)
}

/// A chart being built from every run: its series, and per run without
/// data the reason.
struct Builder {
    chart: Chart,
    missing: Vec<(String, String)>,
}

impl Builder {
    fn new(chart: Chart) -> Self {
        Self {
            chart,
            missing: Vec::new(),
        }
    }

    /// Adds `series` of run `run`, or its `reason` when none has a point.
    fn add(&mut self, run: &str, series: Vec<Series>, reason: impl FnOnce() -> String) {
        let has_data = series
            .iter()
            .flat_map(|s| &s.points)
            .any(|(x, y)| x.is_finite() && y.is_finite());
        if has_data {
            self.chart.series.extend(series);
        } else {
            self.missing.push((run.to_string(), reason()));
        }
    }

    fn finish(self) -> Figure {
        let reasons = |missing: &[(String, String)]| {
            missing
                .iter()
                .map(|(run, why)| format!("{run}: {why}"))
                .collect::<Vec<_>>()
                .join("; ")
        };
        if self.chart.is_empty() {
            let all_same = self.missing.windows(2).all(|w| w[0].1 == w[1].1);
            let reason = match self.missing.first() {
                Some((_, why)) if all_same => why.clone(),
                _ => reasons(&self.missing),
            };
            Figure::Missing {
                title: self.chart.title,
                reason,
            }
        } else {
            Figure::Drawn {
                remark: (!self.missing.is_empty())
                    .then(|| format!("no data for {}", reasons(&self.missing))),
                chart: self.chart,
            }
        }
    }
}

/// The charts of one phase, every run that has it overlaid.
fn phase_group(runs: &[Run], phase_name: &str) -> ChartGroup {
    let time = |row: &SeriesRow| row.time_s;
    let present: Vec<(usize, &Run, &PhaseReport)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.report.phase(phase_name).map(|p| (i, r, p)))
        .collect();
    let mut left_out = false;
    for (_, _, p) in &present {
        left_out |= full_rows(p).len() < p.series().len();
    }

    let mut throughput = Builder::new(Chart::new("Throughput", "time (s)", "operations/s"));
    let mut cpu = Builder::new(Chart::new("Client CPU", "time (s)", "% of one core"));
    let mut rss = Builder::new(Chart::new("Client memory (RSS)", "time (s)", "MiB"));
    let mut disk = Builder::new(Chart::new("Client disk I/O", "time (s)", "MB/s"));
    let mut db_size = Builder::new(Chart::new("Database size on disk", "time (s)", "MB"));
    let mut levels = Builder::new(Chart::new("Files per level", "time (s)", "files").with_steps());
    // Engine gauges in bytes (`wiredtiger.cache-bytes`,
    // `rocksdb.estimate-pending-compaction-bytes`, `etcd.db-size-bytes`):
    // a chart only when some run's engine has some that are not all 0.
    let mut engine_bytes = Builder::new(Chart::new("Engine bytes", "time (s)", "MB"));
    let mut any_engine_bytes = false;
    // A B-tree engine's pages by kind (`lmdb.leaf-pages`,
    // `sqlite.free-pages`), a chart only when some run has them.
    let mut pages = Builder::new(Chart::new("Pages", "time (s)", "pages"));
    let mut any_pages = false;
    // Latency: one chart per operation, in first-seen order.
    let mut latency: Vec<(String, Builder)> = Vec::new();

    for &(colour, run, p) in &present {
        let rows = p.series();
        let full = full_rows(p);
        let no_series = no_series_reason(&run.report, p);
        let why = |default: &str| no_series.clone().unwrap_or_else(|| default.to_string());
        let styled = |name: String, points: Vec<(f64, f64)>, dash: Dash| {
            Series::new(name, points).styled(colour, dash)
        };

        throughput.add(
            &run.name,
            vec![styled(
                run.name.clone(),
                full.iter().map(|r| (time(r), r.throughput)).collect(),
                Dash::Solid,
            )],
            || why("no interval was long enough to chart"),
        );

        for op in operations(p) {
            let index = match latency.iter().position(|(name, _)| *name == op) {
                Some(i) => i,
                None => {
                    let mut chart = Chart::new(format!("{op} latency"), "time (s)", "latency (µs)");
                    chart.log_y = true;
                    latency.push((op.clone(), Builder::new(chart)));
                    latency.len() - 1
                }
            };
            type Latency = fn(&SeriesSection) -> u64;
            let percentiles: [(Latency, &str, Dash); 3] = [
                (|s| s.p50_us, "p50", Dash::Solid),
                (|s| s.p99_us, "p99", Dash::Dashed),
                (|s| s.p999_us, "p99.9", Dash::Dotted),
            ];
            let series = percentiles
                .into_iter()
                .map(|(latency, label, dash)| {
                    styled(
                        format!("{} {label}", run.name),
                        rows.iter()
                            .map(|r| {
                                // An idle interval has no latency: a gap, not 0.
                                let y = section(r, &op)
                                    .filter(|s| s.operations > 0)
                                    .map_or(f64::NAN, |s| latency(s) as f64);
                                (time(r), y)
                            })
                            .collect(),
                        dash,
                    )
                })
                .collect();
            latency[index]
                .1
                .add(&run.name, series, || why("no interval performed it"));
        }

        let not_sampled = || why("client resources were not sampled (Linux /proc/self is needed)");
        // Rates need a full interval: a phase shorter than one has none.
        let cpu_unsampled = || match p.observation.as_ref() {
            Some(o) if full.is_empty() && !rows.is_empty() => format!(
                "too short to sample: the phase lasted {:.2} s, less than one {} s interval",
                p.runtime_ns as f64 / 1e9,
                o.granularity_s
            ),
            _ => not_sampled(),
        };
        cpu.add(
            &run.name,
            vec![
                styled(
                    format!("{} user", run.name),
                    full.iter()
                        .map(|r| (time(r), client(r, |c| c.cpu_user_pct)))
                        .collect(),
                    Dash::Solid,
                ),
                styled(
                    format!("{} system", run.name),
                    full.iter()
                        .map(|r| (time(r), client(r, |c| c.cpu_system_pct)))
                        .collect(),
                    Dash::Dashed,
                ),
            ],
            cpu_unsampled,
        );
        rss.add(
            &run.name,
            vec![styled(
                run.name.clone(),
                rows.iter()
                    .map(|r| (time(r), client(r, |c| c.rss_bytes as f64) / 1_048_576.0))
                    .collect(),
                Dash::Solid,
            )],
            not_sampled,
        );
        disk.add(
            &run.name,
            vec![
                styled(
                    format!("{} write", run.name),
                    full.iter()
                        .map(|r| (time(r), client(r, |c| rate(c.write_bytes_per_s)) / 1e6))
                        .collect(),
                    Dash::Solid,
                ),
                styled(
                    format!("{} read", run.name),
                    full.iter()
                        .map(|r| (time(r), client(r, |c| rate(c.read_bytes_per_s)) / 1e6))
                        .collect(),
                    Dash::Dashed,
                ),
            ],
            || why("the client's I/O counters (/proc/self/io) were not readable"),
        );
        db_size.add(
            &run.name,
            vec![styled(
                run.name.clone(),
                rows.iter()
                    .map(|r| {
                        (
                            time(r),
                            r.db_size_bytes.map_or(f64::NAN, |b| b as f64) / 1e6,
                        )
                    })
                    .collect(),
                Dash::Solid,
            )],
            || why("no data directory was sized (an embedded engine's, or monitor.dir)"),
        );

        // Files per level: one colour per level, one pattern per run.
        let mut gauges: Vec<(u32, String)> = Vec::new();
        for row in rows {
            for name in row.gauges.keys() {
                if let Some(level) = level_of(name) {
                    if !gauges.iter().any(|(_, n)| n == name) {
                        gauges.push((level, name.clone()));
                    }
                }
            }
        }
        gauges.sort();
        let has_gauges = !gauges.is_empty();
        // Levels that never held a file would only stack flat lines at 0.
        gauges.retain(|(_, name)| rows.iter().any(|r| gauge(r, name) > 0.0));
        let dash = Dash::ALL[present
            .iter()
            .position(|(i, _, _)| *i == colour)
            .unwrap_or(0)
            % Dash::ALL.len()];
        let series_levels = gauges
            .iter()
            .map(|(level, name)| {
                Series::new(
                    format!("{} L{level}", run.name),
                    rows.iter().map(|r| (time(r), gauge(r, name))).collect(),
                )
                .styled(*level as usize, dash)
            })
            .collect();
        for (builder, any, suffix, scale) in [
            (&mut engine_bytes, &mut any_engine_bytes, "-bytes", 1e6),
            (&mut pages, &mut any_pages, "pages", 1.0),
        ] {
            let series = suffixed_gauges(rows, suffix)
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let short = name.rsplit_once('.').map_or(name.as_str(), |(_, n)| n);
                    styled(
                        format!("{} {short}", run.name),
                        rows.iter()
                            .map(|r| (time(r), gauge(r, name) / scale))
                            .collect(),
                        Dash::ALL[i % Dash::ALL.len()],
                    )
                })
                .collect::<Vec<_>>();
            *any |= !series.is_empty();
            builder.add(&run.name, series, || {
                why(&format!(
                    "the store reports no engine gauges named *{suffix}"
                ))
            });
        }

        levels.add(&run.name, series_levels, || {
            why(if has_gauges {
                "no level held a file (the data was still in memory tables)"
            } else {
                "the store reports no files-per-level gauges"
            })
        });
    }

    let mut figures = vec![throughput.finish()];
    figures.extend(latency.into_iter().map(|(_, b)| b.finish()));
    figures.extend([
        cpu.finish(),
        rss.finish(),
        disk.finish(),
        db_size.finish(),
        levels.finish(),
    ]);
    if any_engine_bytes {
        figures.push(engine_bytes.finish());
    }
    if any_pages {
        figures.push(pages.finish());
    }
    ChartGroup {
        heading: format!("{phase_name} phase"),
        note: left_out.then(|| {
            "Rate charts (throughput, CPU, disk I/O) leave out each run's last, partial interval: a few milliseconds' rate is not an interval's.".to_string()
        }),
        figures,
    }
}

/// A comparison of runs, ready to render.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The runs, in the order given.
    pub runs: Vec<Run>,
    /// Per phase (in first-seen order), the overlaid charts.
    pub groups: Vec<ChartGroup>,
}

impl Comparison {
    /// A warning when the runs differ in durability: some synced every
    /// write and others did not, so their write figures measure different
    /// things. `None` when they agree or it is not known.
    pub fn durability_warning(&self) -> Option<String> {
        let names = |durable: bool| -> Vec<&str> {
            self.runs
                .iter()
                .filter(|r| {
                    r.report.metadata.durability.as_ref().map(|d| d.durable) == Some(durable)
                })
                .map(|r| r.name.as_str())
                .collect()
        };
        let (synced, unsynced) = (names(true), names(false));
        (!synced.is_empty() && !unsynced.is_empty()).then(|| {
            format!(
                "these runs differ in durability: {} synced every write to disk, {} did not; \
                 their write figures are not comparable",
                synced.join(", "),
                unsynced.join(", ")
            )
        })
    }

    /// Compares `runs`: one chart group per phase any of them has.
    pub fn new(runs: Vec<Run>) -> Self {
        let mut phase_names: Vec<String> = Vec::new();
        for run in &runs {
            for p in &run.report.phases {
                if !phase_names.contains(&p.phase) {
                    phase_names.push(p.phase.clone());
                }
            }
        }
        let groups = phase_names
            .iter()
            .map(|name| phase_group(&runs, name))
            .collect();
        Self { runs, groups }
    }

    /// The default title: the runs' names.
    pub fn title(&self) -> String {
        let names: Vec<&str> = self.runs.iter().map(|r| r.name.as_str()).collect();
        format!("ycsb report: {}", names.join(" vs "))
    }

    /// The summary table's rows: a label, then one cell per run.
    pub fn summary(&self) -> Vec<(String, Vec<String>)> {
        let mut rows = summary_rows(&self.runs);
        if let Some(first) = rows.first_mut() {
            first.1 = self.runs.iter().map(|r| r.origin.clone()).collect();
        }
        rows
    }

    /// The comparison as one self-contained HTML page: no script, no
    /// external file, every chart an inline SVG.
    pub fn to_html(&self, title: &str) -> String {
        let mut html = format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title>\
             <style>body{{font-family:sans-serif;margin:24px;color:#222;max-width:{WIDTH}px}}\
             section{{margin-bottom:32px}}figure{{margin:0 0 16px 0}}\
             .note{{color:#555}}.warning{{color:#a33;font-weight:bold}}.remark{{color:#555;font-size:90%;margin:0 0 4px 72px}}\
             .missing{{color:#555;border-left:3px solid #bbb;padding-left:8px}}\
             table{{border-collapse:collapse;font-size:90%}}\
             th,td{{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;white-space:pre-line}}\
             thead th{{background:#f3f3f3}}td.n{{text-align:right;font-variant-numeric:tabular-nums}}\
             details{{margin:8px 0}}pre{{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:6px}}\
             </style></head><body><h1>{0}</h1>\n",
            escape(title)
        );
        html.push_str("<section><h2>Summary</h2>\n<table class=\"summary\"><thead><tr><th></th>");
        for run in &self.runs {
            let _ = write!(html, "<th>{}</th>", escape(&run.name));
        }
        html.push_str("</tr></thead><tbody>\n");
        for (label, cells) in self.summary() {
            let _ = write!(html, "<tr><th>{}</th>", escape(&label));
            for cell in cells {
                let numeric = cell
                    .split([' ', '/'])
                    .all(|w| w.is_empty() || w.parse::<f64>().is_ok());
                let _ = write!(
                    html,
                    "<td{}>{}</td>",
                    if numeric { " class=\"n\"" } else { "" },
                    escape(&cell)
                );
            }
            html.push_str("</tr>\n");
        }
        html.push_str("</tbody></table>\n");
        for run in self.runs.iter().filter(|r| r.assertions_enabled()) {
            let _ = writeln!(
                html,
                "<p class=\"warning\">{}: {}</p>",
                escape(&run.name),
                crate::ASSERTIONS_WARNING
            );
        }
        if let Some(warning) = self.durability_warning() {
            let _ = writeln!(html, "<p class=\"warning\">{}</p>", escape(&warning));
        }
        html.push_str("</section>\n");
        for group in &self.groups {
            // An anchor per phase (`#run-phase`), to link to.
            let _ = writeln!(
                html,
                "<section id=\"{}\"><h2>{}</h2>",
                escape(&group.heading.replace(' ', "-")),
                escape(&group.heading)
            );
            if let Some(note) = &group.note {
                let _ = writeln!(html, "<p class=\"note\">{}</p>", escape(note));
            }
            for figure in &group.figures {
                match figure {
                    Figure::Drawn { chart, remark } => {
                        html.push_str("<figure>");
                        html.push_str(&render_svg(chart, WIDTH, HEIGHT));
                        if let Some(remark) = remark {
                            let _ = write!(html, "<p class=\"remark\">{}</p>", escape(remark));
                        }
                        html.push_str("</figure>\n");
                    }
                    Figure::Missing { title, reason } => {
                        let _ = writeln!(
                            html,
                            "<p class=\"missing\"><b>{}</b>: no data: {}</p>",
                            escape(title),
                            escape(reason)
                        );
                    }
                }
            }
            html.push_str("</section>\n");
        }
        html.push_str("<section><h2>Command lines and configurations</h2>\n");
        for run in &self.runs {
            let _ = write!(
                html,
                "<details><summary>{}</summary><p>{}</p><pre>{}</pre><table><thead><tr><th>property</th><th>value</th><th>from</th></tr></thead><tbody>",
                escape(&run.name),
                escape(&run.origin),
                escape(&command_line(&run.report.metadata))
            );
            for entry in &run.report.config {
                let _ = write!(
                    html,
                    "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&entry.key),
                    escape(&entry.value),
                    escape(&entry.origin)
                );
            }
            html.push_str("</tbody></table></details>\n");
        }
        html.push_str("</section>\n</body></html>\n");
        html
    }
}

/// The command line as a shell would take it back (arguments with
/// spaces or quotes single-quoted).
fn command_line(metadata: &RunMetadata) -> String {
    let args = &metadata.command_line;
    if args.is_empty() {
        return "(not recorded)".into();
    }
    args.iter()
        .map(|a| {
            if a.is_empty()
                || a.contains(|c: char| c.is_whitespace() || "'\"$`\\;&|<>*?".contains(c))
            {
                format!("'{}'", a.replace('\'', "'\\''"))
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render_svg_page;
    use serde_json::{json, Value};

    /// An export of `store` (engine version `version`) whose run phase has
    /// three full 1 s intervals and a 10 ms tail.
    fn export(store: &str, version: &str, granularity: &str) -> Value {
        let row = |t: f64, ops: u64, p99: u64, l0: f64| {
            json!({
                "time_s": t, "interval_s": if t.fract() == 0.0 { 1.0 } else { 0.01 },
                "throughput": ops as f64, "operations": ops,
                "sections": [
                    {"name": "READ", "intended": false, "operations": ops / 2, "throughput": (ops / 2) as f64,
                     "p50_us": 10, "p99_us": p99, "p999_us": p99 * 3},
                    {"name": "UPDATE", "intended": false, "operations": 0, "throughput": 0.0,
                     "p50_us": 0, "p99_us": 0, "p999_us": 0},
                    {"name": "CLEANUP", "intended": false, "operations": 0},
                ],
                "client": {"cpu_user_pct": 50.0, "cpu_system_pct": 10.0, "rss_bytes": 2_097_152,
                           "peak_rss_bytes": 3_145_728, "read_bytes_per_s": 0.0, "write_bytes_per_s": 2e6},
                "monitor": null,
                "db_size_bytes": 5_000_000,
                "gauges": {"x.num-files-at-level0": l0, "x.num-files-at-level1": 4.0,
                           "x.num-files-at-level2": 0.0}
            })
        };
        let section = |name: &str, errors: u64| {
            json!({"name": name, "intended": false, "operations": 1000,
                   "percentiles": [{"percentile": 50.0, "us": 10}, {"percentile": 99.0, "us": 95},
                                   {"percentile": 99.9, "us": 12000}],
                   "returns": [{"status": "OK", "count": 1000 - errors}, {"status": "ERROR", "count": errors}]})
        };
        json!({
            "metadata": {"store": store, "engine": store.to_uppercase(), "engine_version": version,
                         "command_line": ["ycsb", "-run", "-P", "workloads/workloada", "-p", "a=b c"],
                         "engine_build": {"library": "/usr/lib/libx.so", "assertions": "disabled"}},
            "config": [{"key": "threadcount", "value": "2", "origin": "-threads"},
                       {"key": "recordcount", "value": "1000", "origin": "workloads/workloada:1"},
                       {"key": "timeseries.granularity", "value": granularity, "origin": "default"},
                       {"key": "steadystate.window", "value": "1", "origin": "-p"}],
            "phases": [
                {"phase": "run", "operations": 3100, "throughput": 1033.0,
                 "sections": [section("READ", 2), section("UPDATE", 0)],
                 "observation": if granularity == "0" { Value::Null } else { json!({
                    "granularity_s": 1.0,
                    "series": [row(1.0, 1000, 80, 2.0), row(2.0, 1200, 95, 3.0), row(3.0, 900, 400, 1.0),
                               row(3.01, 90_000, 400, 1.0)],
                    "stability": {"intervals": 3, "cv": 0.125, "steady_state": {"time_s": 2.0}},
                    "amplification": {"write_amplification": 3.5, "space_amplification": 1.25}})}},
                {"phase": "load", "throughput": 5000.0, "sections": []}
            ]
        })
    }

    /// Every field an export has, with neutral values: what [`complete`]
    /// fills in where a test's export leaves a field out.
    fn template() -> Value {
        let resources = json!({"cpu_user_pct": 0.0, "cpu_system_pct": 0.0, "rss_bytes": 0,
            "peak_rss_bytes": 0, "read_bytes": null, "write_bytes": null,
            "read_bytes_per_s": null, "write_bytes_per_s": null,
            "voluntary_ctxt_switches": 0, "involuntary_ctxt_switches": 0});
        let point = json!({"time_s": 0.0, "throughput": 0.0});
        json!({
            "metadata": {"tool": "ycsb", "version": "0", "git_revision": null, "host": null,
                         "start_time": "2026-12-04T00:00:00+00:00", "command_line": []},
            "config": [{"key": "", "value": "", "origin": ""}],
            "phases": [{"phase": "run", "runtime_ms": 0, "runtime_ns": 0, "operations": 0,
                "throughput": 0.0,
                "sections": [{"name": "READ", "operation": "READ", "intended": false,
                    "operations": 0, "average_us": 0.0, "min_us": 0, "max_us": 0,
                    "average_ns": 0.0, "min_ns": 0, "max_ns": 0,
                    "percentiles": [{"percentile": 50.0, "us": 0, "ns": 0}],
                    "returns": [{"status": "OK", "count": 0}]}],
                "observation": {"granularity_s": 1.0, "start_unix_ms": 0, "warmup": null,
                    "series": [{"time_s": 0.0, "unix_ms": 0, "interval_s": 1.0, "warmup": false,
                        "operations": 0, "throughput": 0.0, "errors": 0,
                        "sections": [{"name": "READ", "operation": "READ", "intended": false,
                            "operations": 0, "throughput": 0.0, "errors": 0, "avg_us": 0.0,
                            "min_us": 0, "p50_us": 0, "p99_us": 0, "p999_us": 0, "max_us": 0}],
                        "client": resources, "monitor": null, "db_size_bytes": null,
                        "gauges": {}}],
                    "stability": {"intervals": 0, "mean_throughput": 0.0,
                        "stddev_throughput": 0.0, "cv": 0.0, "slowest": point,
                        "fastest": point, "p99_us": [],
                        "steady_state": {"interval": 0, "time_s": 0.0}},
                    "amplification": {"user_bytes": 0.0, "write_bytes": null,
                        "write_amplification": null, "data_bytes": 0.0, "db_size_bytes": null,
                        "space_amplification": null}}}]
        })
    }

    /// Adds what `doc` lacks of `template` (objects key by key, each
    /// element of an array from the template's first), but an observation.
    fn fill(doc: &mut Value, template: &Value) {
        match (doc, template) {
            (Value::Object(fields), Value::Object(wanted)) => {
                for (key, value) in wanted {
                    match fields.get_mut(key) {
                        Some(present) => fill(present, value),
                        // A phase without an observation was not observed.
                        None if key == "observation" => {}
                        None => {
                            fields.insert(key.clone(), value.clone());
                        }
                    }
                }
            }
            (Value::Array(items), Value::Array(wanted)) if !wanted.is_empty() => {
                for item in items {
                    fill(item, &wanted[0]);
                }
            }
            _ => {}
        }
    }

    /// A test's export, completed and read typed.
    fn complete(mut doc: Value) -> RunReport {
        fill(&mut doc, &template());
        serde_json::from_value(doc).unwrap()
    }

    fn comparison(docs: Vec<(&str, Value)>) -> Comparison {
        Comparison::new(runs_from_exports(
            docs.into_iter()
                .map(|(o, d)| (o.to_string(), complete(d)))
                .collect(),
        ))
    }

    fn titles(group: &ChartGroup) -> Vec<String> {
        group
            .figures
            .iter()
            .map(|f| match f {
                Figure::Drawn { chart, .. } => chart.title.clone(),
                Figure::Missing { title, .. } => format!("missing {title}"),
            })
            .collect()
    }

    #[test]
    fn runs_are_named_by_what_tells_them_apart() {
        let runs = runs_from_exports(vec![
            (
                "a/rocks.json".into(),
                complete(export("rocksdb", "7.8.3", "1")),
            ),
            (
                "b/level.json".into(),
                complete(export("leveldb", "1.23", "1")),
            ),
        ]);
        assert_eq!(runs[0].name, "rocksdb 7.8.3 · workloada");
        assert_eq!(runs[1].name, "leveldb 1.23 · workloada");
        // The same engine with and without a patch: the file names tell.
        let runs = runs_from_exports(vec![
            (
                "base.json".into(),
                complete(export("rocksdb", "7.8.3", "1")),
            ),
            (
                "patched.json".into(),
                complete(export("rocksdb", "7.8.3", "1")),
            ),
        ]);
        assert_eq!(runs[0].name, "rocksdb · workloada · base");
        assert_eq!(runs[1].name, "rocksdb · workloada · patched");
    }

    #[test]
    fn charts_overlay_the_runs_per_phase() {
        let c = comparison(vec![
            ("r.json", export("rocksdb", "7.8.3", "1")),
            ("l.json", export("leveldb", "1.23", "1")),
        ]);
        assert_eq!(c.groups.len(), 2);
        let run = &c.groups[0];
        assert_eq!(run.heading, "run phase");
        assert_eq!(
            titles(run),
            [
                "Throughput",
                "READ latency",
                "missing UPDATE latency",
                "Client CPU",
                "Client memory (RSS)",
                "Client disk I/O",
                "Database size on disk",
                "Files per level"
            ]
        );
        let Figure::Drawn { chart, remark } = &run.figures[0] else {
            panic!()
        };
        // One line per run, in the run's colour; the 10 ms tail left out.
        assert!(remark.is_none());
        assert_eq!(chart.series.len(), 2);
        assert_eq!(chart.series[1].name, "leveldb 1.23 · workloada");
        assert_eq!(chart.series[1].colour, Some(1));
        assert_eq!(chart.series[0].points.len(), 3);
        assert!(run.note.as_deref().unwrap().contains("partial interval"));
        // UPDATE was idle in every interval: one line saying so, no chart.
        let Figure::Missing { reason, .. } = &run.figures[2] else {
            panic!("{:?}", run.figures[2])
        };
        assert_eq!(reason, "no interval performed it");
        // Files per level: steps; L2 never held a file; runs by pattern.
        let Figure::Drawn { chart, .. } = &run.figures[7] else {
            panic!()
        };
        assert!(chart.step && chart.integer_y);
        let names: Vec<_> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "rocksdb 7.8.3 · workloada L0",
                "rocksdb 7.8.3 · workloada L1",
                "leveldb 1.23 · workloada L0",
                "leveldb 1.23 · workloada L1"
            ]
        );
        assert_eq!(chart.series[2].dash, Dash::Dashed);
        assert_eq!(chart.series[2].colour, Some(0));
        // The load phase has no series: every chart is one line saying why.
        assert!(c.groups[1].figures.iter().all(
            |f| matches!(f, Figure::Missing { reason, .. } if reason.contains("no time series"))
        ));
    }

    #[test]
    fn assertion_enabled_engines_are_warned_about() {
        let mut debian = export("rocksdb", "7.8.3", "1");
        debian["metadata"]["engine_build"] = json!({"library": "/usr/lib/librocksdb.so.7.8",
            "assertions": "enabled", "evidence": "imports __assert_fail"});
        let mut release = export("rocksdb", "7.9.2", "1");
        release["metadata"]["engine_build"] =
            json!({"library": "/cache/librocksdb.so", "assertions": "disabled"});
        let c = comparison(vec![("d.json", debian), ("r.json", release)]);
        assert!(c.runs[0].assertions_enabled() && !c.runs[1].assertions_enabled());
        let html = c.to_html("t");
        assert_eq!(html.matches(crate::ASSERTIONS_WARNING).count(), 1);
        assert!(html.contains("rocksdb 7.8.3 · workloada: WARNING"));
        assert!(
            html.contains("assertions: enabled"),
            "the build row shows it"
        );
    }

    #[test]
    fn b_tree_page_gauges_get_a_chart_of_their_own() {
        let mut lmdb = export("lmdb", "0.9.24", "1");
        for (i, row) in lmdb["phases"][0]["observation"]["series"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .enumerate()
        {
            row["gauges"]["lmdb.leaf-pages"] = json!(10.0 * (i + 1) as f64);
            row["gauges"]["lmdb.branch-pages"] = json!(1.0);
        }
        let c = comparison(vec![("m.json", lmdb)]);
        let run = &c.groups[0];
        assert_eq!(titles(run).last().map(String::as_str), Some("Pages"));
        let Figure::Drawn { chart, .. } = run.figures.last().unwrap() else {
            panic!()
        };
        let names: Vec<_> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "lmdb · workloada branch-pages",
                "lmdb · workloada leaf-pages"
            ]
        );
        assert_eq!(chart.series[1].points[1], (2.0, 20.0));
    }

    #[test]
    fn engine_byte_gauges_get_a_chart_when_some_run_has_them() {
        let mut wt = export("wiredtiger", "3.2.1", "1");
        for (i, row) in wt["phases"][0]["observation"]["series"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .enumerate()
        {
            row["gauges"]["wiredtiger.cache-bytes"] = json!(1e6 * i as f64);
            row["gauges"]["wiredtiger.idle-bytes"] = json!(0.0);
        }
        let c = comparison(vec![
            ("w.json", wt),
            ("l.json", export("leveldb", "1.23", "1")),
        ]);
        let run = &c.groups[0];
        assert_eq!(titles(run).last().map(String::as_str), Some("Engine bytes"));
        let Figure::Drawn { chart, remark } = run.figures.last().unwrap() else {
            panic!()
        };
        // Only the gauge that moved; the run without such gauges named.
        let names: Vec<_> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["wiredtiger 3.2.1 · workloada cache-bytes"]);
        assert_eq!(chart.series[0].points[1].1, 1.0);
        assert!(
            remark.as_deref().unwrap_or("").contains("leveldb"),
            "{remark:?}"
        );
        // Without byte gauges in any run: no such chart at all.
        let c = comparison(vec![("l.json", export("leveldb", "1.23", "1"))]);
        assert!(!titles(&c.groups[0])
            .iter()
            .any(|t| t.contains("Engine bytes")));
    }

    #[test]
    fn runs_of_different_durability_are_shown_and_warned_about() {
        let mut synced = export("rocksdb", "7.8.3", "1");
        synced["metadata"]["durability"] =
            json!({"property": "rocksdb.sync", "value": "true", "durable": true});
        let mut unsynced = export("leveldb", "1.23", "1");
        unsynced["metadata"]["durability"] =
            json!({"property": "leveldb.sync", "value": "false", "durable": false});
        let unknown = export("leveldb", "1.23", "1");
        let c = comparison(vec![
            ("s.json", synced.clone()),
            ("u.json", unsynced),
            ("x.json", unknown),
        ]);
        let summary = c.summary();
        let row = summary.iter().find(|r| r.0 == "writes synced").unwrap();
        assert_eq!(
            row.1,
            ["yes (rocksdb.sync=true)", "no (leveldb.sync=false)", "—"]
        );
        let warning = c.durability_warning().unwrap();
        assert!(warning.contains("differ in durability"), "{warning}");
        assert!(c.to_html("t").contains(&escape(&warning)));
        // Runs that agree, or whose durability is not known: no warning.
        let same = comparison(vec![("a.json", synced.clone()), ("b.json", synced)]);
        assert_eq!(same.durability_warning(), None);
    }

    #[test]
    fn a_phase_shorter_than_an_interval_is_too_short_to_sample_not_unsampled() {
        let mut short = export("rocksdb", "7.8.3", "1");
        // One 0.4 s interval: its client figures exist, no full interval.
        let rows = short["phases"][0]["observation"]["series"]
            .as_array_mut()
            .unwrap();
        rows.truncate(1);
        rows[0]["time_s"] = json!(0.4);
        rows[0]["interval_s"] = json!(0.4);
        short["phases"][0]["runtime_ns"] = json!(400_000_000u64);
        let c = comparison(vec![("short.json", short)]);
        let cpu = c.groups[0]
            .figures
            .iter()
            .find_map(|f| match f {
                Figure::Missing { title, reason } if title == "Client CPU" => Some(reason.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(
            cpu,
            "too short to sample: the phase lasted 0.40 s, less than one 1 s interval"
        );
    }

    #[test]
    fn a_disabled_series_is_named_as_the_reason() {
        let c = comparison(vec![
            ("r.json", export("rocksdb", "7.8.3", "1")),
            ("off.json", export("rocksdb", "7.8.3", "0")),
        ]);
        let Figure::Drawn { remark, .. } = &c.groups[0].figures[0] else {
            panic!()
        };
        assert_eq!(
            remark.as_deref(),
            Some("no data for rocksdb · workloada · off: timeseries.granularity=0 turns the time series off")
        );
        let summary = c.summary();
        let stability = summary.iter().find(|r| r.0 == "stability (run)").unwrap();
        assert_eq!(stability.1[0], "CV 12.5 %, settled at 2.0 s");
        assert_eq!(
            stability.1[1],
            "not measured: timeseries.granularity=0 turns the time series off"
        );
    }

    #[test]
    fn the_summary_has_every_figure_per_run() {
        let mut short = export("leveldb", "1.23", "1");
        short["config"][3]["value"] = json!("5");
        let c = comparison(vec![
            ("r.json", export("rocksdb", "7.8.3", "1")),
            ("l.json", short),
        ]);
        let summary = c.summary();
        let cell = |label: &str, run: usize| {
            summary
                .iter()
                .find(|r| r.0 == label)
                .unwrap_or_else(|| panic!("{label}: {summary:?}"))
                .1[run]
                .clone()
        };
        assert_eq!(cell("export", 1), "l.json");
        assert_eq!(cell("store", 0), "rocksdb (ROCKSDB 7.8.3)");
        assert_eq!(
            cell("engine build", 0),
            "library: /usr/lib/libx.so\nassertions: disabled"
        );
        assert_eq!(cell("workload", 0), "workloada");
        assert_eq!(cell("threads", 0), "2");
        assert_eq!(cell("records", 0), "1000");
        assert_eq!(cell("operations", 0), "3100");
        assert_eq!(cell("load throughput (ops/s)", 0), "5000");
        assert_eq!(cell("run throughput (ops/s)", 0), "1033");
        assert_eq!(cell("READ p50 / p99 / p99.9 (µs)", 0), "10 / 95 / 12000");
        assert_eq!(cell("errors", 0), "2 (ERROR 2)");
        // Three intervals judge nothing when the window is five.
        assert_eq!(
            cell("stability (run)", 1),
            "too short to judge (3 intervals)"
        );
        assert_eq!(cell("write amplification", 0), "run 3.50");
        assert_eq!(cell("space amplification", 0), "run 1.25");
        assert_eq!(cell("client CPU (mean % of one core)", 0), "run 60 %");
        assert_eq!(cell("client peak RSS", 0), "3.0 MiB");

        let html = c.to_html("a & b");
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>a &amp; b</title>"));
        assert!(!html.contains("<script") && !html.contains("src="));
        // The table comes first, the folds last.
        let table = html.find("<table class=\"summary\"").unwrap();
        assert!(table < html.find("<svg").unwrap());
        assert!(html.find("<details>").unwrap() > html.rfind("<svg").unwrap());
        assert!(html.contains("<th>rocksdb 7.8.3 · workloada</th>"));
        assert!(html.contains("ycsb -run -P workloads/workloada -p &#39;a=b c&#39;"));
        assert!(html.contains("<td>threadcount</td><td>2</td><td>-threads</td>"));
        assert!(html.contains("<b>UPDATE latency</b>: no data: no interval performed it"));
        assert!(!html.contains(">no data<"), "no empty chart boxes");
        let svg = render_svg_page("t", &c.groups);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("UPDATE latency</tspan>: no data"));
    }

    #[test]
    fn level_gauges() {
        assert_eq!(level_of("rocksdb.num-files-at-level12"), Some(12));
        assert_eq!(level_of("leveldb.num-files-at-level0"), Some(0));
        assert_eq!(level_of("rocksdb.num-files-at-levelX"), None);
        assert_eq!(level_of("leveldb.mb-at-level0"), None);
    }
}
