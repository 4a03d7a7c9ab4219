//! Summary tables per phase: repeats grouped, mean ± standard deviation of
//! throughput, latency percentiles, CPU, space, stability, I/O share and
//! ratios against a baseline; as terminal, Markdown and CSV text.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use ycsb_results::{PhaseReport, RunReport, SectionReport};

use crate::cells::Cell;
use crate::error::{Context as _, Result};
use crate::matrix::Matrix;
use crate::run::cell_dir;
use crate::series::{mean_sd, PhaseSeries};

/// One complete cell's results, read back from its directory.
#[derive(Clone, Debug)]
pub struct CellResult {
    /// The cell.
    pub cell: Cell,
    /// `export.json`.
    pub export: RunReport,
    /// `timeseries.json`.
    pub series: Vec<PhaseSeries>,
    /// The I/O ceiling the cell ran under (from `cell.json`).
    pub io_ceiling: Option<crate::records::IoCeiling>,
}

impl CellResult {
    /// The export's entry for a phase.
    pub fn phase(&self, phase: &str) -> Option<&PhaseReport> {
        self.export.phase(phase)
    }

    /// The time series of a phase.
    pub fn phase_series(&self, phase: &str) -> Option<&PhaseSeries> {
        self.series.iter().find(|p| p.phase == phase)
    }

    /// An effective property, from the export's configuration.
    pub fn property(&self, key: &str) -> Option<&str> {
        self.export.config_value(key)
    }
}

/// Reads every complete cell among `cells` (in their order).
///
/// # Errors
/// A complete cell's files cannot be parsed.
pub fn read_results(results: &Path, cells: &[Cell]) -> Result<Vec<CellResult>> {
    let mut out = Vec::new();
    for cell in cells {
        let dir = cell_dir(results, &cell.id)?;
        let Ok(record) = std::fs::read_to_string(dir.join("cell.json")) else {
            continue;
        };
        let read = |name: &str| -> Result<String> {
            std::fs::read_to_string(dir.join(name))
                .context(|| format!("reading {}", dir.join(name).display()))
        };
        out.push(CellResult {
            cell: cell.clone(),
            io_ceiling: serde_json::from_str::<crate::records::CellFacts>(&record)
                .context(|| format!("parsing {}/cell.json", dir.display()))?
                .io_ceiling,
            export: crate::run::read_export(&dir.join("export.json"))?,
            series: serde_json::from_str(&read("timeseries.json")?)
                .context(|| format!("parsing {}/timeseries.json", dir.display()))?,
        });
    }
    Ok(out)
}

/// Latency percentiles of one operation, microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
}

/// One line of a summary table: the repeats of one combination in one phase.
#[derive(Clone, Debug, Default)]
pub struct Row {
    /// The combination (cell id without the repeat).
    pub group: String,
    /// (axis, value label) pairs.
    pub coords: Vec<(String, String)>,
    /// Repeats found.
    pub n: usize,
    /// Throughput mean, ops/s.
    pub ops_mean: f64,
    /// Throughput sample standard deviation across repeats.
    pub ops_sd: f64,
    /// Throughput relative to the baseline's.
    pub ratio: Option<f64>,
    /// Per operation, means across repeats.
    pub latency: BTreeMap<String, Latency>,
    /// Client CPU, percent of one core.
    pub cpu: Option<f64>,
    /// Server CPU, percent of one core.
    pub server_cpu: Option<f64>,
    /// Bytes on disk of the DB directory at the phase's end.
    pub space: Option<f64>,
    /// Coefficient of variation of per-interval throughput, percent.
    pub cv: Option<f64>,
    /// Estimated user bytes written per second (keys and values).
    pub user_bytes_per_sec: Option<f64>,
    /// That as a fraction of the device's sequential write bandwidth.
    pub io_fraction: Option<f64>,
    /// The engine build the repeats ran on (`librocksdb.so.7.8, assertions
    /// enabled`), distinct builds joined by ` / `; `None` when no export
    /// names one.
    pub build: Option<String>,
    /// A repeat ran on an engine built with assertions: its figures are
    /// slower than a release build's, and the tables mark it.
    pub assertions_enabled: bool,
    /// Whether the repeats' writes were synced to disk before they were
    /// acknowledged (the export's `metadata.durability`); `None` when no
    /// export says (a store whose durability the client does not decide,
    /// older exports) or the repeats disagree.
    pub durable: Option<bool>,
    /// The setting that decided it (`redb.durability=none`), distinct
    /// settings joined by ` / `.
    pub durability: Option<String>,
}

