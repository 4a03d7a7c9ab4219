//! `ycsb merge`: one report from several clients' JSON exports, or one
//! interval log from several clients' HdrHistogram logs.
//!
//! Counts are sums and percentiles come from the sum of the clients'
//! histograms (each export carries every section's full histogram), never
//! from averaged percentiles. See docs/multi-client.md.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;
use ycsb_core::measurement::Exporter as _;
use ycsb_core::measurement::{
    self, decode_histogram, encode_histogram, java_percentile, run_metadata, ConfigEntry,
    IntervalLogReader, JavaSection, JsonExporter, LogInterval, Operation, PercentileLatency,
    PhaseReport, ReportFormat, RunReport, SectionReport, StatusCount, TextExporter,
};
use ycsb_core::observe::{PhaseObservation, SeriesRow, SeriesSection};
use ycsb_core::outputs::{check_outputs, Output, Protected};
use ycsb_db::Status;

use crate::args::{find_flag, unknown_flag, CommandHelp, Flag};
use crate::Failure;

/// The flags of `ycsb merge`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeFlag {
    /// `-o`: the merged file.
    Output,
    /// `--force`: merge exports that do not look like one run's clients.
    Force,
    /// `-h`: the help.
    Help,
}

/// `ycsb merge --help`, rendered by `reference.rs`.
pub const HELP: CommandHelp<MergeFlag> = CommandHelp {
    usage: &[
        "ycsb merge [--force] [-o merged.json] export.json...   (JSON exports of exporter=json)",
        "ycsb merge -o merged/READ.hdr a/READ.hdr b/READ.hdr...  (HdrHistogram interval logs)",
    ],
    about: "One report from several clients' JSON exports: counts summed, percentiles from the
sum of the clients' histograms, time series lined up by wall clock; or one HdrHistogram
interval log from several clients' logs (docs/multi-client.md).",
    flags: &[
        Flag {
            id: MergeFlag::Output,
            name: "-o",
            also: &["--output"],
            value: Some("<file>"),
            doc: "also write the merged export there (the report is printed either way);\nfor HdrHistogram logs, the merged log (required)",
        },
        Flag {
            id: MergeFlag::Force,
            name: "--force",
            also: &[],
            value: None,
            doc: "merge exports that do not look like the clients of one run (warning why)",
        },
        Flag {
            id: MergeFlag::Help,
            name: "-h",
            also: &["--help", "-help"],
            value: None,
            doc: "print this help",
        },
    ],
    notes: "",
};

/// Where a bad command line is told to look: a bad input is one line, so
/// the usage is not printed with the error.
const SEE_USAGE: &str = "ycsb merge --help shows the usage";

/// `ycsb merge` with the arguments after `merge`.
pub fn run(args: Vec<String>, argv: &[std::ffi::OsString]) -> Result<u8, Failure> {
    let mut output: Option<PathBuf> = None;
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut force = false;
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let Some(flag) = find_flag(HELP.flags, &arg) else {
            if arg.starts_with('-') && arg.len() > 1 {
                return Err(Failure::usage(format!(
                    "merge: {}",
                    unknown_flag(HELP.flags, &arg, "ycsb merge")
                )));
            }
            inputs.push(PathBuf::from(arg));
            continue;
        };
        match flag.id {
            MergeFlag::Output => {
                let value = it
                    .next()
                    .ok_or_else(|| Failure::usage(format!("merge: {arg} needs a file name")))?;
                output = Some(PathBuf::from(value));
            }
            MergeFlag::Force => force = true,
            MergeFlag::Help => {
                print!("{}", crate::reference::command_help(&HELP));
                return Ok(0);
            }
        }
    }
    if inputs.is_empty() {
        return Err(Failure::usage(format!(
            "merge: no input files ({SEE_USAGE})"
        )));
    }
    if let Some(output) = &output {
        check_output(output, &inputs)?;
    }
    let logs = inputs.iter().filter(|p| is_hdr_log(p)).count();
    if logs == inputs.len() {
        let output = output.ok_or_else(|| {
            Failure::usage("merge: merging HdrHistogram logs needs -o <merged.hdr>")
        })?;
        if !is_hdr_log(&output) {
            return Err(Failure::usage(format!(
                "merge: -o {}: the inputs are HdrHistogram logs and so is the merge: name it <merged>.hdr",
                output.display()
            )));
        }
        merge_logs(&inputs, &output)
    } else if logs == 0 {
        if let Some(output) = output.as_deref().filter(|o| is_hdr_log(o)) {
            return Err(Failure::usage(format!(
                "merge: -o {}: the inputs are JSON exports and so is the merge, not an HdrHistogram log: name it <merged>.json",
                output.display()
            )));
        }
        merge_exports(&inputs, output.as_deref(), argv, force)
    } else {
        Err(Failure::usage(
            "merge: give either JSON exports or HdrHistogram logs (.hdr), not both",
        ))
    }
}