/// The engine build of a cell, from its export's metadata: the library's
/// file name (or `static`) and the state of its assertions, and whether
/// they are enabled.
pub fn cell_build(export: &RunReport) -> Option<(String, bool)> {
    let build = export.metadata.engine_build.as_ref()?;
    let library = build.library.as_str();
    let file = Path::new(library)
        .file_name()
        .map_or(library.into(), |f| f.to_string_lossy());
    Some((
        format!("{file}, assertions {}", build.assertions),
        build.assertions_enabled(),
    ))
}

/// The repeats' durability: whether all synced every write (`None` when
/// unknown or they disagree) and their settings.
fn durability(rs: &[&CellResult]) -> (Option<bool>, Option<String>) {
    let entries: Vec<&ycsb_results::DurabilityEntry> = rs
        .iter()
        .filter_map(|r| r.export.metadata.durability.as_ref())
        .collect();
    let durable = match entries.first() {
        Some(first) if entries.len() == rs.len() => entries
            .iter()
            .all(|e| e.durable == first.durable)
            .then_some(first.durable),
        _ => None,
    };
    let mut settings: Vec<String> = Vec::new();
    for e in &entries {
        let setting = format!("{}={}", e.property, e.value);
        if !settings.contains(&setting) {
            settings.push(setting);
        }
    }
    (
        durable,
        (!settings.is_empty()).then(|| settings.join(" / ")),
    )
}

/// A warning when the rows of a table differ in durability: some synced
/// every write to disk and others did not, so their write figures
/// measure different things. `None` when they agree or it is not known.
/// Rows are named by their db when all of its rows agree, else by their
/// coordinates.
pub fn durability_warning(rows: &[Row]) -> Option<String> {
    let db = |r: &Row| {
        r.coords
            .iter()
            .find(|(a, _)| a == "db")
            .map(|(_, l)| l.clone())
    };
    let names = |durable: bool| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in rows.iter().filter(|r| r.durable == Some(durable)) {
            let label = db(r);
            let whole_db = label.is_some()
                && rows
                    .iter()
                    .filter(|o| db(o) == label)
                    .all(|o| o.durable == Some(durable));
            let name = match label {
                Some(l) if whole_db => format!("db={l}"),
                _ => r.group.clone(),
            };
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    };
    let (synced, unsynced) = (names(true), names(false));
    (!synced.is_empty() && !unsynced.is_empty()).then(|| {
        format!(
            "these cells differ in durability: {} synced every write to disk, {} did not; their write figures are not comparable",
            synced.join(", "),
            unsynced.join(", ")
        )
    })
}

/// A section's latency at percentile `p`, microseconds (from the exact
/// nanoseconds).
fn percentile(section: &SectionReport, p: f64) -> Option<f64> {
    section
        .percentiles
        .iter()
        .find(|x| (x.percentile - p).abs() < 1e-9)
        .map(|e| e.ns as f64 / 1000.0)
}

/// The operation sections of a phase that users read (not the cleanup, not
/// the intended-start twins).
pub fn op_sections(phase: &PhaseReport) -> Vec<&SectionReport> {
    phase
        .sections
        .iter()
        .filter(|x| !x.intended && x.name != "CLEANUP" && x.operations > 0)
        .collect()
}