/// Checks, before any input is read, that `-o` can be written: its
/// directory exists (it is not created silently) and it is none of the
/// inputs (by any name: links, `..`, hard links), which the merge would
/// replace.
fn check_output(path: &Path, inputs: &[PathBuf]) -> Result<(), Failure> {
    measurement::check_output_path(path)
        .map_err(|why| Failure::usage(format!("merge: -o {} {why}", path.display())))?;
    let inputs: Vec<Protected> = inputs
        .iter()
        .map(|input| Protected::file(format!("the input {}", input.display()), input))
        .collect();
    check_outputs(
        &[Output::file(format!("merge: -o {}", path.display()), path)],
        &inputs,
    )
    .map_err(Failure::usage)
}

fn is_hdr_log(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "hdr")
}

/// One section of one client, decoded.
struct ClientSection {
    name: String,
    operation: Operation,
    intended: bool,
    failed: bool,
    operations: u64,
    average_ns: f64,
    min_ns: u64,
    max_ns: u64,
    histogram: Histogram<u64>,
    returns: Vec<(Status, u64)>,
    percentiles: Vec<f64>,
    java: Option<JavaSection>,
}

/// One phase of one client.
struct ClientPhase {
    runtime_ns: u64,
    operations: u64,
    throughput: f64,
    sections: Vec<ClientSection>,
    format: ReportFormat,
    observation: Option<PhaseObservation>,
}

/// Adds one client's Java-type figures to the merged ones: sums, buckets
/// bucket by bucket, timeseries units by their offset from each client's
/// first latency.
fn add_java(into: &mut Option<JavaSection>, from: &Option<JavaSection>) {
    let Some(from) = from else {
        return;
    };
    let into = into.get_or_insert_with(JavaSection::default);
    into.sum_us += from.sum_us;
    into.sum_sq_us += from.sum_sq_us;
    if into.buckets.len() < from.buckets.len() {
        into.buckets.resize(from.buckets.len(), 0);
    }
    for (mine, theirs) in into.buckets.iter_mut().zip(&from.buckets) {
        *mine += theirs;
    }
    for unit in &from.series {
        match into
            .series
            .binary_search_by_key(&unit.time_ms, |u| u.time_ms)
        {
            Ok(i) => {
                into.series[i].operations += unit.operations;
                into.series[i].sum_us += unit.sum_us;
            }
            Err(i) => into.series.insert(i, *unit),
        }
    }
}

fn bad(path: &Path, what: impl std::fmt::Display) -> Failure {
    Failure::usage(format!("merge: {}: {what}", path.display()))
}

/// A phase of one client, its histograms decoded (and their text dropped).
fn parse_phase(path: &Path, index: usize, phase: PhaseReport) -> Result<ClientPhase, Failure> {
    let mut sections = Vec::new();
    for (k, s) in phase.sections.into_iter().enumerate() {
        let field = |name: &str| format!("phases[{index}].sections[{k}].{name}");
        let encoded = s.histogram.ok_or_else(|| {
            bad(
                path,
                format!(
                    "{} is missing: exact merging needs the histogram that exports of this ycsb carry",
                    field("histogram")
                ),
            )
        })?;
        let origin = format!("{}: {}", path.display(), field("histogram"));
        let histogram = decode_histogram(&encoded, &origin).map_err(Failure::usage)?;
        let mut returns = Vec::new();
        for r in s.returns {
            let status = status_named(&r.status).ok_or_else(|| {
                bad(
                    path,
                    format!("{}: unknown status '{}'", field("returns"), r.status),
                )
            })?;
            returns.push((status, r.count));
        }
        sections.push(ClientSection {
            name: s.name,
            operation: s.operation,
            intended: s.intended,
            failed: s.failed,
            java: s.java,
            operations: s.operations,
            average_ns: s.average_ns,
            min_ns: s.min_ns,
            max_ns: s.max_ns,
            histogram,
            returns,
            percentiles: s.percentiles.iter().map(|p| p.percentile).collect(),
        });
    }
    Ok(ClientPhase {
        runtime_ns: phase.runtime_ns,
        operations: phase.operations,
        throughput: phase.throughput,
        sections,
        format: phase.format,
        observation: phase.observation,
    })
}