/// Estimated user bytes of a phase's writes: key plus values per insert,
/// key plus the written fields per update (field names not counted).
fn user_bytes(r: &CellResult, phase: &PhaseReport) -> Option<f64> {
    let num = |k: &str| r.property(k).and_then(|v| v.trim().parse::<f64>().ok());
    let fieldcount = num("fieldcount").unwrap_or(10.0);
    let max_len = num("fieldlength").unwrap_or(100.0);
    let len = match r.property("fieldlengthdistribution").unwrap_or("constant") {
        "constant" => max_len,
        // Uniform and zipfian draw between the minimum and the maximum.
        _ => (num("minfieldlength").unwrap_or(1.0) + max_len) / 2.0,
    };
    // Hashed keys have up to 19 digits; ordered ones as many as the count.
    let digits = if r.property("insertorder") == Some("ordered") {
        num("recordcount").unwrap_or(1000.0).max(1.0).log10().ceil()
    } else {
        19.0
    };
    let key = 4.0 + digits.max(num("zeropadding").unwrap_or(1.0));
    let writeall = r.property("writeallfields") == Some("true");
    let mut total = 0.0;
    for s in op_sections(phase) {
        let ops = s.operations as f64;
        match s.name.as_str() {
            "INSERT" => total += ops * (key + fieldcount * len),
            "UPDATE" => total += ops * (key + if writeall { fieldcount } else { 1.0 } * len),
            _ => {}
        }
    }
    (total > 0.0).then_some(total)
}

fn mean_opt(values: &[Option<f64>]) -> Option<f64> {
    let v: Vec<f64> = values
        .iter()
        .flatten()
        .copied()
        .filter(|x| x.is_finite())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The summary rows of a phase, in cell order.
pub fn rows(m: &Matrix, results: &[CellResult], phase: &str) -> Vec<Row> {
    let mut rows: Vec<Row> = group_repeats(results, phase)
        .into_iter()
        .map(|(group, rs)| row(group, &rs, phase))
        .collect();
    if let Some(base) = &m.baseline {
        set_ratios(&mut rows, base);
    }
    rows
}

/// The cells that ran `phase`, grouped with their repeats, in cell order.
fn group_repeats<'a>(results: &'a [CellResult], phase: &str) -> Vec<(String, Vec<&'a CellResult>)> {
    let mut groups: Vec<(String, Vec<&CellResult>)> = Vec::new();
    // Where each group is in `groups`: linear in the cells.
    let mut index: HashMap<&str, usize> = HashMap::new();
    for r in results {
        if r.phase(phase).is_none() {
            continue;
        }
        match index.get(r.cell.group.as_str()) {
            Some(&i) => groups[i].1.push(r),
            None => {
                index.insert(&r.cell.group, groups.len());
                groups.push((r.cell.group.clone(), vec![r]));
            }
        }
    }
    groups
}

/// The row of one combination: its repeats' means (throughput also with
/// its standard deviation), builds and durability.
fn row(group: String, rs: &[&CellResult], phase: &str) -> Row {
    let tputs: Vec<f64> = rs
        .iter()
        .filter_map(|r| Some(r.phase(phase)?.throughput))
        .collect();
    let (ops_mean, ops_sd) = mean_sd(&tputs);
    let series: Vec<Option<&PhaseSeries>> = rs.iter().map(|r| r.phase_series(phase)).collect();
    let series_mean = |figure: fn(&PhaseSeries) -> Option<f64>| {
        mean_opt(
            &series
                .iter()
                .map(|s| s.and_then(figure))
                .collect::<Vec<_>>(),
        )
    };
    // Only engines that keep data on disk face the device's bound.
    let persists = rs[0].cell.db.data_engine().is_some();
    let user_bytes_per_sec = mean_opt(&user_byte_rates(rs, phase)).filter(|_| persists);
    let (build, assertions_enabled) = builds(rs);
    let (durable, durability) = durability(rs);
    let ceiling = rs
        .first()
        .and_then(|r| r.io_ceiling.as_ref())
        .map(|c| c.write_bytes_per_sec);
    Row {
        coords: rs[0]
            .cell
            .coords
            .iter()
            .map(|(a, _, l)| (a.clone(), l.clone()))
            .collect(),
        group,
        n: rs.len(),
        ops_mean,
        ops_sd,
        ratio: None,
        latency: mean_latency(rs, phase),
        cpu: series_mean(|s| s.cpu_percent),
        server_cpu: series_mean(|s| s.server_cpu_percent),
        space: if persists {
            series_mean(|s| s.space_bytes.map(|b| b as f64))
        } else {
            None
        },
        cv: series_mean(PhaseSeries::throughput_cv_percent),
        user_bytes_per_sec,
        io_fraction: user_bytes_per_sec.zip(ceiling).map(|(u, c)| u / c),
        build,
        assertions_enabled,
        durable,
        durability,
    }
}

/// Per operation, the repeats' mean latency percentiles.
fn mean_latency(rs: &[&CellResult], phase: &str) -> BTreeMap<String, Latency> {
    let mut latency: BTreeMap<String, Vec<Latency>> = BTreeMap::new();
    for r in rs {
        let Some(p) = r.phase(phase) else { continue };
        for s in op_sections(p) {
            let l = Latency {
                p50: percentile(s, 50.0).unwrap_or(f64::NAN),
                p99: percentile(s, 99.0).unwrap_or(f64::NAN),
                p999: percentile(s, 99.9).unwrap_or(f64::NAN),
            };
            latency.entry(s.name.clone()).or_default().push(l);
        }
    }
    latency
        .into_iter()
        .map(|(op, ls)| {
            let n = ls.len() as f64;
            let avg = |f: fn(&Latency) -> f64| ls.iter().map(f).sum::<f64>() / n;
            (
                op,
                Latency {
                    p50: avg(|l| l.p50),
                    p99: avg(|l| l.p99),
                    p999: avg(|l| l.p999),
                },
            )
        })
        .collect()
}

/// Each repeat's estimated user bytes written per second in `phase`.
fn user_byte_rates(rs: &[&CellResult], phase: &str) -> Vec<Option<f64>> {
    rs.iter()
        .map(|r| {
            let p = r.phase(phase)?;
            let secs = p.runtime_ms as f64 / 1000.0;
            (secs > 0.0).then_some(user_bytes(r, p)? / secs)
        })
        .collect()
}

/// The repeats' distinct engine builds, joined by ` / `, and whether any
/// had assertions enabled.
fn builds(rs: &[&CellResult]) -> (Option<String>, bool) {
    let mut builds: Vec<String> = Vec::new();
    let mut assertions_enabled = false;
    for (build, enabled) in rs.iter().filter_map(|r| cell_build(&r.export)) {
        assertions_enabled |= enabled;
        if !builds.contains(&build) {
            builds.push(build);
        }
    }
    (
        (!builds.is_empty()).then(|| builds.join(" / ")),
        assertions_enabled,
    )
}

/// Each row's throughput against its baseline's: the row whose
/// coordinates are its own with the baseline's values put in.
fn set_ratios(rows: &mut [Row], base: &[(String, String)]) {
    let baseline_of = |row: &Row| -> Vec<(String, String)> {
        row.coords
            .iter()
            .map(|(a, l)| match base.iter().find(|(ba, _)| ba == a) {
                Some((_, bl)) => (a.clone(), bl.clone()),
                None => (a.clone(), l.clone()),
            })
            .collect()
    };
    let mut means: HashMap<Vec<(String, String)>, f64> = HashMap::new();
    for r in rows.iter() {
        // The first row of these coordinates, as a scan would find.
        means.entry(r.coords.clone()).or_insert(r.ops_mean);
    }
    for row in rows.iter_mut() {
        let want = baseline_of(row);
        row.ratio = means.get(&want).map(|b| row.ops_mean / b);
    }
}