/// The status of the store contract named `name` (`NOT_FOUND`).
fn status_named(name: &str) -> Option<Status> {
    Status::ALL.into_iter().find(|s| s.name() == name)
}

/// Sums sections of the same name over the clients.
fn merge_sections(clients: &[&ClientPhase]) -> Vec<SectionReport> {
    let mut merged: Vec<SectionReport> = Vec::new();
    let mut histograms: Vec<Histogram<u64>> = Vec::new();
    let mut percentiles: Vec<Vec<f64>> = Vec::new();
    for client in clients {
        for s in &client.sections {
            let index = match merged.iter().position(|m| m.name == s.name) {
                Some(i) => i,
                None => {
                    merged.push(SectionReport {
                        name: s.name.clone(),
                        operation: s.operation,
                        intended: s.intended,
                        failed: s.failed,
                        java: None,
                        operations: 0,
                        average_us: 0.0,
                        min_us: 0,
                        max_us: 0,
                        average_ns: 0.0,
                        min_ns: u64::MAX,
                        max_ns: 0,
                        percentiles: Vec::new(),
                        returns: Vec::new(),
                        histogram: None,
                    });
                    // Auto-resizing, so any client's range fits.
                    histograms.push(Histogram::new(3).unwrap_or_else(|_| s.histogram.clone()));
                    percentiles.push(s.percentiles.clone());
                    merged.len() - 1
                }
            };
            let m = &mut merged[index];
            // The exact sums: mean weighted by each client's count.
            let total = m.operations + s.operations;
            if total > 0 {
                m.average_ns = (m.average_ns * m.operations as f64
                    + s.average_ns * s.operations as f64)
                    / total as f64;
            }
            m.operations = total;
            if s.operations > 0 {
                m.min_ns = m.min_ns.min(s.min_ns);
                m.max_ns = m.max_ns.max(s.max_ns);
            }
            for &(status, count) in &s.returns {
                match m.returns.iter_mut().find(|r| r.status == status.name()) {
                    Some(r) => r.count += count,
                    None => m.returns.push(StatusCount {
                        status: status.name().to_string(),
                        count,
                    }),
                }
            }
            add_java(&mut m.java, &s.java);
            // Adding fails only if the counts array cannot grow.
            let _ = histograms[index].add(&s.histogram);
        }
    }
    for ((m, histogram), wanted) in merged.iter_mut().zip(&histograms).zip(&percentiles) {
        if m.min_ns == u64::MAX {
            m.min_ns = 0;
        }
        m.average_us = m.average_ns / 1_000.0;
        m.min_us = m.min_ns / 1_000;
        m.max_us = m.max_ns / 1_000;
        m.returns
            .sort_by_key(|r| status_named(&r.status).map_or(usize::MAX, Status::index));
        m.percentiles = wanted
            .iter()
            .map(|&percentile| {
                let ns = java_percentile(histogram, percentile);
                PercentileLatency {
                    percentile,
                    us: ns / 1_000,
                    ns,
                }
            })
            .collect();
        m.histogram = Some(encode_histogram(histogram));
    }
    // Report order: operations, then intended sections, as a single client.
    // Each operation's failed sections after it: FAILED, then per status.
    merged.sort_by_cached_key(|m| {
        (
            m.intended,
            m.operation.index(),
            m.failed,
            !m.name.ends_with("-FAILED"),
            m.name.clone(),
        )
    });
    merged
}