/// A note on the cells whose `phase` was too short for its time charts
/// (fewer than [`CHARTABLE_INTERVALS`](crate::series::CHARTABLE_INTERVALS)
/// status intervals), saying so and what lengthens them; `None` when
/// every cell's phase was long enough.
pub fn too_short_note(m: &Matrix, results: &[CellResult], phase: &str) -> Option<String> {
    let measured: Vec<(&CellResult, &PhaseSeries)> = results
        .iter()
        .filter_map(|r| Some((r, r.phase_series(phase)?)))
        .collect();
    let short: Vec<&(&CellResult, &PhaseSeries)> = measured
        .iter()
        .filter(|(_, s)| s.too_short(m.status_interval))
        .collect();
    let shortest = short
        .iter()
        .min_by(|a, b| a.1.duration_s().total_cmp(&b.1.duration_s()))?;
    let longest = short
        .iter()
        .map(|(_, s)| s.duration_s())
        .fold(f64::NEG_INFINITY, f64::max);
    let lengthen = if phase == "load" {
        "raise recordcount"
    } else {
        "raise operationcount, or give a large one and a time_limit, which each run then lasts"
    };
    let finer = if m.status_interval > 0.1 {
        "; or set a shorter experiment.status_interval (0.1 gives ten points a second)"
    } else {
        ""
    };
    Some(format!(
        "too short for time charts: {} of {} cells' {phase} phases lasted {:.2} to {longest:.2} s (shortest {}), fewer than {} status intervals of {} s, so their charts over time show a few points each. To lengthen them, {lengthen}{finer}.",
        short.len(),
        measured.len(),
        shortest.1.duration_s(),
        shortest.0.cell.id,
        crate::series::CHARTABLE_INTERVALS,
        m.status_interval
    ))
}

/// The operations of any of the rows, sorted: the tables' latency
/// columns.
pub(crate) fn operations(rows: &[Row]) -> Vec<String> {
    let mut ops: Vec<String> = rows
        .iter()
        .flat_map(|r| r.latency.keys().cloned())
        .collect();
    ops.sort();
    ops.dedup();
    ops
}

impl Row {
    /// The label of this row's value on `axis`; empty when the row has
    /// none.
    fn label(&self, axis: &str) -> String {
        self.coords
            .iter()
            .find(|(x, _)| x == axis)
            .map(|(_, l)| l.clone())
            .unwrap_or_default()
    }
}

/// Axes with more than one value: the ones that tell rows apart.
pub fn varying_axes(m: &Matrix) -> Vec<String> {
    let v: Vec<String> = m
        .axes
        .iter()
        .filter(|a| a.values.len() > 1)
        .map(|a| a.name.clone())
        .collect();
    if v.is_empty() {
        vec!["db".into()]
    } else {
        v
    }
}

fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// Column names and cells of a table for people (terminal and Markdown).
pub(crate) fn display_table(m: &Matrix, rows: &[Row]) -> (Vec<String>, Vec<Vec<String>>) {
    let axes = varying_axes(m);
    let ops = operations(rows);
    let any = |f: fn(&Row) -> bool| rows.iter().any(f);
    let mut head: Vec<String> = axes.clone();
    head.extend(["n".into(), "ops/s".into()]);
    let has_ratio = any(|r| r.ratio.is_some());
    if has_ratio {
        head.push("ratio".into());
    }
    for op in &ops {
        head.push(format!("{op} p50/p99/p99.9 us"));
    }
    head.push("cpu %".into());
    let has_server = any(|r| r.server_cpu.is_some());
    if has_server {
        head.push("server cpu %".into());
    }
    head.extend(["disk MB".into(), "cv %".into()]);
    let has_io = any(|r| r.user_bytes_per_sec.is_some());
    if has_io {
        head.extend(["user MB/s".into(), "of device".into()]);
    }
    let has_build = any(|r| r.build.is_some());
    if has_build {
        head.push("engine build".into());
    }
    let has_durability = any(|r| r.durability.is_some());
    if has_durability {
        head.push("writes synced".into());
    }
    let body = rows
        .iter()
        .map(|r| {
            let mut c: Vec<String> = axes.iter().map(|a| r.label(a)).collect();
            c.push(r.n.to_string());
            c.push(if r.n > 1 {
                format!("{} ± {}", fmt_num(r.ops_mean), fmt_num(r.ops_sd))
            } else {
                fmt_num(r.ops_mean)
            });
            if has_ratio {
                c.push(opt(r.ratio, |x| format!("{x:.2}x")));
            }
            for op in &ops {
                c.push(match r.latency.get(op) {
                    Some(l) => format!("{}/{}/{}", fmt_num(l.p50), fmt_num(l.p99), fmt_num(l.p999)),
                    None => "-".into(),
                });
            }
            c.push(opt(r.cpu, fmt_num));
            if has_server {
                c.push(opt(r.server_cpu, fmt_num));
            }
            c.push(opt(r.space, |b| fmt_num(b / 1e6)));
            c.push(opt(r.cv, fmt_num));
            if has_io {
                c.push(opt(r.user_bytes_per_sec, |b| fmt_num(b / 1e6)));
                c.push(opt(r.io_fraction, |f| format!("{:.1}%", 100.0 * f)));
            }
            if has_build {
                let mut build = r.build.clone().unwrap_or_else(|| "-".into());
                if r.assertions_enabled {
                    build.push_str(" (!)");
                }
                c.push(build);
            }
            if has_durability {
                c.push(synced_text(r));
            }
            c
        })
        .collect();
    (head, body)
}

/// A row's "writes synced" cell, as `ycsb report` shows it: `yes
/// (rocksdb.sync=true)`, `no (...)`, `-` when not known.
fn synced_text(r: &Row) -> String {
    let verdict = match r.durable {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    };
    match &r.durability {
        Some(setting) => format!("{verdict} ({setting})"),
        None => "-".into(),
    }
}

/// The notes under a table: assertions and durability warnings; empty
/// when there is nothing to warn of.
fn notes(rows: &[Row]) -> String {
    let mut out = assertions_note(rows);
    if let Some(warning) = durability_warning(rows) {
        let _ = writeln!(out, "(!) WARNING: {warning}");
    }
    out
}