/// Lines up the clients' time series by wall-clock time and sums what
/// adds up (operations, errors; throughput is the bucket's operations per
/// second). Per-interval latencies are
/// the largest of the clients' (an upper bound: the series carry no
/// per-interval histograms); resources are left out (they are per host);
/// gauges come from the first client that has them (the shared server).
fn merge_observations(clients: &[&ClientPhase]) -> Option<PhaseObservation> {
    let observed: Vec<&PhaseObservation> = clients
        .iter()
        .filter_map(|c| c.observation.as_ref())
        .collect();
    let first = *observed.first()?;
    let granularity_ms = (first.granularity_s * 1_000.0).round().max(1.0) as u64;
    let start = observed.iter().map(|o| o.start_unix_ms).min()?;
    let mut buckets: BTreeMap<u64, SeriesRow> = BTreeMap::new();
    for obs in &observed {
        for row in &obs.series {
            // The bucket whose end is nearest this row's end.
            let offset = row.unix_ms.saturating_sub(start);
            let bucket = (offset + granularity_ms / 2) / granularity_ms;
            let end_s = (bucket * granularity_ms) as f64 / 1_000.0;
            let merged = buckets.entry(bucket).or_insert_with(|| {
                let mut r = SeriesRow::empty(end_s, first.granularity_s, row.warmup);
                r.unix_ms = start + bucket * granularity_ms;
                r
            });
            merged.operations += row.operations;
            merged.errors += row.errors;
            merged.warmup &= row.warmup;
            // The server's figures from one client only (each samples
            // the same server), from a full interval, not a tail fragment.
            let full = row.interval_s >= first.granularity_s * 0.5;
            if full && merged.gauges.is_empty() && !row.gauges.is_empty() {
                merged.gauges = row.gauges.clone();
                merged.db_size_bytes = row.db_size_bytes;
            }
            if full && merged.monitor.is_none() {
                merged.monitor = row.monitor.clone();
            }
            for s in &row.sections {
                match merged.sections.iter_mut().find(|m| m.name == s.name) {
                    Some(m) => add_section(m, s),
                    None => merged.sections.push(s.clone()),
                }
            }
        }
    }
    // Rates over the bucket, not sums of the clients' rates: a client's
    // short tail interval has a rate far from its share of the bucket.
    let seconds = granularity_ms as f64 / 1_000.0;
    for row in buckets.values_mut() {
        row.throughput = row.operations as f64 / seconds;
        for s in &mut row.sections {
            s.throughput = s.operations as f64 / seconds;
        }
    }
    Some(PhaseObservation {
        granularity_s: first.granularity_s,
        start_unix_ms: start,
        warmup: None,
        series: buckets.into_values().collect(),
        stability: None,
        amplification: None,
        // Every client's store declared the same kinds; the first
        // declaration of a gauge is kept.
        gauge_kinds: observed.iter().rev().fold(BTreeMap::new(), |mut kinds, o| {
            kinds.extend(o.gauge_kinds.clone());
            kinds
        }),
    })
}

fn add_section(m: &mut SeriesSection, s: &SeriesSection) {
    let total = m.operations + s.operations;
    if total > 0 {
        m.avg_us = (m.avg_us * m.operations as f64 + s.avg_us * s.operations as f64) / total as f64;
    }
    if s.operations > 0 {
        m.min_us = if m.operations > 0 {
            m.min_us.min(s.min_us)
        } else {
            s.min_us
        };
    }
    m.operations = total;
    m.errors += s.errors;
    m.p50_us = m.p50_us.max(s.p50_us);
    m.p99_us = m.p99_us.max(s.p99_us);
    m.p999_us = m.p999_us.max(s.p999_us);
    m.max_us = m.max_us.max(s.max_us);
}

fn merge_exports(
    inputs: &[PathBuf],
    output: Option<&Path>,
    argv: &[std::ffi::OsString],
    force: bool,
) -> Result<u8, Failure> {
    let mut documents = Vec::new();
    for path in inputs {
        let mut export = crate::report::read_export("merge", path)?;
        let mut parsed = Vec::new();
        // Each phase is dropped once parsed (its histograms decoded).
        for (i, phase) in std::mem::take(&mut export.phases).into_iter().enumerate() {
            let name = phase.phase.clone();
            parsed.push((name, parse_phase(path, i, phase)?));
        }
        // What the checks and the merged configuration read.
        documents.push((path, export, parsed));
    }

    check_together(&documents, force)?;

    // Phases in the order the first export lists them, then any others.
    let mut names: Vec<String> = Vec::new();
    for (_, _, phases) in &documents {
        for (name, _) in phases {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    let mut phases = Vec::new();
    for name in &names {
        let clients: Vec<&ClientPhase> = documents
            .iter()
            .flat_map(|(_, _, phases)| phases.iter().filter(|(n, _)| n == name).map(|(_, p)| p))
            .collect();
        let runtime_ns = clients.iter().map(|c| c.runtime_ns).max().unwrap_or(0);
        phases.push(PhaseReport {
            phase: name.clone(),
            runtime_ms: runtime_ns / 1_000_000,
            runtime_ns,
            operations: clients.iter().map(|c| c.operations).sum(),
            // The clients ran side by side: their rates add up.
            throughput: clients.iter().map(|c| c.throughput).sum(),
            sections: merge_sections(&clients),
            format: clients[0].format,
            observation: merge_observations(&clients),
        });
    }

    let command_line = argv.iter().map(|a| a.to_string_lossy().into_owned());
    let mut metadata = run_metadata("ycsb merge", env!("CARGO_PKG_VERSION"), command_line, &[]);
    metadata.git_revision = option_env!("YCSB_GIT_REVISION").map(str::to_string);
    // The clients measured one store (the checks say so, or --force
    // warned): the merged export names it as theirs do.
    let first = &documents[0].1.metadata;
    metadata.store.clone_from(&first.store);
    metadata.engine.clone_from(&first.engine);
    metadata.engine_version.clone_from(&first.engine_version);
    metadata.engine_build.clone_from(&first.engine_build);
    // The merged configuration: the first client's, plus one entry per
    // input saying where it ran (the clients differ in client.index).
    let mut config: Vec<ConfigEntry> = documents[0]
        .1
        .config
        .iter()
        .map(|c| ConfigEntry {
            key: c.key.clone(),
            value: c.value.clone(),
            origin: format!("{} ({})", c.origin, documents[0].0.display()),
        })
        .collect();
    for (i, (path, export, _)) in documents.iter().enumerate() {
        let mut who = String::new();
        let _ = write!(who, "{}", path.display());
        if let Some(host) = &export.metadata.host {
            let _ = write!(who, " on {host}");
        }
        let _ = write!(who, " at {}", export.metadata.start_time);
        config.push(ConfigEntry {
            key: format!("merge.input.{i}"),
            value: who,
            origin: "ycsb merge".into(),
        });
    }
    let report = RunReport {
        schema_version: ycsb_results::SCHEMA_VERSION,
        metadata,
        config,
        phases,
        engine_reports: Vec::new(),
    };

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (i, phase) in report.phases.iter().enumerate() {
        let written = if i > 0 {
            std::io::Write::write_all(&mut out, b"\n")
        } else {
            Ok(())
        };
        written
            .and_then(|()| TextExporter::new(&mut out).write_phase(phase))
            .map_err(|e| Failure::runtime(format!("writing the report: {e}")))?;
    }
    if let Some(path) = output {
        measurement::write_atomically(path, |w| JsonExporter::new(w).export(&report))
            .map_err(|e| Failure::runtime(format!("writing {}: {e}", path.display())))?;
        eprintln!("merged {} exports into {}", documents.len(), path.display());
    }
    Ok(0)
}

/// One input export: its path, the export (its phases taken out) and its
/// phases by name.
type Document<'a> = (&'a PathBuf, RunReport, Vec<(String, ClientPhase)>);

/// Refuses exports that are not the clients of one run (exit 2, every
/// reason named), or with `--force` warns and merges them.
fn check_together(documents: &[Document<'_>], force: bool) -> Result<(), Failure> {
    let inputs: Vec<crate::merge_check::Input<'_>> = documents
        .iter()
        .map(|(path, export, phases)| crate::merge_check::Input {
            path,
            export,
            phases: phases.iter().map(|(n, _)| n.as_str()).collect(),
            runtime_ns: phases.iter().map(|(_, p)| p.runtime_ns).sum(),
        })
        .collect();
    let problems = crate::merge_check::mismatches(&inputs);
    if problems.is_empty() {
        return Ok(());
    }
    if force {
        for p in &problems {
            eprintln!("ycsb: warning: merge --force: {p}");
        }
        return Ok(());
    }
    Err(Failure::usage(format!(
        "merge: these exports are not the clients of one run: {} (--force merges them anyway)",
        problems.join("; ")
    )))
}

/// Opens an interval log for reading one line at a time.
fn open_log(path: &Path) -> Result<IntervalLogReader<std::io::BufReader<std::fs::File>>, Failure> {
    // A FIFO or device is refused.
    let file = ycsb_db::open_input(path)
        .map_err(|e| Failure::usage(format!("merge: {}: {e}", path.display())))?;
    Ok(IntervalLogReader::new(
        std::io::BufReader::new(file),
        path.display().to_string(),
    ))
}

/// What the first pass over the logs finds, without decoding a histogram.
struct LogsAtAGlance {
    /// The earliest interval start, in seconds since the epoch.
    start: f64,
    /// The first log's usual interval length (the median).
    length: f64,
    name: Option<String>,
}

/// The first pass: every line's timing, so that the output's grid is
/// known before any interval is summed.
fn glance_at_logs(inputs: &[PathBuf]) -> Result<LogsAtAGlance, Failure> {
    let mut start = f64::INFINITY;
    let mut lengths: Vec<f64> = Vec::new();
    let mut name = None;
    for (i, path) in inputs.iter().enumerate() {
        let mut reader = open_log(path)?;
        while let Some(timing) = reader.next_timing().map_err(Failure::usage)? {
            start = start.min(timing.start);
            if i == 0 {
                lengths.push(timing.length);
            }
        }
        if name.is_none() {
            name = reader.name().map(str::to_string);
        }
    }
    if !start.is_finite() {
        return Err(Failure::usage("merge: the logs hold no intervals"));
    }
    lengths.sort_by(f64::total_cmp);
    let length = lengths
        .get(lengths.len() / 2)
        .copied()
        .filter(|l| *l > 0.0)
        .unwrap_or(1.0);
    Ok(LogsAtAGlance {
        start,
        length,
        name,
    })
}

/// One input log during the merge, with its next interval decoded.
struct OpenLog {
    reader: IntervalLogReader<std::io::BufReader<std::fs::File>>,
    next: Option<LogInterval>,
}

impl OpenLog {
    fn advance(&mut self) -> Result<(), Failure> {
        self.next = self.reader.next_interval().map_err(Failure::usage)?;
        Ok(())
    }
}

/// Sums interval logs of the same operation from several clients: each
/// input interval goes to the output interval (of the first log's usual
/// length, from the earliest start) its start falls in.
///
/// The logs are streamed: a first pass reads the timings, the second
/// takes the intervals of all logs in time order, one decoded histogram
/// per log, and writes each output interval as soon as no log can add to
/// it, so memory holds a few histograms whatever the logs' sizes. Each
/// log must list its intervals in time order (HdrHistogram's writers do).
fn merge_logs(inputs: &[PathBuf], output: &Path) -> Result<u8, Failure> {
    let glance = glance_at_logs(inputs)?;
    let (start, length) = (glance.start, glance.length);
    let name = glance.name.unwrap_or_else(|| "merged".into());
    let bucket_of =
        |interval: &LogInterval| ((interval.start - start) / length + 1e-6).floor().max(0.0) as u64;
    let mut total: Histogram<u64> =
        Histogram::new(3).map_err(|e| Failure::runtime(format!("merge: {e:?}")))?;
    let mut written = 0usize;
    // A bad input found while writing: the output is then left as it was.
    let mut bad_input: Option<Failure> = None;
    let start_date = chrono::DateTime::<chrono::Local>::from(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(start.max(0.0)),
    )
    .format("%a %b %d %H:%M:%S %:z %Y");
    let mut write = |w: &mut dyn std::io::Write| -> std::io::Result<()> {
        let mut fail = |failure: Failure| {
            let error = std::io::Error::other(failure.message.clone());
            bad_input = Some(failure);
            error
        };
        write!(
            w,
            "#[Logging for: {name}]\n#[Merged by ycsb merge from {} logs]\n#[Histogram log format version 1.3]\n\
             #[StartTime: {start:.3} (seconds since epoch), {start_date}]\n\
             #[BaseTime: {start:.3} (seconds since epoch)]\n\
             \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
            inputs.len()
        )?;
        let mut logs = Vec::with_capacity(inputs.len());
        for path in inputs {
            let mut log = OpenLog {
                reader: open_log(path).map_err(&mut fail)?,
                next: None,
            };
            log.advance().map_err(&mut fail)?;
            logs.push(log);
        }
        let mut current: Option<(u64, Histogram<u64>)> = None;
        let mut flush = |w: &mut dyn std::io::Write, (bucket, histogram): (u64, Histogram<u64>)| {
            written += 1;
            writeln!(
                w,
                "{:.3},{length:.3},{:.3},{}",
                bucket as f64 * length,
                histogram.max() as f64 / 1e6,
                encode_histogram(&histogram)
            )
        };
        // The earliest next interval of all logs, until none is left.
        while let Some(log) = logs.iter_mut().filter(|l| l.next.is_some()).min_by(|a, b| {
            let start = |l: &OpenLog| l.next.as_ref().map_or(f64::INFINITY, |i| i.start);
            start(a).total_cmp(&start(b))
        }) {
            let Some(interval) = log.next.take() else {
                break;
            };
            let at = log.reader.at();
            log.advance().map_err(&mut fail)?;
            let bucket = bucket_of(&interval);
            match &mut current {
                Some((open, _)) if bucket < *open => {
                    return Err(fail(Failure::usage(format!(
                        "merge: {at}: this interval starts before the one above it; merge reads logs whose intervals are in time order"
                    ))));
                }
                Some((open, histogram)) if bucket == *open => {
                    let _ = histogram.add(&interval.histogram);
                }
                _ => {
                    if let Some(done) = current.take() {
                        flush(w, done)?;
                    }
                    let mut histogram = Histogram::new_from(&total);
                    let _ = histogram.add(&interval.histogram);
                    current = Some((bucket, histogram));
                }
            }
            // Adding fails only if the counts array cannot grow.
            let _ = total.add(&interval.histogram);
        }
        if let Some(done) = current.take() {
            flush(w, done)?;
        }
        Ok(())
    };
    let result = measurement::write_atomically(output, &mut write);
    if let Some(failure) = bad_input {
        return Err(failure);
    }
    result.map_err(|e| Failure::runtime(format!("writing {}: {e}", output.display())))?;
    println!(
        "[{name}], Operations, {}\n[{name}], MaxLatency(us), {}",
        total.len(),
        total.max() / 1_000
    );
    for p in [50.0, 95.0, 99.0, 99.9] {
        println!(
            "[{name}], {}PercentileLatency(us), {}",
            measurement::java_ordinal(p),
            java_percentile(&total, p) / 1_000
        );
    }
    eprintln!(
        "merged {} logs ({written} intervals) into {}",
        inputs.len(),
        output.display()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(latency_ns: u64, count: u64) -> ClientPhase {
        let mut histogram = Histogram::<u64>::new(3).unwrap();
        histogram.record_n(latency_ns, count).unwrap();
        ClientPhase {
            runtime_ns: 1_000_000_000,
            operations: count,
            throughput: count as f64,
            sections: vec![ClientSection {
                name: "READ".into(),
                operation: Operation::Read,
                intended: false,
                failed: false,
                operations: count,
                average_ns: latency_ns as f64,
                min_ns: latency_ns,
                max_ns: latency_ns,
                histogram,
                returns: vec![(Status::Ok, count)],
                percentiles: vec![50.0, 99.0],
                java: None,
            }],
            format: ReportFormat::default(),
            observation: None,
        }
    }

    use ycsb_db::GaugeKind;

    #[test]
    fn the_gauges_kinds_travel_into_the_merged_series() {
        let observed = |kinds: &[(&str, GaugeKind)]| {
            let mut c = client(1_000, 1);
            let mut row = SeriesRow::empty(1.0, 1.0, false);
            row.unix_ms = 1_000;
            for (name, _) in kinds {
                row.gauges.insert((*name).to_string(), 1.0);
            }
            c.observation = Some(PhaseObservation {
                granularity_s: 1.0,
                start_unix_ms: 0,
                warmup: None,
                series: vec![row],
                stability: None,
                amplification: None,
                gauge_kinds: kinds.iter().map(|(n, k)| ((*n).to_string(), *k)).collect(),
            });
            c
        };
        let a = observed(&[("x.cache-bytes", GaugeKind::Bytes)]);
        let b = observed(&[
            ("x.cache-bytes", GaugeKind::Bytes),
            ("x.files", GaugeKind::Count),
        ]);
        let merged = merge_observations(&[&a, &b]).unwrap();
        let kinds: Vec<(&str, GaugeKind)> = merged
            .gauge_kinds
            .iter()
            .map(|(n, k)| (n.as_str(), *k))
            .collect();
        assert_eq!(
            kinds,
            [
                ("x.cache-bytes", GaugeKind::Bytes),
                ("x.files", GaugeKind::Count)
            ]
        );
    }

    #[test]
    fn percentiles_come_from_the_summed_histograms_not_averages() {
        // 1000 fast reads on one client, 10 slow ones on another: the p99
        // of all 1010 is the 1000th value, a fast one (averaging the two
        // p99s would say 50 ms).
        let fast = client(1_000_000, 1_000);
        let slow = client(100_000_000, 10);
        let merged = merge_sections(&[&fast, &slow]);
        let read = &merged[0];
        assert_eq!(read.operations, 1_010);
        assert_eq!(
            read.returns,
            vec![StatusCount {
                status: Status::Ok.name().to_string(),
                count: 1_010
            }]
        );
        assert_eq!((read.min_ns, read.max_ns), (1_000_000, 100_000_000));
        let p99 = read.percentiles[1].ns;
        assert!((1_000_000..1_001_000).contains(&p99), "p99 {p99}");
        let expected_mean = (1_000.0 * 1e6 + 10.0 * 1e8) / 1_010.0;
        assert!((read.average_ns - expected_mean).abs() < 1e-3);
        // The merged export can be merged again.
        let again = decode_histogram(read.histogram.as_deref().unwrap(), "merged").unwrap();
        assert_eq!(again.len(), 1_010);
    }

    #[test]
    fn failed_sections_and_java_figures_add_up() {
        let with_failures = |buckets: Vec<u64>, series: Vec<(u64, u64, u64)>| {
            let mut c = client(2_000_000, 4);
            let mut failed = client(700_000, 1).sections.remove(0);
            failed.name = "READ-FAILED".into();
            failed.failed = true;
            failed.returns.clear();
            c.sections[0].java = Some(JavaSection {
                sum_us: 8_000,
                sum_sq_us: 16_000_000.0,
                buckets,
                series: series
                    .into_iter()
                    .map(|(time_ms, operations, sum_us)| measurement::SeriesUnit {
                        time_ms,
                        operations,
                        sum_us,
                    })
                    .collect(),
                raw: Vec::new(),
            });
            // Listed first, as a client never would: merge sorts.
            c.sections.insert(0, failed);
            c
        };
        let a = with_failures(vec![0, 0, 4, 0], vec![(0, 3, 6_000), (1_000, 1, 2_000)]);
        let b = with_failures(vec![0, 1, 3], vec![(1_000, 4, 8_000)]);
        let merged = merge_sections(&[&a, &b]);
        let names: Vec<(&str, bool, u64)> = merged
            .iter()
            .map(|m| (m.name.as_str(), m.failed, m.operations))
            .collect();
        assert_eq!(names, [("READ", false, 8), ("READ-FAILED", true, 2)]);
        let java = merged[0].java.as_ref().unwrap();
        assert_eq!((java.sum_us, java.sum_sq_us), (16_000, 32_000_000.0));
        assert_eq!(java.buckets, [0, 1, 7, 0]);
        let series: Vec<(u64, u64, u64)> = java
            .series
            .iter()
            .map(|u| (u.time_ms, u.operations, u.sum_us))
            .collect();
        assert_eq!(series, [(0, 3, 6_000), (1_000, 5, 10_000)]);
        assert!(merged[1].returns.is_empty());
    }
}