/// An aligned plain-text table.
pub fn terminal(m: &Matrix, phase: &str, rows: &[Row]) -> String {
    let (head, body) = display_table(m, rows);
    let widths: Vec<usize> = (0..head.len())
        .map(|i| {
            body.iter()
                .map(|r| r[i].chars().count())
                .chain([head[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!("{phase} phase\n");
    let line = |cells: &[String]| {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:>w$}", w = widths[i]))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let _ = writeln!(out, "{}", line(&head));
    for r in &body {
        let _ = writeln!(out, "{}", line(r));
    }
    out.push_str(&notes(rows));
    out
}

/// Under a table with rows measured on engines built with assertions:
/// db_bench's warning and what `(!)` marks; empty otherwise.
fn assertions_note(rows: &[Row]) -> String {
    if rows.iter().any(|r| r.assertions_enabled) {
        "(!) WARNING: Assertions are enabled; benchmarks unnecessarily slow: these rows ran on an engine built with assertions (`cargo xtask engines` builds release ones)\n".to_string()
    } else {
        String::new()
    }
}

/// A Markdown table.
pub fn markdown(m: &Matrix, phase: &str, rows: &[Row]) -> String {
    let (head, body) = display_table(m, rows);
    let mut out = format!(
        "### {phase} phase\n\n| {} |\n|{}|\n",
        head.join(" | "),
        head.iter().map(|_| "---:").collect::<Vec<_>>().join("|")
    );
    for r in &body {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    let note = notes(rows);
    if !note.is_empty() {
        let _ = write!(out, "\n{note}");
    }
    out
}

/// One line of CSV, fields quoted where they must be.
fn csv_line(fields: &[impl AsRef<str>]) -> String {
    let mut line = fields
        .iter()
        .map(|f| csv_field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A CSV table with one number per column, for spreadsheets and plots.
pub fn csv(m: &Matrix, rows: &[Row]) -> String {
    let axes: Vec<String> = m.axes.iter().map(|a| a.name.clone()).collect();
    let ops = operations(rows);
    let mut head: Vec<String> = axes.clone();
    head.extend(
        [
            "repeats",
            "ops_per_sec_mean",
            "ops_per_sec_sd",
            "ratio_to_baseline",
        ]
        .map(String::from),
    );
    for op in &ops {
        for p in ["p50", "p99", "p99.9"] {
            head.push(format!("{op}_{p}_us"));
        }
    }
    head.extend(
        [
            "cpu_percent",
            "server_cpu_percent",
            "disk_bytes",
            "throughput_cv_percent",
            "user_bytes_per_sec",
            "io_ceiling_fraction",
            "engine_build",
            "assertions_enabled",
            "writes_synced",
            "durability_setting",
        ]
        .map(String::from),
    );
    let mut out = csv_line(&head);
    let num = |v: Option<f64>| {
        v.filter(|x| x.is_finite())
            .map(|x| format!("{x}"))
            .unwrap_or_default()
    };
    for r in rows {
        let mut c: Vec<String> = axes.iter().map(|a| r.label(a)).collect();
        c.push(r.n.to_string());
        c.push(num(Some(r.ops_mean)));
        c.push(num(Some(r.ops_sd)));
        c.push(num(r.ratio));
        for op in &ops {
            let l = r.latency.get(op);
            c.push(num(l.map(|l| l.p50)));
            c.push(num(l.map(|l| l.p99)));
            c.push(num(l.map(|l| l.p999)));
        }
        c.extend([
            num(r.cpu),
            num(r.server_cpu),
            num(r.space),
            num(r.cv),
            num(r.user_bytes_per_sec),
            num(r.io_fraction),
            r.build.clone().unwrap_or_default(),
            r.assertions_enabled.to_string(),
            r.durable.map(|d| d.to_string()).unwrap_or_default(),
            r.durability.clone().unwrap_or_default(),
        ]);
        out.push_str(&csv_line(&c));
    }
    out
}

/// The failed cells, one line each with the reason, for the terminal.
pub fn failed_terminal(failed: &[(Cell, String)]) -> String {
    let mut out = format!("failed cells ({})\n", failed.len());
    for (cell, why) in failed {
        let _ = writeln!(out, "  {}: {why}", cell.id);
    }
    out
}

/// A reason on one line of a Markdown table cell.
fn markdown_cell(text: &str) -> String {
    text.replace('\n', " ").replace('|', "\\|")
}

/// The failed cells as a Markdown table: the cell and why it failed.
pub fn failed_markdown(failed: &[(Cell, String)]) -> String {
    let mut out = format!(
        "### Failed cells\n\n{} cells failed; their logs are kept in `.failed-<cell>/`.\n\n| cell | reason |\n|---|---|\n",
        failed.len()
    );
    for (cell, why) in failed {
        let _ = writeln!(
            out,
            "| {} | {} |",
            markdown_cell(&cell.id),
            markdown_cell(why)
        );
    }
    out
}

/// The failed cells as CSV: their coordinates, repeat, name and reason;
/// only the header when none failed.
pub fn failed_csv(m: &Matrix, failed: &[(Cell, String)]) -> String {
    let axes: Vec<&str> = m.axes.iter().map(|a| a.name.as_str()).collect();
    let mut head: Vec<&str> = axes.clone();
    head.extend(["repeat", "cell", "reason"]);
    let mut out = csv_line(&head);
    for (cell, why) in failed {
        let mut c: Vec<String> = axes
            .iter()
            .map(|a| cell.label(a).unwrap_or_default().to_string())
            .collect();
        c.extend([cell.repeat.to_string(), cell.id.clone(), why.clone()]);
        out.push_str(&csv_line(&c));
    }
    out
}
